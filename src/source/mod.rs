//! Where media bytes come from: the `MediaSource` trait and its backends.
//!
//! A source answers three questions about an object named by an [`ObjectKey`]: does it
//! exist and what is its identity (size and version), and what are the bytes in a range.
//! Everything above this module (metadata, packaging, HTTP) reads media only through this
//! trait, so a local folder and an object-store bucket serve byte-identical output.
//!
//! Contract every backend keeps:
//! - reads are checked against the identity the caller got from [`MediaSource::identify`]:
//!   if the object changed since, the read fails with [`SourceError::Changed`] rather than
//!   return bytes of a different version;
//! - a range past the end of the object is [`SourceError::OutOfRange`], never a short read;
//! - nothing blocks a runtime worker (the local backend reads on the blocking pool);
//! - every read is counted in [`SourceCounters`] (`vod_source_read_bytes_total`, ...), and
//!   bytes read but not passed on (gaps a backend reads through to save a request) in
//!   `vod_source_over_read_bytes_total`.
//!
//! Backends: [`LocalMediaSource`] (a folder) and [`ObjectStoreSource`] (S3-compatible
//! buckets, GCS, Azure and plain HTTP through the `object_store` crate).

mod counters;
mod interleaved;
mod key;
mod listing;
mod local;
mod nowait;
mod object_store;
mod runs;
mod warm;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::BoxStream;

pub use counters::{SourceCounters, SOURCE_READ_SPAN_TARGET};
pub use interleaved::InterleavedReads;
pub use key::{KeyError, ObjectKey};
pub use listing::{ListStream, ListedObject};
pub use local::LocalMediaSource;
pub use object_store::{ObjectStoreOptions, ObjectStoreSource, StoreError, OVER_READ_BUDGET_BYTES};

/// A half-open byte range `[start, start + len)` of an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ByteRange {
    /// First byte offset in the object.
    pub start: u64,
    /// Number of bytes.
    pub len: u64,
}

impl ByteRange {
    /// The range `[start, start + len)`.
    pub fn new(start: u64, len: u64) -> Self {
        Self { start, len }
    }

    /// One past the last byte, saturating (a range never wraps).
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.len)
    }
}

impl fmt::Display for ByteRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bytes {}-{}", self.start, self.end().saturating_sub(1))
    }
}

/// What identifies one version of an object: its size, and a version string that changes
/// whenever the content does (a local file's mtime, a bucket's ETag).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectIdentity {
    /// Object size in bytes.
    pub size: u64,
    /// Opaque version: `m<mtime nanos>` for local files, the ETag for buckets.
    pub version: String,
}

/// The kind of a source, a label on every counter and span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// A folder on local disk.
    Local,
    /// An object store (S3-compatible, GCS, Azure, HTTP).
    ObjectStore,
}

impl SourceKind {
    /// The label used in metrics and traces.
    pub fn as_str(&self) -> &'static str {
        match self {
            SourceKind::Local => "local",
            SourceKind::ObjectStore => "object_store",
        }
    }
}

/// Why a source could not answer.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// No object under this key.
    #[error("no object at key {key}")]
    NotFound { key: String },
    /// The key resolves outside the source root (a symlink leaving it, for example).
    #[error("key {key} resolves outside the source root")]
    OutsideRoot { key: String },
    /// The object changed (size or version) since its identity was taken.
    #[error("object {key} changed while being read")]
    Changed { key: String },
    /// The range asked for does not lie inside the object.
    #[error("{range} is outside object {key} of {size} bytes")]
    OutOfRange {
        key: String,
        range: ByteRange,
        size: u64,
    },
    /// The source could not be reached or refused us (connection, permission).
    #[error("source unreachable for {key}: {reason}")]
    Unreachable { key: String, reason: String },
    /// The source did not answer in time.
    #[error("source timed out for {key}")]
    Timeout { key: String },
    /// A read asked for more than the configured limit allows at once.
    #[error("read of {len} bytes from {key} exceeds the limit of {limit}")]
    TooLarge { key: String, len: u64, limit: u64 },
    /// Any other I/O failure.
    #[error("i/o error reading {key}: {source}")]
    Io {
        key: String,
        #[source]
        source: std::io::Error,
    },
}

/// An identity a source reuses within its identity window, and the end of that reuse.
#[derive(Debug, Clone)]
pub(crate) struct KnownIdentity {
    pub identity: ObjectIdentity,
    /// `None` past what an `Instant` can hold: then nothing is kept for it.
    pub until: Option<std::time::Instant>,
}

/// A stream of byte chunks, as produced by [`MediaSource::stream_ranges`].
pub type ByteStream = BoxStream<'static, Result<Bytes, SourceError>>;

