//! The pictures of a title's page, drawn by the server as inline SVG: the bit rate of each
//! rendition's segments over time, and the timeline's marks (ad breaks, sequence parts) at
//! their times.
//!
//! Segment bit rates come from the title's sample index and plan, as the segments will be
//! sent (payload plus the fMP4 header `package::fmp4` writes), the same measure that
//! gives each rendition's declared bandwidth (`package::title`: the peak over windows of
//! about a target duration, so a short segment can go over it). Nothing is read from the
//! source: one pass over each track's sample sizes, done where a loaded title is at hand
//! (measured in [`rung_rates`]).
//! Pure functions over plain data; every number written is ours, every label escaped.

use std::fmt::Write as _;

use super::html::escape;
use crate::media::TrackKind;
use crate::package::fmp4::media_segment_header_len;
use crate::package::{split_document_track_id, Title};

/// Most segments drawn per rendition: a longer title's segments are merged in runs, so
/// the SVG stays under about 1 MiB (12 rungs of 400 bars; a 10-hour title at 6 s is 6,000
/// segments, 15 to a bar).
pub const MAX_BARS: usize = 400;
/// Most renditions drawn.
pub const MAX_RUNGS: usize = 12;

/// One segment's (or one merged run's) bit rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SegmentRate {
    /// Where it starts on the output timeline, in ms.
    pub start_ms: u64,
    /// How long it lasts, in ms.
    pub duration_ms: u64,
    /// Bytes as sent.
    pub bytes: u64,
    /// Bits per second, from the exact duration (0 for a segment of no duration).
    pub bits_per_sec: u64,
}

impl SegmentRate {
    /// Bits per second (0 for a segment of no duration).
    pub fn bits_per_sec(&self) -> u64 {
        self.bits_per_sec
    }
}

/// `bytes` over `ticks` of `timescale`, in bits per second, rounded down.
fn rate(bytes: u64, ticks: u64, timescale: u128) -> u64 {
    match ticks {
        0 => 0,
        t => u64::try_from(u128::from(bytes) * 8 * timescale / u128::from(t)).unwrap_or(u64::MAX),
    }
}

/// One rendition's segments, with what its manifests declare.
#[derive(Debug, Clone, PartialEq)]
pub struct RungRates {
    /// What it is: kind, track, resolution or channels, codec.
    pub label: String,
    /// Video or audio.
    pub kind: TrackKind,
    /// The track id its resources are named by.
    pub track_id: u32,
    /// The bandwidth the manifests declare for it (DASH `@bandwidth`; HLS `BANDWIDTH` is
    /// a variant's video plus audio), bits per second.
    pub declared_bps: u64,
    /// Its average bit rate, bits per second.
    pub average_bps: u64,
    /// Its segments, in order (runs of them past [`MAX_BARS`]).
    pub segments: Vec<SegmentRate>,
}

impl RungRates {
    /// The highest segment bit rate.
    pub fn peak_bps(&self) -> u64 {
        (self.segments.iter().map(SegmentRate::bits_per_sec))
            .max()
            .unwrap_or(0)
    }

    /// How many segments go over the declared bandwidth.
    pub fn over_declared(&self) -> usize {
        (self.segments.iter())
            .filter(|s| s.bits_per_sec() > self.declared_bps)
            .count()
    }
}

