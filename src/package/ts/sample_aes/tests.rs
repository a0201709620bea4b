//! SAMPLE-AES over the fixtures: what a reader that follows Apple's format (as ffmpeg's
//! `hls_sample_encryption.c` and hls.js do) gets back, and the layout it keeps.

use aes::cipher::{BlockModeDecrypt, KeyIvInit};

use super::*;
use crate::package::ts::stream_kind::{ac3_setup, sample_aes_descriptors};
use crate::package::ts::tests::{fixture, main_program};
use crate::package::ts::{PAT_PID, PMT_PID};

type Aes128CbcDec = cbc::Decryptor<Aes128>;

const KEY: [u8; 16] = *b"0123456789abcdef";
const IV: [u8; 16] = *b"fedcba9876543210";

/// `bytes` with one level of emulation prevention removed, as a reader does it: each 0x03
/// that follows two zero bytes goes.
fn remove_prevention(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut zeros = 0;
    for &b in bytes {
        if zeros >= 2 && b == 3 {
            zeros = 0;
            continue;
        }
        zeros = if b == 0 { zeros + 1 } else { 0 };
        out.push(b);
    }
    out
}

/// The NAL unit a reader (ffmpeg's `hls_sample_encryption.c`, hls.js) hands its decoder
/// for one it read: a slice longer than 48 bytes has one level of emulation prevention
/// removed, then one block decrypted at 32, 192, 352, ... while more than 16 bytes follow
/// it, each NAL unit's chain from the IV; anything else is passed on as it is.
fn reader_decrypts_nal(nal: &[u8]) -> Vec<u8> {
    if !matches!(nal[0] & 0x1F, 1 | 5) || nal.len() <= VIDEO_MIN_NAL {
        return nal.to_vec();
    }
    let mut unit = remove_prevention(nal);
    let mut dec = Aes128CbcDec::new(&KEY.into(), &IV.into());
    let mut at = VIDEO_CLEAR_LEAD;
    while unit.len().saturating_sub(at) > BLOCK {
        let (blocks, _) = aes::Block::slice_as_chunks_mut(&mut unit[at..at + BLOCK]);
        dec.decrypt_blocks(blocks);
        at += BLOCK + VIDEO_CLEAR_RUN;
    }
    unit
}

/// The NAL units of a 4-byte-length sample.
fn nal_units(mut sample: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while sample.len() >= 4 {
        let len = u32::from_be_bytes(sample[..4].try_into().unwrap()) as usize;
        out.push(&sample[4..4 + len]);
        sample = &sample[4 + len..];
    }
    out
}

/// Given every video sample of two fixtures, when encrypted, then each slice NAL unit
/// decrypts to the clear one, other NAL units are untouched, the ciphertext has no start
/// code emulation, and some slice bytes did change.
#[test]
fn slices_decrypt_to_the_clear_nal_units_as_readers_do() {
    let aes = Aes128::new(&KEY.into());
    for name in ["h264-aac-3s.mp4", "h264-bframes-editlist-aac.mp4"] {
        let (file, title) = fixture(name);
        let track = title
            .index
            .tracks
            .iter()
            .find(|t| t.kind == crate::media::TrackKind::Video)
            .unwrap();
        let mut changed = 0;
        for (offset, size) in track.samples.offsets().iter().zip(&track.samples.sizes) {
            let clear = &file[*offset as usize..(*offset + u64::from(*size)) as usize];
            let mut encrypted = Vec::new();
            encrypt_avc_sample(&aes, &IV, clear, &mut encrypted);
            let (clear_nals, encrypted_nals) = (nal_units(clear), nal_units(&encrypted));
            assert_eq!(clear_nals.len(), encrypted_nals.len(), "{name}");
            for (c, e) in clear_nals.iter().zip(&encrypted_nals) {
                assert!(!e.windows(3).any(|w| w[0] == 0 && w[1] == 0 && w[2] <= 2));
                if matches!(c[0] & 0x1F, 1 | 5) {
                    assert_eq!(reader_decrypts_nal(e), *c, "{name}");
                    changed += usize::from(c.len() > VIDEO_MIN_NAL && c != e);
                } else {
                    assert_eq!(c, e, "{name}: a non-slice NAL unit changed");
                }
            }
        }
        assert!(changed > 10, "{name}: only {changed} slices encrypted");
    }
}

