//! Which CEA-608 channels and CEA-708 services `cc_data()` triples carry.
//!
//! CEA-608 (cc_type 0: field 1, CC1/CC2; cc_type 1: field 2, CC3/CC4): bytes have odd
//! parity, stripped after checking; a pair that fails it is dropped, as a decoder drops it.
//! The data channel is the one the last control code named (first byte 0x10-0x17 channel
//! 1, 0x18-0x1F channel 2); a field's characters before any control code count for its
//! channel 1, where a decoder starts. Text mode (TR, RTD) and XDS (field 2, first byte
//! 0x01-0x0F) are not captions. CEA-708 (cc_type 3 starts a DTVCC packet, 2 continues it):
//! each packet's service blocks name their service (3 bits, or an extended number when 7);
//! a block with content means the service is present.

use std::collections::BTreeSet;

use crate::media::CaptionChannel;

/// Longest DTVCC packet (CEA-708 5: `packet_size_code` 0 means 128 bytes).
const MAX_PACKET: usize = 128;

/// What a 608 field's bytes are going to, by its last control code.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum FieldMode {
    /// Captions of data channel 1 or 2 (channel 1 before any control code).
    #[default]
    Caption1,
    Caption2,
    /// Text mode or XDS: not captions.
    Other,
}

/// The channels and services seen so far in a stream's `cc_data()` triples.
#[derive(Debug, Default)]
pub(crate) struct CaptionTracker {
    fields: [FieldMode; 2],
    /// The DTVCC packet being gathered (header byte first).
    packet: Vec<u8>,
    found: BTreeSet<CaptionChannel>,
}

impl CaptionTracker {
    /// One `cc_data()` triple: `cc_valid`, `cc_type`, `cc_data_1`, `cc_data_2`.
    pub(crate) fn cc(&mut self, valid: bool, cc_type: u8, one: u8, two: u8) {
        match cc_type {
            0 | 1 if valid => self.cea608(usize::from(cc_type), one, two),
            3 => {
                self.end_packet();
                if valid {
                    self.packet.extend_from_slice(&[one, two]);
                }
            }
            2 if valid && !self.packet.is_empty() => {
                if self.packet.len() < MAX_PACKET {
                    self.packet.extend_from_slice(&[one, two]);
                }
                let full =
                    (self.packet.first()).is_some_and(|h| self.packet.len() >= packet_len(*h));
                if full {
                    self.end_packet();
                }
            }
            _ => {}
        }
    }

    /// The channels and services found, 608 first, each in order.
    pub(crate) fn channels(mut self) -> Vec<CaptionChannel> {
        self.end_packet();
        self.found.into_iter().collect()
    }

    fn cea608(&mut self, field: usize, one: u8, two: u8) {
        if !(odd_parity(one) && odd_parity(two)) {
            return;
        }
        let (one, two) = (one & 0x7f, two & 0x7f);
        let Some(mode) = self.fields.get_mut(field) else {
            return;
        };
        match one {
            // Padding.
            0x00 => return,
            // XDS packets, on field 2 only (CEA-608 9.5).
            0x01..=0x0f => {
                *mode = FieldMode::Other;
                return;
            }
            0x10..=0x1f => {
                let channel_two = one & 0x08 != 0;
                let caption = match channel_two {
                    true => FieldMode::Caption2,
                    false => FieldMode::Caption1,
                };
                // Miscellaneous control codes (first byte 0x14/0x15/0x1C/0x1D, second
                // 0x20-0x2F) switch modes: TR and RTD to text, RCL, RU2-4, RDC to captions.
                let misc = matches!(one & 0x16, 0x14) && (0x20..=0x2f).contains(&two);
                *mode = match (misc, two) {
                    (true, 0x2a | 0x2b) => FieldMode::Other,
                    (true, 0x20 | 0x25..=0x27 | 0x29) => caption,
                    // Any other control code addresses the mode it names the channel of.
                    _ if *mode == FieldMode::Other => return,
                    _ => caption,
                };
            }
            _ => {}
        }
        let channel = match *mode {
            FieldMode::Caption1 => 1,
            FieldMode::Caption2 => 2,
            FieldMode::Other => return,
        };
        // Field 1 carries CC1 and CC2, field 2 CC3 and CC4.
        let number = u8::try_from(field * 2).unwrap_or(0) + channel;
        self.found.insert(CaptionChannel::Cea608(number));
    }

