//! The performance budgets harness of TDD 0001 (docs/performance.md explains every figure).
//!
//! `make bench` prints the results; `make bench-enforce` (this program with `--enforce`)
//! exits non-zero when a budget is missed. It starts the real server in-process on a
//! loopback port through the hidden `vodpack::bench` module and drives it with a small
//! keep-alive HTTP client. `cargo test` does not run it (harness = false, test = false).
//!
//! On first run it synthesizes a 60-minute H.264/AAC asset in target/bench/ by
//! stream-copying the committed 3-second fixture 1,200 times (`-use_editlist 0`); without
//! FFmpeg the long-asset checks are skipped and say so. It also remuxes that asset into two
//! fragmented files (2 s fragments; one with ffmpeg's `mfra`, one with no index at all) and
//! reports their cold loads next to the progressive one.
//!
//! A second section serves a 5-minute asset from a loopback S3-compatible server (s3s-fs,
//! in-process, signatures checked) and reports cold and warm metadata loads, GETs and
//! bytes per segment, and over-read: the object-store figures of the same budgets.
//!
//! `BUDGET_SECTIONS=thumbs` (`make bench-thumbs`) runs the thumbnail section alone
//! (`budgets/thumbs.rs`): thumbnails of a 1080p title beside ffmpeg, and storyboard sheets
//! of the 60-minute asset.
//!
//! Variables: BUDGET_STREAMS (1000), BUDGET_SECONDS (10), BUDGET_WORKERS (4),
//! BUDGET_THUMB_RUNS (20).

#[path = "../tests/common/s3.rs"]
mod s3;
#[path = "budgets/thumbs.rs"]
mod thumbs;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use vodpack::bench::{load_title, resident_bytes, BenchServer, KeepAliveClient};
use vodpack::config::Settings;
use vodpack::media::load_index_report;
use vodpack::package::prepare_media_segment;
use vodpack::source::{LocalMediaSource, MediaSource, ObjectKey};

const LONG_ASSET: &str = "long-60min.mp4";
/// The 60-minute asset written fragmented: (file, row name, `-movflags`).
const FRAGMENTED_ASSETS: [(&str, &str, &str); 2] = [
    (
        "long-60min-frag-mfra.mp4",
        "Cold first load, fragmented (2 s, mfra)",
        "frag_keyframe+empty_moov",
    ),
    (
        "long-60min-frag-walk.mp4",
        "Cold first load, fragmented (2 s, no index)",
        "frag_keyframe+empty_moov+skip_trailer",
    ),
];
/// The object-store asset: shorter, because s3s-fs hashes the whole object per request.
const S3_ASSET: &str = "long-5min.mp4";
const S3_BUCKET: &str = "media";
const KIB: f64 = 1024.0;

