//! Subtitle resources: a text track's WebVTT segment (HLS) or whole file (DASH), read and
//! rendered by `titles::subtitle_text`. The answer is small and whole, so it is sent like a
//! manifest (with `Content-Length`, `Range` and `HEAD`).

use crate::package::Resource;
use crate::server::error::ServeError;
use crate::server::respond::answer::{Answer, Content, WEBVTT};
use crate::server::title_request::TitleRequest;
use crate::server::titles::subtitle_text::{subtitle_body, SubtitleRequest, TextSource};

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
