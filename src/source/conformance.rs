//! The `MediaSource` contract told as stories that every backend runs, as `object_store`'s
//! backends share its `integration` suite: the local source over a folder, the object-store
//! source over an in-memory store and over a real S3 server (each from its `tests.rs`).
//!
//! A backend takes part through [`Backend`]: its source (with no identity reuse, so
//! `identify` always asks), and a way to write, replace and delete the objects under it,
//! or to put bytes just outside its root. Each story uses keys under its own folder, so
//! they can run one after another over one backend; counters are compared before and
//! after. What differs between backends by design (gaps read through, reuse windows,
//! warm buffers, `If-Match`, HTTP faults) is tested in each backend, not here.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;

use super::error::SourceError;
use super::identity::ObjectIdentity;
use super::key::ObjectKey;
use super::listing::ListedObject;
use super::media_source::MediaSource;
use super::range::ByteRange;

/// A backend under test: its source, and the objects under it to change.
pub(crate) trait Backend {
    /// The source under test, reusing no identity (`identify` always asks the storage).
    fn source(&self) -> Arc<dyn MediaSource>;

    /// Write `bytes` as the object `key`, replacing any object there in one step: a
    /// reader sees the old version or the new one, never a mix.
    async fn put(&self, key: &str, bytes: &[u8]);

    /// Remove the object `key`.
    async fn delete(&self, key: &str);

    /// Put `bytes` outside the source's root, where `key` would reach them if the backend
    /// let a key leave its root: a symlink out of the folder, an object beside the prefix.
    async fn put_outside(&self, key: &str, bytes: &[u8]);
}

/// Every story, one after another, over `backend`.
pub(crate) async fn every_story(backend: &impl Backend) {
    identify_gives_the_size_and_a_new_version_per_replacement(backend).await;
    a_missing_or_deleted_object_is_not_found(backend).await;
    reads_give_exactly_the_bytes_of_the_object(backend).await;
    a_range_past_the_end_is_out_of_range_never_a_short_read(backend).await;
    a_read_of_a_replaced_object_is_changed_never_mixed(backend).await;
    streams_come_in_chunks_of_at_most_the_asked_size(backend).await;
    counters_count_requests_and_bytes_and_over_read_only_gaps(backend).await;
    an_object_outside_the_root_is_refused(backend).await;
    listing_is_in_key_order_and_resumes_after_a_key(backend).await;
    a_healthy_source_is_ready(backend).await;
}

/// `len` bytes that differ from one `seed` to another and along the object (no period
/// that divides a range's offset), so a read from the wrong place or version shows.
fn body(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| ((i % 251) as u8).wrapping_mul(7).wrapping_add(seed))
        .collect()
}

fn key(name: &str) -> ObjectKey {
    ObjectKey::parse(name).expect("a valid key")
}

/// The bytes of `ranges` of `object`, concatenated.
fn slices(object: &[u8], ranges: &[ByteRange]) -> Vec<u8> {
    (ranges.iter())
        .flat_map(|r| object[r.start as usize..r.end() as usize].iter().copied())
        .collect()
}

/// Every item of a stream, errors included.
async fn stream_items(
    source: Arc<dyn MediaSource>,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    ranges: Vec<ByteRange>,
    chunk_bytes: usize,
) -> Vec<Result<Bytes, SourceError>> {
    (source.stream_ranges(key.clone(), identity.clone(), ranges, chunk_bytes))
        .collect()
        .await
}

/// The counters of a source at one moment, to compare with a later one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tally {
    requests: u64,
    bytes: u64,
    over_read: u64,
    errors: u64,
}

impl Tally {
    fn of(source: &dyn MediaSource) -> Self {
        let counters = source.counters();
        Self {
            requests: counters.read_requests.get(),
            bytes: counters.read_bytes.get(),
            over_read: counters.over_read_bytes.get(),
            errors: counters.read_errors.get(),
        }
    }

