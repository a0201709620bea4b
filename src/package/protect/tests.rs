//! Protected boxes and layouts, as small stories.

use super::boxes::COMMON_SYSTEM_ID;
use super::*;
use crate::crypto::keys::ContentKey;
use crate::crypto::{Scheme, Subsample};
use crate::media::TrackKind;
use crate::package::{init_segment, prepare_media_segment, Title};

fn fixture_title(name: &str) -> (Title, Vec<u8>) {
    crate::package::fmp4::tests::fixture(name, 1000)
}

fn key() -> ContentKey {
    ContentKey {
        kid: [0x11; 16],
        key: [0x22; 16],
        systems: Vec::new(),
    }
}

/// Every box in `buf[start..end]` and, inside containers we know, its children, as
/// (depth, fourcc, start, size); panics when sizes do not tile their parent exactly.
fn walk(
    buf: &[u8],
    start: usize,
    end: usize,
    depth: usize,
    out: &mut Vec<(usize, String, usize, usize)>,
) {
    let mut at = start;
    while at < end {
        let size = u32::from_be_bytes(buf[at..at + 4].try_into().unwrap()) as usize;
        let kind = String::from_utf8_lossy(&buf[at + 4..at + 8]).into_owned();
        assert!(
            size >= 8 && at + size <= end,
            "{kind} at {at} overruns its parent"
        );
        out.push((depth, kind.clone(), at, size));
        let children = match kind.as_str() {
            "moov" | "trak" | "mdia" | "minf" | "stbl" | "moof" | "traf" | "sinf" | "schi"
            | "mvex" | "dinf" => Some(8),
            "stsd" => Some(16),
            "encv" => Some(86),
            "enca" => Some(36),
            _ => None,
        };
        if let Some(skip) = children {
            walk(buf, at + skip, at + size, depth + 1, out);
        }
        at += size;
    }
    assert_eq!(at, end);
}

fn protection(scheme: Scheme, stsd: &[u8], kind: TrackKind) -> TrackProtection {
    TrackProtection {
        scheme,
        key: key(),
        constant_iv: [0x33; 16],
        format: TrackProtection::sample_format(stsd, kind).unwrap(),
    }
}

#[test]
fn protected_init_segments_name_the_original_format_and_the_key() {
    let (title, _) = fixture_title("h264-aac-3s.mp4");
    for track in &title.index.tracks {
        for scheme in [Scheme::Cenc, Scheme::Cbcs] {
            let clear = init_segment(track);
            let p = protection(scheme, &track.sample_description, track.kind);
            let init = protect_init_segment(&clear, track.kind, &p).unwrap();
            let mut boxes = Vec::new();
            walk(&init, 0, init.len(), 0, &mut boxes);
            let names: Vec<&str> = boxes.iter().map(|b| b.1.as_str()).collect();
            let entry = if track.kind == TrackKind::Video {
                "encv"
            } else {
                "enca"
            };
            for needed in [entry, "sinf", "frma", "schm", "schi", "tenc", "pssh"] {
                assert!(names.contains(&needed), "{needed} missing in {names:?}");
            }
            let frma = boxes.iter().find(|b| b.1 == "frma").unwrap();
            let original = &init[frma.2 + 8..frma.2 + 12];
            assert_eq!(original, &track.sample_description[20..24]);
            let tenc = boxes.iter().find(|b| b.1 == "tenc").unwrap();
            let kid_at = tenc.2 + 12 + 4;
            assert_eq!(&init[kid_at..kid_at + 16], &[0x11; 16]);
            let pssh = boxes.iter().find(|b| b.1 == "pssh").unwrap();
            assert_eq!(&init[pssh.2 + 12..pssh.2 + 28], &COMMON_SYSTEM_ID);
            if scheme == Scheme::Cbcs {
                assert_eq!(init[tenc.2 + 8], 1, "tenc version 1 for cbcs");
                let pattern = if track.kind == TrackKind::Video {
                    0x19
                } else {
                    0
                };
                assert_eq!(init[tenc.2 + 13], pattern);
                assert_eq!(&init[kid_at + 17..kid_at + 33], &[0x33; 16], "constant IV");
            }
        }
    }
}

#[test]
fn protected_segment_headers_point_saio_into_senc_and_move_the_data_offset() {
    let (title, _) = fixture_title("h264-aac-3s.mp4");
    let track = &title.index.tracks[0];
    let clear = prepare_media_segment(&title.index, &title.plan, 0, 0).unwrap();
    let n = clear_sample_count(&clear.header);
    let p = protection(Scheme::Cenc, &track.sample_description, track.kind);
    let ivs: Vec<[u8; 16]> = (0..n as u64)
        .map(|i| cenc_sample_iv(7, track.track_id, i))
        .collect();
    let subs: Vec<Vec<Subsample>> = (0..n)
        .map(|i| {
            vec![
                Subsample {
                    clear: 5,
                    protected: 32
                };
                1 + i % 2
            ]
        })
        .collect();
    let header = protect_segment_header(&clear.header, &p, &ivs, &subs).unwrap();
    let mut boxes = Vec::new();
    walk(&header, 0, header.len() - 8, 0, &mut boxes);
    let get = |k: &str| boxes.iter().find(|b| b.1 == k).unwrap().clone();
    let (senc, saio, trun) = (get("senc"), get("saio"), get("trun"));
    let offset = u32::from_be_bytes(header[saio.2 + 16..saio.2 + 20].try_into().unwrap()) as usize;
    assert_eq!(offset, senc.2 + 16, "saio points at senc's first sample");
    assert_eq!(&header[offset..offset + 8], &ivs[0][..8]);
    let data_offset =
        u32::from_be_bytes(header[trun.2 + 16..trun.2 + 20].try_into().unwrap()) as usize;
    assert_eq!(
        data_offset,
        header.len(),
        "mdat payload right after the header"
    );
    assert_eq!(&header[header.len() - 4..], b"mdat");
    let saiz = get("saiz");
    assert_eq!(header[saiz.2 + 12], 0, "sizes vary, so listed per sample");
    assert_eq!(header[saiz.2 + 17], 8 + 2 + 6);
    assert_eq!(header[saiz.2 + 18], 8 + 2 + 12);
}

