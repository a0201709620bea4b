//! Building the store of a source from its URL and options, counting its retries, and
//! mapping its errors to ours.
//!
//! The options ([`ObjectStoreOptions`]) and the ways setting up can fail ([`StoreError`])
//! are defined here, with the one function that reads them.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ::object_store::aws::AmazonS3Builder;
use ::object_store::azure::MicrosoftAzureBuilder;
use ::object_store::client::{
    ClientConfigKey, HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest,
    HttpResponse, HttpService, ReqwestConnector,
};
use ::object_store::gcp::GoogleCloudStorageBuilder;
use ::object_store::http::HttpBuilder;
use ::object_store::path::Path;
use ::object_store::{
    BackoffConfig, ClientOptions, Extensions, ObjectStore, ObjectStoreScheme, RetryConfig,
};
use async_trait::async_trait;

use crate::source::counters::SourceCounters;
use crate::source::error::SourceError;
use crate::source::key::ObjectKey;

/// How the object-store source connects, waits, retries and coalesces reads. The
/// `s3-endpoint` and `source-*` settings; defaults as in `docs/configuration.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectStoreOptions {
    /// Endpoint URL of an S3-compatible store (MinIO, Ceph, R2, ...). `None`: AWS, or
    /// `AWS_ENDPOINT`. When set, requests use path-style addressing.
    pub s3_endpoint: Option<String>,
    /// Allow `http://` endpoints (a local MinIO, tests). Off: only TLS.
    pub allow_http: bool,
    /// Longest wait to open a connection, in milliseconds. A failed connect is retried.
    pub connect_timeout_ms: u64,
    /// Longest wait for a response head (all retries included), and for more bytes of a
    /// body, in milliseconds. Past it a read is [`SourceError::Timeout`].
    pub timeout_ms: u64,
    /// Retries of a request that failed with a 5xx, a transport error or a timeout.
    pub retries: u32,
    /// Ranges of one read closer than this share a GET; the gap bytes are over-read.
    pub max_merge_gap_bytes: u64,
    /// How long an identity is reused as it is, in milliseconds, after the store last
    /// confirmed it; 0 asks on every call.
    pub identity_ttl_ms: u64,
    /// How long after that an identity is still handed out at once while a HEAD checks it
    /// in the background, in milliseconds; past it a request waits for the store.
    pub identity_max_stale_ms: u64,
    /// GETs one read (a segment, a batch) keeps open at once.
    pub read_concurrency: usize,
    /// Store requests hedged at most, per 100 requests (0: never hedge).
    pub hedge_percent: u32,
    /// A request whose head has not come after this many milliseconds is sent again; 0:
    /// after twice the store's recent 95th percentile (at least 10 ms).
    pub hedge_after_ms: u64,
    /// Bytes read by the GET that first opens an object (its identity comes with them);
    /// 0: a HEAD. Startup sets it to `probe-bytes`, what the index load reads first.
    pub open_read_bytes: u64,
}

impl Default for ObjectStoreOptions {
    fn default() -> Self {
        Self {
            s3_endpoint: None,
            allow_http: false,
            connect_timeout_ms: 3_000,
            // S3 answers a ranged GET in tens of milliseconds; 10 s leaves room for a slow
            // moment and still answers 504 well before a CDN gives up on us (30 s+).
            timeout_ms: 10_000,
            retries: 3,
            // One GET costs a round trip (tens of ms on S3) and a request fee; 64 KiB costs
            // about a millisecond of transfer. Audio chunks between video chunks are
            // merged, video chunks between audio chunks usually are not.
            max_merge_gap_bytes: 64 * 1024,
            // A HEAD per object per second per replica at most, and a replaced object
            // shows within a second.
            identity_ttl_ms: 1_000,
            // Past the second, answers keep coming from memory while one HEAD checks; a
            // title nobody asked for in a minute is checked before its next answer.
            identity_max_stale_ms: 60_000,
            // A 6 s audio segment of a finely interleaved file read alone is about 150
            // runs: 32 at once is about five round trips (most are taken from the video
            // segment's read instead, `shared.rs`).
            read_concurrency: 32,
            hedge_percent: 5,
            hedge_after_ms: 0,
            open_read_bytes: 256 * 1024,
        }
    }
}

