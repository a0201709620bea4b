//! The protection settings of `vodpack serve`: encryption policy, key and URL secrets,
//! signed-URL mode, CORS origins. Flags and `VODPACK_*` variables only, so secrets never
//! sit in a config file next to the rest; the variables' values are hidden from `--help`.

use std::path::PathBuf;

use std::time::Duration;

use super::cpix::{CpixMode, CpixOptions, PLAYREADY, WIDEVINE};
use super::drm::{check_uri, DrmId};
use super::keys::{KeyError, Secret};
use super::nginx_vod_keys::NginxVodKeys;
use super::policy::{EncryptionPolicy, Scheme};
use super::raw_drm::RawDrmOptions;
use super::usage::KeyPresets;

/// Which requests must carry a valid token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SignedUrls {
    /// None.
    #[default]
    Off,
    /// Entry manifests (`master.m3u8`, `master-ts.m3u8`, `manifest.mpd`), keys and
    /// licences.
    Entry,
    /// Every `/vod/` path, keys and licences; manifests carry the token into their URLs.
    All,
}

/// Protection flags and variables.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ProtectArgs {
    /// Encryption per output: hls=aes-128|sample-aes|none, dash=cenc|cbcs|none [default: none]
    #[arg(long, env = "VODPACK_ENCRYPTION")]
    pub encryption: Option<String>,
    /// File holding the secret content keys are derived from
    #[arg(long, env = "VODPACK_KEY_SECRET_FILE")]
    pub key_secret_file: Option<PathBuf>,
    /// The secret content keys are derived from (prefer the variable or the file)
    #[arg(long, env = "VODPACK_KEY_SECRET", hide_env_values = true)]
    pub key_secret: Option<String>,
    /// nginx-vod-module's vod_secret_key (e.g. secret-$vod_filepath): content keys as the module derives them
    #[arg(long, env = "VODPACK_NGINX_VOD_SECRET_KEY", hide_env_values = true)]
    pub nginx_vod_secret_key: Option<String>,
    /// What nginx's $vod_filepath holds before the object key (the alias folder, e.g. /srv/media/)
    #[arg(long, env = "VODPACK_NGINX_VOD_FILEPATH_PREFIX")]
    pub nginx_vod_filepath_prefix: Option<String>,
    /// Requests that need a signed token: off, entry or all [default: off]
    #[arg(long, env = "VODPACK_SIGNED_URLS", value_enum)]
    pub signed_urls: Option<SignedUrls>,
    /// File holding the secret URL tokens are signed with
    #[arg(long, env = "VODPACK_URL_SECRET_FILE")]
    pub url_secret_file: Option<PathBuf>,
    /// The secret URL tokens are signed with (prefer the variable or the file)
    #[arg(long, env = "VODPACK_URL_SECRET", hide_env_values = true)]
    pub url_secret: Option<String>,
    /// File holding the previous URL secret, still accepted during a rotation
    #[arg(long, env = "VODPACK_URL_SECRET_PREVIOUS_FILE")]
    pub url_secret_previous_file: Option<PathBuf>,
    /// The previous URL secret, still accepted during a rotation (prefer the variable or the file)
    #[arg(long, env = "VODPACK_URL_SECRET_PREVIOUS", hide_env_values = true)]
    pub url_secret_previous: Option<String>,
    /// Seconds a token is still accepted after its expiry [default: 30]
    #[arg(long, env = "VODPACK_TOKEN_SKEW_SECS")]
    pub token_skew_secs: Option<u64>,
    /// Comma-separated origins allowed by CORS instead of `*` [default: *]
    #[arg(long, env = "VODPACK_CORS_ORIGINS")]
    pub cors_origins: Option<String>,
    /// Public base URL of this server (for licence URLs in MPDs) [default: http://HOST]
    #[arg(long, env = "VODPACK_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// CPIX key server URL; keys come from it instead of the key secret
    #[arg(long, env = "VODPACK_CPIX_URL")]
    pub cpix_url: Option<String>,
    /// DRM systems to ask the key server for, not required: widevine, playready, fairplay
    #[arg(long, env = "VODPACK_CPIX_SYSTEMS")]
    pub cpix_systems: Option<String>,
    /// Deadline of one key server request, in ms [default: 2000]
    #[arg(long, env = "VODPACK_CPIX_TIMEOUT_MS")]
    pub cpix_timeout_ms: Option<u64>,
    /// Retries of a failed key server request [default: 2]
    #[arg(long, env = "VODPACK_CPIX_RETRIES")]
    pub cpix_retries: Option<u32>,
    /// How long a key from the key server is reused, in seconds [default: 300]
    #[arg(long, env = "VODPACK_KEY_CACHE_TTL_SECS")]
    pub key_cache_ttl_secs: Option<u64>,
    /// The key server's protocol: cpix (CPIX 2.3) or speke2 (AWS SPEKE v2) [default: cpix]
    #[arg(long, env = "VODPACK_CPIX_MODE", value_enum)]
    pub cpix_mode: Option<CpixMode>,
    /// DRM systems signalled: fairplay, widevine, playready, clearkey [default: (what the key server returns, and clearkey)]
    #[arg(long, env = "VODPACK_DRM_SYSTEMS")]
    pub drm_systems: Option<String>,
    /// PlayReady licence URL written into raw-key PlayReady headers (LA_URL)
    #[arg(long, env = "VODPACK_PLAYREADY_LA_URL")]
    pub playready_la_url: Option<String>,
    /// FairPlay key URI template for raw keys: skd://... with {kid}, {kid_uuid}, {title}
    #[arg(long, env = "VODPACK_FAIRPLAY_KEY_URI")]
    pub fairplay_key_uri: Option<String>,
    /// Content keys by usage: video=PRESET-VIDEO-N,audio=PRESET-AUDIO-N (or SHARED, UNENCRYPTED) [default: one shared key]
    #[arg(long, env = "VODPACK_KEY_PRESETS")]
    pub key_presets: Option<String>,
}

