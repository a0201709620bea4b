//! OpenTelemetry trace export over OTLP, configured by the standard `OTEL_*` variables.
//!
//! Export is on when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is
//! set (and neither `OTEL_TRACES_EXPORTER=none` nor `OTEL_SDK_DISABLED=true`). The protocol
//! comes from `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` / `OTEL_EXPORTER_OTLP_PROTOCOL`
//! (`http/protobuf`, the default, or `grpc`); the SDK itself reads the sampler
//! (`OTEL_TRACES_SAMPLER[_ARG]`), resource attributes (`OTEL_RESOURCE_ATTRIBUTES`), service
//! name (`OTEL_SERVICE_NAME`, default `vodpack` here), headers and timeouts. With export off
//! no exporter, batch thread or OpenTelemetry layer exists at all.

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;

/// The OTLP wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtlpProtocol {
    /// OTLP/HTTP with binary protobuf bodies (the spec's default).
    HttpProtobuf,
    /// OTLP/gRPC.
    Grpc,
}

/// Where and how to export traces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtelConfig {
    /// An explicit endpoint (the full URL for HTTP, e.g. `http://host:4318/v1/traces`);
    /// `None` lets the exporter read the `OTEL_EXPORTER_OTLP_*ENDPOINT` variables itself.
    pub endpoint: Option<String>,
    /// Wire protocol.
    pub protocol: OtlpProtocol,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl OtelConfig {
    /// The configuration the `OTEL_*` variables ask for; `None` when export is off.
    pub fn from_env() -> Option<Self> {
        if env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || env("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"))
        {
            return None;
        }
        env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT"))?;
        let protocol = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .map_or(OtlpProtocol::HttpProtobuf, |p| {
                if p.eq_ignore_ascii_case("grpc") {
                    OtlpProtocol::Grpc
                } else {
                    OtlpProtocol::HttpProtobuf
                }
            });
        Some(Self {
            endpoint: None,
            protocol,
        })
    }
}

/// Why export could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cannot set up OTLP trace export: {reason}")]
pub struct OtelError {
    reason: String,
}

/// Build the tracer provider for `config` and install the W3C trace-context propagator.
///
/// # Errors
/// When the exporter cannot be built (a malformed endpoint, for example).
pub fn tracer_provider(config: &OtelConfig) -> Result<SdkTracerProvider, OtelError> {
    // reqwest is built without a default TLS provider (no C toolchain needed): use ring.
    // Installing twice is harmless (the second call just reports the first).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let exporter = match config.protocol {
        OtlpProtocol::HttpProtobuf => {
            let mut builder = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary);
            if let Some(endpoint) = &config.endpoint {
                builder = builder.with_endpoint(endpoint.clone());
            }
            builder.build()
        }
        OtlpProtocol::Grpc => {
            let mut builder = opentelemetry_otlp::SpanExporter::builder().with_tonic();
            if let Some(endpoint) = &config.endpoint {
                builder = builder.with_endpoint(endpoint.clone());
            }
            builder.build()
        }
    }
    .map_err(|e| OtelError {
        reason: e.to_string(),
    })?;
    let mut resource = Resource::builder();
    if env("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("vodpack");
    }
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build();
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    Ok(provider)
}

/// A tracer for the `tracing` bridge.
pub fn tracer(provider: &SdkTracerProvider) -> opentelemetry_sdk::trace::SdkTracer {
    provider.tracer("vodpack")
}

/// Reads W3C `traceparent`/`tracestate` from request headers.
struct HeaderExtractor<'a>(&'a http::HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

/// The caller's trace context from `traceparent`/`tracestate`, to parent the request span.
pub fn extract_parent(headers: &http::HeaderMap) -> opentelemetry::Context {
    // Most requests carry none: what the propagator would answer, without its parse.
    if !headers.contains_key("traceparent") {
        return opentelemetry::Context::current();
    }
    TraceContextPropagator::new().extract(&HeaderExtractor(headers))
}

/// The trace id of a context, as 32 lowercase hex digits; `None` if it has none.
pub fn trace_id_of(cx: &opentelemetry::Context) -> Option<String> {
    let span_context = cx.span().span_context().clone();
    span_context
        .is_valid()
        .then(|| span_context.trace_id().to_string())
}
