//! Every setting of `vodpack serve`, declared once: its flag and config file key, its
//! `VODPACK_*` variable, the field of `Settings` it sets, its `--help` line and its meaning
//! in the configuration reference (docs/configuration.md). Its default is the field's
//! value in `Settings::default()`. The order here is the order of `--help`, of the file's
//! list of keys and of the reference. The protection settings are declared in
//! `crypto::settings` (flags and variables only) and joined in as `SettingsArgs::protect`.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::telemetry::LogFormat;

use super::declare::settings;
use super::{DashProfile, DashSubtitleFormat, NginxVodLocations, StoryboardGrid, TrustedProxies};

settings! {
    listen: SocketAddr {
        key: "listen",
        env: "VODPACK_LISTEN",
        to: value(listen),
        help: "Address and port to listen on",
        docs: "Address and port to listen on",
    },
    root: PathBuf {
        key: "root",
        env: "VODPACK_ROOT",
        to: value(root),
        help: "Folder of media files to serve",
        docs: "Folder of media files served when no source URL is given",
    },
    source: String {
        key: "source",
        env: "VODPACK_SOURCE",
        to: some(source),
        shown: "none",
        help_shows: None,
        help: "Object-store URL (s3://bucket/prefix, gs://, az://, https://)",
        docs: "Object-store URL such as s3://bucket/prefix; replaces root",
    },
    segment_duration_ms: u32 {
        key: "segment-duration-ms",
        env: "VODPACK_SEGMENT_DURATION_MS",
        to: value(segment_duration_ms),
        help: "Target segment duration in milliseconds",
        docs: "Target segment duration; segments are cut on the first key frame at or after \
               each multiple",
    },
    stream_chunk_bytes: usize {
        key: "stream-chunk-bytes",
        env: "VODPACK_STREAM_CHUNK_BYTES",
        to: value(stream_chunk_bytes),
        help: "Size of one streamed body chunk in bytes",
        docs: "Size of one streamed body chunk; at most two are buffered per streaming \
               connection (a CMAF segment whose payload fits in two chunks is read and sent \
               as one)",
    },
    metadata_cache_bytes: u64 {
        key: "metadata-cache-bytes",
        env: "VODPACK_METADATA_CACHE_BYTES",
        to: value(metadata_cache_bytes),
        help: "Bytes of parsed metadata kept in the cache",
        docs: "Bytes of parsed sample indexes kept in the metadata cache",
    },
    index_cache_dir: PathBuf {
        key: "index-cache-dir",
        env: "VODPACK_INDEX_CACHE_DIR",
        to: some(index_cache_dir),
        shown: "none",
        help_shows: None,
        help: "Folder keeping parsed title indexes across restarts (the disk tier)",
        docs: "Folder on local disk keeping each loaded title's parsed index (not its moov), \
               so a restarted server loads a title from it instead of the source; bounded by \
               index-cache-dir-bytes, least recently used out (docs/operations.md, Running a \
               fleet)",
    },
    index_cache_dir_bytes: u64 {
        key: "index-cache-dir-bytes",
        env: "VODPACK_INDEX_CACHE_DIR_BYTES",
        to: value(index_cache_dir_bytes),
        help: "Most bytes of title indexes kept in the index-cache-dir folder",
        docs: "Most bytes of title indexes kept in the index-cache-dir folder",
    },
    index_cache_prefix: String {
        key: "index-cache-prefix",
        env: "VODPACK_INDEX_CACHE_PREFIX",
        to: some(index_cache_prefix),
        shown: "none",
        help_shows: None,
        help: "Object-store URL or prefix beside the media sharing title indexes between replicas",
        docs: "Where every replica shares the parsed title indexes (the store tier): an \
               object-store URL such as s3://bucket/.vodpack-index/, or a bare prefix such as \
               .vodpack-index/ beside the media (in the source's bucket, or under the root \
               folder); written once per title version, read by every replica before it \
               reads a moov",
    },
    load_buffer_bytes: u64 {
        key: "load-buffer-bytes",
        env: "VODPACK_LOAD_BUFFER_BYTES",
        to: value(load_buffer_bytes),
        help: "Memory faulted in at start to read titles' moov boxes from a folder",
        docs: "Memory set aside at start, in two buffers, to read titles' moov boxes from a \
               folder: faulted in once, so a title's first load touches no fresh pages (0: \
               off). A moov larger than half of it, or a third load at the same time, is read \
               into fresh memory",
    },
    local_merge_gap_bytes: u64 {
        key: "local-merge-gap-bytes",
        env: "VODPACK_LOCAL_MERGE_GAP_BYTES",
        to: value(local_merge_gap_bytes),
        help: "Gaps read through between a segment's ranges in a local file",
        docs: "Gaps between a segment's byte ranges in a local file up to this size are read \
               through instead of skipped with another read (at most 262144 bytes of \
               over-read per segment): fewer system calls for files interleaved sample by \
               sample, for bytes read from the page cache and not sent (0: none)",
    },
    max_moov_bytes: u64 {
        key: "max-moov-bytes",
        env: "VODPACK_MAX_MOOV_BYTES",
        to: value(limits.max_moov_bytes),
        help: "Largest moov box accepted, in bytes",
        docs: "Largest moov box accepted",
    },
    probe_bytes: u64 {
        key: "probe-bytes",
        env: "VODPACK_PROBE_BYTES",
        to: value(limits.probe_bytes),
        help: "First read at the start of a file, in bytes",
        docs: "First read at the start of a file, sized to catch ftyp and a typical moov",
    },
    max_title_document_bytes: u64 {
        key: "max-title-document-bytes",
        env: "VODPACK_MAX_TITLE_DOCUMENT_BYTES",
        to: value(limits.max_title_document_bytes),
        help: "Largest title document accepted, in bytes",
        docs: "Largest title document (.json key) accepted; a larger one is refused with 422",
    },
    max_title_renditions: usize {
        key: "max-title-renditions",
        env: "VODPACK_MAX_TITLE_RENDITIONS",
        to: value(limits.max_title_renditions),
        help: "Most entries in one title document",
        docs: "Most entries (video, audio and subtitle files together) in one title document; \
               more is refused with 422",
    },
    s3_endpoint: String {
        key: "s3-endpoint",
        env: "VODPACK_S3_ENDPOINT",
        to: some(object_store.s3_endpoint),
        shown: "none",
        help_shows: None,
        help: "Endpoint URL of an S3-compatible store (MinIO, Ceph, R2, ...) for s3:// sources",
        docs: "Endpoint URL of an S3-compatible store (MinIO, Ceph, R2, ...) for s3:// \
               sources; requests use path-style addressing",
    },
    source_allow_http: bool {
        key: "source-allow-http",
        env: "VODPACK_SOURCE_ALLOW_HTTP",
        to: value(object_store.allow_http),
        clap: [
            num_args = 0..=1,
            default_missing_value = "true",
            value_parser = clap::builder::BoolishValueParser::new()
        ],
        help: "Allow plain-HTTP object-store endpoints",
        docs: "Allow plain-HTTP (unencrypted) object-store endpoints, such as a MinIO on the \
               same host",
    },
    source_connect_timeout_ms: u64 {
        key: "source-connect-timeout-ms",
        env: "VODPACK_SOURCE_CONNECT_TIMEOUT_MS",
        to: value(object_store.connect_timeout_ms),
        help: "Longest wait to connect to the object store, in milliseconds",
        docs: "Longest wait to open a connection to the object store; a failed connection is \
               retried",
    },
    source_timeout_ms: u64 {
        key: "source-timeout-ms",
        env: "VODPACK_SOURCE_TIMEOUT_MS",
        to: value(object_store.timeout_ms),
        help: "Longest wait for the object store to answer or send more bytes, in milliseconds",
        docs: "Longest wait for the object store to start answering a request (retries \
               included) or to send more bytes of an answer; past it the request gets 504",
    },
    source_retries: u32 {
        key: "source-retries",
        env: "VODPACK_SOURCE_RETRIES",
        to: value(object_store.retries),
        help: "Retries of a failed object-store request",
        docs: "Retries of an object-store request that failed with a 5xx, a transport error \
               or a timeout, with exponential backoff from 100 ms",
    },
    source_merge_gap_bytes: u64 {
        key: "source-merge-gap-bytes",
        env: "VODPACK_SOURCE_MERGE_GAP_BYTES",
        to: value(object_store.max_merge_gap_bytes),
        help: "Byte ranges closer than this are read with one GET",
        docs: "Byte ranges of a segment closer than this are read with one GET; the bytes \
               between them are over-read, at most 262144 per segment",
    },
    source_identity_ttl_ms: u64 {
        key: "source-identity-ttl-ms",
        env: "VODPACK_SOURCE_IDENTITY_TTL_MS",
        to: value(object_store.identity_ttl_ms),
        help: "How long a file's or object's identity is reused, in milliseconds",
        docs: "How long an object's identity is reused (a file's size, mtime and inode; an \
               object's ETag and size) before it is checked again; a replaced file is served \
               within this time (0: a stat or HEAD per request). A local file opened to take \
               its identity stays open for the same time (at most 1,024 files), and segments \
               read from it. On an object store the check runs in the background (see \
               source-identity-max-stale-ms), and every read of the object that succeeds \
               renews the identity",
    },
    source_identity_max_stale_ms: u64 {
        key: "source-identity-max-stale-ms",
        env: "VODPACK_SOURCE_IDENTITY_MAX_STALE_MS",
        to: value(object_store.identity_max_stale_ms),
        help: "How long an object's identity is still used while checked in the background, in milliseconds",
        docs: "After source-identity-ttl-ms, how long an object's identity is still used at \
               once while one HEAD checks it in the background, so a cached answer never \
               waits on the store; a changed object replaces it when the check returns. \
               Past it (an object nobody asked for in that time) a request waits for the \
               store. A replaced object is served within source-identity-ttl-ms plus one \
               store round trip while asked for, within both settings' sum at worst \
               (object stores only)",
    },
    source_read_concurrency: usize {
        key: "source-read-concurrency",
        env: "VODPACK_SOURCE_READ_CONCURRENCY",
        to: value(object_store.read_concurrency),
        help: "GETs one segment keeps open at once on an object store",
        docs: "GETs one segment (or one buffered read) keeps open at once on an object \
               store, so a segment of many byte runs costs about one round trip; the runs \
               opened ahead of the one streaming fetch at most 1 MiB together",
    },
    source_hedge_percent: u32 {
        key: "source-hedge-percent",
        env: "VODPACK_SOURCE_HEDGE_PERCENT",
        to: value(object_store.hedge_percent),
        help: "Object-store requests sent again when late, at most per 100 requests (0: never)",
        docs: "Object-store requests whose answer is late are sent a second time and the \
               first answer wins (a hedge); at most this many per 100 requests, counted in \
               vod_source_hedged_requests_total (0: never)",
    },
    source_hedge_after_ms: u64 {
        key: "source-hedge-after-ms",
        env: "VODPACK_SOURCE_HEDGE_AFTER_MS",
        to: value(object_store.hedge_after_ms),
        help: "When a late object-store request is hedged, in milliseconds (0: adaptive)",
        docs: "How long an object-store request waits for its answer to begin before it is \
               hedged; 0: twice the store's 95th percentile over its last 512 answers, at \
               least 10 ms",
    },
    worker_threads: usize {
        key: "worker-threads",
        env: "VODPACK_WORKER_THREADS",
        to: some(server.worker_threads),
        shown: "one per available core",
        help: "Threads serving connections",
        docs: "Threads serving connections (1 to 1024; the cgroup's CPU quota counts). On \
               cores shared with other busy processes, fewer cost less CPU per small answer \
               and serve fewer segments per second (docs/performance.md)",
    },
    max_connections: usize {
        key: "max-connections",
        env: "VODPACK_MAX_CONNECTIONS",
        to: value(server.max_connections),
        help: "Open client connections",
        docs: "Open client connections; past it a new connection gets 503 with Retry-After \
               and is closed",
    },
    max_segment_requests: usize {
        key: "max-segment-requests",
        env: "VODPACK_MAX_SEGMENT_REQUESTS",
        to: value(server.max_segment_requests),
        help: "Segment and init requests in flight",
        docs: "Segment and init requests in flight, streaming included; past it they are \
               shed with 503 and Retry-After before any read",
    },
    max_manifest_requests: usize {
        key: "max-manifest-requests",
        env: "VODPACK_MAX_MANIFEST_REQUESTS",
        to: value(server.max_manifest_requests),
        help: "Playlist and MPD requests in flight",
        docs: "Playlist and MPD requests in flight, metadata loads included; a separate \
               limit, so a segment storm cannot starve playlists",
    },
    request_timeout_ms: u64 {
        key: "request-timeout-ms",
        env: "VODPACK_REQUEST_TIMEOUT_MS",
        to: value(server.request_timeout_ms),
        help: "Deadline for an answer to start, in ms",
        docs: "Deadline for an answer to start, metadata load included; past it the request \
               gets 504",
    },
    send_timeout_ms: u64 {
        key: "send-timeout-ms",
        env: "VODPACK_SEND_TIMEOUT_MS",
        to: value(server.send_timeout_ms),
        help: "Close a stream whose client takes no chunk for this long, in ms",
        docs: "A connection whose client takes none of an answer for this long is closed (as \
               nginx's `send_timeout`) and a streamed body's source reads cancelled",
    },
    drain_timeout_ms: u64 {
        key: "drain-timeout-ms",
        env: "VODPACK_DRAIN_TIMEOUT_MS",
        to: value(server.drain_timeout_ms),
        help: "Drain deadline after SIGTERM, in ms",
        docs: "After SIGTERM or SIGINT, how long in-flight requests may finish before the \
               process exits",
    },
    access_log: bool {
        key: "access-log",
        env: "VODPACK_ACCESS_LOG",
        to: value(server.access_log),
        help: "Write one log line per request",
        docs: "Write one log line per request (client address, method, path, route, status, \
               bytes, duration, user agent, trace id)",
    },
    trusted_proxies: TrustedProxies {
        key: "trusted-proxies",
        env: "VODPACK_TRUSTED_PROXIES",
        to: value(trusted_proxies),
        shown: "none",
        toml: text,
        help: "Proxies (comma-separated CIDR blocks) whose X-Forwarded-For/Forwarded name the client",
        docs: "CIDR blocks or addresses of the proxies in front (CDN edges, load balancers, \
               the front), comma-separated: for a connection from one of them, the client \
               address of IP-bound tokens and the access log is read from Forwarded (RFC \
               7239) or X-Forwarded-For, right to left, skipping trusted hops \
               (docs/cdn.md); none: the connection's peer, headers ignored",
    },
    log_format: LogFormat {
        key: "log-format",
        env: "VODPACK_LOG_FORMAT",
        to: value(log_format),
        clap: [value_enum],
        help: "Log format",
        docs: "Log format: text or json",
    },
    preview: bool {
        key: "preview",
        env: "VODPACK_PREVIEW",
        to: some(preview.enabled),
        shown: "on for a folder, off for a bucket",
        clap: [
            num_args = 0..=1,
            default_missing_value = "true",
            value_parser = clap::builder::BoolishValueParser::new()
        ],
        help: "Serve the preview page at /",
        docs: "Serve the preview page at / (the titles under a prefix with their posters, \
               ladders and languages; a title played with hls.js and dash.js over its \
               storyboard timeline and segment bit-rate chart)",
    },
    preview_hls_js_url: String {
        key: "preview-hls-js-url",
        env: "VODPACK_PREVIEW_HLS_JS_URL",
        to: value(preview.hls_js_url),
        shown: "vodpack's own copy",
        help: "Where the preview page loads hls.js from",
        docs: "Where the preview page loads hls.js from: by default vodpack serves its own \
               copy (the version the players' npm lock pins); a URL (a public CDN) instead",
    },
    preview_dash_js_url: String {
        key: "preview-dash-js-url",
        env: "VODPACK_PREVIEW_DASH_JS_URL",
        to: value(preview.dash_js_url),
        shown: "vodpack's own copy",
        help: "Where the preview page loads dash.js from",
        docs: "Where the preview page loads dash.js from: by default vodpack serves its own \
               copy (the version the players' npm lock pins); a URL (a public CDN) instead",
    },
    thumbnail_exact: bool {
        key: "thumbnail-exact",
        env: "VODPACK_THUMBNAIL_EXACT",
        to: value(thumbnails.exact),
        clap: [
            num_args = 0..=1,
            default_missing_value = "true",
            value_parser = clap::builder::BoolishValueParser::new()
        ],
        help: "Thumbnails show the frame presented at their time (false: the key frame before)",
        docs: "A thumbnail shows the frame presented at its time, decoded from the key frame \
               before it; false: the key frame at or before the time (one frame decoded, \
               faster, up to a GOP early)",
    },
    thumbnail_max_decodes: usize {
        key: "thumbnail-max-decodes",
        env: "VODPACK_THUMBNAIL_MAX_DECODES",
        to: value(thumbnails.max_decodes),
        help: "Thumbnail requests decoding at once",
        docs: "Thumbnail requests decoding at once, each on a blocking-pool thread; as many \
               more wait up to thumbnail-queue-wait-ms, past which they get 503 with \
               Retry-After",
    },
    thumbnail_queue_wait_ms: u64 {
        key: "thumbnail-queue-wait-ms",
        env: "VODPACK_THUMBNAIL_QUEUE_WAIT_MS",
        to: value(thumbnails.queue_wait_ms),
        help: "Longest a thumbnail request waits for a decode place, in ms",
        docs: "Longest a thumbnail request waits for a decode place before it gets 503 with \
               Retry-After",
    },
    thumbnail_max_source_pixels: u64 {
        key: "thumbnail-max-source-pixels",
        env: "VODPACK_THUMBNAIL_MAX_SOURCE_PIXELS",
        to: value(thumbnails.max_source_pixels),
        help: "Largest source picture a thumbnail decodes, in pixels",
        docs: "Largest source picture (width times height) a thumbnail decodes; a larger \
               video's thumbnails get 422",
    },
    thumbnail_jpeg_quality: u32 {
        key: "thumbnail-jpeg-quality",
        env: "VODPACK_THUMBNAIL_JPEG_QUALITY",
        to: value(thumbnails.jpeg_quality),
        help: "JPEG quality of thumbnails, 1 to 100",
        docs: "JPEG quality of thumbnails, 1 to 100",
    },
    storyboards: bool {
        key: "storyboards",
        env: "VODPACK_STORYBOARDS",
        to: value(storyboards.signalled),
        clap: [
            num_args = 0..=1,
            default_missing_value = "true",
            value_parser = clap::builder::BoolishValueParser::new()
        ],
        help: "Signal storyboards in DASH MPDs and HLS multivariant playlists (on|off)",
        docs: "Signal the storyboard in manifests: a DASH-IF thumbnail AdaptationSet in the \
               MPD and an EXT-X-IMAGE-STREAM-INF image playlist in HLS; storyboard.vtt and \
               its sheets are served either way",
    },
    storyboard_interval_ms: u64 {
        key: "storyboard-interval-ms",
        env: "VODPACK_STORYBOARD_INTERVAL_MS",
        to: value(storyboards.interval_ms),
        help: "Time between storyboard tiles, in ms",
        docs: "Time between storyboard tiles: a tile each, showing the key frame at or \
               before the interval's start (storyboard.vtt's cue starts at that key frame and \
               runs to the next cue, the last one to the title's end; the DASH and HLS image \
               tracks keep equal intervals); at least 100",
    },
    storyboard_grid: StoryboardGrid {
        key: "storyboard-grid",
        env: "VODPACK_STORYBOARD_GRID",
        to: value(storyboards.grid),
        toml: text,
        help: "Tiles across and down a storyboard sheet, COLUMNSxROWS",
        docs: "Tiles across and down a storyboard sheet (storyboard-N.jpg), COLUMNSxROWS, \
               each 1 to 20; a sheet decodes at most that many key frames",
    },
    storyboard_tile_width: u32 {
        key: "storyboard-tile-width",
        env: "VODPACK_STORYBOARD_TILE_WIDTH",
        to: value(storyboards.tile_width),
        help: "Width of a storyboard tile in pixels",
        docs: "Width of a storyboard tile in pixels, 16 to 640; its height follows the \
               video's display aspect",
    },
    dash_subtitle_format: DashSubtitleFormat {
        key: "dash-subtitle-format",
        env: "VODPACK_DASH_SUBTITLE_FORMAT",
        to: value(dash_subtitle_format),
        clap: [value_enum],
        help: "How DASH MPDs offer subtitles: wvtt, imsc1 or webvtt-file",
        docs: "How DASH MPDs offer subtitles: wvtt (WebVTT in ISO BMFF segments, \
               codecs=\"wvtt\"), imsc1 (IMSC1 Text Profile TTML in ISO BMFF segments, \
               codecs=\"stpp.ttml.im1t\") or webvtt-file (one whole WebVTT file per track \
               under BaseURL, for old players); the segments of every form are served \
               whatever the setting (docs/titles.md, Subtitles)",
    },
    hls_cue_out: bool {
        key: "hls-cue-out",
        env: "VODPACK_HLS_CUE_OUT",
        to: value(hls_cue_out),
        clap: [
            num_args = 0..=1,
            default_missing_value = "true",
            value_parser = clap::builder::BoolishValueParser::new()
        ],
        help: "Also mark ad breaks with EXT-X-CUE-OUT/EXT-X-CUE-IN in HLS media playlists (on|off)",
        docs: "Also mark each ad break of a title document with EXT-X-CUE-OUT:0 and \
               EXT-X-CUE-IN in its HLS media playlists, for older ad inserters; the pair goes \
               right before the segment after the break, with no segment between them (an \
               insertion point: nothing of the title is replaced, so the CUE-OUT lasts 0 s). \
               EXT-X-DATERANGE interstitials and SCTE35-OUT, which carry the planned ad time, \
               are written either way (docs/titles.md, Ad breaks)",
    },
    dash_profile: DashProfile {
        key: "dash-profile",
        env: "VODPACK_DASH_PROFILE",
        to: value(dash_profile),
        clap: [value_enum],
        help: "Profile DASH MPDs are written by (default|dvb)",
        docs: "Profile DASH MPDs are written by: default (the ISO live profile and CMAF) or \
               dvb (DVB-DASH, ETSI TS 103 285, for HbbTV and DVB devices: roles, channel \
               configuration and codecs where DVB reads them, subtitles as EBU-TT-D segments \
               whatever dash-subtitle-format says; segments of 1 to 15 s, so segment-duration-ms must be 1000 to 15000); a title \
               document's \"dash_profile\" overrides it (docs/titles.md)",
    },
    nginx_vod_locations: NginxVodLocations {
        key: "nginx-vod-locations",
        env: "VODPACK_NGINX_VOD_LOCATIONS",
        to: value(nginx_vod_locations),
        shown: "none",
        toml: text,
        help: "nginx-vod-module location prefixes, e.g. \
               hls=/hls/,hlsts=/hlsts/,dash=/dash/,thumb=/thumb/",
        docs: "Answer nginx-vod-module URLs under these location prefixes, for example \
               hls=/hls/,hlsts=/hlsts/,dash=/dash/,thumb=/thumb/ (see \
               docs/migrating-from-nginx-vod.md)",
    },
    nginx_vod_segment_duration_ms: u32 {
        key: "nginx-vod-segment-duration-ms",
        env: "VODPACK_NGINX_VOD_SEGMENT_DURATION_MS",
        to: value(nginx_vod_segment_duration_ms),
        help: "Segment duration in milliseconds under the nginx-vod locations",
        docs: "Segment duration under the nginx-vod locations: nginx-vod-module's \
               vod_segment_duration, whose default (10 s) this is; their media playlists, \
               segment numbers and manifests follow it, vodpack's own /vod/ URLs follow \
               segment-duration-ms (docs/migrating-from-nginx-vod.md)",
    },
}