/// Given bytes full of zero runs, then escaping leaves no start code emulation and
/// removing it gives the bytes back.
#[test]
fn emulation_prevention_round_trips() {
    let cases: [&[u8]; 5] = [
        &[0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0],
        &[0, 0],
        &[1, 2, 3],
        &[0, 0, 3, 0, 0, 3],
        &[0; 40],
    ];
    for bytes in cases {
        let mut escaped = Vec::new();
        escape(bytes, &mut escaped);
        assert!(!escaped
            .windows(3)
            .any(|w| w[0] == 0 && w[1] == 0 && w[2] <= 2));
        assert!(!escaped.ends_with(&[0, 0]));
        assert_eq!(remove_prevention(&escaped), bytes);
    }
}

/// Given audio frames of 10, 31, 32 and 100 bytes, then each keeps its size and its first
/// 16 bytes, and exactly its whole blocks after them are encrypted (none below 32 bytes).
#[test]
fn audio_frames_keep_their_lead_and_partial_block() {
    let aes = Aes128::new(&KEY.into());
    for len in [10usize, 31, 32, 100] {
        let clear: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let mut frame = clear.clone();
        encrypt_audio_frame(&aes, &IV, &mut frame);
        let blocks = len.saturating_sub(16) / 16;
        let end = 16 + blocks * 16;
        assert_eq!(frame[..16.min(len)], clear[..16.min(len)]);
        assert_eq!(frame[end.min(len)..], clear[end.min(len)..], "{len}: tail");
        if blocks > 0 {
            let mut back = frame[16..end].to_vec();
            let (b, _) = aes::Block::slice_as_chunks_mut(&mut back);
            Aes128CbcDec::new(&KEY.into(), &IV.into()).decrypt_blocks(b);
            assert_eq!(back, clear[16..end]);
        }
    }
}

/// Given an E-AC-3 sample of two sync frames, then each frame is encrypted on its own.
#[test]
fn eac3_sync_frames_are_encrypted_each_from_the_iv() {
    let aes = Aes128::new(&KEY.into());
    // frmsiz 23: (23 + 1) * 2 = 48 bytes per frame.
    let mut frame = vec![0u8; 48];
    frame[..4].copy_from_slice(&[0x0B, 0x77, 0x00, 23]);
    let clear = [frame.clone(), frame.clone()].concat();
    let mut sample = clear.clone();
    encrypt_eac3_sample(&aes, &IV, &mut sample);
    assert_eq!(sample[..48], sample[48..], "both frames chain from the IV");
    assert_ne!(sample[16..32], clear[16..32]);
    assert_eq!(sample[..16], clear[..16]);
}

/// Given the AC-3 `dac3` of 48 kHz 5.1 at 448 kbit/s, then the setup data is a sync frame
/// start that says so: syncword, fscod 0, frmsizecod 24, bsid 8, acmod 7, lfeon.
#[test]
fn ac3_setup_is_a_sync_frame_start() {
    // fscod 0, bsid 8, bsmod 0, acmod 7, lfeon 1, bit_rate_code 12, reserved.
    let dac3 = [0b0001_0000, 0b0011_1101, 0b1000_0000];
    let setup = ac3_setup(&dac3);
    assert_eq!(setup.len(), 10);
    assert_eq!(setup[..4], [0x0B, 0x77, 0, 0]);
    assert_eq!(setup[4], 24); // fscod 0, frmsizecod 24
    assert_eq!(setup[5], 8 << 3); // bsid 8, bsmod 0
    assert_eq!(setup[6] >> 5, 7); // acmod 7
                                  // acmod 7: cmixlev (2), surmixlev (2), then lfeon.
    assert_eq!(setup[6] & 1, 1);
}

