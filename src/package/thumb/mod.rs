//! Thumbnails: one frame of a video rendition as a JPEG (`thumb-MS.jpg`), and storyboards.
//!
//! `name.rs` makes and parses the names, `pick.rs` chooses the samples to decode,
//! `decode.rs` (and `libav.rs` with the `libavcodec` feature) turns them into a picture,
//! `image.rs` into a scaled JPEG; `storyboard.rs` lays out a title's storyboard. All of it
//! is synchronous and CPU-bound; the server reads the picked samples and runs it off the
//! runtime workers. It lives in `package/`, not `media/`: a decoded, scaled picture is an
//! output made from the file, like a segment.

mod decode;
mod image;
#[cfg(feature = "libavcodec")]
mod libav;
mod name;
mod pick;
mod storyboard;

pub use decode::{decode_frame, Picture, MAX_DECODE_SAMPLES};
pub use image::{encode_jpeg, encode_rgb_jpeg, output_size, scaled_rgb, JpegOptions, PixelSize};
pub use name::ThumbName;
pub use pick::{pick_frame, shown_key_frames_ms, FramePick, PickMode};
pub use storyboard::{Storyboard, StoryboardLayout, StoryboardPart, Tile, MAX_SHEET_SIDE};

/// Why a thumbnail cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThumbError {
    /// The title has no video rendition (or none in the asked file).
    #[error("no video to take a thumbnail from{detail}")]
    NoVideo {
        /// Where it was looked for (", in file 2"), or empty.
        detail: String,
    },
    /// The time is at or past the end of the video.
    #[error("{time_ms} ms is past the end of the video ({end_ms} ms)")]
    PastEnd { time_ms: u64, end_ms: u64 },
    /// The storyboard has no sheet of this number.
    #[error("storyboard sheet {number} does not exist (the title has {sheets})")]
    NoSuchSheet { number: u32, sheets: u64 },
    /// A codec this build cannot decode.
    #[error("{codec} thumbnails need vodpack built with the cargo feature `{feature}`")]
    CodecNeedsFeature {
        codec: &'static str,
        feature: &'static str,
    },
    /// A codec no build decodes.
    #[error("no thumbnails for codec {fourcc}")]
    UnsupportedCodec { fourcc: String },
    /// The source picture is over the configured size.
    #[error("source frame is {width}x{height} ({pixels} pixels), over the limit of {max} pixels")]
    FrameTooLarge {
        width: u32,
        height: u32,
        pixels: u64,
        max: u64,
    },
    /// The frame needs more samples decoded than a thumbnail may cost.
    #[error(
        "the frame needs {samples} samples decoded from its key frame, over the limit of {max}"
    )]
    TooManySamples { samples: usize, max: usize },
    /// The samples do not decode: a corrupt or truncated frame.
    #[error("the frame does not decode: {reason}")]
    Undecodable { reason: String },
    /// The asked size is out of bounds.
    #[error("thumbnail size {width}x{height} is out of bounds (1 to {max} pixels a side)")]
    BadSize { width: u32, height: u32, max: u32 },
}
