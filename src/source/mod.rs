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
//! buckets, GCS, Azure and plain HTTP through the `object_store` crate). Both run the one
//! conformance suite of this contract (`conformance.rs`).
//!
//! Layout, each file importing only files listed before it: `key.rs`, `range.rs`,
//! `error.rs`, `identity.rs` and `counters.rs` are the vocabulary; `listing.rs` lists;
//! `media_source.rs` is the trait; `runs.rs` and `warm.rs` are what the
//! backends read with; `local.rs` and `object_store.rs` are the backends; `shelf.rs` keeps
//! the objects vodpack writes itself (title indexes); `interleaved.rs`
//! reads several tracks of one object over any of them; `conformance.rs` (the contract's
//! stories) and `scratch.rs` (temporary folders) exist for tests. This file only
//! re-exports.

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
pub use identity::ObjectIdentity;
pub use interleaved::InterleavedReads;
pub use key::{KeyError, ObjectKey};
pub use listing::{ListStream, ListedObject};
pub use local::LocalMediaSource;
pub use media_source::{ByteStream, MediaSource, SourceKind};
pub use object_store::{ObjectStoreOptions, ObjectStoreSource, StoreError};
pub use range::{chunk_batches, ByteRange};
pub use runs::OVER_READ_BUDGET_BYTES;
pub use shelf::{Shelf, ShelfError};
