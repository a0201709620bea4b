//! Encrypted output read back by ffmpeg, a reader nobody here wrote: decrypted
//! with the title's key, every `cenc` and `cbcs` DASH representation and the AES-128 HLS
//! output decode to the same frames as the clear output of the same server settings.
//!
//! ffmpeg's DASH reader does not take `-decryption_key` (5.1: "Option not found"), and its
//! MP4 reader, which does (`cenc` and `cbcs`), loses track of the sample encryption of
//! later fragments when several follow one `moov` (it cannot read back its own muxer's
//! multi-fragment `cenc` output either: "saio atom found without saiz"). So the DASH
//! check gives it each media segment behind its init segment, one file per segment, and
//! compares the frames segment by segment with the clear output's, read the same way.
//! The HLS reader decrypts AES-128 and SAMPLE-AES itself, fetching the key from the
//! playlist's URI.

use vodpack::config::Settings;
use vodpack::crypto::keys::hex;
use vodpack::crypto::{EncryptionPolicy, Secret, SecretKeyProvider};

use std::path::{Path, PathBuf};

use super::common::{self, TempDir, TestServer};
use super::http::*;
use super::media_recipes::{self, Recipe};
use super::tools::*;
use super::AAC_FRAME;

const SECRET: &str = "conformance key secret, 32 bytes";

async fn start_encrypted(policy: &str) -> TestServer {
    start_encrypted_over(&common::fixtures(), 1000, policy).await
}

/// A server over the files of `root` with `segment_duration_ms` segments and `policy`.
async fn start_encrypted_over(root: &Path, segment_duration_ms: u32, policy: &str) -> TestServer {
    let mut settings = Settings {
        segment_duration_ms,
        ..Default::default()
    };
    settings.protect.encryption = EncryptionPolicy::parse(policy).unwrap();
    settings.protect.key_secret = Some(Secret::from_text(SECRET, "test").unwrap());
    common::start_server_with(root, settings).await
}

fn key_of(fixture: &str) -> String {
    let provider = SecretKeyProvider::new(Secret::from_text(SECRET, "test").unwrap());
    hex(&provider.derive(fixture).key)
}

