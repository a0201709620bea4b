//! Edit lists over HTTP: what cannot be presented exactly is a 422 naming the edit, and a
//! presentation that starts inside a GOP tells players where it starts (HLS `EXT-X-START`,
//! DASH `presentationTimeOffset`). Decoded output is compared in `conformance.rs`.

mod common;

use common::{get, start_server, TempDir};

/// `h264-aac-two-clips-editlist.mp4` copied into a new root as `name`, with its video
/// `elst` (version 1, 20 bytes per edit: duration, media time, rate) changed by `patch`.
fn patched_two_clips(root: &TempDir, name: &str, patch: impl FnOnce(&mut [u8])) {
    let mut file =
        std::fs::read(common::fixtures().join("h264-aac-two-clips-editlist.mp4")).expect("fixture");
    let at = file.windows(4).position(|w| w == b"elst").expect("an elst");
    patch(&mut file[at + 12..at + 12 + 40]);
    std::fs::write(root.path().join(name), file).expect("write");
}

/// Given a second clip that starts 8 frames into a GOP, then the title is a 422 whose
/// one-line reason names the track, the edit and its time: its pre-roll frames would
/// otherwise be shown in the middle of the presentation.
#[tokio::test]
async fn a_later_edit_inside_a_gop_is_a_422_naming_the_edit() {
    let root = TempDir::new("edit-mid-gop-join");
    // Edit 2's media time: 32768 (a key frame) + 8 frames of 512 ticks.
    patched_two_clips(&root, "join.mp4", |e| {
        e[28..36].copy_from_slice(&(32768i64 + 8 * 512).to_be_bytes())
    });
    let server = start_server(root.path()).await;
    for resource in ["master.m3u8", "manifest.mpd"] {
        let reply = get(server.addr, &format!("/vod/join.mp4/{resource}")).await;
        assert_eq!(reply.status, 422, "{resource}: {}", reply.text());
        let reason = reply.text();
        assert!(
            reason.contains("track 1: edit 2 at 1600 ms starts inside a GOP"),
            "{resource}: {reason}"
        );
        assert_eq!(reason.trim().lines().count(), 1, "{reason}");
    }
    server.shutdown().await;
}

/// Given an edit with media_rate 0 (a dwell), then the title is a 422 saying so.
#[tokio::test]
async fn a_dwell_edit_is_a_422() {
    let root = TempDir::new("edit-dwell");
    patched_two_clips(&root, "dwell.mp4", |e| e[16..20].copy_from_slice(&[0; 4]));
    let server = start_server(root.path()).await;
    let reply = get(server.addr, "/vod/dwell.mp4/master.m3u8").await;
    assert_eq!(reply.status, 422, "{}", reply.text());
    assert!(
        reply.text().contains("edit 1 is a dwell"),
        "{}",
        reply.text()
    );
    server.shutdown().await;
}

/// Given a first edit 16 frames into a GOP, then the video media playlist starts playback
/// 16 frames (0.533333 s) into its first segment (not the multivariant playlist, where
/// ffmpeg 5.1 would take the tag for one more variant); the MPD shows the pre-roll (its
/// Period starts at the first video frame: no presentationTimeOffset, and it lasts the
/// 2.133 s presented plus the 0.533 s of pre-roll), because browsers' MSE would drop every
/// frame up to the next key frame with it; the audio playlist, and a title without
/// pre-roll, have no EXT-X-START.
#[tokio::test]
async fn a_start_inside_a_gop_tells_players_where_the_presentation_starts() {
    let server = start_server(&common::fixtures()).await;
    let key = "h264-aac-edit-mid-gop.mp4";
    let folder = common::version_folder(server.addr, key).await;
    let video = get(server.addr, &format!("/vod/{key}/{folder}index-t1.m3u8")).await;
    assert_eq!(video.status, 200);
    assert!(
        video
            .text()
            .contains("#EXT-X-START:TIME-OFFSET=0.533333,PRECISE=YES\n"),
        "{}",
        video.text()
    );
    let audio = get(server.addr, &format!("/vod/{key}/{folder}index-t2.m3u8")).await;
    assert!(!audio.text().contains("EXT-X-START"), "{}", audio.text());
    let master = get(server.addr, &format!("/vod/{key}/master.m3u8")).await;
    assert!(!master.text().contains("EXT-X-START"), "{}", master.text());
    let mpd = get(server.addr, "/vod/h264-aac-edit-mid-gop.mp4/manifest.mpd").await;
    let mpd = mpd.text();
    assert!(!mpd.contains("presentationTimeOffset"), "{mpd}");
    assert!(
        mpd.contains("mediaPresentationDuration=\"PT2.667S\""),
        "{mpd}"
    );
    let plain = get(
        server.addr,
        "/vod/h264-aac-two-clips-editlist.mp4/master.m3u8",
    )
    .await;
    assert!(!plain.text().contains("EXT-X-START"), "{}", plain.text());
    server.shutdown().await;
}
