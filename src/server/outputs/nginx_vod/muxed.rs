//! Muxed fMP4 under the nginx-vod `hls` location: `index-v1-a1.m3u8`, `init-v1-a1.mp4` and
//! `seg-N-v1-a1.m4s` carry several tracks in one stream, as nginx-vod's
//! `vod_hls_container_format fmp4` serves them.
//!
//! The boxes are `package::fmp4`'s (a `trak` and a `traf` per track, the same writers as
//! the CMAF output), cut and timed as the CMAF segments of the same number, so the muxed
//! stream plays exactly what the demuxed renditions do. Segments stream from the source
//! like CMAF ones, each track's samples read from its own object. Encrypted output is not
//! muxed: with HLS encryption on, these names are 404 pointing at the single-track output.

use std::sync::Arc;

use bytes::Bytes;

use crate::media::TrackKind;
use crate::package::{
    muxed_init_segment, prepare_muxed_segment, render_muxed_media_playlist_with, Rendition,
    Resource, View,
};
use crate::server::app::App;
use crate::server::error::ServeError;
use crate::server::offload::assemble_off_runtime;
use crate::server::protect::manifest::{manifest_options, RequestPlace};
use crate::server::respond::answer::{Answer, Content, SegmentRead, M3U8, MANIFEST};
use crate::server::route::nginx_names::{Muxed, MuxedPart};
use crate::server::titles::load::load_view;
use crate::source::ObjectKey;

/// The answer to `muxed` of the title at `key` as `view` shows it, asked from `place` (a
/// signed-URL token is carried into the playlist's URLs).
///
/// # Errors
/// The title's load errors; 404 for a track the view does not have, a segment past the
/// plan, and when HLS encryption is on (muxed output is never encrypted, so it is not
/// offered: fail closed).
pub async fn answer(
    app: &Arc<App>,
    key: &ObjectKey,
    view: &View,
    muxed: &Muxed,
    place: &RequestPlace<'_>,
) -> Result<Answer, ServeError> {
    let (identity, cached) = load_view(&app.catalog, key, view).await?;
    let single: Vec<String> = (muxed.track_ids.iter())
        .map(|id| Resource::dash_representation_id(*id))
        .collect();
    let policy = cached.encryption.unwrap_or(app.protect.policy());
    if policy.hls.is_some() {
        return Err(ServeError::NotOffered(format!(
            "muxed fMP4 is not offered with HLS encryption: play master.m3u8, whose \
             encrypted renditions carry one track each ({})",
            single.join(", ")
        )));
    }
    let title = &cached.title;
    let members: Vec<&Rendition> = (muxed.track_ids.iter())
        .filter_map(|id| title.rendition(*id))
        .collect();
    if members.len() != muxed.track_ids.len() || members.is_empty() {
        return Err(ServeError::NotOffered("no such track in this title".into()));
    }
    let content_type = match members.iter().any(|r| r.kind == TrackKind::Video) {
        true => "video/mp4",
        false => "audio/mp4",
    };
    let etag = Some(format!("\"{}-{}\"", cached.token, muxed.name()));
    let content = match muxed.part {
        MuxedPart::Playlist => {
            let options = manifest_options(&app.protect, &cached, None, place);
            let playlist = render_muxed_media_playlist_with(
                title,
                &members,
                muxed.init_name(),
                |number| muxed.segment_name(number),
                &options,
            )
            .unwrap_or_default();
            return Ok(Answer {
                content: Content::Inline(Bytes::from(playlist)),
                content_type: M3U8,
                cache_control: MANIFEST,
                etag: etag.filter(|_| options.query.is_none()),
            });
        }
        MuxedPart::Init => {
            let tracks: Vec<_> = (members.iter())
                .filter_map(|r| title.index.tracks.get(r.track_pos))
                .collect();
            Content::Inline(Bytes::from(muxed_init_segment(&tracks)))
        }
        MuxedPart::Segment { number } => {
            let positions: Vec<usize> = members.iter().map(|r| r.track_pos).collect();
            let segment = usize::try_from(number.saturating_sub(1)).unwrap_or(usize::MAX);
            let title = cached.clone();
            let assemble = tracing::info_span!("segment.assemble", vod.segment = number);
            let prepared = assemble_off_runtime(assemble, move || {
                prepare_muxed_segment(&title.title.index, &title.title.plan, &positions, segment)
            })
            .await?;
            // Each track's ranges from its object (a title document's tracks may come
            // from several files), tracks of one object in one read.
            let mut reads: Vec<SegmentRead> = Vec::with_capacity(members.len());
            for (rendition, ranges) in members.iter().zip(&prepared.ranges_per_track) {
                let (k, i) = cached
                    .object_of(rendition.track_id)
                    .unwrap_or((key, &identity));
                match reads.last_mut() {
                    Some(last) if last.key == *k && last.identity == *i => last.ranges += ranges,
                    _ => reads.push(SegmentRead {
                        key: k.clone(),
                        identity: i.clone(),
                        ranges: *ranges,
                    }),
                }
            }
            Content::Segment {
                prepared: prepared.segment,
                reads,
            }
        }
    };
    // nginx-vod names carry no version folder: the manifest policy, as theirs.
    Ok(Answer {
        content,
        content_type,
        cache_control: MANIFEST,
        etag,
    })
}
