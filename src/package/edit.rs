//! Edit lists applied: which source samples each track presents, and when (ISO/IEC 14496-12
//! 8.6.6).
//!
//! [`present`] turns a track and its full edit list into the track *as presented*: a sample
//! table listing, in output decode order, the source samples the edits select (clips joined
//! by several media edits are concatenated, a sample presented twice appears twice), with
//! decode times on one continuous timeline, plus an equivalent one-edit list (leading empty
//! edit + start media time). Everything downstream (the planner, the fMP4 writer, HLS and
//! DASH) then only ever sees that simple form, so it needs no knowledge of edits.
//!
//! The mapping is the standard's: a sample of edit `k` (movie start `T`, media time `m`) is
//! presented at movie time `T + pts - m`. Where edits join, the last sample before the join
//! takes the duration that makes the next sample's decode time exact, which also absorbs an
//! empty edit mid-track (the timeline jumps; the last frame is held, the decoder sees no
//! gap). The first media edit keeps its pre-roll (video: from the sync sample before the
//! first presented frame; audio: one frame) before the presentation start, where the title
//! shift S hides it. What has no exact output is refused with the edit and its time: a
//! later edit that starts inside a GOP (its pre-roll frames would be shown mid-title), an
//! interior edit that ends inside a GOP, and joins whose decode times would run backwards.

use std::ops::Range;

use super::PackageError;
use crate::media::{Edit, EditList, SampleTable, TrackIndex, TrackKind};

/// How many times over a track's samples its edit list may present them (a loop of a
/// clip is legitimate; a million edits each presenting the whole track is not).
const MAX_PRESENTATIONS: usize = 4;

/// One media edit's selection: source samples `samples` (decode order), whose decode times
/// map to the output by `+ movie_start - media_time`.
#[derive(Debug, Clone)]
struct Run {
    /// The edit's number in the file (1-based), for errors.
    edit: usize,
    samples: Range<usize>,
    movie_start: u64,
    media_time: u64,
}

/// The track as its edit list presents it (see the module comment). A track without an
/// edit list, or whose edits select every sample once in order, comes back unchanged.
///
/// # Errors
/// [`PackageError::UnsupportedEdit`] naming the edit (1-based, as in the file) and its
/// movie time when the edit list cannot be presented exactly.
pub fn present(track: TrackIndex) -> Result<TrackIndex, PackageError> {
    let table = &track.samples;
    if track.edits.edits.is_empty() || table.is_empty() {
        return Ok(track);
    }
    let runs = select(&track)?;
    if let [run] = runs.as_slice() {
        // Every sample once, in order, from decode time 0, by the first media edit: the
        // source table as it is, with that edit's shift (the planner reads it).
        if run.samples == (0..table.len())
            && table.dts.first() == Some(&0)
            && run.movie_start == track.edits.leading_empty_ticks()
            && run.media_time == track.edits.first_media_time_ticks()
        {
            return Ok(track);
        }
    }
    let (samples, lead) = concatenate(&track, &runs)?;
    // lead = output decode time of the first sample on the movie timeline (in track ticks,
    // before the title shift): a leading empty edit when positive, a start media time
    // when negative.
    let total: u64 = samples.end_dts();
    let mut edits = Vec::with_capacity(2);
    let (empty, media_time) = if lead >= 0 {
        (u64::try_from(lead).unwrap_or(u64::MAX), 0)
    } else {
        (0, u64::try_from(-lead).unwrap_or(u64::MAX))
    };
    if empty > 0 {
        edits.push(Edit {
            start_ticks: 0,
            duration_ticks: empty,
            media_time_ticks: None,
        });
    }
    edits.push(Edit {
        start_ticks: empty,
        duration_ticks: total.saturating_sub(media_time).max(1),
        media_time_ticks: Some(media_time),
    });
    Ok(TrackIndex {
        edits: EditList { edits },
        samples,
        ..track
    })
}

/// Presentation time (dts + composition offset) of sample `i`, in track ticks.
fn pts(table: &SampleTable, i: usize) -> i128 {
    let dts = table.dts.get(i).copied().unwrap_or(0);
    i128::from(dts) + i128::from(table.cts_offset(i))
}

fn duration(table: &SampleTable, i: usize) -> i128 {
    i128::from(table.durations.get(i).copied().unwrap_or(0))
}

