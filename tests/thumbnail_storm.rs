//! 200 thumbnail requests at once against the real binary (a child process):
//! each is answered, 200 with a JPEG or 503 with `Retry-After` (the decode admission's
//! small limit and short queue, not an unbounded pile of decodes); the process's peak
//! memory (`VmHWM` from /proc) stays near what two decodes at once cost; segment requests
//! made meanwhile are all served whole (segments have their own admission class); and the
//! server's counters agree with what the clients saw.
//!
//! Needs ffmpeg (to make a 1080p clip) and Linux's /proc: skips without ffmpeg unless
//! `VODPACK_REQUIRE_TOOLS=1`. The child is stopped by its own id; waits are bounded loops.

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use common::frames::output_of;
use common::{get, have_tool, linked, Reply, TempDir};

/// Thumbnail requests sent at once.
const STORM: usize = 200;

/// Decodes at once and queue wait the server is started with.
const MAX_DECODES: &str = "2";
const QUEUE_WAIT_MS: &str = "500";

/// How far the peak memory of the storm may rise over that of two decodes at once. One
/// 1080p decode holds its decoder, its reference pictures, the planes and the RGB output
/// (tens of MiB); 200 of them at once would be gigabytes. The queued requests hold a
/// connection and a small future each.
const MAX_STORM_GROWTH_KIB: u64 = 64 * 1024;

