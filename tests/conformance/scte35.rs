//! A small SCTE-35 reader, written from ANSI/SCTE 35 and not from vodpack: the
//! `splice_info_section` of a break's `SCTE35-OUT` attribute or its DASH event, decoded
//! field by field with its CRC_32 checked, for the ad-break and sequence tests to compare
//! with the document's break.

/// A `splice_info_section` as read here, straight from ANSI/SCTE 35 (2023r1) 9.6
/// (Table 5), 9.7.3 (Table 8), 9.8.1 and 9.8.2 (Tables 14, 15), with its CRC_32
/// recomputed as ISO/IEC 13818-1 Annex A defines it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Splice {
    pub(super) pts_adjustment: u64,
    pub(super) event_id: u32,
    pub(super) out_of_network: bool,
    pub(super) program_splice: bool,
    pub(super) immediate: bool,
    pub(super) pts_time: Option<u64>,
    pub(super) auto_return: bool,
    pub(super) duration: u64,
    pub(super) descriptors: Vec<(u8, Vec<u8>)>,
}

/// MSB-first bit reader over a byte slice.
struct Bits<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Bits<'_> {
    fn read(&mut self, n: usize) -> u64 {
        let mut value = 0u64;
        for _ in 0..n {
            let byte = self.bytes[self.at / 8];
            value = value << 1 | u64::from(byte >> (7 - self.at % 8) & 1);
            self.at += 1;
        }
        value
    }
}

fn mpeg_crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        for bit in (0..8).rev() {
            let top = (crc >> 31) ^ u32::from(b >> bit & 1);
            crc <<= 1;
            if top == 1 {
                crc ^= 0x04C1_1DB7;
            }
        }
    }
    crc
}

pub(super) fn decode_splice(section: &[u8]) -> Splice {
    let mut r = Bits {
        bytes: section,
        at: 0,
    };
    assert_eq!(r.read(8), 0xFC, "table_id");
    assert_eq!(r.read(1), 0, "section_syntax_indicator");
    assert_eq!(r.read(1), 0, "private_indicator");
    r.read(2); // sap_type
    let section_length = r.read(12) as usize;
    assert_eq!(section.len(), 3 + section_length, "section_length");
    assert_eq!(r.read(8), 0, "protocol_version");
    assert_eq!(r.read(1), 0, "encrypted_packet");
    r.read(6); // encryption_algorithm
    let pts_adjustment = r.read(33);
    r.read(8); // cw_index
    r.read(12); // tier
    let command_length = r.read(12) as usize;
    assert_eq!(r.read(8), 5, "splice_command_type: splice_insert");
    let command_start = r.at / 8;
    let event_id = r.read(32) as u32;
    assert_eq!(r.read(1), 0, "splice_event_cancel_indicator");
    r.read(7);
    let out_of_network = r.read(1) == 1;
    let program_splice = r.read(1) == 1;
    let duration_flag = r.read(1) == 1;
    let immediate = r.read(1) == 1;
    r.read(4); // event_id_compliance_flag, reserved
    assert!(program_splice, "component splices are not expected");
    let pts_time = if !immediate {
        let specified = r.read(1) == 1;
        if specified {
            r.read(6);
            Some(r.read(33))
        } else {
            r.read(7);
            None
        }
    } else {
        None
    };
    let (mut auto_return, mut duration) = (false, 0);
    if duration_flag {
        auto_return = r.read(1) == 1;
        r.read(6);
        duration = r.read(33);
    }
    r.read(16); // unique_program_id
    r.read(8); // avail_num
    r.read(8); // avails_expected
    assert_eq!(
        r.at / 8 - command_start,
        command_length,
        "splice_command_length"
    );
    let loop_length = r.read(16) as usize;
    let loop_end = r.at / 8 + loop_length;
    let mut descriptors = Vec::new();
    while r.at / 8 < loop_end {
        let tag = r.read(8) as u8;
        let len = r.read(8) as usize;
        let body = (0..len).map(|_| r.read(8) as u8).collect();
        descriptors.push((tag, body));
    }
    let crc_at = section.len() - 4;
    assert_eq!(
        r.at / 8,
        crc_at,
        "nothing between the descriptors and CRC_32"
    );
    let crc = u32::from_be_bytes(section[crc_at..].try_into().unwrap());
    assert_eq!(crc, mpeg_crc32(&section[..crc_at]), "CRC_32");
    Splice {
        pts_adjustment,
        event_id,
        out_of_network,
        program_splice,
        immediate,
        pts_time,
        auto_return,
        duration,
        descriptors,
    }
}

pub(super) fn unhex(text: &str) -> Vec<u8> {
    let digits = text.strip_prefix("0x").expect("0x hex");
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).expect("hex"))
        .collect()
}
