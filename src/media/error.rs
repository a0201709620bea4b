//! `MediaError`: why an object could not be turned into a `MediaIndex`.

use crate::source::SourceError;

/// Why a media object could not be indexed. Messages are one line and name the flaw,
/// because they are sent to clients as the body of an error answer.
#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    /// The object is not an MP4 at all (no boxes, or no `moov`).
    #[error("not an mp4 file: {reason}")]
    NotMp4 { reason: String },
    /// A box claims to extend past the end of the object, or the object ends mid-box.
    #[error("truncated mp4: {reason}")]
    Truncated { reason: String },
    /// A box or table is malformed or contradicts another.
    #[error("invalid {fourcc} in track {track_id}: {reason}")]
    InvalidTable {
        fourcc: String,
        track_id: u32,
        reason: String,
    },
    /// The file's structure is malformed (boxes, nesting) beyond a single table.
    #[error("malformed mp4: {reason}")]
    Malformed { reason: String },
    /// A codec we cannot describe for players.
    #[error("unsupported codec {fourcc} in track {track_id}")]
    UnsupportedCodec { fourcc: String, track_id: u32 },
    /// The file breaks a configured limit (moov size, tracks, samples).
    #[error("file exceeds the {limit} limit ({value} > {max})")]
    TooLarge {
        limit: &'static str,
        value: u64,
        max: u64,
    },
    /// An edit the packager cannot present exactly (ISO/IEC 14496-12 8.6.6): a `media_rate`
    /// other than 1, or a dwell (rate 0, one frame held). `edit` counts from 1.
    #[error("unsupported edit list in track {track_id}: edit {edit} {reason}")]
    UnsupportedEdit {
        track_id: u32,
        edit: usize,
        reason: String,
    },
    /// No audio or video track to serve.
    #[error("no audio or video track")]
    NoTracks,
    /// Reading the object failed.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The parser failed in a way it should not (a caught panic); the file is refused.
    #[error("internal error while parsing: {reason}")]
    Internal { reason: String },
}
