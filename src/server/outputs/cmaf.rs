//! CMAF init and media segments, and the key frames trick play offers, clear or encrypted.
//! A segment's header is built on the blocking pool; its payload is streamed from the
//! source when the response is sent (`respond::reply`), through the cipher when encrypted
//! (`protect::segment`).

use super::context::TitleRequest;
use super::hls::trick_play_not_offered;
use crate::package::trick::prepare_key_frame;
use crate::package::{prepare_media_segment, PackageError, Resource};
use crate::server::error::ServeError;
use crate::server::offload;
use crate::server::protect::segment::{protect_segment, protected_init};
use crate::server::respond::answer::{mp4_type, Answer, Content, SegmentRead};

/// `init-tN.mp4`: clear, or with the protected sample entries of `cenc`/`cbcs`.
///
/// # Errors
/// [`ServeError::NoRendition`] for a track that is no rendition; a codec that cannot be
/// encrypted.
pub fn init(req: &TitleRequest<'_>, track_id: u32) -> Result<Answer, ServeError> {
    let kind = req.rendition(track_id)?.kind;
    let init = match &req.protected {
        Some(p) => protected_init(&req.cached, track_id, p)?,
        None => (req.cached.init_segment(track_id)).ok_or(ServeError::NoRendition(track_id))?,
    };
    Ok(req.answer(Content::Inline(init), mp4_type(kind)))
}

/// `seg-tN-K.m4s` (media segment K) or `ifr-tN-J.m4s` (key frame J, clear only).
///
/// # Errors
/// [`ServeError::NoRendition`], a segment past the plan, a key frame of an encrypted output,
/// and the encryption's errors.
pub async fn segment(
    req: &TitleRequest<'_>,
    track_id: u32,
    number: u64,
) -> Result<Answer, ServeError> {
    let key_frame = matches!(req.resource, Resource::KeyFrame { .. });
    if key_frame && req.protected.is_some() {
        return Err(trick_play_not_offered());
    }
    let kind = req.rendition(track_id)?.kind;
    let (key, identity) = req.object_of(track_id);
    let title = req.cached.clone();
    let assemble = tracing::info_span!(
        "segment.assemble",
        vod.track_id = track_id,
        vod.segment = number
    );
    // A key frame is one sample; a media segment, its track's samples in the plan.
    let samples = match key_frame {
        true => 1,
        false => (req.cached.title.rendition(track_id))
            .and_then(|r| req.cached.title.plan.tracks.get(r.track_pos))
            .and_then(|t| {
                t.samples(usize::try_from(number.saturating_sub(1)).unwrap_or(usize::MAX))
            })
            .map_or(usize::MAX, |r| r.len()),
    };
    let prepared = Box::pin(offload::assemble(assemble, samples, move || {
        let title = &title.title;
        let rendition = title.rendition(track_id).ok_or(PackageError::NoSuchTrack {
            track: u64::from(track_id),
        })?;
        match key_frame {
            true => prepare_key_frame(title, rendition, number),
            false => {
                let segment = usize::try_from(number - 1).unwrap_or(usize::MAX);
                prepare_media_segment(&title.index, &title.plan, rendition.track_pos, segment)
            }
        }
    }))
    .await?;
    let content = match &req.protected {
        Some(p) => {
            let source = (
                req.app.catalog.source(),
                req.app.settings.stream_chunk_bytes,
            );
            let segment = Box::pin(protect_segment(
                source,
                (&key, &identity),
                &req.cached,
                (track_id, number),
                prepared,
                p,
            ))
            .await?;
            Content::Protected {
                key,
                identity,
                segment,
            }
        }
        None => {
            let ranges = prepared.ranges.len();
            let reads = vec![SegmentRead {
                key,
                identity,
                ranges,
            }];
            Content::Segment { prepared, reads }
        }
    };
    Ok(req.answer(content, mp4_type(kind)))
}
