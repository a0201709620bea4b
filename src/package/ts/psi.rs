//! Program specific information (ISO/IEC 13818-1 2.4.4): the PAT and PMT packets that
//! open every segment and precede every key frame, with their CRC32.
//!
//! One program (number 1) whose PMT lists each elementary stream with its stream type,
//! for AC-3 and E-AC-3 the registration descriptor players look for (Apple's HLS
//! authoring specification; ATSC A/52 Annex A and G), and for audio its language.

use super::packet::PacketHeader;
use super::stream_kind::{sample_aes_descriptors, sample_aes_stream_type, stream_type};
use super::{StreamKind, TsStream, PACKET_LEN, PAT_PID, PMT_PID};

/// The PAT packet: program 1 at [`PMT_PID`].
pub(super) fn pat_packet(continuity: u8) -> [u8; PACKET_LEN] {
    let mut section = vec![0x00, 0xB0, 0, 0x00, 0x01, 0xC1, 0x00, 0x00];
    section.extend_from_slice(&[0x00, 0x01]);
    section.extend_from_slice(&(0xE000 | PMT_PID).to_be_bytes());
    finish_section(&mut section);
    packet(PAT_PID, continuity, &section)
}

/// The PMT packet of `streams`, the PCR carried on the first stream's PID; with
/// `sample_aes`, the stream types and descriptors of SAMPLE-AES (`sample_aes`).
pub(super) fn pmt_packet(
    streams: &[TsStream],
    sample_aes: bool,
    continuity: u8,
) -> [u8; PACKET_LEN] {
    let pcr_pid = streams.first().map_or(0x1FFF, |s| s.pid);
    let mut section = vec![0x02, 0xB0, 0, 0x00, 0x01, 0xC1, 0x00, 0x00];
    section.extend_from_slice(&(0xE000 | pcr_pid).to_be_bytes());
    section.extend_from_slice(&[0xF0, 0x00]);
    for stream in streams {
        let encrypted = sample_aes
            .then(|| sample_aes_stream_type(&stream.kind))
            .flatten();
        section.push(encrypted.unwrap_or_else(|| stream_type(&stream.kind)));
        section.extend_from_slice(&(0xE000 | stream.pid).to_be_bytes());
        let mut descriptors: Vec<u8> = match stream.kind {
            _ if encrypted.is_some() => {
                sample_aes_descriptors(&stream.kind, &stream.setup).unwrap_or_default()
            }
            // registration_descriptor (2.6.8) with format_identifier 'AC-3' / 'EC-3'.
            StreamKind::Ac3 => vec![0x05, 0x04, b'A', b'C', b'-', b'3'],
            StreamKind::Eac3 => vec![0x05, 0x04, b'E', b'C', b'-', b'3'],
            _ => Vec::new(),
        };
        // ISO_639_language_descriptor (2.6.18): the language, audio_type 0 (undefined).
        if let Some(language) = stream.language {
            descriptors.extend_from_slice(&[0x0A, 0x04]);
            descriptors.extend_from_slice(&language);
            descriptors.push(0);
        }
        section.extend_from_slice(&(0xF000 | descriptors.len() as u16).to_be_bytes());
        section.extend_from_slice(&descriptors);
    }
    finish_section(&mut section);
    packet(PMT_PID, continuity, &section)
}

/// Fill in `section_length` (bytes after the length field, CRC included) and append the
/// CRC32. Sections here are a few dozen bytes, far below the 1021-byte limit.
fn finish_section(section: &mut Vec<u8>) {
    let length = (section.len() - 3 + 4) as u16;
    section[1] = 0xB0 | ((length >> 8) as u8 & 0x0F);
    section[2] = length as u8;
    let crc = crc32(section);
    section.extend_from_slice(&crc.to_be_bytes());
}

/// One packet holding a section: header, pointer_field 0, the section, 0xFF stuffing.
fn packet(pid: u16, continuity: u8, section: &[u8]) -> [u8; PACKET_LEN] {
    let mut out = [0xFFu8; PACKET_LEN];
    let header = PacketHeader {
        pid,
        unit_start: true,
        continuity,
        adaptation: false,
        payload: true,
    };
    out[..4].copy_from_slice(&header.bytes());
    out[4] = 0x00;
    let end = (5 + section.len()).min(PACKET_LEN);
    out[5..end].copy_from_slice(&section[..end - 5]);
    out
}

/// CRC32 of MPEG-2 sections (ISO/IEC 13818-1 Annex A): polynomial 0x04C11DB7, initial
/// value all ones, no reflection, no final inversion.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for byte in bytes {
        crc ^= u32::from(*byte) << 24;
        for _ in 0..8 {
            crc = if crc & 0x8000_0000 != 0 {
                (crc << 1) ^ 0x04C1_1DB7
            } else {
                crc << 1
            };
        }
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CRC of a whole section, its CRC included, is 0 (13818-1 Annex A); the PAT is
    /// the one every muxer writes for program 1 at PID 0x1000.
    #[test]
    fn pat_is_the_usual_one_and_its_crc_checks() {
        let pat = pat_packet(3);
        assert_eq!(&pat[..4], &[0x47, 0x40, 0x00, 0x13]);
        let length = usize::from(u16::from_be_bytes([pat[6], pat[7]]) & 0x0FFF);
        assert_eq!(length, 13);
        assert_eq!(crc32(&pat[5..8 + length]), 0);
        // The CRC ffmpeg writes for the same PAT.
        assert_eq!(&pat[17..21], &[0x2A, 0xB1, 0x04, 0xB2]);
        assert!(pat[21..].iter().all(|b| *b == 0xFF));
    }

    #[test]
    fn pmt_lists_streams_with_types_and_registration() {
        let streams = [
            TsStream::test(0x100, StreamKind::H264 { length_size: 4 }),
            TsStream::test(0x101, StreamKind::Eac3),
        ];
        let pmt = pmt_packet(&streams, false, 0);
        let length = usize::from(u16::from_be_bytes([pmt[6], pmt[7]]) & 0x0FFF);
        assert_eq!(crc32(&pmt[5..8 + length]), 0);
        assert_eq!(u16::from_be_bytes([pmt[13], pmt[14]]) & 0x1FFF, 0x100);
        assert_eq!(&pmt[17..22], &[0x1B, 0xE1, 0x00, 0xF0, 0x00]);
        assert_eq!(
            &pmt[22..33],
            &[0x87, 0xE1, 0x01, 0xF0, 0x06, 5, 4, b'E', b'C', b'-', b'3']
        );
    }
}
