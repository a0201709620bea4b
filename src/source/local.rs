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

mod files;
mod reads;
mod scatter;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use tracing::Instrument;

use self::files::{open_checked, open_expected, KeptFiles};
use self::reads::{check_fetched, read_checked, read_spans, Reads};
use self::scatter::Wait;
use super::counters::{SourceCounters, SOURCE_READ_SPAN_TARGET};
use super::error::SourceError;
use super::identity::ObjectIdentity;
use super::key::ObjectKey;
use super::listing::{self, ListStream};
use super::media_source::{ByteStream, MediaSource, SourceKind};
use super::range::{chunk_batches, ByteRange};
use super::runs::{plan_runs, OVER_READ_BUDGET_BYTES};
use super::warm::WarmBuffers;

/// Media files under a local folder.
#[derive(Debug)]
pub struct LocalMediaSource {
    /// The canonical root folder: every resolved file must lie under it.
    root: PathBuf,
    counters: Arc<SourceCounters>,
    /// Identities taken within the reuse window and the files opened to take them;
    /// `None` when every request takes a fresh identity.
    kept: Option<KeptFiles>,
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
            kept: None,
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
    /// 8 KiB a segment of the 60-minute asset costs half the CPU (docs/performance.md).
    /// The default, 0, keeps the brief's bar of no over-read on local files.
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
        self.kept = KeptFiles::new(ttl);
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
        let file = match (file, &self.kept) {
            (Some(file), _) => Some(file),
            (None, Some(kept)) => kept.file(key, identity).await,
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
    /// the page cache (`scatter.rs`); `None` when the blocking pool must read it. Counted
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
        // Bounded by MAX_READ_BYTES just above, so the cast below cannot truncate.
        let buf = match scatter::read_wanted(file, reads.spans(), total as usize, Wait::CachedOnly)
        {
            Ok(buf) => buf,
            // Not cached, or anything else: the blocking path reads and reports.
            Err(_) => {
                span.record("vod.outcome", "not in the page cache");
                return Ok(None);
            }
        };
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

    fn list(self: Arc<Self>, prefix: String, after: Option<String>) -> ListStream {
        listing::walk_folder(self.root.clone(), prefix, after)
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
        let owned = key.clone();
        let Some(kept) = &self.kept else {
            let (_file, identity) = self
                .blocking(key, move |root| open_checked(root, &owned))
                .await?;
            return Ok((identity, None));
        };
        if let Some(known) = kept.identity(key).await {
            return Ok((known.identity, known.until));
        }
        // Counted from before the check, so the reuse ends no later than the cache's own
        // (none past what an Instant can hold: the identity is still reused, but no answer
        // is held for it).
        let until = Instant::now().checked_add(kept.ttl());
        let (file, identity) = self
            .blocking(key, move |root| open_checked(root, &owned))
            .await?;
        kept.keep(key, file, &identity, until).await;
        Ok((identity, until))
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
mod tests;
