//! The local source's tests: the conformance suite over a scratch folder, then what only
//! this backend does (identities and open files kept for a window, warm buffers, gaps read
//! through, a stream kept on the version it started on).

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use futures_util::StreamExt;

use super::*;
use crate::source::conformance::{self, Backend};
use crate::source::scratch::ScratchDir;

/// The local source over a scratch folder: objects are files under `root/`, written beside
/// it and renamed into place (one step, as a deploy would); `outside/` is beyond the root.
struct Folder {
    dir: ScratchDir,
    source: Arc<LocalMediaSource>,
}

impl Folder {
    fn new() -> Self {
        let dir = ScratchDir::new("local-conformance");
        for folder in ["root", "outside"] {
            std::fs::create_dir_all(dir.path().join(folder)).unwrap();
        }
        let source = Arc::new(LocalMediaSource::new(&dir.path().join("root")).unwrap());
        Self { dir, source }
    }

    fn path(&self, folder: &str, key: &str) -> PathBuf {
        self.dir.path().join(folder).join(key)
    }
}

/// Write `bytes` to `staging`, then rename it to `path`.
fn write_renamed(staging: &Path, path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(staging, bytes).unwrap();
    std::fs::rename(staging, path).unwrap();
}

impl Backend for Folder {
    fn source(&self) -> Arc<dyn MediaSource> {
        self.source.clone()
    }

    async fn put(&self, key: &str, bytes: &[u8]) {
        let staging = self.dir.path().join("staging");
        write_renamed(&staging, &self.path("root", key), bytes);
    }

    async fn delete(&self, key: &str) {
        std::fs::remove_file(self.path("root", key)).unwrap();
    }

    async fn put_outside(&self, key: &str, bytes: &[u8]) {
        let (target, link) = (self.path("outside", key), self.path("root", key));
        write_renamed(&self.dir.path().join("staging"), &target, bytes);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        symlink(&target, &link).unwrap();
    }
}

#[tokio::test]
async fn a_folder_keeps_the_media_source_contract() {
    conformance::every_story(&Folder::new()).await;
}

fn fixture_source() -> (ScratchDir, LocalMediaSource) {
    let dir = ScratchDir::new("local-source");
    std::fs::write(dir.path().join("a.mp4"), b"0123456789").unwrap();
    let source = LocalMediaSource::new(dir.path()).unwrap();
    (dir, source)
}

/// Given a source with warm buffers, when a large range is read (a `moov`), then its
/// bytes are the file's, the buffer is lent for as long as they are held, and a read
/// while it is lent gets the same bytes from fresh memory.
#[tokio::test]
async fn large_reads_borrow_a_warm_buffer_and_give_it_back() {
    let dir = ScratchDir::new("local-source-warm");
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

/// Given a file interleaving two tracks sample by sample, when one track's samples are
/// streamed, then without a merge gap each is its own read and nothing is over-read;
/// with one, gaps are read through in fewer reads, counted as over-read, never past
/// the segment's budget; and the bytes sent are the same either way.
#[tokio::test]
async fn a_merge_gap_reads_through_small_gaps_within_the_budget() {
    let dir = ScratchDir::new("local-source-gaps");
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
