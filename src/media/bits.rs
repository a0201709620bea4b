//! A small bounded bit reader for codec headers: fixed-width fields, Exp-Golomb codes
//! (ITU-T H.265 9.2, H.264 9.1) and AV1 `uvlc()` (AV1 spec 4.10.3), over an RBSP with the
//! emulation prevention bytes removed (H.265 7.4.2, H.264 7.4.1).
//!
//! Parameter sets and sequence headers come from the file, so every read is checked: a read
//! past the end, or a code longer than 32 bits, is `None`, never a panic. The RBSP copy is
//! bounded by the input, which is itself bounded by the `moov` size limit.

/// Removes emulation prevention bytes: every `0x03` that follows two zero bytes (H.265
/// 7.3.1.1, H.264 7.3.1). The result is never longer than `nal`.
pub(crate) fn unescape_rbsp(nal: &[u8]) -> Vec<u8> {
    let mut rbsp = Vec::with_capacity(nal.len());
    let mut zeros = 0usize;
    for &byte in nal {
        if zeros >= 2 && byte == 0x03 {
            zeros = 0;
            continue;
        }
        zeros = if byte == 0 { zeros + 1 } else { 0 };
        rbsp.push(byte);
    }
    rbsp
}

/// How many bytes of the escaped `nal` hold its first `rbsp_len` RBSP bytes: the inverse of
/// [`unescape_rbsp`] for a prefix. An emulation prevention byte just after the prefix is not
/// counted. `None` when `nal` holds fewer than `rbsp_len` RBSP bytes.
pub(crate) fn escaped_len(nal: &[u8], rbsp_len: usize) -> Option<usize> {
    if rbsp_len == 0 {
        return Some(0);
    }
    let mut kept = 0usize;
    let mut zeros = 0usize;
    for (i, &byte) in nal.iter().enumerate() {
        if zeros >= 2 && byte == 0x03 {
            zeros = 0;
            continue;
        }
        zeros = if byte == 0 { zeros + 1 } else { 0 };
        kept += 1;
        if kept == rbsp_len {
            return i.checked_add(1);
        }
    }
    None
}

/// `Ceil(Log2(x))` as the H.264 and H.265 specifications define it (0 for 0 and 1).
pub(crate) fn ceil_log2(x: u64) -> u32 {
    if x <= 1 {
        0
    } else {
        64 - (x - 1).leading_zeros()
    }
}

/// Reads bits most significant first from a byte slice.
pub(crate) struct BitReader<'a> {
    bytes: &'a [u8],
    /// Position of the next bit, counted from the first byte's top bit.
    pos: usize,
}

impl<'a> BitReader<'a> {
    /// A reader at the first bit of `bytes`.
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    /// Bits read so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Whether the next bit is the first of a byte.
    pub(crate) fn byte_aligned(&self) -> bool {
        self.pos.is_multiple_of(8)
    }

    /// One bit, as a flag.
    pub(crate) fn flag(&mut self) -> Option<bool> {
        let byte = self.bytes.get(self.pos / 8)?;
        let bit = (byte >> (7 - self.pos % 8)) & 1;
        self.pos += 1;
        Some(bit == 1)
    }

    /// `n` bits (at most 32) as an unsigned number, `f(n)` / `u(n)`.
    pub(crate) fn bits(&mut self, n: u32) -> Option<u32> {
        if n > 32 {
            return None;
        }
        let mut value = 0u64;
        for _ in 0..n {
            value = (value << 1) | u64::from(self.flag()?);
        }
        u32::try_from(value).ok()
    }

    /// Skips `n` bits.
    pub(crate) fn skip(&mut self, n: usize) -> Option<()> {
        let end = self.pos.checked_add(n)?;
        if end > self.bytes.len().saturating_mul(8) {
            return None;
        }
        self.pos = end;
        Some(())
    }

