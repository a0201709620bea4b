//! Content keys and where they come from: the [`KeyProvider`] trait and the `secret`
//! provider, which derives every title's key and KID from one configured secret.
//!
//! Derivation is HMAC-SHA256(secret, label || title key), truncated to 16 bytes, with
//! distinct labels for the key and the KID, so every replica that has the secret computes
//! the same key with nothing stored, and a KID reveals nothing about its key.
//! The title's version is deliberately not an input: licences and entitlements are issued
//! per title, and a re-uploaded file must not invalidate the keys players already hold.
//! Keystream reuse across versions is prevented by the IVs instead, which do depend on the
//! version (see `package::encrypt`). Secrets never reach a log line: [`Secret`]'s `Debug`
//! is redacted and no error message carries key material.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use hmac::{Hmac, KeyInit, Mac};

pub use super::drm::DrmSystem;
use sha2::Sha256;

/// Shortest secret accepted, in bytes.
pub const MIN_SECRET_BYTES: usize = 16;

/// A secret (key-derivation or URL-signing), held in memory only and never printed.
#[derive(Clone)]
pub struct Secret(Arc<[u8]>);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl Secret {
    /// A secret from its text (an environment variable's value); one trailing newline is
    /// dropped, as files and `echo` leave one.
    ///
    /// # Errors
    /// [`KeyError::Config`] when it is shorter than [`MIN_SECRET_BYTES`].
    pub fn from_text(text: &str, what: &str) -> Result<Self, KeyError> {
        let text = text.strip_suffix('\n').unwrap_or(text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.len() < MIN_SECRET_BYTES {
            return Err(KeyError::Config {
                reason: format!("{what} is shorter than {MIN_SECRET_BYTES} bytes"),
            });
        }
        Ok(Self(Arc::from(text.as_bytes())))
    }

    /// A secret read from a file (blocking: call it at startup).
    ///
    /// # Errors
    /// [`KeyError::Config`] when the file cannot be read or is too short.
    pub fn from_file(path: &Path, what: &str) -> Result<Self, KeyError> {
        let text = std::fs::read_to_string(path).map_err(|e| KeyError::Config {
            reason: format!("cannot read {what} file {}: {e}", path.display()),
        })?;
        Self::from_text(&text, what)
    }

    /// HMAC-SHA256 of `parts` (each followed by a NUL) under this secret.
    pub fn hmac(&self, parts: &[&[u8]]) -> [u8; 32] {
        // HMAC accepts keys of any length, so this cannot fail.
        let mut mac = match <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0) {
            Ok(mac) => mac,
            Err(_) => return [0; 32],
        };
        for part in parts {
            mac.update(part);
            mac.update(b"\0");
        }
        mac.finalize().into_bytes().into()
    }

    /// Check `tag` against the HMAC-SHA256 of `parts` in constant time.
    pub fn verify(&self, parts: &[&[u8]], tag: &[u8]) -> bool {
        use subtle::ConstantTimeEq;
        let expected = self.hmac(parts);
        tag.len() == expected.len() && bool::from(expected.ct_eq(tag))
    }
}

/// A title's content key.
#[derive(Clone, PartialEq, Eq)]
pub struct ContentKey {
    /// Key id, signalled in `tenc`, `pssh` and the MPD.
    pub kid: [u8; 16],
    /// The AES-128 key.
    pub key: [u8; 16],
    /// DRM systems' signalling, when a key server supplies it; the `secret` provider's
    /// raw-key systems are added per output by the server (`crypto::raw_drm`), as they
    /// depend on the scheme.
    pub systems: Vec<DrmSystem>,
}

impl fmt::Debug for ContentKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContentKey")
            .field("kid", &hex(&self.kid))
            .field("key", &"[redacted]")
            .field("systems", &self.systems.len())
            .finish()
    }
}

impl ContentKey {
    /// The KID as a UUID string (`8-4-4-4-12` lowercase hex), as `cenc:default_KID` wants.
    pub fn kid_uuid(&self) -> String {
        uuid_string(&self.kid)
    }
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A 16-byte id as a UUID string.
pub fn uuid_string(id: &[u8; 16]) -> String {
    let h = hex(id);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Why no key could be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The key server is down, slow or answered nonsense (503: never clear content).
    #[error("key provider unavailable: {reason}")]
    Unavailable { reason: String },
    /// The key server's answer lacks a DRM system the title is signalled for (503 naming
    /// it: never a manifest without it).
    #[error("key server gave no {system} signalling")]
    MissingSystem { system: super::drm::DrmId },
    /// The provider is misconfigured (a startup error).
    #[error("key provider configuration: {reason}")]
    Config { reason: String },
}

/// Where content keys come from. Implementations cache as they see fit; a failure is an
/// error, never a made-up key.
#[async_trait::async_trait]
pub trait KeyProvider: Send + Sync + fmt::Debug {
    /// The content key of the title at `title_key` (an object key: a media file or a
    /// title document).
    ///
    /// # Errors
    /// [`KeyError::Unavailable`] when the key cannot be had now.
    async fn content_key(&self, title_key: &str) -> Result<Arc<ContentKey>, KeyError>;