/// Given the H.264 + AAC fixture cut in 1 s segments, when every segment is encrypted,
/// then each is whole packets with the SAMPLE-AES PMT, and across the title every PID's
/// continuity counter runs on without a break, as in the clear layout (the filler NAL
/// unit keeps each segment's video packet count modulo 16).
#[test]
fn encrypted_segments_keep_the_continuity_of_the_clear_layout() {
    let (file, title) = fixture("h264-aac-3s.mp4");
    let program = main_program(&title);
    let layout = TsLayout::new(&title, &program).unwrap();
    let encrypted = program.with_sample_aes(&title.index).unwrap();
    assert!(layout.segments.len() >= 3);
    let mut all = Vec::new();
    for segment in 0..layout.segments.len() {
        let clear = prepare_ts_segment_for_test(&title, &program, &layout, segment);
        let inputs: Vec<Bytes> = clear
            .ranges
            .iter()
            .map(|ranges| {
                let bytes: Vec<u8> = ranges
                    .iter()
                    .flat_map(|r| file[r.start as usize..r.end() as usize].to_vec())
                    .collect();
                Bytes::from(bytes)
            })
            .collect();
        let (mut writer, samples) =
            encrypt_segment(&title, &encrypted, &layout, segment, inputs, &KEY, &IV).unwrap();
        let mut views: Vec<&[u8]> = samples.iter().map(|b| &b[..]).collect();
        let mut out = Vec::new();
        assert_eq!(
            writer.write(&mut views, &mut out),
            crate::package::ts::Need::Done
        );
        assert!(
            views.iter().all(|v| v.is_empty()),
            "every sample byte taken"
        );
        assert_eq!(out.len() as u64, writer.content_length);
        assert_eq!(out.len() % PACKET_LEN, 0);
        let pmt = &out[PACKET_LEN..2 * PACKET_LEN];
        assert_eq!(u16::from_be_bytes([pmt[1], pmt[2]]) & 0x1FFF, PMT_PID);
        assert_eq!(pmt[17], 0xDB, "H.264 SAMPLE-AES stream type");
        all.extend(out);
    }
    let mut last = std::collections::HashMap::new();
    for packet in all.chunks(PACKET_LEN) {
        assert_eq!(packet[0], 0x47);
        let pid = u16::from_be_bytes([packet[1], packet[2]]) & 0x1FFF;
        let (payload, cc) = (packet[3] & 0x10 != 0, packet[3] & 0x0F);
        if !payload {
            continue;
        }
        if let Some(before) = last.insert(pid, cc) {
            assert_eq!(cc, (before + 1) & 0x0F, "PID {pid:#x}");
        } else {
            assert!(pid == PAT_PID || pid == PMT_PID || cc == 0);
        }
    }
}

fn prepare_ts_segment_for_test(
    title: &Title,
    program: &TsProgram,
    layout: &TsLayout,
    segment: usize,
) -> TsSegment {
    crate::package::ts::prepare_ts_segment(title, program, layout, segment, None).unwrap()
}

/// Given a slice NAL unit with emulation prevention bytes in its lead, in an encrypted
/// block and in clear runs, when encrypted, then a reader gets the unit back, prevention
/// bytes and all (a decoder needs them), so each of them was escaped once more.
#[test]
fn a_slice_with_emulation_prevention_decrypts_to_itself() {
    let aes = Aes128::new(&KEY.into());
    let mut nal = vec![0x65, 0x88, 0x00, 0x00, 0x03, 0x01];
    nal.extend((0..400u32).map(|i| (i * 7 % 251) as u8 | 1));
    nal.splice(100..100, [0x00, 0x00, 0x03, 0x00]);
    nal.splice(196..196, [0x00, 0x00, 0x03, 0x03]); // in the block at 192
    nal.splice(300..300, [0x00, 0x00, 0x03, 0x02]);
    let mut sample = (nal.len() as u32).to_be_bytes().to_vec();
    sample.extend_from_slice(&nal);
    let mut encrypted = Vec::new();
    encrypt_avc_sample(&aes, &IV, &sample, &mut encrypted);
    let units = nal_units(&encrypted);
    assert_eq!(units.len(), 1);
    assert_eq!(reader_decrypts_nal(units[0]), nal);
    assert!(
        units[0].len() >= nal.len() + 3,
        "the clear runs' prevention escaped"
    );
    assert!(!units[0]
        .windows(3)
        .any(|w| w[0] == 0 && w[1] == 0 && w[2] <= 2));
}

