//! The `MediaSource` trait, the one way anything above `source` reads media, and the words
//! it speaks besides ranges and identities: a source's kind and its byte streams.
//!
//! The contract every implementation keeps (versions never mixed, no short reads, nothing
//! blocking a runtime worker, every read counted) is written once, in the `source` module
//! documentation; `conformance.rs` holds the stories that check it against each backend.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::BoxStream;

use super::counters::SourceCounters;
use super::error::SourceError;
use super::identity::ObjectIdentity;
use super::key::ObjectKey;
use super::listing::{self, ListStream};
use super::range::ByteRange;

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

/// A stream of byte chunks, as produced by [`MediaSource::stream_ranges`].
pub type ByteStream = BoxStream<'static, Result<Bytes, SourceError>>;

/// Ranged reads of media objects. The contract every backend keeps is in the `source`
/// module documentation.
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
    /// identity (server::held) is dropped when it changes. The default never changes.
    fn identity_epoch(&self) -> u64 {
        0
    }

    /// [`MediaSource::identify`], with the instant until which the source gives this answer
    /// again without asking the storage (its identity window), or `None` when every call
    /// asks. A replaced object is seen from that instant on, so nothing kept for the
    /// answer (server::held) may outlive it. The default asks every time.
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
