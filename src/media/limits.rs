//! `MediaLimits`: the bounds checked before anything is allocated from a file's word.

/// Limits on what a file may make us read or allocate. Every size a file claims is
/// checked against these before a buffer or table is sized from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaLimits {
    /// Largest `moov` box accepted, in bytes.
    pub max_moov_bytes: u64,
    /// Most audio and video tracks in one file.
    pub max_tracks: usize,
    /// Most samples in one track.
    pub max_samples_per_track: u64,
    /// Largest single sample, in bytes.
    pub max_sample_bytes: u32,
    /// First read at the start of an object, sized to catch `ftyp` + a typical `moov`.
    pub probe_bytes: u64,
    /// Most top-level boxes walked looking for `moov`.
    pub max_top_level_boxes: usize,
}

impl Default for MediaLimits {
    fn default() -> Self {
        Self {
            max_moov_bytes: 128 * 1024 * 1024,
            max_tracks: 64,
            max_samples_per_track: 20_000_000,
            max_sample_bytes: 64 * 1024 * 1024,
            probe_bytes: 256 * 1024,
            max_top_level_boxes: 4096,
        }
    }
}
