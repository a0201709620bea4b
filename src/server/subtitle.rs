//! Subtitle resources: a text track's WebVTT segment (HLS) or whole file (DASH).
//!
//! Text payloads stay in `mdat` until asked for: `package::webvtt` lists the few byte
//! ranges the window needs (bounded by `MediaLimits::max_text_read_bytes`), this module
//! reads them through the source in one batch and renders the WebVTT. The answer is small
//! and whole, so it is sent like a manifest (with `Content-Length`, `Range` and `HEAD`).

use bytes::Bytes;

use super::catalog::CachedTitle;
use super::error::ErrorAnswer;
use super::App;
use crate::package::webvtt::{
    cues_from_samples, plan_text_read, render_dash_file, render_hls_segment, segment_cues,
    SubtitlePlan,
};
use crate::package::PackageError;
use crate::source::{ObjectIdentity, ObjectKey};

/// Which subtitle resource of a text track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SubtitleRequest {
    /// The WebVTT segment `number` (1-based) of the HLS subtitle playlist.
    Segment { number: u64 },
    /// The whole track as one WebVTT file, for DASH.
    File,
}

/// The output time window (ns) of `request` on `plan`: `None` for the whole file of DASH.
///
/// # Errors
/// A 404 answer for a segment number past the plan.
pub(super) fn subtitle_window(
    plan: &SubtitlePlan,
    request: SubtitleRequest,
) -> Result<Option<(i128, i128)>, ErrorAnswer> {
    match request {
        SubtitleRequest::File => Ok(None),
        SubtitleRequest::Segment { number } => plan.window(number).map(Some).ok_or_else(|| {
            ErrorAnswer::from(&PackageError::SegmentOutOfRange {
                number,
                count: plan.segment_count() as u64,
            })
        }),
    }
}

/// The WebVTT bytes of `request` for text track `track_id` of `cached`.
///
/// # Errors
/// 404 for a track or segment the title does not have; 422 for a text track over the read
/// limit or with a malformed sample; the source's answer when reading fails.
pub(super) async fn subtitle_body(
    app: &App,
    cached: &CachedTitle,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    track_id: u32,
    request: SubtitleRequest,
) -> Result<Bytes, ErrorAnswer> {
    if let Some(sidecar) = (cached.title.sidecars.iter()).find(|s| s.track_id == track_id) {
        return super::titles::sidecar_body(app, cached, key, identity, sidecar, request).await;
    }
    let track = cached.title.index.text_track(track_id).ok_or_else(|| {
        ErrorAnswer::from(&PackageError::NoSuchTrack {
            track: u64::from(track_id),
        })
    })?;
    let plan = cached.subtitle_plan();
    let window = subtitle_window(plan, request)?;
    let limits = &app.settings.limits;
    let read =
        plan_text_read(track, plan.shift_ns, window, limits).map_err(|e| ErrorAnswer::from(&e))?;
    let bytes = match read.ranges.is_empty() {
        true => Vec::new(),
        false => app
            .catalog
            .source()
            .read_ranges(key, identity, &read.ranges)
            .await
            .map_err(|e| ErrorAnswer::from(&e).with_detail(&e))?,
    };
    let cues = cues_from_samples(track, plan.shift_ns, &read, &bytes)
        .map_err(|e| ErrorAnswer::from(&e))?;
    let text = match window {
        Some(window) => render_hls_segment(&segment_cues(track.format, cues, window)),
        // The DASH Period starts at S less the video pre-roll it shows.
        None => render_dash_file(&cues, plan.shift_ns - cached.title.dash_preroll_ns()),
    };
    Ok(Bytes::from(text))
}
