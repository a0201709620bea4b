//! The DASH MPD (ISO/IEC 23009-1): one static Period, one AdaptationSet per rendition,
//! each with a `SegmentTemplate` and an explicit `SegmentTimeline`.
//!
//! Owns the XML text only: URLs are the relative templates of [`Resource`], times come from
//! the segment plan, and what an MPD says beyond its title comes in as [`ManifestOptions`].
//! Beside it: trick-play sets (`trick_play.rs`), the storyboard as DASH-IF thumbnails
//! (`image.rs`), ad breaks as SCTE-35 events (`events.rs`), a sequence's Periods
//! (`sequence_periods.rs`), the text sets (`text.rs`) and what the DVB-DASH profile writes
//! differently (`dvb.rs`).

mod access;
mod dvb;
mod events;
mod image;
mod sequence_periods;
mod tag;
mod text;
mod trick_play;

use super::encrypt::manifest::{dash_content_protection, DASH_PROTECTION_NAMESPACES};
use super::signalling::{DashProfile, ManifestOptions, ManifestProtection};
use super::{split_document_track_id, Rendition, Resource, Title};
use crate::crypto::keys::ContentKey;
use crate::media::{CodecInfo, TrackIndex, TrackKind, CICP_UNSPECIFIED};
use events::event_stream;
pub use sequence_periods::render_sequence_mpd;
use tag::Tag;
use trick_play::{has_key_frames, trick_adaptation_set};

const PROFILES: &str = "urn:mpeg:dash:profile:isoff-live:2011,urn:mpeg:dash:profile:cmaf:2019";
const ROLE_SCHEME: &str = "urn:mpeg:dash:role:2011";
const CHANNELS_SCHEME: &str = "urn:mpeg:dash:23003:3:audio_channel_configuration:2011";
/// Sets a player may switch between as if one (ISO/IEC 23009-1 5.3.3.5).
const ADAPTATION_SET_SWITCHING: &str = "urn:mpeg:dash:adaptation-set-switching:2016";
/// The namespace of `scte35:Signal` and `scte35:Binary` (SCTE 35 2016 and later).
const SCTE35_NAMESPACE: &str = "http://www.scte.org/schemas/35/2016";
/// The namespace of `scte214:supplementalCodecs` and `scte214:supplementalProfiles`.
const SCTE214_NAMESPACE: &str = "urn:scte:dash:scte214-extensions";

/// Render the MPD (`manifest.mpd`) of `title`.
///
/// Segments are numbered from 1 as in [`Resource::Segment`]; zero-length segments at the
/// start or end of a track (a track that starts late or ends early) are left out of its
/// timeline, `startNumber` keeping every other segment's number.
pub fn render_mpd(title: &Title) -> String {
    render_mpd_with(title, &ManifestOptions::default())
}

/// [`render_mpd`] as `options` say: their version folder and query in every reference,
/// `ContentProtection` of their protection in each audio and video AdaptationSet, and the
/// trick-play sets only with trick play.
pub fn render_mpd_with(title: &Title, options: &ManifestOptions) -> String {
    let folder = options.folder(title);
    let protection = dash_protection(options);
    let uris = Uris {
        options,
        folder: &folder,
        protection: protection.as_ref(),
        part: None,
    };
    let mut out = mpd_start(
        &[title],
        title.period_duration_secs(),
        protection.is_some(),
        options.dash_profile,
    );
    Tag::new(2, "Period")
        .attr("id", 0)
        .attr("start", "PT0S")
        .open(&mut out);
    event_stream(&mut out, title);
    period_sets(&mut out, title, None, &uris);
    out.push_str("  </Period>\n</MPD>\n");
    out
}

/// What an MPD protected by `options` signals, if it is: one licence URL for every set
/// (its URL is a path under the public URL, with no query of its own, so the request's
/// token follows a `?`), and each track's key.
fn dash_protection(options: &ManifestOptions) -> Option<DashProtection<'_>> {
    options.protection.as_ref().map(|p| {
        let licence = match &options.query {
            Some(query) => format!("{}?{query}", p.licence_url),
            None => p.licence_url.clone(),
        };
        DashProtection {
            protection: p,
            licence,
        }
    })
}

