//! The text AdaptationSets of a Period: one per text track, embedded tracks first, then a
//! title document's sidecar files, in the form `ManifestOptions::dash_subtitles` asks:
//! - `wvtt` and `imsc1`: text segments (ISO/IEC 14496-30 in ISO BMFF, `application/mp4`,
//!   `codecs="wvtt"` or `"stpp.ttml.im1t"`) under a `SegmentTemplate` whose timeline is
//!   the reference rendition's (`SubtitlePlan`), in its timescale and with its
//!   `presentationTimeOffset`, so text segments line up with the video's;
//! - `webvtt-file`: one whole WebVTT file per track under `BaseURL`, for old players.
//!
//! Language and Role are the same in every form (ISO/IEC 23009-1 5.8.5.5).

use std::fmt::Write as _;

use super::tag::{escape, Tag};
use super::{write_timeline, Uris, ROLE_SCHEME};
use crate::package::signalling::{DashProfile, DashSubtitleFormat};
use crate::package::webvtt::SubtitlePlan;
use crate::package::{Resource, TextCoding, Title};

/// The `@codecs` of IMSC1 Text Profile in `stpp` (DASH-IF IOP 6.4.4; RFC 6381 as the
/// TTML profile registry spells it).
const IMSC1_CODECS: &str = "stpp.ttml.im1t";

/// One AdaptationSet per text track of `title` (or, for `empty_texts_of`, per text track
/// of that title: a sequence's Period without subtitles of its own lists the reference
/// part's, each empty, on `title`'s timeline). Returns how many sets it numbered, counting
/// those a filter leaves out, so the sets after them keep their ids.
pub(super) fn text_adaptation_sets(
    out: &mut String,
    title: &Title,
    empty_texts_of: Option<&Title>,
    first_id: usize,
    uris: &Uris<'_>,
) -> usize {
    let empty = empty_texts_of.is_some();
    let listed = empty_texts_of.unwrap_or(title);
    let embedded = listed.index.text_tracks.iter().map(|text| TextSet {
        track_id: text.track_id,
        language: text.language.as_deref(),
        forced: false,
        sdh: false,
        bytes: match empty {
            true => 0,
            false => text.samples.sizes.iter().map(|s| u64::from(*s)).sum(),
        },
    });
    let sidecars = listed.sidecars.iter().map(|sidecar| TextSet {
        track_id: sidecar.track_id,
        language: sidecar.language.as_deref(),
        forced: sidecar.forced,
        sdh: sidecar.sdh,
        bytes: if empty { 0 } else { sidecar.size_bytes },
    });
    let sets: Vec<TextSet<'_>> = embedded.chain(sidecars).collect();
    if sets.is_empty() {
        return 0;
    }
    let timeline = match uris.options.dash_text_format() {
        DashSubtitleFormat::WebvttFile => None,
        DashSubtitleFormat::Wvtt => Some(TextTimeline::of(title, TextCoding::Wvtt)),
        DashSubtitleFormat::Imsc1 => Some(TextTimeline::of(title, TextCoding::Imsc1)),
    };
    let duration = title.period_duration_secs();
    for (n, set) in sets.iter().enumerate() {
        if !uris.options.left_out(set.track_id) {
            text_adaptation_set(out, set, first_id + n, duration, timeline.as_ref(), uris);
        }
    }
    sets.len()
}

/// What a text AdaptationSet says of its track.
struct TextSet<'a> {
    track_id: u32,
    language: Option<&'a str>,
    /// Forced narrative (Role `forced-subtitle`), else Role `subtitle`.
    forced: bool,
    /// For the deaf and hard of hearing (Role `caption`).
    sdh: bool,
    /// The text's size in the source, for its bandwidth.
    bytes: u64,
}

/// The segment timeline text sets share in a Period: the reference rendition's segments.
struct TextTimeline {
    coding: TextCoding,
    timescale: u32,
    presentation_offset_ticks: u64,
    first_number: u64,
    spans: Vec<(u64, u64)>,
}

