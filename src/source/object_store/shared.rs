//! Reads shared between the segments of one object that players fetch together.
//!
//! Why: most MP4 files interleave their tracks finely (ffmpeg writes a video frame, then
//! the audio beside it), so a 6 s audio segment of a 2 Mbit/s file is about 150 short
//! runs, each between two video frames. Read alone that is 150 GETs; but a player fetches
//! the video segment of the same time together with it, and that segment's GET reads
//! through those very bytes (the gaps between its frames). So a stream that reads through
//! gaps keeps their bytes for a while (a [`Span`]) instead of dropping them, and a stream
//! whose ranges lie in a span's gaps takes them from it: the file's span is read once for
//! both.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use tokio::sync::{watch, Notify};

use crate::source::identity::{ObjectIdentity, ObjectVersion};
use crate::source::key::ObjectKey;
use crate::source::range::ByteRange;
use crate::source::runs::Run;

/// How long a span's gap bytes are kept for another segment. Players ask for the audio and
/// video segments of the same time within a fraction of a second of each other.
pub(super) const LINGER: Duration = Duration::from_secs(10);

/// Longest wait for a span's next gap before a taker reads its ranges itself: the leader's
/// body is read as its own client pulls, and a slow client must not stall the taker.
pub(super) const STALL: Duration = Duration::from_millis(500);

/// Bytes a leader reads past each end of its ranges for the other tracks' samples of the
/// same time (within what is left of the over-read budget).
pub(super) const EDGE_BYTES: u64 = 64 * 1024;

/// Plans of more GETs than this make a stream wait for a leader (an [`Interest`]).
pub(super) const FEW_RUNS: usize = 2;

/// The spans and interests of one source.
#[derive(Debug)]
pub(super) struct SharedReads {
    registry: Mutex<Registry>,
    /// Most gap bytes kept across all spans.
    budget: u64,
}

#[derive(Debug, Default)]
struct Registry {
    objects: HashMap<ObjectVersion, Shares>,
    /// Gap bytes of the spans registered (filled or to be filled).
    kept: u64,
}

#[derive(Debug, Default)]
struct Shares {
    spans: Vec<Arc<Span>>,
    interests: Vec<Arc<Interest>>,
}

/// The gap bytes of one leader's run, filled as its body streams.
#[derive(Debug)]
pub(super) struct Span {
    /// The gaps of the run (its fetch less its parts), in file order.
    gaps: Vec<ByteRange>,
    /// Each gap's bytes once it is complete.
    filled: Mutex<Vec<Option<Bytes>>>,
    /// Gaps completed, in order, and whether the leader gave up on the rest.
    progress: watch::Sender<Progress>,
    /// Gap bytes in all.
    spare: u64,
    /// Gap bytes handed to takers.
    claimed: AtomicU64,
    made: Instant,
}

/// How far a leader got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Progress {
    /// Gaps complete, from the first.
    gaps: usize,
    /// The leader stopped: no more gaps will complete.
    stopped: bool,
}

/// Ranges a stream waits to take from a leader that has not started yet.
#[derive(Debug)]
pub(super) struct Interest {
    ranges: Vec<ByteRange>,
    notify: Notify,
}

/// A range a stream takes from a span instead of reading it.
#[derive(Debug, Clone)]
pub(super) struct Claim {
    span: Arc<Span>,
    /// Index of the gap holding the range.
    gap: usize,
    pub range: ByteRange,
}

impl SharedReads {
    /// Spans of at most `budget` gap bytes in all.
    pub fn new(budget: u64) -> Self {
        Self {
            registry: Mutex::new(Registry::default()),
            budget,
        }
    }

    /// For each of `ranges`, the span gap it can be taken from, if any.
    pub fn find(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        ranges: &[ByteRange],
    ) -> Vec<Option<Claim>> {
        let mut registry = self.lock();
        self.prune(&mut registry, Instant::now());
        let version = ObjectVersion::new(key.clone(), identity.clone());
        let Some(shares) = registry.objects.get(&version) else {
            return vec![None; ranges.len()];
        };
        (ranges.iter())
            .map(|range| {
                // The newest span first: the most likely to be still filling for us.
                shares.spans.iter().rev().find_map(|span| {
                    let gap = span.gap_holding(*range)?;
                    span.claimed.fetch_add(range.len, Ordering::Relaxed);
                    Some(Claim {
                        span: span.clone(),
                        gap,
                        range: *range,
                    })
                })
            })
            .collect()
    }

