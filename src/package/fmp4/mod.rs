//! Fragmented MP4 (CMAF) writers: init segments and media segment headers.
//!
//! Both are synchronous functions over the index and the plan; neither reads the source.

mod init;
mod segment;
mod writer;

pub use init::init_segment;
pub use segment::{media_segment_header_len, prepare_media_segment, PreparedSegment};