    /// Read the service blocks of the packet gathered so far (CEA-708 6.2), then drop it.
    fn end_packet(&mut self) {
        let packet = std::mem::take(&mut self.packet);
        let Some((&header, body)) = packet.split_first() else {
            return;
        };
        let len = packet_len(header).min(packet.len()).saturating_sub(1);
        let mut rest = body.get(..len).unwrap_or(body);
        while let Some((&block, after)) = rest.split_first() {
            let (mut service, size) = (block >> 5, usize::from(block & 0x1f));
            rest = after;
            if service == 7 {
                let Some((&extended, after)) = rest.split_first() else {
                    return;
                };
                service = extended & 0x3f;
                rest = after;
            }
            if service == 0 {
                // The null block header ends the packet's service data.
                return;
            }
            if size > 0 && (1..=63).contains(&service) {
                self.found.insert(CaptionChannel::Cea708(service));
            }
            rest = rest.get(size..).unwrap_or_default();
        }
    }
}

/// Bytes of a DTVCC packet, header included, from its header byte (CEA-708 5).
fn packet_len(header: u8) -> usize {
    match usize::from(header & 0x3f) {
        0 => MAX_PACKET,
        code => code * 2,
    }
}

fn odd_parity(byte: u8) -> bool {
    byte.count_ones() % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::captions::testing::with_parity;

    fn track(triples: &[(bool, u8, u8, u8)]) -> Vec<CaptionChannel> {
        let mut tracker = CaptionTracker::default();
        for &(valid, kind, one, two) in triples {
            tracker.cc(valid, kind, one, two);
        }
        tracker.channels()
    }

    fn p(byte: u8) -> u8 {
        with_parity(byte)
    }

    #[test]
    fn control_codes_name_the_channel_and_field_two_is_cc3_and_cc4() {
        let found = track(&[
            (true, 0, p(0x14), p(0x20)),
            (true, 0, p(b'A'), p(b'B')),
            (true, 0, p(0x1c), p(0x20)),
            (true, 1, p(0x15), p(0x25)),
            (true, 1, p(0x1d), p(0x2c)),
        ]);
        use CaptionChannel::Cea608;
        assert_eq!(found, vec![Cea608(1), Cea608(2), Cea608(3), Cea608(4)]);
    }

    #[test]
    fn padding_bad_parity_invalid_pairs_text_mode_and_xds_are_not_captions() {
        assert_eq!(track(&[(true, 0, 0x80, 0x80)]), vec![]);
        assert_eq!(track(&[(true, 0, 0x14, p(0x20))]), vec![], "even parity");
        assert_eq!(track(&[(false, 0, p(0x14), p(0x20))]), vec![]);
        let text_mode = [(true, 0, p(0x14), p(0x2a)), (true, 0, p(b'T'), p(b'X'))];
        assert_eq!(track(&text_mode), vec![]);
        let xds = [(true, 1, p(0x01), p(0x03)), (true, 1, p(b'N'), p(b'A'))];
        assert_eq!(track(&xds), vec![]);
    }

    #[test]
    fn characters_before_any_control_code_count_for_channel_one() {
        assert_eq!(
            track(&[(true, 1, p(b'H'), p(b'I'))]),
            vec![CaptionChannel::Cea608(3)]
        );
    }

    /// A DTVCC packet of 4 bytes (size code 2): header, a block of service 1 with one
    /// byte, then an extended block of service 9 gathered from a continuation.
    #[test]
    fn dtvcc_service_blocks_name_their_services() {
        let found = track(&[
            (true, 3, 0x02, (1 << 5) | 1),
            (true, 2, b'A', 0x00),
            (true, 3, 0x03, (7 << 5) | 1),
            (true, 2, 9, b'B'),
            (true, 2, 0x00, 0x00),
        ]);
        use CaptionChannel::Cea708;
        assert_eq!(found, vec![Cea708(1), Cea708(9)]);
    }

    #[test]
    fn hostile_dtvcc_packets_end_cleanly() {
        // Blocks claiming more than the packet, a size code of 0 (128 bytes) never filled,
        // continuations with no start, an extended header cut off.
        let mut triples = vec![(true, 2, 0xff, 0xff), (true, 3, 0x00, 0xff)];
        triples.extend(std::iter::repeat_n((true, 2, 0xff, 0xff), 200));
        triples.push((true, 3, 0x01, 0xe0));
        let _ = track(&triples);
        assert_eq!(track(&[(true, 3, 0x01, 0x00)]), vec![]);
        assert_eq!(track(&[(false, 3, 0x01, 0x21)]), vec![]);
    }
}