/// One line of the results table.
struct Row {
    name: &'static str,
    budget: &'static str,
    bar: &'static str,
    result: String,
    /// `None`: reported without a budget.
    met: Option<bool>,
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Percentile `p` (0..=100) of `samples` (sorted in place), nearest-rank.
fn percentile(samples: &mut [f64], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_by(|a, b| a.total_cmp(b));
    let rank = ((p / 100.0) * samples.len() as f64).ceil().max(1.0) as usize;
    samples[rank.min(samples.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn bench_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("bench")
}

/// Make the 60-minute asset if it is missing. `false` when FFmpeg is not available.
fn ensure_long_asset(dir: &Path) -> bool {
    ensure_asset(dir, LONG_ASSET, 1200)
}

/// Make `name` from `copies` stream copies of the 3-second fixture, if it is missing.
fn ensure_asset(dir: &Path, name: &str, copies: usize) -> bool {
    let asset = dir.join(name);
    if asset.exists() {
        return true;
    }
    if std::fs::create_dir_all(dir).is_err() {
        return false;
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/h264-aac-3s.mp4");
    let list = dir.join("concat-list.txt");
    let line = format!("file '{}'\n", fixture.display());
    if std::fs::write(&list, line.repeat(copies)).is_err() {
        return false;
    }
    let partial = dir.join(format!("{name}.partial.mp4"));
    eprintln!(
        "synthesizing {} with ffmpeg (stream copy)...",
        asset.display()
    );
    let status = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "concat", "-safe", "0", "-i"])
        .arg(&list)
        .args([
            "-c",
            "copy",
            "-use_editlist",
            "0",
            "-movflags",
            "+faststart",
            "-f",
            "mp4",
        ])
        .arg(&partial)
        .status();
    match status {
        Ok(s) if s.success() => std::fs::rename(&partial, &asset).is_ok(),
        _ => false,
    }
}

/// Make the fragmented remux `name` of the 60-minute asset (fragments at keyframes, at
/// least 2 s long), if it is missing.
fn ensure_fragmented(dir: &Path, name: &str, movflags: &str) -> bool {
    let asset = dir.join(name);
    if asset.exists() {
        return true;
    }
    let partial = dir.join(format!("{name}.partial.mp4"));
    eprintln!("remuxing {} with ffmpeg (stream copy)...", asset.display());
    let status = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-i"])
        .arg(dir.join(LONG_ASSET))
        .args(["-map", "0", "-c", "copy", "-min_frag_duration", "2000000"])
        .args(["-movflags", movflags, "-f", "mp4"])
        .arg(&partial)
        .status();
    match status {
        Ok(s) if s.success() => std::fs::rename(&partial, &asset).is_ok(),
        _ => false,
    }
}

fn main() {
    let enforce = std::env::args().any(|a| a == "--enforce");
    let workers = env_u64("BUDGET_WORKERS", 4).max(1) as usize;
    let streams = env_u64("BUDGET_STREAMS", 1000).max(1);
    let seconds = env_u64("BUDGET_SECONDS", 10).max(1);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            std::process::exit(2);
        }
    };
    // Telemetry as `vodpack serve` sets it up: with no OTEL_* endpoint nothing is exported,
    // so the figures show what export costs when it is off (and, with one, when it is on).
    let otel = vodpack::telemetry::OtelConfig::from_env();
    let exporting = otel.is_some();
    let telemetry = {
        let _context = runtime.enter();
        vodpack::telemetry::init(vodpack::config::LogFormat::Text, otel)
    };
    println!(
        "vodpack budgets: BUDGET_WORKERS={workers} BUDGET_STREAMS={streams} BUDGET_SECONDS={seconds}, {} cores, trace export {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        if exporting { "on" } else { "off" }
    );
    let rows = runtime.block_on(run(streams, seconds));
    drop(telemetry);
    print_rows(&rows);
    let missed: Vec<&str> = rows
        .iter()
        .filter(|r| r.met == Some(false))
        .map(|r| r.name)
        .collect();
    if missed.is_empty() {
        println!("all budgets met");
    } else {
        println!("budgets missed: {}", missed.join(", "));
        if enforce {
            std::process::exit(1);
        }
    }
}

