//! Where media bytes come from: the `MediaSource` trait and its backends.
//!
//! A source answers three questions about an object named by an [`ObjectKey`]: does it
//! exist and what is its identity (size and version), and what are the bytes in a range.
//! Everything above this module (metadata, packaging, HTTP) reads media only through this
//! trait, so a local folder and an object-store bucket serve byte-identical output.

mod counters;
mod error;
mod identity;
mod interleaved;
mod key;
mod listing;
mod local;
mod media_source;
mod object_store;
mod range;
mod runs;
mod shelf;
mod warm;

#[cfg(test)]
mod conformance;
#[cfg(test)]
mod scratch;

pub use counters::{SourceCounters, SOURCE_READ_SPAN_TARGET};
pub use error::SourceError;
pub use identity::{ObjectIdentity, ObjectVersion};
pub use interleaved::InterleavedReads;
pub use key::{KeyError, ObjectKey};
pub use listing::{ListStream, ListedObject};
pub use local::LocalMediaSource;
pub use media_source::{ByteStream, MediaSource, SourceKind};
pub(crate) use object_store::MAX_OPEN_BYTES;
pub use object_store::{ObjectStoreOptions, ObjectStoreSource, StoreError};
pub use range::{chunk_batches, ByteRange};
pub use runs::OVER_READ_BUDGET_BYTES;
pub use shelf::{Shelf, ShelfError};
