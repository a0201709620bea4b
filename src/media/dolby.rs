//! Dolby Vision: the `dvcC`/`dvvC`/`dvwC` configuration box of a video sample entry
//! (Dolby Vision Streams Within the ISO Base Media File Format, 3.2: the
//! `DOVIDecoderConfigurationRecord`) and the codec strings that signal it.
//!
//! Read here from the raw `stsd` bytes the index keeps, because mp4-atom skips these boxes.
//! A stream with a backward-compatible base layer plays as its base codec and names Dolby
//! Vision as a supplemental codec; one without is named by its Dolby Vision codec alone.

use super::CodecInfo;

/// A parsed Dolby Vision decoder configuration record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DolbyVision {
    /// `dv_profile` (5, 8, 9, 10, ...).
    pub profile: u8,
    /// `dv_level` (1 to 13).
    pub level: u8,
    /// `rpu_present_flag`.
    pub rpu_present: bool,
    /// `el_present_flag`: an enhancement layer in the same track.
    pub el_present: bool,
    /// `bl_present_flag`.
    pub bl_present: bool,
    /// `dv_bl_signal_compatibility_id`: 0 none, 1 HDR10, 2 SDR, 4 HLG, 6 Blu-ray HDR10.
    pub compatibility_id: u8,
    /// The Dolby Vision sample entry type that names this codec (`dvh1` for an `hvc1`
    /// base, `dvhe` for `hev1`, `dav1` for `av01`, `dva1` for `avc1`, `dvav` for `avc3`).
    pub fourcc: [u8; 4],
}

impl DolbyVision {
    /// The RFC 6381 codec string, `FOURCC.PP.LL` (e.g. `dvh1.08.07`).
    pub fn codec(&self) -> String {
        format!(
            "{}.{:02}.{:02}",
            self.fourcc.escape_ascii(),
            self.profile,
            self.level
        )
    }

    /// The compatibility brand of the base layer: `db1p` (HDR10), `db2g` (SDR), `db4h`
    /// (HLG); `None` for anything else (no base, or one no brand names).
    pub fn brand(&self) -> Option<&'static str> {
        match self.compatibility_id {
            1 => Some("db1p"),
            2 => Some("db2g"),
            4 => Some("db4h"),
            _ => None,
        }
    }

    /// Whether players without Dolby Vision can play the base layer, so the track is named
    /// by its base codec with Dolby Vision as a supplemental codec.
    pub fn has_compatible_base(&self) -> bool {
        self.compatibility_id != 0 && self.bl_present
    }

    /// The HLS `SUPPLEMENTAL-CODECS` value (`dvh1.08.07/db1p`), for a stream with a
    /// compatible base layer; `None` otherwise.
    pub fn supplemental_codecs(&self) -> Option<String> {
        if !self.has_compatible_base() {
            return None;
        }
        Some(match self.brand() {
            Some(brand) => format!("{}/{brand}", self.codec()),
            None => self.codec(),
        })
    }
}

impl CodecInfo {
    /// The Dolby Vision layer to name as a supplemental codec: only over a compatible base
    /// layer in an entry other players decode (`hvc1`, `hev1`, `av01`, `avc1`, `avc3`). A
    /// Dolby Vision sample entry (`dvh1`, ...) is named by its Dolby Vision codec alone,
    /// whatever its compatibility id, since players without Dolby Vision refuse the entry.
    pub fn supplemental_dolby_vision(&self) -> Option<DolbyVision> {
        let base_entry = matches!(
            &self.fourcc,
            b"hvc1" | b"hev1" | b"av01" | b"avc1" | b"avc3"
        );
        self.dolby_vision
            .filter(|dv| base_entry && dv.has_compatible_base())
    }
}

/// Bytes of a `VisualSampleEntry` body before its child boxes (ISO/IEC 14496-12 12.1.3).
const VISUAL_ENTRY_FIELDS: usize = 78;

