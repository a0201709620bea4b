//! Admission: caps on connections and on requests in flight, decided before any source read.
//!
//! Requests fall in three classes with separate limits, so a storm of segment requests
//! after a CDN purge cannot starve playlists (which players need to keep going) and
//! neither can starve health checks and metrics (never shed). A request over its class's
//! limit is shed at once with 503 and `Retry-After`, costing no read and no parse. A
//! segment's permit is held until its body has been streamed, so the segment limit bounds
//! the streams in flight and with them the memory they hold.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What a request is, for admission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestClass {
    /// Init and media segments: streamed bodies.
    Segment,
    /// Playlists and MPDs, which may load a title's metadata.
    Manifest,
    /// Health, readiness, metrics: always admitted.
    Control,
}

impl RequestClass {
    /// The `class` label of `vod_shed_requests_total` (control requests are never shed).
    pub fn shed_label(self) -> &'static str {
        match self {
            RequestClass::Segment => "segment",
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
}

/// The shared counters of admission.
#[derive(Debug)]
pub struct Admission {
    connections: Arc<Pool>,
    segments: Arc<Pool>,
    manifests: Arc<Pool>,
}

/// A request admitted: hold it for as long as the request (and its body) runs.
#[derive(Debug)]
pub struct Admitted(#[allow(dead_code)] Option<Permit>);

/// One of a pool's places, given back when dropped.
#[derive(Debug)]
pub struct Permit(Arc<Pool>);

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.in_use.fetch_sub(1, Ordering::Release);
    }
}

/// Places in use against a limit. Admission only ever tries and never waits, so a counter
/// is enough; a `tokio::sync::Semaphore` took a mutex on every release.
#[derive(Debug)]
struct Pool {
    in_use: AtomicUsize,
    limit: usize,
}

impl Pool {
    fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            in_use: AtomicUsize::new(0),
            limit: limit.max(1),
        })
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
        }
    }

    /// Admit a request of `class`, or `None` when its class is at its limit (shed it).
    pub fn admit(&self, class: RequestClass) -> Option<Admitted> {
        let pool = match class {
            RequestClass::Segment => &self.segments,
            RequestClass::Manifest => &self.manifests,
            RequestClass::Control => return Some(Admitted(None)),
        };
        pool.try_take().map(|p| Admitted(Some(p)))
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

    #[test]
    fn places_given_back_from_many_threads_are_all_free_again() {
        let admission = Arc::new(Admission::new(AdmissionLimits {
            max_connections: 4,
            max_segment_requests: 4,
            max_manifest_requests: 4,
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
}