/// Given slices of 48 bytes or fewer (one with an emulation prevention byte), then they
/// are written as they are: readers neither decrypt nor unescape them.
#[test]
fn short_slices_are_written_as_they_are() {
    let aes = Aes128::new(&KEY.into());
    for nal in [
        vec![0x41; 48],
        [vec![0x41, 0x9A, 0, 0, 3, 1], vec![0x55; 40]].concat(),
    ] {
        let mut sample = (nal.len() as u32).to_be_bytes().to_vec();
        sample.extend_from_slice(&nal);
        let mut encrypted = Vec::new();
        encrypt_avc_sample(&aes, &IV, &sample, &mut encrypted);
        assert_eq!(encrypted, sample);
    }
}

/// Given an AAC track whose AudioSpecificConfig claims 300 bytes (a hostile file), then
/// the SAMPLE-AES PMT leaves the setup data out and still fits one packet with its CRC.
#[test]
fn an_overlong_audio_setup_is_left_out_of_the_pmt() {
    let descriptors = sample_aes_descriptors(&StreamKind::Ac3, &[7u8; 300]).unwrap();
    assert_eq!(descriptors.len(), 6 + 2 + 12, "no setup data");
    let (_, title) = fixture("h264-aac-3s.mp4");
    let mut program = main_program(&title).with_sample_aes(&title.index).unwrap();
    program.streams[1].setup = vec![0x12; 300];
    let pmt = crate::package::ts::psi::pmt_packet(&program.streams, true, 0);
    let length = usize::from(u16::from_be_bytes([pmt[6], pmt[7]]) & 0x0FFF);
    assert!(8 + length <= PACKET_LEN);
    assert_eq!(crate::package::ts::psi::crc32(&pmt[5..8 + length]), 0);
}

/// Given a segment whose encrypted video grew (emulation prevention added), then the
/// filler NAL unit brings the video PID back to its clear packet count modulo 16, so the
/// next segment's counters stay right.
#[test]
fn grown_video_is_padded_back_to_the_clear_count_modulo_16() {
    let (_, title) = fixture("h264-aac-3s.mp4");
    let program = main_program(&title).with_sample_aes(&title.index).unwrap();
    let segment = 1;
    let track = &title.index.tracks[program.streams[0].track_pos];
    let range = title.plan.tracks[program.streams[0].track_pos]
        .samples(segment)
        .unwrap();
    let audio = &title.index.tracks[program.streams[1].track_pos];
    let audio_range = title.plan.tracks[program.streams[1].track_pos]
        .samples(segment)
        .unwrap();
    for grow in [1u32, 200, 184 * 3 + 7] {
        let mut video = track.samples.sizes[range.clone()].to_vec();
        *video.last_mut().unwrap() += grow;
        let mut sizes = vec![video, audio.samples.sizes[audio_range.clone()].to_vec()];
        let total: u32 = sizes[0].iter().sum();
        let mut bytes = vec![vec![0u8; total as usize], Vec::new()];
        pad_video(&title, &program, segment, 0, &mut sizes, &mut bytes).unwrap();
        let (clear, _) = video_packets(&title, &program, segment, 0, None).unwrap();
        let (padded, _) = video_packets(&title, &program, segment, 0, Some(&sizes)).unwrap();
        assert_eq!(padded % 16, clear % 16, "grown by {grow}");
        assert_eq!(
            bytes[0].len() as u32,
            sizes[0].iter().sum::<u32>(),
            "filler bytes"
        );
    }
}
