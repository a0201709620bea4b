//! The Prometheus registry and the HTTP metrics the server keeps.

use std::sync::{Mutex, OnceLock};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::source::SourceCounters;

/// Labels of the per-request metrics.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct HttpLabels {
    /// Route kind: master, media_playlist, init, segment, mpd, metrics, health, other.
    pub route: &'static str,
    /// HTTP status code.
    pub status: u16,
}

/// Labels of the shed-request counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ShedLabels {
    /// `segment` or `manifest`.
    pub class: &'static str,
}

/// Labels of the index tier metrics.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct TierLabels {
    /// `memory`, `disk`, `store` or `moov`.
    pub tier: &'static str,
}

/// Labels of the token refusal counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ReasonLabels {
    /// `missing`, `malformed`, `bad_signature`, `expired` or `wrong_path`.
    pub reason: &'static str,
}

/// Labels of the key server request counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct OutcomeLabels {
    /// `ok`, `server_error` (5xx), `refused` (another non-2xx), `timeout`, `transport`,
    /// or `invalid` (an answer that is not a usable key).
    pub outcome: &'static str,
}

/// Every `reason` of `vod_token_refusals_total` (`TokenError::label`).
pub const TOKEN_REFUSAL_REASONS: [&str; 5] = [
    "missing",
    "malformed",
    "bad_signature",
    "expired",
    "wrong_path",
];

/// Every `outcome` of `vod_key_server_requests_total`.
pub const KEY_SERVER_OUTCOMES: [&str; 6] = [
    "ok",
    "server_error",
    "refused",
    "timeout",
    "transport",
    "invalid",
];

/// Labels of `vod_build_info`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct BuildLabels {
    /// The crate version.
    pub version: &'static str,
    /// The git commit the binary was built from (`VODPACK_COMMIT` at build time), else
    /// `unknown`.
    pub commit: &'static str,
    /// The packager format (`PACKAGER_FORMAT`): a change changes every versioned URL.
    pub packager_format: String,
}

/// All metrics of one server.
pub struct Metrics {
    registry: Mutex<Registry>,
    /// Requests answered, by route and status.
    pub requests: Family<HttpLabels, Counter>,
    /// Seconds to the response head, by route and status.
    pub request_seconds: Family<HttpLabels, Histogram>,
    /// Body bytes sent (segments and manifests).
    pub sent_bytes: Counter,
    /// Responses whose bodies are streaming now.
    pub streams_in_flight: Gauge,
    /// Open client connections.
    pub connections_open: Gauge,
    /// Connections refused at the connection cap.
    pub rejected_connections: Counter,
    /// Requests shed at a request limit, by class (`segment`, `manifest`).
    pub shed_requests: Family<ShedLabels, Counter>,
    /// Streams closed because the client stopped reading.
    pub stalled_streams: Counter,
    /// Segment requests that waited in the admission queue (served or shed after).
    pub queued_requests: Counter,
    /// Metadata cache hits.
    pub cache_hits: Counter,
    /// Metadata cache misses (loads).
    pub cache_misses: Counter,
    /// Title index loads, by where the index came from.
    pub index_loads: Family<TierLabels, Counter>,
    /// Index objects read from a tier and not used (corrupt, foreign, over the limits).
    pub index_rejected: Family<TierLabels, Counter>,
    /// Index objects that could not be written to a tier.
    pub index_write_failures: Family<TierLabels, Counter>,
    /// Titles in the metadata cache (set at scrape time).
    pub cache_entries: Gauge,
    /// Weighted bytes of the metadata cache (set at scrape time).
    pub cache_weighted_bytes: Gauge,
    /// Always 1, labelled with the version, commit and packager format.
    pub build_info: Family<BuildLabels, Gauge>,
    /// Requests refused for their signed-URL token, by reason.
    pub token_refusals: Family<ReasonLabels, Counter>,
    /// Requests to the key server (each attempt, retries included), by outcome.
    pub key_server_requests: Family<OutcomeLabels, Counter>,
    /// 1 when the media source answered the last readiness check, 0 when it did not.
    pub source_up: Gauge,
    /// Readiness checks the media source did not answer.
    pub source_check_failures: Counter,
    /// The `(route, 200)` series of `requests` and `request_seconds`, held beside the
    /// families so that most requests neither hash their labels nor take a family's lock
    ///. Filled on first use, so the exposition is as before.
    ok_series: [OnceLock<OkSeries>; OK_SERIES],
}

/// Room for the `(route, 200)` series held apart: more than there are route labels.
const OK_SERIES: usize = 32;

