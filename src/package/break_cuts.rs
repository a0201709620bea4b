//! Ad breaks on a packaged title: each break of a title document becomes a segment
//! boundary in every rendition, and the facts the manifests state about it.
//!
//! A break is cut at the reference rendition's key frame at or before its time, the plan
//! made again with those cuts forced, and every other rendition cut there too (a ladder
//! that cannot be is refused). The HLS tags (`hls/break_tags.rs`), the DASH `EventStream`
//! (`dash.rs`) and the SCTE-35 splices they carry (`scte35.rs`) are all written from
//! [`AdBreaks`].

use super::ladder::align_videos;
use super::plan::{plan_segments_forced, TrackPlan};
use super::scte35::SpliceInsert;
use super::{PackageError, Title};
use crate::media::{
    BreakAsset, DocumentBreak, ProgramDateTime, TrackIndex, TrackKind, DEFAULT_PROGRAM_DATE_TIME,
};

/// The ad breaks of a title and the clock they are stated on. The default (no breaks, no
/// program date) changes nothing in any manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdBreaks {
    /// The wall-clock time of this title's presentation time 0: the document's
    /// `program_date_time` (or [`DEFAULT_PROGRAM_DATE_TIME`]) moved by any clip; `None`
    /// when neither breaks nor a date are signalled.
    pub program_date_time: Option<ProgramDateTime>,
    /// The breaks, in the order they play.
    pub list: Vec<TitleBreak>,
    /// Whether HLS media playlists also carry `EXT-X-CUE-OUT`/`EXT-X-CUE-IN` (the server's
    /// `hls-cue-out` setting).
    pub cue_out: bool,
    /// Where every media playlist's first segment is on the title's presentation
    /// timeline, ns: the reference rendition's first segment (negative with video
    /// pre-roll). Players lay each playlist out from 0 by its durations and line the
    /// playlists up at their starts, so every playlist's program dates count from this one
    /// instant (an audio playlist whose first frame is 21 ms earlier still says the same
    /// date: dated by its own media, Shaka 5 moves the audio against the video and stalls
    /// at the end).
    pub start_ns: i128,
}

/// One break as cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TitleBreak {
    /// The break as the document asks for it (`at_ms` on the served title's timeline).
    pub request: DocumentBreak,
    /// The segment (0-based plan index) that starts at the cut.
    pub segment: usize,
    /// The cut's presentation time, ns from the title's start (output time less the title
    /// shift S); negative only for a break at 0 of a clip with video pre-roll.
    pub cut_ns: i128,
    /// The cut's output presentation time in 90 kHz ticks: the media segments' timeline.
    pub pts_90k: u64,
    /// The cut's time from the DASH Period's start in 90 kHz ticks.
    pub period_90k: u64,
    /// SCTE-35 `splice_event_id`: a hash of the id, unique within the title.
    pub event_id: u32,
}

impl AdBreaks {
    /// Whether manifests carry program dates and break signals at all.
    pub fn signalled(&self) -> bool {
        !self.list.is_empty() || self.program_date_time.is_some()
    }

    /// The wall-clock time of presentation time 0.
    pub fn clock(&self) -> ProgramDateTime {
        self.program_date_time.unwrap_or(DEFAULT_PROGRAM_DATE_TIME)
    }
}

impl TitleBreak {
    /// The break's SCTE-35 `splice_insert`, its times moved by `pts_adjustment` (90 kHz:
    /// the MPEG-TS output's offset, 0 for CMAF).
    pub fn splice(&self, pts_adjustment: u64) -> SpliceInsert {
        SpliceInsert {
            event_id: self.event_id,
            pts_time: self.pts_90k,
            pts_adjustment,
            duration: self.request.duration_ms.saturating_mul(90),
            unique_program_id: 0,
        }
    }

    /// The cut's presentation time, ms (rounded to nearest), as messages and START-DATE
    /// state it.
    pub fn cut_ms(&self) -> i64 {
        i64::try_from(
            self.cut_ns.div_euclid(1_000_000)
                + i128::from(self.cut_ns.rem_euclid(1_000_000) >= 500_000),
        )
        .unwrap_or(0)
    }
}

/// What to do with a break the title does not reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutOfRange {
    /// Refuse the title (a document's own break past its end).
    Refuse,
    /// Leave the break out (a URL clip's window that does not hold it).
    Drop,
}

