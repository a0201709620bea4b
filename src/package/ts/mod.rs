//! MPEG-TS output (ISO/IEC 13818-1) for HLS: the same segments as the CMAF output (same
//! `SegmentPlan`, same samples, same output timeline) as transport streams.
//!
//! - `program`: which tracks a TS rendition carries (video with the title's main audio
//!   muxed in, or one audio track alone), their PIDs and how each codec is carried;
//! - `layout`: where every packet of every segment goes, a pure function of the plan and
//!   the sample sizes, so `Content-Length`, `Range`, playlist bandwidth, continuity
//!   counters and I-frame byte ranges are all known before a byte is read;
//! - `writer`: turns the source's sample bytes, as they stream, into those packets
//!   (PES headers, ADTS headers, Annex B), holding a packet and a few bytes of state;
//! - `offer`: the renditions of a title's TS output, measured;
//! - `sample_aes`: HLS SAMPLE-AES (Apple's sample encryption of H.264, AAC, AC-3 and
//!   E-AC-3 in TS), where a segment's layout follows from its encrypted samples;
//! - `stream_kind`: how each codec is carried and signalled (stream types, SAMPLE-AES
//!   descriptors), the table `program`, `psi` and `sample_aes` all read;
//! - `packet`, `psi`, `adts`, `annexb`: packet and PES headers and the packetizer, PAT/PMT
//!   with CRC32, ADTS headers, NAL length rewriting.
//!
//! Dependencies run one way, from `stream_kind`, `adts` and `annexb` up through `program`,
//! `layout`, `packet` and `psi` (each using only those before it) to `writer`, then
//! `sample_aes` and `offer`.
//!
//! Written here rather than taken from a crate: the muxers on crates.io (`mpeg2ts`,
//! `mpegts`) build whole packets from whole frames in memory and know nothing of a layout
//! fixed ahead of the bytes, which is what streaming with a known length needs.
//!
//! Timeline: PTS/DTS are the CMAF output times in 90 kHz plus [`TS_TIME_OFFSET`], so the
//! title shift, B-frame delay and edit lists carry over exactly; WebVTT for TS maps
//! `LOCAL:00:00:00.000` to `MPEGTS:` that offset.
//!
//! To look at a segment's bytes (in ffprobe, a TS analyser), ask a running server for it:
//! `curl -o seg.ts http://HOST/vod/KEY/vTOKEN/seg-ts-t1-1.ts`.

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