/// The handles of one route's `200` series (each shares its family's value).
#[derive(Debug)]
struct OkSeries {
    route: &'static str,
    requests: Counter,
    seconds: Histogram,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// A registry with the HTTP metrics and the counters of the source of `kind`.
    pub fn new(source_kind: &'static str, source: &SourceCounters) -> Self {
        let mut registry = Registry::default();
        let metrics = Self {
            registry: Mutex::new(Registry::default()),
            requests: Family::default(),
            request_seconds: Family::new_with_constructor(|| {
                Histogram::new([
                    0.000_1, 0.000_5, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0,
                ])
            }),
            sent_bytes: Counter::default(),
            streams_in_flight: Gauge::default(),
            connections_open: Gauge::default(),
            rejected_connections: Counter::default(),
            shed_requests: Family::default(),
            stalled_streams: Counter::default(),
            queued_requests: Counter::default(),
            cache_hits: Counter::default(),
            cache_misses: Counter::default(),
            index_loads: Family::default(),
            index_rejected: Family::default(),
            index_write_failures: Family::default(),
            cache_entries: Gauge::default(),
            cache_weighted_bytes: Gauge::default(),
            build_info: Family::default(),
            token_refusals: Family::default(),
            key_server_requests: Family::default(),
            source_up: Gauge::default(),
            source_check_failures: Counter::default(),
            ok_series: std::array::from_fn(|_| OnceLock::new()),
        };
        registry.register(
            "vod_http_requests",
            "HTTP requests answered",
            metrics.requests.clone(),
        );
        registry.register(
            "vod_http_request_seconds",
            "Time to the response head",
            metrics.request_seconds.clone(),
        );
        registry.register(
            "vod_http_sent_bytes",
            "Response body bytes sent",
            metrics.sent_bytes.clone(),
        );
        registry.register(
            "vod_streams_in_flight",
            "Response bodies streaming now",
            metrics.streams_in_flight.clone(),
        );
        registry.register(
            "vod_connections_open",
            "Open client connections",
            metrics.connections_open.clone(),
        );
        registry.register(
            "vod_connections_rejected",
            "Connections refused at the connection cap (answered 503)",
            metrics.rejected_connections.clone(),
        );
        registry.register(
            "vod_requests_shed",
            "Requests shed at a request limit (answered 503), by class",
            metrics.shed_requests.clone(),
        );
        registry.register(
            "vod_requests_queued",
            "Segment requests that waited (up to 2 s) for a place at the segment limit",
            metrics.queued_requests.clone(),
        );
        registry.register(
            "vod_streams_stalled",
            "Segment streams closed because the client stopped reading",
            metrics.stalled_streams.clone(),
        );
        registry.register(
            "vod_metadata_cache_hits",
            "Metadata cache hits",
            metrics.cache_hits.clone(),
        );
        registry.register(
            "vod_metadata_cache_misses",
            "Metadata cache misses (loads)",
            metrics.cache_misses.clone(),
        );
        registry.register(
            "vod_index_loads",
            "Title index loads by where the index came from: memory, disk, store or moov",
            metrics.index_loads.clone(),
        );
        registry.register(
            "vod_index_rejected",
            "Index objects read from a tier and not used (corrupt, foreign, over a limit)",
            metrics.index_rejected.clone(),
        );
        registry.register(
            "vod_index_write_failures",
            "Index objects that could not be written to a tier",
            metrics.index_write_failures.clone(),
        );
        registry.register(
            "vod_metadata_cache_entries",
            "Titles in the metadata cache",
            metrics.cache_entries.clone(),
        );
        registry.register(
            "vod_metadata_cache_weighted_bytes",
            "Bytes of titles held in the metadata cache",
            metrics.cache_weighted_bytes.clone(),
        );
        registry.register(
            "vod_build_info",
            "Always 1: the version, commit and packager format of this binary",
            metrics.build_info.clone(),
        );
        registry.register(
            "vod_token_refusals",
            "Requests refused (403) for their signed-URL token, by reason",
            metrics.token_refusals.clone(),
        );
        registry.register(
            "vod_key_server_requests",
            "Requests to the CPIX/SPEKE key server, retries included, by outcome",
            metrics.key_server_requests.clone(),
        );
        registry.register(
            "vod_source_up",
            "1 when the media source answered the last readiness check, else 0",
            metrics.source_up.clone(),
        );
        registry.register(
            "vod_source_check_failures",
            "Readiness checks the media source did not answer",
            metrics.source_check_failures.clone(),
        );
        source.register(registry.sub_registry_with_label((
            std::borrow::Cow::Borrowed("source_kind"),
            std::borrow::Cow::Borrowed(source_kind),
        )));
        // The counters an alert or a dashboard divides by or compares with 0 are served from
        // the start, at 0, rather than only once the first event happens (a series that
        // is absent is not 0 to Prometheus).
        for reason in TOKEN_REFUSAL_REASONS {
            let _ = metrics
                .token_refusals
                .get_or_create(&ReasonLabels { reason });
        }
        for outcome in KEY_SERVER_OUTCOMES {
            let _ = (metrics.key_server_requests).get_or_create(&OutcomeLabels { outcome });
        }
        for class in ["segment", "manifest", "thumbnail"] {
            let _ = metrics.shed_requests.get_or_create(&ShedLabels { class });
        }
        for tier in ["disk", "store"] {
            let _ = metrics.index_rejected.get_or_create(&TierLabels { tier });
            let _ = (metrics.index_write_failures).get_or_create(&TierLabels { tier });
        }
        metrics.source_up.set(1);
        if let Ok(mut slot) = metrics.registry.lock() {
            *slot = registry;
        }
        metrics
    }