/// The protection of an MPD's sets: the keys and the licence URL.
struct DashProtection<'p> {
    protection: &'p ManifestProtection,
    licence: String,
}

impl DashProtection<'_> {
    /// The `ContentProtection` elements of `key`, indented for a set's children.
    fn elements(&self, key: &ContentKey) -> String {
        let p = self.protection;
        dash_content_protection(p.scheme, key, &self.licence, p.clearkey)
    }
}

/// The XML declaration and the `MPD` start tag of a presentation of `titles` lasting
/// `duration_secs`, written by `profile`.
fn mpd_start(
    titles: &[&Title],
    duration_secs: f64,
    protected: bool,
    profile: DashProfile,
) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let mut mpd = Tag::new(0, "MPD");
    if protected {
        for (name, namespace) in DASH_PROTECTION_NAMESPACES {
            mpd = mpd.attr(name, namespace);
        }
    }
    let supplemental = titles.iter().find_map(|t| supplemental_namespace(t));
    let scte35 = (titles.iter().any(|t| !t.breaks.list.is_empty())).then_some(SCTE35_NAMESPACE);
    mpd.attr("xmlns", "urn:mpeg:dash:schema:mpd:2011")
        .opt("xmlns:scte214", supplemental)
        .opt("xmlns:scte35", scte35)
        .attr(
            "profiles",
            match profile {
                DashProfile::Default => PROFILES,
                DashProfile::Dvb => dvb::PROFILES,
            },
        )
        .attr("type", "static")
        .attr("mediaPresentationDuration", seconds(duration_secs))
        .attr("minBufferTime", "PT2.000S")
        .open(&mut out);
    out
}

/// The AdaptationSets of one Period showing `title`. Sets are made and numbered from every
/// rendition, then a filter's leave out their Representations (and a set left empty), so
/// what stays keeps its ids. `empty_texts_of`: a title whose text sets the Period lists as
/// empty files (a sequence's part without subtitles lists the reference part's).
fn period_sets(out: &mut String, title: &Title, empty_texts_of: Option<&Title>, uris: &Uris<'_>) {
    let options = uris.options;
    let (groups, switching) = split_by_key(adaptation_groups(title), uris);
    let mains = dvb::main_sets(&groups);
    for (set_id, group) in groups.iter().enumerate() {
        let main = [mains.video, mains.audio].contains(&Some(set_id));
        let switch_with = switching.get(set_id).map_or(&[][..], Vec::as_slice);
        let set = SetPlace {
            id: set_id,
            main,
            switch_with,
        };
        adaptation_set(out, title, set, &shown(group, options), uris);
    }
    let texts = text::text_adaptation_sets(out, title, empty_texts_of, groups.len(), uris);
    // Trick-play sets come last, so every other set keeps its id.
    let mut next_id = groups.len() + texts;
    for (set_id, group) in groups.iter().enumerate().filter(|_| options.trick_play) {
        let group_shown = shown(group, options);
        let written = trick_adaptation_set(out, title, next_id, set_id, &group_shown, uris);
        // A set a filter emptied keeps its id taken, as unfiltered.
        let emptied = !written && !options.filtered.is_empty() && has_key_frames(title, group);
        if written || emptied {
            next_id += 1;
        }
    }
    if let Some(board) = &options.storyboard {
        image::image_adaptation_set(out, next_id, board, uris);
    }
}

