//! The TS output over fixtures: the renditions a title offers, and the writer's bytes
//! against the layout and the plan.

use super::writer::Need;
use super::TsTitle;
use super::*;
use crate::media::{index_from_bytes, MediaLimits, TrackKind};
use crate::package::testing::title as hls_title;
use crate::package::{PackageError, Title};

pub(crate) fn fixture(name: &str) -> (bytes::Bytes, Title) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    let file = bytes::Bytes::from(std::fs::read(path).unwrap());
    let index = index_from_bytes(&file, &MediaLimits::default()).unwrap();
    (file, Title::new(index, 1000).unwrap())
}

/// The program of the first video with the first audio, or of the first audio alone.
pub(crate) fn main_program(title: &Title) -> TsProgram {
    let pos = |kind| title.index.tracks.iter().position(|t| t.kind == kind);
    TsProgram::new(&title.index, pos(TrackKind::Video), pos(TrackKind::Audio)).unwrap()
}

/// Drive the writer over `file` in chunks of `chunk` bytes, as the server does.
pub(crate) fn write_segment(
    file: &[u8],
    title: &Title,
    program: &TsProgram,
    layout: &TsLayout,
    segment: usize,
    window: Option<std::ops::Range<u64>>,
    chunk: usize,
) -> Vec<u8> {
    let whole = window.is_none();
    let mut writer = prepare_ts_segment(title, program, layout, segment, window).unwrap();
    let inputs: Vec<Vec<u8>> = writer
        .ranges
        .iter()
        .map(|ranges| {
            ranges
                .iter()
                .flat_map(|r| file[r.start as usize..r.end() as usize].to_vec())
                .collect()
        })
        .collect();
    let mut positions = vec![0usize; inputs.len()];
    let mut out = Vec::new();
    let mut pending: Vec<&[u8]> = vec![&[]; inputs.len()];
    let mut need = writer.write(&mut pending, &mut out);
    while let Need::Stream(s) = need {
        let at = positions[s];
        let end = (at + chunk).min(inputs[s].len());
        positions[s] = end;
        assert!(
            at < end,
            "writer wants more of stream {s} than its ranges hold: {}",
            writer.debug_state()
        );
        pending[s] = &inputs[s][at..end];
        need = writer.write(&mut pending, &mut out);
    }
    if whole {
        assert_eq!(positions, inputs.iter().map(Vec::len).collect::<Vec<_>>());
        assert!(pending.iter().all(|p| p.is_empty()));
    }
    assert!(writer.is_done());
    out
}

/// Given the H.264 + AAC fixture, then every segment is as long as the layout says, made
/// of 188-byte packets starting with the sync byte, opening with PAT and PMT; and any
/// byte range of a segment is exactly that slice of the whole.
#[test]
fn segments_are_as_long_as_laid_out_and_ranges_are_slices() {
    let (file, title) = fixture("h264-aac-3s.mp4");
    let program = main_program(&title);
    let layout = TsLayout::new(&title, &program).unwrap();
    assert_eq!(layout.segments.len(), title.plan.segment_count);
    for (k, summary) in layout.segments.iter().enumerate() {
        let bytes = write_segment(&file, &title, &program, &layout, k, None, 1000);
        assert_eq!(bytes.len() as u64, summary.bytes);
        assert_eq!(bytes.len() % PACKET_LEN, 0);
        assert!(bytes.chunks(PACKET_LEN).all(|p| p[0] == 0x47));
        let pid = |p: &[u8]| u16::from_be_bytes([p[1], p[2]]) & 0x1FFF;
        assert_eq!(pid(&bytes[..188]), PAT_PID);
        assert_eq!(pid(&bytes[188..376]), PMT_PID);
        for chunk in [1, 7, 4096] {
            let again = write_segment(&file, &title, &program, &layout, k, None, chunk);
            assert_eq!(again, bytes, "chunk {chunk}");
        }
        for (a, b) in [(0, 10), (100, 1000), (377, 5000), (1, summary.bytes)] {
            let b = b.min(summary.bytes);
            let part = write_segment(&file, &title, &program, &layout, k, Some(a..b), 333);
            assert_eq!(part, &bytes[a as usize..b as usize], "{a}..{b}");
        }
    }
}

/// Given H.264 with 2-byte NAL lengths, then TS refuses it with the reason (rewriting them
/// would change every sample's size), never guessing a length.
#[test]
fn two_byte_nal_lengths_are_refused() {
    let (_, title) = fixture("h264-aac-3s.mp4");
    let mut track = title.index.tracks[0].clone();
    let mut stsd = track.sample_description.to_vec();
    let at = stsd.windows(4).position(|w| w == b"avcC").unwrap() + 8;
    stsd[at] = 0xFC | 1;
    track.sample_description = bytes::Bytes::from(stsd);
    let err = TsStream::new(&track, 0, VIDEO_PID).unwrap_err();
    assert!(err.to_string().contains("2-byte NAL lengths"), "{err}");
}

