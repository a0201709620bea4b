//! Views over HTTP: track selection and clips on plain MP4s and title
//! documents, as small stories against the real server. What the clips decode to is
//! checked with ffmpeg in `conformance/clips.rs`.

mod common;

use common::{get, start_server_with, version_folder_in};
use vodpack::config::Settings;

fn settings() -> Settings {
    common::segments_of(1000)
}

/// Lines of a multivariant playlist starting with `prefix`.
fn lines_with<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// Given the two-language file, then `tracks/a1` offers its first audio only (no video
/// variant), `tracks/v1-lang=fr` the video with the French audio only (the file says
/// `fra`), `tracks/t3` the track with id 3, and a selection keeping no audio or video is
/// 400 with the reason.
#[tokio::test]
async fn a_track_selection_keeps_the_tracks_it_names() {
    let server = start_server_with(&common::fixtures(), settings()).await;
    let base = "/vod/h264-aac-2lang-3s.mp4";
    let whole = get(server.addr, &format!("{base}/master.m3u8"))
        .await
        .text();
    assert_eq!(lines_with(&whole, "#EXT-X-MEDIA:TYPE=AUDIO").len(), 2);

    let reply = get(server.addr, &format!("{base}/tracks/a1/master.m3u8")).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let text = reply.text();
    assert!(!text.contains("RESOLUTION="), "{text}");
    assert_eq!(lines_with(&text, "#EXT-X-STREAM-INF").len(), 1, "{text}");

    let reply = get(
        server.addr,
        &format!("{base}/tracks/v1-lang=fr/master.m3u8"),
    )
    .await;
    let text = reply.text();
    let audio = lines_with(&text, "#EXT-X-MEDIA:TYPE=AUDIO");
    assert_eq!(audio.len(), 1, "{text}");
    assert!(audio[0].contains("LANGUAGE=\"fra\""), "{text}");
    assert!(text.contains("RESOLUTION=320x180"), "{text}");

    let mpd = get(server.addr, &format!("{base}/tracks/t3/manifest.mpd"))
        .await
        .text();
    assert!(
        mpd.contains("lang=\"fra\"") && !mpd.contains("contentType=\"video\""),
        "{mpd}"
    );

    let reply = get(server.addr, &format!("{base}/tracks/s1/master.m3u8")).await;
    assert_eq!(reply.status, 400);
    assert!(
        reply.text().contains("keeps no audio or video track"),
        "{}",
        reply.text()
    );
    server.shutdown().await;
}

/// Given a clip, then its playlists point into their own version folder, whose resources
/// are served under the clip's path, and are 404 under the whole title's (a player never
/// mixes segments of the clip and of the title).
#[tokio::test]
async fn a_clip_lives_in_its_own_version_folder() {
    let server = start_server_with(&common::fixtures(), settings()).await;
    let clip = "/vod/h264-aac-3s.mp4/clip/1200-2500";
    let master = get(server.addr, &format!("{clip}/master.m3u8")).await;
    assert_eq!(master.status, 200);
    let folder = version_folder_in(&master.text());
    let playlist = get(server.addr, &format!("{clip}/{folder}index-t1.m3u8")).await;
    assert_eq!(playlist.status, 200);
    assert!(
        playlist.text().contains("#EXT-X-START:TIME-OFFSET="),
        "{}",
        playlist.text()
    );
    let segment = get(server.addr, &format!("{clip}/{folder}seg-t1-1.m4s")).await;
    assert_eq!(segment.status, 200);
    let elsewhere = get(
        server.addr,
        &format!("/vod/h264-aac-3s.mp4/{folder}seg-t1-1.m4s"),
    )
    .await;
    assert_eq!(elsewhere.status, 404);
    server.shutdown().await;
}

/// Given a title document with `"clip"`, then the ladder is served cut to it, sidecar cues
/// moved with it (a cue at 1.8 s of the title is at 0.6 s of a clip from 1.2 s, plus the
/// title shift); a clip whose end is not after its start, or that starts after the title,
/// is a 422 naming the field.
#[tokio::test]
async fn a_title_document_clip_cuts_the_whole_ladder() {
    let dir = common::ladder_copy("views-doc-clip");
    let from = common::fixtures().join("ladder");
    let document = std::fs::read_to_string(from.join("ladder.json")).expect("ladder.json");
    let with_clip = |clip: &str| document.replacen('{', &format!("{{\n  \"clip\": {clip},"), 1);
    std::fs::write(
        dir.path().join("clip.json"),
        with_clip(r#"{"from": 1200, "to": 2600}"#),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("backwards.json"),
        with_clip(r#"{"from": 2600, "to": 1200}"#),
    )
    .unwrap();
    std::fs::write(dir.path().join("late.json"), with_clip(r#"{"from": 9000}"#)).unwrap();
    let server = start_server_with(dir.path(), settings()).await;

    let master = get(server.addr, "/vod/clip.json/master.m3u8").await;
    assert_eq!(master.status, 200, "{}", master.text());
    let text = master.text();
    assert_eq!(lines_with(&text, "#EXT-X-STREAM-INF").len(), 3, "{text}");
    let folder = version_folder_in(&text);
    let playlist = get(
        server.addr,
        &format!("/vod/clip.json/{folder}index-f1-t1.m3u8"),
    )
    .await
    .text();
    let total: f64 = (playlist.lines())
        .filter_map(|l| {
            l.strip_prefix("#EXTINF:")?
                .trim_end_matches(',')
                .parse::<f64>()
                .ok()
        })
        .sum();
    // 1.4 s of clip plus the 0.2 s of pre-roll from the key frame at 1.0 s.
    assert!((total - 1.6).abs() < 0.05, "{playlist}");
    let cues = get(
        server.addr,
        &format!("/vod/clip.json/{folder}sub-f5-t0-1.vtt"),
    )
    .await
    .text();
    assert!(cues.contains("00:00:00.867 --> 00:00:02.267"), "{cues}");

    for name in ["backwards.json", "late.json"] {
        let reply = get(server.addr, &format!("/vod/{name}/master.m3u8")).await;
        assert_eq!(reply.status, 422, "{name}: {}", reply.text());
        assert!(
            reply.text().starts_with("clip: "),
            "{name}: {}",
            reply.text()
        );
    }
    server.shutdown().await;
}

/// Given `max-title-renditions` 2, then an nginx-vod urlset of three files is refused with
/// 400 and the limit, before any of them is read; two files are served.
#[tokio::test]
async fn a_urlset_over_the_rendition_limit_is_refused() {
    let mut settings = settings();
    settings.limits.max_title_renditions = 2;
    settings.nginx_vod_locations = "hls=/hls/".parse().unwrap();
    let server = start_server_with(&common::fixtures(), settings).await;
    let reply = get(
        server.addr,
        "/hls/ladder/,ladder-180p,ladder-360p,ladder-270p,.mp4.urlset/master.m3u8",
    )
    .await;
    assert_eq!(reply.status, 400, "{}", reply.text());
    assert!(
        reply.text().contains("over the limit of 2"),
        "{}",
        reply.text()
    );
    let reply = get(
        server.addr,
        "/hls/ladder/,ladder-180p,ladder-360p,.mp4.urlset/master.m3u8",
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    server.shutdown().await;
}
