//! nginx-vod-module's numbering under the nginx-vod locations: for files ffmpeg
//! makes here, the muxed, video and audio playlists list the segments nginx-vod-module
//! lists (count, and the durations it states: 6 s each, the last what remains of the
//! longest track), every one is served, and each holds what the module's window holds.
//!
//! The expected lines were read from the peer (nginx-vod-module 1.33-13-g26f0687, built
//! and configured by /work/shared/peer: `vod_segment_duration 6000`,
//! `vod_align_segments_to_key_frames on`, the default `vod_segment_count_policy
//! last_short` and `vod_manifest_segment_durations_mode estimate`) on these same ffmpeg
//! 5.1 commands, 2026-12-03. For example `curl /hls/t-aac-tail.mp4/index-v1-a1.m3u8`:
//!
//!     #EXTINF:6.000,
//!     http://127.0.0.1:8081/hls/t-aac-tail.mp4/seg-1-v1-a1.m4s
//!     #EXTINF:6.000,
//!     http://127.0.0.1:8081/hls/t-aac-tail.mp4/seg-2-v1-a1.m4s
//!     #EXTINF:0.021,
//!     http://127.0.0.1:8081/hls/t-aac-tail.mp4/seg-3-v1-a1.m4s
//!
//! and its `index-v1.m3u8` two `#EXTINF:6.000,` lines: the AAC's `mdhd` (12.021 s, its
//! 1024 priming samples included) outlasts the video's (12.000 s) past 12 s. The peer's
//! muxed `seg-3-v1-a1.m4s` holds no sample (a `moof` of two `traf`s without `trun`), its
//! audio tail riding in `seg-2-v1-a1.m4s`; its `seg-3-a1.m4s` holds the last AAC frame,
//! which its clock (no edit list applied) puts at 12.016 s and the file's edit list at
//! 11.995 s: vodpack times it by the edit list, so its `seg-3-a1.m4s` is empty, and where
//! audio really outlasts the video (`t-audio-longer`) the last segment holds it.

use super::common::{self, TempDir, TestServer};
use super::http::*;
use super::tools::*;

/// The media: name and the ffmpeg arguments after the inputs' `-f lavfi -i` pairs.
/// 320x180 H.264 (veryfast, 2 B-frames) and AAC, as `ffmpeg` encodes by default.
const MEDIA: &[(&str, &[&str])] = &[
    // The AAC's priming puts its `mdhd` 21 ms past the video's.
    (
        "t-aac-tail",
        &[
            "testsrc2=size=320x180:rate=25",
            "sine=frequency=440:sample_rate=48000",
            "-t",
            "12",
            "-g",
            "50",
        ],
    ),
    // Audio cut half a second before the video ends.
    (
        "t-video-longer",
        &[
            "testsrc2=size=320x180:rate=25",
            "sine=frequency=440:sample_rate=48000",
            "-t",
            "12",
            "-g",
            "50",
            "-af",
            "atrim=end=11.5",
        ],
    ),
    // 30000/1001 fps (key frames every 2.002 s) and 44.1 kHz audio.
    (
        "t-ntsc-44k",
        &[
            "testsrc2=size=320x180:rate=30000/1001",
            "sine=frequency=440:sample_rate=44100",
            "-t",
            "12",
            "-g",
            "60",
        ],
    ),
    // 14 s of audio under 12 s of video.
    (
        "t-audio-longer",
        &[
            "testsrc2=size=320x180:rate=25:duration=12",
            "sine=frequency=440:sample_rate=48000:duration=14",
            "-g",
            "50",
        ],
    ),
    // A key frame every 10 s: windows 12-18 s and 18-20 s start none.
    (
        "t-gop10",
        &[
            "testsrc2=size=320x180:rate=25",
            "sine=frequency=440:sample_rate=48000",
            "-t",
            "20",
            "-g",
            "250",
            "-keyint_min",
            "250",
            "-sc_threshold",
            "0",
        ],
    ),
];

