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
        other_kids: Vec::new(),
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
                vec![
                    Nal {
                        len: 7,
                        vcl: false,
                        head: 0
                    },
                    Nal {
                        len: 44,
                        vcl: true,
                        head: 0
                    }
                ],
                vec![Nal {
                    len: 24,
                    vcl: true,
                    head: 0
                }],
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
        Nal {
            len: 7,
            vcl: false,
            head: 0,
        },
        Nal {
            len: 44,
            vcl: true,
            head: 0,
        },
        Nal {
            len: 10,
            vcl: true,
            head: 0,
        },
    ];
    let subs = video_subsamples(&nals, format, Scheme::Cenc, 40, 1).unwrap();
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
    let many: Vec<Nal> = (0..50)
        .map(|_| Nal {
            len: 37,
            vcl: true,
            head: 0,
        })
        .collect();
    let subs = video_subsamples(&many, format, Scheme::Cenc, 40, 1).unwrap();
    assert!(subs.len() <= 40);
    let total: u64 = subs
        .iter()
        .map(|s| u64::from(s.clear) + u64::from(s.protected))
        .sum();
    assert_eq!(total, 50 * 37);
    let big = [Nal {
        len: 200_000,
        vcl: false,
        head: 0,
    }];
    let subs = video_subsamples(&big, format, Scheme::Cenc, 40, 1).unwrap();
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

/// The video track of fixture `name`: its `stsd`, and each sample's bytes.
fn video_samples(name: &str) -> (Vec<u8>, Vec<Vec<u8>>) {
    let (title, file) = fixture_title(name);
    let video = (title.index.tracks.iter())
        .find(|t| t.kind == TrackKind::Video)
        .unwrap();
    let samples = (video.samples.offsets().iter())
        .zip(&video.samples.sizes)
        .map(|(&at, &size)| file[at as usize..at as usize + size as usize].to_vec())
        .collect();
    (video.sample_description.to_vec(), samples)
}

fn avc4() -> NalFormat {
    NalFormat {
        length_size: 4,
        hevc: false,
    }
}

/// Scans `samples` for slice headers with `params`, fed in chunks of `piece` bytes.
fn scan(
    params: &crate::media::slice_header::SliceHeaderParams,
    samples: &[Vec<u8>],
    piece: usize,
) -> Result<Vec<Vec<Nal>>, ProtectError> {
    scan_trying(params, samples, piece, 64)
}

/// As [`scan`], reading each slice header first from `first_try` bytes.
fn scan_trying(
    params: &crate::media::slice_header::SliceHeaderParams,
    samples: &[Vec<u8>],
    piece: usize,
    first_try: usize,
) -> Result<Vec<Vec<Nal>>, ProtectError> {
    scan_as(avc4(), params, samples, (piece, first_try))
}

/// As [`scan_trying`], for units framed as `format`.
fn scan_as(
    format: NalFormat,
    params: &crate::media::slice_header::SliceHeaderParams,
    samples: &[Vec<u8>],
    (piece, first_try): (usize, usize),
) -> Result<Vec<Vec<Nal>>, ProtectError> {
    let sizes = samples.iter().map(|s| s.len() as u32).collect();
    let params = std::sync::Arc::new(params.clone());
    let mut scanner = NalScanner::with_slice_headers(format, 1, sizes, params).first_try(first_try);
    for chunk in samples.concat().chunks(piece) {
        scanner.feed(chunk)?;
    }
    scanner.finish()
}

/// An IDR slice NAL unit (nal_unit_type 5) whose header starts first_mb_in_slice 0,
/// slice_type 7 (I), then `pps_id`, then `tail` bytes of 0xff (every later Exp-Golomb
/// code 0, every flag 1): codes written by hand, apart from the parser.
fn idr_slice(pps_id: u32, tail: usize) -> Vec<u8> {
    let ue = |v: u32| {
        let code = format!("{:b}", v + 1);
        format!("{}{code}", "0".repeat(code.len() - 1))
    };
    let mut bits = format!("{}{}{}", ue(0), ue(7), ue(pps_id));
    while bits.len() % 8 != 0 {
        bits.push('1');
    }
    let mut nal = vec![0x65];
    nal.extend(
        (0..bits.len() / 8).map(|i| u8::from_str_radix(&bits[i * 8..i * 8 + 8], 2).unwrap()),
    );
    nal.extend(std::iter::repeat_n(0xff, tail));
    nal
}