/// Resolved protection settings.
#[derive(Debug, Clone, Default)]
pub struct ProtectSettings {
    /// The server's default encryption per output.
    pub encryption: EncryptionPolicy,
    /// Secret content keys are derived from; required when anything is encrypted.
    pub key_secret: Option<Secret>,
    /// Content keys as nginx-vod-module derives them from `vod_secret_key`, instead of
    /// the key secret.
    pub nginx_vod_keys: Option<NginxVodKeys>,
    /// Which requests need a token.
    pub signed_urls: SignedUrls,
    /// Secret tokens are signed with; required unless `signed_urls` is off.
    pub url_secret: Option<Secret>,
    /// The URL secret being rotated out: its tokens are still accepted, none is signed
    /// with it. Only with `url_secret`.
    pub url_secret_previous: Option<Secret>,
    /// Seconds past expiry a token is still accepted.
    pub token_skew_secs: u64,
    /// Origins allowed by CORS; empty: any (`*`).
    pub cors_origins: Vec<String>,
    /// Public base URL (scheme and authority, no trailing slash), if set.
    pub public_url: Option<String>,
    /// The CPIX key server, when keys come from one (else from `key_secret`).
    pub cpix: Option<CpixOptions>,
    /// The DRM systems every title is signalled for (a title document's `"drm"` overrides
    /// it); `None`: what the key provider returns, and ClearKey.
    pub drm_systems: Option<Vec<DrmId>>,
    /// What raw-key signalling (no key server) needs beyond the key.
    pub raw_drm: RawDrmOptions,
    /// How a title's tracks are split between content keys (a title document's
    /// `"key_presets"` overrides it); the default is one shared key.
    pub key_presets: KeyPresets,
}

/// A protection setting that is wrong: its flag name and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid setting {name}: {reason}")]
pub struct ProtectSettingsError {
    /// The flag name.
    pub name: &'static str,
    /// Why.
    pub reason: String,
}