    /// What happened since `before`.
    fn since(self, before: Tally) -> Tally {
        Tally {
            requests: self.requests - before.requests,
            bytes: self.bytes - before.bytes,
            over_read: self.over_read - before.over_read,
            errors: self.errors - before.errors,
        }
    }
}

/// Given an object, its identity gives its size and stays the same while it is unchanged;
/// when it is replaced by other bytes of the same size, or by a different size, the
/// identity changes.
pub(crate) async fn identify_gives_the_size_and_a_new_version_per_replacement(
    backend: &impl Backend,
) {
    let source = backend.source();
    let k = key("identify/a.mp4");
    backend.put(k.as_str(), &body(10_000, 1)).await;
    let first = source.identify(&k).await.expect("identity");
    assert_eq!(first.size, 10_000);
    assert_eq!(source.identify(&k).await.expect("again"), first);
    let (until_identity, _) = source.identify_until(&k).await.expect("with its window");
    assert_eq!(until_identity, first);

    backend.put(k.as_str(), &body(10_000, 2)).await;
    let same_size = source.identify(&k).await.expect("identity after replacing");
    assert_eq!(same_size.size, 10_000);
    assert_ne!(
        same_size, first,
        "other bytes of the same size are a new version"
    );

    backend.put(k.as_str(), &body(5_000, 2)).await;
    let shorter = source
        .identify(&k)
        .await
        .expect("identity after shortening");
    assert_eq!(shorter.size, 5_000);
    assert_ne!(shorter, same_size);
}

/// Given no object under a key, identify says NotFound; given an object that is then
/// deleted, identify says NotFound at once and a read of its old version fails.
pub(crate) async fn a_missing_or_deleted_object_is_not_found(backend: &impl Backend) {
    let source = backend.source();
    let err = source.identify(&key("missing/none.mp4")).await.unwrap_err();
    assert!(matches!(err, SourceError::NotFound { .. }), "{err}");

    let k = key("missing/gone.mp4");
    backend.put(k.as_str(), &body(100, 3)).await;
    let old = source.identify(&k).await.expect("identity");
    backend.delete(k.as_str()).await;
    let err = source.identify(&k).await.unwrap_err();
    assert!(matches!(err, SourceError::NotFound { .. }), "{err}");
    // The old version is gone: either answer says so, and no byte comes back.
    let err = (source.read_range(&k, &old, ByteRange::new(0, 10)).await).unwrap_err();
    assert!(
        matches!(
            err,
            SourceError::NotFound { .. } | SourceError::Changed { .. }
        ),
        "{err}"
    );
}

/// Given an object, read_range and read_ranges give exactly its bytes: from the first
/// byte to the last, empty ranges empty, and a batch's ranges each in the caller's order.
pub(crate) async fn reads_give_exactly_the_bytes_of_the_object(backend: &impl Backend) {
    let source = backend.source();
    let object = body(300_000, 4);
    let k = key("reads/a folder/a b.mp4");
    backend.put(k.as_str(), &object).await;
    let id = source.identify(&k).await.expect("identity");

    for range in [
        ByteRange::new(0, 1),
        ByteRange::new(12_345, 6_789),
        ByteRange::new(299_999, 1),
        ByteRange::new(0, 300_000),
        ByteRange::new(7, 0),
    ] {
        let got = source.read_range(&k, &id, range).await.expect("read");
        assert_eq!(&got[..], slices(&object, &[range]), "{range}");
    }

    let ranges = [
        ByteRange::new(100, 50),
        ByteRange::new(200, 0),
        ByteRange::new(5_000, 70_000),
        ByteRange::new(299_990, 10),
        ByteRange::new(1_000, 24),
    ];
    let parts = source.read_ranges(&k, &id, &ranges).await.expect("reads");
    assert_eq!(parts.len(), ranges.len());
    for (part, range) in parts.iter().zip(&ranges) {
        assert_eq!(&part[..], slices(&object, &[*range]), "{range}");
    }
}