/// What the sets of one MPD write beyond the title: the options, their version folder,
/// and the `ContentProtection` elements of the audio and video sets.
struct Uris<'a> {
    options: &'a ManifestOptions,
    folder: &'a str,
    protection: Option<&'a DashProtection<'a>>,
    /// For a sequence's Period: the part (1-based) its resources are named by, and how it
    /// joins the previous Period (the scheme and that Period's id), if it does.
    part: Option<(u32, Option<(&'static str, usize)>)>,
}

impl Uris<'_> {
    /// The `ContentProtection` elements of the title's one key (or first key), right after
    /// a set's start tag (trick-play sets, never offered encrypted).
    fn protect(&self, out: &mut String) {
        if let Some(p) = self.protection {
            out.push_str(&p.elements(&p.protection.key));
        }
    }

    /// The `ContentProtection` elements of a set of `group`, right after its start tag:
    /// its one key's (`split_by_key` made every set's Representations share a key); a set
    /// whose tracks the split leaves clear has none.
    fn protect_set(&self, out: &mut String, group: &[&Rendition]) {
        let Some(p) = self.protection else {
            return;
        };
        if let Some(key) = group.first().and_then(|r| p.protection.key_of(r.track_id)) {
            out.push_str(&p.elements(key));
        }
    }

    /// The KID of `r`'s key, when the MPD is protected and `r` is encrypted.
    fn kid_of(&self, r: &Rendition) -> Option<[u8; 16]> {
        let p = self.protection?;
        p.protection.key_of(r.track_id).map(|k| k.kid)
    }
}

/// Where a set stands among the Period's: its id, whether it is the main set of its kind
/// (the DVB profile says so in a Role), and the ids of the sets a player may switch to
/// from it (the other parts of a group `split_by_key` divided).
struct SetPlace<'a> {
    id: usize,
    main: bool,
    switch_with: &'a [usize],
}

/// `groups` with each one divided by key: under a key split, a ladder's rungs of
/// different tiers (SD, HD, UHD keys) go to sets of their own, in rendition order, each
/// with its key on the set; and, per set, the ids of the others its group became.
///
/// Why sets and not per-Representation keys: DASH-IF IOP (v4.3 7.7.2) has one
/// `cenc:default_KID` per AdaptationSet, and players set up decryption per set: dash.js
/// 5.2 builds its ClearKey request from the set's KID only, Shaka 5.2 licenses a set's
/// keys. Switching across the tiers stays possible by MPEG's adaptation-set switching
/// (`urn:mpeg:dash:adaptation-set-switching:2016`, ISO/IEC 23009-1 5.3.3.5), which
/// dash.js follows and Shaka needs not (it switches across video sets anyway).
fn split_by_key<'r>(
    groups: Vec<Vec<&'r Rendition>>,
    uris: &Uris<'_>,
) -> (Vec<Vec<&'r Rendition>>, Vec<Vec<usize>>) {
    let mut sets: Vec<Vec<&Rendition>> = Vec::new();
    let mut switching: Vec<Vec<usize>> = Vec::new();
    for group in groups {
        let mut parts: Vec<(Option<[u8; 16]>, Vec<&Rendition>)> = Vec::new();
        for r in group {
            let kid = uris.kid_of(r);
            match parts.iter_mut().find(|(k, _)| *k == kid) {
                Some((_, part)) => part.push(r),
                None => parts.push((kid, vec![r])),
            }
        }
        let ids: Vec<usize> = (sets.len()..sets.len() + parts.len()).collect();
        for (i, (_, part)) in parts.into_iter().enumerate() {
            let others = ids.iter().copied().filter(|&id| id != ids[i]);
            switching.push(if ids.len() > 1 {
                others.collect()
            } else {
                Vec::new()
            });
            sets.push(part);
        }
    }
    (sets, switching)
}

