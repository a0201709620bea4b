//! vodpack: an on-the-fly VOD packager. Plain MP4 files in, HLS and DASH out, built at
//! request time from ranged reads of a folder or a bucket.
//!
//! # Layout
//! Each layer imports only the ones below it, and no file imports one that imports it back.
//! Bottom to top:
//! - [`source`]: where bytes come from: the `MediaSource` trait, `LocalMediaSource`,
//!   `ObjectStoreSource`, their read counters. [`crypto`]: ciphers, content keys and key
//!   providers (a secret, CPIX), signed-URL tokens. [`telemetry`]: logs, Prometheus
//!   metrics, OTLP traces. [`config`]: every setting once, from flags, `VODPACK_*` and TOML.
//! - [`media`]: what the MP4 says: `moov` found and parsed into a flat per-track sample
//!   index, every number checked against the limits; title documents and subtitles.
//! - [`package`]: pure functions over plain data: edit lists, the segment plan, CMAF init
//!   and media segments, MPEG-TS, WebVTT, the HLS and DASH writers, the names of every
//!   resource, and what encryption changes in boxes and manifests.
//! - [`server`]: HTTP. Its own map is in `server/mod.rs`: route, one module per output,
//!   respond; titles, protection and the error table below the outputs.
//! - [`ops`] and `main.rs`: the `vodpack` commands (`serve`, `inspect`, `check`,
//!   `sign-url`) and the startup checks.
//!
//! # A manifest: `GET /vod/films/a.mp4/master.m3u8`
//! 1. `server::listen` accepts the connection; `server::service` answers from the held
//!    answers if this exact manifest was answered before and the file is unchanged.
//! 2. `server::request` routes it (`server::route::paths`: key `films/a.mp4`, resource
//!    `Multivariant`), opens the `request` span, checks a signed URL's token
//!    (`server::protect::protector`), the method and admission (503 when overloaded).
//! 3. `server::outputs::vod` loads the title (`server::titles::load`): the object's
//!    identity from the source, then the cached title, or on a miss `media::load_index`
//!    reads `moov` and `package::Title` plans it: every track cut at the same times, in
//!    `package::plan`. `server::protect::select` says which output the request gets (clear,
//!    or an encrypted one in its own version folder).
//! 4. `server::outputs::hls` hands the title to the writer (`package::hls`), with what the
//!    manifest says beyond the title (`package::ManifestOptions`: key signalling, the
//!    signed URL's token); a clear one is written once and kept with the title.
//! 5. `server::respond::reply` applies `If-None-Match`, `HEAD` and `Range` and sends it.
//!
//! # An encrypted segment: `GET /vod/films/a.mp4/vTOKEN/seg-t1-3.m4s` (DASH `cenc`)
//! 1. Routed and admitted as above, in the segment class. `server::protect::select` finds
//!    that `TOKEN` is the `cenc` output's folder and fetches the content key.
//! 2. `server::outputs::cmaf` builds segment 3's header and the list of source byte ranges
//!    of its samples (`package::prepare_media_segment`) on the blocking pool
//!    (`server::offload`).
//! 3. `server::protect::segment` scans the segment's NAL units in one streamed read, then
//!    writes the `senc` subsample map and IVs into the header (`package::protect`).
//! 4. `server::respond::reply` applies `Range`; `server::respond::stream` starts the body
//!    (the first bytes awaited, so a failing source is a clean 5xx) and the connection
//!    pulls it chunk by chunk: source reads through `server::protect::segment`'s
//!    encrypting stream (`crypto::SampleEncryptor`), nothing buffered ahead of the socket.

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