/// Given an object of 1,000 bytes, a range reaching past its end, starting at or past it,
/// or overflowing, is OutOfRange for every kind of read (never the bytes that exist),
/// while a range ending exactly at the end is read whole.
pub(crate) async fn a_range_past_the_end_is_out_of_range_never_a_short_read(
    backend: &impl Backend,
) {
    let source = backend.source();
    let object = body(1_000, 5);
    let k = key("out-of-range/a.mp4");
    backend.put(k.as_str(), &object).await;
    let id = source.identify(&k).await.expect("identity");

    for range in [
        ByteRange::new(990, 11),
        ByteRange::new(1_000, 1),
        ByteRange::new(2_000, 5),
        ByteRange::new(u64::MAX, 2),
    ] {
        let err = source.read_range(&k, &id, range).await.unwrap_err();
        assert!(
            matches!(err, SourceError::OutOfRange { .. }),
            "{range}: {err}"
        );
        let batch = [ByteRange::new(0, 10), range];
        let err = source.read_ranges(&k, &id, &batch).await.unwrap_err();
        assert!(
            matches!(err, SourceError::OutOfRange { .. }),
            "{range}: {err}"
        );
        let items = stream_items(source.clone(), &k, &id, vec![range], 64 * 1024).await;
        assert!(
            matches!(items.as_slice(), [Err(SourceError::OutOfRange { .. })]),
            "{range}: {items:?}"
        );
    }

    let tail = ByteRange::new(990, 10);
    let got = source
        .read_range(&k, &id, tail)
        .await
        .expect("the last bytes");
    assert_eq!(&got[..], &object[990..]);
    let at_end = ByteRange::new(1_000, 0);
    let got = source
        .read_range(&k, &id, at_end)
        .await
        .expect("nothing at the end");
    assert!(got.is_empty());
}

/// Given an identity taken before the object was replaced, every kind of read of that
/// identity fails as Changed (and is counted as an error) rather than give bytes of the new
/// version; a new identity then reads the new bytes. The same when the size changed too.
pub(crate) async fn a_read_of_a_replaced_object_is_changed_never_mixed(backend: &impl Backend) {
    let source = backend.source();
    let k = key("changed/a.mp4");
    backend.put(k.as_str(), &body(4_096, 6)).await;
    let old = source.identify(&k).await.expect("identity");
    let replacement = body(4_096, 7);
    backend.put(k.as_str(), &replacement).await;

    let before = Tally::of(source.as_ref());
    let err = (source.read_range(&k, &old, ByteRange::new(0, 8)).await).unwrap_err();
    assert!(matches!(err, SourceError::Changed { .. }), "{err}");
    let batch = [ByteRange::new(0, 8), ByteRange::new(100, 8)];
    let err = source.read_ranges(&k, &old, &batch).await.unwrap_err();
    assert!(matches!(err, SourceError::Changed { .. }), "{err}");
    let whole = vec![ByteRange::new(0, 4_096)];
    let items = stream_items(source.clone(), &k, &old, whole, 1_024).await;
    assert!(
        matches!(items.as_slice(), [Err(SourceError::Changed { .. })]),
        "{items:?}"
    );
    let failed = Tally::of(source.as_ref()).since(before);
    assert!(
        failed.errors >= 3,
        "every failed read is counted: {failed:?}"
    );

    let new = source.identify(&k).await.expect("a fresh identity");
    assert_ne!(new, old);
    let got = (source.read_range(&k, &new, ByteRange::new(0, 8)).await).expect("new bytes");
    assert_eq!(&got[..], &replacement[..8]);

    backend.put(k.as_str(), &body(8_192, 8)).await;
    let err = (source.read_range(&k, &new, ByteRange::new(0, 8)).await).unwrap_err();
    assert!(matches!(err, SourceError::Changed { .. }), "{err}");
}

