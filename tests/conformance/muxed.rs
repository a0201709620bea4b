//! Muxed fMP4 under the nginx-vod `hls` location: `index-v1-a1.m3u8` lists
//! `init-v1-a1.mp4` and `seg-N-v1-a1.m4s`, which carry video and audio in one stream and
//! play exactly what vodpack's single-track CMAF renditions play: the same packets at the
//! same times, the same decoded frames and audio.

use super::common;
use super::http::*;
use super::nginx_vod::{nginx_server, start_nginx, urlset};
use super::tools::*;
use super::FIXTURES;
use vodpack::crypto::{EncryptionPolicy, Secret};

/// Each presented packet of `selector` in `input` as (pts, MD5 of its bytes), and how long
/// the stream lasts (first pts to last packet end). Packet durations are not compared one
/// by one: ffprobe leaves out those of the packets it read while probing, which depend on
/// how many streams the input has.
async fn packet_list(input: &str, selector: &str) -> (Vec<(f64, String)>, f64) {
    let packets = packets(input, selector).await;
    let span = span(&packets);
    let list = packets.into_iter().map(|p| (p.pts, p.hash)).collect();
    (list, span)
}

/// For every fixture with video and audio: `index-v1-a1.m3u8` is a media playlist of the
/// muxed init and segments, numbered as nginx-vod-module numbers the longer of the video
/// and the audio (`nginx_numbering.rs`); init + every segment, as one file, holds one
/// video and one audio stream whose packets (times and bytes) are those of the single
/// tracks' `index-v1.m3u8` and `index-a1.m3u8`, each lasting as long, so A/V timing is the
/// CMAF output's; it decodes to the native frames (framemd5) and audio (PCM); and ffmpeg
/// reading the muxed playlist over HTTP gets the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn muxed_fmp4_plays_what_the_cmaf_renditions_play() {
    let Some(server) = start_nginx().await else {
        return;
    };
    let dir = common::TempDir::new("muxed-fmp4");
    let mut checked = 0;
    for &fixture in FIXTURES {
        let source = probe_streams(&Via::Source.input(&server, fixture)).await;
        if source.count("video") == 0 || source.count("audio") == 0 {
            continue;
        }
        let base = format!("/hls/{fixture}/");
        let text = fetch_text(&server, &format!("{base}index-v1-a1.m3u8")).await;
        let playlist = MediaPlaylist::parse(&text);
        let alone = |tokens: &'static str| {
            let path = format!("{base}index-{tokens}.m3u8");
            let server = &server;
            async move { MediaPlaylist::parse(&fetch_text(server, &path).await) }
        };
        let (video, audio) = (alone("v1").await, alone("a1").await);
        assert_eq!(
            playlist.map_uri.as_deref(),
            Some("init-v1-a1.mp4"),
            "{fixture}"
        );
        // nginx-vod-module's count and durations of the longer of the two (its muxed
        // set lasts as long as its longest track): each segment the longer of theirs.
        let longest: Vec<f64> = (0..video.extinfs.len().max(audio.extinfs.len()))
            .map(|k| {
                let of = |p: &MediaPlaylist| p.extinfs.get(k).copied().unwrap_or(0.0);
                of(&video).max(of(&audio))
            })
            .collect();
        assert_eq!(playlist.extinfs, longest, "{fixture}: durations");
        let want: Vec<String> = (1..=longest.len())
            .map(|n| format!("seg-{n}-v1-a1.m4s"))
            .collect();
        assert_eq!(playlist.segments, want, "{fixture}: segment names");
        // init + every segment, as a player appends them.
        let mut bytes = fetch_ok(&server, &format!("{base}init-v1-a1.mp4"))
            .await
            .body;
        for uri in &playlist.segments {
            let reply = fetch_ok(&server, &format!("{base}{uri}")).await;
            assert_eq!(reply.header("content-type"), Some("video/mp4"));
            bytes.extend(reply.body);
        }
        let file = dir
            .path()
            .join(format!("{}.mp4", fixture.replace('/', "_")));
        std::fs::write(&file, &bytes).unwrap();
        let file = file.to_string_lossy().into_owned();
        let muxed_url = server.url(&format!("{base}index-v1-a1.m3u8"));

        let probe = probe_streams(&file).await;
        let kinds: Vec<&str> = probe.streams.iter().map(|s| s.kind.as_str()).collect();
        assert_eq!(
            kinds,
            ["video", "audio"],
            "{fixture}: streams of the muxed file"
        );
        for (selector, native) in [("v:0", "index-v1.m3u8"), ("a:0", "index-a1.m3u8")] {
            let want = packet_list(&server.url(&format!("{base}{native}")), selector).await;
            for input in [&file, &muxed_url] {
                let got = packet_list(input, selector).await;
                assert!(
                    got.0 == want.0,
                    "{fixture} {input} {selector}: packets differ from {native} ({} vs {})",
                    got.0.len(),
                    want.0.len()
                );
                assert!(
                    (got.1 - want.1).abs() < 0.0005,
                    "{fixture} {input} {selector}: lasts {} s, {native} {} s",
                    got.1,
                    want.1
                );
            }
        }
        let native_master = server.url(&format!("/vod/{fixture}/master.m3u8"));
        let want: Vec<String> = (frame_hashes(&native_master, "v:0").await.into_iter())
            .map(|f| f.hash)
            .collect();
        assert!(want.len() >= 30, "{fixture}: vacuous");
        let audio = server.url(&format!("{base}index-a1.m3u8"));
        let want_pcm = decode_pcm(&audio, "a:0", None).await;
        assert!(want_pcm.len() >= 48_000, "{fixture}: vacuous audio");
        for input in [&file, &muxed_url] {
            let got: Vec<String> = (frame_hashes(input, "v:0").await.into_iter())
                .map(|f| f.hash)
                .collect();
            assert!(
                got == want,
                "{fixture} {input}: frames differ from the native ones"
            );
            let pcm = decode_pcm(input, "a:0", None).await;
            assert!(
                pcm == want_pcm,
                "{fixture} {input}: audio differs from the native"
            );
        }
        let over_http = probe_streams(&muxed_url).await;
        assert_eq!(over_http.count("video"), 1, "{fixture}");
        assert_eq!(over_http.count("audio"), 1, "{fixture}");
        checked += 1;
    }
    assert!(
        checked >= 15,
        "only {checked} fixtures with video and audio"
    );
    server.shutdown().await;
}