/// The peer's EXTINF lines, per file: `index-v1-a1.m3u8`, `index-v1.m3u8`,
/// `index-a1.m3u8`, the same under `hls` (fMP4) and `hlsts` (MPEG-TS).
const PEER_PLAYLISTS: &[(&str, [&[&str]; 3])] = &[
    (
        "t-aac-tail",
        [
            &["6.000", "6.000", "0.021"],
            &["6.000", "6.000"],
            &["6.000", "6.000", "0.021"],
        ],
    ),
    (
        "t-video-longer",
        [
            &["6.000", "6.000"],
            &["6.000", "6.000"],
            &["6.000", "5.521"],
        ],
    ),
    (
        "t-ntsc-44k",
        [
            &["6.000", "6.000", "0.023"],
            &["6.000", "6.000", "0.012"],
            &["6.000", "6.000", "0.023"],
        ],
    ),
    (
        "t-audio-longer",
        [
            &["6.000", "6.000", "2.021"],
            &["6.000", "6.000"],
            &["6.000", "6.000", "2.021"],
        ],
    ),
    (
        "t-gop10",
        [
            &["6.000", "6.000", "6.000", "2.021"],
            &["6.000", "6.000", "6.000", "2.000"],
            &["6.000", "6.000", "6.000", "2.021"],
        ],
    ),
];

/// Make the files of `MEDIA` named in `names` in `dir`.
async fn make_media(dir: &TempDir, names: &[&str]) {
    for (name, extra) in MEDIA.iter().filter(|(n, _)| names.contains(n)) {
        let (inputs, rest) = extra.split_at(2);
        let mut command = args(&["-v", "error", "-nostdin", "-y"]);
        for input in inputs {
            command.extend(args(&["-f", "lavfi", "-i", input]));
        }
        command.extend(rest.iter().map(|a| a.to_string()));
        command.extend(args(&[
            "-c:v", "libx264", "-preset", "veryfast", "-bf", "2",
        ]));
        command.extend(args(&["-c:a", "aac"]));
        let out = dir.path().join(format!("{name}.mp4"));
        command.push(out.to_string_lossy().into_owned());
        run_tool("ffmpeg", command).await;
    }
}

/// A server over `dir` with the peer's 6 s segments and the three nginx-vod locations.
async fn start_over(dir: &TempDir) -> TestServer {
    let settings = common::nginx_vod_settings(6000, "hls=/hls/,hlsts=/hlsts/,dash=/dash/");
    common::start_server_with(dir.path(), settings).await
}

/// Each `#EXTINF` of `text` to the millisecond, as the module prints it.
fn extinfs(text: &str) -> Vec<String> {
    (MediaPlaylist::parse(text).extinfs.iter())
        .map(|s| format!("{s:.3}"))
        .collect()
}

/// Given the five files, when their nginx-vod playlists are asked for under `hls` and
/// `hlsts`, then each lists the peer's segments: `seg-N-TOKENS.m4s` (with `init-TOKENS.mp4`)
/// or `.ts`, N from 1, with the peer's durations; every one is served; and the DASH
/// fragments the peer serves (`fragment-N-v1-x3.m4s`, `fragment-N-a1-x3.m4s`) are served,
/// the next one not; a clip lists the peer's segments too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_vod_playlists_list_the_peer_segments() {
    if !tools_available().await {
        return;
    }
    let dir = TempDir::new("nginx-numbering");
    let names: Vec<&str> = MEDIA.iter().map(|(n, _)| *n).collect();
    make_media(&dir, &names).await;
    let server = start_over(&dir).await;
    for (file, playlists) in PEER_PLAYLISTS {
        for (location, extension) in [("hls", "m4s"), ("hlsts", "ts")] {
            for (tokens, want) in ["v1-a1", "v1", "a1"].iter().zip(playlists) {
                let base = format!("/{location}/{file}.mp4/");
                let text = fetch_text(&server, &format!("{base}index-{tokens}.m3u8")).await;
                let what = format!("{base}index-{tokens}.m3u8");
                assert_eq!(extinfs(&text), *want, "{what}: {text}");
                let playlist = MediaPlaylist::parse(&text);
                let names: Vec<String> = (1..=want.len())
                    .map(|n| format!("seg-{n}-{tokens}.{extension}"))
                    .collect();
                assert_eq!(playlist.segments, names, "{what}");
                let map = (location == "hls").then(|| format!("init-{tokens}.mp4"));
                assert_eq!(playlist.map_uri, map, "{what}");
                for uri in map.iter().chain(&playlist.segments) {
                    fetch_ok(&server, &format!("{base}{uri}")).await;
                }
                let past = format!("{base}seg-{}-{tokens}.{extension}", want.len() + 1);
                assert_eq!(common::get(server.addr, &past).await.status, 404, "{past}");
            }
        }
        for (tokens, want) in [("v1", playlists[1]), ("a1", playlists[2])] {
            let base = format!("/dash/{file}.mp4/");
            for n in 1..=want.len() {
                fetch_ok(&server, &format!("{base}fragment-{n}-{tokens}-x3.m4s")).await;
            }
            let past = format!("{base}fragment-{}-{tokens}-x3.m4s", want.len() + 1);
            assert_eq!(common::get(server.addr, &past).await.status, 404, "{past}");
        }
    }
    // A clip counts as the module counts it: each track `min(D, clipTo) - clipFrom`. The
    // peer's `/hls/t-aac-tail.mp4/clipFrom/3000/index-v1-a1.m3u8` states `6.000, 3.021`,
    // its `index-v1.m3u8` `6.000, 3.000`.
    for (tokens, want) in [
        ("v1-a1", ["6.000", "3.021"]),
        ("v1", ["6.000", "3.000"]),
        ("a1", ["6.000", "3.021"]),
    ] {
        let base = "/hls/t-aac-tail.mp4/clipFrom/3000/";
        let text = fetch_text(&server, &format!("{base}index-{tokens}.m3u8")).await;
        assert_eq!(extinfs(&text), want, "clipFrom/3000 {tokens}");
        for uri in MediaPlaylist::parse(&text).segments {
            fetch_ok(&server, &format!("{base}{uri}")).await;
        }
    }
    server.shutdown().await;
}