/// Given ranges of an object, stream_ranges gives their bytes concatenated, in chunks of
/// at most the size asked for and never empty, whatever that size; no ranges, no chunk.
pub(crate) async fn streams_come_in_chunks_of_at_most_the_asked_size(backend: &impl Backend) {
    let source = backend.source();
    let object = body(200_000, 9);
    let k = key("stream/a.mp4");
    backend.put(k.as_str(), &object).await;
    let id = source.identify(&k).await.expect("identity");

    let small = vec![
        ByteRange::new(10, 1_000),
        ByteRange::new(1_100, 5),
        ByteRange::new(4_000, 2_000),
    ];
    let whole = vec![ByteRange::new(0, 200_000)];
    for (ranges, chunk_bytes) in [
        (&small, 1),
        (&small, 7),
        (&small, 1_000),
        (&small, 3_005),
        (&small, 1 << 20),
        (&whole, 64 * 1024),
    ] {
        let items = stream_items(source.clone(), &k, &id, ranges.clone(), chunk_bytes).await;
        let chunks: Vec<Bytes> = (items.into_iter())
            .map(|item| item.expect("a chunk"))
            .collect();
        assert!(
            chunks
                .iter()
                .all(|c| !c.is_empty() && c.len() <= chunk_bytes),
            "chunks of {chunk_bytes}: {:?}",
            chunks.iter().map(Bytes::len).collect::<Vec<_>>()
        );
        assert_eq!(
            chunks.concat(),
            slices(&object, ranges),
            "chunks of {chunk_bytes}"
        );
    }

    let nothing = stream_items(source.clone(), &k, &id, Vec::new(), 1_024).await;
    assert!(nothing.is_empty(), "{nothing:?}");
}

/// Given an object, identify reads no byte of it; one range is one request of its bytes;
/// ranges far apart are one request each and nothing over-read; close ranges may share a
/// request, and then exactly the gap between them is counted as read and as over-read.
pub(crate) async fn counters_count_requests_and_bytes_and_over_read_only_gaps(
    backend: &impl Backend,
) {
    let source = backend.source();
    let k = key("counters/a.mp4");
    backend.put(k.as_str(), &body(2 * 1024 * 1024, 10)).await;

    let before = Tally::of(source.as_ref());
    let id = source.identify(&k).await.expect("identity");
    let identified = Tally::of(source.as_ref()).since(before);
    assert_eq!((identified.bytes, identified.over_read), (0, 0));

    let before = Tally::of(source.as_ref());
    source
        .read_range(&k, &id, ByteRange::new(1_000, 5_000))
        .await
        .expect("read");
    let one = Tally::of(source.as_ref()).since(before);
    let expected = Tally {
        requests: 1,
        bytes: 5_000,
        over_read: 0,
        errors: 0,
    };
    assert_eq!(one, expected);

    // Gaps of about 700 KB: past any merge gap and past the over-read budget.
    let far = [
        ByteRange::new(0, 100),
        ByteRange::new(700_000, 100),
        ByteRange::new(1_400_000, 100),
    ];
    let before = Tally::of(source.as_ref());
    source.read_ranges(&k, &id, &far).await.expect("reads");
    let apart = Tally::of(source.as_ref()).since(before);
    let expected = Tally {
        requests: 3,
        bytes: 300,
        over_read: 0,
        errors: 0,
    };
    assert_eq!(apart, expected);

    // A gap of 50 bytes: read through (one request, 50 over-read) or not (two, none).
    let close = [ByteRange::new(0, 100), ByteRange::new(150, 100)];
    let before = Tally::of(source.as_ref());
    source.read_ranges(&k, &id, &close).await.expect("reads");
    let near = Tally::of(source.as_ref()).since(before);
    assert!(
        matches!((near.requests, near.over_read), (1, 50) | (2, 0)),
        "{near:?}"
    );
    assert_eq!(near.bytes, 200 + near.over_read, "{near:?}");

    let before = Tally::of(source.as_ref());
    let items = stream_items(source.clone(), &k, &id, close.to_vec(), 64 * 1024).await;
    assert!(items.iter().all(Result::is_ok), "{items:?}");
    let streamed = Tally::of(source.as_ref()).since(before);
    assert!(matches!(streamed.over_read, 0 | 50), "{streamed:?}");
    assert_eq!(streamed.bytes, 200 + streamed.over_read, "{streamed:?}");
    assert_eq!(streamed.errors, 0);
}

