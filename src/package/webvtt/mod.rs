//! Text tracks to WebVTT: which text samples a subtitle resource needs, their cues on the
//! output timeline, and the WebVTT files (render.rs).
//!
//! Cues sit on the same output timeline as audio and video (source time + the title shift
//! of `plan.rs`); HLS subtitle segments are cut at the title's segment times. Sample
//! payloads are read only when a subtitle is asked for: [`plan_text_read`] lists the byte
//! ranges, the server reads them, and [`cues_from_samples`] turns them into cues.

mod render;

use std::ops::Range;

use bytes::Bytes;

use super::Title;
use crate::media::{
    parse_text_sample, MediaError, MediaLimits, SampleCue, TextFormat, TextTrackIndex, TrackKind,
};
use crate::source::ByteRange;

pub use render::{render_dash_file, render_hls_segment};

const NS_PER_SEC: i128 = 1_000_000_000;

/// How subtitle segments of a title are cut and timed (HLS WebVTT segments and DASH text
/// segments alike); one per title, shared by its text tracks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubtitlePlan {
    /// Plan number (1-based, as in URLs) of the first subtitle segment: the reference
    /// rendition's first listed segment.
    pub first_number: u64,
    /// Duration of each subtitle segment in microseconds: the reference rendition's.
    pub durations_us: Vec<u64>,
    /// Output time (ns) where each segment but the first starts. The first segment covers
    /// everything before `cuts_ns[0]`, the last everything from its start on.
    cuts_ns: Vec<i128>,
    /// The title shift S in nanoseconds: output time minus source movie time.
    pub shift_ns: i128,
    /// The title's ad breaks, signalled in subtitle playlists as in the others.
    pub breaks: crate::package::AdBreaks,
    /// The reference rendition's track position and timescale: DASH text segments
    /// (`package::text`) are timed in it.
    pub reference: (usize, u32),
    /// Start and duration of each subtitle segment in the reference's ticks, on the
    /// output timeline: the `tfdt` and duration of DASH text segments, and their
    /// `SegmentTimeline`, equal to the reference rendition's own.
    spans_ticks: Vec<(u64, u64)>,
}

impl SubtitlePlan {
    /// The subtitle segments of `title`: the reference track's (the first video track,
    /// else the first track, as `plan.rs` chooses), without the zero-length segments at
    /// either end that media playlists leave out.
    pub fn new(title: &Title) -> Self {
        let plan = &title.plan;
        // S is exact in the timescale of the track that sets it; the others round it up.
        let shift_ns = (plan.tracks.iter())
            .map(|p| i128::from(p.title_shift_ticks) * NS_PER_SEC / i128::from(p.timescale.max(1)))
            .min()
            .unwrap_or(0);
        let index = &title.index;
        let reference = (index.tracks.iter())
            .position(|t| t.kind == TrackKind::Video)
            .unwrap_or(0);
        let reference_timescale = index
            .tracks
            .get(reference)
            .map_or(1, |t| t.timescale.max(1));
        let ticks: Vec<(u64, u64)> = match (index.tracks.get(reference), plan.tracks.get(reference))
        {
            (Some(track), Some(track_plan)) => (0..plan.segment_count)
                .map(|k| track_plan.segment_span(&track.samples, k).unwrap_or((0, 0)))
                .collect(),
            _ => Vec::new(),
        };
        let timescale = i128::from(reference_timescale);
        let spans: Vec<(i128, u64)> = (ticks.iter())
            .map(|&(start, duration)| {
                let start_ns = i128::from(start) * NS_PER_SEC / timescale;
                let micros = (i128::from(duration) * 1_000_000 + timescale / 2) / timescale;
                (start_ns, u64::try_from(micros).unwrap_or(u64::MAX))
            })
            .collect();
        let first = spans.iter().position(|s| s.1 > 0);
        let last = spans.iter().rposition(|s| s.1 > 0);
        let listed = match (first, last) {
            (Some(first), Some(last)) => first..last + 1,
            _ => 0..spans.len(),
        };
        let spans_ticks = ticks.get(listed.clone()).unwrap_or_default().to_vec();
        let listed = spans
            .get(listed.clone())
            .map_or((0, &[][..]), |s| (listed.start, s));
        Self {
            first_number: listed.0 as u64 + 1,
            durations_us: listed.1.iter().map(|s| s.1).collect(),
            cuts_ns: listed.1.iter().skip(1).map(|s| s.0).collect(),
            shift_ns,
            breaks: title.breaks.clone(),
            reference: (reference, reference_timescale),
            spans_ticks,
        }
    }