/// Why an object-store source could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL is not one we can serve from.
    #[error("invalid source URL {url}: {reason}")]
    InvalidUrl { url: String, reason: String },
    /// An extra store option has a name the store does not know.
    #[error("unknown object-store option {key} for {url}")]
    UnknownOption { url: String, key: String },
    /// A plain-HTTP endpoint was given without allowing plain HTTP. `setting` names where
    /// the endpoint came from (`s3-endpoint`, `source`, or an `AWS_ENDPOINT*` variable).
    #[error(
        "{setting} {endpoint} is plain HTTP, which is refused unless allowed: add \
         --source-allow-http (or VODPACK_SOURCE_ALLOW_HTTP=true, or {variable}=true), or use https://"
    )]
    PlainHttp {
        setting: String,
        endpoint: String,
        variable: &'static str,
    },
    /// Credentials in the environment that cannot work as given.
    #[error("{problem}; {fix}")]
    Credentials { problem: String, fix: String },
    /// The store refused its configuration (missing bucket, region, credentials, ...).
    #[error(
        "the object store refuses its configuration ({source}); check the URL and the \
         AWS_*, GOOGLE_* or AZURE_* credentials and region"
    )]
    Build {
        url: String,
        #[source]
        source: ::object_store::Error,
    },
}

/// Idle pooled connections are closed after this, before S3 closes them itself (~20 s),
/// so a request rarely meets a connection the store already dropped.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(15);

/// Build the store for `url` and the path of its prefix.
pub(super) fn build_store(
    url: &str,
    options: &ObjectStoreOptions,
    config: &[(&str, &str)],
    counters: &Arc<SourceCounters>,
) -> Result<(Arc<dyn ObjectStore>, Path), StoreError> {
    let invalid = |reason: String| StoreError::InvalidUrl {
        url: url.to_owned(),
        reason,
    };
    let unknown = |key: &str| StoreError::UnknownOption {
        url: url.to_owned(),
        key: key.to_owned(),
    };
    let built = |source| StoreError::Build {
        url: url.to_owned(),
        source,
    };
    let parsed = url::Url::parse(url).map_err(|e| invalid(e.to_string()))?;
    let (scheme, prefix) = ObjectStoreScheme::parse(&parsed).map_err(|e| invalid(e.to_string()))?;
    check_plain_http(url, &scheme, options)?;
    if scheme == ObjectStoreScheme::AmazonS3 {
        check_aws_credentials()?;
    }
    // reqwest is built without a default TLS provider (to avoid aws-lc-rs, a C build):
    // install ring's once. An error means one is installed already, which is as good.
    let _ = rustls::crypto::ring::default_provider().install_default();
    // The environment's client options first (a proxy, certificates, ...), as the
    // builders' `from_env` would have them, then ours over them.
    let client = env_client_options(&scheme)
        .with_allow_http(options.allow_http)
        .with_allow_http(options.allow_http)
        .with_connect_timeout(Duration::from_millis(options.connect_timeout_ms))
        // Between body chunks, and per attempt for the head (our own deadline covers the
        // head over all attempts). No timeout on a whole request: a segment body lasts as
        // long as the client takes to read it.
        .with_read_timeout(Duration::from_millis(options.timeout_ms))
        .with_timeout_disabled()
        .with_pool_idle_timeout(POOL_IDLE_TIMEOUT);
    let retry = RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            base: 2.0,
        },
        max_retries: options.retries as usize,
        // Also bounds resuming a broken body, which may come late in a long stream.
        retry_timeout: Duration::from_secs(60).max(Duration::from_millis(options.timeout_ms)),
    };
    let connector = CountingConnector {
        counters: counters.clone(),
    };
    let store: Arc<dyn ObjectStore> = match scheme {
        ObjectStoreScheme::AmazonS3 => {
            let mut builder = AmazonS3Builder::from_env()
                .with_url(url)
                .with_client_options(client)
                .with_retry(retry)
                .with_http_connector(connector);
            if let Some(endpoint) = &options.s3_endpoint {
                builder = builder
                    .with_endpoint(endpoint)
                    .with_virtual_hosted_style_request(false);
            }
            for (key, value) in config {
                let config_key = key.to_ascii_lowercase().parse().map_err(|_| unknown(key))?;
                builder = builder.with_config(config_key, *value);
            }
            Arc::new(builder.build().map_err(built)?)
        }
        ObjectStoreScheme::GoogleCloudStorage => {
            let mut builder = GoogleCloudStorageBuilder::from_env()
                .with_url(url)
                .with_client_options(client)
                .with_retry(retry)
                .with_http_connector(connector);
            for (key, value) in config {
                let config_key = key.to_ascii_lowercase().parse().map_err(|_| unknown(key))?;
                builder = builder.with_config(config_key, *value);
            }
            Arc::new(builder.build().map_err(built)?)
        }
        ObjectStoreScheme::MicrosoftAzure => {
            let mut builder = MicrosoftAzureBuilder::from_env()
                .with_url(url)
                .with_client_options(client)
                .with_retry(retry)
                .with_http_connector(connector);
            for (key, value) in config {
                let config_key = key.to_ascii_lowercase().parse().map_err(|_| unknown(key))?;
                builder = builder.with_config(config_key, *value);
            }
            Arc::new(builder.build().map_err(built)?)
        }
        ObjectStoreScheme::Http => {
            let origin = &parsed[..url::Position::BeforePath];
            let mut builder = HttpBuilder::new()
                .with_url(origin)
                .with_client_options(client)
                .with_retry(retry)
                .with_http_connector(connector);
            for (key, value) in config {
                let config_key = key.to_ascii_lowercase().parse().map_err(|_| unknown(key))?;
                builder = builder.with_config(config_key, *value);
            }
            Arc::new(builder.build().map_err(built)?)
        }
        _ => {
            return Err(invalid(
                "serve s3://, gs://, az:// or http(s):// URLs; serve a folder with --root".into(),
            ))
        }
    };
    Ok((store, prefix))
}

