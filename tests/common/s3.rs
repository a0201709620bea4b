//! Test support for object storage: a real S3-compatible server on 127.0.0.1, and vodpack
//! servers reading from it. Include with `#[path = "common/s3.rs"] mod s3;`.
//!
//! The server is `s3s-fs` (from crates.io) run in-process: it serves the folder
//! `ROOT/bucket/key` in place and checks every request's SigV4 signature against one
//! access key. A thin wrapper in front of it counts requests and body bytes per method (so
//! tests count GETs at the server, not in vodpack), injects faults (a 500 for the next
//! requests, a stall until released), and enforces `If-Match` the way S3 does (412 when
//! the object's current ETag differs), which s3s-fs 0.14 ignores. The wrapper answers
//! from the response s3s-fs built for the same request, so no signature is re-made.
#![allow(dead_code)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use vodpack::config::Settings;
use vodpack::server::{self, App};
use vodpack::source::{MediaSource, ObjectStoreOptions, ObjectStoreSource};

/// The access key the server accepts.
pub const ACCESS_KEY: &str = "AKIAVODPACKTEST";
/// Its secret.
pub const SECRET_KEY: &str = "vodpack-test-secret";
/// The region requests are signed for.
pub const REGION: &str = "us-east-1";

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type ServerBody = UnsyncBoxBody<Bytes, BoxError>;

/// One request as the server saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// HTTP method.
    pub method: String,
    /// Request path (`/bucket/key`, percent-encoded).
    pub path: String,
    /// The `Range` header, if any.
    pub range: Option<String>,
    /// Status answered.
    pub status: u16,
}

/// Counters read at one moment; subtract two to measure what happened in between.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// GET requests received (any status).
    pub gets: u64,
    /// HEAD requests received.
    pub heads: u64,
    /// Body bytes sent in answers to GETs.
    pub get_bytes: u64,
    /// 500 answers injected by [`S3Server::fail_next`].
    pub injected_500s: u64,
    /// 412 answers for a failed `If-Match`.
    pub precondition_failures: u64,
}

impl std::ops::Sub for Tally {
    type Output = Tally;
    fn sub(self, before: Tally) -> Tally {
        Tally {
            gets: self.gets - before.gets,
            heads: self.heads - before.heads,
            get_bytes: self.get_bytes - before.get_bytes,
            injected_500s: self.injected_500s - before.injected_500s,
            precondition_failures: self.precondition_failures - before.precondition_failures,
        }
    }
}

/// State shared by the wrapper's connections.
struct Wrapper {
    s3: s3s::service::S3Service,
    gets: AtomicU64,
    heads: AtomicU64,
    get_bytes: Arc<AtomicU64>,
    injected_500s: AtomicU64,
    precondition_failures: AtomicU64,
    /// Requests still to answer with 500.
    fail_next: AtomicU64,
    /// While true, requests wait before being answered.
    stall: watch::Sender<bool>,
    log: Mutex<Vec<Seen>>,
}

/// An S3-compatible server over a folder of buckets; dropping it stops it and every
/// connection it holds.
pub struct S3Server {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The folder whose sub-folders are buckets.
    pub root: PathBuf,
    wrapper: Arc<Wrapper>,
    task: tokio::task::JoinHandle<()>,
}

