//! The identities of objects (size and ETag) as the source hands them out, and the first
//! bytes of objects just opened.
//!
//! Why: an identity is needed before every answer (it names the version folder and every
//! read's `If-Match`), and asking the store costs a round trip. So:
//! - an identity is reused as it is for `ttl` after it was last confirmed (by a HEAD, or
//!   by any GET that carried it in `If-Match` and succeeded: a title being played keeps
//!   its identity fresh at no cost);
//! - past that, for `max_stale` more, it is still handed out at once while one HEAD checks
//!   it in the background: a warm answer never waits on the store. A changed object found
//!   by that check replaces the identity and moves the epoch, which drops what was kept for
//!   the old one (`server::held`); a read of the old version still fails with `Changed`,
//!   never mixing versions (`If-Match`);
//! - past that, the request asks and waits, as for an object never seen.
//!
//! So a replaced object is seen within `ttl` plus one store round trip while it is being
//! asked for, and within `ttl + max_stale` at worst.
//!
//! An object never seen is opened with a GET of its first `open_bytes`, not a HEAD: the
//! answer carries the size and ETag too, in the same round trip, and the bytes are what
//! the next read asks for (the `ftyp` and `moov` of a faststart file). They are kept a
//! short while ([`FirstBytes`]), bounded in bytes, for that read.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use moka::future::Cache;
// tokio's clock (the system's, but for tests that pause it): how old an identity is.
use tokio::time::Instant;

use crate::source::identity::ObjectIdentity;
use crate::source::key::ObjectKey;
use crate::source::range::ByteRange;

/// Object identities remembered at most (each a key, a size and an ETag).
const IDENTITY_CACHE_ENTRIES: u64 = 100_000;

/// Most bytes of first reads kept for the read that follows them.
const FIRST_BYTES_KEPT: u64 = 64 * 1024 * 1024;

/// How long first bytes wait for the read that follows (it comes within milliseconds).
const FIRST_BYTES_FOR: Duration = Duration::from_secs(30);

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

/// The first bytes of objects just opened, kept for the read that follows.
#[derive(Debug, Clone)]
pub(super) struct FirstBytes {
    kept: Cache<(ObjectKey, ObjectIdentity), Bytes>,
}

impl Default for FirstBytes {
    fn default() -> Self {
        Self {
            kept: Cache::builder()
                .max_capacity(FIRST_BYTES_KEPT)
                .weigher(|_, bytes: &Bytes| u32::try_from(bytes.len()).unwrap_or(u32::MAX))
                .time_to_live(FIRST_BYTES_FOR)
                .build(),
        }
    }
}

/// What the first bytes of an object give of one range.
#[derive(Debug)]
pub(super) enum Held {
    /// All of it.
    All(Bytes),
    /// Its beginning, up to the end of the first bytes.
    Start(Bytes),
}

impl FirstBytes {
    pub async fn keep(&self, key: &ObjectKey, identity: &ObjectIdentity, bytes: Bytes) {
        if !bytes.is_empty() {
            self.kept
                .insert((key.clone(), identity.clone()), bytes)
                .await;
        }
    }

    /// What is kept of `range` of the object version. The first bytes are let go once a
    /// read has taken their last byte: that read (the probe of `moov`) comes once.
    pub async fn take(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        range: ByteRange,
    ) -> Option<Held> {
        let version = (key.clone(), identity.clone());
        let first = self.kept.get(&version).await?;
        let len = first.len() as u64;
        if range.start >= len || range.len == 0 {
            return None;
        }
        let end = range.end().min(len);
        if end == len {
            self.kept.invalidate(&version).await;
        }
        // start < end <= len, a usize.
        let bytes = first.slice(range.start as usize..end as usize);
        Some(match range.end() <= len {
            true => Held::All(bytes),
            false => Held::Start(bytes),
        })
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

    /// Given the first 10 bytes kept, when a read asks for bytes 2..6, then 8..14, then
    /// they come from memory (all, then the start), and the second read lets them go.
    #[tokio::test]
    async fn first_bytes_serve_the_read_that_follows_then_go() {
        let first = FirstBytes::default();
        let (key, id) = (ObjectKey::parse("a.mp4").expect("key"), identity("\"a\""));
        first
            .keep(&key, &id, Bytes::from_static(b"0123456789"))
            .await;
        match first.take(&key, &id, ByteRange::new(2, 4)).await {
            Some(Held::All(b)) => assert_eq!(&b[..], b"2345"),
            other => panic!("{other:?}"),
        }
        match first.take(&key, &id, ByteRange::new(8, 6)).await {
            Some(Held::Start(b)) => assert_eq!(&b[..], b"89"),
            other => panic!("{other:?}"),
        }
        assert!(first.take(&key, &id, ByteRange::new(0, 1)).await.is_none());
        assert!(first
            .take(&key, &identity("\"b\""), ByteRange::new(0, 1))
            .await
            .is_none());
    }
}