    /// Wait as an interest in `ranges` of the object version: until a leader registers a
    /// span (then try [`SharedReads::find`] again) or `wait` passes.
    pub async fn wait_for_leader(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        ranges: Vec<ByteRange>,
        wait: Duration,
    ) {
        let interest = Arc::new(Interest {
            ranges,
            notify: Notify::new(),
        });
        let version = ObjectVersion::new(key.clone(), identity.clone());
        let notified = interest.notify.notified();
        tokio::pin!(notified);
        // Registered for wakeups before it is visible, so no leader's notice is missed.
        notified.as_mut().enable();
        (self.lock().objects.entry(version.clone()).or_default())
            .interests
            .push(interest.clone());
        let _ = tokio::time::timeout(wait, notified).await;
        let mut registry = self.lock();
        if let Some(shares) = registry.objects.get_mut(&version) {
            shares.interests.retain(|i| !Arc::ptr_eq(i, &interest));
            if shares.spans.is_empty() && shares.interests.is_empty() {
                registry.objects.remove(&version);
            }
        }
    }

    /// The ranges that waiting streams want of the object version within `window`.
    pub fn interests_within(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        window: ByteRange,
    ) -> Vec<ByteRange> {
        let registry = self.lock();
        let Some(shares) = registry
            .objects
            .get(&ObjectVersion::new(key.clone(), identity.clone()))
        else {
            return Vec::new();
        };
        (shares.interests.iter())
            .flat_map(|interest| interest.ranges.iter().copied())
            .filter(|r| r.start >= window.start && r.end() <= window.end())
            .collect()
    }