/// Ranged reads of media objects. See the module documentation for the contract.
#[async_trait]
pub trait MediaSource: Send + Sync + 'static {
    /// The kind of this source (a metrics label).
    fn kind(&self) -> SourceKind;

    /// The counters this source updates.
    fn counters(&self) -> &Arc<SourceCounters>;

    /// Whether the source can be reached now, for readiness (`/readyz`). The default says
    /// yes; backends that can be down check cheaply.
    ///
    /// # Errors
    /// The error that makes the source unusable now.
    async fn check_ready(&self) -> Result<(), SourceError> {
        Ok(())
    }

    /// The objects under the folder `prefix` (empty: all), after the key `after`, in the
    /// byte order of their keys, streamed as the backend lists them (source/listing.rs).
    /// Used by `vodpack check` and the preview page, never to serve media. The default
    /// lists nothing and says so.
    fn list(self: Arc<Self>, prefix: String, after: Option<String>) -> ListStream {
        let _ = (prefix, after);
        listing::unsupported()
    }

    /// The current identity of the object under `key`.
    ///
    /// # Errors
    /// [`SourceError::NotFound`] when there is no such object; transport errors otherwise.
    async fn identify(&self, key: &ObjectKey) -> Result<ObjectIdentity, SourceError>;

    /// A number that changes whenever the source stops reusing an identity before its
    /// window ends (an object found changed under a read). Whatever was kept for an
    /// identity (server::answers) is dropped when it changes. The default never changes.
    fn identity_epoch(&self) -> u64 {
        0
    }

    /// [`MediaSource::identify`], with the instant until which the source gives this answer
    /// again without asking the storage (its identity window), or `None` when every call
    /// asks. A replaced object is seen from that instant on, so nothing kept for the
    /// answer (server::answers) may outlive it. The default asks every time.
    ///
    /// # Errors
    /// As [`MediaSource::identify`].
    async fn identify_until(
        &self,
        key: &ObjectKey,
    ) -> Result<(ObjectIdentity, Option<std::time::Instant>), SourceError> {
        Ok((self.identify(key).await?, None))
    }

    /// The bytes of `range` of the object version `identity`.
    ///
    /// # Errors
    /// [`SourceError::Changed`] when the object is no longer that version,
    /// [`SourceError::OutOfRange`] when the range does not fit, transport errors otherwise.
    async fn read_range(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        range: ByteRange,
    ) -> Result<Bytes, SourceError>;

    /// The bytes of each range, in order: one coalesced batch. Backends may issue the
    /// reads concurrently; callers have already merged adjacent ranges.
    ///
    /// # Errors
    /// As [`MediaSource::read_range`]; the first failure fails the batch.
    async fn read_ranges(
        &self,
        key: &ObjectKey,
        identity: &ObjectIdentity,
        ranges: &[ByteRange],
    ) -> Result<Vec<Bytes>, SourceError>;

    /// The bytes of `ranges`, concatenated in order, as a stream of chunks of at most
    /// `chunk_bytes`, read as the consumer pulls, so a slow client holds at most a few
    /// chunks in memory. Each chunk may span several ranges (one batch of reads).
    fn stream_ranges(
        self: Arc<Self>,
        key: ObjectKey,
        identity: ObjectIdentity,
        ranges: Vec<ByteRange>,
        chunk_bytes: usize,
    ) -> ByteStream;
}

/// Largest read a backend buffers at once, a guard against absurd ranges.
pub(crate) const MAX_READ_BYTES: u64 = 256 * 1024 * 1024;

/// Check that every range lies inside the object version `identity` and, with `limit`,
/// that together they fit in it. Returns their total length.
///
/// # Errors
/// [`SourceError::OutOfRange`] for a range past the end, [`SourceError::TooLarge`] over
/// `limit`.
pub(crate) fn check_ranges(
    key: &ObjectKey,
    identity: &ObjectIdentity,
    ranges: &[ByteRange],
    limit: Option<u64>,
) -> Result<u64, SourceError> {
    let mut total = 0u64;
    for range in ranges {
        if range
            .start
            .checked_add(range.len)
            .is_none_or(|end| end > identity.size)
        {
            return Err(SourceError::OutOfRange {
                key: key.to_string(),
                range: *range,
                size: identity.size,
            });
        }
        total = total.saturating_add(range.len);
    }
    if let Some(limit) = limit.filter(|limit| total > *limit) {
        return Err(SourceError::TooLarge {
            key: key.to_string(),
            len: total,
            limit,
        });
    }
    Ok(total)
}

/// Split `ranges` into batches of at most `chunk_bytes` bytes in total, cutting a range
/// across two batches where needed. Every byte of `ranges` is in exactly one batch, in order.
pub fn chunk_batches(ranges: &[ByteRange], chunk_bytes: usize) -> Vec<Vec<ByteRange>> {
    let limit = chunk_bytes.max(1) as u64;
    let mut batches: Vec<Vec<ByteRange>> = Vec::new();
    let mut current: Vec<ByteRange> = Vec::new();
    let mut filled = 0u64;
    for range in ranges {
        let mut rest = *range;
        while rest.len > 0 {
            let take = rest.len.min(limit - filled);
            current.push(ByteRange::new(rest.start, take));
            filled += take;
            rest = ByteRange::new(rest.start + take, rest.len - take);
            if filled == limit {
                batches.push(std::mem::take(&mut current));
                filled = 0;
            }
        }
    }
    if !current.is_empty() {
        batches.push(current);
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_cover_every_byte_in_order_within_the_limit() {
        let ranges = [
            ByteRange::new(0, 5),
            ByteRange::new(100, 12),
            ByteRange::new(200, 1),
        ];
        let batches = chunk_batches(&ranges, 8);
        assert!(batches
            .iter()
            .all(|b| b.iter().map(|r| r.len).sum::<u64>() <= 8));
        let flat: Vec<ByteRange> = batches.concat();
        let mut bytes = Vec::new();
        for r in &flat {
            bytes.extend(r.start..r.end());
        }
        let mut expected = Vec::new();
        for r in &ranges {
            expected.extend(r.start..r.end());
        }
        assert_eq!(bytes, expected);
        assert_eq!(batches.len(), 3);
    }
}
