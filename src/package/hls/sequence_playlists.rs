//! The HLS playlists of a sequence: the multivariant playlist lists the
//! sequence's renditions once (the reference part's, each variant's rates the largest
//! and its `CODECS` every codec over the parts); each media and subtitle playlist runs
//! across every part, with `EXT-X-DISCONTINUITY` at each boundary (RFC 8216 4.3.2.3:
//! another encoding, another timeline) and the part's own `EXT-X-MAP` after it. A part's
//! segments keep their own numbers and times, named by the part (`seg-p2-f1-t1-3.m4s`).
//! A sequence's ad breaks are its parts' (each cut at the breaks that fall in it): every
//! part's first segment carries its program date, and each break its interstitial, as a
//! title's playlists do.

use std::fmt::Write as _;

use super::attrs::{Attrs, VERSION};
use super::break_tags::{write_marks, SegmentStart};
use super::media::{listed_segments, segment_micros};
use super::multivariant::multivariant_of;
use crate::package::signalling::ManifestOptions;
use crate::package::webvtt::SubtitlePlan;
use crate::package::{version_folder, Resource, Sequence, Title};

/// `master.m3u8` of `sequence`. Trick play and storyboards are not offered for sequences
/// (no I-frame playlist runs across parts), whatever `options` say.
pub fn render_sequence_multivariant(sequence: &Sequence, options: &ManifestOptions) -> String {
    let Some(reference) = sequence.parts.get(sequence.reference) else {
        return String::new();
    };
    let others: Vec<&Title> = (sequence.parts.iter().enumerate())
        .filter(|(n, _)| *n != sequence.reference)
        .map(|(_, p)| &p.title)
        .collect();
    let options = ManifestOptions {
        trick_play: false,
        storyboard: None,
        ..options.clone()
    };
    let folder = folder(sequence, &options);
    multivariant_of(&reference.title, &others, folder, &options)
}

/// `index-tN.m3u8` of rendition `track_id` of `sequence`, across its parts; `None` when
/// the sequence has no such rendition.
pub fn render_sequence_media_playlist(
    sequence: &Sequence,
    track_id: u32,
    options: &ManifestOptions,
) -> Option<String> {
    let mut parts = Vec::with_capacity(sequence.parts.len());
    for part in &sequence.parts {
        let rendition = part.title.rendition(track_id)?;
        let all = segment_micros(&part.title, rendition);
        let listed = listed_segments(&all);
        let first = listed.start as u64 + 1;
        parts.push((first, all.get(listed).unwrap_or_default().to_vec(), part));
    }
    let first = sequence.parts.first()?;
    let preroll = (first.title.rendition(track_id)).and_then(|r| first.title.video_preroll_secs(r));
    let mut out = header(parts.iter().flat_map(|p| &p.1), true);
    if let Some(offset) = preroll {
        let _ = writeln!(out, "#EXT-X-START:TIME-OFFSET={offset:.6},PRECISE=YES");
    }
    for (n, (first, durations, sequence_part)) in parts.iter().enumerate() {
        let part = u32::try_from(n + 1).ok()?;
        if n > 0 {
            out.push_str("#EXT-X-DISCONTINUITY\n");
        }
        let map = Resource::PartInit { part, track_id };
        let _ = writeln!(out, "#EXT-X-MAP:{}", Attrs::default().uri(map, options).0);
        let mut elapsed_us = 0u64;
        for (number, micros) in (*first..).zip(durations) {
            // Each part's program date and breaks, on its own clock.
            let at = SegmentStart {
                segment: number.saturating_sub(1) as usize,
                elapsed_ns: i128::from(elapsed_us) * 1000,
            };
            write_marks(
                &mut out,
                &sequence_part.title.breaks,
                at,
                number == *first,
                0,
            );
            elapsed_us = elapsed_us.saturating_add(*micros);
            let name = Resource::PartSegment {
                part,
                track_id,
                number,
            };
            extinf(&mut out, *micros, &options.with_query(&name.to_string()));
        }
    }
    out.push_str("#EXT-X-ENDLIST\n");
    Some(out)
}

/// `index-tN.m3u8` of text rendition `track_id` of `sequence`: each part's WebVTT
/// segments, cut as its video (a part without subtitles lists empty ones, so the cues of
/// later parts stay at their times); `None` when the sequence has no such text.
pub fn render_sequence_subtitle_playlist(
    sequence: &Sequence,
    track_id: u32,
    options: &ManifestOptions,
) -> Option<String> {
    if !sequence.is_text(track_id) {
        return None;
    }
    let plans: Vec<SubtitlePlan> = (sequence.parts.iter())
        .map(|p| SubtitlePlan::new(&p.title))
        .collect();
    let mut out = header(plans.iter().flat_map(|p| &p.durations_us), false);
    for (n, plan) in plans.iter().enumerate() {
        let part = u32::try_from(n + 1).ok()?;
        if n > 0 {
            out.push_str("#EXT-X-DISCONTINUITY\n");
        }
        let mut elapsed_us = 0u64;
        for (number, micros) in (plan.first_number..).zip(&plan.durations_us) {
            let at = SegmentStart {
                segment: number.saturating_sub(1) as usize,
                elapsed_ns: i128::from(elapsed_us) * 1000,
            };
            write_marks(&mut out, &plan.breaks, at, number == plan.first_number, 0);
            elapsed_us = elapsed_us.saturating_add(*micros);
            let name = Resource::PartSubtitleSegment {
                part,
                track_id,
                number,
            };
            extinf(&mut out, *micros, &options.with_query(&name.to_string()));
        }
    }
    out.push_str("#EXT-X-ENDLIST\n");
    Some(out)
}

/// The version folder of a sequence's resources: the options', else the sequence's own
/// (its reference part's title carries the sequence's identity: see the server's
/// sequences module).
fn folder(sequence: &Sequence, options: &ManifestOptions) -> String {
    match (&options.version, sequence.parts.get(sequence.reference)) {
        (Some(token), _) => version_folder(token),
        (None, Some(part)) => options.folder(&part.title),
        (None, None) => String::new(),
    }
}

/// A media playlist's header, its target duration the largest of `durations` (µs)
/// rounded (4.3.3.1).
fn header<'a>(durations: impl Iterator<Item = &'a u64>, independent: bool) -> String {
    let target = (durations.map(|d| (d + 500_000) / 1_000_000))
        .max()
        .unwrap_or(0)
        .max(1);
    let mut out = format!(
        "#EXTM3U\n#EXT-X-VERSION:{VERSION}\n#EXT-X-TARGETDURATION:{target}\n\
         #EXT-X-PLAYLIST-TYPE:VOD\n"
    );
    if independent {
        out.push_str("#EXT-X-INDEPENDENT-SEGMENTS\n");
    }
    out
}

fn extinf(out: &mut String, micros: u64, name: &str) {
    let (secs, fraction) = (micros / 1_000_000, micros % 1_000_000);
    let _ = writeln!(out, "#EXTINF:{secs}.{fraction:06},\n{name}");
}
