//! The caption bytes in one video sample's head: its NAL units walked up to the first
//! coded slice, each SEI unit's messages read, and the `cc_data()` triples of ATSC A/53
//! user data (`GA94`, type 3) handed to the [`CaptionTracker`].
//!
//! Every length comes from the file: a NAL length or an SEI payload size that runs past
//! the bytes read is cut to them (the head read is capped, so a long SEI unit is cut
//! legitimately), never trusted; whole `cc_data` triples only.

use super::cc::CaptionTracker;
use crate::media::bits::unescape_rbsp;

/// How a track's samples frame their NAL units (ISO/IEC 14496-15 5.3.2, 8.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NalFraming {
    /// Bytes of each unit's length prefix (`lengthSizeMinusOne + 1`: 1, 2 or 4).
    pub length_size: u8,
    /// HEVC (2-byte NAL header) rather than AVC (1 byte).
    pub hevc: bool,
}

/// Most NAL units looked at before the first slice: an access unit opens with an
/// access unit delimiter, parameter sets and a few SEI units, not hundreds.
const MAX_UNITS: usize = 64;

/// SEI payload type of `user_data_registered_itu_t_t35` (H.264 D.1.6, H.265 D.2.6).
const USER_DATA_REGISTERED: u32 = 4;

/// Feed the caption data of the SEI units in `head` (a sample's first bytes) to `tracker`.
pub(crate) fn read_sample_head(head: &[u8], framing: NalFraming, tracker: &mut CaptionTracker) {
    let size = usize::from(framing.length_size);
    if !matches!(size, 1 | 2 | 4) {
        return;
    }
    let mut rest = head;
    for _ in 0..MAX_UNITS {
        let Some((prefix, after)) = rest.split_at_checked(size) else {
            return;
        };
        let len = prefix
            .iter()
            .fold(0usize, |n, b| (n << 8) | usize::from(*b));
        // A unit cut by the end of the head is read as far as it goes.
        let (unit, next) = after.split_at(len.min(after.len()));
        rest = next;
        let Some(&first) = unit.first() else {
            continue;
        };
        let (is_slice, sei_body) = match framing.hevc {
            // Types 0-31 are VCL; 39 is a prefix SEI (H.265 table 7-1).
            true => {
                let kind = (first >> 1) & 0x3f;
                (kind < 32, (kind == 39).then(|| unit.get(2..)).flatten())
            }
            false => {
                let kind = first & 0x1f;
                (
                    matches!(kind, 1..=5),
                    (kind == 6).then(|| unit.get(1..)).flatten(),
                )
            }
        };
        if is_slice {
            // SEI units come before the first slice of an access unit (H.264 7.4.1.2.3).
            return;
        }
        if let Some(body) = sei_body {
            read_sei(&unescape_rbsp(body), tracker);
        }
    }
}

/// Read the SEI messages of one unit's RBSP (H.264 7.3.2.3.1, H.265 7.3.5).
fn read_sei(mut rbsp: &[u8], tracker: &mut CaptionTracker) {
    // Each message takes at least two bytes, so this ends.
    while rbsp.len() >= 2 {
        let Some(payload_type) = ff_coded(&mut rbsp) else {
            return;
        };
        let Some(payload_size) = ff_coded(&mut rbsp) else {
            return;
        };
        let size = usize::try_from(payload_size).unwrap_or(usize::MAX);
        let (payload, next) = rbsp.split_at(size.min(rbsp.len()));
        if payload_type == USER_DATA_REGISTERED {
            read_a53(payload, tracker);
        }
        rbsp = next;
        // What is left may be only the rbsp_trailing_bits (0x80).
        if rbsp.first() == Some(&0x80) && rbsp.len() == 1 {
            return;
        }
    }
}

/// A value coded as a run of 0xFF bytes and a last byte, summed (payload type and size).
fn ff_coded(rbsp: &mut &[u8]) -> Option<u32> {
    let mut value = 0u32;
    loop {
        let (&byte, rest) = rbsp.split_first()?;
        *rbsp = rest;
        value = value.checked_add(u32::from(byte))?;
        if byte != 0xff {
            return Some(value);
        }
    }
}

