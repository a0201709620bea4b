//! NAL units of length-prefixed video samples (AVC and HEVC in MP4, ISO/IEC 14496-15),
//! found while the segment's bytes stream past, and the subsample layout made from them.
//!
//! The scanner keeps a few bytes of state (the length prefix and NAL header being read)
//! and a list of (length, is-VCL) per sample, so scanning a segment costs no buffering.

use super::ProtectError;
use crate::crypto::Subsample;

/// How NAL units are framed in a track's samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NalFormat {
    /// Bytes of each unit's length prefix (1, 2 or 4: `lengthSizeMinusOne + 1`).
    pub length_size: u8,
    /// AVC (1-byte NAL header) or HEVC (2-byte header).
    pub hevc: bool,
}

impl NalFormat {
    fn header_len(self) -> u32 {
        if self.hevc {
            2
        } else {
            1
        }
    }

    /// Whether a unit whose header starts with `first` is a VCL (coded slice) unit, the
    /// only kind that is encrypted (23001-7 10.2, 10.4.2).
    fn is_vcl(self, first: u8) -> bool {
        if self.hevc {
            (first >> 1) & 0x3f < 32
        } else {
            matches!(first & 0x1f, 1..=5)
        }
    }
}

/// One NAL unit of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nal {
    /// Bytes of the unit, length prefix included.
    pub len: u32,
    /// A coded slice (encrypted) or not (left clear).
    pub vcl: bool,
}

/// Finds the NAL units of a run of samples from their bytes, fed in chunks.
#[derive(Debug)]
pub struct NalScanner {
    format: NalFormat,
    track_id: u32,
    sizes: Vec<u32>,
    sample: usize,
    left_in_sample: u64,
    head: [u8; 6],
    head_len: usize,
    skip: u64,
    current: Vec<Nal>,
    found: Vec<Vec<Nal>>,
}

impl NalScanner {
    /// A scanner for samples of `sizes` bytes, in order.
    pub fn new(format: NalFormat, track_id: u32, sizes: Vec<u32>) -> Self {
        let first = sizes.first().copied().unwrap_or(0);
        let mut scanner = Self {
            format,
            track_id,
            found: Vec::with_capacity(sizes.len()),
            sizes,
            sample: 0,
            left_in_sample: u64::from(first),
            head: [0; 6],
            head_len: 0,
            skip: 0,
            current: Vec::new(),
        };
        scanner.settle();
        scanner
    }

    fn malformed(&self, reason: &str) -> ProtectError {
        ProtectError::MalformedSample {
            track_id: self.track_id,
            reason: format!("sample {} of the segment: {reason}", self.sample + 1),
        }
    }

    /// Move past finished samples (and empty ones).
    fn settle(&mut self) {
        while self.sample < self.sizes.len()
            && self.left_in_sample == 0
            && self.head_len == 0
            && self.skip == 0
        {
            self.found.push(std::mem::take(&mut self.current));
            self.sample += 1;
            self.left_in_sample = u64::from(self.sizes.get(self.sample).copied().unwrap_or(0));
        }
    }

