//! The connection as a client sees it, over an in-memory pipe with paused time: what is
//! answered, in what order, and when the connection closes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::head::{self, Refused};
use super::{serve, Limits};

const TIMEOUT: Duration = Duration::from_secs(10);
const LIMITS: Limits = Limits {
    head_timeout: TIMEOUT,
    max_head_bytes: 1024,
    max_body_bytes: 64,
};

/// A connection whose answers take `answer_takes` each and say what was asked: the
/// method, the path and the body; and the client's end of the pipe, and the flag that
/// drains it.
fn connect(
    answer_takes: Duration,
) -> (
    JoinHandle<std::io::Result<()>>,
    DuplexStream,
    Arc<AtomicBool>,
) {
    let (ours, client) = tokio::io::duplex(64 * 1024);
    let draining = Arc::new(AtomicBool::new(false));
    let flag = draining.clone();
    let service = move |req: Request<Full<Bytes>>| async move {
        tokio::time::sleep(answer_takes).await;
        echo(req).await
    };
    let conn = serve(ours, LIMITS, move || flag.load(Ordering::SeqCst), service);
    (tokio::spawn(conn), client, draining)
}

/// An answer that says what was asked: the method, the target and the body.
pub(super) async fn echo(req: Request<Full<Bytes>>) -> Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let text = format!(
        "{} {} {}",
        parts.method,
        parts.uri,
        String::from_utf8_lossy(&body)
    );
    Response::new(Full::new(Bytes::from(text)))
}

/// Everything the server sends until it closes, or `None` if it has not closed within
/// two minutes (paused time, so the bound costs nothing).
async fn until_closed(client: &mut (impl AsyncRead + Unpin)) -> Option<String> {
    let mut all = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(120), client.read_to_end(&mut all));
    read.await.ok()?.ok()?;
    Some(String::from_utf8_lossy(&all).into_owned())
}

