//! NAL units of length-prefixed video samples (AVC and HEVC in MP4, ISO/IEC 14496-15),
//! found while the segment's bytes stream past, and the subsample layout made from them.
//!
//! The scanner keeps a few bytes of state (the length prefix and NAL header being read)
//! and a list of (length, is-VCL, slice header length) per sample, so scanning a segment
//! costs no buffering. For `cbcs` it also copies the start of each VCL and parameter set
//! unit (at most `MAX_SLICE_HEADER_BYTES`, one buffer reused for every unit) to work out
//! where the slice header ends, and takes in-band parameter sets (`avc3`, `hev1`) on the
//! way.

use std::sync::Arc;

use super::ProtectError;
use crate::crypto::{Scheme, Subsample};
use crate::media::slice_header::{SliceHeaderParams, MAX_SLICE_HEADER_BYTES};

/// A slice header is first read from this many bytes of its unit, and from up to
/// `MAX_SLICE_HEADER_BYTES` only when they do not hold it all: x264's and x265's headers
/// take 3 to 30 bytes, so most units cost a 64-byte copy, not a 4 KiB one.
const FIRST_TRY_BYTES: usize = 64;

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

    /// Whether a unit whose header starts with `first` is a parameter set a slice header's
    /// length depends on (AVC SPS and PPS, HEVC SPS and PPS).
    fn is_parameter_set(self, first: u8) -> bool {
        if self.hevc {
            matches!((first >> 1) & 0x3f, 33 | 34)
        } else {
            matches!(first & 0x1f, 7 | 8)
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
    /// Bytes from the NAL header through the end of the slice header (after the length
    /// prefix), when the scanner was asked to read slice headers (`cbcs`); 0 otherwise.
    pub head: u32,
}

/// The start of the unit being read, copied for its slice header or parameter set.
#[derive(Debug)]
struct Capture {
    /// The track's parameter sets: shared with every segment of the track, copied only
    /// when an in-band parameter set changes them.
    params: Arc<SliceHeaderParams>,
    /// The start of the current unit (NAL header on), reused from unit to unit.
    buf: Vec<u8>,
    /// Bytes of the current unit that may be copied (the whole unit, or as much as a
    /// slice header can need); 0 when it is read already or not wanted.
    want: usize,
    /// Bytes to have before the next try at reading the unit.
    next_try: usize,
    /// Bytes of a slice to read it from first ([`FIRST_TRY_BYTES`]; less in tests).
    first_try: usize,
    /// Units read so far in the segment, to name a failing one.
    units: usize,
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
    capture: Option<Capture>,
}

impl NalScanner {
    /// A scanner for samples of `sizes` bytes, in order, that finds each unit's length
    /// and kind (enough for `cenc`).
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
            capture: None,
        };
        scanner.settle();
        scanner
    }

    /// A scanner that also works out where each slice header ends (`Nal::head`), from the
    /// track's parameter sets `params` and those found in the samples (`cbcs`).
    pub fn with_slice_headers(
        format: NalFormat,
        track_id: u32,
        sizes: Vec<u32>,
        params: Arc<SliceHeaderParams>,
    ) -> Self {
        let mut scanner = Self::new(format, track_id, sizes);
        scanner.capture = Some(Capture {
            params,
            buf: Vec::new(),
            want: 0,
            next_try: 0,
            first_try: FIRST_TRY_BYTES,
            units: 0,
        });
        scanner
    }

    /// The scanner, reading slice headers first from `n` bytes (tests: every header then
    /// takes the second read).
    #[cfg(test)]
    pub(super) fn first_try(mut self, n: usize) -> Self {
        if let Some(capture) = self.capture.as_mut() {
            capture.first_try = n;
        }
        self
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
                self.copy(chunk.get(..n as usize).unwrap_or_default())?;
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
                let vcl = self.format.is_vcl(first);
                self.current.push(Nal {
                    len: u32::try_from(len + prefix as u64).unwrap_or(u32::MAX),
                    vcl,
                    head: 0,
                });
                self.skip = len - header;
                self.head_len = 0;
                if let Some(capture) = self.capture.as_mut() {
                    capture.units += 1;
                    if vcl || self.format.is_parameter_set(first) {
                        capture.buf.clear();
                        capture
                            .buf
                            .extend(self.head.get(prefix..need).unwrap_or_default());
                        // The whole unit when it is short, else what a slice header needs.
                        let want = usize::try_from(len).unwrap_or(usize::MAX);
                        capture.want = want.min(MAX_SLICE_HEADER_BYTES);
                        capture.next_try = if vcl {
                            capture.want.min(capture.first_try)
                        } else {
                            capture.want
                        };
                        self.copy(&[])?;
                    }
                }
            } else if self.left_in_sample == 0 {
                return Err(self.malformed("a NAL unit's header is cut off"));
            }
            self.settle();
        }
        Ok(())
    }

    /// Copy `bytes` of the current unit while its start is wanted; once enough is here,
    /// take in a parameter set, or work out where a slice header ends.
    fn copy(&mut self, bytes: &[u8]) -> Result<(), ProtectError> {
        let Some(capture) = self.capture.as_mut() else {
            return Ok(());
        };
        if capture.want == 0 {
            return Ok(());
        }
        let room = capture.next_try.saturating_sub(capture.buf.len());
        let (now, later) = bytes.split_at(room.min(bytes.len()));
        capture.buf.extend_from_slice(now);
        if capture.buf.len() < capture.next_try {
            return Ok(());
        }
        let complete = capture.buf.len() >= capture.want;
        let first = capture.buf.first().copied().unwrap_or(0);
        if !self.format.is_vcl(first) {
            capture.want = 0;
            // A set that cannot be read is dropped by `add_parameter_set`: a slice that
            // refers to it then fails below, as a decoder would.
            Arc::make_mut(&mut capture.params).add_parameter_set(&capture.buf);
            return Ok(());
        }
        // A header read whole from the first bytes is the same read from more of them
        // (every bit it read is there); one that is not may only be cut short: copy on
        // to the end of what may hold it, and read again.
        let head = capture.params.clear_len(&capture.buf);
        let unit = capture.units;
        match head.and_then(|h| u32::try_from(h).ok()) {
            Some(head) => {
                capture.want = 0;
                if let Some(nal) = self.current.last_mut() {
                    nal.head = head;
                }
                Ok(())
            }
            None if !complete => {
                capture.next_try = capture.want;
                self.copy(later)
            }
            None => Err(ProtectError::SliceHeader {
                track_id: self.track_id,
                reason: format!(
                    "sample {} of the segment, NAL unit {unit} of the segment: its slice \
                     header cannot be read (no parameter set with its id before it, a \
                     header out of the standard's bounds, or a kind of slice not read here)",
                    self.sample + 1
                ),
            }),
        }
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

/// The subsample layout of a sample made of `nals` under `scheme`. Non-VCL units stay
/// wholly clear, and so do slices with less than one 16-byte block to protect. Of each
/// other VCL unit:
///
/// - `cbcs`: the length prefix, NAL header and whole slice header (`Nal::head`) are clear,
///   and everything after, from the first byte of slice data to the unit's end, is
///   protected. The protected span is *not* rounded to whole blocks: 23001-7's AVC and
///   HEVC rules for `cbcs` and CMAF ("BytesOfProtectedData SHALL start on the first byte
///   of video data following the slice header") fix where it starts, and the `cbcs`
///   pattern leaves a trailing partial block of a span clear anyway, so 1:9 runs from the
///   slice data on and the unit's last bytes stay clear without help. Moving the leftover
///   into the clear part instead would shift the span off the slice data. Shaka Packager
///   writes the same (`SubsampleGenerator` aligns `cenc`, `cens` and `cbc1` spans, never
///   `cbcs`); Apple's decoders are reported (by Bento4) to find the span from the slice
///   header, not from `senc`, so the two must agree.
/// - `cenc`: the length prefix and NAL header are clear, and the rest is protected in
///   whole 16-byte blocks, the leftover bytes joining the clear part before them (CMAF
///   wants block-aligned `cenc` spans). 23001-7 only recommends (SHOULD) that `cenc`
///   leave the slice header clear too, and the players we serve do not need it.
///
/// A clear run longer than 65535 bytes is split (the field is 16 bits); past `max`
/// subsamples, units from the start are left clear until the layout fits.
///
/// # Errors
/// [`ProtectError::MalformedSample`] when even that does not fit, or when a `cbcs` slice
/// header runs past its unit.
pub fn video_subsamples(
    nals: &[Nal],
    format: NalFormat,
    scheme: Scheme,
    max: usize,
    track_id: u32,
) -> Result<Vec<Subsample>, ProtectError> {
    let prefix = u32::from(format.length_size);
    // (clear, protected) per unit, clear runs merged into the next protected one.
    let mut spans: Vec<(u64, u32)> = Vec::new();
    let mut clear: u64 = 0;
    for nal in nals {
        let protected = if scheme == Scheme::Cbcs {
            let lead = prefix.saturating_add(nal.head);
            if nal.vcl && lead > nal.len {
                return Err(ProtectError::MalformedSample {
                    track_id,
                    reason: "a slice header runs past its NAL unit".into(),
                });
            }
            nal.len - lead.min(nal.len)
        } else {
            let body = nal.len.saturating_sub(prefix + format.header_len());
            body - body % 16
        };
        if !nal.vcl || protected < 16 {
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
