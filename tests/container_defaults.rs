//! The container image's defaults, tested without Docker: the binary started the way the
//! image starts it (the Dockerfile's `ENTRYPOINT` and `CMD`, with an environment holding
//! only `PATH`, the Dockerfile's `ENV` and what a deployment adds) serves a folder and an
//! S3 bucket on loopback, writes JSON log lines, passes the image's `HEALTHCHECK`, and on
//! SIGTERM drains its connections and exits 0.
//!
//! Two values differ from the image, as they must on a shared host: the address is
//! 127.0.0.1:0 rather than 0.0.0.0:8080 (the bound port is read from the line vodpack
//! prints), and the folder is a temporary copy of a fixture rather than `/media`. Both are
//! checked against the Dockerfile before they are replaced. Waits are bounded loops that
//! fail the test instead of hanging it; no assertion depends on elapsed time.

mod common;
#[path = "common/s3.rs"]
mod s3;
#[path = "deploy/support.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use common::TempDir;
use support::json;
use support::Dockerfile;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const FIXTURE: &str = "h264-aac-3s.mp4";

/// Longest wait for the server to print its address, or to exit after SIGTERM (the drain
/// deadline is 25 s): a guard against a hang, not a measurement.
const STARTUP_WAIT: Duration = Duration::from_secs(60);
const EXIT_WAIT: Duration = Duration::from_secs(45);

/// The Dockerfile's environment with the listen address replaced by a loopback port chosen
/// by the system, after checking the image's own value.
fn image_env(image: &Dockerfile) -> Vec<(String, String)> {
    let env = image.env();
    let listen = image
        .env_value("VODPACK_LISTEN")
        .expect("VODPACK_LISTEN in the Dockerfile");
    assert!(
        listen.starts_with("0.0.0.0:"),
        "the image listens on every interface: {listen}"
    );
    assert_eq!(
        image.env_value("VODPACK_LOG_FORMAT").as_deref(),
        Some("json"),
        "the image logs JSON"
    );
    env.into_iter()
        .map(|(k, v)| match k.as_str() {
            "VODPACK_LISTEN" => (k, "127.0.0.1:0".to_owned()),
            _ => (k, v),
        })
        .collect()
}

/// vodpack running as a child process; dropping it kills the child if it still runs.
struct Vodpack {
    child: Child,
    addr: SocketAddr,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Vodpack {
    /// Start the image's command with only `env` (and `PATH`), from `cwd`.
    fn start(image: &Dockerfile, env: &[(String, String)], cwd: &std::path::Path) -> Vodpack {
        let command = image.command();
        assert!(
            command.first().is_some_and(|p| p.ends_with("/vodpack")),
            "the image runs the vodpack binary: {command:?}"
        );
        let mut child = Command::new(env!("CARGO_BIN_EXE_vodpack"))
            .args(&command[1..])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start vodpack");

        // stdout: the first "... on http://ADDR" line names the address; the rest is read
        // and dropped so the child never blocks on a full pipe.
        let stdout = child.stdout.take().expect("stdout");
        let (found, address) = mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some((_, rest)) = line.split_once(" on http://") {
                    let _ = found.send(
                        rest.split_whitespace()
                            .next()
                            .unwrap_or_default()
                            .to_owned(),
                    );
                }
            }
        });
        let stderr_lines = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("stderr");
        let sink = stderr_lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().expect("stderr lines").push(line);
            }
        });

        let addr = match address.recv_timeout(STARTUP_WAIT) {
            Ok(addr) => addr.parse().expect("printed address"),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "vodpack printed no address; stderr:\n{}",
                    stderr_lines.lock().expect("stderr lines").join("\n")
                );
            }
        };
        Vodpack {
            child,
            addr,
            stderr: stderr_lines,
        }
    }

    /// Send SIGTERM (through the shell's `kill`, which every POSIX shell has built in).
    fn sigterm(&self) {
        let status = Command::new("sh")
            .args(["-c", "kill -TERM \"$0\"", &self.child.id().to_string()])
            .status()
            .expect("run sh");
        assert!(status.success(), "kill -TERM failed");
    }

    /// Wait for the process to exit, within `EXIT_WAIT`; kill it and fail otherwise.
    async fn exit_status(&mut self) -> ExitStatus {
        let polls = EXIT_WAIT.as_millis() / 50;
        for _ in 0..polls {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        panic!("vodpack did not exit within {EXIT_WAIT:?} of SIGTERM");
    }

    /// Every stderr line so far, each parsed as JSON: vodpack's logs in the container.
    /// The reader thread may trail the exit by a moment, so wait (boundedly) for `expected`
    /// messages to appear first.
    async fn json_logs(&self, expected: &[&str]) -> Vec<json::Value> {
        for _ in 0..200 {
            let seen = self.stderr.lock().expect("stderr lines").clone();
            let messages: Vec<json::Value> = seen
                .iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| {
                    json::parse(l).unwrap_or_else(|e| panic!("log line is not JSON ({e}): {l}"))
                })
                .collect();
            let has = |m: &str| {
                messages
                    .iter()
                    .any(|v| v.get("message").and_then(json::Value::as_str) == Some(m))
            };
            if expected.iter().all(|m| has(m)) {
                return messages;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "log lines {expected:?} not all seen; stderr:\n{}",
            self.stderr.lock().expect("stderr lines").join("\n")
        );
    }
}

