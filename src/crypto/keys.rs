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
use super::usage::{KeyPresets, KeyUsage, KeyedTrack};
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
    /// A title document asks for a key split the key source cannot give (a source with one
    /// key per title): 422 saying so, as for any output the title's settings rule out.
    #[error("the {source_kind} key source has one key per title: a key split cannot be served")]
    OneKeyPerTitle { source_kind: &'static str },
    /// The key server's answer lacks the key of a usage the title's key split needs (503
    /// naming it: never a clear or wrongly keyed segment).
    #[error("key server gave no {usage} key")]
    MissingKey { usage: KeyUsage },
}

/// A title's content keys, one per usage of its key split ([`KeyPresets`]): under the
/// default split, one key ([`KeyUsage::All`]), the title's key as it always was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TitleKeys {
    /// The split the keys follow.
    pub presets: KeyPresets,
    /// The first usage's key (see [`TitleKeys::first`]).
    first: Arc<ContentKey>,
    /// Each usage's key, in the split's order ([`KeyPresets::usages`]), `first` included.
    keys: Vec<(KeyUsage, Arc<ContentKey>)>,
}

impl TitleKeys {
    /// The one key of the default split.
    pub fn shared(key: Arc<ContentKey>) -> Self {
        Self {
            presets: KeyPresets::SHARED,
            first: key.clone(),
            keys: vec![(KeyUsage::All, key)],
        }
    }

    /// The keys of `presets`, `keys` holding one per usage of the split.
    ///
    /// # Errors
    /// [`KeyError::MissingKey`] naming the first usage without a key;
    /// [`KeyError::Config`] for a split of no key (never: `KeyPresets` refuses one).
    pub fn of(
        presets: KeyPresets,
        mut keys: Vec<(KeyUsage, Arc<ContentKey>)>,
    ) -> Result<Self, KeyError> {
        let mut ordered = Vec::new();
        for usage in presets.usages() {
            let at = (keys.iter().position(|(u, _)| *u == usage))
                .ok_or(KeyError::MissingKey { usage })?;
            ordered.push(keys.swap_remove(at));
        }
        let first = (ordered.first().map(|(_, k)| k.clone())).ok_or(KeyError::Config {
            reason: "a key split of no key".into(),
        })?;
        Ok(Self {
            presets,
            first,
            keys: ordered,
        })
    }

    /// The first key: the title's one key under the default split, else the key whose KID
    /// names the output's version folder (with every other KID).
    pub fn first(&self) -> &Arc<ContentKey> {
        &self.first
    }

    /// Every usage with its key, in the split's order.
    pub fn iter(&self) -> impl Iterator<Item = &(KeyUsage, Arc<ContentKey>)> {
        self.keys.iter()
    }

    /// The key of `usage`, if the split has one.
    pub fn key(&self, usage: KeyUsage) -> Option<&Arc<ContentKey>> {
        (self.keys.iter()).find_map(|(u, k)| (*u == usage).then_some(k))
    }

    /// The key of `track`: `Ok(None)` when the split leaves it clear (`UNENCRYPTED`).
    ///
    /// # Errors
    /// [`KeyError::MissingKey`] when its usage has no key (never: `of` checks each).
    pub fn for_track(&self, track: KeyedTrack) -> Result<Option<&Arc<ContentKey>>, KeyError> {
        match self.presets.usage_of(track) {
            None => Ok(None),
            Some(usage) => self
                .key(usage)
                .map(Some)
                .ok_or(KeyError::MissingKey { usage }),
        }
    }

    /// The key whose KID is `kid`, if the title has one.
    pub fn by_kid(&self, kid: &[u8; 16]) -> Option<&Arc<ContentKey>> {
        (self.keys.iter()).find_map(|(_, k)| (k.kid == *kid).then_some(k))
    }

    /// The same keys with `f` applied to each (to add DRM systems' signalling).
    ///
    /// # Errors
    /// The first of `f`'s errors.
    pub fn map<E>(
        &self,
        mut f: impl FnMut(KeyUsage, &Arc<ContentKey>) -> Result<Arc<ContentKey>, E>,
    ) -> Result<Self, E> {
        let mut keys = Vec::with_capacity(self.keys.len());
        for (usage, key) in &self.keys {
            keys.push((*usage, f(*usage, key)?));
        }
        let first = (keys.first().map(|(_, k)| k.clone())).unwrap_or_else(|| self.first.clone());
        Ok(Self {
            presets: self.presets,
            first,
            keys,
        })
    }
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

