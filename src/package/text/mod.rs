//! DASH text segments: a text track's cues as ISO BMFF init and media segments, in
//! WebVTT (`wvtt.rs`) or IMSC1 TTML (`imsc1.rs`), ISO/IEC 14496-30.
//!
//! Owns the boxes and the cue timing inside a segment; which cues a segment holds (and
//! reading them) belongs to `package::webvtt` and the server. Text segments are cut at the
//! title's subtitle segment times ([`SubtitlePlan`], the reference rendition's segments)
//! and timed in the reference's timescale, so each segment's `tfdt` and duration equal the
//! reference's and a cue at source time t shows with the video frame at t. Segments are
//! small and written whole (no source ranges to stream), like the WebVTT ones.

mod imsc1;
mod markup;
mod wvtt;

#[cfg(test)]
mod tests;

use super::fmp4::{packed_language, write_dinf_and_empty_stbl, BoxWriter};
use super::webvtt::{Cue, SubtitlePlan};
use super::{PackageError, TextCoding};
use crate::media::SampleCue;

/// One DASH text segment: where it sits on the track's timeline and the cues it shows.
#[derive(Debug, Clone, Copy)]
pub struct TextSegmentSpan<'a> {
    /// Segment number (1-based), the `mfhd` sequence number.
    pub number: u64,
    /// Start in `timescale` ticks on the output timeline: the `tfdt`.
    pub start_ticks: u64,
    /// Duration in ticks: the sum of the samples' durations.
    pub duration_ticks: u64,
    /// The track's timescale (the reference rendition's).
    pub timescale: u32,
    /// The cues of the segment's window (output time), any order; cut to the segment here.
    pub cues: &'a [Cue],
}

impl<'a> TextSegmentSpan<'a> {
    /// Segment `number` of `plan` holding `cues`, or `None` past the plan's segments.
    pub fn of_plan(plan: &SubtitlePlan, number: u64, cues: &'a [Cue]) -> Option<Self> {
        let (start_ticks, duration_ticks) = plan.span_ticks(number)?;
        Some(Self {
            number,
            start_ticks,
            duration_ticks,
            timescale: plan.reference.1.max(1),
            cues,
        })
    }

    /// The end of the segment in ticks.
    fn end_ticks(&self) -> u64 {
        self.start_ticks.saturating_add(self.duration_ticks)
    }

    /// The cues shown in the segment, cut to it, in ticks; cues that round to nothing
    /// inside it are left out. In the order given.
    fn timed_cues(&self) -> Vec<TimedCue<'a>> {
        let ticks = |ns: i128| -> u64 {
            let t = ns.max(0).saturating_mul(i128::from(self.timescale)) + 500_000_000;
            u64::try_from(t / 1_000_000_000).unwrap_or(u64::MAX)
        };
        let (from, to) = (self.start_ticks, self.end_ticks());
        (self.cues.iter())
            .map(|cue| TimedCue {
                start: ticks(cue.start_ns).clamp(from, to),
                end: ticks(cue.end_ns).clamp(from, to),
                payload: &cue.payload,
            })
            .filter(|cue| cue.end > cue.start)
            .collect()
    }
}

/// A cue inside one segment: start and end in ticks (absolute, within the segment).
#[derive(Debug, Clone, Copy)]
struct TimedCue<'a> {
    start: u64,
    end: u64,
    payload: &'a SampleCue,
}

/// The init segment of a text track coded `coding`: ISO/IEC 14496-30 (`wvtt` with a
/// `vttC`, handler `text`, `nmhd`; or `stpp` for TTML, handler `subt`, `sthd`).
pub fn text_init_segment(
    coding: TextCoding,
    track_id: u32,
    timescale: u32,
    language: Option<&str>,
) -> Vec<u8> {
    match coding {
        TextCoding::Wvtt => wvtt::init_segment(track_id, timescale, language),
        TextCoding::Imsc1 => imsc1::init_segment(track_id, timescale, language),
    }
}

/// Most cues one text segment may hold. A real subtitle track shows a few cues in a
/// segment's seconds; a file with thousands at once is hostile, and `wvtt`'s samples cost
/// cues times cue edges to build.
pub const MAX_SEGMENT_CUES: usize = 2_000;

/// Most bytes one text segment may take, as bounded before it is written: a `wvtt`
/// sample repeats every cue active over it, so a long cue under many short ones is
/// written once per short one.
pub const MAX_SEGMENT_BYTES: u64 = 16 * 1024 * 1024;

