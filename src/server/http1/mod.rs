//! HTTP/1.x, served by our own code: `httparse` reads a request head (`head.rs`), `http`'s
//! types carry it to the service, and the answer's head is written back
//! (`answer_head.rs`), one connection's loop in `conn.rs`. Why not hyper: its connection
//! took about 8,800 of the ~10,800 instructions of a held answer, against about 2,900
//! here (callgrind; docs/performance.md). Only what an origin needs: GET, HEAD, OPTIONS
//! and small `Content-Length` POST bodies (`Transfer-Encoding` is 411 and closes),
//! keep-alive and pipelining in order, answers framed by `Content-Length`, a head timeout
//! from the end of the last answer, closing between answers when draining. No HTTP/2, no
//! upgrades, no chunked bodies: a CDN or proxy speaks HTTP/1.1 to an origin.

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
