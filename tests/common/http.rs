//! A tiny HTTP/1.1 client for the tests: one request per connection (`Connection: close`),
//! the whole answer read and parsed, chunked bodies joined.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A response as the tiny client saw it.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as UTF-8 text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Send one request with `Connection: close` and read the whole answer.
/// `head` is e.g. `GET /path HTTP/1.1` and `extra` more header lines.
pub async fn request(addr: SocketAddr, method: &str, path: &str, extra: &[(&str, &str)]) -> Reply {
    let stream = TcpStream::connect(addr).await.expect("connect");
    let raw = exchange(stream, &addr.to_string(), method, path, extra).await;
    parse_reply(&raw, method == "HEAD")
}

/// Send one request with `Host: host`, `Connection: close` and the `extra` header lines on
/// `stream`, and read the whole answer, as it came (see [`parse_reply`]).
pub async fn exchange(
    mut stream: TcpStream,
    host: &str,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
) -> Vec<u8> {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read");
    raw
}

/// GET `path`.
pub async fn get(addr: SocketAddr, path: &str) -> Reply {
    request(addr, "GET", path, &[]).await
}

/// POST `body` (of type `content_type`) to `path`, with `Connection: close` and its
/// `Content-Length`, and read the whole answer.
pub async fn post(addr: SocketAddr, path: &str, content_type: &str, body: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    stream.write_all(body).await.expect("write the body");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read");
    parse_reply(&raw, false)
}

/// The answer `raw` as a [`Reply`], its body de-chunked (none read for a HEAD when
/// `head_only`).
pub fn parse_reply(raw: &[u8], head_only: bool) -> Reply {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("response head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().expect("status line");
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status code");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked && !head_only {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body,
    }
}

/// The body of a chunked answer, its chunks joined (up to a chunk cut short).
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = raw.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&raw[..end]).trim(), 16).unwrap_or(0);
        if size == 0 || raw.len() < end + 2 + size {
            break;
        }
        out.extend_from_slice(&raw[end + 2..end + 2 + size]);
        raw = &raw[(end + 4 + size).min(raw.len())..];
    }
    out
}
