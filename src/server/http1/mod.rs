//! HTTP/1.x, served by our own code: `httparse` reads a request head, `http`'s types
//! carry it to the service, and the answer is written back. Serving a held manifest is
//! mostly this layer's work, and hyper's connection took about 8,800 instructions of the
//! ~10,800 per held answer, against about 2,900 for a tokio loop around `httparse`
//! (callgrind, issue 28; docs/performance.md, "Decisions on chunk size and gap reads",
//! item 10): with hyper, vodpack could not match nginx-vod-module's CPU per cached
//! manifest on one worker. Only what an origin needs is here:
//!
//! - GET, HEAD, OPTIONS and small POST bodies (a licence request) with
//!   `Content-Length`; a request with `Transfer-Encoding` is answered 411 and the
//!   connection closes, so where the next request starts is never in doubt;
//! - keep-alive by version and `Connection`, pipelined requests answered in order;
//! - every answer framed by `Content-Length` (all of ours have one; an answer of unknown
//!   length runs to the close);
//! - a head timeout counted from the end of the last answer, and closing between
//!   answers when the server drains.
//!
//! No HTTP/2, no upgrades, no chunked bodies: a CDN or proxy in front speaks HTTP/1.1
//! to an origin.
//!
//! - `head.rs`: a request head from the read buffer, and why one is refused;
//! - `answer_head.rs`: an answer's head as bytes;
//! - `conn.rs`: one connection's loop.

mod answer_head;
mod conn;
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