/// Given the B-frame fixture, then every PES time is the plan's output time plus the
/// offset, key frames carry the random access flag and the parameter sets, and the PCR
/// runs 0.7 s ahead of the video DTS.
#[test]
fn pes_times_follow_the_plan() {
    let (file, title) = fixture("h264-bframes-editlist-aac.mp4");
    let program = main_program(&title);
    let layout = TsLayout::new(&title, &program).unwrap();
    let video = &title.index.tracks[0];
    let plan = &title.plan.tracks[0];
    let mut sample = 0usize;
    for k in 0..layout.segments.len() {
        let bytes = write_segment(&file, &title, &program, &layout, k, None, 4096);
        for packet in bytes.chunks(PACKET_LEN) {
            let pid = u16::from_be_bytes([packet[1], packet[2]]) & 0x1FFF;
            if pid != VIDEO_PID || packet[1] & 0x40 == 0 {
                continue;
            }
            let adaptation = (packet[3] >> 4) & 2 != 0;
            let at = if adaptation {
                5 + usize::from(packet[4])
            } else {
                4
            };
            let pes = &packet[at..];
            let time = |b: &[u8]| {
                (u64::from(b[0] >> 1 & 7) << 30)
                    | (u64::from(b[1]) << 22)
                    | (u64::from(b[2] >> 1) << 15)
                    | (u64::from(b[3]) << 7)
                    | u64::from(b[4] >> 1)
            };
            let to_90k = |t: u64| t * 90_000 / u64::from(video.timescale) + TS_TIME_OFFSET;
            let pts = to_90k(plan.output_pts(&video.samples, sample));
            // DTS on the presentation timeline: the decode time less the composition
            // delay (the fMP4 init segment's edit), never after the PTS.
            let dts = plan.presentation_dts(&video.samples, sample) * 90_000
                / i128::from(video.timescale)
                + i128::from(TS_TIME_OFFSET);
            let dts = u64::try_from(dts).unwrap().min(pts);
            assert_eq!(time(&pes[9..14]), pts, "sample {sample} PTS");
            if pts != dts {
                assert_eq!(time(&pes[14..19]), dts, "sample {sample} DTS");
            }
            // The PCR, in every video PES's first packet.
            assert!(
                adaptation && packet[5] & 0x10 != 0,
                "sample {sample}: no PCR"
            );
            let pcr = (u64::from(packet[6]) << 25)
                | (u64::from(packet[7]) << 17)
                | (u64::from(packet[8]) << 9)
                | (u64::from(packet[9]) << 1)
                | u64::from(packet[10] >> 7);
            assert_eq!(pcr, dts - PCR_LEAD, "sample {sample} PCR");
            let key = video.samples.is_sync(sample);
            assert_eq!(packet[5] & 0x40 != 0, key, "sample {sample} random access");
            // AUD, then SPS (type 7) on key frames.
            let es = &pes[9 + usize::from(pes[8])..];
            assert_eq!(&es[..6], &[0, 0, 0, 1, 0x09, 0xF0], "sample {sample} AUD");
            assert_eq!(es[10] & 0x1F == 7, key, "sample {sample} SPS");
            sample += 1;
        }
    }
    assert_eq!(sample, video.samples.len(), "one PES per frame");
}

/// Given an AAC track, then each audio frame is a PES of its own whose PTS is that frame's
/// output time: a reader never has to guess the time of a frame inside a PES (ffmpeg 5.1
/// gives the second and later frames of a PES the time of the frame before).
#[test]
fn every_audio_frame_is_a_pes_with_its_own_time() {
    let (file, title) = fixture("h264-aac-3s.mp4");
    let program = main_program(&title);
    let layout = TsLayout::new(&title, &program).unwrap();
    let position = program.streams[1].track_pos;
    let (audio, plan) = (&title.index.tracks[position], &title.plan.tracks[position]);
    assert_eq!(audio.kind, TrackKind::Audio);
    let mut sample = 0usize;
    for k in 0..layout.segments.len() {
        let bytes = write_segment(&file, &title, &program, &layout, k, None, 4096);
        for packet in bytes.chunks(PACKET_LEN) {
            let pid = u16::from_be_bytes([packet[1], packet[2]]) & 0x1FFF;
            if pid != AUDIO_PID || packet[1] & 0x40 == 0 {
                continue;
            }
            let at = if (packet[3] >> 4) & 2 != 0 {
                5 + usize::from(packet[4])
            } else {
                4
            };
            let pes = &packet[at..];
            let pts = (u64::from(pes[9] >> 1 & 7) << 30)
                | (u64::from(pes[10]) << 22)
                | (u64::from(pes[11] >> 1) << 15)
                | (u64::from(pes[12]) << 7)
                | u64::from(pes[13] >> 1);
            let want = plan.output_pts(&audio.samples, sample) * 90_000
                / u64::from(audio.timescale)
                + TS_TIME_OFFSET;
            assert_eq!(pts, want, "audio frame {sample} PTS");
            // PES_packet_length: the header's 8 bytes after the length, then one ADTS
            // frame (7-byte header and the sample).
            let length = usize::from(u16::from_be_bytes([pes[4], pes[5]]));
            let frame = audio.samples.sizes[sample] as usize + 7;
            assert_eq!(length, 8 + frame, "audio frame {sample}: one frame per PES");
            sample += 1;
        }
    }
    assert_eq!(sample, audio.samples.len(), "every audio frame");
}

