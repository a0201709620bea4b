//! Fragmented MP4 writers: init segments and media segment headers, CMAF (one track each)
//! and muxed (several tracks in one stream, for nginx-vod's `seg-N-v1-a1.m4s`).
//!
//! All are synchronous functions over the index and the plan; none reads the source.

mod init;
mod segment;
mod writer;

pub use init::{init_segment, muxed_init_segment};
pub(crate) use init::{packed_language, write_dinf_and_empty_stbl};
pub use segment::{
    media_segment_header_len, prepare_media_segment, prepare_muxed_segment,
    prepare_sample_fragment, PreparedMuxedSegment, PreparedSegment,
};
pub(crate) use writer::BoxWriter;

#[cfg(test)]
pub(crate) mod tests;
