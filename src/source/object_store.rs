//! `ObjectStoreSource`: media objects in a bucket (S3-compatible, GCS, Azure) or behind plain
//! HTTP, read through the `object_store` crate.
//!
//! It owns one store per source, built from the source URL (credentials from the standard
//! `AWS_*`, `GOOGLE_*` and `AZURE_*` variables), the identity of each object (a HEAD: size
//! and ETag, reused for `identity_ttl_ms`), and ranged reads. Every GET asks for one range
//! with `If-Match` set to the identity's ETag, and the answer's ETag and size are checked
//! again, so an answer never mixes two versions of an object; a mismatch is
//! [`SourceError::Changed`] and forgets the identity. Reads are planned here (`runs.rs`):
//! ranges closer than `max_merge_gap_bytes` share a GET, at most
//! [`OVER_READ_BUDGET_BYTES`] of gaps per read; a stream issues the GET of the next run
//! while the current one streams, and never more.
//!
//! `object_store` signs requests, pools connections, retries 5xx and transport errors with
//! backoff, and resumes a broken body. We plan ranges ourselves because its `get_ranges`
//! merges gaps of up to 1 MiB, and put our own deadline on the response head because its
//! default timeout covers a whole body, which a slow client can stretch without limit.
//!
//! Beside this file: `stream.rs` is the `stream_ranges` stream, `store.rs` holds the
//! options, builds the store, counts its retries and maps its errors, `tests.rs` runs the
//! conformance suite over an in-memory store and a real S3 server and holds this backend's
//! own stories. `../runs.rs` plans GETs and cuts their bodies back into ranges (pure; the
//! local source plans its reads with it too).

mod store;
mod stream;
mod validate;

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ::object_store::path::Path;
use ::object_store::{GetOptions, GetRange, ObjectMeta, ObjectStore};
use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use futures_util::future::FutureExt;
use futures_util::stream::{StreamExt, TryStreamExt};
use moka::future::Cache;

pub use self::store::{ObjectStoreOptions, StoreError};

use self::store::{attempt_tag, build_store, copy_error, io_error, map_error};
use self::stream::{OpenRun, OpenRunFn, RunStream};
use super::counters::SourceCounters;
use super::error::SourceError;
use super::identity::{check_ranges, KnownIdentity, ObjectIdentity, MAX_READ_BYTES};
use super::key::ObjectKey;
use super::listing::{self, ListStream, ListedObject};
use super::media_source::{ByteStream, MediaSource, SourceKind};
use super::range::ByteRange;
use super::runs::{plan_runs, Run, RunCursor, OVER_READ_BUDGET_BYTES};

/// GETs `read_ranges` runs at once.
const READ_CONCURRENCY: usize = 4;

/// Object identities remembered at most (each a key, a size and an ETag).
const IDENTITY_CACHE_ENTRIES: u64 = 100_000;

/// Prefix of the version of an object whose store gives no ETag: its last-modified time.
const LAST_MODIFIED_VERSION: &str = "lm:";

/// The store and prefix of `url`, built as a source's would be, for a shelf
/// (`shelf.rs`): the same client options, retries and credentials.
pub(super) fn build_shelf_store(
    url: &str,
    options: &ObjectStoreOptions,
    config: &[(&str, &str)],
    counters: &Arc<SourceCounters>,
) -> Result<(Arc<dyn ObjectStore>, Path), StoreError> {
    build_store(url, options, config, counters)
}

/// Media objects in an object store, under a prefix.
pub struct ObjectStoreSource {
    /// The one store of this source, shared by every read (one connection pool).
    store: Arc<dyn ObjectStore>,
    /// Path of the prefix keys live under; empty for the store's root.
    prefix: Path,
    /// Deadline for a response head, retries included.
    timeout: Duration,
    /// Gap bytes below which ranges share a GET.
    max_merge_gap_bytes: u64,
    /// Identities by key, each kept for the identity TTL; `None` when the TTL is 0.
    /// Loads are single-flight: concurrent requests for one key share one HEAD.
    identities: Option<Cache<ObjectKey, KnownIdentity>>,
    /// How long an identity is reused (zero: never).
    identity_ttl: Duration,
    /// Identities forgotten before their window ended (`MediaSource::identity_epoch`).
    forgotten: AtomicU64,
    counters: Arc<SourceCounters>,
}

