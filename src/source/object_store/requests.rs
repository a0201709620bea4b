//! One request to the store at a time: its path, its count, its deadline, its latency, its
//! hedge (`hedge.rs`), its error mapped to ours. Everything `ObjectStoreSource` asks of
//! the store goes through [`Requests`], which is shared (an `Arc`) with the tasks that
//! stream segments and check identities in the background.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ::object_store::path::Path;
use ::object_store::{GetOptions, GetRange, GetResult, ObjectStore};
// tokio's clock: the system's, but paused in tests, whose stores answer on it.
use tokio::time::Instant;

use super::hedge::{HedgeBudget, Latencies};
use super::store::{attempt_tag, map_error};
use crate::source::counters::SourceCounters;
use crate::source::error::SourceError;
use crate::source::key::ObjectKey;
use crate::source::range::ByteRange;

/// The store of a source and how each request to it is made.
#[derive(Debug)]
pub(super) struct Requests {
    /// The one store of this source, shared by every read (one connection pool).
    pub store: Arc<dyn ObjectStore>,
    /// Path of the prefix keys live under; empty for the store's root.
    pub prefix: Path,
    /// Deadline for a response head, retries and hedges included.
    pub timeout: Duration,
    pub counters: Arc<SourceCounters>,
    /// Recent times to a head, for hedges and for how long a stream waits for another.
    pub latencies: Latencies,
    pub hedges: HedgeBudget,
    /// A fixed hedge delay; `None`: twice the recent 95th percentile.
    pub hedge_after: Option<Duration>,
}

impl Requests {
    /// The store path of `key`. Keys are validated (no empty, `.` or `..` segment, no
    /// control character), so the path is always valid.
    pub fn path(&self, key: &ObjectKey) -> Path {
        let joined = if self.prefix.as_ref().is_empty() {
            key.as_str().to_owned()
        } else {
            format!("{}/{}", self.prefix.as_ref(), key.as_str())
        };
        Path::parse(&joined).unwrap_or_else(|_| Path::from(joined.as_str()))
    }

    /// Run one store request made by `call`: count it, bound the wait for its head by the
    /// timeout, hedge it when its head is late, time it, and map its error. `call` makes
    /// the request afresh each time it is called (the hedge is a second call).
    pub async fn request<T, F, Fut>(&self, key: &ObjectKey, call: F) -> Result<T, SourceError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = ::object_store::Result<T>>,
    {
        self.counters.read_requests.inc();
        self.hedges.earn();
        let started = Instant::now();
        let hedge_after = match self.hedges.enabled() {
            true => self.hedge_after.or_else(|| self.latencies.hedge_after()),
            false => None,
        };
        let answer = async {
            let first = call();
            tokio::pin!(first);
            let Some(after) = hedge_after else {
                return first.await;
            };
            tokio::select! {
                answer = &mut first => return answer,
                () = tokio::time::sleep(after) => {}
            }
            if !self.hedges.spend() {
                return first.await;
            }
            self.counters.read_requests.inc();
            self.counters.hedged_requests.inc();
            tracing::debug!(vod.key = %key, after_ms = after.as_millis() as u64, "store request hedged");
            let second = call();
            tokio::pin!(second);
            tokio::select! {
                answer = &mut first => answer,
                answer = &mut second => {
                    self.counters.hedge_wins.inc();
                    answer
                }
            }
        };
        let outcome = tokio::time::timeout(self.timeout, answer).await;
        let took = started.elapsed();
        self.counters.read_seconds.observe(took.as_secs_f64());
        let result = match outcome {
            Err(_elapsed) => Err(SourceError::Timeout {
                key: key.to_string(),
            }),
            Ok(result) => {
                self.latencies.observe(took);
                result.map_err(|e| map_error(key, e))
            }
        };
        if result.is_err() {
            self.counters.read_errors.inc();
        }
        result
    }

    /// HEAD `key`.
    pub async fn head(&self, key: &ObjectKey) -> Result<GetResult, SourceError> {
        let path = self.path(key);
        self.request(key, || {
            let options = GetOptions {
                head: true,
                extensions: attempt_tag(),
                ..Default::default()
            };
            self.store.get_opts(&path, options)
        })
        .await
    }

    /// GET `range` of `key` (whole when `None`), of the version `if_match` when given.
    pub async fn get(
        &self,
        key: &ObjectKey,
        range: Option<GetRange>,
        if_match: Option<String>,
    ) -> Result<GetResult, SourceError> {
        let path = self.path(key);
        self.request(key, || {
            let options = GetOptions {
                range: range.clone(),
                if_match: if_match.clone(),
                extensions: attempt_tag(),
                ..Default::default()
            };
            self.store.get_opts(&path, options)
        })
        .await
    }

    /// GET the bytes of `range` exactly.
    pub async fn get_range(
        &self,
        key: &ObjectKey,
        range: ByteRange,
        if_match: Option<String>,
    ) -> Result<GetResult, SourceError> {
        let bounded = GetRange::Bounded(range.start..range.end());
        self.get(key, Some(bounded), if_match).await
    }
}
