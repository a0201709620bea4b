//! The sample table boxes of one `stbl` as the file has them ([`RawTables`]), and the reads
//! every table shares: the full box header, an entry list checked against its count, and
//! big-endian words that never read past a slice.

use bytes::Bytes;

use crate::media::MediaError;

/// The bodies (after the box header, starting with version and flags) of the sample tables
/// of one `stbl`, as the file has them; `None` for a table the `stbl` lacks. A table that
/// appears twice is kept once (the first); mp4-atom refuses the duplicate anyway.
#[derive(Debug, Clone, Default)]
pub(in crate::media) struct RawTables {
    pub stts: Option<Bytes>,
    pub ctts: Option<Bytes>,
    pub stss: Option<Bytes>,
    pub stsz: Option<Bytes>,
    pub stsc: Option<Bytes>,
    pub stco: Option<Bytes>,
    pub co64: Option<Bytes>,
}

impl RawTables {
    /// Bytes of all its tables.
    pub fn len(&self) -> usize {
        [
            &self.stts, &self.ctts, &self.stss, &self.stsz, &self.stsc, &self.stco, &self.co64,
        ]
        .iter()
        .map(|t| t.as_ref().map_or(0, Bytes::len))
        .sum()
    }

    /// Keep `body` as table `kind`, unless one is kept already. Other kinds are ignored.
    pub fn keep(&mut self, kind: &[u8; 4], body: Bytes) {
        let slot = match kind {
            b"stts" => &mut self.stts,
            b"ctts" => &mut self.ctts,
            b"stss" => &mut self.stss,
            b"stsz" => &mut self.stsz,
            b"stsc" => &mut self.stsc,
            b"stco" => &mut self.stco,
            b"co64" => &mut self.co64,
            _ => return,
        };
        slot.get_or_insert(body);
    }
}

pub(super) fn invalid(fourcc: &str, track_id: u32, reason: impl Into<String>) -> MediaError {
    MediaError::InvalidTable {
        fourcc: fourcc.to_owned(),
        track_id,
        reason: reason.into(),
    }
}

/// A full box body: version, and the bytes after version and flags.
pub(super) fn full_box<'a>(
    body: &'a [u8],
    fourcc: &str,
    track_id: u32,
) -> Result<(u8, &'a [u8]), MediaError> {
    match body {
        [version, _, _, _, rest @ ..] => Ok((*version, rest)),
        _ => Err(invalid(
            fourcc,
            track_id,
            "box too short for version and flags",
        )),
    }
}

pub(super) fn be_u32(bytes: &[u8]) -> u32 {
    let mut word = [0u8; 4];
    if let Some(src) = bytes.get(..4) {
        word.copy_from_slice(src);
    }
    u32::from_be_bytes(word)
}

pub(super) fn be_u64(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    if let Some(src) = bytes.get(..8) {
        word.copy_from_slice(src);
    }
    u64::from_be_bytes(word)
}

/// The entries of a table whose body (after version and flags) is a 32-bit entry count
/// and `count` entries of `entry_bytes` each, filling the box exactly.
pub(super) fn entries<'a>(
    rest: &'a [u8],
    entry_bytes: usize,
    fourcc: &str,
    track_id: u32,
) -> Result<&'a [u8], MediaError> {
    let (Some(count), Some(list)) = (rest.get(..4), rest.get(4..)) else {
        return Err(invalid(
            fourcc,
            track_id,
            "box too short for its entry count",
        ));
    };
    let count = be_u32(count);
    let expected = (count as usize).checked_mul(entry_bytes);
    if expected != Some(list.len()) {
        return Err(invalid(
            fourcc,
            track_id,
            format!(
                "entry count {count} needs {} bytes but the box holds {}",
                u64::from(count) * entry_bytes as u64,
                list.len()
            ),
        ));
    }
    Ok(list)
}