fn print_rows(rows: &[Row]) {
    println!();
    println!(
        "| {:<58} | {:<16} | {:<14} | {:<44} | {:<4} |",
        "Measurement", "Budget", "Our bar", "Result", "Met"
    );
    println!(
        "|{:-<60}|{:-<18}|{:-<16}|{:-<46}|{:-<6}|",
        "", "", "", "", ""
    );
    for r in rows {
        let met = match r.met {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        println!(
            "| {:<58} | {:<16} | {:<14} | {:<44} | {:<4} |",
            r.name, r.budget, r.bar, r.result, met
        );
    }
}

async fn run(streams: u64, seconds: u64) -> Vec<Row> {
    let dir = bench_dir();
    let mut rows = Vec::new();
    // `BUDGET_SECTIONS=tiers` runs the index tier section alone, `thumbs` the thumbnails'.
    if std::env::var("BUDGET_SECTIONS").is_ok_and(|s| s == "tiers") {
        if ensure_long_asset(&dir) {
            rows.extend(index_tier_section(&dir).await);
        }
        return rows;
    }
    if std::env::var("BUDGET_SECTIONS").is_ok_and(|s| s == "thumbs") {
        if ensure_long_asset(&dir) {
            rows.extend(thumbs::thumbs_section(&dir).await);
        }
        return rows;
    }
    if !ensure_long_asset(&dir) {
        println!("FFmpeg not found or failed: the long-asset checks are skipped");
        rows.push(Row {
            name: "60-minute asset checks",
            budget: "-",
            bar: "-",
            result: "skipped: needs ffmpeg".into(),
            met: None,
        });
        return rows;
    }
    let settings = Settings::default();
    let key = match ObjectKey::parse(LONG_ASSET) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("bad key: {e}");
            return rows;
        }
    };
    let source: Arc<dyn MediaSource> = match LocalMediaSource::new(&dir) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("cannot open {}: {e}", dir.display());
            return rows;
        }
    };

    // 1. Warm load: one discarded cold load, then 11 loads.
    let started = Instant::now();
    let title = match load_title(&source, &key, &settings).await {
        Ok(t) => t,
        Err(e) => {
            eprintln!("load failed: {e}");
            return rows;
        }
    };
    let cold = ms(started.elapsed());
    let mut loads = Vec::new();
    for _ in 0..11 {
        let started = Instant::now();
        let _ = load_title(&source, &key, &settings).await;
        loads.push(ms(started.elapsed()));
    }
    let load_p50 = percentile(&mut loads, 50.0);
    let load_p95 = percentile(&mut loads, 95.0);
    let samples: usize = title.index.tracks.iter().map(|t| t.samples.len()).sum();
    rows.push(Row {
        name: "Warm load, 60-minute asset",
        budget: "p95 < 250 ms",
        bar: "p95 < 50 ms",
        result: format!("p50 {load_p50:.1} ms, p95 {load_p95:.1} ms"),
        met: Some(load_p95 < 250.0),
    });
    rows.push(Row {
        name: "Cold first load",
        budget: "-",
        bar: "-",
        result: format!(
            "{cold:.1} ms ({} segments, {samples} samples, index {:.1} MiB)",
            title.plan.segment_count,
            title.heap_bytes() as f64 / KIB / KIB
        ),
        met: None,
    });

    // 1b. The same content written fragmented: cold load, and how the fragments were found.
    for (name, row, movflags) in FRAGMENTED_ASSETS {
        if !ensure_fragmented(&dir, name, movflags) {
            rows.push(Row {
                name: row,
                budget: "-",
                bar: "-",
                result: "skipped: the ffmpeg remux failed".into(),
                met: None,
            });
            continue;
        }
        let Ok(frag_key) = ObjectKey::parse(name) else {
            continue;
        };
        let started = Instant::now();
        let loaded = load_title(&source, &frag_key, &settings).await;
        let frag_cold = ms(started.elapsed());
        let identity = source.identify(&frag_key).await;
        let report = match identity {
            Ok(identity) => load_index_report(&source, &frag_key, &identity, &settings.limits)
                .await
                .map(|(_, report)| report),
            Err(e) => Err(e.into()),
        };
        let result = match (loaded, report) {
            (Ok(frag_title), Ok(report)) => {
                let f = report.fragments.unwrap_or_default();
                format!(
                    "{frag_cold:.1} ms ({} fragments found by {}, {} reads of {} ranges, {:.1} MiB; {} segments)",
                    f.fragments,
                    f.discovery.as_str(),
                    report.moov_reads + f.reads,
                    f.ranges + report.moov_reads,
                    f.bytes as f64 / KIB / KIB,
                    frag_title.plan.segment_count
                )
            }
            (Err(e), _) | (_, Err(e)) => format!("failed: {e}"),
        };
        rows.push(Row {
            name: row,
            budget: "-",
            bar: "-",
            result,
            met: None,
        });
    }

    // 2. Segment header generation across the timeline.
    let mut headers = Vec::with_capacity(3000);
    let count = title.plan.segment_count.max(1);
    let tracks = title.index.tracks.len().max(1);
    for i in 0..3000usize {
        let segment = (i * 7919) % count;
        let track = i % tracks;
        let started = Instant::now();
        let prepared = prepare_media_segment(&title.index, &title.plan, track, segment);
        headers.push(ms(started.elapsed()));
        std::hint::black_box(prepared.ok());
    }
    let header_p95 = percentile(&mut headers, 95.0);
    rows.push(Row {
        name: "Warm 6 s segment header generation",
        budget: "p95 < 10 ms",
        bar: "p95 < 0.01 ms",
        result: format!("p95 {header_p95:.4} ms over 3,000 calls"),
        met: Some(header_p95 < 10.0),
    });

    // 3. Cached manifests over one keep-alive connection each.
    let server = match BenchServer::start(&dir, settings.clone()).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot start the server: {e}");
            return rows;
        }
    };
    let base = format!("/vod/{LONG_ASSET}");
    let mut manifest_results = Vec::new();
    let mut manifest_ok = true;
    for name in ["master.m3u8", "index-t1.m3u8", "manifest.mpd"] {
        let path = format!("{base}/{name}");
        let mut times = Vec::with_capacity(3000);
        match KeepAliveClient::connect(server.addr).await {
            Ok(mut client) => {
                let _ = client.get(&path).await; // fill the cache
                for _ in 0..3000 {
                    let started = Instant::now();
                    let ok = matches!(client.get(&path).await, Ok(r) if r.status == 200);
                    times.push(ms(started.elapsed()));
                    manifest_ok &= ok;
                }
            }
            Err(_) => manifest_ok = false,
        }
        manifest_results.push(percentile(&mut times, 95.0));
    }
    let worst = manifest_results.iter().copied().fold(0.0, f64::max);
    rows.push(Row {
        name: "Cached HLS master / HLS media / DASH (loopback, client)",
        budget: "p95 < 2 ms",
        bar: "p95 < 0.2 ms",
        result: format!(
            "p95 {:.3} / {:.3} / {:.3} ms",
            manifest_results.first().unwrap_or(&f64::NAN),
            manifest_results.get(1).unwrap_or(&f64::NAN),
            manifest_results.get(2).unwrap_or(&f64::NAN)
        ),
        met: Some(manifest_ok && worst < 2.0),
    });

    // 4. Over-read: source bytes beyond the payload, over 300 segments.
    let counters = server.app.catalog.source().counters().clone();
    let read_before = counters.read_bytes.get();
    let mut payload = 0u64;
    let mut full_segment = Vec::new();
    let mut over_read_ok = true;
    if let Ok(mut client) = KeepAliveClient::connect(server.addr).await {
        for i in 0..300usize {
            let segment = (i * 2) % count;
            let track = i % tracks;
            let Some(track_id) = title.index.tracks.get(track).map(|t| t.track_id) else {
                continue;
            };
            if let Ok(p) = prepare_media_segment(&title.index, &title.plan, track, segment) {
                payload += p.payload_bytes;
            }
            let path = format!("{base}/seg-t{track_id}-{}.m4s", segment + 1);
            let started = Instant::now();
            let ok = matches!(client.get(&path).await, Ok(r) if r.status == 200);
            if track == 0 {
                full_segment.push(ms(started.elapsed()));
            }
            over_read_ok &= ok;
        }
    }
    let over_read = counters.read_bytes.get().saturating_sub(read_before) as f64 - payload as f64;
    let per_segment = over_read.max(0.0) / 300.0;
    rows.push(Row {
        name: "Source bytes read beyond the payload",
        budget: "<= 256 KiB/seg",
        bar: "merged runs",
        result: format!("{:.1} KiB per segment over 300 segments", per_segment / KIB),
        met: Some(over_read_ok && per_segment <= 256.0 * KIB),
    });
    let seg_p50 = percentile(&mut full_segment, 50.0);
    let seg_p95 = percentile(&mut full_segment, 95.0);
    rows.push(Row {
        name: "Full 6 s video segment over loopback",
        budget: "-",
        bar: "-",
        result: format!("p50 {seg_p50:.2} ms, p95 {seg_p95:.2} ms"),
        met: None,
    });

    // 5. Sustained streams, memory per connection and the canary.
    rows.extend(sustained_streams(&server, &title_segments(&title), streams, seconds).await);
    server.stop().await;

    // 6. The same title shape from an S3-compatible bucket.
    rows.extend(object_store_section(&dir).await);
    // 7. The 60-minute title's first master from the index tiers.
    rows.extend(index_tier_section(&dir).await);
    rows
}

