//! The index tiers under the memory cache: where a title's parsed index is looked for
//! before its `moov` is read, and kept after: memory, then the disk tier
//! (`--index-cache-dir`, kept across restarts), then the store tier
//! (`--index-cache-prefix`, shared by replicas), then the `moov`. A load writes the tiers
//! below the one it came from, after the answer. An index object is named by the object's
//! key, size and version, so a replaced file never meets an old index; what is read back
//! is checked in full (`media::decode_index`), and one that fails is counted
//! (`vod_index_rejected`), rebuilt and written again, never served.

use std::sync::Arc;

use sha2::{Digest, Sha256};
use tracing::Instrument;

use super::cached::{CachedTitle, OFFSETS_AFTER};
use crate::media::INDEX_FORMAT;
use crate::media::{decode_index, encode_index, max_index_bytes, MediaIndex, MediaLimits};
use crate::source::{ObjectIdentity, ObjectKey, Shelf, ShelfError};
use crate::telemetry::Metrics;
use prometheus_client::metrics::counter::Counter;

/// Where a title's index came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// The catalog's memory cache.
    Memory,
    /// This replica's folder.
    Disk,
    /// The object-store prefix every replica shares.
    Store,
    /// Parsed from the `moov` read from the source.
    Moov,
}

impl Tier {
    /// The metric label and log word.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Memory => "memory",
            Tier::Disk => "disk",
            Tier::Store => "store",
            Tier::Moov => "moov",
        }
    }
}

/// The shelves of the two tiers, as startup opens them from the settings.
#[derive(Debug, Default)]
pub struct IndexShelves {
    /// `--index-cache-dir`.
    pub disk: Option<Shelf>,
    /// `--index-cache-prefix`.
    pub store: Option<Shelf>,
}

/// What a tier says of one title, for `inspect`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TierHolding {
    /// `disk` or `store`.
    pub tier: &'static str,
    /// The folder or URL.
    pub place: String,
    /// `holds`, `absent`, or why its object would not be used.
    pub state: String,
}

/// An index found in a tier, and the tiers above the source that lack it.
pub struct Found {
    /// The index, checked.
    pub index: MediaIndex,
    /// Where it was found.
    pub tier: Tier,
    /// The tiers looked in before it that did not hold a sound one.
    pub missing: Vec<Tier>,
}

/// The disk and store tiers of one catalog.
#[derive(Debug)]
pub struct IndexTiers {
    disk: Option<Arc<Shelf>>,
    store: Option<Arc<Shelf>>,
    metrics: Arc<Metrics>,
    /// The `vod_index_loads_total` series by tier, held so that a memory hit (every
    /// cached answer) costs an increment, not a lookup in the family.
    loads: [Counter; 4],
}

impl IndexTiers {
    /// Tiers over `shelves`, counted in `metrics`.
    pub fn new(shelves: IndexShelves, metrics: Arc<Metrics>) -> Self {
        let loads = [Tier::Memory, Tier::Disk, Tier::Store, Tier::Moov]
            .map(|tier| metrics.index_load_series(tier.as_str()));
        Self {
            disk: shelves.disk.map(Arc::new),
            store: shelves.store.map(Arc::new),
            metrics,
            loads,
        }
    }

    /// Whether there is a tier at all.
    pub fn any(&self) -> bool {
        self.disk.is_some() || self.store.is_some()
    }

    /// Count a load from `tier`.
    pub fn count(&self, tier: Tier) {
        let series = match tier {
            Tier::Memory => &self.loads[0],
            Tier::Disk => &self.loads[1],
            Tier::Store => &self.loads[2],
            Tier::Moov => &self.loads[3],
        };
        series.inc();
    }

    fn shelves(&self) -> impl Iterator<Item = (Tier, &Arc<Shelf>)> {
        let disk = self.disk.iter().map(|s| (Tier::Disk, s));
        disk.chain(self.store.iter().map(|s| (Tier::Store, s)))
    }