/// The version folder and representation ids of an MPD.
fn mpd_parts(mpd: &str) -> (String, Vec<String>) {
    let folder = mpd
        .split("initialization=\"")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .expect("a SegmentTemplate")
        .to_owned();
    let ids = mpd
        .split("<Representation id=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .map(str::to_owned)
        .collect();
    (folder, ids)
}

/// Each media segment of representation `id` behind its init segment: one file each.
async fn segment_files(server: &TestServer, fixture: &str, folder: &str, id: &str) -> Vec<Vec<u8>> {
    let base = format!("/vod/{fixture}/{folder}");
    let init = fetch_ok(server, &format!("{base}/init-{id}.mp4"))
        .await
        .body;
    let mut files = Vec::new();
    for number in 1.. {
        let reply = common::get(server.addr, &format!("{base}/seg-{id}-{number}.m4s")).await;
        if reply.status == 404 {
            break;
        }
        assert_eq!(reply.status, 200, "segment {number} of {id}");
        assert_eq!(
            reply
                .header("content-length")
                .map(|l| l.parse::<usize>().unwrap()),
            Some(reply.body.len())
        );
        files.push([init.clone(), reply.body].concat());
    }
    files
}

/// framemd5 of the one stream of `path`, decrypted with `key` when given: (size, hash)
/// per frame, timestamps left out.
async fn decoded(path: &str, key: Option<&str>) -> Vec<String> {
    let mut a = vec!["-v", "error", "-nostdin"];
    if let Some(key) = key {
        a.extend(["-decryption_key", key]);
    }
    a.extend([
        "-i",
        path,
        "-map",
        "0",
        "-vsync",
        "passthrough",
        "-f",
        "framemd5",
        "-",
    ]);
    let out = run_tool("ffmpeg", args(&a)).await;
    String::from_utf8_lossy(&out)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            l.split(',')
                .skip(4)
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

/// Given DASH encrypted with `cenc` and with `cbcs`, when each representation is
/// decrypted by ffmpeg with the title's key, then it decodes to the same frames (video
/// and audio, H.264 with and without B-frames, CAVLC with four slices a picture, CABAC
/// MBAFF `avc3` with in-band parameter sets, HEVC, `hev1` with two slices) as the clear
/// representation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cenc_and_cbcs_dash_decrypt_to_the_clear_frames() {
    let Some(clear) = start().await else { return };
    let dir = TempDir::new("encryption-dash");
    for scheme in ["cenc", "cbcs"] {
        let server = start_encrypted(&format!("dash={scheme}")).await;
        for fixture in [
            "h264-aac-3s.mp4",
            "h264-bframes-editlist-aac.mp4",
            "hevc-aac-3s.mp4",
            // Slice headers of other shapes (`cbcs` leaves them clear).
            "cbcs/h264-cavlc-4slices.mp4",
            "cbcs/h264-cabac-mbaff-avc3.mp4",
            "cbcs/hevc-2slices-wpp-hev1.mp4",
        ] {
            let mpd = fetch_text(&server, &format!("/vod/{fixture}/manifest.mpd")).await;
            assert!(
                mpd.contains(&format!("value=\"{scheme}\" cenc:default_KID=")),
                "{mpd}"
            );
            let (folder, ids) = mpd_parts(&mpd);
            let clear_mpd = fetch_text(&clear, &format!("/vod/{fixture}/manifest.mpd")).await;
            let (clear_folder, _) = mpd_parts(&clear_mpd);
            assert_ne!(
                folder, clear_folder,
                "encrypted output has its own version folder"
            );
            for id in ids {
                let enc = segment_files(&server, fixture, &folder, &id).await;
                let plain = segment_files(&clear, fixture, &clear_folder, &id).await;
                assert_eq!(enc.len(), plain.len());
                assert!(enc.len() > 1, "several segments");
                for (n, (enc, plain)) in enc.iter().zip(&plain).enumerate() {
                    assert_ne!(enc, plain);
                    let enc_path = dir.path().join(format!("{scheme}-{id}-{n}-enc.mp4"));
                    let plain_path = dir.path().join(format!("{scheme}-{id}-{n}-clear.mp4"));
                    std::fs::write(&enc_path, enc).unwrap();
                    std::fs::write(&plain_path, plain).unwrap();
                    let key = key_of(fixture);
                    let got = decoded(enc_path.to_str().unwrap(), Some(&key)).await;
                    let want = decoded(plain_path.to_str().unwrap(), None).await;
                    assert!(!want.is_empty());
                    assert_eq!(got, want, "{scheme} {fixture} {id} segment {}", n + 1);
                }
            }
        }
        server.shutdown().await;
    }
    clear.shutdown().await;
}

/// Given HLS with MPEG-TS segments encrypted with AES-128, when ffmpeg reads
/// `master-ts.m3u8` (fetching the key from the `EXT-X-KEY` URI), then video and audio decode
/// to the same frames as the clear TS output, and every segment decrypted with the key
/// and its playlist IV is byte for byte the clear segment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aes_128_ts_decodes_to_the_clear_frames() {
    let Some(clear) = start().await else { return };
    let server = start_encrypted("hls=aes-128").await;
    for fixture in [
        "h264-aac-3s.mp4",
        "hevc-aac-3s.mp4",
        "h264-aac-2lang-3s.mp4",
    ] {
        let master_path = format!("/vod/{fixture}/master-ts.m3u8");
        let master = fetch_text(&server, &master_path).await;
        assert!(
            master.contains("#EXT-X-SESSION-KEY:METHOD=AES-128") && !master.contains("I-FRAME"),
            "{master}"
        );
        for selector in ["v", "a"] {
            let got = frame_hashes(&server.url(&master_path), selector).await;
            let want = frame_hashes(&clear.url(&master_path), selector).await;
            assert!(!want.is_empty(), "{fixture} {selector}");
            let hashes = |f: &[Frame]| f.iter().map(|f| f.hash.clone()).collect::<Vec<_>>();
            assert_eq!(hashes(&got), hashes(&want), "{fixture} {selector}");
        }
        // Each segment: AES-128-CBC of the clear segment with the playlist's IV.
        let variant = master.lines().find(|l| !l.starts_with('#')).unwrap();
        let folder = variant.rsplit_once('/').unwrap().0;
        let media = fetch_text(&server, &format!("/vod/{fixture}/{variant}")).await;
        let clear_master = fetch_text(&clear, &master_path).await;
        let clear_variant = clear_master.lines().find(|l| !l.starts_with('#')).unwrap();
        let clear_folder = clear_variant.rsplit_once('/').unwrap().0;
        let key = fetch_ok(&server, &format!("/vod/{fixture}/{folder}/hls.key"))
            .await
            .body;
        let mut iv = None;
        for line in media.lines() {
            if let Some(at) = line.find("IV=0x") {
                iv = Some(line[at + 5..at + 37].to_owned());
            }
            if line.starts_with('#') {
                continue;
            }
            let secret = fetch_ok(&server, &format!("/vod/{fixture}/{folder}/{line}"))
                .await
                .body;
            let plain = fetch_ok(&clear, &format!("/vod/{fixture}/{clear_folder}/{line}"))
                .await
                .body;
            let decrypted = cbc_decrypt(&secret, &key, iv.as_deref().unwrap());
            assert_eq!(decrypted, plain, "{fixture} {line}");
        }
    }
    server.shutdown().await;
    clear.shutdown().await;
}

