//! Content keys as nginx-vod-module derives them, so an encrypted catalogue moved from the
//! module keeps its keys: the key is the MD5 of `vod_secret_key` evaluated for the file
//! (`ngx_http_vod_init_encryption_key` in the module: `ngx_md5` of the complex value),
//! usually `secret-$vod_filepath`, where `$vod_filepath` is the sequence's `mapped_uri`:
//! in the module's local mode the request's path up to the file (`/hls/films/a.mp4`: the
//! location, then the key), not the path on disk. Checked against a running module
//! (nginx 1.30.4 + nginx-vod-module 26f06877): the same `encryption.key` bytes.

use std::sync::Arc;

use md5::{Digest as _, Md5};
use sha2::Sha256;

use super::keys::{ContentKey, KeyError, KeyProvider};

/// The variable the template may name.
const FILEPATH: &str = "$vod_filepath";
/// Label of the KID derivation.
const KID_LABEL: &[u8] = b"vodpack nginx-vod kid v1\0";

/// `vod_secret_key` and where the module's files were, as the nginx-vod key mode needs
/// them.
#[derive(Clone, PartialEq, Eq)]
pub struct NginxVodKeys {
    /// The `vod_secret_key` template, with `$vod_filepath` where the file path goes.
    template: String,
    /// What nginx put before the object key in `$vod_filepath` (the location's path).
    filepath_prefix: String,
}

impl std::fmt::Debug for NginxVodKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NginxVodKeys")
            .field("template", &"[redacted]")
            .field("filepath_prefix", &self.filepath_prefix)
            .finish()
    }
}

impl NginxVodKeys {
    /// The mode for `template` (the module's `vod_secret_key`) with `$vod_filepath` as
    /// `filepath_prefix` followed by the object key.
    ///
    /// # Errors
    /// [`KeyError::Config`] for an empty template or one naming another variable.
    pub fn new(template: &str, filepath_prefix: &str) -> Result<Self, KeyError> {
        if template.is_empty() {
            return Err(KeyError::Config {
                reason: "nginx-vod-secret-key is empty".into(),
            });
        }
        if template.replace(FILEPATH, "").contains('$') {
            return Err(KeyError::Config {
                reason: format!("nginx-vod-secret-key may name only {FILEPATH}"),
            });
        }
        Ok(Self {
            template: template.to_owned(),
            filepath_prefix: filepath_prefix.to_owned(),
        })
    }

    /// The key and KID of the title at `title_key`.
    pub fn derive(&self, title_key: &str) -> ContentKey {
        let path = format!("{}{title_key}", self.filepath_prefix);
        let seed = self.template.replace(FILEPATH, &path);
        let key: [u8; 16] = Md5::digest(seed.as_bytes()).into();
        let mut kid_hash = Sha256::new();
        kid_hash.update(KID_LABEL);
        kid_hash.update(key);
        let mut kid = [0u8; 16];
        kid.copy_from_slice(&kid_hash.finalize()[..16]);
        ContentKey {
            kid,
            key,
            systems: Vec::new(),
        }
    }
}

/// Keys from [`NginxVodKeys`].
#[derive(Debug, Clone)]
pub struct NginxVodKeyProvider {
    keys: NginxVodKeys,
}

impl NginxVodKeyProvider {
    /// A provider deriving as `keys` says.
    pub fn new(keys: NginxVodKeys) -> Self {
        Self { keys }
    }
}

#[async_trait::async_trait]
impl KeyProvider for NginxVodKeyProvider {
    async fn content_key(&self, title_key: &str) -> Result<Arc<ContentKey>, KeyError> {
        Ok(Arc::new(self.keys.derive(title_key)))
    }

    fn kind(&self) -> &'static str {
        "nginx-vod"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::keys::hex;

    #[test]
    fn the_key_is_the_md5_of_the_template_with_the_file_path() {
        // `printf 'secret-/srv/media/films/a.mp4' | md5sum`
        let keys = NginxVodKeys::new("secret-$vod_filepath", "/srv/media/").unwrap();
        let key = keys.derive("films/a.mp4");
        assert_eq!(hex(&key.key), "0bca91b1d692359081b0df6829a453c9");
        assert_ne!(key.kid, key.key);
        assert_ne!(keys.derive("films/b.mp4").kid, key.kid);
    }

    #[test]
    fn other_variables_and_empty_templates_are_refused_and_the_template_is_not_printed() {
        assert!(NginxVodKeys::new("secret-$uri", "/").is_err());
        assert!(NginxVodKeys::new("", "/").is_err());
        let keys = NginxVodKeys::new("hunter2-$vod_filepath", "/m/").unwrap();
        assert!(!format!("{keys:?}").contains("hunter2"));
    }

    /// Given nginx-vod's one key per file, when a title document asks for a key split,
    /// then the answer says the source cannot (a 422), and the one key is still given.
    #[tokio::test]
    async fn a_key_split_is_refused_by_name_and_the_one_key_still_served() {
        let keys = NginxVodKeys::new("secret-$vod_filepath", "/m/").unwrap();
        let provider = NginxVodKeyProvider::new(keys);
        let split = crate::crypto::KeyPresets::parse("video=PRESET-VIDEO-3").unwrap();
        let refused = provider.title_keys("a.mp4", None, split).await.unwrap_err();
        assert_eq!(
            refused,
            KeyError::OneKeyPerTitle {
                source_kind: "nginx-vod"
            }
        );
        let shared = crate::crypto::KeyPresets::SHARED;
        assert!(provider.title_keys("a.mp4", None, shared).await.is_ok());
    }
}
