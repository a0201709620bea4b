//! `ObjectStoreSource`: media objects in a bucket (S3-compatible, GCS, Azure) or behind plain
//! HTTP, read through the `object_store` crate, which signs requests, pools connections,
//! retries with backoff and resumes a broken body.
//!
//! This file holds the source and its `MediaSource` reads. Beside it: `identify.rs` (which
//! version a read is of: HEAD, first open, background check), `identities.rs` and
//! `opening.rs` (identities reused, first bytes of objects just opened), `requests.rs` and
//! `hedge.rs` (one store request, hedged), `stream.rs` and `shared.rs` (streamed reads, gap
//! bytes kept for other segments), `store.rs` and `validate.rs` (options, building the
//! store, its errors); the tests in `tests.rs` and `watched_tests.rs`.

mod hedge;
mod identify;
mod identities;
mod opening;
mod requests;
mod shared;
mod store;
mod stream;
mod validate;

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ::object_store::path::Path;
use ::object_store::ObjectStore;
use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use futures_util::future::FutureExt;
use futures_util::stream::{StreamExt, TryStreamExt};

pub(crate) use self::opening::MAX_OPEN_BYTES;
pub use self::store::{ObjectStoreOptions, StoreError};

use self::hedge::{HedgeBudget, Latencies};
use self::identify::{if_match, same_version};
use self::identities::{Freshness, Identities, Known};
use self::opening::{Held, OpenShapes, OpenedObjects};
use self::requests::Requests;
use self::shared::SharedReads;
use self::store::{build_store, copy_error, io_error, map_error};
use self::stream::{OpenRun, OpenRunFn, Planning, RunStream};
use super::counters::SourceCounters;
use super::error::SourceError;
use super::identity::{check_ranges, ObjectIdentity, ObjectVersion, MAX_READ_BYTES};
use super::key::ObjectKey;
use super::listing::{self, ListStream, ListedObject};
use super::media_source::{ByteStream, MediaSource, SourceKind};
use super::range::ByteRange;
use super::runs::{plan_runs, Run, RunCursor, OVER_READ_BUDGET_BYTES};

/// Most gap bytes kept across the source's streams for other segments of the same objects
/// (`shared.rs`): about a hundred segments' audio.
const SHARED_READ_BYTES: u64 = 32 * 1024 * 1024;

/// How long a stream of many GETs waits for another to lead, when the store's latency is
/// not known yet; otherwise the recent median time to a head, within
/// [`SHARE_WAIT_BOUNDS`]: waiting costs at most what one more round trip would.
const SHARE_WAIT: Duration = Duration::from_millis(20);
const SHARE_WAIT_BOUNDS: (Duration, Duration) =
    (Duration::from_millis(5), Duration::from_millis(50));

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
///
/// Each object's identity (size and ETag) comes from a GET of its first bytes when it is
/// first asked for, then is reused and checked off the request path. Every GET of a known
/// version asks for one range with `If-Match` set to the identity's ETag, and the answer's
/// ETag and size are checked again, so an answer never mixes two versions of an object; a
/// mismatch is [`SourceError::Changed`] and forgets the identity.
///
/// Reads are planned here (`runs.rs`): ranges closer than `max_merge_gap_bytes` share a
/// GET, at most [`OVER_READ_BUDGET_BYTES`] of gaps per read, because `object_store`'s
/// `get_ranges` merges gaps of up to 1 MiB. A segment's GETs are issued together (bounded),
/// so a segment costs about one round trip whatever the interleave; the gaps one segment
/// reads through are kept a moment for the segment of another track of the same time,
/// which players fetch together with it; a late answer is hedged. The deadline on a
/// response head is ours, because `object_store`'s default timeout covers a whole body,
/// which a slow client can stretch without limit.
pub struct ObjectStoreSource {
    /// The store and how each request to it is made, shared with streams and checks.
    requests: Arc<Requests>,
    /// Gap bytes below which ranges share a GET.
    max_merge_gap_bytes: u64,
    /// GETs a read keeps open at once.
    read_concurrency: usize,
    /// How much the GETs that first open an object read (`opening.rs`).
    open_shapes: OpenShapes,
    /// Identities by key (`identities.rs`); `None` when the TTL is 0 (a HEAD every time).
    identities: Option<Identities>,
    /// The bytes of objects just opened, for the reads that follow.
    opened: OpenedObjects,
    /// Gap bytes of segment reads kept for other segments (`shared.rs`).
    shared: Arc<SharedReads>,
}

