//! The DASH MPD (ISO/IEC 23009-1): one static Period, one AdaptationSet per rendition,
//! each with a `SegmentTemplate` and an explicit `SegmentTimeline`.
//!
//! Owns the XML text only: MPD attributes and profiles (5.3.1, isoff-live 8.4 and the
//! CMAF profile), AdaptationSet/Representation attributes (5.3.3, 5.3.5, 5.3.7), Role
//! (5.8.5.5), colour descriptors (CICP, 5.8.5.x with ISO/IEC 23091-2 code points) and
//! Dolby Vision supplemental codecs (SCTE 214-1), and the number-based template with a
//! timeline (5.3.9.4, 5.3.9.6), and a trick-play set per video set (DASH-IF IOP 3.2.9). URLs are the relative templates of [`Resource`]; times
//! come from the segment plan.

use std::fmt::{Display, Write as _};

use super::{split_document_track_id, trick, version_folder, Rendition, Resource, Title};
use crate::media::{CodecInfo, TrackIndex, TrackKind, CICP_UNSPECIFIED};

const PROFILES: &str = "urn:mpeg:dash:profile:isoff-live:2011,urn:mpeg:dash:profile:cmaf:2019";
const ROLE_SCHEME: &str = "urn:mpeg:dash:role:2011";
/// DASH-IF IOP 3.2.9: an AdaptationSet of trick-play Representations for the set named.
const TRICKMODE_SCHEME: &str = "http://dashif.org/guidelines/trickmode";
const CHANNELS_SCHEME: &str = "urn:mpeg:dash:23003:3:audio_channel_configuration:2011";
/// The namespace of `scte214:supplementalCodecs` and `scte214:supplementalProfiles`.
const SCTE214_NAMESPACE: &str = "urn:scte:dash:scte214-extensions";

/// Render the MPD (`manifest.mpd`) of `title`.
///
/// Segments are numbered from 1 as in [`Resource::Segment`]; zero-length segments at the
/// start or end of a track (a track that starts late or ends early) are left out of its
/// timeline, `startNumber` keeping every other segment's number.
pub fn render_mpd(title: &Title) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    Tag::new(0, "MPD")
        .attr("xmlns", "urn:mpeg:dash:schema:mpd:2011")
        .opt("xmlns:scte214", supplemental_namespace(title))
        .attr("profiles", PROFILES)
        .attr("type", "static")
        .attr(
            "mediaPresentationDuration",
            seconds(title.period_duration_secs()),
        )
        .attr("minBufferTime", "PT2.000S")
        .open(&mut out);
    Tag::new(2, "Period")
        .attr("id", 0)
        .attr("start", "PT0S")
        .open(&mut out);
    let groups = adaptation_groups(title);
    for (set_id, group) in groups.iter().enumerate() {
        adaptation_set(&mut out, title, set_id, group);
    }
    let texts = text_adaptation_sets(&mut out, title, groups.len());
    // Trick-play sets come last, so every other set keeps its id.
    let mut next_id = groups.len() + texts;
    for (set_id, group) in groups.iter().enumerate() {
        if trick_adaptation_set(&mut out, title, next_id, set_id, group) {
            next_id += 1;
        }
    }
    out.push_str("  </Period>\n</MPD>\n");
    out
}

/// The renditions of each AdaptationSet. A plain file's: one set per rendition. A title
/// document's (issue 11): one video set holding the whole ladder (its Representations are
/// cut at the same times, so players switch between them), then one audio set per
/// language, in rendition order.
fn adaptation_groups(title: &Title) -> Vec<Vec<&Rendition>> {
    let document = (title.renditions.iter()).any(|r| split_document_track_id(r.track_id).is_some());
    if !document {
        return title.renditions.iter().map(|r| vec![r]).collect();
    }
    let mut groups: Vec<Vec<&Rendition>> = Vec::new();
    for rendition in &title.renditions {
        let language = |r: &Rendition| {
            let track = title.index.tracks.get(r.track_pos);
            track.and_then(|t| t.language.as_deref().filter(|l| !l.is_empty()))
        };
        let same = |group: &&mut Vec<&Rendition>| {
            group.first().is_some_and(|first| {
                first.kind == rendition.kind
                    && (rendition.kind == TrackKind::Video
                        || language(first) == language(rendition))
            })
        };
        match groups.iter_mut().find(same) {
            Some(group) => group.push(rendition),
            None => groups.push(vec![rendition]),
        }
    }
    groups
}