    /// Start and duration (the reference rendition's ticks, output timeline) of segment
    /// `number` (1-based), or `None` when the title has no such subtitle segment.
    pub fn span_ticks(&self, number: u64) -> Option<(u64, u64)> {
        let k = usize::try_from(number.checked_sub(self.first_number)?).ok()?;
        self.spans_ticks.get(k).copied()
    }

    /// Start and duration (reference ticks) of every subtitle segment, in order.
    pub fn spans_ticks(&self) -> &[(u64, u64)] {
        &self.spans_ticks
    }

    /// Number of subtitle segments.
    pub fn segment_count(&self) -> usize {
        self.durations_us.len()
    }

    /// The output time window of segment `number` (1-based, as in URLs), or `None` when
    /// the title has no such subtitle segment.
    pub fn window(&self, number: u64) -> Option<TimeWindow> {
        let k = usize::try_from(number.checked_sub(self.first_number)?).ok()?;
        if k >= self.segment_count() {
            return None;
        }
        let start = k.checked_sub(1).and_then(|j| self.cuts_ns.get(j)).copied();
        let end = self.cuts_ns.get(k).copied();
        Some(TimeWindow {
            start_ns: start.unwrap_or(i128::MIN),
            end_ns: end.unwrap_or(i128::MAX),
        })
    }
}

/// A stretch of the output timeline, in ns, end excluded: the cues of one HLS subtitle
/// segment. The first segment's starts at `i128::MIN` and the last one's ends at
/// `i128::MAX`, so no cue falls outside every segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeWindow {
    pub start_ns: i128,
    pub end_ns: i128,
}

/// The text samples one subtitle resource needs and the source bytes that hold them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextRead {
    /// The samples (0-based, decode order).
    pub samples: Range<usize>,
    /// Source ranges to read, in order: runs of adjacent samples merged, nothing else read.
    pub ranges: Vec<ByteRange>,
    /// For each sample of `samples`: the index of its range in `ranges` and its offset in
    /// it; `None` for an empty sample.
    placement: Vec<Option<(usize, u64)>>,
}

/// The output time (ns) of `ticks` of `track`'s media timeline: its edit list applied,
/// then shifted by S.
fn output_ns(track: &TextTrackIndex, shift_ns: i128, ticks: u64) -> i128 {
    let movie_ticks = i128::from(ticks) + i128::from(track.edits.leading_empty_ticks())
        - i128::from(track.edits.first_media_time_ticks());
    (movie_ticks * NS_PER_SEC).div_euclid(i128::from(track.timescale.max(1))) + shift_ns
}

/// Plan the read of `track`'s samples shown in `window` (output ns, end excluded), or of
/// every sample when `window` is `None` (the whole-track file of DASH). Text samples follow
/// one another (each lasts until the next), so the samples of a window are one run.
/// Composition offsets are not applied: text tracks have none.
///
/// # Errors
/// [`MediaError::TooLarge`] when the samples add up to more than
/// `limits.max_text_read_bytes`.
pub fn plan_text_read(
    track: &TextTrackIndex,
    shift_ns: i128,
    window: Option<TimeWindow>,
    limits: &MediaLimits,
) -> Result<TextRead, MediaError> {
    let table = &track.samples;
    let n = table.len();
    let start_of = |i: usize| output_ns(track, shift_ns, table.dts.get(i).copied().unwrap_or(0));
    let end_of = |i: usize| {
        let dts = table.dts.get(i).copied().unwrap_or(0);
        let duration = table.durations.get(i).copied().unwrap_or(0);
        output_ns(track, shift_ns, dts.saturating_add(u64::from(duration)))
    };
    let samples = match window {
        None => 0..n,
        Some(TimeWindow {
            start_ns: from,
            end_ns: to,
        }) => {
            // Ends and starts are non-decreasing in decode order.
            let first = partition_point(n, |i| end_of(i) <= from);
            let end = partition_point(n, |i| start_of(i) < to);
            first..end.max(first)
        }
    };
    let total: u64 = (table.sizes.get(samples.clone()).unwrap_or_default().iter())
        .map(|s| u64::from(*s))
        .sum();
    if total > limits.max_text_read_bytes {
        return Err(MediaError::TooLarge {
            limit: "max_text_read_bytes",
            value: total,
            max: limits.max_text_read_bytes,
        });
    }
    let mut ranges: Vec<ByteRange> = Vec::new();
    let mut placement = Vec::with_capacity(samples.len());
    for i in samples.clone() {
        let (Some(&offset), Some(&size)) = (table.offsets().get(i), table.sizes.get(i)) else {
            break;
        };
        let size = u64::from(size);
        // An empty sample needs no bytes (and a zero-length read is no read).
        if size == 0 {
            placement.push(None);
            continue;
        }
        let last_index = ranges.len().saturating_sub(1);
        match ranges.last_mut() {
            Some(last) if last.end() == offset => {
                placement.push(Some((last_index, last.len)));
                last.len += size;
            }
            _ => {
                placement.push(Some((ranges.len(), 0)));
                ranges.push(ByteRange::new(offset, size));
            }
        }
    }
    Ok(TextRead {
        samples,
        ranges,
        placement,
    })
}

