//! Streaming encryptors: bytes go in as the source delivers them, in chunks of any size,
//! and come out encrypted, with at most 15 bytes held back between chunks (a CBC block
//! split by a chunk boundary).
//!
//! [`SampleEncryptor`] applies Common Encryption (`cenc`, `cbcs`; ISO/IEC 23001-7) to a
//! CMAF segment as each sample's [`SampleLayout`] says; [`WholeSegmentEncryptor`] is HLS
//! AES-128 (CMAF and MPEG-TS segments alike). Feeding more bytes than the layout describes,
//! or fewer before `finish`, is an error: a body cut short or overlong must never pass for
//! an encrypted one.

use aes::cipher::{BlockModeEncrypt, InnerIvInit, KeyInit, KeyIvInit, StreamCipher};
use aes::Aes128;
use bytes::{Bytes, BytesMut};

type Aes128Ctr = ctr::Ctr64BE<Aes128>;
type Aes128Cbc = cbc::Encryptor<Aes128>;

/// AES block size in bytes.
pub const BLOCK: usize = 16;

/// One subsample: `clear` bytes left as they are, then `protected` bytes encrypted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subsample {
    /// Leading bytes left clear.
    pub clear: u32,
    /// Bytes encrypted after them.
    pub protected: u32,
}

/// How one sample is encrypted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleLayout {
    /// The sample's IV: for `cenc` the 8-byte per-sample IV in the high half and a zero
    /// block counter; for `cbcs` the constant IV.
    pub iv: [u8; 16],
    /// Spans covering the sample exactly, in order.
    pub subsamples: Vec<Subsample>,
}

impl SampleLayout {
    /// Bytes the layout covers.
    pub fn len(&self) -> u64 {
        (self.subsamples.iter())
            .map(|s| u64::from(s.clear) + u64::from(s.protected))
            .sum()
    }

    /// True for a layout covering no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Why a stream could not be encrypted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CipherError {
    /// More bytes arrived than the layout describes.
    #[error("encryption input overran its layout at byte {at}")]
    Overrun { at: u64 },
    /// The stream ended before the layout was covered.
    #[error("encryption input ended at byte {at}, short of its layout")]
    Short { at: u64 },
}

/// The cipher mode of a [`SampleEncryptor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleMode {
    /// `cenc`: AES-CTR per sample.
    Ctr,
    /// `cbcs`: AES-CBC per protected span, `crypt` of every `crypt + skip` blocks
    /// encrypted (0:0 encrypts every block).
    CbcPattern { crypt: u8, skip: u8 },
}

/// Where the encryptor is within the current sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// In the clear part of subsample `index`, `done` bytes of it passed.
    Clear { index: usize, done: u32 },
    /// In the protected part of subsample `index`, `done` bytes of it passed.
    Protected { index: usize, done: u32 },
}

/// Common Encryption of one CMAF segment, fed in chunks.
pub struct SampleEncryptor {
    aes: Aes128,
    key: [u8; 16],
    mode: SampleMode,
    lead_clear: u64,
    samples: std::vec::IntoIter<SampleLayout>,
    current: Option<SampleLayout>,
    phase: Phase,
    ctr: Option<Aes128Ctr>,
    /// The CBC chain of the current protected span (`cbcs`).
    cbc: Option<Aes128Cbc>,
    /// Input bytes held back (an incomplete CBC block).
    pending: Vec<u8>,
    /// Input bytes consumed so far.
    at: u64,
}

impl std::fmt::Debug for SampleEncryptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SampleEncryptor")
            .field("mode", &self.mode)
            .field("at", &self.at)
            .finish_non_exhaustive()
    }
}

impl SampleEncryptor {
    /// An encryptor for a stream of `lead_clear` clear bytes followed by `samples`.
    pub fn new(
        key: &[u8; 16],
        mode: SampleMode,
        lead_clear: u64,
        samples: Vec<SampleLayout>,
    ) -> Self {
        let mut samples = samples.into_iter();
        let current = samples.next();
        Self {
            aes: aes_with(key),
            key: *key,
            mode,
            lead_clear,
            samples,
            cbc: None,
            current,
            phase: Phase::Clear { index: 0, done: 0 },
            ctr: None,
            pending: Vec::new(),
            at: 0,
        }
    }

