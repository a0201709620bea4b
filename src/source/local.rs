//! `LocalMediaSource`: objects are files under a root folder, read on the blocking pool.
//!
//! Every call resolves the key under the root, follows symlinks and refuses a result that
//! leaves the root, opens the file and compares its size, mtime and inode with the identity
//! the caller holds, then reads with `pread`. All of that runs in `spawn_blocking`, so no
//! filesystem call ever runs on a runtime worker. Opening per read costs two system calls
//! and buys a stream that can never splice bytes of a replaced file into an old answer. A
//! streamed body (`stream_ranges`) opens and checks the file once, with its first batch,
//! and reads its later batches from that open file: one version throughout, one `pread`
//! per range per batch, so small batches (small memory per stream) stay cheap.
//!
//! Identities may be reused for a short time (`with_identity_ttl`, like nginx's
//! `open_file_cache`): an answer served from memory (a cached playlist) then costs no
//! filesystem call and no hop to the blocking pool. A file replaced meanwhile is seen when
//! its entry expires; reads still compare identities, so its bytes are never mixed with
//! the old version's (the read fails as `Changed`, a 503 with `Retry-After`).
//!
//! In the same window the file opened to take an identity stays open (at most
//! `OPEN_FILE_CACHE_ENTRIES` files), and a stream of that identity reads from it: a
//! segment whose bytes are in the page cache is then read on the runtime worker without
//! an `open` or any hop to the blocking pool (issue 12). The open file is the version the
//! identity describes, so a replaced file is never read through it.

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use moka::future::Cache;
use tracing::Instrument;

use super::nowait;
use super::runs::{plan_runs, Run};
use super::warm::WarmBuffers;
use super::{
    check_ranges, chunk_batches, ByteRange, ByteStream, KnownIdentity, MediaSource, ObjectIdentity,
    ObjectKey, SourceCounters, SourceError, SourceKind, MAX_READ_BYTES, OVER_READ_BUDGET_BYTES,
    SOURCE_READ_SPAN_TARGET,
};

/// Most file identities remembered at once when they are reused (`with_identity_ttl`).
const IDENTITY_CACHE_ENTRIES: u64 = 100_000;
/// Most files kept open at once for reuse, each one file descriptor.
const OPEN_FILE_CACHE_ENTRIES: u64 = 1_024;

/// A file kept open with the identity it had when opened.
#[derive(Debug, Clone)]
struct OpenFile {
    identity: ObjectIdentity,
    file: Arc<File>,
}

/// Media files under a local folder.
#[derive(Debug)]
pub struct LocalMediaSource {
    /// The canonical root folder: every resolved file must lie under it.
    root: PathBuf,
    counters: Arc<SourceCounters>,
    /// Identities taken within the reuse window; `None` when every request takes a fresh
    /// one. Failures (a missing file) are never kept.
    identities: Option<Cache<ObjectKey, KnownIdentity>>,
    /// How long an identity is reused (zero: never).
    identity_ttl: Duration,
    /// Files opened to take an identity, kept open for the same window.
    open_files: Option<Cache<ObjectKey, OpenFile>>,
    /// Buffers faulted in at start, lent to large reads (`warm.rs`); `None`: fresh memory.
    warm: Option<Arc<WarmBuffers>>,
    /// Gaps between a streamed segment's ranges read through, up to this size (0: none).
    merge_gap: u64,
}

