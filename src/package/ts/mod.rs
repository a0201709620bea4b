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
//! - `psi`, `adts`, `annexb`: PAT/PMT with CRC32, ADTS headers, NAL length rewriting.
//!
//! Written here rather than taken from a crate: the muxers on crates.io (`mpeg2ts`,
//! `mpegts`) build whole packets from whole frames in memory and know nothing of a layout
//! fixed ahead of the bytes, which is what streaming with a known length needs.
//!
//! Timeline: PTS/DTS are the CMAF output times in 90 kHz plus [`TS_TIME_OFFSET`], so the
//! title shift, B-frame delay and edit lists carry over exactly; WebVTT for TS maps
//! `LOCAL:00:00:00.000` to `MPEGTS:` that offset.

mod adts;
mod annexb;
mod layout;
mod offer;
mod program;
mod psi;
mod sample_aes;
mod writer;

pub use adts::AdtsConfig;
pub use layout::{KeyFrame, SegmentSummary, TsLayout};
pub use offer::{TsRendition, TsTitle};
pub use program::{StreamKind, TsProgram, TsStream};
pub use sample_aes::{encrypt_segment as encrypt_sample_aes_segment, MAX_SEGMENT_SAMPLE_BYTES};
pub use writer::{prepare_ts_segment, Need, TsSegment};

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
/// PTS, DTS and PCR base are 33-bit counters.
const TIME_MASK: u64 = (1 << 33) - 1;

/// A transport packet's 4-byte header (13818-1 2.4.3.2).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PacketHeader {
    pid: u16,
    unit_start: bool,
    continuity: u8,
    adaptation: bool,
    payload: bool,
}

impl PacketHeader {
    fn bytes(&self) -> [u8; 4] {
        let control = (u8::from(self.adaptation) << 1) | u8::from(self.payload);
        [
            0x47,
            (u8::from(self.unit_start) << 6) | ((self.pid >> 8) as u8 & 0x1F),
            self.pid as u8,
            (control << 4) | (self.continuity & 0x0F),
        ]
    }
}

/// A PTS or DTS field (13818-1 2.4.3.7): `marker` in the top nibble, 33 bits of time.
fn timestamp_field(marker: u8, time: u64) -> [u8; 5] {
    let t = time & TIME_MASK;
    [
        (marker << 4) | ((t >> 29) as u8 & 0x0E) | 1,
        (t >> 22) as u8,
        ((t >> 14) as u8 & 0xFE) | 1,
        (t >> 7) as u8,
        ((t << 1) as u8 & 0xFE) | 1,
    ]
}

/// A PCR field (13818-1 2.4.3.5): 33-bit base at 90 kHz, 6 reserved bits, extension 0.
fn pcr_field(base: u64) -> [u8; 6] {
    let b = base & TIME_MASK;
    [
        (b >> 25) as u8,
        (b >> 17) as u8,
        (b >> 9) as u8,
        (b >> 1) as u8,
        ((b & 1) as u8) << 7 | 0x7E,
        0,
    ]
}

#[cfg(test)]
pub(crate) mod tests;
