//! The output of a sequence (issue 31): its manifests written across the parts
//! (`package::render_sequence_*`), and each part's init segments, media segments and
//! WebVTT answered by the part's own title, as that title answers them alone (`cmaf.rs`,
//! `subtitles.rs`), under the sequence's version folder and names (`seg-p2-f1-t1-3.m4s`).
//!
//! Not offered for sequences (a one-line 422 each): encryption (fail closed: never clear
//! where it is configured), trick play, MPEG-TS, nginx-vod names and URL views. Sequence
//! manifests are written per request (about as costly as a title's first rendering), not
//! kept with the title.

use std::sync::Arc;

use bytes::Bytes;

use super::context::TitleRequest;
use super::{cmaf, subtitles};
use crate::package::webvtt::SubtitlePlan;
use crate::package::{
    render_sequence_media_playlist, render_sequence_mpd, render_sequence_multivariant,
    render_sequence_subtitle_playlist, ManifestOptions, Resource,
};
use crate::server::error::ServeError;
use crate::server::respond::answer::{Answer, Content, M3U8, MPD, WEBVTT};
use crate::server::titles::sequences::SequenceTitle;

/// The answer to `req`, a resource of the sequence `sequence`.
///
/// # Errors
/// [`ServeError::NotOffered`] for an encrypted sequence and for the resources sequences
/// do not have; [`ServeError::NoRendition`] for a rendition or part it does not have; the
/// part's own errors.
pub async fn answer(
    req: &TitleRequest<'_>,
    sequence: &Arc<SequenceTitle>,
) -> Result<Answer, ServeError> {
    let policy = req.cached.encryption.unwrap_or(req.app.protect.policy());
    if policy.any() || req.protected.is_some() {
        return Err(ServeError::NotOffered(
            "encryption is not offered for sequences (the title is refused rather than served clear)".into(),
        ));
    }
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
        Resource::PartInit { part, track_id } => {
            let own = seq
                .own_track(part, track_id)
                .ok_or(ServeError::NoRendition(track_id))?;
            let inner = Resource::Init { track_id: own };
            cmaf::init(&part_request(req, sequence, part, inner)?, own)
        }
        Resource::PartSegment {
            part,
            track_id,
            number,
        } => {
            let own = seq
                .own_track(part, track_id)
                .ok_or(ServeError::NoRendition(track_id))?;
            let inner = Resource::Segment {
                track_id: own,
                number,
            };
            let sub = part_request(req, sequence, part, inner)?;
            Box::pin(cmaf::segment(&sub, own, number)).await
        }
        Resource::PartSubtitleSegment {
            part,
            track_id,
            number,
        } => {
            let request = subtitles::SubtitleRequest::Segment { number };
            Box::pin(part_subtitle(req, sequence, (part, track_id), request)).await
        }
        Resource::PartSubtitleFile { part, track_id } => {
            let request = subtitles::SubtitleRequest::File;
            Box::pin(part_subtitle(req, sequence, (part, track_id), request)).await
        }
        _ => Err(ServeError::NotOffered(format!(
            "{} is not offered for sequences",
            req.resource
        ))),
    }
}

/// `req` as a request for `inner` of part `part`'s own title.
fn part_request<'r>(
    req: &TitleRequest<'r>,
    sequence: &SequenceTitle,
    part: u32,
    inner: Resource,
) -> Result<TitleRequest<'r>, ServeError> {
    let cached = sequence.part(part).ok_or(ServeError::NoRendition(part))?;
    Ok(TitleRequest {
        app: req.app,
        resource: inner,
        key: req.key.clone(),
        identity: req.identity.clone(),
        cached: cached.clone(),
        protected: None,
        options: ManifestOptions::default(),
        etag: req.etag.clone(),
        cache_control: req.cache_control,
    })
}

/// A part's WebVTT segment or file of sequence text rendition `track_id`: the part's own,
/// or an empty one where the part has no subtitles (within its segments).
async fn part_subtitle(
    req: &TitleRequest<'_>,
    sequence: &SequenceTitle,
    (part, track_id): (u32, u32),
    request: subtitles::SubtitleRequest,
) -> Result<Answer, ServeError> {
    let own =
        (sequence.sequence.own_text(part, track_id)).ok_or(ServeError::NoRendition(track_id))?;
    let cached = sequence.part(part).ok_or(ServeError::NoRendition(part))?;
    let Some(own) = own else {
        if let subtitles::SubtitleRequest::Segment { number } = request {
            let plan = SubtitlePlan::new(&cached.title);
            let last = plan.first_number + plan.durations_us.len() as u64;
            if !(plan.first_number..last).contains(&number) {
                return Err(ServeError::NoRendition(track_id));
            }
        }
        return Ok(req.answer(Content::Inline(Bytes::from_static(b"WEBVTT\n\n")), WEBVTT));
    };
    let sub = part_request(
        req,
        sequence,
        part,
        Resource::SubtitleFile { track_id: own },
    )?;
    let (key, identity) = sub.object_of(own);
    let body = subtitles::subtitle_body(req.app, cached, &key, &identity, own, request).await?;
    Ok(req.answer(Content::Inline(body), WEBVTT))
}
