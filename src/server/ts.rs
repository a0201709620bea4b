//! The MPEG-TS output over HTTP: `master-ts.m3u8`, TS media, I-frame and subtitle
//! playlists, and TS segments streamed from the source.
//!
//! A title's TS output (`package::ts::TsTitle`: programs, layouts, bandwidths) is worked
//! out once, on the blocking pool, on the first TS request, and kept with the cached title
//! with its rendered playlists, as the CMAF manifests are. A segment streams like a CMAF
//! one: the head goes out once the first source bytes are in hand, then the writer turns
//! each stream's source chunks into packets, through the same bounded body channel, with
//! the same send timeout, metrics and source read counters. Each program stream (video,
//! muxed audio) is read as its own run of ranges, in file order, from its own object.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use http::StatusCode;
use tracing::Instrument;

use super::body::ResponseBody;
use super::catalog::CachedTitle;
use super::error::ErrorAnswer;
use super::handler::assemble_off_runtime;
use super::subtitle::{subtitle_body, SubtitleRequest};
use super::{Admitted, App};
use crate::package::ts::{prepare_ts_segment, Need, TsTitle};
use crate::package::{
    render_ts_iframe_playlist, render_ts_media_playlist, render_ts_multivariant_playlist,
    render_ts_subtitle_playlist, ts_subtitle_segment, PackageError, Resource,
};
use crate::source::{ByteStream, ObjectIdentity, ObjectKey};

/// Content type of TS segments (RFC 8216 3.2).
pub(super) const MP2T: &str = "video/mp2t";

/// A title's TS output and its rendered playlists, filled on first use.
#[derive(Debug)]
pub struct TsOutput {
    /// The TS output, or why the title has none.
    ts: Result<TsTitle, PackageError>,
    master: OnceLock<Bytes>,
    /// Media and I-frame playlists by TS rendition position.
    media: Vec<OnceLock<Bytes>>,
    iframes: Vec<OnceLock<Bytes>>,
}

impl TsOutput {
    fn new(cached: &CachedTitle) -> Self {
        let ts = TsTitle::new(&cached.title);
        for reason in ts.iter().flat_map(|t| &t.skipped) {
            tracing::info!(%reason, "rendition left out of the MPEG-TS output");
        }
        let n = ts.as_ref().map_or(0, |t| t.renditions.len());
        Self {
            ts,
            master: OnceLock::new(),
            media: (0..n).map(|_| OnceLock::new()).collect(),
            iframes: (0..n).map(|_| OnceLock::new()).collect(),
        }
    }
}

/// What a TS resource answers with.
pub(super) enum TsContent {
    /// A playlist.
    Playlist(Bytes),
    /// A WebVTT segment.
    Subtitle(Bytes),
    /// A segment to stream.
    Segment(TsSegmentJob),
}

/// A TS segment to stream: which, from which objects, and how long it is.
pub(super) struct TsSegmentJob {
    cached: Arc<CachedTitle>,
    /// Position of the rendition in the TS output.
    rendition: usize,
    segment: usize,
    /// The object (and version) each program stream is read from.
    objects: Vec<(ObjectKey, ObjectIdentity)>,
    /// Bytes of the whole segment.
    pub len: u64,
}

/// The TS output of `cached`, worked out on the blocking pool the first time.
///
/// # Errors
/// 422 when no rendition can go in TS; 500 if the work is lost.
async fn ts_output(cached: &Arc<CachedTitle>) -> Result<&TsOutput, ErrorAnswer> {
    if cached.ts_slot().get().is_none() {
        let title = cached.clone();
        tokio::task::spawn_blocking(move || {
            title.ts_slot().get_or_init(|| TsOutput::new(&title));
        })
        .instrument(tracing::info_span!("ts.layout"))
        .await
        .map_err(|_| ErrorAnswer::new(StatusCode::INTERNAL_SERVER_ERROR, "TS layout failed"))?;
    }
    cached
        .ts_slot()
        .get()
        .ok_or_else(|| ErrorAnswer::new(StatusCode::INTERNAL_SERVER_ERROR, "TS layout failed"))
}