/// One AdaptationSet: the attributes of its first rendition, the largest picture of all,
/// and a Representation per rendition.
fn adaptation_set(out: &mut String, title: &Title, id: usize, group: &[&Rendition]) {
    let Some(r) = group.first() else {
        return;
    };
    let Some(track) = title.index.tracks.get(r.track_pos) else {
        return;
    };
    let (kind, codec) = (r.kind.as_str(), &track.codec);
    let video = r.kind == TrackKind::Video;
    let sizes = (group.iter())
        .filter_map(|r| title.index.tracks.get(r.track_pos))
        .map(|t| (t.codec.width, t.codec.height))
        .filter(|(w, h)| video && *w > 0 && *h > 0);
    let size = sizes.fold(None, |max: Option<(u16, u16)>, (w, h)| {
        Some(max.map_or((w, h), |(mw, mh)| (mw.max(w), mh.max(h))))
    });
    Tag::new(4, "AdaptationSet")
        .attr("id", id)
        .attr("contentType", kind)
        .attr("mimeType", format_args!("{kind}/mp4"))
        .opt("lang", track.language.as_deref().filter(|l| !l.is_empty()))
        .attr("segmentAlignment", "true")
        .attr("startWithSAP", 1)
        .opt("maxWidth", size.map(|s| s.0))
        .opt("maxHeight", size.map(|s| s.1))
        .open(out);
    if video {
        colour_properties(out, codec);
    }
    let default = group.iter().any(|r| r.is_default);
    if !video && default {
        Tag::new(6, "Role")
            .attr("schemeIdUri", ROLE_SCHEME)
            .attr("value", "main")
            .empty(out);
    } else if !video && split_document_track_id(r.track_id).is_some() {
        // A document's other languages: said outright, as one set per language.
        Tag::new(6, "Role")
            .attr("schemeIdUri", ROLE_SCHEME)
            .attr("value", "alternate")
            .empty(out);
    }
    for r in group {
        if let Some(track) = title.index.tracks.get(r.track_pos) {
            representation(out, title, r, track);
        }
    }
    out.push_str("    </AdaptationSet>\n");
}

/// One Representation with its segment template and timeline.
fn representation(out: &mut String, title: &Title, r: &Rendition, track: &TrackIndex) {
    let codec = &track.codec;
    let video = r.kind == TrackKind::Video;
    let size =
        (video && codec.width > 0 && codec.height > 0).then_some((codec.width, codec.height));
    Tag::new(6, "Representation")
        .attr("id", Resource::dash_representation_id(r.track_id))
        .opt("codecs", Some(&codec.rfc6381).filter(|c| !c.is_empty()))
        .opt(
            "scte214:supplementalCodecs",
            supplemental(codec).map(|dv| dv.codec()),
        )
        .opt(
            "scte214:supplementalProfiles",
            supplemental(codec).and_then(|dv| dv.brand()),
        )
        .attr("bandwidth", r.peak_bandwidth)
        .opt("width", size.map(|s| s.0))
        .opt("height", size.map(|s| s.1))
        .opt(
            "frameRate",
            r.frame_rate.filter(|_| video).and_then(frame_rate),
        )
        .opt("sar", (video && square_pixels(track)).then_some("1:1"))
        .opt(
            "audioSamplingRate",
            Some(codec.sample_rate).filter(|s| !video && *s > 0),
        )
        .open(out);
    if !video && codec.channels > 0 {
        Tag::new(8, "AudioChannelConfiguration")
            .attr("schemeIdUri", CHANNELS_SCHEME)
            .attr("value", codec.channels)
            .empty(out);
    }
    segment_template(out, title, r, track);
    out.push_str("      </Representation>\n");
}

