//! Settings: every knob of the server, with its default, its `VODPACK_*` variable and its
//! TOML key, resolved in one place.
//!
//! Precedence is command-line flag, then environment variable (both through clap), then the
//! `--config` TOML file, then the default. `SETTINGS` lists every setting once; the
//! configuration reference in `docs/configuration.md` is checked against it by a test.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Deserialize;

use crate::media::MediaLimits;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines (the default on a terminal).
    Text,
    /// One JSON object per line (the container default).
    Json,
}

/// The resolved settings of a running server.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Folder of media files (when `source` is not set).
    pub root: PathBuf,
    /// Object-store URL (`s3://bucket/prefix`, ...); `None` serves `root`.
    pub source: Option<String>,
    /// Target segment duration in milliseconds.
    pub segment_duration_ms: u32,
    /// Size of one streamed body chunk; two are buffered per streaming connection.
    pub stream_chunk_bytes: usize,
    /// Bytes of parsed metadata kept in the cache.
    pub metadata_cache_bytes: u64,
    /// Limits on what a file may make us read or allocate.
    pub limits: MediaLimits,
    /// Log line format.
    pub log_format: LogFormat,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            root: PathBuf::from("fixtures"),
            source: None,
            segment_duration_ms: 6000,
            stream_chunk_bytes: 512 * 1024,
            metadata_cache_bytes: 256 * 1024 * 1024,
            limits: MediaLimits::default(),
            log_format: LogFormat::Text,
        }
    }
}

/// Every setting: (TOML key and flag name, environment variable, default, meaning).
/// The configuration reference is generated from and tested against this table.
pub const SETTINGS: &[(&str, &str, &str, &str)] = &[
    ("listen", "VODPACK_LISTEN", "127.0.0.1:8080", "Address and port to listen on"),
    ("root", "VODPACK_ROOT", "fixtures", "Folder of media files served when no source URL is given"),
    ("source", "VODPACK_SOURCE", "(none)", "Object-store URL such as s3://bucket/prefix; replaces root"),
    ("segment-duration-ms", "VODPACK_SEGMENT_DURATION_MS", "6000", "Target segment duration; segments are cut on the first key frame at or after each multiple"),
    ("stream-chunk-bytes", "VODPACK_STREAM_CHUNK_BYTES", "524288", "Size of one streamed body chunk; at most two are buffered per streaming connection"),
    ("metadata-cache-bytes", "VODPACK_METADATA_CACHE_BYTES", "268435456", "Bytes of parsed sample indexes kept in the metadata cache"),
    ("max-moov-bytes", "VODPACK_MAX_MOOV_BYTES", "134217728", "Largest moov box accepted"),
    ("probe-bytes", "VODPACK_PROBE_BYTES", "262144", "First read at the start of a file, sized to catch ftyp and a typical moov"),
    ("log-format", "VODPACK_LOG_FORMAT", "text", "Log format: text or json"),
];

/// The subset of settings given on the command line or in the environment.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SettingsArgs {
    /// Address and port to listen on [default: 127.0.0.1:8080]
    #[arg(long, env = "VODPACK_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// Folder of media files to serve [default: fixtures]
    #[arg(long, env = "VODPACK_ROOT")]
    pub root: Option<PathBuf>,
    /// Object-store URL (s3://bucket/prefix, gs://, az://, https://)
    #[arg(long, env = "VODPACK_SOURCE")]
    pub source: Option<String>,
    /// Target segment duration in milliseconds [default: 6000]
    #[arg(long, env = "VODPACK_SEGMENT_DURATION_MS")]
    pub segment_duration_ms: Option<u32>,
    /// Size of one streamed body chunk in bytes [default: 524288]
    #[arg(long, env = "VODPACK_STREAM_CHUNK_BYTES")]
    pub stream_chunk_bytes: Option<usize>,
    /// Bytes of parsed metadata kept in the cache [default: 268435456]
    #[arg(long, env = "VODPACK_METADATA_CACHE_BYTES")]
    pub metadata_cache_bytes: Option<u64>,
    /// Largest moov box accepted, in bytes [default: 134217728]
    #[arg(long, env = "VODPACK_MAX_MOOV_BYTES")]
    pub max_moov_bytes: Option<u64>,
    /// First read at the start of a file, in bytes [default: 262144]
    #[arg(long, env = "VODPACK_PROBE_BYTES")]
    pub probe_bytes: Option<u64>,
    /// Log format [default: text]
    #[arg(long, env = "VODPACK_LOG_FORMAT", value_enum)]
    pub log_format: Option<LogFormat>,
    /// TOML file with any of the settings above (keys as the flag names)
    #[arg(long, env = "VODPACK_CONFIG")]
    pub config: Option<PathBuf>,
}

