//! The stream behind `ObjectStoreSource::stream_ranges`: one GET per planned run, the next
//! one requested while the current one streams, and never more.
//!
//! Memory stays bounded whatever the speeds: the current body is read only as the consumer
//! pulls (a chunk at a time, cut into pieces of at most `chunk_bytes`), and the GET opened
//! ahead holds at most what the network buffers for it. The opening GET runs on its own
//! task so it makes progress while the current body streams; dropping the stream (the
//! client went away) aborts it.
//!
//! The stream knows nothing of the source it reads for: it is handed a function that
//! opens one run's GET (`ObjectStoreSource::open_run` for one object version) and the
//! counters to count the bodies in.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::stream::{BoxStream, StreamExt};
use tracing::Instrument;

use super::store::{io_error, map_error};
use crate::source::counters::SourceCounters;
use crate::source::error::SourceError;
use crate::source::key::ObjectKey;
use crate::source::runs::{Run, RunCursor};

/// GETs a stream opens ahead of the run it is streaming: one, so two are open at most.
const RUNS_AHEAD: usize = 1;

/// A GET whose head has arrived: its body, and where its bytes go.
pub(super) struct OpenRun {
    pub body: BoxStream<'static, ::object_store::Result<Bytes>>,
    pub cursor: RunCursor,
}

/// Opens the GET of one run of the stream's object version; counts the request, and its
/// failure, itself.
pub(super) type OpenRunFn =
    Arc<dyn Fn(Run) -> BoxFuture<'static, Result<OpenRun, SourceError>> + Send + Sync>;

/// A GET being opened on its own task, aborted if the stream is dropped first (the client
/// went away), so no request outlives the response it was for.
struct Opening(tokio::task::JoinHandle<Result<OpenRun, SourceError>>);

impl Drop for Opening {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The state of one `stream_ranges` stream.
pub(super) struct RunStream {
    open_run: OpenRunFn,
    counters: Arc<SourceCounters>,
    /// The object read, for errors.
    key: ObjectKey,
    /// Runs not yet requested.
    runs: VecDeque<Run>,
    /// GETs requested and not yet streaming, in order: at most [`RUNS_AHEAD`].
    opening: VecDeque<Opening>,
    /// The GET being streamed.
    current: Option<OpenRun>,
    /// Pieces cut from the current body, ready to hand on.
    ready: VecDeque<Bytes>,
    chunk_bytes: usize,
    /// Set after the last item (an error or the end).
    finished: bool,
}

impl RunStream {
    /// A stream of `runs` of `key`, each opened with `open_run` and counted in
    /// `counters`, in pieces of at most `chunk_bytes`. Nothing is requested before the
    /// first poll.
    pub fn new(
        open_run: OpenRunFn,
        counters: Arc<SourceCounters>,
        key: ObjectKey,
        runs: Vec<Run>,
        chunk_bytes: usize,
    ) -> Self {
        Self {
            open_run,
            counters,
            key,
            runs: runs.into(),
            opening: VecDeque::new(),
            current: None,
            ready: VecDeque::new(),
            chunk_bytes: chunk_bytes.max(1),
            finished: false,
        }
    }

    /// The next chunk of the concatenated ranges, `None` at the end or after an error.
    pub async fn next_chunk(&mut self) -> Option<Result<Bytes, SourceError>> {
        loop {
            if self.finished {
                return None;
            }
            if let Some(piece) = self.ready.pop_front() {
                return Some(Ok(piece));
            }
            if let Some(current) = &mut self.current {
                let counters = &self.counters;
                match current.body.next().await {
                    Some(Ok(chunk)) => {
                        counters.read_bytes.inc_by(chunk.len() as u64);
                        match current
                            .cursor
                            .feed(chunk, self.chunk_bytes, &mut self.ready)
                        {
                            Ok(dropped) => {
                                counters.over_read_bytes.inc_by(dropped);
                            }
                            Err(e) => {
                                let e = io_error(&self.key, e.to_string());
                                return Some(Err(self.fail(e)));
                            }
                        }
                    }
                    Some(Err(e)) => {
                        let e = map_error(&self.key, e);
                        return Some(Err(self.fail(e)));
                    }
                    None if current.cursor.is_complete() => self.current = None,
                    None => {
                        let e = io_error(&self.key, "an answer ended early".to_owned());
                        return Some(Err(self.fail(e)));
                    }
                }
                continue;
            }
            self.open_ahead();
            let Some(mut next) = self.opening.pop_front() else {
                self.finished = true;
                return None;
            };
            let opened = match (&mut next.0).await {
                Ok(result) => result,
                Err(join) => Err(io_error(&self.key, join.to_string())),
            };
            match opened {
                Ok(run) => self.current = Some(run),
                // Counted as an error by the task that made the request.
                Err(e) => {
                    self.finished = true;
                    self.opening.clear();
                    return Some(Err(e));
                }
            }
            self.open_ahead();
        }
    }

    /// Request the next runs until [`RUNS_AHEAD`] are being opened.
    fn open_ahead(&mut self) {
        while self.opening.len() < RUNS_AHEAD {
            let Some(run) = self.runs.pop_front() else {
                return;
            };
            // Under the caller's span (the request's), so its trace shows every GET.
            let task = (self.open_run)(run);
            self.opening.push_back(Opening(tokio::spawn(
                task.instrument(tracing::Span::current()),
            )));
        }
    }

    /// End the stream with `error`: count it, drop what is buffered, abort what is open.
    fn fail(&mut self, error: SourceError) -> SourceError {
        self.counters.read_errors.inc();
        self.finished = true;
        self.ready.clear();
        self.current = None;
        self.opening.clear();
        error
    }
}