impl fmt::Debug for ObjectStoreSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectStoreSource")
            .field("store", &self.store.to_string())
            .field("prefix", &self.prefix.as_ref())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl ObjectStoreSource {
    /// A source serving the objects under `url` (`s3://bucket/prefix`, `gs://`, `az://`,
    /// `https://host/prefix`), with credentials and region from the environment.
    ///
    /// # Errors
    /// [`StoreError`] for an unsupported URL or a configuration the store refuses.
    pub fn new(url: &str, options: &ObjectStoreOptions) -> Result<Self, StoreError> {
        Self::with_config(url, options, &[])
    }

    /// As [`ObjectStoreSource::new`], with `config` applied after the environment: pairs of
    /// `object_store` configuration keys and values (`aws_access_key_id`, `aws_region`,
    /// `google_service_account`, `azure_storage_account_key`, ...).
    ///
    /// # Errors
    /// As [`ObjectStoreSource::new`], and [`StoreError::UnknownOption`] for a key the store
    /// does not know.
    pub fn with_config(
        url: &str,
        options: &ObjectStoreOptions,
        config: &[(&str, &str)],
    ) -> Result<Self, StoreError> {
        let counters = Arc::new(SourceCounters::default());
        let (store, prefix) = build_store(url, options, config, &counters)?;
        Ok(Self::assemble(store, prefix, options, counters))
    }

    /// A source over a store built elsewhere (`object_store`'s in-memory store in tests),
    /// keys under `prefix`. Retries made inside such a store are not counted.
    ///
    /// # Errors
    /// [`StoreError::InvalidUrl`] when `prefix` is not a valid object path.
    pub fn from_store(
        store: Arc<dyn ObjectStore>,
        prefix: &str,
        options: &ObjectStoreOptions,
    ) -> Result<Self, StoreError> {
        let prefix = Path::parse(prefix).map_err(|e| StoreError::InvalidUrl {
            url: prefix.to_owned(),
            reason: e.to_string(),
        })?;
        Ok(Self::assemble(
            store,
            prefix,
            options,
            Arc::new(SourceCounters::default()),
        ))
    }

    fn assemble(
        store: Arc<dyn ObjectStore>,
        prefix: Path,
        options: &ObjectStoreOptions,
        counters: Arc<SourceCounters>,
    ) -> Self {
        let identities = (options.identity_ttl_ms > 0).then(|| {
            Cache::builder()
                .max_capacity(IDENTITY_CACHE_ENTRIES)
                .time_to_live(Duration::from_millis(options.identity_ttl_ms))
                .build()
        });
        Self {
            store,
            prefix,
            timeout: Duration::from_millis(options.timeout_ms),
            max_merge_gap_bytes: options.max_merge_gap_bytes,
            identities,
            identity_ttl: Duration::from_millis(options.identity_ttl_ms),
            forgotten: AtomicU64::new(0),
            counters,
        }
    }

    /// The store path of `key`. Keys are validated (no empty, `.` or `..` segment, no
    /// control character), so the path is always valid.
    fn path(&self, key: &ObjectKey) -> Path {
        let joined = if self.prefix.as_ref().is_empty() {
            key.as_str().to_owned()
        } else {
            format!("{}/{}", self.prefix.as_ref(), key.as_str())
        };
        Path::parse(&joined).unwrap_or_else(|_| Path::from(joined.as_str()))
    }

    /// Forget the identity of `key`, so the next request asks the store again.
    async fn forget(&self, key: &ObjectKey) {
        if let Some(identities) = &self.identities {
            identities.invalidate(key).await;
        }
        self.forgotten.fetch_add(1, Ordering::Release);
    }

    /// Run one store request: count it, bound the wait for its head by the timeout, time
    /// it, and map its error.
    async fn request<T>(
        &self,
        key: &ObjectKey,
        call: impl std::future::Future<Output = ::object_store::Result<T>>,
    ) -> Result<T, SourceError> {
        self.counters.read_requests.inc();
        let started = Instant::now();
        let outcome = tokio::time::timeout(self.timeout, call).await;
        self.counters
            .read_seconds
            .observe(started.elapsed().as_secs_f64());
        let result = match outcome {
            Err(_elapsed) => Err(SourceError::Timeout {
                key: key.to_string(),
            }),
            Ok(result) => result.map_err(|e| map_error(key, e)),
        };
        if result.is_err() {
            self.counters.read_errors.inc();
        }
        result
    }

    /// HEAD `key`: its current identity.
    #[tracing::instrument(
        name = "source.read",
        skip_all,
        fields(vod.source = "object_store", vod.key = %key, vod.request = "HEAD")
    )]
    async fn head(&self, key: &ObjectKey) -> Result<ObjectIdentity, SourceError> {
        let options = GetOptions {
            head: true,
            extensions: attempt_tag(),
            ..Default::default()
        };
        let result = self
            .request(key, self.store.get_opts(&self.path(key), options))
            .await?;
        Ok(identity_of(&result.meta))
    }

    /// GET the bytes of `run` from version `identity` of `key`: the response's body and a
    /// cursor that cuts it back into the run's parts.
    #[tracing::instrument(
        name = "source.read",
        skip_all,
        fields(vod.source = "object_store", vod.key = %key, vod.request = "GET",
               vod.range_start = run.fetch.start, vod.range_len = run.fetch.len,
               vod.outcome = tracing::field::Empty)
    )]
    async fn open_run(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        run: &Run,
    ) -> Result<OpenRun, SourceError> {
        let options = GetOptions {
            range: Some(GetRange::Bounded(run.fetch.start..run.fetch.end())),
            if_match: if_match(identity),
            extensions: attempt_tag(),
            ..Default::default()
        };
        let result = match self
            .request(key, self.store.get_opts(&self.path(key), options))
            .await
        {
            Ok(result) => result,
            Err(e) => {
                // The identity the caller holds is stale: make the next request ask again.
                if matches!(
                    e,
                    SourceError::Changed { .. } | SourceError::NotFound { .. }
                ) {
                    self.forget(key).await;
                }
                return Err(e);
            }
        };
        if !same_version(identity, &result.meta) {
            // A store that ignores If-Match (or has no ETag) still cannot mix versions.
            self.counters.read_errors.inc();
            self.forget(key).await;
            return Err(SourceError::Changed {
                key: key.to_string(),
            });
        }
        if result.range != (run.fetch.start..run.fetch.end()) {
            self.counters.read_errors.inc();
            return Err(io_error(
                key,
                format!("asked for {} and got {:?}", run.fetch, result.range),
            ));
        }
        tracing::Span::current().record("vod.outcome", "ok");
        Ok(OpenRun {
            body: result.into_stream(),
            cursor: RunCursor::new(run),
        })
    }

    /// GET `run` and collect its parts, each as one buffer.
    async fn read_run(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        run: Run,
    ) -> Result<Vec<Bytes>, SourceError> {
        let OpenRun {
            mut body,
            mut cursor,
        } = self.open_run(key, identity, &run).await?;
        // The run's size was checked against MAX_READ_BYTES before planning.
        let mut wanted = BytesMut::with_capacity(run.wanted() as usize);
        let mut pieces = VecDeque::new();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| {
                self.counters.read_errors.inc();
                map_error(key, e)
            })?;
            self.counters.read_bytes.inc_by(chunk.len() as u64);
            let dropped = cursor.feed(chunk, usize::MAX, &mut pieces).map_err(|e| {
                self.counters.read_errors.inc();
                io_error(key, e.to_string())
            })?;
            self.counters.over_read_bytes.inc_by(dropped);
            for piece in pieces.drain(..) {
                wanted.extend_from_slice(&piece);
            }
        }
        if !cursor.is_complete() {
            self.counters.read_errors.inc();
            return Err(io_error(key, format!("{} ended early", run.fetch)));
        }
        let mut all = wanted.freeze();
        Ok(run
            .parts
            .iter()
            .map(|part| all.split_to((part.len as usize).min(all.len())))
            .collect())
    }

    /// Check `ranges` against the object and, for buffered reads, the read limit.
    fn check_ranges(
        key: &ObjectKey,
        identity: &ObjectIdentity,
        ranges: &[ByteRange],
        buffered: bool,
    ) -> Result<(), SourceError> {
        check_ranges(key, identity, ranges, buffered.then_some(MAX_READ_BYTES)).map(|_| ())
    }
}