impl Drop for Vodpack {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Check the shape of every log line: an object with a timestamp, a level and a message.
fn assert_log_shape(lines: &[json::Value]) {
    assert!(!lines.is_empty(), "no log lines");
    for line in lines {
        assert!(
            line.get("timestamp")
                .and_then(json::Value::as_str)
                .is_some(),
            "no timestamp: {line:?}"
        );
        let level = line.get("level").and_then(json::Value::as_str);
        assert!(
            matches!(level, Some("TRACE" | "DEBUG" | "INFO" | "WARN" | "ERROR")),
            "no level: {line:?}"
        );
        assert!(
            line.get("message").and_then(json::Value::as_str).is_some(),
            "no message: {line:?}"
        );
    }
}

/// Run the image's `HEALTHCHECK` command against `addr` with the container's variables
/// (the port comes from `VODPACK_LISTEN`); whether it passed. Its output is dropped, as
/// Docker keeps it only for `docker inspect`.
fn healthcheck_passes(image: &Dockerfile, addr: SocketAddr) -> bool {
    let command = image.healthcheck().expect("a HEALTHCHECK in exec form");
    Command::new(&command[0])
        .args(&command[1..])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("VODPACK_LISTEN", format!("0.0.0.0:{}", addr.port()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run the health check")
        .success()
}

/// The first media playlist a multivariant playlist points to.
fn first_media_playlist(master: &str) -> String {
    master
        .lines()
        .find_map(|l| {
            l.split("URI=\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .or_else(|| (!l.starts_with('#') && !l.trim().is_empty()).then_some(l.trim()))
        })
        .expect("a media playlist in the multivariant playlist")
        .to_owned()
}

/// The first segment a media playlist lists.
fn first_segment(media: &str) -> String {
    media
        .lines()
        .find(|l| !l.starts_with('#') && !l.trim().is_empty())
        .expect("a segment in the media playlist")
        .trim()
        .to_owned()
}

/// GET `path` relative to `base` (a path ending in `/`), as a player resolves it.
fn resolve(base: &str, relative: &str) -> String {
    format!("{}{relative}", &base[..=base.rfind('/').expect("a slash")])
}

/// Given the image's command and only its environment over a folder, when a player asks
/// for a title and a client idles on a keep-alive connection, then the title is served,
/// the health check passes, logs are JSON, and SIGTERM closes the idle connection and
/// exits 0 after the drain messages; the health check then fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_defaults_serve_a_folder_log_json_and_drain_on_sigterm() {
    let image = Dockerfile::load();
    assert_eq!(
        image.env_value("VODPACK_ROOT").as_deref(),
        Some("/media"),
        "the image serves /media"
    );
    let media = TempDir::new("container-media");
    std::fs::copy(common::fixtures().join(FIXTURE), media.path().join(FIXTURE))
        .expect("copy fixture");
    let workdir = TempDir::new("container-cwd");
    let env: Vec<(String, String)> = image_env(&image)
        .into_iter()
        .map(|(k, v)| match k.as_str() {
            "VODPACK_ROOT" => (k, media.path().display().to_string()),
            _ => (k, v),
        })
        .collect();
    let mut vodpack = Vodpack::start(&image, &env, workdir.path());
    let addr = vodpack.addr;

    let master_path = format!("/vod/{FIXTURE}/master.m3u8");
    let master = common::get(addr, &master_path).await;
    assert_eq!(master.status, 200, "{}", master.text());
    assert!(master.text().starts_with("#EXTM3U"));
    let media_path = resolve(&master_path, &first_media_playlist(&master.text()));
    let playlist = common::get(addr, &media_path).await;
    assert_eq!(playlist.status, 200, "{media_path}: {}", playlist.text());
    let segment_path = resolve(&media_path, &first_segment(&playlist.text()));
    let segment = common::get(addr, &segment_path).await;
    assert_eq!(segment.status, 200, "{segment_path}");
    assert!(!segment.body.is_empty());
    assert_eq!(
        common::get(addr, &format!("/vod/{FIXTURE}/manifest.mpd"))
            .await
            .status,
        200
    );
    // A failed request writes one log line naming the key.
    assert_eq!(
        common::get(addr, "/vod/missing.mp4/master.m3u8")
            .await
            .status,
        404
    );
    assert_eq!(common::get(addr, "/readyz").await.status, 200);
    assert!(
        healthcheck_passes(&image, addr),
        "HEALTHCHECK failed on a healthy server"
    );

    // A keep-alive connection left idle after one answer.
    let mut idle = TcpStream::connect(addr).await.expect("connect");
    idle.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .expect("write");
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    while !String::from_utf8_lossy(&answer).ends_with("ok\n") {
        let n = tokio::time::timeout(STARTUP_WAIT, idle.read(&mut buf))
            .await
            .expect("an answer on the keep-alive connection")
            .expect("read");
        assert!(n > 0, "closed before answering");
        answer.extend_from_slice(&buf[..n]);
    }

    vodpack.sigterm();
    let n = tokio::time::timeout(EXIT_WAIT, idle.read(&mut buf))
        .await
        .expect("the idle connection is closed on SIGTERM")
        .unwrap_or(0);
    assert_eq!(
        n, 0,
        "the idle connection got more bytes instead of being closed"
    );
    let status = vodpack.exit_status().await;
    assert_eq!(
        status.code(),
        Some(0),
        "exit status after SIGTERM: {status:?}"
    );

    let logs = vodpack
        .json_logs(&[
            "request failed",
            "shutdown signal received",
            "draining connections",
            "stopped",
        ])
        .await;
    assert_log_shape(&logs);
    let failed = logs
        .iter()
        .find(|l| l.get("message").and_then(json::Value::as_str) == Some("request failed"))
        .expect("the 404's log line");
    assert_eq!(
        failed.get("status").and_then(json::Value::as_f64),
        Some(404.0),
        "{failed:?}"
    );
    assert!(
        logs.iter()
            .all(|l| l.get("message").and_then(json::Value::as_str)
                != Some("drain deadline passed with connections still open")),
        "the drain ran into its deadline"
    );
    assert!(
        !healthcheck_passes(&image, addr),
        "HEALTHCHECK passed with the server gone"
    );
}

/// Given the image's command and environment plus what deploy/compose.yaml adds for a
/// bucket (VODPACK_SOURCE, VODPACK_S3_ENDPOINT, VODPACK_SOURCE_ALLOW_HTTP and the AWS_*
/// variables), over an S3 server on loopback, when a segment request is waiting on the
/// bucket as SIGTERM arrives, then vodpack stops accepting, still finishes that request
/// in full once the bucket answers, and exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_defaults_serve_a_bucket_and_finish_in_flight_requests_on_sigterm() {
    let image = Dockerfile::load();
    let bucket = TempDir::new("container-s3");
    let object = bucket.path().join("media").join("videos").join(FIXTURE);
    std::fs::create_dir_all(object.parent().expect("parent")).expect("bucket folder");
    std::fs::copy(common::fixtures().join(FIXTURE), &object).expect("copy fixture");
    let server = s3::S3Server::start(bucket.path()).await;
    let workdir = TempDir::new("container-cwd");

    let mut env = image_env(&image);
    env.extend(
        [
            ("VODPACK_SOURCE", "s3://media/videos".to_owned()),
            ("VODPACK_S3_ENDPOINT", server.endpoint()),
            ("VODPACK_SOURCE_ALLOW_HTTP", "true".to_owned()),
            ("AWS_ACCESS_KEY_ID", s3::ACCESS_KEY.to_owned()),
            ("AWS_SECRET_ACCESS_KEY", s3::SECRET_KEY.to_owned()),
            ("AWS_REGION", s3::REGION.to_owned()),
        ]
        .map(|(k, v)| (k.to_owned(), v)),
    );
    let mut vodpack = Vodpack::start(&image, &env, workdir.path());
    let addr = vodpack.addr;

    let master_path = format!("/vod/{FIXTURE}/master.m3u8");
    let master = common::get(addr, &master_path).await;
    assert_eq!(master.status, 200, "{}", master.text());
    let media_path = resolve(&master_path, &first_media_playlist(&master.text()));
    let playlist = common::get(addr, &media_path).await;
    assert_eq!(playlist.status, 200, "{}", playlist.text());
    let segment_path = resolve(&media_path, &first_segment(&playlist.text()));
    assert!(
        server.tally().gets > 0,
        "vodpack read nothing from the bucket"
    );
    assert!(
        healthcheck_passes(&image, addr),
        "HEALTHCHECK failed on a healthy server"
    );

    // Hold the bucket, and send a segment request that must wait on it.
    server.set_stall(true);
    let before = server.tally();
    let in_flight = tokio::spawn({
        let path = segment_path.clone();
        async move { common::get(addr, &path).await }
    });
    let mut waiting = false;
    for _ in 0..1200 {
        let now = server.tally();
        if now.gets + now.heads > before.gets + before.heads {
            waiting = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(waiting, "the segment request never reached the bucket");

    vodpack.sigterm();
    // Shutdown has begun once the listening socket is closed.
    let mut closed = false;
    for _ in 0..1200 {
        if TcpStream::connect(addr).await.is_err() {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(closed, "vodpack kept accepting after SIGTERM");
    server.set_stall(false);

    let segment = in_flight.await.expect("the in-flight request");
    assert_eq!(segment.status, 200, "{}", segment.text());
    let length: usize = segment
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .expect("content-length");
    assert_eq!(
        segment.body.len(),
        length,
        "the segment was cut short by the drain"
    );
    let status = vodpack.exit_status().await;
    assert_eq!(
        status.code(),
        Some(0),
        "exit status after SIGTERM: {status:?}"
    );
    let logs = vodpack
        .json_logs(&[
            "shutdown signal received",
            "draining connections",
            "stopped",
        ])
        .await;
    assert_log_shape(&logs);
}
