//! nginx-vod-module URLs: with `--nginx-vod-locations` set, every fixture's
//! nginx-vod names carry the samples of vodpack's own renditions (numbered as the module
//! numbers them: `nginx_numbering.rs`), and decode to the same frames; the ladder as an
//! nginx-vod urlset decodes, rung by rung, to each file's frames.

use super::common::{self, TestServer};
use super::http::*;
use super::tools::*;
use super::FIXTURES;

/// The rungs of the ladder fixture, in the urlset's order.
const RUNGS: [&str; 3] = ["ladder-180p", "ladder-360p", "ladder-270p"];

pub(crate) fn urlset() -> String {
    format!("ladder/,{},.mp4.urlset", RUNGS.join(","))
}

/// A server over the fixtures with 1 s segments and the three nginx-vod locations.
pub(crate) async fn nginx_server() -> TestServer {
    common::start_server_with(
        &common::fixtures(),
        common::nginx_vod_settings(1000, "hls=/hls/,hlsts=/hlsts/,dash=/dash/"),
    )
    .await
}

/// [`nginx_server`] for a test that reads its output with ffmpeg and ffprobe; None (the
/// test skips, or fails under `VODPACK_REQUIRE_TOOLS=1`) when they are not here.
pub(crate) async fn start_nginx() -> Option<TestServer> {
    if !tools_available().await {
        return None;
    }
    Some(nginx_server().await)
}

/// Bytes of a 200 answer.
async fn body(server: &TestServer, path: &str) -> Vec<u8> {
    fetch_ok(server, path).await.body
}

/// The track id in a native name such as `index-t2.m3u8` or `vTOKEN/index-f1-t2.m3u8`.
fn native_label(uri: &str) -> String {
    let name = uri.rsplit('/').next().unwrap_or(uri);
    name.trim_start_matches("index-")
        .trim_end_matches(".m3u8")
        .to_owned()
}

/// The `mdat` payload of fMP4 segment `segment` (its last box).
fn mdat_payload(segment: &[u8]) -> &[u8] {
    let at = segment
        .windows(4)
        .position(|w| w == b"mdat")
        .expect("an mdat")
        + 4;
    &segment[at..]
}

/// For every fixture: nginx-vod's `init-v1.mp4` / `init-a1.mp4` and DASH `init-v1-x3.mp4`
/// are byte for byte the native init segments of the first video and first audio
/// rendition; `index-v1.m3u8` / `index-a1.m3u8` list `seg-N-v1.m4s` from N = 1 (numbered
/// as nginx-vod-module numbers them: `nginx_numbering.rs`), and those segments, and the
/// DASH fragments of the same numbers, carry one after the other exactly the samples of
/// the native rendition: their `mdat` payloads joined are the native segments' joined.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_vod_names_carry_the_samples_of_the_native_renditions() {
    let server = nginx_server().await;
    for &fixture in FIXTURES {
        let master = body(&server, &format!("/vod/{fixture}/master.m3u8")).await;
        let master = String::from_utf8_lossy(&master).into_owned();
        let folder = common::version_folder_in(&master);
        let first_variant = (master.lines())
            .skip_while(|l| !l.starts_with("#EXT-X-STREAM-INF"))
            .nth(1)
            .expect("a variant")
            .to_owned();
        let has_video = master.contains("RESOLUTION=");
        let mut pairs = Vec::new();
        if has_video {
            pairs.push(("v1", native_label(&first_variant)));
        }
        let audio = match master
            .lines()
            .find(|l| l.starts_with("#EXT-X-MEDIA:TYPE=AUDIO"))
        {
            Some(line) => quoted_attribute(line, "URI"),
            None if !has_video => Some(first_variant.clone()),
            None => None,
        };
        if let Some(audio) = audio {
            pairs.push(("a1", native_label(&audio)));
        }
        for (nginx, native) in pairs {
            let what = format!("{fixture} {nginx} (native {native})");
            let init = body(
                &server,
                &format!("/vod/{fixture}/{folder}init-{native}.mp4"),
            )
            .await;
            assert_eq!(
                body(&server, &format!("/hls/{fixture}/init-{nginx}.mp4")).await,
                init,
                "{what}: init"
            );
            assert_eq!(
                body(&server, &format!("/dash/{fixture}/init-{nginx}-x3.mp4")).await,
                init,
                "{what}: DASH init"
            );
            let native_playlist = body(
                &server,
                &format!("/vod/{fixture}/{folder}index-{native}.m3u8"),
            )
            .await;
            let native_playlist = MediaPlaylist::parse(&String::from_utf8_lossy(&native_playlist));
            let mut want = Vec::new();
            for uri in &native_playlist.segments {
                let segment = body(&server, &format!("/vod/{fixture}/{folder}{uri}")).await;
                want.extend_from_slice(mdat_payload(&segment));
            }
            assert!(!want.is_empty(), "{what}: no samples");
            let text = body(&server, &format!("/hls/{fixture}/index-{nginx}.m3u8")).await;
            let playlist = MediaPlaylist::parse(&String::from_utf8_lossy(&text));
            let names: Vec<String> = (1..=playlist.segments.len())
                .map(|n| format!("seg-{n}-{nginx}.m4s"))
                .collect();
            assert_eq!(playlist.segments, names, "{what}: names");
            assert_eq!(
                playlist.map_uri,
                Some(format!("init-{nginx}.mp4")),
                "{what}: map"
            );
            let (mut hls, mut dash) = (Vec::new(), Vec::new());
            for number in 1..=playlist.segments.len() {
                let segment =
                    body(&server, &format!("/hls/{fixture}/seg-{number}-{nginx}.m4s")).await;
                hls.extend_from_slice(mdat_payload(&segment));
                let fragment = format!("/dash/{fixture}/fragment-{number}-{nginx}-x3.m4s");
                dash.extend_from_slice(mdat_payload(&body(&server, &fragment).await));
            }
            assert!(
                hls == want,
                "{what}: the samples differ from the native ones"
            );
            assert!(
                dash == want,
                "{what}: DASH samples differ from the native ones"
            );
        }
    }
    server.shutdown().await;
}