impl fmt::Debug for ObjectStoreSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectStoreSource")
            .field("store", &self.requests.store.to_string())
            .field("prefix", &self.requests.prefix.as_ref())
            .field("timeout", &self.requests.timeout)
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
            Identities::new(
                Duration::from_millis(options.identity_ttl_ms),
                Duration::from_millis(options.identity_max_stale_ms),
            )
        });
        let requests = Requests {
            store,
            prefix,
            timeout: Duration::from_millis(options.timeout_ms),
            counters: counters.clone(),
            latencies: Latencies::default(),
            hedges: HedgeBudget::new(options.hedge_percent),
            hedge_after: (options.hedge_after_ms > 0)
                .then(|| Duration::from_millis(options.hedge_after_ms)),
        };
        Self {
            requests: Arc::new(requests),
            max_merge_gap_bytes: options.max_merge_gap_bytes,
            read_concurrency: options.read_concurrency.max(1),
            open_shapes: OpenShapes::new(options.open_read_bytes),
            identities,
            opened: OpenedObjects::default(),
            shared: Arc::new(SharedReads::new(SHARED_READ_BYTES)),
        }
    }

    /// How long a stream of many GETs waits for another stream to lead.
    fn share_wait(&self) -> Duration {
        let (low, high) = SHARE_WAIT_BOUNDS;
        (self.requests.latencies.median()).map_or(SHARE_WAIT, |median| median.clamp(low, high))
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
        requests: &Requests,
        identities: Option<&Identities>,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        run: &Run,
    ) -> Result<OpenRun, SourceError> {
        let forget = || async {
            if let Some(identities) = identities {
                identities.forget(key).await;
            }
        };
        let result = match requests.get_range(key, run.fetch, if_match(identity)).await {
            Ok(result) => result,
            Err(e) => {
                // The identity the caller holds is stale: make the next request ask again.
                if matches!(
                    e,
                    SourceError::Changed { .. } | SourceError::NotFound { .. }
                ) {
                    forget().await;
                }
                return Err(e);
            }
        };
        if !same_version(identity, &result.meta) {
            // A store that ignores If-Match (or has no ETag) still cannot mix versions.
            requests.counters.read_errors.inc();
            forget().await;
            return Err(SourceError::Changed {
                key: key.to_string(),
            });
        }
        if result.range != (run.fetch.start..run.fetch.end()) {
            requests.counters.read_errors.inc();
            return Err(io_error(
                key,
                format!("asked for {} and got {:?}", run.fetch, result.range),
            ));
        }
        if let Some(identities) = identities {
            identities.confirm(key, identity).await;
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
        let counters = &self.requests.counters;
        let opened = Self::open_run(
            &self.requests,
            self.identities.as_ref(),
            key,
            identity,
            &run,
        );
        let OpenRun {
            mut body,
            mut cursor,
        } = opened.await?;
        // The run's size was checked against MAX_READ_BYTES before planning.
        let mut wanted = BytesMut::with_capacity(run.wanted() as usize);
        let mut pieces = VecDeque::new();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| {
                counters.read_errors.inc();
                map_error(key, e)
            })?;
            counters.read_bytes.inc_by(chunk.len() as u64);
            let dropped = cursor.feed(chunk, usize::MAX, &mut pieces).map_err(|e| {
                counters.read_errors.inc();
                io_error(key, e.to_string())
            })?;
            counters.over_read_bytes.inc_by(dropped);
            for piece in pieces.drain(..) {
                wanted.extend_from_slice(&piece);
            }
        }
        if !cursor.is_complete() {
            counters.read_errors.inc();
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
        let base = self.requests.prefix.as_ref().to_owned();
        let join = |key: &str| match (base.is_empty(), key.is_empty()) {
            (_, true) => Path::parse(&base).unwrap_or_default(),
            (true, false) => Path::from(key),
            (false, false) => Path::from(format!("{base}/{key}").as_str()),
        };
        let folder = join(prefix.trim_end_matches('/'));
        let store = &self.requests.store;
        let listing = match after {
            Some(after) => store.list_with_offset(Some(&folder), &join(&after)),
            None => store.list(Some(&folder)),
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
        &self.requests.counters
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
        self.identities.as_ref().map_or(0, Identities::epoch)
    }

    async fn identify_until(
        &self,
        key: &ObjectKey,
    ) -> Result<(ObjectIdentity, Option<Instant>), SourceError> {
        let Some(identities) = &self.identities else {
            return Ok((self.head(key).await?, None));
        };
        if let Some(known) = identities.known.get(key).await {
            match identities.freshness(&known, tokio::time::Instant::now()) {
                Freshness::Fresh(until) => return Ok((known.identity.clone(), until)),
                Freshness::Stale => {
                    self.check_in_background(key, known.clone());
                    return Ok((known.identity.clone(), None));
                }
                Freshness::Expired => identities.known.invalidate(key).await,
            }
        }
        // Single-flight: concurrent first requests of an object share one open.
        let open = async { Ok::<_, SourceError>(Known::new(self.open(key).await?)) };
        let known = (identities.known.try_get_with_by_ref(key, open).await)
            .map_err(|shared| copy_error(&shared))?;
        let until = match identities.freshness(&known, tokio::time::Instant::now()) {
            Freshness::Fresh(until) => until,
            _ => None,
        };
        Ok((known.identity.clone(), until))
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
        // The bytes of an object just opened: the reads that follow the open (the probe of
        // `moov`, the rest of a long `moov`, the tail after `mdat`) read only what is new.
        let held = self
            .opened
            .take(key, identity, range, &self.open_shapes)
            .await;
        let (start, read_to, end) = match held {
            Some(Held::All(bytes)) => return Ok(bytes),
            Some(Held::Parts {
                start,
                read_to,
                end,
            }) => (start, read_to, end),
            None => (Bytes::new(), range.end(), Bytes::new()),
        };
        let from = range.start + start.len() as u64;
        let middle = ByteRange::new(from, read_to.saturating_sub(from));
        let mut parts = self.read_run(key, identity, Run::single(middle)).await?;
        let middle = parts.pop().unwrap_or_default();
        if start.is_empty() && end.is_empty() {
            return Ok(middle);
        }
        let mut whole = BytesMut::with_capacity(start.len() + middle.len() + end.len());
        whole.extend_from_slice(&start);
        whole.extend_from_slice(&middle);
        whole.extend_from_slice(&end);
        Ok(whole.freeze())
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
            .buffered(self.read_concurrency)
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
        let planning = Planning {
            max_gap: self.max_merge_gap_bytes,
            over_read_budget: OVER_READ_BUDGET_BYTES,
            max_ahead: self.read_concurrency,
            shared: Some((self.shared.clone(), self.share_wait())),
        };
        let counters = self.requests.counters.clone();
        let (requests, identities) = (self.requests.clone(), self.identities.clone());
        let version = ObjectVersion::new(key.clone(), identity.clone());
        let open_run: OpenRunFn = Arc::new(move |run: Run| {
            let (requests, identities) = (requests.clone(), identities.clone());
            let ObjectVersion { key, identity } = version.clone();
            async move {
                Self::open_run(&requests, identities.as_ref(), &key, &identity, &run).await
            }
            .boxed()
        });
        let state = RunStream::new(
            open_run,
            counters,
            ObjectVersion::new(key, identity),
            ranges,
            planning,
            chunk_bytes,
        );
        Box::pin(futures_util::stream::unfold(
            state,
            |mut state| async move {
                let item = state.next_chunk().await?;
                Some((item, state))
            },
        ))
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod watched_tests;
