//! Traces reach a real OTLP receiver: given a request carrying a W3C `traceparent`, the
//! server's spans are exported over OTLP/HTTP (protobuf) under the caller's trace, with
//! the metadata load and the source reads beneath the request span.
//!
//! This file installs the global `tracing` subscriber, so it holds this one test only.

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use vodpack::config::LogFormat;
use vodpack::telemetry::{init, OtelConfig, OtlpProtocol};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN_ID: &str = "00f067aa0ba902b7";

/// A minimal OTLP/HTTP receiver: stores every POSTed body, answers 200.
async fn start_receiver() -> (SocketAddr, Arc<Mutex<Vec<Bytes>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let stored = bodies.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let stored = stored.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let stored = stored.clone();
                    async move {
                        let body = req.into_body().collect().await?.to_bytes();
                        stored.lock().unwrap().push(body);
                        let mut response =
                            hyper::Response::new(http_body_util::Full::new(Bytes::new()));
                        response.headers_mut().insert(
                            "content-type",
                            hyper::header::HeaderValue::from_static("application/x-protobuf"),
                        );
                        Ok::<_, hyper::Error>(response)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (addr, bodies)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    let value = span
        .attributes
        .iter()
        .find(|a| a.key == key)?
        .value
        .as_ref()?;
    match value.value.as_ref()? {
        Value::StringValue(s) => Some(s.clone()),
        Value::IntValue(i) => Some(i.to_string()),
        Value::BoolValue(b) => Some(b.to_string()),
        other => Some(format!("{other:?}")),
    }
}

/// Given an OTLP receiver and a request with a `traceparent`, when the server answers,
/// then the response names the trace, and the receiver holds the server's request span
/// under the caller's span, the metadata load under it, and the source reads under that.
#[test]
fn a_request_with_traceparent_is_exported_as_a_span_tree_under_the_callers_trace() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (receiver, bodies) = runtime.block_on(start_receiver());
    let guard = {
        let _context = runtime.enter();
        init(
            LogFormat::Text,
            Some(OtelConfig {
                endpoint: Some(format!("http://{receiver}/v1/traces")),
                protocol: OtlpProtocol::HttpProtobuf,
            }),
        )
        .unwrap()
    };
    assert!(guard.exporting());
    let traceparent = format!("00-{TRACE_ID}-{CALLER_SPAN_ID}-01");
    let reply = runtime.block_on(common::traced_master_request(&traceparent));
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("x-trace-id"), Some(TRACE_ID));
    guard.force_flush();

    let spans: Vec<Span> = bodies
        .lock()
        .unwrap()
        .iter()
        .flat_map(|body| {
            ExportTraceServiceRequest::decode(body.clone())
                .unwrap()
                .resource_spans
        })
        .flat_map(|r| r.scope_spans)
        .flat_map(|s| s.spans)
        .filter(|s| hex(&s.trace_id) == TRACE_ID)
        .collect();
    let named = |name: &str| -> Vec<&Span> { spans.iter().filter(|s| s.name == name).collect() };

    let requests: Vec<&Span> = spans
        .iter()
        .filter(|s| attribute(s, "vod.route").as_deref() == Some("master"))
        .collect();
    assert_eq!(
        requests.len(),
        1,
        "spans: {:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let request = requests[0];
    assert_eq!(hex(&request.parent_span_id), CALLER_SPAN_ID);
    assert_eq!(
        attribute(request, "vod.key").as_deref(),
        Some("h264-aac-3s.mp4")
    );
    assert_eq!(attribute(request, "vod.cache").as_deref(), Some("miss"));
    assert_eq!(
        attribute(request, "http.response.status_code").as_deref(),
        Some("200")
    );

    let loads = named("metadata.load");
    assert_eq!(loads.len(), 1);
    let load = loads[0];
    assert_eq!(load.parent_span_id, request.span_id);
    assert_eq!(attribute(load, "vod.tracks").as_deref(), Some("2"));

    let reads = named("source.read");
    assert!(!reads.is_empty());
    for read in &reads {
        assert_eq!(read.parent_span_id, load.span_id);
        assert_eq!(attribute(read, "vod.source").as_deref(), Some("local"));
        assert_eq!(attribute(read, "vod.outcome").as_deref(), Some("ok"));
        assert!(attribute(read, "vod.bytes").is_some_and(|b| b.parse::<u64>().unwrap() > 0));
    }
    drop(guard);
}