    /// The index of `key` at `identity` from the first tier that holds a sound one, with
    /// the tiers before it that lacked it.
    ///
    /// # Errors
    /// Every tier that lacks a sound one (empty without tiers): the `moov` must be read.
    pub async fn find(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        limits: &MediaLimits,
    ) -> Result<Found, Vec<Tier>> {
        if !self.any() {
            return Err(Vec::new());
        }
        let name = object_name(key, identity);
        let mut missing = Vec::new();
        for (tier, shelf) in self.shelves() {
            let read = shelf
                .get(&name, max_index_bytes(limits))
                .instrument(tracing::info_span!("index.read", vod.tier = tier.as_str()))
                .await;
            let bytes = match read {
                Ok(Some(bytes)) => bytes,
                Ok(None) => {
                    missing.push(tier);
                    continue;
                }
                Err(e @ ShelfError::TooLarge { .. }) => {
                    self.reject(tier, key, &e.to_string());
                    missing.push(tier);
                    continue;
                }
                Err(e) => {
                    // The folder or store failed, not the object: not a rejection.
                    tracing::warn!(vod.key = %key, vod.tier = tier.as_str(), error = %e, "index tier unreadable; the title is loaded from its moov");
                    missing.push(tier);
                    continue;
                }
            };
            let (key2, identity2, limits2) = (key.clone(), identity.clone(), *limits);
            let decoded = tokio::task::spawn_blocking(move || {
                decode_index(&bytes, &key2, &identity2, &limits2)
            })
            .await;
            match decoded {
                Ok(Ok(index)) => {
                    return Ok(Found {
                        index,
                        tier,
                        missing,
                    })
                }
                Ok(Err(e)) => self.reject(tier, key, &e.to_string()),
                Err(e) => self.reject(tier, key, &e.to_string()),
            }
            missing.push(tier);
        }
        Err(missing)
    }

    fn reject(&self, tier: Tier, key: &ObjectKey, reason: &str) {
        tracing::warn!(
            vod.key = %key,
            vod.tier = tier.as_str(),
            reason,
            "index object not used; the title is loaded from its moov and the index rewritten"
        );
        self.metrics.index_rejected(tier.as_str());
    }

    /// Write the index of `cached` (the title of `key`) to the tiers in `missing`, in the
    /// background.
    pub fn keep(&self, key: &ObjectKey, cached: &Arc<CachedTitle>, missing: Vec<Tier>) {
        let shelves: Vec<(Tier, Arc<Shelf>)> = (self.shelves())
            .filter(|(tier, _)| missing.contains(tier))
            .map(|(tier, shelf)| (tier, shelf.clone()))
            .collect();
        if shelves.is_empty() {
            return;
        }
        let (key, cached, metrics) = (key.clone(), cached.clone(), self.metrics.clone());
        let identity = cached.title.index.identity.clone();
        let name = object_name(&key, &identity);
        let write = async move {
            // After the first answer, as the offsets are worked out (`cached.rs`).
            tokio::time::sleep(OFFSETS_AFTER).await;
            let encoded = {
                let key = key.clone();
                tokio::task::spawn_blocking(move || encode_index(&key, &cached.title.index)).await
            };
            let Ok(bytes) = encoded else { return };
            let bytes = bytes::Bytes::from(bytes);
            for (tier, shelf) in shelves {
                if let Err(e) = shelf.put(&name, bytes.clone()).await {
                    tracing::warn!(vod.key = %key, vod.tier = tier.as_str(), error = %e, "index not kept");
                    metrics.index_write_failed(tier.as_str());
                }
            }
        };
        tokio::spawn(write.instrument(tracing::info_span!("index.keep")));
    }

    /// What each tier holds for `key` at `identity`, read and checked as a load would.
    pub async fn holding(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        limits: &MediaLimits,
    ) -> Vec<TierHolding> {
        let name = object_name(key, identity);
        let mut out = Vec::new();
        for (tier, shelf) in self.shelves() {
            let state = match shelf.get(&name, max_index_bytes(limits)).await {
                Ok(None) => "absent".to_owned(),
                Ok(Some(bytes)) => match decode_index(&bytes, key, identity, limits) {
                    Ok(_) => "holds".to_owned(),
                    Err(e) => format!("unusable: {e}"),
                },
                Err(ShelfError::TooLarge { size, max }) => {
                    format!("unusable: {size} bytes, over {max}")
                }
                Err(e) => format!("unreadable: {e}"),
            };
            out.push(TierHolding {
                tier: tier.as_str(),
                place: shelf.describe(),
                state,
            });
        }
        out
    }
}

/// The name of the index object of `key` at `identity`: the format, then a digest of the
/// three (flat, and the same on every replica).
pub fn object_name(key: &ObjectKey, identity: &ObjectIdentity) -> String {
    let mut digest = Sha256::new();
    for part in [
        key.as_str().as_bytes(),
        &identity.size.to_be_bytes(),
        identity.version.as_bytes(),
    ] {
        digest.update(part);
        digest.update([0]);
    }
    let hex: String = (digest.finalize().iter().take(16))
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("v{INDEX_FORMAT}-{hex}.vpix")
}