impl LocalMediaSource {
    /// A source serving the files under `root`.
    ///
    /// # Errors
    /// When `root` does not exist or is not a folder.
    pub fn new(root: &Path) -> std::io::Result<Self> {
        let root = root.canonicalize()?;
        if !root.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is not a folder", root.display()),
            ));
        }
        Ok(Self {
            root,
            counters: Arc::new(SourceCounters::default()),
            identities: None,
            identity_ttl: Duration::ZERO,
            open_files: None,
            warm: None,
            merge_gap: 0,
        })
    }

    /// The same source, reading through gaps of up to `bytes` between a streamed
    /// segment's ranges, within the segment's over-read budget (256 KiB), instead of
    /// skipping each with another `pread`.
    ///
    /// Why: a track interleaved sample by sample with another (ffmpeg's usual layout) is
    /// one range per sample, 180 `pread`s for a 6 s video segment at 30 fps, each about a
    /// microsecond of system time here, as much as copying 8 KiB from the page cache. At
    /// 8 KiB a segment of the 60-minute asset costs half the CPU (docs/performance.md,
    /// issue 13). The default, 0, keeps the brief's bar of no over-read on local files.
    pub fn with_merge_gap(mut self, bytes: u64) -> Self {
        self.merge_gap = bytes;
        self
    }

    /// The same source, lending large reads (an index's `moov`) one of `count` buffers of
    /// `size` bytes, faulted in now, instead of fresh memory (see `warm.rs`).
    pub fn with_warm_buffers(mut self, count: usize, size: usize) -> Self {
        self.warm = (count > 0 && size > 0).then(|| WarmBuffers::new(count, size));
        self
    }

    /// The same source, reusing each file's identity (size, mtime, inode) for `ttl`, so
    /// that answers served from memory cost no filesystem call. A zero `ttl` takes a fresh
    /// identity per request (the default of [`LocalMediaSource::new`]).
    pub fn with_identity_ttl(mut self, ttl: Duration) -> Self {
        self.identity_ttl = ttl;
        self.identities = (!ttl.is_zero()).then(|| {
            Cache::builder()
                .max_capacity(IDENTITY_CACHE_ENTRIES)
                .time_to_live(ttl)
                .build()
        });
        self.open_files = (!ttl.is_zero()).then(|| {
            Cache::builder()
                .max_capacity(OPEN_FILE_CACHE_ENTRIES)
                .time_to_live(ttl)
                .build()
        });
        self
    }

    /// The canonical root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A buffered reader over the whole file, for parsers that want `Read + Seek`
    /// (`vodpack inspect`). Blocking: call it on the blocking pool.
    ///
    /// # Errors
    /// As [`MediaSource::identify`].
    pub fn parser_file(&self, key: &ObjectKey) -> Result<std::io::BufReader<File>, SourceError> {
        let (file, _) = open_checked(&self.root, key)?;
        Ok(std::io::BufReader::with_capacity(256 * 1024, file))
    }

    async fn blocking<T, F>(&self, key: &ObjectKey, f: F) -> Result<T, SourceError>
    where
        T: Send + 'static,
        F: FnOnce(&Path) -> Result<T, SourceError> + Send + 'static,
    {
        let root = self.root.clone();
        let key_name = key.to_string();
        tokio::task::spawn_blocking(move || f(&root))
            .await
            .map_err(|join| SourceError::Io {
                key: key_name,
                source: std::io::Error::other(join.to_string()),
            })?
    }
}

/// Resolve `key` under `root`, refuse symlink escapes, open it and take its identity.
fn open_checked(root: &Path, key: &ObjectKey) -> Result<(File, ObjectIdentity), SourceError> {
    let io_err = |source: std::io::Error| match source.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => SourceError::NotFound {
            key: key.to_string(),
        },
        _ => SourceError::Io {
            key: key.to_string(),
            source,
        },
    };
    let resolved = root.join(key.as_str()).canonicalize().map_err(io_err)?;
    if !resolved.starts_with(root) {
        return Err(SourceError::OutsideRoot {
            key: key.to_string(),
        });
    }
    let file = File::open(&resolved).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if !meta.is_file() {
        return Err(SourceError::NotFound {
            key: key.to_string(),
        });
    }
    let mtime_ns = i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
    let identity = ObjectIdentity {
        size: meta.len(),
        version: format!("m{mtime_ns}-i{}", meta.ino()),
    };
    Ok((file, identity))
}

/// Open `key` once, check it is still `expected`, and read every range, concatenated, into
/// one buffer (one pread per range).
fn read_checked(
    root: &Path,
    key: &ObjectKey,
    expected: &ObjectIdentity,
    ranges: &[ByteRange],
    warm: Option<&Arc<WarmBuffers>>,
) -> Result<Bytes, SourceError> {
    let file = open_expected(root, key, expected)?;
    read_open(&file, key, expected, ranges, warm)
}

