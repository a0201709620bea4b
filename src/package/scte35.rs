//! SCTE-35 cue messages for ad breaks: one `splice_info_section` holding a
//! `splice_insert` that takes the viewer out of the network at a break and back after it.
//! HLS carries the section's bytes as `SCTE35-OUT=0x...` on the break's `EXT-X-DATERANGE`
//! (RFC 8216 4.4.5.1.1), DASH as base64 in `<scte35:Binary>` (SCTE 214-1 and SCTE 35
//! 2016+ 12.2, scheme `urn:scte:scte35:2014:xml+bin`).

// The MPEG-2 section CRC_32 (ISO/IEC 13818-1 Annex A) the PSI tables use too.
use super::ts::crc32;

/// `table_id` of every SCTE-35 section.
const TABLE_ID: u8 = 0xFC;
/// `splice_command_type` of `splice_insert()`.
const SPLICE_INSERT: u8 = 0x05;
/// 33-bit fields wrap at this (90 kHz times roll over after about 26.5 hours).
const PTS_MASK: u64 = (1 << 33) - 1;

/// What one `splice_insert` says: an event out of the network at `pts_time`, lasting
/// `duration`, both in 90 kHz ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpliceInsert {
    /// `splice_event_id`: the same for every message about this break.
    pub event_id: u32,
    /// `pts_time` of the splice point, 90 kHz (the cut's presentation time on the
    /// media timeline), taken modulo 2^33.
    pub pts_time: u64,
    /// `pts_adjustment`, 90 kHz, added to `pts_time` by the reader (9.6.2): the MPEG-TS
    /// output's time offset, 0 for CMAF.
    pub pts_adjustment: u64,
    /// `break_duration.duration`, 90 kHz.
    pub duration: u64,
    /// `unique_program_id` (9.7.3.1): identifies the viewing event within the service.
    pub unique_program_id: u16,
}

impl SpliceInsert {
    /// The whole `splice_info_section()`, CRC included.
    pub fn section(&self) -> Vec<u8> {
        let mut command = Vec::with_capacity(20);
        command.extend_from_slice(&self.event_id.to_be_bytes());
        // splice_event_cancel_indicator 0, reserved 7 bits.
        command.push(0x7F);
        // out_of_network 1, program_splice 1, duration 1, splice_immediate 0,
        // event_id_compliance 1, reserved 3.
        command.push(0b1110_1111);
        // splice_time(): time_specified_flag 1, reserved 6, pts_time 33.
        command.extend_from_slice(&flag_and_33_bits(self.pts_time));
        // break_duration(): auto_return 1, reserved 6, duration 33.
        command.extend_from_slice(&flag_and_33_bits(self.duration));
        command.extend_from_slice(&self.unique_program_id.to_be_bytes());
        // avail_num 0 and avails_expected 0: "not used" (9.7.3.1).
        command.extend_from_slice(&[0, 0]);

        let mut body = Vec::with_capacity(11 + command.len() + 6);
        body.push(0); // protocol_version
                      // encrypted_packet 0, encryption_algorithm 0, pts_adjustment's top bit.
        let adjustment = self.pts_adjustment & PTS_MASK;
        body.push((adjustment >> 32) as u8 & 0x01);
        body.extend_from_slice(&(adjustment as u32).to_be_bytes());
        body.push(0); // cw_index
        let command_length = command.len() as u16 & 0x0FFF;
        // tier 0xFFF (12 bits), splice_command_length (12 bits).
        body.push(0xFF);
        body.push(0xF0 | (command_length >> 8) as u8);
        body.push(command_length as u8);
        body.push(SPLICE_INSERT);
        body.extend_from_slice(&command);
        body.extend_from_slice(&[0, 0]); // descriptor_loop_length: none

        // section_length: everything after its own field, the CRC's 4 bytes included.
        let section_length = (body.len() + 4) as u16 & 0x0FFF;
        let mut section = Vec::with_capacity(3 + body.len() + 4);
        section.push(TABLE_ID);
        // section_syntax_indicator 0, private_indicator 0, sap_type 3, length's top 4 bits.
        section.push(0x30 | (section_length >> 8) as u8);
        section.push(section_length as u8);
        section.extend_from_slice(&body);
        let crc = crc32(&section);
        section.extend_from_slice(&crc.to_be_bytes());
        section
    }

    /// The section as HLS writes it: `0x` and upper-case hex (RFC 8216 4.2
    /// hexadecimal-sequence).
    pub fn hex(&self) -> String {
        let mut out = String::from("0x");
        for b in self.section() {
            out.push_str(&format!("{b:02X}"));
        }
        out
    }

    /// The section as DASH `<scte35:Binary>` holds it: base64.
    pub fn base64(&self) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(self.section())
    }
}

/// A one-bit flag (set), 6 reserved bits (ones) and a 33-bit value: the 5 bytes of
/// `splice_time()` and `break_duration()`.
fn flag_and_33_bits(value: u64) -> [u8; 5] {
    let value = value & PTS_MASK;
    [
        0x80 | 0x7E | (value >> 32) as u8 & 0x01,
        (value >> 24) as u8,
        (value >> 16) as u8,
        (value >> 8) as u8,
        value as u8,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SCTE 35 (2023r1) 14.2 gives a `splice_insert` example,
    /// `/DAvAAAAAAAA///wFAVIAACPf+/+c2nALv4AUsz1AAAAAAAKAAhDVUVJAAABNWLbowo=`. Made from
    /// the same fields, the `splice_insert()` bytes are the standard's byte for byte; the
    /// section differs only where this writer chooses otherwise (cw_index 0, where the
    /// example has 0xFF, and no avail_descriptor, so a section_length 10 bytes shorter).
    #[test]
    fn a_splice_insert_is_the_standards_example() {
        use base64::Engine as _;
        let example = base64::engine::general_purpose::STANDARD
            .decode("/DAvAAAAAAAA///wFAVIAACPf+/+c2nALv4AUsz1AAAAAAAKAAhDVUVJAAABNWLbowo=")
            .expect("base64");
        let splice = SpliceInsert {
            event_id: 0x4800_008F,
            pts_time: 0x0_7369_C02E,
            pts_adjustment: 0,
            duration: 0x0052_CCF5,
            unique_program_id: 0,
        };
        let section = splice.section();
        assert_eq!(section.len(), 3 + 0x25);
        assert_eq!(
            section.get(..14),
            Some(&[0xFC, 0x30, 0x25, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xF0, 0x14, 0x05][..])
        );
        assert_eq!(section.get(14..34), example.get(14..34));
        assert_eq!(crc32(&section), 0, "the CRC covers the section");
        assert_eq!(crc32(&example), 0, "as the standard's own");
        assert!(splice.hex().starts_with("0xFC3025"));
    }

    #[test]
    fn adjustment_and_33_bit_times_wrap() {
        let splice = SpliceInsert {
            event_id: 1,
            pts_time: (1 << 33) + 5,
            pts_adjustment: (1 << 32) + 126_000,
            duration: 90_000,
            unique_program_id: 7,
        };
        let s = splice.section();
        assert_eq!(s.get(4..9), Some(&[0x01, 0x00, 0x01, 0xEC, 0x30][..]));
        assert_eq!(s.get(20..25), Some(&[0xFE, 0, 0, 0, 5][..]));
        assert_eq!(crc32(&s), 0);
    }
}
