//! A CMAF segment body pulled by its connection, as the MPEG-TS segments are (`ts.rs`):
//! the bytes already in memory (the segment's header, the first source chunk), then the
//! source chunks as hyper asks for them.
//!
//! No producer task and no channel between the source and the socket: a stream holds the
//! chunk hyper is sending and the one being read, nothing made ahead, and no chunk crosses
//! between tasks. A client that stops reading stops the polling, and the connection's send
//! timeout (`send_timeout.rs`) closes it. It counts the stream in flight and the bytes
//! sent, logs a stream cut by the source with its request's facts, and holds the request's
//! admission until it is dropped.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use tracing::Span;

use super::log_context::{self, RequestFacts};
use super::{Admitted, App};
use crate::source::ByteStream;

/// What every streamed segment body keeps for its request: the stream counted in flight
/// from its start to its drop, the bytes sent (on the `request` span when it ends), the
/// span for its log lines, and the request's admission.
pub(super) struct StreamAccount {
    sent: u64,
    app: Arc<App>,
    pub(super) span: Span,
    _admitted: Admitted,
}

impl StreamAccount {
    /// The account of a stream of the current task's request, now in flight.
    pub(super) fn new(app: &Arc<App>, admitted: Admitted) -> Self {
        app.metrics.streams_in_flight.inc();
        Self {
            sent: 0,
            app: app.clone(),
            span: Span::current(),
            _admitted: admitted,
        }
    }

    /// `bytes`, counted as sent.
    pub(super) fn sent(&mut self, bytes: Bytes) -> Bytes {
        self.sent += bytes.len() as u64;
        self.app.metrics.sent_bytes.inc_by(bytes.len() as u64);
        bytes
    }
}

impl Drop for StreamAccount {
    fn drop(&mut self) {
        self.span.record("vod.bytes_sent", self.sent);
        self.app.metrics.streams_in_flight.dec();
    }
}

/// The chunks of one streamed segment answer.
pub(super) struct PulledSegment {
    /// Bytes in hand, sent first.
    parts: std::vec::IntoIter<Bytes>,
    chunks: ByteStream,
    facts: Option<RequestFacts>,
    account: StreamAccount,
}

impl PulledSegment {
    /// `parts`, then `chunks`, for the request of the current task and span.
    pub(super) fn new(
        app: &Arc<App>,
        parts: Vec<Bytes>,
        chunks: ByteStream,
        admitted: Admitted,
    ) -> Self {
        Self {
            parts: parts.into_iter(),
            chunks,
            facts: log_context::current(),
            account: StreamAccount::new(app, admitted),
        }
    }
}

impl Stream for PulledSegment {
    type Item = std::io::Result<Bytes>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(part) = this.parts.next() {
            return Poll::Ready(Some(Ok(this.account.sent(part))));
        }
        match this.chunks.poll_next_unpin(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Ready(Some(Ok(chunk))) => Poll::Ready(Some(Ok(this.account.sent(chunk)))),
            Poll::Ready(Some(Err(e))) => {
                let _entered = this.account.span.enter();
                let log = || {
                    log_context::facts(|key, route| {
                        tracing::warn!(error = %e, vod.key = key, vod.route = route, "segment stream cut");
                    });
                };
                match this.facts.clone() {
                    Some(facts) => log_context::sync_scope(facts, log),
                    None => log(),
                }
                Poll::Ready(Some(Err(std::io::Error::other(e.to_string()))))
            }
        }
    }
}
