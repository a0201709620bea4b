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
