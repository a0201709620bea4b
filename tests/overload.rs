//! Overload: the shedding and connection-cap tests of the performance page, and slow
//! clients. Each drives the server past one limit on loopback and checks that what is over
//! the limit gets 503 with Retry-After before any read, that what was admitted completes
//! correctly, and that playlists keep being served while segments are shed.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use common::{get, start_server_on, version_folder, TempDir, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;
use vodpack::config::Settings;
use vodpack::source::{
    ByteRange, ByteStream, LocalMediaSource, MediaSource, ObjectIdentity, ObjectKey,
    SourceCounters, SourceError, SourceKind,
};

/// A local source whose segment payload reads wait for a permit, so the test decides how
/// long admitted segment requests stay in flight. Metadata reads are not held.
struct GatedSource {
    inner: Arc<LocalMediaSource>,
    gate: Arc<Semaphore>,
    /// Payload reads waiting at the gate.
    waiting: Arc<AtomicUsize>,
}

#[async_trait]
impl MediaSource for GatedSource {
    fn kind(&self) -> SourceKind {
        self.inner.kind()
    }
    fn counters(&self) -> &Arc<SourceCounters> {
        self.inner.counters()
    }
    async fn identify(&self, key: &ObjectKey) -> Result<ObjectIdentity, SourceError> {
        self.inner.identify(key).await
    }
    async fn read_range(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        range: ByteRange,
    ) -> Result<Bytes, SourceError> {
        self.inner.read_range(key, identity, range).await
    }
    async fn read_ranges(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        ranges: &[ByteRange],
    ) -> Result<Vec<Bytes>, SourceError> {
        self.inner.read_ranges(key, identity, ranges).await
    }
    fn stream_ranges(
        self: Arc<Self>,
        key: ObjectKey,
        identity: ObjectIdentity,
        ranges: Vec<ByteRange>,
        chunk_bytes: usize,
    ) -> ByteStream {
        use futures_util::StreamExt;
        let gate = self.gate.clone();
        let inner = self.inner.clone();
        let waiting = self.waiting.clone();
        Box::pin(
            futures_util::stream::once(async move {
                // Held until the test adds permits; the permit is given back at once.
                waiting.fetch_add(1, Ordering::SeqCst);
                let _ = gate.acquire().await;
                inner.stream_ranges(key, identity, ranges, chunk_bytes)
            })
            .flatten(),
        )
    }
}

/// A server over the fixtures whose segment payloads wait for `gate`, with `settings`; the
/// inner source, the gate, and the count of payload reads waiting at it.
async fn gated_server(
    settings: Settings,
) -> (
    TestServer,
    Arc<LocalMediaSource>,
    Arc<Semaphore>,
    Arc<AtomicUsize>,
) {
    let inner = Arc::new(LocalMediaSource::new(&common::fixtures()).unwrap());
    let gate = Arc::new(Semaphore::new(0));
    let waiting = Arc::new(AtomicUsize::new(0));
    let source = Arc::new(GatedSource {
        inner: inner.clone(),
        gate: gate.clone(),
        waiting: waiting.clone(),
    });
    let server = start_server_on(source, settings).await;
    (server, inner, gate, waiting)
}