/// Given HLS SAMPLE-AES, when ffmpeg reads each fixture's TS media playlist (fetching the
/// raw key from the `EXT-X-KEY` URI, decrypting NAL units and audio frames itself), then
/// video and audio decode to the same frames as the clear TS output: H.264 with and
/// without B-frames, slices holding emulation prevention bytes (a ladder rung), AAC, two
/// languages, AC-3 and E-AC-3, 1 s segments, so the continuity counters run across
/// segments as in the clear layout.
///
/// Two ffmpeg 5.1 habits shape the reading. Its HLS reader decrypts a frame after its
/// parser has cut it out, with the segment it is reading then; the title's last frame is
/// cut out only at the end of the stream, after the last segment is left, and stays
/// encrypted (nginx-vod's SAMPLE-AES output reads the same way). So the playlist read gets
/// the last segment once more after a discontinuity and only the first pass is compared.
/// And it takes any audio rendition of a SAMPLE-AES variant for packed audio and then
/// decrypts nothing; vodpack's `master-ts.m3u8` leaves out an audio group that only names
/// the muxed audio, but a title with alternate audio keeps it, so the media playlist is
/// read here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sample_aes_ts_decodes_to_the_clear_frames() {
    let Some(clear) = start().await else { return };
    let server = start_encrypted("hls=sample-aes").await;
    let dir = TempDir::new("sample-aes");
    for (fixture, selectors) in [
        ("h264-aac-3s.mp4", ["v", "a"].as_slice()),
        ("h264-bframes-editlist-aac.mp4", &["v", "a"]),
        ("h264-aac-2lang-3s.mp4", &["v", "a"]),
        ("ts/ac3-3s.mp4", &["a"]),
        ("ts/eac3-3s.mp4", &["a"]),
        // Video only; one of its slices holds emulation prevention bytes.
        ("ladder/ladder-360p.mp4", &["v"]),
    ] {
        let file = sample_aes_playlist(&server, fixture, dir.path()).await;
        let clear_url = clear_ts_media_playlist(&clear, fixture).await;
        for selector in selectors {
            let want = frame_hashes(&clear_url, selector).await;
            let got = first_pass_frames(&file, selector, want.len()).await;
            assert!(!want.is_empty(), "{fixture} {selector}");
            assert_eq!(hashes(&got), hashes(&want), "{fixture} {selector}");
        }
    }
    server.shutdown().await;
    clear.shutdown().await;
}