#[async_trait]
impl MediaSource for ObjectStoreSource {
    fn kind(&self) -> SourceKind {
        SourceKind::ObjectStore
    }

    /// `object_store`'s listing (S3 `ListObjectsV2` pages of up to 1000 keys, fetched as
    /// the stream is read), resumed after `after` with the store's start-after offset.
    fn list(self: Arc<Self>, prefix: String, after: Option<String>) -> ListStream {
        if let Err(e) = listing::check_prefix(&prefix) {
            return listing::failed(e);
        }
        let base = self.prefix.as_ref().to_owned();
        let join = |key: &str| match (base.is_empty(), key.is_empty()) {
            (_, true) => Path::parse(&base).unwrap_or_default(),
            (true, false) => Path::from(key),
            (false, false) => Path::from(format!("{base}/{key}").as_str()),
        };
        let folder = join(prefix.trim_end_matches('/'));
        let listing = match after {
            Some(after) => self.store.list_with_offset(Some(&folder), &join(&after)),
            None => self.store.list(Some(&folder)),
        };
        let strip = match base.is_empty() {
            true => String::new(),
            false => format!("{base}/"),
        };
        listing
            .map(move |item| match item {
                Ok(meta) => {
                    let location = meta.location.as_ref();
                    Ok(ListedObject {
                        key: location.strip_prefix(&strip).unwrap_or(location).to_owned(),
                        size: meta.size,
                    })
                }
                Err(e) => Err(SourceError::Unreachable {
                    key: prefix.clone(),
                    reason: e.to_string(),
                }),
            })
            .boxed()
    }