/// For every fixture with video, the frames decoded through nginx-vod's HLS entry points
/// (`master.m3u8`, `index.m3u8`, `index-v1.m3u8`) and its DASH `manifest.mpd` are the
/// frames decoded through vodpack's own `master.m3u8`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_vod_urls_decode_to_the_native_frames() {
    let Some(server) = start_nginx().await else {
        return;
    };
    for &fixture in FIXTURES {
        let native = server.url(&format!("/vod/{fixture}/master.m3u8"));
        if probe_streams(&native).await.count("video") == 0 {
            continue;
        }
        let want = frame_hashes(&native, "v:0").await;
        assert!(want.len() >= 30, "{fixture}: vacuous");
        for path in [
            "hls/{}/master.m3u8",
            "hls/{}/index.m3u8",
            "hls/{}/index-v1.m3u8",
            "dash/{}/manifest.mpd",
        ] {
            let url = server.url(&format!("/{}", path.replace("{}", fixture)));
            let got = frame_hashes(&url, "v:0").await;
            let hashes = |f: &[Frame]| f.iter().map(|f| f.hash.clone()).collect::<Vec<_>>();
            assert!(
                hashes(&got) == hashes(&want),
                "{url}: {} frames, native {}",
                got.len(),
                want.len()
            );
        }
    }
    server.shutdown().await;
}

/// The ladder as an nginx-vod urlset: the multivariant playlist offers one variant per
/// file, and each (through our names and through nginx-vod's `index-fN-v1.m3u8`) decodes
/// to the frames of that file on its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_urlset_decodes_rung_by_rung_to_its_files() {
    let Some(server) = start_nginx().await else {
        return;
    };
    let set = urlset();
    let master = body(&server, &format!("/hls/{set}/master.m3u8")).await;
    let master = String::from_utf8_lossy(&master).into_owned();
    assert_eq!(master.matches("#EXT-X-STREAM-INF").count(), 3, "{master}");
    for (n, rung) in RUNGS.iter().enumerate() {
        let file = n + 1;
        let want = frame_hashes(
            &server.url(&format!("/vod/ladder/{rung}.mp4/master.m3u8")),
            "v:0",
        )
        .await;
        let uri = master_playlist_uris(&master)
            .into_iter()
            .find(|u| u.ends_with(&format!("index-f{file}-t1.m3u8")))
            .unwrap_or_else(|| panic!("no variant of file {file}: {master}"));
        for url in [
            server.url(&format!("/hls/{set}/{uri}")),
            server.url(&format!("/hls/{set}/index-f{file}-v1.m3u8")),
        ] {
            let got = frame_hashes(&url, "v:0").await;
            assert_eq!(got.len(), want.len(), "{url}: number of frames");
            assert!(
                got.iter().zip(&want).all(|(a, b)| a.hash == b.hash),
                "{url}: frames differ from {rung}.mp4"
            );
        }
    }
    server.shutdown().await;
}

