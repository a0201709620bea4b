//! vodpack: an on-the-fly VOD packager. Plain MP4 files in, HLS and DASH out, built at
//! request time from ranged reads of a folder or a bucket.
//!
//! # Layout
//! Dependencies point one way: `server -> package -> media -> source`; `telemetry` and
//! `config` are leaves.
//! - [`source`]: where bytes come from. The `MediaSource` trait (identity, ranged reads,
//!   readiness), the read counters, and two backends: `LocalMediaSource` (a folder, read on
//!   the blocking pool) and `ObjectStoreSource` (S3-compatible buckets, GCS, Azure and plain
//!   HTTP through the `object_store` crate: identity from a cached HEAD, merged range GETs
//!   with `If-Match`, at most 256 KiB over-read per read).
//! - [`media`]: what the MP4 says. Finds and parses `moov` into a flat per-track sample
//!   index (`MediaIndex`), checking every number the file gives against `MediaLimits`.
//! - [`package`]: the segment plan, the version token, CMAF init and media segments, HLS
//!   and DASH manifests, WebVTT from text tracks, resource names. Pure functions over
//!   plain data; no I/O.
//! - [`server`]: HTTP. Routing, admission (connection cap and per-class request limits,
//!   shedding with 503 before any read), the title cache with its memory of broken files,
//!   handlers, streamed bodies, error answers.
//! - [`telemetry`]: logs, Prometheus metrics and OpenTelemetry traces (docs/observability.md).
//!   [`config`]: settings.
//! - [`ops`]: the operator's tools above the server: startup checks, `inspect`, `check`.
//!
//! # A segment request, end to end
//! 1. `server::route` parses `/vod/KEY/vTOKEN/seg-t1-3.m4s` into an `ObjectKey`, a version
//!    token and a `Resource`.
//! 2. Admission takes a segment permit, or answers 503 with `Retry-After` at once.
//! 3. The source gives the object's identity (size + mtime and inode, or size + ETag).
//! 4. The catalog returns the cached `Title` for (key, identity), or loads it once:
//!    `media::load_index` reads `moov` in a few ranged reads, `package::Title` plans it.
//!    A TOKEN that is not the title's current one is 404.
//! 5. `package::prepare_media_segment` builds the `moof`/`mdat` header and the list of
//!    source byte ranges (on the blocking pool).
//! 6. The handler applies conditionals, `HEAD` and `Range`, and waits for the first
//!    payload bytes from the source, so a source that fails or stalls now is a clean 5xx.
//! 7. It sends the head and the header bytes, then streams the rest of the ranges through
//!    a bounded channel of `stream_chunk_bytes` chunks, holding the permit until the body
//!    ends.

#[doc(hidden)]
pub mod bench;
pub mod config;
pub mod crypto;
pub mod media;
pub mod ops;
pub mod package;
pub mod server;
pub mod source;
pub mod telemetry;
