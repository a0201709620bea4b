//! Traces over OTLP/gRPC reach a real gRPC receiver (grpcio with the OpenTelemetry protobuf
//! definitions, tests/support/otlp_grpc_receiver.py): the same span tree as over HTTP, under
//! the caller's trace. This file installs the global `tracing` subscriber, so it holds this
//! one test only.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use vodpack::config::LogFormat;
use vodpack::telemetry::{init, OtelConfig, OtlpProtocol};

const TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN_ID: &str = "b7ad6b7169203331";

/// Whether python3 can import the receiver's modules. Missing modules skip the test, unless
/// `VODPACK_REQUIRE_TOOLS=1` (set by CI, which installs them), which makes it a failure.
fn have_receiver() -> bool {
    let found = Command::new("python3")
        .args(["-c", "import grpc, opentelemetry.proto.collector.trace.v1"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found && std::env::var("VODPACK_REQUIRE_TOOLS").is_ok_and(|v| v == "1") {
        panic!("python3 with grpcio and opentelemetry-proto is required (VODPACK_REQUIRE_TOOLS=1)");
    }
    if !found {
        eprintln!("skipping: python3 modules grpcio and opentelemetry-proto not found");
    }
    found
}

/// Given a gRPC OTLP receiver and a request with a `traceparent`, when the server answers
/// and flushes, then the receiver got the request span under the caller's span and the
/// metadata load under the request span, from service `vodpack`.
#[test]
fn spans_are_exported_over_grpc_under_the_callers_trace() {
    if !have_receiver() {
        return;
    }
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/support/otlp_grpc_receiver.py"
    );
    let mut receiver = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the receiver");
    let stdout = receiver.stdout.take().expect("receiver stdout");
    // Lines arrive on a thread, so every wait below is bounded.
    let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                return;
            }
        }
    });
    let port = lines
        .recv_timeout(Duration::from_secs(30))
        .ok()
        .and_then(|l| l.strip_prefix("port ").map(str::to_owned))
        .expect("the receiver's port");

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let guard = {
        let _context = runtime.enter();
        init(
            LogFormat::Text,
            Some(OtelConfig {
                endpoint: Some(format!("http://127.0.0.1:{port}")),
                protocol: OtlpProtocol::Grpc,
            }),
        )
        .unwrap()
    };
    let traceparent = format!("00-{TRACE_ID}-{CALLER_SPAN_ID}-01");
    let reply = runtime.block_on(common::traced_master_request(&traceparent));
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("x-trace-id"), Some(TRACE_ID));
    guard.force_flush();

    // Collect span lines until both expected spans are in (bounded).
    let mut spans: Vec<Vec<String>> = Vec::new();
    let wanted = |spans: &Vec<Vec<String>>| {
        let has = |name: &str| spans.iter().any(|s| s.get(1).is_some_and(|n| n == name));
        has("GET_master") && has("metadata.load")
    };
    while !wanted(&spans) {
        let Ok(line) = lines.recv_timeout(Duration::from_secs(30)) else {
            break;
        };
        let fields: Vec<String> = line.split(' ').map(str::to_owned).collect();
        if fields.first().is_some_and(|f| f == "span")
            && fields.get(2).is_some_and(|t| t == TRACE_ID)
        {
            spans.push(fields);
        }
    }
    drop(receiver.stdin.take());
    for _ in 0..100 {
        if receiver.try_wait().ok().flatten().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = receiver.kill();
    let _ = receiver.wait();
    drop(guard);

    let find = |name: &str| {
        spans
            .iter()
            .find(|s| s.get(1).is_some_and(|n| n == name))
            .unwrap_or_else(|| panic!("no {name} span in {spans:?}"))
    };
    let request = find("GET_master");
    assert_eq!(request[3], CALLER_SPAN_ID);
    assert_eq!(request[5], "service=vodpack");
    let load = find("metadata.load");
    assert_eq!(
        load[3], request[4],
        "metadata.load is a child of the request span"
    );
}
