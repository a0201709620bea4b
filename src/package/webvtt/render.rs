//! WebVTT text (W3C WebVTT; RFC 8216 3.5 for HLS): the HLS segment and the DASH file.
//!
//! Both write the same cues on different timelines: an HLS segment writes output times,
//! mapped with `X-TIMESTAMP-MAP=LOCAL:00:00:00.000,MPEGTS:0`; the DASH file is on the
//! Period timeline, output time less the title shift (less any video pre-roll the Period
//! shows).

use std::fmt::Write as _;

use super::Cue;

/// The WebVTT segment of HLS holding `cues` (output times).
pub fn render_hls_segment(cues: &[Cue]) -> String {
    render(
        cues,
        0,
        "WEBVTT\nX-TIMESTAMP-MAP=LOCAL:00:00:00.000,MPEGTS:0\n",
    )
}

/// The whole-track WebVTT file of DASH: `cues` on the Period timeline (output time minus
/// the title shift `shift_ns`).
pub fn render_dash_file(cues: &[Cue], shift_ns: i128) -> String {
    render(cues, shift_ns, "WEBVTT\n")
}

fn render(cues: &[Cue], minus_ns: i128, header: &str) -> String {
    let mut out = String::from(header);
    for cue in cues {
        // Times before the timeline's zero are clamped to it; a cue that ends there (or
        // lasts under a millisecond) is not shown.
        let start = millis(cue.start_ns.saturating_sub(minus_ns));
        let end = millis(cue.end_ns.saturating_sub(minus_ns));
        if end <= start {
            continue;
        }
        out.push('\n');
        if let Some(id) = &cue.payload.id {
            out.push_str(id);
            out.push('\n');
        }
        let _ = write!(out, "{} --> {}", timestamp(start), timestamp(end));
        if let Some(settings) = &cue.payload.settings {
            out.push(' ');
            out.push_str(settings);
        }
        out.push('\n');
        out.push_str(&cue.payload.text);
        out.push('\n');
    }
    out
}

/// Nanoseconds to whole milliseconds, rounded to nearest; negative times are 0.
fn millis(ns: i128) -> u64 {
    u64::try_from((ns.max(0) + 500_000) / 1_000_000).unwrap_or(u64::MAX)
}

/// A WebVTT timestamp, `HH:MM:SS.mmm` (hours grow past two digits when needed).
fn timestamp(ms: u64) -> String {
    let (h, m, s, ms) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    format!("{h:02}:{m:02}:{s:02}.{ms:03}")
}