/// Given the ladder as an nginx-vod urlset, when a muxed playlist names the first video of
/// files 1 and 2 and the first audio (`index-f1-f2-v1-a1.m3u8`: the audio is file 1's),
/// then its three streams, read from two files in turn, are packet for packet the native
/// renditions of those tracks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_muxed_stream_reads_each_track_from_its_own_file() {
    let Some(server) = start_nginx().await else {
        return;
    };
    let base = format!("/hls/{}/", urlset());
    let muxed = server.url(&format!("{base}index-f1-f2-v1-a1.m3u8"));
    let probe = probe_streams(&muxed).await;
    let kinds: Vec<&str> = probe.streams.iter().map(|s| s.kind.as_str()).collect();
    assert_eq!(kinds, ["video", "video", "audio"]);
    for (selector, native, native_selector) in [
        ("v:0", "index-f1-v1.m3u8", "v:0"),
        ("v:1", "index-f2-v1.m3u8", "v:0"),
        ("a:0", "index-f1-a1.m3u8", "a:0"),
    ] {
        let native_url = server.url(&format!("{base}{native}"));
        let (want, _) = packet_list(&native_url, native_selector).await;
        let (got, _) = packet_list(&muxed, selector).await;
        assert!(want.len() >= 30, "{native}: vacuous");
        assert!(got == want, "{selector}: packets differ from {native}");
    }
    server.shutdown().await;
}

/// Given a muxed segment, when byte ranges are asked for (in the header, across the header
/// and the video's samples, across the video's last and the audio's first samples, at the
/// end), then each is that slice of the whole segment, and HEAD states the whole length.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranges_of_muxed_segments_are_slices_of_the_whole() {
    let server = nginx_server().await;
    let path = "/hls/h264-aac-3s.mp4/seg-2-v1-a1.m4s";
    let whole = fetch_ok(&server, path).await.body;
    let video = fetch_ok(&server, "/hls/h264-aac-3s.mp4/seg-2-v1.m4s")
        .await
        .body;
    let audio = fetch_ok(&server, "/hls/h264-aac-3s.mp4/seg-2-a1.m4s")
        .await
        .body;
    // The mdat holds the video's samples, then the audio's: its payload ends with the
    // audio segment's payload (everything after its 8-byte mdat header).
    let mdat_payload = |segment: &[u8]| {
        let at = segment.windows(4).position(|w| w == b"mdat").unwrap() + 4;
        segment[at..].to_vec()
    };
    let (video_payload, audio_payload) = (mdat_payload(&video), mdat_payload(&audio));
    assert_eq!(
        mdat_payload(&whole),
        [video_payload.clone(), audio_payload].concat()
    );
    let header = whole.len() - video_payload.len() - mdat_payload(&audio).len();
    let head = common::request(server.addr, "HEAD", path, &[]).await;
    assert_eq!(head.status, 200);
    assert_eq!(
        head.header("content-length"),
        Some(whole.len().to_string().as_str())
    );
    let boundary = header + video_payload.len();
    for (from, to) in [
        (0, 15),
        (header - 10, header + 100),
        (boundary - 50, boundary + 50),
        (whole.len() - 17, whole.len() - 1),
    ] {
        let range = format!("bytes={from}-{to}");
        let part = common::request(server.addr, "GET", path, &[("Range", &range)]).await;
        assert_eq!(part.status, 206, "{range}");
        assert!(part.body == whole[from..=to], "{range}");
    }
    server.shutdown().await;
}

