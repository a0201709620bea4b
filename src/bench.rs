//! The hidden benchmarking module: what `benches/budgets.rs` needs to drive the real server
//! in-process, and nothing else. Not part of the public API (hidden from the docs).
//!
//! It starts the server on a loopback port exactly as `vodpack serve` does, performs a
//! "load" the way a first request does (identify, read and parse `moov`, plan, build every
//! init segment and manifest), and offers a small keep-alive HTTP/1.1 client that reads
//! `Content-Length` bodies, so measurements include real sockets but no client library.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

use crate::config::Settings;
use crate::media::{load_index, MediaError};
use crate::package::{
    init_segment, render_media_playlist, render_mpd, render_multivariant_playlist, Title,
};
use crate::server::{self, App};
use crate::source::{LocalMediaSource, MediaSource, ObjectKey};

/// A server started for a benchmark; `stop` ends it.
pub struct BenchServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its shared state (metrics, catalog).
    pub app: Arc<App>,
    stop: Option<oneshot::Sender<()>>,
    handle: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl BenchServer {
    /// Serve `root` with `settings` on 127.0.0.1 (an ephemeral port).
    ///
    /// # Errors
    /// When the folder cannot be opened or the port bound.
    pub async fn start(root: &Path, mut settings: Settings) -> std::io::Result<Self> {
        // As `vodpack serve` builds it.
        let source = LocalMediaSource::new(root)?
            .with_identity_ttl(std::time::Duration::from_millis(
                settings.object_store.identity_ttl_ms,
            ))
            .with_warm_buffers(
                2,
                usize::try_from(settings.load_buffer_bytes / 2).unwrap_or(0),
            )
            .with_merge_gap(settings.local_merge_gap_bytes);
        settings.root = root.to_path_buf();
        Self::start_on(Arc::new(source), settings).await
    }

    /// Serve `source` with `settings` on 127.0.0.1 (an ephemeral port).
    ///
    /// # Errors
    /// When the port cannot be bound.
    pub async fn start_on(
        source: Arc<dyn MediaSource>,
        settings: Settings,
    ) -> std::io::Result<Self> {
        Self::start_with_shelves(source, settings, crate::server::IndexShelves::default()).await
    }

    /// As [`BenchServer::start_on`], with the index tiers on `shelves`.
    ///
    /// # Errors
    /// When the port cannot be bound.
    pub async fn start_with_shelves(
        source: Arc<dyn MediaSource>,
        mut settings: Settings,
        shelves: crate::server::IndexShelves,
    ) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        settings.listen = addr;
        let app = App::with_shelves(settings, source, shelves);
        let (stop, stopped) = oneshot::channel::<()>();
        let handle = tokio::spawn(server::run(listener, app.clone(), async move {
            let _ = stopped.await;
        }));
        Ok(Self {
            addr,
            app,
            stop: Some(stop),
            handle,
        })
    }

    /// Stop the server and wait for it to drain.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = self.handle.await;
    }
}

/// Load a title the way a first request does, without the cache: identify, read and parse
/// `moov`, plan, and build every init segment and manifest. Returns the title.
///
/// # Errors
/// Any load error.
pub async fn load_title(
    source: &Arc<dyn MediaSource>,
    key: &ObjectKey,
    settings: &Settings,
) -> Result<Title, MediaError> {
    let identity = source.identify(key).await?;
    let index = load_index(source, key, &identity, &settings.limits).await?;
    let target = settings.segment_duration_ms;
    tokio::task::spawn_blocking(move || {
        let title = Title::new(index, target).map_err(|e| MediaError::Internal {
            reason: e.to_string(),
        })?;
        for rendition in &title.renditions {
            if let Some(track) = title.index.tracks.get(rendition.track_pos) {
                std::hint::black_box(init_segment(track));
            }
            std::hint::black_box(render_media_playlist(&title, rendition));
        }
        std::hint::black_box(render_multivariant_playlist(&title));
        std::hint::black_box(render_mpd(&title));
        Ok(title)
    })
    .await
    .map_err(|e| MediaError::Internal {
        reason: e.to_string(),
    })?
}

/// A minimal keep-alive HTTP/1.1 client for one connection.
pub struct KeepAliveClient {
    stream: BufReader<TcpStream>,
    host: String,
}

/// What one response was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientReply {
    /// Status code.
    pub status: u16,
    /// Body bytes read.
    pub body_bytes: u64,
}

impl KeepAliveClient {
    /// Connect to `addr`.
    ///
    /// # Errors
    /// When the connection fails.
    pub async fn connect(addr: SocketAddr) -> std::io::Result<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream: BufReader::with_capacity(16 * 1024, stream),
            host: addr.to_string(),
        })
    }

    /// GET `path` and read the whole body (discarding it in 16 KiB pieces).
    ///
    /// # Errors
    /// On I/O errors or a response without `Content-Length`.
    pub async fn get(&mut self, path: &str) -> std::io::Result<ClientReply> {
        let request = format!("GET {path} HTTP/1.1\r\nHost: {}\r\n\r\n", self.host);
        self.stream.get_mut().write_all(request.as_bytes()).await?;
        let mut line = String::new();
        self.stream.read_line(&mut line).await?;
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
        let mut length: Option<u64> = None;
        loop {
            line.clear();
            if self.stream.read_line(&mut line).await? == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                break;
            }
            if let Some((name, value)) = trimmed.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().ok();
                }
            }
        }
        let length = length.ok_or_else(|| std::io::Error::other("no content-length"))?;
        let mut remaining = length;
        let mut buf = [0u8; 16 * 1024];
        while remaining > 0 {
            let want = remaining.min(buf.len() as u64) as usize;
            let n = self.stream.read(&mut buf[..want]).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            remaining -= n as u64;
        }
        Ok(ClientReply {
            status,
            body_bytes: length,
        })
    }
}

/// Resident set size of this process in bytes, from /proc (0 where unavailable).
pub fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}
