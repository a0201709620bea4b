//! Box surgery for Common Encryption: protected sample entries and `pssh` in the init
//! segment, `saiz`/`saio`/`senc` in a media segment's `traf`.
//!
//! Both take the bytes the clear writers made, insert boxes, and grow the sizes of every
//! box around an insertion (and `trun`'s data offset, which counts from the `moof`), so
//! the clear writers need not know about encryption.

use super::nal::NalFormat;
use super::ProtectError;
use crate::crypto::keys::ContentKey;
use crate::crypto::{Scheme, Subsample};
use crate::media::TrackKind;

/// The common `pssh` system id (W3C "cenc" initialization data, 23001-7 8.1).
pub const COMMON_SYSTEM_ID: [u8; 16] = [
    0x10, 0x77, 0xef, 0xec, 0xc0, 0xb2, 0x4d, 0x02, 0xac, 0xe3, 0x3c, 0x1e, 0x52, 0xe2, 0xfb, 0x4b,
];

/// What is known of a track's samples from its sample entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleEntryFormat {
    /// Length-prefixed NAL units (AVC, HEVC, Dolby Vision): subsample encryption.
    Nal(NalFormat),
    /// Audio: whole samples encrypted.
    Audio,
}

/// How one track is protected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackProtection {
    /// `cenc` or `cbcs`.
    pub scheme: Scheme,
    /// The key (its KID and DRM systems are written; the key never is).
    pub key: ContentKey,
    /// The `cbcs` constant IV (unused for `cenc`).
    pub constant_iv: [u8; 16],
    /// The track's sample format.
    pub format: SampleEntryFormat,
    /// Under a key split, the title's other KIDs, listed after the track's own in the
    /// common `pssh` (23001-7 8.1: the KIDs of the content), so a ClearKey player asks
    /// one licence for every key of the presentation and switches tiers without a
    /// session per key (dash.js 5.2 and Shaka 5.2 request only the KIDs an init segment
    /// names); empty under the default split (one key).
    pub other_kids: Vec<[u8; 16]>,
}

impl TrackProtection {
    /// `cenc` per-sample IV bytes in `senc` (8), or 0 for `cbcs`'s constant IV.
    pub fn iv_size(&self) -> u8 {
        if self.scheme == Scheme::Cbcs {
            0
        } else {
            8
        }
    }

    /// `cbcs` pattern: 1:9 for video, every block (0:0) for audio (23001-7 10.4.1).
    pub fn pattern(&self) -> (u8, u8) {
        match self.format {
            SampleEntryFormat::Nal(_) => (1, 9),
            SampleEntryFormat::Audio => (0, 0),
        }
    }

    /// Whether `senc` lists subsamples (video).
    pub fn subsample_encryption(&self) -> bool {
        matches!(self.format, SampleEntryFormat::Nal(_))
    }

    /// Find the sample format of a track from its `stsd` box.
    ///
    /// # Errors
    /// [`ProtectError::UnsupportedCodec`] for a codec not encrypted here.
    pub fn sample_format(stsd: &[u8], kind: TrackKind) -> Result<SampleEntryFormat, ProtectError> {
        let entries = stsd.get(16..).unwrap_or_default();
        let fourcc = entries.get(4..8).unwrap_or_default();
        let name = String::from_utf8_lossy(fourcc).into_owned();
        let unsupported = || ProtectError::UnsupportedCodec {
            fourcc: name.clone(),
        };
        if kind == TrackKind::Audio {
            return match fourcc {
                b"mp4a" | b"ac-3" | b"ec-3" | b"Opus" | b"fLaC" | b".mp3" => {
                    Ok(SampleEntryFormat::Audio)
                }
                _ => Err(unsupported()),
            };
        }
        let config = video_config(stsd).ok_or_else(unsupported)?;
        let (hevc, body) = (config.hevc, config.body);
        // avcC: lengthSizeMinusOne in byte 4; hvcC: in byte 21 (14496-15 5.3.3.1, 8.3.3.1).
        let at = if hevc { 21 } else { 4 };
        let length_size = body.get(at).ok_or_else(unsupported)? & 0x3;
        if length_size == 2 {
            return Err(unsupported());
        }
        Ok(SampleEntryFormat::Nal(NalFormat {
            length_size: length_size + 1,
            hevc,
        }))
    }
}