    /// [`KeyProvider::content_key`] with the signalling of `systems` (`None`: the
    /// provider's own choice), for providers that fetch it (a key server is asked for
    /// them, and must supply each); others ignore it.
    ///
    /// # Errors
    /// As [`KeyProvider::content_key`]; [`KeyError::MissingSystem`] when a key server
    /// leaves one of `systems` out.
    async fn content_key_for(
        &self,
        title_key: &str,
        systems: Option<&[super::drm::DrmId]>,
    ) -> Result<Arc<ContentKey>, KeyError> {
        let _ = systems;
        self.content_key(title_key).await
    }

    /// A short name for logs and `inspect` (`secret`, `cpix`).
    fn kind(&self) -> &'static str;
}

/// Keys derived from one secret: the same on every replica, nothing stored.
#[derive(Debug, Clone)]
pub struct SecretKeyProvider {
    secret: Secret,
}

/// Labels keeping the derived values apart.
const KEY_LABEL: &[u8] = b"vodpack content key v1";
const KID_LABEL: &[u8] = b"vodpack key id v1";

impl SecretKeyProvider {
    /// A provider deriving from `secret`.
    pub fn new(secret: Secret) -> Self {
        Self { secret }
    }

    /// The key of `title_key`, computed.
    pub fn derive(&self, title_key: &str) -> ContentKey {
        let key = self.secret.hmac(&[KEY_LABEL, title_key.as_bytes()]);
        let kid = self.secret.hmac(&[KID_LABEL, title_key.as_bytes()]);
        let mut out = ContentKey {
            kid: [0; 16],
            key: [0; 16],
            systems: Vec::new(),
        };
        out.key.copy_from_slice(&key[..16]);
        out.kid.copy_from_slice(&kid[..16]);
        out
    }
}

#[async_trait::async_trait]
impl KeyProvider for SecretKeyProvider {
    async fn content_key(&self, title_key: &str) -> Result<Arc<ContentKey>, KeyError> {
        Ok(Arc::new(self.derive(title_key)))
    }

    fn kind(&self) -> &'static str {
        "secret"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(secret: &str) -> SecretKeyProvider {
        SecretKeyProvider::new(Secret::from_text(secret, "test secret").unwrap())
    }

    #[test]
    fn the_same_secret_gives_the_same_key_on_every_replica() {
        let a = provider("a long enough test secret").derive("films/a.mp4");
        let b = provider("a long enough test secret\n").derive("films/a.mp4");
        assert_eq!(a, b);
        assert_ne!(a.key, a.kid);
    }

    #[test]
    fn titles_and_secrets_get_their_own_keys() {
        let p = provider("a long enough test secret");
        assert_ne!(p.derive("a.mp4").key, p.derive("b.mp4").key);
        assert_ne!(p.derive("a.mp4").kid, p.derive("b.mp4").kid);
        let q = provider("another long test secret");
        assert_ne!(p.derive("a.mp4").key, q.derive("a.mp4").key);
    }

    #[test]
    fn short_secrets_are_refused_and_none_is_printed() {
        assert!(matches!(
            Secret::from_text("short", "x"),
            Err(KeyError::Config { .. })
        ));
        let s = Secret::from_text("a long enough test secret", "x").unwrap();
        assert!(!format!("{s:?}").contains("long enough"));
        let key = provider("a long enough test secret").derive("a.mp4");
        assert!(!format!("{key:?}").contains(&hex(&key.key)));
    }

    #[test]
    fn kids_print_as_uuids() {
        let key = ContentKey {
            kid: *b"\x10\x77\xef\xec\xc0\xb2\x4d\x02\xac\xe3\x3c\x1e\x52\xe2\xfb\x4b",
            key: [0; 16],
            systems: Vec::new(),
        };
        assert_eq!(key.kid_uuid(), "1077efec-c0b2-4d02-ace3-3c1e52e2fb4b");
    }

    #[test]
    fn macs_verify_only_their_own_message() {
        let s = Secret::from_text("a long enough test secret", "x").unwrap();
        let tag = s.hmac(&[b"a", b"b"]);
        assert!(s.verify(&[b"a", b"b"], &tag));
        assert!(!s.verify(&[b"a", b"c"], &tag));
        assert!(!s.verify(&[b"ab"], &tag));
        assert!(!s.verify(&[b"a", b"b"], &tag[..31]));
    }
}