/// Given tracks whose sample entries TS cannot carry (the test tracks have none), then
/// the title has no TS output, and the answer says to use master.m3u8.
#[test]
fn a_title_with_nothing_ts_carries_is_refused() {
    let err = TsTitle::new(&hls_title(|_| true, Vec::new())).unwrap_err();
    assert_eq!(err, PackageError::NoTsRenditions);
    assert!(err.to_string().ends_with("use master.m3u8"));
    let err = TsTitle::new(&hls_title(|t| t.track_id == 1, Vec::new())).unwrap_err();
    assert!(
        matches!(err, PackageError::NotInTs { track_id: 1, .. }),
        "{err}"
    );
}

/// Given the two-language fixture, then the video is muxed with the default audio and
/// the other language is an audio-only rendition.
#[test]
fn video_gets_the_main_audio_and_other_languages_go_alone() {
    let (_, title) = fixture("h264-aac-2lang-3s.mp4");
    let ts = TsTitle::new(&title).unwrap();
    let ids: Vec<u32> = ts.renditions.iter().map(|r| r.rendition.track_id).collect();
    assert_eq!(ids, [1, 3]);
    assert_eq!(ts.main_audio.as_ref().map(|a| a.track_id), Some(2));
    let streams: Vec<usize> = ts.renditions[0]
        .program
        .streams
        .iter()
        .map(|s| s.track_pos)
        .collect();
    assert_eq!(streams, [0, 1]);
    assert!(ts
        .renditions
        .iter()
        .all(|r| r.peak_bandwidth >= r.average_bandwidth));
    assert!(ts.skipped.is_empty());
}

/// How long the TS output of a long title takes to work out (the walk that gives the
/// continuity counters, sizes and key frames): best of 10, printed. Run by hand:
/// `TS_BENCH_FILE=target/bench/long-60min.mp4 cargo test --release --lib ts_layout_cost -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, run by hand"]
fn ts_layout_cost() {
    let Ok(path) = std::env::var("TS_BENCH_FILE") else {
        return;
    };
    let file = bytes::Bytes::from(std::fs::read(path).unwrap());
    let index = index_from_bytes(&file, &MediaLimits::default()).unwrap();
    let title = Title::new(index, 6000).unwrap();
    let samples: usize = title.index.tracks.iter().map(|t| t.samples.len()).sum();
    let mut best = std::time::Duration::MAX;
    for _ in 0..10 {
        let started = std::time::Instant::now();
        let ts = TsTitle::new(&title).unwrap();
        best = best.min(started.elapsed());
        assert!(!ts.renditions.is_empty());
    }
    let program = main_program(&title);
    let layout = TsLayout::new(&title, &program).unwrap();
    let middle = layout.segments.len() / 2;
    let mut prepare = std::time::Duration::MAX;
    for _ in 0..100 {
        let started = std::time::Instant::now();
        let segment = prepare_ts_segment(&title, &program, &layout, middle, None).unwrap();
        prepare = prepare.min(started.elapsed());
        assert!(segment.content_length > 0);
    }
    let mut write = std::time::Duration::MAX;
    for _ in 0..20 {
        let started = std::time::Instant::now();
        let bytes = write_segment(&file, &title, &program, &layout, middle, None, 512 * 1024);
        write = write.min(started.elapsed());
        assert_eq!(bytes.len() as u64, layout.segments[middle].bytes);
    }
    println!(
        "TsTitle::new over {samples} samples, {} segments: {best:?}; prepare_ts_segment: {prepare:?}; \
         prepare + write {} bytes: {write:?}",
        layout.segments.len(),
        layout.segments[middle].bytes
    );
}