/// The segment bit rates of every audio and video rendition of `title` (at most
/// [`MAX_RUNGS`]). Cost: one pass over each track's sample sizes, 0.1 to 0.2 ms for the
/// 278,400 samples of the 60-minute benchmark title (release build, 2-core machine); the
/// caller runs it on the blocking pool all the same.
pub fn rung_rates(title: &Title) -> Vec<RungRates> {
    let mut rungs = Vec::new();
    for rendition in title.renditions.iter().take(MAX_RUNGS) {
        let (Some(track), Some(plan)) = (
            title.index.tracks.get(rendition.track_pos),
            title.plan.tracks.get(rendition.track_pos),
        ) else {
            continue;
        };
        let table = &track.samples;
        let has_cts = !table.cts_offsets.is_empty();
        let timescale = u128::from(track.timescale.max(1));
        let to_ms = |ticks: u64| (u128::from(ticks) * 1000 / timescale) as u64;
        let mut segments = Vec::with_capacity(title.plan.segment_count.min(MAX_BARS * 2));
        for segment in 0..title.plan.segment_count {
            let (Some(range), Some((start, duration))) =
                (plan.samples(segment), plan.segment_span(table, segment))
            else {
                continue;
            };
            let count = range.len() as u64;
            let payload: u64 =
                (table.sizes.get(range)).map_or(0, |s| s.iter().map(|v| u64::from(*v)).sum());
            let bytes = payload + media_segment_header_len(track.kind, has_cts, count, payload);
            segments.push(SegmentRate {
                start_ms: to_ms(start),
                duration_ms: to_ms(duration),
                bytes,
                bits_per_sec: rate(bytes, duration, timescale),
            });
        }
        let codec = &track.codec;
        // A title document's track ids carry their file's number.
        let id = match split_document_track_id(track.track_id) {
            Some((file, track)) => format!("f{file} t{track}"),
            None => format!("t{}", track.track_id),
        };
        let label = match track.kind {
            TrackKind::Video => format!(
                "video {id} {}x{} {}",
                codec.width, codec.height, codec.rfc6381
            ),
            _ => format!(
                "audio {id} {} {} ch {}",
                track.language.as_deref().unwrap_or("und"),
                codec.channels,
                codec.rfc6381
            ),
        };
        rungs.push(RungRates {
            label,
            kind: track.kind,
            track_id: track.track_id,
            declared_bps: rendition.peak_bandwidth,
            average_bps: rendition.average_bandwidth,
            segments: merge_runs(segments, MAX_BARS),
        });
    }
    rungs
}

/// `segments` merged in equal runs so at most `max` remain (bytes and durations add up).
fn merge_runs(segments: Vec<SegmentRate>, max: usize) -> Vec<SegmentRate> {
    if segments.len() <= max || max == 0 {
        return segments;
    }
    let per = segments.len().div_ceil(max);
    (segments.chunks(per))
        .filter_map(|run| {
            let first = run.first()?;
            let (bytes, duration_ms) = (
                run.iter().map(|s| s.bytes).sum(),
                run.iter().map(|s| s.duration_ms).sum(),
            );
            Some(SegmentRate {
                start_ms: first.start_ms,
                duration_ms,
                bytes,
                bits_per_sec: rate(bytes, duration_ms, 1000),
            })
        })
        .collect()
}

/// Bits per second in words: `2.35 Mb/s`, `128 kb/s`.
pub fn rate_text(bps: u64) -> String {
    match bps {
        b if b >= 1_000_000 => format!("{:.2} Mb/s", b as f64 / 1e6),
        b => format!("{} kb/s", b.div_ceil(1000)),
    }
}

/// A time in words: `1:02:03.5`, `2:03.5`, `3.5 s`.
pub fn time_text(ms: u64) -> String {
    let (h, m, s, tenth) = (
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000 / 100,
    );
    match (h, m) {
        (0, 0) => format!("{s}.{tenth} s"),
        (0, m) => format!("{m}:{s:02}.{tenth}"),
        (h, m) => format!("{h}:{m:02}:{s:02}.{tenth}"),
    }
}

/// Width of the drawings' coordinate system (they scale to the page).
const WIDTH: f64 = 1000.0;
/// Height of one rendition's row in the chart, with its label.
const ROW: f64 = 86.0;
/// Height of the bars' area in a row.
const BARS: f64 = 60.0;