fn length_prefixed(nals: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for nal in nals {
        out.extend_from_slice(&(nal.len() as u32).to_be_bytes());
        out.extend_from_slice(nal);
    }
    out
}

#[test]
fn cbcs_subsamples_start_protection_at_the_slice_data_and_do_not_round_it() {
    let nals = [
        Nal {
            len: 7,
            vcl: false,
            head: 0,
        },
        // 4 prefix + 6 header and slice header, 34 bytes of slice data.
        Nal {
            len: 44,
            vcl: true,
            head: 6,
        },
        // 15 bytes of slice data: less than a block, wholly clear.
        Nal {
            len: 22,
            vcl: true,
            head: 3,
        },
        Nal {
            len: 40,
            vcl: true,
            head: 4,
        },
    ];
    let subs = video_subsamples(&nals, avc4(), Scheme::Cbcs, 40, 1).unwrap();
    assert_eq!(
        subs,
        vec![
            Subsample {
                clear: 7 + 10,
                protected: 34
            },
            Subsample {
                clear: 22 + 8,
                protected: 32
            },
        ]
    );
    // The same units under `cenc`: NAL headers only, whole blocks.
    let subs = video_subsamples(&nals, avc4(), Scheme::Cenc, 40, 1).unwrap();
    assert_eq!(subs[0].protected, 32);
    assert_eq!(subs[0].clear, 7 + 12);
    let past = [Nal {
        len: 40,
        vcl: true,
        head: 37,
    }];
    assert!(video_subsamples(&past, avc4(), Scheme::Cbcs, 40, 1).is_err());
}

/// Given a fixture's H.264 samples, when they are scanned for `cbcs` in chunks of any
/// size, then each slice gets the clear length the slice header parser gives for the
/// whole unit, and parameter sets and SEI none.
#[test]
fn the_scanner_reads_each_slice_header_however_the_bytes_are_cut() {
    let (stsd, samples) = video_samples("h264-aac-3s.mp4");
    let params = slice_header_params(&stsd, 1).unwrap();
    let whole = scan(&params, &samples, usize::MAX).unwrap();
    for piece in [1, 3, 4096] {
        assert_eq!(scan(&params, &samples, piece).unwrap(), whole);
        // Headers not whole in the first bytes are read again from more of them.
        assert_eq!(scan_trying(&params, &samples, piece, 2).unwrap(), whole);
    }
    let mut slices = 0;
    for (sample, nals) in samples.iter().zip(&whole) {
        let mut at = 0;
        for nal in nals {
            let unit = &sample[at + 4..at + nal.len as usize];
            if nal.vcl {
                assert_eq!(Some(nal.head as usize), params.clear_len(unit));
                assert!(nal.head >= 2);
                slices += 1;
            } else {
                assert_eq!(nal.head, 0);
            }
            at += nal.len as usize;
        }
    }
    assert_eq!(slices, 90);
}

