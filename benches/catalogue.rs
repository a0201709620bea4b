//! A catalogue on object storage, side by side with the peer: a bench, not a test
//! (`make catalogue`).
//!
//! It serves CATALOGUE_TITLES keys from a plain HTTP object store on 127.0.0.1 that answers
//! each request after STORE_LATENCY_MS (`catalogue/store.rs`), mapped onto a few real MP4
//! files made once with ffmpeg in target/bench/catalogue/ (`catalogue/media.rs`: moov first
//! and last, 2 s and 8 s GOPs, a 10-minute title, 1 s chunks). Each origin is started fresh
//! as its own process, with a fresh store, and loaded for BENCH_SECONDS by PLAYERS
//! concurrent players (`catalogue/players.rs`) that pick titles by Zipf popularity and fetch
//! the master, the media playlists of the first variant and of its audio, the init
//! segments and 1-10 segments from the start, audio and video at once over two keep-alive
//! connections. First vodpack's release binary (`vodpack serve --source
//! http://127.0.0.1:PORT/media --source-allow-http`), then the peer, nginx-vod-module in
//! remote mode reading the same store through an upstream (`catalogue/nginx-remote.conf.in`),
//! if PEER_PREFIX holds sbin/nginx; each is stopped by its own pid (`catalogue/origins.rs`).
//! It prints, per origin and request kind, p50/p95/p99/max, requests per second, errors,
//! store requests and bytes per title played, store bytes per byte sent, server CPU and
//! memory; then the ratios against the object-store bars (`catalogue/report.rs`).
//!
//! Variables: CATALOGUE_TITLES (2000), PLAYERS (32), BENCH_SECONDS (60), ROUNDS (1; 3 for
//! medians, the origins' order alternating), STORE_LATENCY_MS (20), STORE_SLOW_SHARE (0)
//! and STORE_SLOW_MS (1000): a seeded share of answers delayed that long instead (the slow
//! tail: STORE_SLOW_SHARE=0.01), BENCH_SEED (1), PEER_PREFIX ($HOME/.cache/peer/nginx-vod),
//! PEER_UNMUXED (0; 1 asks the peer for audio in its own rendition), ORIGINS (both;
//! `vodpack` or `peer` for one), BENCH_CLIENT_THREADS (2: the store's and players' runtime),
//! STORE_LOG (0; 1 prints every store request), PLAY_RATE (0: unpaced; N: the players
//! start N plays a second in all, so both origins get the same load, for latencies at a
//! load below both origins' capacity). PLAYERS=0 starts the store and the origin
//! and holds them for BENCH_SECONDS, to be probed by hand (their ports are printed).
//!
//! With the peer: build it once (../shared/peer/README.md: `build.sh NGINX_GIT_DIR
//! VOD_GIT_DIR $HOME/.cache/peer/nginx-vod`), then `make catalogue`. Without it, vodpack
//! alone is measured and the ratios are left out.

#[path = "catalogue/media.rs"]
mod media;
#[path = "catalogue/origins.rs"]
mod origins;
#[path = "catalogue/players.rs"]
mod players;
#[path = "catalogue/report.rs"]
mod report;
#[path = "catalogue/store.rs"]
mod store;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use media::{Catalogue, SHAPES};
use origins::{Origin, Which};
use report::{Measured, Run};
use store::{Counts, Store, StoreConfig};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Config {
    players: u64,
    /// Plays started per second across all players; `None`: each player starts its next
    /// play as soon as the last ends.
    play_rate: Option<f64>,
    seconds: u64,
    seed: u64,
    store: StoreConfig,
    peer_prefix: Option<PathBuf>,
    peer_unmuxed: bool,
}

/// The sum of the `series` lines of vodpack's /metrics.
async fn metric_sum(addr: std::net::SocketAddr, series: &str) -> Option<f64> {
    let mut conn = players::Conn::connect(addr).await.ok()?;
    let reply = conn.get("/metrics", true).await.ok()?;
    let text = String::from_utf8_lossy(&reply.body).into_owned();
    let values = (text.lines())
        .filter(|l| l.starts_with(series) && l[series.len()..].starts_with(['{', ' ']))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok());
    Some(values.sum())
}

