//! The MPEG-TS output over HTTP: `master-ts.m3u8`, TS media, I-frame and subtitle
//! playlists, and TS segments streamed from the source.
//!
//! A title's TS output (`package::ts::TsTitle`: programs, layouts, bandwidths) is worked
//! out once, on the blocking pool, on the first TS request, and kept with the cached title
//! with its rendered playlists, as the CMAF manifests are. A segment streams like a CMAF
//! one: the head goes out once the first chunk is made, then the writer turns the source
//! bytes into packets as the connection pulls each chunk (`TsChunks`), with the same send
//! timeout, metrics and source read counters. The program streams of one object (video,
//! muxed audio) are read together in file order (`source::InterleavedReads`). With HLS
//! AES-128 the chunks go through the cipher (`CutChunks`). With HLS SAMPLE-AES the
//! segment's samples are read whole and encrypted first (their sizes shape its layout,
//! `package::ts::sample_aes`), then written from memory.

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
use super::protect::{ts_segment_iv, window_part, Protected};
use super::pulled::StreamAccount;
use super::subtitle::{subtitle_body, SubtitleRequest};
use super::{Admitted, App};
use crate::crypto::{Scheme, WholeSegmentEncryptor};
use crate::package::ts::{
    encrypt_sample_aes_segment, prepare_ts_segment, Need, TsSegment, TsTitle,
    MAX_SEGMENT_SAMPLE_BYTES,
};
use crate::package::{
    render_ts_iframe_playlist, render_ts_media_playlist, render_ts_multivariant_playlist,
    render_ts_subtitle_playlist, ts_subtitle_segment, PackageError, Resource,
};
use crate::source::{ByteRange, InterleavedReads, ObjectIdentity, ObjectKey};

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
    /// Bytes of the answer: the whole segment, padded when encrypted.
    pub len: u64,
    /// How its bytes are protected.
    protection: TsProtection,
}

/// How a TS segment's bytes are protected.
enum TsProtection {
    Clear,
    /// HLS AES-128 (key, IV): the whole segment, CBC with PKCS#7 padding.
    Aes128([u8; 16], [u8; 16]),
    /// HLS SAMPLE-AES: the writer over the segment's samples, already encrypted (their
    /// sizes shape the layout, `package::ts::sample_aes`), and those samples per stream.
    SampleAes(Box<TsSegment>, Vec<Bytes>),
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
    (key, identity): (&ObjectKey, &ObjectIdentity),
    resource: Resource,
    protected: Option<&Protected>,
) -> Result<TsContent, ErrorAnswer> {
    let not_found = |what: String| ErrorAnswer::new(StatusCode::NOT_FOUND, what);
    // TS is encrypted as HLS is (AES-128 or SAMPLE-AES); DASH's `cenc` folder has no TS.
    if protected.is_some_and(|p| !matches!(p.scheme, Scheme::Aes128 | Scheme::Cbcs)) {
        return Err(not_found(format!("{resource} is not in this version")));
    }
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
    // Apple's sample encryption covers H.264, AAC, AC-3 and E-AC-3: with SAMPLE-AES a TS
    // rendition carrying anything else (HEVC, MP3) is not offered (fail closed).
    let uncovered: Vec<u32> = match protected {
        Some(p) if p.scheme == Scheme::Cbcs => (ts.renditions.iter())
            .filter(|r| !r.program.sample_aes_covers())
            .map(|r| r.rendition.track_id)
            .collect(),
        _ => Vec::new(),
    };
    let not_offered = |track_id: u32| {
        uncovered.contains(&track_id).then(|| {
            not_found(format!(
                "TS rendition {track_id} is not offered with SAMPLE-AES, which covers H.264, \
                 AAC, AC-3 and E-AC-3; use master.m3u8"
            ))
        })
    };
    match resource {
        Resource::TsMediaPlaylist { track_id } | Resource::TsSegment { track_id, .. } => {
            if let Some(refused) = not_offered(track_id) {
                return Err(refused);
            }
        }
        _ => {}
    }
    match resource {
        Resource::MultivariantTs => {
            let master = output
                .master
                .get_or_init(|| Bytes::from(render_ts_multivariant_playlist(title, ts)))
                .clone();
            if protected.is_none_or(|p| p.scheme != Scheme::Cbcs) {
                return Ok(TsContent::Playlist(master));
            }
            // SAMPLE-AES: ffmpeg (5.1; its hls.c today reads the same) takes a variant
            // with an audio group for packed audio and decrypts nothing, so a group that
            // only names the muxed audio (no URI) is left out: it says nothing the
            // variant does not.
            let text = without_muxed_only_audio(&String::from_utf8_lossy(&master));
            if uncovered.is_empty() {
                return Ok(TsContent::Playlist(Bytes::from(text)));
            }
            if uncovered.len() == ts.renditions.len() {
                return Err(not_found(
                    "no TS rendition can be offered with SAMPLE-AES, which covers H.264, AAC, \
                     AC-3 and E-AC-3; use master.m3u8"
                        .into(),
                ));
            }
            let names: Vec<String> = (uncovered.iter())
                .map(|&track_id| Resource::TsMediaPlaylist { track_id }.to_string())
                .collect();
            let text = String::from_utf8_lossy(&master);
            Ok(TsContent::Playlist(Bytes::from(without_playlists(
                &text, &names,
            ))))
        }
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
            let objects: Vec<_> = (ts_rendition.program.streams.iter())
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
            let protection = match protected {
                None => TsProtection::Clear,
                Some(p) => {
                    let iv = ts_segment_iv(cached, p, track_id, number);
                    if p.scheme == Scheme::Aes128 {
                        TsProtection::Aes128(p.key.key, iv)
                    } else {
                        let encrypt = (rendition, segment, p.key.key, iv);
                        sample_aes_segment(app, cached, &objects, encrypt).await?
                    }
                }
            };
            let len = match &protection {
                TsProtection::Clear => summary.bytes,
                TsProtection::Aes128(..) => WholeSegmentEncryptor::encrypted_len(summary.bytes),
                TsProtection::SampleAes(writer, _) => writer.content_length,
            };
            Ok(TsContent::Segment(TsSegmentJob {
                cached: cached.clone(),
                rendition,
                segment,
                objects,
                len,
                protection,
            }))
        }
        _ => Err(not_found(format!("{resource} is not a TS resource"))),
    }
}

