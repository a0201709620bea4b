//! Where each sample lies in the file: the chunk tables (`stsc`, `stco`/`co64`, ISO/IEC
//! 14496-12 8.7.4 and 8.7.5) walked into per-sample offsets, checked in full at load and
//! expanded then or, for a long track, on first use ([`LaterOffsets`]).

use super::raw::{be_u32, be_u64, entries, full_box, invalid, RawTables};
use crate::media::{MediaError, SampleOffsets};

/// The chunk offsets of `stco` (32-bit) or, without it, `co64` (64-bit), as raw entries
/// and their width in bytes.
fn chunk_offsets(tables: &RawTables, track_id: u32) -> Result<(&[u8], usize), MediaError> {
    match (tables.stco.as_deref(), tables.co64.as_deref()) {
        (Some(body), _) => {
            let (_, rest) = full_box(body, "stco", track_id)?;
            Ok((entries(rest, 4, "stco", track_id)?, 4))
        }
        (None, Some(body)) => {
            let (_, rest) = full_box(body, "co64", track_id)?;
            Ok((entries(rest, 8, "co64", track_id)?, 8))
        }
        (None, None) => Err(invalid("stco", track_id, "no chunk offset table")),
    }
}

/// A track's chunk tables (8.7.4 `stsc`, 8.7.5 `stco`/`co64`): the entries, after the
/// entry counts were checked against the boxes.
#[derive(Debug, Clone, Copy)]
struct Chunks<'a> {
    track_id: u32,
    /// `stsc` entries, 12 bytes each.
    stsc: &'a [u8],
    /// Chunk offsets, `width` bytes each.
    offsets: &'a [u8],
    width: usize,
    object_len: u64,
}

impl<'a> Chunks<'a> {
    fn of(tables: &'a RawTables, track_id: u32, object_len: u64) -> Result<Self, MediaError> {
        let (offsets, width) = chunk_offsets(tables, track_id)?;
        let body = tables
            .stsc
            .as_deref()
            .ok_or_else(|| invalid("stsc", track_id, "no sample-to-chunk table"))?;
        let (_, rest) = full_box(body, "stsc", track_id)?;
        let stsc = entries(rest, 12, "stsc", track_id)?;
        Ok(Self {
            track_id,
            stsc,
            offsets,
            width,
            object_len,
        })
    }
}

/// A long track's sample offsets, left to work out on first use (see
/// [`SampleOffsets`]): its chunk tables, checked at load by [`walk_chunks`]. They
/// are `Bytes` sharing the `moov` buffer: copying them cost as many fresh pages as the
/// offsets (1.9 MB for the 60-minute asset, one sample a chunk). The buffer is let go once
/// the offsets are worked out, which the catalog does shortly after the load.
#[derive(Debug)]
pub(in crate::media) struct LaterOffsets {
    track_id: u32,
    /// The samples the tables place: the track's first ones (a fragmented file's
    /// fragments may append more, with their offsets known).
    samples: usize,
    object_len: u64,
    /// `stsc` and `stco`/`co64`, taken when the offsets are worked out.
    tables: std::sync::Mutex<Option<RawTables>>,
    worked_out: std::sync::OnceLock<Vec<u64>>,
}

impl LaterOffsets {
    fn new(tables: &RawTables, track_id: u32, samples: usize, object_len: u64) -> Self {
        let chunk_tables = RawTables {
            stsc: tables.stsc.clone(),
            stco: tables.stco.clone(),
            co64: tables.co64.clone(),
            ..RawTables::default()
        };
        Self {
            track_id,
            samples,
            object_len,
            tables: std::sync::Mutex::new(Some(chunk_tables)),
            worked_out: std::sync::OnceLock::new(),
        }
    }

    /// The offsets of the samples the tables place, the first of `sizes` (the track's),
    /// worked out on the first call. The same walk passed at load, over the same bytes;
    /// were it to fail, the track would have no offsets, and its segments would answer an
    /// error, never wrong bytes.
    pub(in crate::media) fn offsets(&self, sizes: &[u32]) -> &[u64] {
        self.worked_out.get_or_init(|| {
            let taken = self.tables.lock().ok().and_then(|mut tables| tables.take());
            let (Some(tables), Some(sizes)) = (taken, sizes.get(..self.samples)) else {
                return Vec::new();
            };
            let chunks = Chunks::of(&tables, self.track_id, self.object_len);
            match chunks.and_then(|chunks| expand_offsets(chunks, sizes)) {
                Ok(offsets) => offsets,
                Err(e) => {
                    tracing::warn!(error = %e, "sample offsets left for later do not hold");
                    Vec::new()
                }
            }
        })
    }

