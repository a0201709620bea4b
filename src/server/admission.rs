//! Admission: caps on connections and on requests in flight, decided before any source read.
//!
//! Three classes with separate limits, so a segment storm after a CDN purge cannot starve
//! playlists, and neither can starve health checks and metrics (never shed); thumbnails
//! are a fourth, with their own small limit and queue, since a decode costs far more CPU.
//! Over its limit a request is shed with 503 and `Retry-After`, costing no read or parse;
//! a segment first waits in a short queue (at most [`SEGMENT_QUEUE_WAIT`]) for a place a
//! finished stream gives back, so a premiere's burst is served a moment later instead of
//! shed. A segment's permit is held until its body is streamed, so the limit bounds the
//! streams in flight and the memory they hold.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

/// Longest a segment request waits for a place before it is shed.
pub const SEGMENT_QUEUE_WAIT: Duration = Duration::from_secs(2);

/// What a request is, for admission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestClass {
    /// Init and media segments: streamed bodies.
    Segment,
    /// Playlists and MPDs, which may load a title's metadata.
    Manifest,
    /// Thumbnails: a decode each.
    Thumbnail,
    /// Health, readiness, metrics: always admitted.
    Control,
}

impl RequestClass {
    /// The `class` label of `vod_shed_requests_total` (control requests are never shed).
    pub fn shed_label(self) -> &'static str {
        match self {
            RequestClass::Segment => "segment",
            RequestClass::Thumbnail => "thumbnail",
            RequestClass::Manifest | RequestClass::Control => "manifest",
        }
    }
}

/// The limits, from the settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmissionLimits {
    /// Open client connections.
    pub max_connections: usize,
    /// Segment requests in flight (including their streaming bodies).
    pub max_segment_requests: usize,
    /// Manifest requests in flight (including metadata loads).
    pub max_manifest_requests: usize,
    /// Thumbnail requests in flight (each decoding).
    pub max_thumbnail_requests: usize,
    /// Longest a thumbnail request waits in the queue (as long as the limit) for a place.
    pub thumbnail_queue_wait: Duration,
}

/// The shared counters of admission.
#[derive(Debug)]
pub struct Admission {
    connections: Arc<Pool>,
    segments: Arc<Pool>,
    manifests: Arc<Pool>,
    thumbnails: Arc<Pool>,
    thumbnail_queue_wait: Duration,
}

/// A request admitted: hold it for as long as the request (and its body) runs, and for as
/// long as work it started runs on: a decode on the blocking pool goes on after its
/// request's deadline has answered 504, so it holds its place too (`Arc<Admitted>`),
/// and the decode limit bounds the decodes running, not only the requests waiting.
#[derive(Debug)]
pub struct Admitted(#[allow(dead_code)] Option<Permit>);

impl Admitted {
    /// Holding no place: for a request whose place lives elsewhere (in an `Arc` shared
    /// with its blocking work).
    pub fn none() -> Self {
        Admitted(None)
    }
}

/// One of a pool's places, given back when dropped.
#[derive(Debug)]
pub struct Permit(Arc<Pool>);

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.in_use.fetch_sub(1, Ordering::Release);
        // A release costs one more load when nobody waits.
        if self.0.waiting.load(Ordering::Acquire) > 0 {
            self.0.freed.notify_one();
        }
    }
}

/// Places in use against a limit, and the requests waiting for one. Taking a place is a
/// counter (a `tokio::sync::Semaphore` took a mutex on every release); a release wakes one
/// waiter only when there is one.
#[derive(Debug)]
struct Pool {
    in_use: AtomicUsize,
    limit: usize,
    waiting: AtomicUsize,
    freed: Notify,
}

/// A place in a pool's queue, left when dropped.
struct InQueue<'a>(&'a Pool);