fn secret(
    value: Option<&str>,
    file: Option<&PathBuf>,
    name: &'static str,
) -> Result<Option<Secret>, ProtectSettingsError> {
    let wrap = |e: KeyError| ProtectSettingsError {
        name,
        reason: e.to_string(),
    };
    match (value, file) {
        (Some(_), Some(_)) => Err(ProtectSettingsError {
            name,
            reason: "give the secret or its file, not both".into(),
        }),
        (Some(v), None) => Secret::from_text(v, name).map(Some).map_err(wrap),
        (None, Some(f)) => Secret::from_file(f, name).map(Some).map_err(wrap),
        (None, None) => Ok(None),
    }
}

impl ProtectArgs {
    /// Resolve and check: an encryption policy needs a key secret, signed URLs a URL
    /// secret.
    ///
    /// # Errors
    /// The setting at fault and why (never the secret itself).
    pub fn resolve(&self) -> Result<ProtectSettings, ProtectSettingsError> {
        let encryption = match &self.encryption {
            None => EncryptionPolicy::default(),
            Some(text) => EncryptionPolicy::parse(text).map_err(|e| ProtectSettingsError {
                name: "encryption",
                reason: e.to_string(),
            })?,
        };
        let key_secret = secret(
            self.key_secret.as_deref(),
            self.key_secret_file.as_ref(),
            "key-secret",
        )?;
        let nginx_vod_keys = match (&self.nginx_vod_secret_key, &self.nginx_vod_filepath_prefix) {
            (None, None) => None,
            (None, Some(_)) => {
                return Err(ProtectSettingsError {
                    name: "nginx-vod-filepath-prefix",
                    reason: "needs --nginx-vod-secret-key".into(),
                })
            }
            (Some(template), prefix) => Some(
                NginxVodKeys::new(template, prefix.as_deref().unwrap_or("")).map_err(|e| {
                    ProtectSettingsError {
                        name: "nginx-vod-secret-key",
                        reason: e.to_string(),
                    }
                })?,
            ),
        };
        if nginx_vod_keys.is_some() && (key_secret.is_some() || self.cpix_url.is_some()) {
            return Err(ProtectSettingsError {
                name: "nginx-vod-secret-key",
                reason: "give one key source: the key secret, a key server or nginx-vod's \
                         vod_secret_key"
                    .into(),
            });
        }
        let drm_systems = (self.drm_systems.as_deref())
            .map(DrmId::parse_list)
            .transpose()
            .map_err(|reason| ProtectSettingsError {
                name: "drm-systems",
                reason,
            })?;
        let raw_drm = self.raw_drm_options()?;
        // The scheme a key server is told the key is for (SPEKE v2 `commonEncryptionScheme`):
        // `cenc` only when that is the one Common Encryption output.
        let key_scheme = match (encryption.hls, encryption.dash) {
            (Some(Scheme::Cbcs), _) | (_, Some(Scheme::Cbcs)) => Scheme::Cbcs,
            (_, Some(Scheme::Cenc)) => Scheme::Cenc,
            _ => Scheme::Cbcs,
        };
        let cpix = self.cpix_options(drm_systems.as_deref(), key_scheme)?;
        if cpix.is_none()
            && raw_drm.fairplay_key_uri.is_none()
            && drm_systems
                .as_ref()
                .is_some_and(|s| s.contains(&DrmId::FairPlay))
        {
            return Err(ProtectSettingsError {
                name: "drm-systems",
                reason: "FairPlay without a key server needs --fairplay-key-uri".into(),
            });
        }
        // HLS AES-128 hands its key out raw, and it is the key of the DRM-protected outputs
        // too: with DRM systems but no ClearKey, that would give the DRM away.
        if encryption.hls == Some(Scheme::Aes128)
            && drm_systems
                .as_ref()
                .is_some_and(|d| !d.contains(&DrmId::ClearKey))
        {
            return Err(ProtectSettingsError {
                name: "drm-systems",
                reason: "hls=aes-128 serves its key raw: add clearkey, or use hls=sample-aes"
                    .into(),
            });
        }
        if encryption.any() && key_secret.is_none() && cpix.is_none() && nginx_vod_keys.is_none() {
            return Err(ProtectSettingsError {
                name: "encryption",
                reason: "encryption needs --key-secret-file, VODPACK_KEY_SECRET, --cpix-url or \
                         --nginx-vod-secret-key"
                    .into(),
            });
        }
        let key_presets = self.key_presets(encryption, nginx_vod_keys.is_some())?;
        let signed_urls = self.signed_urls.unwrap_or_default();
        let url_secret = secret(
            self.url_secret.as_deref(),
            self.url_secret_file.as_ref(),
            "url-secret",
        )?;
        if signed_urls != SignedUrls::Off && url_secret.is_none() {
            return Err(ProtectSettingsError {
                name: "signed-urls",
                reason: "signed URLs need --url-secret-file or VODPACK_URL_SECRET".into(),
            });
        }
        let url_secret_previous = secret(
            self.url_secret_previous.as_deref(),
            self.url_secret_previous_file.as_ref(),
            "url-secret-previous",
        )?;
        if url_secret_previous.is_some() && url_secret.is_none() {
            return Err(ProtectSettingsError {
                name: "url-secret-previous",
                reason: "a previous URL secret needs the current one (--url-secret-file or \
                         VODPACK_URL_SECRET)"
                    .into(),
            });
        }
        let cors_origins = (self.cors_origins.as_deref().unwrap_or("*").split(','))
            .map(|o| o.trim().trim_end_matches('/').to_owned())
            .filter(|o| !o.is_empty() && o != "*")
            .collect();
        let public_url = match &self.public_url {
            None => None,
            Some(u) => {
                let parsed = url::Url::parse(u).map_err(|e| ProtectSettingsError {
                    name: "public-url",
                    reason: e.to_string(),
                })?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(ProtectSettingsError {
                        name: "public-url",
                        reason: "must be an http or https URL".into(),
                    });
                }
                Some(u.trim_end_matches('/').to_owned())
            }
        };
        Ok(ProtectSettings {
            encryption,
            key_secret,
            nginx_vod_keys,
            signed_urls,
            url_secret,
            url_secret_previous,
            token_skew_secs: self.token_skew_secs.unwrap_or(30),
            cors_origins,
            public_url,
            cpix,
            drm_systems,
            raw_drm,
            key_presets,
        })
    }

    /// The key split, checked against what can carry it: nginx-vod-module's key mode has
    /// one key per file (as the module), and HLS AES-128 one raw key per title.
    fn key_presets(
        &self,
        encryption: EncryptionPolicy,
        nginx_vod: bool,
    ) -> Result<KeyPresets, ProtectSettingsError> {
        let bad = |reason: String| ProtectSettingsError {
            name: "key-presets",
            reason,
        };
        let presets = match &self.key_presets {
            None => return Ok(KeyPresets::SHARED),
            Some(text) => KeyPresets::parse(text).map_err(bad)?,
        };
        if presets.is_shared() {
            return Ok(presets);
        }
        if nginx_vod {
            return Err(bad(
                "nginx-vod's vod_secret_key gives one key per file: use the key secret or a key \
                 server for keys by usage"
                    .into(),
            ));
        }
        if encryption.hls == Some(Scheme::Aes128) {
            return Err(bad(
                "hls=aes-128 hands out one raw key per title: use hls=sample-aes (cbcs) for keys \
                 by usage"
                    .into(),
            ));
        }
        Ok(presets)
    }

    fn raw_drm_options(&self) -> Result<RawDrmOptions, ProtectSettingsError> {
        let bad = |name: &'static str, reason: String| ProtectSettingsError { name, reason };
        // Both are written into headers with length fields and playlist lines: keep them
        // short.
        for (name, value) in [
            ("playready-la-url", &self.playready_la_url),
            ("fairplay-key-uri", &self.fairplay_key_uri),
        ] {
            if value.as_ref().is_some_and(|v| v.len() > 2048) {
                return Err(bad(name, "longer than 2048 bytes".into()));
            }
        }
        if let Some(url) = &self.playready_la_url {
            let parsed =
                url::Url::parse(url).map_err(|e| bad("playready-la-url", e.to_string()))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(bad(
                    "playready-la-url",
                    "must be an http or https URL".into(),
                ));
            }
        }
        if let Some(template) = &self.fairplay_key_uri {
            if !template.starts_with("skd://") {
                return Err(bad("fairplay-key-uri", "must start with skd://".into()));
            }
            check_uri(template).map_err(|why| bad("fairplay-key-uri", why.into()))?;
        }
        Ok(RawDrmOptions {
            playready_la_url: self.playready_la_url.clone(),
            fairplay_key_uri: self.fairplay_key_uri.clone(),
        })
    }

    fn cpix_options(
        &self,
        drm_systems: Option<&[DrmId]>,
        scheme: Scheme,
    ) -> Result<Option<CpixOptions>, ProtectSettingsError> {
        let Some(url) = &self.cpix_url else {
            return Ok(None);
        };
        let bad = |name: &'static str, reason: String| ProtectSettingsError { name, reason };
        let parsed = url::Url::parse(url).map_err(|e| bad("cpix-url", e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad("cpix-url", "must be an http or https URL".into()));
        }
        // `--drm-systems` names what every title must be signalled for, so the key server
        // must supply each (fail closed); the older `--cpix-systems` only asks.
        let (systems, required) = match drm_systems {
            Some(list) => (
                (list.iter())
                    .filter(|d| d.from_key_server())
                    .map(|d| d.system_id())
                    .collect(),
                true,
            ),
            None => {
                let mut systems = Vec::new();
                for name in (self.cpix_systems.as_deref().unwrap_or("").split(','))
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                {
                    systems.push(match name.to_ascii_lowercase().as_str() {
                        "widevine" => WIDEVINE,
                        "playready" => PLAYREADY,
                        "fairplay" => super::drm::FAIRPLAY,
                        _ => {
                            return Err(bad("cpix-systems", format!("unknown DRM system {name:?}")))
                        }
                    });
                }
                (systems, false)
            }
        };
        let timeout_ms = self.cpix_timeout_ms.unwrap_or(2000);
        if timeout_ms == 0 {
            return Err(bad("cpix-timeout-ms", "must be positive".into()));
        }
        Ok(Some(CpixOptions {
            url: url.clone(),
            mode: self.cpix_mode.unwrap_or_default(),
            systems,
            required,
            scheme,
            timeout: Duration::from_millis(timeout_ms),
            retries: self.cpix_retries.unwrap_or(2),
            ttl: Duration::from_secs(self.key_cache_ttl_secs.unwrap_or(300).max(1)),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encryption_without_a_key_secret_is_a_startup_error() {
        let args = ProtectArgs {
            encryption: Some("dash=cenc".into()),
            ..Default::default()
        };
        let e = args.resolve().unwrap_err();
        assert_eq!(e.name, "encryption");
        let args = ProtectArgs {
            encryption: Some("dash=cenc".into()),
            key_secret: Some("0123456789abcdef0123".into()),
            ..Default::default()
        };
        let s = args.resolve().unwrap();
        assert!(!format!("{s:?}").contains("0123456789abcdef"));
        let nginx = ProtectArgs {
            encryption: Some("hls=aes-128".into()),
            nginx_vod_secret_key: Some("secret-$vod_filepath".into()),
            nginx_vod_filepath_prefix: Some("/srv/media/".into()),
            ..Default::default()
        };
        assert!(nginx.resolve().unwrap().nginx_vod_keys.is_some());
        let both = ProtectArgs {
            key_secret: Some("0123456789abcdef0123".into()),
            ..nginx.clone()
        };
        assert_eq!(both.resolve().unwrap_err().name, "nginx-vod-secret-key");
        let prefix_alone = ProtectArgs {
            nginx_vod_filepath_prefix: Some("/srv/media/".into()),
            ..Default::default()
        };
        assert_eq!(
            prefix_alone.resolve().unwrap_err().name,
            "nginx-vod-filepath-prefix"
        );
    }

    #[test]
    fn key_presets_are_checked_against_the_key_source_and_the_hls_method() {
        let args = |presets: &str, hls: &str| ProtectArgs {
            encryption: Some(format!("hls={hls},dash=cenc")),
            key_secret: Some("0123456789abcdef0123".into()),
            key_presets: Some(presets.into()),
            ..Default::default()
        };
        let s = args("video=PRESET-VIDEO-3,audio=PRESET-AUDIO-1", "sample-aes")
            .resolve()
            .unwrap();
        assert_eq!(s.key_presets.usages().len(), 4);
        let e = args("video=PRESET-VIDEO-2", "aes-128")
            .resolve()
            .unwrap_err();
        assert_eq!(e.name, "key-presets");
        assert!(args("video=SHARED,audio=SHARED", "aes-128")
            .resolve()
            .is_ok());
        let e = args("video=PRESET-VIDEO-9", "sample-aes")
            .resolve()
            .unwrap_err();
        assert_eq!(e.name, "key-presets");
        let nginx = ProtectArgs {
            encryption: Some("dash=cenc".into()),
            nginx_vod_secret_key: Some("secret-$vod_filepath".into()),
            key_presets: Some("video=PRESET-VIDEO-2".into()),
            ..Default::default()
        };
        assert_eq!(nginx.resolve().unwrap_err().name, "key-presets");
        assert!(ProtectArgs::default()
            .resolve()
            .unwrap()
            .key_presets
            .is_shared());
    }

    #[test]
    fn signed_urls_need_a_secret_and_cors_lists_parse() {
        let args = ProtectArgs {
            signed_urls: Some(SignedUrls::All),
            ..Default::default()
        };
        assert_eq!(args.resolve().unwrap_err().name, "signed-urls");
        let previous_alone = ProtectArgs {
            url_secret_previous: Some("the secret being rotated out".into()),
            ..Default::default()
        };
        assert_eq!(
            previous_alone.resolve().unwrap_err().name,
            "url-secret-previous"
        );
        let rotating = ProtectArgs {
            signed_urls: Some(SignedUrls::All),
            url_secret: Some("the current url secret".into()),
            url_secret_previous: Some("the secret being rotated out".into()),
            ..Default::default()
        };
        assert!(rotating.resolve().unwrap().url_secret_previous.is_some());
        let args = ProtectArgs {
            cors_origins: Some("https://a.example/, https://b.example".into()),
            ..Default::default()
        };
        assert_eq!(
            args.resolve().unwrap().cors_origins,
            vec!["https://a.example", "https://b.example"]
        );
    }

    #[test]
    fn drm_settings_are_checked_at_start() {
        let args = |drm: &str, hls: &str| ProtectArgs {
            encryption: Some(format!("hls={hls},dash=cbcs")),
            key_secret: Some("0123456789abcdef0123".into()),
            drm_systems: Some(drm.into()),
            ..Default::default()
        };
        let e = args("widevine,fairplay", "sample-aes")
            .resolve()
            .unwrap_err();
        assert_eq!(
            e.name, "drm-systems",
            "FairPlay without a key server needs a template"
        );
        let e = args("widevine", "aes-128").resolve().unwrap_err();
        assert_eq!(
            e.name, "drm-systems",
            "AES-128's raw key would give the DRM away"
        );
        assert!(args("widevine,clearkey", "aes-128").resolve().is_ok());
        let s = args("Widevine, playready", "sample-aes").resolve().unwrap();
        assert_eq!(s.drm_systems, Some(vec![DrmId::Widevine, DrmId::PlayReady]));
        let e = args("widevine,marlin", "sample-aes").resolve().unwrap_err();
        assert_eq!(e.name, "drm-systems");
        let bad_uri = ProtectArgs {
            fairplay_key_uri: Some("https://not-skd/{kid}".into()),
            ..args("fairplay", "sample-aes")
        };
        assert_eq!(bad_uri.resolve().unwrap_err().name, "fairplay-key-uri");
        let long = ProtectArgs {
            playready_la_url: Some(format!("https://l/{}", "a".repeat(3000))),
            ..args("playready", "sample-aes")
        };
        assert_eq!(long.resolve().unwrap_err().name, "playready-la-url");
    }
}
