//! HTTP/1.1 as RFC 9110 and 9112 require of an origin behind proxies, told as one table
//! against the real listener on 127.0.0.1: given these raw bytes on a fresh connection,
//! then this status, and the connection kept or closed. Behind every request goes a
//! canary (`GET /healthz`): on a kept connection it must be answered next, and after a
//! refusal it must never be, so no request can hide another (smuggling) or shift where
//! the next one starts (desync).

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::start_server;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const SEGMENT: &str = "/vod/h264-aac-3s.mp4/seg-t2-1.m4s";
const CANARY: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: canary\r\nConnection: close\r\n\r\n";

/// What a case expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Then {
    /// This status, and the canary answered after it on the same connection.
    Kept(u16),
    /// This status, then the close: nothing else answered.
    Closed(u16),
}

/// One answer as read off the wire.
#[derive(Debug)]
struct Answer {
    status: u16,
    head: String,
}

/// The answers `raw` gets on a new connection, with the canary sent behind it, read to
/// the close (bounded: 20 s, whatever the server does).
async fn answers_to(addr: SocketAddr, raw: &[u8]) -> Vec<Answer> {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let mut sent = raw.to_vec();
    sent.extend_from_slice(CANARY);
    // The server may close before it reads everything: a refusal.
    let _ = stream.write_all(&sent).await;
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut got));
    match read.await {
        Ok(_) => {}
        Err(_) => panic!(
            "no close within 20 s after {:?}",
            String::from_utf8_lossy(raw)
        ),
    }
    split_answers(&got)
}

/// Answers one after another, each framed by its `content-length` (1xx and 204/304
/// have none).
fn split_answers(mut bytes: &[u8]) -> Vec<Answer> {
    let mut answers = Vec::new();
    while let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&bytes[..end]).to_string();
        let status: u16 = head
            .get(9..12)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("a status line: {head:?}"));
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let body_end = (end + 4 + len).min(bytes.len());
        bytes = &bytes[body_end..];
        answers.push(Answer { status, head });
    }
    answers
}

