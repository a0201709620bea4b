//! `BUDGET_SECTIONS=thumbs`: thumbnails and storyboards, reported without a
//! budget (the seed has none for them) beside the obvious alternative, one ffmpeg process
//! per image.
//!
//! A 60-second 1080p H.264 title (`testsrc2`, 25 fps, a key frame every 2 s, B-frames) is
//! made in target/bench/ on first run. Through the in-process server and one keep-alive
//! client: a key-frame thumbnail at full size and at 160 px wide, and an exact one 1 s into
//! a GOP (25 frames decoded), each at distinct times; then `ffmpeg -ss S -i FILE
//! -frames:v 1 -f image2 out.jpg` at the same times (its input seeking is exact too,
//! decoding from the key frame before). Last, the sheets of the 60-minute asset's
//! storyboard (10x10 tiles of 160 px, one key frame every 10 s: 100 decodes a sheet).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use vodpack::bench::{BenchServer, KeepAliveClient};
use vodpack::config::Settings;

use crate::{env_u64, ms, percentile, Row, LONG_ASSET};

/// The 1080p title.
const HD_ASSET: &str = "hd-1080p-60s.mp4";

/// Requests per measured kind, unless `BUDGET_THUMB_RUNS` says otherwise (ffmpeg runs
/// half as many).
const RUNS: u64 = 20;

/// Make the 1080p title if it is missing; `false` when ffmpeg fails or is missing.
fn ensure_hd_asset(dir: &Path) -> bool {
    let asset = dir.join(HD_ASSET);
    if asset.exists() {
        return true;
    }
    eprintln!("synthesizing {} with ffmpeg (libx264)...", asset.display());
    let partial = dir.join(format!("{HD_ASSET}.partial.mp4"));
    let made = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg("testsrc2=size=1920x1080:rate=25:duration=60")
        .args([
            "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "veryfast",
        ])
        .args(["-g", "50", "-bf", "2", "-colorspace", "bt709"])
        .arg(&partial)
        .status()
        .is_ok_and(|s| s.success());
    made && std::fs::rename(&partial, &asset).is_ok()
}

/// p50 and p95 of `samples` (ms) as a result cell.
fn spread(samples: &mut [f64]) -> String {
    let (p50, p95) = (percentile(samples, 50.0), percentile(samples, 95.0));
    format!("p50 {p50:.1} ms, p95 {p95:.1} ms ({} runs)", samples.len())
}

/// Time `paths` one after another on one keep-alive connection; `None` when a request
/// fails or is not 200.
async fn time_gets(client: &mut KeepAliveClient, paths: &[String]) -> Option<Vec<f64>> {
    let mut samples = Vec::with_capacity(paths.len());
    for path in paths {
        let started = Instant::now();
        match client.get(path).await {
            Ok(reply) if reply.status == 200 => samples.push(ms(started.elapsed())),
            other => {
                eprintln!("{path}: {other:?}");
                return None;
            }
        }
    }
    Some(samples)
}

/// Time one ffmpeg process per time in `times_ms`, each writing a JPEG of the frame.
async fn time_ffmpeg(file: &Path, out: &Path, times_ms: &[u64]) -> Option<Vec<f64>> {
    let (file, out, times_ms) = (file.to_owned(), out.to_owned(), times_ms.to_vec());
    let timed = tokio::task::spawn_blocking(move || {
        let mut samples = Vec::new();
        for t in times_ms {
            let started = Instant::now();
            let ok = Command::new("ffmpeg")
                .args(["-v", "error", "-y", "-ss"])
                .arg(format!("{}.{:03}", t / 1000, t % 1000))
                .arg("-i")
                .arg(&file)
                .args(["-frames:v", "1", "-f", "image2"])
                .arg(&out)
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                return None;
            }
            samples.push(ms(started.elapsed()));
        }
        Some(samples)
    });
    timed.await.ok().flatten()
}

fn row(name: &'static str, result: String) -> Row {
    Row {
        name,
        budget: "-",
        bar: "-",
        result,
        met: None,
    }
}

/// The thumbnail and storyboard rows.
pub async fn thumbs_section(dir: &Path) -> Vec<Row> {
    let mut rows = Vec::new();
    if !ensure_hd_asset(dir) {
        rows.push(row(
            "Thumbnails",
            "skipped: needs ffmpeg with libx264".into(),
        ));
        return rows;
    }
    let server = match BenchServer::start(dir, Settings::default()).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot start the server: {e}");
            return rows;
        }
    };
    let Ok(mut client) = KeepAliveClient::connect(server.addr).await else {
        server.stop().await;
        return rows;
    };
    // Key frames every 2 s; each request at a time of its own, from 4 s on.
    let runs = env_u64("BUDGET_THUMB_RUNS", RUNS).clamp(2, 25);
    let key_times: Vec<u64> = (0..runs).map(|i| 4_000 + i * 2_000).collect();
    let mid_times: Vec<u64> = key_times.iter().map(|t| t + 1_000).collect();
    let paths = |times: &[u64], suffix: &str| -> Vec<String> {
        (times.iter())
            .map(|t| format!("/vod/{HD_ASSET}/thumb-{t}{suffix}.jpg"))
            .collect()
    };
    // The title's metadata loaded first: what is timed is the thumbnail.
    let _ = time_gets(&mut client, &paths(&[1_000], "")).await;
    let measured = [
        (
            "Thumbnail, 1080p H.264, key frame, full size",
            paths(&key_times, ""),
        ),
        (
            "Thumbnail, 1080p H.264, key frame, 160 px wide",
            paths(&key_times, "-w160"),
        ),
        (
            "Thumbnail, 1080p H.264, exact, 1 s into a GOP",
            paths(&mid_times, ""),
        ),
    ];
    for (name, paths) in measured {
        let result = match time_gets(&mut client, &paths).await {
            Some(mut samples) => spread(&mut samples),
            None => "failed (see stderr)".into(),
        };
        rows.push(row(name, result));
    }
    let file = dir.join(HD_ASSET);
    let out = dir.join("thumb-bench-ffmpeg.jpg");
    let ffmpeg_runs = usize::try_from(runs / 2).unwrap_or(10);
    for (name, times) in [
        ("ffmpeg -ss S -i FILE -frames:v 1, key frame", &key_times),
        (
            "ffmpeg -ss S -i FILE -frames:v 1, 1 s into a GOP",
            &mid_times,
        ),
    ] {
        let times = &times[..ffmpeg_runs.min(times.len())];
        let result = match time_ffmpeg(&file, &out, times).await {
            Some(mut samples) => spread(&mut samples),
            None => "failed (needs ffmpeg)".into(),
        };
        rows.push(row(name, result));
    }
    let _ = std::fs::remove_file(&out);
    // The 60-minute asset's storyboard: 4 sheets of 10x10 tiles, each asked twice.
    let sheets: Vec<String> = (1..=4)
        .chain(1..=4)
        .take(usize::try_from(runs).unwrap_or(8).min(8))
        .map(|n| format!("/vod/{LONG_ASSET}/storyboard-{n}.jpg"))
        .collect();
    let _ = time_gets(&mut client, &[format!("/vod/{LONG_ASSET}/storyboard.vtt")]).await;
    let result = match time_gets(&mut client, &sheets).await {
        Some(mut samples) => spread(&mut samples),
        None => "failed (see stderr)".into(),
    };
    rows.push(row(
        "Storyboard sheet, 60-minute asset (10x10 tiles, 160 px)",
        result,
    ));
    server.stop().await;
    rows
}
