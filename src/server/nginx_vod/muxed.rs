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
use http::StatusCode;

use super::super::error::ErrorAnswer;
use super::super::handler::{assemble_off_runtime, SegmentRead};
use super::super::protect::{clear_manifest, RequestPlace};
use super::super::views::load_view;
use super::super::App;
use crate::media::TrackKind;
use crate::package::{
    muxed_init_segment, prepare_muxed_segment, render_muxed_media_playlist, PreparedSegment,
    Rendition, Resource, View,
};
use crate::source::ObjectKey;

/// A muxed resource: which part, of which tracks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Muxed {
    /// What is asked for.
    pub part: MuxedPart,
    /// The tracks, in the order the stream carries them: videos, then audios, each in
    /// file order (the title's rendition order).
    pub track_ids: Vec<u32>,
    /// The track tokens of the names (`v1-a1`, canonical: see `NginxName::track_tokens`),
    /// empty for a name without any; the playlist names its init and segments with them.
    pub tokens: String,
}

/// The part of a muxed stream a name asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MuxedPart {
    /// `index-TOKENS.m3u8`: the media playlist.
    Playlist,
    /// `init-TOKENS.mp4`.
    Init,
    /// `seg-N-TOKENS.m4s`, N 1-based.
    Segment { number: u64 },
}

impl Muxed {
    /// `-TOKENS`, or nothing for a name without tokens.
    fn suffix(&self) -> String {
        match self.tokens.is_empty() {
            true => String::new(),
            false => format!("-{}", self.tokens),
        }
    }

    /// The init segment's name.
    pub fn init_name(&self) -> String {
        format!("init{}.mp4", self.suffix())
    }

    /// Segment `number`'s name.
    pub fn segment_name(&self, number: u64) -> String {
        format!("seg-{number}{}.m4s", self.suffix())
    }

    /// The name of what is asked for (in the ETag).
    pub fn name(&self) -> String {
        match self.part {
            MuxedPart::Playlist => format!("index{}.m3u8", self.suffix()),
            MuxedPart::Init => self.init_name(),
            MuxedPart::Segment { number } => self.segment_name(number),
        }
    }
}

/// A muxed answer, for the handler to send.
pub struct MuxedAnswer {
    /// Its bytes, or the segment to stream.
    pub content: MuxedContent,
    /// Its content type.
    pub content_type: &'static str,
    /// Its ETag; `None` for a playlist carrying a signed-URL token.
    pub etag: Option<String>,
}

/// What a muxed answer holds.
pub enum MuxedContent {
    /// A playlist or init segment.
    Inline(Bytes),
    /// A segment: the header, then its ranges read from `reads`' objects in turn.
    Segment {
        prepared: PreparedSegment,
        reads: Vec<SegmentRead>,
    },
}

/// The answer to `muxed` of the title at `key` as `view` shows it, asked from `place` (a
/// signed-URL token is carried into the playlist's URLs).
///
/// # Errors
/// The title's load errors; 404 for a track the view does not have, a segment past the
/// plan, and when HLS encryption is on (muxed output is never encrypted, so it is not
/// offered: fail closed).
pub(in crate::server) async fn muxed_answer(
    app: &Arc<App>,
    key: &ObjectKey,
    view: &View,
    muxed: &Muxed,
    place: &RequestPlace<'_>,
) -> Result<MuxedAnswer, ErrorAnswer> {
    let (identity, cached) = load_view(app, key, view).await?;
    let single: Vec<String> = (muxed.track_ids.iter())
        .map(|id| Resource::dash_representation_id(*id))
        .collect();
    let policy = cached.encryption.unwrap_or(app.protect.policy());
    if policy.hls.is_some() {
        return Err(ErrorAnswer::new(
            StatusCode::NOT_FOUND,
            format!(
                "muxed fMP4 is not offered with HLS encryption: play master.m3u8, whose \
                 encrypted renditions carry one track each ({})",
                single.join(", ")
            ),
        ));
    }
    let title = &cached.title;
    let members: Vec<&Rendition> = (muxed.track_ids.iter())
        .filter_map(|id| title.rendition(*id))
        .collect();
    if members.len() != muxed.track_ids.len() || members.is_empty() {
        return Err(ErrorAnswer::new(
            StatusCode::NOT_FOUND,
            "no such track in this title",
        ));
    }
    let content_type = match members.iter().any(|r| r.kind == TrackKind::Video) {
        true => "video/mp4",
        false => "audio/mp4",
    };
    let etag = Some(format!("\"{}-{}\"", cached.token, muxed.name()));
    let content = match muxed.part {
        MuxedPart::Playlist => {
            let playlist =
                render_muxed_media_playlist(title, &members, muxed.init_name(), |number| {
                    muxed.segment_name(number)
                })
                .unwrap_or_default();
            let first = Resource::MediaPlaylist {
                track_id: members.first().map_or(0, |r| r.track_id),
            };
            let carries = RequestPlace::carries_token(app, place);
            let playlist = Bytes::from(playlist);
            return Ok(MuxedAnswer {
                content: MuxedContent::Inline(clear_manifest(app, &first, playlist, place.query)),
                content_type: "application/vnd.apple.mpegurl",
                etag: etag.filter(|_| !carries),
            });
        }
        MuxedPart::Init => {
            let tracks: Vec<_> = (members.iter())
                .filter_map(|r| title.index.tracks.get(r.track_pos))
                .collect();
            MuxedContent::Inline(Bytes::from(muxed_init_segment(&tracks)))
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
            MuxedContent::Segment {
                prepared: prepared.segment,
                reads,
            }
        }
    };
    Ok(MuxedAnswer {
        content,
        content_type,
        etag,
    })
}