/// Which samples each media edit presents, with their pre-roll.
///
/// Inside the presentation, a sample belongs to an edit when at least half of it falls
/// inside (its midpoint is in `[media_time, media_time + duration)`), so a join that falls
/// between frames (a boundary the movie timescale cannot state exactly, or an audio edit off
/// the frame grid) moves by less than half a frame; each sample keeps its exact time, and
/// the join absorbs the difference. At the two ends the rule is ffmpeg's: the first edit
/// presents the sample covering its start (audio decoders trim it), the last edit every
/// sample that starts before its end.
fn select(track: &TrackIndex) -> Result<Vec<Run>, PackageError> {
    let table = &track.samples;
    let n = table.len();
    let media: Vec<(usize, &Edit)> = (track.edits.edits.iter().enumerate())
        .filter(|(_, e)| e.media_time_ticks.is_some() && e.duration_ticks > 0)
        .map(|(i, e)| (i + 1, e))
        .collect();
    let unsupported = |edit: usize, start: u64, reason: String| PackageError::UnsupportedEdit {
        track_id: track.track_id,
        edit,
        at_ms: start.saturating_mul(1000) / u64::from(track.timescale.max(1)),
        reason,
    };
    if media.is_empty() {
        return Err(unsupported(
            1,
            0,
            "is empty and no edit presents media: the track shows nothing".into(),
        ));
    }
    // Bounds of a sample's presentation time from its decode time, to search the decode
    // order by binary search and then scan only a reorder window.
    let min_cts = i128::from(table.cts_offsets.iter().copied().min().unwrap_or(0));
    let max_cts = i128::from(table.cts_offsets.iter().copied().max().unwrap_or(0));
    let max_duration = i128::from(table.durations.iter().copied().max().unwrap_or(0));
    let is_video = track.kind == TrackKind::Video;

    let mut runs = Vec::with_capacity(media.len());
    let mut scanned = 0usize;
    let last_k = media.len() - 1;
    for (k, &(number, edit)) in media.iter().enumerate() {
        let m = i128::from(edit.media_time_ticks.unwrap_or(0));
        let end = m + i128::from(edit.duration_ticks);
        let (first, last) = (k == 0, k == last_k);
        let starts_in = |i: usize| {
            let (p, d) = (pts(table, i), duration(table, i));
            if first {
                p + d > m || (d == 0 && p >= m)
            } else {
                2 * p + d >= 2 * m
            }
        };
        let ends_in = |i: usize| {
            let (p, d) = (pts(table, i), duration(table, i));
            if last {
                p < end
            } else {
                2 * p + d < 2 * end
            }
        };
        // Samples before `lo` end before m; samples from `hi` on start at or after `end`.
        let lo = table
            .dts
            .partition_point(|d| i128::from(*d) + max_cts + max_duration < m);
        let hi = table
            .dts
            .partition_point(|d| i128::from(*d) + min_cts < end);
        scanned = scanned.saturating_add(hi.saturating_sub(lo));
        if scanned > n.saturating_mul(MAX_PRESENTATIONS) {
            return Err(unsupported(
                number,
                edit.start_ticks,
                format!("presents the media more than {MAX_PRESENTATIONS} times over"),
            ));
        }
        let mut presented = (lo..hi).filter(|&i| starts_in(i) && ends_in(i));
        let first_presented = presented.next();
        let (Some(f), Some(l)) = (first_presented, presented.next_back().or(first_presented))
        else {
            // The edit falls between two samples (shorter than half a frame): it presents
            // nothing, and the timeline absorbs it as it does an empty edit.
            continue;
        };
        // Decoding starts at a sync sample: the last one at or before the first presented.
        let mut a = match &table.sync {
            Some(sync) => {
                let at = sync.partition_point(|s| (*s as usize) <= f);
                at.checked_sub(1)
                    .and_then(|p| sync.get(p))
                    .map_or(0, |s| *s as usize)
            }
            None => f,
        };
        if !is_video && first && a > 0 {
            // AAC and its kin need the frame before the first presented one to decode it.
            a -= 1;
        }
        let b = l + 1;
        for i in a..b {
            if !starts_in(i) && !first {
                return Err(unsupported(
                    number,
                    edit.start_ticks,
                    "starts inside a GOP: its pre-roll frames would be shown in the middle \
                     of the presentation"
                        .into(),
                ));
            }
            if !ends_in(i) && !last {
                return Err(unsupported(
                    number,
                    edit.start_ticks.saturating_add(edit.duration_ticks),
                    "ends inside a GOP: a frame it needs is presented after its end".into(),
                ));
            }
        }
        if first && is_video {
            // Pre-roll is hidden by the title shift only if it ends by movie time 0; after
            // a leading empty edit it would be shown while the source shows nothing yet.
            let visible = (a..b).any(|i| {
                i128::from(edit.start_ticks) + pts(table, i) + duration(table, i) > m
                    && !starts_in(i)
            });
            if visible {
                return Err(unsupported(
                    number,
                    edit.start_ticks,
                    "starts inside a GOP after an empty edit: its pre-roll frames would be \
                     shown before the track starts"
                        .into(),
                ));
            }
        }
        runs.push(Run {
            edit: number,
            samples: a..b,
            movie_start: edit.start_ticks,
            media_time: edit.media_time_ticks.unwrap_or(0),
        });
    }
    if runs.is_empty() {
        let (number, edit) = media[0];
        return Err(unsupported(
            number,
            edit.start_ticks,
            "presents no sample of the media".into(),
        ));
    }
    Ok(runs)
}

