//! `/metrics` is real Prometheus text: parsed with a Prometheus text parser, its counters
//! move by exactly what a known sequence of requests should add.

mod common;

use std::net::SocketAddr;

use common::{get, start_server};

/// One sample: metric name, sorted labels, value.
type Sample = (String, Vec<(String, String)>, f64);

/// Every sample of `/metrics`.
async fn scrape(addr: SocketAddr) -> Vec<Sample> {
    let text = get(addr, "/metrics").await.text();
    let lines = text.lines().map(|l| Ok(l.to_owned()));
    let scrape = prometheus_parse::Scrape::parse(lines).expect("valid exposition");
    scrape
        .samples
        .into_iter()
        .map(|s| {
            let value = match s.value {
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => v,
                _ => f64::NAN,
            };
            let mut labels: Vec<(String, String)> = s
                .labels
                .iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            labels.sort();
            (s.metric, labels, value)
        })
        .collect()
}

/// The value of `name` with exactly these labels (0 when absent).
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    let mut wanted: Vec<(String, String)> = labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    wanted.sort();
    samples
        .iter()
        .find(|(n, l, _)| n == name && *l == wanted)
        .map_or(0.0, |(_, _, v)| *v)
}

/// Given a fresh server, when a title is loaded (miss), asked again (hit), a segment of N
/// bytes is fetched and a missing key asked for, then the counters move by exactly that.
#[tokio::test]
async fn counters_move_by_the_right_amounts() {
    let server = start_server(&common::fixtures()).await;
    let before = scrape(server.addr).await;

    let master = get(server.addr, "/vod/h264-aac-3s.mp4/master.m3u8").await;
    assert_eq!(master.status, 200);
    let after_miss = scrape(server.addr).await;
    assert_eq!(
        value(&after_miss, "vod_metadata_cache_misses_total", &[])
            - value(&before, "vod_metadata_cache_misses_total", &[]),
        1.0
    );
    assert_eq!(value(&after_miss, "vod_metadata_cache_entries", &[]), 1.0);
    assert!(value(&after_miss, "vod_metadata_cache_weighted_bytes", &[]) > 0.0);

    let again = get(server.addr, "/vod/h264-aac-3s.mp4/master.m3u8").await;
    assert_eq!(again.body, master.body);
    let after_hit = scrape(server.addr).await;
    assert_eq!(
        value(&after_hit, "vod_metadata_cache_hits_total", &[])
            - value(&after_miss, "vod_metadata_cache_hits_total", &[]),
        1.0
    );
    assert_eq!(
        value(&after_hit, "vod_metadata_cache_misses_total", &[]),
        value(&after_miss, "vod_metadata_cache_misses_total", &[])
    );

    let folder = common::version_folder_in(&master.text());
    let segment = get(
        server.addr,
        &format!("/vod/h264-aac-3s.mp4/{folder}seg-t1-1.m4s"),
    )
    .await;
    assert_eq!(segment.status, 200);
    let n = segment.body.len() as f64;
    let after_segment = scrape(server.addr).await;
    assert_eq!(
        value(&after_segment, "vod_http_sent_bytes_total", &[])
            - value(&after_hit, "vod_http_sent_bytes_total", &[]),
        n
    );
    let read = value(
        &after_segment,
        "vod_source_read_bytes_total",
        &[("source_kind", "local")],
    ) - value(
        &after_hit,
        "vod_source_read_bytes_total",
        &[("source_kind", "local")],
    );
    assert!(read > 0.0 && read < n, "read {read} of a {n}-byte segment");
    assert_eq!(
        value(
            &after_segment,
            "vod_http_requests_total",
            &[("route", "segment"), ("status", "200")]
        ),
        1.0
    );

    assert_eq!(
        get(server.addr, "/vod/missing.mp4/master.m3u8")
            .await
            .status,
        404
    );
    let after_404 = scrape(server.addr).await;
    assert_eq!(
        value(
            &after_404,
            "vod_http_requests_total",
            &[("route", "master"), ("status", "404")]
        ),
        1.0
    );
    assert_eq!(
        value(
            &after_404,
            "vod_http_requests_total",
            &[("route", "master"), ("status", "200")]
        ),
        2.0
    );
}