/// `title` cut again with a segment boundary at each of `breaks` (their `at_ms` on this
/// title's presentation timeline), and the breaks as cut; `target_ms` is the segment
/// duration. With no breaks the title is unchanged but for the program date.
///
/// # Errors
/// [`PackageError::BadBreak`] for a break at or after the end of the title (with
/// [`OutOfRange::Refuse`]), two breaks cut at the same key frame, or breaks that overlap
/// once cut; [`PackageError::LadderMisaligned`] when a video rung has no key frame at a
/// break's cut.
pub fn apply_breaks(
    title: &Title,
    breaks: &[DocumentBreak],
    program_date_time: Option<ProgramDateTime>,
    out_of_range: OutOfRange,
    target_ms: u32,
) -> Result<Title, PackageError> {
    let mut cut_title = title.clone();
    cut_title.breaks = AdBreaks {
        program_date_time,
        list: Vec::new(),
        cue_out: title.breaks.cue_out,
        start_ns: first_start_ns(title),
    };
    if breaks.is_empty() {
        return Ok(cut_title);
    }
    let index = &title.index;
    let Some((reference, track, plan)) = reference_rendition(title) else {
        return Ok(cut_title);
    };
    let table = &track.samples;
    let timescale = u128::from(track.timescale.max(1));
    let shift = plan.title_shift_ticks;
    // The title ends where the reference's last segment does.
    let last = title.plan.segment_count.saturating_sub(1);
    let end_ticks = (plan.segment_span(table, last)).map_or(0, |(s, d)| s.saturating_add(d));
    let end_ms = u128::from(end_ticks.saturating_sub(shift)) * 1000 / timescale;
    let sync: Vec<usize> = match &table.sync {
        Some(list) => list.iter().map(|s| *s as usize).collect(),
        None => (0..table.len()).collect(),
    };
    // Each break kept, with the sample it is cut at.
    let mut kept: Vec<(&DocumentBreak, u32)> = Vec::new();
    for request in breaks {
        if u128::from(request.at_ms) >= end_ms {
            match out_of_range {
                OutOfRange::Drop => continue,
                OutOfRange::Refuse => {
                    return Err(PackageError::BadBreak {
                        entry: request.entry.clone(),
                        reason: format!(
                            "at {} ms is at or after the end of the title ({end_ms} ms)",
                            request.at_ms
                        ),
                    })
                }
            }
        }
        let target = u128::from(request.at_ms) * timescale / 1000 + u128::from(shift);
        let target = u64::try_from(target).unwrap_or(u64::MAX);
        // The key frame presented last at or before the asked time; the first sample when
        // none is (a break at 0).
        let sample = (sync.iter().copied())
            .filter(|i| *i < table.len())
            .filter(|i| plan.output_pts(table, *i) <= target)
            .max_by_key(|i| plan.output_pts(table, *i))
            .unwrap_or(0);
        kept.push((request, u32::try_from(sample).unwrap_or(u32::MAX)));
    }
    kept.sort_by_key(|(_, sample)| *sample);
    for pair in kept.windows(2) {
        if let [(a, sa), (b, sb)] = pair {
            if sa == sb {
                let at = plan.output_pts(table, *sa as usize).saturating_sub(shift);
                return Err(PackageError::BadBreak {
                    entry: b.entry.clone(),
                    reason: format!(
                        "is cut at the same key frame as {} ({} ms); move it past the next key frame",
                        a.entry,
                        u128::from(at) * 1000 / timescale
                    ),
                });
            }
        }
    }
    let mut forced: Vec<u32> = kept.iter().map(|(_, s)| *s).filter(|s| *s > 0).collect();
    forced.dedup();
    let mut new_plan = plan_segments_forced(index, target_ms, &forced);
    let labels: Vec<String> = (index.tracks.iter())
        .map(|t| format!("track {}", super::names::track_label(t.track_id)))
        .collect();
    align_videos(index, &mut new_plan, &labels)?;
    let mut replanned = Title::from_plan(index.clone(), new_plan)?;
    // What the title's renditions say beyond their measures, and their order.
    let order = |id: u32| title.renditions.iter().position(|r| r.track_id == id);
    replanned.renditions.sort_by_key(|r| order(r.track_id));
    for rendition in &mut replanned.renditions {
        if let Some(whole) = title.rendition(rendition.track_id) {
            rendition.name = whole.name.clone();
            rendition.roles = whole.roles.clone();
            rendition.is_default = whole.is_default;
        }
    }
    replanned.sidecars = title.sidecars.clone();
    replanned.closed_captions = title.closed_captions.clone();
    let Some(new_ref) = replanned.plan.tracks.get(reference) else {
        return Ok(cut_title);
    };
    let pto = replanned.dash_presentation_offset_ticks(reference);
    let to_90k = |ticks: u64| -> u64 {
        u64::try_from((u128::from(ticks) * 90_000 + timescale / 2) / timescale).unwrap_or(u64::MAX)
    };
    let mut list: Vec<TitleBreak> = Vec::with_capacity(kept.len());
    for (request, sample) in kept {
        let segment = (new_ref.first_samples.iter())
            .take(replanned.plan.segment_count)
            .position(|s| *s == sample)
            .unwrap_or(0);
        let cut = new_ref.output_pts(table, sample as usize);
        let cut_ns = (i128::from(cut) - i128::from(shift)) * 1_000_000_000 / timescale as i128;
        let mut event_id = fnv32(&request.id);
        while list.iter().any(|b| b.event_id == event_id) {
            event_id = event_id.wrapping_add(1);
        }
        list.push(TitleBreak {
            request: request.clone(),
            segment,
            cut_ns,
            pts_90k: to_90k(cut),
            period_90k: to_90k(cut.saturating_sub(pto)),
            event_id,
        });
    }
    // Breaks as cut must not overlap either: [cut, cut + duration) in order.
    for pair in list.windows(2) {
        if let [a, b] = pair {
            let end_ns = a.cut_ns + i128::from(a.request.duration_ms) * 1_000_000;
            if b.cut_ns < end_ns {
                return Err(PackageError::BadBreak {
                    entry: b.request.entry.clone(),
                    reason: format!(
                        "is cut at {} ms, inside {} (cut at {} ms for {} ms)",
                        b.cut_ms(),
                        a.request.entry,
                        a.cut_ms(),
                        a.request.duration_ms
                    ),
                });
            }
        }
    }
    replanned.breaks = AdBreaks {
        program_date_time,
        list,
        cue_out: title.breaks.cue_out,
        start_ns: first_start_ns(&replanned),
    };
    Ok(replanned)
}