/// The environment variable prefix `object_store`'s builder for `scheme` reads.
fn env_prefix(scheme: &ObjectStoreScheme) -> Option<&'static str> {
    match scheme {
        ObjectStoreScheme::AmazonS3 => Some("AWS_"),
        ObjectStoreScheme::GoogleCloudStorage => Some("GOOGLE_"),
        ObjectStoreScheme::MicrosoftAzure => Some("AZURE_"),
        _ => None,
    }
}

/// Client options (`AWS_PROXY_URL`, `AZURE_ALLOW_INVALID_CERTIFICATES`, ...) from the
/// environment, read as the builders' `from_env` reads them. Setting our own
/// `ClientOptions` on a builder replaces the ones `from_env` found, so they are carried
/// over here; vodpack's settings are applied after them and win.
fn env_client_options(scheme: &ObjectStoreScheme) -> ClientOptions {
    let mut client = ClientOptions::new();
    let Some(prefix) = env_prefix(scheme) else {
        return client;
    };
    for (name, value) in std::env::vars_os() {
        let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
            continue;
        };
        let Some(rest) = name.strip_prefix(prefix) else {
            continue;
        };
        if let Ok(key) = rest.to_ascii_lowercase().parse::<ClientConfigKey>() {
            client = client.with_config(key, value);
        }
    }
    client
}

/// The S3 endpoint requests go to and the setting it came from: `s3-endpoint`, or the
/// `AWS_ENDPOINT_URL`/`AWS_ENDPOINT` variables `from_env` reads.
fn s3_endpoint(options: &ObjectStoreOptions) -> Option<(String, String)> {
    if let Some(endpoint) = &options.s3_endpoint {
        return Some(("s3-endpoint".into(), endpoint.clone()));
    }
    ["AWS_ENDPOINT_URL", "AWS_ENDPOINT", "AWS_ENDPOINT_URL_S3"]
        .iter()
        .find_map(|name| Some(((*name).to_owned(), std::env::var(name).ok()?)))
}

/// Refuse a plain-HTTP endpoint unless plain HTTP is allowed. Without this check the
/// store starts and every request fails later with a bare "builder error".
fn check_plain_http(
    url: &str,
    scheme: &ObjectStoreScheme,
    options: &ObjectStoreOptions,
) -> Result<(), StoreError> {
    if options.allow_http {
        return Ok(());
    }
    let (setting, endpoint, variable) = match scheme {
        ObjectStoreScheme::AmazonS3 => match s3_endpoint(options) {
            Some((setting, endpoint)) => (setting, endpoint, "AWS_ALLOW_HTTP"),
            None => return Ok(()),
        },
        ObjectStoreScheme::Http => (
            "source".to_owned(),
            url.to_owned(),
            "VODPACK_SOURCE_ALLOW_HTTP",
        ),
        _ => return Ok(()),
    };
    if endpoint.trim().to_ascii_lowercase().starts_with("http://") {
        return Err(StoreError::PlainHttp {
            setting,
            endpoint,
            variable,
        });
    }
    Ok(())
}

/// Static AWS credentials come as a pair: one without the other is refused at start,
/// naming both variables, rather than as the store's bare "Missing SecretAccessKey".
fn check_aws_credentials() -> Result<(), StoreError> {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let (id, secret) = (set("AWS_ACCESS_KEY_ID"), set("AWS_SECRET_ACCESS_KEY"));
    if id != secret {
        let (have, missing) = match id {
            true => ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
            false => ("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID"),
        };
        return Err(StoreError::Credentials {
            problem: format!("{have} is set but {missing} is not"),
            fix: format!("set {missing} too, or unset both to use the instance's role"),
        });
    }
    Ok(())
}

