//! Slice header lengths checked against ffmpeg's `trace_headers` bitstream filter, an
//! independent reader that prints every syntax element of each slice header with its bit
//! position. Clips are made at test time with ffmpeg (libx264, libx265); when ffmpeg or an
//! encoder is missing the case is skipped with a reason, unless `VODPACK_REQUIRE_TOOLS=1`
//! (set by CI), which makes it a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use mp4_atom::{Avcc, HvcCArray, Hvcc};

use super::*;

/// A scratch directory removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "vodpack-slice-header-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether ffmpeg with `encoder` is here; without, a skip with a reason, or a failure
/// when `VODPACK_REQUIRE_TOOLS=1`.
fn tools_present(encoder: &str) -> bool {
    let required = std::env::var("VODPACK_REQUIRE_TOOLS").is_ok_and(|v| v == "1");
    let encoders = Command::new("ffmpeg")
        .args(["-hide_banner", "-encoders"])
        .output();
    let reason = match encoders {
        Err(e) => format!("ffmpeg cannot be run: {e}"),
        Ok(out) if String::from_utf8_lossy(&out.stdout).contains(encoder) => return true,
        Ok(_) => format!("ffmpeg has no {encoder} encoder"),
    };
    assert!(!required, "VODPACK_REQUIRE_TOOLS=1 and {reason}");
    eprintln!("skipped: {reason}");
    false
}

/// Whether ffmpeg itself is here (for the hand-made streams, which need no encoder).
fn ffmpeg_present() -> bool {
    // Every ffmpeg lists its encoders under this title.
    tools_present("Encoders:")
}

/// Encodes two seconds of a test pattern with `args` into a raw Annex-B stream.
fn encode(dir: &Path, file: &str, args: &[&str]) -> PathBuf {
    let path = dir.join(file);
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i"])
        .arg("testsrc2=size=352x288:rate=25")
        .args(["-t", "2", "-pix_fmt", "yuv420p"])
        .args(args)
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success(), "ffmpeg {args:?} failed");
    path
}

/// Splits an Annex-B stream on its start codes (trailing zero bytes belong to the next
/// start code, not to the NAL unit).
fn split_annex_b(stream: &[u8]) -> Vec<&[u8]> {
    let mut starts = Vec::new();
    let mut i = 0;
    while i + 3 <= stream.len() {
        if stream[i..i + 3] == [0, 0, 1] {
            starts.push(i + 3);
            i += 3;
        } else {
            i += 1;
        }
    }
    let mut nals = Vec::new();
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(stream.len(), |next| next - 3);
        let mut nal = &stream[start..end];
        while let [rest @ .., 0] = nal {
            nal = rest;
        }
        nals.push(nal);
    }
    nals
}

