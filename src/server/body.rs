//! Response bodies: a whole `Bytes`, nothing, or chunks made when the connection asks.
//!
//! A streamed body (a segment) is *pulled*: no producer task and no channel. The
//! connection's own task makes or reads the next chunk once the last one is written
//! (`http1/conn.rs`), so nothing is made ahead of the socket and a stream holds one chunk
//! at a time (`respond/stream.rs` starts every segment body). A client that stops reading
//! stops the polling, and the send timeout (`send_timeout.rs`) closes it. It replaced a
//! channel fed by a producer task (82 -> 55-61 KiB per stream under 1,000 streams).

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use http_body::{Body, Frame, SizeHint};

use super::http1::HeaderLines;

/// The body of every response.
#[derive(Debug, Default)]
pub enum ResponseBody {
    /// No body (HEAD, 304, errors without text).
    #[default]
    Empty,
    /// A body known in full.
    Full(Option<Bytes>),
    /// A held answer's body (`held.rs`), with its header lines written once; the
    /// connection sends them as they are ([`HeaderLines`]).
    Held {
        header_lines: Bytes,
        body: Option<Bytes>,
    },
    /// A streamed body of `remaining` bytes whose chunks are made when polled; an `Err`
    /// chunk aborts the response, so a client never mistakes a cut stream for a complete
    /// one.
    Pulled {
        chunks: PulledChunks,
        remaining: u64,
    },
}

/// The chunk stream of a pulled body.
pub struct PulledChunks(pub std::pin::Pin<Box<dyn Stream<Item = std::io::Result<Bytes>> + Send>>);

impl std::fmt::Debug for PulledChunks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PulledChunks")
    }
}

impl ResponseBody {
    /// A full body.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        ResponseBody::Full(Some(bytes.into()))
    }

    /// A body of `len` bytes made of `chunks`, polled by the connection.
    pub fn pulled(
        len: u64,
        chunks: impl Stream<Item = std::io::Result<Bytes>> + Send + 'static,
    ) -> Self {
        ResponseBody::Pulled {
            chunks: PulledChunks(Box::pin(chunks)),
            remaining: len,
        }
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        match self.get_mut() {
            ResponseBody::Empty => Poll::Ready(None),
            ResponseBody::Full(bytes) | ResponseBody::Held { body: bytes, .. } => {
                Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b))))
            }
            ResponseBody::Pulled { chunks, remaining } => {
                next_frame(chunks.0.poll_next_unpin(cx), remaining)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Empty => true,
            ResponseBody::Full(bytes) | ResponseBody::Held { body: bytes, .. } => bytes.is_none(),
            ResponseBody::Pulled { remaining, .. } => *remaining == 0,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Empty => SizeHint::with_exact(0),
            ResponseBody::Full(bytes) | ResponseBody::Held { body: bytes, .. } => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            ResponseBody::Pulled { remaining, .. } => SizeHint::with_exact(*remaining),
        }
    }
}

impl HeaderLines for ResponseBody {
    fn header_lines(&self) -> &[u8] {
        match self {
            ResponseBody::Held { header_lines, .. } => header_lines,
            _ => &[],
        }
    }
}

/// The frame for `polled`, the next chunk of a streamed body with `remaining` bytes to come:
/// an end before them all is an error, so a cut stream never looks complete.
fn next_frame(
    polled: Poll<Option<std::io::Result<Bytes>>>,
    remaining: &mut u64,
) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
    match polled {
        Poll::Pending => Poll::Pending,
        Poll::Ready(Some(Ok(chunk))) => {
            *remaining = remaining.saturating_sub(chunk.len() as u64);
            Poll::Ready(Some(Ok(Frame::data(chunk))))
        }
        Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
        Poll::Ready(None) if *remaining > 0 => Poll::Ready(Some(Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "stream ended early",
        )))),
        Poll::Ready(None) => Poll::Ready(None),
    }
}

/// The part of `bytes`, which sit at `from` in a stream, that falls in `window` of it;
/// `None` when none does.
pub fn window_part(bytes: &Bytes, from: u64, window: std::ops::Range<u64>) -> Option<Bytes> {
    let to = from + bytes.len() as u64;
    let (a, b) = (window.start.max(from), window.end.min(to));
    // from <= a < b <= to, so the slice lies within `bytes`.
    (a < b).then(|| bytes.slice((a - from) as usize..(b - from) as usize))
}