    /// Encrypt the next chunk of input; returns the bytes ready to send (fewer than given
    /// when a CBC block is split, the rest following with the next chunk).
    ///
    /// # Errors
    /// [`CipherError::Overrun`] when the input runs past the layout.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Bytes, CipherError> {
        let mut buf = BytesMut::with_capacity(self.pending.len() + chunk.len());
        buf.extend_from_slice(&self.pending);
        buf.extend_from_slice(chunk);
        self.pending.clear();
        let mut pos = 0usize;
        while pos < buf.len() {
            let avail = buf.len() - pos;
            if self.lead_clear > 0 {
                let n = usize::try_from(self.lead_clear)
                    .unwrap_or(usize::MAX)
                    .min(avail);
                pos += n;
                self.lead_clear -= n as u64;
                continue;
            }
            let Some(sample) = self.current.as_ref() else {
                return Err(CipherError::Overrun {
                    at: self.at + pos as u64,
                });
            };
            let iv = sample.iv;
            let (index, done, protected) = match self.phase {
                Phase::Clear { index, done } => (index, done, false),
                Phase::Protected { index, done } => (index, done, true),
            };
            let Some(sub) = sample.subsamples.get(index).copied() else {
                self.next_sample();
                continue;
            };
            if !protected {
                let left = (sub.clear - done) as usize;
                let n = left.min(avail);
                pos += n;
                self.phase = if n == left {
                    self.start_protected(iv);
                    Phase::Protected { index, done: 0 }
                } else {
                    Phase::Clear {
                        index,
                        done: done + n as u32,
                    }
                };
                continue;
            }
            let left = (sub.protected - done) as usize;
            if left == 0 {
                self.phase = Phase::Clear {
                    index: index + 1,
                    done: 0,
                };
                continue;
            }
            let slice = &mut buf[pos..];
            let n = match self.mode {
                SampleMode::Ctr => {
                    let n = left.min(avail);
                    if let Some(ctr) = self.ctr.as_mut() {
                        ctr.apply_keystream(&mut slice[..n]);
                    }
                    n
                }
                SampleMode::CbcPattern { crypt, skip } => {
                    let (crypt, period) =
                        (usize::from(crypt), usize::from(crypt) + usize::from(skip));
                    let whole = left - left % BLOCK;
                    let done = done as usize;
                    let block_no = done / BLOCK;
                    // Blocks to the end of this run of encrypted (or skipped) blocks.
                    let (encrypt, run_blocks) = match period {
                        0 => (true, usize::MAX / BLOCK),
                        _ if block_no % period < crypt => (true, crypt - block_no % period),
                        _ => (false, period - block_no % period),
                    };
                    let run = (run_blocks * BLOCK - done % BLOCK).min(whole);
                    if whole == 0 {
                        // A trailing partial block stays clear.
                        left.min(avail)
                    } else if !encrypt {
                        run.min(avail)
                    } else if avail < BLOCK {
                        break;
                    } else {
                        let n = run.min(avail - avail % BLOCK);
                        let (blocks, _) = aes::Block::slice_as_chunks_mut(&mut slice[..n]);
                        if let Some(cbc) = self.cbc.as_mut() {
                            cbc.encrypt_blocks(blocks);
                        }
                        n
                    }
                }
            };
            pos += n;
            self.phase = Phase::Protected {
                index,
                done: done + n as u32,
            };
        }
        self.pending.extend_from_slice(&buf[pos..]);
        buf.truncate(pos);
        self.at += pos as u64;
        Ok(buf.freeze())
    }

    /// Check that the whole layout was covered.
    ///
    /// # Errors
    /// [`CipherError::Short`] when it was not.
    pub fn finish(mut self) -> Result<(), CipherError> {
        // Skip over zero-length tails (empty subsamples, empty samples).
        while let Some(sample) = self.current.as_ref() {
            let rest: u64 = match self.phase {
                Phase::Clear { index, done } => {
                    let tail: u64 = sample
                        .subsamples
                        .iter()
                        .skip(index)
                        .map(|s| u64::from(s.clear) + u64::from(s.protected))
                        .sum();
                    tail - u64::from(done)
                }
                Phase::Protected { index, done } => {
                    let tail: u64 = sample
                        .subsamples
                        .iter()
                        .skip(index + 1)
                        .map(|s| u64::from(s.clear) + u64::from(s.protected))
                        .sum();
                    let this = sample
                        .subsamples
                        .get(index)
                        .map_or(0, |s| u64::from(s.protected));
                    tail + this - u64::from(done)
                }
            };
            if rest > 0 {
                return Err(CipherError::Short { at: self.at });
            }
            self.next_sample();
        }
        if self.lead_clear > 0 || !self.pending.is_empty() {
            return Err(CipherError::Short { at: self.at });
        }
        Ok(())
    }

    fn start_protected(&mut self, iv: [u8; 16]) {
        match self.mode {
            // The CTR keystream runs on across the sample's subsamples.
            SampleMode::Ctr => {
                if self.ctr.is_none() {
                    self.ctr = Some(Aes128Ctr::new(&self.key.into(), &iv.into()));
                }
            }
            // cbcs restarts the chain from the constant IV in every protected span.
            SampleMode::CbcPattern { .. } => {
                self.cbc = Some(Aes128Cbc::inner_iv_init(self.aes.clone(), &iv.into()));
            }
        }
    }

    fn next_sample(&mut self) {
        self.current = self.samples.next();
        self.phase = Phase::Clear { index: 0, done: 0 };
        self.ctr = None;
    }
}

