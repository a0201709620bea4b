//! Test support: start the real server in-process on 127.0.0.1:0 over a folder, and a tiny
//! HTTP/1.1 client. Each test file includes this with `mod common;`.
#![allow(dead_code)]

pub mod bounded;
pub mod frames;
pub mod logs;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use vodpack::config::Settings;
use vodpack::server::{self, App};
use vodpack::source::LocalMediaSource;

/// The committed fixtures folder.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// A server running in this test's runtime; dropping it stops the server.
pub struct TestServer {
    pub addr: SocketAddr,
    pub app: Arc<App>,
    stop: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Stop accepting, drain, and wait for `run` to return.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(handle) = self.handle.take() {
            let _ = handle.await;
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Start a server over `root` with `settings` (its `root` and `listen` are replaced).
pub async fn start_server_with(root: &Path, mut settings: Settings) -> TestServer {
    settings.root = root.to_path_buf();
    let source = LocalMediaSource::new(root).expect("media folder");
    start_server_on(Arc::new(source), settings).await
}

/// Start a server reading from `source` with `settings` (its `listen` is replaced).
pub async fn start_server_on(
    source: Arc<dyn vodpack::source::MediaSource>,
    mut settings: Settings,
) -> TestServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    settings.listen = addr;
    let app = App::new(settings, source);
    let (stop, stopped) = oneshot::channel::<()>();
    let handle = tokio::spawn(server::run(listener, app.clone(), async move {
        let _ = stopped.await;
    }));
    TestServer {
        addr,
        app,
        stop: Some(stop),
        handle: Some(handle),
    }
}

/// Start a server over `root` with default settings.
pub async fn start_server(root: &Path) -> TestServer {
    start_server_with(root, Settings::default()).await
}

/// A response as the tiny client saw it.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as UTF-8 text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Send one request with `Connection: close` and read the whole answer.
/// `head` is e.g. `GET /path HTTP/1.1` and `extra` more header lines.
pub async fn request(addr: SocketAddr, method: &str, path: &str, extra: &[(&str, &str)]) -> Reply {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let raw = exchange(stream, &addr.to_string(), method, path, extra).await;
    parse_reply(&raw, method == "HEAD")
}

/// Send one request with `Host: host`, `Connection: close` and the `extra` header lines on
/// `stream`, and read the whole answer, as it came (see [`parse_reply`]).
pub async fn exchange(
    mut stream: TcpStream,
    host: &str,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
) -> Vec<u8> {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read");
    raw
}

/// GET `path`.
pub async fn get(addr: SocketAddr, path: &str) -> Reply {
    request(addr, "GET", path, &[]).await
}

/// POST `body` (of type `content_type`) to `path`, with `Connection: close` and its
/// `Content-Length`, and read the whole answer.
pub async fn post(addr: SocketAddr, path: &str, content_type: &str, body: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    stream.write_all(body).await.expect("write the body");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read");
    parse_reply(&raw, false)
}

/// The answer `raw` as a [`Reply`], its body de-chunked (none read for a HEAD when
/// `head_only`).
pub fn parse_reply(raw: &[u8], head_only: bool) -> Reply {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("response head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().expect("status line");
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status code");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked && !head_only {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body,
    }
}

/// The body of a chunked answer, its chunks joined (up to a chunk cut short).
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = raw.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&raw[..end]).trim(), 16).unwrap_or(0);
        if size == 0 || raw.len() < end + 2 + size {
            break;
        }
        out.extend_from_slice(&raw[end + 2..end + 2 + size]);
        raw = &raw[(end + 4 + size).min(raw.len())..];
    }
    out
}

/// The paths a playlist at `path` links to: `URI="..."` attributes and URI lines,
/// resolved against the playlist's folder.
pub fn linked(path: &str, playlist: &str) -> Vec<String> {
    let folder = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let mut names = Vec::new();
    for line in playlist.lines() {
        if let Some(tag) = line.strip_prefix('#') {
            let mut rest = tag;
            while let Some(at) = rest.find("URI=\"") {
                let value = &rest[at + 5..];
                let Some(end) = value.find('"') else { break };
                names.push(value[..end].to_owned());
                rest = &value[end..];
            }
        } else if !line.trim().is_empty() {
            names.push(line.trim().to_owned());
        }
    }
    names.into_iter().map(|n| format!("{folder}{n}")).collect()
}

/// Add to `all` the media playlists the multivariant playlist at `master` links to and
/// every resource they link to that `all` does not hold yet (inits, segments, keys),
/// asserting that each playlist answers 200.
pub async fn add_linked(addr: SocketAddr, master: &str, all: &mut Vec<String>) {
    let reply = get(addr, master).await;
    assert_eq!(reply.status, 200, "{master}: {}", reply.text());
    for playlist in linked(master, &reply.text()) {
        let reply = get(addr, &playlist).await;
        assert_eq!(reply.status, 200, "{playlist}");
        all.push(playlist.clone());
        for resource in linked(&playlist, &reply.text()) {
            if !all.contains(&resource) {
                all.push(resource);
            }
        }
    }
}

