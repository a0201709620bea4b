//! `ByteRange`, the half-open span of an object every read asks for, and the cutting of a
//! list of ranges into batches of bounded size (how a streamed body keeps its memory small).
//!
//! Pure data with no I/O: the reads that fetch the ranges are the backends'; checking a
//! range against an object version is `identity.rs`'s.

use std::fmt;

/// A half-open byte range `[start, start + len)` of an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ByteRange {
    /// First byte offset in the object.
    pub start: u64,
    /// Number of bytes.
    pub len: u64,
}

impl ByteRange {
    /// The range `[start, start + len)`.
    pub fn new(start: u64, len: u64) -> Self {
        Self { start, len }
    }

    /// One past the last byte, saturating (a range never wraps).
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.len)
    }
}

impl fmt::Display for ByteRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bytes {}-{}", self.start, self.end().saturating_sub(1))
    }
}

/// Split `ranges` into batches of at most `chunk_bytes` bytes in total, cutting a range
/// across two batches where needed. Every byte of `ranges` is in exactly one batch, in order.
pub fn chunk_batches(ranges: &[ByteRange], chunk_bytes: usize) -> Vec<Vec<ByteRange>> {
    let limit = chunk_bytes.max(1) as u64;
    let mut batches: Vec<Vec<ByteRange>> = Vec::new();
    let mut current: Vec<ByteRange> = Vec::new();
    let mut filled = 0u64;
    for range in ranges {
        let mut rest = *range;
        while rest.len > 0 {
            let take = rest.len.min(limit - filled);
            current.push(ByteRange::new(rest.start, take));
            filled += take;
            // Saturating: a range reaching past `u64::MAX` is refused by the read that
            // checks it against the object, not here.
            rest = ByteRange::new(rest.start.saturating_add(take), rest.len - take);
            if filled == limit {
                // The next batch is sized like this one: no growth on the hot path.
                let next = Vec::with_capacity(current.len());
                batches.push(std::mem::replace(&mut current, next));
                filled = 0;
            }
        }
    }
    if !current.is_empty() {
        batches.push(current);
    }
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_cover_every_byte_in_order_within_the_limit() {
        let ranges = [
            ByteRange::new(0, 5),
            ByteRange::new(100, 12),
            ByteRange::new(200, 1),
        ];
        let batches = chunk_batches(&ranges, 8);
        assert!(batches
            .iter()
            .all(|b| b.iter().map(|r| r.len).sum::<u64>() <= 8));
        let flat: Vec<ByteRange> = batches.concat();
        let mut bytes = Vec::new();
        for r in &flat {
            bytes.extend(r.start..r.end());
        }
        let mut expected = Vec::new();
        for r in &ranges {
            expected.extend(r.start..r.end());
        }
        assert_eq!(bytes, expected);
        assert_eq!(batches.len(), 3);
    }
}
