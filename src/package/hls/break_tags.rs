//! Ad breaks in HLS media playlists: the program date and, at each break, an
//! HLS Interstitial (`EXT-X-DATERANGE` of `CLASS="com.apple.hls.interstitial"`, RFC 8216bis
//! 4.4.5.1 and Appendix D) carrying the break's SCTE-35 splice as `SCTE35-OUT`, and, when
//! the server is told to, the `EXT-X-CUE-OUT`/`EXT-X-CUE-IN` pair older ad inserters read.
//!
//! Every media playlist of a title (video, audio, subtitles, I-frames; CMAF and MPEG-TS)
//! gets the same lines, before the segment that starts at the break's cut.

use std::fmt::Write as _;

use crate::package::break_cuts::{asset_attribute, AdBreaks};

/// Where a listed segment starts: its index in the plan (0-based) and its start after the
/// first segment listed, in nanoseconds.
#[derive(Debug, Clone, Copy)]
pub(super) struct SegmentStart {
    pub segment: usize,
    pub elapsed_ns: i128,
}

/// Write what goes before segment `segment` (0-based plan index) of a playlist, which
/// starts `elapsed_ns` after the playlist's first segment (the sum of the durations
/// before it, as players lay the playlist out): the program date when `first` (the first
/// segment listed) or a break starts there, then each break starting there (or, for the
/// first segment listed, before it). `pts_adjustment` (90 kHz) is the SCTE-35
/// `pts_adjustment` of the output (the MPEG-TS time offset, 0 for CMAF).
pub(super) fn write_marks(
    out: &mut String,
    breaks: &AdBreaks,
    SegmentStart {
        segment,
        elapsed_ns,
    }: SegmentStart,
    first: bool,
    pts_adjustment: u64,
) {
    if !breaks.signalled() {
        return;
    }
    let here =
        |b: &&crate::package::TitleBreak| b.segment == segment || (first && b.segment < segment);
    let at_break = breaks.list.iter().any(|b| here(&b));
    if !(first || at_break) {
        return;
    }
    let clock = breaks.clock();
    let start_ns = breaks.start_ns + elapsed_ns;
    let start_ms =
        start_ns.div_euclid(1_000_000) + i128::from(start_ns.rem_euclid(1_000_000) >= 500_000);
    let _ = writeln!(
        out,
        "#EXT-X-PROGRAM-DATE-TIME:{}",
        clock.format_after(i64::try_from(start_ms).unwrap_or(0))
    );
    for b in breaks.list.iter().filter(here) {
        let request = &b.request;
        let (asset, uri) = asset_attribute(&request.asset);
        let duration_ms = request.duration_ms;
        let duration = format!("{}.{:03}", duration_ms / 1000, duration_ms % 1000);
        let _ = writeln!(
            out,
            "#EXT-X-DATERANGE:ID=\"{}\",CLASS=\"com.apple.hls.interstitial\",START-DATE=\"{}\",\
             DURATION={duration},{asset}=\"{uri}\",X-RESUME-OFFSET=0,SCTE35-OUT={}",
            request.id,
            clock.format_after(b.cut_ms()),
            b.splice(pts_adjustment).hex()
        );
        if breaks.cue_out {
            // An insertion point replaces none of the title: a CUE-OUT of 0 seconds, the
            // CUE-IN right after it (AWS MediaTailor: "ad markers with an EXT-X-CUE-OUT
            // value of 0 duration indicate ad insertion"; Google DAI: the duration is the
            // time between CUE-OUT and CUE-IN). The planned ad time is the DATERANGE's
            // DURATION and the splice's break_duration.
            out.push_str("#EXT-X-CUE-OUT:0\n#EXT-X-CUE-IN\n");
        }
    }
}
