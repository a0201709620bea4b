//! The server's plain-data options: admission limits, deadlines and drain (`ServerOptions`)
//! and the preview page (`PreviewOptions`), with their defaults. Defined here, below the
//! server, so the settings can carry them; `settings.rs` says which flag sets which field.

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

/// The preview page: whether it is served, and where its web players are loaded from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreviewOptions {
    /// Serve the page. `None`: on for a local root, off for a bucket (a bucket's key
    /// names are then shown only when asked for).
    pub enabled: Option<bool>,
    /// URL of the hls.js browser build the page loads; empty (the default): vodpack's own
    /// copy, built in (`server/preview/assets.rs`), so the page needs no internet access.
    pub hls_js_url: String,
    /// URL of the dash.js browser build the page loads; empty (the default): vodpack's own
    /// copy.
    pub dash_js_url: String,
}

/// hls.js on its public CDN at the version vodpack serves itself: a value for
/// `preview-hls-js-url` where the page should load it from there.
pub const CDN_HLS_JS_URL: &str = "https://cdn.jsdelivr.net/npm/hls.js@1.7.4/dist/hls.min.js";
/// dash.js on its public CDN at the version vodpack serves itself.
pub const CDN_DASH_JS_URL: &str =
    "https://cdn.jsdelivr.net/npm/dashjs@5.2.1/dist/modern/umd/dash.all.min.js";

/// Thumbnails (`thumb-MS.jpg`): which frame, how much decoding at once, how large.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThumbnailOptions {
    /// Decode to the frame presented at the time asked; `false`: the key frame at or
    /// before it (one sample decoded, faster, up to a GOP early).
    pub exact: bool,
    /// Thumbnail requests decoding at once (each holds a blocking-pool thread).
    pub max_decodes: usize,
    /// Longest a thumbnail request waits for a decode place before 503, in ms.
    pub queue_wait_ms: u64,
    /// Largest source picture decoded, in pixels (width x height); larger gets 422.
    pub max_source_pixels: u64,
    /// JPEG quality, 1 to 100.
    pub jpeg_quality: u32,
}

impl Default for ThumbnailOptions {
    fn default() -> Self {
        Self {
            exact: true,
            // Decoding is CPU-bound: about one per core of the 2-core machine, so segments
            // keep the rest.
            max_decodes: 2,
            queue_wait_ms: 1_000,
            // 4096x2304 (a little over 4K UHD).
            max_source_pixels: 4096 * 2304,
            jpeg_quality: 95,
        }
    }
}

/// Storyboards (`storyboard.vtt` and its sprite sheets `storyboard-N.jpg`): one tile per
/// interval, sheets of a grid of tiles, and whether manifests signal them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoryboardOptions {
    /// Time between tiles (and length of each cue), in ms.
    pub interval_ms: u64,
    /// Tiles across and down a sheet.
    pub grid: StoryboardGrid,
    /// Width of a tile in pixels; its height follows the display aspect.
    pub tile_width: u32,
    /// Signal the storyboard in DASH MPDs (an image AdaptationSet) and HLS multivariant
    /// playlists (`EXT-X-IMAGE-STREAM-INF`).
    pub signalled: bool,
}

impl Default for StoryboardOptions {
    fn default() -> Self {
        Self {
            interval_ms: 10_000,
            grid: StoryboardGrid {
                columns: 10,
                rows: 10,
            },
            tile_width: 160,
            signalled: false,
        }
    }
}

/// Most tiles across or down a sheet: a sheet decodes at most this squared key frames.
pub const MAX_STORYBOARD_GRID_SIDE: u32 = 20;

/// Widest storyboard tile, in pixels.
pub const MAX_STORYBOARD_TILE_WIDTH: u32 = 640;

/// Shortest storyboard interval, in ms (bounds the cues of a title).
pub const MIN_STORYBOARD_INTERVAL_MS: u64 = 100;

/// Columns by rows of a storyboard sheet, written `10x10` (DASH-IF's `thumbnail_tile`
/// value and Roku's `LAYOUT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoryboardGrid {
    /// Tiles across, 1 to [`MAX_STORYBOARD_GRID_SIDE`].
    pub columns: u32,
    /// Tiles down, 1 to [`MAX_STORYBOARD_GRID_SIDE`].
    pub rows: u32,
}

impl std::fmt::Display for StoryboardGrid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}", self.columns, self.rows)
    }
}

impl std::str::FromStr for StoryboardGrid {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || format!("{text:?} is not COLUMNSxROWS, each 1 to {MAX_STORYBOARD_GRID_SIDE}");
        let (columns, rows) = text.trim().split_once('x').ok_or_else(bad)?;
        let side = |s: &str| {
            s.parse::<u32>()
                .ok()
                .filter(|n| (1..=MAX_STORYBOARD_GRID_SIDE).contains(n))
        };
        Ok(Self {
            columns: side(columns).ok_or_else(bad)?,
            rows: side(rows).ok_or_else(bad)?,
        })
    }
}