    /// Count one answered request of `route` with `status`, `seconds` to its head.
    pub fn observe_request(&self, route: &'static str, status: u16, seconds: f64) {
        if status == 200 {
            for slot in &self.ok_series {
                let series = slot.get_or_init(|| {
                    let labels = HttpLabels { route, status };
                    OkSeries {
                        route,
                        requests: self.requests.get_or_create(&labels).clone(),
                        seconds: self.request_seconds.get_or_create(&labels).clone(),
                    }
                });
                if series.route == route {
                    series.requests.inc();
                    series.seconds.observe(seconds);
                    return;
                }
            }
        }
        let labels = HttpLabels { route, status };
        self.requests.get_or_create(&labels).inc();
        (self.request_seconds.get_or_create(&labels)).observe(seconds);
    }

    /// The `vod_index_loads_total` series of `tier`, to hold and count on.
    pub fn index_load_series(&self, tier: &'static str) -> Counter {
        self.index_loads.get_or_create(&TierLabels { tier }).clone()
    }

    /// Set `vod_build_info` (once, at start): `packager_format` is the package layer's.
    pub fn set_build_info(&self, packager_format: u32) {
        let labels = BuildLabels {
            version: env!("CARGO_PKG_VERSION"),
            commit: option_env!("VODPACK_COMMIT").unwrap_or("unknown"),
            packager_format: packager_format.to_string(),
        };
        self.build_info.get_or_create(&labels).set(1);
    }

    /// Count a request refused for its token, `reason` as `TokenError::label` gives it.
    pub fn token_refused(&self, reason: &'static str) {
        self.token_refusals
            .get_or_create(&ReasonLabels { reason })
            .inc();
    }

    /// Record a readiness check of the media source: answered or not.
    pub fn source_checked(&self, answered: bool) {
        self.source_up.set(i64::from(answered));
        if !answered {
            self.source_check_failures.inc();
        }
    }

    /// Count an index object of `tier` not used.
    pub fn index_rejected(&self, tier: &'static str) {
        self.index_rejected
            .get_or_create(&TierLabels { tier })
            .inc();
    }

    /// Count an index object not written to `tier`.
    pub fn index_write_failed(&self, tier: &'static str) {
        (self
            .index_write_failures
            .get_or_create(&TierLabels { tier }))
        .inc();
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Ok(registry) = self.registry.lock() {
            let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'a>(text: &'a str, start: &str) -> Option<&'a str> {
        text.lines().find(|l| l.starts_with(start))
    }

    #[test]
    fn requests_are_counted_in_their_series_however_many_routes_there_are() {
        let metrics = Metrics::new("local", &SourceCounters::default());
        // Given more routes than the series held apart, and statuses other than 200,
        for i in 0..(OK_SERIES + 8) {
            let route: &'static str = Box::leak(format!("r{i}").into_boxed_str());
            metrics.observe_request(route, 200, 0.001);
        }
        for _ in 0..3 {
            metrics.observe_request("master", 200, 0.000_05);
        }
        metrics.observe_request("master", 404, 0.2);
        // then each lands in its own series of the exposition.
        let text = metrics.render();
        let last = format!(
            "vod_http_requests_total{{route=\"r{}\",status=\"200\"}} 1",
            OK_SERIES + 7
        );
        assert!(text.contains(&last), "{text}");
        assert!(text.contains("vod_http_requests_total{route=\"master\",status=\"200\"} 3"));
        assert!(text.contains("vod_http_requests_total{route=\"master\",status=\"404\"} 1"));
        let bucket =
            "vod_http_request_seconds_bucket{le=\"0.0001\",route=\"master\",status=\"200\"}";
        assert_eq!(
            line(&text, bucket).map(|l| l.ends_with(" 3")),
            Some(true),
            "{text}"
        );
    }
}
