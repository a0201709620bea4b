//! vodpack: an on-the-fly VOD packager. Plain MP4 files in, HLS and DASH out, built at
//! request time from ranged reads of a folder or a bucket.
//!
//! # Layout
//! Dependencies point one way: `server -> package -> media -> source`; `telemetry` and
//! `config` are leaves.
//! - [`source`]: where bytes come from. The `MediaSource` trait (identity, ranged reads),
//!   `LocalMediaSource`, and the read counters.
//! - [`media`]: what the MP4 says. Finds and parses `moov` into a flat per-track sample
//!   index (`MediaIndex`).
//! - [`package`]: the segment plan, CMAF init and media segments, HLS and DASH manifests.
//!   Pure functions over plain data; no I/O.
//! - [`server`]: HTTP. Routing, the title cache, handlers, streamed bodies, error answers.
//! - [`telemetry`]: logs and metrics. [`config`]: settings.
//!
//! # A segment request, end to end
//! 1. `server::route` parses `/vod/KEY/seg-t1-3.m4s` into an `ObjectKey` and a `Resource`.
//! 2. The source gives the object's identity (size + mtime, or ETag).
//! 3. The catalog returns the cached `Title` for (key, identity), or loads it once:
//!    `media::load_index` reads `moov` in a few ranged reads, `package::Title` plans it.
//! 4. `package::prepare_media_segment` builds the `moof`/`mdat` header and the list of
//!    source byte ranges (on the blocking pool).
//! 5. The handler sends the header, then streams the ranges from the source through a
//!    bounded channel of `stream_chunk_bytes` chunks.

#[doc(hidden)]
pub mod bench;
pub mod config;
pub mod media;
pub mod package;
pub mod server;
pub mod source;
pub mod telemetry;
