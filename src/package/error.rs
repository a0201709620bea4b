//! `PackageError`: requests the plan cannot answer.

/// Why a packaging request cannot be answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackageError {
    /// No rendition or track with this id in the title.
    #[error("no track {track} in this title")]
    NoSuchTrack { track: u64 },
    /// A segment number (1-based, as in URLs) past the end of the plan.
    #[error("segment {number} is out of range (the title has {count})")]
    SegmentOutOfRange { number: u64, count: u64 },
}
