//! `MediaLimits`: the bounds the media layer checks before anything is allocated from a
//! file's word. Plain data, defined here below `media` so the settings can carry it; four
//! of its fields are settings (`settings.rs`), the rest are fixed.

/// Limits on what a file may make us read or allocate. Every size a file claims is
/// checked against these before a buffer or table is sized from it. A file over one is
/// refused with `media::MediaError::TooLarge`, which names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaLimits {
    /// Largest `moov` box accepted, in bytes.
    pub max_moov_bytes: u64,
    /// Most tracks (of any kind) in one `moov`.
    pub max_tracks: usize,
    /// Most samples in one track.
    pub max_samples_per_track: u64,
    /// Most samples in all audio and video tracks of one file together. The index costs
    /// about 28 bytes per sample, so this bounds one title's memory (560 MB by default).
    pub max_samples_per_file: u64,
    /// Largest single sample, in bytes.
    pub max_sample_bytes: u32,
    /// Deepest box nesting accepted, counting `moov` as 1 (a sample entry's codec box sits at
    /// 8: moov/trak/mdia/minf/stbl/stsd/avc1/avcC). Bounds the parser's recursion, so
    /// its stack, whatever the file holds.
    pub max_box_depth: usize,
    /// First read at the start of an object, sized to catch `ftyp` + a typical `moov`.
    pub probe_bytes: u64,
    /// Most top-level boxes walked looking for `moov`.
    pub max_top_level_boxes: usize,
    /// Most top-level box headers read one by one past the probe while looking for `moov`
    /// (each is one source request; a real file needs one or two).
    pub max_header_reads: u32,
    /// Most movie fragments (`moof` boxes) in one fragmented file, and so most `sidx`
    /// references and `tfra` entries taken as hints (ISO/IEC 14496-12 8.8, 8.16.3).
    pub max_fragments: u32,
    /// Most bytes of fragment headers (`moof`, `sidx`, `mfra` boxes) read and held for one
    /// file, together; also bounds any single one of them.
    pub max_fragment_header_bytes: u64,
    /// Most bytes of text samples read to answer one subtitle resource (a WebVTT segment,
    /// or the whole-track WebVTT file of DASH). Text is small: this only stops a file
    /// whose text track claims megabytes from making every subtitle request read them.
    pub max_text_read_bytes: u64,
    /// Largest title document (`.json`) accepted, in bytes.
    pub max_title_document_bytes: u64,
    /// Most entries (video, audio and subtitle files together) in one title document.
    pub max_title_renditions: usize,
    /// Tracks with at most this many samples have their file offsets worked out when the
    /// index is loaded; longer ones on first use (`media::SampleOffsets`). Not a setting:
    /// tests set it to 0 to send every track down the later path.
    pub offsets_at_load_max_samples: usize,
}

impl Default for MediaLimits {
    fn default() -> Self {
        Self {
            max_moov_bytes: 128 * 1024 * 1024,
            max_tracks: 64,
            max_samples_per_track: 20_000_000,
            max_samples_per_file: 20_000_000,
            max_sample_bytes: 64 * 1024 * 1024,
            max_box_depth: 16,
            probe_bytes: 256 * 1024,
            max_top_level_boxes: 4096,
            max_header_reads: 32,
            max_fragments: 500_000,
            max_fragment_header_bytes: 128 * 1024 * 1024,
            max_text_read_bytes: 4 * 1024 * 1024,
            max_title_document_bytes: 64 * 1024,
            max_title_renditions: 32,
            // 256 KiB of offsets.
            offsets_at_load_max_samples: 32 * 1024,
        }
    }
}
