//! The store: a plain HTTP object server on 127.0.0.1 (hyper), read by both origins, with
//! a latency you set, and its counts.
//!
//! `GET` and `HEAD` of `/media/KEY`; one byte range per request (`bytes=A-B`, `A-`, `-N`:
//! 206 with `Content-Range`; 416 when it cannot be satisfied; a list of ranges is ignored
//! and the whole object sent, as RFC 9110 allows); a strong `ETag` per key (two keys of
//! one shape differ), `If-Match` (412), `Last-Modified`, `Content-Length`, keep-alive.
//! Every answer's head waits `latency`; a seeded, deterministic share `slow_share` of them
//! waits `slow` instead. One store is started per origin run, so its counts (requests by
//! method, body bytes, per title) are that origin's alone.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::watch;

use crate::media::Catalogue;

/// How the store answers.
#[derive(Clone, Copy)]
pub struct StoreConfig {
    pub latency: Duration,
    pub slow_share: f64,
    pub slow: Duration,
    pub seed: u64,
    /// Print every request and its answer on stderr.
    pub log: bool,
}

/// One title's requests and bytes.
#[derive(Clone, Copy, Default)]
pub struct TitleCount {
    pub gets: u64,
    pub heads: u64,
    pub bytes: u64,
}

/// What the store answered since its last reset.
#[derive(Default)]
pub struct Counts {
    pub gets: AtomicU64,
    pub heads: AtomicU64,
    /// Requests for no title of the catalogue (vodpack's readiness probe, ...).
    pub other: AtomicU64,
    pub bytes: AtomicU64,
    pub slow: AtomicU64,
    pub ranged: AtomicU64,
    pub status_412: AtomicU64,
    pub status_416: AtomicU64,
    pub per_title: Mutex<HashMap<u32, TitleCount>>,
}

impl Counts {
    pub fn reset(&self) {
        for c in [
            &self.gets,
            &self.heads,
            &self.other,
            &self.bytes,
            &self.slow,
            &self.ranged,
            &self.status_412,
            &self.status_416,
        ] {
            c.store(0, Ordering::Relaxed);
        }
        if let Ok(mut map) = self.per_title.lock() {
            map.clear();
        }
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    /// The counts of `titles` (those played), summed.
    pub fn of_titles(&self, titles: impl Iterator<Item = u32>) -> TitleCount {
        let map = self.per_title.lock().map(|m| m.clone()).unwrap_or_default();
        let mut sum = TitleCount::default();
        for n in titles {
            if let Some(c) = map.get(&n) {
                sum.gets += c.gets;
                sum.heads += c.heads;
                sum.bytes += c.bytes;
            }
        }
        sum
    }
}

struct Shared {
    catalogue: Arc<Catalogue>,
    config: StoreConfig,
    counts: Arc<Counts>,
    sequence: AtomicU64,
}

/// A running store; `stop` (or drop) closes its listener and connections.
pub struct Store {
    pub addr: SocketAddr,
    pub counts: Arc<Counts>,
    stop: watch::Sender<bool>,
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

impl Store {
    pub async fn start(catalogue: Arc<Catalogue>, config: StoreConfig) -> std::io::Result<Store> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let counts = Arc::new(Counts::default());
        let shared = Arc::new(Shared {
            catalogue,
            config,
            counts: counts.clone(),
            sequence: AtomicU64::new(0),
        });
        let (stop, stopped) = watch::channel(false);
        let mut accept_stop = stopped.clone();
        tokio::spawn(async move {
            loop {
                let (stream, _) = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok(a) => a,
                        Err(_) => continue,
                    },
                    _ = accept_stop.changed() => return,
                };
                let _ = stream.set_nodelay(true);
                let (shared, mut stopped) = (shared.clone(), stopped.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let shared = shared.clone();
                        async move { Ok::<_, Infallible>(answer(&shared, req).await) }
                    });
                    let connection = hyper::server::conn::http1::Builder::new()
                        .keep_alive(true)
                        .serve_connection(TokioIo::new(stream), service);
                    tokio::select! {
                        _ = connection => {}
                        _ = stopped.changed() => {}
                    }
                });
            }
        });
        Ok(Store { addr, counts, stop })
    }
}