/// What the server sends next, up to `wanted` bytes or its close.
async fn read_some(client: &mut (impl AsyncRead + Unpin)) -> String {
    let mut buf = vec![0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(120), client.read(&mut buf));
    let n = read.await.expect("an answer or a close in time").unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// The answers' bodies in `text`, in order.
fn bodies(text: &str) -> Vec<&str> {
    text.split("HTTP/1.")
        .filter_map(|answer| answer.split_once("\r\n\r\n").map(|(_, body)| body))
        .collect()
}

/// Given a head with a query, an absolute-form target and a repeated header, then the
/// request carries them as sent.
#[test]
fn a_head_becomes_the_request_it_says() {
    let head = head::taken("GET http://origin/vod/a.mp4/master.m3u8?t=1 HTTP/1.1\r\nHost: origin\r\nX-A: 1\r\nx-a: 2\r\n\r\nGET /next")
        .unwrap()
        .unwrap();
    assert_eq!(head.request.method(), http::Method::GET);
    assert_eq!(head.request.uri().path(), "/vod/a.mp4/master.m3u8");
    assert_eq!(head.request.uri().query(), Some("t=1"));
    let values: Vec<_> = head.request.headers().get_all("x-a").iter().collect();
    assert_eq!(values, ["1", "2"]);
    assert!(head.keep_alive);
    assert_eq!(head.body_len, 0);
}

/// Given heads that cannot be served, then each is refused with its status; given half a
/// head, then nothing yet.
#[test]
fn malformed_heads_are_refused() {
    let refused = |text: &str| head::taken(text).unwrap_err();
    assert_eq!(refused("HELLO THERE\r\n\r\n"), Refused::BadRequest);
    assert_eq!(
        refused("GET / HTTP/2.0\r\n\r\n"),
        Refused::VersionNotSupported
    );
    assert_eq!(
        refused("GET / HTTP/1.1\r\nHost: h\r\nBad Header: x\r\n\r\n"),
        Refused::BadRequest
    );
    assert_eq!(
        refused("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: x\r\n\r\n"),
        Refused::BadRequest
    );
    assert_eq!(
        refused("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n"),
        Refused::BadRequest
    );
    assert_eq!(
        refused("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n"),
        Refused::BadRequest
    );
    assert_eq!(
        refused("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
        Refused::BadRequest
    );
    assert_eq!(
        refused(
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
        ),
        Refused::BadRequest
    );
    let many: String = (0..=head::MAX_HEADERS)
        .map(|i| format!("x-{i}: y\r\n"))
        .collect();
    assert_eq!(
        refused(&format!("GET / HTTP/1.1\r\nHost: h\r\n{many}\r\n")),
        Refused::HeadTooLarge
    );
    assert!(head::taken("GET / HTTP/1.1\r\nHost: x\r\n")
        .unwrap()
        .is_none());
    let same =
        head::taken("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\ncontent-length: 3\r\n\r\n");
    assert_eq!(
        same.unwrap().unwrap().body_len,
        3,
        "the same length twice is one length"
    );
}

/// Given the versions' defaults and the `Connection` header, then keep-alive follows
/// RFC 9112 9.3.
#[test]
fn keep_alive_follows_the_version_and_the_connection_header() {
    let keeps = |text: &str| head::taken(text).unwrap().unwrap().keep_alive;
    assert!(keeps("GET / HTTP/1.1\r\nHost: h\r\n\r\n"));
    assert!(!keeps(
        "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
    ));
    assert!(!keeps(
        "GET / HTTP/1.1\r\nHost: h\r\nConnection: te, Close\r\n\r\n"
    ));
    assert!(!keeps("GET / HTTP/1.0\r\n\r\n"));
    assert!(keeps("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
}

/// Given two requests and a body sent in one write, then both are answered in order,
/// the body reaches the service, and the connection stays open.
#[tokio::test(start_paused = true)]
async fn pipelined_requests_are_answered_in_order() {
    let (_served, mut client, _) = connect(Duration::ZERO);
    client
        .write_all(b"POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhelloGET /b HTTP/1.1\r\nHost: h\r\n\r\n")
        .await
        .unwrap();
    let mut seen = String::new();
    while bodies(&seen).len() < 2 || !seen.ends_with("GET /b ") {
        seen.push_str(&read_some(&mut client).await);
    }
    assert_eq!(bodies(&seen), ["POST /a hello", "GET /b "]);
    assert!(seen.starts_with("HTTP/1.1 200 OK\r\ncontent-length: 13\r\ndate: "));
}

/// Given `Connection: close`, an HTTP/1.0 request, and a HEAD, then the answer says so,
/// HEAD gets the length without the body, and the connection closes after the first two.
#[tokio::test(start_paused = true)]
async fn answers_close_when_the_client_asks_and_head_has_no_body() {
    let (_served, mut client, _) = connect(Duration::ZERO);
    client
        .write_all(b"HEAD /h HTTP/1.1\r\nHost: h\r\n\r\nGET /c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let all = until_closed(&mut client)
        .await
        .expect("closed after the second");
    let (head_answer, get_answer) = all.split_at(
        all.find("HTTP/1.1 200 OK\r\ncontent-length: 7\r\nconnection")
            .unwrap(),
    );
    assert!(head_answer.starts_with("HTTP/1.1 200 OK\r\ncontent-length: 8\r\ndate: "));
    assert!(
        head_answer.ends_with(" GMT\r\n\r\n"),
        "no body after HEAD's head"
    );
    assert!(get_answer.contains("connection: close\r\n"));
    assert!(get_answer.ends_with("\r\n\r\nGET /c "));

    let (_served, mut client, _) = connect(Duration::ZERO);
    client
        .write_all(b"GET /old HTTP/1.0\r\n\r\n")
        .await
        .unwrap();
    let all = until_closed(&mut client).await.expect("HTTP/1.0 closes");
    assert!(all.starts_with("HTTP/1.0 200 OK\r\n"));
    assert!(all.ends_with("GET /old "));
}

/// Given a refused head, a chunked body, a body over the limit, a request line over the
/// head's limit and header lines over it, then each is answered with its status and the
/// connection closes.
#[tokio::test(start_paused = true)]
async fn refused_requests_get_their_status_and_a_close() {
    let long_header = format!("GET / HTTP/1.1\r\nHost: h\r\nx: {}", "a".repeat(2048));
    let cases: [(&[u8], &str); 5] = [
        (b"HELLO\r\n\r\n", "HTTP/1.1 400 Bad Request\r\n"),
        (
            b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "HTTP/1.1 411 Length Required\r\n",
        ),
        (
            b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 65\r\n\r\n",
            "HTTP/1.1 413 Payload Too Large\r\n",
        ),
        (&[b'a'; 2048], "HTTP/1.1 414 URI Too Long\r\n"),
        (
            long_header.as_bytes(),
            "HTTP/1.1 431 Request Header Fields Too Large\r\n",
        ),
    ];
    for (sent, status) in cases {
        let (served, mut client, _) = connect(Duration::ZERO);
        client.write_all(sent).await.unwrap();
        let all = until_closed(&mut client).await.expect("closed");
        assert!(all.starts_with(status), "{all}");
        assert!(
            all.contains("content-length: 0\r\nconnection: close\r\n"),
            "{all}"
        );
        served.await.unwrap().unwrap();
    }
}

/// Given `Expect: 100-continue` and a body not yet sent, then the client is told to go
/// on before the body is read.
#[tokio::test(start_paused = true)]
async fn a_client_that_expects_100_continue_is_told_to_go_on() {
    let (_served, mut client, _) = connect(Duration::ZERO);
    client
        .write_all(
            b"POST /l HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n",
        )
        .await
        .unwrap();
    assert_eq!(
        read_some(&mut client).await,
        "HTTP/1.1 100 Continue\r\n\r\n"
    );
    client.write_all(b"{}").await.unwrap();
    assert!(read_some(&mut client).await.ends_with("POST /l {}"));
}

/// Given a connection answering at once, when a client sends two requests 6 s apart,
/// then half of a third and nothing more, then both are answered and the connection is
/// closed 10 s after the second answer, not before.
#[tokio::test(start_paused = true)]
async fn a_head_that_does_not_come_in_time_closes_the_connection() {
    let (served, mut client, _) = connect(Duration::ZERO);
    for _ in 0..2 {
        tokio::time::advance(Duration::from_secs(6)).await;
        client
            .write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        assert!(
            read_some(&mut client).await.starts_with("HTTP/1.1 200 OK"),
            "answered"
        );
    }
    let answered = Instant::now();
    client
        .write_all(b"GET / HTTP/1.1\r\nHost: h\r\nho")
        .await
        .unwrap();
    assert_eq!(
        until_closed(&mut client).await.as_deref(),
        Some(""),
        "closed"
    );
    assert_eq!(Instant::now() - answered, TIMEOUT);
    served.await.unwrap().unwrap();
}

/// Given a client that sends a head a byte every 3 s, then the connection is closed 10 s
/// after it opened, while bytes still come: they make no whole head.
#[tokio::test(start_paused = true)]
async fn a_head_sent_a_byte_at_a_time_is_cut_at_the_deadline() {
    let opened = Instant::now();
    let (_served, client, _) = connect(Duration::ZERO);
    let (mut from_server, mut to_server) = tokio::io::split(client);
    let trickle = tokio::spawn(async move {
        for byte in b"GET / HTTP/1.1\r\nhost: x\r\n" {
            if to_server.write_all(&[*byte]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_secs(3)).await;
        }
    });
    assert_eq!(
        until_closed(&mut from_server).await.as_deref(),
        Some(""),
        "closed"
    );
    assert_eq!(Instant::now() - opened, TIMEOUT);
    trickle.abort();
}

/// Given an answer that takes 25 s, when a client asks for it and then says nothing,
/// then it gets the whole answer, and the connection closes 10 s after that answer
/// ended, not 10 s after the request.
#[tokio::test(start_paused = true)]
async fn an_answer_in_flight_is_never_cut_and_the_wait_starts_when_it_ends() {
    let (_served, mut client, _) = connect(Duration::from_secs(25));
    let asked = Instant::now();
    client
        .write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let answer = read_some(&mut client).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "answered");
    assert!(answer.ends_with("GET / "), "the whole body");
    assert_eq!(Instant::now() - asked, Duration::from_secs(25));
    assert_eq!(
        until_closed(&mut client).await.as_deref(),
        Some(""),
        "closed"
    );
    assert_eq!(Instant::now() - asked, Duration::from_secs(35));
}

/// Given a request in flight when the server drains, then its answer is whole and the
/// connection closes after it; given an idle connection, then it closes at once when woken.
#[tokio::test(start_paused = true)]
async fn draining_finishes_the_answer_in_flight_then_closes() {
    let (served, mut client, draining) = connect(Duration::from_secs(5));
    client
        .write_all(b"GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
        .await
        .unwrap();
    tokio::time::advance(Duration::from_secs(1)).await;
    draining.store(true, Ordering::SeqCst);
    let all = until_closed(&mut client)
        .await
        .expect("closed after the answer");
    assert!(all.starts_with("HTTP/1.1 200 OK\r\n"));
    assert!(all.ends_with("GET /slow "));
    served.await.unwrap().unwrap();
}

/// Given a service whose body ends before its length, then the connection is cut, so
/// the client cannot take the short body for a whole one.
#[tokio::test(start_paused = true)]
async fn a_body_short_of_its_length_cuts_the_connection() {
    let (ours, mut client) = tokio::io::duplex(4096);
    let service = |_req| async {
        Response::builder()
            .status(StatusCode::OK)
            .header("content-length", "10")
            .body(Full::new(Bytes::from_static(b"short")))
            .unwrap()
    };
    let served = tokio::spawn(serve(ours, LIMITS, || false, service));
    client
        .write_all(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        .await
        .unwrap();
    let all = until_closed(&mut client).await.expect("cut");
    assert!(
        !all.contains("short"),
        "nothing of a body that breaks its length is sent: {all}"
    );
    assert!(served.await.unwrap().is_err());
}