impl TextTimeline {
    fn of(title: &Title, coding: TextCoding) -> Self {
        let plan = SubtitlePlan::new(title);
        Self {
            coding,
            timescale: plan.reference.1.max(1),
            presentation_offset_ticks: title.dash_presentation_offset_ticks(plan.reference.0),
            first_number: plan.first_number,
            spans: plan.spans_ticks().to_vec(),
        }
    }
}

/// One text AdaptationSet: segments under `timeline`, or (`None`) the whole WebVTT file.
fn text_adaptation_set(
    out: &mut String,
    set: &TextSet,
    id: usize,
    duration: f64,
    timeline: Option<&TextTimeline>,
    uris: &Uris<'_>,
) {
    let dvb = uris.options.dash_profile == DashProfile::Dvb;
    let (mime, codecs) = match timeline.map(|t| t.coding) {
        None => ("text/vtt", "wvtt"),
        Some(TextCoding::Wvtt) => ("application/mp4", "wvtt"),
        // DVB-DASH 7.1.1: `@codecs` begins with `stpp`; DVB's own checks of the segments
        // look for exactly `stpp`, which every DVB terminal reads as EBU-TT-D.
        Some(TextCoding::Imsc1) if dvb => ("application/mp4", "stpp"),
        Some(TextCoding::Imsc1) => ("application/mp4", IMSC1_CODECS),
    };
    // As for audio and video in the DVB profile (`dvb.rs`): `@codecs` on the set, where
    // DVB's rules read a text set's, and `@mimeType` on the Representation.
    Tag::new(4, "AdaptationSet")
        .attr("id", id)
        .attr("contentType", "text")
        .opt("mimeType", (!dvb).then_some(mime))
        .opt("codecs", dvb.then_some(codecs))
        .opt("lang", set.language.filter(|l| !l.is_empty()))
        .opt("segmentAlignment", timeline.map(|_| "true"))
        .open(out);
    // 5.8.5.5: `forced-subtitle` for forced narrative, `caption` for subtitles that
    // also describe sound (SDH), else `subtitle`.
    let role = match (set.forced, set.sdh) {
        (true, _) => "forced-subtitle",
        (false, true) => "caption",
        (false, false) => "subtitle",
    };
    Tag::new(6, "Role")
        .attr("schemeIdUri", ROLE_SCHEME)
        .attr("value", role)
        .empty(out);
    // The text's size over the title's duration: what fetching it costs.
    let bandwidth = match duration > 0.0 {
        true => (set.bytes as f64 * 8.0 / duration).ceil() as u64,
        false => 0,
    };
    Tag::new(6, "Representation")
        .attr("id", Resource::dash_representation_id(set.track_id))
        .opt("mimeType", dvb.then_some(mime))
        .opt("codecs", (!dvb).then_some(codecs))
        .attr("bandwidth", bandwidth.max(1))
        .open(out);
    let part = uris.part.map(|(part, _)| part);
    match timeline {
        Some(timeline) => {
            let folder = uris.folder;
            let init = Resource::dash_text_init_template(timeline.coding, part);
            let media = Resource::dash_text_media_template(timeline.coding, part);
            Tag::new(8, "SegmentTemplate")
                .attr("timescale", timeline.timescale)
                .opt(
                    "presentationTimeOffset",
                    Some(timeline.presentation_offset_ticks).filter(|s| *s > 0),
                )
                .uri("initialization", format!("{folder}{init}"), uris.options)
                .uri("media", format!("{folder}{media}"), uris.options)
                .attr("startNumber", timeline.first_number)
                .open(out);
            write_timeline(out, &timeline.spans);
        }
        None => {
            let file = match part {
                Some(part) => Resource::PartSubtitleFile {
                    part,
                    track_id: set.track_id,
                },
                None => Resource::SubtitleFile {
                    track_id: set.track_id,
                },
            };
            let url = escape(&format!("{}{file}", uris.folder));
            let _ = writeln!(
                out,
                "        <BaseURL>{}</BaseURL>",
                uris.options.with_xml_query(&url)
            );
        }
    }
    out.push_str("      </Representation>\n    </AdaptationSet>\n");
}