/// Given each raw request of the table, then its status and what becomes of the
/// connection, as the RFC section beside it says.
#[tokio::test]
async fn every_request_of_the_table_gets_the_status_and_connection_the_rfc_requires() {
    let server = start_server(&common::fixtures()).await;
    let long_target = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(20 * 1024));
    let long_path = format!(
        "GET /vod/{}.mp4/master.m3u8 HTTP/1.1\r\nHost: a\r\n\r\n",
        "a".repeat(5000)
    );
    let range =
        |value: &str| format!("GET {SEGMENT} HTTP/1.1\r\nHost: a\r\nRange: {value}\r\n\r\n");
    let cases: Vec<(&str, String, Then)> = vec![
        ("a plain request", "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n".into(), Then::Kept(200)),
        // Host, RFC 9112 3.2.
        ("HTTP/1.1 without Host", "GET /healthz HTTP/1.1\r\n\r\n".into(), Then::Closed(400)),
        ("two Host lines, same", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n".into(), Then::Closed(400)),
        ("two Host lines, different", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n".into(), Then::Closed(400)),
        ("an empty Host", "GET /healthz HTTP/1.1\r\nHost: \r\n\r\n".into(), Then::Closed(400)),
        ("a Host with a space", "GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n".into(), Then::Closed(400)),
        ("a Host with a slash", "GET /healthz HTTP/1.1\r\nHost: a/b\r\n\r\n".into(), Then::Closed(400)),
        ("a Host that is a list", "GET /healthz HTTP/1.1\r\nHost: x,y\r\n\r\n".into(), Then::Closed(400)),
        ("a Host with a bad port", "GET /healthz HTTP/1.1\r\nHost: a:8o\r\n\r\n".into(), Then::Closed(400)),
        ("a Host with a port", "GET /healthz HTTP/1.1\r\nHost: a.example:8080\r\n\r\n".into(), Then::Kept(200)),
        ("an IPv6 Host", "GET /healthz HTTP/1.1\r\nHost: [::1]:80\r\n\r\n".into(), Then::Kept(200)),
        ("absolute form without Host", "GET http://a/healthz HTTP/1.1\r\n\r\n".into(), Then::Closed(400)),
        ("absolute form with Host", "GET http://a/healthz HTTP/1.1\r\nHost: b\r\n\r\n".into(), Then::Kept(200)),
        ("HTTP/1.0 without Host", "GET /healthz HTTP/1.0\r\n\r\n".into(), Then::Closed(200)),
        ("HTTP/1.0 kept alive", "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n".into(), Then::Kept(200)),
        // The request line, RFC 9112 3 and RFC 9110 2.5.
        ("a request target over the head's limit", long_target, Then::Closed(414)),
        ("a path longer than any route", long_path, Then::Kept(414)),
        ("OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n".into(), Then::Kept(200)),
        ("GET *", "GET * HTTP/1.1\r\nHost: a\r\n\r\n".into(), Then::Closed(400)),
        ("CONNECT", "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n".into(), Then::Closed(501)),
        ("authority form without CONNECT", "GET a:443 HTTP/1.1\r\nHost: a\r\n\r\n".into(), Then::Closed(400)),
        ("HTTP/1.2", "GET /healthz HTTP/1.2\r\nHost: a\r\n\r\n".into(), Then::Kept(200)),
        ("HTTP/1.9", "GET /healthz HTTP/1.9\r\nHost: a\r\n\r\n".into(), Then::Kept(200)),
        ("HTTP/2.0", "GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n".into(), Then::Closed(505)),
        ("HTTP/3.0", "GET /healthz HTTP/3.0\r\nHost: a\r\n\r\n".into(), Then::Closed(505)),
        ("no version", "GET /healthz\r\nHost: a\r\n\r\n".into(), Then::Closed(400)),
        ("a lowercase version", "GET /healthz http/1.1\r\nHost: a\r\n\r\n".into(), Then::Closed(400)),
        ("two spaces in the line", "GET  /healthz HTTP/1.1\r\nHost: a\r\n\r\n".into(), Then::Closed(400)),
        ("bare LF line ends", "GET /healthz HTTP/1.1\nHost: a\n\n".into(), Then::Kept(200)),
        // Framing, RFC 9112 6.
        ("a body with its length", "POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc".into(), Then::Kept(405)),
        ("Transfer-Encoding: chunked", "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".into(), Then::Closed(411)),
        ("Transfer-Encoding: identity", "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n".into(), Then::Closed(400)),
        ("Transfer-Encoding: xchunked", "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n".into(), Then::Closed(400)),
        ("Transfer-Encoding: chunked, identity", "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n\r\n".into(), Then::Closed(400)),
        ("an empty Transfer-Encoding", "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \r\n\r\n".into(), Then::Closed(400)),
        ("Transfer-Encoding: gzip, chunked", "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n".into(), Then::Closed(501)),
        ("gzip then chunked on two lines", "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".into(), Then::Closed(501)),
        ("CL.TE smuggling", "POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG".into(), Then::Closed(400)),
        ("TE.CL smuggling", "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n".into(), Then::Closed(400)),
        ("two different lengths", "POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab".into(), Then::Closed(400)),
        ("a length that is a list", "POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 2, 2\r\n\r\nab".into(), Then::Closed(400)),
        ("a signed length", "POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: +2\r\n\r\nab".into(), Then::Closed(400)),
        ("a body over the limit", "POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 70000\r\n\r\n".into(), Then::Closed(413)),
        // Header lines, RFC 9112 5.
        ("a space before the colon", "GET /healthz HTTP/1.1\r\nHost : a\r\n\r\n".into(), Then::Closed(400)),
        ("a line folded (obs-fold)", "GET /healthz HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n".into(), Then::Closed(400)),
        ("whitespace before the first header", "GET /healthz HTTP/1.1\r\n Host: a\r\n\r\n".into(), Then::Closed(400)),
        ("a bare CR in a value", "GET /healthz HTTP/1.1\r\nHost: a\r\nX-A: 1\r2\r\n\r\n".into(), Then::Closed(400)),
        ("a NUL in a value", "GET /healthz HTTP/1.1\r\nHost: a\r\nX-A: 1\u{0}2\r\n\r\n".into(), Then::Closed(400)),
        ("a header without a colon", "GET /healthz HTTP/1.1\r\nHost: a\r\nX-A\r\n\r\n".into(), Then::Closed(400)),
        // Range, RFC 9110 14.2.
        ("one byte range", range("bytes=0-0"), Then::Kept(206)),
        ("an unknown range unit", range("items=0-1"), Then::Kept(200)),
        ("spaces around the equals sign", range("bytes = 0-0"), Then::Kept(200)),
        ("two ranges apart", range("bytes=0-0,2-3"), Then::Kept(200)),
        ("two ranges that touch", range("bytes=0-1, 2-3"), Then::Kept(206)),
        ("a range past the end", range("bytes=99999999-"), Then::Kept(416)),
        ("a malformed range", range("bytes=a-b"), Then::Kept(416)),
    ];
    let mut wrong = Vec::new();
    for (what, raw, then) in cases {
        let answers = answers_to(server.addr, raw.as_bytes()).await;
        let seen = match answers.as_slice() {
            [only] => Then::Closed(only.status),
            [first, canary]
                if canary.status == 200 && canary.head.contains("content-type: text/plain") =>
            {
                Then::Kept(first.status)
            }
            other => {
                wrong.push(format!("{what}: {} answers: {other:?}", other.len()));
                continue;
            }
        };
        if seen != then {
            wrong.push(format!("{what}: expected {then:?}, saw {seen:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Given `Expect: 100-continue` from an HTTP/1.0 client, then no 1xx is sent (RFC 9110
/// 15.2), only the answer; from an HTTP/1.1 client, then `100 Continue` comes before the
/// body is sent, and the answer after it.
#[tokio::test]
async fn only_an_http_1_1_client_is_told_100_continue() {
    let server = start_server(&common::fixtures()).await;
    let head = |version: &str| {
        format!("POST /healthz HTTP/{version}\r\nHost: a\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
    };
    // HTTP/1.0 sends its body at once: it knows no 100.
    let answers = answers_to(server.addr, format!("{}{{}}", head("1.0")).as_bytes()).await;
    let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    assert_eq!(statuses, [405], "HTTP/1.0: the answer only");

    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(head("1.1").as_bytes()).await.unwrap();
    let mut first = vec![0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut first))
        .await
        .expect("a 100 before the body is sent")
        .unwrap();
    assert_eq!(&first[..n], b"HTTP/1.1 100 Continue\r\n\r\n");
    stream.write_all(b"{}").await.unwrap();
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut rest))
        .await
        .expect("the answer, then the close")
        .unwrap();
    assert!(
        rest.starts_with(b"HTTP/1.1 405 "),
        "{}",
        String::from_utf8_lossy(&rest)
    );
}

/// Given `OPTIONS *`, then the server says which methods it serves.
#[tokio::test]
async fn options_asterisk_names_the_methods() {
    let server = start_server(&common::fixtures()).await;
    let answers = answers_to(server.addr, b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n").await;
    let first = answers.first().expect("an answer");
    assert_eq!(first.status, 200);
    assert!(
        first.head.contains("allow: GET, HEAD, OPTIONS, POST"),
        "{}",
        first.head
    );
}

/// Given an encrypted DASH output and no `--public-url`, when the MPD is asked for with
/// an absolute-form target and a different Host line, then its licence URL names the
/// target's host: the target's authority stands for Host (RFC 9112 3.2.2), and only a
/// validated one is written into an answer.
#[tokio::test]
async fn absolute_urls_are_built_from_the_target_authority_not_the_host_line() {
    let mut settings = vodpack::config::Settings::default();
    settings.protect.encryption = vodpack::crypto::EncryptionPolicy::parse("dash=cenc").unwrap();
    settings.protect.key_secret =
        Some(vodpack::crypto::Secret::from_text("http rfc test key secret 012345", "k").unwrap());
    let server = common::start_server_with(&common::fixtures(), settings).await;
    let raw = "GET http://target.example:8080/vod/h264-aac-3s.mp4/manifest.mpd HTTP/1.1\r\nHost: other.example\r\n\r\n";
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(raw.as_bytes()).await.unwrap();
    stream.write_all(CANARY).await.unwrap();
    let mut got = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut got))
        .await
        .expect("closed after the canary")
        .unwrap();
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
    assert!(
        text.contains("http://target.example:8080/vod/h264-aac-3s.mp4/"),
        "the licence URL names the target's authority: {text}"
    );
    assert!(!text.contains("other.example"), "{text}");
}
