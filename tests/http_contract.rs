//! The HTTP contract of BRIEF.md, told as small stories against the real server on
//! 127.0.0.1: headers, HEAD, Range, ETag, CORS, error answers, keys that try to leave the
//! root, and broken files that must not harm their neighbours.

mod common;

use common::{get, request, start_server, version_folder, TempDir};

const MAIN: &str = "/vod/h264-aac-3s.mp4";

/// Given the main fixture, every resource the manifests name is served with the right
/// type, a length, an ETag, CORS and a cache policy fit for a CDN: short for the entry
/// manifests, for ever for what lives in the version folder.
#[tokio::test]
async fn every_resource_has_type_length_etag_cors_and_cache_policy() {
    let server = start_server(&common::fixtures()).await;
    let v = version_folder(server.addr, "h264-aac-3s.mp4").await;
    for (path, content_type, immutable) in [
        (
            "master.m3u8".to_string(),
            "application/vnd.apple.mpegurl",
            false,
        ),
        ("manifest.mpd".to_string(), "application/dash+xml", false),
        (
            format!("{v}index-t1.m3u8"),
            "application/vnd.apple.mpegurl",
            true,
        ),
        (format!("{v}init-t1.mp4"), "video/mp4", true),
        (format!("{v}init-t2.mp4"), "audio/mp4", true),
        (format!("{v}seg-t1-1.m4s"), "video/mp4", true),
        (format!("{v}seg-t2-1.m4s"), "audio/mp4", true),
        ("seg-t2-1.m4s".to_string(), "audio/mp4", false),
    ] {
        let reply = get(server.addr, &format!("{MAIN}/{path}")).await;
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.header("content-type"), Some(content_type), "{path}");
        assert_eq!(
            reply.header("content-length"),
            Some(reply.body.len().to_string().as_str()),
            "{path}"
        );
        assert!(
            reply.header("etag").is_some_and(|e| e.starts_with('"')),
            "{path}"
        );
        assert_eq!(
            reply.header("access-control-allow-origin"),
            Some("*"),
            "{path}"
        );
        let cache = reply.header("cache-control").unwrap_or_default();
        assert_eq!(cache.contains("immutable"), immutable, "{path}: {cache}");
    }
}

/// Given a segment, HEAD answers the same headers as GET and no body.
#[tokio::test]
async fn head_matches_get_without_a_body() {
    let server = start_server(&common::fixtures()).await;
    let path = format!("{MAIN}/seg-t1-1.m4s");
    let full = get(server.addr, &path).await;
    let head = request(server.addr, "HEAD", &path, &[]).await;
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(head.header("content-length"), full.header("content-length"));
    assert_eq!(head.header("etag"), full.header("etag"));
}

/// Given a segment, a byte range returns exactly those bytes of the whole segment, across
/// the boundary between the generated header and the source payload; one past the end is
/// 416, and ranges apart are answered with the whole segment.
#[tokio::test]
async fn range_requests_return_the_same_bytes_as_the_whole_segment() {
    let server = start_server(&common::fixtures()).await;
    let path = format!("{MAIN}/seg-t1-1.m4s");
    let full = get(server.addr, &path).await.body;
    let len = full.len();
    for (range, start, end) in [
        ("bytes=0-99".to_string(), 0, 100),
        (format!("bytes=100-{}", len - 1), 100, len),
        ("bytes=1000-".to_string(), 1000, len),
        ("bytes=-500".to_string(), len - 500, len),
    ] {
        let reply = request(server.addr, "GET", &path, &[("Range", &range)]).await;
        assert_eq!(reply.status, 206, "{range}");
        assert_eq!(reply.body, full[start..end], "{range}");
        let expected = format!("bytes {}-{}/{len}", start, end - 1);
        assert_eq!(reply.header("content-range"), Some(expected.as_str()));
    }
    let past = request(
        server.addr,
        "GET",
        &path,
        &[("Range", &format!("bytes={len}-"))],
    )
    .await;
    assert_eq!(past.status, 416);
    assert_eq!(
        past.header("content-range"),
        Some(format!("bytes */{len}").as_str())
    );
    // Ranges apart would need a multipart answer: the whole segment (RFC 9110 14.2).
    let multi = request(server.addr, "GET", &path, &[("Range", "bytes=0-1,5-9")]).await;
    assert_eq!(multi.status, 200);
    assert_eq!(multi.body, full);
}

