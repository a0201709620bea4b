//! The object-store source's tests.

use super::*;
use ::object_store::memory::InMemory;
use ::object_store::{ObjectStoreExt, PutPayload};

fn key(name: &str) -> ObjectKey {
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
async fn identify_and_read_under_the_prefix() {
    let (_store, source) = memory_source(&ObjectStoreOptions::default()).await;
    let k = key("dir/a b.mp4");
    let id = source.identify(&k).await.expect("identity");
    assert_eq!(id.size, 4096);
    let bytes = source
        .read_range(&k, &id, ByteRange::new(300, 4))
        .await
        .expect("read");
    assert_eq!(&bytes[..], &[44, 45, 46, 47]);
    let err = source.identify(&key("missing.mp4")).await.unwrap_err();
    assert!(matches!(err, SourceError::NotFound { .. }), "{err}");
    let err = source
        .read_range(&k, &id, ByteRange::new(4090, 7))
        .await
        .unwrap_err();
    assert!(matches!(err, SourceError::OutOfRange { .. }), "{err}");
}

#[tokio::test]
async fn read_ranges_merges_close_ranges_and_counts_the_gap_as_over_read() {
    let options = ObjectStoreOptions {
        max_merge_gap_bytes: 100,
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
async fn stream_ranges_gives_bounded_chunks_of_the_concatenation() {
    let (_store, source) = memory_source(&ObjectStoreOptions::default()).await;
    let source = Arc::new(source);
    let k = key("dir/a b.mp4");
    let id = source.identify(&k).await.expect("identity");
    let ranges = vec![
        ByteRange::new(10, 1000),
        ByteRange::new(1100, 5),
        ByteRange::new(100_000 % 4096, 7),
    ];
    let chunks: Vec<Bytes> = source
        .clone()
        .stream_ranges(k, id, ranges.clone(), 256)
        .try_collect()
        .await
        .expect("stream");
    assert!(chunks.iter().all(|c| c.len() <= 256));
    let got: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
    let body: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    let expected: Vec<u8> = ranges
        .iter()
        .flat_map(|r| body[r.start as usize..r.end() as usize].iter().copied())
        .collect();
    assert_eq!(got, expected);
}

#[tokio::test]
async fn a_replaced_object_is_changed_and_its_identity_forgotten() {
    let options = ObjectStoreOptions {
        identity_ttl_ms: 3_600_000,
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
        .read_range(&k, &old, ByteRange::new(0, 8))
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
