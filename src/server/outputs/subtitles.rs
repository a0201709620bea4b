//! Subtitle resources: a text track's WebVTT segment (HLS) or whole file (DASH), and its
//! DASH text segments (`wvtt` or `stpp` init and media segments), read and rendered by
//! `titles::subtitle_text`. Every answer is small and whole, so it is sent like a manifest
//! (with `Content-Length`, `Range` and `HEAD`). Text stays clear in an encrypted output.

use crate::package::Resource;
use crate::server::error::ServeError;
use crate::server::respond::answer::{Answer, Content, TEXT_MP4, WEBVTT};
use crate::server::title_request::TitleRequest;
use crate::server::titles::subtitle_text::{
    subtitle_body, text_segment_body, SubtitleRequest, TextSegmentRequest, TextSource,
};

/// `sub-tN-K.vtt` (segment K of text track N) or `sub-tN.vtt` (the whole track).
///
/// # Errors
/// 404 for a track or segment the title does not have; 422 for a text track over the read
/// limit or with a malformed sample; the source's answer when reading fails.
pub async fn webvtt(req: &TitleRequest<'_>) -> Result<Answer, ServeError> {
    let (track_id, request) = match req.resource {
        Resource::SubtitleSegment { track_id, number } => {
            (track_id, SubtitleRequest::Segment { number })
        }
        Resource::SubtitleFile { track_id } => (track_id, SubtitleRequest::File),
        resource => return Err(ServeError::NoRendition(resource.track_id().unwrap_or(0))),
    };
    let (key, identity) = req.object_of(track_id);
    let from = TextSource {
        source: req.app.catalog.source(),
        limits: &req.app.settings.limits,
        key: &key,
        identity: &identity,
    };
    let body = subtitle_body(&from, &req.cached, track_id, request).await?;
    Ok(req.answer(Content::Inline(body), WEBVTT))
}

/// `sub-tN-init.mp4`/`sub-tN-K.m4s` (`wvtt`) or `ttml-tN-init.mp4`/`ttml-tN-K.m4s`
/// (`stpp`): DASH text segments of text track N, served whatever the MPD's subtitle form.
///
/// # Errors
/// As [`webvtt`].
pub async fn text_segment(req: &TitleRequest<'_>) -> Result<Answer, ServeError> {
    let (track_id, coding, request) = match req.resource {
        Resource::TextInit { track_id, coding } => (track_id, coding, TextSegmentRequest::Init),
        Resource::TextSegment {
            track_id,
            coding,
            number,
        } => (track_id, coding, TextSegmentRequest::Segment { number }),
        resource => return Err(ServeError::NoRendition(resource.track_id().unwrap_or(0))),
    };
    let (key, identity) = req.object_of(track_id);
    let from = TextSource {
        source: req.app.catalog.source(),
        limits: &req.app.settings.limits,
        key: &key,
        identity: &identity,
    };
    let body = text_segment_body(&from, &req.cached, track_id, coding, request).await?;
    Ok(req.answer(Content::Inline(body), TEXT_MP4))
}