/// Open `key` and check it is still `expected`.
fn open_expected(
    root: &Path,
    key: &ObjectKey,
    expected: &ObjectIdentity,
) -> Result<File, SourceError> {
    let (file, identity) = open_checked(root, key)?;
    if &identity != expected {
        return Err(SourceError::Changed {
            key: key.to_string(),
        });
    }
    Ok(file)
}

/// Read every range of `file` (opened and checked as `identity`), concatenated, into one
/// buffer: one pread per range.
fn read_open(
    file: &File,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    ranges: &[ByteRange],
    warm: Option<&Arc<WarmBuffers>>,
) -> Result<Bytes, SourceError> {
    read_spans(file, key, identity, &Reads::Ranges(ranges.to_vec()), warm)
}

/// What one batch reads: its ranges one by one (nothing over-read), or runs of close
/// ranges, each read whole with the gaps between its parts (`with_merge_gap`).
enum Reads {
    Ranges(Vec<ByteRange>),
    Runs(Vec<Run>),
}

/// One read: the bytes fetched, and the wanted parts within them, in order.
type Span<'a> = (ByteRange, &'a [ByteRange]);

impl Reads {
    /// Each read, in order (no allocation: a segment's batch is read on the hot path).
    fn spans(&self) -> impl Iterator<Item = Span<'_>> + '_ {
        let (ranges, runs): (&[ByteRange], &[Run]) = match self {
            Reads::Ranges(ranges) => (ranges, &[]),
            Reads::Runs(runs) => (&[], runs),
        };
        (ranges.iter().map(|r| (*r, std::slice::from_ref(r))))
            .chain(runs.iter().map(|r| (r.fetch, r.parts.as_slice())))
    }

    /// How many reads.
    fn count(&self) -> usize {
        match self {
            Reads::Ranges(ranges) => ranges.len(),
            Reads::Runs(runs) => runs.len(),
        }
    }

    /// The wanted bytes.
    fn wanted(&self) -> u64 {
        (self.spans())
            .flat_map(|(_, parts)| parts.iter())
            .map(|part| part.len)
            .sum()
    }

    /// Bytes read through and not wanted.
    fn gaps(&self) -> u64 {
        match self {
            Reads::Ranges(_) => 0,
            Reads::Runs(runs) => (runs.iter())
                .map(|run| run.fetch.len.saturating_sub(run.wanted()))
                .sum(),
        }
    }
}

/// Read the wanted parts of `reads` of `file` (opened and checked as `identity`),
/// concatenated, into one buffer: one pread per span.
fn read_spans(
    file: &File,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    reads: &Reads,
    warm: Option<&Arc<WarmBuffers>>,
) -> Result<Bytes, SourceError> {
    check_fetched(key, identity, reads)?;
    // Within what was fetched, checked against MAX_READ_BYTES just above: the casts below
    // cannot truncate.
    let total = reads.wanted();
    let read_at = |slot: &mut [u8], at: u64| {
        file.read_exact_at(slot, at)
            .map_err(|source| match source.kind() {
                // The file shrank between fstat and pread: a changed object, not an I/O fault.
                std::io::ErrorKind::UnexpectedEof => SourceError::Changed {
                    key: key.to_string(),
                },
                _ => SourceError::Io {
                    key: key.to_string(),
                    source,
                },
            })
    };
    if let Some(mut lent) = warm.and_then(|warm| warm.lend(total as usize)) {
        fill(reads.spans(), lent.as_mut_slice(), read_at)?;
        return Ok(lent.freeze());
    }
    let mut buf = BytesMut::zeroed(total as usize);
    fill(reads.spans(), &mut buf, read_at)?;
    Ok(buf.freeze())
}

