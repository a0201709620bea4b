//! Test support, included by each test file with `mod common;`: the real server started
//! in-process on 127.0.0.1:0 over a folder (`start_server*`, settings for it, the fixtures
//! and temporary folders); a tiny HTTP/1.1 client (`http`); what the manifests link to
//! (`playlists`); outside programs (`programs`, `bounded`, `frames`: ffmpeg's pictures);
//! captured logs (`logs`).
#![allow(dead_code)]

pub mod bounded;
pub mod captioned;
pub mod frames;
pub mod http;
pub mod logs;
pub mod playlists;
pub mod programs;

// The helpers by their short names (`common::get`); each test binary uses some of them.
#[allow(unused_imports)]
pub use http::{exchange, get, parse_reply, post, request, Reply};
#[allow(unused_imports)]
pub use playlists::{add_linked, dash_folder_in, linked, version_folder, version_folder_in};
#[allow(unused_imports)]
pub use programs::{free_port, have_program, have_tool, spawn_nginx};

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
