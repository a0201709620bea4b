//! Edit lists applied to small built tracks: joins, empty edits, pre-roll and the edits
//! refused with their number and time.

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