/// The renditions of each AdaptationSet. A plain file's: one set per rendition. A title
/// document's: one video set holding the whole ladder (its Representations are
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
                        || (language(first) == language(rendition)
                            && first.roles == rendition.roles))
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
/// and a Representation per rendition. `main`: the set is the main one of its kind (the
/// DVB profile says so in a Role).
fn adaptation_set(
    out: &mut String,
    title: &Title,
    set: SetPlace<'_>,
    group: &[&Rendition],
    uris: &Uris<'_>,
) {
    let SetPlace {
        id,
        main,
        switch_with,
    } = set;
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
    let dvb = uris.options.dash_profile == DashProfile::Dvb;
    let set_codecs = dvb.then(|| dvb::shared_codecs(title, group)).flatten();
    Tag::new(4, "AdaptationSet")
        .attr("id", id)
        .attr("contentType", kind)
        // DVB's rules read it on each Representation, and DASH-IF's allow it in one place.
        .opt("mimeType", (!dvb).then(|| format!("{kind}/mp4")))
        .opt("codecs", set_codecs)
        .opt("lang", track.language.as_deref().filter(|l| !l.is_empty()))
        .attr("segmentAlignment", "true")
        .attr("startWithSAP", 1)
        .opt("maxWidth", size.map(|s| s.0))
        .opt("maxHeight", size.map(|s| s.1))
        .open(out);
    uris.protect_set(out, group);
    if video {
        colour_properties(out, codec);
        access::closed_captions(out, title);
    }
    if !switch_with.is_empty() {
        let ids: Vec<String> = switch_with.iter().map(usize::to_string).collect();
        Tag::new(6, "SupplementalProperty")
            .attr("schemeIdUri", ADAPTATION_SET_SWITCHING)
            .attr("value", ids.join(","))
            .empty(out);
    }
    if let Some((_, Some((scheme, previous)))) = uris.part {
        Tag::new(6, "SupplementalProperty")
            .attr("schemeIdUri", scheme)
            .attr("value", previous)
            .empty(out);
    }
    let default = group.iter().any(|r| r.is_default);
    if dvb {
        dvb::roles(out, r, main);
    } else if !video && !r.roles.is_empty() {
        access::audio_roles(out, &r.roles);
    } else if !video && default {
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
            representation(out, title, r, track, set_codecs.is_some(), uris);
        }
    }
    out.push_str("    </AdaptationSet>\n");
}

/// One Representation with its segment template and timeline; `codecs_on_set`: its set
/// carries the `@codecs` (the DVB profile's), so it does not.
fn representation(
    out: &mut String,
    title: &Title,
    r: &Rendition,
    track: &TrackIndex,
    codecs_on_set: bool,
    uris: &Uris<'_>,
) {
    let codec = &track.codec;
    let video = r.kind == TrackKind::Video;
    let dvb = uris.options.dash_profile == DashProfile::Dvb;
    let size =
        (video && codec.width > 0 && codec.height > 0).then_some((codec.width, codec.height));
    // DVB's rules read `@mimeType` on each Representation (TS 103 285 6.1.1, Table 4).
    let mime = dvb.then(|| format!("{}/mp4", r.kind.as_str()));
    Tag::new(6, "Representation")
        .attr("id", Resource::dash_representation_id(r.track_id))
        .opt("mimeType", mime)
        .opt(
            "codecs",
            Some(&codec.rfc6381).filter(|c| !c.is_empty() && !codecs_on_set),
        )
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
    if !video && dvb {
        dvb::channel_configuration(out, codec, CHANNELS_SCHEME);
    } else if !video && codec.channels > 0 {
        Tag::new(8, "AudioChannelConfiguration")
            .attr("schemeIdUri", CHANNELS_SCHEME)
            .attr("value", codec.channels)
            .empty(out);
    }
    segment_template(out, title, r, track, uris);
    out.push_str("      </Representation>\n");
}

/// The renditions of `group` a filter leaves in.
fn shown<'a>(group: &[&'a Rendition], options: &ManifestOptions) -> Vec<&'a Rendition> {
    let kept = group.iter().filter(|r| !options.left_out(r.track_id));
    kept.copied().collect()
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

fn segment_template(
    out: &mut String,
    title: &Title,
    rendition: &Rendition,
    track: &TrackIndex,
    uris: &Uris<'_>,
) {
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
    let folder = uris.folder;
    let shift = title.dash_presentation_offset_ticks(rendition.track_pos);
    Tag::new(8, "SegmentTemplate")
        .attr("timescale", track.timescale.max(1))
        .opt("presentationTimeOffset", Some(shift).filter(|s| *s > 0))
        .uri(
            "initialization",
            match uris.part {
                Some((part, _)) => format!("{folder}{}", Resource::dash_part_init_template(part)),
                None => format!("{folder}{}", Resource::DASH_INIT_TEMPLATE),
            },
            uris.options,
        )
        .uri(
            "media",
            match uris.part {
                Some((part, _)) => format!("{folder}{}", Resource::dash_part_media_template(part)),
                None => format!("{folder}{}", Resource::DASH_MEDIA_TEMPLATE),
            },
            uris.options,
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

#[cfg(test)]
mod tests;
