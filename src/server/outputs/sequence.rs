//! The output of a sequence: its manifests written across the parts
//! (`package::render_sequence_*`), and the empty WebVTT (or empty DASH text segments) of
//! a part without subtitles. A
//! part's own init segments, media segments and WebVTT are answered by the part's title as
//! it answers them alone (`TitleRequest::part_request` finds the part, the dispatch the
//! output), under the sequence's version folder and names (`seg-p2-f1-t1-3.m4s`).
//!
//! Not offered for sequences (a one-line 422 each): encryption, trick play, MPEG-TS,
//! nginx-vod names and URL views. Sequence manifests are written per request (about as
//! costly as a title's first rendering), not kept with the title.

use bytes::Bytes;

use crate::package::webvtt::SubtitlePlan;
use crate::package::{
    render_sequence_media_playlist, render_sequence_mpd, render_sequence_multivariant,
    render_sequence_subtitle_playlist, ManifestOptions, Resource,
};
use crate::server::error::ServeError;
use crate::server::respond::answer::{Answer, Content, M3U8, MPD, TEXT_MP4, WEBVTT};
use crate::server::title_request::TitleRequest;
use crate::server::titles::subtitle_text::{empty_text_segment, TextSegmentRequest};

/// A sequence's own resource `req.resource`: its multivariant playlist, MPD or a media
/// playlist, or the empty WebVTT of a part without subtitles.
///
/// # Errors
/// [`ServeError::NotOffered`] for the resources sequences do not have;
/// [`ServeError::NoRendition`] for a rendition, part or segment it does not have.
pub async fn sequence_resource(req: &TitleRequest<'_>) -> Result<Answer, ServeError> {
    let sequence = (req.cached.sequence.as_ref())
        .ok_or_else(|| ServeError::NotOffered(format!("{} of no sequence", req.resource)))?;
    let seq = &sequence.sequence;
    let options = ManifestOptions {
        version: req
            .options
            .version
            .clone()
            .or_else(|| Some(req.cached.token.clone())),
        ..req.options.clone()
    };
    match req.resource {
        Resource::Multivariant => {
            let body = render_sequence_multivariant(seq, &options);
            Ok(req.manifest(Bytes::from(body), M3U8))
        }
        Resource::Mpd => Ok(req.manifest(Bytes::from(render_sequence_mpd(seq, &options)), MPD)),
        Resource::MediaPlaylist { track_id } => {
            let body = (render_sequence_media_playlist(seq, track_id, &options))
                .or_else(|| render_sequence_subtitle_playlist(seq, track_id, &options))
                .ok_or(ServeError::NoRendition(track_id))?;
            Ok(req.manifest(Bytes::from(body), M3U8))
        }
        // A part without subtitles: an empty WebVTT (within its segments).
        Resource::PartSubtitleSegment {
            part,
            track_id,
            number,
        } => {
            let cached = sequence.part(part).ok_or(ServeError::NoRendition(part))?;
            let plan = SubtitlePlan::new(&cached.title);
            let last = plan.first_number + plan.durations_us.len() as u64;
            if !(plan.first_number..last).contains(&number) {
                return Err(ServeError::NoRendition(track_id));
            }
            Ok(empty_webvtt(req))
        }
        Resource::PartSubtitleFile { part, .. } => {
            sequence.part(part).ok_or(ServeError::NoRendition(part))?;
            Ok(empty_webvtt(req))
        }
        // A part without subtitles: empty text segments on the part's own timeline.
        Resource::PartTextInit {
            part,
            track_id,
            coding,
        } => {
            let cached = sequence.part(part).ok_or(ServeError::NoRendition(part))?;
            let body = empty_text_segment(cached, track_id, coding, TextSegmentRequest::Init)?;
            Ok(req.answer(Content::Inline(body), TEXT_MP4))
        }
        Resource::PartTextSegment {
            part,
            track_id,
            coding,
            number,
        } => {
            let cached = sequence.part(part).ok_or(ServeError::NoRendition(part))?;
            let request = TextSegmentRequest::Segment { number };
            let body = empty_text_segment(cached, track_id, coding, request)
                .map_err(|_| ServeError::NoRendition(track_id))?;
            Ok(req.answer(Content::Inline(body), TEXT_MP4))
        }
        _ => Err(ServeError::NotOffered(format!(
            "{} is not offered for sequences",
            req.resource
        ))),
    }
}

fn empty_webvtt(req: &TitleRequest<'_>) -> Answer {
    req.answer(Content::Inline(Bytes::from_static(b"WEBVTT\n\n")), WEBVTT)
}
