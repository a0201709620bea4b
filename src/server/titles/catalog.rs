//! The catalog: object key and version to a packaged `Title`, cached.
//!
//! A moka cache keyed by (key, identity) holds each title's index and plan, weighed by the
//! bytes its sample arrays hold, with LRU eviction so a full cache still admits new titles.
//! Keying by identity means a replaced file (new size, mtime or ETag) is a miss and is
//! loaded afresh; the old entry simply ages out. `try_get_with` loads once per key while
//! concurrent requests wait. What is rendered from a title is kept with it (`cached.rs`).

use std::sync::Arc;

use moka::future::Cache;
use tracing::Instrument;

use super::cached::CachedTitle;
use super::tiers::{IndexShelves, IndexTiers, Tier};
use crate::media::TitleDocument;
use crate::media::{load_index, MediaError, MediaLimits};
use crate::package::{PackageError, Title};
use crate::source::{MediaSource, ObjectIdentity, ObjectKey};
use crate::telemetry::Metrics;

/// Why a title could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TitleError {
    /// The file could not be read or is not a usable MP4.
    #[error(transparent)]
    Media(#[from] MediaError),
    /// The file has nothing to package.
    #[error(transparent)]
    Package(#[from] PackageError),
}

impl TitleError {
    /// True when the object itself is at fault (not an MP4, broken, over a limit), so
    /// trying again gives the same answer until the object changes; false for source
    /// failures and internal errors, which may pass.
    pub fn is_about_the_file(&self) -> bool {
        match self {
            TitleError::Package(_) => true,
            TitleError::Media(MediaError::Source(_) | MediaError::Internal { .. }) => false,
            TitleError::Media(_) => true,
        }
    }
}

/// How long a file that is not a usable MP4 is remembered as such (per object version), so a
/// storm of requests for a broken upload does not re-read it each time.
const FAILURE_MEMORY: std::time::Duration = std::time::Duration::from_secs(30);

/// Loads and caches titles from one source.
pub struct Catalog {
    source: Arc<dyn MediaSource>,
    /// Titles by key and identity; views (`views.rs`) go by an identity carrying the view.
    pub(in crate::server) cache: Cache<(ObjectKey, ObjectIdentity), Arc<CachedTitle>>,
    /// Object versions that failed to load because of what they contain (not because the
    /// source failed), remembered for [`FAILURE_MEMORY`].
    failures: Cache<(ObjectKey, ObjectIdentity), Arc<TitleError>>,
    pub(in crate::server) limits: MediaLimits,
    pub(in crate::server) segment_duration_ms: u32,
    /// The `hls-cue-out` setting: titles with ad breaks also carry `EXT-X-CUE-OUT`/
    /// `EXT-X-CUE-IN` in their HLS media playlists (set once at start).
    pub(in crate::server) hls_cue_out: bool,
    metrics: Arc<Metrics>,
    /// Parsed title documents, by document version (see `documents.rs`).
    pub(super) documents: Cache<(ObjectKey, ObjectIdentity), Arc<TitleDocument>>,
    /// Titles of title documents, by document key and a version covering the document
    /// and every object it names, weighed like `cache`.
    pub(super) ladders: Cache<(ObjectKey, ObjectIdentity), Arc<CachedTitle>>,
    /// The index tiers under `cache` (`tiers.rs`).
    pub(in crate::server) tiers: IndexTiers,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("entries", &self.cache.entry_count())
            .finish_non_exhaustive()
    }
}

impl Catalog {
    /// A catalog over `source` holding up to `capacity_bytes` of titles in memory, with
    /// the index tiers on `shelves` under it.
    pub fn new(
        source: Arc<dyn MediaSource>,
        capacity_bytes: u64,
        limits: MediaLimits,
        segment_duration_ms: u32,
        metrics: Arc<Metrics>,
        shelves: IndexShelves,
    ) -> Self {
        let cache = Cache::builder()
            .max_capacity(capacity_bytes)
            .eviction_policy(moka::policy::EvictionPolicy::lru())
            .weigher(|_key, title: &Arc<CachedTitle>| {
                u32::try_from(title.title.heap_bytes()).unwrap_or(u32::MAX)
            })
            .build();
        let ladders = Cache::builder()
            .max_capacity(capacity_bytes)
            .eviction_policy(moka::policy::EvictionPolicy::lru())
            .weigher(|_key, title: &Arc<CachedTitle>| {
                u32::try_from(title.title.heap_bytes()).unwrap_or(u32::MAX)
            })
            .build();
        let documents = Cache::builder().max_capacity(10_000).build();
        let failures = Cache::builder()
            .max_capacity(10_000)
            .time_to_live(FAILURE_MEMORY)
            .build();
        Self {
            tiers: IndexTiers::new(shelves, metrics.clone()),
            source,
            cache,
            failures,
            limits,
            segment_duration_ms,
            hls_cue_out: false,
            metrics,
            documents,
            ladders,
        }
    }