/// The version folder (`v{token}/`, slash included) a multivariant playlist points into.
pub fn version_folder_in(master: &str) -> String {
    let uri = master
        .lines()
        .find(|l| !l.starts_with('#') && !l.is_empty())
        .expect("a variant URI");
    let (folder, _) = uri.split_once('/').expect("a version folder");
    format!("{folder}/")
}

/// The version folder (`v{token}/`, slash included) an MPD's segment templates point into
/// (the folder of the first `initialization` attribute).
pub fn dash_folder_in(mpd: &str) -> String {
    let template = mpd
        .split("initialization=\"")
        .nth(1)
        .expect("an initialization template");
    let (folder, _) = template.split_once('/').expect("a version folder");
    format!("{folder}/")
}

/// Settings with target segments of `ms` milliseconds and every other value its default.
pub fn segments_of(ms: u32) -> Settings {
    Settings {
        segment_duration_ms: ms,
        ..Default::default()
    }
}

/// Settings with target segments of `ms` milliseconds under vodpack's own URLs and under
/// nginx-vod-module's, served at nginx-vod's `locations` (`hls=/hls/,dash=/dash/`, say).
pub fn nginx_vod_settings(ms: u32, locations: &str) -> Settings {
    Settings {
        segment_duration_ms: ms,
        nginx_vod_segment_duration_ms: ms,
        nginx_vod_locations: locations.parse().expect("nginx-vod locations"),
        ..Default::default()
    }
}

/// The version folder (`v{token}/`) the multivariant playlist of `key` points into.
pub async fn version_folder(addr: SocketAddr, key: &str) -> String {
    version_folder_in(&get(addr, &format!("/vod/{key}/master.m3u8")).await.text())
}

/// Serve the fixtures, ask for the main fixture's master playlist with this W3C
/// `traceparent` (a cache miss, so the metadata load and its reads happen under it), and
/// stop the server so every span has ended. Returns the answer.
pub async fn traced_master_request(traceparent: &str) -> Reply {
    let server = start_server(&fixtures()).await;
    let reply = request(
        server.addr,
        "GET",
        "/vod/h264-aac-3s.mp4/master.m3u8",
        &[("traceparent", traceparent)],
    )
    .await;
    server.shutdown().await;
    reply
}

/// A temporary folder (see [`TempDir::new`]) holding a copy of every file of the ladder
/// fixture (`fixtures/ladder/`: three video rungs, French audio, English and German
/// subtitles, `ladder.json`), for tests that add or replace files.
pub fn ladder_copy(name: &str) -> TempDir {
    let dir = TempDir::new(name);
    for entry in std::fs::read_dir(fixtures().join("ladder")).expect("fixtures/ladder") {
        let entry = entry.expect("a fixtures/ladder entry");
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).expect("copy fixture");
    }
    dir
}

/// A temporary folder removed on drop, for tests that write files.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!(
            "vodpack-test-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&path).expect("temp dir");
        Self(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether an outside program (ffmpeg, ffprobe) is available. When it is not, tests that
/// need it skip, unless `VODPACK_REQUIRE_TOOLS=1` (set by CI), which turns the skip into
/// a failure.
pub fn have_tool(name: &str) -> bool {
    have_program(name, "-version")
}

/// A free port on 127.0.0.1 (bound and released, for a program that binds it itself).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// nginx in the foreground over the folder `prefix` (its pid, error log and temporary
/// files there), with `worker_connections` and `http` as the body of its `http` block, its
/// output discarded; the caller stops it.
pub fn spawn_nginx(prefix: &Path, worker_connections: u32, http: &str) -> std::process::Child {
    let p = prefix.display();
    let conf = format!(
        "daemon off;\nmaster_process off;\npid {p}/nginx.pid;\nerror_log {p}/error.log warn;\n\
         events {{ worker_connections {worker_connections}; }}\n\
         http {{\n  client_body_temp_path {p}/body;\n  proxy_temp_path {p}/proxy;\n  \
         fastcgi_temp_path {p}/fastcgi;\n  uwsgi_temp_path {p}/uwsgi;\n  scgi_temp_path {p}/scgi;\n  \
         {http}}}\n"
    );
    std::fs::write(prefix.join("nginx.conf"), conf).expect("write nginx.conf");
    std::process::Command::new("nginx")
        .arg("-p")
        .arg(prefix)
        .arg("-c")
        .arg(prefix.join("nginx.conf"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start nginx")
}

/// [`have_tool`] for a program that tells its version with `version_flag` (`nginx -v`).
pub fn have_program(name: &str, version_flag: &str) -> bool {
    let found = std::process::Command::new(name)
        .arg(version_flag)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found && std::env::var("VODPACK_REQUIRE_TOOLS").is_ok_and(|v| v == "1") {
        panic!("{name} is required (VODPACK_REQUIRE_TOOLS=1) but was not found");
    }
    if !found {
        eprintln!("skipping: {name} not found (set VODPACK_REQUIRE_TOOLS=1 to fail instead)");
    }
    found
}