/// The checks of [`check_ranges`] on what `reads` fetch, without collecting it: each
/// inside the object, all together within `MAX_READ_BYTES`.
fn check_fetched(
    key: &ObjectKey,
    identity: &ObjectIdentity,
    reads: &Reads,
) -> Result<(), SourceError> {
    let mut fetched = 0u64;
    for (fetch, _) in reads.spans() {
        let within = check_ranges(key, identity, std::slice::from_ref(&fetch), None)?;
        fetched = fetched.saturating_add(within);
    }
    if fetched > MAX_READ_BYTES {
        return Err(SourceError::TooLarge {
            key: key.to_string(),
            len: fetched,
            limit: MAX_READ_BYTES,
        });
    }
    Ok(())
}

/// Fill `out` (the wanted bytes of `spans`, concatenated) with one `read_at` per span. A
/// span of one whole part is read in place; a span with gaps is read whole into a scratch
/// buffer and its parts copied out.
fn fill<'a, E>(
    spans: impl Iterator<Item = Span<'a>>,
    out: &mut [u8],
    mut read_at: impl FnMut(&mut [u8], u64) -> Result<(), E>,
) -> Result<(), E> {
    let mut scratch = Vec::new();
    let mut at = 0usize;
    for (fetch, parts) in spans {
        if let [part] = parts {
            let len = part.len as usize;
            let Some(slot) = out.get_mut(at..at + len) else {
                break;
            };
            read_at(slot, part.start)?;
            at += len;
            continue;
        }
        // Bounded: a run fetches its parts and gaps within the over-read budget.
        scratch.resize(fetch.len as usize, 0);
        read_at(&mut scratch, fetch.start)?;
        for part in parts {
            let len = part.len as usize;
            let from = part.start.saturating_sub(fetch.start) as usize;
            if let (Some(slot), Some(bytes)) =
                (out.get_mut(at..at + len), scratch.get(from..from + len))
            {
                slot.copy_from_slice(bytes);
            }
            at += len;
        }
    }
    Ok(())
}

impl LocalMediaSource {
    /// Read `ranges` concatenated, in one blocking call: one open, one pread per range,
    /// each counted as a read request.
    async fn read_concat(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        ranges: Vec<ByteRange>,
    ) -> Result<Bytes, SourceError> {
        let (owned, expected, warm) = (key.clone(), identity.clone(), self.warm.clone());
        let (bytes, ()) = self
            .read_counted(key, ranges, move |root, ranges| {
                let bytes = read_checked(root, &owned, &expected, ranges, warm.as_ref())?;
                Ok((bytes, ()))
            })
            .await?;
        Ok(bytes)
    }

    /// One batch of a stream: the wanted parts of `runs` concatenated, read from `file`
    /// when the stream has it open already, else from the file opened (and checked) now,
    /// which is returned for the next batches. One blocking call either way; the gaps
    /// read through are counted as read and as over-read.
    async fn read_streamed(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        file: Option<Arc<File>>,
        reads: Reads,
    ) -> Result<(Bytes, Arc<File>), SourceError> {
        let file = match (file, &self.open_files) {
            (Some(file), _) => Some(file),
            (None, Some(files)) => (files.get(key).await)
                .filter(|open| open.identity == *identity)
                .map(|open| open.file),
            (None, None) => None,
        };
        let gaps = reads.gaps();
        if let Some(file) = &file {
            if let Some(bytes) = self.read_from_cache(key, identity, file, &reads)? {
                self.count_over_read(gaps);
                return Ok((bytes, file.clone()));
            }
        }
        let (owned, expected) = (key.clone(), identity.clone());
        let fetched = reads.spans().map(|(fetch, _)| fetch).collect();
        let read = self
            .read_counted(key, fetched, move |root, _| {
                let file = match file {
                    Some(file) => file,
                    None => Arc::new(open_expected(root, &owned, &expected)?),
                };
                Ok((read_spans(&file, &owned, &expected, &reads, None)?, file))
            })
            .await?;
        self.count_over_read(gaps);
        Ok(read)
    }

