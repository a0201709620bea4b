//! Every box we write is decoded back with mp4-atom and compared with the source.
use super::*;
use crate::media::{parse_index, MediaIndex, MediaLimits, TrackKind};
use crate::package::Title;
use crate::source::ObjectIdentity;
use mp4_atom::{Decode, Ftyp, Moof, Moov};

fn fixture_title(name: &str) -> Title {
    fixture(name, 1000).0
}

/// The title of fixture `name` cut at `target_ms`, and the file's bytes: shared by the
/// tests of the package writers (fMP4, trick play, protection).
pub(crate) fn fixture(name: &str, target_ms: u32) -> (Title, Vec<u8>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    let file = std::fs::read(path).unwrap();
    // Walk top-level boxes to moov (the fixtures use 32-bit sizes).
    let mut pos = 0usize;
    let moov = loop {
        let size = u32::from_be_bytes(file[pos..pos + 4].try_into().unwrap()) as usize;
        if &file[pos + 4..pos + 8] == b"moov" {
            break bytes::Bytes::copy_from_slice(&file[pos..pos + size]);
        }
        pos += size;
    };
    let identity = ObjectIdentity {
        size: file.len() as u64,
        version: "test".into(),
    };
    let index: MediaIndex = parse_index(identity, &moov, &MediaLimits::default()).unwrap();
    (Title::new(index, target_ms).unwrap(), file)
}

#[test]
fn init_segments_decode_with_the_source_sample_entry() {
    let title = fixture_title("h264-aac-2lang-3s.mp4");
    for track in &title.index.tracks {
        let init = init_segment(track);
        let mut buf = &init[..];
        let ftyp = Ftyp::decode(&mut buf).unwrap();
        assert_eq!(ftyp.major_brand, b"iso6".into());
        let moov = Moov::decode(&mut buf).unwrap();
        assert!(buf.is_empty());
        let trak = &moov.trak[0];
        assert_eq!(trak.tkhd.track_id, track.track_id);
        assert_eq!(trak.mdia.mdhd.timescale, track.timescale);
        assert_eq!(
            trak.mdia.mdhd.language,
            track.language.clone().unwrap_or("und".into())
        );
        let trex = &moov.mvex.as_ref().unwrap().trex[0];
        assert_eq!(trex.track_id, track.track_id);
        // The sample description is the source's, byte for byte.
        let stsd_at = init
            .windows(4)
            .position(|w| w == b"stsd")
            .unwrap()
            .checked_sub(4)
            .unwrap();
        assert_eq!(
            &init[stsd_at..stsd_at + track.sample_description.len()],
            &track.sample_description[..]
        );
    }
}

#[test]
fn media_segment_headers_decode_and_describe_their_samples() {
    let title = fixture_title("h264-bframes-editlist-aac.mp4");
    for (pos, track) in title.index.tracks.iter().enumerate() {
        let plan = &title.plan.tracks[pos];
        for segment in 0..title.plan.segment_count {
            let prepared = prepare_media_segment(&title.index, &title.plan, pos, segment).unwrap();
            let mut buf = &prepared.header[..];
            let moof = Moof::decode(&mut buf).unwrap();
            // What is left is exactly the mdat header announcing the payload.
            assert_eq!(buf.len(), 8);
            assert_eq!(&buf[4..8], b"mdat");
            let mdat_len = u32::from_be_bytes(buf[..4].try_into().unwrap()) as u64;
            assert_eq!(mdat_len, prepared.payload_bytes + 8);
            assert_eq!(moof.mfhd.sequence_number, segment as u32 + 1);
            let traf = &moof.traf[0];
            assert_eq!(traf.tfhd.track_id, track.track_id);
            let range = plan.samples(segment).unwrap();
            assert_eq!(
                traf.tfdt.as_ref().unwrap().base_media_decode_time,
                plan.output_dts(&track.samples, range.start)
            );
            let trun = &traf.trun[0];
            assert_eq!(
                trun.data_offset,
                Some(prepared.header.len() as i32),
                "data offset points just past the mdat header"
            );
            let entries: Vec<_> = trun.samples.iter().collect();
            assert_eq!(entries.len(), range.len());
            for (entry, i) in entries.iter().zip(range.clone()) {
                assert_eq!(entry.size, Some(track.samples.sizes[i]));
                assert_eq!(entry.duration, Some(track.samples.durations[i]));
                if !track.samples.cts_offsets.is_empty() {
                    let expected =
                        i64::from(track.samples.cts_offsets[i]) - i64::from(plan.cts_base);
                    assert_eq!(entry.cts, Some(expected));
                }
            }
            let payload: u64 = track.samples.sizes[range.clone()]
                .iter()
                .map(|s| u64::from(*s))
                .sum();
            assert_eq!(prepared.payload_bytes, payload);
            assert_eq!(prepared.ranges.iter().map(|r| r.len).sum::<u64>(), payload);
        }
    }
}