fn clear_sample_count(header: &[u8]) -> usize {
    let mut boxes = Vec::new();
    walk(header, 0, header.len() - 8, 0, &mut boxes);
    let trun = boxes.iter().find(|b| b.1 == "trun").unwrap();
    u32::from_be_bytes(header[trun.2 + 12..trun.2 + 16].try_into().unwrap()) as usize
}

#[test]
fn the_scanner_finds_nal_units_however_the_bytes_are_cut() {
    let format = NalFormat {
        length_size: 4,
        hevc: false,
    };
    // Sample 1: SEI (6, 3 bytes) + IDR slice (5, 40 bytes); sample 2: one slice (1, 20).
    let mut bytes = Vec::new();
    let mut nal = |t: u8, len: usize| {
        bytes.extend_from_slice(&(len as u32).to_be_bytes());
        bytes.push(t);
        bytes.extend(std::iter::repeat_n(0xab, len - 1));
    };
    nal(6, 3);
    nal(0x65, 40);
    nal(0x41, 20);
    let sizes = vec![7 + 44, 24];
    for piece in [1, 2, 5, 1000] {
        let mut scanner = NalScanner::new(format, 1, sizes.clone());
        for chunk in bytes.chunks(piece) {
            scanner.feed(chunk).unwrap();
        }
        let found = scanner.finish().unwrap();
        assert_eq!(
            found,
            vec![
                vec![Nal { len: 7, vcl: false }, Nal { len: 44, vcl: true }],
                vec![Nal { len: 24, vcl: true }],
            ]
        );
    }
    let mut short = NalScanner::new(format, 1, vec![10]);
    assert!(
        short.feed(&[0, 0, 0, 20, 0x65, 1, 2, 3, 4, 5]).is_err(),
        "length past the sample"
    );
}

#[test]
fn subsamples_keep_headers_and_non_vcl_units_clear_and_protect_whole_blocks() {
    let format = NalFormat {
        length_size: 4,
        hevc: false,
    };
    let nals = [
        Nal { len: 7, vcl: false },
        Nal { len: 44, vcl: true },
        Nal { len: 10, vcl: true },
    ];
    let subs = video_subsamples(&nals, format, 40, 1).unwrap();
    // SEI (7) + prefix and header (5) + 7 leftover bytes clear, 32 protected; the short
    // slice wholly clear.
    assert_eq!(
        subs,
        vec![
            Subsample {
                clear: 19,
                protected: 32
            },
            Subsample {
                clear: 10,
                protected: 0
            }
        ]
    );
    let many: Vec<Nal> = (0..50).map(|_| Nal { len: 37, vcl: true }).collect();
    let subs = video_subsamples(&many, format, 40, 1).unwrap();
    assert!(subs.len() <= 40);
    let total: u64 = subs
        .iter()
        .map(|s| u64::from(s.clear) + u64::from(s.protected))
        .sum();
    assert_eq!(total, 50 * 37);
    let big = [Nal {
        len: 200_000,
        vcl: false,
    }];
    let subs = video_subsamples(&big, format, 40, 1).unwrap();
    assert!(subs.iter().all(|s| s.clear <= 65535));
    assert_eq!(subs.iter().map(|s| s.clear).sum::<u32>(), 200_000);
}

#[test]
fn codecs_without_a_cenc_mapping_here_are_refused() {
    let (title, _) = fixture_title("av1-10bit-pq-aac-3s.mp4");
    let video = title
        .index
        .tracks
        .iter()
        .find(|t| t.kind == TrackKind::Video)
        .unwrap();
    assert!(matches!(
        TrackProtection::sample_format(&video.sample_description, TrackKind::Video),
        Err(ProtectError::UnsupportedCodec { .. })
    ));
}

#[test]
fn ivs_differ_per_track_sample_and_version() {
    let kid = [1u8; 16];
    let a = iv_base("aaaa", &kid);
    assert_ne!(a, iv_base("bbbb", &kid));
    assert_ne!(cenc_sample_iv(a, 1, 0), cenc_sample_iv(a, 2, 0));
    assert_ne!(cenc_sample_iv(a, 1, 0), cenc_sample_iv(a, 1, 1));
    assert_eq!(&cenc_sample_iv(a, 1, 0)[8..], &[0; 8]);
    assert_ne!(
        hls_segment_iv("t", &kid, 1, 1),
        hls_segment_iv("t", &kid, 1, 2)
    );
}