/// `user_data_registered_itu_t_t35` carrying ATSC A/53 Part 4 caption data: country
/// 0xB5 (United States), provider 0x0031 (ATSC), identifier `GA94`, type code 3, then
/// `cc_data()` (CEA-708 4.4): flags and `cc_count`, a reserved byte, and `cc_count` triples.
fn read_a53(payload: &[u8], tracker: &mut CaptionTracker) {
    let Some(rest) = payload.strip_prefix(&[0xb5, 0x00, 0x31, b'G', b'A', b'9', b'4', 0x03]) else {
        return;
    };
    let Some((&flags, rest)) = rest.split_first() else {
        return;
    };
    let process_cc_data = flags & 0x40 != 0;
    let cc_count = usize::from(flags & 0x1f);
    let Some(triples) = rest.get(1..) else {
        return;
    };
    if !process_cc_data {
        return;
    }
    for triple in triples.chunks_exact(3).take(cc_count) {
        if let &[head, one, two] = triple {
            tracker.cc(head & 0x04 != 0, head & 0x03, one, two);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::captions::testing::{a53_sei_nal, escape_rbsp, with_parity};
    use crate::media::CaptionChannel;

    const AVC4: NalFraming = NalFraming {
        length_size: 4,
        hevc: false,
    };

    fn sample(units: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for unit in units {
            out.extend_from_slice(&(unit.len() as u32).to_be_bytes());
            out.extend_from_slice(unit);
        }
        out
    }

    fn found(head: &[u8], framing: NalFraming) -> Vec<CaptionChannel> {
        let mut tracker = CaptionTracker::default();
        read_sample_head(head, framing, &mut tracker);
        tracker.channels()
    }

    /// A resume-caption-loading on channel 1 of field 1, then "HI".
    fn cc1_pairs() -> Vec<(u8, u8, u8)> {
        vec![
            (0, with_parity(0x14), with_parity(0x20)),
            (0, with_parity(b'H'), with_parity(b'I')),
        ]
    }

    #[test]
    fn an_a53_sei_before_the_slice_is_found() {
        let head = sample(&[
            vec![0x09, 0xf0],
            a53_sei_nal(&cc1_pairs()),
            vec![0x65, 0x88],
        ]);
        assert_eq!(found(&head, AVC4), vec![CaptionChannel::Cea608(1)]);
    }

    #[test]
    fn an_sei_after_the_first_slice_is_not_read() {
        let head = sample(&[vec![0x65, 0x88], a53_sei_nal(&cc1_pairs())]);
        assert_eq!(found(&head, AVC4), vec![]);
    }

    #[test]
    fn hevc_prefix_sei_is_read_with_its_two_byte_header() {
        let avc = a53_sei_nal(&cc1_pairs());
        let mut hevc = vec![39 << 1, 0x01];
        hevc.extend_from_slice(&avc[1..]);
        let head = sample(&[hevc, vec![19 << 1, 0x01, 0xaf]]);
        let framing = NalFraming {
            length_size: 4,
            hevc: true,
        };
        assert_eq!(found(&head, framing), vec![CaptionChannel::Cea608(1)]);
    }

    /// Given an SEI whose payload holds `00 00 0x` runs (escaped in the stream), then
    /// the emulation prevention bytes are removed before the triples are read.
    #[test]
    fn emulation_prevention_bytes_are_removed() {
        // Two invalid null triples (00 00 00 after a marker byte of 0xF8) force escapes.
        let mut pairs = vec![(0, 0, 0)];
        pairs.extend(cc1_pairs());
        let nal = a53_sei_nal(&pairs);
        assert!(
            nal.windows(3).any(|w| w == [0, 0, 3]),
            "escaped: {nal:02x?}"
        );
        assert_eq!(
            found(&sample(&[nal]), AVC4),
            vec![CaptionChannel::Cea608(1)]
        );
        assert_eq!(escape_rbsp(&[0, 0, 1]), vec![0, 0, 3, 1]);
    }

    /// Hostile heads: truncated at every byte, lying NAL lengths and SEI sizes, odd
    /// length sizes; never a panic, and nothing made up.
    #[test]
    fn truncated_and_lying_input_is_read_as_far_as_it_goes() {
        let full = sample(&[a53_sei_nal(&cc1_pairs()), vec![0x65, 0x88]]);
        for cut in 0..full.len() {
            let _ = found(&full[..cut], AVC4);
        }
        // A NAL length far past the head.
        let mut lying = full.clone();
        lying[..4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(found(&lying, AVC4), vec![CaptionChannel::Cea608(1)]);
        // An SEI payload size of 255 * 1000 + ...: cut to the unit.
        let mut sei = vec![0x06, 0x04];
        sei.extend(std::iter::repeat_n(0xff, 1000));
        sei.push(0x10);
        sei.extend_from_slice(&[0xb5, 0x00, 0x31]);
        assert_eq!(found(&sample(&[sei]), AVC4), vec![]);
        // cc_count says 31 triples, the payload holds one and a half.
        let mut short = a53_sei_nal(&cc1_pairs());
        short.truncate(short.len() - 4);
        let _ = found(&sample(&[short]), AVC4);
        for size in [0, 3, 5, 8] {
            let framing = NalFraming {
                length_size: size,
                hevc: false,
            };
            assert_eq!(found(&full, framing), vec![]);
        }
        // Zero-length units and an empty head.
        assert_eq!(found(&[0, 0, 0, 0, 0, 0, 0, 0], AVC4), vec![]);
        assert_eq!(found(&[], AVC4), vec![]);
    }

    /// Given 20,000 heads made of a real one (an SEI with 608 and 708 data and a slice)
    /// mutated at random (a fixed seed: bytes overwritten, cut, lengths changed), read
    /// with every framing, then none panics, and any channel found is a real one.
    #[test]
    fn mutated_heads_never_panic_nor_invent_channels() {
        let mut pairs = cc1_pairs();
        pairs.extend([
            (3, 0x02, 0x21),
            (2, b'A', 0x00),
            (1, with_parity(0x15), 0x20),
        ]);
        let real = sample(&[
            vec![0x09, 0xf0],
            a53_sei_nal(&pairs),
            vec![0x65, 0x88, 0x84],
        ]);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let mut head = real.clone();
            for _ in 0..1 + next() % 6 {
                let at = (next() % head.len() as u64) as usize;
                head[at] = next() as u8;
            }
            head.truncate(1 + (next() % head.len() as u64) as usize);
            let framing = NalFraming {
                length_size: [1, 2, 4][(next() % 3) as usize],
                hevc: next() % 2 == 0,
            };
            for channel in found(&head, framing) {
                let known = match channel {
                    CaptionChannel::Cea608(n) => (1..=4).contains(&n),
                    CaptionChannel::Cea708(n) => (1..=63).contains(&n),
                };
                assert!(known, "{channel:?} from {head:02x?}");
            }
        }
    }

    #[test]
    fn other_t35_providers_and_user_data_types_are_not_captions() {
        let nal = a53_sei_nal(&cc1_pairs());
        for (at, value) in [(3, 0xb4), (5, 0x2f), (9, b'X'), (10, 0x06)] {
            let mut other = nal.clone();
            other[at] = value;
            assert_eq!(found(&sample(&[other]), AVC4), vec![], "byte {at}");
        }
    }
}