/// Given slices that cannot be read (a PPS id past the standard's 255, a PPS id the
/// track does not have, a header of zero bits, random bytes), when scanned for `cbcs`,
/// then the segment is refused with the typed error, never a panic or a guess.
#[test]
fn unreadable_slice_headers_are_refused_with_a_typed_error() {
    let (stsd, _) = video_samples("h264-aac-3s.mp4");
    let params = slice_header_params(&stsd, 1).unwrap();
    let good = idr_slice(0, 64);
    assert!(scan(&params, &[length_prefixed(&[&good])], 7).is_ok());
    let zeros = [&[0x65u8][..], &[0; 40]].concat();
    let long_zeros = [&[0x65u8][..], &[0; 300]].concat();
    for nal in [idr_slice(300, 64), idr_slice(5, 64), zeros, long_zeros] {
        let got = scan(&params, &[length_prefixed(&[&nal])], 7);
        assert!(
            matches!(got, Err(ProtectError::SliceHeader { track_id: 1, .. })),
            "{got:?}"
        );
    }
    // Random slices and parameter sets: errors or layouts, never a panic.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..2000 {
        let len = (next() % 300) as usize + 1;
        let mut nal: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        nal[0] = [0x65, 0x41, 0x67, 0x68, 0x06][(next() % 5) as usize];
        let _ = scan(&params, &[length_prefixed(&[&nal, &good])], 5);
    }
}

/// Given an `avc3` track whose sample entry holds no parameter sets, when a slice comes
/// before any SPS and PPS in the segment, then it is refused; when the sample carries
/// them in band first, then the slice is read with them.
#[test]
fn in_band_parameter_sets_serve_the_slices_after_them() {
    let (stsd, samples) = video_samples("h264-aac-3s.mp4");
    let params = slice_header_params(&stsd, 1).unwrap();
    let whole = scan(&params, &samples, usize::MAX).unwrap();
    // The fixture's SPS and PPS, from its avcC.
    let mut body = super::boxes::video_config(&stsd).unwrap().body;
    let avcc = <mp4_atom::Avcc as mp4_atom::Atom>::decode_body(&mut body).unwrap();
    let (sps, pps) = (
        avcc.sequence_parameter_sets[0].clone(),
        avcc.picture_parameter_sets[0].clone(),
    );
    let empty = crate::media::slice_header::SliceHeaderParams::avc();
    let got = scan(&empty, &samples[..1], 64);
    assert!(
        matches!(got, Err(ProtectError::SliceHeader { .. })),
        "{got:?}"
    );
    let in_band = [length_prefixed(&[&sps, &pps]), samples[0].clone()].concat();
    let got = scan(&empty, &[in_band], 64).unwrap();
    let vcl: Vec<&Nal> = got[0].iter().filter(|n| n.vcl).collect();
    let want: Vec<&Nal> = whole[0].iter().filter(|n| n.vcl).collect();
    assert_eq!(vcl, want);
}

/// Given an HEVC fixture, when its samples are scanned for `cbcs`, then every slice gets
/// the clear length the parser gives for the whole unit (VPS, SPS, PPS and SEI none); and
/// random units among them (slices, parameter sets) give errors or layouts, never a panic.
#[test]
fn hevc_slices_are_read_and_random_units_never_panic() {
    let (stsd, samples) = video_samples("hevc-aac-3s.mp4");
    let params = slice_header_params(&stsd, 1).unwrap();
    let hevc = NalFormat {
        length_size: 4,
        hevc: true,
    };
    let whole = scan_as(hevc, &params, &samples, (usize::MAX, 64)).unwrap();
    assert_eq!(scan_as(hevc, &params, &samples, (5, 2)).unwrap(), whole);
    let mut slices = 0;
    for (sample, nals) in samples.iter().zip(&whole) {
        let mut at = 0;
        for nal in nals {
            let unit = &sample[at + 4..at + nal.len as usize];
            let want = if nal.vcl {
                params.clear_len(unit)
            } else {
                Some(0)
            };
            assert_eq!(Some(nal.head as usize), want);
            slices += usize::from(nal.vcl);
            at += nal.len as usize;
        }
    }
    assert_eq!(slices, 90);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..2000 {
        let len = (next() % 300) as usize + 2;
        let mut nal: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        // IDR_W_RADL, TRAIL_R, CRA, SPS, PPS; layer 0, temporal id 1.
        nal[0] = [19u8, 1, 21, 33, 34][(next() % 5) as usize] << 1;
        nal[1] = 1;
        let sample = [length_prefixed(&[&nal]), samples[0].clone()].concat();
        let _ = scan_as(hevc, &params, &[sample], (7, 64));
    }
}
