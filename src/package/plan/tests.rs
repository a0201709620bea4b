//! The segment planner over built tracks: where tracks are cut, the A/V relationship kept,
//! and hostile times.

use super::*;
use crate::media::{CodecInfo, Edit, EditList};
use crate::source::ObjectIdentity;

/// An edit list of an optional leading empty edit and one media edit to the end.
fn edits(empty_ticks: u64, media_time_ticks: u64) -> EditList {
    let mut edits = Vec::new();
    if empty_ticks > 0 {
        edits.push(Edit {
            start_ticks: 0,
            duration_ticks: empty_ticks,
            media_time_ticks: None,
        });
    }
    edits.push(Edit {
        start_ticks: empty_ticks,
        duration_ticks: u64::MAX / 4,
        media_time_ticks: Some(media_time_ticks),
    });
    EditList { edits }
}

fn track(
    track_id: u32,
    kind: TrackKind,
    timescale: u32,
    n: usize,
    delta: u32,
    edits: EditList,
) -> TrackIndex {
    TrackIndex {
        track_id,
        kind,
        timescale,
        language: None,
        codec: CodecInfo {
            fourcc: *b"test",
            rfc6381: String::new(),
            width: 0,
            height: 0,
            channels: 0,
            sample_rate: 0,
            color: None,
            dolby_vision: None,
        },
        sample_description: bytes::Bytes::new(),
        tkhd_width: 0,
        tkhd_height: 0,
        display_matrix: crate::media::UNITY_MATRIX,
        edits,
        samples: SampleTable {
            sizes: vec![1; n],
            offsets: (0..n as u64).collect(),
            dts: (0..n as u64).map(|i| i * u64::from(delta)).collect(),
            durations: vec![delta; n],
            cts_offsets: Vec::new(),
            sync: None,
        },
    }
}

/// 10 s of 30 fps video with a sync sample every second and a 2-frame B-frame delay,
/// and 48 kHz AAC whose edit list skips 1024 priming samples.
fn av_index() -> MediaIndex {
    let mut video = track(1, TrackKind::Video, 15360, 300, 512, edits(0, 1024));
    video.samples.cts_offsets = (0..300)
        .map(|i| if i % 30 == 0 { 1024 } else { 1536 })
        .collect();
    video.samples.sync = Some((0..10).map(|i| i * 30).collect());
    let audio = track(2, TrackKind::Audio, 48000, 469, 1024, edits(0, 1024));
    MediaIndex {
        identity: ObjectIdentity {
            size: 0,
            version: String::new(),
        },
        movie_timescale: 1000,
        tracks: vec![video, audio],
        text_tracks: Vec::new(),
    }
}

#[test]
fn video_is_cut_on_sync_samples_at_the_target() {
    let plan = plan_segments(&av_index(), 4000);
    assert_eq!(plan.segment_count, 3);
    assert_eq!(plan.tracks[0].first_samples, [0, 120, 240, 300]);
}

#[test]
fn audio_is_cut_at_the_same_times_as_video() {
    let index = av_index();
    let plan = plan_segments(&index, 4000);
    let (video, audio) = (&plan.tracks[0], &plan.tracks[1]);
    for segment in 1..plan.segment_count {
        let (v_start, _) = video
            .segment_span(&index.tracks[0].samples, segment)
            .unwrap();
        let (a_start, _) = audio
            .segment_span(&index.tracks[1].samples, segment)
            .unwrap();
        let v = v_start as f64 / 15360.0;
        let a = a_start as f64 / 48000.0;
        // Audio starts at the first frame at or after the video cut: within one frame.
        assert!(
            a >= v && a - v < 1024.0 / 48000.0,
            "segment {segment}: {v} vs {a}"
        );
    }
}

#[test]
fn edit_lists_and_composition_delay_keep_the_av_relationship() {
    let index = av_index();
    let plan = plan_segments(&index, 6000);
    let (video, audio) = (&plan.tracks[0], &plan.tracks[1]);
    // Source movie time of video sample 0 is (0 + 1024 - 1024) / 15360 = 0 s, of audio
    // sample 0 is (0 - 1024) / 48000 s. The output must keep that difference.
    let video_pts = video.output_pts(&index.tracks[0].samples, 0) as f64 / 15360.0;
    let audio_pts = audio.output_pts(&index.tracks[1].samples, 0) as f64 / 48000.0;
    let source_difference = 0.0 - (-1024.0 / 48000.0);
    let output_difference = video_pts - audio_pts;
    assert!((output_difference - source_difference).abs() < 0.001);
    // The title shift S is video's B-frame delay (2 frames): its first frame is presented
    // at S, and audio's priming starts at S - 1024. The delay is also the init segment's
    // edit, so video's first decode time is S too: its first picture at its `tfdt`.
    assert_eq!(video.composition_delay, 1024);
    assert_eq!(audio.composition_delay, 0);
    assert_eq!(video.dts_shift, 1024);
    assert_eq!(video.output_pts(&index.tracks[0].samples, 0), 1024);
    assert_eq!(audio.dts_shift, 3200 - 1024);
}

#[test]
fn a_delayed_track_keeps_its_empty_edit() {
    let mut index = av_index();
    index.tracks[1].edits = edits(24000, 0);
    let plan = plan_segments(&index, 6000);
    // Video sets S (its 2-frame delay, 3200 audio ticks), and is presented from S at its
    // first decode time; audio starts 0.5 s after it.
    assert_eq!(plan.tracks[0].dts_shift, 1024);
    assert_eq!(plan.tracks[0].output_pts(&index.tracks[0].samples, 0), 1024);
    assert_eq!(plan.tracks[1].dts_shift, 3200 + 24000);
}

#[test]
fn the_plan_is_deterministic_and_covers_every_sample() {
    let index = av_index();
    let a = plan_segments(&index, 2000);
    assert_eq!(a, plan_segments(&index, 2000));
    for (plan, track) in a.tracks.iter().zip(&index.tracks) {
        assert_eq!(plan.first_samples.len(), a.segment_count + 1);
        assert_eq!(
            *plan.first_samples.last().unwrap() as usize,
            track.samples.len()
        );
        assert!(plan.first_samples.windows(2).all(|w| w[0] <= w[1]));
    }
}

/// Given decode times that jump by billions of targets (1 tick per second, deltas of
/// 2^32 - 1), then each jump is one step: every sample starts a segment.
#[test]
fn huge_time_jumps_cost_one_step_each() {
    let mut index = av_index();
    index.tracks = vec![track(
        1,
        TrackKind::Video,
        1,
        1000,
        u32::MAX,
        EditList::default(),
    )];
    let plan = plan_segments(&index, 6000);
    assert_eq!(plan.segment_count, 1000);
}

/// Given an empty edit so long that every output time saturates at u64::MAX, then the
/// plan is one segment, not an endless search for the next cut.
#[test]
fn saturated_times_end_the_cutting() {
    let mut index = av_index();
    index.tracks[0].edits = edits(u64::MAX, 0);
    index.tracks.truncate(1);
    let plan = plan_segments(&index, 6000);
    assert_eq!(plan.segment_count, 1);
    assert_eq!(plan.tracks[0].first_samples, [0, 300]);
}

#[test]
fn an_audio_only_title_is_cut_on_any_sample() {
    let mut index = av_index();
    index.tracks.remove(0);
    let plan = plan_segments(&index, 6000);
    assert_eq!(plan.segment_count, 2);
}
