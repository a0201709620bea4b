//! Sample offsets left for later: a long track's file offsets are worked out on
//! first use, not when its title is loaded (`media::SampleOffsets`). These tests send every
//! track down that path (`offsets_at_load_max_samples` at 0) and hold it to the bytes the
//! offsets worked out at load give.

mod common;

use common::{fixtures, get, start_server_with, TestServer};
use vodpack::config::Settings;

/// A server over the fixtures, its offsets worked out at load or (`later`) on first use.
async fn serve(later: bool) -> TestServer {
    let mut settings = Settings::default();
    if later {
        settings.limits.offsets_at_load_max_samples = 0;
    }
    start_server_with(&fixtures(), settings).await
}

/// The resources a playlist at `path` names, as paths resolved against its folder.
async fn named_in(server: &TestServer, path: &str) -> Vec<String> {
    let reply = get(server.addr, path).await;
    assert_eq!(reply.status, 200, "{path}");
    let folder = &path[..=path.rfind('/').unwrap()];
    let text = reply.text();
    let mut names: Vec<String> = (text.lines())
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect();
    // Alternate renditions, I-frame playlists and init segments are named in attributes.
    for line in text.lines().filter(|l| l.starts_with('#')) {
        if let Some(uri) = line
            .split("URI=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
        {
            names.push(uri.to_owned());
        }
    }
    names
        .into_iter()
        .map(|name| format!("{folder}{name}"))
        .collect()
}

/// Every media resource a title offers over HLS, fMP4 and MPEG-TS: each media playlist's
/// segments, init segments and I-frame (key frame) resources.
async fn media_of(server: &TestServer, title: &str) -> Vec<String> {
    let mut media = Vec::new();
    for master in ["master.m3u8", "master-ts.m3u8"] {
        for playlist in named_in(server, &format!("/vod/{title}/{master}")).await {
            for resource in named_in(server, &playlist).await {
                if !resource.ends_with(".m3u8") && !media.contains(&resource) {
                    media.push(resource);
                }
            }
        }
    }
    media
}

/// Given titles of one and of several tracks, when every track's offsets are left for the
/// first segment, then every fMP4 and MPEG-TS segment, init segment and key frame is the
/// same bytes as with the offsets worked out at load.
#[tokio::test]
async fn segments_are_the_same_bytes_with_offsets_worked_out_on_first_use() {
    let (at_load, later) = (serve(false).await, serve(true).await);
    let mut compared = 0;
    for title in [
        "h264-aac-3s.mp4",
        "h264-aac-2lang-3s.mp4",
        "hevc-aac-3s.mp4",
        "h264-aac-two-clips-editlist.mp4",
    ] {
        let media = media_of(&later, title).await;
        assert!(media.len() >= 6, "{title}: {media:?}");
        assert_eq!(media, media_of(&at_load, title).await, "{title}");
        for path in media {
            let (expected, got) = (get(at_load.addr, &path).await, get(later.addr, &path).await);
            assert_eq!(expected.status, 200, "{path}");
            assert_eq!(got.status, 200, "{path}");
            assert!(got.body == expected.body, "{path}: the bytes differ");
            compared += 1;
        }
    }
    assert!(compared >= 30, "{compared} resources compared");
    at_load.shutdown().await;
    later.shutdown().await;
}
