//! `Settings`: the resolved settings of a running server, as the layers above read them,
//! and the defaults of the settings that belong to no layer's options.

use std::net::SocketAddr;
use std::path::PathBuf;

use super::DashSubtitleFormat;
use crate::crypto::settings::ProtectSettings;
use crate::source::ObjectStoreOptions;
use crate::telemetry::LogFormat;

use super::{
    MediaLimits, NginxVodLocations, PreviewOptions, ServerOptions, StoryboardOptions,
    ThumbnailOptions, TrustedProxies,
};

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
    /// The disk tier of title indexes (`server::titles::tiers`); `None`: none.
    pub index_cache_dir: Option<PathBuf>,
    /// Most bytes the disk tier holds.
    pub index_cache_dir_bytes: u64,
    /// The store tier of title indexes: an object-store URL, or a prefix beside the
    /// media; `None`: none.
    pub index_cache_prefix: Option<String>,
    /// Memory faulted in at start, in two buffers, for reading `moov` boxes from a folder
    /// (`source/warm.rs`); 0 turns it off.
    pub load_buffer_bytes: u64,
    /// Gaps between a segment's ranges in a local file read through instead of skipped
    /// with another `pread` (16 KiB by default); 0 never over-reads a local file.
    pub local_merge_gap_bytes: u64,
    /// Limits on what a file may make us read or allocate.
    pub limits: MediaLimits,
    /// How an object-store `source` connects, waits, retries and coalesces reads.
    pub object_store: ObjectStoreOptions,
    /// Admission limits, deadlines and shutdown of the HTTP server.
    pub server: ServerOptions,
    /// Proxies whose `Forwarded`/`X-Forwarded-For` name the client; empty by default.
    pub trusted_proxies: TrustedProxies,
    /// Log line format.
    pub log_format: LogFormat,
    /// Encryption, keys, signed URLs and CORS.
    pub protect: ProtectSettings,
    /// Location prefixes answered with nginx-vod-module's URL grammar; empty by default.
    pub nginx_vod_locations: NginxVodLocations,
    /// Segment duration under those locations, in milliseconds: the module's
    /// `vod_segment_duration`, 10 s by default as the module's.
    pub nginx_vod_segment_duration_ms: u32,
    /// The preview page at `/` (server/preview/page.rs).
    pub preview: PreviewOptions,
    /// Thumbnails: exact or key frame, decode admission, size limits.
    pub thumbnails: ThumbnailOptions,
    /// Storyboards: interval, grid, tile width, signalling.
    pub storyboards: StoryboardOptions,
    /// How DASH MPDs offer subtitles (text segments, or the whole WebVTT file).
    pub dash_subtitle_format: DashSubtitleFormat,
    /// Ad breaks: also write `EXT-X-CUE-OUT`/`EXT-X-CUE-IN` in HLS media
    /// playlists, for ad inserters that read no `EXT-X-DATERANGE`; off by default.
    pub hls_cue_out: bool,
    /// The rules DASH MPDs are written by; a title document's `"dash_profile"` overrides
    /// it. The default profile unless asked.
    pub dash_profile: crate::config::DashProfile,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            root: PathBuf::from("fixtures"),
            source: None,
            segment_duration_ms: 6000,
            // A streaming connection holds the chunk being sent and the one being read
            // (`server::respond::stream`). Smaller chunks hold less but cost more system
            // calls per byte: measured in docs/performance.md.
            stream_chunk_bytes: 64 * 1024,
            metadata_cache_bytes: 256 * 1024 * 1024,
            index_cache_dir: None,
            // About 150 titles of 60 minutes at 6-7 MB each (docs/operations.md).
            index_cache_dir_bytes: 1024 * 1024 * 1024,
            index_cache_prefix: None,
            // Two loads at once of titles up to about two hours (a 60-minute title's
            // `moov` is 4 MB): docs/performance.md.
            load_buffer_bytes: 16 * 1024 * 1024,
            // Read through gaps up to 16 KiB (within the 256 KiB over-read budget a
            // segment): a file interleaved sample by sample, as ffmpeg writes them, is read
            // in a couple of preads instead of one per sample (181 reads to 2 for a
            // 112 KB segment of the bench asset, 70.6 KiB over-read; docs/performance.md).
            local_merge_gap_bytes: 16 * 1024,
            limits: MediaLimits::default(),
            object_store: ObjectStoreOptions::default(),
            server: ServerOptions::default(),
            trusted_proxies: TrustedProxies::default(),
            log_format: LogFormat::Text,
            preview: PreviewOptions::default(),
            nginx_vod_locations: NginxVodLocations::default(),
            // nginx-vod-module's own default (`vod_segment_duration 10s`), so a
            // configuration that leaves it unset keeps its segment numbers.
            nginx_vod_segment_duration_ms: 10_000,
            protect: ProtectSettings::default(),
            thumbnails: ThumbnailOptions::default(),
            storyboards: StoryboardOptions::default(),
            dash_subtitle_format: DashSubtitleFormat::default(),
            hls_cue_out: false,
            dash_profile: crate::config::DashProfile::Default,
        }
    }
}

impl Settings {
    /// The segment duration titles are cut to under the nginx-vod locations, when it is not
    /// the server's own (`None`: they are cut as under `/vod/`, one title for both).
    pub fn nginx_vod_cut_ms(&self) -> Option<u32> {
        (self.nginx_vod_segment_duration_ms != self.segment_duration_ms)
            .then_some(self.nginx_vod_segment_duration_ms)
    }
}