/// The chart: one row per rendition, a bar per segment (its height the bit rate, on a
/// scale shared by the row's peak and declared bandwidth), a dashed line at the declared
/// bandwidth, bars over it in red; the label gives peak and average. Each row is a
/// `g.rung` (`data-track`, `data-over`), each bar a `rect.seg` (`.over` past the line).
pub fn chart_svg(rungs: &[RungRates], duration_ms: u64) -> String {
    let height = ROW * rungs.len().max(1) as f64 + 4.0;
    let mut svg = format!(
        "<svg id=\"bitrates\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} \
         {height}\" role=\"img\" aria-label=\"segment bit rates per rendition\">\n"
    );
    let span = duration_ms.max(1) as f64;
    for (row, rung) in rungs.iter().enumerate() {
        let top = row as f64 * ROW + 2.0;
        let base = top + 18.0 + BARS;
        let scale = rung.peak_bps().max(rung.declared_bps).max(1) as f64 * 1.1;
        let y_of = |bps: u64| base - BARS * bps as f64 / scale;
        let _ = writeln!(
            svg,
            "<g class=\"rung\" data-track=\"{}\" data-over=\"{}\">\
             <text x=\"2\" y=\"{:.1}\" font-size=\"12\" fill=\"#222\">{} &#183; declared {} \
             &#183; peak {} &#183; average {} &#183; {} of {} segments over</text>\
             <rect x=\"0\" y=\"{:.1}\" width=\"{WIDTH}\" height=\"{BARS}\" fill=\"#f3f5f8\"/>",
            rung.track_id,
            rung.over_declared(),
            top + 13.0,
            escape(&rung.label),
            rate_text(rung.declared_bps),
            rate_text(rung.peak_bps()),
            rate_text(rung.average_bps),
            rung.over_declared(),
            rung.segments.len(),
            top + 18.0,
        );
        for seg in &rung.segments {
            let bps = seg.bits_per_sec();
            let over = bps > rung.declared_bps;
            let x = WIDTH * seg.start_ms as f64 / span;
            let w = (WIDTH * seg.duration_ms as f64 / span - 0.6).max(0.6);
            let y = y_of(bps);
            let _ = writeln!(
                svg,
                "<rect class=\"seg{}\" x=\"{x:.2}\" y=\"{y:.2}\" width=\"{w:.2}\" \
                 height=\"{:.2}\" fill=\"{}\"><title>{} to {}: {}</title></rect>",
                if over { " over" } else { "" },
                (base - y).max(0.0),
                if over { "#d93025" } else { "#4a7bd0" },
                time_text(seg.start_ms),
                time_text(seg.start_ms.saturating_add(seg.duration_ms)),
                rate_text(bps),
            );
        }
        let line = y_of(rung.declared_bps);
        let _ = writeln!(
            svg,
            "<line class=\"declared\" x1=\"0\" x2=\"{WIDTH}\" y1=\"{line:.2}\" y2=\"{line:.2}\" \
             stroke=\"#d93025\" stroke-dasharray=\"6 4\" stroke-width=\"1\"/></g>"
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// What a timeline mark is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkKind {
    /// An ad break (an HLS interstitial), where the title is cut for it.
    Break,
    /// The start of a sequence's part (a DASH Period).
    Part,
}

impl MarkKind {
    fn class(self) -> &'static str {
        match self {
            Self::Break => "break",
            Self::Part => "part",
        }
    }

    fn colour(self) -> &'static str {
        match self {
            Self::Break => "#e8710a",
            Self::Part => "#188038",
        }
    }
}

/// One mark on the timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// What it is.
    pub kind: MarkKind,
    /// Where, in ms of the title's timeline.
    pub at_ms: u64,
    /// Its name (a break's id, a part's Period id).
    pub label: String,
    /// What it lasts, as written (a break's `DURATION`), if said.
    pub duration: Option<String>,
}

/// Height of the timeline's marks area.
const MARKS: f64 = 34.0;

