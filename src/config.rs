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
use crate::source::ObjectStoreOptions;

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
    /// Memory faulted in at start, in two buffers, for reading `moov` boxes from a folder
    /// (`source/warm.rs`); 0 turns it off.
    pub load_buffer_bytes: u64,
    /// Gaps between a segment's ranges in a local file read through instead of skipped
    /// with another `pread`; 0 (the default) never over-reads a local file.
    pub local_merge_gap_bytes: u64,
    /// Limits on what a file may make us read or allocate.
    pub limits: MediaLimits,
    /// How an object-store `source` connects, waits, retries and coalesces reads.
    pub object_store: ObjectStoreOptions,
    /// Admission limits, deadlines and shutdown of the HTTP server.
    pub server: ServerOptions,
    /// Log line format.
    pub log_format: LogFormat,
    /// Encryption, keys, signed URLs and CORS (issue 14).
    pub protect: crate::crypto::settings::ProtectSettings,
    /// Location prefixes answered with nginx-vod-module's URL grammar (issue 16); empty
    /// by default.
    pub nginx_vod_locations: NginxVodLocations,
    /// The preview page at `/` (server/preview.rs).
    pub preview: PreviewOptions,
}

/// The preview page: whether it is served, and where its web players are loaded from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewOptions {
    /// Serve the page. `None`: on for a local root, off for a bucket (a bucket's key
    /// names are then shown only when asked for).
    pub enabled: Option<bool>,
    /// URL of the hls.js browser build the page loads (a version-pinned CDN URL).
    pub hls_js_url: String,
    /// URL of the dash.js browser build the page loads (a version-pinned CDN URL).
    pub dash_js_url: String,
}

/// hls.js on its public CDN, pinned to the version the player tests use.
pub const DEFAULT_HLS_JS_URL: &str = "https://cdn.jsdelivr.net/npm/hls.js@1.7.4/dist/hls.min.js";
/// dash.js on its public CDN, pinned to the version the player tests use.
pub const DEFAULT_DASH_JS_URL: &str =
    "https://cdn.jsdelivr.net/npm/dashjs@5.2.1/dist/modern/umd/dash.all.min.js";

impl Default for PreviewOptions {
    fn default() -> Self {
        Self {
            enabled: None,
            hls_js_url: DEFAULT_HLS_JS_URL.to_owned(),
            dash_js_url: DEFAULT_DASH_JS_URL.to_owned(),
        }
    }
}

/// How the HTTP server admits, times and drains requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerOptions {
    /// Open client connections; past it a new connection gets 503 and is closed.
    pub max_connections: usize,
    /// Segment and init requests in flight, streaming bodies included.
    pub max_segment_requests: usize,
    /// Playlist and MPD requests in flight, metadata loads included.
    pub max_manifest_requests: usize,
    /// Deadline for a request's answer to start (metadata load included), in ms.
    pub request_timeout_ms: u64,
    /// A streamed body whose client takes no new chunk for this long is closed, in ms.
    pub send_timeout_ms: u64,
    /// After SIGTERM, how long in-flight requests may take before the process exits, in ms.
    pub drain_timeout_ms: u64,
    /// Write one log line per request (the access log).
    pub access_log: bool,
    /// Threads serving connections (tokio's workers); `None`: one per available core.
    pub worker_threads: Option<usize>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            max_connections: 10_000,
            max_segment_requests: 2_048,
            max_manifest_requests: 512,
            request_timeout_ms: 15_000,
            send_timeout_ms: 30_000,
            drain_timeout_ms: 25_000,
            access_log: false,
            worker_threads: None,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            root: PathBuf::from("fixtures"),
            source: None,
            segment_duration_ms: 6000,
            // A streaming connection holds two in its channel and at most about one more
            // in hyper's write queue. Smaller chunks hold less but cost more system calls
            // per byte: measured in docs/performance.md (issue 13).
            stream_chunk_bytes: 64 * 1024,
            metadata_cache_bytes: 256 * 1024 * 1024,
            // Two loads at once of titles up to about two hours (a 60-minute title's
            // `moov` is 4 MB): docs/performance.md, issue 13.
            load_buffer_bytes: 16 * 1024 * 1024,
            // The brief's bar: no over-read on local files (docs/performance.md measures
            // what 8 KiB saves on a file interleaved sample by sample).
            local_merge_gap_bytes: 0,
            limits: MediaLimits::default(),
            object_store: ObjectStoreOptions::default(),
            server: ServerOptions::default(),
            log_format: LogFormat::Text,
            preview: PreviewOptions::default(),
            nginx_vod_locations: NginxVodLocations::default(),
            protect: Default::default(),
        }
    }
}

/// Most memory `load-buffer-bytes` may set aside (it is all resident from the start).
const MAX_LOAD_BUFFER_BYTES: u64 = 1024 * 1024 * 1024;

