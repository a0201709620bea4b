//! The nginx-vod locations against nginx-vod-module with its defaults (10 s windows, key
//! frames not aligned to them, `estimate` durations), as recorded from a running module
//! into `fixtures/peer-nginx-vod` by `tools/record_peer_nginx_vod.sh` (that script says
//! how the peer was configured; `PEER` names its version and date).
//!
//! - Segment lists: with vodpack's defaults (no segment setting at all), each media
//!   playlist the peer lists under `hls` and `hlsts` (`index-v1-a1`, `index-v1`,
//!   `index-a1`) is vodpack's too: the same count, the same `#EXTINF`s to the millisecond,
//!   the same segment and init names; every segment is served, the next number is 404; and
//!   for DASH, each Representation's SegmentTimeline in the peer's MPD has as many
//!   fragments, of the durations vodpack's same track states, every one served.
//! - Every segment decodes alone (vodpack cuts on key frames, where the module with
//!   `vod_align_segments_to_key_frames off` would start segments mid-GOP): each video
//!   segment's first frame is a key frame, and the segments joined are the source's frames.
//! - Keys: with the nginx-vod key mode, vodpack's `encryption.key` is the peer's, byte for
//!   byte, and the peer's recorded AES-128 segment and vodpack's AES-128 TS decrypt (ffmpeg)
//!   to the source's frames.

use std::path::{Path, PathBuf};

use super::common::{self, TempDir, TestServer};
use super::http::*;
use super::tools::*;
use vodpack::config::Settings;

/// The recorded files, and whether each has audio (the tiny one is kept for its segment).
const FILES: &[(&str, bool)] = &[
    ("h264-aac-3s.mp4", true),
    ("h264-3s-video-only.mp4", false),
    ("h264-bframes-editlist-aac.mp4", true),
    ("nv-gop3s-23s.mp4", true),
    ("nv-sparse-keys-32s.mp4", true),
    ("nv-tiny-2s.mp4", true),
];

/// The goldens' folder.
fn goldens() -> PathBuf {
    common::fixtures().join("peer-nginx-vod")
}

/// A file of the goldens, read.
fn golden(path: &str) -> Vec<u8> {
    let at = goldens().join(path);
    std::fs::read(&at).unwrap_or_else(|e| panic!("{}: {e}", at.display()))
}

/// Where a recorded file's media is in the repository.
fn source_of(file: &str) -> PathBuf {
    let top = common::fixtures().join(file);
    match top.exists() {
        true => top,
        false => common::fixtures().join("nginx-vod").join(file),
    }
}

/// A folder holding the recorded files flat, as the peer served them.
fn media_dir() -> TempDir {
    let dir = TempDir::new("peer-goldens");
    for (file, _) in FILES {
        std::fs::copy(source_of(file), dir.path().join(file)).expect("copy a fixture");
    }
    dir
}

/// A server over `dir` with the three locations and every other setting at its default:
/// the module's defaults are vodpack's under the locations.
async fn start_defaults(dir: &Path, settings: Settings) -> TestServer {
    let settings = Settings {
        nginx_vod_locations: "hls=/hls/,hlsts=/hlsts/,dash=/dash/".parse().unwrap(),
        ..settings
    };
    common::start_server_with(dir, settings).await
}

/// The last path segment of a playlist URI (the peer writes absolute URLs).
fn name_of(uri: &str) -> &str {
    uri.rsplit('/').next().unwrap_or(uri)
}

/// Each `#EXTINF`, to the millisecond as the module prints it.
fn millis(playlist: &MediaPlaylist) -> Vec<String> {
    playlist.extinfs.iter().map(|s| format!("{s:.3}")).collect()
}

/// The playlists recorded for a file (location, name).
fn playlists(audio: bool) -> Vec<(&'static str, &'static str)> {
    let mut list = vec![("hls", "index-v1.m3u8"), ("hlsts", "index-v1.m3u8")];
    if audio {
        list.extend([
            ("hls", "index-v1-a1.m3u8"),
            ("hls", "index-a1.m3u8"),
            ("hlsts", "index-v1-a1.m3u8"),
        ]);
    }
    list
}

