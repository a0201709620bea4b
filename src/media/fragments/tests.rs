//! Fragment decoding over the fragmented fixtures and over fragments built in the tests:
//! the ISO/IEC 14496-12 8.8 defaults, offsets and decode times, and the broken cases.

use super::*;
use crate::media::{index_from_bytes, MediaIndex};

fn fixture(name: &str) -> Bytes {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    Bytes::from(std::fs::read(path).unwrap())
}

fn index(file: &Bytes) -> MediaIndex {
    index_from_bytes(file, &MediaLimits::default()).unwrap()
}

/// The fragmented remuxes of the main fixture (made with `-c copy`) hold the same
/// samples: sizes, composition offsets, sync flags and the bytes at every offset are
/// equal, and so are decode times and durations, but for one thing ffmpeg's fragmenting
/// muxer changes. The progressive file trims the AAC priming frame and the video's
/// B-frame delay with edit lists; the fragmented ones have no edit list, so the video's
/// first frame is presented at 1024/15360 s, and to keep audio with it the muxer makes
/// the priming frame last 3200 ticks (the same 1/15 s at 48 kHz) instead of 1024. The
/// test checks exactly that (ffprobe reads the fragmented files the same way).
#[test]
fn fragmented_files_index_like_the_progressive_file() {
    let progressive_file = fixture("h264-aac-3s.mp4");
    let progressive = index(&progressive_file);
    for name in [
        "h264-aac-3s-frag-walk.mp4",
        "h264-aac-3s-frag-sidx.mp4",
        "h264-aac-3s-frag-mfra.mp4",
        "h264-aac-3s-frag-moov-samples.mp4",
    ] {
        let file = fixture(name);
        let fragmented = index(&file);
        assert_eq!(fragmented.tracks.len(), progressive.tracks.len(), "{name}");
        for (f, p) in fragmented.tracks.iter().zip(&progressive.tracks) {
            let (fs, ps) = (&f.samples, &p.samples);
            let what = format!("{name} track {}", f.track_id);
            assert_eq!(f.track_id, p.track_id, "{what}");
            assert_eq!(f.codec, p.codec, "{what}");
            assert_eq!(fs.sizes, ps.sizes, "{what}");
            assert_eq!(fs.cts_offsets, ps.cts_offsets, "{what}");
            let sync = |t: &SampleTable| (0..t.len()).map(|i| t.is_sync(i)).collect::<Vec<_>>();
            assert_eq!(sync(fs), sync(ps), "{what}");
            for i in 0..fs.len() {
                let at = |file: &Bytes, t: &SampleTable| {
                    let start = t.offsets()[i] as usize;
                    file.slice(start..start + t.sizes[i] as usize)
                };
                assert_eq!(
                    at(&file, fs),
                    at(&progressive_file, ps),
                    "{what} sample {i}"
                );
            }
            let priming_stretch = match f.kind {
                crate::media::TrackKind::Video => 0,
                crate::media::TrackKind::Audio => 3200 - 1024,
            };
            let mut durations = ps.durations.clone();
            durations[0] += priming_stretch;
            assert_eq!(fs.durations, durations, "{what}");
            let dts: Vec<u64> = ps
                .dts
                .iter()
                .enumerate()
                .map(|(i, d)| d + if i > 0 { u64::from(priming_stretch) } else { 0 })
                .collect();
            assert_eq!(fs.dts, dts, "{what}");
        }
    }
}

/// With a probe too small to hold the fragments, each fixture's fragments are found the
/// way it allows, in a number of reads that does not depend on the fragment count when
/// the file has an index.
#[test]
fn fragments_are_found_by_sidx_mfra_or_walk_in_few_reads() {
    let limits = MediaLimits {
        probe_bytes: 4096,
        ..MediaLimits::default()
    };
    for (name, discovery, fragments, reads) in [
        // the end of the file (64 KiB: no mfro) holds the last fragments; before
        // it, one read per fragment not in the 4 KiB probe (a local file or memory
        // never reads ahead into payloads).
        ("h264-aac-3s-frag-walk.mp4", FragmentDiscovery::Walk, 7, 2),
        // the sidx in the probe gives every fragment: one batch.
        ("h264-aac-3s-frag-sidx.mp4", FragmentDiscovery::Sidx, 3, 1),
        // the end of the file (64 KiB) holds the mfra and, in a file this small, the
        // fragments it points at.
        ("h264-aac-3s-frag-mfra.mp4", FragmentDiscovery::Mfra, 3, 1),
        (
            "h264-aac-3s-frag-moov-samples.mp4",
            FragmentDiscovery::Mfra,
            2,
            1,
        ),
    ] {
        let (_, report) = crate::media::load::report_from_bytes(&fixture(name), &limits).unwrap();
        let found = report.fragments.expect("fragmented");
        assert_eq!(found.discovery, discovery, "{name}: {found:?}");
        assert_eq!(found.fragments, fragments, "{name}: {found:?}");
        assert_eq!(found.reads, reads, "{name}: {found:?}");
    }
    let (_, report) =
        crate::media::load::report_from_bytes(&fixture("h264-aac-3s.mp4"), &limits).unwrap();
    assert_eq!(report.fragments, None);
}

fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut out = ((body.len() + 8) as u32).to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(body);
    out
}

/// A full box: version, 24-bit flags, then the fields (each a big-endian u32 or u64).
fn full(kind: &[u8; 4], version: u8, flags: u32, fields: &[u64], wide: &[bool]) -> Vec<u8> {
    let mut body = ((u32::from(version) << 24) | flags).to_be_bytes().to_vec();
    for (value, wide) in fields
        .iter()
        .zip(wide.iter().chain(std::iter::repeat(&false)))
    {
        if *wide {
            body.extend_from_slice(&value.to_be_bytes());
        } else {
            body.extend_from_slice(&(*value as u32).to_be_bytes());
        }
    }
    boxed(kind, &body)
}

fn moov_with_trex() -> Vec<u8> {
    let trex1 = full(b"trex", 0, 0, &[1, 1, 100, 10, 0x0001_0000], &[]);
    let trex2 = full(b"trex", 0, 0, &[2, 1, 1024, 5, 0], &[]);
    boxed(b"moov", &boxed(b"mvex", &[trex1, trex2].concat()))
}

fn moof(offset: u64, trafs: &[Vec<u8>]) -> FoundMoof {
    let mfhd = full(b"mfhd", 0, 0, &[1], &[]);
    let trafs: Vec<u8> = trafs.iter().flatten().copied().collect();
    FoundMoof {
        offset,
        bytes: Bytes::from(boxed(b"moof", &[mfhd, trafs].concat())),
    }
}

fn samples_of(mut decoded: FragmentSamples, track_id: u32) -> SampleTable {
    let mut table = SampleTable::default();
    decoded.append_to(track_id, &mut table).unwrap();
    table
}

/// ISO/IEC 14496-12 8.8: defaults from trex, overridden by tfhd, overridden by trun;
/// the first traf's data from the moof, a later traf's where the previous one's ended,
/// a run without data_offset after the previous run, an explicit base_data_offset;
/// decode times from tfdt, else following on; signed (v1) composition offsets; sync
/// from first-sample-flags and the non-sync bit.
#[test]
fn track_fragments_follow_the_defaults_and_offset_rules() {
    let moov = moov_with_trex();
    // moof 1 at 1000: track 1 (no base: the moof), then track 2 (no base: after it).
    let run_a = full(b"trun", 0, 0x005, &[3, 200, 0], &[]);
    let run_b = full(
        b"trun",
        1,
        0xb00,
        &[2, 50, 7, (-20i32) as u32 as u64, 60, 8, 30],
        &[],
    );
    let traf1 = boxed(
        b"traf",
        &[full(b"tfhd", 0, 0, &[1], &[]), run_a, run_b].concat(),
    );
    let tfdt2 = full(b"tfdt", 1, 0, &[5000], &[true]);
    let run_c = full(b"trun", 0, 0, &[2], &[]);
    let traf2 = boxed(
        b"traf",
        &[full(b"tfhd", 0, 0, &[2], &[]), tfdt2, run_c].concat(),
    );
    // moof 2 at 3000: track 1 with an explicit base and a tfhd default duration.
    let tfhd = full(b"tfhd", 0, 0x09, &[1, 2000, 90], &[false, true]);
    let run_d = full(b"trun", 0, 0x001, &[1, 0], &[]);
    let traf3 = boxed(b"traf", &[tfhd, run_d].concat());
    let moofs = [moof(1000, &[traf1, traf2]), moof(3000, &[traf3])];
    let limits = MediaLimits::default();
    let decoded = decode(&moov, &moofs, &[(1, 0, 0), (2, 0, 0)], 10_000, &limits).unwrap();
    let video = samples_of(decoded, 1);
    assert_eq!(video.sizes, [10, 10, 10, 7, 8, 10]);
    assert_eq!(video.offsets(), [1200, 1210, 1220, 1230, 1237, 2000]);
    assert_eq!(video.durations, [100, 100, 100, 50, 60, 90]);
    assert_eq!(video.dts, [0, 100, 200, 300, 350, 410]);
    assert_eq!(video.cts_offsets, [0, 0, 0, -20, 30, 0]);
    assert_eq!(video.sync, Some(vec![0]));
    let decoded = decode(&moov, &moofs, &[(1, 0, 0), (2, 0, 0)], 10_000, &limits).unwrap();
    let audio = samples_of(decoded, 2);
    assert_eq!(audio.sizes, [5, 5]);
    assert_eq!(audio.offsets(), [1245, 1250]);
    assert_eq!(audio.dts, [5000, 6024]);
    assert_eq!(audio.sync, None);
    assert!(audio.cts_offsets.is_empty());
}

