//! The one way a segment body starts and streams, for clear, encrypted and MPEG-TS
//! segments alike: [`start_stream`] waits for the first chunk before the status is
//! committed (a source that fails or stalls now is a clean 5xx, not a 200 cut short),
//! then hands the connection a body it pulls itself ([`PulledSegment`]): the bytes in
//! hand, then the chunks as asked, nothing made ahead and no chunk crossing tasks. The
//! body counts the stream in flight and the bytes sent, logs a stream cut by the source
//! with its request's facts, and holds the request's admission until it is dropped.

use std::fmt::Display;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use tracing::Span;

use super::answer::SegmentRead;
use crate::package::PreparedSegment;
use crate::server::admission::Admitted;
use crate::server::app::App;
use crate::server::body::ResponseBody;
use crate::server::error::ServeError;
use crate::server::log_context::{self, RequestFacts};
use crate::source::ByteRange;

/// Start streaming a segment body of `len` bytes: `head` (bytes in hand), then `chunks`.
/// The first chunk is awaited here, within the request deadline; `admitted` is held until
/// the body is dropped.
///
/// # Errors
/// The chunks' own error when they fail before the first byte; [`ServeError::SourceStalled`]
/// when the first chunk does not come within the request deadline.
pub async fn start_stream<S, E>(
    app: &Arc<App>,
    head: Option<Bytes>,
    mut chunks: S,
    len: u64,
    admitted: Admitted,
) -> Result<ResponseBody, ServeError>
where
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
    E: Into<ServeError> + Display,
{
    let deadline = Duration::from_millis(app.settings.server.request_timeout_ms);
    let first = match tokio::time::timeout(deadline, chunks.next()).await {
        Ok(Some(Ok(bytes))) => Some(bytes),
        Ok(Some(Err(e))) => return Err(e.into()),
        Ok(None) => None,
        Err(_) => return Err(ServeError::SourceStalled),
    };
    let parts: Vec<Bytes> = head.into_iter().chain(first).collect();
    let body = PulledSegment::new(app, parts, chunks, admitted);
    Ok(ResponseBody::pulled(len, body))
}

/// What every streamed segment body keeps for its request: the stream counted in flight
/// from its start to its drop, the bytes sent (on the `request` span when it ends), the
/// span for its log lines, and the request's admission.
struct StreamAccount {
    sent: u64,
    app: Arc<App>,
    span: Span,
    _admitted: Admitted,
}

impl StreamAccount {
    /// The account of a stream of the current task's request, now in flight.
    fn new(app: &Arc<App>, admitted: Admitted) -> Self {
        app.metrics.streams_in_flight.inc();
        Self {
            sent: 0,
            app: app.clone(),
            span: Span::current(),
            _admitted: admitted,
        }
    }

    /// `bytes`, counted as sent.
    fn sent(&mut self, bytes: Bytes) -> Bytes {
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
struct PulledSegment<S> {
    /// Bytes in hand, sent first.
    parts: std::vec::IntoIter<Bytes>,
    chunks: S,
    facts: Option<RequestFacts>,
    account: StreamAccount,
}

impl<S> PulledSegment<S> {
    /// `parts`, then `chunks`, for the request of the current task and span.
    fn new(app: &Arc<App>, parts: Vec<Bytes>, chunks: S, admitted: Admitted) -> Self {
        Self {
            parts: parts.into_iter(),
            chunks,
            facts: log_context::current(),
            account: StreamAccount::new(app, admitted),
        }
    }
}

impl<S, E> Stream for PulledSegment<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Display,
{
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

/// The part of a prepared segment's header inside `window`, and the source ranges of
/// its payload inside `window` (the payload follows the header in the body), with the
/// object of `reads` each is read from; objects with no such range are left out.
pub fn segment_parts(
    prepared: PreparedSegment,
    reads: Vec<SegmentRead>,
    window: ByteRange,
) -> (Option<Bytes>, Vec<(SegmentRead, Vec<ByteRange>)>) {
    let (start, end) = (window.start, window.end());
    let header = Bytes::from(prepared.header);
    let header_len = header.len() as u64;
    // start <= end <= content length, so these bounds lie inside the header.
    let header_part =
        (start < header_len).then(|| header.slice(start as usize..end.min(header_len) as usize));
    debug_assert_eq!(
        reads.iter().map(|r| r.ranges).sum::<usize>(),
        prepared.ranges.len()
    );
    let mut ranges = prepared.ranges.into_iter();
    let mut body_offset = header_len;
    let mut parts = Vec::with_capacity(reads.len());
    for read in reads {
        let mut wanted = Vec::with_capacity(read.ranges);
        for range in ranges.by_ref().take(read.ranges) {
            let (range_start, range_end) = (body_offset, body_offset + range.len);
            body_offset = range_end;
            let (from, to) = (start.max(range_start), end.min(range_end));
            if from < to {
                wanted.push(ByteRange::new(
                    range.start + (from - range_start),
                    to - from,
                ));
            }
        }
        if !wanted.is_empty() {
            parts.push((read, wanted));
        }
    }
    (header_part, parts)
}