/// The breaks of `title` (cut on its timeline) as requests on the timeline of a window of
/// it starting at `from_ms` and ending at `to_ms`: those inside, moved by `from_ms`.
pub fn breaks_in_window(title: &Title, from_ms: u64, to_ms: Option<u64>) -> Vec<DocumentBreak> {
    (title.breaks.list.iter())
        .filter(|b| b.request.at_ms >= from_ms && to_ms.is_none_or(|to| b.request.at_ms < to))
        .map(|b| DocumentBreak {
            at_ms: b.request.at_ms - from_ms,
            ..b.request.clone()
        })
        .collect()
}

/// The reference rendition (the first video, else the first track): its position, index
/// and plan.
fn reference_rendition(title: &Title) -> Option<(usize, &TrackIndex, &TrackPlan)> {
    let index = &title.index;
    let reference = (index.tracks.iter())
        .position(|t| t.kind == TrackKind::Video)
        .unwrap_or(0);
    Some((
        reference,
        index.tracks.get(reference)?,
        title.plan.tracks.get(reference)?,
    ))
}

/// Where the reference rendition's first listed segment starts on the presentation
/// timeline, ns (see [`AdBreaks::start_ns`]).
fn first_start_ns(title: &Title) -> i128 {
    let Some((_, track, plan)) = reference_rendition(title) else {
        return 0;
    };
    let start = (0..title.plan.segment_count)
        .filter_map(|k| plan.segment_span(&track.samples, k))
        .find(|(_, d)| *d > 0)
        .map_or(0, |(s, _)| s);
    (i128::from(start) - i128::from(plan.title_shift_ticks)) * 1_000_000_000
        / i128::from(track.timescale.max(1))
}

