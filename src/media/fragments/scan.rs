//! Finding the `moof` boxes of a fragmented file with few ranged reads, never reading on
//! purpose into `mdat` payloads.
//!
//! One walk visits every top-level box from the end of `moov`, skipping each by its size;
//! a `sidx`, or an `mfra` found through the file's last bytes, only saves reads by saying
//! where the `moof`s are, fetched together in one batch. An index that points anywhere but
//! at a box the walk lands on is refused: such a file was not written by a muxer.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use mp4_atom::{Decode, Mfra, Sidx};

use super::super::locate::{parse_header, Reader, TopLevelBoxes};
use super::super::{MediaError, MediaLimits};
use super::{FoundFragments, FoundMoof, FragmentDiscovery, FragmentReport};
use crate::source::ByteRange;

/// Bytes enough for any box header (a 64-bit size makes it 16).
const HEADER_PEEK: u64 = 16;
/// Window read at a miss before any `moof` has been seen.
const FIRST_GUESS: u64 = 16 * 1024;
/// Bounds of the window read at a miss once `moof` sizes are known.
const MIN_GUESS: u64 = 4 * 1024;
const MAX_GUESS: u64 = 256 * 1024;
/// On an object store, fragments (`moof` + `mdat`) this small are read several at a time: a
/// miss then reads `SMALL_READ_AHEAD` bytes, payloads included, to save round trips.
const SMALL_FRAGMENT: u64 = 64 * 1024;
const SMALL_READ_AHEAD: u64 = crate::source::OVER_READ_BUDGET_BYTES;
/// Bytes read from the end of the file to find `mfro` (and usually the whole `mfra`).
const TAIL_BYTES: u64 = 64 * 1024;
/// Most bytes asked for in one batch of hinted windows.
const BATCH_BYTES: u64 = 4 * 1024 * 1024;

/// Byte windows of the object already read, by start offset.
#[derive(Default)]
struct Windows {
    parts: BTreeMap<u64, Bytes>,
}

impl Windows {
    /// `[start, start + len)` when one window holds all of it. Only the few windows that
    /// start nearest before `start` are tried: windows are read ahead of the walk, so one
    /// of those holds it if any does.
    fn get(&self, start: u64, len: u64) -> Option<Bytes> {
        self.parts
            .range(..=start)
            .rev()
            .take(4)
            .find_map(|(at, bytes)| {
                let from = usize::try_from(start - at).ok()?;
                let to = from.checked_add(usize::try_from(len).ok()?)?;
                (to <= bytes.len()).then(|| bytes.slice(from..to))
            })
    }

    fn covers(&self, start: u64, len: u64) -> bool {
        self.get(start, len).is_some()
    }

    /// Drop the windows that end at or before `pos`: the walk never goes back, and a
    /// read-ahead window may hold payload bytes that should not stay in memory.
    fn forget_before(&mut self, pos: u64) {
        while let Some(entry) = self.parts.first_entry() {
            if entry.key().saturating_add(entry.get().len() as u64) > pos {
                break;
            }
            entry.remove();
        }
    }

    fn insert(&mut self, start: u64, bytes: Bytes) {
        let longer = self
            .parts
            .get(&start)
            .is_none_or(|old| old.len() < bytes.len());
        if longer && !bytes.is_empty() {
            self.parts.insert(start, bytes);
        }
    }
}

/// The walk's reads and what they cost.
struct Scan<'a> {
    reader: Reader<'a>,
    size: u64,
    windows: Windows,
    report: FragmentReport,
}