/// splitmix64: the `n`th draw of a seeded sequence.
fn draw(seed: u64, n: u64) -> f64 {
    let mut z = seed.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

async fn answer(shared: &Shared, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let n = shared.sequence.fetch_add(1, Ordering::Relaxed);
    let slow = draw(shared.config.seed, n) < shared.config.slow_share;
    let delay = if slow {
        shared.counts.slow.fetch_add(1, Ordering::Relaxed);
        shared.config.slow
    } else {
        shared.config.latency
    };
    let response = respond(shared, &req);
    if shared.config.log {
        let header = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
        eprintln!(
            "store: {} {} range={} if-match={} -> {} {} bytes{}",
            req.method(),
            req.uri(),
            header(header::RANGE).unwrap_or("-"),
            header(header::IF_MATCH).unwrap_or("-"),
            response.status().as_u16(),
            http_body::Body::size_hint(response.body())
                .exact()
                .unwrap_or(0),
            if slow { " (slow)" } else { "" },
        );
    }
    tokio::time::sleep(delay).await;
    response
}

fn plain(status: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = status;
    response
}

/// The answer to `req`, counted.
fn respond(shared: &Shared, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    let counts = &shared.counts;
    let head = match *req.method() {
        Method::GET => false,
        Method::HEAD => true,
        _ => {
            counts.other.fetch_add(1, Ordering::Relaxed);
            return plain(StatusCode::METHOD_NOT_ALLOWED);
        }
    };
    let found =
        (req.uri().path().strip_prefix("/media/")).and_then(|key| shared.catalogue.parse(key));
    let Some((title, shape)) = found else {
        counts.other.fetch_add(1, Ordering::Relaxed);
        return plain(StatusCode::NOT_FOUND);
    };
    let loaded = &shared.catalogue.shapes[shape];
    let etag = format!("\"{}-{title}\"", loaded.version);
    let len = loaded.bytes.len() as u64;
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let mut status = StatusCode::OK;
    let mut range = 0..len;
    if let Some(wanted) = header("if-match") {
        let matches = wanted.trim() == "*" || wanted.split(',').any(|t| t.trim() == etag);
        if !matches {
            counts.status_412.fetch_add(1, Ordering::Relaxed);
            status = StatusCode::PRECONDITION_FAILED;
        }
    }
    if status == StatusCode::OK {
        if let Some(spec) = header("range") {
            counts.ranged.fetch_add(1, Ordering::Relaxed);
            match parse_range(spec, len) {
                Some(Ok(r)) => (status, range) = (StatusCode::PARTIAL_CONTENT, r),
                Some(Err(())) => {
                    counts.status_416.fetch_add(1, Ordering::Relaxed);
                    status = StatusCode::RANGE_NOT_SATISFIABLE;
                }
                None => {}
            }
        }
    }
    let body = match status {
        StatusCode::OK | StatusCode::PARTIAL_CONTENT if !head => {
            loaded.bytes.slice(range.start as usize..range.end as usize)
        }
        _ => Bytes::new(),
    };
    let sent = body.len() as u64;
    counts.bytes.fetch_add(sent, Ordering::Relaxed);
    match head {
        true => counts.heads.fetch_add(1, Ordering::Relaxed),
        false => counts.gets.fetch_add(1, Ordering::Relaxed),
    };
    if let Ok(mut map) = counts.per_title.lock() {
        let entry = map.entry(title).or_default();
        match head {
            true => entry.heads += 1,
            false => entry.gets += 1,
        }
        entry.bytes += sent;
    }
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    let mut set = |name: header::HeaderName, value: String| {
        if let Ok(v) = HeaderValue::from_str(&value) {
            headers.insert(name, v);
        }
    };
    set(header::ETAG, etag);
    set(header::LAST_MODIFIED, loaded.last_modified.clone());
    set(header::ACCEPT_RANGES, "bytes".into());
    match status {
        StatusCode::OK => set(header::CONTENT_LENGTH, len.to_string()),
        StatusCode::PARTIAL_CONTENT => {
            set(
                header::CONTENT_LENGTH,
                (range.end - range.start).to_string(),
            );
            let last = range.end - 1;
            set(
                header::CONTENT_RANGE,
                format!("bytes {}-{last}/{len}", range.start),
            );
        }
        StatusCode::RANGE_NOT_SATISFIABLE => {
            set(header::CONTENT_LENGTH, "0".into());
            set(header::CONTENT_RANGE, format!("bytes */{len}"));
        }
        _ => set(header::CONTENT_LENGTH, "0".into()),
    }
    if status.is_success() {
        set(header::CONTENT_TYPE, "video/mp4".into());
    }
    response
}

/// One byte range of an object of `len` bytes: `None` to ignore the header (not bytes,
/// malformed, or several ranges), `Err` when it cannot be satisfied.
fn parse_range(spec: &str, len: u64) -> Option<Result<std::ops::Range<u64>, ()>> {
    let spec = spec.trim().strip_prefix("bytes=")?.trim();
    if spec.contains(',') {
        return None;
    }
    let (first, last) = spec.split_once('-')?;
    let (first, last) = (first.trim(), last.trim());
    if first.is_empty() {
        let suffix: u64 = last.parse().ok()?;
        if suffix == 0 || len == 0 {
            return Some(Err(()));
        }
        return Some(Ok(len - suffix.min(len)..len));
    }
    let first: u64 = first.parse().ok()?;
    let end = match last {
        "" => len,
        last => {
            let last: u64 = last.parse().ok()?;
            if last < first {
                return None;
            }
            last.saturating_add(1).min(len)
        }
    };
    if first >= len {
        return Some(Err(()));
    }
    Some(Ok(first..end))
}
