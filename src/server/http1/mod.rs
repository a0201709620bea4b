//! HTTP/1.x, served by our own code: `httparse` reads a request head, `http`'s types
//! carry it to the service, and the answer is written back. Only what an origin behind a
//! CDN or proxy needs: GET, HEAD, OPTIONS and small POST bodies with `Content-Length`,
//! keep-alive and pipelining, every answer framed by its length, a head timeout. No
//! HTTP/2, upgrades or chunked request bodies. (Why not hyper: its exchange was most of
//! a cached manifest's cost; docs/performance.md, "Decisions on chunk size and gap reads".)
//!
//! What RFC 9110 and 9112 require of an origin is met here, and where nginx answers
//! otherwise the choice is ours, with its section:
//! - a refused head is answered and the connection closed, since where the next request
//!   starts is then unknown; nginx also closes after a 400;
//! - `Transfer-Encoding: chunked` is 411 (9110 15.5.12: a length is required), where
//!   nginx reads the chunked body; a coding before it is 501 (9112 6.1), as nginx; a
//!   list not ending in `chunked`, or one beside `Content-Length`, is 400 and a close
//!   (9112 6.3, a MUST), where nginx answers 501;
//! - HTTP/1.2 to 1.9 are served as 1.1 (9110 2.5, a SHOULD); nginx also does;
//! - `OPTIONS *` is answered 200 with `Allow` (9110 9.3.7); `CONNECT` 501 (nothing
//!   to tunnel to; nginx 405);
//! - `Range` sets whose ranges stay apart get the whole body, 200 (9110 14.2 allows it),
//!   where nginx answers multipart (`respond/range.rs`).
//!
//! - `head.rs`: a request head from the read buffer, and why one is refused;
//! - `answer_head.rs`: an answer's head as bytes;
//! - `conn.rs`: one connection's loop;
//! - `tests.rs` and `fuzz.rs`: stories, and the bounded fuzz run over
//!   `tests/corpus/http1/`; `tests/http_rfc.rs` is the RFC table against the listener.

mod answer_head;
mod conn;
#[cfg(test)]
mod fuzz;
mod head;
#[cfg(test)]
mod tests;

pub use conn::{serve, Limits};

/// Header lines an answer's body brings, written once and sent as they are after the
/// answer's own headers: each `name: value\r\n`, none of them `content-length` or
/// `connection`, which the connection writes. A held answer keeps its headers so
/// (`server/held.rs`): written once, they cost one copy per answer instead of a header
/// map's clone, walk and drop.
pub trait HeaderLines {
    fn header_lines(&self) -> &[u8] {
        &[]
    }
}

impl HeaderLines for http_body_util::Full<bytes::Bytes> {}

/// `headers` written as [`HeaderLines`] are: each `name: value\r\n`, as the connection
/// writes the answer's own headers. The caller leaves out `content-length` and
/// `connection`.
pub fn header_lines(headers: &http::HeaderMap) -> bytes::Bytes {
    let mut lines = Vec::with_capacity(512);
    for (name, value) in headers {
        answer_head::push_line(&mut lines, name, value);
    }
    lines.into()
}
