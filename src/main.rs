//! The `vodpack` binary: parse the command line, set up telemetry, bind, and hand over to
//! `server::run`; or `inspect` one file.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use vodpack::config::{Settings, SettingsArgs};
use vodpack::media::{load_index_report, FragmentDiscovery, MediaLimits};
use vodpack::package::Title;
use vodpack::server::{self, App};
use vodpack::source::{LocalMediaSource, MediaSource, ObjectKey, ObjectStoreSource};

#[derive(Debug, Parser)]
#[command(
    name = "vodpack",
    version,
    about = "On-the-fly HLS and DASH packager for MP4 files"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve HLS and DASH for the MP4 files of a folder (default: ./fixtures) or a bucket.
    Serve(Box<SettingsArgs>),
    /// Print the tracks, codecs, durations and segment plan of one file.
    Inspect {
        /// Path of an MP4 file.
        file: std::path::PathBuf,
        /// Target segment duration in milliseconds.
        #[arg(long, default_value_t = 6000)]
        segment_duration_ms: u32,
    },
    /// Print a signed-URL token granting a path prefix (issue 14); the secret comes from
    /// VODPACK_URL_SECRET or the file named by VODPACK_URL_SECRET_FILE.
    SignUrl {
        /// Path prefix the token grants, as requested (percent-encoded), e.g. /vod/films/a.mp4/
        prefix: String,
        /// Seconds from now until the token expires.
        #[arg(long, default_value_t = 3600)]
        expires_in_secs: u64,
        /// Bind the token to this client IP.
        #[arg(long)]
        client_ip: Option<String>,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    match cli.command {
        Command::Serve(args) => {
            let settings = args.resolve()?;
            // In the runtime's context (the gRPC exporter needs a reactor for its channel),
            // but not inside `block_on`, where the HTTP exporter's blocking client may not
            // be built or dropped.
            let _guard = {
                let _context = runtime.enter();
                vodpack::telemetry::init(
                    settings.log_format,
                    vodpack::telemetry::OtelConfig::from_env(),
                )?
            };
            runtime.block_on(serve(settings))
        }
        Command::Inspect {
            file,
            segment_duration_ms,
        } => runtime.block_on(inspect(&file, segment_duration_ms)),
        Command::SignUrl {
            prefix,
            expires_in_secs,
            client_ip,
        } => sign_url(&prefix, expires_in_secs, client_ip.as_deref()),
    }
}

/// `vodpack sign-url`: the token for `prefix`, printed alone on stdout.
fn sign_url(prefix: &str, expires_in_secs: u64, client_ip: Option<&str>) -> anyhow::Result<()> {
    use vodpack::crypto::{Secret, TokenSigner};
    let secret = match (
        std::env::var("VODPACK_URL_SECRET").ok(),
        std::env::var_os("VODPACK_URL_SECRET_FILE"),
    ) {
        (Some(text), None) => Secret::from_text(&text, "url-secret")?,
        (None, Some(file)) => Secret::from_file(Path::new(&file), "url-secret")?,
        _ => anyhow::bail!("set one of VODPACK_URL_SECRET or VODPACK_URL_SECRET_FILE"),
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let token = TokenSigner::new(secret, 0).sign(prefix, now + expires_in_secs, client_ip);
    println!("{token}");
    Ok(())
}

async fn serve(settings: Settings) -> anyhow::Result<()> {
    // A bucket (one store, shared by every request) or a folder.
    let (source, root): (Arc<dyn MediaSource>, Option<std::path::PathBuf>) = match &settings.source
    {
        Some(url) => {
            let source = ObjectStoreSource::new(url, &settings.object_store)
                .with_context(|| format!("opening object store {url}"))?;
            (Arc::new(source), None)
        }
        None => {
            let source = LocalMediaSource::new(&settings.root)
                .with_context(|| format!("opening media folder {}", settings.root.display()))?
                .with_identity_ttl(Duration::from_millis(settings.object_store.identity_ttl_ms));
            let root = source.root().to_path_buf();
            (Arc::new(source), Some(root))
        }
    };
    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .with_context(|| format!("binding {}", settings.listen))?;
    let addr = listener.local_addr()?;
    match (&root, &settings.source) {
        (Some(root), _) => print_urls(root, addr),
        (None, url) => {
            println!(
                "vodpack serving {} on http://{addr}",
                url.as_deref().unwrap_or_default()
            );
            println!("  HLS:  http://{addr}/vod/KEY/master.m3u8 (KEY: an object key under it)");
            println!("  DASH: http://{addr}/vod/KEY/manifest.mpd");
        }
    }
    let app = App::new(settings, source);
    server::run(listener, app, shutdown_signal()).await?;
    tracing::info!("stopped");
    Ok(())
}

/// Print a playable URL for each media file at the top of the root, so a newcomer can
/// open one at once.
fn print_urls(root: &Path, addr: std::net::SocketAddr) {
    println!("vodpack serving {} on http://{addr}", root.display());
    let mut names: Vec<String> = std::fs::read_dir(root)
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| {
                    let n = n.to_ascii_lowercase();
                    [".mp4", ".m4v", ".m4a", ".mov"]
                        .iter()
                        .any(|ext| n.ends_with(ext))
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    for name in names {
        let encoded: String = name
            .split('/')
            .map(|s| percent_encoding::utf8_percent_encode(s, URL_SEGMENT).to_string())
            .collect::<Vec<_>>()
            .join("/");
        println!("  HLS:  http://{addr}/vod/{encoded}/master.m3u8");
        println!("  DASH: http://{addr}/vod/{encoded}/manifest.mpd");
    }
}

/// Characters percent-encoded in a printed URL path segment.
const URL_SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'?')
    .add(b'<')
    .add(b'>')
    .add(b'`');

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutdown signal received");
}