    /// The keys of the title at `title_key` under the key split `presets`, each with the
    /// signalling of `systems` as [`KeyProvider::content_key_for`]. The default split is
    /// that one key. A provider with one key per title refuses any other split.
    ///
    /// # Errors
    /// As [`KeyProvider::content_key_for`]; [`KeyError::MissingKey`] naming a usage a key
    /// server left out; [`KeyError::OneKeyPerTitle`] from a provider with one key per title.
    async fn title_keys(
        &self,
        title_key: &str,
        systems: Option<&[super::drm::DrmId]>,
        presets: KeyPresets,
    ) -> Result<Arc<TitleKeys>, KeyError> {
        if !presets.is_shared() {
            return Err(KeyError::OneKeyPerTitle {
                source_kind: self.kind(),
            });
        }
        let key = self.content_key_for(title_key, systems).await?;
        Ok(Arc::new(TitleKeys::shared(key)))
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
        self.derive_for(title_key, KeyUsage::All)
    }

    /// The key of `title_key`'s `usage`, computed: [`SecretKeyProvider::derive`]'s
    /// formula for [`KeyUsage::All`] (so the default split keeps every key), and for any
    /// other usage the same HMAC with the usage's name (`SD`, `AUDIO`, ...) as one more
    /// part: `HMAC-SHA256(secret, label || 0 || title key || 0 || usage || 0)[0..16]`.
    pub fn derive_for(&self, title_key: &str, usage: KeyUsage) -> ContentKey {
        let parts = |label: &'static [u8]| -> Vec<&[u8]> {
            match usage {
                KeyUsage::All => vec![label, title_key.as_bytes()],
                _ => vec![label, title_key.as_bytes(), usage.name().as_bytes()],
            }
        };
        let key = self.secret.hmac(&parts(KEY_LABEL));
        let kid = self.secret.hmac(&parts(KID_LABEL));
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

    async fn title_keys(
        &self,
        title_key: &str,
        _systems: Option<&[super::drm::DrmId]>,
        presets: KeyPresets,
    ) -> Result<Arc<TitleKeys>, KeyError> {
        let keys = (presets.usages().into_iter())
            .map(|usage| (usage, Arc::new(self.derive_for(title_key, usage))))
            .collect();
        TitleKeys::of(presets, keys).map(Arc::new)
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
    fn each_usage_gets_its_own_key_and_kid_and_all_keeps_the_title_key() {
        let p = provider("a long enough test secret");
        assert_eq!(p.derive_for("a.mp4", KeyUsage::All), p.derive("a.mp4"));
        let sd = p.derive_for("a.mp4", KeyUsage::Sd);
        let hd = p.derive_for("a.mp4", KeyUsage::Hd);
        let audio = p.derive_for("a.mp4", KeyUsage::Audio);
        for (a, b) in [(&sd, &hd), (&sd, &audio), (&hd, &audio)] {
            assert_ne!(a.key, b.key);
            assert_ne!(a.kid, b.kid);
        }
        assert_ne!(sd.key, p.derive("a.mp4").key);
        // The documented formula (docs/protection.md), computed apart.
        let secret = Secret::from_text("a long enough test secret", "x").unwrap();
        let mac = secret.hmac(&[b"vodpack content key v1", b"a.mp4", b"SD"]);
        assert_eq!(sd.key[..], mac[..16]);
    }

    #[tokio::test]
    async fn title_keys_follow_the_split_and_one_key_sources_refuse_others() {
        let p = provider("a long enough test secret");
        let presets = KeyPresets::parse("video=PRESET-VIDEO-3,audio=PRESET-AUDIO-1").unwrap();
        let keys = p.title_keys("a.mp4", None, presets).await.unwrap();
        let hd = KeyedTrack::Video {
            width: 1280,
            height: 720,
        };
        let key = keys.for_track(hd).unwrap().unwrap();
        assert_eq!(**key, p.derive_for("a.mp4", KeyUsage::Hd));
        assert_eq!(keys.by_kid(&key.kid), Some(key));
        assert_eq!(keys.iter().count(), 4);
        let shared = p
            .title_keys("a.mp4", None, KeyPresets::SHARED)
            .await
            .unwrap();
        assert_eq!(**shared.first(), p.derive("a.mp4"));
        let missing = TitleKeys::of(presets, vec![(KeyUsage::Sd, key.clone())]);
        assert_eq!(
            missing.unwrap_err(),
            KeyError::MissingKey {
                usage: KeyUsage::Hd
            }
        );
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