/// Each Representation id of an MPD with the durations of its SegmentTimeline
/// (milliseconds: the module's timescale is 1000), `S@r` expanded.
fn mpd_timelines(mpd: &str) -> Vec<(String, Vec<u64>)> {
    let mut out = Vec::new();
    for set in mpd.split("<AdaptationSet").skip(1) {
        let mut durations = Vec::new();
        for s in set.split("<S ").skip(1) {
            let tag = &s[..s.find("/>").unwrap_or(s.len())];
            let number = |name: &str| -> Option<u64> {
                let at = tag.find(&format!("{name}=\""))? + name.len() + 2;
                tag[at..].split('"').next()?.parse().ok()
            };
            let d = number("d").expect("S@d");
            for _ in 0..=number("r").unwrap_or(0) {
                durations.push(d);
            }
        }
        for rep in set.split("<Representation").skip(1) {
            let at = rep.find("id=\"").expect("Representation@id") + 4;
            let id = rep[at..].split('"').next().unwrap_or_default().to_owned();
            out.push((id, durations.clone()));
        }
    }
    out
}

/// Given the recorded files served with vodpack's defaults, when each playlist the peer
/// recorded is asked of vodpack, then both list the same segments (count, durations to
/// the millisecond, names), every one is served and the next is 404; DASH fragments are
/// numbered as the peer's MPD numbers them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_locations_list_the_peer_s_segments_with_its_defaults() {
    let dir = media_dir();
    let server = start_defaults(dir.path(), Settings::default()).await;
    for (file, audio) in FILES {
        for (location, name) in playlists(*audio) {
            let path = format!("/{location}/{file}/{name}");
            let peer_text = String::from_utf8(golden(&format!("{file}/{location}/{name}")))
                .expect("a text playlist");
            let peer = MediaPlaylist::parse(&peer_text);
            let ours_text = fetch_text(&server, &path).await;
            let ours = MediaPlaylist::parse(&ours_text);
            assert_eq!(millis(&ours), millis(&peer), "{path}:\n{ours_text}");
            let names = |p: &MediaPlaylist| -> Vec<String> {
                p.segments.iter().map(|s| name_of(s).to_owned()).collect()
            };
            assert_eq!(names(&ours), names(&peer), "{path}");
            assert_eq!(
                ours.map_uri.as_deref().map(name_of),
                peer.map_uri.as_deref().map(name_of),
                "{path}"
            );
            let base = format!("/{location}/{file}/");
            for segment in &names(&peer) {
                fetch_ok(&server, &format!("{base}{segment}")).await;
            }
            let last = peer.segments.len();
            let next = names(&peer).last().expect("a segment").replacen(
                &format!("seg-{last}-"),
                &format!("seg-{}-", last + 1),
                1,
            );
            let reply = common::get(server.addr, &format!("{base}{next}")).await;
            assert_eq!(reply.status, 404, "{base}{next}");
        }
        // DASH: the peer's MPD numbers each Representation's fragments from 1; vodpack
        // serves that many, each of the track's stated duration, and not one more.
        let mpd = String::from_utf8(golden(&format!("{file}/dash/manifest.mpd"))).unwrap();
        let timelines = mpd_timelines(&mpd);
        assert!(!timelines.is_empty(), "{file}: {mpd}");
        for (id, durations) in timelines {
            let track = id.trim_end_matches("-x3");
            let stated = fetch_text(&server, &format!("/hls/{file}/index-{track}.m3u8")).await;
            let stated: Vec<u64> = (MediaPlaylist::parse(&stated).extinfs.iter())
                .map(|s| (s * 1000.0).round() as u64)
                .collect();
            assert_eq!(stated, durations, "{file} {id}");
            let base = format!("/dash/{file}/");
            for n in 1..=durations.len() {
                fetch_ok(&server, &format!("{base}fragment-{n}-{id}.m4s")).await;
            }
            let past = format!("{base}fragment-{}-{id}.m4s", durations.len() + 1);
            assert_eq!(common::get(server.addr, &past).await.status, 404, "{past}");
        }
    }
    server.shutdown().await;
}