/// The Dolby Vision configuration of the first sample entry of a raw `stsd` box (header
/// included), if that entry is a video entry with a `dvcC`, `dvvC` or `dvwC` child.
pub(crate) fn from_sample_description(stsd: &[u8]) -> Option<DolbyVision> {
    // FullBox header: size, type, version and flags, then entry_count.
    let (_, body) = boxes(stsd).next()?;
    let (kind, entry) = boxes(body.get(8..)?).next()?;
    from_entry_body(kind, entry)
}

/// The Dolby Vision configuration among the children of a visual sample entry of type
/// `kind`, whose body (after the box header) is `entry`.
pub(crate) fn from_entry_body(kind: [u8; 4], entry: &[u8]) -> Option<DolbyVision> {
    let fourcc = match &kind {
        b"hvc1" | b"dvh1" => *b"dvh1",
        b"hev1" | b"dvhe" => *b"dvhe",
        b"av01" | b"dav1" => *b"dav1",
        b"avc1" | b"dva1" => *b"dva1",
        b"avc3" | b"dvav" => *b"dvav",
        _ => return None,
    };
    let children = entry.get(VISUAL_ENTRY_FIELDS..)?;
    let (_, record) =
        boxes(children).find(|(kind, _)| matches!(kind, b"dvcC" | b"dvvC" | b"dvwC"))?;
    parse_record(record, fourcc)
}

/// `DOVIDecoderConfigurationRecord`: version (2 bytes), then profile (7 bits), level (6),
/// rpu, el and bl flags (1 each), then the compatibility id (4 bits).
fn parse_record(record: &[u8], fourcc: [u8; 4]) -> Option<DolbyVision> {
    let &[_major, _minor, a, b, c, ..] = record else {
        return None;
    };
    Some(DolbyVision {
        profile: a >> 1,
        level: ((a & 1) << 5) | (b >> 3),
        rpu_present: b & 0x04 != 0,
        el_present: b & 0x02 != 0,
        bl_present: b & 0x01 != 0,
        compatibility_id: c >> 4,
        fourcc,
    })
}

/// The boxes laid end to end in `bytes` as (type, body), stopping at the first that does
/// not fit. A size of 0 runs to the end; 1 means a 64-bit size follows.
fn boxes(bytes: &[u8]) -> impl Iterator<Item = ([u8; 4], &[u8])> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        let size = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?);
        let kind: [u8; 4] = rest.get(4..8)?.try_into().ok()?;
        let (header, size) = match size {
            0 => (8, rest.len() as u64),
            1 => (16, u64::from_be_bytes(rest.get(8..16)?.try_into().ok()?)),
            n => (8, u64::from(n)),
        };
        let size = usize::try_from(size).ok().filter(|s| *s >= header)?;
        let body = rest.get(header..size)?;
        rest = rest.get(size..)?;
        Some((kind, body))
    })
}

#[cfg(test)]
pub(crate) mod tests {
    //! Dolby Vision configuration records: profiles with and without a compatible base, and
    //! hostile records.

    use super::*;

