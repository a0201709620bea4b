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
//!   index, every number checked against the limits; closed captions found in the first
//!   video samples' SEI; title documents and subtitles.
//! - [`package`]: pure functions over plain data: edit lists, the segment plan, CMAF init
//!   and media segments, MPEG-TS, WebVTT, the HLS and DASH writers, the names of every
//!   resource, and what encryption changes in boxes and manifests.
//! - [`server`]: HTTP. Its own map is in `server/mod.rs`: route, one dispatch, one module
//!   per output, respond; titles, access and the error table below the outputs.
//! - [`ops`] and `main.rs`: the `vodpack` commands (`serve`, `inspect`, `check`,
//!   `sign-url`) and the startup checks.
//!
//! # A manifest: `GET /vod/films/a.mp4/master.m3u8`
//! 1. `server::listen` accepts the connection; `server::service` answers from the held
//!    answers if this exact manifest was answered before and the file is unchanged.
//! 2. `server::request` routes it (`server::route::paths`: key `films/a.mp4`, resource
//!    `Multivariant`), opens the `request` span, checks a signed URL's token
//!    (`server::access::protector`), the method and admission (503 when overloaded), then
//!    dispatches it to the output that owns it.
//! 3. `server::title_request` loads the title (`server::titles::load`): the object's
//!    identity from the source, then the cached title, or on a miss `media::load_index`
//!    reads `moov` and `package::Title` plans it: every track cut at the same times, in
//!    `package::plan`. `server::access::select` says which output the request gets (clear,
//!    or an encrypted one in its own version folder).
//! 4. `server::outputs::hls` takes the playlist from what the title keeps
//!    (`server::titles::kept`), which renders it with `package::hls` once for the clear
//!    output, or per request with what the manifest says beyond the title
//!    (`package::ManifestOptions`: key signalling, the signed URL's token).
//! 5. `server::respond::reply` applies `If-None-Match`, `HEAD` and `Range` and sends it.
//!
//! # An encrypted segment: `GET /vod/films/a.mp4/vTOKEN/seg-t1-3.m4s` (DASH `cenc`)
//! 1. Routed, admitted and loaded as above, in the segment class. `server::access::select`
//!    finds that `TOKEN` is the `cenc` output's folder and fetches the content key.
//! 2. `server::outputs::cmaf` decides the segment's bytes and protection in one place: it
//!    builds segment 3's header and the list of source byte ranges of its samples
//!    (`package::prepare_media_segment`, on the blocking pool via `server::offload`), scans
//!    the samples' NAL units in one streamed read, and has `package::encrypt` write the
//!    `senc` subsample map and IVs into the header and lay out each sample's encryption.
//! 3. `server::respond::reply` applies `Range`; `server::respond::stream` starts the body
//!    (the first bytes awaited, so a failing source is a clean 5xx) and the connection
//!    pulls it chunk by chunk: source reads through `server::respond::cipher_stream`
//!    (`crypto::SampleEncryptor`), nothing buffered ahead of the socket.

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