/// Bytes a cue may cost in a sample beyond its text (boxes, markup, a TTML `p`).
const CUE_OVERHEAD_BYTES: u64 = 256;

/// A media segment of a text track coded `coding`: `moof` + `mdat` of `segment`'s cues
/// (an empty segment still fills its span: `vtte`, or a TTML document with no body).
///
/// # Errors
/// [`PackageError::TextSegmentTooLarge`] when the segment would hold more than
/// [`MAX_SEGMENT_CUES`] cues or, bounded from above, more than [`MAX_SEGMENT_BYTES`].
pub fn text_media_segment(
    coding: TextCoding,
    track_id: u32,
    language: Option<&str>,
    segment: &TextSegmentSpan<'_>,
) -> Result<Vec<u8>, PackageError> {
    check_segment_size(coding, segment)?;
    Ok(match coding {
        TextCoding::Wvtt => wvtt::media_segment(track_id, segment),
        TextCoding::Imsc1 => imsc1::media_segment(track_id, language, segment),
    })
}

/// Refuse a segment whose cues would cost too much to write: too many cues, or more bytes
/// than the limit, counted before writing: each cue once in a TTML document, and in a
/// `wvtt` segment once in every sample it spans (samples are cut at every cue edge).
fn check_segment_size(
    coding: TextCoding,
    segment: &TextSegmentSpan<'_>,
) -> Result<(), PackageError> {
    let cues = segment.timed_cues();
    let mut edges: Vec<u64> = (cues.iter()).flat_map(|c| [c.start, c.end]).collect();
    edges.sort_unstable();
    edges.dedup();
    let at = |t: u64| edges.partition_point(|e| *e < t) as u64;
    let bytes = (cues.iter())
        .map(|c| {
            let p = c.payload;
            let len = p.text.len()
                + p.id.as_ref().map_or(0, String::len)
                + p.settings.as_ref().map_or(0, String::len);
            // TTML's escapes may double the text.
            let once = (len as u64)
                .saturating_mul(2)
                .saturating_add(CUE_OVERHEAD_BYTES);
            let samples = match coding {
                TextCoding::Wvtt => at(c.end).saturating_sub(at(c.start)).max(1),
                TextCoding::Imsc1 => 1,
            };
            once.saturating_mul(samples)
        })
        .fold(0, u64::saturating_add);
    if cues.len() > MAX_SEGMENT_CUES || bytes > MAX_SEGMENT_BYTES {
        return Err(PackageError::TextSegmentTooLarge {
            number: segment.number,
            cues: cues.len(),
            bytes,
            max_cues: MAX_SEGMENT_CUES,
            max_bytes: MAX_SEGMENT_BYTES,
        });
    }
    Ok(())
}

/// How a text sample entry is described in the init segment.
struct TextTrak<'a> {
    /// `hdlr` handler type and name.
    handler: (&'a [u8; 4], &'a [u8]),
    /// Whether the media header is `sthd` (subtitle) rather than `nmhd` (null).
    subtitle_header: bool,
    /// The sample entry box, written whole.
    sample_entry: &'a [u8],
}

