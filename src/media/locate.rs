//! Finding `ftyp` and `moov` in an object with few ranged reads, never reading `mdat`.
//!
//! The first read is a probe from the start of the object, which for a faststart file holds
//! `ftyp` and usually the whole `moov`; otherwise box headers are walked until `moov`, which
//! is then read in one range (on an object store, with everything after a header past the
//! probe, so `moov` at the end costs two reads). Box headers are hostile: every size is
//! checked against the object's length and the limits before anything is read or allocated.

use bytes::Bytes;

use super::captions::after_moov;
use super::{MediaError, MediaLimits};
use crate::source::{ByteRange, MediaSource, ObjectIdentity, ObjectKey, SourceError, SourceKind};

/// The top-level boxes the packager needs, as read from the object.
#[derive(Debug, Clone)]
pub struct TopLevelBoxes {
    /// The whole `moov` box, header included.
    pub moov: Bytes,
    /// Offset of `moov` in the object.
    pub moov_offset: u64,
    /// Source reads it took to find and read them.
    pub reads: u32,
    /// The first bytes of the object as read by the first read (`probe_bytes` of them, or
    /// the whole object when smaller). Kept so later walks (fragments after `moov`) need
    /// not read again what this already holds.
    pub probe: Bytes,
    /// Bytes right after `moov` read with it, for the caption scan (`media::captions`):
    /// where reads are round trips and `moov` runs past the probe, those of
    /// `captions::after_moov` come with its rest in the same read. `None` when none were
    /// read.
    pub after_moov: Option<Bytes>,
}

/// A parsed top-level box header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BoxHeader {
    /// The box type.
    pub kind: [u8; 4],
    /// Header length (8, or 16 with a 64-bit size).
    pub header_len: u64,
    /// Whole box length including the header.
    pub box_len: u64,
}

/// Box types that may open an MP4/QuickTime file; anything else first is not an MP4.
const OPENING_BOXES: [&[u8; 4]; 9] = [
    b"ftyp", b"moov", b"mdat", b"free", b"skip", b"wide", b"pdin", b"uuid", b"styp",
];

/// Parse a box header from `buf` (which starts at `offset`), for an object of `object_len`.
/// `Ok(None)` when `buf` is too short to hold the whole header.
pub(super) fn parse_header(
    buf: &[u8],
    offset: u64,
    object_len: u64,
) -> Result<Option<BoxHeader>, MediaError> {
    parse_header_at(buf, offset, object_len, false)
}

/// As [`parse_header`]; `first` says this is the object's first box, which must be one that
/// opens an MP4 (checked before the size, so text or random bytes read as "not an mp4").
fn parse_header_at(
    buf: &[u8],
    offset: u64,
    object_len: u64,
    first: bool,
) -> Result<Option<BoxHeader>, MediaError> {
    let Some(head) = buf.get(..8) else {
        return Ok(None);
    };
    let size32 = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    let kind = [head[4], head[5], head[6], head[7]];
    if !kind
        .iter()
        .all(|b| b.is_ascii_graphic() || *b == b' ' || *b == 0xa9)
    {
        return Err(MediaError::NotMp4 {
            reason: format!("bytes at offset {offset} are not a box header"),
        });
    }
    if first && !OPENING_BOXES.contains(&&kind) {
        return Err(MediaError::NotMp4 {
            reason: format!(
                "first box is '{}', not ftyp or moov",
                String::from_utf8_lossy(&kind)
            ),
        });
    }
    let remaining = object_len.saturating_sub(offset);
    let (header_len, box_len) = match size32 {
        0 => (8, remaining),
        1 => {
            let Some(large) = buf.get(8..16) else {
                return Ok(None);
            };
            let mut be = [0u8; 8];
            be.copy_from_slice(large);
            (16, u64::from_be_bytes(be))
        }
        n => (8, u64::from(n)),
    };
    if box_len < header_len {
        return Err(MediaError::Malformed {
            reason: format!(
                "box '{}' at offset {offset} has size {box_len}",
                String::from_utf8_lossy(&kind)
            ),
        });
    }
    if box_len > remaining {
        return Err(MediaError::Truncated {
            reason: format!(
                "box '{}' at offset {offset} claims {box_len} bytes but only {remaining} remain",
                String::from_utf8_lossy(&kind)
            ),
        });
    }
    Ok(Some(BoxHeader {
        kind,
        header_len,
        box_len,
    }))
}

/// Where `locate` reads from: a source object, or bytes already in memory (the
/// `index_from_bytes` entry point used by the fuzz targets and the mutation test, which
/// thereby run the very walk the server runs).
#[derive(Clone, Copy)]
pub(super) enum Reader<'a> {
    /// One version of one object of a source.
    Source {
        source: &'a dyn MediaSource,
        key: &'a ObjectKey,
        identity: &'a ObjectIdentity,
    },
    /// A whole object in memory.
    Memory(&'a Bytes),
}

