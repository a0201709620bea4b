//! Telemetry: logs, traces and the Prometheus registry. A leaf module: anything may use it,
//! it uses nothing of ours but the counters it registers.
//!
//! `init` installs one `tracing` subscriber with up to two outputs: log lines (text or
//! JSON, filtered by `RUST_LOG`) and, when the `OTEL_*` variables ask for it, an
//! OpenTelemetry layer exporting spans over OTLP (otel.rs). The span tree is documented in
//! docs/observability.md.

mod log_format;
mod metrics;
mod otel;

pub use log_format::LogFormat;
pub use metrics::{
    BuildLabels, HttpLabels, Metrics, OutcomeLabels, ReasonLabels, ShedLabels, TierLabels,
};
pub use otel::{extract_parent, trace_id_of, OtelConfig, OtelError, OtlpProtocol};

use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

/// The target of the server's `request` span (one per HTTP request). The log layer leaves
/// it out whatever `RUST_LOG` says, unless `RUST_LOG` names it: formatting its fields for
/// log lines on every request cost about a third of a cached playlist's CPU. The lines
/// that need to say which request they are about carry `vod.key` and `vod.route`
/// themselves. The OpenTelemetry layer exports it like every `vodpack` span.
pub const REQUEST_SPAN_TARGET: &str = "vodpack::request";

/// The target of the local source's `source.read` spans (one per batch of a streamed
/// segment, 64 KiB by default): left out of log lines like the `request` span, for the same
/// reason, and exported as trace spans. The source names it: it imports nothing above it.
pub use crate::source::SOURCE_READ_SPAN_TARGET;

/// Keeps the trace exporter alive; flushes and shuts it down when dropped.
#[derive(Debug, Default)]
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
}

impl TelemetryGuard {
    /// Whether spans are being exported.
    pub fn exporting(&self) -> bool {
        self.provider.is_some()
    }

    /// Export every finished span now (tests, shutdown).
    pub fn force_flush(&self) {
        if let Some(provider) = &self.provider {
            let _ = provider.force_flush();
        }
    }
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            let _ = provider.shutdown();
        }
    }
}

/// Install the global `tracing` subscriber: log lines on stderr (text or JSON, filtered by
/// `RUST_LOG`, default `info` with mp4-atom's per-box warnings kept quiet, colours only on
/// a terminal) and, with `otel`, span export over OTLP. Later calls install nothing.
///
/// # Errors
/// When the OTLP exporter cannot be built.
pub fn init(format: LogFormat, otel: Option<OtelConfig>) -> Result<TelemetryGuard, OtelError> {
    use std::io::IsTerminal;
    let mut filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,mp4_atom=error"));
    for target in [REQUEST_SPAN_TARGET, SOURCE_READ_SPAN_TARGET] {
        let asked_for = std::env::var("RUST_LOG").is_ok_and(|v| v.contains(target));
        if !asked_for {
            if let Ok(off) = format!("{target}=off").parse() {
                filter = filter.add_directive(off);
            }
        }
    }
    let log_layer = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_ansi(std::io::stderr().is_terminal())
            .with_writer(std::io::stderr)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .with_writer(std::io::stderr)
            .boxed(),
    }
    .with_filter(filter);
    let provider = otel.as_ref().map(otel::tracer_provider).transpose()?;
    // Spans are exported whatever RUST_LOG says about log lines.
    let otel_layer = provider.as_ref().map(|p| {
        tracing_opentelemetry::layer()
            .with_tracer(otel::tracer(p))
            .with_filter(
                tracing_subscriber::filter::Targets::new()
                    .with_target("vodpack", tracing::Level::INFO),
            )
    });
    // Two stacks rather than an `Option` layer: an absent (`None`) layer still declares
    // interest in every span, so every span (one per request) would be created in the
    // registry for nobody.
    let _ = match otel_layer {
        Some(otel_layer) => tracing_subscriber::registry()
            .with(log_layer)
            .with(otel_layer)
            .try_init(),
        None => tracing_subscriber::registry().with(log_layer).try_init(),
    };
    Ok(TelemetryGuard { provider })
}
