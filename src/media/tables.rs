//! A track's sample tables (`stsz`, `stts`, `ctts`, `stss`, `stsc`, `stco`/`co64`), read
//! straight from the `moov` bytes into the flat arrays of [`SampleTable`].
//!
//! Our own reader, not mp4-atom's: mp4-atom decodes each table into a `Vec` of entry
//! structs (a 60-minute file: 278,400 sizes, 1,600 chunk offsets, thousands of `stts` and
//! `ctts` entries), which `parse.rs` then expanded a second time into the index. Decoding
//! and expanding were 90 % of the instructions of a cold first playlist (callgrind,
//! docs/performance.md). Here every table is read once, from a [`Bytes`] slice of `moov`
//! that `skeleton.rs` set aside, into arrays allocated once at their final size, after the
//! entry count has been checked against the bytes the box actually holds (so a count
//! claimed in 4 bytes never sizes an allocation). The checks are those mp4-atom and the
//! expansion made together: a table's entries must fill its box exactly, `ctts` is
//! version 0 or 1, and every count and offset is checked as before (`parse.rs` has the
//! rules that span tables).

use bytes::Bytes;

use super::{MediaError, MediaLimits, SampleTable};

/// The bodies (after the box header, starting with version and flags) of the sample tables
/// of one `stbl`, as the file has them; `None` for a table the `stbl` lacks. A table that
/// appears twice is kept once (the first); mp4-atom refuses the duplicate anyway.
#[derive(Debug, Clone, Default)]
pub(super) struct RawTables {
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

fn invalid(fourcc: &str, track_id: u32, reason: impl Into<String>) -> MediaError {
    MediaError::InvalidTable {
        fourcc: fourcc.to_owned(),
        track_id,
        reason: reason.into(),
    }
}

/// A full box body: version, and the bytes after version and flags.
fn full_box<'a>(body: &'a [u8], fourcc: &str, track_id: u32) -> Result<(u8, &'a [u8]), MediaError> {
    match body {
        [version, _, _, _, rest @ ..] => Ok((*version, rest)),
        _ => Err(invalid(
            fourcc,
            track_id,
            "box too short for version and flags",
        )),
    }
}

fn be_u32(bytes: &[u8]) -> u32 {
    let mut word = [0u8; 4];
    if let Some(src) = bytes.get(..4) {
        word.copy_from_slice(src);
    }
    u32::from_be_bytes(word)
}

fn be_u64(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    if let Some(src) = bytes.get(..8) {
        word.copy_from_slice(src);
    }
    u64::from_be_bytes(word)
}

/// The entries of a table whose body (after version and flags) is a 32-bit entry count
/// and `count` entries of `entry_bytes` each, filling the box exactly.
fn entries<'a>(
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

/// What `stsz` says: one size for every sample, or a size per sample.
enum Sizes<'a> {
    Identical { size: u32, count: u32 },
    Different(&'a [u8]),
}

fn stsz<'a>(tables: &'a RawTables, track_id: u32) -> Result<Sizes<'a>, MediaError> {
    let body = tables
        .stsz
        .as_deref()
        .ok_or_else(|| invalid("stsz", track_id, "no sample size table"))?;
    let (_, rest) = full_box(body, "stsz", track_id)?;
    let Some(size) = rest.get(..4) else {
        return Err(invalid(
            "stsz",
            track_id,
            "box too short for its sample size",
        ));
    };
    match be_u32(size) {
        0 => Ok(Sizes::Different(entries(
            rest.get(4..).unwrap_or_default(),
            4,
            "stsz",
            track_id,
        )?)),
        size => {
            let tail = rest.get(4..).unwrap_or_default();
            if tail.len() != 4 {
                return Err(invalid(
                    "stsz",
                    track_id,
                    "a table with one size for every sample must hold only the count",
                ));
            }
            Ok(Sizes::Identical {
                size,
                count: be_u32(tail),
            })
        }
    }
}

/// The number of samples `stsz` claims for a track.
///
/// # Errors
/// [`MediaError::InvalidTable`] when `stsz` is missing or malformed.
pub(super) fn sample_count(tables: &RawTables, track_id: u32) -> Result<u64, MediaError> {
    Ok(match stsz(tables, track_id)? {
        Sizes::Identical { count, .. } => u64::from(count),
        Sizes::Different(list) => (list.len() / 4) as u64,
    })
}