/// The first `i` in `0..n` for which `pred` is false (`pred` true then false over `0..n`).
fn partition_point(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut low, mut high) = (0, n);
    while low < high {
        let mid = low + (high - low) / 2;
        if pred(mid) {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
}

/// One cue on the output timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cue {
    /// Output start time in nanoseconds (output time = source movie time + S).
    pub start_ns: i128,
    /// Output end time in nanoseconds.
    pub end_ns: i128,
    /// Identifier, settings and text, as the sample gave them.
    pub payload: SampleCue,
}

/// The cues of the samples of `read`, whose ranges' bytes are `bytes` (one `Bytes` per
/// range, in order). A cue that goes on unchanged in the next sample (`wvtt` repeats every
/// active cue in each sample) becomes one cue; cues with empty text are dropped.
///
/// # Errors
/// [`MediaError::Truncated`] when the source gave fewer bytes than a range asked for;
/// [`MediaError::InvalidTable`] for a malformed sample.
pub fn cues_from_samples(
    track: &TextTrackIndex,
    shift_ns: i128,
    read: &TextRead,
    bytes: &[Bytes],
) -> Result<Vec<Cue>, MediaError> {
    let table = &track.samples;
    let mut cues: Vec<Cue> = Vec::new();
    // Indexes of the cues the previous sample showed: the ones this sample may continue.
    let mut shown: Vec<usize> = Vec::new();
    for (i, placement) in read.samples.clone().zip(&read.placement) {
        let size = table.sizes.get(i).copied().unwrap_or(0) as usize;
        let sample = match *placement {
            None => Some(&[][..]),
            Some((range, offset)) => usize::try_from(offset)
                .ok()
                .and_then(|start| bytes.get(range)?.get(start..start.checked_add(size)?)),
        }
        .ok_or_else(|| MediaError::Truncated {
            reason: format!(
                "text sample {} of track {} was not read in full",
                i + 1,
                track.track_id
            ),
        })?;
        let dts = table.dts.get(i).copied().unwrap_or(0);
        let duration = table.durations.get(i).copied().unwrap_or(0);
        let start_ns = output_ns(track, shift_ns, dts);
        let end_ns = output_ns(track, shift_ns, dts.saturating_add(u64::from(duration)));
        let mut now_shown = Vec::new();
        for payload in parse_text_sample(track.format, track.track_id, sample)? {
            let continued = shown.iter().copied().find(|&j| {
                !now_shown.contains(&j)
                    && cues
                        .get(j)
                        .is_some_and(|c| c.end_ns == start_ns && c.payload == payload)
            });
            match continued.and_then(|j| Some((j, cues.get_mut(j)?))) {
                Some((j, cue)) => {
                    cue.end_ns = end_ns;
                    now_shown.push(j);
                }
                None => {
                    now_shown.push(cues.len());
                    cues.push(Cue {
                        start_ns,
                        end_ns,
                        payload,
                    });
                }
            }
        }
        shown = now_shown;
    }
    Ok(cues)
}

/// The cues an HLS segment with output time window `window` writes.
///
/// A `tx3g` sample is one whole cue, so each segment sees every cue it holds whole, and
/// a cue spanning a cut is written identically in both segments. A `wvtt` cue lasts as
/// many samples as it is repeated in, and a segment reads only its own samples, so two
/// segments can see different parts of one cue: written whole, they would overlap and the
/// player would show the text twice. So `wvtt` cues are cut to the window: the pieces of
/// segments that follow one another meet exactly at the cut, and show as one cue. A cue
/// that reaches an edge of the window may be such a piece, and loses its identifier:
/// hls.js keeps only the first cue it sees with a given identifier, which would drop every
/// piece but the first.
pub fn segment_cues(format: TextFormat, cues: Vec<Cue>, window: TimeWindow) -> Vec<Cue> {
    let TimeWindow { start_ns, end_ns } = window;
    match format {
        TextFormat::Tx3g => cues,
        TextFormat::Wvtt => (cues.into_iter())
            .filter(|cue| cue.end_ns.min(end_ns) > cue.start_ns.max(start_ns))
            .map(|mut cue| {
                if cue.start_ns <= start_ns || cue.end_ns >= end_ns {
                    cue.start_ns = cue.start_ns.max(start_ns);
                    cue.end_ns = cue.end_ns.min(end_ns);
                    cue.payload.id = None;
                }
                cue
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests;
