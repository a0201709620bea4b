//! Encrypted CMAF: the boxes Common Encryption adds (ISO/IEC 23001-7), the subsample
//! layout of video samples, and what HLS and DASH manifests say about keys.
//!
//! Works on the bytes the clear writers produce, so the clear path stays as it is: the
//! init segment gets `encv`/`enca` with `sinf` (`frma`, `schm`, `schi`/`tenc`) and `pssh`
//! boxes ([`protect_init_segment`]); a media segment header gets `saiz`, `saio` and
//! `senc` in its `traf`, with `trun`'s data offset moved past them
//! ([`protect_segment_header`]). Video samples are encrypted by NAL unit: non-VCL units
//! stay whole; under `cbcs` each slice's NAL header and slice header stay clear and the
//! protected span starts at its slice data, under `cenc` its NAL header stays clear and
//! the protected span is a whole number of AES blocks ([`NalScanner`],
//! [`video_subsamples`], the track's parameter sets from [`slice_header_params`]). The sample bytes
//! themselves are encrypted by `crypto::SampleEncryptor` as they stream, in the layouts
//! [`encrypt_segment`] works out with the header.
//! What manifests say about keys ([`manifest`]) the HLS and DASH writers write in place,
//! from `package::ManifestOptions`.

mod boxes;
pub mod manifest;
mod nal;
mod params;
mod segment;

pub use boxes::{protect_init_segment, protect_segment_header, SampleEntryFormat, TrackProtection};
pub use nal::{max_subsamples, video_subsamples, Nal, NalFormat, NalScanner};
pub use params::slice_header_params;
pub use segment::{encrypt_segment, SegmentEncryption};

use sha2::{Digest, Sha256};

/// Why a track or segment cannot be encrypted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtectError {
    /// A codec Common Encryption is not implemented for here (AV1, VP9, text...). 422.
    #[error("encryption of {fourcc} tracks is not supported")]
    UnsupportedCodec { fourcc: String },
    /// The sample bytes do not hold what the sample entry promises (NAL lengths that
    /// overrun their sample). 422.
    #[error("cannot encrypt track {track_id}: {reason}")]
    MalformedSample { track_id: u32, reason: String },
    /// A `cbcs` slice header that cannot be read, so where its slice data starts is not
    /// known: no parameter set of its id came before it (in the sample entry or, for
    /// `avc3`/`hev1`, in the samples), it breaks the standard's bounds, or it is a kind of
    /// slice not read here (SVC/MVC, data partitions, HEVC multilayer or screen content).
    /// Refused rather than guessed: a wrong clear length makes the output undecodable
    /// by the decoders that read it. 422.
    #[error("cannot encrypt track {track_id} as cbcs: {reason}")]
    SliceHeader { track_id: u32, reason: String },
    /// A box we wrote is not where it should be: a bug, 500.
    #[error("protected box layout: {reason}")]
    Layout { reason: String },
}

/// The high 8 bytes of every `cenc` per-sample IV of a title version: a hash of its
/// version token and KID, XORed with (track id << 32 | sample number) per sample, so IVs
/// never repeat within a version and almost surely not across versions, which share the
/// key (see `crypto::keys`).
pub fn iv_base(token: &str, kid: &[u8; 16]) -> u64 {
    let digest = Sha256::new()
        .chain_update(b"vodpack cenc iv v1\0")
        .chain_update(token.as_bytes())
        .chain_update(kid)
        .finalize();
    let mut b = [0u8; 8];
    b.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(b)
}

/// The `cenc` IV of sample `sample` (0-based in the track) of track `track_id`: 8 bytes
/// of IV, then a zero 64-bit block counter.
pub fn cenc_sample_iv(base: u64, track_id: u32, sample: u64) -> [u8; 16] {
    let iv = base ^ ((u64::from(track_id) << 32) | (sample & 0xffff_ffff));
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&iv.to_be_bytes());
    out
}

/// The `cbcs` constant IV of a title version, and the AES-128 HLS IV base.
pub fn constant_iv(token: &str, kid: &[u8; 16], label: &str) -> [u8; 16] {
    let digest = Sha256::new()
        .chain_update(b"vodpack constant iv v1\0")
        .chain_update(label.as_bytes())
        .chain_update(token.as_bytes())
        .chain_update(kid)
        .finalize();
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    out
}

/// The HLS AES-128 IV of segment `number` of track `track_id` (written in the playlist's
/// `EXT-X-KEY:IV`): the version's base with the track and number in its low 12 bytes.
pub fn hls_segment_iv(token: &str, kid: &[u8; 16], track_id: u32, number: u64) -> [u8; 16] {
    let mut iv = constant_iv(token, kid, "hls aes-128");
    iv[4..8].copy_from_slice(&track_id.to_be_bytes());
    iv[8..].copy_from_slice(&number.to_be_bytes());
    iv
}

/// The HLS AES-128 IV of MPEG-TS segment `number` of the TS rendition named by
/// `track_id`: as [`hls_segment_iv`] from a base of its own, so a TS segment never shares
/// an IV with the CMAF segment of the same track and number under the same key.
pub fn hls_ts_segment_iv(token: &str, kid: &[u8; 16], track_id: u32, number: u64) -> [u8; 16] {
    let mut iv = constant_iv(token, kid, "hls aes-128 ts");
    iv[4..8].copy_from_slice(&track_id.to_be_bytes());
    iv[8..].copy_from_slice(&number.to_be_bytes());
    iv
}

/// The HLS SAMPLE-AES IV of every MPEG-TS segment of the TS rendition named by
/// `track_id`: from a base of its own, so it is no AES-128 segment's IV under the same key.
/// One per rendition: sample encryption restarts the chain from it in every NAL unit and
/// frame, so an IV per segment would add nothing (`manifest::HlsKey::SampleAesTs`).
pub fn hls_ts_sample_aes_iv(token: &str, kid: &[u8; 16], track_id: u32) -> [u8; 16] {
    let mut iv = constant_iv(token, kid, "hls sample-aes ts");
    iv[4..8].copy_from_slice(&track_id.to_be_bytes());
    iv
}

#[cfg(test)]
mod tests;