    /// The offsets of the first `n` samples (of `sizes`, the track's), without working
    /// out the rest: the caption scan's few samples of a long track at load.
    pub(in crate::media) fn first(&self, sizes: &[u32], n: usize) -> Vec<u64> {
        let n = n.min(self.samples);
        if let Some(all) = self.worked_out.get() {
            return all.get(..n).unwrap_or(all).to_vec();
        }
        let Ok(tables) = self.tables.lock() else {
            return Vec::new();
        };
        let (Some(tables), Some(sizes)) = (tables.as_ref(), sizes.get(..n)) else {
            return Vec::new();
        };
        let chunks = Chunks::of(tables, self.track_id, self.object_len);
        let mut offsets = Vec::with_capacity(n);
        let walked = chunks.and_then(|chunks| {
            walk_chunks(chunks, sizes, Walk::Prefix, |offset, sizes| {
                place(&mut offsets, offset, sizes)
            })
        });
        match walked {
            Ok(()) => offsets,
            Err(_) => Vec::new(),
        }
    }

    /// Whether the offsets were worked out.
    pub(in crate::media) fn worked_out(&self) -> bool {
        self.worked_out.get().is_some()
    }
}

/// Every sample's file offset, by [`walk_chunks`]: each chunk's samples lie end to end.
fn expand_offsets(chunks: Chunks<'_>, sizes: &[u32]) -> Result<Vec<u64>, MediaError> {
    let mut offsets = Vec::with_capacity(sizes.len());
    walk_chunks(chunks, sizes, Walk::Whole, |offset, sizes| {
        place(&mut offsets, offset, sizes)
    })?;
    Ok(offsets)
}

/// The offsets of a chunk's samples, which lie end to end from `offset`.
fn place(offsets: &mut Vec<u64>, offset: u64, sizes: &[u32]) {
    let mut at = offset;
    for size in sizes {
        offsets.push(at);
        at = at.saturating_add(u64::from(*size));
    }
}

/// Whether a walk places all of a track's samples (and checks no chunk is left over), or
/// only its first ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    Whole,
    Prefix,
}

/// The sample offsets of a track whose samples have `sizes`: checked in full now, and
/// expanded now when there are at most `at_load_max` samples, else on first use.
pub(super) fn sample_offsets(
    tables: &RawTables,
    track_id: u32,
    sizes: &[u32],
    object_len: u64,
    at_load_max: usize,
) -> Result<SampleOffsets, MediaError> {
    let chunks = Chunks::of(tables, track_id, object_len)?;
    if sizes.len() <= at_load_max {
        return Ok(expand_offsets(chunks, sizes)?.into());
    }
    walk_chunks(chunks, sizes, Walk::Whole, |_, _| {})?;
    Ok(SampleOffsets {
        known: Vec::new(),
        later: Some(std::sync::Arc::new(LaterOffsets::new(
            tables,
            track_id,
            sizes.len(),
            object_len,
        ))),
    })
}

/// Walk the chunks of stsc and stco/co64 (8.7.4, 8.7.5) in order, giving each chunk's
/// offset and the sizes of its samples, after checking that the tables place every sample
/// exactly once and inside the file. Checking costs a sum of sizes per chunk, not a step
/// per sample: a 60-minute title's check is a fraction of a millisecond.
fn walk_chunks(
    chunks: Chunks<'_>,
    sizes: &[u32],
    walk: Walk,
    mut each: impl FnMut(u64, &[u32]),
) -> Result<(), MediaError> {
    let Chunks {
        track_id,
        stsc,
        offsets: chunks,
        width,
        object_len,
    } = chunks;
    let chunk_count = (chunks.len() / width) as u64;
    let chunk_offset = |chunk: u64| -> Option<u64> {
        let at = usize::try_from(chunk.checked_sub(1)?)
            .ok()?
            .checked_mul(width)?;
        let bytes = chunks.get(at..at.checked_add(width)?)?;
        Some(match width {
            4 => u64::from(be_u32(bytes)),
            _ => be_u64(bytes),
        })
    };
    // (first_chunk, samples_per_chunk) of each entry.
    let entry = |j: usize| -> Option<(u32, u32)> {
        let e = stsc.get(j.checked_mul(12)?..)?;
        Some((be_u32(e), be_u32(e.get(4..)?)))
    };
    let n = sizes.len();
    // Samples placed so far.
    let mut placed = 0usize;
    // The last chunk (1-based) that received samples.
    let mut used_chunks = 0u64;
    let mut j = 0;
    while let Some((first_chunk, samples_per_chunk)) = entry(j) {
        if first_chunk == 0 {
            return Err(invalid("stsc", track_id, "first_chunk is 0"));
        }
        let next_first = match entry(j + 1) {
            Some((next, _)) if next <= first_chunk => {
                return Err(invalid("stsc", track_id, "first_chunk not ascending"));
            }
            Some((next, _)) => u64::from(next),
            None => chunk_count + 1,
        };
        for chunk in u64::from(first_chunk)..next_first {
            if placed == n {
                break;
            }
            used_chunks = chunk;
            let offset = chunk_offset(chunk)
                .ok_or_else(|| invalid("stsc", track_id, "chunk number past stco"))?;
            let in_chunk = (samples_per_chunk as usize).min(n - placed);
            let in_chunk = sizes.get(placed..placed + in_chunk).unwrap_or_default();
            // Samples lie end to end in a chunk, so its end bounds every one of them.
            let chunk_len: u64 = in_chunk.iter().map(|s| u64::from(*s)).sum();
            if offset.saturating_add(chunk_len) > object_len {
                // Name the first sample that runs past the end.
                let (mut at, mut sample) = (offset, placed + 1);
                for size in in_chunk {
                    match at.saturating_add(u64::from(*size)) {
                        end if end > object_len => break,
                        end => (at, sample) = (end, sample + 1),
                    }
                }
                return Err(MediaError::Truncated {
                    reason: format!(
                        "track {track_id} sample {sample} at offset {at} runs past the end of the file ({object_len} bytes)"
                    ),
                });
            }
            each(offset, in_chunk);
            placed += in_chunk.len();
        }
        if placed == n {
            break;
        }
        j += 1;
    }
    if placed != n {
        return Err(invalid(
            "stsc",
            track_id,
            format!("places {} of {n} samples", placed),
        ));
    }
    // Every chunk holds a sample: chunks left over mean stsc claims more samples per chunk
    // than there are (a huge samples_per_chunk puts every sample in the first chunk).
    if walk == Walk::Whole && used_chunks < chunk_count {
        return Err(invalid(
            "stsc",
            track_id,
            format!("places all {n} samples in the first {used_chunks} of {chunk_count} chunks"),
        ));
    }
    Ok(())
}
#[cfg(test)]
mod tests {
    use super::*;