impl Scan<'_> {
    async fn read(&mut self, range: ByteRange) -> Result<(), MediaError> {
        self.report.reads += 1;
        self.report.ranges += 1;
        self.report.bytes += range.len;
        let bytes = self.reader.read(range).await?;
        self.windows.insert(range.start, bytes);
        Ok(())
    }

    /// Read `ranges` (ascending, not overlapping) in batches of at most `BATCH_BYTES`.
    async fn read_batches(&mut self, ranges: &[ByteRange]) -> Result<(), MediaError> {
        let mut rest = ranges;
        while !rest.is_empty() {
            let mut take = 0;
            let mut bytes = 0u64;
            for range in rest {
                if take > 0 && bytes.saturating_add(range.len) > BATCH_BYTES {
                    break;
                }
                bytes = bytes.saturating_add(range.len);
                take += 1;
            }
            let (batch, later) = rest.split_at(take);
            rest = later;
            self.report.reads += 1;
            self.report.ranges += batch.len() as u32;
            self.report.bytes += bytes;
            let parts = self.reader.read_many(batch).await?;
            for (range, part) in batch.iter().zip(parts) {
                self.windows.insert(range.start, part);
            }
        }
        Ok(())
    }

    /// The bytes `[start, start + len)`, reading `[start, start + read_len)` (clipped to
    /// the object) when no window holds them.
    async fn bytes(&mut self, start: u64, len: u64, read_len: u64) -> Result<Bytes, MediaError> {
        if let Some(bytes) = self.windows.get(start, len) {
            return Ok(bytes);
        }
        let read_len = read_len.max(len).min(self.size.saturating_sub(start));
        self.read(ByteRange::new(start, read_len)).await?;
        self.windows
            .get(start, len)
            .ok_or_else(|| MediaError::Truncated {
                reason: format!("box at offset {start} is cut off"),
            })
    }
}

