//! The MPEG-TS output over HTTP: `master-ts.m3u8`, TS media, I-frame and subtitle
//! playlists, and TS segments streamed from the source, clear or encrypted: what a TS
//! segment's bytes are and how they are protected is decided here.
//!
//! A title's TS layout is worked out once and kept with it (`titles::ts_layout`). A
//! segment streams like a CMAF one (`respond::ts_stream`): the writer turns the source
//! bytes into packets as the connection pulls each chunk; with HLS AES-128 the chunks go
//! through the cipher. With HLS SAMPLE-AES the segment's samples are read whole and
//! encrypted first (their sizes shape its layout, `package::ts::sample_aes`), then written
//! from memory.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::crypto::{Scheme, WholeSegmentEncryptor};
use crate::package::encrypt::{hls_ts_sample_aes_iv, hls_ts_segment_iv};
use crate::package::ts::{
    encrypt_sample_aes_segment, prepare_ts_segment, TsRendition, MAX_SEGMENT_SAMPLE_BYTES,
};
use crate::package::{
    render_ts_iframe_playlist, render_ts_iframe_playlist_with, render_ts_media_playlist,
    render_ts_media_playlist_with, render_ts_multivariant_playlist,
    render_ts_multivariant_playlist_with, render_ts_subtitle_playlist_with, ts_subtitle_segment,
    ManifestOptions, PackageError, Resource,
};
use crate::server::access::select::Protected;
use crate::server::error::ServeError;
use crate::server::offload::assemble_off_runtime;
use crate::server::respond::answer::{
    Answer, Content, TsProtection, TsSegmentJob, M3U8, MP2T, WEBVTT,
};
use crate::server::title_request::TitleRequest;
use crate::server::titles::cached::CachedTitle;
use crate::server::titles::kept::TsAt;
use crate::server::titles::subtitle_text::{subtitle_body, SubtitleRequest, TextSource};
use crate::server::titles::ts_layout::{ts_output, ts_rendition_named};
use crate::source::{ByteRange, MediaSource, ObjectIdentity, ObjectKey};

