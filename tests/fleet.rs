//! A fleet on one machine: three vodpack replicas (the real binary, as child
//! processes) reading one bucket (s3s-fs on 127.0.0.1, signatures checked), behind Debian's
//! nginx running the front tier of `deploy/front/` unchanged but for its listen address and
//! the replica list. 200 titles (hard links of one fixture under 200 keys) are asked for
//! through the front, then asked again while one replica is killed, then once more after it
//! restarts. The replicas' own counters (`vod_index_loads_total` by tier) tell where each
//! title's index came from.
//!
//! Needs nginx: skips without it, unless `VODPACK_REQUIRE_TOOLS=1` (CI), which fails.
//! Every process started here is stopped by its own id; waits are bounded loops.

mod common;
#[path = "common/s3.rs"]
mod s3;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::TempDir;
use s3::S3Server;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const TITLES: usize = 200;
const BUCKET: &str = "media";
const FIXTURE: &str = "h264-aac-3s.mp4";
/// Requests in flight at once in the run that kills a replica.
const CLIENTS: usize = 4;

/// A child process killed (by its own id) when dropped.
struct Process {
    child: Child,
    what: String,
}

impl Process {
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The key of title `i`.
fn title(i: usize) -> String {
    format!("show-{i:03}.mp4")
}

/// One replica: vodpack serving the bucket on `port`, with its disk tier in `disk` and the
/// store tier beside the media.
fn replica(s3: &S3Server, port: u16, disk: &Path) -> Process {
    let child = Command::new(env!("CARGO_BIN_EXE_vodpack"))
        .arg("serve")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("VODPACK_LISTEN", format!("127.0.0.1:{port}"))
        .env("VODPACK_SOURCE", format!("s3://{BUCKET}"))
        .env("VODPACK_S3_ENDPOINT", s3.endpoint())
        .env("VODPACK_SOURCE_ALLOW_HTTP", "true")
        .env("VODPACK_INDEX_CACHE_DIR", disk)
        .env("VODPACK_INDEX_CACHE_PREFIX", ".vodpack-index/")
        .env("AWS_ACCESS_KEY_ID", s3::ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", s3::SECRET_KEY)
        .env("AWS_REGION", s3::REGION)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start vodpack");
    Process {
        child,
        what: format!("replica on {port}"),
    }
}

/// GET `path` from `addr` with `Connection: close`: the status and the whole body, or
/// why there is none (refused, cut short, malformed, over 30 s). Never panics: a replica
/// killed mid-answer is one of the stories.
async fn fetch(addr: SocketAddr, path: &str) -> Result<(u16, Vec<u8>), String> {
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
        let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        stream
            .write_all(head.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        let mut raw = Vec::new();
        stream
            .read_to_end(&mut raw)
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(raw)
    };
    let raw = tokio::time::timeout(Duration::from_secs(30), exchange)
        .await
        .map_err(|_| "no answer in 30 s".to_owned())??;
    let split = (raw.windows(4).position(|w| w == b"\r\n\r\n"))
        .ok_or_else(|| format!("no response head in {} bytes", raw.len()))?;
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let status: u16 = (head.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or("no status")?;
    let body = &raw[split + 4..];
    if head.contains("transfer-encoding: chunked") {
        return Ok((status, dechunk(body).ok_or("a chunked body cut short")?));
    }
    let length = (head.lines())
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    match length {
        Some(n) if n != body.len() => Err(format!("{} of {n} body bytes", body.len())),
        _ => Ok((status, body.to_vec())),
    }
}

/// A chunked body decoded, or `None` when it is cut short.
fn dechunk(mut raw: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let end = raw.windows(2).position(|w| w == b"\r\n")?;
        let size_text = String::from_utf8_lossy(raw.get(..end)?).into_owned();
        let size = usize::from_str_radix(size_text.trim(), 16).ok()?;
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(raw.get(end + 2..end + 2 + size)?);
        raw = raw.get(end + 4 + size..)?;
    }
}

/// Wait until `path` on `addr` answers 200; bounded.
async fn until_ok(addr: SocketAddr, path: &str, what: &str) {
    for _ in 0..400 {
        if matches!(fetch(addr, path).await, Ok((200, _))) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{what} never answered {path}");
}

/// Debian's nginx over the front tier of `deploy/front/`, listening on `port`, sending to
/// `replicas`, with everything it writes under `prefix`.
fn front(prefix: &Path, port: u16, replicas: &[u16]) -> Process {
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/front");
    let conf = std::fs::read_to_string(deploy.join("vodpack-front.conf")).expect("front conf");
    assert!(
        conf.contains("listen 8080;"),
        "the front conf listens on 8080"
    );
    let conf = conf
        .replace("listen 8080;", &format!("listen 127.0.0.1:{port};"))
        .replace("access_log /dev/stdout vodpack_front;", "access_log off;");
    std::fs::write(prefix.join("vodpack-front.conf"), conf).expect("write conf");
    let list: String = (replicas.iter())
        .map(|p| format!("server 127.0.0.1:{p} max_fails=0;\n"))
        .collect();
    std::fs::write(prefix.join("vodpack-replicas.conf"), list).expect("write list");
    let child = common::spawn_nginx(prefix, 1024, "include vodpack-front.conf;\n");
    Process {
        child,
        what: "nginx".into(),
    }
}

/// `vod_index_loads_total` of the replica on `port`, by tier: (memory, disk, store, moov).
async fn loads(port: u16) -> [u64; 4] {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let (status, body) = fetch(addr, "/metrics").await.expect("metrics");
    assert_eq!(status, 200, "metrics of the replica on {port}");
    let text = String::from_utf8_lossy(&body);
    ["memory", "disk", "store", "moov"].map(|tier| {
        let series = format!("vod_index_loads_total{{tier=\"{tier}\"}}");
        (text.lines())
            .find_map(|l| l.strip_prefix(&series))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    })
}

/// Ask the front for title `i` as a player starts it: the master, its first media
/// playlist and that playlist's first segment. `Err` names the first failed answer.
async fn play(front: SocketAddr, i: usize) -> Result<(), String> {
    let base = format!("/vod/{}/", title(i));
    let ok = |path: String| async move {
        match fetch(front, &path).await {
            Ok((200, body)) if !body.is_empty() => Ok(String::from_utf8_lossy(&body).into_owned()),
            Ok((status, _)) => Err(format!("{path}: {status}")),
            Err(e) => Err(format!("{path}: {e}")),
        }
    };
    let first_uri = |text: &str| {
        (text.lines())
            .find(|l| !l.starts_with('#') && !l.is_empty())
            .map(str::to_owned)
    };
    let master = ok(format!("{base}master.m3u8")).await?;
    let variant = first_uri(&master).ok_or(format!("{base}master.m3u8 lists no variant"))?;
    let playlist_path = format!("{base}{variant}");
    let playlist = ok(playlist_path.clone()).await?;
    let folder = &playlist_path[..playlist_path.rfind('/').map_or(0, |k| k + 1)];
    let segment = first_uri(&playlist).ok_or(format!("{playlist_path} lists no segment"))?;
    ok(format!("{folder}{segment}")).await.map(|_| ())
}

/// Given three replicas behind nginx and 200 titles in one bucket, when every title is
/// played through the front, then each title's `moov` is read once across the fleet and
/// every replica holds some; when the titles are played again by four clients at once and
/// one replica is killed in the middle, then no request fails but those in flight on it,
/// and the titles it held come up on the others from the store tier with no `moov` read;
/// when it is restarted, then its titles come back to it, from its disk tier.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_behind_nginx_share_one_warm_catalogue() {
    if !common::have_program("nginx", "-v") {
        return;
    }
    let dir = TempDir::new("fleet");
    let bucket = dir.path().join("buckets").join(BUCKET);
    std::fs::create_dir_all(&bucket).expect("bucket");
    let first = bucket.join(title(0));
    std::fs::copy(common::fixtures().join(FIXTURE), &first).expect("copy fixture");
    for i in 1..TITLES {
        std::fs::hard_link(&first, bucket.join(title(i))).expect("hard link");
    }
    let s3 = S3Server::start(&dir.path().join("buckets")).await;
    let ports: Vec<u16> = (0..3).map(|_| common::free_port()).collect();
    let disks: Vec<PathBuf> = (0..3)
        .map(|r| dir.path().join(format!("disk-{r}")))
        .collect();
    let mut replicas: Vec<Process> = (ports.iter().zip(&disks))
        .map(|(port, disk)| replica(&s3, *port, disk))
        .collect();
    for port in &ports {
        let addr = SocketAddr::from(([127, 0, 0, 1], *port));
        until_ok(addr, "/healthz", &format!("replica on {port}")).await;
    }
    let prefix = dir.path().join("nginx");
    std::fs::create_dir_all(&prefix).expect("nginx prefix");
    let front_port = common::free_port();
    let mut nginx = front(&prefix, front_port, &ports);
    let front_addr = SocketAddr::from(([127, 0, 0, 1], front_port));
    until_ok(front_addr, "/front/healthz", "nginx").await;

    // 1. Every title once, one at a time: which replica loads each is its owner.
    let mut owner = vec![usize::MAX; TITLES];
    let mut before = Vec::new();
    for port in &ports {
        before.push(loads(*port).await[3]);
    }
    for (i, owner) in owner.iter_mut().enumerate() {
        play(front_addr, i)
            .await
            .unwrap_or_else(|e| panic!("title {i}: {e}"));
        for (r, port) in ports.iter().enumerate() {
            let moov = loads(*port).await[3];
            if moov > before[r] {
                assert_eq!(*owner, usize::MAX, "title {i} loaded from its moov twice");
                *owner = r;
                before[r] = moov;
            }
        }
        assert_ne!(*owner, usize::MAX, "title {i} was loaded by no replica");
    }
    let held: Vec<usize> = (0..3)
        .map(|r| owner.iter().filter(|o| **o == r).count())
        .collect();
    eprintln!("titles per replica: {held:?}");
    assert!(
        held.iter().all(|n| *n > 0),
        "a replica holds no title: {held:?}"
    );
    let moov_total: u64 = before.iter().sum();
    assert_eq!(moov_total, TITLES as u64, "moov loads across the fleet");

    // 2. Again, four at a time, killing replica 1 after a quarter of the titles.
    let killed = 1;
    let next = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..CLIENTS {
        let (next, done) = (next.clone(), done.clone());
        clients.spawn(async move {
            let mut failed = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= TITLES {
                    return failed;
                }
                if let Err(e) = play(front_addr, i).await {
                    failed.push((i, e));
                }
                done.fetch_add(1, Ordering::SeqCst);
            }
        });
    }
    for _ in 0..2000 {
        if done.load(Ordering::SeqCst) >= TITLES / 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    replicas[killed].kill();
    let mut failed = Vec::new();
    while let Some(result) = clients.join_next().await {
        failed.extend(result.expect("client task"));
    }
    eprintln!("failed while replica {killed} died: {failed:?}");
    assert!(
        failed.len() <= CLIENTS,
        "more failures than requests in flight: {failed:?}"
    );
    // Every title once more with the replica gone (those it held that the clients asked
    // for before it died were answered from its memory).
    for i in 0..TITLES {
        play(front_addr, i)
            .await
            .unwrap_or_else(|e| panic!("title {i} again: {e}"));
    }
    let mut store_total = 0;
    for (r, port) in ports.iter().enumerate() {
        if r == killed {
            continue;
        }
        let [_, disk, store, moov] = loads(*port).await;
        assert_eq!(moov, held[r] as u64, "replica {r} read a moov again");
        assert_eq!(disk, 0, "replica {r}");
        store_total += store;
    }
    assert_eq!(
        store_total, held[killed] as u64,
        "the killed replica's titles came up from the store tier"
    );

    // 3. The killed replica restarted: its titles come back to it, from its disk tier.
    replicas[killed] = replica(&s3, ports[killed], &disks[killed]);
    let addr = SocketAddr::from(([127, 0, 0, 1], ports[killed]));
    until_ok(addr, "/healthz", "the restarted replica").await;
    for i in (0..TITLES).filter(|i| owner[*i] == killed) {
        play(front_addr, i)
            .await
            .unwrap_or_else(|e| panic!("title {i} after restart: {e}"));
    }
    let [_, disk, store, moov] = loads(ports[killed]).await;
    assert_eq!(
        (disk, store, moov),
        (held[killed] as u64, 0, 0),
        "the restarted replica's loads (disk, store, moov)"
    );

    nginx.kill();
    for mut replica in replicas {
        replica.kill();
        eprintln!("stopped {}", replica.what);
    }
    eprintln!("stopped {}", nginx.what);
}