/// The child server, killed by its own id when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// `VmHWM` (peak resident memory, KiB) of the server process.
    fn peak_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc status");
        (status.lines())
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM")
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// vodpack serving `root` with two decode places and a 500 ms queue wait, once ready.
async fn start(root: &Path) -> Server {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_vodpack"))
        .arg("serve")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("VODPACK_LISTEN", format!("127.0.0.1:{port}"))
        .env("VODPACK_ROOT", root)
        .env("VODPACK_THUMBNAIL_MAX_DECODES", MAX_DECODES)
        .env("VODPACK_THUMBNAIL_QUEUE_WAIT_MS", QUEUE_WAIT_MS)
        // A decode of this debug build on a busy machine may take seconds: no 504s.
        .env("VODPACK_REQUEST_TIMEOUT_MS", "600000")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start vodpack");
    let server = Server {
        child,
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
    };
    for _ in 0..600 {
        if tokio::net::TcpStream::connect(server.addr).await.is_ok()
            && get(server.addr, "/readyz").await.status == 200
        {
            return server;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("vodpack did not become ready");
}

/// A 4 s 1080p H.264 clip of `testsrc2`, one key frame every 2 s, with B-frames.
fn hd_clip(path: &Path) {
    output_of(
        Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
            .arg("testsrc2=size=1920x1080:rate=25:duration=4")
            .args([
                "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "veryfast",
            ])
            .args(["-g", "50", "-bf", "2"])
            .arg(path),
    );
}

/// Every init and media segment of `key`'s HLS output, fetched one after another: each
/// must be 200 with the whole body its `Content-Length` announces. Returns how many.
async fn fetch_segments(addr: SocketAddr, key: &str) -> usize {
    let master_path = format!("/vod/{key}/master.m3u8");
    let master = get(addr, &master_path).await;
    assert_eq!(master.status, 200);
    let mut count = 0;
    for playlist_path in linked(&master_path, &master.text()) {
        let playlist = get(addr, &playlist_path).await;
        assert_eq!(playlist.status, 200, "{playlist_path}");
        for segment in linked(&playlist_path, &playlist.text()) {
            let reply = get(addr, &segment).await;
            assert_eq!(reply.status, 200, "{segment}: {}", reply.text());
            let length: usize = (reply.header("content-length"))
                .and_then(|l| l.parse().ok())
                .expect("content-length");
            assert_eq!(reply.body.len(), length, "{segment}");
            count += 1;
        }
    }
    count
}

/// The value of the series `name{labels}` in a Prometheus exposition, 0 when absent.
fn series(exposition: &str, name_and_labels: &str) -> u64 {
    (exposition.lines())
        .find_map(|l| l.strip_prefix(name_and_labels)?.trim().parse::<f64>().ok())
        .map_or(0, |v| v as u64)
}

/// Given the binary with two decode places and a 500 ms queue wait, and a 1080p title,
/// when 200 thumbnails of it (frames 0 to 7 of a GOP) are asked for at once while another title's segments
/// are fetched over and over, then every thumbnail answer is 200 with a JPEG or 503 with
/// `Retry-After`, some of each; every segment is 200 and whole; the shed and served counts
/// in /metrics are what the clients saw; and the process's peak memory rose by less than
/// 64 MiB over that of two decodes at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_thumbnails_at_once_are_answered_or_shed_and_segments_go_on() {
    if !have_tool("ffmpeg") {
        return;
    }
    let root = TempDir::new("thumb-storm");
    hd_clip(&root.path().join("hd.mp4"));
    std::fs::copy(
        common::fixtures().join("h264-aac-3s.mp4"),
        root.path().join("segments.mp4"),
    )
    .expect("copy fixture");
    let server = start(root.path()).await;
    let addr = server.addr;
    // Two decodes at once, the most the admission lets run: the memory they cost.
    let warm = (0..2).map(|i| async move {
        get(addr, &format!("/vod/hd.mp4/thumb-{}.jpg", 120 + i * 40)).await
    });
    for reply in futures_util::future::join_all(warm).await {
        assert_eq!(reply.status, 200, "{}", reply.text());
    }
    assert!(fetch_segments(addr, "segments.mp4").await >= 2);
    let base_kib = server.peak_kib();

    let storm_done = Arc::new(AtomicBool::new(false));
    let storm = tokio::spawn({
        let storm_done = storm_done.clone();
        async move {
            let asks = (0..STORM).map(|i| {
                // The first frames of a GOP, a few decoded each: mid-GOP thumbnails that
                // a debug build decodes in reasonable time.
                let path = format!("/vod/hd.mp4/thumb-{}.jpg", i % 8 * 40);
                tokio::spawn(async move { get(addr, &path).await })
            });
            let replies: Vec<Reply> = futures_util::future::join_all(asks)
                .await
                .into_iter()
                .map(|r| r.expect("request task"))
                .collect();
            storm_done.store(true, Ordering::Release);
            replies
        }
    });
    // Segments meanwhile, over and over until the storm is answered.
    let during = AtomicUsize::new(0);
    while !storm_done.load(Ordering::Acquire) {
        let fetched = fetch_segments(addr, "segments.mp4").await;
        if !storm_done.load(Ordering::Acquire) {
            during.fetch_add(fetched, Ordering::Relaxed);
        }
    }
    let replies = storm.await.expect("storm");
    let (mut served, mut shed) = (0u64, 0u64);
    for reply in &replies {
        match reply.status {
            200 => {
                served += 1;
                assert_eq!(reply.header("content-type"), Some("image/jpeg"));
                assert!(reply.body.starts_with(&[0xff, 0xd8]), "a JPEG");
            }
            503 => {
                shed += 1;
                assert!(reply.header("retry-after").is_some(), "{:?}", reply.headers);
            }
            other => panic!("{other}: {}", reply.text()),
        }
    }
    let during = during.load(Ordering::Relaxed);
    let peak_kib = server.peak_kib();
    eprintln!(
        "{served} served, {shed} shed; {during} segments served during the storm; \
         peak {base_kib} KiB after two decodes, {peak_kib} KiB after the storm"
    );
    assert!(served >= 2, "the decode places serve some");
    assert!(
        shed > 0,
        "two places and a short queue shed some of {STORM}"
    );
    assert!(
        during > 0,
        "segments were fetched while the storm was in flight"
    );
    assert!(
        peak_kib.saturating_sub(base_kib) < MAX_STORM_GROWTH_KIB,
        "peak memory rose from {base_kib} to {peak_kib} KiB"
    );
    let metrics = get(addr, "/metrics").await.text();
    assert_eq!(
        series(&metrics, "vod_requests_shed_total{class=\"thumbnail\"}"),
        shed,
        "{metrics}"
    );
    let served_seen = series(
        &metrics,
        "vod_http_requests_total{route=\"thumbnail\",status=\"200\"}",
    );
    assert_eq!(served_seen, served + 2, "the storm's and the warm-up's");
    // The places are given back: one more is served.
    let after = get(addr, "/vod/hd.mp4/thumb-0.jpg").await;
    assert_eq!(after.status, 200, "{}", after.text());
}