/// The timeline's marks as SVG: a time axis (a tick per round interval) and each mark a
/// `g.mark.KIND` (`data-ms`) with a line at its time and its label.
pub fn timeline_svg(duration_ms: u64, marks: &[Mark]) -> String {
    let span = duration_ms.max(1) as f64;
    let mut svg = format!(
        "<svg id=\"marks\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {MARKS}\" \
         role=\"img\" aria-label=\"breaks and parts\">\n\
         <rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{MARKS}\" fill=\"#fff\"/>\n"
    );
    let step = tick_step_ms(duration_ms);
    let mut t = 0u64;
    while t <= duration_ms && step > 0 {
        let x = WIDTH * t as f64 / span;
        let _ = writeln!(
            svg,
            "<line x1=\"{x:.2}\" x2=\"{x:.2}\" y1=\"{}\" y2=\"{MARKS}\" stroke=\"#999\"/>\
             <text x=\"{:.2}\" y=\"{}\" font-size=\"9\" fill=\"#666\">{}</text>",
            MARKS - 5.0,
            x + 2.0,
            MARKS - 1.0,
            time_text(t)
        );
        t = t.saturating_add(step);
    }
    for mark in marks {
        let x = WIDTH * mark.at_ms.min(duration_ms) as f64 / span;
        let title = match &mark.duration {
            Some(d) => format!(
                "{} {} at {}, {} s",
                mark.kind.class(),
                mark.label,
                time_text(mark.at_ms),
                d
            ),
            None => format!(
                "{} {} at {}",
                mark.kind.class(),
                mark.label,
                time_text(mark.at_ms)
            ),
        };
        let _ = writeln!(
            svg,
            "<g class=\"mark {}\" data-ms=\"{}\" data-x=\"{x:.2}\"><title>{}</title>\
             <line x1=\"{x:.2}\" x2=\"{x:.2}\" y1=\"0\" y2=\"{MARKS}\" stroke=\"{}\" \
             stroke-width=\"3\"/><text x=\"{:.2}\" y=\"11\" font-size=\"10\" fill=\"{}\">{}</text></g>",
            mark.kind.class(),
            mark.at_ms,
            escape(&title),
            mark.kind.colour(),
            x + 3.0,
            mark.kind.colour(),
            escape(&mark.label),
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// A round tick interval giving about 4 to 12 ticks over `duration_ms`.
fn tick_step_ms(duration_ms: u64) -> u64 {
    const STEPS: [u64; 12] = [
        500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000,
        3_600_000,
    ];
    (STEPS.iter().copied())
        .find(|step| duration_ms / step <= 12)
        .unwrap_or(duration_ms.div_ceil(12).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rung(declared: u64, sizes: &[u64]) -> RungRates {
        RungRates {
            label: "video <t1>".into(),
            kind: TrackKind::Video,
            track_id: 1,
            declared_bps: declared,
            average_bps: 1,
            segments: (sizes.iter().enumerate())
                .map(|(i, b)| SegmentRate {
                    start_ms: i as u64 * 2000,
                    duration_ms: 2000,
                    bytes: *b,
                    bits_per_sec: rate(*b, 2000, 1000),
                })
                .collect(),
        }
    }

    #[test]
    fn segments_over_the_declared_bandwidth_are_counted_and_drawn_red() {
        // 2 s segments of 250 kB, 500 kB, 100 kB: 1, 2 and 0.4 Mb/s against 1.5 Mb/s.
        let r = rung(1_500_000, &[250_000, 500_000, 100_000]);
        assert_eq!(r.peak_bps(), 2_000_000);
        assert_eq!(r.over_declared(), 1);
        let svg = chart_svg(&[r], 6000);
        assert_eq!(svg.matches("<rect class=\"seg over\"").count(), 1);
        assert_eq!(svg.matches("<rect class=\"seg\"").count(), 2);
        assert!(svg.contains("data-over=\"1\""));
        assert!(
            svg.contains("video &lt;t1&gt;"),
            "labels are escaped: {svg}"
        );
        assert!(svg.contains("peak 2.00 Mb/s"));
    }

    #[test]
    fn long_titles_are_drawn_in_merged_runs_that_keep_their_bytes() {
        let many: Vec<SegmentRate> = (0..1801)
            .map(|i| SegmentRate {
                start_ms: i * 6000,
                duration_ms: 6000,
                bytes: 1000,
                bits_per_sec: rate(1000, 6000, 1000),
            })
            .collect();
        let merged = merge_runs(many, MAX_BARS);
        assert!(merged.len() <= MAX_BARS);
        assert_eq!(merged.iter().map(|s| s.bytes).sum::<u64>(), 1_801_000);
        assert_eq!(
            merged.iter().map(|s| s.duration_ms).sum::<u64>(),
            1801 * 6000
        );
    }

    #[test]
    fn marks_sit_at_their_time_with_escaped_labels() {
        let marks = [
            Mark {
                kind: MarkKind::Break,
                at_ms: 1500,
                label: "<mid>".into(),
                duration: Some("15.000".into()),
            },
            Mark {
                kind: MarkKind::Part,
                at_ms: 9000,
                label: "p2".into(),
                duration: None,
            },
        ];
        let svg = timeline_svg(3000, &marks);
        assert!(svg.contains("<g class=\"mark break\" data-ms=\"1500\" data-x=\"500.00\">"));
        assert!(svg.contains("&lt;mid&gt;"));
        assert!(!svg.contains("<mid>"));
        // A mark past the end is drawn at the end.
        assert!(svg.contains("data-ms=\"9000\" data-x=\"1000.00\""));
    }

    #[test]
    fn times_and_rates_read_as_words() {
        assert_eq!(time_text(3_500), "3.5 s");
        assert_eq!(time_text(123_400), "2:03.4");
        assert_eq!(time_text(3_723_500), "1:02:03.5");
        assert_eq!(rate_text(128_000), "128 kb/s");
        assert_eq!(rate_text(2_350_000), "2.35 Mb/s");
        assert_eq!(tick_step_ms(3_000), 500);
        assert_eq!(tick_step_ms(7_200_000), 600_000);
        assert_eq!(tick_step_ms(36_000_000), 3_600_000);
    }
}