/// The same settings as read from a TOML file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct FileSettings {
    listen: Option<SocketAddr>,
    root: Option<PathBuf>,
    source: Option<String>,
    segment_duration_ms: Option<u32>,
    stream_chunk_bytes: Option<usize>,
    metadata_cache_bytes: Option<u64>,
    max_moov_bytes: Option<u64>,
    probe_bytes: Option<u64>,
    log_format: Option<LogFormat>,
}

/// Why settings could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The config file is not valid TOML for our settings.
    #[error("invalid config file {path}: {source}")]
    Parse {
        path: PathBuf,
        #[source]
        source: toml::de::Error,
    },
    /// A value is out of its allowed range.
    #[error("invalid setting {name}: {reason}")]
    Invalid { name: &'static str, reason: String },
}

impl SettingsArgs {
    /// Resolve flags and environment over the config file over the defaults.
    ///
    /// # Errors
    /// When the config file cannot be read or parsed, or a value is out of range.
    pub fn resolve(&self) -> Result<Settings, ConfigError> {
        let file = match &self.config {
            None => FileSettings::default(),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.clone(),
                    source,
                })?;
                toml::from_str(&text).map_err(|source| ConfigError::Parse {
                    path: path.clone(),
                    source,
                })?
            }
        };
        let d = Settings::default();
        let settings = Settings {
            listen: self.listen.or(file.listen).unwrap_or(d.listen),
            root: self.root.clone().or(file.root).unwrap_or(d.root),
            source: self.source.clone().or(file.source),
            segment_duration_ms: self
                .segment_duration_ms
                .or(file.segment_duration_ms)
                .unwrap_or(d.segment_duration_ms),
            stream_chunk_bytes: self
                .stream_chunk_bytes
                .or(file.stream_chunk_bytes)
                .unwrap_or(d.stream_chunk_bytes),
            metadata_cache_bytes: self
                .metadata_cache_bytes
                .or(file.metadata_cache_bytes)
                .unwrap_or(d.metadata_cache_bytes),
            limits: MediaLimits {
                max_moov_bytes: self
                    .max_moov_bytes
                    .or(file.max_moov_bytes)
                    .unwrap_or(d.limits.max_moov_bytes),
                probe_bytes: self
                    .probe_bytes
                    .or(file.probe_bytes)
                    .unwrap_or(d.limits.probe_bytes),
                ..d.limits
            },
            log_format: self.log_format.or(file.log_format).unwrap_or(d.log_format),
        };
        if !(100..=60_000).contains(&settings.segment_duration_ms) {
            return Err(ConfigError::Invalid {
                name: "segment-duration-ms",
                reason: "must be between 100 and 60000".into(),
            });
        }
        if !(4096..=16 * 1024 * 1024).contains(&settings.stream_chunk_bytes) {
            return Err(ConfigError::Invalid {
                name: "stream-chunk-bytes",
                reason: "must be between 4096 and 16777216".into(),
            });
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_file_which_wins_over_defaults() {
        let dir = std::env::temp_dir().join(format!("vodpack-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("vodpack.toml");
        std::fs::write(&path, "segment-duration-ms = 4000\nroot = \"/media\"\n").unwrap();
        let args = SettingsArgs {
            root: Some("/override".into()),
            config: Some(path),
            ..Default::default()
        };
        let s = args.resolve().unwrap();
        assert_eq!(s.segment_duration_ms, 4000);
        assert_eq!(s.root, PathBuf::from("/override"));
        assert_eq!(s.stream_chunk_bytes, 512 * 1024);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn an_unknown_key_in_the_file_is_an_error() {
        let dir = std::env::temp_dir().join(format!("vodpack-config-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("vodpack.toml");
        std::fs::write(&path, "segment-seconds = 4\n").unwrap();
        let args = SettingsArgs {
            config: Some(path),
            ..Default::default()
        };
        assert!(matches!(args.resolve(), Err(ConfigError::Parse { .. })));
        let _ = std::fs::remove_dir_all(dir);
    }
}