/// The content of TS resource `resource` of `cached` (the title at `key`, `identity`).
///
/// # Errors
/// 404 for a rendition, track or segment the TS output does not have; 422 when the title
/// has no TS output; the subtitle path's answers for WebVTT segments.
pub(super) async fn ts_content(
    app: &App,
    cached: &Arc<CachedTitle>,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    resource: Resource,
) -> Result<TsContent, ErrorAnswer> {
    let not_found = |what: String| ErrorAnswer::new(StatusCode::NOT_FOUND, what);
    if let Resource::TsSubtitleSegment { track_id, number } = resource {
        let (key, identity) = cached.object_of(track_id).unwrap_or((key, identity));
        let request = SubtitleRequest::Segment { number };
        let body = subtitle_body(app, cached, key, identity, track_id, request).await?;
        let text = std::str::from_utf8(&body)
            .ok()
            .and_then(ts_subtitle_segment);
        let text = text.ok_or_else(|| {
            ErrorAnswer::new(StatusCode::INTERNAL_SERVER_ERROR, "WebVTT without its map")
        })?;
        return Ok(TsContent::Subtitle(Bytes::from(text)));
    }
    let output = ts_output(cached).await?;
    let ts = output.ts.as_ref().map_err(ErrorAnswer::from)?;
    let title = &cached.title;
    let position = |track_id: u32| {
        (ts.renditions.iter())
            .position(|r| r.rendition.track_id == track_id)
            .ok_or_else(|| not_found(format!("no TS rendition {track_id}")))
    };
    let cached_bytes = |slot: Option<&OnceLock<Bytes>>, render: &dyn Fn() -> String| {
        slot.map(|s| s.get_or_init(|| Bytes::from(render())).clone())
    };
    match resource {
        Resource::MultivariantTs => Ok(TsContent::Playlist(
            output
                .master
                .get_or_init(|| Bytes::from(render_ts_multivariant_playlist(title, ts)))
                .clone(),
        )),
        Resource::TsMediaPlaylist { track_id } => {
            if let Ok(pos) = position(track_id) {
                let rendition = &ts.renditions[pos];
                let render = || render_ts_media_playlist(title, rendition);
                return cached_bytes(output.media.get(pos), &render)
                    .map(TsContent::Playlist)
                    .ok_or_else(|| not_found(format!("no TS rendition {track_id}")));
            }
            // A text track's subtitle playlist, if the title has it.
            cached
                .subtitle_playlist(track_id)
                .ok_or_else(|| not_found(format!("no TS rendition {track_id}")))?;
            let plan = cached.subtitle_plan();
            Ok(TsContent::Playlist(Bytes::from(
                render_ts_subtitle_playlist(plan, track_id),
            )))
        }
        Resource::TsIframePlaylist { track_id } => {
            let pos = position(track_id)?;
            let rendition = &ts.renditions[pos];
            if !rendition
                .program
                .streams
                .first()
                .is_some_and(|s| s.is_video())
            {
                return Err(not_found(format!("no TS video rendition {track_id}")));
            }
            let render = || render_ts_iframe_playlist(rendition);
            cached_bytes(output.iframes.get(pos), &render)
                .map(TsContent::Playlist)
                .ok_or_else(|| not_found(format!("no TS rendition {track_id}")))
        }
        Resource::TsSegment { track_id, number } => {
            let rendition = position(track_id)?;
            let ts_rendition = &ts.renditions[rendition];
            let segment = usize::try_from(number - 1).unwrap_or(usize::MAX);
            let summary = ts_rendition.layout.segments.get(segment).ok_or_else(|| {
                ErrorAnswer::from(&PackageError::SegmentOutOfRange {
                    number,
                    count: ts_rendition.layout.segments.len() as u64,
                })
            })?;
            let objects = (ts_rendition.program.streams.iter())
                .map(|s| {
                    let id = title
                        .index
                        .tracks
                        .get(s.track_pos)
                        .map_or(0, |t| t.track_id);
                    let (k, i) = cached.object_of(id).unwrap_or((key, identity));
                    (k.clone(), i.clone())
                })
                .collect();
            Ok(TsContent::Segment(TsSegmentJob {
                cached: cached.clone(),
                rendition,
                segment,
                objects,
                len: summary.bytes,
            }))
        }
        _ => Err(not_found(format!("{resource} is not a TS resource"))),
    }
}