/// Multivariant playlist `text` without its audio groups whose renditions all lack a URI
/// (the audio muxed in the variants): their `EXT-X-MEDIA` tags and the variants' `AUDIO`
/// attributes naming them go.
fn without_muxed_only_audio(text: &str) -> String {
    let group_of = |line: &str| {
        let at = line.find("GROUP-ID=\"")? + "GROUP-ID=\"".len();
        let rest = line.get(at..)?;
        rest.find('"').map(|end| rest[..end].to_owned())
    };
    let audio = |line: &&str| line.starts_with("#EXT-X-MEDIA:") && line.contains("TYPE=AUDIO");
    let mut muxed_only: Vec<String> = text.lines().filter(audio).filter_map(group_of).collect();
    for line in text.lines().filter(audio) {
        if line.contains("URI=\"") {
            if let Some(group) = group_of(line) {
                muxed_only.retain(|g| *g != group);
            }
        }
    }
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if audio(&line) && group_of(line).is_some_and(|g| muxed_only.contains(&g)) {
            continue;
        }
        let mut line = line.to_owned();
        if line.starts_with("#EXT-X-STREAM-INF:") {
            for group in &muxed_only {
                line = line.replace(&format!(",AUDIO=\"{group}\""), "");
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Multivariant playlist `text` without the variants and renditions whose playlist is
/// one of `names`.
fn without_playlists(text: &str, names: &[String]) -> String {
    let names_uri = |line: &str| {
        let uri = line.rsplit('/').next().unwrap_or(line);
        names.iter().any(|n| n == uri)
    };
    let quoted = |line: &str| names.iter().any(|n| line.contains(&format!("{n}\"")));
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(text.len());
    for (k, line) in lines.iter().enumerate() {
        let dropped = if line.starts_with("#EXT-X-STREAM-INF") {
            lines.get(k + 1).is_some_and(|next| names_uri(next))
        } else if line.starts_with("#EXT-X-MEDIA") {
            quoted(line)
        } else {
            !line.starts_with('#') && names_uri(line)
        };
        if !dropped {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Segment `segment` of TS rendition `rendition` of `cached` with HLS SAMPLE-AES: its
/// samples read whole from `objects` (one per program stream) and encrypted on the
/// blocking pool, giving the writer and its input. Encryption changes the video's sizes,
/// so the segment's length is known only now: a SAMPLE-AES segment holds its samples in
/// memory (at most `MAX_SEGMENT_SAMPLE_BYTES`), where a clear or AES-128 one streams.
///
/// # Errors
/// 422 for a program SAMPLE-AES does not cover or a segment too large; the source's
/// answers for its reads.
async fn sample_aes_segment(
    app: &App,
    cached: &Arc<CachedTitle>,
    objects: &[(ObjectKey, ObjectIdentity)],
    (rendition, segment, key, iv): (usize, usize, [u8; 16], [u8; 16]),
) -> Result<TsProtection, ErrorAnswer> {
    let output = ts_output(cached).await?;
    let ts = output.ts.as_ref().map_err(ErrorAnswer::from)?;
    let r = ts.renditions.get(rendition).ok_or_else(|| {
        ErrorAnswer::new(StatusCode::NOT_FOUND, "no such TS rendition".to_owned())
    })?;
    let title = &cached.title;
    let program = (r.program.with_sample_aes(&title.index)).map_err(|e| ErrorAnswer::from(&e))?;
    let clear = prepare_ts_segment(title, &r.program, &r.layout, segment, None)
        .map_err(|e| ErrorAnswer::from(&e))?;
    let total: u64 = clear.ranges.iter().flatten().map(|r| r.len).sum();
    if total > MAX_SEGMENT_SAMPLE_BYTES {
        let e = PackageError::NotInTs {
            track_id: r.rendition.track_id,
            reason: format!("a segment of {total} bytes of samples is too large for SAMPLE-AES"),
        };
        return Err(ErrorAnswer::from(&e));
    }
    let samples = read_samples(app, objects, &clear.ranges).await?;
    let title = cached.clone();
    let encrypt = move || {
        let output = title.ts_slot().get().and_then(|o| o.ts.as_ref().ok());
        let r = (output.and_then(|t| t.renditions.get(rendition)))
            .ok_or(PackageError::NoTsRenditions)?;
        encrypt_sample_aes_segment(
            &title.title,
            &program,
            &r.layout,
            segment,
            samples,
            &key,
            &iv,
        )
    };
    // A usual segment (a few hundred KB) encrypts in well under a millisecond, less than a
    // hop to the blocking pool costs (docs/performance.md); large ones go there.
    let span = tracing::info_span!("segment.encrypt", vod.segment = segment + 1);
    let (writer, samples) = if total <= INLINE_ENCRYPT_BYTES {
        span.in_scope(encrypt).map_err(|e| ErrorAnswer::from(&e))?
    } else {
        assemble_off_runtime(span, encrypt).await?
    };
    Ok(TsProtection::SampleAes(Box::new(writer), samples))
}

/// The bytes of each program stream's `ranges` (its samples, in order), read from its
/// object in `objects`. The streams of one object whose ranges fill most of the span they
/// cover (a muxed file interleaves them sample by sample) are read as that one span: one
/// read, where a read per range would be hundreds.
async fn read_samples(
    app: &App,
    objects: &[(ObjectKey, ObjectIdentity)],
    ranges: &[Vec<ByteRange>],
) -> Result<Vec<Bytes>, ErrorAnswer> {
    let source = app.catalog.source();
    let failed = |e: crate::source::SourceError| ErrorAnswer::from(&e).with_detail(&e);
    let mut out = vec![Bytes::new(); ranges.len()];
    let mut done = vec![false; ranges.len()];
    for (s, (key, identity)) in objects.iter().enumerate() {
        if done.get(s).copied().unwrap_or(true) {
            continue;
        }
        let group: Vec<usize> = (s..objects.len())
            .filter(|t| {
                objects
                    .get(*t)
                    .is_some_and(|o| o.0 == *key && o.1 == *identity)
            })
            .collect();
        let (mut first, mut end, mut total) = (u64::MAX, 0u64, 0u64);
        for t in &group {
            for r in ranges.get(*t).map(Vec::as_slice).unwrap_or_default() {
                (first, end, total) = (first.min(r.start), end.max(r.end()), total + r.len);
            }
        }
        let first = first.min(end);
        let span = end - first;
        let whole = if span == 0 {
            Some(Bytes::new())
        } else if span <= total + total / 4 + SPAN_SLACK_BYTES {
            let bytes = source.read_range(key, identity, ByteRange::new(first, span));
            Some(bytes.await.map_err(failed)?)
        } else {
            None
        };
        for t in group {
            let list = ranges.get(t).map(Vec::as_slice).unwrap_or_default();
            let parts = match &whole {
                Some(whole) => cut_ranges(whole, first, list)?,
                None => source
                    .read_ranges(key, identity, list)
                    .await
                    .map_err(failed)?,
            };
            if let (Some(slot), Some(flag)) = (out.get_mut(t), done.get_mut(t)) {
                *slot = match <[Bytes; 1]>::try_from(parts) {
                    Ok([one]) => one,
                    Err(parts) => Bytes::from(parts.concat()),
                };
                *flag = true;
            }
        }
    }
    Ok(out)
}

/// `ranges` cut from `whole`, the bytes from offset `first` on.
fn cut_ranges(whole: &Bytes, first: u64, ranges: &[ByteRange]) -> Result<Vec<Bytes>, ErrorAnswer> {
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        let at = usize::try_from(r.start - first).unwrap_or(usize::MAX);
        let part = at
            .checked_add(r.len as usize)
            .filter(|end| *end <= whole.len())
            .map(|end| whole.slice(at..end));
        out.push(part.ok_or_else(|| {
            ErrorAnswer::new(StatusCode::BAD_GATEWAY, "media source ended early")
        })?);
    }
    Ok(out)
}

/// Bytes between a muxed file's ranges read over rather than split into more reads.
const SPAN_SLACK_BYTES: u64 = 256 * 1024;
/// Most bytes of samples of a SAMPLE-AES segment encrypted on the runtime worker itself.
const INLINE_ENCRYPT_BYTES: u64 = 1024 * 1024;

/// Stream bytes `start..end` of the segment of `job`: prepare its writer (blocking pool),
/// open a source stream per program stream and make the first chunk, then answer with a
/// body that makes the rest as the connection asks for it (`TsChunks`), holding `admitted`
/// until it ends.
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
        protection,
        ..
    } = job;
    // Output chunks of half `stream_chunk_bytes`. A TS connection holds the chunk hyper is
    // sending, the chunk being made, a read batch and the segment's plan, where a CMAF one
    // holds the chunk being sent and the one being read: at half size a TS stream stays
    // within a CMAF stream's memory (docs/performance.md, issue 12).
    let chunk = (app.settings.stream_chunk_bytes / 2).max(PACKET_BYTES);
    let (writer, readers, route, cut) = match protection {
        TsProtection::SampleAes(writer, samples) => {
            // Written whole from the samples in memory, the window cut from the output.
            let route = (0..samples.len()).map(|s| (0, s)).collect();
            let cut = Cut::Window(start..end);
            (*writer, vec![ProgramReader::Memory(samples)], route, cut)
        }
        protection => {
            let cut = match protection {
                // CBC chains every block to the ones before: written whole, the window cut
                // from the ciphertext.
                TsProtection::Aes128(key, iv) => {
                    Cut::Cbc(Box::new(WholeSegmentEncryptor::new(&key, &iv)), start..end)
                }
                _ => Cut::None,
            };
            let window = matches!(cut, Cut::None).then_some(start..end);
            let (writer, readers, route) =
                source_writer(app, &cached, (rendition, segment), objects, window).await?;
            (writer, readers, route, cut)
        }
    };
    let mut chunks = TsChunks {
        pending: vec![Bytes::new(); route.len()],
        writer,
        readers,
        route,
        waiting: None,
        out: Vec::new(),
        chunk,
        first: None,
        failure: None,
        account: StreamAccount::new(app, admitted),
    };
    // Make the first chunk now: a source that fails or stalls before it is a clean 5xx.
    let deadline = Duration::from_millis(app.settings.server.request_timeout_ms);
    match tokio::time::timeout(deadline, chunks.next()).await {
        Ok(Some(Ok(bytes))) => chunks.first = Some(bytes),
        Ok(Some(Err(e))) => {
            let answer = chunks.failure.take();
            return Err(
                answer.unwrap_or_else(|| ErrorAnswer::new(StatusCode::BAD_GATEWAY, e.to_string()))
            );
        }
        Ok(None) => {}
        Err(_) => {
            return Err(ErrorAnswer::new(
                StatusCode::GATEWAY_TIMEOUT,
                "media source timed out",
            ))
        }
    }
    match cut {
        Cut::None => Ok(ResponseBody::pulled(end - start, chunks)),
        cut => {
            let cut = CutChunks {
                inner: chunks,
                cut,
                pos: 0,
            };
            Ok(ResponseBody::pulled(end - start, cut))
        }
    }
}

/// The writer of bytes `window` (`None`: all) of a segment read from the source, and per
/// program stream its reader and track in it.
async fn source_writer(
    app: &App,
    cached: &Arc<CachedTitle>,
    (rendition, segment): (usize, usize),
    objects: Vec<(ObjectKey, ObjectIdentity)>,
    window: Option<std::ops::Range<u64>>,
) -> Result<(TsSegment, Vec<ProgramReader>, Vec<(usize, usize)>), ErrorAnswer> {
    let title = cached.clone();
    let assemble = tracing::info_span!("segment.assemble", vod.segment = segment + 1);
    let prepare = move || {
        let output = title.ts_slot().get().and_then(|o| o.ts.as_ref().ok());
        let ts = output
            .and_then(|t| t.renditions.get(rendition))
            .ok_or(PackageError::NoTsRenditions)?;
        prepare_ts_segment(&title.title, &ts.program, &ts.layout, segment, window)
    };
    // Planning is pure CPU, a few microseconds for a usual segment: a hop to the blocking
    // pool and back would cost more than the work (its futex wake-ups were about a tenth of
    // a TS segment's CPU, docs/performance.md). Only segments with many samples, which
    // would hold a runtime worker for long, go to the blocking pool.
    let samples: usize = (cached.title.plan.tracks.iter())
        .filter_map(|t| t.samples(segment).map(|r| r.len()))
        .sum();
    let mut writer = if samples <= INLINE_PREPARE_SAMPLES {
        assemble
            .in_scope(prepare)
            .map_err(|e| ErrorAnswer::from(&e))?
    } else {
        assemble_off_runtime(assemble, prepare).await?
    };
    let source = app.catalog.source().clone();
    // Program streams from one object are read together, in file order (`InterleavedReads`).
    let mut readers: Vec<(ObjectKey, ObjectIdentity, Vec<Vec<ByteRange>>)> = Vec::new();
    let mut route = Vec::with_capacity(objects.len());
    for (ranges, (key, identity)) in std::mem::take(&mut writer.ranges).into_iter().zip(objects) {
        let at = match readers
            .iter()
            .position(|(k, i, _)| *k == key && *i == identity)
        {
            Some(at) => at,
            None => {
                readers.push((key, identity, Vec::new()));
                readers.len() - 1
            }
        };
        if let Some((_, _, lists)) = readers.get_mut(at) {
            route.push((at, lists.len()));
            lists.push(ranges);
        }
    }
    let readers = (readers.into_iter())
        .map(|(key, identity, lists)| {
            ProgramReader::Source(InterleavedReads::new(
                source.clone(),
                key,
                identity,
                lists,
                TS_READ_BYTES,
                TS_HOLD_BYTES,
            ))
        })
        .collect();
    Ok((writer, readers, route))
}

/// Where a program stream's bytes come from: the source, or samples already in memory
/// (SAMPLE-AES), handed out in pieces of [`TS_READ_BYTES`] so each chunk stays small.
enum ProgramReader {
    Source(InterleavedReads),
    Memory(Vec<Bytes>),
}

impl ProgramReader {
    fn poll_next(
        &mut self,
        track: usize,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Bytes, crate::source::SourceError>>> {
        match self {
            ProgramReader::Source(reads) => reads.poll_next(track, cx),
            ProgramReader::Memory(samples) => std::task::Poll::Ready(
                samples
                    .get_mut(track)
                    .filter(|b| !b.is_empty())
                    .map(|b| Ok(b.split_to(b.len().min(TS_READ_BYTES)))),
            ),
        }
    }
}

const PACKET_BYTES: usize = crate::package::ts::PACKET_LEN;
/// Most samples (all tracks) of a segment planned on the runtime worker itself.
const INLINE_PREPARE_SAMPLES: usize = 4096;
/// Largest source read of a TS segment. A read of a finely interleaved file is one `pread`
/// whatever its size, so small reads cost little CPU and hold little memory.
const TS_READ_BYTES: usize = 16 * 1024;
/// Most bytes read ahead for one program stream while another waits (`InterleavedReads`).
const TS_HOLD_BYTES: usize = 16 * 1024;

/// A TS segment's chunks, made when the connection polls for them: the writer runs until a
/// chunk is full, reading a stream's next source batch when it runs out of that stream's
/// bytes. Reads of pages in the cache complete in the poll itself (`source/nowait.rs`), so
/// a segment is usually made with no task hand-off at all. Counts the stream in flight and
/// the bytes sent; holds the request's admission until dropped.
struct TsChunks {
    writer: TsSegment,
    /// The sources of the program streams (one per object), and per program stream its
    /// reader and its track in it.
    readers: Vec<ProgramReader>,
    route: Vec<(usize, usize)>,
    /// Per program stream, the unread part of its last batch.
    pending: Vec<Bytes>,
    /// The stream whose next batch the writer waits for.
    waiting: Option<usize>,
    /// The chunk being made.
    out: Vec<u8>,
    chunk: usize,
    /// The chunk made before the answer was committed, sent first.
    first: Option<Bytes>,
    /// The source's failure, kept typed for an answer not yet committed.
    failure: Option<ErrorAnswer>,
    account: StreamAccount,
}

impl TsChunks {
    /// Let the writer take what it can from `pending` into `out`, dropping what it took.
    /// Called once per piece of source bytes (a sample, in a finely interleaved file), so
    /// it allocates nothing for the usual program of one or two streams.
    fn write(&mut self) -> Need {
        const ON_STACK: usize = 4;
        if self.pending.len() > ON_STACK {
            let mut views: Vec<&[u8]> = self.pending.iter().map(|b| &b[..]).collect();
            let need = self.writer.write(&mut views, &mut self.out);
            let left: Vec<usize> = views.iter().map(|v| v.len()).collect();
            drop_taken(&mut self.pending, &left);
            return need;
        }
        let mut views: [&[u8]; ON_STACK] = [&[]; ON_STACK];
        for (view, bytes) in views.iter_mut().zip(&self.pending) {
            *view = bytes;
        }
        let n = self.pending.len();
        let need = self.writer.write(&mut views[..n], &mut self.out);
        let left = views.map(<[u8]>::len);
        drop_taken(&mut self.pending, &left[..n]);
        need
    }

    /// The chunk made so far, counted as sent.
    fn take_chunk(&mut self) -> Bytes {
        let bytes = Bytes::from(std::mem::take(&mut self.out));
        self.account.sent(bytes)
    }

    fn fail(&mut self, answer: ErrorAnswer, why: String) -> std::io::Error {
        let _entered = self.account.span.enter();
        tracing::warn!(error = %why, "TS segment source failed");
        self.failure = Some(answer);
        std::io::Error::other(why)
    }
}

/// Drop from each of `pending` what the writer took, leaving its last `left` bytes.
fn drop_taken(pending: &mut [Bytes], left: &[usize]) {
    for (bytes, left) in pending.iter_mut().zip(left) {
        let taken = bytes.len().saturating_sub(*left);
        let _ = bytes.split_to(taken);
    }
}

impl futures_util::Stream for TsChunks {
    type Item = std::io::Result<Bytes>;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let this = self.get_mut();
        if let Some(first) = this.first.take() {
            return Poll::Ready(Some(Ok(first)));
        }
        loop {
            if let Some(s) = this.waiting {
                let (reader, track) = this.route.get(s).copied().unwrap_or((usize::MAX, 0));
                let polled = match this.readers.get_mut(reader) {
                    Some(reader) => reader.poll_next(track, cx),
                    None => Poll::Ready(None),
                };
                match polled {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(Ok(bytes))) => {
                        if let Some(slot) = this.pending.get_mut(s) {
                            *slot = bytes;
                        }
                        this.waiting = None;
                    }
                    Poll::Ready(Some(Err(e))) => {
                        let answer = ErrorAnswer::from(&e).with_detail(&e);
                        return Poll::Ready(Some(Err(this.fail(answer, e.to_string()))));
                    }
                    Poll::Ready(None) => {
                        let why = "the source ended before the segment";
                        let answer =
                            ErrorAnswer::new(StatusCode::BAD_GATEWAY, "media source ended early");
                        return Poll::Ready(Some(Err(this.fail(answer, why.into()))));
                    }
                }
            }
            if this.out.capacity() == 0 {
                this.out.reserve_exact(this.chunk + PACKET_BYTES);
            }
            let need = this.write();
            let done = need == Need::Done;
            if this.out.len() >= this.chunk || (done && !this.out.is_empty()) {
                if let Need::Stream(s) = need {
                    this.waiting = Some(s);
                }
                return Poll::Ready(Some(Ok(this.take_chunk())));
            }
            match need {
                Need::Stream(s) => this.waiting = Some(s),
                Need::Done => return Poll::Ready(None),
            }
        }
    }
}

/// What is done to a whole segment's chunks before they go out.
enum Cut {
    /// Nothing: the writer wrote the window itself.
    None,
    /// Bytes `window` of the whole segment cut out.
    Window(std::ops::Range<u64>),
    /// HLS AES-128 (CBC, PKCS#7 padding), then bytes `window` of the ciphertext cut out.
    Cbc(Box<WholeSegmentEncryptor>, std::ops::Range<u64>),
}

/// A whole segment's chunks, encrypted or not, with a window cut out of them.
struct CutChunks {
    inner: TsChunks,
    /// `Cut::None` once the segment (and any padding block) is out.
    cut: Cut,
    /// Output bytes made so far.
    pos: u64,
}

impl futures_util::Stream for CutChunks {
    type Item = std::io::Result<Bytes>;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let this = self.get_mut();
        loop {
            let window = match &this.cut {
                Cut::None => return Poll::Ready(None),
                Cut::Window(w) | Cut::Cbc(_, w) => w.clone(),
            };
            if this.pos >= window.end {
                return Poll::Ready(None);
            }
            let out = match this.inner.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(Some(Ok(chunk))) => match &mut this.cut {
                    Cut::Cbc(cipher, _) => cipher.feed(&chunk),
                    _ => chunk,
                },
                Poll::Ready(None) => match std::mem::replace(&mut this.cut, Cut::None) {
                    Cut::Cbc(cipher, _) => cipher.finish(),
                    _ => return Poll::Ready(None),
                },
            };
            let from = this.pos;
            this.pos += out.len() as u64;
            if let Some(part) = window_part(&out, from, window) {
                return Poll::Ready(Some(Ok(part)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{without_muxed_only_audio, without_playlists};

    /// Given a TS multivariant playlist whose audio group only names the muxed audio, then
    /// the group and the variants' reference to it go; a group with an alternate rendition
    /// (a URI) stays whole.
    #[test]
    fn audio_groups_of_muxed_audio_only_leave_the_playlist() {
        let muxed = "#EXTM3U\n\
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"a\",DEFAULT=YES\n\
            #EXT-X-STREAM-INF:BANDWIDTH=1,CODECS=\"avc1,mp4a\",AUDIO=\"audio\"\nv1/index-ts-t1.m3u8\n";
        assert_eq!(
            without_muxed_only_audio(muxed),
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,CODECS=\"avc1,mp4a\"\nv1/index-ts-t1.m3u8\n"
        );
        let alternate = "#EXTM3U\n\
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"a\",DEFAULT=YES\n\
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"b\",URI=\"v1/index-ts-t3.m3u8\"\n\
            #EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO=\"audio\"\nv1/index-ts-t1.m3u8\n";
        assert_eq!(without_muxed_only_audio(alternate), alternate);
    }

    /// Given a TS multivariant playlist with an MP3 audio rendition and a variant whose
    /// muxed audio SAMPLE-AES cannot carry, then both go and the rest stays as it was.
    #[test]
    fn uncovered_renditions_leave_the_multivariant_playlist() {
        let master = "#EXTM3U\n#EXT-X-VERSION:4\n\
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"a\",DEFAULT=YES\n\
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"mp3\",URI=\"v1/index-ts-t3.m3u8\"\n\
            #EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO=\"audio\"\nv1/index-ts-t1.m3u8\n\
            #EXT-X-STREAM-INF:BANDWIDTH=2,AUDIO=\"audio\"\nv1/index-ts-t2.m3u8\n";
        let names = ["index-ts-t2.m3u8".to_owned(), "index-ts-t3.m3u8".to_owned()];
        let out = without_playlists(master, &names);
        assert_eq!(
            out,
            "#EXTM3U\n#EXT-X-VERSION:4\n\
             #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"a\",DEFAULT=YES\n\
             #EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO=\"audio\"\nv1/index-ts-t1.m3u8\n"
        );
    }
}