/// Wait (bounded) until `check` holds, yielding to the server in between.
async fn eventually(mut check: impl FnMut() -> bool) {
    for _ in 0..2_000 {
        if check() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    panic!("condition not reached");
}

/// Given a segment limit of 2 and two segment requests in flight, when a third arrives,
/// then it waits in the admission queue and, no place coming free within the queue's wait,
/// is shed with 503 and Retry-After without a read; playlists are still served, and the two
/// admitted requests complete with the right bytes once the source answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn segments_over_the_limit_are_shed_while_playlists_are_served() {
    let mut settings = Settings::default();
    settings.server.max_segment_requests = 2;
    settings.server.max_manifest_requests = 2;
    let (server, inner, gate, waiting) = gated_server(settings).await;
    let addr = server.addr;
    let v = version_folder(addr, "h264-aac-3s.mp4").await;
    let segment = format!("/vod/h264-aac-3s.mp4/{v}seg-t1-1.m4s");

    let held: Vec<_> = (0..2)
        .map(|_| {
            let path = segment.clone();
            tokio::spawn(async move { get(addr, &path).await })
        })
        .collect();
    // Both admitted and waiting for their payload: their permits are held.
    eventually(|| waiting.load(Ordering::SeqCst) == 2).await;

    let reads_before = inner.counters().read_requests.get();
    let shed = get(addr, &segment).await;
    assert_eq!(shed.status, 503);
    assert_eq!(shed.header("retry-after"), Some("1"));
    assert_eq!(inner.counters().read_requests.get(), reads_before);

    let playlist = get(addr, "/vod/h264-aac-3s.mp4/master.m3u8").await;
    assert_eq!(playlist.status, 200);
    let media = get(addr, &format!("/vod/h264-aac-3s.mp4/{v}index-t1.m3u8")).await;
    assert_eq!(media.status, 200);

    gate.add_permits(1_000);
    let mut bodies = Vec::new();
    for task in held {
        let reply = task.await.unwrap();
        assert_eq!(reply.status, 200);
        bodies.push(reply.body);
    }
    let expected = get(addr, &segment).await;
    assert_eq!(expected.status, 200);
    for body in bodies {
        assert_eq!(body, expected.body);
    }
    let metrics = get(addr, "/metrics").await.text();
    assert!(
        metrics.contains("vod_requests_shed_total{class=\"segment\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("vod_requests_queued_total 1"), "{metrics}");
}

/// Given a segment limit of 1 and one segment request in flight, when a second arrives and
/// the first then finishes, then the second, which waited in the admission queue, is
/// served (a premiere's burst is absorbed, not shed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_segment_request_over_the_limit_is_served_when_a_place_frees() {
    let mut settings = Settings::default();
    settings.server.max_segment_requests = 1;
    let (server, _, gate, waiting) = gated_server(settings).await;
    let addr = server.addr;
    let v = version_folder(addr, "h264-aac-3s.mp4").await;
    let segment = format!("/vod/h264-aac-3s.mp4/{v}seg-t1-1.m4s");
    let first = tokio::spawn({
        let path = segment.clone();
        async move { get(addr, &path).await }
    });
    eventually(|| waiting.load(Ordering::SeqCst) == 1).await;
    let second = tokio::spawn({
        let path = segment.clone();
        async move { get(addr, &path).await }
    });
    // The second is in the queue; then the first is let go.
    let app = server.app.clone();
    eventually(move || app.admission.waiting_segments() == 1).await;
    gate.add_permits(1_000);
    let (first, second) = (first.await.unwrap(), second.await.unwrap());
    assert_eq!((first.status, second.status), (200, 200));
    assert_eq!(first.body, second.body);
    let metrics = get(addr, "/metrics").await.text();
    assert!(
        metrics.contains("vod_requests_shed_total{class=\"segment\"} 0"),
        "{metrics}"
    );
    assert!(metrics.contains("vod_requests_queued_total 1"), "{metrics}");
}

/// Given a connection cap of 2 and two open connections, when a third connects, then it
/// is answered 503 with Retry-After and closed, and once one connection closes a new one
/// is served again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_cap_get_503_and_admitted_ones_are_served() {
    let mut settings = Settings::default();
    settings.server.max_connections = 2;
    let source = Arc::new(LocalMediaSource::new(&common::fixtures()).unwrap());
    let server = start_server_on(source, settings).await;
    let addr = server.addr;
    let app = server.app.clone();

    let first = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut second = tokio::net::TcpStream::connect(addr).await.unwrap();
    eventually(|| app.metrics.connections_open.get() == 2).await;

    let over = get(addr, "/vod/h264-aac-3s.mp4/master.m3u8").await;
    assert_eq!(over.status, 503);
    assert_eq!(over.header("retry-after"), Some("1"));

    // An admitted connection is served normally.
    second
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut reply = Vec::new();
    second.read_to_end(&mut reply).await.unwrap();
    assert!(reply.starts_with(b"HTTP/1.1 200"));

    drop(first);
    eventually(|| app.metrics.connections_open.get() == 0).await;
    let again = get(addr, "/vod/h264-aac-3s.mp4/master.m3u8").await;
    assert_eq!(again.status, 200);
}

