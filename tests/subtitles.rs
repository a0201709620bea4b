//! Subtitle resources over HTTP, as small stories against the real server: how WebVTT
//! segments and files and DASH text segments are served, which form the MPD offers, what a
//! text track has and has not, the answer for a text track over the read limit, and text
//! in an encrypted title. Cue content and timing are checked against ffmpeg in
//! `conformance.rs`.

mod common;

use common::{dash_folder_in, get, request, start_server, start_server_with, version_folder};
use vodpack::config::Settings;
use vodpack::crypto::{EncryptionPolicy, Secret};
use vodpack::media::MediaLimits;
use vodpack::package::DashSubtitleFormat;

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
/// no WebVTT and no text segments, and subtitle and text segment numbers stop where the
/// title's segments stop: all 404, with a one-line reason.
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
        "sub-t3-2.m4s",
        "ttml-t3-2.m4s",
        "sub-t2-init.mp4",
        "ttml-t2-1.m4s",
        "sub-t9-init.mp4",
    ] {
        let path = format!("/vod/{MOV_TEXT}/{v}{name}");
        let reply = get(server.addr, &path).await;
        assert_eq!(reply.status, 404, "{path}: {}", reply.text());
        assert_eq!(reply.text().lines().count(), 1, "{path}");
    }
    server.shutdown().await;
}

/// A file whose text track needs more bytes than `max_text_read_bytes` for one subtitle
/// resource (a WebVTT segment or file, a DASH text segment) is answered 422 with the limit named, and nothing else about the title
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
    for name in [
        "sub-t3.vtt",
        "sub-t3-1.vtt",
        "sub-t3-1.m4s",
        "ttml-t3-1.m4s",
    ] {
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

/// DASH text segments (`wvtt` and `stpp`, init and media) are served whole as
/// `application/mp4` with a length, an ETag, CORS and the version folder's long cache
/// policy; a byte range is a 206 of exactly those bytes, and HEAD gives the length alone.
#[tokio::test]
async fn dash_text_segments_are_served_like_every_other_versioned_resource() {
    let server = start_server(&common::fixtures()).await;
    let v = version_folder(server.addr, MOV_TEXT).await;
    for name in [
        "sub-t3-init.mp4",
        "sub-t3-1.m4s",
        "ttml-t3-init.mp4",
        "ttml-t3-1.m4s",
    ] {
        let path = format!("/vod/{MOV_TEXT}/{v}{name}");
        let reply = get(server.addr, &path).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.text());
        assert_eq!(reply.header("content-type"), Some("application/mp4"));
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
        let kind = if name.contains("init") {
            b"ftyp"
        } else {
            b"moof"
        };
        assert_eq!(&reply.body[4..8], kind, "{path}");
        let part = request(server.addr, "GET", &path, &[("range", "bytes=4-7")]).await;
        assert_eq!((part.status, &part.body[..]), (206, &reply.body[4..8]));
        let head = request(server.addr, "HEAD", &path, &[]).await;
        assert_eq!(head.status, 200);
        assert_eq!(head.header("content-length"), Some(length.as_str()));
        assert!(head.body.is_empty());
    }
    // The cue's text is in the segment as written in the source, styles included.
    let segment = get(server.addr, &format!("/vod/{MOV_TEXT}/{v}sub-t3-1.m4s")).await;
    let text = String::from_utf8_lossy(&segment.body);
    assert!(text.contains("paylHello, <i>world</i>!"), "{text}");
    server.shutdown().await;
}

