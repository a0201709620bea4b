//! The `cpix` key provider: content keys fetched from a key server as CPIX 2.3 documents
//! (DASH-IF Content Protection Information Exchange, the format commercial DRM services
//! speak), cached per title with a TTL.
//!
//! Under a key split (`crypto::usage`) one request asks for every usage's key with the
//! encryption contract (`split_request_document`). The request is written in `request`,
//! the answer read in `answer`. A failure is
//! `KeyError::Unavailable` (a 503), never a made-up key, and is not cached, so the next
//! request tries again.

use std::sync::Arc;
use std::time::Duration;

use moka::future::Cache;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

use super::drm::DrmId;
use super::keys::{uuid_string, ContentKey, KeyError, KeyProvider, TitleKeys};
use super::policy::Scheme;
use super::usage::KeyPresets;
use crate::telemetry::OutcomeLabels;

pub use super::drm::{PLAYREADY, WIDEVINE};

/// Largest CPIX answer read, in bytes.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// The key server's protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum CpixMode {
    /// A CPIX 2.3 document POSTed as it is.
    #[default]
    Cpix,
    /// AWS SPEKE v2: CPIX 2.3 with the `X-Speke-Version: 2.0` header, the key's
    /// `commonEncryptionScheme` and an encryption contract (`ContentKeyUsageRuleList`).
    Speke2,
}

/// How to reach the key server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpixOptions {
    /// The key server's URL (the CPIX request is POSTed to it).
    pub url: String,
    /// CPIX 2.3 or SPEKE v2.
    pub mode: CpixMode,
    /// DRM systems to ask signalling for.
    pub systems: Vec<[u8; 16]>,
    /// Whether each of `systems` must be in the answer (`--drm-systems`): an answer
    /// without one is a failure, and is not cached.
    pub required: bool,
    /// The scheme the key encrypts with (SPEKE v2 `commonEncryptionScheme`).
    pub scheme: Scheme,
    /// Deadline of one request, connection included.
    pub timeout: Duration,
    /// Retries after the first attempt.
    pub retries: u32,
    /// How long a fetched key is reused.
    pub ttl: Duration,
}

/// Keys from a CPIX key server.
pub struct CpixKeyProvider {
    options: CpixOptions,
    client: reqwest::Client,
    cache: Cache<String, Arc<ContentKey>>,
    /// The keys of titles under a key split, by title, split and systems asked.
    splits: Cache<String, Arc<TitleKeys>>,
    /// Each request to the key server by outcome (`vod_key_server_requests_total`).
    requests: Family<OutcomeLabels, Counter>,
}

impl std::fmt::Debug for CpixKeyProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpixKeyProvider")
            .field("url", &self.options.url)
            .finish_non_exhaustive()
    }
}

