//! 10,000 viewers on one machine: a bench, not a test (`make viewers`).
//!
//! It starts the release server as its own process (`vodpack serve` over target/bench/,
//! the 60-minute asset of `make bench`, about 250 kbit/s), then opens VIEWERS keep-alive
//! connections at once, as at a premiere, each asking every VIEWERS_PERIOD_MS for a random
//! segment of the title (its video rendition, about 250 kbit/s; VIEWERS_AUDIO=1 adds the
//! matching audio segment, a second request per period) for VIEWERS_SECONDS. It reports requests, errors (any answer but 200, or a broken
//! connection), the p50/p99/max segment time seen by the client, what was queued and shed
//! (the server's own counters), and the server's resident memory at rest and at the peak,
//! per connection.
//!
//! Then VIEWERS unpaced connections, each asking for segments back to back for
//! UNPACED_SECONDS: what is shed and that no client waits past 10 s.
//!
//! Variables: VIEWERS (10000), VIEWERS_SECONDS (120), VIEWERS_PERIOD_MS (6000),
//! VIEWERS_AUDIO (0), UNPACED_SECONDS (15), VIEWERS_CLIENT_THREADS (2). With VIEWERS_PEER
//! (host:port) and VIEWERS_PEER_PIDS (its master and workers), the same load goes to the
//! peer, nginx-vod-module, already serving target/bench/ under `/hls/`
//! (`../shared/peer/start.sh`), asking for its video segments alone (`seg-N-v1.m4s`):
//! queued and shed are then 0 (it has no such counters), memory is its processes'.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use vodpack::bench::KeepAliveClient;

/// The asset `make bench` synthesizes.
const ASSET: &str = "long-60min.mp4";

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The origin under load: vodpack's release server, started here and killed by its own
/// id when dropped, or the peer (nginx-vod-module) already running, measured through its
/// processes' ids.
struct Server {
    child: Option<Child>,
    addr: SocketAddr,
    /// The processes whose resident memory is the origin's.
    pids: Vec<u32>,
    /// Where the title's HLS answers are: `/vod/ASSET/` or the peer's `/hls/ASSET/`.
    base: String,
    /// The peer: its playlists name muxed segments, which are asked for a track at a time.
    peer: bool,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Server {
    fn resident_bytes(&self) -> u64 {
        (self.pids.iter())
            .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/statm")).ok())
            .filter_map(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
            .map(|pages| pages * 4096)
            .sum()
    }

    /// The peer at `VIEWERS_PEER` (host:port) with `VIEWERS_PEER_PIDS` (master and
    /// workers, comma-separated), serving target/bench/ under `/hls/` as
    /// `../shared/peer/start.sh` configures it; `None` without `VIEWERS_PEER`.
    fn peer() -> Option<Server> {
        let addr: SocketAddr = std::env::var("VIEWERS_PEER").ok()?.parse().ok()?;
        let pids = std::env::var("VIEWERS_PEER_PIDS").unwrap_or_default();
        Some(Server {
            child: None,
            addr,
            pids: pids
                .split(',')
                .filter_map(|p| p.trim().parse().ok())
                .collect(),
            base: format!("/hls/{ASSET}/"),
            peer: true,
        })
    }
}

/// The release server over `root` on a free port, with room for `viewers` connections.
fn start_server(root: &std::path::Path, viewers: u64) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(18080);
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let child = Command::new(env!("CARGO_BIN_EXE_vodpack"))
        .arg("serve")
        .arg("--root")
        .arg(root)
        .arg("--listen")
        .arg(addr.to_string())
        .arg("--max-connections")
        .arg((viewers + 100).to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start vodpack: {e}"));
    let pids = vec![child.id()];
    Server {
        child: Some(child),
        addr,
        pids,
        base: format!("/vod/{ASSET}/"),
        peer: false,
    }
}

/// The body of one GET on a fresh connection, `None` unless it is a 200.
async fn fetch_text(addr: SocketAddr, path: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.ok()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_owned())
}

/// URIs of `text` (lines that are not tags), resolved against `base`; an absolute URL
/// (the peer's) as its path.
fn uris(base: &str, text: &str) -> Vec<String> {
    (text.lines())
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| match l.trim().strip_prefix("http://") {
            Some(rest) => rest[rest.find('/').unwrap_or(rest.len())..].to_owned(),
            None => format!("{base}{}", l.trim()),
        })
        .collect()
}