/// Find every `moof` after `moov` in an object of `size` bytes.
///
/// # Errors
/// [`MediaError::Truncated`] or [`MediaError::Malformed`] for boxes that run past the end
/// or indexes that point where no box starts, [`MediaError::TooLarge`] past
/// `max_fragments` or `max_fragment_header_bytes`, and source errors.
pub(in crate::media) async fn find_fragments(
    reader: Reader<'_>,
    size: u64,
    boxes: &TopLevelBoxes,
    limits: &MediaLimits,
) -> Result<FoundFragments, MediaError> {
    let mut scan = Scan {
        reader,
        size,
        windows: Windows::default(),
        report: FragmentReport::default(),
    };
    scan.windows.insert(0, boxes.probe.clone());
    scan.windows.insert(boxes.moov_offset, boxes.moov.clone());
    // Fragments follow moov (8.8.4).
    let first = boxes.moov_offset.saturating_add(boxes.moov.len() as u64);
    let mut pos = first;
    let max_fragments = u64::from(limits.max_fragments);
    // Boxes walked: a fragment is a moof and an mdat, give or take a styp, sidx or free.
    let max_boxes = max_fragments.saturating_mul(4).saturating_add(64);
    let mut walked = 0u64;
    let mut header_bytes = 0u64;
    let mut moofs: Vec<FoundMoof> = Vec::new();
    // Box starts promised by an index, and by which.
    let mut hints: BTreeMap<u64, FragmentDiscovery> = BTreeMap::new();
    let mut unfetched: BTreeSet<u64> = BTreeSet::new();
    // Every box start walked, ascending (hints are checked against it at the end).
    let mut starts: Vec<u64> = Vec::new();
    let mut tail_checked = false;
    let mut guess = FIRST_GUESS;
    let mut last_moof: Option<u64> = None;
    let mut last_span = u64::MAX;

    while pos < size {
        walked += 1;
        if walked > max_boxes {
            return Err(MediaError::TooLarge {
                limit: "max_fragments",
                value: walked / 4,
                max: max_fragments,
            });
        }
        let peek = HEADER_PEEK.min(size - pos);
        if !scan.windows.covers(pos, peek) {
            if hints.is_empty() && !tail_checked {
                tail_checked = true;
                let found = mfra_hints(&mut scan, pos, first, limits, &mut header_bytes).await?;
                if !found.is_empty() {
                    scan.report.discovery = FragmentDiscovery::Mfra;
                }
                for offset in found {
                    hints.entry(offset).or_insert(FragmentDiscovery::Mfra);
                    unfetched.insert(offset);
                }
            }
            if !unfetched.is_empty() {
                let wanted: Vec<u64> = unfetched.range(pos..).copied().collect();
                unfetched.clear();
                let mut ranges = Vec::with_capacity(wanted.len());
                for (i, start) in wanted.iter().enumerate() {
                    let next = wanted.get(i + 1).copied().unwrap_or(size);
                    let end = start.saturating_add(guess).min(next).min(size);
                    if end > *start && !scan.windows.covers(*start, end - start) {
                        ranges.push(ByteRange::new(*start, end - start));
                    }
                }
                scan.read_batches(&ranges).await?;
            }
            if !scan.windows.covers(pos, peek) {
                let ahead = if last_span <= SMALL_FRAGMENT && scan.reader.reads_are_round_trips() {
                    SMALL_READ_AHEAD
                } else {
                    guess
                };
                scan.read(ByteRange::new(pos, ahead.max(peek).min(size - pos)))
                    .await?;
            }
        }
        let head = scan.bytes(pos, peek, peek).await?;
        let header = parse_header(&head, pos, size)?.ok_or_else(|| MediaError::Truncated {
            reason: format!("box header at offset {pos} is cut off"),
        })?;
        starts.push(pos);
        match &header.kind {
            b"moof" => {
                header_bytes = add_header_bytes(header_bytes, header.box_len, limits)?;
                let bytes = scan
                    .bytes(pos, header.box_len, header.box_len + HEADER_PEEK)
                    .await?;
                // A copy, so the moof does not keep the window it was read with alive.
                moofs.push(FoundMoof {
                    offset: pos,
                    bytes: Bytes::copy_from_slice(&bytes),
                });
                if moofs.len() as u64 > max_fragments {
                    return Err(MediaError::TooLarge {
                        limit: "max_fragments",
                        value: moofs.len() as u64,
                        max: max_fragments,
                    });
                }
                // The next miss is most likely the next moof: read about this one's size.
                guess = (header.box_len.saturating_mul(3) / 2 + 64 + HEADER_PEEK)
                    .next_multiple_of(MIN_GUESS)
                    .clamp(MIN_GUESS, MAX_GUESS);
                if let Some(last) = last_moof {
                    last_span = pos - last;
                }
                last_moof = Some(pos);
            }
            b"sidx" => {
                header_bytes = add_header_bytes(header_bytes, header.box_len, limits)?;
                let bytes = scan.bytes(pos, header.box_len, header.box_len).await?;
                let references = sidx_starts(&bytes, pos, size, limits)?;
                if hints.len().saturating_add(references.len()) as u64 > max_fragments {
                    return Err(MediaError::TooLarge {
                        limit: "max_fragments",
                        value: (hints.len() + references.len()) as u64,
                        max: max_fragments,
                    });
                }
                if hints.is_empty() {
                    scan.report.discovery = FragmentDiscovery::Sidx;
                }
                for start in references {
                    hints.entry(start).or_insert(FragmentDiscovery::Sidx);
                    unfetched.insert(start);
                }
            }
            _ => {}
        }
        pos += header.box_len;
        scan.windows.forget_before(pos);
    }
    // Every box start after moov was visited: a hint the walk did not land on points
    // before moov, into the middle of a box, or past the end.
    if let Some((offset, by)) = hints
        .iter()
        .find(|(offset, _)| starts.binary_search(offset).is_err())
    {
        let index = match by {
            FragmentDiscovery::Sidx => "sidx",
            _ => "tfra",
        };
        return Err(MediaError::Malformed {
            reason: format!("{index} points at offset {offset}, which is not the start of a box"),
        });
    }
    scan.report.fragments = moofs.len() as u32;
    Ok(FoundFragments {
        moofs,
        report: scan.report,
    })
}

fn add_header_bytes(total: u64, more: u64, limits: &MediaLimits) -> Result<u64, MediaError> {
    let total = total.saturating_add(more);
    if total > limits.max_fragment_header_bytes {
        return Err(MediaError::TooLarge {
            limit: "max_fragment_header_bytes",
            value: total,
            max: limits.max_fragment_header_bytes,
        });
    }
    Ok(total)
}