/// One AdaptationSet per text track, embedded tracks first, then a title document's sidecar
/// files: a single WebVTT file (`text/vtt`, its cues on the Period timeline) named by
/// `BaseURL`, the sideloaded form dash.js and Shaka both render (ISO/IEC 23009-1 5.3.3 with
/// a Representation that is one whole resource), with the track's language and Role
/// `subtitle` (`forced-subtitle` for a forced sidecar). `codecs="wvtt"` (the WebVTT 4CC of ISO/IEC
/// 14496-30) is there for checkers that want `@codecs` on every Representation; dash.js
/// 5.2 and Shaka 5.2 render the set with and without it.
/// Returns how many sets it wrote.
fn text_adaptation_sets(out: &mut String, title: &Title, first_id: usize) -> usize {
    let folder = version_folder(&title.version_token());
    let duration = title.period_duration_secs();
    let embedded = title.index.text_tracks.iter().map(|text| TextSet {
        track_id: text.track_id,
        language: text.language.as_deref(),
        forced: false,
        bytes: text.samples.sizes.iter().map(|s| u64::from(*s)).sum(),
    });
    let sidecars = title.sidecars.iter().map(|sidecar| TextSet {
        track_id: sidecar.track_id,
        language: sidecar.language.as_deref(),
        forced: sidecar.forced,
        bytes: sidecar.size_bytes,
    });
    let mut written = 0;
    for (n, set) in embedded.chain(sidecars).enumerate() {
        text_adaptation_set(out, &set, first_id + n, &folder, duration);
        written += 1;
    }
    written
}

