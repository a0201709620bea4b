//! Title documents' ladders over built tracks: cut at the first video rendition's times,
//! and misaligned or incomplete ladders refused by name.

use super::*;
use crate::package::testing::track;
use crate::package::{split_document_track_id, Rendition};

fn title(tracks: Vec<TrackIndex>) -> Title {
    let index = MediaIndex {
        identity: ObjectIdentity {
            size: 1,
            version: "v".into(),
        },
        movie_timescale: 1000,
        tracks,
        text_tracks: Vec::new(),
    };
    Title::new(index, 1000).unwrap()
}

fn entry<'a>(n: u32, title: &'a Title, role: LadderRole) -> LadderEntry<'a> {
    LadderEntry {
        label: format!("entry {n}"),
        file: n,
        title,
        role,
        track: None,
        language: None,
        name: None,
    }
}

fn ladder(entries: &[LadderEntry<'_>]) -> Result<Title, PackageError> {
    let identity = ObjectIdentity {
        size: 1,
        version: "ladder".into(),
    };
    build_ladder(entries, Vec::new(), identity, 1000)
}

/// A video track at `fps_num/fps_den` frames per second over `timescale`, a key frame
/// every `gop` frames, 10 s, `size` bytes a frame; with `b_frames`, composition offsets
/// 0, +1, -1 frame in turn (ctts version 1: key frames presented at their decode time).
fn video(timescale: u32, delta: u32, gop: u32, size: u32, b_frames: bool) -> TrackIndex {
    let mut t = track(1, true);
    let n = (10 * u64::from(timescale) / u64::from(delta)) as u32;
    t.timescale = timescale;
    t.samples.sizes = vec![size; n as usize];
    t.samples.offsets = (0..u64::from(n)).map(|i| i * u64::from(size)).collect();
    t.samples.dts = (0..u64::from(n)).map(|i| i * u64::from(delta)).collect();
    t.samples.durations = vec![delta; n as usize];
    t.samples.sync = Some((0..n).step_by(gop as usize).collect());
    if b_frames {
        let d = delta as i32;
        t.samples.cts_offsets = (0..n).map(|i| [0, d, -d][i as usize % 3]).collect();
    }
    t
}

/// Given three rungs (one over another timescale with B-frames) and an extra audio
/// file, then every video rendition is cut at the first one's times, names say which
/// file, the extra audio takes the document's language and name, and the variants are
/// ordered by bandwidth.
#[test]
fn a_ladder_is_cut_at_the_first_video_renditions_times() {
    let main = title(vec![video(15360, 512, 30, 2000, false), track(2, false)]);
    let big = title(vec![video(90000, 3000, 30, 9000, true)]);
    let small = title(vec![video(15360, 512, 30, 500, false)]);
    let mut french = title(vec![track(1, false)]);
    french.index.tracks[0].language = Some("fra".into());
    let mut fr = entry(4, &french, LadderRole::Audio);
    fr.language = Some("fr".into());
    fr.name = Some("Français".into());
    let ladder = ladder(&[
        entry(1, &main, LadderRole::Video),
        entry(2, &big, LadderRole::Video),
        entry(3, &small, LadderRole::Video),
        fr,
    ])
    .unwrap();
    assert_eq!(ladder.plan.segment_count, 10);
    let cut_secs = |pos: usize| -> Vec<f64> {
        let (plan, track) = (&ladder.plan.tracks[pos], &ladder.index.tracks[pos]);
        (0..10)
            .map(|k| {
                let (start, _) = plan.segment_span(&track.samples, k).unwrap();
                start as f64 / f64::from(track.timescale)
            })
            .collect()
    };
    let reference = cut_secs(0);
    for pos in [2, 3] {
        let times = cut_secs(pos);
        for (a, b) in reference.iter().zip(&times) {
            assert!(
                (a - b).abs() < 0.001,
                "track {pos}: {reference:?} {times:?}"
            );
        }
    }
    let videos: Vec<(u32, u32)> = (ladder.renditions.iter())
        .filter(|r| r.kind == TrackKind::Video)
        .map(|r| split_document_track_id(r.track_id).unwrap())
        .collect();
    assert_eq!(videos, [(3, 1), (1, 1), (2, 1)], "lowest bandwidth first");
    let audios: Vec<&Rendition> = (ladder.renditions.iter())
        .filter(|r| r.kind == TrackKind::Audio)
        .collect();
    assert_eq!(audios.len(), 2);
    assert!(audios[0].is_default && !audios[1].is_default);
    assert_eq!(audios[1].name.as_deref(), Some("Français"));
    let french = &ladder.index.tracks[audios[1].track_pos];
    assert_eq!(french.language.as_deref(), Some("fr"));
}

/// Given a rung whose key frames fall every 1.5 s, then the ladder is refused naming
/// the rung and the first cut it cannot make.
#[test]
fn key_frames_that_do_not_line_up_are_refused_by_rendition_and_time() {
    let main = title(vec![video(15360, 512, 30, 2000, false)]);
    let other = title(vec![video(15360, 512, 45, 2000, false)]);
    let err = ladder(&[
        entry(1, &main, LadderRole::Video),
        entry(2, &other, LadderRole::Video),
    ])
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "entry 2: no key frame at 1000 ms, where the first video rendition is cut"
    );
}

