//! `SourceError`: why a source could not answer, the one error every backend returns.
//!
//! The variants are the contract's outcomes (`Changed` for a version that moved on under a
//! read, `OutOfRange` instead of a short read), not a backend's own words: the object
//! store maps its errors here (`object_store/store.rs`), and the server maps these to HTTP
//! answers in one place.

use super::range::ByteRange;

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