    fn counters(&self) -> &Arc<SourceCounters> {
        &self.counters
    }

    /// A HEAD of a key that need not exist: any answer from the store, "not found"
    /// included, shows it is reachable and accepts our credentials.
    async fn check_ready(&self) -> Result<(), SourceError> {
        let probe = ObjectKey::parse(".vodpack-readyz").map_err(|e| SourceError::Io {
            key: String::new(),
            source: std::io::Error::other(e.to_string()),
        })?;
        match self.head(&probe).await {
            Ok(_) | Err(SourceError::NotFound { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn identify(&self, key: &ObjectKey) -> Result<ObjectIdentity, SourceError> {
        Ok(self.identify_until(key).await?.0)
    }

    fn identity_epoch(&self) -> u64 {
        self.forgotten.load(Ordering::Acquire)
    }

    async fn identify_until(
        &self,
        key: &ObjectKey,
    ) -> Result<(ObjectIdentity, Option<Instant>), SourceError> {
        let Some(identities) = &self.identities else {
            return Ok((self.head(key).await?, None));
        };
        // The reuse is counted from before the HEAD, so it ends no later than the cache's.
        let ask = async {
            let until = Instant::now().checked_add(self.identity_ttl);
            let identity = self.head(key).await?;
            Ok::<_, SourceError>(KnownIdentity { identity, until })
        };
        let known = (identities.try_get_with_by_ref(key, ask).await)
            .map_err(|shared| copy_error(&shared))?;
        Ok((known.identity, known.until))
    }

    async fn read_range(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        range: ByteRange,
    ) -> Result<Bytes, SourceError> {
        Self::check_ranges(key, identity, &[range], true)?;
        if range.len == 0 {
            return Ok(Bytes::new());
        }
        let mut parts = self.read_run(key, identity, Run::single(range)).await?;
        Ok(parts.pop().unwrap_or_default())
    }

    async fn read_ranges(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        ranges: &[ByteRange],
    ) -> Result<Vec<Bytes>, SourceError> {
        Self::check_ranges(key, identity, ranges, true)?;
        let runs = plan_runs(ranges, self.max_merge_gap_bytes, OVER_READ_BUDGET_BYTES);
        let per_run: Vec<Vec<Bytes>> = futures_util::stream::iter(runs)
            .map(|run| self.read_run(key, identity, run))
            .buffered(READ_CONCURRENCY)
            .try_collect()
            .await?;
        // The runs' parts are the non-empty ranges in order; empty ranges read nothing.
        let mut parts = per_run.into_iter().flatten();
        Ok(ranges
            .iter()
            .map(|range| {
                if range.len == 0 {
                    Bytes::new()
                } else {
                    parts.next().unwrap_or_default()
                }
            })
            .collect())
    }

    fn stream_ranges(
        self: Arc<Self>,
        key: ObjectKey,
        identity: ObjectIdentity,
        ranges: Vec<ByteRange>,
        chunk_bytes: usize,
    ) -> ByteStream {
        if let Err(e) = Self::check_ranges(&key, &identity, &ranges, false) {
            return Box::pin(futures_util::stream::once(async move { Err(e) }));
        }
        let runs = plan_runs(&ranges, self.max_merge_gap_bytes, OVER_READ_BUDGET_BYTES);
        let counters = self.counters.clone();
        let object = key.clone();
        let open_run: OpenRunFn = Arc::new(move |run: Run| {
            let (source, key, identity) = (self.clone(), object.clone(), identity.clone());
            async move { source.open_run(&key, &identity, &run).await }.boxed()
        });
        let state = RunStream::new(open_run, counters, key, runs, chunk_bytes);
        Box::pin(futures_util::stream::unfold(
            state,
            |mut state| async move {
                let item = state.next_chunk().await?;
                Some((item, state))
            },
        ))
    }
}

/// The identity of an object as its store describes it: size, and the ETag, or the
/// last-modified time for a store without ETags.
fn identity_of(meta: &ObjectMeta) -> ObjectIdentity {
    ObjectIdentity {
        size: meta.size,
        version: meta.e_tag.clone().unwrap_or_else(|| {
            format!("{LAST_MODIFIED_VERSION}{}", meta.last_modified.to_rfc3339())
        }),
    }
}

/// The `If-Match` value for reads of `identity`: its ETag if it has a strong one (a weak
/// ETag never matches `If-Match`, RFC 9110 13.1.1).
fn if_match(identity: &ObjectIdentity) -> Option<String> {
    let version = identity.version.as_str();
    (!version.starts_with(LAST_MODIFIED_VERSION) && !version.starts_with("W/"))
        .then(|| version.to_owned())
}

/// Whether a GET answered with `meta` is of the object version `identity`.
fn same_version(identity: &ObjectIdentity, meta: &ObjectMeta) -> bool {
    if meta.size != identity.size {
        return false;
    }
    match &meta.e_tag {
        Some(tag) => *tag == identity.version,
        // No ETag on the answer: compare the last-modified time if that is our version,
        // else rely on the If-Match the request carried.
        None => {
            !identity.version.starts_with(LAST_MODIFIED_VERSION)
                || identity_of(meta).version == identity.version
        }
    }
}

#[cfg(test)]
mod tests;