/// The nine numbers of an mp4-atom matrix, in file order.
fn numbers(m: &mp4_atom::Matrix) -> [i32; 9] {
    [m.a, m.b, m.u, m.c, m.d, m.v, m.x, m.y, m.w]
}

/// Given a video track turned a quarter (a portrait phone video) next to an upright audio
/// track, when their init segments are written, alone and muxed, then each `tkhd` holds
/// its track's matrix and size as the index has them, and `mvhd` the unity matrix (the
/// index already folds the source's `mvhd` into each track's); an upright track's init
/// segment is the same bytes as before matrices were carried.
#[test]
fn init_segments_carry_each_track_s_display_matrix() {
    let mut title = fixture_title("h264-aac-3s.mp4");
    let upright_before = init_segment(&title.index.tracks[0]);
    let quarter_turn = [0, 0x1_0000, 0, -0x1_0000, 0, 0, 180 << 16, 0, 0x4000_0000];
    title.index.tracks[0].display_matrix = quarter_turn;
    let tracks: Vec<&crate::media::TrackIndex> = title.index.tracks.iter().collect();
    let muxed = muxed_init_segment(&tracks);
    for track in &tracks {
        for init in [init_segment(track), muxed.clone()] {
            let mut buf = &init[..];
            Ftyp::decode(&mut buf).unwrap();
            let moov = Moov::decode(&mut buf).unwrap();
            assert_eq!(numbers(&moov.mvhd.matrix), crate::media::UNITY_MATRIX);
            let trak = (moov.trak.iter())
                .find(|t| t.tkhd.track_id == track.track_id)
                .unwrap();
            assert_eq!(numbers(&trak.tkhd.matrix), track.display_matrix);
            let size = |f: &mp4_atom::FixedPoint<u16>| {
                (u32::from(f.integer()) << 16) | u32::from(f.decimal())
            };
            assert_eq!(size(&trak.tkhd.width), track.tkhd_width);
            assert_eq!(size(&trak.tkhd.height), track.tkhd_height);
        }
    }
    title.index.tracks[0].display_matrix = crate::media::UNITY_MATRIX;
    assert_eq!(init_segment(&title.index.tracks[0]), upright_before);
}

/// The file's bytes of `ranges`, concatenated: a segment's payload as the server
/// streams it.
fn payload(file: &[u8], ranges: &[crate::source::ByteRange]) -> Vec<u8> {
    (ranges.iter())
        .flat_map(|r| &file[r.start as usize..r.end() as usize])
        .copied()
        .collect()
}

/// Given a file with video and audio, when both are asked for in one init segment,
/// then it has one `moov` with a `trak` and a `trex` per track, and each `trak` is
/// byte for byte the one of that track's own CMAF init segment.
#[test]
fn muxed_init_segments_hold_each_track_s_own_trak() {
    let title = fixture_title("h264-aac-3s.mp4");
    let tracks: Vec<&crate::media::TrackIndex> = title.index.tracks.iter().collect();
    assert_eq!(tracks.len(), 2);
    let init = muxed_init_segment(&tracks);
    let mut buf = &init[..];
    let ftyp = Ftyp::decode(&mut buf).unwrap();
    assert!(!ftyp.compatible_brands.contains(&b"cmfc".into()));
    let moov = Moov::decode(&mut buf).unwrap();
    assert!(buf.is_empty());
    assert_eq!(moov.mvhd.next_track_id, 3);
    let ids: Vec<u32> = moov.trak.iter().map(|t| t.tkhd.track_id).collect();
    let trex: Vec<u32> = (moov.mvex.as_ref().unwrap().trex.iter())
        .map(|t| t.track_id)
        .collect();
    assert_eq!(ids, [1, 2]);
    assert_eq!(trex, [1, 2]);
    for track in &tracks {
        let own = init_segment(track);
        let trak_of = |bytes: &[u8]| {
            let at = bytes.windows(4).position(|w| w == b"trak").unwrap() - 4;
            let size = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            bytes[at..at + size].to_vec()
        };
        let trak = trak_of(&own);
        assert!(
            init.windows(trak.len()).any(|w| w == trak),
            "track {}: its trak is not in the muxed init",
            track.track_id
        );
    }
}