impl Drop for InQueue<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Pool {
    fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            in_use: AtomicUsize::new(0),
            limit: limit.max(1),
            waiting: AtomicUsize::new(0),
            freed: Notify::new(),
        })
    }

    /// A place, waiting up to `wait` for one behind at most `limit` other waiters; `None`
    /// when the queue is full or the wait ends first. The second value says whether it
    /// joined the queue.
    async fn take_waiting(self: &Arc<Self>, wait: Duration) -> (Option<Permit>, bool) {
        if let Some(permit) = self.try_take() {
            return (Some(permit), false);
        }
        let joined = (self.waiting).fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < self.limit).then_some(n + 1)
        });
        if joined.is_err() {
            return (None, false);
        }
        (self.wait_in_queue(wait).await, true)
    }

    /// Wait in the queue (joined already) for a place, up to `wait`.
    async fn wait_in_queue(self: &Arc<Self>, wait: Duration) -> Option<Permit> {
        let _in_queue = InQueue(self);
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Registered before trying, so a release between the two is not missed.
            freed.as_mut().enable();
            if let Some(permit) = self.try_take() {
                return Some(permit);
            }
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                return self.try_take();
            }
        }
    }

    /// A place, or `None` when all `limit` are taken.
    fn try_take(self: &Arc<Self>) -> Option<Permit> {
        (self.in_use)
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |n| {
                (n < self.limit).then_some(n + 1)
            })
            .ok()
            .map(|_| Permit(self.clone()))
    }
}

impl Admission {
    /// Admission with `limits`.
    pub fn new(limits: AdmissionLimits) -> Self {
        Self {
            connections: Pool::new(limits.max_connections),
            segments: Pool::new(limits.max_segment_requests),
            manifests: Pool::new(limits.max_manifest_requests),
            thumbnails: Pool::new(limits.max_thumbnail_requests),
            thumbnail_queue_wait: limits.thumbnail_queue_wait,
        }
    }

    /// Admit a request of `class`, or `None` when its class is at its limit (shed it).
    pub fn admit(&self, class: RequestClass) -> Option<Admitted> {
        let pool = match class {
            RequestClass::Segment => &self.segments,
            RequestClass::Manifest => &self.manifests,
            RequestClass::Thumbnail => &self.thumbnails,
            RequestClass::Control => return Some(Admitted(None)),
        };
        pool.try_take().map(|p| Admitted(Some(p)))
    }

    /// [`Admission::admit`], but a segment request over the limit waits in the queue for
    /// a place, up to [`SEGMENT_QUEUE_WAIT`] (a thumbnail request, up to its own wait);
    /// `None` when it is shed. The second value says whether it waited.
    pub async fn admit_or_queue(&self, class: RequestClass) -> (Option<Admitted>, bool) {
        if let Some(admitted) = self.admit(class) {
            return (Some(admitted), false);
        }
        let (pool, wait) = match class {
            RequestClass::Segment => (&self.segments, SEGMENT_QUEUE_WAIT),
            RequestClass::Thumbnail => (&self.thumbnails, self.thumbnail_queue_wait),
            RequestClass::Manifest | RequestClass::Control => return (None, false),
        };
        let (permit, queued) = pool.take_waiting(wait).await;
        (permit.map(|p| Admitted(Some(p))), queued)
    }

    /// Segment requests waiting in the queue now.
    pub fn waiting_segments(&self) -> usize {
        self.segments.waiting.load(Ordering::Acquire)
    }

