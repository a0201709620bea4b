//! The docs and the deploy files say what the code does: every metric name in
//! the docs and the alert rules is served by a running server and every served metric is
//! in observability.md's table; the collector example is the shipped file; the ConfigMap's
//! settings are in the configuration reference; the ingress-nginx map derives the title as
//! the front does and the Ingress routes every location it hashes; and docs/cdn.md's
//! `Cache-Control` per route is the server's. Each fails when one side changes alone.

mod common;

use std::collections::BTreeSet;
use std::net::SocketAddr;

use common::{fixtures, get, start_server_with, version_folder};
use vodpack::config::Settings;

const FIXTURE: &str = "h264-aac-3s.mp4";

fn read(path: &str) -> String {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every `vod_...` word of `text`.
fn vod_words(text: &str) -> BTreeSet<String> {
    let mut words = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("vod_") {
        let before = rest[..at].chars().next_back();
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            words.insert(tail[..end].trim_end_matches('_').to_owned());
        }
        rest = &tail[end..];
    }
    words
}

/// Whether a `vod_` word names a metric series (not an nginx-vod directive such as
/// `vod_metadata_cache` or `vod_secret_key`): by the endings metric names have.
fn is_metric_name(word: &str) -> bool {
    const ENDINGS: [&str; 11] = [
        "_total",
        "_bucket",
        "_sum",
        "_count",
        "_seconds",
        "_bytes",
        "_entries",
        "_in_flight",
        "_open",
        "_up",
        "_info",
    ];
    ENDINGS.iter().any(|e| word.ends_with(e))
}

/// The series names a Prometheus scrape of `exposition` can select: each family's name and,
/// by its type, `_total` or `_bucket`/`_sum`/`_count`.
fn served_names(exposition: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut series = BTreeSet::new();
    let mut families = BTreeSet::new();
    for line in exposition.lines() {
        let Some(rest) = line.strip_prefix("# TYPE ") else {
            continue;
        };
        let mut parts = rest.split_whitespace();
        let (Some(name), Some(kind)) = (parts.next(), parts.next()) else {
            continue;
        };
        match kind {
            "counter" => {
                series.insert(format!("{name}_total"));
                families.insert(format!("{name}_total"));
            }
            "histogram" => {
                for suffix in ["", "_bucket", "_sum", "_count"] {
                    series.insert(format!("{name}{suffix}"));
                }
                families.insert(name.to_owned());
            }
            _ => {
                series.insert(name.to_owned());
                families.insert(name.to_owned());
            }
        }
    }
    (series, families)
}

/// A server over the fixtures with the nginx-vod locations, after a few requests.
async fn busy_server() -> common::TestServer {
    let settings = Settings {
        nginx_vod_locations: "hls=/hls/,hlsts=/hlsts/,dash=/dash/".parse().unwrap(),
        ..Default::default()
    };
    let server = start_server_with(&fixtures(), settings).await;
    for path in ["master.m3u8", "manifest.mpd", "nothing-here.m3u8"] {
        get(server.addr, &format!("/vod/{FIXTURE}/{path}")).await;
    }
    get(server.addr, "/readyz").await;
    server
}

/// Given a running server after a few requests, then every metric name that the docs, the
/// README and the deploy files mention is one it serves, and every metric it serves has a
/// row in observability.md's table.
#[tokio::test]
async fn metric_names_in_docs_and_rules_are_served_and_every_served_metric_is_documented() {
    let server = busy_server().await;
    let exposition = get(server.addr, "/metrics").await.text();
    server.shutdown().await;
    let (series, families) = served_names(&exposition);
    let mut unknown = Vec::new();
    let mut sources: Vec<String> = [
        "README.md",
        "deploy/prometheus-rules.yml",
        "deploy/compose.yaml",
    ]
    .map(str::to_owned)
    .to_vec();
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        // The nginx-vod guide names the module's `vod_*` directives; the performance
        // history records the past as it was.
        if name.ends_with(".md")
            && name != "migrating-from-nginx-vod.md"
            && name != "performance-history.md"
        {
            sources.push(format!("docs/{name}"));
        }
    }
    sources.push("deploy/kubernetes/README.md".into());
    for source in &sources {
        for word in vod_words(&read(source)) {
            if is_metric_name(&word) && !series.contains(&word) {
                unknown.push(format!("{source}: {word}"));
            }
        }
    }
    assert!(unknown.is_empty(), "not served: {unknown:?}\n{exposition}");

    let observability = read("docs/observability.md");
    let documented: BTreeSet<String> = observability
        .lines()
        .filter_map(|l| l.strip_prefix("| `vod_"))
        .filter_map(|l| l.split('`').next())
        .map(|n| format!("vod_{n}"))
        .collect();
    let undocumented: Vec<_> = families.difference(&documented).collect();
    assert!(
        undocumented.is_empty(),
        "served but not in observability.md's table: {undocumented:?}"
    );
    let gone: Vec<_> = documented.difference(&families).collect();
    assert!(gone.is_empty(), "in the table but not served: {gone:?}");
}