/// Map a store error for `key` to ours. Access refused is logged here with its detail
/// and becomes `Unreachable`, which the client sees as a 502 without bucket details.
pub(super) fn map_error(key: &ObjectKey, error: ::object_store::Error) -> SourceError {
    use ::object_store::Error as E;
    let key_name = key.to_string();
    match error {
        E::NotFound { .. } => SourceError::NotFound { key: key_name },
        E::Precondition { .. } | E::NotModified { .. } => SourceError::Changed { key: key_name },
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => {
            tracing::warn!(key = %key, error = %error, "object store refused access");
            SourceError::Unreachable {
                key: key_name,
                reason: error.to_string(),
            }
        }
        E::Generic { .. } => match transport_failure(&error) {
            Some(HttpErrorKind::Timeout) => SourceError::Timeout { key: key_name },
            // Refused or failed connections, DNS, dropped answers, 5xx after the retries,
            // and other statuses the store did not expect: the store is not serving us.
            _ => SourceError::Unreachable {
                key: key_name,
                reason: error.to_string(),
            },
        },
        other => SourceError::Io {
            key: key_name,
            source: std::io::Error::other(other),
        },
    }
}

/// The kind of the transport failure in `error`'s source chain, if there is one.
fn transport_failure(error: &(dyn std::error::Error + 'static)) -> Option<HttpErrorKind> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(http) = e.downcast_ref::<HttpError>() {
            return Some(http.kind());
        }
        current = e.source();
    }
    None
}

/// An I/O error reading `key`, for answers that do not fit the request.
pub(super) fn io_error(key: &ObjectKey, reason: String) -> SourceError {
    SourceError::Io {
        key: key.to_string(),
        source: std::io::Error::other(reason),
    }
}

/// A copy of an error shared by every request that waited on one identity load.
pub(super) fn copy_error(error: &SourceError) -> SourceError {
    match error {
        SourceError::NotFound { key } => SourceError::NotFound { key: key.clone() },
        SourceError::OutsideRoot { key } => SourceError::OutsideRoot { key: key.clone() },
        SourceError::Changed { key } => SourceError::Changed { key: key.clone() },
        SourceError::OutOfRange { key, range, size } => SourceError::OutOfRange {
            key: key.clone(),
            range: *range,
            size: *size,
        },
        SourceError::Unreachable { key, reason } => SourceError::Unreachable {
            key: key.clone(),
            reason: reason.clone(),
        },
        SourceError::Timeout { key } => SourceError::Timeout { key: key.clone() },
        SourceError::TooLarge { key, len, limit } => SourceError::TooLarge {
            key: key.clone(),
            len: *len,
            limit: *limit,
        },
        SourceError::Io { key, source } => SourceError::Io {
            key: key.clone(),
            source: std::io::Error::new(source.kind(), source.to_string()),
        },
    }
}

/// Counts the HTTP attempts of one logical request; carried in the request's extensions,
/// which `object_store` copies onto every retry of it.
#[derive(Debug, Clone, Default)]
struct AttemptTag(Arc<AtomicU32>);

/// Extensions carrying a fresh [`AttemptTag`].
pub(super) fn attempt_tag() -> Extensions {
    let mut extensions = Extensions::new();
    extensions.insert(AttemptTag::default());
    extensions
}

/// Builds `object_store`'s reqwest client, wrapped to count retries: `object_store`
/// retries inside its client and does not report them, so every attempt after the first
/// of a tagged request is counted in `vod_source_read_retries_total`.
#[derive(Debug)]
struct CountingConnector {
    counters: Arc<SourceCounters>,
}

impl HttpConnector for CountingConnector {
    fn connect(&self, options: &ClientOptions) -> ::object_store::Result<HttpClient> {
        let inner = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(CountingService {
            inner,
            counters: self.counters.clone(),
        }))
    }
}

/// The HTTP client of [`CountingConnector`].
#[derive(Debug)]
struct CountingService {
    inner: HttpClient,
    counters: Arc<SourceCounters>,
}

#[async_trait]
impl HttpService for CountingService {
    async fn call(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        if let Some(tag) = request.extensions().get::<AttemptTag>() {
            if tag.0.fetch_add(1, Ordering::Relaxed) > 0 {
                self.counters.read_retries.inc();
            }
        }
        self.inner.execute(request).await
    }
}
