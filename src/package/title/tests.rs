//! Titles over built tracks: refused tracks, and peak bandwidth and frame rate measured.

use super::*;
use crate::package::testing::track;
use crate::source::ObjectIdentity;

fn index(tracks: Vec<TrackIndex>) -> MediaIndex {
    MediaIndex {
        identity: ObjectIdentity {
            size: 0,
            version: String::new(),
        },
        movie_timescale: 1000,
        tracks,
        text_tracks: Vec::new(),
    }
}

/// Given an audio track whose tables hold no samples (a fragmented file whose fragments
/// were not read, say), then the title is refused, naming the track, rather than
/// packaged into a presentation of 0 seconds.
#[test]
fn a_track_without_samples_is_refused_by_name() {
    let mut audio = track(2, false);
    audio.samples = Default::default();
    let err = Title::new(index(vec![track(1, true), audio]), 6000).unwrap_err();
    assert_eq!(err, PackageError::EmptyTrack { track_id: 2 });
    assert_eq!(err.to_string(), "track 2 has no samples");
}

/// Given a video track whose samples all last 0 ticks, then it is refused too.
#[test]
fn a_track_lasting_no_time_is_refused() {
    let mut video = track(1, true);
    video.samples.durations.iter_mut().for_each(|d| *d = 0);
    video.samples.dts.iter_mut().for_each(|d| *d = 0);
    let err = Title::new(index(vec![video]), 6000).unwrap_err();
    assert_eq!(err, PackageError::ZeroDuration { track_id: 1 });
}

/// Given an index with no audio or video track, then there is nothing to package.
#[test]
fn an_index_without_tracks_is_refused() {
    let err = Title::new(index(Vec::new()), 6000).unwrap_err();
    assert_eq!(err, PackageError::NoRenditions);
}

#[test]
fn a_short_last_segment_does_not_set_the_peak() {
    let segments = [(6_000, 6.0), (6_000, 6.0), (500, 0.1)];
    let peak = peak_bit_rate(&segments, 6.0);
    // The last two segments are 6.1 s of 6,500 bytes: 8,525 bit/s, not the last one's
    // 0.1 s of 500 bytes (40,000 bit/s).
    assert!((peak - 6_500.0 * 8.0 / 6.1).abs() < 1.0, "{peak}");
}

#[test]
fn zero_length_segments_keep_the_peak_linear() {
    // Without the window bound this is 2 * 10^10 steps: hours in a debug build.
    let segments = vec![(1_000, 0.0); 200_000];
    assert_eq!(peak_bit_rate(&segments, 6.0), 0.0);
}

/// Given 64 frames at 30 fps, one of them held 0.5333 s longer across an empty edit,
/// then the frame rate is still 30.
#[test]
fn a_frame_held_across_an_empty_edit_does_not_lower_the_frame_rate() {
    let mut durations = vec![512u32; 64];
    durations[31] += 8192;
    let dts = (durations.iter())
        .scan(0u64, |t, d| {
            let at = *t;
            *t += u64::from(*d);
            Some(at)
        })
        .collect();
    let table = SampleTable {
        sizes: vec![1; 64],
        offsets: vec![0; 64].into(),
        dts,
        durations,
        ..SampleTable::default()
    };
    assert!((video_frame_rate(&table, 15360.0) - 30.0).abs() < 1e-9);
}

#[test]
fn a_title_shorter_than_half_the_target_still_has_a_rate() {
    assert!((peak_bit_rate(&[(1_000, 2.0)], 6.0) - 4_000.0).abs() < 1.0);
}

/// Given a title, then its version token is FNV-1a of its identity, segment duration and
/// packager format 3 (which changed TS, SAMPLE-AES and audio pre-roll bytes, so every
/// title's URLs moved once, and a CDN never mixes old and new segments of one title); a
/// turned title gets the same token as an upright one of the same identity.
#[test]
fn the_version_token_hashes_identity_duration_and_format() {
    let upright = Title::new(index(vec![track(1, true), track(2, false)]), 6000).unwrap();
    let mut video = track(1, true);
    video.display_matrix = [0, 0x1_0000, 0, -0x1_0000, 0, 0, 0, 0, 0x4000_0000];
    let turned = Title::new(index(vec![video, track(2, false)]), 6000).unwrap();
    // FNV-1a of the four fields (size 0, version "", 6000 ms, format 4), each ending in a
    // NUL, computed apart from this code.
    assert_eq!(upright.version_token(), "f8303217d36230f6");
    assert_eq!(turned.version_token(), upright.version_token());
}