/// The TS resource `req.resource`: a playlist, a WebVTT segment or a TS segment.
///
/// # Errors
/// 404 for a rendition, track or segment the TS output does not have (or the selected
/// output does not offer); 422 when the title has no TS output; the subtitle path's
/// answers for WebVTT segments.
pub async fn ts_resource(req: &TitleRequest<'_>) -> Result<Answer, ServeError> {
    let (app, cached, resource) = (req.app, &req.cached, req.resource);
    let protected = req.protected.as_ref();
    // TS is encrypted as HLS is (AES-128 or SAMPLE-AES); DASH's `cenc` folder has no TS.
    if protected.is_some_and(|p| !matches!(p.scheme, Scheme::Aes128 | Scheme::Cbcs)) {
        return Err(ServeError::NotOffered(format!(
            "{resource} is not in this version"
        )));
    }
    if let Resource::TsSubtitleSegment { track_id, number } = resource {
        let (key, identity) = req.object_of(track_id);
        let request = SubtitleRequest::Segment { number };
        let from = TextSource {
            source: app.catalog.source(),
            limits: &app.settings.limits,
            key: &key,
            identity: &identity,
        };
        let body = subtitle_body(&from, cached, track_id, request).await?;
        let text = std::str::from_utf8(&body)
            .ok()
            .and_then(ts_subtitle_segment);
        let text = text.ok_or(ServeError::Internal("WebVTT without its map"))?;
        return Ok(req.answer(Content::Inline(Bytes::from(text)), WEBVTT));
    }
    let output = ts_output(cached).await?;
    let ts = output.ts.as_ref().map_err(Clone::clone)?;
    let title = &cached.title;
    let position = |track_id: u32| {
        (ts.renditions.iter())
            .position(|r| r.rendition.track_id == track_id)
            .ok_or(ServeError::NoTsRendition(track_id))
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
        ServeError::NotOffered(format!(
            "TS rendition {track_id} is not offered with SAMPLE-AES, which covers H.264, \
             AAC, AC-3 and E-AC-3; use master.m3u8"
        ))
    };
    match resource {
        Resource::TsMediaPlaylist { track_id } | Resource::TsSegment { track_id, .. } => {
            if uncovered.contains(&track_id) {
                return Err(not_offered(track_id));
            }
            // The main audio alone, which the output lists nowhere, by the same rule.
            if protected.is_some_and(|p| p.scheme == Scheme::Cbcs) {
                if let Ok((TsAt::MainAudioAlone, alone)) =
                    ts_rendition_named(cached, track_id).await
                {
                    if !alone.program.sample_aes_covers() {
                        return Err(not_offered(track_id));
                    }
                }
            }
        }
        _ => {}
    }
    match resource {
        Resource::MultivariantTs => {
            if protected.is_some_and(|p| p.scheme == Scheme::Cbcs)
                && uncovered.len() == ts.renditions.len()
            {
                return Err(ServeError::NotOffered(
                    "no TS rendition can be offered with SAMPLE-AES, which covers H.264, AAC, \
                     AC-3 and E-AC-3; use master.m3u8"
                        .into(),
                ));
            }
            // SAMPLE-AES leaves out the renditions it does not cover; the writer also
            // leaves out an audio group that only names the muxed audio, which ffmpeg
            // (5.1; its hls.c today reads the same) takes for packed audio and decrypts
            // nothing of.
            let options = ManifestOptions {
                withheld: uncovered,
                ..req.options.clone()
            };
            let master = match options.is_clear() {
                true => cached_bytes(Some(&output.master), &|| {
                    render_ts_multivariant_playlist(title, ts)
                }),
                false => Some(Bytes::from(render_ts_multivariant_playlist_with(
                    title, ts, &options,
                ))),
            };
            let master = master.ok_or(ServeError::Internal("TS layout failed"))?;
            Ok(req.manifest(master, M3U8))
        }
        Resource::TsMediaPlaylist { track_id } => {
            let clear = req.options.is_clear();
            if let Ok((at, rendition)) = ts_rendition_named(cached, track_id).await {
                let playlist = match clear {
                    true => cached_bytes(output.media_slot(at), &|| {
                        render_ts_media_playlist(title, rendition)
                    }),
                    false => Some(Bytes::from(render_ts_media_playlist_with(
                        title,
                        rendition,
                        &req.options,
                    ))),
                };
                return playlist
                    .map(|bytes| req.manifest(bytes, M3U8))
                    .ok_or(ServeError::NoTsRendition(track_id));
            }
            // A text track's subtitle playlist, if the title has it.
            (cached.caches.subtitles)
                .playlist(title, track_id)
                .ok_or(ServeError::NoTsRendition(track_id))?;
            let plan = cached.caches.subtitles.plan(title);
            let playlist = render_ts_subtitle_playlist_with(plan, track_id, &req.options);
            Ok(req.manifest(Bytes::from(playlist), M3U8))
        }
        Resource::TsIframePlaylist { track_id } => {
            let pos = position(track_id)?;
            let rendition = ts
                .renditions
                .get(pos)
                .ok_or(ServeError::NoTsRendition(track_id))?;
            if !rendition
                .program
                .streams
                .first()
                .is_some_and(|s| s.is_video())
            {
                return Err(ServeError::NoTsVideoRendition(track_id));
            }
            let playlist = match req.options.is_clear() {
                true => cached_bytes(output.iframes.get(pos), &|| {
                    render_ts_iframe_playlist(&req.cached.title, rendition)
                }),
                false => Some(Bytes::from(render_ts_iframe_playlist_with(
                    &req.cached.title,
                    rendition,
                    &req.options,
                ))),
            };
            playlist
                .map(|bytes| req.manifest(bytes, M3U8))
                .ok_or(ServeError::NoTsRendition(track_id))
        }
        Resource::TsSegment { track_id, number } => {
            let (rendition, ts_rendition) = ts_rendition_named(cached, track_id).await?;
            let segment = usize::try_from(number - 1).unwrap_or(usize::MAX);
            let summary = ts_rendition.layout.segments.get(segment).ok_or(
                PackageError::SegmentOutOfRange {
                    number,
                    count: ts_rendition.layout.segments.len() as u64,
                },
            )?;
            let objects: Vec<_> = (ts_rendition.program.streams.iter())
                .map(|s| {
                    let id = title
                        .index
                        .tracks
                        .get(s.track_pos)
                        .map_or(0, |t| t.track_id);
                    req.object_of(id)
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
                        sample_aes_segment(
                            app.catalog.source(),
                            (cached, ts_rendition),
                            &objects,
                            encrypt,
                        )
                        .await?
                    }
                }
            };
            let len = match &protection {
                TsProtection::Clear => summary.bytes,
                TsProtection::Aes128(..) => WholeSegmentEncryptor::encrypted_len(summary.bytes),
                TsProtection::SampleAes(writer, _) => writer.content_length,
            };
            let job = TsSegmentJob {
                cached: cached.clone(),
                rendition,
                segment,
                objects,
                len,
                protection,
            };
            Ok(req.answer(Content::Ts(job), MP2T))
        }
        _ => Err(ServeError::NotOffered(format!(
            "{resource} is not a TS resource"
        ))),
    }
}