/// The trick-play AdaptationSet of video set `main_id` (DASH-IF IOP 3.2.9): an
/// `EssentialProperty` `http://dashif.org/guidelines/trickmode` naming the set, so
/// players that do not do trick play leave it alone, and one Representation per video
/// rendition whose segments are its key frames ([`trick`]), each lasting until the next;
/// `codingDependency="false"` and `maxPlayoutRate` as the key frames allow. Returns
/// whether it wrote one (not for audio, nor for video without key frames).
fn trick_adaptation_set(
    out: &mut String,
    title: &Title,
    id: usize,
    main_id: usize,
    group: &[&Rendition],
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
    Tag::new(6, "EssentialProperty")
        .attr("schemeIdUri", TRICKMODE_SCHEME)
        .attr("value", main_id)
        .empty(out);
    let folder = version_folder(&title.version_token());
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
            .attr("initialization", format!("{folder}{init}"))
            .attr(
                "media",
                format!(
                    "{folder}{}",
                    Resource::dash_trick_media_template(rendition.track_id)
                ),
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

/// What a text AdaptationSet says of its one WebVTT file.
struct TextSet<'a> {
    track_id: u32,
    language: Option<&'a str>,
    /// Forced narrative (Role `forced-subtitle`), else Role `subtitle`.
    forced: bool,
    /// The file's size in the source, for its bandwidth.
    bytes: u64,
}

fn text_adaptation_set(out: &mut String, set: &TextSet, id: usize, folder: &str, duration: f64) {
    Tag::new(4, "AdaptationSet")
        .attr("id", id)
        .attr("contentType", "text")
        .attr("mimeType", "text/vtt")
        .opt("lang", set.language.filter(|l| !l.is_empty()))
        .open(out);
    // 5.8.5.5: `forced-subtitle` for forced narrative, else `subtitle`.
    let role = if set.forced {
        "forced-subtitle"
    } else {
        "subtitle"
    };
    Tag::new(6, "Role")
        .attr("schemeIdUri", ROLE_SCHEME)
        .attr("value", role)
        .empty(out);
    // The file's size over the title's duration: what fetching it costs.
    let bandwidth = match duration > 0.0 {
        true => (set.bytes as f64 * 8.0 / duration).ceil() as u64,
        false => 0,
    };
    Tag::new(6, "Representation")
        .attr("id", Resource::dash_representation_id(set.track_id))
        .attr("codecs", "wvtt")
        .attr("bandwidth", bandwidth.max(1))
        .open(out);
    let file = Resource::SubtitleFile {
        track_id: set.track_id,
    };
    let _ = writeln!(
        out,
        "        <BaseURL>{}</BaseURL>",
        escape(&format!("{folder}{file}"))
    );
    out.push_str("      </Representation>\n    </AdaptationSet>\n");
}

/// The colour of a video track as CICP descriptors (DASH-IF IOP 5, ISO/IEC 23091-2
/// code points; ISO/IEC 23009-1 5.8.5.x): one `SupplementalProperty` each for colour
/// primaries, transfer characteristics (16 PQ, 18 HLG) and matrix coefficients, leaving
/// out those the file leaves unspecified. Supplemental, not essential, so a player that
/// does not know them still sees the Representation.
fn colour_properties(out: &mut String, codec: &CodecInfo) {
    let Some(color) = codec.color else {
        return;
    };
    let descriptors = [
        ("urn:mpeg:mpegB:cicp:ColourPrimaries", color.primaries),
        (
            "urn:mpeg:mpegB:cicp:TransferCharacteristics",
            color.transfer,
        ),
        ("urn:mpeg:mpegB:cicp:MatrixCoefficients", color.matrix),
    ];
    for (scheme, value) in descriptors {
        if value != CICP_UNSPECIFIED {
            Tag::new(6, "SupplementalProperty")
                .attr("schemeIdUri", scheme)
                .attr("value", value)
                .empty(out);
        }
    }
}

/// The Dolby Vision layer a track carries on top of a base layer other players decode
/// (profiles 8.x, 9.x, 10.x with a compatibility id), named in SCTE 214-1
/// `supplementalCodecs` (`dvh1.08.07`) and `supplementalProfiles` (`db1p`), as DASH-IF
/// IOP 5 and Shaka Packager write it; `@codecs` keeps the base codec.
fn supplemental(codec: &CodecInfo) -> Option<crate::media::DolbyVision> {
    codec.supplemental_dolby_vision()
}

/// `xmlns:scte214` on the MPD when some Representation uses it.
fn supplemental_namespace(title: &Title) -> Option<&'static str> {
    let used = title
        .index
        .tracks
        .iter()
        .any(|t| supplemental(&t.codec).is_some());
    used.then_some(SCTE214_NAMESPACE)
}

fn segment_template(out: &mut String, title: &Title, rendition: &Rendition, track: &TrackIndex) {
    let spans: Vec<(u64, u64)> = (title.plan.tracks.get(rendition.track_pos))
        .map(|plan| {
            (0..title.plan.segment_count)
                .map(|k| plan.segment_span(&track.samples, k).unwrap_or((0, 0)))
                .collect()
        })
        .unwrap_or_default();
    // Leave out zero-length segments at either end; keep all if every one is.
    let first = spans.iter().position(|s| s.1 > 0);
    let last = spans.iter().rposition(|s| s.1 > 0);
    let listed = match (first, last) {
        (Some(first), Some(last)) => first..last + 1,
        _ => 0..spans.len(),
    };
    let folder = version_folder(&title.version_token());
    let shift = title.dash_presentation_offset_ticks(rendition.track_pos);
    Tag::new(8, "SegmentTemplate")
        .attr("timescale", track.timescale.max(1))
        .opt("presentationTimeOffset", Some(shift).filter(|s| *s > 0))
        .attr(
            "initialization",
            format!("{folder}{}", Resource::DASH_INIT_TEMPLATE),
        )
        .attr(
            "media",
            format!("{folder}{}", Resource::DASH_MEDIA_TEMPLATE),
        )
        .attr("startNumber", listed.start + 1)
        .open(out);
    write_timeline(out, spans.get(listed).unwrap_or_default());
}