impl CpixKeyProvider {
    /// A provider for `options`.
    ///
    /// # Errors
    /// [`KeyError::Config`] when the HTTP client cannot be built.
    pub fn new(options: CpixOptions) -> Result<Self, KeyError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(options.timeout)
            .connect_timeout(options.timeout)
            .build()
            .map_err(|e| KeyError::Config {
                reason: format!("cpix client: {e}"),
            })?;
        let cache = Cache::builder()
            .max_capacity(100_000)
            .time_to_live(options.ttl)
            .build();
        let splits = Cache::builder()
            .max_capacity(100_000)
            .time_to_live(options.ttl)
            .build();
        Ok(Self {
            options,
            client,
            cache,
            splits,
            requests: Family::default(),
        })
    }

    /// The same provider, counting its requests in `requests` (the server's registered
    /// family).
    pub fn counting_in(mut self, requests: Family<OutcomeLabels, Counter>) -> Self {
        self.requests = requests;
        self
    }

    fn count(&self, outcome: &'static str) {
        self.requests
            .get_or_create(&OutcomeLabels { outcome })
            .inc();
    }

    /// The options of a request for `systems` (`None`: the configured ones).
    fn asking(&self, systems: Option<&[DrmId]>) -> CpixOptions {
        let mut options = self.options.clone();
        if let Some(systems) = systems {
            options.systems = (systems.iter())
                .filter(|d| d.from_key_server())
                .map(|d| d.system_id())
                .collect();
            options.required = true;
        }
        options
    }

    /// POST `body` to the key server and read its answer, retrying transport errors,
    /// timeouts and 5xx with backoff; each failed attempt is counted by its outcome.
    async fn exchange(&self, body: String) -> Result<Vec<u8>, KeyError> {
        let mut delay = Duration::from_millis(100);
        let mut last = String::new();
        for attempt in 0..=self.options.retries {
            if attempt > 0 {
                tokio::time::sleep(delay).await;
                delay *= 2;
            }
            let mut request = (self.client.post(&self.options.url))
                .header("content-type", "application/xml")
                .body(body.clone());
            if self.options.mode == CpixMode::Speke2 {
                request = request.header("x-speke-version", "2.0");
            }
            let sent = request.send().await;
            let response = match sent {
                Ok(r) => r,
                Err(e) => {
                    self.count(if e.is_timeout() {
                        "timeout"
                    } else {
                        "transport"
                    });
                    last = format!("request failed: {e}");
                    continue;
                }
            };
            let status = response.status();
            if status.is_server_error() {
                self.count("server_error");
                last = format!("key server answered {status}");
                continue;
            }
            if !status.is_success() {
                self.count("refused");
                return Err(KeyError::Unavailable {
                    reason: format!("key server answered {status}"),
                });
            }
            // SPEKE v2 key providers echo the version: anything else is not speaking it.
            if self.options.mode == CpixMode::Speke2
                && response
                    .headers()
                    .get("x-speke-version")
                    .map(|v| v.as_bytes())
                    != Some(b"2.0")
            {
                self.count("invalid");
                return Err(KeyError::Unavailable {
                    reason: "key server answer is not SPEKE v2 (no X-Speke-Version: 2.0)".into(),
                });
            }
            match read_bounded(response).await {
                Ok(bytes) => return Ok(bytes),
                Err(Bounded::TooLarge) => {
                    self.count("invalid");
                    return Err(KeyError::Unavailable {
                        reason: "key server answer too large".into(),
                    });
                }
                Err(Bounded::Failed(e)) => {
                    self.count(if e.is_timeout() {
                        "timeout"
                    } else {
                        "transport"
                    });
                    last = format!("reading the answer: {e}");
                }
            }
        }
        Err(KeyError::Unavailable { reason: last })
    }

    /// Whether `key` holds each of `options`' systems when they are required.
    ///
    /// # Errors
    /// [`KeyError::MissingSystem`] naming the first left out.
    fn check_required(options: &CpixOptions, key: &ContentKey) -> Result<(), KeyError> {
        if !options.required {
            return Ok(());
        }
        for system in &options.systems {
            let present = (key.systems.iter()).any(|s| s.system_id == *system && s.usable());
            if !present {
                return Err(match DrmId::of(system) {
                    Some(id) => KeyError::MissingSystem { system: id },
                    None => KeyError::Unavailable {
                        reason: format!("key server gave no {} signalling", uuid_string(system)),
                    },
                });
            }
        }
        Ok(())
    }

    async fn fetch(
        &self,
        title_key: &str,
        options: CpixOptions,
    ) -> Result<Arc<ContentKey>, KeyError> {
        let kid = cpix_kid(title_key);
        let bytes = self
            .exchange(request_document(title_key, &kid, &options))
            .await?;
        let checked = parse_answer(&bytes, &kid).and_then(|key| {
            Self::check_required(&options, &key)?;
            Ok(key)
        });
        match checked {
            Ok(key) => {
                self.count("ok");
                Ok(Arc::new(key))
            }
            // Not cached: the next request asks again.
            Err(e) => {
                self.count("invalid");
                Err(e)
            }
        }
    }

    /// The keys of `title_key` under the split `presets`, in one request: a key per usage,
    /// each with the systems of `options`. An answer missing a usage's key is
    /// [`KeyError::MissingKey`] naming it (a 503, not cached), never a track left clear or
    /// keyed with another usage's key.
    async fn fetch_split(
        &self,
        title_key: &str,
        presets: KeyPresets,
        options: CpixOptions,
    ) -> Result<Arc<TitleKeys>, KeyError> {
        let usages = presets.usages();
        let kids: Vec<[u8; 16]> = usages.iter().map(|u| usage_kid(title_key, *u)).collect();
        let bytes = self
            .exchange(split_request_document(title_key, presets, &options))
            .await?;
        let checked = parse_answers(&bytes, &kids).and_then(|found| {
            let mut keys = Vec::with_capacity(usages.len());
            for (usage, key) in usages.iter().zip(found) {
                let key = key.ok_or(KeyError::MissingKey { usage: *usage })?;
                Self::check_required(&options, &key)?;
                keys.push((*usage, Arc::new(key)));
            }
            TitleKeys::of(presets, keys)
        });
        match checked {
            Ok(keys) => {
                self.count("ok");
                Ok(Arc::new(keys))
            }
            Err(e) => {
                self.count("invalid");
                Err(e)
            }
        }
    }
}