    /// A `dvvC`/`dvcC` box: version 1.0, then the packed profile, level and flags.
    pub(crate) fn record_box(kind: &[u8; 4], profile: u8, level: u8, compat: u8) -> Vec<u8> {
        let mut body = vec![1, 0];
        // rpu, bl present; no el.
        body.push((profile << 1) | (level >> 5));
        body.push(((level & 0x1f) << 3) | 0b101);
        body.push(compat << 4);
        body.extend_from_slice(&[0; 19]);
        let mut out = (8 + body.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend(body);
        out
    }

    /// A visual sample entry of type `kind` whose children are `children`.
    pub(crate) fn entry(kind: &[u8; 4], children: &[u8]) -> Vec<u8> {
        let size = 8 + VISUAL_ENTRY_FIELDS + children.len();
        let mut out = (size as u32).to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend_from_slice(&[0; VISUAL_ENTRY_FIELDS]);
        out.extend_from_slice(children);
        out
    }

    /// An `stsd` holding `entry`.
    pub(crate) fn stsd(entry: &[u8]) -> Vec<u8> {
        let mut out = ((16 + entry.len()) as u32).to_be_bytes().to_vec();
        out.extend_from_slice(b"stsd");
        out.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1]);
        out.extend_from_slice(entry);
        out
    }

    #[test]
    fn profile_8_1_and_8_4_are_supplemental_to_their_hevc_base() {
        let colr = [
            0, 0, 0, 19, b'c', b'o', b'l', b'r', b'n', b'c', b'l', b'x', 0, 9, 0, 16, 0, 9, 0,
        ];
        let mut children = colr.to_vec();
        children.extend(record_box(b"dvvC", 8, 7, 1));
        let dv = from_sample_description(&stsd(&entry(b"hvc1", &children))).expect("dvvC");
        assert_eq!(
            (
                dv.profile,
                dv.level,
                dv.compatibility_id,
                dv.rpu_present,
                dv.el_present,
                dv.bl_present
            ),
            (8, 7, 1, true, false, true)
        );
        assert_eq!(dv.codec(), "dvh1.08.07");
        assert_eq!(dv.supplemental_codecs().as_deref(), Some("dvh1.08.07/db1p"));
        let hlg = stsd(&entry(b"hev1", &record_box(b"dvvC", 8, 4, 4)));
        let dv = from_sample_description(&hlg).expect("dvvC");
        assert_eq!(dv.supplemental_codecs().as_deref(), Some("dvhe.08.04/db4h"));
        let sdr = stsd(&entry(b"av01", &record_box(b"dvvC", 10, 9, 2)));
        let dv = from_sample_description(&sdr).expect("dvvC");
        assert_eq!(dv.supplemental_codecs().as_deref(), Some("dav1.10.09/db2g"));
        // Level 13 uses the sixth level bit, split across two bytes.
        let high = stsd(&entry(b"hvc1", &record_box(b"dvvC", 8, 13, 6)));
        let dv = from_sample_description(&high).expect("dvvC");
        assert_eq!(dv.supplemental_codecs().as_deref(), Some("dvh1.08.13"));
    }

    #[test]
    fn profile_5_has_no_compatible_base() {
        let dv = from_entry_body(
            *b"dvh1",
            &entry(b"dvh1", &record_box(b"dvcC", 5, 6, 0))[8..],
        )
        .expect("dvcC");
        assert_eq!(dv.codec(), "dvh1.05.06");
        assert!(!dv.has_compatible_base());
        assert_eq!(dv.supplemental_codecs(), None);
    }

    #[test]
    fn hostile_or_absent_records_are_none() {
        assert_eq!(from_sample_description(&stsd(&entry(b"hvc1", &[]))), None);
        assert_eq!(
            from_sample_description(&stsd(&entry(b"mp4a", &record_box(b"dvvC", 8, 7, 1)))),
            None
        );
        let full = stsd(&entry(b"hvc1", &record_box(b"dvvC", 8, 7, 1)));
        for len in 0..full.len() {
            assert_eq!(from_sample_description(&full[..len]), None, "{len} bytes");
        }
        // A short record, a child claiming more than its parent holds, a size below 8.
        let short = [0, 0, 0, 10, b'd', b'v', b'v', b'C', 1, 0];
        assert_eq!(
            from_sample_description(&stsd(&entry(b"hvc1", &short))),
            None
        );
        let long = [0, 0, 1, 0, b'd', b'v', b'v', b'C', 1, 0, 16, 61, 16];
        assert_eq!(from_sample_description(&stsd(&entry(b"hvc1", &long))), None);
        let tiny = [0, 0, 0, 4, b'd', b'v', b'v', b'C'];
        assert_eq!(from_sample_description(&stsd(&entry(b"hvc1", &tiny))), None);
        assert_eq!(
            boxes(&[0, 0, 0, 1, b'f', b'r', b'e', b'e', 0xff, 0, 0, 0, 0, 0, 0, 0]).count(),
            0
        );
    }
}
