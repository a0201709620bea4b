//! Response bodies: a whole `Bytes`, nothing, or a bounded channel fed by a producer task.
//!
//! A streamed body holds at most the channel's capacity (two chunks of `stream_chunk_bytes`)
//! plus the chunk being sent, however slow the client: the producer waits on the channel,
//! which is what bounds memory per connection. When the client goes away the receiver is
//! dropped, the producer's next send fails, and it stops reading the source.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
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
            ResponseBody::Channel { rx, remaining } => match rx.poll_recv(cx) {
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
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Empty => true,
            ResponseBody::Full(bytes) => bytes.is_none(),
            ResponseBody::Channel { remaining, .. } => *remaining == 0,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Empty => SizeHint::with_exact(0),
            ResponseBody::Full(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            ResponseBody::Channel { remaining, .. } => SizeHint::with_exact(*remaining),
        }
    }
}