#[async_trait::async_trait]
impl KeyProvider for CpixKeyProvider {
    async fn content_key(&self, title_key: &str) -> Result<Arc<ContentKey>, KeyError> {
        self.content_key_for(title_key, None).await
    }

    /// Cached per title and systems asked: every request for a title asks for the same
    /// systems (the title document's, else the server's), so that is one request per
    /// title.
    async fn content_key_for(
        &self,
        title_key: &str,
        systems: Option<&[DrmId]>,
    ) -> Result<Arc<ContentKey>, KeyError> {
        let options = self.asking(systems);
        let mut cache_key = title_key.to_owned();
        for system in &options.systems {
            cache_key.push('\0');
            cache_key.push_str(&uuid_string(system));
        }
        self.cache
            .try_get_with(cache_key, self.fetch(title_key, options))
            .await
            .map_err(|e| (*e).clone())
    }

    /// Cached per title, systems asked and split: one request per title for all its keys.
    async fn title_keys(
        &self,
        title_key: &str,
        systems: Option<&[DrmId]>,
        presets: KeyPresets,
    ) -> Result<Arc<TitleKeys>, KeyError> {
        if presets.is_shared() {
            let key = self.content_key_for(title_key, systems).await?;
            return Ok(Arc::new(TitleKeys::shared(key)));
        }
        let options = self.asking(systems);
        let mut cache_key = format!("{title_key}\0{}", presets.name());
        for system in &options.systems {
            cache_key.push('\0');
            cache_key.push_str(&uuid_string(system));
        }
        self.splits
            .try_get_with(cache_key, self.fetch_split(title_key, presets, options))
            .await
            .map_err(|e| (*e).clone())
    }

    fn kind(&self) -> &'static str {
        "cpix"
    }
}

enum Bounded {
    TooLarge,
    Failed(reqwest::Error),
}

/// The answer's body, read a chunk at a time and refused past [`MAX_ANSWER_BYTES`] (a
/// stated length is checked first), so a hostile server cannot make us hold more.
async fn read_bounded(mut response: reqwest::Response) -> Result<Vec<u8>, Bounded> {
    if response
        .content_length()
        .is_some_and(|n| n > MAX_ANSWER_BYTES as u64)
    {
        return Err(Bounded::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(Bounded::Failed)? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(Bounded::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

mod answer;
mod request;

pub use answer::{parse_answer, parse_answers};
pub use request::{cpix_kid, request_document, split_request_document, usage_kid};