    /// An unsigned Exp-Golomb code, `ue(v)`; `None` past 32 leading zeros.
    pub(crate) fn ue(&mut self) -> Option<u32> {
        let mut zeros = 0u32;
        while !self.flag()? {
            zeros += 1;
            if zeros > 31 {
                return None;
            }
        }
        let rest = self.bits(zeros)?;
        let value = (1u64 << zeros) - 1 + u64::from(rest);
        u32::try_from(value).ok()
    }

    /// A signed Exp-Golomb code, `se(v)`.
    pub(crate) fn se(&mut self) -> Option<i64> {
        let k = i64::from(self.ue()?);
        Some(if k % 2 == 1 { (k + 1) / 2 } else { -(k / 2) })
    }

    /// AV1 `uvlc()`: like `ue(v)`, but 32 or more leading zeros mean 2^32 - 1.
    pub(crate) fn uvlc(&mut self) -> Option<u32> {
        let mut zeros = 0u32;
        while !self.flag()? {
            zeros += 1;
            if zeros >= 32 {
                return Some(u32::MAX);
            }
        }
        let rest = self.bits(zeros)?;
        let value = (1u64 << zeros) - 1 + u64::from(rest);
        Some(u32::try_from(value).unwrap_or(u32::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_codes_read_in_order() {
        // 1 | 010 (ue 1) | 00111 (ue 6) | 011 (se -1) | 00100 (se 2) | 0xab | 0 | 6 more bits.
        let bytes = [0b1010_0011, 0b1011_0010, 0b0101_0101, 0b1000_0000];
        let mut r = BitReader::new(&bytes);
        assert_eq!(r.flag(), Some(true));
        assert_eq!(r.ue(), Some(1));
        assert_eq!(r.ue(), Some(6));
        assert_eq!(r.se(), Some(-1));
        assert_eq!(r.se(), Some(2));
        assert_eq!(r.bits(8), Some(0xab));
        assert_eq!(r.bits(1), Some(0));
        assert_eq!(r.skip(6), Some(()));
        assert_eq!(r.flag(), None);
        assert_eq!(r.skip(1), None);
    }

    #[test]
    fn hostile_codes_end_in_none() {
        // 40 zero bits: no Exp-Golomb code ends within 32 leading zeros.
        let zeros = [0u8; 5];
        assert_eq!(BitReader::new(&zeros).ue(), None);
        assert_eq!(BitReader::new(&zeros).uvlc(), Some(u32::MAX));
        assert_eq!(BitReader::new(&[]).flag(), None);
        assert_eq!(BitReader::new(&[0xff]).bits(33), None);
        assert_eq!(BitReader::new(&[0xff]).bits(9), None);
        assert_eq!(BitReader::new(&[0xff]).skip(usize::MAX), None);
    }

    #[test]
    fn escaped_lengths_count_emulation_prevention_bytes_inside_the_prefix_only() {
        let nal = [0x42, 0x00, 0x00, 0x03, 0x01, 0x00, 0x00, 0x03, 0x00];
        assert_eq!(escaped_len(&nal, 0), Some(0));
        assert_eq!(escaped_len(&nal, 3), Some(3));
        assert_eq!(escaped_len(&nal, 4), Some(5));
        assert_eq!(escaped_len(&nal, 6), Some(7));
        assert_eq!(escaped_len(&nal, 7), Some(9));
        assert_eq!(escaped_len(&nal, 8), None);
        assert_eq!(
            (ceil_log2(0), ceil_log2(1), ceil_log2(2), ceil_log2(3)),
            (0, 0, 1, 2)
        );
        assert_eq!((ceil_log2(4), ceil_log2(5), ceil_log2(1 << 40)), (2, 3, 40));
    }

    #[test]
    fn emulation_prevention_bytes_are_removed() {
        let nal = [0x42, 0x00, 0x00, 0x03, 0x01, 0x00, 0x00, 0x03, 0x00, 0x03];
        assert_eq!(
            unescape_rbsp(&nal),
            [0x42, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03]
        );
        assert_eq!(unescape_rbsp(&[0x03, 0x00, 0x03]), [0x03, 0x00, 0x03]);
    }
}