/// The IV of MPEG-TS segment `number` of the TS rendition named by `track_id` in output
/// `p`: AES-128 and SAMPLE-AES each from a base of their own (SAMPLE-AES: one IV for all
/// segments).
fn ts_segment_iv(cached: &CachedTitle, p: &Protected, track_id: u32, number: u64) -> [u8; 16] {
    match p.scheme {
        Scheme::Aes128 => hls_ts_segment_iv(&cached.token, &p.key.kid, track_id, number),
        _ => hls_ts_sample_aes_iv(&cached.token, &p.key.kid, track_id),
    }
}

/// Segment `segment` of TS rendition `r` (at `rendition`) of `cached` with HLS SAMPLE-AES: its
/// samples read whole from `objects` (one per program stream) and encrypted on the
/// blocking pool, giving the writer and its input. Encryption changes the video's sizes,
/// so the segment's length is known only now: a SAMPLE-AES segment holds its samples in
/// memory (at most `MAX_SEGMENT_SAMPLE_BYTES`), where a clear or AES-128 one streams.
///
/// # Errors
/// 422 for a program SAMPLE-AES does not cover or a segment too large; the source's
/// answers for its reads.
async fn sample_aes_segment(
    source: &Arc<dyn MediaSource>,
    (cached, r): (&Arc<CachedTitle>, &TsRendition),
    objects: &[(ObjectKey, ObjectIdentity)],
    (rendition, segment, key, iv): (TsAt, usize, [u8; 16], [u8; 16]),
) -> Result<TsProtection, ServeError> {
    let title = &cached.title;
    let program = r.program.with_sample_aes(&title.index)?;
    let clear = prepare_ts_segment(title, &r.program, &r.layout, segment, None)?;
    let total: u64 = clear.ranges.iter().flatten().map(|r| r.len).sum();
    if total > MAX_SEGMENT_SAMPLE_BYTES {
        let e = PackageError::NotInTs {
            track_id: r.rendition.track_id,
            reason: format!("a segment of {total} bytes of samples is too large for SAMPLE-AES"),
        };
        return Err(e.into());
    }
    let samples = read_samples(source, objects, &clear.ranges).await?;
    let title = cached.clone();
    let encrypt = move || {
        let r = (title.caches.ts.get())
            .and_then(|o| o.rendition_at(rendition))
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
        span.in_scope(encrypt)?
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
    source: &Arc<dyn MediaSource>,
    objects: &[(ObjectKey, ObjectIdentity)],
    ranges: &[Vec<ByteRange>],
) -> Result<Vec<Bytes>, ServeError> {
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
            Some(bytes.await?)
        } else {
            None
        };
        for t in group {
            let list = ranges.get(t).map(Vec::as_slice).unwrap_or_default();
            let parts = match &whole {
                Some(whole) => cut_ranges(whole, first, list)?,
                None => source.read_ranges(key, identity, list).await?,
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
fn cut_ranges(whole: &Bytes, first: u64, ranges: &[ByteRange]) -> Result<Vec<Bytes>, ServeError> {
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        let at = usize::try_from(r.start - first).unwrap_or(usize::MAX);
        let part = at
            .checked_add(r.len as usize)
            .filter(|end| *end <= whole.len())
            .map(|end| whole.slice(at..end));
        out.push(part.ok_or(ServeError::SourceEndedEarly)?);
    }
    Ok(out)
}

/// Bytes between a muxed file's ranges read over rather than split into more reads.
const SPAN_SLACK_BYTES: u64 = 256 * 1024;
/// Most bytes of samples of a SAMPLE-AES segment encrypted on the runtime worker itself.
const INLINE_ENCRYPT_BYTES: u64 = 1024 * 1024;
