//! Keys, ciphers and signed URLs: everything vodpack needs to protect what it serves.
//!
//! Owns the content-key providers ([`KeyProvider`]: derived from a secret, nothing stored;
//! or as nginx-vod-module derives them, `nginx_vod_keys`),
//! the encryption policy (which scheme each output uses, [`EncryptionPolicy`]), the
//! streaming sample encryptors for Common Encryption (`cenc` AES-CTR, `cbcs` AES-CBC with
//! the 1:9 pattern, ISO/IEC 23001-7) and HLS AES-128 whole-segment encryption
//! ([`cipher`]), and the HMAC-SHA256 URL tokens ([`token`]). It knows nothing of boxes or
//! manifests: `package::encrypt` writes those, `server` asks this module for keys and for
//! a yes or no on a token.

pub mod cipher;
pub mod cpix;
pub mod drm;
pub mod keys;
pub mod nginx_vod_keys;
pub mod policy;
pub mod raw_drm;
pub mod settings;
pub mod token;
pub mod usage;

pub use cipher::{CipherError, SampleEncryptor, SampleLayout, Subsample, WholeSegmentEncryptor};
pub use keys::{ContentKey, KeyError, KeyProvider, Secret, SecretKeyProvider, TitleKeys};
pub use policy::{EncryptionPolicy, PolicyError, Scheme};
pub use token::{TokenError, TokenSigner};
pub use usage::{KeyPresets, KeyUsage, KeyedTrack};