    /// Gap bytes read through between the parts of a batch: read, and over-read.
    fn count_over_read(&self, gaps: u64) {
        if gaps > 0 {
            self.counters.read_bytes.inc_by(gaps);
            self.counters.over_read_bytes.inc_by(gaps);
        }
    }

    /// A batch of a stream read here, on the runtime worker, when every byte of it is in
    /// the page cache (`nowait.rs`); `None` when the blocking pool must read it. Counted
    /// like any read.
    fn read_from_cache(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        file: &File,
        reads: &Reads,
    ) -> Result<Option<Bytes>, SourceError> {
        let started = Instant::now();
        check_fetched(key, identity, reads)?;
        let total = reads.wanted();
        // The same span as a read on the blocking pool, for traces (its target is off in
        // the log filter, so it costs nothing unless spans are exported).
        let span = tracing::info_span!(
            target: SOURCE_READ_SPAN_TARGET,
            "source.read",
            vod.source = "local",
            vod.key = %key,
            vod.range_start = reads.spans().next().map_or(0, |(fetch, _)| fetch.start),
            vod.range_len = total,
            vod.ranges = reads.count(),
            vod.attempt = 1,
            vod.page_cache = true,
            vod.bytes = tracing::field::Empty,
            vod.outcome = tracing::field::Empty,
        );
        let _entered = span.enter();
        // Bounded by MAX_READ_BYTES just above, so the casts below cannot truncate.
        let mut buf = BytesMut::zeroed(total as usize);
        let cached = fill(
            reads.spans(),
            &mut buf,
            |slot, at| match nowait::read_exact_cached(file, slot, at) {
                true => Ok(()),
                false => Err(()),
            },
        );
        if cached.is_err() {
            span.record("vod.outcome", "not in the page cache");
            return Ok(None);
        }
        span.record("vod.bytes", total);
        span.record("vod.outcome", "ok");
        self.counters.read_requests.inc_by(reads.count() as u64);
        self.counters.read_bytes.inc_by(total);
        self.counters
            .read_seconds
            .observe(started.elapsed().as_secs_f64());
        Ok(Some(buf.freeze()))
    }

    /// Run `read` over `ranges` on the blocking pool inside a `source.read` span, and count
    /// it: one read request per range, its bytes, its time, its failure.
    async fn read_counted<T, F>(
        &self,
        key: &ObjectKey,
        ranges: Vec<ByteRange>,
        read: F,
    ) -> Result<(Bytes, T), SourceError>
    where
        T: Send + 'static,
        F: FnOnce(&Path, &[ByteRange]) -> Result<(Bytes, T), SourceError> + Send + 'static,
    {
        let started = Instant::now();
        let count = ranges.len() as u64;
        let span = tracing::info_span!(
            target: SOURCE_READ_SPAN_TARGET,
            "source.read",
            vod.source = "local",
            vod.key = %key,
            vod.range_start = ranges.first().map_or(0, |r| r.start),
            vod.range_len = ranges.iter().map(|r| r.len).sum::<u64>(),
            vod.ranges = count,
            vod.attempt = 1,
            vod.bytes = tracing::field::Empty,
            vod.outcome = tracing::field::Empty,
        );
        let result = self
            .blocking(key, move |root| read(root, &ranges))
            .instrument(span.clone())
            .await;
        match &result {
            Ok((bytes, _)) => {
                span.record("vod.bytes", bytes.len());
                span.record("vod.outcome", "ok");
            }
            Err(e) => {
                span.record("vod.outcome", e.to_string().as_str());
            }
        }
        self.counters.read_requests.inc_by(count);
        self.counters
            .read_seconds
            .observe(started.elapsed().as_secs_f64());
        match &result {
            Ok((bytes, _)) => {
                self.counters.read_bytes.inc_by(bytes.len() as u64);
            }
            Err(_) => {
                self.counters.read_errors.inc();
            }
        }
        result
    }
}

#[async_trait]
impl MediaSource for LocalMediaSource {
    fn kind(&self) -> SourceKind {
        SourceKind::Local
    }

