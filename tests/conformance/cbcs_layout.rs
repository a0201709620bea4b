//! `cbcs` video subsamples as ISO/IEC 23001-7 and Apple's "HLS Sample Encryption" want
//! them: for every H.264 and HEVC fixture, every VCL NAL unit of every `cbcs` segment,
//! DASH and HLS (fMP4 SAMPLE-AES), keeps its length prefix, NAL header and whole slice
//! header clear, and is protected from its first byte of slice data to its end, with the
//! 1:9 pattern of `tenc`. Where each slice header ends is told by ffmpeg's `trace_headers`
//! bitstream filter run on the source file, an independent reader, not by vodpack's parser.
//!
//! Segment samples are matched to the source's packets (in decode order) by their sizes:
//! each sample's size is the sum of its `senc` subsamples, and a segment holds a run of
//! consecutive source samples.

use std::path::{Path, PathBuf};
use std::process::Command;

use vodpack::crypto::{EncryptionPolicy, Secret};

use super::common::{self, TestServer};
use super::http::*;

/// One source packet as `trace_headers` prints it: its size, and where each of its slice
/// headers ends (in RBSP bits from the NAL header's first bit), in order.
#[derive(Debug)]
struct TracedPacket {
    size: usize,
    slice_ends: Vec<usize>,
}

/// Every video fixture whose first video stream is H.264 or HEVC: (key, codec), the key
/// relative to `fixtures/` (MPEG-TS audio fixtures and title documents left out).
fn h26x_fixtures(root: &Path) -> Vec<(String, String)> {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [root.to_path_buf(), root.join("ladder"), root.join("cbcs")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if matches!(ext, "mp4" | "m4v" | "mov") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let probe = Command::new("ffprobe")
            .args(["-v", "error", "-select_streams", "v:0"])
            .args(["-show_entries", "stream=codec_name", "-of", "csv=p=0"])
            .arg(&path)
            .output()
            .unwrap();
        let codec = String::from_utf8_lossy(&probe.stdout).trim().to_owned();
        if codec == "h264" || codec == "hevc" {
            let key = path.strip_prefix(root).unwrap().to_string_lossy();
            out.push((key.into_owned(), codec));
        }
    }
    out
}