/// FNV-1a, 32 bits: the same event id for the same break id on every replica.
fn fnv32(text: &str) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// The HLS attribute value of an asset: `X-ASSET-URI` or `X-ASSET-LIST` and its URI.
pub(super) fn asset_attribute(asset: &BreakAsset) -> (&'static str, &str) {
    match asset {
        BreakAsset::Uri(uri) => ("X-ASSET-URI", uri),
        BreakAsset::List(uri) => ("X-ASSET-LIST", uri),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::testing::fixture_title;

    fn request(id: &str, at_ms: u64, duration_ms: u64) -> DocumentBreak {
        DocumentBreak {
            entry: format!("breaks[0] ({id})"),
            id: id.into(),
            at_ms,
            duration_ms,
            asset: BreakAsset::Uri("https://ads.example/a.m3u8".into()),
        }
    }

    /// The reference's cut sample of each segment, as presentation ms.
    fn cuts_ms(title: &Title) -> Vec<i64> {
        let plan = &title.plan.tracks[0];
        let track = &title.index.tracks[0];
        let shift = plan.title_shift_ticks as i64;
        (0..title.plan.segment_count)
            .map(|k| {
                let s = plan.first_samples[k] as usize;
                (plan.output_pts(&track.samples, s) as i64 - shift) * 1000
                    / i64::from(track.timescale)
            })
            .collect()
    }

    /// Given the 3 s fixture (key frames at 0, 1 and 2 s) in 6 s segments, a break asked
    /// for at 1.7 s is cut at the key frame at 1 s, every track is cut there, and the
    /// cadence starts again from the cut.
    #[test]
    fn a_break_is_cut_at_the_key_frame_at_or_before_it() {
        let title = fixture_title("h264-aac-3s.mp4", 6000);
        assert_eq!(title.plan.segment_count, 1);
        let cut = apply_breaks(
            &title,
            &[request("a", 1700, 500)],
            None,
            OutOfRange::Refuse,
            6000,
        )
        .expect("cut");
        assert_eq!(cuts_ms(&cut), vec![0, 1000]);
        let b = &cut.breaks.list[0];
        assert_eq!((b.segment, b.cut_ms()), (1, 1000));
        assert_eq!(
            b.request.at_ms, 1700,
            "what was asked is kept beside the cut"
        );
        // The audio track is cut at its first frame at or after the cut too.
        let audio = &cut.plan.tracks[1];
        assert!(audio.first_samples[1] > 0 && audio.first_samples[1] < audio.first_samples[2]);
        // The splice's time is the cut on the media timeline, 90 kHz.
        let video = &cut.plan.tracks[0];
        let table = &cut.index.tracks[0].samples;
        let pts = video.output_pts(table, video.first_samples[1] as usize);
        let timescale = u64::from(cut.index.tracks[0].timescale);
        assert_eq!(
            b.splice(0).pts_time,
            (pts * 90_000 + timescale / 2) / timescale
        );
        // With 1 s segments the cadence counts from the cut: 1 s, then 2 s.
        let short = apply_breaks(
            &fixture_title("h264-aac-3s.mp4", 1000),
            &[request("a", 1700, 100)],
            None,
            OutOfRange::Refuse,
            1000,
        )
        .expect("cut");
        assert_eq!(cuts_ms(&short), vec![0, 1000, 2000]);
    }

    #[test]
    fn breaks_the_title_cannot_have_are_refused_or_dropped() {
        let title = fixture_title("h264-aac-3s.mp4", 6000);
        let refuse = |list: &[DocumentBreak]| {
            apply_breaks(&title, list, None, OutOfRange::Refuse, 6000)
                .expect_err("refused")
                .to_string()
        };
        assert!(refuse(&[request("late", 3000, 100)]).contains("at or after the end of the title"));
        let same = [request("a", 1100, 100), request("b", 1500, 100)];
        assert!(refuse(&same).contains("same key frame"));
        // [1000, 2900) once cut overlaps the one cut at 2000 ms.
        let moved = [request("a", 1100, 1900), request("b", 2050, 100)];
        assert!(refuse(&moved).contains("inside"), "{}", refuse(&moved));
        let dropped = apply_breaks(
            &title,
            &[request("late", 3000, 100)],
            None,
            OutOfRange::Drop,
            6000,
        )
        .expect("dropped");
        assert!(dropped.breaks.list.is_empty());
        assert_eq!(dropped.plan.segment_count, 1);
    }

    #[test]
    fn event_ids_are_unique_and_stable() {
        assert_eq!(fnv32("mid-1"), fnv32("mid-1"));
        assert_ne!(fnv32("mid-1"), fnv32("mid-2"));
    }
}