/// Given the two-language fixture, when a muxed playlist names the video and the second
/// audio (`index-v1-a2.m3u8`), then it is the media playlist of those two tracks: its init
/// describes tracks 1 and 3 (French), and its segments are served; the bare `index.m3u8`
/// stays the multivariant playlist, and `master-v1-a2.m3u8` the redirect to a view.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_muxed_playlist_names_its_own_tracks() {
    let server = nginx_server().await;
    let base = "/hls/h264-aac-2lang-3s.mp4/";
    let playlist =
        MediaPlaylist::parse(&fetch_text(&server, &format!("{base}index-v1-a2.m3u8")).await);
    assert_eq!(playlist.map_uri.as_deref(), Some("init-v1-a2.mp4"));
    assert_eq!(
        playlist.segments.first().map(String::as_str),
        Some("seg-1-v1-a2.m4s")
    );
    let init = fetch_ok(&server, &format!("{base}init-v1-a2.mp4"))
        .await
        .body;
    // tkhd (version 0): track id after the box header, flags and two times.
    let track_ids: Vec<u32> = (init.windows(4).enumerate())
        .filter(|(_, w)| *w == b"tkhd")
        .map(|(at, _)| u32::from_be_bytes(init[at + 16..at + 20].try_into().unwrap()))
        .collect();
    assert_eq!(track_ids, [1, 3]);
    for uri in &playlist.segments {
        let segment = fetch_ok(&server, &format!("{base}{uri}")).await.body;
        assert_eq!(
            segment.windows(4).filter(|w| *w == b"traf").count(),
            2,
            "{uri}"
        );
    }
    let bare = fetch_text(&server, &format!("{base}index.m3u8")).await;
    let native = fetch_text(&server, "/vod/h264-aac-2lang-3s.mp4/master.m3u8").await;
    assert_eq!(bare, native);
    let reply = common::get(server.addr, &format!("{base}master-v1-a2.m3u8")).await;
    assert_eq!(reply.status, 302, "{}", reply.text());
    assert_eq!(
        reply.header("location"),
        Some("/hls/h264-aac-2lang-3s.mp4/tracks/t1-t3/master.m3u8")
    );
    // One track is what it was: the native segment, byte for byte.
    let one = fetch_ok(&server, &format!("{base}seg-1-v1.m4s")).await.body;
    let folder = common::version_folder_in(&native);
    let own = fetch_ok(
        &server,
        &format!("/vod/h264-aac-2lang-3s.mp4/{folder}seg-t1-1.m4s"),
    )
    .await
    .body;
    assert!(one == own);
    server.shutdown().await;
}

/// Given HLS encryption with the nginx-vod `hls` location (which `vodpack serve` refuses
/// today; the server must fail closed all the same), when muxed names are asked for, then
/// each is a 404 saying muxed output is not encrypted and naming the single-track
/// renditions: never clear bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn muxed_names_of_an_encrypted_output_say_where_the_single_tracks_are() {
    let mut settings = common::nginx_vod_settings(1000, "hls=/hls/");
    settings.protect.encryption = EncryptionPolicy::parse("hls=aes-128").unwrap();
    settings.protect.key_secret =
        Some(Secret::from_text("muxed test key secret 0123456789", "k").unwrap());
    let server = common::start_server_with(&common::fixtures(), settings).await;
    for name in ["index-v1-a1.m3u8", "init-v1-a1.mp4", "seg-1-v1-a1.m4s"] {
        let reply = common::get(server.addr, &format!("/hls/h264-aac-3s.mp4/{name}")).await;
        assert_eq!(reply.status, 404, "{name}: {}", reply.text());
        let text = reply.text();
        assert!(
            text.contains("not offered with HLS encryption"),
            "{name}: {text}"
        );
        assert!(
            text.contains("master.m3u8") && text.contains("t1, t2"),
            "{name}: {text}"
        );
    }
    server.shutdown().await;
}