/// The video frames ffmpeg decodes from `input`: one MD5 per frame, in order.
async fn video_frames(input: &str, extra: &[&str]) -> Vec<String> {
    let mut command = args(&["-v", "error", "-nostdin"]);
    command.extend(args(extra));
    command.extend(args(&[
        "-i",
        input,
        "-map",
        "0:v:0",
        "-vsync",
        "passthrough",
    ]));
    command.extend(args(&["-f", "framemd5", "-"]));
    let text = String::from_utf8_lossy(&run_tool("ffmpeg", command).await).into_owned();
    (text.lines())
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit(',').next().map(|h| h.trim().to_owned()))
        .collect()
}

/// Whether ffprobe reads the first video packet of `input` as a key frame (true for an
/// input without video packets: an empty window's segment).
async fn starts_on_a_key_frame(input: &str) -> bool {
    let out = ffprobe_show(input, Some("v:0"), "packet=flags", "csv=p=0").await;
    let text = String::from_utf8_lossy(&out).into_owned();
    text.lines().next().is_none_or(|flags| flags.contains('K'))
}

/// Given the files whose key frames miss the 10 s windows, when their nginx-vod video
/// segments (fMP4 with the init segment, and MPEG-TS) are read one by one, then each
/// starts on a key frame (it decodes alone), and joined they decode to the source's frames.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_segment_decodes_alone_and_together_they_are_the_source() {
    if !tools_available().await {
        return;
    }
    let dir = media_dir();
    let server = start_defaults(dir.path(), Settings::default()).await;
    let scratch = TempDir::new("peer-goldens-decode");
    for file in ["nv-gop3s-23s.mp4", "nv-sparse-keys-32s.mp4"] {
        let source = video_frames(&source_of(file).to_string_lossy(), &[]).await;
        for (location, extension) in [("hls", "mp4"), ("hlsts", "ts")] {
            let base = format!("/{location}/{file}/");
            let text = fetch_text(&server, &format!("{base}index-v1.m3u8")).await;
            let playlist = MediaPlaylist::parse(&text);
            let init = match &playlist.map_uri {
                Some(uri) => {
                    fetch_ok(&server, &format!("{base}{}", name_of(uri)))
                        .await
                        .body
                }
                None => Vec::new(),
            };
            let mut joined = init.clone();
            for (n, uri) in playlist.segments.iter().enumerate() {
                let body = fetch_ok(&server, &format!("{base}{}", name_of(uri)))
                    .await
                    .body;
                let alone = scratch.path().join(format!("{location}-{n}.{extension}"));
                std::fs::write(&alone, [init.as_slice(), &body].concat()).unwrap();
                assert!(
                    starts_on_a_key_frame(&alone.to_string_lossy()).await,
                    "{base}{uri} does not start on a key frame"
                );
                joined.extend(body);
            }
            let all = scratch.path().join(format!("{location}-all.{extension}"));
            std::fs::write(&all, &joined).unwrap();
            let decoded = video_frames(&all.to_string_lossy(), &[]).await;
            assert_eq!(decoded, source, "{base}: the segments joined");
        }
    }
    server.shutdown().await;
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Given the nginx-vod key mode with the peer's `vod_secret_key` and its encrypted
/// location (`hlsts=/hlsenc/` with `--encryption hls=aes-128`, as the peer's
/// `vod_hls_encryption_method aes-128` there), when each recorded file's AES-128 playlist
/// and `encryption.key` are asked of vodpack, then the key is the peer's byte for byte (and
/// `/vod/`'s `hls.key` too), the playlist lists the peer's segments; and the peer's
/// recorded segment (IV: its media sequence number, as the module writes no IV) and
/// vodpack's whole AES-128 stream decrypt, with ffmpeg, to the source's frames.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_mode_gives_the_peer_s_keys_and_both_outputs_decrypt_alike() {
    use vodpack::crypto::nginx_vod_keys::NginxVodKeys;
    use vodpack::crypto::EncryptionPolicy;
    let dir = media_dir();
    let mut settings = Settings {
        nginx_vod_locations: "hlsts=/hlsenc/".parse().unwrap(),
        ..Settings::default()
    };
    settings.protect.encryption = EncryptionPolicy::parse("hls=aes-128").unwrap();
    settings.protect.nginx_vod_keys =
        Some(NginxVodKeys::new("secret-$vod_filepath", "/hlsenc/").unwrap());
    let server = common::start_server_with(dir.path(), settings).await;
    let files = ["h264-aac-3s.mp4", "nv-gop3s-23s.mp4", "nv-tiny-2s.mp4"];
    for file in files {
        let peer_key = golden(&format!("{file}/hlsenc/encryption.key"));
        assert_eq!(peer_key.len(), 16, "{file}");
        let base = format!("/hlsenc/{file}/");
        let ours = fetch_ok(&server, &format!("{base}encryption.key"))
            .await
            .body;
        assert_eq!(
            hex(&ours),
            hex(&peer_key),
            "{file}: vodpack's key is the peer's"
        );
        // The same key under vodpack's own URLs.
        let master = fetch_text(&server, &format!("/vod/{file}/master-ts.m3u8")).await;
        let variant = (master.lines())
            .find(|l| !l.starts_with('#') && !l.is_empty())
            .expect("a variant")
            .to_owned();
        let playlist = format!("/vod/{file}/{variant}");
        let folder = &playlist[..playlist.rfind('/').unwrap() + 1];
        let native = fetch_ok(&server, &format!("{folder}hls.key")).await.body;
        assert_eq!(hex(&native), hex(&peer_key), "{file}: /vod/ hls.key");
        // The encrypted playlist lists the peer's segments, each keyed.
        let peer_text =
            String::from_utf8(golden(&format!("{file}/hlsenc/index-v1-a1.m3u8"))).unwrap();
        let peer = MediaPlaylist::parse(&peer_text);
        let text = fetch_text(&server, &format!("{base}index-v1-a1.m3u8")).await;
        let ours = MediaPlaylist::parse(&text);
        assert_eq!(millis(&ours), millis(&peer), "{base}: {text}");
        let names = |p: &MediaPlaylist| -> Vec<String> {
            p.segments.iter().map(|s| name_of(s).to_owned()).collect()
        };
        assert_eq!(names(&ours), names(&peer), "{base}");
        let keyed = (text.lines())
            .filter(|l| l.starts_with("#EXT-X-KEY:METHOD=AES-128,URI=\"encryption.key\",IV=0x"))
            .count();
        assert_eq!(keyed, ours.segments.len(), "{text}");
        // Names without a version folder: never cached as immutable, as the clear ones.
        for segment in &names(&ours) {
            let reply = fetch_ok(&server, &format!("{base}{segment}")).await;
            assert_eq!(
                reply.header("cache-control"),
                Some("public, max-age=60"),
                "{base}{segment}"
            );
        }
        let key_reply = fetch_ok(&server, &format!("{base}encryption.key")).await;
        assert_eq!(key_reply.header("cache-control"), Some("no-store, private"));
    }
    if !tools_available().await {
        server.shutdown().await;
        return;
    }
    let file = "nv-tiny-2s.mp4";
    let source = video_frames(&source_of(file).to_string_lossy(), &[]).await;
    let key = hex(&golden(&format!("{file}/hlsenc/encryption.key")));
    let peer_playlist = String::from_utf8(golden(&format!("{file}/hlsenc/index-v1-a1.m3u8")))
        .expect("a text playlist");
    assert!(
        peer_playlist.contains("METHOD=AES-128") && !peer_playlist.contains("IV="),
        "{peer_playlist}"
    );
    let segment = goldens().join(file).join("hlsenc/seg-1-v1-a1.ts");
    let iv = format!("{:032x}", 1);
    let crypto = format!("crypto:{}", segment.display());
    let peer = video_frames(&crypto, &["-key", &key, "-iv", &iv]).await;
    assert_eq!(
        peer, source,
        "the peer's segment decrypted with its recorded key"
    );
    // vodpack's, through its playlist and key, also where a window holds no key frame (an
    // encrypted PAT and PMT) and where the GOP does not divide 10 s.
    for file in [
        "nv-tiny-2s.mp4",
        "nv-gop3s-23s.mp4",
        "nv-sparse-keys-32s.mp4",
    ] {
        let source = video_frames(&source_of(file).to_string_lossy(), &[]).await;
        let playlist = server.url(&format!("/hlsenc/{file}/index-v1-a1.m3u8"));
        let ours = video_frames(&playlist, &[]).await;
        assert_eq!(
            ours, source,
            "{file}: vodpack's AES-128 TS under the location"
        );
    }
    server.shutdown().await;
}