/// A `SegmentTimeline` of `spans` (start, duration) and the end of its `SegmentTemplate`.
fn write_timeline(out: &mut String, spans: &[(u64, u64)]) {
    out.push_str("          <SegmentTimeline>");
    for (t, d, r) in timeline(spans) {
        let s = Tag::new(0, "S")
            .opt("t", t)
            .attr("d", d)
            .opt("r", Some(r).filter(|r| *r > 0));
        out.push_str(&s.0);
        out.push_str("/>");
    }
    out.push_str("</SegmentTimeline>\n        </SegmentTemplate>\n");
}

/// `S` elements as (t, d, r): runs of equal, contiguous durations merge into one with
/// `r` repeats; `t` is given for the first and for any that does not follow on.
fn timeline(spans: &[(u64, u64)]) -> Vec<(Option<u64>, u64, u64)> {
    let mut entries: Vec<(Option<u64>, u64, u64)> = Vec::new();
    let mut next: Option<u64> = None;
    for &(start, duration) in spans {
        let contiguous = next == Some(start);
        match entries.last_mut() {
            Some(last) if contiguous && last.1 == duration => last.2 += 1,
            _ => entries.push(((!contiguous).then_some(start), duration, 0)),
        }
        next = Some(start.saturating_add(duration));
    }
    entries
}

/// An `xs:duration` in seconds with millisecond precision.
fn seconds(secs: f64) -> String {
    format!(
        "PT{:.3}S",
        if secs.is_finite() { secs.max(0.0) } else { 0.0 }
    )
}

/// `frameRate` (a FrameRateType): an integer, a common NTSC rate, or N/1000 reduced.
fn frame_rate(rate: f64) -> Option<String> {
    if !rate.is_finite() || rate <= 0.0 || rate > 1_000_000.0 {
        return None;
    }
    // The rate is measured over the whole track, so allow for a tick of rounding.
    if (rate - rate.round()).abs() < 0.002 {
        return Some(format!("{}", rate.round() as u64));
    }
    for numerator in [24_000u64, 30_000, 48_000, 60_000, 120_000] {
        if (rate - numerator as f64 / 1001.0).abs() < 0.002 {
            return Some(format!("{numerator}/1001"));
        }
    }
    let milli = (rate * 1000.0).round() as u64;
    let divisor = gcd(milli, 1000);
    Some(format!("{}/{}", milli / divisor, 1000 / divisor))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a.max(1)
    } else {
        gcd(b, a % b)
    }
}

/// Whether the display size in `tkhd` equals the coded size, so `sar="1:1"` is true.
/// Anything else (anamorphic, rotated, unknown) leaves `sar` out rather than guess.
fn square_pixels(track: &TrackIndex) -> bool {
    let display = |fixed: u32| fixed.saturating_add(0x8000) >> 16;
    track.codec.width > 0
        && display(track.tkhd_width) == u32::from(track.codec.width)
        && display(track.tkhd_height) == u32::from(track.codec.height)
}

/// An XML start tag under construction, indented; attribute values are escaped here only.
struct Tag(String);

impl Tag {
    fn new(indent: usize, name: &str) -> Self {
        Self(format!("{:indent$}<{name}", ""))
    }

    fn attr(mut self, name: &str, value: impl Display) -> Self {
        let _ = write!(self.0, " {name}=\"{}\"", escape(&value.to_string()));
        self
    }

    fn opt(self, name: &str, value: Option<impl Display>) -> Self {
        match value {
            Some(value) => self.attr(name, value),
            None => self,
        }
    }