    fn list(self: Arc<Self>, prefix: String, after: Option<String>) -> super::ListStream {
        super::listing::walk_folder(self.root.clone(), prefix, after)
    }

    fn counters(&self) -> &Arc<SourceCounters> {
        &self.counters
    }

    async fn check_ready(&self) -> Result<(), SourceError> {
        let root = self.root.clone();
        let readable = tokio::task::spawn_blocking(move || root.is_dir())
            .await
            .unwrap_or(false);
        if readable {
            Ok(())
        } else {
            Err(SourceError::Unreachable {
                key: String::new(),
                reason: "media folder is not readable".into(),
            })
        }
    }

    async fn identify(&self, key: &ObjectKey) -> Result<ObjectIdentity, SourceError> {
        Ok(self.identify_until(key).await?.0)
    }

    async fn identify_until(
        &self,
        key: &ObjectKey,
    ) -> Result<(ObjectIdentity, Option<Instant>), SourceError> {
        if let Some(known) = match &self.identities {
            Some(cache) => cache.get(key).await,
            None => None,
        } {
            return Ok((known.identity, known.until));
        }
        // Counted from before the check, so the reuse ends no later than the cache's own
        // (none past what an Instant can hold: the identity is still reused, but no answer
        // is held for it).
        let until = Instant::now().checked_add(self.identity_ttl);
        let owned = key.clone();
        let (file, identity) = self
            .blocking(key, move |root| open_checked(root, &owned))
            .await?;
        if let Some(cache) = &self.identities {
            let known = KnownIdentity {
                identity: identity.clone(),
                until,
            };
            cache.insert(key.clone(), known).await;
        }
        if let Some(files) = &self.open_files {
            let file = Arc::new(file);
            let open = OpenFile {
                identity: identity.clone(),
                file,
            };
            files.insert(key.clone(), open).await;
        }
        Ok((identity, until.filter(|_| self.identities.is_some())))
    }

    async fn read_range(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        range: ByteRange,
    ) -> Result<Bytes, SourceError> {
        self.read_concat(key, identity, vec![range]).await
    }

    async fn read_ranges(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        ranges: &[ByteRange],
    ) -> Result<Vec<Bytes>, SourceError> {
        let all = self.read_concat(key, identity, ranges.to_vec()).await?;
        let mut out = Vec::with_capacity(ranges.len());
        let mut at = 0usize;
        for range in ranges {
            // The concatenation holds exactly the ranges' lengths, in order.
            let end = at + range.len as usize;
            out.push(all.slice(at..end));
            at = end;
        }
        Ok(out)
    }

    fn stream_ranges(
        self: Arc<Self>,
        key: ObjectKey,
        identity: ObjectIdentity,
        ranges: Vec<ByteRange>,
        chunk_bytes: usize,
    ) -> ByteStream {
        // The file is opened and checked once, by the first batch, and read by the rest:
        // every byte of the stream comes from that one open file (one version), and a
        // batch costs one pread per run of close ranges, not a path walk, an open and a
        // stat. Gaps read through count against the segment's over-read budget.
        let batches = chunk_batches(&ranges, chunk_bytes).into_iter();
        let over_read_left = OVER_READ_BUDGET_BYTES;
        Box::pin(futures_util::stream::unfold(
            (self, key, identity, batches, None, over_read_left, false),
            |(source, key, identity, mut batches, file, left, failed)| async move {
                if failed {
                    return None;
                }
                let batch = batches.next()?;
                let reads = match source.merge_gap {
                    0 => Reads::Ranges(batch),
                    gap => Reads::Runs(plan_runs(&batch, gap, left)),
                };
                let left = left.saturating_sub(reads.gaps());
                match source.read_streamed(&key, &identity, file, reads).await {
                    Ok((bytes, file)) => Some((
                        Ok(bytes),
                        (source, key, identity, batches, Some(file), left, false),
                    )),
                    Err(e) => Some((Err(e), (source, key, identity, batches, None, left, true))),
                }
            },
        ))
    }
}

#[cfg(test)]
mod tests {
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
}
