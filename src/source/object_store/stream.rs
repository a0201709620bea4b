//! The stream behind `ObjectStoreSource::stream_ranges`: a segment's ranges planned into
//! GETs (and takes from other segments' reads, `shared.rs`), the GETs issued concurrently
//! ahead of the one streaming, the bytes handed on in order.
//!
//! Why concurrently: a segment whose track is interleaved with another in short runs (the
//! audio of most files) is many GETs, and one after another they cost a store round trip
//! each (57 GETs, 1.3 s, for one audio segment at 20 ms). Opened together they cost about
//! one.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::stream::{BoxStream, StreamExt};
use tracing::Instrument;

use super::shared::{Claim, SharedReads, SpanWriter, EDGE_BYTES, FEW_RUNS};
use super::store::{io_error, map_error};
use crate::source::counters::SourceCounters;
use crate::source::error::SourceError;
use crate::source::identity::{ObjectIdentity, ObjectVersion};
use crate::source::key::ObjectKey;
use crate::source::range::ByteRange;
use crate::source::runs::{plan_runs, plan_runs_with_spare, Run, RunCursor};

/// Runs this small are read whole by the task that opens them.
pub(super) const SMALL_RUN_BYTES: u64 = 256 * 1024;

/// Gaps between a stream's ranges that show its track interleaved with others (a 6 s
/// segment has one per chunk of the file: about 150 when ffmpeg interleaves frame by
/// frame, 6 with one-second chunks).
const INTERLEAVED_GAPS: usize = 4;

/// Bytes the runs opened ahead of the streaming one may fetch together.
pub(super) const READ_AHEAD_BYTES: u64 = 1024 * 1024;

/// A GET whose head has arrived: its body, and where its bytes go.
pub(super) struct OpenRun {
    pub body: BoxStream<'static, ::object_store::Result<Bytes>>,
    pub cursor: RunCursor,
}

/// Opens the GET of one run of the stream's object version; counts the request, and its
/// failure, itself.
pub(super) type OpenRunFn =
    Arc<dyn Fn(Run) -> BoxFuture<'static, Result<OpenRun, SourceError>> + Send + Sync>;

/// How a stream plans its reads: the gap rules, and what it shares with other streams.
#[derive(Clone)]
pub(super) struct Planning {
    /// Gap bytes below which ranges share a GET.
    pub max_gap: u64,
    /// Most gap bytes a stream reads and does not pass on.
    pub over_read_budget: u64,
    /// GETs open ahead of the streaming one, at most.
    pub max_ahead: usize,
    /// The source's shared reads, and how long a stream of many GETs waits for a leader;
    /// `None`: every stream reads all of its ranges itself.
    pub shared: Option<(Arc<SharedReads>, Duration)>,
}

/// A GET being opened (and, for a small run, read whole) on its own task, aborted if the
/// stream is dropped first.
struct Opening(tokio::task::JoinHandle<Result<Opened, SourceError>>);

impl Drop for Opening {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What an opening task hands back.
enum Opened {
    /// The head: the body streams as the consumer pulls.
    Streaming(OpenRun),
    /// A small run's whole body.
    Whole(VecDeque<Bytes>, RunCursor),
}

/// One step of a stream, in the order its bytes are handed on.
enum Step {
    /// A run to GET (opened ahead, or not yet), and the span its gaps fill for others.
    Read {
        run: Run,
        opening: Option<Opening>,
        span: Option<SpanWriter>,
    },
    /// A range taken from another stream's read.
    Take(Claim),
}

/// The body being handed on.
struct Current {
    body: Body,
    cursor: RunCursor,
    span: Option<SpanWriter>,
}

enum Body {
    Streaming(BoxStream<'static, ::object_store::Result<Bytes>>),
    Whole(VecDeque<Bytes>),
}

/// The state of one `stream_ranges` stream.
pub(super) struct RunStream {
    open_run: OpenRunFn,
    counters: Arc<SourceCounters>,
    /// The object version read.
    key: ObjectKey,
    identity: ObjectIdentity,
    planning: Planning,
    /// The ranges asked for, until the first poll plans them.
    ranges: Option<Vec<ByteRange>>,
    steps: VecDeque<Step>,
    current: Option<Current>,
    /// Pieces ready to hand on.
    ready: VecDeque<Bytes>,
    chunk_bytes: usize,
    /// Set after the last item (an error or the end).
    finished: bool,
}

impl RunStream {
    /// A stream of `ranges` of the object version, each run opened with `open_run` and
    /// counted in `counters`, in pieces of at most `chunk_bytes`. Nothing is requested
    /// before the first poll.
    pub fn new(
        open_run: OpenRunFn,
        counters: Arc<SourceCounters>,
        ObjectVersion { key, identity }: ObjectVersion,
        ranges: Vec<ByteRange>,
        planning: Planning,
        chunk_bytes: usize,
    ) -> Self {
        Self {
            open_run,
            counters,
            key,
            identity,
            planning,
            ranges: Some(ranges),
            steps: VecDeque::new(),
            current: None,
            ready: VecDeque::new(),
            chunk_bytes: chunk_bytes.max(1),
            finished: false,
        }
    }

