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
use tracing::Instrument;

use crate::media::TitleDocument;
use crate::media::{load_index, MediaError, MediaLimits, TrackKind};
use crate::package::webvtt::SubtitlePlan;
use crate::package::{
    init_segment, render_iframe_playlist, render_media_playlist, render_mpd,
    render_multivariant_playlist, render_subtitle_playlist, split_document_track_id, PackageError,
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

/// How long after a load the offsets left for later are worked out: past the first
/// playlist's answer (a few milliseconds), before a player has read a media playlist and an
/// init segment and asks for a segment (several round trips).
const OFFSETS_AFTER: std::time::Duration = std::time::Duration::from_millis(20);

/// A title with its rendered manifests and init segments, filled on first use.
#[derive(Debug)]
pub struct CachedTitle {
    /// The packaged title.
    pub title: Title,
    /// Its version token (`Title::version_token`), the folder its resources live in.
    pub token: String,
    /// A title document's own encryption policy, overriding the server's; `None` for plain
    /// MP4s and documents that do not say (see `server::protect`).
    pub encryption: Option<crate::crypto::EncryptionPolicy>,
    multivariant: OnceLock<Bytes>,
    mpd: OnceLock<Bytes>,
    /// Media playlists, by rendition position.
    media_playlists: Vec<OnceLock<Bytes>>,
    /// Init segments, by rendition position.
    init_segments: Vec<OnceLock<Bytes>>,
    /// HLS I-frame playlists, by rendition position (video renditions only).
    iframe_playlists: Vec<OnceLock<Bytes>>,
    /// How subtitle segments are cut, when the title has text tracks.
    subtitle_plan: OnceLock<SubtitlePlan>,
    /// HLS subtitle playlists, by text track position, then by sidecar position.
    subtitle_playlists: Vec<OnceLock<Bytes>>,
    /// For a title document's title, the object of each file number (1-based: file `f`
    /// is entry `f - 1`) and the version it was loaded at; empty for a plain MP4, whose
    /// one object is the request's key.
    files: Vec<(ObjectKey, ObjectIdentity)>,
    /// The MPEG-TS output, worked out on the first TS request (`ts.rs`).
    ts: OnceLock<super::ts::TsOutput>,
}

impl CachedTitle {
    fn new(title: Title) -> Self {
        let n = title.renditions.len();
        let texts = title.index.text_tracks.len() + title.sidecars.len();
        Self {
            token: title.version_token(),
            encryption: None,
            title,
            multivariant: OnceLock::new(),
            mpd: OnceLock::new(),
            media_playlists: (0..n).map(|_| OnceLock::new()).collect(),
            init_segments: (0..n).map(|_| OnceLock::new()).collect(),
            iframe_playlists: (0..n).map(|_| OnceLock::new()).collect(),
            subtitle_plan: OnceLock::new(),
            subtitle_playlists: (0..texts).map(|_| OnceLock::new()).collect(),
            files: Vec::new(),
            ts: OnceLock::new(),
        }
    }

    /// A new title's long tracks leave their sample offsets to be worked out on first use
    /// (`media::SampleOffsets`), so its first playlist does not wait for them. They are
    /// worked out on the blocking pool a little later ([`OFFSETS_AFTER`]), once that
    /// playlist is on its way, so a first segment rarely waits either, and the `moov`
    /// buffer they are worked out from is let go. Returns the title, shared.
    pub(super) fn with_offsets_soon(self) -> Arc<Self> {
        let title = Arc::new(self);
        if (title.title.index.tracks.iter()).any(|t| !t.samples.offsets_known()) {
            let title = title.clone();
            tokio::spawn(async move {
                tokio::time::sleep(OFFSETS_AFTER).await;
                let _ = tokio::task::spawn_blocking(move || {
                    for track in &title.title.index.tracks {
                        let _ = track.samples.offsets();
                    }
                })
                .await;
            });
        }
        title
    }

    /// The slot of the title's MPEG-TS output (see `ts.rs`).
    pub(super) fn ts_slot(&self) -> &OnceLock<super::ts::TsOutput> {
        &self.ts
    }

    /// A title document's title, whose tracks are read from `files` (by file number, see
    /// `package::document_track_id`).
    pub(super) fn with_files(title: Title, files: Vec<(ObjectKey, ObjectIdentity)>) -> Self {
        Self {
            files,
            ..Self::new(title)
        }
    }

    /// Another title made from this one (a view: `views.rs`), read from the same files.
    pub(super) fn derived(&self, title: Title) -> Self {
        Self {
            files: self.files.clone(),
            ..Self::new(title)
        }
    }

    /// The object (and its version) that track `track_id` is read from, when the title
    /// comes from a title document; `None` for a plain MP4 (read the request's key).
    pub fn object_of(&self, track_id: u32) -> Option<(&ObjectKey, &ObjectIdentity)> {
        let (file, _) = split_document_track_id(track_id)?;
        let (key, identity) = self
            .files
            .get(usize::try_from(file).ok()?.checked_sub(1)?)?;
        Some((key, identity))
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

    /// The I-frame playlist of track `track_id`, if it is a video rendition.
    pub fn iframe_playlist(&self, track_id: u32) -> Option<Bytes> {
        let pos = self.rendition_pos(track_id)?;
        let rendition = self.title.renditions.get(pos)?;
        if rendition.kind != TrackKind::Video {
            return None;
        }
        let slot = self.iframe_playlists.get(pos)?;
        Some(
            slot.get_or_init(|| Bytes::from(render_iframe_playlist(&self.title, rendition)))
                .clone(),
        )
    }

    /// How the title's subtitle segments are cut and timed.
    pub fn subtitle_plan(&self) -> &SubtitlePlan {
        self.subtitle_plan
            .get_or_init(|| SubtitlePlan::new(&self.title))
    }

    /// The HLS subtitle playlist of text track `track_id`, if the title has it.
    pub fn subtitle_playlist(&self, track_id: u32) -> Option<Bytes> {
        let texts = &self.title.index.text_tracks;
        let sidecars = (self.title.sidecars.iter()).position(|s| s.track_id == track_id);
        let pos = (texts.iter().position(|t| t.track_id == track_id))
            .or_else(|| Some(texts.len() + sidecars?))?;
        let slot = self.subtitle_playlists.get(pos)?;
        Some(
            slot.get_or_init(|| {
                Bytes::from(render_subtitle_playlist(self.subtitle_plan(), track_id))
            })
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

/// How long a file that is not a usable MP4 is remembered as such (per object version), so a
/// storm of requests for a broken upload does not re-read it each time.
const FAILURE_MEMORY: std::time::Duration = std::time::Duration::from_secs(30);

/// Loads and caches titles from one source.
pub struct Catalog {
    source: Arc<dyn MediaSource>,
    /// Titles by key and identity; views (`views.rs`) go by an identity carrying the view.
    pub(super) cache: Cache<(ObjectKey, ObjectIdentity), Arc<CachedTitle>>,
    /// Object versions that failed to load because of what they contain (not because the
    /// source failed), remembered for [`FAILURE_MEMORY`].
    failures: Cache<(ObjectKey, ObjectIdentity), Arc<TitleError>>,
    pub(super) limits: MediaLimits,
    pub(super) segment_duration_ms: u32,
    metrics: Arc<Metrics>,
    /// Parsed title documents, by document version (see `titles.rs`).
    pub(super) documents: Cache<(ObjectKey, ObjectIdentity), Arc<TitleDocument>>,
    /// Titles of title documents, by document key and a version covering the document
    /// and every object it names, weighed like `cache`.
    pub(super) ladders: Cache<(ObjectKey, ObjectIdentity), Arc<CachedTitle>>,
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
            source,
            cache,
            failures,
            limits,
            segment_duration_ms,
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
        );
        let result = self
            .cache
            .try_get_with(
                cache_key.clone(),
                async {
                    self.metrics.cache_misses.inc();
                    let index = load_index(&self.source, key, identity, &self.limits).await?;
                    let span = tracing::Span::current();
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
                    Ok::<_, TitleError>(CachedTitle::new(title).with_offsets_soon())
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