    /// Register the gaps of a leader's `run` as a span, and wake the streams waiting on
    /// the object. `None` when the run has no gaps or they do not fit in the budget even
    /// after the oldest spans go.
    pub fn open_span(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        run: &Run,
    ) -> Option<SpanWriter> {
        let gaps = gaps_of(run);
        let spare: u64 = gaps.iter().map(|g| g.len).sum();
        if spare == 0 || spare > self.budget {
            return None;
        }
        let span = Arc::new(Span {
            filled: Mutex::new(vec![None; gaps.len()]),
            progress: watch::Sender::new(Progress {
                gaps: 0,
                stopped: false,
            }),
            gaps,
            spare,
            claimed: AtomicU64::new(0),
            made: Instant::now(),
        });
        let mut registry = self.lock();
        self.prune(&mut registry, Instant::now());
        while registry.kept + spare > self.budget {
            if !self.drop_oldest(&mut registry) {
                return None;
            }
        }
        registry.kept += spare;
        let shares = (registry.objects)
            .entry(ObjectVersion::new(key.clone(), identity.clone()))
            .or_default();
        shares.spans.push(span.clone());
        for interest in &shares.interests {
            interest.notify.notify_one();
        }
        Some(SpanWriter {
            span,
            next_gap: 0,
            current: BytesMut::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        // A panic while holding the lock leaves plain data behind: use it.
        self.registry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Drop the spans past their time, and those whose gaps were all taken.
    fn prune(&self, registry: &mut Registry, now: Instant) {
        let mut freed = 0u64;
        registry.objects.retain(|_, shares| {
            shares.spans.retain(|span| {
                let done = span.claimed.load(Ordering::Relaxed) >= span.spare;
                let keep = !done && now.saturating_duration_since(span.made) < LINGER;
                if !keep {
                    freed += span.spare;
                }
                keep
            });
            !shares.spans.is_empty() || !shares.interests.is_empty()
        });
        registry.kept = registry.kept.saturating_sub(freed);
    }

    /// Drop the oldest span of all; false when there is none.
    fn drop_oldest(&self, registry: &mut Registry) -> bool {
        let oldest = (registry.objects.iter())
            .flat_map(|(version, shares)| shares.spans.iter().map(move |s| (s.made, version)))
            .min_by_key(|(made, _)| *made)
            .map(|(made, version)| (made, version.clone()));
        let Some((made, version)) = oldest else {
            return false;
        };
        if let Some(shares) = registry.objects.get_mut(&version) {
            if let Some(at) = shares.spans.iter().position(|s| s.made == made) {
                let span = shares.spans.remove(at);
                registry.kept = registry.kept.saturating_sub(span.spare);
            }
            if shares.spans.is_empty() && shares.interests.is_empty() {
                registry.objects.remove(&version);
            }
        }
        true
    }

    /// Gap bytes kept now (for tests and the metrics).
    #[cfg(test)]
    pub fn kept_bytes(&self) -> u64 {
        self.lock().kept
    }
}

impl Span {
    /// The index of the gap that holds all of `range`.
    fn gap_holding(&self, range: ByteRange) -> Option<usize> {
        let at = self.gaps.partition_point(|g| g.end() <= range.start);
        let gap = self.gaps.get(at)?;
        (range.len > 0 && gap.start <= range.start && range.end() <= gap.end()).then_some(at)
    }
}

impl Claim {
    /// The claimed bytes, once the leader has read them; `None` when it gave up, or made
    /// no progress for [`STALL`]: then read them.
    pub async fn bytes(&self) -> Option<Bytes> {
        let mut progress = self.span.progress.subscribe();
        loop {
            let now = *progress.borrow_and_update();
            if now.gaps > self.gap {
                break;
            }
            if now.stopped {
                return None;
            }
            match tokio::time::timeout(STALL, progress.changed()).await {
                Ok(Ok(())) => {}
                // The leader is gone (its writer dropped) or stalled.
                Ok(Err(_)) | Err(_) => return None,
            }
        }
        let filled = self
            .span
            .filled
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let gap = self.span.gaps.get(self.gap)?;
        let bytes = filled.get(self.gap)?.as_ref()?;
        let from = usize::try_from(self.range.start - gap.start).ok()?;
        let to = from.checked_add(usize::try_from(self.range.len).ok()?)?;
        (to <= bytes.len()).then(|| bytes.slice(from..to))
    }
}

/// The leader's end of a span: copies the gap bytes of its body in as they pass.
#[derive(Debug)]
pub(super) struct SpanWriter {
    span: Arc<Span>,
    next_gap: usize,
    current: BytesMut,
}

impl SpanWriter {
    /// Take `bytes` of the body at object offset `offset` (gap bytes, in order).
    pub fn keep(&mut self, mut offset: u64, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let Some(gap) = self.span.gaps.get(self.next_gap).copied() else {
                return;
            };
            let filled_to = gap.start + self.current.len() as u64;
            if offset != filled_to {
                // Not the bytes this gap expects next: never happens for a cursor's gaps.
                self.give_up();
                return;
            }
            let take = (gap.end() - offset).min(bytes.len() as u64) as usize;
            let (now, rest) = bytes.split_at(take);
            if self.current.is_empty() {
                self.current.reserve(gap.len as usize);
            }
            self.current.extend_from_slice(now);
            offset += take as u64;
            bytes = rest;
            if offset == gap.end() {
                let done = std::mem::take(&mut self.current).freeze();
                let mut filled = self
                    .span
                    .filled
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if let Some(slot) = filled.get_mut(self.next_gap) {
                    *slot = Some(done);
                }
                drop(filled);
                self.next_gap += 1;
                let gaps = self.next_gap;
                self.span.progress.send_modify(|p| p.gaps = gaps);
            }
        }
    }

    fn give_up(&mut self) {
        self.next_gap = self.span.gaps.len();
        self.span.progress.send_modify(|p| p.stopped = true);
    }
}

impl Drop for SpanWriter {
    fn drop(&mut self) {
        // A body that ended (or failed) before the last gap: its takers read for themselves.
        if self.next_gap < self.span.gaps.len() {
            self.give_up();
        }
    }
}

/// The gaps of `run`: its fetch less its parts, in file order.
fn gaps_of(run: &Run) -> Vec<ByteRange> {
    let mut gaps = Vec::new();
    let mut at = run.fetch.start;
    for part in &run.parts {
        if part.start > at {
            gaps.push(ByteRange::new(at, part.start - at));
        }
        at = at.max(part.end());
    }
    if run.fetch.end() > at {
        gaps.push(ByteRange::new(at, run.fetch.end() - at));
    }
    gaps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: u64, len: u64) -> ByteRange {
        ByteRange::new(start, len)
    }

    fn version() -> (ObjectKey, ObjectIdentity) {
        let key = ObjectKey::parse("a.mp4").expect("key");
        let identity = ObjectIdentity {
            size: 10_000,
            version: "\"v1\"".into(),
        };
        (key, identity)
    }

    fn leader_run() -> Run {
        // Video parts at 100..200 and 300..400, read from 50 to 450: gaps 50..100,
        // 200..300 and 400..450 hold the other track's bytes.
        Run {
            fetch: r(50, 400),
            parts: vec![r(100, 100), r(300, 100)],
        }
    }

    fn object_bytes(range: ByteRange) -> Vec<u8> {
        (range.start..range.end())
            .map(|i| (i % 251) as u8)
            .collect()
    }

    /// Given a leader streaming a run whose gaps hold another track's samples, when a
    /// second stream asks for ranges inside those gaps, then it takes exactly those bytes
    /// from the leader's read, and the span goes once every gap byte has been taken.
    #[tokio::test]
    async fn a_stream_takes_its_ranges_from_the_gaps_a_leader_reads_through() {
        let shared = SharedReads::new(1 << 20);
        let (key, identity) = version();
        let mut writer = shared
            .open_span(&key, &identity, &leader_run())
            .expect("span");
        assert_eq!(shared.kept_bytes(), 200);
        let wanted = [r(60, 40), r(200, 100), r(400, 50), r(50, 10), r(500, 10)];
        let claims = shared.find(&key, &identity, &wanted);
        assert!(claims[..4].iter().all(Option::is_some));
        assert!(claims[4].is_none(), "outside the run");
        // The leader's body passes, gap bytes handed over as the cursor drops them.
        for gap in [r(50, 50), r(200, 100), r(400, 50)] {
            writer.keep(gap.start, &object_bytes(gap));
        }
        for (claim, range) in claims.iter().zip(wanted).take(4) {
            let bytes = claim.as_ref().expect("claim").bytes().await.expect("bytes");
            assert_eq!(&bytes[..], &object_bytes(range)[..]);
        }
        // Every gap byte was taken: the span is gone.
        let _ = shared.find(&key, &identity, &[]);
        assert_eq!(shared.kept_bytes(), 0);
    }

    /// Given a leader whose body stops before its last gap, when a stream waits for a
    /// range in that gap, then it is told to read the range itself.
    #[tokio::test]
    async fn a_leader_that_stops_early_sends_its_takers_to_read_for_themselves() {
        let shared = SharedReads::new(1 << 20);
        let (key, identity) = version();
        let mut writer = shared
            .open_span(&key, &identity, &leader_run())
            .expect("span");
        let claims = shared.find(&key, &identity, &[r(60, 10), r(410, 10)]);
        writer.keep(50, &object_bytes(r(50, 50)));
        drop(writer);
        let first = claims[0].as_ref().expect("claim").bytes().await;
        assert_eq!(first.as_deref(), Some(&object_bytes(r(60, 10))[..]));
        assert_eq!(claims[1].as_ref().expect("claim").bytes().await, None);
    }

    /// Given a leader that makes no progress, when a stream waits on its span, then the
    /// wait ends after STALL with "read it yourself" rather than hanging.
    #[tokio::test(start_paused = true)]
    async fn a_stalled_leader_holds_a_taker_no_longer_than_the_stall_bound() {
        let shared = SharedReads::new(1 << 20);
        let (key, identity) = version();
        let _writer = shared.open_span(&key, &identity, &leader_run());
        let claims = shared.find(&key, &identity, &[r(210, 10)]);
        let started = tokio::time::Instant::now();
        assert_eq!(claims[0].as_ref().expect("claim").bytes().await, None);
        assert_eq!(started.elapsed(), STALL);
    }

    /// Given spans that would pass the budget, when another opens, then the oldest go, and
    /// a span larger than the whole budget is not kept at all.
    #[tokio::test]
    async fn spans_past_the_budget_drop_the_oldest() {
        let shared = SharedReads::new(300);
        let (key, identity) = version();
        let first = shared.open_span(&key, &identity, &leader_run());
        assert!(first.is_some());
        let later = Run {
            fetch: r(1000, 300),
            parts: vec![r(1000, 100)],
        };
        let second = shared.open_span(&key, &identity, &later);
        assert!(second.is_some());
        assert_eq!(shared.kept_bytes(), 200);
        assert!(
            shared.find(&key, &identity, &[r(60, 10)])[0].is_none(),
            "the first went"
        );
        assert!(shared.find(&key, &identity, &[r(1100, 10)])[0].is_some());
        let too_big = Run {
            fetch: r(2000, 1000),
            parts: vec![r(2000, 1)],
        };
        assert!(shared.open_span(&key, &identity, &too_big).is_none());
    }

    /// Given a stream waiting as an interest, when a leader opens a span on the same
    /// object, then the waiter wakes at once and its ranges are offered to the leader.
    #[tokio::test(start_paused = true)]
    async fn a_waiting_stream_is_offered_to_the_leader_and_woken_by_its_span() {
        let shared = Arc::new(SharedReads::new(1 << 20));
        let (key, identity) = version();
        let waiter = {
            let (shared, key, identity) = (shared.clone(), key.clone(), identity.clone());
            tokio::spawn(async move {
                let started = tokio::time::Instant::now();
                (shared.wait_for_leader(&key, &identity, vec![r(60, 10), r(420, 10)], LINGER))
                    .await;
                started.elapsed()
            })
        };
        tokio::task::yield_now().await;
        let offered = shared.interests_within(&key, &identity, r(0, 1000));
        assert_eq!(offered, vec![r(60, 10), r(420, 10)]);
        let _writer = shared.open_span(&key, &identity, &leader_run());
        let waited = waiter.await.expect("waiter");
        assert!(waited < LINGER, "woken by the span, not the timeout");
        assert!(shared
            .interests_within(&key, &identity, r(0, 1000))
            .is_empty());
    }
}