/// MD5 of each presented packet of `selector` in `input`, in decode order.
async fn hashes(input: &str, selector: &str) -> Vec<String> {
    (packets(input, selector).await.into_iter())
        .map(|p| p.hash)
        .collect()
}

/// The bytes of `init` and then `segments` (of `base` on `server`), written to `path`.
async fn joined(server: &TestServer, base: &str, parts: &[String], path: &std::path::Path) {
    let mut bytes = Vec::new();
    for part in parts {
        bytes.extend(fetch_ok(server, &format!("{base}{part}")).await.body);
    }
    std::fs::write(path, bytes).unwrap();
}

/// Whether fMP4 `segment` holds no sample: its `mdat` is a bare header.
fn holds_no_sample(segment: &[u8]) -> bool {
    let at = segment.windows(4).position(|w| w == b"mdat");
    at.and_then(|at| segment.get(at - 4..at))
        .is_some_and(|size| size == [0, 0, 0, 8])
}

/// Given AAC that outlasts the video by 2 s, when the audio alone is asked for, then its
/// short last segment (`seg-3-a1.m4s`, 12-14 s) holds exactly the source's audio presented
/// from 12 s on, and the segments together every audio packet of the source (after the
/// priming frame, which vodpack sends before the presentation start); muxed, the tail
/// rides with the last video (`seg-2-v1-a1.m4s`) and `seg-3-v1-a1.m4s` is empty, as the
/// module's is; the audio alone as MPEG-TS decodes to the source's audio frames. Given the default encode, whose edit list ends the AAC with the video, the
/// short last segments hold nothing, muxed or alone. Given a key frame every 10 s, the
/// windows without one are empty segments: fMP4 without a sample, MPEG-TS of PAT and PMT.
/// Through every name, the video decodes to the source's frames.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_segment_holds_what_its_window_holds() {
    if !tools_available().await {
        return;
    }
    let dir = TempDir::new("nginx-windows");
    make_media(&dir, &["t-aac-tail", "t-audio-longer", "t-gop10"]).await;
    let server = start_over(&dir).await;
    let source = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let file = |name: &str| dir.path().join(name);

    // Audio that outlasts the video.
    let base = "/hls/t-audio-longer.mp4/";
    let src = source("t-audio-longer.mp4");
    let presented = packets(&src, "a:0").await;
    let tail: Vec<String> = (presented.iter())
        .filter(|p| p.pts >= 12.0)
        .map(|p| p.hash.clone())
        .collect();
    assert!(tail.len() > 90, "vacuous: {} packets from 12 s", tail.len());
    let last = file("last-a1.mp4");
    joined(
        &server,
        base,
        &["init-a1.mp4".into(), "seg-3-a1.m4s".into()],
        &last,
    )
    .await;
    assert_eq!(hashes(&last.to_string_lossy(), "a:0").await, tail);
    let all: Vec<String> = presented.iter().map(|p| p.hash.clone()).collect();
    let names = |tokens: &str, n: usize| -> Vec<String> {
        std::iter::once(format!("init-{tokens}.mp4"))
            .chain((1..=n).map(|k| format!("seg-{k}-{tokens}.m4s")))
            .collect()
    };
    let alone = file("all-a1.mp4");
    joined(&server, base, &names("a1", 3), &alone).await;
    let got = hashes(&alone.to_string_lossy(), "a:0").await;
    assert!(
        got.ends_with(&all) && got.len() <= all.len() + 1,
        "a1: {} packets, source {}",
        got.len(),
        all.len()
    );
    let muxed_last = fetch_ok(&server, &format!("{base}seg-3-v1-a1.m4s")).await;
    assert!(
        holds_no_sample(&muxed_last.body),
        "muxed seg-3 holds samples"
    );
    let muxed = file("all-v1-a1.mp4");
    joined(&server, base, &names("v1-a1", 2), &muxed).await;
    let got = hashes(&muxed.to_string_lossy(), "a:0").await;
    assert!(
        got.ends_with(&all) && got.len() <= all.len() + 1,
        "muxed audio"
    );
    assert_eq!(
        hashes(&muxed.to_string_lossy(), "v:0").await,
        hashes(&src, "v:0").await,
        "muxed video"
    );

    // The same audio alone as MPEG-TS (`/hlsts/.../index-a1.m3u8`, which vodpack's own TS
    // output lists nowhere: its main audio rides with the video): every audio frame of the
    // source after the first decodes equal, in order.
    let want: Vec<String> = (frame_hashes(&src, "a:0").await.into_iter())
        .map(|f| f.hash)
        .collect();
    let url = server.url("/hlsts/t-audio-longer.mp4/index-a1.m3u8");
    let got: Vec<String> = (frame_hashes(&url, "a:0").await.into_iter())
        .map(|f| f.hash)
        .collect();
    let after_first = want.get(1..).unwrap_or_default();
    assert!(
        after_first.len() > 600,
        "vacuous: {} audio frames",
        want.len()
    );
    assert!(
        got.windows(after_first.len()).any(|w| w == after_first),
        "hlsts a1: {} frames decoded, source {}",
        got.len(),
        want.len()
    );

    // The default encode: the edit list ends the AAC at 12.000 s, with the video.
    let base = "/hls/t-aac-tail.mp4/";
    for name in ["seg-3-a1.m4s", "seg-3-v1-a1.m4s"] {
        let segment = fetch_ok(&server, &format!("{base}{name}")).await;
        assert!(holds_no_sample(&segment.body), "{name} holds samples");
    }
    let all = hashes(&source("t-aac-tail.mp4"), "a:0").await;
    let alone = file("tail-a1.mp4");
    joined(&server, base, &names("a1", 2), &alone).await;
    let got = hashes(&alone.to_string_lossy(), "a:0").await;
    assert!(got.ends_with(&all) && got.len() <= all.len() + 1, "a1 of 2");

    // Key frames every 10 s: windows 3 and 4 start none.
    let base = "/hls/t-gop10.mp4/";
    for name in ["seg-3-v1.m4s", "seg-4-v1.m4s", "seg-3-v1-a1.m4s"] {
        let segment = fetch_ok(&server, &format!("{base}{name}")).await;
        assert!(holds_no_sample(&segment.body), "{name} holds samples");
    }
    for name in ["seg-3-v1-a1.ts", "seg-4-v1-a1.ts"] {
        let segment = fetch_ok(&server, &format!("/hlsts/t-gop10.mp4/{name}")).await;
        let pids: Vec<u16> = (segment.body.chunks(188))
            .map(|p| u16::from_be_bytes([p[1] & 0x1F, p[2]]))
            .collect();
        assert_eq!(pids, [0x0000, 0x1000], "{name}: PAT and PMT only");
    }
    let second = file("gop10-2.mp4");
    let parts = ["init-v1.mp4".to_owned(), "seg-2-v1.m4s".to_owned()];
    joined(&server, base, &parts, &second).await;
    assert_eq!(packets(&second.to_string_lossy(), "v:0").await.len(), 250);
    let want: Vec<String> = (frame_hashes(&source("t-gop10.mp4"), "v:0")
        .await
        .into_iter())
    .map(|f| f.hash)
    .collect();
    assert_eq!(want.len(), 500);
    for url in [
        server.url(&format!("{base}index-v1.m3u8")),
        server.url(&format!("{base}index-v1-a1.m3u8")),
        server.url("/hlsts/t-gop10.mp4/index-v1-a1.m3u8"),
    ] {
        let got: Vec<String> = (frame_hashes(&url, "v:0").await.into_iter())
            .map(|f| f.hash)
            .collect();
        assert!(
            got == want,
            "{url}: {} frames, source {}",
            got.len(),
            want.len()
        );
    }
    server.shutdown().await;
}