/// Runs of each first-master measurement of the index tier section (the median is shown).
const TIER_RUNS: usize = 5;

/// The first master of the 60-minute asset in a loopback S3-compatible bucket, on a fresh
/// server each time: cold from the `moov` (no tiers), from the disk tier (a restarted
/// replica) and from the store tier beside the media (a new replica). The bar: each tier
/// at most a third of the cold load's wall time.
async fn index_tier_section(dir: &Path) -> Vec<Row> {
    let buckets = dir.join("s3-tiers");
    let bucket_dir = buckets.join(S3_BUCKET);
    if std::fs::create_dir_all(&bucket_dir).is_err() {
        return Vec::new();
    }
    let bucket = s3::S3Server::start(&buckets).await;
    // Uploaded, not linked into the folder: s3s-fs keeps an uploaded object's ETag as S3
    // does, and hashes a linked file whole on every request (a third of a second here),
    // which would time the test server rather than the tiers.
    let uploaded = match std::fs::read(dir.join(LONG_ASSET)) {
        Ok(bytes) => bucket.put_object(S3_BUCKET, LONG_ASSET, bytes.into()).await,
        Err(e) => Err(e.to_string()),
    };
    if let Err(e) = uploaded {
        eprintln!("cannot upload the asset to the test bucket: {e}");
        return Vec::new();
    }
    let disk = dir.join("index-tier-disk");
    let _ = std::fs::remove_dir_all(&disk);
    let _ = std::fs::remove_dir_all(bucket_dir.join(".vodpack-index"));
    let shelves = |disk_on: bool, store_on: bool| vodpack::server::IndexShelves {
        disk: disk_on
            .then(|| vodpack::source::Shelf::folder(&disk, None).ok())
            .flatten(),
        store: store_on.then(|| s3::s3_shelf(&bucket.endpoint(), S3_BUCKET, ".vodpack-index/")),
    };
    let master = format!("/vod/{LONG_ASSET}/master.m3u8");
    // One fresh server: the wall time of its first master, and the source reads it took.
    let first_master = |disk_on: bool, store_on: bool| {
        // As startup sets it (`ops::startup::open_read_bytes`): with a tier, an object is
        // opened with a HEAD, since its index is then usually found without its bytes.
        let options = vodpack::source::ObjectStoreOptions {
            open_read_bytes: if disk_on || store_on { 0 } else { 256 * 1024 },
            ..Default::default()
        };
        let source = Arc::new(bucket.source(S3_BUCKET, options));
        let shelves = shelves(disk_on, store_on);
        let master = master.clone();
        async move {
            let server = BenchServer::start_with_shelves(source, Settings::default(), shelves)
                .await
                .ok()?;
            let mut client = KeepAliveClient::connect(server.addr).await.ok()?;
            let started = Instant::now();
            let ok = matches!(client.get(&master).await, Ok(r) if r.status == 200);
            let wall = ms(started.elapsed());
            let reads = server.app.catalog.source().counters().read_requests.get();
            // Long enough for the tiers to be written (after the answer, off the request).
            tokio::time::sleep(Duration::from_millis(1500)).await;
            server.stop().await;
            ok.then_some((wall, reads))
        }
    };
    // Prime both tiers once.
    if first_master(true, true).await.is_none() {
        return Vec::new();
    }
    let mut figures: Vec<(Vec<f64>, u64)> = Vec::new();
    // Cold (no tiers), a restarted replica (disk tier), a new replica (store tier).
    for (disk_on, store_on) in [(false, false), (true, false), (false, true)] {
        let mut walls = Vec::new();
        let mut reads = 0;
        for _ in 0..TIER_RUNS {
            if let Some((wall, r)) = first_master(disk_on, store_on).await {
                walls.push(wall);
                reads = reads.max(r);
            }
        }
        figures.push((walls, reads));
    }
    let median = |walls: &mut Vec<f64>| percentile(walls, 50.0);
    let mut rows = Vec::new();
    let cold = figures
        .first()
        .map_or(f64::NAN, |f| median(&mut f.0.clone()));
    for (i, (walls, reads)) in figures.iter_mut().enumerate() {
        let m = median(walls);
        let (row_name, bar, met) = match i {
            0 => (
                "S3 tiers: first master, cold from the moov (median of 5)",
                "-",
                None,
            ),
            1 => (
                "S3 tiers: first master, restarted replica (disk tier)",
                "<= 1/3 of cold",
                Some(m * 3.0 <= cold),
            ),
            _ => (
                "S3 tiers: first master, new replica (store tier)",
                "<= 1/3 of cold",
                Some(m * 3.0 <= cold),
            ),
        };
        rows.push(Row {
            name: row_name,
            budget: "-",
            bar,
            result: format!(
                "{m:.1} ms ({:.2} of cold), {reads} source reads",
                m / cold.max(f64::MIN_POSITIVE)
            ),
            met: met.map(|ok| ok && walls.len() == TIER_RUNS),
        });
    }
    rows
}