/// Stream bytes `start..end` of the segment of `job`: prepare its writer (blocking pool),
/// open a source stream per program stream, wait for the first source bytes, then hand
/// the rest to a producer task that holds `admitted` until the body ends.
///
/// # Errors
/// The source's answer when it fails before the first byte; 504 when it stalls; the
/// packager's for a segment TS cannot carry.
pub(super) async fn ts_segment_body(
    app: &Arc<App>,
    job: TsSegmentJob,
    start: u64,
    end: u64,
    admitted: Admitted,
) -> Result<ResponseBody, ErrorAnswer> {
    let TsSegmentJob {
        cached,
        rendition,
        segment,
        objects,
        ..
    } = job;
    let title = cached.clone();
    let assemble = tracing::info_span!("segment.assemble", vod.segment = segment + 1);
    let mut writer = assemble_off_runtime(assemble, move || {
        let output = title.ts_slot().get().and_then(|o| o.ts.as_ref().ok());
        let ts = output
            .and_then(|t| t.renditions.get(rendition))
            .ok_or(PackageError::NoTsRenditions)?;
        prepare_ts_segment(
            &title.title,
            &ts.program,
            &ts.layout,
            segment,
            Some(start..end),
        )
    })
    .await?;
    let source = app.catalog.source().clone();
    // Source reads and output chunks of at most 64 KiB: a TS segment holds a pending read
    // per stream and an output chunk being filled besides the channel's two, so with the
    // CMAF chunk size (512 KiB) a connection held about three times CMAF's memory
    // (docs/performance.md).
    let chunk = app
        .settings
        .stream_chunk_bytes
        .clamp(PACKET_BYTES, TS_CHUNK_BYTES);
    let out_chunk = chunk;
    let mut streams: Vec<Option<ByteStream>> = (writer.ranges.iter().zip(objects))
        .map(|(ranges, (key, identity))| {
            (!ranges.is_empty()).then(|| {
                source
                    .clone()
                    .stream_ranges(key, identity, ranges.clone(), chunk)
            })
        })
        .collect();
    let mut feed = Feed {
        pending: vec![Bytes::new(); streams.len()],
        out: Vec::with_capacity(out_chunk.min((end - start) as usize) + PACKET_BYTES),
    };
    // Run to the first source read: a source that fails or stalls now is a clean 5xx.
    let deadline = Duration::from_millis(app.settings.server.request_timeout_ms);
    let need = feed.write(&mut writer);
    if let Need::Stream(s) = need {
        let next = streams.get_mut(s).and_then(Option::as_mut);
        match tokio::time::timeout(deadline, async {
            match next {
                Some(stream) => stream.next().await,
                None => None,
            }
        })
        .await
        {
            Ok(Some(Ok(bytes))) => feed.pending[s] = bytes,
            Ok(Some(Err(e))) => return Err(ErrorAnswer::from(&e).with_detail(&e)),
            Ok(None) => {
                return Err(ErrorAnswer::new(
                    StatusCode::BAD_GATEWAY,
                    "media source ended early",
                ))
            }
            Err(_) => {
                return Err(ErrorAnswer::new(
                    StatusCode::GATEWAY_TIMEOUT,
                    "media source timed out",
                ))
            }
        }
    }
    let (tx, body) = ResponseBody::channel(end - start);
    let app = app.clone();
    let span = tracing::Span::current();
    tokio::spawn(
        async move {
            let _admitted = admitted;
            app.metrics.streams_in_flight.inc();
            match produce(&app, &mut writer, &mut feed, &mut streams, out_chunk, &tx).await {
                Ok(sent) => {
                    tracing::Span::current().record("vod.bytes_sent", sent);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "TS segment stream cut");
                    let _ = tx.send(Err(std::io::Error::other(e))).await;
                }
            }
            app.metrics.streams_in_flight.dec();
        }
        .instrument(span),
    );
    Ok(body)
}

const PACKET_BYTES: usize = crate::package::ts::PACKET_LEN;
/// Largest source read and output chunk of a TS segment.
const TS_CHUNK_BYTES: usize = 64 * 1024;

/// The writer's inputs (the unread part of each stream's last chunk) and output buffer.
struct Feed {
    pending: Vec<Bytes>,
    out: Vec<u8>,
}

impl Feed {
    /// Let the writer take what it can from `pending`, dropping what it took.
    fn write(&mut self, writer: &mut crate::package::ts::TsSegment) -> Need {
        let mut views: Vec<&[u8]> = self.pending.iter().map(|b| &b[..]).collect();
        let need = writer.write(&mut views, &mut self.out);
        let taken: Vec<usize> = (self.pending.iter().zip(&views))
            .map(|(b, v)| b.len() - v.len())
            .collect();
        for (bytes, n) in self.pending.iter_mut().zip(taken) {
            let _ = bytes.split_to(n);
        }
        need
    }
}

/// Write the segment into `tx` chunk by chunk, reading each stream as the writer asks.
/// Stops quietly when the client goes away or stalls past `send_timeout_ms`. Returns the
/// bytes sent.
async fn produce(
    app: &App,
    writer: &mut crate::package::ts::TsSegment,
    feed: &mut Feed,
    streams: &mut [Option<ByteStream>],
    chunk: usize,
    tx: &tokio::sync::mpsc::Sender<Result<Bytes, std::io::Error>>,
) -> Result<u64, String> {
    let send_timeout = Duration::from_millis(app.settings.server.send_timeout_ms);
    let mut sent = 0u64;
    loop {
        let need = feed.write(writer);
        let done = need == Need::Done;
        if feed.out.len() >= chunk || (done && !feed.out.is_empty()) {
            let bytes = Bytes::from(std::mem::replace(
                &mut feed.out,
                Vec::with_capacity(chunk + PACKET_BYTES),
            ));
            let len = bytes.len() as u64;
            match tokio::time::timeout(send_timeout, tx.send(Ok(bytes))).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Ok(sent),
                Err(_) => {
                    app.metrics.stalled_streams.inc();
                    tracing::warn!("client stopped reading; closing the stream");
                    return Ok(sent);
                }
            }
            app.metrics.sent_bytes.inc_by(len);
            sent += len;
        }
        let Need::Stream(s) = need else {
            return Ok(sent);
        };
        let stream = streams.get_mut(s).and_then(Option::as_mut);
        let next = match stream {
            Some(stream) => stream.next().await,
            None => None,
        };
        match next {
            Some(Ok(bytes)) => {
                if let Some(slot) = feed.pending.get_mut(s) {
                    *slot = bytes;
                }
            }
            Some(Err(e)) => return Err(e.to_string()),
            None => return Err("the source ended before the segment".into()),
        }
    }
}
