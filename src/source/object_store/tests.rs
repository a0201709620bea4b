//! The object-store source's tests: the conformance suite over `object_store`'s in-memory
//! store and over a real S3 server, then what only this backend does (close ranges merged
//! into one GET, identities reused and forgotten, versions without ETags, URLs refused).
//! Stories on the store's timing (GETs in flight, shared gaps, hedges, opens, background
//! checks) are in `watched_tests.rs`.
//!
//! The S3 server is `s3s-fs` run in-process on 127.0.0.1, serving a scratch folder in
//! place (`ROOT/bucket/key`) and checking every request's SigV4 signature, so the source
//! runs its real HTTP client, signing and error mapping. It computes each ETag from the
//! object's bytes, so a file replaced in the folder is a new version.

use std::path::PathBuf;

use ::object_store::memory::InMemory;
use ::object_store::{ObjectStoreExt, PutPayload};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::identify::{identity_of, LAST_MODIFIED_VERSION};
use super::*;
use crate::source::conformance::{self, Backend};
use crate::source::scratch::ScratchDir;

/// The prefix every conformance source serves from: objects beside it are outside its root.
const PREFIX: &str = "media";

/// Options of a conformance source: no identity reuse, so `identify` always asks, and no
/// hedges, so the requests the suite counts are the ones it made (hedges have their own
/// stories, below).
fn asking_every_time() -> ObjectStoreOptions {
    ObjectStoreOptions {
        identity_ttl_ms: 0,
        hedge_percent: 0,
        ..Default::default()
    }
}

/// The object-store source over `object_store`'s in-memory store, keys under [`PREFIX`].
struct Memory {
    store: Arc<InMemory>,
    source: Arc<ObjectStoreSource>,
}

impl Memory {
    fn new() -> Self {
        let store = Arc::new(InMemory::new());
        let source = ObjectStoreSource::from_store(store.clone(), PREFIX, &asking_every_time());
        Self {
            store,
            source: Arc::new(source.expect("source over memory")),
        }
    }
}

impl Backend for Memory {
    fn source(&self) -> Arc<dyn MediaSource> {
        self.source.clone()
    }

    async fn put(&self, key: &str, bytes: &[u8]) {
        let path = Path::from(format!("{PREFIX}/{key}").as_str());
        let payload = PutPayload::from(bytes.to_vec());
        self.store.put(&path, payload).await.expect("put");
    }

    async fn delete(&self, key: &str) {
        let path = Path::from(format!("{PREFIX}/{key}").as_str());
        self.store.delete(&path).await.expect("delete");
    }

    async fn put_outside(&self, key: &str, bytes: &[u8]) {
        let payload = PutPayload::from(bytes.to_vec());
        self.store
            .put(&Path::from(key), payload)
            .await
            .expect("put");
    }
}

#[tokio::test]
async fn an_in_memory_store_keeps_the_media_source_contract() {
    conformance::every_story(&Memory::new()).await;
}

/// The access key the test S3 server accepts, and its secret.
const ACCESS_KEY: (&str, &str) = ("AKIAVODPACKTEST", "vodpack-test-secret");
/// The bucket the conformance source reads.
const BUCKET: &str = "vod";

/// The object-store source over a real S3 server (s3s-fs) serving a scratch folder, keys
/// under `s3://vod/media`. Objects are files written beside the bucket and renamed into
/// place; dropping it stops the server and every connection it holds.
struct S3 {
    dir: ScratchDir,
    source: Arc<ObjectStoreSource>,
    server: tokio::task::JoinHandle<()>,
}

impl S3 {
    async fn start() -> Self {
        let dir = ScratchDir::new("s3-conformance");
        std::fs::create_dir_all(dir.path().join("buckets").join(BUCKET)).unwrap();
        let fs = s3s_fs::FileSystem::new(dir.path().join("buckets")).expect("s3s-fs");
        let mut builder = s3s::service::S3ServiceBuilder::new(fs);
        builder.set_auth(s3s::auth::SimpleAuth::from_single(
            ACCESS_KEY.0,
            ACCESS_KEY.1,
        ));
        let service = builder.build();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
        let server = tokio::spawn(async move {
            // Connections live in this set: aborting the server drops them all.
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                let service = service.clone();
                connections.spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
                while connections.try_join_next().is_some() {}
            }
        });
        let options = ObjectStoreOptions {
            s3_endpoint: Some(endpoint),
            allow_http: true,
            ..asking_every_time()
        };
        let source = ObjectStoreSource::with_config(
            &format!("s3://{BUCKET}/{PREFIX}"),
            &options,
            &[
                ("aws_access_key_id", ACCESS_KEY.0),
                ("aws_secret_access_key", ACCESS_KEY.1),
                ("aws_region", "us-east-1"),
            ],
        );
        Self {
            dir,
            source: Arc::new(source.expect("source over the S3 server")),
            server,
        }
    }

    /// Where the object `key` of the bucket lives on disk.
    fn file(&self, key: &str) -> PathBuf {
        self.dir.path().join("buckets").join(BUCKET).join(key)
    }

    /// Write `bytes` as the bucket's object `key`, in one step.
    fn write(&self, key: &str, bytes: &[u8]) {
        let (staging, path) = (self.dir.path().join("staging"), self.file(key));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&staging, bytes).unwrap();
        std::fs::rename(&staging, &path).unwrap();
    }
}

