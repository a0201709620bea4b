//! Hostile files: the broken-file corpus of `tests/hostile/mod.rs`, served next to
//! a good file by the real server. Every request for a broken file gets a clear error (not a
//! 404, one line, naming the flaw), and the good file keeps being served byte for byte.

mod common;
mod hostile;

use common::{get, start_server, start_server_with, TempDir};
use vodpack::config::Settings;

const GOOD_SEGMENT: &str = "/vod/good.mp4/seg-t1-1.m4s";

/// Given every corpus file next to a good one, when each is asked for its manifests and a
/// segment, then each answer is a 4xx/5xx (never 404) whose one-line body names the flaw,
/// and the good file's segment is answered identically after every one of them.
#[tokio::test]
async fn each_broken_file_gets_its_clear_error_and_the_good_file_is_unharmed() {
    hostile::write_if_asked();
    let root = TempDir::new("hostile");
    std::fs::write(
        root.path().join("good.mp4"),
        hostile::fixture("h264-aac-3s.mp4"),
    )
    .unwrap();
    let corpus = hostile::corpus();
    for file in &corpus {
        std::fs::write(root.path().join(file.name), &file.bytes).unwrap();
    }
    let server = start_server(root.path()).await;
    let baseline = get(server.addr, GOOD_SEGMENT).await;
    assert_eq!(baseline.status, 200);
    assert!(baseline.body.len() > 1000);

    for file in &corpus {
        for resource in ["master.m3u8", "manifest.mpd", "seg-t1-1.m4s"] {
            let path = format!("/vod/{}/{resource}", file.name);
            let reply = get(server.addr, &path).await;
            let body = reply.text();
            assert!(
                (400..600).contains(&reply.status) && reply.status != 404,
                "{path}: {} {body}",
                reply.status
            );
            assert_eq!(body.trim_end().lines().count(), 1, "{path}: {body:?}");
            assert!(
                body.contains(file.expect),
                "{path}: {body:?} does not name the flaw ({:?})",
                file.expect
            );
            let good = get(server.addr, GOOD_SEGMENT).await;
            assert_eq!(good.status, 200, "after {path}");
            assert!(
                good.body == baseline.body,
                "after {path}: good segment changed"
            );
        }
    }
}

/// Given a file with 2,000 nested boxes in its user data, which the parser never reads,
/// then it is served exactly like the file it was made from.
#[tokio::test]
async fn deep_nesting_in_user_data_is_harmless() {
    let root = TempDir::new("deep-udta");
    std::fs::write(
        root.path().join("plain.mp4"),
        hostile::fixture("h264-aac-3s-moov-end.mp4"),
    )
    .unwrap();
    std::fs::write(root.path().join("deep.mp4"), hostile::harmless_deep_udta()).unwrap();
    let server = start_server(root.path()).await;
    for resource in ["init-t1.mp4", "init-t2.mp4", "seg-t1-1.m4s", "seg-t2-1.m4s"] {
        let plain = get(server.addr, &format!("/vod/plain.mp4/{resource}")).await;
        let deep = get(server.addr, &format!("/vod/deep.mp4/{resource}")).await;
        assert_eq!(plain.status, 200, "{resource}");
        assert_eq!(deep.status, 200, "{resource}: {}", deep.text());
        assert!(plain.body == deep.body, "{resource} differs");
    }
}

/// Given a server whose `max_moov_bytes` is below the good file's `moov`, then that file
/// is refused with the limit's name, before its `moov` is read.
#[tokio::test]
async fn a_moov_over_the_configured_limit_is_refused_by_name() {
    let root = TempDir::new("moov-limit");
    std::fs::write(
        root.path().join("good.mp4"),
        hostile::fixture("h264-aac-3s-moov-end.mp4"),
    )
    .unwrap();
    let mut settings = Settings::default();
    settings.limits.max_moov_bytes = 1000;
    let server = start_server_with(root.path(), settings).await;
    let reply = get(server.addr, "/vod/good.mp4/master.m3u8").await;
    assert_eq!(reply.status, 422);
    assert!(
        reply.text().contains("max_moov_bytes limit"),
        "{}",
        reply.text()
    );
}