    /// `stsc` entries `(first_chunk, samples_per_chunk)` (description index 1), as bytes.
    fn stsc(entries: &[(u32, u32)]) -> Vec<u8> {
        let words = entries.iter().flat_map(|&(first, per)| [first, per, 1]);
        words.flat_map(u32::to_be_bytes).collect()
    }

    /// Chunk offsets as `stco` (4 bytes each) or `co64` (8).
    fn offsets(values: &[u64], width: usize) -> Vec<u8> {
        let word = |v: u64| match width {
            4 => u32::try_from(v).unwrap().to_be_bytes().to_vec(),
            _ => v.to_be_bytes().to_vec(),
        };
        values.iter().flat_map(|&v| word(v)).collect()
    }

    /// Walk the tables, returning each sample's offset, or the error.
    fn walk(
        entries: &[(u32, u32)],
        chunk_offsets: &[u64],
        width: usize,
        sizes: &[u32],
        object_len: u64,
    ) -> Result<Vec<u64>, String> {
        let (stsc, table) = (stsc(entries), offsets(chunk_offsets, width));
        let chunks = Chunks {
            track_id: 1,
            stsc: &stsc,
            offsets: &table,
            width,
            object_len,
        };
        expand_offsets(chunks, sizes).map_err(|e| e.to_string())
    }

    #[test]
    fn one_sample_chunks_are_placed_in_order_in_both_widths() {
        for width in [4, 8] {
            let placed = walk(&[(1, 1)], &[100, 200, 300, 400], width, &[10; 4], 1000);
            assert_eq!(placed, Ok(vec![100, 200, 300, 400]));
        }
        // One-sample chunks, then two-sample chunks.
        let placed = walk(&[(1, 1), (3, 2)], &[100, 200, 300, 400], 8, &[10; 6], 1000);
        assert_eq!(placed, Ok(vec![100, 200, 300, 310, 400, 410]));
    }

    #[test]
    fn a_one_sample_chunk_past_the_end_or_past_stco_is_named() {
        let cut = walk(&[(1, 1)], &[100, 200, 300, 400], 4, &[10; 4], 305).unwrap_err();
        assert!(
            cut.contains("sample 3 at offset 300 runs past the end"),
            "{cut}"
        );
        let short = walk(&[(1, 1)], &[100, 200, 300], 4, &[10; 4], 1000).unwrap_err();
        assert!(short.contains("places 3 of 4 samples"), "{short}");
        let past = walk(&[(1, 1), (10, 1)], &[100, 200, 300], 4, &[10; 4], 1000).unwrap_err();
        assert!(past.contains("chunk number past stco"), "{past}");
        let unused = walk(&[(1, 1)], &[100, 200, 300, 400], 4, &[10; 3], 1000).unwrap_err();
        assert!(unused.contains("in the first 3 of 4 chunks"), "{unused}");
    }
}
