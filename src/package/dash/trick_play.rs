//! The trick-play AdaptationSet of a video set (DASH-IF IOP 3.2.9): its Representations'
//! segments are the key frames that `package::trick` lists.

use super::tag::Tag;
use super::{square_pixels, write_timeline, Uris};
use crate::media::{TrackIndex, TrackKind};
use crate::package::{trick, Rendition, Resource, Title};

/// DASH-IF IOP 3.2.9: an AdaptationSet of trick-play Representations for the set named.
const TRICKMODE_SCHEME: &str = "http://dashif.org/guidelines/trickmode";

/// The trick-play AdaptationSet of video set `main_id` (DASH-IF IOP 3.2.9): an
/// `EssentialProperty` `http://dashif.org/guidelines/trickmode` naming the set, so
/// players that do not do trick play leave it alone, and one Representation per video
/// rendition whose segments are its key frames ([`trick`]), each lasting until the next;
/// `codingDependency="false"` and `maxPlayoutRate` as the key frames allow. Returns
/// whether it wrote one (not for audio, nor for video without key frames).
pub(super) fn trick_adaptation_set(
    out: &mut String,
    title: &Title,
    id: usize,
    main_id: usize,
    group: &[&Rendition],
    uris: &Uris<'_>,
) -> bool {
    let videos: Vec<(&Rendition, &TrackIndex, Vec<trick::KeyFrame>)> = (group.iter())
        .filter(|r| r.kind == TrackKind::Video)
        .filter_map(|r| Some((*r, title.index.tracks.get(r.track_pos)?)))
        .map(|(r, track)| (r, track, trick::key_frames(title, r)))
        .filter(|(_, _, frames)| !frames.is_empty())
        .collect();
    if videos.is_empty() {
        return false;
    }
    Tag::new(4, "AdaptationSet")
        .attr("id", id)
        .attr("contentType", "video")
        .attr("mimeType", "video/mp4")
        .attr("segmentAlignment", "true")
        .attr("startWithSAP", 1)
        .open(out);
    uris.protect(out);
    Tag::new(6, "EssentialProperty")
        .attr("schemeIdUri", TRICKMODE_SCHEME)
        .attr("value", main_id)
        .empty(out);
    let folder = uris.folder;
    for (rendition, track, frames) in videos {
        let codec = &track.codec;
        let rates = trick::rates(&frames, rendition, track.timescale);
        let size = (codec.width > 0 && codec.height > 0).then_some((codec.width, codec.height));
        Tag::new(6, "Representation")
            .attr(
                "id",
                Resource::dash_trick_representation_id(rendition.track_id),
            )
            .opt("codecs", Some(&codec.rfc6381).filter(|c| !c.is_empty()))
            .attr("bandwidth", rates.peak_bandwidth)
            .opt("width", size.map(|s| s.0))
            .opt("height", size.map(|s| s.1))
            .opt("sar", square_pixels(track).then_some("1:1"))
            .attr("maxPlayoutRate", rates.max_playout_rate)
            .attr("codingDependency", "false")
            .open(out);
        let init = Resource::Init {
            track_id: rendition.track_id,
        };
        let shift = title.dash_presentation_offset_ticks(rendition.track_pos);
        Tag::new(8, "SegmentTemplate")
            .attr("timescale", track.timescale.max(1))
            .opt("presentationTimeOffset", Some(shift).filter(|s| *s > 0))
            .uri("initialization", format!("{folder}{init}"), uris.options)
            .uri(
                "media",
                format!(
                    "{folder}{}",
                    Resource::dash_trick_media_template(rendition.track_id)
                ),
                uris.options,
            )
            .attr("startNumber", 1)
            .open(out);
        let spans: Vec<(u64, u64)> = frames.iter().map(|f| (f.pts, f.duration)).collect();
        write_timeline(out, &spans);
        out.push_str("      </Representation>\n");
    }
    out.push_str("    </AdaptationSet>\n");
    true
}

/// Whether `group` has a video with key frames, so unfiltered it has a trick-play set.
pub(super) fn has_key_frames(title: &Title, group: &[&Rendition]) -> bool {
    (group.iter()).any(|r| r.kind == TrackKind::Video && !trick::key_frames(title, r).is_empty())
}