    /// Admit a connection, or `None` when the connection cap is reached. Hold the permit
    /// for the connection's life.
    pub fn admit_connection(&self) -> Option<Permit> {
        self.connections.try_take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_class_has_its_own_limit_and_control_is_never_shed() {
        let admission = Admission::new(AdmissionLimits {
            max_connections: 1,
            max_segment_requests: 2,
            max_manifest_requests: 1,
            max_thumbnail_requests: 1,
            thumbnail_queue_wait: Duration::from_millis(1),
        });
        let s1 = admission.admit(RequestClass::Segment);
        let s2 = admission.admit(RequestClass::Segment);
        assert!(s1.is_some() && s2.is_some());
        assert!(admission.admit(RequestClass::Segment).is_none());
        // Segments at their limit do not take playlists down with them.
        let m1 = admission.admit(RequestClass::Manifest);
        assert!(m1.is_some());
        assert!(admission.admit(RequestClass::Manifest).is_none());
        assert!(admission.admit(RequestClass::Control).is_some());
        drop(s1);
        assert!(admission.admit(RequestClass::Segment).is_some());
        let c1 = admission.admit_connection();
        assert!(c1.is_some() && admission.admit_connection().is_none());
        drop(c1);
        assert!(admission.admit_connection().is_some());
    }

    fn one_segment_place() -> Admission {
        Admission::new(AdmissionLimits {
            max_connections: 1,
            max_segment_requests: 1,
            max_manifest_requests: 1,
            max_thumbnail_requests: 1,
            thumbnail_queue_wait: Duration::from_millis(1),
        })
    }

    /// Given the one segment place taken, when a second segment request comes, then it
    /// waits, and gets the place as soon as the first gives it back.
    #[tokio::test(start_paused = true)]
    async fn a_segment_request_over_the_limit_waits_for_a_place() {
        let admission = Arc::new(one_segment_place());
        let first = admission.admit(RequestClass::Segment);
        assert!(first.is_some());
        let waiter = tokio::spawn({
            let admission = admission.clone();
            async move { admission.admit_or_queue(RequestClass::Segment).await }
        });
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!waiter.is_finished(), "it did not wait");
        drop(first);
        let (admitted, queued) = waiter.await.unwrap();
        assert!(admitted.is_some() && queued);
    }

    /// Given the place taken and never given back, then a waiting request is shed when its
    /// wait ends; a second one finds the queue (one place long) full and is shed at once;
    /// playlists never wait.
    #[tokio::test(start_paused = true)]
    async fn a_full_queue_or_a_wait_past_its_end_is_shed() {
        let admission = Arc::new(one_segment_place());
        let _held = admission.admit(RequestClass::Segment);
        let waiter = tokio::spawn({
            let admission = admission.clone();
            async move { admission.admit_or_queue(RequestClass::Segment).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        let (refused, queued) = admission.admit_or_queue(RequestClass::Segment).await;
        assert!(refused.is_none() && !queued, "the queue holds one");
        let (admitted, queued) = waiter.await.unwrap();
        assert!(
            admitted.is_none() && queued,
            "shed after {SEGMENT_QUEUE_WAIT:?}"
        );
        let _playlist = admission.admit(RequestClass::Manifest);
        let (refused, queued) = admission.admit_or_queue(RequestClass::Manifest).await;
        assert!(refused.is_none() && !queued);
    }

    #[test]
    fn places_given_back_from_many_threads_are_all_free_again() {
        let admission = Arc::new(Admission::new(AdmissionLimits {
            max_connections: 4,
            max_segment_requests: 4,
            max_manifest_requests: 4,
            max_thumbnail_requests: 1,
            thumbnail_queue_wait: Duration::from_millis(1),
        }));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let admission = admission.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        let permit = admission.admit(RequestClass::Manifest);
                        assert!(permit.is_some());
                    }
                })
            })
            .collect();
        for t in threads {
            assert!(t.join().is_ok());
        }
        let all: Vec<_> = (0..4)
            .map(|_| admission.admit(RequestClass::Manifest))
            .collect();
        assert!(all.iter().all(Option::is_some));
        assert!(admission.admit(RequestClass::Manifest).is_none());
    }

    /// Given the one thumbnail place taken, then a second thumbnail waits its (short) wait
    /// and is shed, a third finds the queue full, and segments are not touched.
    #[tokio::test(start_paused = true)]
    async fn thumbnails_have_their_own_place_and_wait() {
        let admission = Arc::new(Admission::new(AdmissionLimits {
            max_connections: 1,
            max_segment_requests: 1,
            max_manifest_requests: 1,
            max_thumbnail_requests: 1,
            thumbnail_queue_wait: Duration::from_millis(50),
        }));
        let _held = admission.admit(RequestClass::Thumbnail);
        let waiter = tokio::spawn({
            let admission = admission.clone();
            async move { admission.admit_or_queue(RequestClass::Thumbnail).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        let (refused, queued) = admission.admit_or_queue(RequestClass::Thumbnail).await;
        assert!(refused.is_none() && !queued, "the queue holds one");
        let (admitted, queued) = waiter.await.unwrap();
        assert!(admitted.is_none() && queued, "shed after its wait");
        assert!(admission.admit(RequestClass::Segment).is_some());
    }
}