/// Given recipe 1 (`media_recipes`: 30 s of H.264 made here with ffmpeg, 640x360, 25 fps,
/// a key frame every 50, two B-frames, and AAC at 48 kHz), an ordinary x264 encode whose
/// slices, unlike the short fixtures', hold emulation prevention bytes, served in 6 s
/// segments, when ffmpeg reads its HLS SAMPLE-AES TS media playlist, then all 750 video
/// frames decode as the source's and as the clear TS output's, and the audio frames as
/// the clear TS output's, with the source's PCM. (The last segment is read twice, as in
/// `sample_aes_ts_decodes_to_the_clear_frames`, for ffmpeg's habit with the title's last
/// frame; only the first pass is compared.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sample_aes_ts_of_a_long_title_decodes_to_the_source_frames() {
    if !tools_available().await {
        return;
    }
    let dir = TempDir::new("sample-aes-long");
    let fixture = media_recipes::make(dir.path(), Recipe::aac_48k).await;
    let source = dir.path().join(fixture);
    let server = start_encrypted_over(dir.path(), 6000, "hls=sample-aes").await;
    let clear = common::start_server_with(dir.path(), common::segments_of(6000)).await;
    let file = sample_aes_playlist(&server, fixture, dir.path()).await;
    let clear_url = clear_ts_media_playlist(&clear, fixture).await;
    let source = source.to_string_lossy();

    let want = frame_hashes(&source, "v:0").await;
    assert_eq!(want.len(), 750, "the source's frames");
    let got = first_pass_frames(&file, "v", want.len()).await;
    let differ: Vec<usize> = (0..want.len())
        .filter(|&i| got[i].hash != want[i].hash)
        .collect();
    assert!(
        differ.is_empty(),
        "SAMPLE-AES TS: {} of {} decoded frames differ from the source's, from frame {:?}",
        differ.len(),
        want.len(),
        differ.first()
    );
    assert_eq!(hashes(&frame_hashes(&clear_url, "v").await), hashes(&want));

    let want = frame_hashes(&clear_url, "a").await;
    assert!(want.len() > 1000, "30 s of AAC frames");
    let got = first_pass_frames(&file, "a", want.len()).await;
    assert_eq!(hashes(&got), hashes(&want), "audio frames");
    let pcm = first_pass_pcm(&file).await;
    let source_pcm = decode_pcm(&source, "a", None).await;
    let offset = pcm_offset(&source_pcm, &pcm).expect("the source's PCM");
    assert!(offset <= AAC_FRAME, "starts {offset} samples early");
    server.shutdown().await;
    clear.shutdown().await;
}

/// The frames' hashes, in order.
fn hashes(frames: &[Frame]) -> Vec<String> {
    frames.iter().map(|f| f.hash.clone()).collect()
}

/// The URL of the first TS media playlist of `fixture`'s `master-ts.m3u8` on `server`.
async fn clear_ts_media_playlist(server: &TestServer, fixture: &str) -> String {
    let master = fetch_text(server, &format!("/vod/{fixture}/master-ts.m3u8")).await;
    let variant = master.lines().find(|l| !l.starts_with('#')).unwrap();
    server.url(&format!("/vod/{fixture}/{variant}"))
}

/// A copy in `dir` of the SAMPLE-AES TS media playlist of `fixture` on `server`, for
/// ffmpeg: the key URI absolute and the last segment listed again after a discontinuity
/// (see `sample_aes_ts_decodes_to_the_clear_frames`).
async fn sample_aes_playlist(server: &TestServer, fixture: &str, dir: &Path) -> PathBuf {
    let master_path = format!("/vod/{fixture}/master-ts.m3u8");
    let master = fetch_text(server, &master_path).await;
    assert!(
        master.contains("#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES") && !master.contains("I-FRAME"),
        "{master}"
    );
    let variant = master.lines().find(|l| !l.starts_with('#')).unwrap();
    let media_url = server.url(&format!("/vod/{fixture}/{variant}"));
    let base = media_url.rsplit_once('/').unwrap().0.to_owned();
    let media = fetch_text(server, &format!("/vod/{fixture}/{variant}")).await;
    let mut playlist = String::new();
    let (mut last, mut last_extinf) = (String::new(), String::new());
    for line in media.lines().filter(|l| *l != "#EXT-X-ENDLIST") {
        let line = line.replace("URI=\"hls.key\"", &format!("URI=\"{base}/hls.key\""));
        if line.starts_with("#EXTINF:") {
            last_extinf = line.clone();
        }
        if !line.starts_with('#') {
            last = format!("{base}/{line}");
            playlist.push_str(&last);
        } else {
            playlist.push_str(&line);
        }
        playlist.push('\n');
    }
    playlist.push_str(&format!(
        "#EXT-X-DISCONTINUITY\n{last_extinf}\n{last}\n#EXT-X-ENDLIST\n"
    ));
    let file = dir.join(format!("{}.m3u8", fixture.replace('/', "-")));
    std::fs::write(&file, playlist).unwrap();
    file
}

