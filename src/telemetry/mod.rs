//! Telemetry: log setup and the Prometheus registry. A leaf module: anything may use it,
//! it uses nothing of ours but the counters it registers.

mod metrics;

pub use metrics::{HttpLabels, Metrics};

use crate::config::LogFormat;

/// Install the global `tracing` subscriber: text or JSON lines on stderr, filtered by
/// `RUST_LOG` (default `info`, with mp4-atom's per-box warnings about boxes it does not
/// model kept quiet). Colours only on a terminal. Safe to call more than once (later calls
/// do nothing).
pub fn init_logging(format: LogFormat) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,mp4_atom=error"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}