    /// The source titles are read from.
    pub fn source(&self) -> &Arc<dyn MediaSource> {
        &self.source
    }

    /// The title of object version `identity` under `key`, loading it on a miss.
    ///
    /// # Errors
    /// The load's error, shared with every request that waited on the same load.
    pub async fn title(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
    ) -> Result<Arc<CachedTitle>, Arc<TitleError>> {
        let cache_key = (key.clone(), identity.clone());
        if let Some(hit) = self.cache.get(&cache_key).await {
            self.metrics.cache_hits.inc();
            self.tiers.count(Tier::Memory);
            tracing::Span::current().record("vod.cache", "hit");
            return Ok(hit);
        }
        if let Some(failure) = self.failures.get(&cache_key).await {
            tracing::Span::current().record("vod.cache", "failure");
            return Err(failure);
        }
        tracing::Span::current().record("vod.cache", "miss");
        // Boxed: the load's future is large and rare, and a request's future (which every
        // cached answer moves and copies) must not carry it inline.
        Box::pin(self.load_title(cache_key, key, identity)).await
    }

    /// [`Catalog::title`] on a miss: load the title once for every request waiting on it,
    /// and remember a failure that is about the file.
    async fn load_title(
        &self,
        cache_key: (ObjectKey, ObjectIdentity),
        key: &ObjectKey,
        identity: &ObjectIdentity,
    ) -> Result<Arc<CachedTitle>, Arc<TitleError>> {
        let load = tracing::info_span!(
            "metadata.load",
            vod.key = %key,
            vod.object_size = identity.size,
            vod.tracks = tracing::field::Empty,
            vod.samples = tracing::field::Empty,
            vod.index_tier = tracing::field::Empty,
        );
        let result = self
            .cache
            .try_get_with(
                cache_key.clone(),
                async {
                    self.metrics.cache_misses.inc();
                    let (index, tier, missing) =
                        match self.tiers.find(key, identity, &self.limits).await {
                            Ok(found) => (found.index, found.tier, found.missing),
                            Err(missing) => {
                                let index =
                                    load_index(&self.source, key, identity, &self.limits).await?;
                                (index, Tier::Moov, missing)
                            }
                        };
                    self.tiers.count(tier);
                    let span = tracing::Span::current();
                    span.record("vod.index_tier", tier.as_str());
                    span.record("vod.tracks", index.tracks.len());
                    span.record(
                        "vod.samples",
                        index.tracks.iter().map(|t| t.samples.len()).sum::<usize>(),
                    );
                    // Planning and measuring walk every sample: off the runtime workers.
                    let target = self.segment_duration_ms;
                    let title = tokio::task::spawn_blocking(move || Title::new(index, target))
                        .await
                        .map_err(|e| MediaError::Internal {
                            reason: e.to_string(),
                        })??;
                    let cached = CachedTitle::new(title).with_offsets_soon();
                    self.tiers.keep(key, &cached, missing);
                    Ok::<_, TitleError>(cached)
                }
                .instrument(load),
            )
            .await;
        if let Err(e) = &result {
            if e.is_about_the_file() {
                self.failures.insert(cache_key, e.clone()).await;
            }
        }
        result
    }

    /// Entries and weighted bytes in the cache (for metrics and tests), after applying the
    /// cache's pending bookkeeping so a title loaded just before is counted.
    pub async fn stats(&self) -> (u64, u64) {
        self.cache.run_pending_tasks().await;
        (self.cache.entry_count(), self.cache.weighted_size())
    }
}