/// The decoder configuration of a track's first sample entry, when it is AVC or HEVC.
pub(super) struct VideoConfig<'a> {
    /// `hvcC` (HEVC, Dolby Vision) rather than `avcC`.
    pub hevc: bool,
    /// Parameter sets may come in the samples (`avc3`, `hev1`, `dvhe`) rather than only
    /// in the record (14496-15 5.4.2.1, 8.4.1.1).
    pub in_band: bool,
    /// The record's body (after its box header).
    pub body: &'a [u8],
}

/// Find the `avcC`/`hvcC` of the first sample entry of `stsd`; `None` for another codec
/// or a broken entry.
pub(super) fn video_config(stsd: &[u8]) -> Option<VideoConfig<'_>> {
    let entries = stsd.get(16..)?;
    let (config, hevc, in_band): (&[u8; 4], bool, bool) = match entries.get(4..8)? {
        b"avc1" => (b"avcC", false, false),
        b"avc3" => (b"avcC", false, true),
        b"hvc1" | b"dvh1" => (b"hvcC", true, false),
        b"hev1" | b"dvhe" => (b"hvcC", true, true),
        _ => return None,
    };
    // Visual sample entry: 8 header + 78 bytes of fields, then child boxes (14496-12 12.1.3).
    let size = be32(entries, 0)? as usize;
    let entry = entries.get(..size)?;
    let (start, end) = find_child(entry, 86, entry.len(), config)?;
    let body = entry.get(start + 8..end)?;
    Some(VideoConfig {
        hevc,
        in_band,
        body,
    })
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The first child box of kind `kind` among the boxes in `buf[start..end]`: its start and
/// end. Sizes 0 and 1 (to end, 64-bit) are not used by our writers and end the search.
fn find_child(buf: &[u8], start: usize, end: usize, kind: &[u8; 4]) -> Option<(usize, usize)> {
    let mut at = start;
    while at + 8 <= end {
        let size = be32(buf, at)? as usize;
        if size < 8 || at + size > end {
            return None;
        }
        if buf.get(at + 4..at + 8)? == kind {
            return Some((at, at + size));
        }
        at += size;
    }
    None
}

/// The chain of boxes `path` from the top level: each one's start and end.
fn find_path(
    buf: &[u8],
    path: &[&[u8; 4]],
    first_child_at: &[usize],
) -> Option<Vec<(usize, usize)>> {
    let mut out = Vec::with_capacity(path.len());
    let (mut start, mut end) = (0, buf.len());
    for (kind, skip) in path.iter().zip(first_child_at) {
        let found = find_child(buf, start, end, kind)?;
        out.push(found);
        start = found.0 + skip;
        end = found.1;
    }
    Some(out)
}

/// Insert `bytes` at `at`, growing the size field of each box starting at `parents`.
fn insert(buf: &mut Vec<u8>, at: usize, bytes: &[u8], parents: &[usize]) -> Option<()> {
    let grow = u32::try_from(bytes.len()).ok()?;
    for &p in parents {
        let size = be32(buf, p)?.checked_add(grow)?;
        buf.get_mut(p..p + 4)?.copy_from_slice(&size.to_be_bytes());
    }
    buf.splice(at..at, bytes.iter().copied());
    Some(())
}

