//! The identities of objects (size and ETag) as the source hands them out: reused, checked
//! in the background, forgotten.
//!
//! Why: an identity is needed before every answer, and asking the store costs a round
//! trip. So an identity is reused for `ttl` after it was last confirmed (any GET that
//! carried it in `If-Match` confirms it), then for `max_stale` more handed out at once while
//! one HEAD checks it in the background, and past that asked for again. A replaced object
//! is seen within `ttl` plus one round trip while it is asked for; a read of the old
//! version still fails with `Changed`, never mixing versions.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use moka::future::Cache;
// tokio's clock (the system's, but for tests that pause it): how old an identity is.
use tokio::time::Instant;

use crate::source::identity::ObjectIdentity;
use crate::source::key::ObjectKey;

/// Object identities remembered at most (each a key, a size and an ETag).
const IDENTITY_CACHE_ENTRIES: u64 = 100_000;

/// An identity as last confirmed.
#[derive(Debug)]
pub(super) struct Known {
    pub identity: ObjectIdentity,
    checked: Mutex<Instant>,
    /// A background check is under way.
    checking: AtomicBool,
}

impl Known {
    pub fn new(identity: ObjectIdentity) -> Arc<Self> {
        Arc::new(Self {
            identity,
            checked: Mutex::new(Instant::now()),
            checking: AtomicBool::new(false),
        })
    }

    fn checked(&self) -> Instant {
        *self
            .checked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The store has just confirmed this identity.
    pub fn confirm(&self) {
        *self
            .checked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Instant::now();
    }

    /// Claim the one background check of this identity; false when one is under way.
    pub fn start_check(&self) -> bool {
        !self.checking.swap(true, Ordering::AcqRel)
    }

    pub fn end_check(&self) {
        self.checking.store(false, Ordering::Release);
    }
}

/// How a known identity may be used now.
#[derive(Debug)]
pub(super) enum Freshness {
    /// Within `ttl`: use it, until the instant given.
    Fresh(Option<std::time::Instant>),
    /// Within `max_stale` after that: use it, and check it in the background.
    Stale,
    /// Older: ask the store before using it.
    Expired,
}

/// The identities one source hands out.
#[derive(Debug, Clone)]
pub(super) struct Identities {
    pub known: Cache<ObjectKey, Arc<Known>>,
    ttl: Duration,
    max_stale: Duration,
    /// Identities dropped or replaced before their reuse ended (`MediaSource::identity_epoch`).
    epoch: Arc<AtomicU64>,
}

impl Identities {
    /// Identities reused for `ttl`, then handed out while checked for `max_stale`.
    pub fn new(ttl: Duration, max_stale: Duration) -> Self {
        Self {
            known: Cache::builder()
                .max_capacity(IDENTITY_CACHE_ENTRIES)
                // Nothing is used past both windows: let it go then.
                .time_to_idle(ttl.saturating_add(max_stale).max(Duration::from_secs(1)))
                .build(),
            ttl,
            max_stale,
            epoch: Arc::new(AtomicU64::new(0)),
        }
    }

    /// How `known` may be used at `now`.
    pub fn freshness(&self, known: &Known, now: Instant) -> Freshness {
        let checked = known.checked();
        let age = now.saturating_duration_since(checked);
        if age < self.ttl {
            Freshness::Fresh(checked.checked_add(self.ttl).map(Instant::into_std))
        } else if age < self.ttl.saturating_add(self.max_stale) {
            Freshness::Stale
        } else {
            Freshness::Expired
        }
    }

    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Something kept for an identity must go: move the epoch.
    pub fn move_epoch(&self) {
        self.epoch.fetch_add(1, Ordering::Release);
    }

    /// A read with `identity` in `If-Match` succeeded: it is still the object's.
    pub async fn confirm(&self, key: &ObjectKey, identity: &ObjectIdentity) {
        if let Some(known) = self.known.get(key).await {
            if known.identity == *identity {
                known.confirm();
            }
        }
    }

    /// A background check of `key` found `found` (`None`: no such object any more).
    pub async fn checked(&self, key: &ObjectKey, known: &Known, found: Option<ObjectIdentity>) {
        match found {
            Some(identity) if identity == known.identity => known.confirm(),
            Some(identity) => {
                self.known.insert(key.clone(), Known::new(identity)).await;
                self.move_epoch();
            }
            None => {
                self.known.invalidate(key).await;
                self.move_epoch();
            }
        }
    }

    /// Forget `key`'s identity: the next request asks the store.
    pub async fn forget(&self, key: &ObjectKey) {
        self.known.invalidate(key).await;
        self.move_epoch();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(version: &str) -> ObjectIdentity {
        ObjectIdentity {
            size: 100,
            version: version.into(),
        }
    }

    /// Given an identity confirmed now, when time passes, then it is fresh for `ttl`,
    /// stale (handed out, checked) for `max_stale` after that, then expired.
    #[test]
    fn an_identity_is_fresh_then_stale_then_expired() {
        let ids = Identities::new(Duration::from_secs(1), Duration::from_secs(60));
        let known = Known::new(identity("\"a\""));
        let now = Instant::now();
        assert!(matches!(
            ids.freshness(&known, now),
            Freshness::Fresh(Some(_))
        ));
        let later = |secs| now + Duration::from_secs(secs);
        assert!(matches!(ids.freshness(&known, later(2)), Freshness::Stale));
        assert!(matches!(
            ids.freshness(&known, later(62)),
            Freshness::Expired
        ));
        known.confirm();
        assert!(matches!(
            ids.freshness(&known, Instant::now()),
            Freshness::Fresh(_)
        ));
    }

    /// Given a background check that finds another version, then the identity is
    /// replaced and the epoch moves; one that finds the same keeps it and the epoch.
    #[tokio::test]
    async fn a_check_that_finds_a_new_version_replaces_it_and_moves_the_epoch() {
        let ids = Identities::new(Duration::from_secs(1), Duration::from_secs(60));
        let key = ObjectKey::parse("a.mp4").expect("key");
        let known = Known::new(identity("\"a\""));
        ids.known.insert(key.clone(), known.clone()).await;
        ids.checked(&key, &known, Some(identity("\"a\""))).await;
        assert_eq!(ids.epoch(), 0);
        ids.checked(&key, &known, Some(identity("\"b\""))).await;
        assert_eq!(ids.epoch(), 1);
        let now = ids.known.get(&key).await.expect("known");
        assert_eq!(now.identity, identity("\"b\""));
    }
}