impl Reader<'_> {
    /// Whether each read is a network round trip (an object store), where reading some
    /// bytes more to save a read pays; a local file or memory answers at once.
    pub(super) fn reads_are_round_trips(&self) -> bool {
        match self {
            Reader::Source { source, .. } => source.kind() == SourceKind::ObjectStore,
            Reader::Memory(_) => false,
        }
    }

    /// The bytes of each range, in order, as one batch (a source may coalesce them).
    pub(super) async fn read_many(&self, ranges: &[ByteRange]) -> Result<Vec<Bytes>, MediaError> {
        match self {
            Reader::Source {
                source,
                key,
                identity,
            } => Ok(source.read_ranges(key, identity, ranges).await?),
            Reader::Memory(_) => {
                let mut out = Vec::with_capacity(ranges.len());
                for range in ranges {
                    out.push(self.read(*range).await?);
                }
                Ok(out)
            }
        }
    }

    /// The bytes of `range`.
    pub(super) async fn read(&self, range: ByteRange) -> Result<Bytes, MediaError> {
        match self {
            Reader::Source {
                source,
                key,
                identity,
            } => Ok(source.read_range(key, identity, range).await?),
            Reader::Memory(bytes) => usize::try_from(range.start)
                .ok()
                .zip(usize::try_from(range.end()).ok())
                .filter(|(start, end)| start <= end && *end <= bytes.len())
                .map(|(start, end)| bytes.slice(start..end))
                .ok_or_else(|| {
                    MediaError::Source(SourceError::OutOfRange {
                        key: "(memory)".to_owned(),
                        range,
                        size: bytes.len() as u64,
                    })
                }),
        }
    }
}

/// Find and read `moov` (and its neighbours) of the object `identity` under `key`.
///
/// # Errors
/// [`MediaError::NotMp4`] for data that is not an MP4 or has no `moov`,
/// [`MediaError::Truncated`] when a box runs past the end, [`MediaError::TooLarge`] for a
/// `moov` over the limit or too many header reads, and source errors.
pub async fn locate_boxes(
    source: &dyn MediaSource,
    key: &ObjectKey,
    identity: &ObjectIdentity,
    limits: &MediaLimits,
) -> Result<TopLevelBoxes, MediaError> {
    let reader = Reader::Source {
        source,
        key,
        identity,
    };
    locate_in(reader, identity.size, limits).await
}

/// [`locate_boxes`] over any [`Reader`] of an object of `size` bytes.
pub(super) async fn locate_in(
    reader: Reader<'_>,
    size: u64,
    limits: &MediaLimits,
) -> Result<TopLevelBoxes, MediaError> {
    if size < 8 {
        return Err(MediaError::NotMp4 {
            reason: format!("object is only {size} bytes"),
        });
    }
    let probe_len = size.min(limits.probe_bytes.max(16));
    let probe = reader.read(ByteRange::new(0, probe_len)).await?;
    let mut known = Known {
        probe: probe.clone(),
        tail: None,
    };
    let mut reads = 1u32;
    let mut header_reads = 0u32;
    let mut offset = 0u64;
    for index in 0..limits.max_top_level_boxes {
        if offset >= size {
            break;
        }
        let header = match parse_header_at(known.from(offset), offset, size, index == 0)? {
            Some(header) => header,
            None => {
                header_reads += 1;
                if header_reads > limits.max_header_reads {
                    return Err(MediaError::TooLarge {
                        limit: "max_header_reads",
                        value: u64::from(header_reads),
                        max: u64::from(limits.max_header_reads),
                    });
                }
                let rest = size - offset;
                let len = match reader.reads_are_round_trips() && rest <= limits.max_moov_bytes {
                    // The header and the boxes after it (`moov`, after `mdat`) at once.
                    true => rest,
                    false => rest.min(16),
                };
                let bytes = reader.read(ByteRange::new(offset, len)).await?;
                reads += 1;
                let header = parse_header(&bytes, offset, size)?;
                if len == rest {
                    known.tail = Some((offset, bytes));
                }
                header.ok_or_else(|| MediaError::Truncated {
                    reason: format!("box header at offset {offset} is cut off"),
                })?
            }
        };
        if &header.kind == b"moov" {
            if header.box_len > limits.max_moov_bytes {
                return Err(MediaError::TooLarge {
                    limit: "max_moov_bytes",
                    value: header.box_len,
                    max: limits.max_moov_bytes,
                });
            }
            // parse_header checked `box_len <= size - offset`.
            let moov_range = ByteRange::new(offset, header.box_len);
            let after_range = after_moov(size, moov_range.end());
            let (moov, after_moov) = match known.slice(moov_range) {
                Some(moov) => (moov, known.slice(after_range)),
                None => {
                    reads += 1;
                    read_moov(reader, &probe, moov_range, after_range).await?
                }
            };
            return Ok(TopLevelBoxes {
                moov,
                moov_offset: offset,
                reads,
                probe,
                after_moov: after_moov.filter(|b| !b.is_empty()),
            });
        }
        offset += header.box_len;
    }
    Err(MediaError::NotMp4 {
        reason: "no moov box found".to_owned(),
    })
}