/// One origin's run: a fresh store and a fresh origin, the players, the figures.
async fn run_one(which: Which, config: &Config, catalogue: &Arc<Catalogue>) -> Result<Run, String> {
    let store = Store::start(catalogue.clone(), config.store)
        .await
        .map_err(|e| format!("cannot start the store: {e}"))?;
    let dir = media::dir();
    let mut origin = match which {
        Which::Vodpack => Origin::vodpack(store.addr, &dir)?,
        Which::Peer => {
            let prefix = config.peer_prefix.as_deref().ok_or("no peer")?;
            Origin::peer(prefix, store.addr, &dir, config.peer_unmuxed)?
        }
    };
    origin.wait_ready().await?;
    println!(
        "{}: pid {} on {}, store on {}",
        which.name(),
        origin.pid(),
        origin.addr,
        store.addr
    );
    store.counts.reset();
    let cpu_before = origin.cpu_seconds();
    let bench_cpu_before = origins::cpu_seconds(&[std::process::id()]);
    let rss_rest = origin.memory().0;
    let started = Instant::now();
    let shared = Arc::new(players::Shared {
        addr: origin.addr,
        prefix: origin.prefix,
        catalogue: catalogue.clone(),
        zipf: players::zipf(catalogue.titles),
        end: started + Duration::from_secs(config.seconds),
        tally: Mutex::new(players::Tally::default()),
        pacing: config
            .play_rate
            .map(|rate| (Duration::from_secs_f64(1.0 / rate), Mutex::new(started))),
    });
    let mut tasks = tokio::task::JoinSet::new();
    if config.players == 0 {
        tasks.spawn(tokio::time::sleep_until(shared.end.into()));
    }
    for p in 0..config.players {
        tasks.spawn(players::player(shared.clone(), config.seed * 1_000_003 + p));
    }
    let (mut rss_peak, mut pss_peak) = (rss_rest, 0);
    loop {
        tokio::select! {
            joined = tasks.join_next() => if joined.is_none() { break },
            _ = tokio::time::sleep(Duration::from_millis(250)) => {
                let (rss, pss) = origin.memory();
                (rss_peak, pss_peak) = (rss_peak.max(rss), pss_peak.max(pss));
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let cpu_seconds = origin.cpu_seconds() - cpu_before;
    let bench_cpu_seconds = origins::cpu_seconds(&[std::process::id()]) - bench_cpu_before;
    // Bytes read and never sent: gaps read through, less the gap bytes another segment
    // took instead of reading them (`source/object_store/shared.rs`).
    let over_read = match which {
        Which::Vodpack => {
            let over = metric_sum(origin.addr, "vod_source_over_read_bytes_total").await;
            let shared = metric_sum(origin.addr, "vod_source_shared_bytes_total").await;
            over.map(|over| (over - shared.unwrap_or(0.0)).max(0.0))
        }
        Which::Peer => None,
    };
    if which == Which::Vodpack {
        let hedged = metric_sum(origin.addr, "vod_source_hedged_requests_total").await;
        let won = metric_sum(origin.addr, "vod_source_hedge_wins_total").await;
        let shared = metric_sum(origin.addr, "vod_source_shared_bytes_total").await;
        println!(
            "vodpack: {} store requests hedged, {} hedges answered first, {:.1} MB taken from \
             other segments' reads",
            hedged.unwrap_or(0.0),
            won.unwrap_or(0.0),
            shared.unwrap_or(0.0) / 1e6
        );
    }
    origin.stop();
    let tally = std::mem::take(&mut *shared.tally.lock().map_err(|_| "tally poisoned")?);
    let counts: &Counts = &store.counts;
    let by_shape = (0..SHAPES.len())
        .map(|shape| {
            let titles = (tally.titles.keys().copied())
                .filter(|n| catalogue.shape_of(*n) == shape)
                .collect::<Vec<_>>();
            (shape, counts.of_titles(titles.into_iter()))
        })
        .collect();
    let measured = Measured {
        seconds,
        store_gets: Counts::get(&counts.gets),
        store_heads: Counts::get(&counts.heads),
        store_other: Counts::get(&counts.other),
        store_bytes: Counts::get(&counts.bytes),
        store_slow: Counts::get(&counts.slow),
        store_412: Counts::get(&counts.status_412),
        store_416: Counts::get(&counts.status_416),
        by_shape,
        cpu_seconds,
        bench_cpu_seconds,
        rss_rest,
        rss_peak,
        pss_peak,
        over_read,
    };
    Ok(Run::new(which, tally, &measured))
}

fn print_catalogue(catalogue: &Catalogue) {
    println!(
        "catalogue: {} titles over {} shapes in {}",
        catalogue.titles,
        SHAPES.len(),
        media::dir().display()
    );
    println!(
        "| shape | {:<38} | {:>8} | {:>9} | {:>9} | {:>8} | {:>12} | {:>12} |",
        "what", "MB", "moov at", "moov KB", "GOP s", "audio B/chk", "audio chk/6s"
    );
    for (shape, loaded) in SHAPES.iter().zip(&catalogue.shapes) {
        let l = &loaded.layout;
        println!(
            "| {:<5} | {:<38} | {:>8.1} | {:>9} | {:>9.1} | {:>8.1} | {:>12.0} | {:>12.1} |",
            shape.letter,
            shape.what,
            loaded.bytes.len() as f64 / 1e6,
            l.moov_offset,
            l.moov_bytes as f64 / 1e3,
            l.key_frame_seconds,
            l.audio_bytes_per_chunk,
            l.audio_chunks_per_6s,
        );
    }
}

fn main() {
    let titles = env_u64("CATALOGUE_TITLES", 2000).clamp(1, 99_999) as u32;
    let rounds = env_u64("ROUNDS", 1).max(1);
    let home = std::env::var("HOME").unwrap_or_default();
    let peer_prefix = std::env::var("PEER_PREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(home).join(".cache/peer/nginx-vod"));
    let origins = std::env::var("ORIGINS").unwrap_or_default();
    let config = Config {
        players: env_u64("PLAYERS", 32),
        play_rate: Some(env_f64("PLAY_RATE", 0.0)).filter(|rate| *rate > 0.0),
        seconds: env_u64("BENCH_SECONDS", 60).max(1),
        seed: env_u64("BENCH_SEED", 1),
        store: StoreConfig {
            latency: Duration::from_millis(env_u64("STORE_LATENCY_MS", 20)),
            slow_share: env_f64("STORE_SLOW_SHARE", 0.0).clamp(0.0, 1.0),
            slow: Duration::from_millis(env_u64("STORE_SLOW_MS", 1000)),
            seed: env_u64("BENCH_SEED", 1),
            log: env_u64("STORE_LOG", 0) == 1,
        },
        peer_prefix: (peer_prefix.join("sbin/nginx").exists() && origins != "vodpack")
            .then_some(peer_prefix.clone()),
        peer_unmuxed: env_u64("PEER_UNMUXED", 0) == 1,
    };
    let catalogue = match media::load(titles) {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("cannot make the catalogue: {e}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(env_u64("BENCH_CLIENT_THREADS", 2).max(1) as usize)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    println!(
        "catalogue bench: {titles} titles, {} players ({}), {} s per origin, {rounds} round(s), \
         store latency {} ms, slow share {} at {} ms, seed {}, {} cores",
        config.players,
        config
            .play_rate
            .map_or("unpaced".to_owned(), |rate| format!(
                "{rate} plays/s in all"
            )),
        config.seconds,
        config.store.latency.as_millis(),
        config.store.slow_share,
        config.store.slow.as_millis(),
        config.seed,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );
    print_catalogue(&catalogue);
    let mut order = Vec::new();
    if origins != "peer" {
        order.push(Which::Vodpack);
    }
    match &config.peer_prefix {
        Some(prefix) => {
            order.push(Which::Peer);
            println!(
                "peer: {} in remote mode, {}",
                prefix.join("sbin/nginx").display(),
                if config.peer_unmuxed {
                    "audio unmuxed (/hlsu/)"
                } else {
                    "module defaults (/hls/)"
                }
            );
        }
        None if origins != "vodpack" => println!(
            "peer: {} has no sbin/nginx; vodpack alone (../shared/peer/README.md builds it)",
            peer_prefix.display()
        ),
        None => {}
    }
    let mut runs = Vec::new();
    for round in 0..rounds {
        let mut this = order.clone();
        if round % 2 == 1 {
            this.reverse();
        }
        for which in this {
            let started = Instant::now();
            match runtime.block_on(run_one(which, &config, &catalogue)) {
                Ok(run) => {
                    println!(
                        "round {} {}: {:.0} s, {} requests, {} errors",
                        round + 1,
                        which.name(),
                        started.elapsed().as_secs_f64(),
                        run.figures.get("requests").copied().unwrap_or(0.0),
                        run.figures.get("errors").copied().unwrap_or(0.0),
                    );
                    for e in &run.errors {
                        println!("  error: {e}");
                    }
                    runs.push(run);
                }
                Err(e) => {
                    eprintln!("round {} {}: {e}", round + 1, which.name());
                    std::process::exit(1);
                }
            }
        }
    }
    let v = report::medians(&runs, Which::Vodpack);
    let p = report::medians(&runs, Which::Peer);
    let title = match rounds {
        1 => "one round".to_owned(),
        n => format!("medians of {n} rounds"),
    };
    report::print_side_by_side(&title, &v, &p);
    if !v.is_empty() && !p.is_empty() {
        let rtt = config.store.latency.as_secs_f64() * 1000.0;
        report::print_bars(&v, &p, rtt, config.store.slow_share > 0.0);
    }
}