impl Drop for S3 {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Backend for S3 {
    fn source(&self) -> Arc<dyn MediaSource> {
        self.source.clone()
    }

    async fn put(&self, key: &str, bytes: &[u8]) {
        self.write(&format!("{PREFIX}/{key}"), bytes);
    }

    async fn delete(&self, key: &str) {
        std::fs::remove_file(self.file(&format!("{PREFIX}/{key}"))).unwrap();
    }

    async fn put_outside(&self, key: &str, bytes: &[u8]) {
        self.write(key, bytes);
    }
}

#[tokio::test]
async fn an_s3_server_keeps_the_media_source_contract() {
    conformance::every_story(&S3::start().await).await;
}

pub(super) fn key(name: &str) -> ObjectKey {
    ObjectKey::parse(name).expect("valid key")
}

async fn memory_source(options: &ObjectStoreOptions) -> (Arc<InMemory>, ObjectStoreSource) {
    let store = Arc::new(InMemory::new());
    let body: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    store
        .put(&Path::from("media/dir/a b.mp4"), PutPayload::from(body))
        .await
        .expect("put");
    let source =
        ObjectStoreSource::from_store(store.clone(), "media", options).expect("source over memory");
    (store, source)
}

#[tokio::test]
async fn read_ranges_merges_close_ranges_and_counts_the_gap_as_over_read() {
    let options = ObjectStoreOptions {
        max_merge_gap_bytes: 100,
        open_read_bytes: 0,
        ..Default::default()
    };
    let (_store, source) = memory_source(&options).await;
    let k = key("dir/a b.mp4");
    let id = source.identify(&k).await.expect("identity");
    let requests_before = source.counters().read_requests.get();
    let ranges = [
        ByteRange::new(0, 10),
        ByteRange::new(50, 10),
        ByteRange::new(0, 0),
        ByteRange::new(2000, 3),
    ];
    let parts = source.read_ranges(&k, &id, &ranges).await.expect("read");
    assert_eq!(parts.len(), 4);
    assert_eq!(&parts[1][..], &(50u8..60).collect::<Vec<_>>()[..]);
    assert!(parts[2].is_empty());
    assert_eq!(&parts[3][..], &[208, 209, 210]);
    assert_eq!(source.counters().read_requests.get() - requests_before, 2);
    assert_eq!(source.counters().over_read_bytes.get(), 40);
    assert_eq!(source.counters().read_bytes.get(), 63);
}

#[tokio::test]
async fn a_replaced_object_is_changed_and_its_identity_forgotten() {
    // The first 16 bytes come with the identity (and are of its version); the read below
    // is past them.
    let options = ObjectStoreOptions {
        identity_ttl_ms: 3_600_000,
        open_read_bytes: 16,
        ..Default::default()
    };
    let (store, source) = memory_source(&options).await;
    let k = key("dir/a b.mp4");
    let old = source.identify(&k).await.expect("identity");
    store
        .put(
            &Path::from("media/dir/a b.mp4"),
            PutPayload::from(vec![7u8; 4096]),
        )
        .await
        .expect("replace");
    // Within the TTL the old identity is still handed out...
    assert_eq!(source.identify(&k).await.expect("cached"), old);
    // ...but a read of it fails rather than return bytes of the new version...
    let err = source
        .read_range(&k, &old, ByteRange::new(100, 8))
        .await
        .unwrap_err();
    assert!(matches!(err, SourceError::Changed { .. }), "{err}");
    // ...and the failure made the source ask again.
    let new = source.identify(&k).await.expect("fresh identity");
    assert_ne!(new, old);
    let bytes = source
        .read_range(&k, &new, ByteRange::new(0, 8))
        .await
        .expect("read new");
    assert_eq!(&bytes[..], &[7u8; 8]);
}

#[tokio::test]
async fn versions_without_etags_use_the_last_modified_time() {
    let (store, _source) = memory_source(&ObjectStoreOptions::default()).await;
    let mut meta = store
        .head(&Path::from("media/dir/a b.mp4"))
        .await
        .expect("head");
    meta.e_tag = None;
    let id = identity_of(&meta);
    assert!(id.version.starts_with(LAST_MODIFIED_VERSION));
    assert_eq!(if_match(&id), None);
    assert!(same_version(&id, &meta));
    let tagged = ObjectIdentity {
        size: 10,
        version: "\"abc\"".into(),
    };
    assert_eq!(if_match(&tagged).as_deref(), Some("\"abc\""));
    let weak = ObjectIdentity {
        size: 10,
        version: "W/\"abc\"".into(),
    };
    assert_eq!(if_match(&weak), None);
}

#[test]
fn unsupported_urls_are_refused_at_start() {
    for url in ["file:///tmp", "memory:///", "ftp://host/x", "not a url"] {
        let err = ObjectStoreSource::new(url, &ObjectStoreOptions::default()).unwrap_err();
        assert!(matches!(err, StoreError::InvalidUrl { .. }), "{url}: {err}");
    }
}