/// Given an ETag from a first answer, a conditional request gets 304 and no body.
#[tokio::test]
async fn if_none_match_with_the_etag_is_not_modified() {
    let server = start_server(&common::fixtures()).await;
    for path in ["master.m3u8", "seg-t2-1.m4s"] {
        let path = format!("{MAIN}/{path}");
        let first = get(server.addr, &path).await;
        let etag = first.header("etag").expect("etag").to_owned();
        let again = request(server.addr, "GET", &path, &[("If-None-Match", &etag)]).await;
        assert_eq!(again.status, 304, "{path}");
        assert!(again.body.is_empty());
    }
}

/// Given one content in two layouts (moov first, moov last), every answer is the same
/// bytes (but for the version token, which names the file version): output depends on the
/// media, not on where the file keeps its index.
#[tokio::test]
async fn moov_at_the_end_serves_the_same_bytes_as_faststart() {
    let server = start_server(&common::fixtures()).await;
    let front_v = version_folder(server.addr, "h264-aac-3s.mp4").await;
    let end_v = version_folder(server.addr, "h264-aac-3s-moov-end.mp4").await;
    for name in ["master.m3u8", "manifest.mpd"] {
        let front = get(server.addr, &format!("/vod/h264-aac-3s.mp4/{name}")).await;
        let end = get(
            server.addr,
            &format!("/vod/h264-aac-3s-moov-end.mp4/{name}"),
        )
        .await;
        assert_eq!(front.status, 200, "{name}");
        assert_eq!(
            front.text().replace(&front_v, ""),
            end.text().replace(&end_v, "")
        );
    }
    for name in [
        "index-t1.m3u8",
        "index-t2.m3u8",
        "init-t1.mp4",
        "init-t2.mp4",
        "seg-t1-1.m4s",
        "seg-t2-1.m4s",
    ] {
        let front = get(
            server.addr,
            &format!("/vod/h264-aac-3s.mp4/{front_v}{name}"),
        )
        .await;
        let end = get(
            server.addr,
            &format!("/vod/h264-aac-3s-moov-end.mp4/{end_v}{name}"),
        )
        .await;
        assert_eq!(front.status, 200, "{name}");
        assert_eq!(front.body, end.body, "{name}");
    }
}

/// Given names that do not exist, the answer is 404 with a one-line reason.
#[tokio::test]
async fn unknown_keys_renditions_and_segments_are_404() {
    let server = start_server(&common::fixtures()).await;
    for path in [
        "/vod/no-such-file.mp4/master.m3u8",
        "/vod/h264-aac-3s.mp4/index-t9.m3u8",
        "/vod/h264-aac-3s.mp4/seg-t1-999.m4s",
        "/vod/h264-aac-3s.mp4/nothing.txt",
        "/elsewhere",
    ] {
        let reply = get(server.addr, path).await;
        assert_eq!(reply.status, 404, "{path}");
        assert_eq!(reply.text().lines().count(), 1, "{path}: {}", reply.text());
    }
}