    /// The next chunk of the concatenated ranges, `None` at the end or after an error.
    pub async fn next_chunk(&mut self) -> Option<Result<Bytes, SourceError>> {
        if let Some(ranges) = self.ranges.take() {
            self.plan(ranges).await;
        }
        loop {
            if self.finished {
                return None;
            }
            if let Some(piece) = self.ready.pop_front() {
                return Some(Ok(piece));
            }
            if let Some(current) = &mut self.current {
                let chunk = match &mut current.body {
                    Body::Streaming(body) => body.next().await,
                    Body::Whole(chunks) => chunks.pop_front().map(Ok),
                };
                match chunk {
                    Some(Ok(chunk)) => {
                        self.counters.read_bytes.inc_by(chunk.len() as u64);
                        let span = &mut current.span;
                        let fed = current.cursor.feed_keeping(
                            chunk,
                            self.chunk_bytes,
                            &mut self.ready,
                            |offset, gap| {
                                if let Some(span) = span.as_mut() {
                                    span.keep(offset, gap);
                                }
                            },
                        );
                        match fed {
                            Ok(dropped) => {
                                self.counters.over_read_bytes.inc_by(dropped);
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
            let Some(step) = self.steps.pop_front() else {
                self.finished = true;
                return None;
            };
            match step {
                Step::Take(claim) => match claim.bytes().await {
                    Some(mut bytes) => {
                        self.counters.shared_bytes.inc_by(bytes.len() as u64);
                        while bytes.len() > self.chunk_bytes {
                            self.ready.push_back(bytes.split_to(self.chunk_bytes));
                        }
                        self.ready.push_back(bytes);
                    }
                    // The leader gave up or stalled: read the range itself.
                    None => self.steps.push_front(Step::Read {
                        run: Run::single(claim.range),
                        opening: None,
                        span: None,
                    }),
                },
                Step::Read { run, opening, span } => {
                    let opening = opening.unwrap_or_else(|| self.open(run));
                    let mut opening = opening;
                    let opened = match (&mut opening.0).await {
                        Ok(result) => result,
                        Err(join) => Err(io_error(&self.key, join.to_string())),
                    };
                    match opened {
                        Ok(Opened::Streaming(run)) => {
                            self.current = Some(Current {
                                body: Body::Streaming(run.body),
                                cursor: run.cursor,
                                span,
                            });
                        }
                        Ok(Opened::Whole(chunks, cursor)) => {
                            self.current = Some(Current {
                                body: Body::Whole(chunks),
                                cursor,
                                span,
                            });
                        }
                        // Counted as an error by the task that made the request.
                        Err(e) => {
                            self.finished = true;
                            self.steps.clear();
                            return Some(Err(e));
                        }
                    }
                }
            }
        }
    }

    /// Plan `ranges` into steps: ranges another stream's read holds are taken from it;
    /// the rest are read, in runs, also for the streams waiting on this object.
    async fn plan(&mut self, ranges: Vec<ByteRange>) {
        let Some((shared, wait)) = self.planning.shared.clone() else {
            let runs = self.plan_alone(&ranges);
            self.steps = runs.into_iter().map(Step::read).collect();
            return;
        };
        let (key, identity) = (&self.key, &self.identity);
        let mut claims = shared.find(key, identity, &ranges);
        if claims.iter().all(Option::is_none) && self.plan_alone(&ranges).len() > FEW_RUNS {
            // Many GETs alone: unless another stream already waits here (then lead it),
            // wait a moment for a leader whose read takes these ranges in.
            let window = window_of(&ranges, EDGE_BYTES);
            if shared.interests_within(key, identity, window).is_empty() {
                shared
                    .wait_for_leader(key, identity, ranges.clone(), wait)
                    .await;
                claims = shared.find(key, identity, &ranges);
            }
        }
        if claims.iter().all(Option::is_none) {
            let runs = self.plan_leading(&shared, &ranges);
            self.steps = (runs.into_iter())
                .map(|run| {
                    let span = shared.open_span(&self.key, &self.identity, &run);
                    Step::Read {
                        run,
                        opening: None,
                        span,
                    }
                })
                .collect();
            return;
        }
        // Taken ranges split what is read into blocks, each planned on its own so the
        // bytes come out in the order asked for.
        let mut block: Vec<ByteRange> = Vec::new();
        for (range, claim) in ranges.iter().zip(claims) {
            match claim {
                None => block.push(*range),
                Some(claim) => {
                    let runs = self.plan_alone(&std::mem::take(&mut block));
                    self.steps.extend(runs.into_iter().map(Step::read));
                    self.steps.push_back(Step::Take(claim));
                }
            }
        }
        let runs = self.plan_alone(&block);
        self.steps.extend(runs.into_iter().map(Step::read));
    }

    fn plan_alone(&self, ranges: &[ByteRange]) -> Vec<Run> {
        let planning = &self.planning;
        plan_runs(ranges, planning.max_gap, planning.over_read_budget)
    }

    /// The runs of a stream that reads all of its ranges: also the ranges of the streams
    /// waiting on this object, and, within what is left of the over-read budget, a little
    /// past both ends, where the other tracks' samples of the same time sit.
    fn plan_leading(&self, shared: &SharedReads, ranges: &[ByteRange]) -> Vec<Run> {
        let ascending = ranges.windows(2).all(|w| w[0].end() <= w[1].start);
        if !ascending {
            return self.plan_alone(ranges);
        }
        let window = window_of(ranges, EDGE_BYTES);
        let waiting = shared.interests_within(&self.key, &self.identity, window);
        let planning = &self.planning;
        let mut runs = plan_runs_with_spare(
            ranges,
            &waiting,
            planning.max_gap,
            planning.over_read_budget,
        );
        // Only a run that reads through several gaps shows other tracks interleaved with
        // this one; their pieces are about as large as the gaps between ours.
        let gaps =
            || (runs.iter()).flat_map(|run| run.parts.windows(2).map(|w| w[1].start - w[0].end()));
        let widest_gap = match gaps().count() >= INTERLEAVED_GAPS {
            true => gaps().max().unwrap_or(0),
            false => 0,
        };
        let fetched: u64 = runs.iter().map(|r| r.fetch.len).sum();
        let wanted: u64 = runs.iter().map(Run::wanted).sum();
        let left = (planning.over_read_budget).saturating_sub(fetched.saturating_sub(wanted));
        let edge = EDGE_BYTES.min(widest_gap.saturating_mul(2)).min(left / 2);
        if let Some(first) = runs.first_mut() {
            let back = edge.min(first.fetch.start);
            first.fetch = ByteRange::new(first.fetch.start - back, first.fetch.len + back);
        }
        if let Some(last) = runs.last_mut() {
            let room = self.identity.size.saturating_sub(last.fetch.end());
            last.fetch.len += edge.min(room);
        }
        runs
    }

    /// Open runs ahead of the one streaming, within the count and byte bounds.
    fn open_ahead(&mut self) {
        let (mut count, mut bytes) = (0usize, 0u64);
        let mut to_open = Vec::new();
        for (at, step) in self.steps.iter().enumerate() {
            let Step::Read { run, opening, .. } = step else {
                continue;
            };
            if count >= self.planning.max_ahead {
                break;
            }
            if opening.is_none() {
                if bytes > 0 && bytes.saturating_add(run.fetch.len) > READ_AHEAD_BYTES {
                    break;
                }
                to_open.push(at);
            }
            count += 1;
            bytes = bytes.saturating_add(run.fetch.len);
        }
        for at in to_open {
            let run = match self.steps.get(at) {
                Some(Step::Read { run, .. }) => run.clone(),
                _ => continue,
            };
            let task = self.open(run);
            if let Some(Step::Read { opening, .. }) = self.steps.get_mut(at) {
                *opening = Some(task);
            }
        }
    }

    /// Start the GET of `run` on its own task, under the caller's span (the request's),
    /// so its trace shows every GET. A small run's body is read whole there.
    fn open(&self, run: Run) -> Opening {
        let whole = run.fetch.len <= SMALL_RUN_BYTES;
        let open = (self.open_run)(run);
        let (key, counters) = (self.key.clone(), self.counters.clone());
        let task = async move {
            let opened = open.await?;
            if !whole {
                return Ok(Opened::Streaming(opened));
            }
            let OpenRun { mut body, cursor } = opened;
            let mut chunks = VecDeque::new();
            while let Some(chunk) = body.next().await {
                chunks.push_back(chunk.map_err(|e| {
                    counters.read_errors.inc();
                    map_error(&key, e)
                })?);
            }
            Ok(Opened::Whole(chunks, cursor))
        };
        Opening(tokio::spawn(task.instrument(tracing::Span::current())))
    }

    /// End the stream with `error`: count it, drop what is buffered, abort what is open.
    fn fail(&mut self, error: SourceError) -> SourceError {
        self.counters.read_errors.inc();
        self.finished = true;
        self.ready.clear();
        self.current = None;
        self.steps.clear();
        error
    }
}

impl Step {
    fn read(run: Run) -> Self {
        Step::Read {
            run,
            opening: None,
            span: None,
        }
    }
}

/// The smallest range holding all of `ranges`, widened by `reach` on both sides.
fn window_of(ranges: &[ByteRange], reach: u64) -> ByteRange {
    let start = ranges.iter().map(|r| r.start).min().unwrap_or(0);
    let end = ranges.iter().map(ByteRange::end).max().unwrap_or(0);
    let from = start.saturating_sub(reach);
    ByteRange::new(from, end.saturating_add(reach).saturating_sub(from))
}
