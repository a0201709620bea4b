//! Length-prefixed NAL units (ISO/IEC 14496-15) to Annex B byte streams (ITU-T H.264 /
//! H.265 Annex B), as MPEG-TS carries H.264 and HEVC.
//!
//! Only 4-byte lengths are converted: a 4-byte length becomes the 4-byte start code
//! `00 00 00 01`, so the stream is exactly as long as the samples and the TS layout is a
//! pure function of the sample sizes, known before any byte is read. Files with 1- or
//! 2-byte lengths (rare; no encoder in common use writes them) would need every sample read
//! to know its size, and are refused for TS (`package::ts`), never guessed.

/// The start code written before every NAL unit.
pub const START_CODE: [u8; 4] = [0, 0, 0, 1];

/// The access unit delimiter before every H.264 access unit: `primary_pic_type` 7 (any
/// slice type), so it is right whatever the frame holds (H.264 7.3.2.4).
pub const H264_AUD: [u8; 6] = [0, 0, 0, 1, 0x09, 0xF0];
/// The HEVC access unit delimiter (H.265 7.3.2.5): NAL type 35, `pic_type` 2 (any).
pub const HEVC_AUD: [u8; 7] = [0, 0, 0, 1, 0x46, 0x01, 0x50];

/// `aud`, then each parameter set behind a start code: what goes before a key frame.
pub fn key_frame_prefix(aud: &[u8], parameter_sets: &[Vec<u8>]) -> Vec<u8> {
    let mut out = aud.to_vec();
    for set in parameter_sets {
        out.extend_from_slice(&START_CODE);
        out.extend_from_slice(set);
    }
    out
}

/// Rewrites one sample of 4-byte-length NAL units into Annex B, in place, chunk by chunk.
///
/// A length that runs past the sample's end is taken to end with the sample; fewer than
/// four bytes left at a length position are copied as they are. Either way the output is
/// as long as the input, whatever the bytes say.
#[derive(Debug, Clone, Copy)]
pub struct NalRewriter {
    /// Sample bytes not yet seen.
    remaining: u64,
    /// Bytes left in the current NAL unit's payload; 0 at a length field.
    in_nal: u64,
    /// Bytes of the current length field seen (0 to 3), and its value so far.
    field_pos: u8,
    field: u32,
}

impl NalRewriter {
    /// A rewriter for a sample of `len` bytes.
    pub fn new(len: u64) -> Self {
        Self {
            remaining: len,
            in_nal: 0,
            field_pos: 0,
            field: 0,
        }
    }

    /// Rewrite the next bytes of the sample (at most what remains of it) in place.
    pub fn rewrite(&mut self, bytes: &mut [u8]) {
        let mut i = 0;
        while i < bytes.len() && self.remaining > 0 {
            if self.in_nal > 0 {
                let n = (self.in_nal.min(self.remaining) as usize).min(bytes.len() - i);
                i += n;
                self.in_nal -= n as u64;
                self.remaining -= n as u64;
                continue;
            }
            if self.field_pos == 0 && self.remaining < 4 {
                // Not room for a length: the rest is copied as it is.
                self.in_nal = self.remaining;
                continue;
            }
            let byte = &mut bytes[i];
            self.field = (self.field << 8) | u32::from(*byte);
            *byte = START_CODE[usize::from(self.field_pos)];
            self.field_pos += 1;
            i += 1;
            self.remaining -= 1;
            if self.field_pos == 4 {
                self.in_nal = u64::from(self.field).min(self.remaining);
                self.field_pos = 0;
                self.field = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite_in_chunks(sample: &[u8], chunk: usize) -> Vec<u8> {
        let mut out = sample.to_vec();
        let mut rewriter = NalRewriter::new(sample.len() as u64);
        for part in out.chunks_mut(chunk) {
            rewriter.rewrite(part);
        }
        out
    }

    /// Given two NAL units, then every chunking gives the same Annex B bytes.
    #[test]
    fn lengths_become_start_codes_across_any_chunking() {
        let sample = [0, 0, 0, 2, 0x65, 0xAA, 0, 0, 0, 3, 0x41, 0, 0];
        let expected = [0, 0, 0, 1, 0x65, 0xAA, 0, 0, 0, 1, 0x41, 0, 0];
        for chunk in 1..=sample.len() {
            assert_eq!(rewrite_in_chunks(&sample, chunk), expected, "chunk {chunk}");
        }
    }

    /// Given lengths that lie (past the end, or a tail too short for a length), then the
    /// output keeps the sample's length and nothing panics.
    #[test]
    fn lying_lengths_keep_the_size() {
        let past_end = [0, 0, 1, 0, 0x65, 1, 2];
        assert_eq!(rewrite_in_chunks(&past_end, 3), [0, 0, 0, 1, 0x65, 1, 2]);
        let short_tail = [0, 0, 0, 1, 0x65, 9, 9];
        assert_eq!(rewrite_in_chunks(&short_tail, 2), [0, 0, 0, 1, 0x65, 9, 9]);
        assert_eq!(rewrite_in_chunks(&[], 1), Vec::<u8>::new());
        // More bytes offered than the sample has: the extra ones are left alone.
        let mut extra = [0, 0, 0, 1, 0x09, 7, 7];
        NalRewriter::new(5).rewrite(&mut extra);
        assert_eq!(extra, [0, 0, 0, 1, 0x09, 7, 7]);
    }

    #[test]
    fn key_frames_get_the_delimiter_and_parameter_sets() {
        let prefix = key_frame_prefix(&H264_AUD, &[vec![0x67, 1], vec![0x68, 2]]);
        assert_eq!(
            prefix,
            [0, 0, 0, 1, 0x09, 0xF0, 0, 0, 0, 1, 0x67, 1, 0, 0, 0, 1, 0x68, 2]
        );
    }
}