/// Given each value of `dash-subtitle-format`, then the MPD's text set is in that form:
/// `wvtt` segments by default, `stpp` segments for `imsc1`, one WebVTT file under
/// `BaseURL` for `webvtt-file`; HLS is the same WebVTT in every case.
#[tokio::test]
async fn the_dash_subtitle_format_setting_chooses_the_mpd_form() {
    let mut hls = Vec::new();
    for (format, want) in [
        (None, "codecs=\"wvtt\""),
        (Some(DashSubtitleFormat::Wvtt), "codecs=\"wvtt\""),
        (Some(DashSubtitleFormat::Imsc1), "codecs=\"stpp.ttml.im1t\""),
        (Some(DashSubtitleFormat::WebvttFile), "<BaseURL>"),
    ] {
        let mut settings = Settings::default();
        if let Some(format) = format {
            settings.dash_subtitle_format = format;
        }
        let server = start_server_with(&common::fixtures(), settings).await;
        let mpd = get(server.addr, &format!("/vod/{MOV_TEXT}/manifest.mpd"))
            .await
            .text();
        let text_set = (mpd.split("<AdaptationSet").skip(1))
            .find(|s| s.contains("contentType=\"text\""))
            .unwrap_or_else(|| panic!("a text set in {mpd}"));
        assert!(text_set.contains(want), "{format:?}: {text_set}");
        assert_eq!(text_set.contains("SegmentTemplate"), want != "<BaseURL>");
        let v = version_folder(server.addr, MOV_TEXT).await;
        let path = format!("/vod/{MOV_TEXT}/{v}index-t3.m3u8");
        hls.push(get(server.addr, &path).await.text());
        server.shutdown().await;
    }
    assert!(hls.windows(2).all(|w| w[0] == w[1]), "{hls:?}");
}

/// Given a title whose DASH and HLS outputs are encrypted, then its MPD still lists the
/// text set, with no ContentProtection (only the audio and video sets have one), its
/// templates in the encrypted output's folder; and there its text segments are served in
/// the clear, byte for byte the clear output's, in both codings.
#[tokio::test]
async fn an_encrypted_title_lists_and_serves_its_text_segments_in_the_clear() {
    let clear = start_server(&common::fixtures()).await;
    let clear_folder = version_folder(clear.addr, MOV_TEXT).await;
    let mut settings = Settings::default();
    settings.protect.encryption = EncryptionPolicy::parse("hls=aes-128,dash=cenc").unwrap();
    settings.protect.key_secret =
        Some(Secret::from_text("subtitles test key secret 01234", "k").unwrap());
    for format in [DashSubtitleFormat::Wvtt, DashSubtitleFormat::Imsc1] {
        settings.dash_subtitle_format = format;
        let server = start_server_with(&common::fixtures(), settings.clone()).await;
        let mpd = get(server.addr, &format!("/vod/{MOV_TEXT}/manifest.mpd"))
            .await
            .text();
        let folder = dash_folder_in(&mpd);
        assert_ne!(
            folder, clear_folder,
            "the encrypted output has its own folder"
        );
        let sets: Vec<&str> = mpd.split("<AdaptationSet").skip(1).collect();
        let text_sets: Vec<&&str> = sets
            .iter()
            .filter(|s| s.contains("contentType=\"text\""))
            .collect();
        assert_eq!(text_sets.len(), 1, "{mpd}");
        assert!(!text_sets[0].contains("ContentProtection"), "{mpd}");
        assert!(
            (sets.iter())
                .filter(
                    |s| s.contains("contentType=\"video\"") || s.contains("contentType=\"audio\"")
                )
                .all(|s| s.contains("ContentProtection")),
            "{mpd}"
        );
        let prefix = match format {
            DashSubtitleFormat::Imsc1 => "ttml",
            _ => "sub",
        };
        assert!(
            text_sets[0].contains(&format!(
                "initialization=\"{folder}{prefix}-$RepresentationID$-init.mp4\""
            )),
            "{mpd}"
        );
        for name in [
            format!("{prefix}-t3-init.mp4"),
            format!("{prefix}-t3-1.m4s"),
        ] {
            let reply = get(server.addr, &format!("/vod/{MOV_TEXT}/{folder}{name}")).await;
            assert_eq!(reply.status, 200, "{name}: {}", reply.text());
            let clear_reply =
                get(clear.addr, &format!("/vod/{MOV_TEXT}/{clear_folder}{name}")).await;
            assert_eq!(
                reply.body, clear_reply.body,
                "{name}: the clear output's bytes"
            );
        }
        server.shutdown().await;
    }
    clear.shutdown().await;
}