/// Given bytes outside the source's root that a key could reach only by leaving it, no
/// read gives them: identify and every read fail. Keys that climb (`..`) cannot even be
/// made, so no backend ever sees one.
pub(crate) async fn an_object_outside_the_root_is_refused(backend: &impl Backend) {
    assert!(ObjectKey::parse("../outside.mp4").is_err());
    assert!(ObjectKey::parse("/outside.mp4").is_err());

    let source = backend.source();
    let k = key("escape/secret.mp4");
    backend.put_outside(k.as_str(), b"secret").await;
    let refused = |err: &SourceError| {
        matches!(
            err,
            SourceError::OutsideRoot { .. } | SourceError::NotFound { .. }
        )
    };
    let err = source.identify(&k).await.unwrap_err();
    assert!(refused(&err), "{err}");
    // An identity made up to match the bytes outside: still no read of them.
    let forged = ObjectIdentity {
        size: 6,
        version: "forged".into(),
    };
    let whole = ByteRange::new(0, 6);
    let err = source.read_range(&k, &forged, whole).await.unwrap_err();
    assert!(
        refused(&err) || matches!(err, SourceError::Changed { .. }),
        "{err}"
    );
    let items = stream_items(source.clone(), &k, &forged, vec![whole], 1_024).await;
    assert!(matches!(items.as_slice(), [Err(_)]), "{items:?}");
}

/// Given objects in a folder and its sub-folders, a listing of the folder gives every key
/// (relative to the source) with its size, in the byte order of the keys; a sub-folder's
/// listing gives only what is in it; and a listing resumed after a key gives what follows.
pub(crate) async fn listing_is_in_key_order_and_resumes_after_a_key(backend: &impl Backend) {
    let objects = [
        ("listing/a b.mp4", 1),
        ("listing/a.mp4", 2),
        ("listing/a/x.mp4", 3),
        ("listing/b.mp4", 4),
    ];
    // Written out of order, so a listing in write order would show.
    for (name, len) in objects.iter().rev() {
        backend.put(name, &body(*len, 11)).await;
    }
    let source = backend.source();
    let list = |prefix: &str, after: Option<&str>| {
        let stream = source
            .clone()
            .list(prefix.to_owned(), after.map(str::to_owned));
        async move {
            let items: Vec<Result<ListedObject, SourceError>> = stream.collect().await;
            (items.into_iter())
                .map(|item| {
                    let listed = item.expect("a listed object");
                    (listed.key, listed.size)
                })
                .collect::<Vec<_>>()
        }
    };
    let all: Vec<(String, u64)> = (objects.iter())
        .map(|(name, len)| ((*name).to_owned(), *len as u64))
        .collect();
    assert_eq!(list("listing", None).await, all);
    assert_eq!(list("listing/", None).await, all);
    assert_eq!(list("listing/a", None).await, all[2..3]);
    assert_eq!(list("listing", Some("listing/a.mp4")).await, all[2..]);
    assert_eq!(list("listing", Some("listing/b.mp4")).await, Vec::new());
}

/// Given a source whose storage is there, it says it is ready.
pub(crate) async fn a_healthy_source_is_ready(backend: &impl Backend) {
    let ready = backend.source().check_ready().await;
    assert!(ready.is_ok(), "{ready:?}");
}
