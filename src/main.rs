//! The `vodpack` binary: parse the command line, check every setting and open the source
//! (exit 2 with one line when one cannot work), set up telemetry, bind, and hand over to
//! `server::run`; or `inspect` one key, or `check` a prefix (`vodpack::ops`).

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use vodpack::config::{Settings, SettingsArgs};
use vodpack::ops::check::{check, Output};
use vodpack::ops::inspect::{inspect, render_text, resolve_target, TargetError};
use vodpack::ops::startup::{log_startup, open_shelves, open_source, OpenedSource, StartupError};
use vodpack::server::{self, App};

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
    /// What the server would answer for one file or title document (a path, a key of the
    /// configured source, or an s3://, gs://, az://, https:// URL), and its tracks,
    /// codecs, durations and segment plan. Exit 1 when it would not be served.
    Inspect {
        /// A local path, a key under --source or --root, or a URL.
        target: String,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        settings: Box<SettingsArgs>,
    },
    /// Check every media file and title document under a folder or bucket prefix: `ok` or
    /// the reason a player would get, with totals and the reads it cost. Exit 1 when any
    /// fails.
    Check {
        /// A folder under --root or --source (empty: all of it), or a URL
        /// (s3://bucket/prefix/, a local folder path).
        #[arg(default_value = "")]
        prefix: String,
        /// Objects checked at once (1 to 256).
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
        concurrency: u16,
        /// JSON lines even on a terminal.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        settings: Box<SettingsArgs>,
    },
    /// Print a signed-URL token granting a path prefix; the secret comes from
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        // `serve` sizes the runtime from its settings, so they are resolved (and checked)
        // before it is built.
        Command::Serve(args) => args
            .resolve()
            .map_err(|e| Failure::from(StartupError::from(e)))
            .and_then(|settings| {
                let runtime = runtime(settings.server.worker_threads)?;
                serve_command(&runtime, settings)
            }),
        Command::Inspect {
            target,
            json,
            settings,
        } => runtime(None)
            .and_then(|runtime| runtime.block_on(inspect_command(&target, json, &settings))),
        Command::Check {
            prefix,
            concurrency,
            json,
            settings,
        } => runtime(None).and_then(|runtime| {
            runtime.block_on(check_command(&prefix, concurrency.into(), json, &settings))
        }),
        Command::SignUrl {
            prefix,
            expires_in_secs,
            client_ip,
        } => sign_url(&prefix, expires_in_secs, client_ip.as_deref())
            .map(|()| ExitCode::SUCCESS)
            .map_err(Failure::from),
    };
    match result {
        Ok(code) => code,
        Err(Failure::Startup(e)) => {
            // One line naming the setting and the fix, and status 2, before any listener.
            eprintln!("vodpack: {}", e.one_line());
            ExitCode::from(StartupError::EXIT_CODE as u8)
        }
        Err(Failure::Other(e)) => {
            eprintln!("vodpack: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The tokio runtime, with `worker_threads` workers (`None`: one per available core).
fn runtime(worker_threads: Option<usize>) -> Result<tokio::runtime::Runtime, Failure> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(threads) = worker_threads {
        builder.worker_threads(threads);
    }
    (builder.enable_all().build())
        .map_err(|e| Failure::Other(anyhow::anyhow!("cannot start the tokio runtime: {e}")))
}

/// How a command failed: at startup (exit 2, one line) or later (exit 1).
enum Failure {
    Startup(Box<StartupError>),
    Other(anyhow::Error),
}

impl From<StartupError> for Failure {
    fn from(e: StartupError) -> Self {
        Failure::Startup(Box::new(e))
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Other(e)
    }
}

impl From<TargetError> for Failure {
    fn from(e: TargetError) -> Self {
        Failure::Other(e.into())
    }
}

fn serve_command(
    runtime: &tokio::runtime::Runtime,
    settings: Settings,
) -> Result<ExitCode, Failure> {
    // The source is opened (and with it every store setting checked) before telemetry
    // and before the listener, so a setting that cannot work stops here.
    let (opened, shelves) = {
        let _context = runtime.enter();
        (open_source(&settings)?, open_shelves(&settings)?)
    };
    // In the runtime's context (the gRPC exporter needs a reactor for its channel),
    // but not inside `block_on`, where the HTTP exporter's blocking client may not
    // be built or dropped.
    let _guard = {
        let _context = runtime.enter();
        vodpack::telemetry::init(
            settings.log_format,
            vodpack::telemetry::OtelConfig::from_env(),
        )
        .map_err(anyhow::Error::from)?
    };
    log_startup(&settings, &opened);
    runtime
        .block_on(serve(settings, opened, shelves))
        .map_err(|e| match e.downcast::<StartupError>() {
            Ok(startup) => Failure::Startup(Box::new(startup)),
            Err(other) => Failure::Other(other),
        })?;
    Ok(ExitCode::SUCCESS)
}

async fn inspect_command(
    target: &str,
    json: bool,
    args: &SettingsArgs,
) -> Result<ExitCode, Failure> {
    // A URL's folder is the source, resolved with the rest (its scheme picks the
    // `*_ALLOW_HTTP` variable).
    let mut args = args.clone();
    if let Some((folder, _)) = target.rsplit_once('/').filter(|_| target.contains("://")) {
        args.source = Some(format!("{folder}/"));
    }
    let settings = args.resolve().map_err(StartupError::from)?;
    let root_given = args.root.is_some();
    let target = resolve_target(target, &settings, root_given)?;
    let report = inspect(target).await?;
    let text = match json {
        true => serde_json::to_string_pretty(&report).map_err(anyhow::Error::from)? + "\n",
        false => render_text(&report),
    };
    // A closed pipe (`vodpack inspect f.mp4 | head`) is not an error worth a panic.
    let mut stdout = std::io::stdout().lock();
    match std::io::Write::write_all(&mut stdout, text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            return Err(anyhow::Error::from(e).into())
        }
        _ => {}
    }
    Ok(match report.answer.is_ok() {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    })
}

async fn check_command(
    prefix: &str,
    concurrency: usize,
    json: bool,
    args: &SettingsArgs,
) -> Result<ExitCode, Failure> {
    let mut args = args.clone();
    let mut prefix = prefix.to_owned();
    // A URL or an existing folder path names the source itself.
    if prefix.contains("://") {
        args.source = Some(std::mem::take(&mut prefix));
    }
    let mut settings = args.resolve().map_err(StartupError::from)?;
    // A folder path names the root (always when absolute, as with VODPACK_ROOT set in a
    // container); else PREFIX is a folder under --root.
    if settings.source.is_none()
        && (args.root.is_none() || Path::new(&prefix).is_absolute())
        && Path::new(&prefix).is_dir()
    {
        settings.root = std::mem::take(&mut prefix).into();
    }
    let output = match !json && std::io::stdout().is_terminal() {
        true => Output::Terminal,
        false => Output::JsonLines,
    };
    let mut stdout = std::io::stdout();
    let totals = check(settings, &prefix, concurrency, output, &mut stdout).await?;
    Ok(match totals.all_ok() {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    })
}

/// Connections the kernel may hold completed for `accept` (the kernel clamps it to
/// `net.core.somaxconn`). tokio's default, 1,024, overflows when thousands of players
/// connect at once: the kernel then drops the handshake's last ACK, the client believes it
/// is connected and sends its request, and the request waits seconds for the SYN-ACK
/// retransmits before the server ever sees it.
const LISTEN_BACKLOG: u32 = 65_535;

/// The listening socket on `addr`, with [`LISTEN_BACKLOG`].
fn listen(addr: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // As std's and tokio's own bind: a restart does not wait out TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

async fn serve(
    settings: Settings,
    opened: OpenedSource,
    shelves: server::IndexShelves,
) -> anyhow::Result<()> {
    let listener = listen(settings.listen).map_err(|source| StartupError::Listen {
        addr: settings.listen,
        source,
    })?;
    let addr = listener.local_addr()?;
    let (source, root) = (opened.source, opened.root);
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
    if server::preview_enabled(&settings) {
        println!("  Preview: http://{addr}/ (titles, players, and why a file is refused)");
    }
    // Reachability and credentials are only known by asking: a warning now, not a
    // refusal (the store may come up later; /readyz says degraded meanwhile).
    let probe = source.clone();
    tokio::spawn(async move {
        if let Err(e) = probe.check_ready().await {
            tracing::warn!(error = %e, "the source is not answering yet; /readyz says degraded until it does");
        }
    });
    for (tier, shelf) in [("disk", &shelves.disk), ("store", &shelves.store)] {
        if let Some(shelf) = shelf {
            let held = shelf.held_bytes().map(|b| format!(", {b} bytes held"));
            let place = shelf.describe();
            tracing::info!("index tier {tier}: {place}{}", held.unwrap_or_default());
        }
    }
    let app = App::with_shelves(settings, source, shelves);
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