/// HLS AES-128: a whole resource in AES-128-CBC with PKCS#7 padding, fed in chunks.
pub struct WholeSegmentEncryptor {
    cbc: Aes128Cbc,
    pending: Vec<u8>,
}

impl std::fmt::Debug for WholeSegmentEncryptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WholeSegmentEncryptor")
    }
}

impl WholeSegmentEncryptor {
    /// An encryptor with `key` and `iv`.
    pub fn new(key: &[u8; 16], iv: &[u8; 16]) -> Self {
        Self {
            cbc: Aes128Cbc::new(&(*key).into(), &(*iv).into()),
            pending: Vec::with_capacity(BLOCK),
        }
    }

    /// The encrypted length of `clear_len` bytes: padded up to the next whole block
    /// (a whole block of padding when already aligned).
    pub fn encrypted_len(clear_len: u64) -> u64 {
        (clear_len / BLOCK as u64 + 1) * BLOCK as u64
    }

    /// Encrypt the next chunk; returns whole blocks, holding back a partial one.
    pub fn feed(&mut self, chunk: &[u8]) -> Bytes {
        self.pending.extend_from_slice(chunk);
        let whole = self.pending.len() - self.pending.len() % BLOCK;
        let mut out = BytesMut::from(&self.pending[..whole]);
        self.pending.drain(..whole);
        let (blocks, _) = aes::Block::slice_as_chunks_mut(&mut out);
        self.cbc.encrypt_blocks(blocks);
        out.freeze()
    }

    /// The last block: the held-back bytes and the PKCS#7 padding, encrypted.
    pub fn finish(mut self) -> Bytes {
        let pad = (BLOCK - self.pending.len()) as u8;
        let mut b = [pad; BLOCK];
        b[..self.pending.len()].copy_from_slice(&self.pending);
        let mut block = aes::Block::from(b);
        self.cbc.encrypt_block(&mut block);
        Bytes::copy_from_slice(&block)
    }
}