/// The segment paths of the title's first video rendition and of its audio. The peer
/// lists muxed segments (`seg-N-v1-a1.m4s`); its video and audio alone are the same
/// names with one track (`seg-N-v1.m4s`, `seg-N-a1.m4s`), like for like with vodpack's.
async fn segment_lists(server: &Server) -> (Vec<String>, Vec<String>) {
    let (addr, base) = (server.addr, server.base.clone());
    if server.peer {
        let master = fetch_text(addr, &format!("{base}master.m3u8"))
            .await
            .expect("the peer answers master.m3u8");
        let playlist = uris(&base, &master).into_iter().next().expect("a variant");
        let muxed = uris(&base, &fetch_text(addr, &playlist).await.expect("playlist"));
        let one = |track: &str| {
            (muxed.iter())
                .map(|p| p.replace("-v1-a1.", &format!("-{track}.")))
                .collect::<Vec<_>>()
        };
        return (one("v1"), one("a1"));
    }
    let mut master = None;
    for _ in 0..400 {
        master = fetch_text(addr, &format!("{base}master.m3u8")).await;
        if master.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let master = master.expect("the server answers master.m3u8");
    let video_playlist = uris(&base, &master).into_iter().next().expect("a variant");
    let audio_playlist = (master.lines())
        .filter(|l| l.starts_with("#EXT-X-MEDIA:TYPE=AUDIO"))
        .find_map(|l| l.split("URI=\"").nth(1)?.split('"').next())
        .map(|uri| format!("{base}{uri}"))
        .expect("an audio rendition");
    let folder = |p: &str| p[..p.rfind('/').map_or(0, |i| i + 1)].to_owned();
    let video = fetch_text(addr, &video_playlist)
        .await
        .expect("video playlist");
    let audio = fetch_text(addr, &audio_playlist)
        .await
        .expect("audio playlist");
    (
        uris(&folder(&video_playlist), &video),
        uris(&folder(&audio_playlist), &audio),
    )
}

/// What the viewers saw.
#[derive(Default)]
struct Tally {
    requests: AtomicU64,
    errors: AtomicU64,
    shed: AtomicU64,
    bytes: AtomicU64,
    /// Segment times in microseconds.
    times: Mutex<Vec<u64>>,
}

/// A small deterministic generator per viewer (xorshift), so a run is repeatable.
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// One viewer: connect, then every `period` (or back to back when `None`) one random
/// segment, video and audio, until `end`.
async fn viewer(
    addr: SocketAddr,
    lists: Arc<(Vec<String>, Vec<String>)>,
    seed: u64,
    period: Option<Duration>,
    end: Instant,
    tally: Arc<Tally>,
    with_audio: bool,
) {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut client = None;
    let mut next = Instant::now();
    while Instant::now() < end {
        if client.is_none() {
            match KeepAliveClient::connect(addr).await {
                Ok(c) => client = Some(c),
                Err(_) => {
                    tally.errors.fetch_add(1, Ordering::Relaxed);
                    tally.requests.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue;
                }
            }
        }
        let n = lists.0.len().max(1);
        let pick = (next_random(&mut state) % n as u64) as usize;
        let paths = match with_audio {
            true => vec![lists.0.get(pick), lists.1.get(pick)],
            false => vec![lists.0.get(pick)],
        };
        for path in paths.into_iter().flatten() {
            let Some(c) = client.as_mut() else { break };
            let started = Instant::now();
            let reply = tokio::time::timeout(Duration::from_secs(30), c.get(path)).await;
            tally.requests.fetch_add(1, Ordering::Relaxed);
            match reply {
                Ok(Ok(r)) if r.status == 200 => {
                    tally.bytes.fetch_add(r.body_bytes, Ordering::Relaxed);
                    let micros = started.elapsed().as_micros() as u64;
                    if let Ok(mut times) = tally.times.lock() {
                        times.push(micros);
                    }
                }
                Ok(Ok(r)) => {
                    tally.errors.fetch_add(1, Ordering::Relaxed);
                    if r.status == 503 {
                        tally.shed.fetch_add(1, Ordering::Relaxed);
                    }
                }
                _ => {
                    tally.errors.fetch_add(1, Ordering::Relaxed);
                    client = None;
                }
            }
        }
        if let Some(period) = period {
            next += period;
            tokio::time::sleep_until(next.into()).await;
        }
    }
}

/// The server's counter `series` (0 when absent).
async fn server_counter(addr: SocketAddr, series: &str) -> u64 {
    let text = fetch_text(addr, "/metrics").await.unwrap_or_default();
    (text.lines())
        .find_map(|l| l.strip_prefix(series))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Run `viewers` viewers with `period` for `seconds`, and print what they saw.
async fn run(
    server: &Server,
    lists: Arc<(Vec<String>, Vec<String>)>,
    viewers: u64,
    period: Option<Duration>,
    seconds: u64,
) {
    let tally = Arc::new(Tally::default());
    let rest = server.resident_bytes();
    let queued_before = server_counter(server.addr, "vod_requests_queued_total ").await;
    let shed_before =
        server_counter(server.addr, "vod_requests_shed_total{class=\"segment\"} ").await;
    let started = Instant::now();
    let end = started + Duration::from_secs(seconds);
    let mut tasks = tokio::task::JoinSet::new();
    for v in 0..viewers {
        let (lists, tally) = (lists.clone(), tally.clone());
        let with_audio = env_u64("VIEWERS_AUDIO", 0) == 1;
        tasks.spawn(viewer(
            server.addr,
            lists,
            v + 1,
            period,
            end,
            tally,
            with_audio,
        ));
    }
    let mut peak = rest;
    while !tasks.is_empty() {
        tokio::select! {
            joined = tasks.join_next() => { if joined.is_none() { break; } }
            _ = tokio::time::sleep(Duration::from_millis(500)) => {
                peak = peak.max(server.resident_bytes());
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let requests = tally.requests.load(Ordering::Relaxed);
    let errors = tally.errors.load(Ordering::Relaxed);
    let mut times = tally.times.lock().map(|t| t.clone()).unwrap_or_default();
    times.sort_unstable();
    let at = |p: f64| {
        let rank = ((p / 100.0) * times.len() as f64).ceil().max(1.0) as usize;
        times.get(rank.min(times.len()) - 1).copied().unwrap_or(0) as f64 / 1000.0
    };
    let queued = server_counter(server.addr, "vod_requests_queued_total ").await - queued_before;
    let shed = server_counter(server.addr, "vod_requests_shed_total{class=\"segment\"} ").await
        - shed_before;
    let mb = |b: u64| b as f64 / 1e6;
    println!(
        "{viewers} viewers, {}, {seconds} s: {requests} requests in {elapsed:.1} s, {errors} errors \
         ({:.3}%; {} answered 503), {:.0} MB/s",
        period.map_or("unpaced".to_owned(), |p| format!("a segment every {} ms", p.as_millis())),
        100.0 * errors as f64 / requests.max(1) as f64,
        tally.shed.load(Ordering::Relaxed),
        mb(tally.bytes.load(Ordering::Relaxed)) / elapsed,
    );
    println!(
        "  segment time (client): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; server: {queued} queued, {shed} shed",
        at(50.0),
        at(99.0),
        at(100.0)
    );
    println!(
        "  server memory: {:.1} MB at rest, {:.1} MB at the peak: {:.1} KB per connection",
        mb(rest),
        mb(peak),
        (peak.saturating_sub(rest)) as f64 / viewers.max(1) as f64 / 1000.0
    );
}

fn main() {
    let viewers = env_u64("VIEWERS", 10_000);
    let seconds = env_u64("VIEWERS_SECONDS", 120);
    let period = Duration::from_millis(env_u64("VIEWERS_PERIOD_MS", 6_000));
    let unpaced_seconds = env_u64("UNPACED_SECONDS", 15);
    let threads = env_u64("VIEWERS_CLIENT_THREADS", 2).max(1) as usize;
    let root = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("bench");
    if !root.join(ASSET).exists() {
        eprintln!(
            "{} is missing: run `make bench` once to make it",
            root.join(ASSET).display()
        );
        std::process::exit(2);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let server = Server::peer().unwrap_or_else(|| start_server(&root, viewers));
    runtime.block_on(async {
        let lists = Arc::new(segment_lists(&server).await);
        println!(
            "{} {} over {}: {} video and {} audio segments",
            if server.peer { "the peer" } else { "vodpack" },
            server.addr,
            root.join(ASSET).display(),
            lists.0.len(),
            lists.1.len()
        );
        run(&server, lists.clone(), viewers, Some(period), seconds).await;
        run(&server, lists, viewers, None, unpaced_seconds).await;
    });
}
