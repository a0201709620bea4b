//! How an object is first opened: the GETs that bring its identity, and what they read.
//!
//! Why: an object asked for the first time needs its identity (size and ETag) and then
//! its `moov`, and each is a store round trip. A GET of the object's first bytes brings
//! the identity as a HEAD would, and those bytes are what the index load reads next
//! (`media::locate`): for a faststart file, `ftyp` and `moov`. So the open is a GET of the
//! head of the object, kept ([`Opened`]) for the reads that follow; a file with `moov` at
//! the end also needs its tail, and a long title's `moov` runs past the head.

use std::sync::Mutex;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use moka::future::Cache;

use crate::source::identity::ObjectIdentity;
use crate::source::key::ObjectKey;
use crate::source::range::ByteRange;

/// Opens whose needs the next opens are sized by.
pub(super) const RECENT: usize = 32;

/// Opens seen before the sizes move from their defaults.
const LEARNED_AFTER: usize = 8;

/// The most an open reads from either end. The caption scan keeps its window inside it
/// (`media::captions`), so the bytes it asks for never push a learned open into a second
/// GET.
pub(crate) const MAX_OPEN_BYTES: u64 = 4 * 1024 * 1024;

/// Sizes learned are rounded up to this.
const ROUNDING: u64 = 64 * 1024;

/// Most bytes of opens kept for the reads that follow them.
const OPENED_KEPT: u64 = 64 * 1024 * 1024;

/// How long an open's bytes wait for the reads that follow (they come within
/// milliseconds: the index load).
const OPENED_FOR: Duration = Duration::from_secs(10);

/// What the reads after one open needed.
#[derive(Debug, Clone, Copy, Default)]
struct Need {
    /// Bytes from the start.
    head: u64,
    /// Bytes at the end (0: none).
    tail: u64,
}

/// What recent opens needed, and the sizes of the next.
#[derive(Debug)]
pub(super) struct OpenShapes {
    /// The configured size of the head (`probe-bytes`); 0 opens with a HEAD.
    head_bytes: u64,
    recent: Mutex<Recent>,
}

#[derive(Debug, Default)]
struct Recent {
    needs: Vec<Need>,
    /// The slot the next open takes.
    next: usize,
    /// Opens since the start.
    seen: u64,
}

/// The GETs of one open: `head` bytes from the start, and `tail` from the end (0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct OpenSizes {
    pub head: u64,
    pub tail: u64,
    /// The open's slot among the recent, where the reads after it note their needs.
    pub slot: usize,
}