/// A box of `kind` with `body`.
fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + body.len());
    out.extend_from_slice(&((8 + body.len()) as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(body);
    out
}

/// A full box of `kind`.
fn full(kind: &[u8; 4], version: u8, flags: u32, body: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(4 + body.len());
    b.extend_from_slice(&((u32::from(version) << 24) | (flags & 0xff_ffff)).to_be_bytes());
    b.extend_from_slice(body);
    boxed(kind, &b)
}

/// `sinf` of a protected sample entry whose original format was `original`.
fn sinf(original: &[u8], p: &TrackProtection) -> Vec<u8> {
    let frma = boxed(b"frma", original);
    let scheme: &[u8; 4] = if p.scheme == Scheme::Cbcs {
        b"cbcs"
    } else {
        b"cenc"
    };
    let mut schm_body = scheme.to_vec();
    schm_body.extend_from_slice(&0x0001_0000u32.to_be_bytes());
    let schm = full(b"schm", 0, 0, &schm_body);
    let mut tenc = vec![0u8];
    let (crypt, skip) = p.pattern();
    let version = if p.scheme == Scheme::Cbcs {
        tenc.push((crypt << 4) | skip);
        1
    } else {
        tenc.push(0);
        0
    };
    tenc.push(1); // default_isProtected
    tenc.push(p.iv_size());
    tenc.extend_from_slice(&p.key.kid);
    if p.scheme == Scheme::Cbcs {
        tenc.push(16);
        tenc.extend_from_slice(&p.constant_iv);
    }
    let schi = boxed(b"schi", &full(b"tenc", version, 0, &tenc));
    boxed(b"sinf", &[frma, schm, schi].concat())
}

/// The `pssh` boxes of a key: the common system's (version 1, listing the KID and then
/// `others`, which ClearKey players read) and any the key's DRM systems supply.
fn pssh_boxes(key: &ContentKey, others: &[[u8; 16]]) -> Vec<u8> {
    let mut body = COMMON_SYSTEM_ID.to_vec();
    let count = u32::try_from(1 + others.len()).unwrap_or(u32::MAX);
    body.extend_from_slice(&count.to_be_bytes());
    body.extend_from_slice(&key.kid);
    for kid in others {
        body.extend_from_slice(kid);
    }
    body.extend_from_slice(&0u32.to_be_bytes());
    let mut out = full(b"pssh", 1, 0, &body);
    for pssh in key.systems.iter().filter_map(|s| s.pssh.as_deref()) {
        out.extend_from_slice(pssh);
    }
    out
}

/// The protected form of a clear init segment made by `fmp4::init_segment`: every sample
/// entry renamed `encv`/`enca` with a `sinf` naming its original format, and the key's
/// `pssh` boxes at the end of `moov`.
///
/// # Errors
/// [`ProtectError::Layout`] when the init segment is not as our writer makes it.
pub fn protect_init_segment(
    clear: &[u8],
    kind: TrackKind,
    p: &TrackProtection,
) -> Result<Vec<u8>, ProtectError> {
    let layout = |reason: &str| ProtectError::Layout {
        reason: format!("init segment: {reason}"),
    };
    let path: [&[u8; 4]; 6] = [b"moov", b"trak", b"mdia", b"minf", b"stbl", b"stsd"];
    let boxes = find_path(clear, &path, &[8, 8, 8, 8, 8, 16]).ok_or_else(|| layout("no stsd"))?;
    let mut out = clear.to_vec();
    let starts: Vec<usize> = boxes.iter().map(|b| b.0).collect();
    let (moov, stsd) = (boxes[0], boxes[5]);
    // Last first, so earlier positions stay valid.
    let pssh = pssh_boxes(&p.key, &p.other_kids);
    insert(&mut out, moov.1, &pssh, &starts[..1]).ok_or_else(|| layout("pssh"))?;
    let mut entries = Vec::new();
    let mut at = stsd.0 + 16;
    while at + 8 <= stsd.1 {
        let size = be32(clear, at).ok_or_else(|| layout("entry"))? as usize;
        if size < 8 || at + size > stsd.1 {
            return Err(layout("entry size"));
        }
        entries.push((at, size));
        at += size;
    }
    if entries.is_empty() {
        return Err(layout("no sample entry"));
    }
    let renamed: &[u8; 4] = match kind {
        TrackKind::Video => b"encv",
        TrackKind::Audio => b"enca",
    };
    for &(entry, size) in entries.iter().rev() {
        let original = clear
            .get(entry + 4..entry + 8)
            .ok_or_else(|| layout("fourcc"))?
            .to_vec();
        let mut parents = starts.clone();
        parents.push(entry);
        insert(&mut out, entry + size, &sinf(&original, p), &parents)
            .ok_or_else(|| layout("sinf"))?;
        out.get_mut(entry + 4..entry + 8)
            .ok_or_else(|| layout("rename"))?
            .copy_from_slice(renamed);
    }
    Ok(out)
}

/// The protected form of a media segment header made by `fmp4::prepare_media_segment`:
/// `saiz`, `saio` and `senc` appended to the `traf`, `trun`'s data offset and the sizes of
/// `traf` and `moof` grown to match. `ivs` and `subsamples` are per sample, in order
/// (`subsamples` empty for whole-sample encryption). `saio` points at the first sample's
/// data inside `senc`, counted from the `moof` (the `tfhd` sets default-base-is-moof).
///
/// # Errors
/// [`ProtectError::Layout`] when the header is not as our writer makes it.
pub fn protect_segment_header(
    clear: &[u8],
    p: &TrackProtection,
    ivs: &[[u8; 16]],
    subsamples: &[Vec<Subsample>],
) -> Result<Vec<u8>, ProtectError> {
    let layout = |reason: &str| ProtectError::Layout {
        reason: format!("segment header: {reason}"),
    };
    let boxes = find_path(clear, &[b"moof", b"traf"], &[8, 8]).ok_or_else(|| layout("no traf"))?;
    let (moof, traf) = (boxes[0], boxes[1]);
    let trun = find_child(clear, traf.0 + 8, traf.1, b"trun").ok_or_else(|| layout("no trun"))?;
    let count = ivs.len();
    let with_subsamples = p.subsample_encryption();
    let iv_size = usize::from(p.iv_size());
    let mut sizes = Vec::with_capacity(count);
    let mut senc_body = (count as u32).to_be_bytes().to_vec();
    for (k, iv) in ivs.iter().enumerate() {
        senc_body.extend_from_slice(&iv[..iv_size]);
        let mut size = iv_size;
        if with_subsamples {
            let subs = subsamples.get(k).map(Vec::as_slice).unwrap_or_default();
            senc_body.extend_from_slice(&(subs.len() as u16).to_be_bytes());
            for s in subs {
                senc_body.extend_from_slice(&(s.clear as u16).to_be_bytes());
                senc_body.extend_from_slice(&s.protected.to_be_bytes());
            }
            size += 2 + 6 * subs.len();
        }
        sizes.push(u8::try_from(size).map_err(|_| layout("aux info over 255 bytes"))?);
    }
    let senc = full(b"senc", 0, if with_subsamples { 2 } else { 0 }, &senc_body);
    // A default of 0 means "listed per sample" (14496-12 8.7.8.2), so all-zero sizes
    // (cbcs audio: constant IV, no subsamples) are listed too.
    let uniform = sizes.iter().all(|s| Some(s) == sizes.first()) && sizes.first() != Some(&0);
    let mut saiz_body = vec![if uniform {
        sizes.first().copied().unwrap_or(0)
    } else {
        0
    }];
    saiz_body.extend_from_slice(&(count as u32).to_be_bytes());
    if !uniform {
        saiz_body.extend_from_slice(&sizes);
    }
    let saiz = full(b"saiz", 0, 0, &saiz_body);
    // saio's one offset: where senc's first sample entry will be.
    let saio_len = 8 + 4 + 4 + 4;
    let senc_at = traf.1 + saiz.len() + saio_len;
    let first_entry = u32::try_from(senc_at - moof.0 + 16).map_err(|_| layout("offset"))?;
    let mut saio_body = 1u32.to_be_bytes().to_vec();
    saio_body.extend_from_slice(&first_entry.to_be_bytes());
    let saio = full(b"saio", 0, 0, &saio_body);
    let added = [saiz, saio, senc].concat();
    let mut out = clear.to_vec();
    // trun's data offset (flag 0x1) is just after its sample count.
    let flags = be32(clear, trun.0 + 8).ok_or_else(|| layout("trun"))? & 0xff_ffff;
    if flags & 1 != 0 {
        let at = trun.0 + 16;
        let offset = be32(clear, at).ok_or_else(|| layout("data offset"))?;
        let moved = offset
            .checked_add(added.len() as u32)
            .ok_or_else(|| layout("data offset"))?;
        out.get_mut(at..at + 4)
            .ok_or_else(|| layout("data offset"))?
            .copy_from_slice(&moved.to_be_bytes());
    }
    insert(&mut out, traf.1, &added, &[moof.0, traf.0]).ok_or_else(|| layout("traf"))?;
    Ok(out)
}
