//! `moov` to `MediaIndex` over the fixtures and hand-made boxes, with the sample tables
//! read from the bytes checked against mp4-atom's decoding (`reference`).

mod reference;

use super::*;
use crate::media::{index_from_bytes, UNITY_MATRIX};

/// The `moov` box of fixture `name` (which must have one at the top level).
fn fixture_moov(name: &str) -> Bytes {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    let file = std::fs::read(path).unwrap();
    let mut pos = 0;
    while pos + 8 <= file.len() {
        let size = u32::from_be_bytes(file[pos..pos + 4].try_into().unwrap()) as usize;
        if &file[pos + 4..pos + 8] == b"moov" {
            return Bytes::copy_from_slice(&file[pos..pos + size]);
        }
        pos += size;
    }
    panic!("no moov in {name}");
}

/// The names of the fixtures that are progressive MP4s (a `moov` with every sample).
fn progressive_fixtures() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    (std::fs::read_dir(dir).unwrap())
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|n| (n.ends_with(".mp4") || n.ends_with(".m4a")) && !n.contains("frag"))
        .collect()
}

/// Given every progressive fixture, when its tables are read straight from the `moov`
/// bytes, then every track's sample table equals mp4-atom's decoding expanded as before
/// (sizes, offsets, times, composition offsets, sync samples).
#[test]
fn tables_read_from_the_bytes_equal_the_decoded_and_expanded_ones() {
    let limits = MediaLimits::default();
    let mut checked = 0;
    for name in progressive_fixtures() {
        let moov = fixture_moov(&name);
        let decoded = Moov::decode(&mut &moov[..]).unwrap();
        let skeleton = skeleton::build(&moov, &limits).unwrap();
        assert_eq!(skeleton.tables.len(), decoded.trak.len(), "{name}");
        for (trak, raw) in decoded.trak.iter().zip(&skeleton.tables) {
            let id = trak.tkhd.track_id;
            let object_len = u64::MAX / 2;
            let ours = tables::sample_table(raw, id, object_len, &limits).unwrap();
            let before = reference::sample_table(trak, object_len, &limits).unwrap();
            assert_eq!(ours, before, "{name} track {id}");
            assert_eq!(
                tables::sample_count(raw, id).unwrap(),
                reference::sample_count(trak)
            );
            assert_eq!(
                tables::stts_end(raw, id).unwrap(),
                reference::stts_end(trak)
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} tracks checked");
}

/// Limits that leave every track's offsets for later.
fn later_limits() -> MediaLimits {
    MediaLimits {
        offsets_at_load_max_samples: 0,
        ..MediaLimits::default()
    }
}

/// Given every progressive fixture, when its tables are read with the offsets left for
/// later (`offsets_at_load_max_samples` at 0), then no offsets are worked out at first,
/// and the ones worked out on first use are those worked out at load.
#[test]
fn offsets_left_for_later_are_the_ones_worked_out_at_load() {
    let limits = MediaLimits::default();
    let later = later_limits();
    let mut checked = 0;
    for name in progressive_fixtures() {
        let moov = fixture_moov(&name);
        let skeleton = skeleton::build(&moov, &limits).unwrap();
        for (raw, id) in skeleton.tables.iter().zip(1..) {
            let object_len = u64::MAX / 2;
            let Ok(now) = tables::sample_table(raw, id, object_len, &limits) else {
                continue;
            };
            let later = tables::sample_table(raw, id, object_len, &later).unwrap();
            assert!(now.offsets_known(), "{name} track {id}");
            assert!(
                !later.offsets_known() || later.is_empty(),
                "{name} track {id}"
            );
            assert_eq!(later.offsets(), now.offsets(), "{name} track {id}");
            assert!(later.offsets_known());
            let mut changed = later.clone();
            changed.offsets_mut().truncate(1);
            assert_eq!(changed.offsets(), &now.offsets()[..1.min(now.len())]);
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} tracks checked");
}

/// Given a fixture's `stsc` changed in ways a broken muxer or a hostile file might, when
/// the offsets are left for later, then the load refuses exactly what working them out
/// at once refuses, with the same reason.
#[test]
fn later_offsets_are_refused_for_what_offsets_at_once_are() {
    let limits = MediaLimits::default();
    let later = later_limits();
    let object_len = u64::MAX / 2;
    let mut compared = 0;
    for name in [
        "h264-aac-3s.mp4",
        "h264-aac-2lang-3s.mp4",
        "hevc-aac-3s.mp4",
    ] {
        let moov = fixture_moov(name);
        let skeleton = skeleton::build(&moov, &limits).unwrap();
        for (raw, id) in skeleton.tables.iter().zip(1..) {
            let Some(stsc) = raw.stsc.clone() else {
                continue;
            };
            let entries = (stsc.len() - 8) / 12;
            // (entry, field: 0 first_chunk / 1 samples_per_chunk, new value)
            let mut patches = vec![(0, 0, 0), (0, 0, 2), (0, 1, 0), (0, 1, 1), (0, 1, u32::MAX)];
            patches.push((entries - 1, 1, 1_000));
            patches.push((entries - 1, 0, 1_000_000));
            if entries > 1 {
                patches.push((1, 0, 1));
            }
            for (entry, field, value) in patches {
                let mut bytes = stsc.to_vec();
                let at = 8 + entry * 12 + field * 4;
                bytes[at..at + 4].copy_from_slice(&u32::to_be_bytes(value));
                let mut broken = raw.clone();
                broken.stsc = Some(Bytes::from(bytes));
                let at_once = tables::sample_table(&broken, id, object_len, &limits);
                let later = tables::sample_table(&broken, id, object_len, &later);
                assert_eq!(
                    at_once.as_ref().err().map(ToString::to_string),
                    later.as_ref().err().map(ToString::to_string),
                    "{name} track {id}, entry {entry} field {field} = {value}"
                );
                if let (Ok(at_once), Ok(later)) = (at_once, later) {
                    assert_eq!(later.offsets(), at_once.offsets());
                }
                compared += 1;
            }
        }
    }
    assert!(compared >= 40, "{compared} cases compared");
}

/// Given a long track whose file is cut inside its last chunk (an upload in progress),
/// when its offsets are left for later, then the index is refused at load, naming the
/// first sample past the end, as when they are worked out at once.
#[test]
fn a_cut_file_is_refused_at_load_with_offsets_left_for_later() {
    let limits = MediaLimits::default();
    let later = later_limits();
    let moov = fixture_moov("h264-aac-3s.mp4");
    let skeleton = skeleton::build(&moov, &limits).unwrap();
    let raw = &skeleton.tables[0];
    let whole = tables::sample_table(raw, 1, u64::MAX / 2, &limits).unwrap();
    let (last, size) = (whole.offsets().len() - 1, *whole.sizes.last().unwrap());
    let cut = whole.offsets()[last] + u64::from(size) - 1;
    let at_once = tables::sample_table(raw, 1, cut, &limits).unwrap_err();
    let later = tables::sample_table(raw, 1, cut, &later).unwrap_err();
    assert!(matches!(later, MediaError::Truncated { .. }), "{later}");
    assert_eq!(later.to_string(), at_once.to_string());
}

/// `h264-aac-two-clips-editlist.mp4` with its first `elst` (the video track's, version 1:
/// 20 bytes per edit) changed by `patch(entries)`.
fn two_clips_with(patch: impl FnOnce(&mut [u8])) -> Result<MediaIndex, MediaError> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/h264-aac-two-clips-editlist.mp4");
    let mut file = std::fs::read(path).unwrap();
    let at = file.windows(4).position(|w| w == b"elst").unwrap();
    patch(&mut file[at + 12..at + 12 + 40]);
    index_from_bytes(&Bytes::from(file), &MediaLimits::default())
}

/// Given every fixture with two tracks or more, when their tables are read side by
/// side (the threshold at 0), then each track's table is the one read in turn.
#[test]
fn tables_read_side_by_side_equal_those_read_in_turn() {
    let limits = MediaLimits::default();
    let mut checked = 0;
    for name in [
        "h264-aac-3s.mp4",
        "h264-aac-2lang-3s.mp4",
        "hevc-aac-3s.mp4",
    ] {
        let moov = fixture_moov(name);
        let decoded = Moov::decode(&mut &moov[..]).unwrap();
        let skeleton = skeleton::build(&moov, &limits).unwrap();
        let object_len = u64::MAX / 2;
        let read = super::read_tables(&decoded.trak, &skeleton.tables, object_len, &limits, 0);
        for (i, trak) in decoded.trak.iter().enumerate() {
            let Some(Some(Ok(parallel))) = read.get(i) else {
                continue;
            };
            let id = trak.tkhd.track_id;
            let alone = tables::sample_table(&skeleton.tables[i], id, object_len, &limits);
            assert_eq!(parallel, &alone.unwrap(), "{name} track {id}");
            checked += 1;
        }
    }
    assert!(checked >= 6, "{checked} tracks read side by side");
}

#[test]
fn every_edit_is_kept_in_track_ticks() {
    let index = two_clips_with(|_| {}).unwrap();
    let video = &index.tracks[0].edits.edits;
    // 76800 movie ticks of 1/48000 s = 1.6 s = 24576 ticks of 1/15360 s.
    assert_eq!(
        video,
        &[
            Edit {
                start_ticks: 0,
                duration_ticks: 24576,
                media_time_ticks: Some(0),
            },
            Edit {
                start_ticks: 24576,
                duration_ticks: 24576,
                media_time_ticks: Some(32768),
            },
        ]
    );
    assert_eq!(index.tracks[1].edits.edits[1].start_ticks, 76800);
}

/// Given a dwell (media_rate 0) or a media_rate of 2, then the file is refused with the
/// edit named: neither can be packaged without re-encoding.
#[test]
fn edits_at_a_rate_other_than_one_are_refused() {
    for (rate, words) in [([0u8, 0, 0, 0], "dwell"), ([0, 2, 0, 0], "media_rate 2")] {
        let error = two_clips_with(|e| e[16..20].copy_from_slice(&rate)).unwrap_err();
        let MediaError::UnsupportedEdit { track_id, edit, .. } = &error else {
            panic!("{error}");
        };
        assert_eq!((*track_id, *edit), (1, 1));
        assert!(error.to_string().contains(words), "{error}");
    }
}

/// Given a last media edit of duration 0 (fragmented-file writers), then it runs to
/// the end of the media.
#[test]
fn a_last_edit_of_duration_zero_runs_to_the_end() {
    let index = two_clips_with(|e| e[20..28].copy_from_slice(&0u64.to_be_bytes())).unwrap();
    let last = index.tracks[0].edits.edits[1];
    // 128 frames of 512 ticks, from media time 32768.
    assert_eq!(last.duration_ticks, 128 * 512 - 32768);
}

#[test]
fn an_edit_past_the_end_of_the_media_is_an_invalid_table() {
    let error =
        two_clips_with(|e| e[8..16].copy_from_slice(&1_000_000i64.to_be_bytes())).unwrap_err();
    assert!(
        matches!(&error, MediaError::InvalidTable { fourcc, .. } if fourcc == "elst"),
        "{error}"
    );
}

/// `h264-aac-3s.mp4` with `matrix` written into its first box of type `kind`: `mvhd`, or
/// `tkhd` (the video track's). Both are version 0 there.
fn h264_with_matrix(kind: &[u8; 4], matrix: [i32; 9]) -> MediaIndex {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/h264-aac-3s.mp4");
    let mut file = std::fs::read(path).unwrap();
    let at = file.windows(4).position(|w| w == kind).unwrap() - 4;
    assert_eq!(file[at + 8], 0, "a version 0 {kind:?}");
    let matrix_at = at + if kind == b"mvhd" { 44 } else { 48 };
    for (i, value) in matrix.iter().enumerate() {
        let field = matrix_at + 4 * i;
        file[field..field + 4].copy_from_slice(&value.to_be_bytes());
    }
    index_from_bytes(&Bytes::from(file), &MediaLimits::default()).unwrap()
}

/// A half turn about the centre of a 320x180 picture, as ffmpeg writes it.
const HALF_TURN: [i32; 9] = [
    -0x1_0000,
    0,
    0,
    0,
    -0x1_0000,
    0,
    320 << 16,
    180 << 16,
    0x4000_0000,
];

/// Given a file whose video `tkhd` says a half turn, then its video track keeps that
/// matrix as it is and its audio track the unity matrix; given the turn in `mvhd` instead,
/// then every track's matrix is the turn (the track's unity followed by the movie's).
#[test]
fn display_matrices_are_the_track_s_followed_by_the_movie_s() {
    let upright = h264_with_matrix(b"mvhd", UNITY_MATRIX);
    let matrices = |index: &MediaIndex| -> Vec<[i32; 9]> {
        index.tracks.iter().map(|t| t.display_matrix).collect()
    };
    assert_eq!(matrices(&upright), [UNITY_MATRIX; 2]);
    let track_turned = h264_with_matrix(b"tkhd", HALF_TURN);
    assert_eq!(matrices(&track_turned), [HALF_TURN, UNITY_MATRIX]);
    let movie_turned = h264_with_matrix(b"mvhd", HALF_TURN);
    assert_eq!(matrices(&movie_turned), [HALF_TURN; 2]);
}

/// Given any nine numbers in `tkhd` and in `mvhd`, then the file still loads: a matrix is
/// passed on, never refused.
#[test]
fn hostile_matrices_load() {
    for matrix in [
        [0; 9],
        [i32::MIN; 9],
        [i32::MAX; 9],
        [-1, 7, i32::MIN, 0, 3, -9, 1, 2, 0],
    ] {
        let index = h264_with_matrix(b"tkhd", matrix);
        assert_eq!(index.tracks[0].display_matrix, matrix);
        let index = h264_with_matrix(b"mvhd", matrix);
        assert_eq!(index.tracks.len(), 2);
    }
}