/// The video packets of `path` with their slice header ends, from ffmpeg's
/// `trace_headers` (`-c copy`: the stored bytes, nothing decoded).
fn traced_packets(path: &Path) -> Vec<TracedPacket> {
    let out = Command::new("ffmpeg")
        .args(["-hide_banner", "-nostats", "-nostdin", "-i"])
        .arg(path)
        .args(["-map", "0:v:0", "-c", "copy", "-bsf:v", "trace_headers"])
        .args(["-f", "null", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "trace_headers on {path:?}");
    let log = String::from_utf8_lossy(&out.stderr);
    let mut packets: Vec<TracedPacket> = Vec::new();
    let mut in_slice = false;
    for line in log.lines() {
        let Some(at) = line.find("[trace_headers @ ") else {
            continue;
        };
        let Some(close) = line[at..].find("] ") else {
            continue;
        };
        let content = line[at + close + 2..].trim();
        if let Some(rest) = content.strip_prefix("Packet: ") {
            let size = rest.split(' ').next().unwrap().parse().unwrap();
            packets.push(TracedPacket {
                size,
                slice_ends: Vec::new(),
            });
            in_slice = false;
            continue;
        }
        let mut fields = content.split_whitespace();
        let first = fields.next().unwrap_or("");
        match first.parse::<usize>() {
            Ok(position) if in_slice => {
                let _name = fields.next();
                let bits = fields.next().unwrap();
                assert!(bits.chars().all(|c| c == '0' || c == '1'), "{line}");
                let packet = packets.last_mut().unwrap();
                *packet.slice_ends.last_mut().unwrap() = position + bits.len();
            }
            Ok(_) => {}
            Err(_) => {
                // A section title: "Slice Header", "Slice Segment Header", "Sequence
                // Parameter Set", ... ("Extradata" comes before any packet).
                in_slice = content.contains("Slice") && !packets.is_empty();
                if in_slice {
                    packets.last_mut().unwrap().slice_ends.push(0);
                }
            }
        }
    }
    packets
}

/// Escaped bytes holding the first `rbsp_bytes` RBSP bytes of `nal` (emulation
/// prevention bytes counted where they stand).
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

fn be32(b: &[u8], at: usize) -> usize {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

fn be16(b: &[u8], at: usize) -> usize {
    u16::from_be_bytes(b[at..at + 2].try_into().unwrap()) as usize
}

/// Where box `kind` starts in `buf` (its size field), found by its fourcc.
fn find_box(buf: &[u8], kind: &[u8; 4]) -> Option<usize> {
    buf.windows(4).position(|w| w == kind).map(|p| p - 4)
}

/// `tenc`'s pattern (crypt, skip) and per-sample IV size, from an init segment.
fn tenc(init: &[u8]) -> (u8, u8, u8) {
    let at = find_box(init, b"tenc").expect("tenc");
    assert_eq!(init[at + 8], 1, "tenc version 1 (with a pattern)");
    let pattern = init[at + 13];
    (pattern >> 4, pattern & 0x0f, init[at + 15])
}

/// One sample of a segment: its bytes, and its subsamples (clear, protected) from `senc`.
type Sample = (Vec<u8>, Vec<(usize, usize)>);

/// A segment's samples, from `senc` and `mdat`.
fn samples(segment: &[u8]) -> Vec<Sample> {
    let senc = find_box(segment, b"senc").expect("senc");
    assert_eq!(segment[senc + 11] & 2, 2, "senc lists subsamples");
    let count = be32(segment, senc + 12);
    let mdat = find_box(segment, b"mdat").expect("mdat");
    let mut data = &segment[mdat + 8..mdat + be32(segment, mdat)];
    let mut at = senc + 16;
    let mut out = Vec::new();
    for _ in 0..count {
        // cbcs: a constant IV, none per sample.
        let subs = be16(segment, at);
        at += 2;
        let mut list = Vec::new();
        for _ in 0..subs {
            list.push((be16(segment, at), be32(segment, at + 2)));
            at += 6;
        }
        let size: usize = list.iter().map(|(c, p)| c + p).sum();
        out.push((data[..size].to_vec(), list));
        data = &data[size..];
    }
    assert!(data.is_empty(), "mdat holds the senc samples exactly");
    out
}

fn is_vcl(codec: &str, header: u8) -> bool {
    match codec {
        "h264" => matches!(header & 0x1f, 1..=5),
        _ => (header >> 1) & 0x3f < 32,
    }
}

/// Checks the samples of one `cbcs` segment against the source's trace; returns the
/// slices checked, those with protected bytes, and the packet after the segment's last.
fn check_samples(
    what: &str,
    codec: &str,
    got: &[Sample],
    (traced, after): (&[TracedPacket], usize),
) -> (usize, usize, usize) {
    // The run of source packets the segment holds: the first that fits from `after` on
    // (segments follow each other), else from the start (an edit list may repeat). A
    // segment joining two edits holds two runs: the longest match is taken, then the rest.
    let run = |s: usize| {
        (got.iter().zip(traced.get(s..).unwrap_or_default()))
            .take_while(|((b, _), p)| b.len() == p.size)
            .count()
    };
    let mut best = (0, 0);
    for s in (after..traced.len()).chain(0..after) {
        let n = run(s);
        if n > best.1 {
            best = (s, n);
        }
        if n == got.len() {
            break;
        }
    }
    let (first, n) = best;
    assert!(n > 0, "{what}: a sample matches no source packet");
    if n < got.len() {
        let (s1, p1, _) = check_samples(what, codec, &got[..n], (traced, after));
        let (s2, p2, next) = check_samples(what, codec, &got[n..], (traced, first + n));
        return (s1 + s2, p1 + p2, next);
    }
    let (mut slices, mut protected_slices) = (0, 0);
    for (k, ((bytes, subs), packet)) in got.iter().zip(&traced[first..]).enumerate() {
        let mut protected = vec![false; bytes.len()];
        let mut at = 0;
        for &(clear, prot) in subs {
            at += clear;
            protected[at..at + prot].iter_mut().for_each(|p| *p = true);
            at += prot;
        }
        // What the standard wants, from the trace: slice data protected, nothing else.
        let mut want = vec![false; bytes.len()];
        let mut ends = packet.slice_ends.iter();
        let mut at = 0;
        while at < bytes.len() {
            let len = be32(bytes, at);
            let nal = &bytes[at + 4..at + 4 + len];
            if is_vcl(codec, nal[0]) {
                let end_bit = *ends
                    .next()
                    .unwrap_or_else(|| panic!("{what} sample {k}: more slices than traced"));
                let head = escaped_bytes(nal, end_bit.div_ceil(8));
                slices += 1;
                if len - head >= 16 {
                    protected_slices += 1;
                    want[at + 4 + head..at + 4 + len]
                        .iter_mut()
                        .for_each(|p| *p = true);
                }
            }
            at += 4 + len;
        }
        assert_eq!(at, bytes.len(), "{what} sample {k}: 4-byte NAL lengths");
        assert!(ends.next().is_none(), "{what} sample {k}: fewer slices");
        if protected != want {
            let first_diff = protected.iter().zip(&want).position(|(a, b)| a != b);
            panic!("{what} sample {k}: protected bytes differ first at {first_diff:?}: {subs:?}");
        }
    }
    (slices, protected_slices, first + got.len())
}

async fn start_cbcs(root: &Path) -> TestServer {
    let mut settings = common::segments_of(1000);
    settings.protect.encryption = EncryptionPolicy::parse("hls=sample-aes,dash=cbcs").unwrap();
    let secret = Secret::from_text("cbcs layout key secret, 32 bytes", "test").unwrap();
    settings.protect.key_secret = Some(secret);
    common::start_server_with(root, settings).await
}

/// The video init segment and media segments of `fixture`'s DASH output.
async fn dash_video(server: &TestServer, fixture: &str) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mpd = fetch_text(server, &format!("/vod/{fixture}/manifest.mpd")).await;
    assert!(mpd.contains("value=\"cbcs\""), "{mpd}");
    let folder = mpd
        .split("initialization=\"")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .unwrap()
        .to_owned();
    for id in mpd.split("<Representation id=\"").skip(1) {
        let id = id.split('"').next().unwrap();
        let base = format!("/vod/{fixture}/{folder}");
        let init = fetch_ok(server, &format!("{base}/init-{id}.mp4"))
            .await
            .body;
        if find_box(&init, b"encv").is_none() {
            continue;
        }
        let mut segments = Vec::new();
        for number in 1.. {
            let reply = common::get(server.addr, &format!("{base}/seg-{id}-{number}.m4s")).await;
            if reply.status == 404 {
                break;
            }
            assert_eq!(reply.status, 200, "{fixture} {id} segment {number}");
            segments.push(reply.body);
        }
        return (init, segments);
    }
    panic!("{fixture}: no encrypted video representation");
}

/// `uri` relative to the resource at `base` (a path).
fn resolve(base: &str, uri: &str) -> String {
    let dir = &base[..base.rfind('/').unwrap() + 1];
    format!("{dir}{uri}")
}

/// The video init segment and media segments of `fixture`'s HLS (fMP4) output.
async fn hls_video(server: &TestServer, fixture: &str) -> (Vec<u8>, Vec<Vec<u8>>) {
    let master_path = format!("/vod/{fixture}/master.m3u8");
    let master = fetch_text(server, &master_path).await;
    for uri in master_playlist_uris(&master) {
        let path = resolve(&master_path, &uri);
        let playlist = fetch_text(server, &path).await;
        assert!(playlist.contains("METHOD=SAMPLE-AES"), "{playlist}");
        let map = playlist
            .lines()
            .find(|l| l.starts_with("#EXT-X-MAP:"))
            .and_then(|l| quoted_attribute(l, "URI"))
            .unwrap();
        let init = fetch_ok(server, &resolve(&path, &map)).await.body;
        if find_box(&init, b"encv").is_none() {
            continue;
        }
        let mut segments = Vec::new();
        for line in playlist
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            segments.push(fetch_ok(server, &resolve(&path, line)).await.body);
        }
        return (init, segments);
    }
    panic!("{fixture}: no encrypted video playlist");
}