/// Cold and warm metadata loads, GETs and bytes per segment, and over-read, with the
/// 5-minute asset in a loopback S3-compatible bucket.
async fn object_store_section(dir: &Path) -> Vec<Row> {
    let buckets = dir.join("s3");
    let bucket_dir = buckets.join(S3_BUCKET);
    if std::fs::create_dir_all(&bucket_dir).is_err() || !ensure_asset(&bucket_dir, S3_ASSET, 100) {
        return vec![Row {
            name: "Object-store section",
            budget: "-",
            bar: "-",
            result: "skipped: needs ffmpeg".into(),
            met: None,
        }];
    }
    let bucket = s3::S3Server::start(&buckets).await;
    let source = Arc::new(bucket.source(S3_BUCKET, Default::default()));
    let settings = Settings::default();
    let server = match BenchServer::start_on(source.clone(), settings.clone()).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot start the server: {e}");
            return Vec::new();
        }
    };
    let base = format!("/vod/{S3_ASSET}");
    let Ok(mut client) = KeepAliveClient::connect(server.addr).await else {
        return Vec::new();
    };
    let before = bucket.tally();
    let started = Instant::now();
    let cold_ok =
        matches!(client.get(&format!("{base}/master.m3u8")).await, Ok(r) if r.status == 200);
    let cold = ms(started.elapsed());
    let after_cold = bucket.tally();
    let mut warm = Vec::new();
    for _ in 0..200 {
        let started = Instant::now();
        let _ = client.get(&format!("{base}/manifest.mpd")).await;
        warm.push(ms(started.elapsed()));
    }
    // The title as the server sees it, for payload sizes and version folder.
    let Some(key) = ObjectKey::parse(S3_ASSET).ok() else {
        return Vec::new();
    };
    let source_dyn: Arc<dyn MediaSource> = source;
    let Ok(title) = load_title(&source_dyn, &key, &settings).await else {
        return Vec::new();
    };
    let folder = format!("v{}", title.version_token());
    let before_segments = bucket.tally();
    let mut payload = 0u64;
    let mut segments = 0u64;
    let mut runs = 0u64;
    let mut all_ok = true;
    for (pos, track) in title.index.tracks.iter().enumerate() {
        for segment in 0..title.plan.segment_count {
            if let Ok(p) = prepare_media_segment(&title.index, &title.plan, pos, segment) {
                payload += p.payload_bytes;
                runs += p.ranges.len() as u64;
            }
            let path = format!(
                "{base}/{folder}/seg-t{}-{}.m4s",
                track.track_id,
                segment + 1
            );
            all_ok &= matches!(client.get(&path).await, Ok(r) if r.status == 200);
            segments += 1;
        }
    }
    let after = bucket.tally();
    server.stop().await;
    let gets = after.gets - before_segments.gets;
    let bytes = after.get_bytes - before_segments.get_bytes;
    let over_read = bytes.saturating_sub(payload) as f64 / segments.max(1) as f64;
    vec![
        Row {
            name: "S3: cold metadata load (first master.m3u8)",
            budget: "-",
            bar: "<= 2 GETs",
            result: format!(
                "{cold:.1} ms, {} GET + {} HEAD",
                after_cold.gets - before.gets,
                after_cold.heads - before.heads
            ),
            met: Some(cold_ok && after_cold.gets - before.gets <= 2),
        },
        Row {
            name: "S3: cached DASH manifest (loopback, client)",
            budget: "p95 < 2 ms",
            bar: "p95 < 0.2 ms",
            result: format!("p95 {:.3} ms", percentile(&mut warm, 95.0)),
            met: Some(percentile(&mut warm, 95.0) < 2.0),
        },
        Row {
            name: "S3: GETs per segment",
            budget: "-",
            bar: "<= 1 per contiguous run",
            result: format!(
                "{:.2} GETs/segment ({gets} GETs, {runs} runs, {segments} segments)",
                gets as f64 / segments.max(1) as f64
            ),
            met: Some(all_ok && gets <= runs),
        },
        Row {
            name: "S3: source bytes beyond the payload",
            budget: "<= 256 KiB/seg",
            bar: "-",
            result: format!(
                "{:.1} KiB per segment ({:.1} MiB read for {:.1} MiB payload)",
                over_read / KIB,
                bytes as f64 / KIB / KIB,
                payload as f64 / KIB / KIB
            ),
            met: Some(all_ok && over_read <= 256.0 * KIB),
        },
    ]
}