/// Every `tfdt` of a recording moved 10 hours on (a live-to-VOD file keeps the live
/// timeline): the index starts at 0 again, with the same decode times as the file
/// that starts at 0, rather than a title 10 hours long whose content sits at its end.
#[test]
fn a_recording_that_starts_late_indexes_from_zero() {
    let file = fixture("h264-aac-3s-frag-walk.mp4");
    let mut late = file.to_vec();
    let (mut at, mut moved) = (0, 0);
    while let Some(pos) = late[at..].windows(4).position(|w| w == b"tfdt") {
        let tfdt = at + pos;
        let tfhd = late[..tfdt].windows(4).rposition(|w| w == b"tfhd").unwrap();
        let track = u32::from_be_bytes(late[tfhd + 8..tfhd + 12].try_into().unwrap());
        let timescale = if track == 1 { 15_360 } else { 48_000 };
        assert_eq!(late[tfdt + 4], 1, "the fixture writes 64-bit tfdt");
        let field = tfdt + 8..tfdt + 16;
        let time = u64::from_be_bytes(late[field.clone()].try_into().unwrap());
        late[field].copy_from_slice(&(time + 36_000 * timescale).to_be_bytes());
        at = tfdt + 4;
        moved += 1;
    }
    assert!(moved > 2, "the fixture's fragments carry tfdt");
    let (plain, late) = (index(&file), index(&Bytes::from(late)));
    for (p, l) in plain.tracks.iter().zip(&late.tracks) {
        assert_eq!(l.samples.dts, p.samples.dts, "track {}", l.track_id);
    }
}

/// Sample data that lies inside the moof describing it (here an explicit
/// base_data_offset at the moof itself, as ffmpeg's `global_sidx` leaves after moving
/// the fragments behind the sidx) is refused, not served as media.
#[test]
fn sample_data_inside_its_own_moof_is_refused() {
    let moov = moov_with_trex();
    let limits = MediaLimits::default();
    let traf = |base: u64| {
        let tfhd = full(b"tfhd", 0, 0x01, &[1, base], &[false, true]);
        let run = full(b"trun", 0, 0x001, &[1, 0], &[]);
        boxed(b"traf", &[tfhd, run].concat())
    };
    let inside = [moof(100, &[traf(110)])];
    let err = decode(&moov, &inside, &[(1, 0, 0)], 1000, &limits).unwrap_err();
    assert!(err.to_string().contains("inside its own moof"), "{err}");
    let len = inside[0].bytes.len() as u64;
    let after = [moof(100, &[traf(100 + len)])];
    let decoded = decode(&moov, &after, &[(1, 0, 0)], 1000, &limits).unwrap();
    assert_eq!(samples_of(decoded, 1).offsets(), [100 + len]);
}

/// A tfdt ahead of where the previous fragment ended lengthens the last sample; one
/// behind it, or a traf for a track the moov does not declare, is refused.
#[test]
fn decode_times_only_move_forward_and_tracks_must_be_declared() {
    let moov = moov_with_trex();
    let limits = MediaLimits::default();
    let traf = |tfdt: u64| {
        let tfdt = full(b"tfdt", 1, 0, &[tfdt], &[true]);
        let run = full(b"trun", 0, 0x001, &[1, 100], &[]);
        boxed(
            b"traf",
            &[full(b"tfhd", 0, 0x20000, &[1], &[]), tfdt, run].concat(),
        )
    };
    let gap = [moof(100, &[traf(0)]), moof(300, &[traf(150)])];
    let decoded = decode(&moov, &gap, &[(1, 0, 0)], 1000, &limits).unwrap();
    let table = samples_of(decoded, 1);
    assert_eq!(table.dts, [0, 150]);
    assert_eq!(table.durations, [150, 100]);
    assert_eq!(table.offsets(), [200, 400]);

    let back = [moof(100, &[traf(500)]), moof(300, &[traf(450)])];
    let err = decode(&moov, &back, &[(1, 0, 0)], 1000, &limits).unwrap_err();
    assert!(err.to_string().contains("goes backwards"), "{err}");

    let err = decode(&moov, &gap, &[(2, 0, 0)], 1000, &limits).unwrap_err();
    assert!(err.to_string().contains("does not declare"), "{err}");

    // A moov with 2 samples ending at 200, then a fragment without tfdt: it follows
    // on; a later tfdt of 250 is compared with that timeline (not one from 0).
    let no_tfdt = {
        let run = full(b"trun", 0, 0x001, &[1, 100], &[]);
        boxed(
            b"traf",
            &[full(b"tfhd", 0, 0x20000, &[1], &[]), run].concat(),
        )
    };
    let after_moov = [moof(100, &[no_tfdt]), moof(300, &[traf(350)])];
    let mut decoded = decode(&moov, &after_moov, &[(1, 2, 200)], 1000, &limits).unwrap();
    let mut table = SampleTable {
        sizes: vec![10, 10],
        offsets: vec![0, 10].into(),
        dts: vec![0, 100],
        durations: vec![100, 100],
        ..SampleTable::default()
    };
    decoded.append_to(1, &mut table).unwrap();
    assert_eq!(table.dts, [0, 100, 200, 350]);
    assert_eq!(table.durations, [100, 100, 150, 100]);
    let err = decode(&moov, &after_moov, &[(1, 2, 400)], 1000, &limits).unwrap_err();
    assert!(err.to_string().contains("goes backwards"), "{err}");
}
