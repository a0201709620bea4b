//! What every source reports about its reads: counters (bytes, requests, errors, retries,
//! latency and over-read) and the target of its `source.read` trace spans.
//!
//! The counters are prometheus-client handles (shared atomics), so the same values are
//! read by `/metrics`, by the budget harness and by tests. They are registered under the
//! `source_kind` label. The over-read budget is judged from `vod_source_read_bytes_total`
//! against the bytes sent; `vod_source_over_read_bytes_total` counts the part of it a
//! source read on purpose (gaps between ranges merged into one request).

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// The target of the local source's `source.read` spans (one per batch of a streamed
/// segment, 64 KiB by default). Telemetry leaves it out of log lines like the `request`
/// span (formatting its fields on every batch costs CPU) and exports it as trace spans.
pub const SOURCE_READ_SPAN_TARGET: &str = "vodpack::source::read";

/// Counters for one source; clones share the same values.
#[derive(Debug, Clone)]
pub struct SourceCounters {
    /// Bytes read from the source (`vod_source_read_bytes_total`).
    pub read_bytes: Counter,
    /// Read requests issued (one per range read or GET).
    pub read_requests: Counter,
    /// Reads that failed.
    pub read_errors: Counter,
    /// Reads retried after a transient failure.
    pub read_retries: Counter,
    /// Seconds per read request (object stores: to the response head).
    pub read_seconds: Histogram,
    /// Bytes read but not passed on: gaps between ranges merged into one request
    /// (`vod_source_over_read_bytes`). 0 for the local source unless it reads small gaps
    /// through (`--local-merge-gap-bytes`).
    pub over_read_bytes: Counter,
    /// Store requests sent a second time because their answer was late
    /// (`vod_source_hedged_requests`); also counted in `read_requests`.
    pub hedged_requests: Counter,
    /// Hedges whose answer came first (`vod_source_hedge_wins`).
    pub hedge_wins: Counter,
    /// Bytes a segment took from another segment's read of the same object instead of
    /// reading them (`vod_source_shared_bytes`).
    pub shared_bytes: Counter,
}

impl Default for SourceCounters {
    fn default() -> Self {
        Self {
            read_bytes: Counter::default(),
            read_requests: Counter::default(),
            read_errors: Counter::default(),
            read_retries: Counter::default(),
            read_seconds: Histogram::new([
                0.000_1, 0.000_5, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
            ]),
            over_read_bytes: Counter::default(),
            hedged_requests: Counter::default(),
            hedge_wins: Counter::default(),
            shared_bytes: Counter::default(),
        }
    }
}

impl SourceCounters {
    /// Register these counters in `registry` (already labelled with the source kind).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "vod_source_read_bytes",
            "Bytes read from the media source",
            self.read_bytes.clone(),
        );
        registry.register(
            "vod_source_read_requests",
            "Read requests issued to the media source",
            self.read_requests.clone(),
        );
        registry.register(
            "vod_source_read_errors",
            "Reads from the media source that failed",
            self.read_errors.clone(),
        );
        registry.register(
            "vod_source_read_retries",
            "Reads from the media source retried after a transient failure",
            self.read_retries.clone(),
        );
        registry.register(
            "vod_source_read_seconds",
            "Latency of one read request to the media source",
            self.read_seconds.clone(),
        );
        registry.register(
            "vod_source_over_read_bytes",
            "Bytes read from the media source but not sent (gaps between merged ranges)",
            self.over_read_bytes.clone(),
        );
        registry.register(
            "vod_source_hedged_requests",
            "Requests to the media source sent again because their answer was late",
            self.hedged_requests.clone(),
        );
        registry.register(
            "vod_source_hedge_wins",
            "Hedged requests whose second answer came first",
            self.hedge_wins.clone(),
        );
        registry.register(
            "vod_source_shared_bytes",
            "Bytes a segment took from another segment's read of the same object",
            self.shared_bytes.clone(),
        );
    }
}