impl S3Server {
    /// Serve the buckets under `root` (each sub-folder is a bucket) on 127.0.0.1.
    pub async fn start(root: &Path) -> S3Server {
        let fs = s3s_fs::FileSystem::new(root).expect("s3s-fs over the folder");
        let mut builder = s3s::service::S3ServiceBuilder::new(fs);
        builder.set_auth(s3s::auth::SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
        let wrapper = Arc::new(Wrapper {
            s3: builder.build(),
            gets: AtomicU64::new(0),
            heads: AtomicU64::new(0),
            get_bytes: Arc::new(AtomicU64::new(0)),
            injected_500s: AtomicU64::new(0),
            precondition_failures: AtomicU64::new(0),
            fail_next: AtomicU64::new(0),
            stall: watch::channel(false).0,
            log: Mutex::new(Vec::new()),
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(accept_loop(listener, wrapper.clone()));
        S3Server {
            addr,
            root: root.to_path_buf(),
            wrapper,
            task,
        }
    }

    /// The endpoint URL (`http://127.0.0.1:PORT`).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The counters now.
    pub fn tally(&self) -> Tally {
        let w = &self.wrapper;
        Tally {
            gets: w.gets.load(Ordering::SeqCst),
            heads: w.heads.load(Ordering::SeqCst),
            get_bytes: w.get_bytes.load(Ordering::SeqCst),
            injected_500s: w.injected_500s.load(Ordering::SeqCst),
            precondition_failures: w.precondition_failures.load(Ordering::SeqCst),
        }
    }

    /// Every request seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.wrapper
            .log
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    /// Answer the next `n` requests with `500 InternalError`.
    pub fn fail_next(&self, n: u64) {
        self.wrapper.fail_next.store(n, Ordering::SeqCst);
    }

    /// Hold every request (new and waiting) until `set_stall(false)`.
    pub fn set_stall(&self, stalled: bool) {
        self.wrapper.stall.send_replace(stalled);
    }

    /// Upload `bytes` as `bucket/key` with a PutObject over HTTP, as a bucket's objects
    /// arrive. s3s-fs then keeps the object's ETag beside it, as S3 does; a file placed in
    /// the folder by hand has none, and s3s-fs MD5-hashes the whole file for every request
    /// to it (about 300 ms per request for the 113 MB bench asset).
    pub async fn put_object(&self, bucket: &str, key: &str, bytes: Bytes) -> Result<(), String> {
        use object_store::ObjectStoreExt as _;
        // As vodpack's own clients do: the one TLS provider built in.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let store = object_store::aws::AmazonS3Builder::new()
            .with_endpoint(self.endpoint())
            .with_allow_http(true)
            .with_bucket_name(bucket)
            .with_access_key_id(ACCESS_KEY)
            .with_secret_access_key(SECRET_KEY)
            .with_region(REGION)
            .build()
            .map_err(|e| e.to_string())?;
        store
            .put(&object_store::path::Path::from(key), bytes.into())
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// A vodpack source over `s3://bucket` of this server, with the test credentials,
    /// plain HTTP allowed and `options` for the rest.
    pub fn source(&self, bucket: &str, options: ObjectStoreOptions) -> ObjectStoreSource {
        self.source_with_secret(bucket, options, SECRET_KEY)
    }

    /// As [`S3Server::source`], signing with `secret` instead of the right one.
    pub fn source_with_secret(
        &self,
        bucket: &str,
        options: ObjectStoreOptions,
        secret: &str,
    ) -> ObjectStoreSource {
        s3_source(&self.endpoint(), bucket, options, secret)
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A vodpack source over `s3://bucket` at `endpoint`, signed with the test access key and
/// `secret`.
pub fn s3_source(
    endpoint: &str,
    bucket: &str,
    options: ObjectStoreOptions,
    secret: &str,
) -> ObjectStoreSource {
    let options = ObjectStoreOptions {
        s3_endpoint: Some(endpoint.to_owned()),
        allow_http: true,
        ..options
    };
    ObjectStoreSource::with_config(
        &format!("s3://{bucket}"),
        &options,
        &[
            ("aws_access_key_id", ACCESS_KEY),
            ("aws_secret_access_key", secret),
            ("aws_region", REGION),
        ],
    )
    .expect("object store source")
}

/// A store shelf over `s3://bucket/prefix` at `endpoint`, signed as [`s3_source`] signs.
pub fn s3_shelf(endpoint: &str, bucket: &str, prefix: &str) -> vodpack::source::Shelf {
    let options = ObjectStoreOptions {
        s3_endpoint: Some(endpoint.to_owned()),
        allow_http: true,
        ..ObjectStoreOptions::default()
    };
    vodpack::source::Shelf::store(
        &format!("s3://{bucket}/{prefix}"),
        &options,
        &[
            ("aws_access_key_id", ACCESS_KEY),
            ("aws_secret_access_key", SECRET_KEY),
            ("aws_region", REGION),
        ],
    )
    .expect("object store shelf")
}

async fn accept_loop(listener: TcpListener, wrapper: Arc<Wrapper>) {
    // Connections live in this set: aborting the loop drops it, which aborts them all.
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors, or a reset before accept: back off, keep serving.
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            continue;
        };
        // As S3 endpoints and vodpack's own listener do: without it, a response whose
        // headers and body leave in two writes can wait 40 ms for a delayed ACK (Nagle).
        let _ = stream.set_nodelay(true);
        let wrapper = wrapper.clone();
        connections.spawn(async move {
            let service = service_fn(move |req: Request<Incoming>| {
                let wrapper = wrapper.clone();
                async move { Ok::<_, Infallible>(wrapper.answer(req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
        // Reap finished connections so the set does not grow.
        while connections.try_join_next().is_some() {}
    }
}

impl Wrapper {
    async fn answer(&self, req: Request<Incoming>) -> Response<ServerBody> {
        let method = req.method().to_string();
        let path = req.uri().path().to_owned();
        let header = |name: &str| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let (range, if_match) = (header("range"), header("if-match"));
        match method.as_str() {
            "GET" => self.gets.fetch_add(1, Ordering::SeqCst),
            "HEAD" => self.heads.fetch_add(1, Ordering::SeqCst),
            _ => 0,
        };
        let response = self.respond(req, if_match).await;
        if let Ok(mut log) = self.log.lock() {
            log.push(Seen {
                method: method.clone(),
                path,
                range,
                status: response.status().as_u16(),
            });
        }
        if method != "GET" {
            return response;
        }
        // Count body bytes as they are sent.
        let counter = self.get_bytes.clone();
        response.map(|body| {
            body.map_frame(move |frame| {
                if let Some(data) = frame.data_ref() {
                    counter.fetch_add(data.len() as u64, Ordering::SeqCst);
                }
                frame
            })
            .boxed_unsync()
        })
    }

    async fn respond(
        &self,
        req: Request<Incoming>,
        if_match: Option<String>,
    ) -> Response<ServerBody> {
        let failing = self
            .fail_next
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if failing {
            self.injected_500s.fetch_add(1, Ordering::SeqCst);
            return error_answer(StatusCode::INTERNAL_SERVER_ERROR, "InternalError");
        }
        let mut stall = self.stall.subscribe();
        let _ = stall.wait_for(|stalled| !*stalled).await;
        let response = match self.s3.call(req.map(s3s::Body::from)).await {
            Ok(response) => response,
            Err(_) => return error_answer(StatusCode::INTERNAL_SERVER_ERROR, "InternalError"),
        };
        let etag = response
            .headers()
            .get("etag")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let (Some(wanted), Some(current)) = (if_match, etag) {
            let matches = wanted == "*" || wanted.split(',').any(|tag| tag.trim() == current);
            if response.status().is_success() && !matches {
                self.precondition_failures.fetch_add(1, Ordering::SeqCst);
                return error_answer(StatusCode::PRECONDITION_FAILED, "PreconditionFailed");
            }
        }
        response.map(|body| body.boxed_unsync())
    }
}

/// An S3-style XML error answer.
fn error_answer(status: StatusCode, code: &str) -> Response<ServerBody> {
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code>\
         <Message>{code}</Message></Error>"
    );
    let mut response = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|never| match never {})
            .boxed_unsync(),
    );
    *response.status_mut() = status;
    response.headers_mut().insert(
        "content-type",
        http::HeaderValue::from_static("application/xml"),
    );
    response
}

/// A vodpack server over any source, in this test's runtime; dropping it stops it.
pub struct VodServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its shared state (catalog, metrics).
    pub app: Arc<App>,
    stop: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl VodServer {
    /// Start vodpack over `source` with `settings` (`listen` is replaced).
    pub async fn start(source: Arc<dyn MediaSource>, settings: Settings) -> VodServer {
        Self::start_with(source, settings, Default::default()).await
    }

    /// As [`VodServer::start`], with the index tiers on `shelves`.
    pub async fn start_with(
        source: Arc<dyn MediaSource>,
        mut settings: Settings,
        shelves: vodpack::server::IndexShelves,
    ) -> VodServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        settings.listen = addr;
        let app = App::with_shelves(settings, source, shelves);
        let (stop, stopped) = oneshot::channel::<()>();
        let handle = tokio::spawn(server::run(listener, app.clone(), async move {
            let _ = stopped.await;
        }));
        VodServer {
            addr,
            app,
            stop: Some(stop),
            handle: Some(handle),
        }
    }

    /// The source's counters.
    pub fn counters(&self) -> Arc<vodpack::source::SourceCounters> {
        self.app.catalog.source().counters().clone()
    }

    /// Stop accepting, drain, and wait for the server to return.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(handle) = self.handle.take() {
            let _ = handle.await;
        }
    }
}

impl Drop for VodServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
