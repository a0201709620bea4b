//! nginx-vod-module's numbering over built titles: the module's count from the longest
//! track, the windows with no key frame, audio cut at the windows, hostile times.

use super::*;
use crate::media::{CodecInfo, Edit, EditList, SampleTable};
use crate::package::Title;
use crate::source::ObjectIdentity;

/// One media edit to the end, starting at media time `media_time` (the AAC priming, a
/// B-frame delay), as ffmpeg writes it.
fn skipping(media_time: u64) -> EditList {
    EditList {
        edits: vec![Edit {
            start_ticks: 0,
            duration_ticks: u64::MAX / 4,
            media_time_ticks: Some(media_time),
        }],
    }
}

fn track(track_id: u32, kind: TrackKind, timescale: u32, durations: Vec<u32>) -> TrackIndex {
    let n = durations.len();
    let dts = (durations.iter())
        .scan(0u64, |t, d| {
            let at = *t;
            *t += u64::from(*d);
            Some(at)
        })
        .collect();
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
        edits: EditList::default(),
        samples: SampleTable {
            sizes: vec![1; n],
            offsets: (0..n as u64).collect(),
            dts,
            durations,
            cts_offsets: Vec::new(),
            sync: None,
        },
    }
}

/// `seconds` of 25 fps video (12800 Hz), a key frame every `gop` frames, two B-frames
/// delayed by the edit list as ffmpeg writes them.
fn video(seconds: u32, gop: u32) -> TrackIndex {
    let frames = seconds * 25;
    let mut video = track(1, TrackKind::Video, 12800, vec![512; frames as usize]);
    video.samples.cts_offsets = (0..frames)
        .map(|i| if i % gop == 0 { 1024 } else { 1536 })
        .collect();
    video.samples.sync = Some((0..frames).step_by(gop as usize).collect());
    video.edits = skipping(1024);
    video
}

/// 48 kHz AAC lasting `seconds` after its 1024 priming samples, which the edit list skips:
/// whole frames, the last one short, as ffmpeg's encoder ends a stream.
fn aac(seconds: f64) -> TrackIndex {
    let total = 1024 + (seconds * 48000.0).round() as u32;
    let mut durations = vec![1024; (total / 1024) as usize];
    if !total.is_multiple_of(1024) {
        durations.push(total % 1024);
    }
    let mut audio = track(2, TrackKind::Audio, 48000, durations);
    audio.edits = skipping(1024);
    audio
}

fn title(tracks: Vec<TrackIndex>) -> Title {
    let index = MediaIndex {
        identity: ObjectIdentity {
            size: 0,
            version: String::new(),
        },
        movie_timescale: 1000,
        tracks,
        text_tracks: Vec::new(),
    };
    Title::new(index, 6000).unwrap()
}

/// `title` numbered, its tracks' durations read as the module reads a whole file's.
fn windows(title: &Title) -> Result<Windows, PackageError> {
    let durations = title.index.tracks.iter().map(module_duration_ms).collect();
    Windows::new(&title.index, &title.plan, durations)
}

/// The samples of window `window` of track `pos` in `plan`.
fn samples(plan: &SegmentPlan, pos: usize, window: usize) -> std::ops::Range<usize> {
    plan.tracks[pos].samples(window).unwrap()
}

/// Given the default ffmpeg encode of 30 s (video 30.000 s, AAC 30.021 s counting its
/// priming), then the muxed and audio sets list six segments, the video five; the sixth
/// states the 21 ms left, as the module's `index-v1-a1.m3u8` does
/// (`#EXTINF:6.000` five times, then `#EXTINF:0.021`).
#[test]
fn an_aac_tail_past_the_video_lists_one_more_segment() {
    let title = title(vec![video(30, 50), aac(30.0)]);
    let windows = windows(&title).unwrap();
    assert_eq!(windows.durations_ms, [30000, 30021]);
    assert_eq!(windows.count(&title.index, &[0, 1]), 6);
    assert_eq!(windows.count(&title.index, &[0]), 5);
    assert_eq!(windows.count(&title.index, &[1]), 6);
    assert_eq!(
        windows.stated_ms(&[0, 1], 6),
        [6000, 6000, 6000, 6000, 6000, 21]
    );
    assert_eq!(windows.stated_ms(&[0], 5), [6000; 5]);
}