impl OpenShapes {
    pub fn new(head_bytes: u64) -> Self {
        Self {
            head_bytes,
            recent: Mutex::new(Recent::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Recent> {
        self.recent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether objects are opened with a GET at all (else a HEAD).
    pub fn reads(&self) -> bool {
        self.head_bytes > 0
    }

    /// The sizes of the next open, which takes a slot to note its needs in.
    pub fn next(&self) -> OpenSizes {
        let mut recent = self.lock();
        let slot = recent.next;
        let need = Need {
            head: self.head_bytes,
            tail: 0,
        };
        match recent.needs.get_mut(slot) {
            Some(old) => *old = need,
            None => recent.needs.push(need),
        }
        recent.next = (slot + 1) % RECENT;
        recent.seen += 1;
        // The needs of the opens before this one (its own is the default just written).
        let learned = (recent.needs.len() > LEARNED_AFTER).then(|| {
            let others: Vec<Need> = (recent.needs.iter().enumerate())
                .filter(|(at, _)| *at != slot)
                .map(|(_, need)| *need)
                .collect();
            let head = percentile_90(others.iter().map(|n| n.head));
            let tails: Vec<u64> = others.iter().map(|n| n.tail).filter(|t| *t > 0).collect();
            let tail = match tails.len() * 10 >= others.len() {
                true => percentile_90(tails.iter().copied()),
                false => 0,
            };
            (head, tail)
        });
        let round = |n: u64| {
            n.div_ceil(ROUNDING)
                .saturating_mul(ROUNDING)
                .min(MAX_OPEN_BYTES)
        };
        let (head, tail) = match learned {
            // Never less than configured; rounded, so small changes do not move the size.
            Some((head, tail)) if head > self.head_bytes => (round(head), round(tail)),
            Some((_, tail)) => (self.head_bytes, round(tail)),
            None => (self.head_bytes, 0),
        };
        OpenSizes {
            head: head.max(self.head_bytes),
            tail,
            slot,
        }
    }

    /// The reads after the open of `slot` needed the first `head` bytes (at least).
    pub fn needed_head(&self, slot: usize, head: u64) {
        if let Some(need) = self.lock().needs.get_mut(slot) {
            need.head = need.head.max(head);
        }
    }

    /// The reads after the open of `slot` needed the last `tail` bytes.
    pub fn needed_tail(&self, slot: usize, tail: u64) {
        if let Some(need) = self.lock().needs.get_mut(slot) {
            need.tail = need.tail.max(tail);
        }
    }
}

/// The 90th percentile of `values` (0 for none).
fn percentile_90(values: impl Iterator<Item = u64>) -> u64 {
    let mut all: Vec<u64> = values.collect();
    all.sort_unstable();
    let at = (all.len() * 9).div_ceil(10).saturating_sub(1);
    all.get(at).copied().unwrap_or(0)
}

/// The bytes one open read: its head, its tail, and its slot among the recent opens.
#[derive(Debug, Clone)]
pub(super) struct Opened {
    pub head: Bytes,
    /// Where the tail starts, and its bytes.
    pub tail: Option<(u64, Bytes)>,
    pub slot: usize,
}

/// The opens kept for the reads that follow them.
#[derive(Debug, Clone)]
pub(super) struct OpenedObjects {
    kept: Cache<(ObjectKey, ObjectIdentity), Opened>,
}

impl Default for OpenedObjects {
    fn default() -> Self {
        Self {
            kept: Cache::builder()
                .max_capacity(OPENED_KEPT)
                .weigher(|_, opened: &Opened| {
                    let tail = opened.tail.as_ref().map_or(0, |(_, t)| t.len());
                    u32::try_from(opened.head.len() + tail).unwrap_or(u32::MAX)
                })
                .time_to_live(OPENED_FOR)
                .build(),
        }
    }
}

/// What an open holds of one range.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Held {
    /// All of it.
    All(Bytes),
    /// Its first bytes (from the head), and where the part to read ends (where the tail
    /// starts, or the range's end), and its last bytes (from the tail, maybe empty).
    Parts {
        start: Bytes,
        read_to: u64,
        end: Bytes,
    },
}

impl OpenedObjects {
    pub async fn keep(&self, key: &ObjectKey, identity: &ObjectIdentity, opened: Opened) {
        self.kept
            .insert((key.clone(), identity.clone()), opened)
            .await;
    }

    /// What the open of the object version holds of `range`, noting in `shapes` what the
    /// read needed; `None` when nothing (no open kept, or a range it does not touch).
    pub async fn take(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        range: ByteRange,
        shapes: &OpenShapes,
    ) -> Option<Held> {
        if range.len == 0 {
            return None;
        }
        let opened = self.kept.get(&(key.clone(), identity.clone())).await?;
        let head_len = opened.head.len() as u64;
        let size = identity.size;
        if range.start <= head_len {
            // The probe, or a `moov` starting in the head (maybe running past it).
            shapes.needed_head(opened.slot, range.end());
        } else if range.end() == size {
            // The tail after `mdat`: `moov` at the end.
            shapes.needed_tail(opened.slot, size - range.start);
        }
        let slice = |bytes: &Bytes, from: u64, to: u64| -> Option<Bytes> {
            let (from, to) = (usize::try_from(from).ok()?, usize::try_from(to).ok()?);
            bytes.get(from..to).map(|_| bytes.slice(from..to))
        };
        let start = match range.start < head_len {
            true => slice(&opened.head, range.start, range.end().min(head_len))?,
            false => Bytes::new(),
        };
        let (tail_at, tail) = match &opened.tail {
            Some((at, tail)) if range.end() > *at && range.start < size => (*at, Some(tail)),
            _ => (range.end(), None),
        };
        let end = match tail {
            Some(tail) => {
                let from = range.start.max(tail_at);
                slice(tail, from - tail_at, range.end() - tail_at)?
            }
            None => Bytes::new(),
        };
        let covered_to = range.start + start.len() as u64;
        let read_to = match tail {
            Some(_) => tail_at.max(covered_to),
            None => range.end(),
        };
        if covered_to >= read_to {
            // Head and tail together hold the whole range.
            let whole = match (start.is_empty(), end.is_empty()) {
                (false, true) => start,
                (true, false) => end,
                _ => {
                    let mut both = BytesMut::with_capacity(range.len as usize);
                    both.extend_from_slice(&start);
                    both.extend_from_slice(&end);
                    both.freeze()
                }
            };
            return (whole.len() as u64 == range.len).then_some(Held::All(whole));
        }
        if start.is_empty() && end.is_empty() {
            return None;
        }
        Some(Held::Parts {
            start,
            read_to,
            end,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version() -> (ObjectKey, ObjectIdentity) {
        let key = ObjectKey::parse("a.mp4").expect("key");
        let identity = ObjectIdentity {
            size: 1000,
            version: "\"a\"".into(),
        };
        (key, identity)
    }

    fn bytes(from: u64, to: u64) -> Bytes {
        (from..to)
            .map(|i| (i % 251) as u8)
            .collect::<Vec<u8>>()
            .into()
    }

    /// Given an open that read bytes 0..100 and 900..1000, when the reads that follow ask
    /// for ranges in, across and between them, then each is answered from memory where it
    /// can be, and what is left to read is exactly the bytes neither holds.
    #[tokio::test]
    async fn an_opens_head_and_tail_answer_the_reads_that_follow() {
        let (key, identity) = version();
        let opened = OpenedObjects::default();
        let shapes = OpenShapes::new(100);
        let slot = shapes.next().slot;
        let kept = Opened {
            head: bytes(0, 100),
            tail: Some((900, bytes(900, 1000))),
            slot,
        };
        opened.keep(&key, &identity, kept).await;
        let take = |from: u64, to: u64| {
            let (opened, key, identity, shapes) = (&opened, &key, &identity, &shapes);
            async move { (opened.take(key, identity, ByteRange::new(from, to - from), shapes)).await }
        };
        assert_eq!(take(0, 100).await, Some(Held::All(bytes(0, 100))));
        assert_eq!(take(950, 1000).await, Some(Held::All(bytes(950, 1000))));
        assert_eq!(
            take(50, 300).await,
            Some(Held::Parts {
                start: bytes(50, 100),
                read_to: 300,
                end: Bytes::new()
            })
        );
        assert_eq!(
            take(800, 1000).await,
            Some(Held::Parts {
                start: Bytes::new(),
                read_to: 900,
                end: bytes(900, 1000)
            })
        );
        assert_eq!(take(300, 400).await, None);
    }

    /// Given a catalogue where most files have `moov` at the end (about 300 KB of tail)
    /// and one in five a head of 700 KB, when objects are opened, then after a few opens the
    /// head covers the long heads and the tail is read too; a catalogue of faststart files
    /// keeps the configured head and no tail.
    #[test]
    fn open_sizes_follow_what_recent_opens_needed() {
        let shapes = OpenShapes::new(256 * 1024);
        for i in 0..20 {
            let open = shapes.next();
            if i < LEARNED_AFTER {
                assert_eq!((open.head, open.tail), (256 * 1024, 0));
            }
            shapes.needed_tail(open.slot, 300_000);
            if i % 5 == 0 {
                shapes.needed_head(open.slot, 700_000);
            }
        }
        let open = shapes.next();
        assert_eq!(open.head, 11 * ROUNDING, "700 KB rounded up");
        assert_eq!(open.tail, 5 * ROUNDING, "300 KB rounded up");
        let faststart = OpenShapes::new(256 * 1024);
        for _ in 0..40 {
            let open = faststart.next();
            faststart.needed_head(open.slot, 90_000);
        }
        let open = faststart.next();
        assert_eq!((open.head, open.tail), (256 * 1024, 0));
    }
}