/// Given keys that try to leave the root in any spelling, the answer is 4xx and nothing
/// outside the root is read.
#[tokio::test]
async fn keys_that_leave_the_root_are_refused() {
    let root = TempDir::new("traversal");
    std::fs::create_dir_all(root.path().join("media")).unwrap();
    std::fs::copy(
        common::fixtures().join("h264-aac-3s.mp4"),
        root.path().join("outside.mp4"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        root.path().join("outside.mp4"),
        root.path().join("media/link.mp4"),
    )
    .unwrap();
    let server = start_server(&root.path().join("media")).await;
    for path in [
        "/vod/../outside.mp4/master.m3u8",
        "/vod/%2e%2e/outside.mp4/master.m3u8",
        "/vod/%2E%2E%2Foutside.mp4/master.m3u8",
        "/vod/..%5Coutside.mp4/master.m3u8",
        "/vod/%00.mp4/master.m3u8",
        "/vod/link.mp4/master.m3u8",
    ] {
        let reply = get(server.addr, path).await;
        assert!(
            (400..500).contains(&reply.status),
            "{path}: {}",
            reply.status
        );
        assert!(!reply.text().contains("EXTM3U"), "{path}");
    }
}

/// Given broken files next to a good one, each broken request gets a clear 4xx/5xx with
/// a reason, and the good file keeps being served correctly in between.
#[tokio::test]
async fn broken_files_get_clear_errors_and_do_not_harm_others() {
    let root = TempDir::new("broken");
    let good = std::fs::read(common::fixtures().join("h264-aac-3s.mp4")).unwrap();
    std::fs::write(root.path().join("good.mp4"), &good).unwrap();
    std::fs::write(root.path().join("empty.mp4"), b"").unwrap();
    std::fs::write(root.path().join("text.mp4"), b"this is not a video file\n").unwrap();
    std::fs::write(root.path().join("truncated-moov.mp4"), &good[..2000]).unwrap();
    std::fs::write(
        root.path().join("truncated-mdat.mp4"),
        &good[..good.len() / 2],
    )
    .unwrap();
    let server = start_server(root.path()).await;
    let expected = get(server.addr, "/vod/good.mp4/seg-t1-1.m4s").await.body;
    for name in ["empty", "text", "truncated-moov", "truncated-mdat"] {
        let reply = get(server.addr, &format!("/vod/{name}.mp4/master.m3u8")).await;
        assert!(
            (400..600).contains(&reply.status) && reply.status != 404,
            "{name}: {}",
            reply.status
        );
        let reason = reply.text();
        assert_eq!(reason.lines().count(), 1, "{name}: {reason}");
        assert!(reason.len() > 10, "{name}: {reason}");
        let good_reply = get(server.addr, "/vod/good.mp4/seg-t1-1.m4s").await;
        assert_eq!(good_reply.status, 200);
        assert_eq!(good_reply.body, expected);
    }
}

/// Given a file replaced under the same name, the next request sees the new content.
#[tokio::test]
async fn a_replaced_file_is_served_fresh() {
    let root = TempDir::new("replaced");
    let path = root.path().join("movie.mp4");
    std::fs::copy(common::fixtures().join("h264-aac-3s.mp4"), &path).unwrap();
    let server = start_server(root.path()).await;
    let before = get(server.addr, "/vod/movie.mp4/master.m3u8").await;
    assert!(before.text().contains("avc1"));
    let tmp = root.path().join("movie.tmp");
    std::fs::copy(common::fixtures().join("hevc-aac-3s.mp4"), &tmp).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    let after = get(server.addr, "/vod/movie.mp4/master.m3u8").await;
    assert!(after.text().contains("hvc1"), "{}", after.text());
    assert_ne!(before.header("etag"), after.header("etag"));
}

/// Given a server that reuses file identities for 200 ms (as `vodpack serve` does, for
/// `--source-identity-ttl-ms`), a replaced file is served fresh once the window has passed,
/// and every answer meanwhile is a whole version, old or new.
#[tokio::test]
async fn with_reused_identities_a_replaced_file_is_served_within_the_window() {
    let root = TempDir::new("replaced-window");
    let path = root.path().join("movie.mp4");
    std::fs::copy(common::fixtures().join("h264-aac-3s.mp4"), &path).unwrap();
    let source = vodpack::source::LocalMediaSource::new(root.path())
        .unwrap()
        .with_identity_ttl(std::time::Duration::from_millis(200));
    let server = common::start_server_on(std::sync::Arc::new(source), Default::default()).await;
    let before = get(server.addr, "/vod/movie.mp4/master.m3u8").await;
    assert!(before.text().contains("avc1"));
    let tmp = root.path().join("movie.tmp");
    std::fs::copy(common::fixtures().join("hevc-aac-3s.mp4"), &tmp).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    // Bounded: 100 tries 50 ms apart, 25 times the window.
    let mut fresh = None;
    for _ in 0..100 {
        let reply = get(server.addr, "/vod/movie.mp4/master.m3u8").await;
        assert_eq!(reply.status, 200);
        let text = reply.text();
        assert!(text.contains("avc1") != text.contains("hvc1"), "{text}");
        if text.contains("hvc1") {
            fresh = Some(reply);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let fresh = fresh.expect("the new file is served once the window has passed");
    assert_ne!(before.header("etag"), fresh.header("etag"));
}

/// Given identities reused for an hour, when a master, an MPD and a media playlist are
/// each asked twice, then the second answers are held ones (server/held.rs): the same bytes and
/// headers as the first, date aside, still counted in the metrics. A conditional, a ranged
/// or a HEAD request of the same path still gets its own answer.
#[tokio::test]
async fn repeated_manifest_requests_get_the_same_answer_held() {
    let source = vodpack::source::LocalMediaSource::new(&common::fixtures())
        .unwrap()
        .with_identity_ttl(std::time::Duration::from_secs(3600));
    let server = common::start_server_on(std::sync::Arc::new(source), Default::default()).await;
    let without_date = |reply: &common::Reply| -> Vec<(String, String)> {
        let mut headers: Vec<_> = (reply.headers.iter())
            .filter(|(k, _)| !k.eq_ignore_ascii_case("date"))
            .cloned()
            .collect();
        headers.sort();
        headers
    };
    for name in ["master.m3u8", "manifest.mpd", "index-t1.m3u8"] {
        let path = format!("{MAIN}/{name}");
        let first = get(server.addr, &path).await;
        assert_eq!(first.status, 200, "{path}");
        let second = get(server.addr, &path).await;
        assert_eq!(second.status, 200);
        assert_eq!(second.body, first.body, "{path}");
        assert_eq!(without_date(&second), without_date(&first), "{path}");
        let etag = first.header("etag").unwrap().to_owned();
        let revalidated = request(server.addr, "GET", &path, &[("If-None-Match", &etag)]).await;
        assert_eq!(revalidated.status, 304);
        let ranged = request(server.addr, "GET", &path, &[("Range", "bytes=0-6")]).await;
        assert_eq!(ranged.status, 206);
        assert_eq!(ranged.body, first.body[..7]);
        let head = request(server.addr, "HEAD", &path, &[]).await;
        assert_eq!((head.status, head.body.len()), (200, 0));
    }
    assert_eq!(server.app.answers.len(), 3);
    let metrics = get(server.addr, "/metrics").await.text();
    assert!(
        metrics.contains("vod_http_requests_total{route=\"master\",status=\"200\"} 3"),
        "{metrics}"
    );
}

/// Given identities reused for an hour, when a title document's master, an encrypted
/// output's master and a clear DASH manifest beside it are each asked twice, then only the
/// clear manifest of the plain file is held: a document's tracks are files of their own,
/// and encrypted manifests are never held. With a CORS origin list nothing is held.
#[tokio::test]
async fn only_clear_manifests_of_plain_files_are_held() {
    let reusing = || {
        let source = vodpack::source::LocalMediaSource::new(&common::fixtures()).unwrap();
        std::sync::Arc::new(source.with_identity_ttl(std::time::Duration::from_secs(3600)))
    };
    let mut settings = vodpack::config::Settings::default();
    settings.protect.encryption = vodpack::crypto::EncryptionPolicy::parse("hls=aes-128").unwrap();
    settings.protect.key_secret =
        Some(vodpack::crypto::Secret::from_text("held answers test key secret 01", "k").unwrap());
    let server = common::start_server_on(reusing(), settings).await;
    for path in [
        "/vod/ladder/ladder.json/master.m3u8",
        &format!("{MAIN}/master.m3u8"),
        &format!("{MAIN}/manifest.mpd"),
    ] {
        for _ in 0..2 {
            assert_eq!(get(server.addr, path).await.status, 200, "{path}");
        }
    }
    assert_eq!(server.app.answers.len(), 1);

    let mut settings = vodpack::config::Settings::default();
    settings.protect.cors_origins = vec!["https://player.example".into()];
    let server = common::start_server_on(reusing(), settings).await;
    for _ in 0..2 {
        assert_eq!(
            get(server.addr, &format!("{MAIN}/manifest.mpd"))
                .await
                .status,
            200
        );
    }
    assert!(server.app.answers.is_empty());
}

/// Health, readiness and metrics answer; metrics count source bytes.
#[tokio::test]
async fn health_readiness_and_metrics_answer() {
    let server = start_server(&common::fixtures()).await;
    assert_eq!(get(server.addr, "/healthz").await.status, 200);
    assert_eq!(get(server.addr, "/readyz").await.status, 200);
    let segment = get(server.addr, &format!("{MAIN}/seg-t1-1.m4s")).await;
    assert_eq!(segment.status, 200);
    let metrics = get(server.addr, "/metrics").await.text();
    assert!(metrics.contains("vod_source_read_bytes_total{source_kind=\"local\"}"));
    assert!(metrics.contains("vod_http_requests_total{route=\"segment\",status=\"200\"} 1"));
}

/// An unsupported method is 405 with Allow; a CORS preflight is answered.
#[tokio::test]
async fn methods_other_than_get_and_head_are_refused() {
    let server = start_server(&common::fixtures()).await;
    let post = request(server.addr, "POST", &format!("{MAIN}/master.m3u8"), &[]).await;
    assert_eq!(post.status, 405);
    assert!(post.header("allow").is_some());
    let options = request(
        server.addr,
        "OPTIONS",
        &format!("{MAIN}/seg-t1-1.m4s"),
        &[
            ("Origin", "http://player.example"),
            ("Access-Control-Request-Headers", "range"),
        ],
    )
    .await;
    assert_eq!(options.status, 204);
    assert!(options
        .header("access-control-allow-headers")
        .is_some_and(|h| h.contains("Range")));
}

/// Given a playlist cached before its file was replaced, its versioned names answer 404
/// instead of the new version's bytes, so a CDN never splices two versions.
#[tokio::test]
async fn names_of_a_replaced_version_are_gone_not_remixed() {
    let root = TempDir::new("stale-version");
    let path = root.path().join("movie.mp4");
    std::fs::copy(common::fixtures().join("h264-aac-3s.mp4"), &path).unwrap();
    let server = start_server(root.path()).await;
    let old = version_folder(server.addr, "movie.mp4").await;
    let old_segment = format!("/vod/movie.mp4/{old}seg-t1-1.m4s");
    assert_eq!(get(server.addr, &old_segment).await.status, 200);
    let tmp = root.path().join("movie.tmp");
    std::fs::copy(common::fixtures().join("h264-aac-2lang-3s.mp4"), &tmp).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    assert_eq!(get(server.addr, &old_segment).await.status, 404);
    let new = version_folder(server.addr, "movie.mp4").await;
    assert_ne!(old, new);
    let fresh = get(server.addr, &format!("/vod/movie.mp4/{new}seg-t1-1.m4s")).await;
    assert_eq!(fresh.status, 200);
}

/// Conditional requests follow RFC 9110: If-None-Match compares weakly, If-Match strongly
/// (412 otherwise), and a Range is honoured only when If-Range names the current ETag.
#[tokio::test]
async fn conditional_headers_follow_the_rfc() {
    let server = start_server(&common::fixtures()).await;
    let v = version_folder(server.addr, "h264-aac-3s.mp4").await;
    let path = format!("{MAIN}/{v}seg-t1-1.m4s");
    let full = get(server.addr, &path).await;
    let etag = full.header("etag").unwrap().to_owned();
    let weak = format!("W/{etag}");
    let reply = request(server.addr, "GET", &path, &[("If-None-Match", &weak)]).await;
    assert_eq!(reply.status, 304);
    let reply = request(server.addr, "GET", &path, &[("If-Match", "\"other\"")]).await;
    assert_eq!(reply.status, 412);
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    let reply = request(server.addr, "GET", &path, &[("If-Match", &etag)]).await;
    assert_eq!(reply.status, 200);
    let stale = [("Range", "bytes=0-9"), ("If-Range", "\"other\"")];
    let reply = request(server.addr, "GET", &path, &stale).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body, full.body);
    let current = [("Range", "bytes=0-9"), ("If-Range", etag.as_str())];
    let reply = request(server.addr, "GET", &path, &current).await;
    assert_eq!(reply.status, 206);
    assert_eq!(reply.body, full.body[..10]);
    let unsatisfiable = [("Range", "bytes=999999999-")];
    let reply = request(server.addr, "GET", &path, &unsatisfiable).await;
    assert_eq!(reply.status, 416);
    assert_eq!(reply.header("cache-control"), Some("no-store"));
}

/// Given a broken upload, a storm of requests for it reads it once: the failure is
/// remembered for that object version, and the answer stays the same clear error.
#[tokio::test]
async fn a_broken_file_is_remembered_not_reread() {
    let root = TempDir::new("remembered");
    let good = std::fs::read(common::fixtures().join("h264-aac-3s.mp4")).unwrap();
    std::fs::write(root.path().join("broken.mp4"), &good[..good.len() / 2]).unwrap();
    let server = start_server(root.path()).await;
    let first = get(server.addr, "/vod/broken.mp4/master.m3u8").await;
    assert_eq!(first.status, 422);
    let reads = server.app.catalog.source().counters().read_requests.get();
    for _ in 0..20 {
        let again = get(server.addr, "/vod/broken.mp4/manifest.mpd").await;
        assert_eq!((again.status, again.text()), (first.status, first.text()));
    }
    assert_eq!(
        server.app.catalog.source().counters().read_requests.get(),
        reads
    );
}

/// Given a server whose media folder disappears, readiness stays true (200, the pod is
/// fine and its peers share the source) but says `degraded`, and `vod_source_up` drops to
/// 0 with a failure counted: the alert, not the load balancer, reacts (docs/operations.md,
/// Readiness in a fleet).
#[tokio::test]
async fn readiness_reports_the_source_without_dropping_the_pod() {
    let root = TempDir::new("readiness");
    let media = root.path().join("media");
    std::fs::create_dir_all(&media).unwrap();
    let server = start_server(&media).await;
    let ready = get(server.addr, "/readyz").await;
    assert_eq!((ready.status, ready.text().as_str()), (200, "ready\n"));
    let metrics = get(server.addr, "/metrics").await.text();
    assert!(metrics.contains("vod_source_up 1"), "{metrics}");
    std::fs::remove_dir_all(&media).unwrap();
    let degraded = get(server.addr, "/readyz").await;
    assert_eq!(degraded.status, 200);
    assert!(
        degraded
            .text()
            .starts_with("ready, degraded: media source unreachable"),
        "{}",
        degraded.text()
    );
    let metrics = get(server.addr, "/metrics").await.text();
    assert!(metrics.contains("vod_source_up 0"), "{metrics}");
    assert!(
        metrics.contains("vod_source_check_failures_total 1"),
        "{metrics}"
    );
    assert_eq!(get(server.addr, "/healthz").await.status, 200);
}

/// Given a client that answers nothing after its first answer and one that sends half a
/// request head, then the server closes both after its header read timeout (10 s), while a
/// third client on the same server is answered as usual.
#[tokio::test]
async fn connections_without_a_whole_head_in_time_are_closed() {
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = start_server(&common::fixtures()).await;

    let mut idle = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    idle.write_all(format!("GET {MAIN}/master.m3u8 HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut half = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    half.write_all(b"GET /healthz HTTP/1.1\r\nHo")
        .await
        .unwrap();
    assert_eq!(
        get(server.addr, &format!("{MAIN}/master.m3u8"))
            .await
            .status,
        200
    );

    // Each connection is read to its end: the idle one's answer, then the close.
    for (name, conn) in [("idle", &mut idle), ("half a head", &mut half)] {
        let mut got = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(60), conn.read_to_end(&mut got));
        read.await
            .unwrap_or_else(|_| panic!("the {name} connection is closed"))
            .unwrap();
        let answered = got.starts_with(b"HTTP/1.1 200 OK");
        assert_eq!(
            answered,
            name == "idle",
            "{name}: {:?}",
            String::from_utf8_lossy(&got)
        );
    }
}
