//! Hedged requests: a store request whose answer is late is sent a second time, and the
//! first answer wins.
//!
//! Why: object stores answer a small share of requests far later than the rest (a busy
//! node, a slow disk), and S3's own guidance is to retry slow requests rather than wait.
//! A segment that waits on one such answer makes the viewer wait too.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Answers the percentiles are taken over.
pub(super) const WINDOW: usize = 512;

/// Answers seen before any hedge: a percentile of fewer says little.
const MIN_SAMPLES: usize = 32;

/// The percentiles are worked out again after this many answers.
const RECOMPUTE_EVERY: u64 = 32;

/// The earliest a request is hedged, whatever the percentiles say.
pub(super) const MIN_HEDGE_AFTER: Duration = Duration::from_millis(10);

/// Hedges allowed at once before any request has earned one.
const BURST: f64 = 10.0;

/// How long requests to the store take to answer (to their head), lately.
#[derive(Debug)]
pub(super) struct Latencies {
    recent: Mutex<Ring>,
    /// Microseconds; 0 until [`MIN_SAMPLES`] answers have been seen.
    median_us: AtomicU64,
    p95_us: AtomicU64,
}

#[derive(Debug, Default)]
struct Ring {
    samples: Vec<u32>,
    next: usize,
    seen: u64,
}

impl Default for Latencies {
    fn default() -> Self {
        Self {
            recent: Mutex::new(Ring::default()),
            median_us: AtomicU64::new(0),
            p95_us: AtomicU64::new(0),
        }
    }
}

impl Latencies {
    /// Note one answer's time to its head.
    pub fn observe(&self, took: Duration) {
        let micros = u32::try_from(took.as_micros()).unwrap_or(u32::MAX);
        let mut ring = self
            .recent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if ring.samples.len() < WINDOW {
            ring.samples.push(micros);
        } else if let Some(slot) = {
            let next = ring.next;
            ring.samples.get_mut(next)
        } {
            *slot = micros;
        }
        ring.next = (ring.next + 1) % WINDOW;
        ring.seen += 1;
        if ring.samples.len() < MIN_SAMPLES || !ring.seen.is_multiple_of(RECOMPUTE_EVERY) {
            return;
        }
        let mut sorted = ring.samples.clone();
        drop(ring);
        sorted.sort_unstable();
        let at = |q: usize| sorted.get(sorted.len() * q / 100).copied().unwrap_or(0);
        self.median_us.store(u64::from(at(50)), Ordering::Relaxed);
        self.p95_us.store(u64::from(at(95)), Ordering::Relaxed);
    }

    /// The recent median time to a head, once enough answers have been seen.
    pub fn median(&self) -> Option<Duration> {
        let us = self.median_us.load(Ordering::Relaxed);
        (us > 0).then(|| Duration::from_micros(us))
    }

    /// When a request still without its head is hedged: twice the recent 95th
    /// percentile, at least [`MIN_HEDGE_AFTER`]; `None` before enough answers.
    pub fn hedge_after(&self) -> Option<Duration> {
        let us = self.p95_us.load(Ordering::Relaxed);
        (us > 0).then(|| (Duration::from_micros(us) * 2).max(MIN_HEDGE_AFTER))
    }
}

/// At most `percent` hedges per 100 requests: each request earns `percent / 100` of a
/// hedge, up to [`BURST`] saved; a hedge spends one.
#[derive(Debug)]
pub(super) struct HedgeBudget {
    /// Hedges earned and not spent, in millionths.
    saved: AtomicU64,
    /// Millionths of a hedge each request earns.
    per_request: u64,
}

const UNIT: f64 = 1_000_000.0;

impl HedgeBudget {
    /// A budget of `percent` hedges per 100 requests (0: never hedge).
    pub fn new(percent: u32) -> Self {
        Self {
            saved: AtomicU64::new((BURST * UNIT) as u64),
            per_request: u64::from(percent.min(100)) * 10_000,
        }
    }

    /// Whether hedging is on at all.
    pub fn enabled(&self) -> bool {
        self.per_request > 0
    }

    /// A request was made: earn its share.
    pub fn earn(&self) {
        if self.per_request == 0 {
            return;
        }
        let cap = (BURST * UNIT) as u64;
        let _ = self
            .saved
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |saved| {
                Some(saved.saturating_add(self.per_request).min(cap))
            });
    }

    /// Spend a hedge if one is saved.
    pub fn spend(&self) -> bool {
        let one = UNIT as u64;
        self.per_request > 0
            && self
                .saved
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |saved| {
                    saved.checked_sub(one)
                })
                .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Given answers mostly at 20 ms and a few at 1 s, when the percentiles are taken,
    /// then a request is hedged after twice the 95th percentile (not after the slow ones).
    #[test]
    fn the_hedge_waits_twice_the_recent_95th_percentile() {
        let latencies = Latencies::default();
        assert_eq!(latencies.hedge_after(), None, "too few answers yet");
        for i in 0..WINDOW {
            let ms = if i % 100 == 0 { 1_000 } else { 20 };
            latencies.observe(Duration::from_millis(ms));
        }
        assert_eq!(latencies.median(), Some(Duration::from_millis(20)));
        assert_eq!(latencies.hedge_after(), Some(Duration::from_millis(40)));
        // A store answering in microseconds is still given MIN_HEDGE_AFTER.
        for _ in 0..WINDOW {
            latencies.observe(Duration::from_micros(300));
        }
        assert_eq!(latencies.hedge_after(), Some(MIN_HEDGE_AFTER));
    }

    /// Given a budget of 5 hedges per 100 requests, when a long run of requests all want
    /// a hedge, then at most the burst plus 5 % are granted; with 0 %, none.
    #[test]
    fn hedges_stay_within_their_share_of_requests() {
        let budget = HedgeBudget::new(5);
        let mut granted = 0;
        for _ in 0..10_000 {
            budget.earn();
            if budget.spend() {
                granted += 1;
            }
        }
        assert!((500..=510).contains(&granted), "{granted}");
        let off = HedgeBudget::new(0);
        off.earn();
        assert!(!off.enabled() && !off.spend());
    }
}
