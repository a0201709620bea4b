//! How each codec is carried and signalled in a transport stream: [`StreamKind`], its
//! `stream_type` in the clear and under SAMPLE-AES, the SAMPLE-AES descriptors of the PMT
//! and the AC-3 audio setup they restate.
//!
//! The data every other part of the TS output reads about a stream's codec sits here, below
//! them: `program` picks the kind of a track, `psi` writes the PMT from these tables, and
//! `sample_aes` encrypts what they declare encrypted. The descriptors follow Apple's
//! "MPEG-2 Stream Encryption Format for HTTP Live Streaming" (see `sample_aes`).

use super::adts::AdtsConfig;

/// How one track's samples are carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamKind {
    /// H.264 (stream type 0x1B), NAL units rewritten to Annex B.
    H264 { length_size: u8 },
    /// HEVC (stream type 0x24), NAL units rewritten to Annex B.
    Hevc { length_size: u8 },
    /// AAC in ADTS (stream type 0x0F).
    Aac(AdtsConfig),
    /// MPEG-1 (stream type 0x03) or, for the low sampling rates, MPEG-2 (0x04) audio.
    Mp3 { lsf: bool },
    /// AC-3 (stream type 0x81, registration 'AC-3').
    Ac3,
    /// E-AC-3 (stream type 0x87, registration 'EC-3').
    Eac3,
}

/// `stream_type` of each kind (ISO/IEC 13818-1 Table 2-34; ATSC A/52 for 0x81, 0x87).
pub(super) fn stream_type(kind: &StreamKind) -> u8 {
    match kind {
        StreamKind::H264 { .. } => 0x1B,
        StreamKind::Hevc { .. } => 0x24,
        StreamKind::Aac(_) => 0x0F,
        StreamKind::Mp3 { lsf: false } => 0x03,
        StreamKind::Mp3 { lsf: true } => 0x04,
        StreamKind::Ac3 => 0x81,
        StreamKind::Eac3 => 0x87,
    }
}

/// Most bytes of audio setup data written in the PMT.
const MAX_SETUP_BYTES: usize = 48;

/// `private_data_indicator_descriptor` and 'apad' audio setup of a stream, or `None` for a
/// codec SAMPLE-AES does not cover (HEVC, MP3: Apple's format is H.264, AAC, AC-3 and
/// E-AC-3 only).
pub(super) fn sample_aes_descriptors(kind: &StreamKind, setup: &[u8]) -> Option<Vec<u8>> {
    let (indicator, audio_type): (&[u8; 4], Option<[u8; 4]>) = match kind {
        StreamKind::H264 { .. } => (b"zavc", None),
        StreamKind::Aac(_) => {
            // AudioSpecificConfig's audioObjectType: 5 is HE-AAC (SBR), 29 HE-AAC v2 (PS).
            let object_type = setup.first().map_or(2, |b| b >> 3);
            let t = match object_type {
                5 => *b"zach",
                29 => *b"zacp",
                _ => *b"zaac",
            };
            (b"aacd", Some(t))
        }
        StreamKind::Ac3 => (b"ac3d", Some(*b"zac3")),
        StreamKind::Eac3 => (b"ec3d", Some(*b"zec3")),
        StreamKind::Hevc { .. } | StreamKind::Mp3 { .. } => return None,
    };
    let mut out = vec![0x0F, 0x04];
    out.extend_from_slice(indicator);
    if let Some(audio_type) = audio_type {
        // registration_descriptor 'apad': audio_type, priming (0), version 1, setup data.
        // Setup data past MAX_SETUP_BYTES (no real AudioSpecificConfig or `dec3` is that
        // long) is left out rather than cut, so the PMT always fits its one packet.
        let setup = if setup.len() > MAX_SETUP_BYTES {
            &[][..]
        } else {
            setup
        };
        out.push(0x05);
        out.push((4 + 4 + 2 + 1 + 1 + setup.len()) as u8);
        out.extend_from_slice(b"apad");
        out.extend_from_slice(&audio_type);
        out.extend_from_slice(&[0, 0, 1, setup.len() as u8]);
        out.extend_from_slice(setup);
    }
    Some(out)
}

/// `stream_type` of a SAMPLE-AES stream (Apple's format, section 2.3).
pub(super) fn sample_aes_stream_type(kind: &StreamKind) -> Option<u8> {
    match kind {
        StreamKind::H264 { .. } => Some(0xDB),
        StreamKind::Aac(_) => Some(0xCF),
        StreamKind::Ac3 => Some(0xC1),
        StreamKind::Eac3 => Some(0xC2),
        StreamKind::Hevc { .. } | StreamKind::Mp3 { .. } => None,
    }
}

/// The AC-3 audio setup data: the first 10 bytes of a sync frame as the `dac3` box
/// describes the stream (ATSC A/52 5.3: syncinfo and the start of bsi), which is what
/// readers of the setup parse. Empty when `dac3` is short.
pub(super) fn ac3_setup(dac3: &[u8]) -> Vec<u8> {
    let Some(b) = dac3.get(..3) else {
        return Vec::new();
    };
    let bits = u32::from_be_bytes([0, b[0], b[1], b[2]]);
    let field = |shift: u32, width: u32| u64::from((bits >> shift) & ((1 << width) - 1));
    let (fscod, bsid, bsmod, acmod) = (field(22, 2), field(17, 5), field(14, 3), field(11, 3));
    let (lfeon, bit_rate_code) = (field(10, 1), field(5, 5));
    let mut w = BitPacker::default();
    w.put(0x0B77, 16); // syncword
    w.put(0, 16); // crc1
    w.put(fscod, 2);
    w.put(bit_rate_code * 2, 6); // frmsizecod
    w.put(bsid, 5);
    w.put(bsmod, 3);
    w.put(acmod, 3);
    if acmod & 1 != 0 && acmod != 1 {
        w.put(0, 2); // cmixlev
    }
    if acmod & 4 != 0 {
        w.put(0, 2); // surmixlev
    }
    if acmod == 2 {
        w.put(0, 2); // dsurmod
    }
    w.put(lfeon, 1);
    w.put(31, 5); // dialnorm
    w.put(0, 3); // compre, langcode, audprodie
    if acmod == 0 {
        w.put(31, 5);
        w.put(0, 3);
    }
    w.put(0b01, 2); // copyrightb 0, origbs 1
    w.put(0, 3); // timecod1e, timecod2e, addbsie
    w.finish(10)
}

/// Bits written most significant first.
#[derive(Default)]
struct BitPacker {
    bytes: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitPacker {
    fn put(&mut self, value: u64, width: u32) {
        self.acc = (self.acc << width) | (value & ((1 << width) - 1));
        self.n += width;
        while self.n >= 8 {
            self.n -= 8;
            self.bytes.push((self.acc >> self.n) as u8);
        }
    }

    /// The bytes, zero-padded (or cut) to `len`.
    fn finish(mut self, len: usize) -> Vec<u8> {
        if self.n > 0 {
            self.bytes.push((self.acc << (8 - self.n)) as u8);
        }
        self.bytes.resize(len, 0);
        self.bytes
    }
}