fn aes_with(key: &[u8; 16]) -> Aes128 {
    Aes128::new(&(*key).into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use aes::cipher::{block_padding::Pkcs7, BlockCipherDecrypt, BlockModeDecrypt};

    const KEY: [u8; 16] = *b"0123456789abcdef";

    fn cbc_decrypt(iv: [u8; 16], data: &mut [u8]) {
        let aes = aes_with(&KEY);
        let mut chain = iv;
        for block in data.chunks_exact_mut(BLOCK) {
            let mut b = aes::Block::from(<[u8; 16]>::try_from(&*block).unwrap());
            let c: [u8; 16] = b.into();
            aes.decrypt_block(&mut b);
            let mut p: [u8; 16] = b.into();
            for (x, y) in p.iter_mut().zip(chain) {
                *x ^= y;
            }
            block.copy_from_slice(&p);
            chain = c;
        }
    }

    fn feed_in_pieces(enc: &mut SampleEncryptor, input: &[u8], piece: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for chunk in input.chunks(piece) {
            out.extend_from_slice(&enc.feed(chunk).unwrap());
        }
        out
    }

    fn input(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + 3) as u8).collect()
    }

    #[test]
    fn cenc_encrypts_protected_spans_with_one_keystream_per_sample() {
        let layout = |iv: u8| SampleLayout {
            iv: [iv, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0],
            subsamples: vec![
                Subsample {
                    clear: 5,
                    protected: 32,
                },
                Subsample {
                    clear: 3,
                    protected: 16,
                },
            ],
        };
        let clear = input(10 + 56 * 2);
        for piece in [1, 7, 16, 1000] {
            let mut enc =
                SampleEncryptor::new(&KEY, SampleMode::Ctr, 10, vec![layout(1), layout(2)]);
            let out = feed_in_pieces(&mut enc, &clear, piece);
            enc.finish().unwrap();
            assert_eq!(out.len(), clear.len());
            assert_eq!(
                out[..15],
                clear[..15],
                "lead and first clear span untouched"
            );
            assert_eq!(out[47..50], clear[47..50]);
            // Decrypt: one keystream over the protected bytes of the first sample.
            let mut protected: Vec<u8> = [&out[15..47], &out[50..66]].concat();
            Aes128Ctr::new(&KEY.into(), &layout(1).iv.into()).apply_keystream(&mut protected);
            assert_eq!(protected, [&clear[15..47], &clear[50..66]].concat());
        }
    }

    #[test]
    fn cbcs_encrypts_one_block_in_ten_from_the_constant_iv_in_each_span() {
        let iv = [9u8; 16];
        let layout = SampleLayout {
            iv,
            subsamples: vec![
                Subsample {
                    clear: 4,
                    protected: 16 * 12 + 5,
                },
                Subsample {
                    clear: 2,
                    protected: 16,
                },
            ],
        };
        let clear = input(4 + 16 * 12 + 5 + 2 + 16);
        for piece in [1, 5, 16, 4096] {
            let mode = SampleMode::CbcPattern { crypt: 1, skip: 9 };
            let mut enc = SampleEncryptor::new(&KEY, mode, 0, vec![layout.clone()]);
            let out = feed_in_pieces(&mut enc, &clear, piece);
            enc.finish().unwrap();
            assert_eq!(out.len(), clear.len());
            let span = &out[4..4 + 16 * 12 + 5];
            // Blocks 0 and 10 encrypted, chained from the constant IV; the rest clear.
            let mut enc_blocks = [&span[0..16], &span[160..176]].concat();
            cbc_decrypt(iv, &mut enc_blocks);
            assert_eq!(enc_blocks, [&clear[4..20], &clear[164..180]].concat());
            assert_eq!(span[16..160], clear[20..164]);
            assert_eq!(
                span[176..],
                clear[180..4 + 16 * 12 + 5],
                "partial tail clear"
            );
            // The second span restarts from the IV.
            let mut second = out[out.len() - 16..].to_vec();
            cbc_decrypt(iv, &mut second);
            assert_eq!(second, clear[clear.len() - 16..]);
        }
    }

    #[test]
    fn input_past_or_short_of_the_layout_is_an_error() {
        let layout = SampleLayout {
            iv: [0; 16],
            subsamples: vec![Subsample {
                clear: 2,
                protected: 16,
            }],
        };
        let mut enc = SampleEncryptor::new(&KEY, SampleMode::Ctr, 0, vec![layout.clone()]);
        assert!(enc.feed(&input(19)).is_err());
        let mut enc = SampleEncryptor::new(&KEY, SampleMode::Ctr, 0, vec![layout]);
        enc.feed(&input(17)).unwrap();
        assert!(enc.finish().is_err());
    }

    #[test]
    fn whole_segment_aes_128_decrypts_with_the_cbc_crate() {
        for len in [0usize, 15, 16, 17, 1000] {
            let clear = input(len);
            for piece in [1, 3, 16, 4096] {
                let iv = [7u8; 16];
                let mut enc = WholeSegmentEncryptor::new(&KEY, &iv);
                let mut out = Vec::new();
                for chunk in clear.chunks(piece) {
                    out.extend_from_slice(&enc.feed(chunk));
                }
                out.extend_from_slice(&enc.finish());
                assert_eq!(
                    out.len() as u64,
                    WholeSegmentEncryptor::encrypted_len(len as u64)
                );
                let dec = cbc::Decryptor::<Aes128>::new(&KEY.into(), &iv.into());
                let plain = dec.decrypt_padded::<Pkcs7>(&mut out).unwrap();
                assert_eq!(plain, &clear[..]);
            }
        }
    }
}