/// Given the same file, then with a video the windows hold the title's own segments, the
/// audio tail riding with the last video and the sixth window empty (the module's muxed
/// `seg-6-v1-a1.m4s` has no sample either); the audio alone is cut at the windows, and
/// as the edit list ends the AAC with the video its sixth window is empty too.
#[test]
fn the_windows_hold_the_title_segments_and_audio_is_cut_at_the_windows() {
    let title = title(vec![video(30, 50), aac(30.0)]);
    let windows = windows(&title).unwrap();
    assert_eq!(title.plan.segment_count, 5);
    assert_eq!(
        windows.title_segments,
        [Some(0), Some(1), Some(2), Some(3), Some(4), None]
    );
    for pos in 0..2 {
        for k in 0..5 {
            assert_eq!(
                samples(&windows.with_video, pos, k),
                title.plan.tracks[pos].samples(k).unwrap()
            );
        }
        assert!(samples(&windows.with_video, pos, 5).is_empty());
    }
    let audio = &title.index.tracks[1];
    let n = audio.samples.len();
    assert_eq!(samples(&windows.with_video, 1, 4).end, n);
    // Audio alone: window k holds the frames presented in [6k, 6k + 6) s.
    let plan = &windows.audio_alone;
    for k in 1..5 {
        let first = samples(plan, 1, k).start;
        let at = |i: usize| plan.tracks[1].output_pts(&audio.samples, i);
        let start = windows.with_video.tracks[0].output_pts(&title.index.tracks[0].samples, 0)
            * 48000
            / 12800
            + k as u64 * 288_000;
        assert!(at(first) >= start && at(first - 1) < start, "window {k}");
    }
    assert_eq!(samples(plan, 1, 4).end, n);
    assert!(samples(plan, 1, 5).is_empty());
}

/// Given AAC that outlasts a 30 s video by 2 s, then the audio alone fills a sixth,
/// short window from 30 s to its end (the module's `seg-6-a1.m4s`, `#EXTINF:2.021`),
/// while with the video it rides in the fifth and the sixth is empty.
#[test]
fn audio_that_outlasts_the_video_fills_the_windows_after_it() {
    let title = title(vec![video(30, 50), aac(32.0)]);
    let windows = windows(&title).unwrap();
    assert_eq!(windows.count(&title.index, &[1]), 6);
    assert_eq!(windows.stated_ms(&[1], 6)[5], 2021);
    let n = title.index.tracks[1].samples.len();
    let tail = samples(&windows.audio_alone, 1, 5);
    assert_eq!(tail.end, n);
    // The 1024-sample frames presented from 30 s to 32 s: 93 (the 94th from the end
    // starts 5 ms before 30 s).
    assert_eq!(tail.len(), 93);
    assert_eq!(samples(&windows.with_video, 1, 4).end, n);
    assert!(samples(&windows.with_video, 1, 5).is_empty());
}

/// Given a key frame every 10 s, then windows 2 and 4 (12-18 s, 24-30 s) start no
/// segment and are empty, as the module's are, and the title's three segments keep
/// windows 0, 1 and 3.
#[test]
fn a_window_without_a_key_frame_is_an_empty_segment() {
    let title = title(vec![video(30, 250), aac(30.0)]);
    let windows = windows(&title).unwrap();
    assert_eq!(title.plan.segment_count, 3);
    assert_eq!(
        windows.title_segments,
        [Some(0), Some(1), None, Some(2), None, None]
    );
    assert_eq!(windows.count(&title.index, &[0]), 5);
    assert_eq!(samples(&windows.with_video, 0, 1), 250..500);
    assert!(samples(&windows.with_video, 0, 2).is_empty());
    assert_eq!(samples(&windows.with_video, 0, 3), 500..750);
}

/// Given a title of audio alone, then its own cuts are the windows.
#[test]
fn audio_alone_in_the_title_is_cut_at_the_same_windows_either_way() {
    let title = title(vec![aac(30.0)]);
    let windows = windows(&title).unwrap();
    assert_eq!(windows.count(&title.index, &[0]), 6);
    for k in 0..5 {
        assert_eq!(
            samples(&windows.audio_alone, 0, k),
            samples(&windows.with_video, 0, k),
            "window {k}"
        );
    }
}

/// Given a key frame billions of seconds out (1 tick a second, deltas of 2^32 - 1), then
/// the numbering is refused before windows that many are allocated.
#[test]
fn a_key_frame_past_the_window_limit_is_refused() {
    let huge = track(1, TrackKind::Video, 1, vec![u32::MAX; 3]);
    let title = title(vec![huge]);
    assert!(windows(&title).is_err());
}
