//! The report: each run's figures by name, printed side by side per origin (medians over
//! the rounds), then the ratios vodpack/peer against the bars set for serving from object
//! storage ([`print_bars`]), each marked met or not.

use std::collections::BTreeMap;

use crate::media::{Group, SHAPES};
use crate::origins::Which;
use crate::players::{Tally, KINDS};
use crate::store::TitleCount;

/// One origin's run, reduced to named figures.
pub struct Run {
    pub which: Which,
    pub figures: BTreeMap<String, f64>,
    pub errors: Vec<String>,
}

/// What a run measured besides the players' tally.
pub struct Measured {
    pub seconds: f64,
    pub store_gets: u64,
    pub store_heads: u64,
    pub store_other: u64,
    pub store_bytes: u64,
    pub store_slow: u64,
    pub store_412: u64,
    pub store_416: u64,
    /// Per shape: titles played and their store counts.
    pub by_shape: Vec<(usize, TitleCount)>,
    pub cpu_seconds: f64,
    /// The bench's own (store and players), over the same time.
    pub bench_cpu_seconds: f64,
    pub rss_rest: u64,
    pub rss_peak: u64,
    pub pss_peak: u64,
    /// vodpack's own `vod_source_over_read_bytes_total` less `vod_source_shared_bytes_total`:
    /// read and never sent.
    pub over_read: Option<f64>,
}

/// Nearest-rank percentile of sorted `v`.
fn pct(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    v[rank.min(v.len()) - 1]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| !x.is_nan());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn latency_figures(f: &mut BTreeMap<String, f64>, name: &str, ms: &mut [f64], errors: u64) {
    ms.sort_by(|a, b| a.total_cmp(b));
    f.insert(format!("{name} n"), ms.len() as f64);
    f.insert(format!("{name} err"), errors as f64);
    if ms.is_empty() {
        return;
    }
    for (p, label) in [(50.0, "p50"), (95.0, "p95"), (99.0, "p99"), (100.0, "max")] {
        f.insert(format!("{name} {label}"), pct(ms, p));
    }
}

impl Run {
    pub fn new(which: Which, tally: Tally, m: &Measured) -> Run {
        let mut f = BTreeMap::new();
        let mut requests = 0u64;
        let mut errors = 0u64;
        let mut segments = 0u64;
        for kind in KINDS {
            let Some(samples) = tally.kinds.get(&kind) else {
                continue;
            };
            let mut ms = samples.ms.clone();
            requests += ms.len() as u64 + samples.errors;
            errors += samples.errors;
            if kind.is_segment() {
                segments += ms.len() as u64;
            }
            latency_figures(&mut f, kind.name(), &mut ms, samples.errors);
        }
        for group in [Group::MoovFirst, Group::MoovLast, Group::Long] {
            let mut ms: Vec<f64> = (tally.cold_by_shape.iter())
                .filter(|(shape, _)| SHAPES[**shape].group == group)
                .flat_map(|(_, v)| v.iter().copied())
                .collect();
            latency_figures(
                &mut f,
                &format!("cold master, {}", group.name()),
                &mut ms,
                0,
            );
        }
        let secs = m.seconds.max(0.001);
        let titles = tally.titles.len() as f64;
        let store_requests = (m.store_gets + m.store_heads) as f64;
        let mut put = |k: &str, v: f64| {
            f.insert(k.to_owned(), v);
        };
        put("seconds", m.seconds);
        put("requests", requests as f64);
        put("requests/s", requests as f64 / secs);
        put("errors", errors as f64);
        put("plays", tally.plays as f64);
        put("plays/s", tally.plays as f64 / secs);
        put("media s fetched/s", tally.media_seconds / secs);
        put("titles played", titles);
        put("bytes to players", tally.bytes as f64);
        put("MB/s to players", tally.bytes as f64 / 1e6 / secs);
        put("store GET", m.store_gets as f64);
        put("store HEAD", m.store_heads as f64);
        put("store other", m.store_other as f64);
        put("store bytes", m.store_bytes as f64);
        put("store slow answers", m.store_slow as f64);
        put("store 412", m.store_412 as f64);
        put("store 416", m.store_416 as f64);
        put("store GET per title", m.store_gets as f64 / titles.max(1.0));
        put(
            "store HEAD per title",
            m.store_heads as f64 / titles.max(1.0),
        );
        put("store requests per title", store_requests / titles.max(1.0));
        put(
            "store requests per play",
            store_requests / (tally.plays as f64).max(1.0),
        );
        put(
            "store MB per title",
            m.store_bytes as f64 / 1e6 / titles.max(1.0),
        );
        put(
            "store bytes per byte sent",
            m.store_bytes as f64 / (tally.bytes as f64).max(1.0),
        );
        put("cpu s", m.cpu_seconds);
        put(
            "cpu ms per request",
            1000.0 * m.cpu_seconds / (requests as f64).max(1.0),
        );
        put(
            "cpu ms per MB sent",
            1000.0 * m.cpu_seconds / (tally.bytes as f64 / 1e6).max(1e-9),
        );
        put("bench cpu s (store, players)", m.bench_cpu_seconds);
        put("rss MB at rest", m.rss_rest as f64 / 1e6);
        put("rss MB peak", m.rss_peak as f64 / 1e6);
        put("pss MB peak", m.pss_peak as f64 / 1e6);
        if let Some(over) = m.over_read {
            put(
                "over-read KiB per segment",
                over / 1024.0 / (segments as f64).max(1.0),
            );
        }
        for (shape, count) in &m.by_shape {
            let played = (tally.titles.keys())
                .filter(|n| (**n as usize - 1) % SHAPES.len() == *shape)
                .count() as f64;
            let letter = SHAPES[*shape].letter;
            put(&format!("shape {letter} titles"), played);
            put(
                &format!("shape {letter} store req per title"),
                (count.gets + count.heads) as f64 / played.max(1.0),
            );
            put(
                &format!("shape {letter} store MB per title"),
                count.bytes as f64 / 1e6 / played.max(1.0),
            );
        }
        Run {
            which,
            figures: f,
            errors: tally.first_errors,
        }
    }
}