/// `ftyp` and `moov` of one text track with no samples, and `mvex` (ISO/IEC 14496-12
/// 8.8.1; CMAF's brands, as the audio and video inits).
fn write_init(
    track_id: u32,
    timescale: u32,
    language: Option<&str>,
    trak: &TextTrak<'_>,
) -> Vec<u8> {
    let mut w = BoxWriter::with_capacity(640 + trak.sample_entry.len());
    w.begin(b"ftyp");
    w.bytes(b"iso6");
    w.u32(0);
    for brand in [b"iso6", b"cmfc", b"mp41", b"dash"] {
        w.bytes(brand);
    }
    w.end();
    w.begin(b"moov");
    w.begin_full(b"mvhd", 0, 0);
    w.zeros(8); // creation, modification
    w.u32(timescale.max(1));
    w.u32(0); // duration: fragmented
    w.u32(0x0001_0000); // rate
    w.u16(0x0100); // volume
    w.zeros(10);
    UNITY.iter().for_each(|v| w.u32(*v));
    w.zeros(24);
    w.u32(track_id.saturating_add(1));
    w.end();
    w.begin(b"trak");
    w.begin_full(b"tkhd", 0, 0x3);
    w.zeros(8);
    w.u32(track_id);
    w.zeros(8); // reserved, duration
    w.zeros(8);
    w.zeros(8); // layer, alternate_group, volume, reserved
    UNITY.iter().for_each(|v| w.u32(*v));
    w.zeros(8); // width, height
    w.end();
    w.begin(b"mdia");
    w.begin_full(b"mdhd", 0, 0);
    w.zeros(8);
    w.u32(timescale.max(1));
    w.u32(0);
    w.u16(packed_language(&iso639_2(language.unwrap_or("und"))));
    w.u16(0);
    w.end();
    w.begin_full(b"hdlr", 0, 0);
    w.u32(0);
    w.bytes(trak.handler.0);
    w.zeros(12);
    w.bytes(trak.handler.1);
    w.end();
    w.begin(b"minf");
    match trak.subtitle_header {
        true => w.begin_full(b"sthd", 0, 0),
        false => w.begin_full(b"nmhd", 0, 0),
    }
    w.end();
    let mut stsd = BoxWriter::with_capacity(trak.sample_entry.len() + 16);
    stsd.begin_full(b"stsd", 0, 0);
    stsd.u32(1);
    stsd.bytes(trak.sample_entry);
    stsd.end();
    write_dinf_and_empty_stbl(&mut w, &stsd.finish());
    w.end(); // minf
    w.end(); // mdia
    w.end(); // trak
    w.begin(b"mvex");
    w.begin_full(b"trex", 0, 0);
    w.u32(track_id);
    w.u32(1);
    w.zeros(12);
    w.end();
    w.end();
    w.end(); // moov
    w.finish()
}

/// The identity matrix of `mvhd` and `tkhd` (ISO/IEC 14496-12 8.2.2).
const UNITY: [u32; 9] = [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000];

/// The ISO 639-2/T code `mdhd` holds for a language tag: three lowercase letters as given,
/// the common two-letter codes mapped, anything else `und` (the MPD's `lang` says it all).
fn iso639_2(tag: &str) -> String {
    let primary = tag
        .split(['-', '_'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let mapped = match primary.as_str() {
        "en" => "eng",
        "de" => "deu",
        "fr" => "fra",
        "es" => "spa",
        "it" => "ita",
        "nl" => "nld",
        "pt" => "por",
        "ja" => "jpn",
        "zh" => "zho",
        "ru" => "rus",
        "sv" => "swe",
        code if code.len() == 3 => code,
        _ => "und",
    };
    mapped.to_owned()
}

/// `moof` + `mdat` of one track fragment: `samples` as (duration ticks, bytes), all sync
/// samples, from `base_ticks` (ISO/IEC 14496-12 8.8; `tfhd` default-base-is-moof and a
/// version 1 `tfdt`, as CMAF asks).
fn write_fragment(
    track_id: u32,
    number: u64,
    base_ticks: u64,
    samples: &[(u32, Vec<u8>)],
) -> Vec<u8> {
    let payload: usize = samples.iter().map(|s| s.1.len()).sum();
    let mut w = BoxWriter::with_capacity(128 + 8 * samples.len() + payload);
    w.begin(b"moof");
    w.begin_full(b"mfhd", 0, 0);
    w.u32(u32::try_from(number).unwrap_or(u32::MAX));
    w.end();
    w.begin(b"traf");
    w.begin_full(b"tfhd", 0, 0x02_0000);
    w.u32(track_id);
    w.end();
    w.begin_full(b"tfdt", 1, 0);
    w.u64(base_ticks);
    w.end();
    // data-offset, sample-duration, sample-size present.
    w.begin_full(b"trun", 0, 0x000301);
    w.u32(u32::try_from(samples.len()).unwrap_or(u32::MAX));
    let offset_at = w.len();
    w.u32(0);
    for (duration, bytes) in samples {
        w.u32(*duration);
        w.u32(u32::try_from(bytes.len()).unwrap_or(u32::MAX));
    }
    w.end(); // trun
    w.end(); // traf
    w.end(); // moof
             // The data offset counts from the moof's first byte, which is this buffer's first.
    let data_offset = w.len() + 8;
    w.patch_u32(offset_at, u32::try_from(data_offset).unwrap_or(u32::MAX));
    w.begin(b"mdat");
    for (_, bytes) in samples {
        w.bytes(bytes);
    }
    w.end();
    w.finish()
}
