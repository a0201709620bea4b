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
    /// The file has no audio or video track to offer. Unusable, not missing: 422.
    #[error("no audio or video track to package")]
    NoRenditions,
    /// An audio or video track holds no samples (for example a fragmented MP4 whose
    /// fragments were not found): packaging it would give an empty presentation. 422.
    #[error("track {track_id} has no samples")]
    EmptyTrack { track_id: u32 },
    /// A track's samples last no time at all (every duration 0). 422.
    #[error("track {track_id} lasts 0 seconds")]
    ZeroDuration { track_id: u32 },
    /// An edit list the output cannot present exactly (see `edit.rs`): the edit (1-based,
    /// as in the file's `elst`), where it is on the movie timeline, and why.
    #[error("unsupported edit list in track {track_id}: edit {edit} at {at_ms} ms {reason}")]
    UnsupportedEdit {
        track_id: u32,
        edit: usize,
        at_ms: u64,
        reason: String,
    },
    /// A title document's rendition that cannot be cut with the first video rendition
    ///: no key frame at one of its cut times (`at_ms` on the output timeline),
    /// or frame rates that never meet. `rendition` names the document entry and file. 422.
    #[error(
        "{rendition}: no key frame at {at_ms} ms, where the first video rendition is cut{hint}"
    )]
    LadderMisaligned {
        rendition: String,
        at_ms: u64,
        hint: String,
    },
    /// A title document's rendition lasts more than one segment longer or shorter than the
    /// first video rendition. 422.
    #[error("{rendition}: ends at {end_ms} ms, more than one segment from the first video rendition's {reference_end_ms} ms")]
    LadderDuration {
        rendition: String,
        end_ms: u64,
        reference_end_ms: u64,
    },
    /// An ad break the title cannot have: at or after its end, cut at the same
    /// key frame as another, or overlapping another once cut. 422.
    #[error("{entry}: {reason}")]
    BadBreak { entry: String, reason: String },
    /// A title document's entry selects a track its file does not have, or not of the
    /// kind the entry needs, or the file has no track of that kind at all. 422.
    #[error("{rendition}: {reason}")]
    LadderTrack { rendition: String, reason: String },
    /// A part of a sequence whose renditions do not match the reference part's (another
    /// number of rungs, an audio or subtitle language it lacks). 422.
    #[error("{part}: {rendition}: {reason}")]
    SequenceMismatch {
        part: String,
        rendition: String,
        reason: String,
    },
    /// A track MPEG-TS cannot carry (a codec HLS puts in CMAF only, an AAC configuration
    /// ADTS cannot describe, 1- or 2-byte NAL lengths, a frame too large for a PES). 422.
    #[error("track {track_id} cannot be carried in MPEG-TS: {reason}; use master.m3u8")]
    NotInTs { track_id: u32, reason: String },
    /// No rendition of the title can be carried in MPEG-TS. 422.
    #[error("no track of this title can be carried in MPEG-TS; use master.m3u8")]
    NoTsRenditions,
    /// Numbered as nginx-vod-module numbers segments (`windows.rs`), the title would have
    /// more than the module's limit of segments (a duration or a key frame that far out).
    /// 422.
    #[error("the title would have {windows} nginx-vod segments, more than the limit of {limit}; use master.m3u8")]
    TooManyWindows { windows: u64, limit: u64 },
    /// A DASH text segment would hold more cues, or more bytes, than a text segment may
    /// (`package::text::MAX_SEGMENT_CUES`, `MAX_SEGMENT_BYTES`): a subtitle file with
    /// thousands of cues at once, whose `wvtt` samples would repeat each of them. 422.
    #[error("text segment {number} would hold {cues} cues in up to {bytes} bytes, over the limit of {max_cues} cues or {max_bytes} bytes")]
    TextSegmentTooLarge {
        number: u64,
        cues: usize,
        bytes: u64,
        max_cues: usize,
        max_bytes: u64,
    },
}