/// The medians over `runs` of `which`'s figures.
pub fn medians(runs: &[Run], which: Which) -> BTreeMap<String, f64> {
    let mine: Vec<&Run> = runs.iter().filter(|r| r.which == which).collect();
    let mut keys: Vec<&String> = mine.iter().flat_map(|r| r.figures.keys()).collect();
    keys.sort();
    keys.dedup();
    (keys.into_iter())
        .map(|k| {
            let values = (mine.iter())
                .map(|r| r.figures.get(k).copied().unwrap_or(f64::NAN))
                .collect();
            (k.clone(), median(values))
        })
        .collect()
}

fn cell(f: &BTreeMap<String, f64>, key: &str, decimals: usize) -> String {
    match f.get(key) {
        Some(v) if !v.is_nan() => format!("{v:.decimals$}"),
        _ => "-".into(),
    }
}

/// Both origins side by side: per kind, then the totals.
pub fn print_side_by_side(title: &str, v: &BTreeMap<String, f64>, p: &BTreeMap<String, f64>) {
    println!("\n{title}");
    println!(
        "| {:<28} | {:>6} {:>7} {:>7} {:>7} {:>7} {:>4} | {:>6} {:>7} {:>7} {:>7} {:>7} {:>4} |",
        "request kind (ms)",
        "n",
        "p50",
        "p95",
        "p99",
        "max",
        "err",
        "n",
        "p50",
        "p95",
        "p99",
        "max",
        "err"
    );
    println!(
        "| {:<28} | {:^46} | {:^46} |",
        "",
        Which::Vodpack.name(),
        Which::Peer.name()
    );
    let mut rows: Vec<String> = KINDS.iter().map(|k| k.name().to_owned()).collect();
    for group in [Group::MoovFirst, Group::MoovLast, Group::Long] {
        rows.push(format!("cold master, {}", group.name()));
    }
    for row in rows {
        if !v.contains_key(&format!("{row} n")) && !p.contains_key(&format!("{row} n")) {
            continue;
        }
        let side = |f: &BTreeMap<String, f64>| {
            format!(
                "{:>6} {:>7} {:>7} {:>7} {:>7} {:>4}",
                cell(f, &format!("{row} n"), 0),
                cell(f, &format!("{row} p50"), 1),
                cell(f, &format!("{row} p95"), 1),
                cell(f, &format!("{row} p99"), 1),
                cell(f, &format!("{row} max"), 1),
                cell(f, &format!("{row} err"), 0),
            )
        };
        println!("| {row:<28} | {} | {} |", side(v), side(p));
    }
    println!(
        "\n| {:<36} | {:>12} | {:>12} | {:>8} |",
        "", "vodpack", "nginx-vod", "v/p"
    );
    let totals: [(&str, usize); 31] = [
        ("seconds", 1),
        ("requests", 0),
        ("requests/s", 1),
        ("errors", 0),
        ("plays", 0),
        ("plays/s", 2),
        ("media s fetched/s", 1),
        ("titles played", 0),
        ("bytes to players", 0),
        ("MB/s to players", 1),
        ("store GET", 0),
        ("store HEAD", 0),
        ("store other", 0),
        ("store bytes", 0),
        ("store slow answers", 0),
        ("store 412", 0),
        ("store 416", 0),
        ("store GET per title", 1),
        ("store HEAD per title", 1),
        ("store requests per title", 1),
        ("store requests per play", 1),
        ("store MB per title", 2),
        ("store bytes per byte sent", 3),
        ("cpu s", 2),
        ("cpu ms per request", 3),
        ("cpu ms per MB sent", 2),
        ("bench cpu s (store, players)", 2),
        ("rss MB at rest", 1),
        ("rss MB peak", 1),
        ("pss MB peak", 1),
        ("over-read KiB per segment", 1),
    ];
    let mut keys: Vec<(String, usize)> =
        totals.iter().map(|(k, d)| ((*k).to_owned(), *d)).collect();
    for shape in &SHAPES {
        let l = shape.letter;
        keys.push((format!("shape {l} titles"), 0));
        keys.push((format!("shape {l} store req per title"), 1));
        keys.push((format!("shape {l} store MB per title"), 2));
    }
    for (key, d) in keys {
        let ratio = match (v.get(&key), p.get(&key)) {
            (Some(a), Some(b)) if *b != 0.0 && !a.is_nan() && !b.is_nan() => {
                format!("{:.2}", a / b)
            }
            _ => "-".into(),
        };
        println!(
            "| {key:<36} | {:>12} | {:>12} | {ratio:>8} |",
            cell(v, &key, d),
            cell(p, &key, d)
        );
    }
}

