//! Response bodies: a whole `Bytes`, nothing, a bounded channel fed by a producer task, or
//! chunks made on demand.
//!
//! A channel body holds at most the channel's capacity (two chunks of `stream_chunk_bytes`)
//! plus the chunk being sent, however slow the client: the producer waits on the channel,
//! which is what bounds memory per connection. When the client goes away the receiver is
//! dropped, the producer's next send fails, and it stops reading the source.
//!
//! A pulled body (the MPEG-TS segments, `ts.rs`) has no producer task: the connection's own
//! task makes the next chunk when hyper asks for one, so nothing is made ahead of the socket
//! and no chunk crosses between tasks. A client that stops reading stops the polling; the
//! connection's write timeout (`mod.rs`, `send_timeout_ms`) then closes it.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use http_body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;

/// Chunks buffered per streaming response.
pub const STREAM_CHANNEL_CHUNKS: usize = 2;

/// The body of every response.
#[derive(Debug)]
pub enum ResponseBody {
    /// No body (HEAD, 304, errors without text).
    Empty,
    /// A body known in full.
    Full(Option<Bytes>),
    /// A streamed body of `remaining` bytes; an `Err` chunk aborts the response, so a
    /// client never mistakes a cut stream for a complete one.
    Channel {
        rx: mpsc::Receiver<Result<Bytes, std::io::Error>>,
        remaining: u64,
    },
    /// A body of `remaining` bytes whose chunks are made when polled; an `Err` aborts it as
    /// for a channel.
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

    /// A streamed body of `len` bytes and the sender its producer writes to.
    pub fn channel(len: u64) -> (mpsc::Sender<Result<Bytes, std::io::Error>>, Self) {
        let (tx, rx) = mpsc::channel(STREAM_CHANNEL_CHUNKS);
        (tx, ResponseBody::Channel { rx, remaining: len })
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
            ResponseBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            ResponseBody::Channel { rx, remaining } => next_frame(rx.poll_recv(cx), remaining),
            ResponseBody::Pulled { chunks, remaining } => {
                next_frame(chunks.0.poll_next_unpin(cx), remaining)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Empty => true,
            ResponseBody::Full(bytes) => bytes.is_none(),
            ResponseBody::Channel { remaining, .. } | ResponseBody::Pulled { remaining, .. } => {
                *remaining == 0
            }
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Empty => SizeHint::with_exact(0),
            ResponseBody::Full(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            ResponseBody::Channel { remaining, .. } | ResponseBody::Pulled { remaining, .. } => {
                SizeHint::with_exact(*remaining)
            }
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
