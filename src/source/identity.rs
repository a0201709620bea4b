//! `ObjectIdentity`: one version of an object (its size and a version string), and the
//! check every read makes against it before touching a byte.
//!
//! Reads name the version they want, so a backend can refuse to mix two versions of an
//! object in one answer (`SourceError::Changed`). [`check_ranges`] is the shared half of
//! that rule, for ranges: each inside the version's size, never a short read.

use super::error::SourceError;
use super::key::ObjectKey;
use super::range::ByteRange;

/// What identifies one version of an object: its size, and a version string that changes
/// whenever the content does (a local file's mtime, a bucket's ETag).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectIdentity {
    /// Object size in bytes.
    pub size: u64,
    /// Opaque version: `m<mtime nanos>` for local files, the ETag for buckets.
    pub version: String,
}

/// One version of one object: its key and its identity. What a read of a version names,
/// and what is kept per version (the gap bytes `object_store/shared.rs` keeps).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectVersion {
    pub key: ObjectKey,
    pub identity: ObjectIdentity,
}

impl ObjectVersion {
    pub fn new(key: ObjectKey, identity: ObjectIdentity) -> Self {
        Self { key, identity }
    }
}

/// An identity a source reuses within its identity window, and the end of that reuse.
#[derive(Debug, Clone)]
pub(crate) struct KnownIdentity {
    pub identity: ObjectIdentity,
    /// `None` past what an `Instant` can hold: then nothing is kept for it.
    pub until: Option<std::time::Instant>,
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