    /// Scan the next chunk of sample bytes.
    ///
    /// # Errors
    /// [`ProtectError::MalformedSample`] when a unit's length runs past its sample, or
    /// more bytes arrive than the samples hold.
    pub fn feed(&mut self, mut chunk: &[u8]) -> Result<(), ProtectError> {
        let prefix = usize::from(self.format.length_size);
        let need = prefix + self.format.header_len() as usize;
        while !chunk.is_empty() {
            if self.sample >= self.sizes.len() {
                return Err(self.malformed("more bytes than the samples hold"));
            }
            if self.skip > 0 {
                let n = self.skip.min(chunk.len() as u64);
                self.skip -= n;
                self.left_in_sample -= n;
                chunk = chunk.get(n as usize..).unwrap_or_default();
                self.settle();
                continue;
            }
            if self.left_in_sample == 0 {
                return Err(self.malformed("a NAL unit's length prefix is cut off"));
            }
            let (byte, rest) = chunk.split_first().unwrap_or((&0, &[]));
            chunk = rest;
            if let Some(slot) = self.head.get_mut(self.head_len) {
                *slot = *byte;
            }
            self.head_len += 1;
            self.left_in_sample -= 1;
            if self.head_len == need {
                let len =
                    (self.head.iter().take(prefix)).fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
                let header = u64::from(self.format.header_len());
                if len < header || len - header > self.left_in_sample {
                    return Err(self.malformed("a NAL unit's length runs past its sample"));
                }
                let first = self.head.get(prefix).copied().unwrap_or(0);
                self.current.push(Nal {
                    len: u32::try_from(len + prefix as u64).unwrap_or(u32::MAX),
                    vcl: self.format.is_vcl(first),
                });
                self.skip = len - header;
                self.head_len = 0;
            } else if self.left_in_sample == 0 {
                return Err(self.malformed("a NAL unit's header is cut off"));
            }
            self.settle();
        }
        Ok(())
    }

    /// The units of every sample, once all bytes were fed.
    ///
    /// # Errors
    /// [`ProtectError::MalformedSample`] when the bytes ended early.
    pub fn finish(mut self) -> Result<Vec<Vec<Nal>>, ProtectError> {
        self.settle();
        if self.sample < self.sizes.len() {
            return Err(self.malformed("the segment's bytes ended early"));
        }
        Ok(self.found)
    }
}

/// Most subsamples one sample may have: its auxiliary information (IV, count, six bytes
/// per subsample) must fit the one-byte size of `saiz` (14496-12 8.7.8).
pub fn max_subsamples(iv_size: u8) -> usize {
    (255 - 2 - usize::from(iv_size)) / 6
}

/// The subsample layout of a sample made of `nals`: each VCL unit's length prefix and NAL
/// header clear, then the rest of it protected in whole 16-byte blocks (the leftover
/// bytes join the clear part before them, as CMAF wants block-aligned protected spans);
/// non-VCL units and units too short for a block wholly clear. A clear run longer than
/// 65535 bytes is split (the field is 16 bits); past `max` subsamples, units from the
/// start are left clear until the layout fits.
///
/// # Errors
/// [`ProtectError::MalformedSample`] when even that does not fit.
pub fn video_subsamples(
    nals: &[Nal],
    format: NalFormat,
    max: usize,
    track_id: u32,
) -> Result<Vec<Subsample>, ProtectError> {
    let header = u32::from(format.length_size) + format.header_len();
    // (clear, protected) per unit, clear runs merged into the next protected one.
    let mut spans: Vec<(u64, u32)> = Vec::new();
    let mut clear: u64 = 0;
    for nal in nals {
        let body = nal.len.saturating_sub(header);
        let protected = body - body % 16;
        if !nal.vcl || protected == 0 {
            clear += u64::from(nal.len);
            continue;
        }
        spans.push((clear + u64::from(nal.len - protected), protected));
        clear = 0;
    }
    if clear > 0 || spans.is_empty() {
        spans.push((clear, 0));
    }
    loop {
        let out = split_clear_runs(&spans);
        if out.len() <= max {
            return Ok(out);
        }
        if spans.len() < 2 {
            return Err(ProtectError::MalformedSample {
                track_id,
                reason: format!("a sample needs more than {max} subsamples"),
            });
        }
        // Leave the first protected span clear: fold it into the next one's clear part.
        let (c, p) = spans.remove(0);
        if let Some(next) = spans.first_mut() {
            next.0 += c + u64::from(p);
        }
    }
}

fn split_clear_runs(spans: &[(u64, u32)]) -> Vec<Subsample> {
    let mut out = Vec::with_capacity(spans.len());
    for &(mut clear, protected) in spans {
        while clear > u64::from(u16::MAX) {
            out.push(Subsample {
                clear: u32::from(u16::MAX),
                protected: 0,
            });
            clear -= u64::from(u16::MAX);
        }
        out.push(Subsample {
            clear: clear as u32,
            protected,
        });
    }
    out
}