/// Given a rung at 29.97 fps against one at 30, then the refusal says why.
#[test]
fn frame_rates_that_cannot_be_cut_together_are_named() {
    let main = title(vec![video(15360, 512, 30, 2000, false)]);
    let ntsc = title(vec![video(30000, 1001, 30, 2000, false)]);
    let err = ladder(&[
        entry(1, &main, LadderRole::Video),
        entry(2, &ntsc, LadderRole::Video),
    ])
    .unwrap_err()
    .to_string();
    // 1.001 s is within a millisecond of 1 s; 2.002 s is not.
    assert!(err.starts_with("entry 2: no key frame at 2000 ms"), "{err}");
    assert!(
        err.ends_with("(frame rates 30.000 and 29.970 cannot be cut together)"),
        "{err}"
    );
}

/// Given a rung lasting 5 s against 10 s, then it is refused with both end times.
#[test]
fn renditions_ending_more_than_a_segment_apart_are_refused() {
    let main = title(vec![video(15360, 512, 30, 2000, false)]);
    let mut short = video(15360, 512, 30, 2000, false);
    let table = &mut short.samples;
    table.sizes.truncate(150);
    table.offsets_mut().truncate(150);
    table.dts.truncate(150);
    table.durations.truncate(150);
    table.sync = Some((0..150).step_by(30).collect());
    let short = title(vec![short]);
    let err = ladder(&[
        entry(1, &main, LadderRole::Video),
        entry(2, &short, LadderRole::Video),
    ])
    .unwrap_err();
    assert_eq!(
        err,
        PackageError::LadderDuration {
            rendition: "entry 2".into(),
            end_ms: 5000,
            reference_end_ms: 10000
        }
    );
}

/// Given an audio entry selecting a track its file lacks, or a video entry over an
/// audio-only file, then the entry is named.
#[test]
fn an_entry_without_its_track_is_refused() {
    let main = title(vec![video(15360, 512, 30, 2000, false)]);
    let audio = title(vec![track(1, false)]);
    let mut missing = entry(2, &audio, LadderRole::Audio);
    missing.track = Some(7);
    let err = ladder(&[entry(1, &main, LadderRole::Video), missing]).unwrap_err();
    assert_eq!(err.to_string(), "entry 2: the file has no audio track 7");
    let err = ladder(&[
        entry(1, &main, LadderRole::Video),
        entry(2, &audio, LadderRole::Video),
    ])
    .unwrap_err();
    assert_eq!(err.to_string(), "entry 2: the file has no video track");
}
