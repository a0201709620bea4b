//! The shared state of a running server: settings, the catalog of titles, metrics,
//! admission, protection and the held answers; one `Arc<App>` is handed to every request.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::access::protector::Protector;
use super::admission::{Admission, AdmissionLimits};
use super::held::Answers;
use super::titles::catalog::Catalog;
use super::titles::tiers::IndexShelves;
use crate::config::Settings;
use crate::package::thumb::StoryboardLayout;
use crate::source::MediaSource;
use crate::telemetry::Metrics;

/// Shared state of a running server.
#[derive(Debug)]
pub struct App {
    /// Resolved settings.
    pub settings: Settings,
    /// Titles by key and version.
    pub catalog: Catalog,
    /// Metrics registry and handles.
    pub metrics: Arc<Metrics>,
    /// Connection and request limits.
    pub admission: Admission,
    /// Encryption policy, keys and token checks.
    pub protect: Protector,
    /// Answers to plain manifest requests, held within the identity window
    /// (`server::held`).
    pub answers: Answers,
    draining: AtomicBool,
}

impl App {
    /// Build the shared state over `source`, without index tiers.
    pub fn new(settings: Settings, source: Arc<dyn MediaSource>) -> Arc<Self> {
        Self::with_shelves(settings, source, IndexShelves::default())
    }

    /// Build the shared state over `source`, with the index tiers on `shelves`
    /// (`ops::startup::open_shelves` opens them from the settings).
    pub fn with_shelves(
        settings: Settings,
        source: Arc<dyn MediaSource>,
        shelves: IndexShelves,
    ) -> Arc<Self> {
        let metrics = Arc::new(Metrics::new(source.kind().as_str(), source.counters()));
        metrics.set_build_info(crate::package::PACKAGER_FORMAT);
        let mut catalog = Catalog::new(
            source,
            settings.metadata_cache_bytes,
            settings.limits,
            settings.segment_duration_ms,
            metrics.clone(),
            shelves,
        );
        catalog.hls_cue_out = settings.hls_cue_out;
        let admission = Admission::new(AdmissionLimits {
            max_connections: settings.server.max_connections,
            max_segment_requests: settings.server.max_segment_requests,
            max_manifest_requests: settings.server.max_manifest_requests,
            max_thumbnail_requests: settings.thumbnails.max_decodes,
            thumbnail_queue_wait: std::time::Duration::from_millis(
                settings.thumbnails.queue_wait_ms,
            ),
        });
        let protect = Protector::new(&settings.protect, &metrics);
        // Held answers are the same for every request: not with signed URLs (tokens are
        // carried into manifests), a CORS origin list, or access log lines per request.
        let answers =
            Answers::new(!settings.server.access_log && !protect.answers_vary_by_request());
        Arc::new(Self {
            protect,
            answers,
            settings,
            catalog,
            metrics,
            admission,
            draining: AtomicBool::new(false),
        })
    }

    /// Mark the server draining: readiness answers 503 from now on.
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }

    /// True once shutdown has begun.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// The storyboard layout the settings ask for (the storyboard output's, and what
    /// manifests signal).
    pub fn storyboard_layout(&self) -> StoryboardLayout {
        let options = self.settings.storyboards;
        StoryboardLayout {
            interval_ms: options.interval_ms,
            grid: (options.grid.columns, options.grid.rows),
            tile_width: options.tile_width,
        }
    }

    /// The Prometheus exposition, with the cache gauges read at scrape time.
    pub async fn render_metrics(&self) -> String {
        let (entries, bytes) = self.catalog.stats().await;
        self.metrics
            .cache_entries
            .set(i64::try_from(entries).unwrap_or(i64::MAX));
        self.metrics
            .cache_weighted_bytes
            .set(i64::try_from(bytes).unwrap_or(i64::MAX));
        self.metrics.render()
    }
}