/// The bytes of the object read so far: the probe from offset 0, and the tail read after a
/// header past it.
struct Known {
    probe: Bytes,
    tail: Option<(u64, Bytes)>,
}

impl Known {
    /// The bytes known from `offset` on (empty when none).
    fn from(&self, offset: u64) -> &[u8] {
        fn window(offset: u64, start: u64, bytes: &Bytes) -> Option<&[u8]> {
            let at = usize::try_from(offset.checked_sub(start)?).ok()?;
            bytes.get(at..).filter(|b| !b.is_empty())
        }
        (self.tail.as_ref())
            .and_then(|(start, bytes)| window(offset, *start, bytes))
            .or_else(|| window(offset, 0, &self.probe))
            .unwrap_or_default()
    }

    /// All of `range`, if one read holds it.
    fn slice(&self, range: ByteRange) -> Option<Bytes> {
        let within = |start: u64, bytes: &Bytes| {
            let from = usize::try_from(range.start.checked_sub(start)?).ok()?;
            let to = from.checked_add(usize::try_from(range.len).ok()?)?;
            (to <= bytes.len()).then(|| bytes.slice(from..to))
        };
        (self.tail.as_ref())
            .and_then(|(start, bytes)| within(*start, bytes))
            .or_else(|| within(0, &self.probe))
    }
}

/// Read `moov` at `range`, and the bytes `after` it. Where reads are round trips and it
/// starts inside the probe, only the part after the probe is read, with `after` in the
/// same read (the first samples of a faststart file, for the caption scan: no round trip
/// of their own), joined to the probe's part (one copy); otherwise `moov` alone is read
/// whole (on local disk into one of the source's warm buffers).
async fn read_moov(
    reader: Reader<'_>,
    probe: &Bytes,
    range: ByteRange,
    after: ByteRange,
) -> Result<(Bytes, Option<Bytes>), MediaError> {
    let probe_len = probe.len() as u64;
    let start_in_probe = usize::try_from(range.start)
        .ok()
        .filter(|_| range.start < probe_len && range.end() > probe_len);
    let (Some(start), true) = (start_in_probe, reader.reads_are_round_trips()) else {
        return Ok((reader.read(range).await?, None));
    };
    let head = probe.slice(start..);
    let rest_len = range.end() - probe_len;
    let rest = reader
        .read(ByteRange::new(probe_len, rest_len + after.len))
        .await?;
    let cut = usize::try_from(rest_len)
        .unwrap_or(usize::MAX)
        .min(rest.len());
    let mut moov = bytes::BytesMut::with_capacity(head.len() + cut);
    moov.extend_from_slice(&head);
    moov.extend_from_slice(&rest[..cut]);
    Ok((moov.freeze(), Some(rest.slice(cut..))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_sizes_are_checked_against_the_object() {
        let mut b = Vec::new();
        b.extend_from_slice(&16u32.to_be_bytes());
        b.extend_from_slice(b"ftyp");
        assert_eq!(
            parse_header(&b, 0, 100).unwrap(),
            Some(BoxHeader {
                kind: *b"ftyp",
                header_len: 8,
                box_len: 16
            })
        );
        assert!(matches!(
            parse_header(&b, 90, 100),
            Err(MediaError::Truncated { .. })
        ));
    }

    #[test]
    fn a_box_of_size_3_is_malformed_not_a_loop() {
        let mut b = Vec::new();
        b.extend_from_slice(&3u32.to_be_bytes());
        b.extend_from_slice(b"free");
        assert!(matches!(
            parse_header(&b, 0, 100),
            Err(MediaError::Malformed { .. })
        ));
    }

    #[test]
    fn text_is_not_an_mp4() {
        assert!(matches!(
            parse_header(b"\x00\x00\x00\x10\x01\x02\x03\x04", 0, 100),
            Err(MediaError::NotMp4 { .. })
        ));
    }

    #[test]
    fn size_zero_extends_to_the_end_and_large_size_is_read() {
        let mut b = vec![0, 0, 0, 0];
        b.extend_from_slice(b"mdat");
        assert_eq!(parse_header(&b, 10, 100).unwrap().unwrap().box_len, 90);
        let mut b = vec![0, 0, 0, 1];
        b.extend_from_slice(b"mdat");
        assert_eq!(parse_header(&b, 0, 100).unwrap(), None);
        b.extend_from_slice(&40u64.to_be_bytes());
        assert_eq!(parse_header(&b, 0, 100).unwrap().unwrap().box_len, 40);
    }
}
