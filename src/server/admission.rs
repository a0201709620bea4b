//! Admission: caps on connections and on requests in flight, decided before any source read.
//!
//! Requests fall in three classes with separate limits, so a storm of segment requests
//! after a CDN purge cannot starve playlists (which players need to keep going) and
//! neither can starve health checks and metrics (never shed). A request over its class's
//! limit is shed at once with 503 and `Retry-After`, costing no read and no parse. A
//! segment's permit is held until its body has been streamed, so the segment limit bounds
//! the streams in flight and with them the memory they hold.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

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
    connections: Arc<Semaphore>,
    segments: Arc<Semaphore>,
    manifests: Arc<Semaphore>,
}

/// A request admitted: hold it for as long as the request (and its body) runs.
#[derive(Debug)]
pub struct Admitted(#[allow(dead_code)] Option<OwnedSemaphorePermit>);

impl Admission {
    /// Admission with `limits`.
    pub fn new(limits: AdmissionLimits) -> Self {
        Self {
            connections: Arc::new(Semaphore::new(limits.max_connections.max(1))),
            segments: Arc::new(Semaphore::new(limits.max_segment_requests.max(1))),
            manifests: Arc::new(Semaphore::new(limits.max_manifest_requests.max(1))),
        }
    }

    /// Admit a request of `class`, or `None` when its class is at its limit (shed it).
    pub fn admit(&self, class: RequestClass) -> Option<Admitted> {
        let pool = match class {
            RequestClass::Segment => &self.segments,
            RequestClass::Manifest => &self.manifests,
            RequestClass::Control => return Some(Admitted(None)),
        };
        pool.clone()
            .try_acquire_owned()
            .ok()
            .map(|p| Admitted(Some(p)))
    }

    /// Admit a connection, or `None` when the connection cap is reached. Hold the permit
    /// for the connection's life.
    pub fn admit_connection(&self) -> Option<OwnedSemaphorePermit> {
        self.connections.clone().try_acquire_owned().ok()
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
    }
}