/// The bars set for serving from object storage, from the medians `v` (vodpack) and `p` (peer).
pub fn print_bars(v: &BTreeMap<String, f64>, p: &BTreeMap<String, f64>, rtt: f64, slow: bool) {
    let get = |f: &BTreeMap<String, f64>, k: &str| f.get(k).copied().unwrap_or(f64::NAN);
    let mut rows: Vec<(String, String, Option<bool>)> = Vec::new();
    let mut bar =
        |what: String, figures: String, met: Option<bool>| rows.push((what, figures, met));
    let peer_segment = |kind: &str| {
        let same = get(p, &format!("{kind} p99"));
        if same.is_nan() {
            get(p, "muxed segment p99")
        } else {
            same
        }
    };
    for kind in ["video segment", "audio segment", "muxed segment"] {
        let ours = get(v, &format!("{kind} p99"));
        if ours.is_nan() {
            continue;
        }
        let theirs = peer_segment(kind);
        let limit = if slow { 100.0 } else { 3.0 * rtt };
        bar(
            format!("{kind} p99 <= {limit:.0} ms and <= the peer's"),
            format!(
                "{ours:.1} ms, peer {theirs:.1} ms, ratio {:.2}",
                ours / theirs
            ),
            Some(ours <= limit && ours <= theirs),
        );
    }
    let (rv, rp) = (get(v, "requests/s"), get(p, "requests/s"));
    bar(
        "requests/s >= the peer's".into(),
        format!(
            "{rv:.1} vs {rp:.1}, ratio {:.2} (plays/s {:.2}, MB/s {:.2})",
            rv / rp,
            get(v, "plays/s") / get(p, "plays/s"),
            get(v, "MB/s to players") / get(p, "MB/s to players")
        ),
        Some(rv >= rp),
    );
    for (group, limit) in [
        (Group::MoovFirst, rtt + 10.0),
        (Group::MoovLast, 2.0 * rtt),
        (Group::Long, 2.0 * rtt),
    ] {
        let key = format!("cold master, {} p50", group.name());
        let ours = get(v, &key);
        bar(
            format!("cold master p50, {} <= {limit:.0} ms", group.name()),
            format!("{ours:.1} ms (peer {:.1} ms)", get(p, &key)),
            (!ours.is_nan()).then_some(ours <= limit),
        );
    }
    let (cv, cp) = (get(v, "master, cold p99"), get(p, "master, cold p99"));
    bar(
        "cold master p99 <= the peer's".into(),
        format!("{cv:.1} ms vs {cp:.1} ms, ratio {:.2}", cv / cp),
        Some(cv <= cp),
    );
    for kind in ["master, warm", "media playlist"] {
        let ours = get(v, &format!("{kind} p95"));
        bar(
            format!("{kind} p95 < 2 ms"),
            format!(
                "{ours:.2} ms (peer {:.2} ms)",
                get(p, &format!("{kind} p95"))
            ),
            Some(ours < 2.0),
        );
    }
    let (qv, qp) = (
        get(v, "store requests per title"),
        get(p, "store requests per title"),
    );
    bar(
        "store requests per title played <= the peer's".into(),
        format!("{qv:.1} vs {qp:.1}, ratio {:.2}", qv / qp),
        Some(qv <= qp),
    );
    let bv = get(v, "store bytes per byte sent");
    bar(
        "store bytes per byte sent <= 1.1".into(),
        format!("{bv:.3} (peer {:.3})", get(p, "store bytes per byte sent")),
        Some(bv <= 1.1),
    );
    let ov = get(v, "over-read KiB per segment");
    bar(
        "over-read within 256 KiB per segment".into(),
        format!("{ov:.1} KiB on average (vodpack's own counter; the bound is per segment)"),
        (!ov.is_nan()).then_some(ov <= 256.0),
    );
    if slow {
        bar(
            "slow tail: at most 5% more store requests".into(),
            format!(
                "{:.1} per play, {qv:.1} per title: compare a run of the same seed without",
                get(v, "store requests per play")
            ),
            None,
        );
    }
    bar(
        "memory per stream, local-disk figures".into(),
        "not measured here: make bench, benches/compare.sh".into(),
        None,
    );
    println!("\nThe object-store bars (vodpack against nginx-vod, store round trip {rtt:.0} ms)");
    for (what, figures, met) in rows {
        let mark = match met {
            Some(true) => "met",
            Some(false) => "NOT MET",
            None => "-",
        };
        println!("| {what:<52} | {figures:<72} | {mark:<7} |");
    }
}