/// Every (track id, segment number) of the title.
fn title_segments(title: &vodpack::package::Title) -> Vec<(u32, usize)> {
    let mut out = Vec::new();
    for track in &title.index.tracks {
        for segment in 0..title.plan.segment_count {
            out.push((track.track_id, segment + 1));
        }
    }
    out
}

async fn sustained_streams(
    server: &BenchServer,
    segments: &[(u32, usize)],
    streams: u64,
    seconds: u64,
) -> Vec<Row> {
    let segments: Arc<Vec<(u32, usize)>> = Arc::new(segments.to_vec());
    let requests = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let bytes = Arc::new(AtomicU64::new(0));
    let peak_rss = Arc::new(AtomicU64::new(0));
    let idle_rss = resident_bytes();
    let deadline = Instant::now() + Duration::from_secs(seconds);

    let sampler = {
        let peak = peak_rss.clone();
        tokio::spawn(async move {
            while Instant::now() < deadline {
                peak.fetch_max(resident_bytes(), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let canary = tokio::spawn(async move {
        let mut delays = Vec::new();
        while Instant::now() < deadline {
            let started = Instant::now();
            tokio::time::sleep(Duration::from_millis(1)).await;
            delays.push(ms(started.elapsed()) - 1.0);
        }
        delays
    });
    let mut tasks = Vec::new();
    for id in 0..streams {
        let (segments, requests, errors, bytes) = (
            segments.clone(),
            requests.clone(),
            errors.clone(),
            bytes.clone(),
        );
        let addr = server.addr;
        tasks.push(tokio::spawn(async move {
            let mut seed = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut client = None;
            while Instant::now() < deadline {
                if client.is_none() {
                    match KeepAliveClient::connect(addr).await {
                        Ok(c) => client = Some(c),
                        Err(_) => {
                            errors.fetch_add(1, Ordering::Relaxed);
                            requests.fetch_add(1, Ordering::Relaxed);
                            tokio::time::sleep(Duration::from_millis(10)).await;
                            continue;
                        }
                    }
                }
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let Some(&(track, number)) = segments.get(seed as usize % segments.len().max(1))
                else {
                    break;
                };
                let path = format!("/vod/{LONG_ASSET}/seg-t{track}-{number}.m4s");
                requests.fetch_add(1, Ordering::Relaxed);
                let result = match client.as_mut() {
                    Some(c) => c.get(&path).await,
                    None => continue,
                };
                match result {
                    Ok(r) if r.status < 500 => {
                        bytes.fetch_add(r.body_bytes, Ordering::Relaxed);
                    }
                    Ok(_) => {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(_) => {
                        errors.fetch_add(1, Ordering::Relaxed);
                        client = None;
                    }
                }
            }
        }));
    }
    for task in tasks {
        let _ = task.await;
    }
    let _ = sampler.await;
    let mut delays = canary.await.unwrap_or_default();
    let total = requests.load(Ordering::Relaxed);
    let failed = errors.load(Ordering::Relaxed);
    let sent = bytes.load(Ordering::Relaxed);
    let rate = if total > 0 {
        failed as f64 / total as f64
    } else {
        1.0
    };
    let per_conn =
        peak_rss.load(Ordering::Relaxed).saturating_sub(idle_rss) as f64 / streams as f64;
    let shed: u64 = server
        .app
        .render_metrics()
        .await
        .lines()
        .filter(|l| l.starts_with("vod_http_requests_total") && l.contains("status=\"503\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    vec![
        Row {
            name: "Origin 5xx and connection errors, sustained streams",
            budget: "< 0.1 %",
            bar: "0 errors",
            result: format!(
                "{failed} of {total} requests ({:.3} %); {:.0} req/s, {:.0} MiB/s",
                rate * 100.0,
                total as f64 / seconds as f64,
                sent as f64 / KIB / KIB / seconds as f64
            ),
            met: Some(total > 0 && rate < 0.001),
        },
        Row {
            name: "Extra resident memory per streaming connection",
            budget: "<= 512 KiB",
            bar: "< 128 KiB",
            result: format!(
                "{:.1} KiB (peak {:.0} MiB - idle {:.0} MiB, incl. client)",
                per_conn / KIB,
                peak_rss.load(Ordering::Relaxed) as f64 / KIB / KIB,
                idle_rss as f64 / KIB / KIB
            ),
            met: Some(per_conn <= 512.0 * KIB),
        },
        Row {
            name: "Requests shed or rejected (503)",
            budget: "-",
            bar: "-",
            result: format!("{shed}"),
            met: None,
        },
        Row {
            name: "Canary 1 ms timer, scheduling delay",
            budget: "-",
            bar: "-",
            result: format!(
                "p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
                percentile(&mut delays, 50.0),
                percentile(&mut delays, 99.0),
                percentile(&mut delays, 100.0)
            ),
            met: None,
        },
    ]
}
