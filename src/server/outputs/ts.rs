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
//!
//! A segment's body is streamed by `respond::ts_stream`; what encryption changes is in
//! `protect::ts`.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use tracing::Instrument;

use crate::crypto::{Scheme, WholeSegmentEncryptor};
use crate::package::ts::TsRendition;
use crate::package::{
    render_ts_iframe_playlist, render_ts_iframe_playlist_with, render_ts_media_playlist,
    render_ts_media_playlist_with, render_ts_multivariant_playlist,
    render_ts_multivariant_playlist_with, render_ts_subtitle_playlist_with, ts_subtitle_segment,
    ManifestOptions, PackageError, Resource,
};
use crate::server::error::ServeError;
use crate::server::outputs::context::TitleRequest;
use crate::server::outputs::subtitles::{subtitle_body, SubtitleRequest};
use crate::server::protect::ts::{sample_aes_segment, ts_segment_iv, TsProtection};
use crate::server::respond::answer::{Answer, Content, TsSegmentJob, M3U8, MP2T, WEBVTT};
use crate::server::titles::cached::{CachedTitle, TsAt, TsOutput};

/// The TS output of `cached`, worked out on the blocking pool the first time.
///
/// # Errors
/// 422 when no rendition can go in TS; 500 if the work is lost.
pub(in crate::server) async fn ts_output(
    cached: &Arc<CachedTitle>,
) -> Result<&TsOutput, ServeError> {
    let failed = ServeError::Internal("TS layout failed");
    if cached.ts_slot().get().is_none() {
        let title = cached.clone();
        tokio::task::spawn_blocking(move || {
            title.ts_slot().get_or_init(|| TsOutput::new(&title));
        })
        .instrument(tracing::info_span!("ts.layout"))
        .await
        .map_err(|_| ServeError::Internal("TS layout failed"))?;
    }
    cached.ts_slot().get().ok_or(failed)
}

/// The TS rendition named by `track_id` in the TS output of `cached`, and where it is: a
/// listed one, or the main audio alone (nginx-vod's `index-a1.m3u8` under `hlsts`), laid
/// out on the blocking pool the first time it is asked for.
///
/// # Errors
/// 422 when the title has no TS output; 404 when it has no TS rendition of `track_id`;
/// 500 if the work is lost.
pub(in crate::server) async fn ts_rendition_named(
    cached: &Arc<CachedTitle>,
    track_id: u32,
) -> Result<(TsAt, &TsRendition), ServeError> {
    let output = ts_output(cached).await?;
    if !output.main_audio_alone_known(track_id) {
        let title = cached.clone();
        tokio::task::spawn_blocking(move || {
            if let Some(output) = title.ts_slot().get() {
                let _ = output.rendition_named(&title.title, track_id);
            }
        })
        .instrument(tracing::info_span!("ts.layout.main_audio"))
        .await
        .map_err(|_| ServeError::Internal("TS layout failed"))?;
    }
    (output.rendition_named(&cached.title, track_id)?).ok_or(ServeError::NoTsRendition(track_id))
}

/// The answer to TS resource `req.resource`.
///
/// # Errors
/// 404 for a rendition, track or segment the TS output does not have (or the selected
/// output does not offer); 422 when the title has no TS output; the subtitle path's
/// answers for WebVTT segments.
pub async fn answer(req: &TitleRequest<'_>) -> Result<Answer, ServeError> {
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
        let body = subtitle_body(app, cached, &key, &identity, track_id, request).await?;
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
            cached
                .subtitle_playlist(track_id)
                .ok_or(ServeError::NoTsRendition(track_id))?;
            let plan = cached.subtitle_plan();
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
