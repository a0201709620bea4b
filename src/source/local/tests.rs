//! The local source's tests.

use super::*;
use futures_util::StreamExt;

fn fixture_source() -> (tempdir::Dir, LocalMediaSource) {
    let dir = tempdir::Dir::new("local-source");
    std::fs::write(dir.path().join("a.mp4"), b"0123456789").unwrap();
    let source = LocalMediaSource::new(dir.path()).unwrap();
    (dir, source)
}

/// A tiny self-cleaning temporary folder, so tests need no extra crate.
mod tempdir {
    use std::path::{Path, PathBuf};
    pub struct Dir(PathBuf);
    impl Dir {
        pub fn new(name: &str) -> Self {
            let path = std::env::temp_dir().join(format!(
                "vodpack-{name}-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).unwrap();
            Self(path)
        }
        pub fn path(&self) -> &Path {
            &self.0
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[tokio::test]
async fn reads_ranges_and_counts_bytes() {
    let (_dir, source) = fixture_source();
    let key = ObjectKey::parse("a.mp4").unwrap();
    let id = source.identify(&key).await.unwrap();
    assert_eq!(id.size, 10);
    let bytes = source
        .read_range(&key, &id, ByteRange::new(2, 3))
        .await
        .unwrap();
    assert_eq!(&bytes[..], b"234");
    assert_eq!(source.counters().read_bytes.get(), 3);
    assert_eq!(source.counters().read_requests.get(), 1);
}

/// Given a source with warm buffers, when a large range is read (a `moov`), then its
/// bytes are the file's, the buffer is lent for as long as they are held, and a read
/// while it is lent gets the same bytes from fresh memory.
#[tokio::test]
async fn large_reads_borrow_a_warm_buffer_and_give_it_back() {
    let dir = tempdir::Dir::new("local-source-warm");
    let file: Vec<u8> = (0..3 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(dir.path().join("long.mp4"), &file).unwrap();
    let source = LocalMediaSource::new(dir.path())
        .unwrap()
        .with_warm_buffers(1, 2 * 1024 * 1024);
    let warm = source.warm.clone().unwrap();
    let key = ObjectKey::parse("long.mp4").unwrap();
    let id = source.identify(&key).await.unwrap();
    let moov = ByteRange::new(1000, 1536 * 1024);
    let expected = &file[1000..1000 + 1536 * 1024];

    let first = source.read_range(&key, &id, moov).await.unwrap();
    assert_eq!(&first[..], expected);
    assert_eq!(warm.available(), 0, "lent while held");
    let second = source.read_range(&key, &id, moov).await.unwrap();
    assert_eq!(
        &second[..],
        expected,
        "fresh memory while the buffer is lent"
    );
    drop(first);
    assert_eq!(warm.available(), 1, "back once let go");

    // Too large for a buffer, or too small to borrow one: fresh memory, same bytes.
    let whole = ByteRange::new(0, file.len() as u64);
    assert_eq!(
        &source.read_range(&key, &id, whole).await.unwrap()[..],
        &file[..]
    );
    let small = ByteRange::new(5, 100);
    assert_eq!(
        &source.read_range(&key, &id, small).await.unwrap()[..],
        &file[5..105]
    );
    assert_eq!(warm.available(), 1);
}

#[tokio::test]
async fn a_range_past_the_end_is_out_of_range() {
    let (_dir, source) = fixture_source();
    let key = ObjectKey::parse("a.mp4").unwrap();
    let id = source.identify(&key).await.unwrap();
    let err = source
        .read_range(&key, &id, ByteRange::new(8, 3))
        .await
        .unwrap_err();
    assert!(matches!(err, SourceError::OutOfRange { .. }), "{err}");
}

#[tokio::test]
async fn a_replaced_file_is_changed_not_spliced() {
    let (dir, source) = fixture_source();
    let key = ObjectKey::parse("a.mp4").unwrap();
    let id = source.identify(&key).await.unwrap();
    std::fs::write(dir.path().join("a.mp4.new"), b"abcdefghijXYZ").unwrap();
    std::fs::rename(dir.path().join("a.mp4.new"), dir.path().join("a.mp4")).unwrap();
    let err = source
        .read_range(&key, &id, ByteRange::new(0, 4))
        .await
        .unwrap_err();
    assert!(matches!(err, SourceError::Changed { .. }), "{err}");
}

/// Given identities reused for an hour, when the file is deleted after its first
/// identity, then the identity is still answered from memory (no filesystem call), and
/// a read with it fails cleanly rather than reading something else.
#[tokio::test]
async fn reused_identities_cost_no_filesystem_call() {
    let (dir, source) = fixture_source();
    let source = source.with_identity_ttl(Duration::from_secs(3600));
    let key = ObjectKey::parse("a.mp4").unwrap();
    let id = source.identify(&key).await.unwrap();
    std::fs::remove_file(dir.path().join("a.mp4")).unwrap();
    assert_eq!(source.identify(&key).await.unwrap(), id);
    let err = source
        .read_range(&key, &id, ByteRange::new(0, 4))
        .await
        .unwrap_err();
    assert!(matches!(err, SourceError::NotFound { .. }), "{err}");
}

/// Given identities reused for an hour, when the file is replaced (renamed over) after
/// its identity was taken, then a stream of that identity reads the version it names,
/// whole, from the file opened with it: no second open, and never the new bytes.
#[tokio::test]
async fn a_stream_of_a_reused_identity_reads_the_file_opened_with_it() {
    let (dir, source) = fixture_source();
    let source = Arc::new(source.with_identity_ttl(Duration::from_secs(3600)));
    let key = ObjectKey::parse("a.mp4").unwrap();
    let id = source.identify(&key).await.unwrap();
    std::fs::write(dir.path().join("a.mp4.new"), b"abcdefghijXYZ").unwrap();
    std::fs::rename(dir.path().join("a.mp4.new"), dir.path().join("a.mp4")).unwrap();
    let ranges = vec![ByteRange::new(0, 10)];
    let chunks: Vec<_> = (source.clone().stream_ranges(key, id, ranges, 4))
        .collect()
        .await;
    let chunks: Vec<Bytes> = chunks.into_iter().map(Result::unwrap).collect();
    assert_eq!(chunks.concat(), b"0123456789");
}

/// Given identities not reused (the default), a deleted file is noticed at once.
#[tokio::test]
async fn without_reuse_a_deleted_file_is_noticed_at_once() {
    let (dir, source) = fixture_source();
    let key = ObjectKey::parse("a.mp4").unwrap();
    source.identify(&key).await.unwrap();
    std::fs::remove_file(dir.path().join("a.mp4")).unwrap();
    let err = source.identify(&key).await.unwrap_err();
    assert!(matches!(err, SourceError::NotFound { .. }), "{err}");
}

#[tokio::test]
async fn a_symlink_leaving_the_root_is_refused() {
    let (dir, source) = fixture_source();
    std::os::unix::fs::symlink("/etc/hostname", dir.path().join("evil.mp4")).unwrap();
    let key = ObjectKey::parse("evil.mp4").unwrap();
    let err = source.identify(&key).await.unwrap_err();
    assert!(matches!(err, SourceError::OutsideRoot { .. }), "{err}");
}

#[tokio::test]
async fn stream_ranges_yields_bounded_chunks_of_the_concatenation() {
    let (_dir, source) = fixture_source();
    let source = Arc::new(source);
    let key = ObjectKey::parse("a.mp4").unwrap();
    let id = source.identify(&key).await.unwrap();
    let ranges = vec![ByteRange::new(1, 4), ByteRange::new(7, 3)];
    let chunks: Vec<_> = source
        .clone()
        .stream_ranges(key, id, ranges, 3)
        .collect()
        .await;
    let chunks: Vec<Bytes> = chunks.into_iter().map(Result::unwrap).collect();
    assert_eq!(chunks.iter().map(Bytes::len).collect::<Vec<_>>(), [3, 3, 1]);
    assert_eq!(chunks.concat(), b"1234789");
    assert_eq!(source.counters().read_bytes.get(), 7);
}

/// Given a file interleaving two tracks sample by sample, when one track's samples are
/// streamed, then without a merge gap each is its own read and nothing is over-read;
/// with one, gaps are read through in fewer reads, counted as over-read, never past
/// the segment's budget; and the bytes sent are the same either way.
#[tokio::test]
async fn a_merge_gap_reads_through_small_gaps_within_the_budget() {
    let dir = tempdir::Dir::new("local-source-gaps");
    let file: Vec<u8> = (0..2 * 1024 * 1024u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(dir.path().join("av.mp4"), &file).unwrap();
    let key = ObjectKey::parse("av.mp4").unwrap();
    // 400 "video samples" of 1,000 bytes, each followed by 700 bytes of "audio".
    let ranges: Vec<ByteRange> = (0..400u64)
        .map(|i| ByteRange::new(i * 1_700, 1_000))
        .collect();
    let expected: Vec<u8> = ranges
        .iter()
        .flat_map(|r| file[r.start as usize..r.end() as usize].iter().copied())
        .collect();
    for gap in [0, 8 * 1024] {
        let source = Arc::new(
            LocalMediaSource::new(dir.path())
                .unwrap()
                .with_merge_gap(gap),
        );
        let id = source.identify(&key).await.unwrap();
        let chunks: Vec<Bytes> = source
            .clone()
            .stream_ranges(key.clone(), id, ranges.clone(), 64 * 1024)
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(chunks.concat(), expected, "gap {gap}");
        let counters = source.counters();
        let (reads, over) = (counters.read_requests.get(), counters.over_read_bytes.get());
        assert_eq!(counters.read_bytes.get(), 400_000 + over, "gap {gap}");
        if gap == 0 {
            // One read per sample, and one more where a chunk's end cuts a sample.
            assert_eq!(over, 0);
            assert!((400..410).contains(&reads), "{reads} reads");
        } else {
            // 399 gaps of 700 bytes is past the budget: the budget's worth are merged.
            assert!(reads < 40, "{reads} reads");
            assert!(over > 0 && over <= OVER_READ_BUDGET_BYTES, "{over}");
            assert_eq!(over % 700, 0);
        }
    }
}

/// Given a stream whose first chunk is read, when the file is replaced (renamed over)
/// before the next, then the rest of the stream still comes from the version it
/// started on: never a splice of two versions.
#[tokio::test]
async fn a_stream_reads_one_version_to_its_end() {
    let (dir, source) = fixture_source();
    let source = Arc::new(source);
    let key = ObjectKey::parse("a.mp4").unwrap();
    let id = source.identify(&key).await.unwrap();
    let mut stream = source
        .clone()
        .stream_ranges(key, id, vec![ByteRange::new(0, 10)], 4);
    let first = stream.next().await.unwrap().unwrap();
    std::fs::write(dir.path().join("a.mp4.new"), b"abcdefghij").unwrap();
    std::fs::rename(dir.path().join("a.mp4.new"), dir.path().join("a.mp4")).unwrap();
    let mut all = first.to_vec();
    while let Some(chunk) = stream.next().await {
        all.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(all, b"0123456789");
}