/// The colour and dynamic range of a video track for `inspect`, e.g.
/// ` colour=9/16/9 limited (colr) range=PQ dolby-vision=dvh1.08.07/db1p`: CICP colour
/// primaries/transfer/matrix, the sample range, and where they were read.
fn colour_note(codec: &vodpack::media::CodecInfo) -> String {
    let mut note = match codec.color {
        Some(c) => format!(
            " colour={}/{}/{} {} ({})",
            c.primaries,
            c.transfer,
            c.matrix,
            if c.full_range { "full" } else { "limited" },
            c.source.as_str()
        ),
        None => " colour=unspecified".to_owned(),
    };
    note.push_str(&format!(" range={}", codec.video_range().as_str()));
    if let Some(dv) = codec.dolby_vision {
        let name = dv.supplemental_codecs().unwrap_or_else(|| dv.codec());
        note.push_str(&format!(" dolby-vision={name}"));
    }
    note
}

async fn inspect(file: &Path, segment_duration_ms: u32) -> anyhow::Result<()> {
    let parent = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .context("file name is not UTF-8")?;
    let source: Arc<dyn MediaSource> = Arc::new(LocalMediaSource::new(parent)?);
    let key = ObjectKey::parse(name)?;
    let identity = source.identify(&key).await?;
    let (index, report) =
        load_index_report(&source, &key, &identity, &MediaLimits::default()).await?;
    // The source's edit lists, every edit, before `Title::new` replaces them with what the
    // output presents.
    let source_edits: Vec<_> = index.tracks.iter().map(|t| t.edits.clone()).collect();
    let edit_listing: String = (index.tracks.iter())
        .map(|t| {
            format!(
                "track {}\n{}",
                t.track_id,
                edit_lines(&t.edits, t.timescale)
            )
        })
        .collect();
    let title = match Title::new(index, segment_duration_ms) {
        Ok(title) => title,
        Err(e) => {
            // An edit list that cannot be packaged: show every edit before the reason.
            print!("{edit_listing}");
            return Err(e.into());
        }
    };
    let mut out = String::new();
    out.push_str(&format!("{}: {} bytes\n", file.display(), identity.size));
    out.push_str(&format!("moov: {} reads\n", report.moov_reads));
    out.push_str(&encryption_lines(&title));
    if let Some(f) = report.fragments {
        // With no read past the probe, the walk found them in bytes already read.
        let how = match (f.discovery, f.reads) {
            (FragmentDiscovery::Walk, 0) => "walk (all in the first read)",
            (discovery, _) => discovery.as_str(),
        };
        out.push_str(&format!(
            "fragments: {} moof, found by {how}, {} reads ({} ranges, {} bytes)\n",
            f.fragments, f.reads, f.ranges, f.bytes
        ));
    }
    for ((track, plan), edits) in title
        .index
        .tracks
        .iter()
        .zip(&title.plan.tracks)
        .zip(&source_edits)
    {
        let secs = track.duration_ticks() as f64 / f64::from(track.timescale);
        let detail = if track.codec.width > 0 {
            let (w, h) = (track.codec.width, track.codec.height);
            format!("{w}x{h}{}", colour_note(&track.codec))
        } else {
            format!(
                "{} Hz, {} ch",
                track.codec.sample_rate, track.codec.channels
            )
        };
        out.push_str(&format!(
            "track {} {} {} {} lang={} timescale={} samples={} duration={secs:.3}s \
             edits={} dts_shift={} cts_base={}\n",
            track.track_id,
            track.kind.as_str(),
            track.codec.rfc6381,
            detail,
            track.language.as_deref().unwrap_or("und"),
            track.timescale,
            track.samples.len(),
            edits.edits.len(),
            plan.dts_shift,
            plan.cts_base,
        ));
        out.push_str(&edit_lines(edits, track.timescale));
    }
    // Text tracks become WebVTT (HLS subtitles, DASH text/vtt), cut at the same times.
    for text in &title.index.text_tracks {
        let secs = text.samples.end_dts() as f64 / f64::from(text.timescale);
        out.push_str(&format!(
            "track {} text {} lang={} timescale={} samples={} duration={secs:.3}s \
             edit(empty={}, media_time={})\n",
            text.track_id,
            text.format.fourcc(),
            text.language.as_deref().unwrap_or("und"),
            text.timescale,
            text.samples.len(),
            text.edits.leading_empty_ticks(),
            text.edits.first_media_time_ticks(),
        ));
    }
    out.push_str(&format!(
        "segments: {} (target {} ms)\n",
        title.plan.segment_count, title.plan.target_ms
    ));
    for segment in 0..title.plan.segment_count {
        let mut line = format!("  {:>4}", segment + 1);
        for (track, plan) in title.index.tracks.iter().zip(&title.plan.tracks) {
            if let (Some(range), Some((start, duration))) = (
                plan.samples(segment),
                plan.segment_span(&track.samples, segment),
            ) {
                let ts = f64::from(track.timescale);
                line.push_str(&format!(
                    "  t{}: {:.3}s +{:.3}s {} samples",
                    track.track_id,
                    start as f64 / ts,
                    duration as f64 / ts,
                    range.len()
                ));
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    // A closed pipe (`vodpack inspect f.mp4 | head`) is not an error worth a panic.
    let mut stdout = std::io::stdout().lock();
    match std::io::Write::write_all(&mut stdout, out.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// Every edit of `edits` as the file has it, one line each, in seconds and in the track's
/// ticks (`timescale` per second).
fn edit_lines(edits: &vodpack::media::EditList, timescale: u32) -> String {
    let ts = f64::from(timescale.max(1));
    let mut out = String::new();
    for (n, edit) in edits.edits.iter().enumerate() {
        let media = edit.media_time_ticks.map_or("empty".to_owned(), |m| {
            format!("media_time={m} ({:.3}s)", m as f64 / ts)
        });
        out.push_str(&format!(
            "  edit {}: movie {:.3}s +{:.3}s ({} +{} ticks) {media}\n",
            n + 1,
            edit.start_ticks as f64 / ts,
            edit.duration_ticks as f64 / ts,
            edit.start_ticks,
            edit.duration_ticks,
        ));
    }
    out
}

/// What `inspect` says of encryption: the policy `VODPACK_ENCRYPTION` sets (a title
/// document's `"encryption"` overrides it per title), and whether each track can be
/// encrypted (AV1 and VP9 video cannot, and are refused with 422 when it applies).
fn encryption_lines(title: &Title) -> String {
    use vodpack::crypto::EncryptionPolicy;
    use vodpack::package::protect::TrackProtection;
    let policy = std::env::var("VODPACK_ENCRYPTION")
        .ok()
        .and_then(|p| EncryptionPolicy::parse(&p).ok())
        .unwrap_or_default();
    let mut out = format!("encryption: {policy} (VODPACK_ENCRYPTION)\n");
    if policy.any() {
        for track in &title.index.tracks {
            let verdict = TrackProtection::sample_format(&track.sample_description, track.kind)
                .map_or_else(|e| e.to_string(), |_| "can be encrypted".to_owned());
            out.push_str(&format!("  track {}: {verdict}\n", track.track_id));
        }
    }
    out
}