/// The output sample table of `runs`, and the output decode time of its first sample
/// relative to movie time 0 (negative when pre-roll or composition delay precede it).
fn concatenate(track: &TrackIndex, runs: &[Run]) -> Result<(SampleTable, i128), PackageError> {
    let table = &track.samples;
    let count: usize = runs.iter().map(|r| r.samples.len()).sum();
    let has_cts = !table.cts_offsets.is_empty();
    let mut out = SampleTable {
        sizes: Vec::with_capacity(count),
        offsets: Vec::with_capacity(count).into(),
        dts: Vec::with_capacity(count),
        durations: Vec::with_capacity(count),
        cts_offsets: Vec::with_capacity(if has_cts { count } else { 0 }),
        sync: table.sync.as_ref().map(|_| Vec::new()),
    };
    // Output decode time (movie ticks, before the title shift) of a source sample in a run.
    let time = |run: &Run, i: usize| -> i128 {
        let dts = table.dts.get(i).copied().unwrap_or(0);
        i128::from(run.movie_start) + i128::from(dts) - i128::from(run.media_time)
    };
    let Some(lead) = runs.first().map(|r| time(r, r.samples.start)) else {
        return Ok((out, 0));
    };
    for (r, run) in runs.iter().enumerate() {
        let next = runs.get(r + 1);
        for i in run.samples.clone() {
            let at = time(run, i);
            let mut duration = table.durations.get(i).copied().unwrap_or(0);
            if i + 1 == run.samples.end {
                if let Some(next) = next {
                    // The join: this sample lasts until the next run's first decode time,
                    // which also spans any empty edit between them.
                    let gap = time(next, next.samples.start) - at;
                    duration = u32::try_from(gap).map_err(|_| PackageError::UnsupportedEdit {
                        track_id: track.track_id,
                        edit: next.edit,
                        at_ms: next.movie_start.saturating_mul(1000)
                            / u64::from(track.timescale.max(1)),
                        reason: format!(
                            "joins the previous edit {gap} ticks from its last decode time: \
                             decode times would run backwards or leave a gap over 2^32 ticks"
                        ),
                    })?;
                }
            }
            let (Some(size), Some(offset)) = (table.sizes.get(i), table.offsets().get(i)) else {
                continue;
            };
            let j = out.sizes.len();
            out.sizes.push(*size);
            out.offsets_mut().push(*offset);
            out.dts.push(u64::try_from(at - lead).unwrap_or(u64::MAX));
            out.durations.push(duration);
            if has_cts {
                out.cts_offsets.push(table.cts_offset(i));
            }
            if let Some(sync) = out.sync.as_mut() {
                if table.is_sync(i) {
                    sync.push(u32::try_from(j).unwrap_or(u32::MAX));
                }
            }
        }
    }
    Ok((out, lead))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::MediaIndex;
    use crate::package::plan_segments;
    use crate::package::testing::track;
    use crate::source::ObjectIdentity;

    /// 512 ticks per frame at 15360 Hz (30 fps); a sync sample every 30 frames.
    const FRAME: u64 = 512;

    fn media(start: u64, duration: u64, media_time: u64) -> Edit {
        Edit {
            start_ticks: start,
            duration_ticks: duration,
            media_time_ticks: Some(media_time),
        }
    }

    fn empty(start: u64, duration: u64) -> Edit {
        Edit {
            start_ticks: start,
            duration_ticks: duration,
            media_time_ticks: None,
        }
    }

    /// The 10 s test video (300 frames) with `edits`.
    fn video(edits: Vec<Edit>) -> TrackIndex {
        let mut track = track(1, true);
        track.edits = EditList { edits };
        track
    }

    /// Source sample of each output sample, found by its (unique) file offset.
    fn sources(source: &TrackIndex, presented: &TrackIndex) -> Vec<usize> {
        (presented.samples.offsets().iter())
            .map(|o| {
                source
                    .samples
                    .offsets()
                    .iter()
                    .position(|s| s == o)
                    .unwrap()
            })
            .collect()
    }

    #[test]
    fn one_edit_presenting_every_sample_leaves_the_track_as_it_is() {
        let source = video(vec![media(0, 300 * FRAME, 0)]);
        let presented = present(source.clone()).unwrap();
        assert_eq!(presented.samples, source.samples);
        assert_eq!(presented.edits, source.edits);
    }

    /// Given two media edits, each one second from a sync sample (source 0-1 s, then
    /// 2-3 s), then the output is the two runs of samples back to back, with decode times
    /// running on without a jump and sync samples where the source had them.
    #[test]
    fn two_clips_are_joined_with_continuous_decode_times() {
        let source = video(vec![
            media(0, 30 * FRAME, 0),
            media(30 * FRAME, 30 * FRAME, 60 * FRAME),
        ]);
        let presented = present(source.clone()).unwrap();
        let expected: Vec<usize> = (0..30).chain(60..90).collect();
        assert_eq!(sources(&source, &presented), expected);
        let dts: Vec<u64> = (0..60).map(|i| i * FRAME).collect();
        assert_eq!(presented.samples.dts, dts);
        assert_eq!(presented.samples.durations, vec![FRAME as u32; 60]);
        assert_eq!(presented.samples.sync, Some(vec![0, 30]));
        assert_eq!(presented.edits.first_media_time_ticks(), 0);
        assert_eq!(presented.edits.leading_empty_ticks(), 0);
    }

    /// Given half a second of empty edit between two clips, then the sample before it
    /// lasts half a second longer, so the next clip starts exactly half a second later.
    #[test]
    fn an_empty_edit_mid_track_extends_the_sample_before_it() {
        let source = video(vec![
            media(0, 30 * FRAME, 0),
            empty(30 * FRAME, 15 * FRAME),
            media(45 * FRAME, 30 * FRAME, 30 * FRAME),
        ]);
        let presented = present(source.clone()).unwrap();
        assert_eq!(presented.samples.len(), 60);
        assert_eq!(presented.samples.durations[29], 16 * FRAME as u32);
        assert_eq!(presented.samples.dts[30], 45 * FRAME);
        assert_eq!(presented.samples.end_dts(), 75 * FRAME);
    }

    /// Given a first edit starting 15 frames into a GOP, then the 15 frames before it stay
    /// (they are needed to decode it) and the title shift S puts them before the start:
    /// the first presented frame is at exactly S.
    #[test]
    fn a_first_edit_inside_a_gop_keeps_its_pre_roll_before_the_start() {
        let source = video(vec![media(0, 60 * FRAME, 15 * FRAME)]);
        let presented = present(source.clone()).unwrap();
        assert_eq!(sources(&source, &presented), (0..75).collect::<Vec<_>>());
        let index = MediaIndex {
            identity: ObjectIdentity {
                size: 0,
                version: String::new(),
            },
            movie_timescale: 1000,
            tracks: vec![presented],
            text_tracks: Vec::new(),
        };
        let plan = plan_segments(&index, 6000);
        let track_plan = &plan.tracks[0];
        assert_eq!(track_plan.title_shift_ticks, 15 * FRAME);
        let table = &index.tracks[0].samples;
        assert_eq!(
            track_plan.output_pts(table, 15),
            track_plan.title_shift_ticks
        );
        assert_eq!(track_plan.output_pts(table, 0), 0);
    }

    /// Given a second edit starting 15 frames into a GOP, then packaging is refused with
    /// the edit's number and its time: its pre-roll would be shown mid-title.
    #[test]
    fn a_later_edit_inside_a_gop_is_refused_with_its_number_and_time() {
        let source = video(vec![
            media(0, 30 * FRAME, 0),
            media(30 * FRAME, 30 * FRAME, 45 * FRAME),
        ]);
        let error = present(source).unwrap_err();
        let PackageError::UnsupportedEdit {
            track_id,
            edit,
            at_ms,
            ..
        } = &error
        else {
            panic!("{error}");
        };
        assert_eq!((*track_id, *edit, *at_ms), (1, 2, 1000));
        assert!(error.to_string().contains("inside a GOP"), "{error}");
    }

    /// Given an audio join off the AAC frame grid, then every frame keeps its exact source
    /// time and the join moves by less than half a frame.
    #[test]
    fn audio_edits_off_the_frame_grid_join_within_half_a_frame() {
        let mut source = track(2, false);
        source.edits = EditList {
            edits: vec![media(0, 48_000, 1024), media(48_000, 48_000, 100_000)],
        };
        let presented = present(source.clone()).unwrap();
        let from = sources(&source, &presented);
        // Frame 0 is the first edit's pre-roll; the second edit starts with the frame
        // whose middle is past media time 100000 (frame 98, at 100352).
        assert_eq!(from[0], 0);
        let join = from.iter().position(|s| *s == 98).unwrap();
        assert_eq!(from[join - 1], 47);
        // Output time (before the title shift) of each frame = its movie time + lead.
        let lead = i128::from(presented.edits.first_media_time_ticks());
        for (j, &s) in from.iter().enumerate() {
            let out = i128::from(presented.samples.dts[j]) - lead;
            let src = i128::from(source.samples.dts[s]);
            let movie = if j < join {
                src - 1024
            } else {
                48_000 + src - 100_000
            };
            assert_eq!(out, movie, "frame {j} (source {s})");
        }
        let stretched = i64::from(presented.samples.durations[join - 1]) - 1024;
        assert!(stretched.abs() <= 512, "{stretched}");
    }

    /// 16 frames with B-frames in closed GOPs of 4: decode order I0 P3 B1 B2 (display
    /// numbers), a one-frame composition delay, so frame `d` of GOP `g` is presented at
    /// `(4g + d + 1) * FRAME`.
    fn bframes(edits: Vec<Edit>) -> TrackIndex {
        let mut track = video(edits);
        let table = &mut track.samples;
        let display = [0u64, 3, 1, 2];
        table.sizes.truncate(16);
        table.offsets_mut().truncate(16);
        table.dts.truncate(16);
        table.durations.truncate(16);
        table.cts_offsets = (0..16u64)
            .map(|i| ((display[(i % 4) as usize] + 1) * FRAME) as i32 - (i % 4 * FRAME) as i32)
            .collect();
        table.sync = Some(vec![0, 4, 8, 12]);
        track
    }

    /// Given B-frames and two edits each presenting one whole GOP (GOP 0, then GOP 2), then
    /// the GOPs are joined in decode order with their composition offsets, and decode times
    /// run on: the join is exact because both GOPs have the same composition delay.
    #[test]
    fn clips_with_b_frames_join_on_closed_gops() {
        let source = bframes(vec![
            media(0, 4 * FRAME, FRAME),
            media(4 * FRAME, 4 * FRAME, 9 * FRAME),
        ]);
        let presented = present(source.clone()).unwrap();
        let expected: Vec<usize> = (0..4).chain(8..12).collect();
        assert_eq!(sources(&source, &presented), expected);
        assert_eq!(presented.samples.durations, vec![FRAME as u32; 8]);
        assert_eq!(
            presented.samples.cts_offsets,
            expected
                .iter()
                .map(|&i| source.samples.cts_offsets[i])
                .collect::<Vec<_>>()
        );
        // The first frame is presented one frame after its decode time: lead -FRAME.
        assert_eq!(presented.edits.first_media_time_ticks(), FRAME);
    }

    /// Given B-frames and an interior edit that ends one frame before its GOP does, then
    /// it is refused: the P frame it needs to decode its B-frames is presented after it.
    #[test]
    fn an_interior_edit_ending_inside_a_b_frame_gop_is_refused() {
        let source = bframes(vec![
            media(0, 3 * FRAME, FRAME),
            media(3 * FRAME, 4 * FRAME, 9 * FRAME),
        ]);
        let error = present(source).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("edit 1 at 100 ms ends inside a GOP"),
            "{error}"
        );
    }

    #[test]
    fn an_edit_list_of_empty_edits_only_is_refused() {
        let error = present(video(vec![empty(0, 1000)])).unwrap_err();
        assert!(error.to_string().contains("presents media"), "{error}");
    }

    /// Given a thousand edits each presenting the whole track, then the work is bounded:
    /// refused once the edits present the media more than a few times over.
    #[test]
    fn edits_presenting_the_media_many_times_over_are_refused() {
        let edits = (0..1000)
            .map(|k| media(k * 300 * FRAME, 300 * FRAME, 0))
            .collect();
        let error = present(video(edits)).unwrap_err();
        assert!(error.to_string().contains("times over"), "{error}");
    }
}