/// The subsegment starts a `sidx` at `pos` gives (8.16.3: offsets count from the end of
/// the `sidx`, then each reference follows the previous one), and the end of the last one
/// when boxes follow it.
///
/// # Errors
/// [`MediaError::Malformed`] for a reference of size 0 (one that points at itself, so the
/// next one too) or one that points outside the file.
fn sidx_starts(
    bytes: &Bytes,
    pos: u64,
    size: u64,
    limits: &MediaLimits,
) -> Result<Vec<u64>, MediaError> {
    let sidx = Sidx::decode(&mut &bytes[..]).map_err(|e| MediaError::Malformed {
        reason: format!("sidx at offset {pos}: {}", e.to_string().escape_debug()),
    })?;
    if sidx.references.len() as u64 > u64::from(limits.max_fragments) {
        return Err(MediaError::TooLarge {
            limit: "max_fragments",
            value: sidx.references.len() as u64,
            max: u64::from(limits.max_fragments),
        });
    }
    let anchor = pos + bytes.len() as u64;
    let mut at = anchor.checked_add(sidx.first_offset);
    let mut starts = Vec::with_capacity(sidx.references.len());
    for (i, reference) in sidx.references.iter().enumerate() {
        let Some(start) = at.filter(|start| *start < size) else {
            return Err(MediaError::Malformed {
                reason: format!(
                    "sidx at offset {pos}: reference {} points outside the {size}-byte file",
                    i + 1
                ),
            });
        };
        if reference.referenced_size == 0 {
            return Err(MediaError::Malformed {
                reason: format!(
                    "sidx at offset {pos}: reference {} has size 0 and points at itself",
                    i + 1
                ),
            });
        }
        starts.push(start);
        at = start
            .checked_add(u64::from(reference.referenced_size))
            .filter(|end| *end <= size);
        if at.is_some_and(|end| end < size) && i + 1 == sidx.references.len() {
            // Where the last subsegment ends a box starts too (an `mfra`, more fragments):
            // fetching it with the others saves the walk a read there.
            starts.extend(at);
        }
        if at.is_none() {
            return Err(MediaError::Malformed {
                reason: format!(
                    "sidx at offset {pos}: reference {} runs past the end of the {size}-byte file",
                    i + 1
                ),
            });
        }
    }
    Ok(starts)
}

/// The `moof` offsets the `mfra` at the end of the file gives, if it has one (found by the
/// `mfro` in its last 16 bytes, 8.8.11); the walk is at `from`. Offsets before `first`
/// (the end of `moov`) are refused: a `tfra` pointing back.
async fn mfra_hints(
    scan: &mut Scan<'_>,
    from: u64,
    first: u64,
    limits: &MediaLimits,
    header_bytes: &mut u64,
) -> Result<Vec<u64>, MediaError> {
    let size = scan.size;
    if size.saturating_sub(from) < 32 {
        return Ok(Vec::new());
    }
    let tail_start = size.saturating_sub(TAIL_BYTES).max(from);
    if !scan.windows.covers(size - 16, 16) {
        scan.read(ByteRange::new(tail_start, size - tail_start))
            .await?;
    }
    let Some(mfro) = scan.windows.get(size - 16, 16) else {
        return Ok(Vec::new());
    };
    if &mfro[4..8] != b"mfro" || mfro[..4] != [0, 0, 0, 16] {
        return Ok(Vec::new());
    }
    let mfra_len = u64::from(u32::from_be_bytes([mfro[12], mfro[13], mfro[14], mfro[15]]));
    if mfra_len < 16 || mfra_len > size - from {
        return Err(MediaError::Malformed {
            reason: format!("mfro gives an mfra of {mfra_len} bytes, which does not fit"),
        });
    }
    *header_bytes = add_header_bytes(*header_bytes, mfra_len, limits)?;
    let start = size - mfra_len;
    let bytes = scan.bytes(start, mfra_len, mfra_len).await?;
    let mfra = Mfra::decode(&mut &bytes[..]).map_err(|e| MediaError::Malformed {
        reason: format!("mfra at offset {start}: {}", e.to_string().escape_debug()),
    })?;
    let mut offsets = BTreeSet::new();
    for tfra in &mfra.tfra {
        for entry in &tfra.entries {
            if entry.moof_offset < first || entry.moof_offset >= start {
                return Err(MediaError::Malformed {
                    reason: format!(
                        "tfra of track {} points at offset {}, outside the fragments",
                        tfra.track_id, entry.moof_offset
                    ),
                });
            }
            offsets.insert(entry.moof_offset);
            if offsets.len() as u64 > u64::from(limits.max_fragments) {
                return Err(MediaError::TooLarge {
                    limit: "max_fragments",
                    value: offsets.len() as u64,
                    max: u64::from(limits.max_fragments),
                });
            }
        }
    }
    Ok(offsets.into_iter().collect())
}