/// Given observability.md, then its collector example is deploy/otel-collector.yaml as
/// shipped.
#[test]
fn the_collector_example_is_the_shipped_collector() {
    let doc = read("docs/observability.md");
    let marker = "<!-- include: deploy/otel-collector.yaml -->\n```yaml\n";
    let at = doc
        .find(marker)
        .expect("the include marker in observability.md")
        + marker.len();
    let block = &doc[at..at + doc[at..].find("```\n").expect("the block's end")];
    assert_eq!(block, read("deploy/otel-collector.yaml"));
}

/// The keys of the TOML in the ConfigMap (`vodpack.toml: |` block).
fn configmap_keys() -> Vec<String> {
    let text = read("deploy/kubernetes/configmap.yaml");
    let block = text
        .split_once("vodpack.toml: |\n")
        .expect("the vodpack.toml block")
        .1;
    block
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.split_once(" = ").map(|(k, _)| k.trim().to_owned()))
        .collect()
}

/// Given the ConfigMap, then each setting it sets has its row in the configuration
/// reference (the TOML itself is loaded by the real loader in tests/deploy_files.rs).
#[test]
fn every_configmap_setting_is_in_the_reference() {
    let reference = read("docs/configuration.md");
    let keys = configmap_keys();
    assert!(keys.len() > 5, "{keys:?}");
    for key in keys {
        assert!(
            reference.contains(&format!("| `--{key}` |")),
            "{key} is not in docs/configuration.md"
        );
    }
}

/// The regexes of the `map $uri ...` block of an nginx configuration.
fn title_regexes(conf: &str) -> Vec<String> {
    conf.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("\"~"))
        .filter_map(|l| l.split('"').nth(1).map(str::to_owned))
        .collect()
}

/// Given the front's title map and the ingress-nginx controller's, then they derive the
/// title alike (every location, every view), and the Ingress routes each location the map
/// hashes.
#[test]
fn the_ingress_hashes_every_location_as_the_front_does() {
    let front = title_regexes(&read("deploy/front/vodpack-front.conf"));
    let ingress_map = title_regexes(&read(
        "deploy/kubernetes/ingress-nginx/controller-patch.yaml",
    ));
    assert!(front.len() >= 2, "{front:?}");
    assert_eq!(ingress_map, front, "the controller's map is the front's");
    let ingress = read("deploy/kubernetes/ingress-nginx/ingress.yaml");
    for location in ["/vod/", "/hls/", "/hlsts/", "/dash/"] {
        let name = location.trim_matches('/');
        assert!(
            front.iter().any(|r| r.contains(name)),
            "{location} is in the front's map"
        );
        assert!(
            ingress.contains(&format!("- path: {location}\n")),
            "the Ingress routes {location}"
        );
    }
}

/// The rows of docs/cdn.md's route table: (request path, Cache-Control).
fn cdn_rows() -> Vec<(String, String)> {
    read("docs/cdn.md")
        .lines()
        .filter_map(|l| l.strip_prefix("| `GET "))
        .filter_map(|l| {
            let (path, rest) = l.split_once("` | `")?;
            let (cache_control, _) = rest.split_once('`')?;
            Some((path.to_owned(), cache_control.to_owned()))
        })
        .collect()
}

async fn cache_control_of(addr: SocketAddr, path: &str) -> (u16, Option<String>) {
    let reply = get(addr, path).await;
    (
        reply.status,
        reply.header("cache-control").map(str::to_owned),
    )
}

/// Given docs/cdn.md's table of routes, when each example is asked of a server (KEY the
/// fixture, vTOKEN its version folder), then the answer's Cache-Control is the table's.
#[tokio::test]
async fn the_cdn_page_s_cache_control_is_the_server_s() {
    let server = busy_server().await;
    let folder = version_folder(server.addr, FIXTURE).await;
    let rows = cdn_rows();
    assert!(rows.len() >= 20, "{rows:?}");
    let mut wrong = Vec::new();
    for (path, expected) in rows {
        let path = path.replace("KEY", FIXTURE).replace("vTOKEN/", &folder);
        let (status, got) = cache_control_of(server.addr, &path).await;
        if got.as_deref() != Some(expected.as_str()) {
            wrong.push(format!("{path}: {status} {got:?}, docs say {expected:?}"));
        }
    }
    server.shutdown().await;
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Given the packager format this build writes, then CHANGELOG.md has its entry, flagged,
/// so a release that changes every versioned URL says so.
#[test]
fn the_changelog_flags_the_current_packager_format() {
    let changelog = read("CHANGELOG.md");
    let flag = format!("**Packager format {}**", vodpack::package::PACKAGER_FORMAT);
    assert!(changelog.contains(&flag), "CHANGELOG.md lacks {flag}");
}