/// Given a client that stops reading a large segment, when the send deadline passes,
/// then the server closes that stream (the body ends short), has read only a bounded part
/// of the segment from the source, and serves a fast client meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_reader_is_cut_off_and_holds_bounded_memory() {
    if !common::have_tool("ffmpeg") {
        return;
    }
    // A 20-second lossless title as one segment (several MB): more than the kernel's
    // socket buffers can swallow, so a client that stops reading stalls the stream.
    let root = TempDir::new("stalled");
    let made = tokio::task::spawn_blocking({
        let out = root.path().join("long.mp4");
        move || {
            std::process::Command::new("ffmpeg")
                .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
                .arg("testsrc2=size=320x180:rate=30:duration=20")
                .args([
                    "-c:v",
                    "libx264",
                    "-preset",
                    "ultrafast",
                    "-qp",
                    "0",
                    "-g",
                    "30",
                    "-pix_fmt",
                    "yuv444p",
                ])
                .arg(&out)
                .status()
        }
    })
    .await
    .unwrap()
    .unwrap();
    assert!(made.success());

    let mut settings = Settings {
        segment_duration_ms: 30_000,
        stream_chunk_bytes: 16 * 1024,
        ..Default::default()
    };
    settings.server.send_timeout_ms = 300;
    let source = Arc::new(LocalMediaSource::new(root.path()).unwrap());
    let server = start_server_on(source.clone(), settings).await;
    let addr = server.addr;
    let app = server.app.clone();
    let v = version_folder(addr, "long.mp4").await;
    let path = format!("/vod/long.mp4/{v}seg-t1-1.m4s");
    let head = common::request(addr, "HEAD", &path, &[]).await;
    let length: u64 = head.header("content-length").unwrap().parse().unwrap();
    assert!(length > 8_000_000, "segment of {length} bytes");

    // The slow client: a small receive buffer, reads the head and then nothing.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut slow = socket.connect(addr).await.unwrap();
    let reads_before = source.counters().read_bytes.get();
    slow.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut first = [0u8; 1024];
    let _ = slow.read(&mut first).await.unwrap();

    // A fast client is served in full meanwhile.
    let fast = get(addr, &path).await;
    assert_eq!(fast.status, 200);
    assert_eq!(fast.body.len() as u64, length);

    eventually(|| app.metrics.stalled_streams.get() == 1).await;
    eventually(|| app.metrics.streams_in_flight.get() == 0).await;
    // The stalled stream read far less than its segment: the bounded channel held the
    // producer back (the fast client's full read is `length` of the total).
    let read_for_slow = source.counters().read_bytes.get() - reads_before - length;
    assert!(
        read_for_slow < length / 2,
        "read {read_for_slow} bytes for a stalled client of a {length}-byte segment"
    );
    // And its connection was closed before the whole body was sent.
    let mut rest = Vec::new();
    let _ = slow.read_to_end(&mut rest).await;
    assert!((rest.len() as u64) < length);
}

/// A local source whose segment payload reads fail with a timeout, as a stalled bucket
/// would once the title's metadata is cached.
struct FailingPayload(Arc<LocalMediaSource>);

#[async_trait]
impl MediaSource for FailingPayload {
    fn kind(&self) -> SourceKind {
        self.0.kind()
    }
    fn counters(&self) -> &Arc<SourceCounters> {
        self.0.counters()
    }
    async fn identify(&self, key: &ObjectKey) -> Result<ObjectIdentity, SourceError> {
        self.0.identify(key).await
    }
    async fn read_range(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        range: ByteRange,
    ) -> Result<Bytes, SourceError> {
        self.0.read_range(key, identity, range).await
    }
    async fn read_ranges(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        ranges: &[ByteRange],
    ) -> Result<Vec<Bytes>, SourceError> {
        self.0.read_ranges(key, identity, ranges).await
    }
    fn stream_ranges(
        self: Arc<Self>,
        key: ObjectKey,
        _identity: ObjectIdentity,
        _ranges: Vec<ByteRange>,
        _chunk_bytes: usize,
    ) -> ByteStream {
        Box::pin(futures_util::stream::once(async move {
            Err(SourceError::Timeout {
                key: key.to_string(),
            })
        }))
    }
}

/// Given a title whose metadata is cached, when the source then fails to deliver a
/// segment's payload, then the client gets a clean 504, not a 200 cut short, and the
/// server keeps answering.
#[tokio::test]
async fn a_payload_failure_before_the_first_byte_is_a_clean_5xx() {
    let source = Arc::new(FailingPayload(Arc::new(
        LocalMediaSource::new(&common::fixtures()).unwrap(),
    )));
    let server = start_server_on(source, Settings::default()).await;
    let v = version_folder(server.addr, "h264-aac-3s.mp4").await;
    let reply = get(
        server.addr,
        &format!("/vod/h264-aac-3s.mp4/{v}seg-t1-1.m4s"),
    )
    .await;
    assert_eq!(reply.status, 504);
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    assert_eq!(get(server.addr, "/healthz").await.status, 200);
}