/// The `stts` entries (sample count, delta) of a track.
fn stts_entries(
    tables: &RawTables,
    track_id: u32,
) -> Result<impl Iterator<Item = (u32, u32)> + '_, MediaError> {
    let body = tables
        .stts
        .as_deref()
        .ok_or_else(|| invalid("stts", track_id, "no decoding time table"))?;
    let (_, rest) = full_box(body, "stts", track_id)?;
    let list = entries(rest, 8, "stts", track_id)?;
    Ok(list
        .chunks_exact(8)
        .map(|e| (be_u32(e), be_u32(e.get(4..).unwrap_or_default()))))
}

/// Decode time just past a track's `moov` samples, by its `stts` (which
/// [`sample_table`] later checks against the sample count).
///
/// # Errors
/// [`MediaError::InvalidTable`] when `stts` is missing or malformed.
pub(super) fn stts_end(tables: &RawTables, track_id: u32) -> Result<u64, MediaError> {
    Ok(stts_entries(tables, track_id)?
        .map(|(count, delta)| u64::from(count).saturating_mul(u64::from(delta)))
        .fold(0, u64::saturating_add))
}

/// Expand one track's sample tables into flat arrays, checking every count against the
/// sample count, every offset against the object's length `object_len`, and every size
/// against `limits`. The offsets of a track of more than
/// `limits.offsets_at_load_max_samples` samples are checked now and worked out on first
/// use (see [`super::SampleOffsets`]).
///
/// # Errors
/// [`MediaError::TooLarge`], [`MediaError::Truncated`] or [`MediaError::InvalidTable`]
/// naming the first table or limit the track breaks.
pub(super) fn sample_table(
    tables: &RawTables,
    track_id: u32,
    object_len: u64,
    limits: &MediaLimits,
) -> Result<SampleTable, MediaError> {
    // Sizes first: they fix the sample count every other table must agree with.
    let count = sample_count(tables, track_id)?;
    if count > limits.max_samples_per_track {
        return Err(MediaError::TooLarge {
            limit: "max_samples_per_track",
            value: count,
            max: limits.max_samples_per_track,
        });
    }
    let n = usize::try_from(count).map_err(|_| invalid("stsz", track_id, "too many samples"))?;
    let sizes: Vec<u32> = match stsz(tables, track_id)? {
        Sizes::Identical { size, .. } => {
            // One size for every sample is a count claimed in 8 bytes: before expanding it,
            // check that that many samples fit in the file (samples do not overlap).
            let total = u64::from(size).saturating_mul(count);
            if total > object_len {
                return Err(MediaError::Truncated {
                    reason: format!(
                        "track {track_id} claims {count} samples of {size} bytes, more than the {object_len}-byte file holds"
                    ),
                });
            }
            vec![size; n]
        }
        Sizes::Different(list) => list.chunks_exact(4).map(be_u32).collect(),
    };
    if let Some(big) = sizes.iter().find(|s| **s > limits.max_sample_bytes) {
        return Err(MediaError::TooLarge {
            limit: "max_sample_bytes",
            value: u64::from(*big),
            max: u64::from(limits.max_sample_bytes),
        });
    }

    // Decode times (stts, ISO/IEC 14496-12 8.6.1.2). The table must describe exactly the
    // samples stsz has: a count past them is a lie, however large.
    let stts_total = stts_entries(tables, track_id)?
        .map(|(count, _)| u64::from(count))
        .fold(0u64, u64::saturating_add);
    if stts_total > count {
        return Err(invalid(
            "stts",
            track_id,
            format!("covers {stts_total} samples but stsz has {n}"),
        ));
    }
    if stts_total < count {
        return Err(invalid(
            "stts",
            track_id,
            format!("covers {stts_total} of {n} samples"),
        ));
    }
    // stts_total == n, so these are the arrays' final sizes.
    let mut dts = Vec::with_capacity(n);
    let mut durations = Vec::with_capacity(n);
    let mut time = 0u64;
    for (count, delta) in stts_entries(tables, track_id)? {
        durations.extend(std::iter::repeat_n(delta, count as usize));
        for _ in 0..count {
            dts.push(time);
            time = time.saturating_add(u64::from(delta));
        }
    }

    // Composition offsets (ctts, 8.6.1.3), v0 unsigned or v1 signed.
    let mut cts_offsets = Vec::new();
    if let Some(body) = tables.ctts.as_deref() {
        let (version, rest) = full_box(body, "ctts", track_id)?;
        if version > 1 {
            return Err(invalid(
                "ctts",
                track_id,
                format!("unknown version {version}"),
            ));
        }
        let list = entries(rest, 8, "ctts", track_id)?;
        cts_offsets.reserve_exact(n);
        for entry in list.chunks_exact(8) {
            let raw = be_u32(entry.get(4..).unwrap_or_default());
            let offset = match version {
                0 => i32::try_from(raw).ok(),
                _ => Some(raw as i32),
            }
            .ok_or_else(|| invalid("ctts", track_id, "composition offset out of range"))?;
            let samples = be_u32(entry) as usize;
            if samples > 0 && cts_offsets.len() == n {
                // Entries past the last sample are not read (nor checked) further.
                break;
            }
            let take = samples.min(n - cts_offsets.len());
            cts_offsets.extend(std::iter::repeat_n(offset, take));
        }
        if cts_offsets.len() != n {
            return Err(invalid(
                "ctts",
                track_id,
                format!("covers {} of {n} samples", cts_offsets.len()),
            ));
        }
    }

    // Sync samples (stss, 8.6.2): 1-based in the file, 0-based here.
    let sync = match tables.stss.as_deref() {
        None => None,
        Some(body) => {
            let (_, rest) = full_box(body, "stss", track_id)?;
            let list = entries(rest, 4, "stss", track_id)?;
            let mut sync = Vec::with_capacity((list.len() / 4).min(n));
            for number in list.chunks_exact(4).map(be_u32) {
                let index = number
                    .checked_sub(1)
                    .filter(|i| (*i as usize) < n)
                    .ok_or_else(|| invalid("stss", track_id, "sample number out of range"))?;
                if sync.last().is_some_and(|last| *last >= index) {
                    return Err(invalid("stss", track_id, "sample numbers not ascending"));
                }
                sync.push(index);
            }
            Some(sync)
        }
    };

    let at_load_max = limits.offsets_at_load_max_samples;
    let offsets = sample_offsets(tables, track_id, &sizes, object_len, at_load_max)?;
    Ok(SampleTable {
        sizes,
        offsets,
        dts,
        durations,
        cts_offsets,
        sync,
    })
}

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
/// [`super::SampleOffsets`]): its chunk tables, checked at load by [`walk_chunks`]. They
/// are `Bytes` sharing the `moov` buffer: copying them cost as many fresh pages as the
/// offsets (1.9 MB for the 60-minute asset, one sample a chunk). The buffer is let go once
/// the offsets are worked out, which the catalog does shortly after the load.
#[derive(Debug)]
pub(super) struct LaterOffsets {
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
    pub(super) fn offsets(&self, sizes: &[u32]) -> &[u64] {
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

    /// Whether the offsets were worked out.
    pub(super) fn worked_out(&self) -> bool {
        self.worked_out.get().is_some()
    }
}

/// Every sample's file offset, by [`walk_chunks`]: each chunk's samples lie end to end.
fn expand_offsets(chunks: Chunks<'_>, sizes: &[u32]) -> Result<Vec<u64>, MediaError> {
    let mut offsets = Vec::with_capacity(sizes.len());
    walk_chunks(chunks, sizes, |offset, sizes| {
        let mut at = offset;
        for size in sizes {
            offsets.push(at);
            at = at.saturating_add(u64::from(*size));
        }
    })?;
    Ok(offsets)
}

/// The sample offsets of a track whose samples have `sizes`: checked in full now, and
/// expanded now when there are at most `at_load_max` samples, else on first use.
fn sample_offsets(
    tables: &RawTables,
    track_id: u32,
    sizes: &[u32],
    object_len: u64,
    at_load_max: usize,
) -> Result<super::SampleOffsets, MediaError> {
    let chunks = Chunks::of(tables, track_id, object_len)?;
    if sizes.len() <= at_load_max {
        return Ok(expand_offsets(chunks, sizes)?.into());
    }
    walk_chunks(chunks, sizes, |_, _| {})?;
    Ok(super::SampleOffsets {
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
    if used_chunks < chunk_count {
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