/// For each slice header ffmpeg's `trace_headers` prints, in stream order: the bit just
/// past its last syntax element, counted in the RBSP from the NAL header's first bit.
fn traced_slice_header_ends(path: &Path) -> Vec<usize> {
    let out = Command::new("ffmpeg")
        .args(["-hide_banner", "-nostats", "-nostdin", "-i"])
        .arg(path)
        .args(["-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let log = String::from_utf8_lossy(&out.stderr);
    let mut ends: Vec<usize> = Vec::new();
    let mut in_slice = false;
    for line in log.lines() {
        let Some(at) = line.find("[trace_headers @ ") else {
            continue;
        };
        let Some(close) = line[at..].find("] ") else {
            continue;
        };
        let content = line[at + close + 2..].trim();
        let mut fields = content.split_whitespace();
        let first = fields.next().unwrap_or("");
        match first.parse::<usize>() {
            Ok(position) => {
                if in_slice {
                    let _name = fields.next();
                    let bits = fields.next().unwrap();
                    assert!(bits.chars().all(|c| c == '0' || c == '1'), "{line}");
                    *ends.last_mut().unwrap() = position + bits.len();
                }
            }
            Err(_) => {
                in_slice = content.contains("Slice");
                if in_slice {
                    ends.push(0);
                }
            }
        }
    }
    ends
}

/// Escaped bytes holding the first `rbsp_bytes` RBSP bytes of `nal`, worked out here
/// apart from the module's own mapping.
fn escaped_bytes(nal: &[u8], rbsp_bytes: usize) -> usize {
    let (mut kept, mut zeros) = (0, 0);
    for (i, &byte) in nal.iter().enumerate() {
        if kept == rbsp_bytes {
            return i;
        }
        if zeros == 2 && byte == 3 {
            zeros = 0;
            continue;
        }
        zeros = if byte == 0 { (zeros + 1).min(2) } else { 0 };
        kept += 1;
    }
    assert_eq!(kept, rbsp_bytes);
    nal.len()
}

fn is_vcl(codec: &str, nal: &[u8]) -> bool {
    match codec {
        "avc" => matches!(nal[0] & 0x1f, 1..=5),
        _ => (nal[0] >> 1) & 0x3f < 32,
    }
}

fn parameter_sets(codec: &str, nals: &[&[u8]], kind: u8) -> Vec<Vec<u8>> {
    let mut sets: Vec<Vec<u8>> = Vec::new();
    for nal in nals {
        let t = if codec == "avc" {
            nal[0] & 0x1f
        } else {
            (nal[0] >> 1) & 0x3f
        };
        if t == kind && !sets.iter().any(|s| s == nal) {
            sets.push(nal.to_vec());
        }
    }
    sets
}

/// The track's parameter sets as an MP4 sample entry's configuration record holds them.
fn params_from_record(codec: &str, nals: &[&[u8]]) -> SliceHeaderParams {
    if codec == "avc" {
        let sps = parameter_sets(codec, nals, 7);
        let avcc = Avcc {
            configuration_version: 1,
            avc_profile_indication: sps[0][1],
            profile_compatibility: sps[0][2],
            avc_level_indication: sps[0][3],
            length_size: 4,
            sequence_parameter_sets: sps,
            picture_parameter_sets: parameter_sets(codec, nals, 8),
            ext: None,
        };
        SliceHeaderParams::from_avcc(&avcc).expect("avcC parameter sets")
    } else {
        let array = |kind| HvcCArray {
            completeness: true,
            nal_unit_type: kind,
            nalus: parameter_sets(codec, nals, kind),
        };
        let hvcc = Hvcc {
            arrays: vec![array(32), array(33), array(34)],
            ..Hvcc::new()
        };
        SliceHeaderParams::from_hvcc(&hvcc).expect("hvcC parameter sets")
    }
}

/// Given a clip made with `args`, when each VCL NAL unit's clear length is worked out,
/// then it ends exactly where ffmpeg's trace says the slice header ends (rounded up to a
/// byte, in escaped bytes), and the first `clear_len` bytes alone are enough to tell.
/// Returns each slice's traced header end (in RBSP bits), for further checks.
fn check_clip(name: &str, codec: &str, encoder: &str, args: &[&str]) -> Option<Vec<usize>> {
    if !tools_present(encoder) {
        return None;
    }
    let scratch = Scratch::new(name);
    let (format, file) = if codec == "avc" {
        ("h264", "clip.h264")
    } else {
        ("hevc", "clip.hevc")
    };
    let mut all_args = vec!["-c:v", encoder];
    all_args.extend_from_slice(args);
    all_args.extend_from_slice(&["-f", format]);
    let path = encode(&scratch.0, file, &all_args);
    let stream = std::fs::read(&path).unwrap();
    let nals = split_annex_b(&stream);
    let params = params_from_record(codec, &nals);
    let traced = traced_slice_header_ends(&path);
    let vcl: Vec<&[u8]> = nals.iter().copied().filter(|n| is_vcl(codec, n)).collect();
    assert_eq!(
        vcl.len(),
        traced.len(),
        "{name}: VCL NAL units and traced headers"
    );
    assert!(vcl.len() >= 25, "{name}: {} slices", vcl.len());
    let mut ends = Vec::new();
    for (k, (nal, end_bit)) in vcl.iter().zip(&traced).enumerate() {
        let expected = escaped_bytes(nal, end_bit.div_ceil(8));
        let got = params.clear_len(nal);
        assert_eq!(
            got,
            Some(expected),
            "{name}: slice {k}, header ends at bit {end_bit}"
        );
        assert_eq!(
            params.clear_len(&nal[..expected]),
            Some(expected),
            "{name}: prefix"
        );
        assert_eq!(
            params.clear_len(&nal[..expected - 1]),
            None,
            "{name}: cut short"
        );
        ends.push(*end_bit);
    }
    Some(ends)
}

#[test]
fn x264_baseline_cavlc_headers_end_mid_byte_and_that_byte_stays_clear() {
    let args = ["-profile:v", "baseline", "-x264-params", "keyint=12"];
    if let Some(ends) = check_clip("avc-baseline", "avc", "libx264", &args) {
        assert!(
            ends.iter().any(|end| end % 8 != 0),
            "CAVLC headers end mid-byte"
        );
    }
}

#[test]
fn x264_cavlc_with_b_frames_and_weighted_prediction() {
    let params = "cabac=0:bframes=3:b-pyramid=normal:weightp=2:ref=4:keyint=24";
    check_clip("avc-cavlc-b", "avc", "libx264", &["-x264-params", params]);
}

#[test]
fn x264_high_cabac_with_b_pyramid_and_weighted_prediction() {
    let params = "weightp=2:bframes=3:b-pyramid=normal:ref=4:keyint=24";
    let args = ["-profile:v", "high", "-x264-params", params];
    check_clip("avc-cabac-b", "avc", "libx264", &args);
}

#[test]
fn x264_four_slices_a_picture() {
    let args = ["-x264-params", "slices=4:bframes=2:keyint=24"];
    check_clip("avc-slices", "avc", "libx264", &args);
}

#[test]
fn x264_interlaced_mbaff_reads_the_field_flags() {
    let args = [
        "-flags",
        "+ildct+ilme",
        "-x264-params",
        "bframes=2:keyint=24",
    ];
    check_clip("avc-interlaced", "avc", "libx264", &args);
}

#[test]
fn x265_default_settings() {
    let args = ["-x265-params", "log-level=error:keyint=24"];
    check_clip("hevc-default", "hevc", "libx265", &args);
}

#[test]
fn x265_slices_and_wavefront_entry_points() {
    let params = "log-level=error:keyint=24:slices=2:wpp=1:bframes=3";
    check_clip(
        "hevc-slices-wpp",
        "hevc",
        "libx265",
        &["-x265-params", params],
    );
}

#[test]
fn x265_weighted_prediction_and_no_sao() {
    let params =
        "log-level=error:keyint=12:weightp=1:weightb=1:bframes=4:b-pyramid=1:sao=0:open-gop=1";
    check_clip(
        "hevc-weighted",
        "hevc",
        "libx265",
        &["-x265-params", params],
    );
}

/// A small AVC clip's NAL units, for the tests below.
fn small_avc_clip() -> Option<(Scratch, Vec<u8>)> {
    if !tools_present("libx264") {
        return None;
    }
    let scratch = Scratch::new("avc-small");
    let args = ["-c:v", "libx264", "-x264-params", "bframes=2", "-f", "h264"];
    let path = encode(&scratch.0, "clip.h264", &args);
    let stream = std::fs::read(path).unwrap();
    Some((scratch, stream))
}

#[test]
fn a_slice_whose_pps_is_unknown_gives_none() {
    let Some((_scratch, stream)) = small_avc_clip() else {
        return;
    };
    let nals = split_annex_b(&stream);
    // Given only the SPS, no slice's PPS is known.
    let mut params = SliceHeaderParams::avc();
    for sps in parameter_sets("avc", &nals, 7) {
        assert!(params.add_parameter_set(&sps));
    }
    let avcc = Avcc {
        configuration_version: 1,
        avc_profile_indication: 100,
        profile_compatibility: 0,
        avc_level_indication: 30,
        length_size: 4,
        sequence_parameter_sets: parameter_sets("avc", &nals, 7),
        picture_parameter_sets: Vec::new(),
        ext: None,
    };
    assert!(SliceHeaderParams::from_avcc(&avcc).is_none());
    let slices: Vec<_> = nals.iter().filter(|n| is_vcl("avc", n)).collect();
    assert!(!slices.is_empty());
    for nal in &slices {
        assert_eq!(params.clear_len(nal), None);
    }
    // Once the PPS is added in band, they are.
    for pps in parameter_sets("avc", &nals, 8) {
        assert!(params.add_parameter_set(&pps));
    }
    for nal in &slices {
        assert!(params.clear_len(nal).is_some());
    }
    // An HEVC track knows no PPS at all; an empty NAL unit says nothing.
    let hevc = SliceHeaderParams::hevc();
    assert_eq!(hevc.clear_len(slices[0]), None);
    assert_eq!(params.clear_len(&[]), None);
}

/// A tiny deterministic generator for the fuzz-ish tests.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_and_mutated_bytes_never_panic() {
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    // Random parameter sets and slices for both codecs.
    for _ in 0..2000 {
        let mut avc = SliceHeaderParams::avc();
        let mut hevc = SliceHeaderParams::hevc();
        for _ in 0..4 {
            let len = (rng.next() % 48) as usize;
            let mut nal: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            if let Some(first) = nal.first_mut() {
                *first = [0x67, 0x68, 0x65, 0x41, 0x42, 0x44, 0x26, 0x02][rng.next() as usize % 8];
            }
            avc.add_parameter_set(&nal);
            hevc.add_parameter_set(&nal);
            let _ = avc.clear_len(&nal);
            let _ = hevc.clear_len(&nal);
        }
    }
    // Real parameter sets with real slices (the hand-made streams: every feature), cut
    // short and with bits flipped, each taken by the reader of its own codec and of the
    // other one.
    for hex in [HAND_MADE_AVC, HAND_MADE_HEVC] {
        let stream = from_hex(hex);
        let nals = split_annex_b(&stream);
        for _ in 0..3000 {
            let mut avc = SliceHeaderParams::avc();
            let mut hevc = SliceHeaderParams::hevc();
            for nal in &nals {
                let mut nal = nal.to_vec();
                let keep = 1 + (rng.next() as usize) % nal.len();
                if rng.next().is_multiple_of(4) {
                    nal.truncate(keep);
                }
                for _ in 0..(rng.next() % 3) {
                    let bit = rng.next() as usize % (nal.len() * 8);
                    nal[bit / 8] ^= 1 << (bit % 8);
                }
                avc.add_parameter_set(&nal);
                hevc.add_parameter_set(&nal);
                let _ = avc.clear_len(&nal);
                let _ = hevc.clear_len(&nal);
            }
        }
    }
}

#[test]
fn x264_high_444_has_chroma_weights_of_its_own_format() {
    let args = [
        "-pix_fmt",
        "yuv444p",
        "-profile:v",
        "high444",
        "-x264-params",
        "weightp=2:bframes=2:keyint=24",
    ];
    check_clip("avc-444", "avc", "libx264", &args);
}

#[test]
fn x265_range_extensions_444_10_bit_is_read() {
    let args = [
        "-pix_fmt",
        "yuv444p10le",
        "-x265-params",
        "log-level=error:keyint=24:weightp=1:bframes=3",
    ];
    check_clip("hevc-444", "hevc", "libx265", &args);
}

/// A hand-made HEVC stream (VPS, SPS, PPS, then an IDR slice and three slice segments of
/// one picture, each followed by a few bytes standing for slice data) using what x265 does
/// not: SPS reference picture sets predicted from one another and chosen by index, one
/// predicted in the slice header (`delta_idx_minus1`), long-term pictures from the SPS and
/// from the slice, list modification, a dependent slice segment, extra slice header bits,
/// `pic_output_flag`, tiles with entry points, deblocking override, chroma QP offsets (slice
/// and range extension), and a slice header extension whose bytes need an emulation
/// prevention byte inside the header. Written from the syntax tables by
/// `hand_made/gen_hevc.py`; the reference lengths still come from ffmpeg's trace.
const HAND_MADE_HEVC: &str = "0000000140010c01ffff01600000030090000003000003005d9702400000000142010101600000030090000003000003005da00b080485965e4932235a7ee55902a281ec40000000014401f4ac7d25f6f807f8000000012601a3e5cf8012345678000000010201c505a9581daee51dd443a9456cc9e4e41432001ff9000003006080123456780000000102016fe0801234567800000001020154e05514b8a4d610204fbe8012345678";

fn from_hex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn hand_made_hevc_with_every_reference_picture_feature_matches_the_trace() {
    if !ffmpeg_present() {
        return;
    }
    let scratch = Scratch::new("hevc-hand-made");
    let path = scratch.0.join("hand.hevc");
    let stream = from_hex(HAND_MADE_HEVC);
    std::fs::write(&path, &stream).unwrap();
    let nals = split_annex_b(&stream);
    // Parameter sets taken in band, as from an hev1 sample.
    let mut params = SliceHeaderParams::hevc();
    let taken = nals.iter().filter(|n| params.add_parameter_set(n)).count();
    assert_eq!(taken, 2, "SPS and PPS");
    let traced = traced_slice_header_ends(&path);
    let vcl: Vec<&[u8]> = nals.iter().copied().filter(|n| is_vcl("hevc", n)).collect();
    assert_eq!((vcl.len(), traced.len()), (4, 4));
    let mut lens = Vec::new();
    for (nal, end_bit) in vcl.iter().zip(&traced) {
        assert_eq!(end_bit % 8, 0);
        let expected = escaped_bytes(nal, end_bit / 8);
        assert_eq!(params.clear_len(nal), Some(expected));
        // What follows the header is the slice data written after it.
        assert_eq!(&nal[expected..], [0x80, 0x12, 0x34, 0x56, 0x78]);
        lens.push(expected);
    }
    // The P slice's header (the second) holds an emulation prevention byte: one more byte
    // clear.
    assert_eq!(lens[1], traced[1] / 8 + 1);
}

/// A hand-made H.264 stream (two SPS, three PPS, eight slices, each followed by a few bytes
/// standing for slice data) using what x264 does not: field pictures (PAFF) with 32
/// references, POC type 1, separate colour planes (no chroma weights), every memory
/// management operation, long-term list modification, redundant_pic_cnt, slice groups of
/// map type 4 (`slice_group_change_cycle`), SP and SI slices, CABAC with implicit and
/// explicit weights, and a B slice whose zero weight flags need emulation prevention
/// bytes inside the header. Written from the syntax tables by `hand_made/gen_avc.py`.
const HAND_MADE_AVC: &str = "0000000167640028938d344282c249000000016758001e26d8589c800000000168db57d800000001681041165c710000000168144bef20000000016588a0642d3d389abcde00000001410bf0210d4b91a521a61e4c3d568945663e459abcde00000001019e052e15040b9200000a40000003002f809abcde000000012198419214609abcde000000010121042154d8e09abcde00000001218a10a5a4249abcde0000000101a14c6037217f9abcde0000000141c539a35163288610d79abcde";

#[test]
fn hand_made_avc_with_fields_slice_groups_and_switching_slices_matches_the_trace() {
    if !ffmpeg_present() {
        return;
    }
    let scratch = Scratch::new("avc-hand-made");
    let path = scratch.0.join("hand.h264");
    let stream = from_hex(HAND_MADE_AVC);
    std::fs::write(&path, &stream).unwrap();
    let nals = split_annex_b(&stream);
    let mut params = SliceHeaderParams::avc();
    let taken = nals.iter().filter(|n| params.add_parameter_set(n)).count();
    assert_eq!(taken, 5, "two SPS, three PPS");
    let traced = traced_slice_header_ends(&path);
    let vcl: Vec<&[u8]> = nals.iter().copied().filter(|n| is_vcl("avc", n)).collect();
    assert_eq!((vcl.len(), traced.len()), (8, 8));
    let mut escapes = 0;
    for (k, (nal, end_bit)) in vcl.iter().zip(&traced).enumerate() {
        let expected = escaped_bytes(nal, end_bit.div_ceil(8));
        assert_eq!(params.clear_len(nal), Some(expected), "slice {k}");
        escapes += expected - end_bit.div_ceil(8);
        // The slice data stand-in follows the header's last byte.
        assert!(nal.ends_with(&[0x9a, 0xbc, 0xde]));
    }
    assert!(
        escapes > 0,
        "some header holds an emulation prevention byte"
    );
}