    /// End the start tag; the caller writes the content and the end tag.
    fn open(self, out: &mut String) {
        out.push_str(&self.0);
        out.push_str(">\n");
    }

    /// End the tag as an empty element.
    fn empty(self, out: &mut String) {
        out.push_str(&self.0);
        out.push_str("/>\n");
    }
}

/// Escape text for an XML attribute value in double quotes.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::hls::tests::title;

    /// 10 s of 30 fps video and 10 s of English audio, in 4 s segments.
    fn av_title() -> Title {
        title(|_| true, Vec::new())
    }

    /// The value of `name="..."` in `text`.
    fn attr<'a>(text: &'a str, name: &str) -> Option<&'a str> {
        let rest = &text[text.find(&format!(" {name}=\""))? + name.len() + 3..];
        Some(&rest[..rest.find('"')?])
    }

    /// Each Representation's text, from its attributes to its end tag, but for
    /// trick-play ones.
    fn representations(mpd: &str) -> Vec<&str> {
        all_representations(mpd)
            .into_iter()
            .filter(|r| !is_trick(r))
            .collect()
    }

    fn all_representations(mpd: &str) -> Vec<&str> {
        let reps = mpd.split("<Representation").skip(1);
        reps.map(|r| &r[..r.find("</Representation>").unwrap()])
            .collect()
    }

    fn is_trick(rep: &str) -> bool {
        attr(rep, "id").is_some_and(|id| id.starts_with("ifr-"))
    }

    /// Given a video with key frames, then the MPD offers them as a trick-play set of the
    /// video set: an essential property naming it, one Representation per video, its
    /// timeline the key frames' and its segments our key-frame resources.
    #[test]
    fn video_sets_have_a_trick_play_set_of_their_key_frames() {
        let title = av_title();
        let mpd = render_mpd(&title);
        let sets: Vec<&str> = mpd.split("<AdaptationSet").skip(1).collect();
        assert_eq!(sets.len(), 3, "video, audio, then trick play");
        assert_eq!(attr(sets[0], "id"), Some("0"));
        let trick = sets[2];
        assert_eq!(attr(trick, "id"), Some("2"));
        assert!(trick.contains(
            "<EssentialProperty schemeIdUri=\"http://dashif.org/guidelines/trickmode\" value=\"0\"/>"
        ));
        let reps = all_representations(trick);
        assert_eq!(reps.len(), 1);
        let rep = reps[0];
        assert_eq!(attr(rep, "id"), Some("ifr-t1"));
        assert_eq!(attr(rep, "codingDependency"), Some("false"));
        assert_eq!(attr(rep, "codecs"), Some("avc1.64000d"));
        let video = &title.renditions[0];
        let frames = trick::key_frames(&title, video);
        let timeline = rep.split("<SegmentTimeline>").nth(1).unwrap();
        let (mut count, mut t) = (0usize, 0u64);
        for s in timeline.split("<S").skip(1) {
            t = attr(s, "t").map_or(t, |t| t.parse().unwrap());
            let d: u64 = attr(s, "d").unwrap().parse().unwrap();
            let r: u64 = attr(s, "r").map_or(0, |r| r.parse().unwrap());
            for _ in 0..=r {
                assert_eq!((t, d), (frames[count].pts, frames[count].duration));
                (count, t) = (count + 1, t + d);
            }
        }
        assert_eq!(count, frames.len());
        let folder = version_folder(&title.version_token());
        let media = attr(rep, "media").unwrap().strip_prefix(folder.as_str());
        let first = media.unwrap().replace("$Number$", "1");
        assert_eq!(
            Resource::parse(&first),
            Some(Resource::KeyFrame {
                track_id: 1,
                number: 1
            })
        );
        let init = attr(rep, "initialization").unwrap();
        assert_eq!(init, format!("{folder}init-t1.mp4"));
    }

    #[test]
    fn timelines_cover_every_segment_and_the_whole_track() {
        let title = av_title();
        let mpd = render_mpd(&title);
        assert!(mpd.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<MPD xmlns="));
        let duration = format!("PT{:.3}S", title.period_duration_secs());
        assert_eq!(
            attr(&mpd, "mediaPresentationDuration"),
            Some(duration.as_str())
        );
        let reps = representations(&mpd);
        assert_eq!(reps.len(), 2);
        for (rep, rendition) in reps.iter().zip(&title.renditions) {
            let track = &title.index.tracks[rendition.track_pos];
            assert_eq!(
                attr(rep, "timescale"),
                Some(track.timescale.to_string().as_str())
            );
            let timeline = rep.split("<SegmentTimeline>").nth(1).unwrap();
            let timeline = &timeline[..timeline.find("</SegmentTimeline>").unwrap()];
            let (mut count, mut total) = (0, 0);
            for s in timeline.split("<S").skip(1) {
                let d: u64 = attr(s, "d").unwrap().parse().unwrap();
                let r: u64 = attr(s, "r").map_or(0, |r| r.parse().unwrap());
                (count, total) = (count + r + 1, total + d * (r + 1));
            }
            assert_eq!(attr(timeline, "t"), Some("0"));
            assert_eq!(count as usize, title.plan.segment_count);
            assert_eq!(total, track.duration_ticks());
        }
        // Video: 4 s, 4 s, 2 s merge into two S elements.
        assert!(reps[0].contains("<S t=\"0\" d=\"61440\" r=\"1\"/><S d=\"30720\"/>"));
    }

    #[test]
    fn sets_describe_their_media() {
        let mpd = render_mpd(&av_title());
        let reps = representations(&mpd);
        assert_eq!(attr(reps[0], "codecs"), Some("avc1.64000d"));
        assert_eq!(attr(reps[0], "frameRate"), Some("30"));
        assert_eq!(attr(reps[0], "sar"), Some("1:1"));
        assert_eq!(attr(reps[1], "audioSamplingRate"), Some("48000"));
        assert!(reps[1].contains("audio_channel_configuration:2011\" value=\"2\"/>"));
        let audio_set = mpd.split("<AdaptationSet").nth(2).unwrap();
        assert_eq!(attr(audio_set, "lang"), Some("eng"));
        assert_eq!(mpd.matches("<Role ").count(), 1);
        assert!(
            audio_set.contains("<Role schemeIdUri=\"urn:mpeg:dash:role:2011\" value=\"main\"/>")
        );
    }

    #[test]
    fn every_url_is_one_of_our_resources() {
        let title = av_title();
        let mpd = render_mpd(&title);
        let folder = version_folder(&title.version_token());
        for rep in representations(&mpd) {
            let id = attr(rep, "id").unwrap();
            let start: usize = attr(rep, "startNumber").unwrap().parse().unwrap();
            let init = attr(rep, "initialization")
                .unwrap()
                .strip_prefix(folder.as_str())
                .unwrap()
                .replace("$RepresentationID$", id);
            assert!(
                matches!(Resource::parse(&init), Some(Resource::Init { .. })),
                "{init}"
            );
            let media = attr(rep, "media")
                .unwrap()
                .strip_prefix(folder.as_str())
                .unwrap()
                .replace("$RepresentationID$", id);
            for number in start..start + title.plan.segment_count {
                let name = media.replace("$Number$", &number.to_string());
                assert!(
                    matches!(Resource::parse(&name), Some(Resource::Segment { .. })),
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn helpers_merge_timelines_write_frame_rates_and_escape() {
        let spans = [(10, 5), (15, 5), (20, 4), (30, 4), (34, 4)];
        let expected = [(Some(10), 5, 1), (None, 4, 0), (Some(30), 4, 1)];
        assert_eq!(timeline(&spans), expected);
        let rates = [30.0, 30_000.0 / 1001.0, 23.976, 12.5].map(|r| frame_rate(r).unwrap());
        assert_eq!(rates, ["30", "30000/1001", "24000/1001", "25/2"]);
        assert_eq!(frame_rate(f64::NAN), None);
        assert_eq!(escape("a&b<c>\"d"), "a&amp;b&lt;c&gt;&quot;d");
    }

    #[test]
    fn text_tracks_are_sideloaded_webvtt_sets_with_their_language() {
        let mut title = av_title();
        title.index.text_tracks = vec![
            crate::package::hls::tests::text(3, Some("eng")),
            crate::package::hls::tests::text(4, None),
        ];
        let mpd = render_mpd(&title);
        let sets: Vec<&str> = mpd.split("<AdaptationSet").skip(1).collect();
        assert_eq!(sets.len(), 5, "video, audio, two texts, trick play");
        let folder = version_folder(&title.version_token());
        for (set, (id, lang)) in sets[2..4].iter().zip([(3, Some("eng")), (4, None)]) {
            assert_eq!(attr(set, "contentType"), Some("text"));
            assert_eq!(attr(set, "mimeType"), Some("text/vtt"));
            assert_eq!(attr(set, "codecs"), Some("wvtt"));
            assert_eq!(attr(set, "lang"), lang);
            assert!(
                set.contains("<Role schemeIdUri=\"urn:mpeg:dash:role:2011\" value=\"subtitle\"/>")
            );
            assert!(!set.contains("SegmentTemplate"));
            // 100 bytes over 10 s.
            assert_eq!(attr(set, "bandwidth"), Some("80"));
            let url = &set[set.find("<BaseURL>").unwrap() + 9..set.find("</BaseURL>").unwrap()];
            let name = url.strip_prefix(folder.as_str()).unwrap();
            assert_eq!(
                Resource::parse(name),
                Some(Resource::SubtitleFile { track_id: id })
            );
        }
        // Set ids stay unique.
        let ids: Vec<Option<&str>> = sets.iter().map(|s| attr(s, "id")).collect();
        assert_eq!(ids, [Some("0"), Some("1"), Some("2"), Some("3"), Some("4")]);
    }

    #[test]
    fn hdr_video_carries_cicp_descriptors_and_its_dolby_vision_layer() {
        let mpd = render_mpd(&crate::package::hls::tests::hdr_title());
        assert!(mpd.contains(" xmlns:scte214=\"urn:scte:dash:scte214-extensions\" "));
        let video_set = mpd.split("<AdaptationSet").nth(1).unwrap();
        let video_set = &video_set[..video_set.find("<Representation").unwrap()];
        for (scheme, value) in [
            ("ColourPrimaries", 9),
            ("TransferCharacteristics", 16),
            ("MatrixCoefficients", 9),
        ] {
            let descriptor = format!(
                "<SupplementalProperty schemeIdUri=\"urn:mpeg:mpegB:cicp:{scheme}\" value=\"{value}\"/>"
            );
            assert!(video_set.contains(&descriptor), "{video_set}");
        }
        let reps = representations(&mpd);
        assert_eq!(attr(reps[0], "codecs"), Some("hvc1.2.4.L93.B0"));
        assert_eq!(
            attr(reps[0], "scte214:supplementalCodecs"),
            Some("dvh1.08.07")
        );
        assert_eq!(attr(reps[0], "scte214:supplementalProfiles"), Some("db1p"));
        // MP3 keeps its object type, spelt as Chromium matches it (its canPlayType says
        // "probably"; its MSE takes no MP3 in MP4 at all).
        assert_eq!(attr(reps[1], "codecs"), Some("mp4a.6B"));
        assert!(!reps[1].contains("scte214") && !reps[1].contains("cicp"));
        // An SDR title without colour information has neither.
        let sdr = render_mpd(&av_title());
        assert!(!sdr.contains("cicp") && !sdr.contains("scte214"), "{sdr}");
    }
}