/// Every setting: (TOML key and flag name, environment variable, default, meaning).
/// The configuration reference is generated from and tested against this table.
pub const SETTINGS: &[(&str, &str, &str, &str)] = &[
    ("listen", "VODPACK_LISTEN", "127.0.0.1:8080", "Address and port to listen on"),
    ("root", "VODPACK_ROOT", "fixtures", "Folder of media files served when no source URL is given"),
    ("source", "VODPACK_SOURCE", "(none)", "Object-store URL such as s3://bucket/prefix; replaces root"),
    ("segment-duration-ms", "VODPACK_SEGMENT_DURATION_MS", "6000", "Target segment duration; segments are cut on the first key frame at or after each multiple"),
    ("stream-chunk-bytes", "VODPACK_STREAM_CHUNK_BYTES", "65536", "Size of one streamed body chunk; at most two are buffered per streaming connection"),
    ("metadata-cache-bytes", "VODPACK_METADATA_CACHE_BYTES", "268435456", "Bytes of parsed sample indexes kept in the metadata cache"),
    ("load-buffer-bytes", "VODPACK_LOAD_BUFFER_BYTES", "16777216", "Memory set aside at start, in two buffers, to read titles' moov boxes from a folder: faulted in once, so a title's first load touches no fresh pages (0: off). A moov larger than half of it, or a third load at the same time, is read into fresh memory"),
    ("local-merge-gap-bytes", "VODPACK_LOCAL_MERGE_GAP_BYTES", "0", "Gaps between a segment's byte ranges in a local file up to this size are read through instead of skipped with another read (at most 262144 bytes of over-read per segment): fewer system calls for files interleaved sample by sample, for bytes read from the page cache and not sent (0: none)"),
    ("max-moov-bytes", "VODPACK_MAX_MOOV_BYTES", "134217728", "Largest moov box accepted"),
    ("probe-bytes", "VODPACK_PROBE_BYTES", "262144", "First read at the start of a file, sized to catch ftyp and a typical moov"),
    ("max-title-document-bytes", "VODPACK_MAX_TITLE_DOCUMENT_BYTES", "65536", "Largest title document (.json key) accepted; a larger one is refused with 422"),
    ("max-title-renditions", "VODPACK_MAX_TITLE_RENDITIONS", "32", "Most entries (video, audio and subtitle files together) in one title document; more is refused with 422"),
    ("s3-endpoint", "VODPACK_S3_ENDPOINT", "(none)", "Endpoint URL of an S3-compatible store (MinIO, Ceph, R2, ...) for s3:// sources; requests use path-style addressing"),
    ("source-allow-http", "VODPACK_SOURCE_ALLOW_HTTP", "false", "Allow plain-HTTP (unencrypted) object-store endpoints, such as a MinIO on the same host"),
    ("source-connect-timeout-ms", "VODPACK_SOURCE_CONNECT_TIMEOUT_MS", "3000", "Longest wait to open a connection to the object store; a failed connection is retried"),
    ("source-timeout-ms", "VODPACK_SOURCE_TIMEOUT_MS", "10000", "Longest wait for the object store to start answering a request (retries included) or to send more bytes of an answer; past it the request gets 504"),
    ("source-retries", "VODPACK_SOURCE_RETRIES", "3", "Retries of an object-store request that failed with a 5xx, a transport error or a timeout, with exponential backoff from 100 ms"),
    ("source-merge-gap-bytes", "VODPACK_SOURCE_MERGE_GAP_BYTES", "65536", "Byte ranges of a segment closer than this are read with one GET; the bytes between them are over-read, at most 262144 per segment"),
    ("source-identity-ttl-ms", "VODPACK_SOURCE_IDENTITY_TTL_MS", "1000", "How long an object's identity is reused (a file's size, mtime and inode; an object's ETag and size) before it is checked again; a replaced file or object is served within this time (0: a stat or HEAD per request). A local file opened to take its identity stays open for the same time (at most 1,024 files), and segments read from it"),
    ("worker-threads", "VODPACK_WORKER_THREADS", "(one per available core)", "Threads serving connections (1 to 1024; the cgroup's CPU quota counts). On cores shared with other busy processes, fewer cost less CPU per small answer and serve fewer segments per second (docs/performance.md)"),
    ("max-connections", "VODPACK_MAX_CONNECTIONS", "10000", "Open client connections; past it a new connection gets 503 with Retry-After and is closed"),
    ("max-segment-requests", "VODPACK_MAX_SEGMENT_REQUESTS", "2048", "Segment and init requests in flight, streaming included; past it they are shed with 503 and Retry-After before any read"),
    ("max-manifest-requests", "VODPACK_MAX_MANIFEST_REQUESTS", "512", "Playlist and MPD requests in flight, metadata loads included; a separate limit, so a segment storm cannot starve playlists"),
    ("request-timeout-ms", "VODPACK_REQUEST_TIMEOUT_MS", "15000", "Deadline for an answer to start, metadata load included; past it the request gets 504"),
    ("send-timeout-ms", "VODPACK_SEND_TIMEOUT_MS", "30000", "A connection whose client takes none of an answer for this long is closed (as nginx's `send_timeout`) and a streamed body's source reads cancelled"),
    ("drain-timeout-ms", "VODPACK_DRAIN_TIMEOUT_MS", "25000", "After SIGTERM or SIGINT, how long in-flight requests may finish before the process exits"),
    ("access-log", "VODPACK_ACCESS_LOG", "false", "Write one log line per request (method, path, status, bytes, duration)"),
    ("log-format", "VODPACK_LOG_FORMAT", "text", "Log format: text or json"),
    ("preview", "VODPACK_PREVIEW", "(on for a folder, off for a bucket)", "Serve the preview page at / (titles under a prefix, played with hls.js and dash.js, with the inspect data)"),
    ("preview-hls-js-url", "VODPACK_PREVIEW_HLS_JS_URL", DEFAULT_HLS_JS_URL, "Where the preview page loads hls.js from"),
    ("preview-dash-js-url", "VODPACK_PREVIEW_DASH_JS_URL", DEFAULT_DASH_JS_URL, "Where the preview page loads dash.js from"),
    ("nginx-vod-locations", "VODPACK_NGINX_VOD_LOCATIONS", "(none)", "Answer nginx-vod-module URLs under these location prefixes, for example hls=/hls/,hlsts=/hlsts/,dash=/dash/ (see docs/migrating-from-nginx-vod.md)"),
    ("encryption", "VODPACK_ENCRYPTION", "none", "Encryption per output, overridable per title document: hls=aes-128|sample-aes|none, dash=cenc|cbcs|none"),
    ("key-secret-file", "VODPACK_KEY_SECRET_FILE", "(none)", "File holding the secret every title's content key and KID are derived from (HMAC-SHA256); needed when anything is encrypted"),
    ("key-secret", "VODPACK_KEY_SECRET", "(none)", "The key secret itself, at least 16 bytes; prefer the variable or the file to the flag"),
    ("signed-urls", "VODPACK_SIGNED_URLS", "off", "Which requests need a signed token: off, entry (entry manifests, keys, licences) or all (every /vod/ path; manifests carry the token on)"),
    ("url-secret-file", "VODPACK_URL_SECRET_FILE", "(none)", "File holding the secret URL tokens are signed with"),
    ("url-secret", "VODPACK_URL_SECRET", "(none)", "The URL secret itself, at least 16 bytes; prefer the variable or the file"),
    ("token-skew-secs", "VODPACK_TOKEN_SKEW_SECS", "30", "Seconds a token is still accepted after its expiry, for clocks that disagree"),
    ("cors-origins", "VODPACK_CORS_ORIGINS", "*", "Comma-separated origins allowed by CORS; any other origin gets no Access-Control-Allow-Origin"),
    ("cpix-url", "VODPACK_CPIX_URL", "(none)", "CPIX 2.3 key server URL; when set, content keys are fetched from it (POST of a CPIX request per title) instead of derived from the key secret"),
    ("cpix-systems", "VODPACK_CPIX_SYSTEMS", "(none)", "DRM systems whose pssh data is asked of the key server: widevine, playready (comma-separated)"),
    ("cpix-timeout-ms", "VODPACK_CPIX_TIMEOUT_MS", "2000", "Deadline of one key server request; a request past it is retried, and when every try fails the answer is 503, never clear content"),
    ("cpix-retries", "VODPACK_CPIX_RETRIES", "2", "Retries of a key server request that failed with a transport error, a timeout or a 5xx, with backoff from 100 ms"),
    ("key-cache-ttl-secs", "VODPACK_KEY_CACHE_TTL_SECS", "300", "How long a key fetched from the key server is reused for its title"),
    ("public-url", "VODPACK_PUBLIC_URL", "(none)", "Public base URL of the server, used for the absolute licence URL in MPDs (default: http:// and the request's Host)"),
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
    /// Size of one streamed body chunk in bytes [default: 65536]
    #[arg(long, env = "VODPACK_STREAM_CHUNK_BYTES")]
    pub stream_chunk_bytes: Option<usize>,
    /// Bytes of parsed metadata kept in the cache [default: 268435456]
    #[arg(long, env = "VODPACK_METADATA_CACHE_BYTES")]
    pub metadata_cache_bytes: Option<u64>,
    /// Memory faulted in at start to read titles' moov boxes from a folder [default: 16777216]
    #[arg(long, env = "VODPACK_LOAD_BUFFER_BYTES")]
    pub load_buffer_bytes: Option<u64>,
    /// Gaps read through between a segment's ranges in a local file [default: 0]
    #[arg(long, env = "VODPACK_LOCAL_MERGE_GAP_BYTES")]
    pub local_merge_gap_bytes: Option<u64>,
    /// Largest moov box accepted, in bytes [default: 134217728]
    #[arg(long, env = "VODPACK_MAX_MOOV_BYTES")]
    pub max_moov_bytes: Option<u64>,
    /// First read at the start of a file, in bytes [default: 262144]
    #[arg(long, env = "VODPACK_PROBE_BYTES")]
    pub probe_bytes: Option<u64>,
    /// Largest title document accepted, in bytes [default: 65536]
    #[arg(long, env = "VODPACK_MAX_TITLE_DOCUMENT_BYTES")]
    pub max_title_document_bytes: Option<u64>,
    /// Most entries in one title document [default: 32]
    #[arg(long, env = "VODPACK_MAX_TITLE_RENDITIONS")]
    pub max_title_renditions: Option<usize>,
    /// Endpoint URL of an S3-compatible store (MinIO, Ceph, R2, ...) for s3:// sources
    #[arg(long, env = "VODPACK_S3_ENDPOINT")]
    pub s3_endpoint: Option<String>,
    /// Allow plain-HTTP object-store endpoints [default: false]
    #[arg(
        long,
        env = "VODPACK_SOURCE_ALLOW_HTTP",
        num_args = 0..=1,
        default_missing_value = "true",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub source_allow_http: Option<bool>,
    /// Longest wait to connect to the object store, in milliseconds [default: 3000]
    #[arg(long, env = "VODPACK_SOURCE_CONNECT_TIMEOUT_MS")]
    pub source_connect_timeout_ms: Option<u64>,
    /// Longest wait for the object store to answer or send more bytes, in milliseconds [default: 10000]
    #[arg(long, env = "VODPACK_SOURCE_TIMEOUT_MS")]
    pub source_timeout_ms: Option<u64>,
    /// Retries of a failed object-store request [default: 3]
    #[arg(long, env = "VODPACK_SOURCE_RETRIES")]
    pub source_retries: Option<u32>,
    /// Byte ranges closer than this are read with one GET [default: 65536]
    #[arg(long, env = "VODPACK_SOURCE_MERGE_GAP_BYTES")]
    pub source_merge_gap_bytes: Option<u64>,
    /// How long a file's or object's identity is reused, in milliseconds [default: 1000]
    #[arg(long, env = "VODPACK_SOURCE_IDENTITY_TTL_MS")]
    pub source_identity_ttl_ms: Option<u64>,
    /// Threads serving connections [default: one per available core]
    #[arg(long, env = "VODPACK_WORKER_THREADS")]
    pub worker_threads: Option<usize>,
    /// Open client connections [default: 10000]
    #[arg(long, env = "VODPACK_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Segment and init requests in flight [default: 2048]
    #[arg(long, env = "VODPACK_MAX_SEGMENT_REQUESTS")]
    pub max_segment_requests: Option<usize>,
    /// Playlist and MPD requests in flight [default: 512]
    #[arg(long, env = "VODPACK_MAX_MANIFEST_REQUESTS")]
    pub max_manifest_requests: Option<usize>,
    /// Deadline for an answer to start, in ms [default: 15000]
    #[arg(long, env = "VODPACK_REQUEST_TIMEOUT_MS")]
    pub request_timeout_ms: Option<u64>,
    /// Close a stream whose client takes no chunk for this long, in ms [default: 30000]
    #[arg(long, env = "VODPACK_SEND_TIMEOUT_MS")]
    pub send_timeout_ms: Option<u64>,
    /// Drain deadline after SIGTERM, in ms [default: 25000]
    #[arg(long, env = "VODPACK_DRAIN_TIMEOUT_MS")]
    pub drain_timeout_ms: Option<u64>,
    /// Write one log line per request [default: false]
    #[arg(long, env = "VODPACK_ACCESS_LOG")]
    pub access_log: Option<bool>,
    /// Log format [default: text]
    #[arg(long, env = "VODPACK_LOG_FORMAT", value_enum)]
    pub log_format: Option<LogFormat>,
    /// Serve the preview page at / [default: on for a folder, off for a bucket]
    #[arg(
        long,
        env = "VODPACK_PREVIEW",
        num_args = 0..=1,
        default_missing_value = "true",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub preview: Option<bool>,
    /// Where the preview page loads hls.js from [default: a pinned jsDelivr URL]
    #[arg(long, env = "VODPACK_PREVIEW_HLS_JS_URL")]
    pub preview_hls_js_url: Option<String>,
    /// Where the preview page loads dash.js from [default: a pinned jsDelivr URL]
    #[arg(long, env = "VODPACK_PREVIEW_DASH_JS_URL")]
    pub preview_dash_js_url: Option<String>,
    /// nginx-vod-module location prefixes, e.g. hls=/hls/,hlsts=/hlsts/,dash=/dash/ [default: none]
    #[arg(long, env = "VODPACK_NGINX_VOD_LOCATIONS")]
    pub nginx_vod_locations: Option<NginxVodLocations>,
    /// TOML file with any of the settings above (keys as the flag names)
    #[arg(long, env = "VODPACK_CONFIG")]
    pub config: Option<PathBuf>,
    /// Encryption, key, signed-URL and CORS settings (flags and variables only).
    #[command(flatten)]
    pub protect: crate::crypto::settings::ProtectArgs,
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
    load_buffer_bytes: Option<u64>,
    local_merge_gap_bytes: Option<u64>,
    max_moov_bytes: Option<u64>,
    probe_bytes: Option<u64>,
    max_title_document_bytes: Option<u64>,
    max_title_renditions: Option<usize>,
    s3_endpoint: Option<String>,
    source_allow_http: Option<bool>,
    source_connect_timeout_ms: Option<u64>,
    source_timeout_ms: Option<u64>,
    source_retries: Option<u32>,
    source_merge_gap_bytes: Option<u64>,
    source_identity_ttl_ms: Option<u64>,
    worker_threads: Option<usize>,
    max_connections: Option<usize>,
    max_segment_requests: Option<usize>,
    max_manifest_requests: Option<usize>,
    request_timeout_ms: Option<u64>,
    send_timeout_ms: Option<u64>,
    drain_timeout_ms: Option<u64>,
    access_log: Option<bool>,
    log_format: Option<LogFormat>,
    preview: Option<bool>,
    preview_hls_js_url: Option<String>,
    preview_dash_js_url: Option<String>,
    nginx_vod_locations: Option<String>,
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
    /// The config file is not valid TOML for our settings (an unknown key among them).
    /// Shown on one line: the parser's message, then where.
    #[error("invalid config file {}: {}", path.display(), one_line_toml(source))]
    Parse {
        path: PathBuf,
        #[source]
        source: toml::de::Error,
    },
    /// A value is out of its allowed range.
    #[error("invalid setting {name}: {reason}")]
    Invalid { name: &'static str, reason: String },
    /// An environment variable vodpack honours holds a value it cannot use.
    #[error("invalid environment variable {name}={value}: {reason}")]
    Environment {
        name: &'static str,
        value: String,
        reason: String,
    },
}

/// A TOML error on one line: its message, then the position the parser gives (its first
/// display line, `TOML parse error at line L, column C`), without the source excerpt.
fn one_line_toml(error: &toml::de::Error) -> String {
    let text = error.to_string();
    let position = text.lines().next().unwrap_or_default().trim();
    let message = error.message().replace('\n', " ");
    match position.strip_prefix("TOML parse error at ") {
        Some(at) => format!("{} ({at})", message.trim()),
        None => message.trim().to_owned(),
    }
}

/// Variables of the `object_store` crate that say whether plain-HTTP endpoints are
/// allowed, by source scheme, as its builders' `from_env` read them. vodpack's own
/// `source-allow-http` wins over them.
const ALLOW_HTTP_VARIABLES: &[(&str, &str)] = &[
    ("s3://", "AWS_ALLOW_HTTP"),
    ("s3a://", "AWS_ALLOW_HTTP"),
    ("az://", "AZURE_ALLOW_HTTP"),
    ("abfs://", "AZURE_ALLOW_HTTP"),
    ("abfss://", "AZURE_ALLOW_HTTP"),
    ("adl://", "AZURE_ALLOW_HTTP"),
    ("azure://", "AZURE_ALLOW_HTTP"),
    ("gs://", "GOOGLE_ALLOW_HTTP"),
];

/// The `*_ALLOW_HTTP` variable for `source`, read as `object_store` reads booleans
/// (`true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`); `None` when unset or no source.
///
/// # Errors
/// [`ConfigError::Environment`] for a value that is not a boolean.
fn allow_http_from_env(source: Option<&str>) -> Result<Option<bool>, ConfigError> {
    let Some(source) = source else {
        return Ok(None);
    };
    let Some((_, name)) = ALLOW_HTTP_VARIABLES
        .iter()
        .find(|(scheme, _)| source.starts_with(scheme))
    else {
        return Ok(None);
    };
    let Ok(value) = std::env::var(name) else {
        return Ok(None);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(Some(true)),
        "false" | "0" | "no" | "off" | "" => Ok(Some(false)),
        _ => Err(ConfigError::Environment {
            name,
            value,
            reason: "must be true or false".into(),
        }),
    }
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
        let allow_http_env =
            allow_http_from_env(self.source.as_deref().or(file.source.as_deref()))?;
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
            load_buffer_bytes: self
                .load_buffer_bytes
                .or(file.load_buffer_bytes)
                .unwrap_or(d.load_buffer_bytes),
            local_merge_gap_bytes: self
                .local_merge_gap_bytes
                .or(file.local_merge_gap_bytes)
                .unwrap_or(d.local_merge_gap_bytes),
            limits: MediaLimits {
                max_moov_bytes: self
                    .max_moov_bytes
                    .or(file.max_moov_bytes)
                    .unwrap_or(d.limits.max_moov_bytes),
                probe_bytes: self
                    .probe_bytes
                    .or(file.probe_bytes)
                    .unwrap_or(d.limits.probe_bytes),
                max_title_document_bytes: self
                    .max_title_document_bytes
                    .or(file.max_title_document_bytes)
                    .unwrap_or(d.limits.max_title_document_bytes),
                max_title_renditions: self
                    .max_title_renditions
                    .or(file.max_title_renditions)
                    .unwrap_or(d.limits.max_title_renditions),
                ..d.limits
            },
            object_store: ObjectStoreOptions {
                s3_endpoint: self.s3_endpoint.clone().or(file.s3_endpoint),
                allow_http: match self.source_allow_http.or(file.source_allow_http) {
                    Some(allow) => allow,
                    None => allow_http_env.unwrap_or(d.object_store.allow_http),
                },
                connect_timeout_ms: self
                    .source_connect_timeout_ms
                    .or(file.source_connect_timeout_ms)
                    .unwrap_or(d.object_store.connect_timeout_ms),
                timeout_ms: self
                    .source_timeout_ms
                    .or(file.source_timeout_ms)
                    .unwrap_or(d.object_store.timeout_ms),
                retries: self
                    .source_retries
                    .or(file.source_retries)
                    .unwrap_or(d.object_store.retries),
                max_merge_gap_bytes: self
                    .source_merge_gap_bytes
                    .or(file.source_merge_gap_bytes)
                    .unwrap_or(d.object_store.max_merge_gap_bytes),
                identity_ttl_ms: self
                    .source_identity_ttl_ms
                    .or(file.source_identity_ttl_ms)
                    .unwrap_or(d.object_store.identity_ttl_ms),
            },
            server: ServerOptions {
                max_connections: self
                    .max_connections
                    .or(file.max_connections)
                    .unwrap_or(d.server.max_connections),
                max_segment_requests: self
                    .max_segment_requests
                    .or(file.max_segment_requests)
                    .unwrap_or(d.server.max_segment_requests),
                max_manifest_requests: self
                    .max_manifest_requests
                    .or(file.max_manifest_requests)
                    .unwrap_or(d.server.max_manifest_requests),
                request_timeout_ms: self
                    .request_timeout_ms
                    .or(file.request_timeout_ms)
                    .unwrap_or(d.server.request_timeout_ms),
                send_timeout_ms: self
                    .send_timeout_ms
                    .or(file.send_timeout_ms)
                    .unwrap_or(d.server.send_timeout_ms),
                drain_timeout_ms: self
                    .drain_timeout_ms
                    .or(file.drain_timeout_ms)
                    .unwrap_or(d.server.drain_timeout_ms),
                access_log: self
                    .access_log
                    .or(file.access_log)
                    .unwrap_or(d.server.access_log),
                worker_threads: self.worker_threads.or(file.worker_threads),
            },
            log_format: self.log_format.or(file.log_format).unwrap_or(d.log_format),
            preview: PreviewOptions {
                enabled: self.preview.or(file.preview),
                hls_js_url: (self.preview_hls_js_url.clone())
                    .or(file.preview_hls_js_url)
                    .unwrap_or(d.preview.hls_js_url),
                dash_js_url: (self.preview_dash_js_url.clone())
                    .or(file.preview_dash_js_url)
                    .unwrap_or(d.preview.dash_js_url),
            },
            nginx_vod_locations: match (&self.nginx_vod_locations, &file.nginx_vod_locations) {
                (Some(locations), _) => locations.clone(),
                (None, Some(text)) => text.parse().map_err(|reason| ConfigError::Invalid {
                    name: "nginx-vod-locations",
                    reason,
                })?,
                (None, None) => d.nginx_vod_locations,
            },
            protect: self.protect.resolve().map_err(|e| ConfigError::Invalid {
                name: e.name,
                reason: e.reason,
            })?,
        };
        // nginx-vod's names are answered from the clear output: with encryption on they
        // would serve clear what the native URLs encrypt. Refused until they are wired to
        // the protected outputs (fail closed).
        if settings.protect.encryption.any()
            && settings.nginx_vod_locations.prefixes().next().is_some()
        {
            return Err(ConfigError::Invalid {
                name: "nginx-vod-locations",
                reason: "cannot be used with --encryption yet (nginx-vod URLs would bypass it);                          drop one of the two"
                    .into(),
            });
        }
        let server = &settings.server;
        let positive: [(&'static str, u64); 6] = [
            ("max-connections", server.max_connections as u64),
            ("max-segment-requests", server.max_segment_requests as u64),
            ("max-manifest-requests", server.max_manifest_requests as u64),
            ("request-timeout-ms", server.request_timeout_ms),
            ("send-timeout-ms", server.send_timeout_ms),
            ("drain-timeout-ms", server.drain_timeout_ms),
        ];
        if let Some((name, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(ConfigError::Invalid {
                name,
                reason: "must be greater than 0".into(),
            });
        }
        if server
            .worker_threads
            .is_some_and(|n| !(1..=1024).contains(&n))
        {
            return Err(ConfigError::Invalid {
                name: "worker-threads",
                reason: "must be between 1 and 1024".into(),
            });
        }
        let limits = &settings.limits;
        let sizes: [(&'static str, u64); 3] = [
            ("metadata-cache-bytes", settings.metadata_cache_bytes),
            ("max-moov-bytes", limits.max_moov_bytes),
            ("probe-bytes", limits.probe_bytes),
        ];
        if let Some((name, _)) = sizes.iter().find(|(_, v)| *v < 4096) {
            return Err(ConfigError::Invalid {
                name,
                reason: "must be at least 4096 bytes".into(),
            });
        }
        if settings.local_merge_gap_bytes > crate::source::OVER_READ_BUDGET_BYTES {
            return Err(ConfigError::Invalid {
                name: "local-merge-gap-bytes",
                reason: format!("must be at most {}", crate::source::OVER_READ_BUDGET_BYTES),
            });
        }
        if settings.load_buffer_bytes > MAX_LOAD_BUFFER_BYTES {
            return Err(ConfigError::Invalid {
                name: "load-buffer-bytes",
                reason: format!("must be at most {MAX_LOAD_BUFFER_BYTES} (0 turns it off)"),
            });
        }
        if limits.probe_bytes > limits.max_moov_bytes {
            return Err(ConfigError::Invalid {
                name: "probe-bytes",
                reason: format!("must not exceed max-moov-bytes ({})", limits.max_moov_bytes),
            });
        }
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
        if !(2..=16 * 1024 * 1024).contains(&settings.limits.max_title_document_bytes) {
            return Err(ConfigError::Invalid {
                name: "max-title-document-bytes",
                reason: "must be between 2 and 16777216".into(),
            });
        }
        if !(1..=1024).contains(&settings.limits.max_title_renditions) {
            return Err(ConfigError::Invalid {
                name: "max-title-renditions",
                reason: "must be between 1 and 1024".into(),
            });
        }
        settings.object_store.validate()?;
        if let (Some(_), Some(source)) = (&settings.object_store.s3_endpoint, &settings.source) {
            if !source.starts_with("s3://") && !source.starts_with("s3a://") {
                return Err(ConfigError::Invalid {
                    name: "s3-endpoint",
                    reason: format!(
                        "applies to s3:// sources only, and the source is {source}; \
                         remove it or use an s3:// source"
                    ),
                });
            }
        }
        Ok(settings)
    }
}

impl ObjectStoreOptions {
    /// Check every object-store setting against its allowed range.
    fn validate(&self) -> Result<(), ConfigError> {
        let checks: [(&'static str, u64, std::ops::RangeInclusive<u64>); 5] = [
            (
                "source-connect-timeout-ms",
                self.connect_timeout_ms,
                10..=600_000,
            ),
            ("source-timeout-ms", self.timeout_ms, 10..=600_000),
            ("source-retries", u64::from(self.retries), 0..=20),
            (
                "source-merge-gap-bytes",
                self.max_merge_gap_bytes,
                0..=16 * 1024 * 1024,
            ),
            (
                "source-identity-ttl-ms",
                self.identity_ttl_ms,
                0..=3_600_000,
            ),
        ];
        for (name, value, allowed) in checks {
            if !allowed.contains(&value) {
                return Err(ConfigError::Invalid {
                    name,
                    reason: format!("must be between {} and {}", allowed.start(), allowed.end()),
                });
            }
        }
        if let Some(endpoint) = &self.s3_endpoint {
            if !(endpoint.starts_with("http://") || endpoint.starts_with("https://"))
                || url::Url::parse(endpoint).is_err()
            {
                return Err(ConfigError::Invalid {
                    name: "s3-endpoint",
                    reason: "must be an http:// or https:// URL such as http://127.0.0.1:9000"
                        .into(),
                });
            }
        }
        Ok(())
    }
}

/// The location prefixes (issue 16) under which nginx-vod-module's URLs are answered, one
/// per output, as `hls=/hls/,hlsts=/hlsts/,dash=/dash/` (any subset, any order). Each
/// prefix starts and ends with `/`, is not `/` or under `/vod/`, and none is a prefix of
/// another.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NginxVodLocations {
    /// HLS with fMP4 segments (`vod_hls_container_format fmp4`).
    pub hls: Option<String>,
    /// HLS with MPEG-TS segments.
    pub hlsts: Option<String>,
    /// DASH.
    pub dash: Option<String>,
}

impl NginxVodLocations {
    /// Every configured (output name, prefix).
    pub fn prefixes(&self) -> impl Iterator<Item = (&'static str, &str)> + '_ {
        [
            ("hls", &self.hls),
            ("hlsts", &self.hlsts),
            ("dash", &self.dash),
        ]
        .into_iter()
        .filter_map(|(name, prefix)| Some((name, prefix.as_deref()?)))
    }
}

impl std::str::FromStr for NginxVodLocations {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let mut locations = Self::default();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (name, prefix) = item
                .split_once('=')
                .ok_or_else(|| format!("{item:?} is not OUTPUT=/prefix/"))?;
            let slot = match name.trim() {
                "hls" => &mut locations.hls,
                "hlsts" => &mut locations.hlsts,
                "dash" => &mut locations.dash,
                other => return Err(format!("unknown output {other:?} (hls, hlsts or dash)")),
            };
            let prefix = prefix.trim();
            let ok = prefix.len() > 1
                && prefix.starts_with('/')
                && prefix.ends_with('/')
                && !prefix.starts_with("/vod/")
                && !prefix.contains("//");
            if !ok {
                return Err(format!(
                    "{prefix:?} must start and end with '/', not be '/' and not be under /vod/"
                ));
            }
            if slot.replace(prefix.to_owned()).is_some() {
                return Err(format!("{name} is given twice"));
            }
        }
        let prefixes: Vec<&str> = locations.prefixes().map(|(_, p)| p).collect();
        for (i, a) in prefixes.iter().enumerate() {
            if let Some(b) = prefixes
                .iter()
                .skip(i + 1)
                .find(|b| a.starts_with(**b) || b.starts_with(*a))
            {
                return Err(format!("{a:?} and {b:?} overlap"));
            }
        }
        Ok(locations)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A config file holding `text`, in a folder of its own for this test (`tag`).
    fn config_file(tag: &str, text: &str) -> (std::path::PathBuf, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("vodpack-config-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("vodpack.toml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn flags_win_over_the_file_which_wins_over_defaults() {
        let (dir, path) = config_file("plain", "segment-duration-ms = 4000\nroot = \"/media\"\n");
        let args = SettingsArgs {
            root: Some("/override".into()),
            config: Some(path),
            ..Default::default()
        };
        let s = args.resolve().unwrap();
        assert_eq!(s.segment_duration_ms, 4000);
        assert_eq!(s.root, PathBuf::from("/override"));
        assert_eq!(s.stream_chunk_bytes, 64 * 1024);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn nginx_vod_locations_come_from_flags_or_the_file_and_are_checked() {
        let parsed: NginxVodLocations = "hls=/hls/, dash=/dash/".parse().unwrap();
        assert_eq!(parsed.hls.as_deref(), Some("/hls/"));
        assert_eq!(parsed.hlsts, None);
        assert_eq!(parsed.dash.as_deref(), Some("/dash/"));
        for bad in [
            "hls=/hls",
            "mss=/mss/",
            "hls=/",
            "hls=/vod/x/",
            "hls=/a/,dash=/a/b/",
            "hls=/a/,hls=/b/",
        ] {
            assert!(bad.parse::<NginxVodLocations>().is_err(), "{bad}");
        }
        let (dir, path) = config_file("nginx", "nginx-vod-locations = \"hlsts=/ts/\"\n");
        let args = SettingsArgs {
            config: Some(path.clone()),
            ..Default::default()
        };
        let s = args.resolve().unwrap();
        assert_eq!(s.nginx_vod_locations.hlsts.as_deref(), Some("/ts/"));
        std::fs::write(&path, "nginx-vod-locations = \"hls=hls\"\n").unwrap();
        assert!(matches!(
            args.resolve(),
            Err(ConfigError::Invalid {
                name: "nginx-vod-locations",
                ..
            })
        ));
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Given nginx-vod locations and an encrypted output, then the settings are refused:
    /// nginx-vod's names would otherwise serve clear what the native URLs encrypt.
    #[test]
    fn nginx_vod_locations_are_refused_with_encryption() {
        let args = SettingsArgs {
            nginx_vod_locations: Some("hls=/hls/".parse().unwrap()),
            protect: crate::crypto::settings::ProtectArgs {
                encryption: Some("dash=cenc".into()),
                key_secret: Some("0123456789abcdef0123456789".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(matches!(
            args.resolve(),
            Err(ConfigError::Invalid {
                name: "nginx-vod-locations",
                ..
            })
        ));
    }

    /// Given worker threads, load buffers and a local merge gap from the file, a flag
    /// winning over the file, then they resolve as given; out of range, they are refused;
    /// unset, the runtime's default (a worker per core), 16 MiB of load buffers and no
    /// local over-read stand.
    #[test]
    fn worker_threads_load_buffers_and_local_gaps_resolve_and_are_checked() {
        let (dir, path) = config_file(
            "wt",
            "worker-threads = 3\nload-buffer-bytes = 0\nlocal-merge-gap-bytes = 8192\n",
        );
        let from_file = SettingsArgs {
            config: Some(path.clone()),
            ..Default::default()
        };
        let s = from_file.resolve().unwrap();
        assert_eq!((s.server.worker_threads, s.load_buffer_bytes), (Some(3), 0));
        assert_eq!(s.local_merge_gap_bytes, 8192);
        let flag = SettingsArgs {
            worker_threads: Some(1),
            ..from_file
        };
        assert_eq!(flag.resolve().unwrap().server.worker_threads, Some(1));
        let unset = SettingsArgs::default().resolve().unwrap();
        assert_eq!(unset.server.worker_threads, None);
        assert_eq!(unset.load_buffer_bytes, 16 * 1024 * 1024);
        assert_eq!(unset.local_merge_gap_bytes, 0);

        for (bad, name) in [
            ("worker-threads = 0\n", "worker-threads"),
            ("worker-threads = 5000\n", "worker-threads"),
            ("load-buffer-bytes = 2147483648\n", "load-buffer-bytes"),
            ("local-merge-gap-bytes = 262145\n", "local-merge-gap-bytes"),
        ] {
            std::fs::write(&path, bad).unwrap();
            let args = SettingsArgs {
                config: Some(path.clone()),
                ..Default::default()
            };
            assert!(
                matches!(args.resolve(), Err(ConfigError::Invalid { name: n, .. }) if n == name),
                "{bad}"
            );
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn an_unknown_key_in_the_file_is_an_error() {
        let (dir, path) = config_file("bad", "segment-seconds = 4\n");
        let args = SettingsArgs {
            config: Some(path),
            ..Default::default()
        };
        assert!(matches!(args.resolve(), Err(ConfigError::Parse { .. })));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn object_store_settings_come_from_flags_and_file_and_are_checked() {
        let (dir, path) = config_file(
            "s3",
            "source = \"s3://bucket/prefix\"\n\
             s3-endpoint = \"http://127.0.0.1:9000\"\n\
             source-allow-http = true\n\
             source-timeout-ms = 500\n\
             source-retries = 1\n\
             source-merge-gap-bytes = 0\n\
             source-identity-ttl-ms = 0\n",
        );
        let args = SettingsArgs {
            source_retries: Some(5),
            config: Some(path.clone()),
            ..Default::default()
        };
        let s = args.resolve().unwrap();
        assert_eq!(s.source.as_deref(), Some("s3://bucket/prefix"));
        let o = &s.object_store;
        assert_eq!(o.s3_endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert!(o.allow_http);
        assert_eq!((o.timeout_ms, o.retries), (500, 5));
        assert_eq!((o.max_merge_gap_bytes, o.identity_ttl_ms), (0, 0));
        assert_eq!(o.connect_timeout_ms, 3000);

        for bad in [
            "source-timeout-ms = 0\n",
            "source-retries = 99\n",
            "s3-endpoint = \"127.0.0.1:9000\"\n",
        ] {
            std::fs::write(&path, bad).unwrap();
            let args = SettingsArgs {
                config: Some(path.clone()),
                ..Default::default()
            };
            assert!(
                matches!(args.resolve(), Err(ConfigError::Invalid { .. })),
                "{bad}"
            );
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn allow_http_is_a_flag_that_may_take_a_value() {
        use clap::Parser;
        #[derive(Parser)]
        struct Serve {
            #[command(flatten)]
            settings: SettingsArgs,
        }
        let parse = |argv: &[&str]| {
            Serve::try_parse_from(argv)
                .unwrap()
                .settings
                .source_allow_http
        };
        assert_eq!(parse(&["serve", "--source-allow-http"]), Some(true));
        assert_eq!(
            parse(&["serve", "--source-allow-http", "false"]),
            Some(false)
        );
        assert_eq!(parse(&["serve", "--source-allow-http", "yes"]), Some(true));
    }
}
