//! Subtitle resources over HTTP, as small stories against the real server: how WebVTT
//! segments and files are served, what a text track has and has not, and the answer for
//! a text track over the read limit. Cue content and timing are checked against ffmpeg in
//! `conformance.rs`.

mod common;

use common::{get, request, start_server, start_server_with, version_folder};
use vodpack::config::Settings;
use vodpack::media::MediaLimits;

const MOV_TEXT: &str = "h264-aac-movtext-3s.mp4";

/// The subtitle playlist, its WebVTT segments and the DASH file are served as text with a
/// length, an ETag, CORS and the version folder's long cache policy; a byte range of a
/// WebVTT file is a 206 of exactly those bytes, and HEAD gives the length alone.
#[tokio::test]
async fn webvtt_is_served_like_every_other_versioned_resource() {
    let server = start_server(&common::fixtures()).await;
    let v = version_folder(server.addr, MOV_TEXT).await;
    for (name, content_type) in [
        ("index-t3.m3u8", "application/vnd.apple.mpegurl"),
        ("sub-t3-1.vtt", "text/vtt; charset=utf-8"),
        ("sub-t3.vtt", "text/vtt; charset=utf-8"),
    ] {
        let path = format!("/vod/{MOV_TEXT}/{v}{name}");
        let reply = get(server.addr, &path).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.text());
        assert_eq!(reply.header("content-type"), Some(content_type), "{path}");
        let length = reply.body.len().to_string();
        assert_eq!(reply.header("content-length"), Some(length.as_str()));
        assert!(reply.header("etag").is_some(), "{path}");
        assert_eq!(reply.header("access-control-allow-origin"), Some("*"));
        assert!(
            reply
                .header("cache-control")
                .is_some_and(|c| c.contains("immutable")),
            "{path}"
        );
    }
    let path = format!("/vod/{MOV_TEXT}/{v}sub-t3.vtt");
    let whole = get(server.addr, &path).await.body;
    assert!(whole.starts_with(b"WEBVTT\n"));
    let part = request(server.addr, "GET", &path, &[("range", "bytes=0-5")]).await;
    assert_eq!((part.status, &part.body[..]), (206, &b"WEBVTT"[..]));
    let head = request(server.addr, "HEAD", &path, &[]).await;
    let length = whole.len().to_string();
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-length"), Some(length.as_str()));
    assert!(head.body.is_empty());
    server.shutdown().await;
}

/// A text track is not a CMAF rendition (no init or media segments), an audio track has
/// no WebVTT, and subtitle segment numbers stop where the title's segments stop: all 404,
/// with a one-line reason.
#[tokio::test]
async fn what_a_text_track_does_not_have_is_not_found() {
    let server = start_server(&common::fixtures()).await;
    let v = version_folder(server.addr, MOV_TEXT).await;
    // 6 s segments by default: the 3 s title has one.
    for name in [
        "init-t3.mp4",
        "seg-t3-1.m4s",
        "sub-t2.vtt",
        "sub-t2-1.vtt",
        "sub-t3-2.vtt",
        "sub-t9.vtt",
        "index-t9.m3u8",
    ] {
        let path = format!("/vod/{MOV_TEXT}/{v}{name}");
        let reply = get(server.addr, &path).await;
        assert_eq!(reply.status, 404, "{path}: {}", reply.text());
        assert_eq!(reply.text().lines().count(), 1, "{path}");
    }
    server.shutdown().await;
}

/// A file whose text track needs more bytes than `max_text_read_bytes` for one subtitle
/// resource is answered 422 with the limit named, and nothing else about the title
/// suffers: its playlists and media segments are still served.
#[tokio::test]
async fn a_text_track_over_the_read_limit_is_422_and_harms_nothing_else() {
    let settings = Settings {
        limits: MediaLimits {
            max_text_read_bytes: 16,
            ..MediaLimits::default()
        },
        ..Settings::default()
    };
    let server = start_server_with(&common::fixtures(), settings).await;
    let v = version_folder(server.addr, MOV_TEXT).await;
    // The two cues' samples are 37 and 25 bytes (with styles), over the 16-byte limit.
    for name in ["sub-t3.vtt", "sub-t3-1.vtt"] {
        let reply = get(server.addr, &format!("/vod/{MOV_TEXT}/{v}{name}")).await;
        assert_eq!(reply.status, 422, "{name}: {}", reply.text());
        assert!(
            reply.text().contains("max_text_read_bytes"),
            "{}",
            reply.text()
        );
    }
    for name in ["index-t3.m3u8", "index-t1.m3u8", "seg-t1-1.m4s"] {
        let reply = get(server.addr, &format!("/vod/{MOV_TEXT}/{v}{name}")).await;
        assert_eq!(reply.status, 200, "{name}: {}", reply.text());
    }
    server.shutdown().await;
}