/// Given a file with B-frames and an edit list, when each segment of video and audio
/// is muxed, then its `moof` has the two tracks' `traf`s as their own CMAF segments
/// have them (same decode time and samples), and each `trun`'s data offset, counted
/// from the `moof`, lands on that track's samples in the `mdat`, byte for byte.
#[test]
fn muxed_segment_truns_point_at_their_own_samples() {
    let (title, file) = fixture("h264-bframes-editlist-aac.mp4", 1000);
    let positions = [0, 1];
    assert!(title.plan.segment_count > 2);
    for segment in 0..title.plan.segment_count {
        let muxed = prepare_muxed_segment(&title.index, &title.plan, &positions, segment).unwrap();
        let prepared = &muxed.segment;
        let mut body = prepared.header.clone();
        body.extend(payload(&file, &prepared.ranges));
        assert_eq!(body.len() as u64, prepared.content_length());
        let mut buf = &body[..];
        let moof = Moof::decode(&mut buf).unwrap();
        assert_eq!(moof.mfhd.sequence_number, segment as u32 + 1);
        assert_eq!(moof.traf.len(), 2);
        assert_eq!(
            muxed.ranges_per_track.iter().sum::<usize>(),
            prepared.ranges.len()
        );
        for (traf, &pos) in moof.traf.iter().zip(&positions) {
            let track = &title.index.tracks[pos];
            let own = prepare_media_segment(&title.index, &title.plan, pos, segment).unwrap();
            let own_moof = Moof::decode(&mut &own.header[..]).unwrap();
            let own_traf = &own_moof.traf[0];
            assert_eq!(traf.tfhd, own_traf.tfhd);
            assert_eq!(traf.tfdt, own_traf.tfdt);
            assert_eq!(traf.trun[0].samples, own_traf.trun[0].samples);
            // The samples the trun describes, where it says they are.
            let range = title.plan.tracks[pos].samples(segment).unwrap();
            let mut at = traf.trun[0].data_offset.unwrap() as usize;
            for i in range {
                let (offset, size) = (
                    track.samples.offsets()[i] as usize,
                    track.samples.sizes[i] as usize,
                );
                assert!(
                    body[at..at + size] == file[offset..offset + size],
                    "track {} sample {i} of segment {segment}",
                    track.track_id
                );
                at += size;
            }
        }
    }
}

/// Given a plan in which the audio has no sample in the first segment, when that
/// segment is muxed, then it has only the video's `traf`, and the audio contributes no
/// range; a segment past the plan is out of range.
#[test]
fn a_track_without_samples_in_a_muxed_segment_gets_no_traf() {
    let mut title = fixture_title("h264-aac-3s.mp4");
    let audio = &mut title.plan.tracks[1].first_samples;
    audio[1] = 0;
    let muxed = prepare_muxed_segment(&title.index, &title.plan, &[0, 1], 0).unwrap();
    let moof = Moof::decode(&mut &muxed.segment.header[..]).unwrap();
    assert_eq!(moof.traf.len(), 1);
    assert_eq!(moof.traf[0].tfhd.track_id, 1);
    assert_eq!(muxed.ranges_per_track[1], 0);
    let past = title.plan.segment_count;
    assert!(matches!(
        prepare_muxed_segment(&title.index, &title.plan, &[0, 1], past),
        Err(crate::package::PackageError::SegmentOutOfRange { .. })
    ));
    assert!(matches!(
        prepare_muxed_segment(&title.index, &title.plan, &[0, 7], 0),
        Err(crate::package::PackageError::NoSuchTrack { .. })
    ));
}

/// Given a file whose video has two B-frames (its first sample presented 1024 ticks after
/// it is decoded), its init segment states that delay as one edit and the audio's states
/// none; its first media segment's `tfdt` is then where the plan presents its first picture.
#[test]
fn a_video_init_segment_takes_back_the_composition_delay_with_one_edit() {
    let title = fixture_title("h264-aac-3s.mp4");
    for (track, plan) in title.index.tracks.iter().zip(&title.plan.tracks) {
        let mut buf = &init_segment(track)[..];
        Ftyp::decode(&mut buf).unwrap();
        let moov = Moov::decode(&mut buf).unwrap();
        let edit = moov.trak[0].edts.as_ref().and_then(|e| e.elst.as_ref());
        if track.kind == TrackKind::Video {
            let elst = edit.expect("a video edit");
            assert_eq!(elst.entries.len(), 1);
            let entry = &elst.entries[0];
            assert_eq!(entry.segment_duration, 0, "covers the fragments to come");
            assert_eq!(entry.media_time, Some(1024));
            assert_eq!(plan.composition_delay, 1024);
            let table = &track.samples;
            assert_eq!(plan.output_dts(table, 0), plan.output_pts(table, 0));
        } else {
            assert!(edit.is_none(), "no edit on track {}", track.track_id);
            assert_eq!(plan.composition_delay, 0);
        }
    }
}

/// Given an AV1 track, then its init segment lists the `av01` brand (AV1-ISOBMFF 2.1), and
/// an AVC track's does not.
#[test]
fn an_av1_init_segment_has_the_av01_brand() {
    for (fixture, av1) in [
        ("av1-10bit-pq-aac-3s.mp4", true),
        ("h264-aac-3s.mp4", false),
    ] {
        let title = fixture_title(fixture);
        let video = (title.index.tracks.iter())
            .find(|t| t.kind == crate::media::TrackKind::Video)
            .unwrap();
        let init = init_segment(video);
        let ftyp = Ftyp::decode(&mut &init[..]).unwrap();
        assert_eq!(
            ftyp.compatible_brands.contains(&b"av01".into()),
            av1,
            "{fixture}"
        );
    }
}