/// What vodpack does not produce under nginx-vod's names is a 404 with the reason, and a
/// malformed nginx-vod name or parameter a 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nginx_vod_names_vodpack_does_not_produce_say_why() {
    let server = nginx_server().await;
    for (path, status, reason) in [
        (
            "/dash/h264-aac-3s.mp4/fragment-1-v1-a1-x3.m4s",
            404,
            "one track per rendition",
        ),
        (
            "/dash/h264-aac-3s.mp4/init-v1-a1-x3.mp4",
            404,
            "one track per rendition",
        ),
        (
            "/hlsts/h264-aac-2lang-3s.mp4/seg-1-v1-a2.ts",
            404,
            "main audio only",
        ),
        (
            "/hls/h264-aac-3s.mp4/iframes-a1.m3u8",
            404,
            "one video track",
        ),
        ("/hls/h264-aac-3s.mp4/seg-1-v3.m4s", 404, "no such track"),
        (
            "/hls/h264-aac-3s.mp4/seg-0-v1.m4s",
            400,
            "not an nginx-vod file name",
        ),
        (
            "/hls/h264-aac-3s.mp4/clipFrom/2000/clipTo/1000/master.m3u8",
            400,
            "not after its start",
        ),
        (
            "/hls/h264-aac-3s.mp4/clipFrom/9000/master.m3u8",
            400,
            "after the end of the title",
        ),
    ] {
        let reply = common::get(server.addr, path).await;
        assert_eq!(reply.status, status, "{path}: {}", reply.text());
        assert!(reply.text().contains(reason), "{path}: {}", reply.text());
    }
    // Under the hlsts location, nginx-vod's muxed names are vodpack's MPEG-TS output:
    // the video's TS rendition (muxed with the main audio), its segments (at nginx-vod's
    // numbers, `nginx_numbering.rs`) and I-frames.
    let playlist = fetch_ok(&server, "/hlsts/h264-aac-3s.mp4/index-v1-a1.m3u8").await;
    let playlist = MediaPlaylist::parse(&playlist.text());
    assert_eq!(
        playlist.segments.first().map(String::as_str),
        Some("seg-1-v1-a1.ts")
    );
    assert_eq!(playlist.map_uri, None);
    for (nginx, native) in [
        ("seg-1-v1-a1.ts", "seg-ts-t1-1.ts"),
        ("seg-2-v1.ts", "seg-ts-t1-2.ts"),
        ("iframes-v1.m3u8", "iframes-ts-t1.m3u8"),
    ] {
        let ours = body(&server, &format!("/hlsts/h264-aac-3s.mp4/{nginx}")).await;
        let theirs = body(&server, &format!("/vod/h264-aac-3s.mp4/{native}")).await;
        assert!(ours == theirs, "{nginx} differs from {native}");
    }
    let master = fetch_text(&server, "/hlsts/h264-aac-3s.mp4/master.m3u8").await;
    assert!(master.contains("index-ts-t1.m3u8"), "{master}");
    // nginx-vod's I-frame playlist name is vodpack's I-frame playlist of that video, and
    // the key frames it names are served beside it.
    let iframes = common::get(server.addr, "/hls/h264-aac-3s.mp4/iframes-v1.m3u8").await;
    assert_eq!(iframes.status, 200, "{}", iframes.text());
    let native = common::get(server.addr, "/vod/h264-aac-3s.mp4/iframes-t1.m3u8").await;
    assert_eq!(iframes.text(), native.text());
    let first = (iframes.text().lines())
        .find(|l| l.starts_with("ifr-"))
        .map(str::to_owned)
        .expect("a key frame");
    let key_frame = common::get(server.addr, &format!("/hls/h264-aac-3s.mp4/{first}")).await;
    assert_eq!(key_frame.status, 200);
    assert_eq!(key_frame.body.get(4..8), Some(&b"moof"[..]));
    server.shutdown().await;
}
