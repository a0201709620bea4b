//! MPEG-TS output (ISO/IEC 13818-1) for HLS: the same segments as the CMAF output (same
//! `SegmentPlan`, same samples, same output timeline) as transport streams.
//!
//! `program` says which tracks a rendition carries, `layout` where every packet goes before
//! a byte is read, `writer` makes the packets as the source's bytes stream, `sample_aes`
//! encrypts, `offer` measures the renditions; `stream_kind`, `packet`, `psi`, `adts` and
//! `annexb` are the pieces below them. Written here rather than taken from a crate: the
//! muxers on crates.io build whole packets from whole frames in memory and know nothing of
//! a layout fixed ahead of the bytes, which streaming with a known length needs.

mod adts;
mod annexb;
mod layout;
mod offer;
mod packet;
mod program;
mod psi;
pub(crate) use psi::crc32;
mod sample_aes;
mod stream_kind;
mod writer;

pub use adts::AdtsConfig;
pub use layout::{KeyFrame, SegmentSummary, TsLayout};
pub use offer::{TsRendition, TsTitle};
pub use program::{TsProgram, TsStream};
pub use sample_aes::{encrypt_segment as encrypt_sample_aes_segment, MAX_SEGMENT_SAMPLE_BYTES};
pub use stream_kind::StreamKind;
pub use writer::{prepare_ts_segment, psi_segment, Need, TsSegment};

/// Bytes in a transport stream packet.
pub const PACKET_LEN: usize = 188;
/// The PAT's PID.
pub const PAT_PID: u16 = 0x0000;
/// The PMT's PID (the one ffmpeg and most packagers use).
pub const PMT_PID: u16 = 0x1000;
/// PID of the video stream; the audio stream takes the next.
pub const VIDEO_PID: u16 = 0x0100;
/// PID of the audio stream, muxed with video or alone.
pub const AUDIO_PID: u16 = 0x0101;

/// Added to every output time (90 kHz) to make PTS and DTS: 1.4 s, as ffmpeg's muxer
/// starts. The output timeline already starts at 0 with DTS never negative (the plan
/// shifts every track so), but the PCR must run ahead of the DTS it delivers
/// ([`PCR_LEAD`]) and cannot go below 0; the offset leaves room for that lead at the
/// start of the title. WebVTT `X-TIMESTAMP-MAP` for TS says `MPEGTS:126000`.
pub const TS_TIME_OFFSET: u64 = 126_000;
/// How far (90 kHz) the PCR runs ahead of the DTS of the PES it is sent with: the time a
/// decoder holds the access unit before decoding it.
pub const PCR_LEAD: u64 = 63_000;
/// Longest gap between PCRs (90 kHz): 40 ms. Where frames are further apart (24 fps and
/// below, or audio alone), adaptation-field-only packets carry the PCR in between.
pub const MAX_PCR_GAP: u64 = 3_600;
#[cfg(test)]
pub(crate) mod tests;
