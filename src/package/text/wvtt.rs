//! WebVTT in ISO BMFF (ISO/IEC 14496-30 clause 7): the `wvtt` sample entry with its
//! `vttC` configuration (7.5), and samples of `vttc` cue boxes (`iden`, `sttg`, `payl`,
//! 7.4) or one `vtte` box where no cue shows.
//!
//! A segment's span is cut into samples at every cue start and end, so each sample holds
//! exactly the cues active over it (a cue lasting several samples is repeated in each,
//! as 7.2 asks) and the samples together fill the segment with no gap.

use super::{write_fragment, write_init, TextSegmentSpan, TextTrak, TimedCue};
use crate::package::fmp4::BoxWriter;

/// The `wvtt` init segment: handler `text`, `nmhd`, and a `wvtt` sample entry whose
/// `vttC` holds the WebVTT file header (`WEBVTT`, 7.5: no cues, no blank line).
pub(super) fn init_segment(track_id: u32, timescale: u32, language: Option<&str>) -> Vec<u8> {
    let mut entry = BoxWriter::with_capacity(48);
    entry.begin(b"wvtt");
    entry.zeros(6); // SampleEntry reserved
    entry.u16(1); // data_reference_index
    entry.begin(b"vttC");
    entry.bytes(b"WEBVTT");
    entry.end();
    entry.end();
    let entry = entry.finish();
    let trak = TextTrak {
        handler: (b"text", b"WebVTTHandler\0"),
        subtitle_header: false,
        sample_entry: &entry,
    };
    write_init(track_id, timescale, language, &trak)
}

/// The `moof` + `mdat` of `segment`: one sample per stretch between cue edges.
pub(super) fn media_segment(track_id: u32, segment: &TextSegmentSpan<'_>) -> Vec<u8> {
    let cues = segment.timed_cues();
    let samples = samples(&cues, segment.start_ticks, segment.end_ticks());
    write_fragment(track_id, segment.number, segment.start_ticks, &samples)
}

/// The samples covering `from..to` as (duration, bytes): cut at every cue edge, each
/// holding a `vttc` per cue active over it, or a `vtte`. A stretch longer than a `trun`
/// duration can say is split.
fn samples(cues: &[TimedCue<'_>], from: u64, to: u64) -> Vec<(u32, Vec<u8>)> {
    let mut edges: Vec<u64> = (cues.iter())
        .flat_map(|c| [c.start, c.end])
        .chain([from, to])
        .filter(|t| (from..=to).contains(t))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let mut out = Vec::with_capacity(edges.len());
    for pair in edges.windows(2) {
        let [start, end] = [pair[0], pair[1]];
        let active: Vec<&TimedCue<'_>> = cues
            .iter()
            .filter(|c| c.start <= start && c.end >= end)
            .collect();
        let bytes = sample_bytes(&active);
        let mut left = end - start;
        while left > 0 {
            let piece = u32::try_from(left).unwrap_or(u32::MAX);
            out.push((piece, bytes.clone()));
            left -= u64::from(piece);
        }
    }
    if out.is_empty() {
        // A segment with no duration still has its one (empty) sample.
        out.push((0, sample_bytes(&[])));
    }
    out
}

/// One sample: a `vttc` per cue (identifier, settings, payload), or a `vtte`.
fn sample_bytes(active: &[&TimedCue<'_>]) -> Vec<u8> {
    let mut w = BoxWriter::with_capacity(64);
    if active.is_empty() {
        w.begin(b"vtte");
        w.end();
    }
    for cue in active {
        w.begin(b"vttc");
        if let Some(id) = &cue.payload.id {
            w.begin(b"iden");
            w.bytes(id.as_bytes());
            w.end();
        }
        if let Some(settings) = &cue.payload.settings {
            w.begin(b"sttg");
            w.bytes(settings.as_bytes());
            w.end();
        }
        w.begin(b"payl");
        w.bytes(cue.payload.text.as_bytes());
        w.end();
        w.end();
    }
    w.finish()
}