/// Given every H.264 and HEVC fixture (progressive and MBAFF, CAVLC and CABAC, one to four
/// slices a picture, 8 and 10 bits, parameter sets in the sample entry or in band), when its
/// `cbcs` DASH and HLS video segments are fetched, then `tenc` says 1:9 with a constant IV,
/// and in every sample exactly the slice data of each VCL NAL unit is protected: length
/// prefix, NAL header and the slice header `trace_headers` reads stay clear, as do non-VCL
/// units and slices with less than a block of data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cbcs_protects_exactly_the_slice_data_of_every_fixture() {
    if !tools_available().await {
        return;
    }
    let root = common::fixtures();
    let fixtures = tokio::task::spawn_blocking({
        let root = root.clone();
        move || h26x_fixtures(&root)
    })
    .await
    .unwrap();
    assert!(fixtures.len() >= 20, "{fixtures:?}");
    let server = start_cbcs(&root).await;
    for (fixture, codec) in &fixtures {
        let path = root.join(fixture);
        let traced = tokio::task::spawn_blocking(move || traced_packets(&path))
            .await
            .unwrap();
        for (output, (init, segments)) in [
            ("dash", dash_video(&server, fixture).await),
            ("hls", hls_video(&server, fixture).await),
        ] {
            assert_eq!(tenc(&init), (1, 9, 0), "{fixture} {output}: pattern 1:9");
            assert!(segments.len() > 1, "{fixture} {output}: several segments");
            let what = format!("{fixture} {output}");
            let (mut slices, mut protected, mut after) = (0, 0, 0);
            for (n, segment) in segments.iter().enumerate() {
                let what = format!("{what} segment {}", n + 1);
                let got = samples(segment);
                let (s, p, next) = check_samples(&what, codec, &got, (&traced, after));
                (slices, protected, after) = (slices + s, protected + p, next);
            }
            assert!(protected > slices / 2, "{what}: {protected} of {slices}");
            eprintln!("{what}: {slices} slices, {protected} with protected data");
        }
    }
    server.shutdown().await;
}