/// The audio PCM (stereo s16) ffmpeg decodes from the local playlist `file`, its last
/// segment's once more at the end.
async fn first_pass_pcm(file: &Path) -> Vec<[i16; 2]> {
    let out = run_tool(
        "ffmpeg",
        args(&[
            "-v",
            "error",
            "-nostdin",
            "-protocol_whitelist",
            "file,http,tcp,crypto",
            "-i",
            &file.to_string_lossy(),
            "-map",
            "0:a",
            "-f",
            "s16le",
            "-ac",
            "2",
            "-",
        ]),
    )
    .await;
    out.chunks_exact(4)
        .map(|b| {
            [
                i16::from_le_bytes([b[0], b[1]]),
                i16::from_le_bytes([b[2], b[3]]),
            ]
        })
        .collect()
}

/// The first `count` frames of stream `selector` ffmpeg decodes from the local playlist
/// `file` (its last segment repeated: the frames must run past `count`).
async fn first_pass_frames(file: &Path, selector: &str, count: usize) -> Vec<Frame> {
    let mut frames = parse_framemd5(&String::from_utf8_lossy(
        &run_tool(
            "ffmpeg",
            args(&[
                "-v",
                "error",
                "-nostdin",
                "-protocol_whitelist",
                "file,http,tcp,crypto",
                "-i",
                &file.to_string_lossy(),
                "-map",
                &format!("0:{selector}"),
                "-vsync",
                "passthrough",
                "-f",
                "framemd5",
                "-",
            ]),
        )
        .await,
    ));
    assert!(
        frames.len() > count,
        "{}: the repeat decoded ({} frames of {selector})",
        file.display(),
        frames.len()
    );
    frames.truncate(count);
    frames
}

/// `data` decrypted with AES-128-CBC (RustCrypto's block cipher, chained here) with `key`
/// and the hex `iv`, its PKCS#7 padding checked and removed.
fn cbc_decrypt(data: &[u8], key: &[u8], iv: &str) -> Vec<u8> {
    use aes::cipher::{BlockCipherDecrypt, KeyInit};
    assert_eq!(data.len() % 16, 0, "whole blocks");
    let aes = aes::Aes128::new_from_slice(key).unwrap();
    let mut chain: [u8; 16] = (0..16)
        .map(|k| u8::from_str_radix(&iv[2 * k..2 * k + 2], 16).unwrap())
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    let mut out = Vec::with_capacity(data.len());
    for block in data.chunks_exact(16) {
        let cipher: [u8; 16] = block.try_into().unwrap();
        let mut b = aes::Block::from(cipher);
        aes.decrypt_block(&mut b);
        let plain: [u8; 16] = b.into();
        out.extend(plain.iter().zip(chain).map(|(p, c)| p ^ c));
        chain = cipher;
    }
    let pad = *out.last().unwrap() as usize;
    assert!((1..=16).contains(&pad), "PKCS#7 padding");
    assert!(out[out.len() - pad..].iter().all(|b| *b as usize == pad));
    out.truncate(out.len() - pad);
    out
}

/// Given HLS encrypted with AES-128, when ffmpeg reads the multivariant playlist (and
/// fetches the key from the `EXT-X-KEY` URI), then video and audio decode to the same
/// frames as the clear HLS output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aes_128_hls_decodes_to_the_clear_frames() {
    let Some(clear) = start().await else { return };
    let server = start_encrypted("hls=aes-128").await;
    for fixture in ["h264-aac-3s.mp4", "hevc-aac-3s.mp4"] {
        let master = fetch_text(&server, &format!("/vod/{fixture}/master.m3u8")).await;
        assert!(
            master.contains("#EXT-X-SESSION-KEY:METHOD=AES-128"),
            "{master}"
        );
        for selector in ["v", "a"] {
            let got = frame_hashes(
                &server.url(&format!("/vod/{fixture}/master.m3u8")),
                selector,
            )
            .await;
            let want =
                frame_hashes(&clear.url(&format!("/vod/{fixture}/master.m3u8")), selector).await;
            assert!(!want.is_empty());
            let hashes = |f: &[Frame]| f.iter().map(|f| f.hash.clone()).collect::<Vec<_>>();
            assert_eq!(hashes(&got), hashes(&want), "{fixture} {selector}");
        }
    }
    server.shutdown().await;
    clear.shutdown().await;
}
