//! A text track's cues, read and rendered: a WebVTT segment (HLS), the whole WebVTT file
//! or a `wvtt`/`stpp` text segment (DASH), of a track in `mdat` or of a sidecar file a
//! title document names. Shared by the outputs that send it (subtitles, MPEG-TS subtitle
//! segments, a sequence's parts).
//!
//! Text payloads stay in `mdat` until asked for: `package::webvtt` lists the few byte
//! ranges the window needs (bounded by `MediaLimits::max_text_read_bytes`), read here in
//! one batch. Sidecar files are read whole (within the same limit) and put on the title's
//! timeline.

use std::sync::Arc;

use bytes::Bytes;

use super::cached::CachedTitle;
use crate::config::MediaLimits;
use crate::media::{parse_sidecar, MediaError};
use crate::package::text::{text_init_segment, text_media_segment, TextSegmentSpan};
use crate::package::webvtt::{
    cues_from_samples, plan_text_read, render_dash_file, render_hls_segment, segment_cues, Cue,
    SubtitlePlan, TimeWindow,
};
use crate::package::{PackageError, SidecarSubtitle, TextCoding};
use crate::source::{ByteRange, MediaSource, ObjectIdentity, ObjectKey, SourceError};

/// Why a text track's WebVTT cannot be had (answered in `server::error`).
#[derive(Debug, thiserror::Error)]
pub enum SubtitleTextError {
    /// No such track or segment.
    #[error(transparent)]
    Package(#[from] PackageError),
    /// Over the read limit, or a malformed sample.
    #[error(transparent)]
    Media(#[from] MediaError),
    /// Reading failed.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// A sidecar file over `max_text_read_bytes`.
    #[error("subtitle file of {size} bytes is over the limit of {max}")]
    TooLarge { size: u64, max: u64 },
    /// A sidecar file that is neither WebVTT nor SRT.
    #[error("subtitle file {key}: {reason}")]
    Malformed { key: String, reason: String },
}

/// Where a text track's bytes are read: the source, the object and its version.
pub struct TextSource<'a> {
    pub source: &'a Arc<dyn MediaSource>,
    pub limits: &'a MediaLimits,
    pub key: &'a ObjectKey,
    pub identity: &'a ObjectIdentity,
}

/// Which subtitle resource of a text track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubtitleRequest {
    /// The WebVTT segment `number` (1-based) of the HLS subtitle playlist.
    Segment { number: u64 },
    /// The whole track as one WebVTT file, for DASH's `webvtt-file` form.
    File,
}

/// The output time window (ns) of `request` on `plan`: `None` for the whole file of DASH.
///
/// # Errors
/// A segment number past the plan.
fn subtitle_window(
    plan: &SubtitlePlan,
    request: SubtitleRequest,
) -> Result<Option<TimeWindow>, PackageError> {
    match request {
        SubtitleRequest::File => Ok(None),
        SubtitleRequest::Segment { number } => {
            plan.window(number)
                .map(Some)
                .ok_or_else(|| PackageError::SegmentOutOfRange {
                    number,
                    count: plan.segment_count() as u64,
                })
        }
    }
}

/// The WebVTT bytes of `request` for text track `track_id` of `cached`, read `from` its object.
///
/// # Errors
/// 404 for a track or segment the title does not have; 422 for a text track over the read
/// limit or with a malformed sample; the source's answer when reading fails.
pub async fn subtitle_body(
    from: &TextSource<'_>,
    cached: &CachedTitle,
    track_id: u32,
    request: SubtitleRequest,
) -> Result<Bytes, SubtitleTextError> {
    let plan = cached.caches.subtitles.plan(&cached.title);
    let window = subtitle_window(plan, request)?;
    let cues = window_cues(from, cached, track_id, window).await?;
    let sidecar = (cached.title.sidecars.iter()).any(|s| s.track_id == track_id);
    let text = match (window, cached.title.index.text_track(track_id)) {
        // A sidecar's cues overlapping the window are written whole (RFC 8216 3.5 lets a
        // cue spanning a cut appear in both segments; players drop the duplicate).
        (Some(window), Some(track)) if !sidecar => {
            render_hls_segment(&segment_cues(track.format, cues, window))
        }
        (Some(_), _) => render_hls_segment(&cues),
        // The DASH Period starts at S less the video pre-roll it shows.
        (None, _) => render_dash_file(&cues, plan.shift_ns - cached.title.dash_preroll_ns()),
    };
    Ok(Bytes::from(text))
}

/// Which DASH text segment resource of a text track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextSegmentRequest {
    /// The init segment.
    Init,
    /// Media segment `number` (1-based, as the title's segments).
    Segment { number: u64 },
}

