//! The catalog: object key and version to a packaged `Title`, cached.
//!
//! A moka cache keyed by (key, identity) holds each title's index and plan, weighed by the
//! bytes its sample arrays hold, with LRU eviction so a full cache still admits new titles.
//! Keying by identity means a replaced file (new size, mtime or ETag) is a miss and is
//! loaded afresh; the old entry simply ages out. `try_get_with` loads once per key while
//! concurrent requests wait. Manifests and init segments are rendered on first use and
//! kept with the title, so a cached playlist costs a lookup and a clone of `Bytes`.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use moka::future::Cache;

use crate::media::{load_index, MediaError, MediaLimits};
use crate::package::{
    init_segment, render_media_playlist, render_mpd, render_multivariant_playlist, PackageError,
    Title,
};
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

/// A title with its rendered manifests and init segments, filled on first use.
#[derive(Debug)]
pub struct CachedTitle {
    /// The packaged title.
    pub title: Title,
    /// Its version token (`Title::version_token`), the folder its resources live in.
    pub token: String,
    multivariant: OnceLock<Bytes>,
    mpd: OnceLock<Bytes>,
    /// Media playlists, by rendition position.
    media_playlists: Vec<OnceLock<Bytes>>,
    /// Init segments, by rendition position.
    init_segments: Vec<OnceLock<Bytes>>,
}

impl CachedTitle {
    fn new(title: Title) -> Self {
        let n = title.renditions.len();
        Self {
            token: title.version_token(),
            title,
            multivariant: OnceLock::new(),
            mpd: OnceLock::new(),
            media_playlists: (0..n).map(|_| OnceLock::new()).collect(),
            init_segments: (0..n).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The HLS multivariant playlist.
    pub fn multivariant(&self) -> Bytes {
        self.multivariant
            .get_or_init(|| Bytes::from(render_multivariant_playlist(&self.title)))
            .clone()
    }

    /// The DASH MPD.
    pub fn mpd(&self) -> Bytes {
        self.mpd
            .get_or_init(|| Bytes::from(render_mpd(&self.title)))
            .clone()
    }

    fn rendition_pos(&self, track_id: u32) -> Option<usize> {
        self.title
            .renditions
            .iter()
            .position(|r| r.track_id == track_id)
    }

    /// The media playlist of track `track_id`, if it is a rendition.
    pub fn media_playlist(&self, track_id: u32) -> Option<Bytes> {
        let pos = self.rendition_pos(track_id)?;
        let rendition = self.title.renditions.get(pos)?;
        let slot = self.media_playlists.get(pos)?;
        Some(
            slot.get_or_init(|| Bytes::from(render_media_playlist(&self.title, rendition)))
                .clone(),
        )
    }

    /// The init segment of track `track_id`, if it is a rendition.
    pub fn init_segment(&self, track_id: u32) -> Option<Bytes> {
        let pos = self.rendition_pos(track_id)?;
        let rendition = self.title.renditions.get(pos)?;
        let track = self.title.index.tracks.get(rendition.track_pos)?;
        let slot = self.init_segments.get(pos)?;
        Some(
            slot.get_or_init(|| Bytes::from(init_segment(track)))
                .clone(),
        )
    }
}

/// Loads and caches titles from one source.
pub struct Catalog {
    source: Arc<dyn MediaSource>,
    cache: Cache<(ObjectKey, ObjectIdentity), Arc<CachedTitle>>,
    limits: MediaLimits,
    segment_duration_ms: u32,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("entries", &self.cache.entry_count())
            .finish_non_exhaustive()
    }
}

impl Catalog {
    /// A catalog over `source` holding up to `capacity_bytes` of titles.
    pub fn new(
        source: Arc<dyn MediaSource>,
        capacity_bytes: u64,
        limits: MediaLimits,
        segment_duration_ms: u32,
        metrics: Arc<Metrics>,
    ) -> Self {
        let cache = Cache::builder()
            .max_capacity(capacity_bytes)
            .eviction_policy(moka::policy::EvictionPolicy::lru())
            .weigher(|_key, title: &Arc<CachedTitle>| {
                u32::try_from(title.title.heap_bytes()).unwrap_or(u32::MAX)
            })
            .build();
        Self {
            source,
            cache,
            limits,
            segment_duration_ms,
            metrics,
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
            return Ok(hit);
        }
        self.cache
            .try_get_with(cache_key, async {
                self.metrics.cache_misses.inc();
                let index = load_index(&self.source, key, identity, &self.limits).await?;
                let title = Title::new(index, self.segment_duration_ms)?;
                Ok::<_, TitleError>(Arc::new(CachedTitle::new(title)))
            })
            .await
    }

    /// Entries and weighted bytes in the cache (for metrics and tests).
    pub fn stats(&self) -> (u64, u64) {
        (self.cache.entry_count(), self.cache.weighted_size())
    }
}