/// The bytes of DASH text segment resource `request`, coded `coding`, of text track
/// `track_id` of `cached`: an init segment (written from the title alone, nothing read)
/// or a media segment of the cues of its window, timed in the reference rendition's
/// timescale (`package::text`).
///
/// # Errors
/// 404 for a track or segment the title does not have; 422 for a text track over the read
/// limit, a malformed sample or sidecar; the source's answer when reading fails.
pub async fn text_segment_body(
    from: &TextSource<'_>,
    cached: &CachedTitle,
    track_id: u32,
    coding: TextCoding,
    request: TextSegmentRequest,
) -> Result<Bytes, SubtitleTextError> {
    let title = &cached.title;
    let language = match (title.sidecars.iter()).find(|s| s.track_id == track_id) {
        Some(sidecar) => sidecar.language.clone(),
        None => {
            let track = title
                .index
                .text_track(track_id)
                .ok_or(PackageError::NoSuchTrack {
                    track: u64::from(track_id),
                })?;
            track.language.clone()
        }
    };
    let language = language.as_deref().filter(|l| !l.is_empty() && *l != "und");
    let plan = cached.caches.subtitles.plan(title);
    let number = match request {
        TextSegmentRequest::Init => {
            let init = text_init_segment(coding, track_id, plan.reference.1, language);
            return Ok(Bytes::from(init));
        }
        TextSegmentRequest::Segment { number } => number,
    };
    let window = subtitle_window(plan, SubtitleRequest::Segment { number })?;
    let cues = window_cues(from, cached, track_id, window).await?;
    let segment = TextSegmentSpan::of_plan(plan, number, &cues).ok_or_else(|| {
        PackageError::SegmentOutOfRange {
            number,
            count: plan.segment_count() as u64,
        }
    })?;
    Ok(Bytes::from(text_media_segment(
        coding, track_id, language, &segment,
    )?))
}

/// An empty DASH text segment resource of a sequence's part without subtitles: the init,
/// or media segment `number` of the part's plan holding no cue.
///
/// # Errors
/// A segment number past the part's plan.
pub fn empty_text_segment(
    cached: &CachedTitle,
    track_id: u32,
    coding: TextCoding,
    request: TextSegmentRequest,
) -> Result<Bytes, PackageError> {
    let plan = cached.caches.subtitles.plan(&cached.title);
    match request {
        TextSegmentRequest::Init => Ok(Bytes::from(text_init_segment(
            coding,
            track_id,
            plan.reference.1,
            None,
        ))),
        TextSegmentRequest::Segment { number } => {
            let segment = TextSegmentSpan::of_plan(plan, number, &[]).ok_or(
                PackageError::SegmentOutOfRange {
                    number,
                    count: plan.segment_count() as u64,
                },
            )?;
            Ok(Bytes::from(text_media_segment(
                coding, track_id, None, &segment,
            )?))
        }
    }
}

/// The cues of text track `track_id` of `cached` (an embedded track or a sidecar file)
/// shown in `window` (all of them for `None`), on the output timeline.
///
/// # Errors
/// As [`subtitle_body`].
async fn window_cues(
    from: &TextSource<'_>,
    cached: &CachedTitle,
    track_id: u32,
    window: Option<TimeWindow>,
) -> Result<Vec<Cue>, SubtitleTextError> {
    let plan = cached.caches.subtitles.plan(&cached.title);
    if let Some(sidecar) = (cached.title.sidecars.iter()).find(|s| s.track_id == track_id) {
        return sidecar_cues(from, plan, sidecar, window).await;
    }
    let track = (cached.title.index.text_track(track_id)).ok_or(PackageError::NoSuchTrack {
        track: u64::from(track_id),
    })?;
    let read = plan_text_read(track, plan.shift_ns, window, from.limits)?;
    let bytes = match read.ranges.is_empty() {
        true => Vec::new(),
        false => {
            (from.source)
                .read_ranges(from.key, from.identity, &read.ranges)
                .await?
        }
    };
    Ok(cues_from_samples(track, plan.shift_ns, &read, &bytes)?)
}

/// The cues of sidecar subtitle file `sidecar` (the object `from` names) that overlap
/// `window` (all for `None`): the file read whole (at most `max_text_read_bytes`), its
/// cues put on the output timeline (source time + the title shift S, like every track).
///
/// # Errors
/// 422 for a file over the limit or that is not WebVTT, SRT or TTML; the source's answer
/// when reading fails.
async fn sidecar_cues(
    from: &TextSource<'_>,
    plan: &SubtitlePlan,
    sidecar: &SidecarSubtitle,
    window: Option<TimeWindow>,
) -> Result<Vec<Cue>, SubtitleTextError> {
    let max = from.limits.max_text_read_bytes;
    let identity = from.identity;
    if identity.size > max {
        return Err(SubtitleTextError::TooLarge {
            size: identity.size,
            max,
        });
    }
    let bytes = match identity.size {
        0 => Bytes::new(),
        size => {
            (from.source)
                .read_range(from.key, identity, ByteRange::new(0, size))
                .await?
        }
    };
    // Up to `max_text_read_bytes` of SRT or TTML parsed on every request for it: on the
    // blocking pool, so a large file never holds a runtime worker.
    let format = sidecar.format;
    let parsed = tokio::task::spawn_blocking(move || parse_sidecar(format, &bytes))
        .await
        .map_err(|_| {
            SubtitleTextError::Media(MediaError::Internal {
                reason: "subtitle file parsing was lost".to_owned(),
            })
        })?;
    let cues = parsed.map_err(|e| match e {
        // Not an MP4 problem: say which file and why.
        MediaError::Malformed { reason } => SubtitleTextError::Malformed {
            key: from.key.to_string(),
            reason,
        },
        e => SubtitleTextError::Media(e),
    })?;
    Ok((cues.into_iter())
        .map(|c| Cue {
            start_ns: c.start_ns + sidecar.offset_ns + plan.shift_ns,
            end_ns: c.end_ns + sidecar.offset_ns + plan.shift_ns,
            payload: c.payload,
        })
        .filter(|c| window.is_none_or(|w| c.end_ns > w.start_ns && c.start_ns < w.end_ns))
        .collect())
}
