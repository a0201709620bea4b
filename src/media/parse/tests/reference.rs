//! The test oracle of `tables/`: the expansion as it was before it, where mp4-atom decodes
//! the tables and they are then expanded. Kept as the reference the new reader is checked
//! against, in the tests only.

use mp4_atom::{StszSamples, Trak};

use super::super::invalid;
use crate::media::{MediaError, MediaLimits, SampleTable};

/// The sample count `stsz` claims for a track.
pub(super) fn sample_count(trak: &Trak) -> u64 {
    match &trak.mdia.minf.stbl.stsz.samples {
        StszSamples::Identical { count, .. } => u64::from(*count),
        StszSamples::Different { sizes } => sizes.len() as u64,
    }
}

/// Decode time just past a track's `moov` samples, by its `stts` (which `sample_table`
/// later checks against the sample count).
pub(super) fn stts_end(trak: &Trak) -> u64 {
    trak.mdia
        .minf
        .stbl
        .stts
        .entries
        .iter()
        .map(|e| u64::from(e.sample_count).saturating_mul(u64::from(e.sample_delta)))
        .fold(0, u64::saturating_add)
}

/// Expand one track's sample tables into flat arrays.
pub(super) fn sample_table(
    trak: &Trak,
    object_len: u64,
    limits: &MediaLimits,
) -> Result<SampleTable, MediaError> {
    let track_id = trak.tkhd.track_id;
    let stbl = &trak.mdia.minf.stbl;

    // Sizes first: they fix the sample count every other table must agree with.
    let count = sample_count(trak);
    if count > limits.max_samples_per_track {
        return Err(MediaError::TooLarge {
            limit: "max_samples_per_track",
            value: count,
            max: limits.max_samples_per_track,
        });
    }
    let n = usize::try_from(count).map_err(|_| invalid("stsz", track_id, "too many samples"))?;
    let sizes: Vec<u32> = match &stbl.stsz.samples {
        StszSamples::Identical { size, .. } => {
            // One size for every sample is a count claimed in 8 bytes: before expanding it,
            // check that that many samples fit in the file (samples do not overlap).
            let total = u64::from(*size).saturating_mul(count);
            if total > object_len {
                return Err(MediaError::Truncated {
                reason: format!(
                    "track {track_id} claims {count} samples of {size} bytes, more than the {object_len}-byte file holds"
                ),
            });
            }
            vec![*size; n]
        }
        StszSamples::Different { sizes } => sizes.clone(),
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
    let stts_total = stbl
        .stts
        .entries
        .iter()
        .map(|e| u64::from(e.sample_count))
        .fold(0u64, u64::saturating_add);
    if stts_total > count {
        return Err(invalid(
            "stts",
            track_id,
            format!("covers {stts_total} samples but stsz has {n}"),
        ));
    }
    let mut dts = Vec::with_capacity(n);
    let mut durations = Vec::with_capacity(n);
    let mut time = 0u64;
    'stts: for entry in &stbl.stts.entries {
        for _ in 0..entry.sample_count {
            if dts.len() == n {
                break 'stts;
            }
            dts.push(time);
            durations.push(entry.sample_delta);
            time = time.saturating_add(u64::from(entry.sample_delta));
        }
    }
    if dts.len() != n {
        return Err(invalid(
            "stts",
            track_id,
            format!("covers {} of {n} samples", dts.len()),
        ));
    }

    // Composition offsets (ctts, 8.6.1.3), v0 unsigned or v1 signed.
    let mut cts_offsets = Vec::new();
    if let Some(ctts) = &stbl.ctts {
        cts_offsets.reserve_exact(n);
        'ctts: for entry in &ctts.entries {
            let offset = i32::try_from(entry.sample_offset)
                .map_err(|_| invalid("ctts", track_id, "composition offset out of range"))?;
            for _ in 0..entry.sample_count {
                if cts_offsets.len() == n {
                    break 'ctts;
                }
                cts_offsets.push(offset);
            }
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
    let sync = match &stbl.stss {
        None => None,
        Some(stss) => {
            let mut list = Vec::with_capacity(stss.entries.len().min(n));
            for &number in &stss.entries {
                let index = number
                    .checked_sub(1)
                    .filter(|i| (*i as usize) < n)
                    .ok_or_else(|| invalid("stss", track_id, "sample number out of range"))?;
                if list.last().is_some_and(|last| *last >= index) {
                    return Err(invalid("stss", track_id, "sample numbers not ascending"));
                }
                list.push(index);
            }
            Some(list)
        }
    };

    let offsets = sample_offsets(trak, &sizes, object_len)?;
    Ok(SampleTable {
        sizes,
        offsets: offsets.into(),
        dts,
        durations,
        cts_offsets,
        sync,
    })
}

/// File offsets of every sample from stsc and stco/co64 (8.7.4, 8.7.5).
fn sample_offsets(trak: &Trak, sizes: &[u32], object_len: u64) -> Result<Vec<u64>, MediaError> {
    let track_id = trak.tkhd.track_id;
    let stbl = &trak.mdia.minf.stbl;
    let chunk_offsets: Vec<u64> = match (&stbl.stco, &stbl.co64) {
        (Some(stco), _) => stco.entries.iter().map(|o| u64::from(*o)).collect(),
        (None, Some(co64)) => co64.entries.clone(),
        (None, None) => return Err(invalid("stco", track_id, "no chunk offset table")),
    };
    let n = sizes.len();
    let mut offsets = Vec::with_capacity(n);
    // The last chunk (1-based) that received samples.
    let mut used_chunks = 0u64;
    let entries = &stbl.stsc.entries;
    for (j, entry) in entries.iter().enumerate() {
        let first_chunk = entry.first_chunk;
        if first_chunk == 0 {
            return Err(invalid("stsc", track_id, "first_chunk is 0"));
        }
        let next_first = match entries.get(j + 1) {
            Some(next) if next.first_chunk <= first_chunk => {
                return Err(invalid("stsc", track_id, "first_chunk not ascending"));
            }
            Some(next) => u64::from(next.first_chunk),
            None => chunk_offsets.len() as u64 + 1,
        };
        for chunk in u64::from(first_chunk)..next_first {
            if offsets.len() == n {
                break;
            }
            used_chunks = chunk;
            let mut offset = usize::try_from(chunk - 1)
                .ok()
                .and_then(|c| chunk_offsets.get(c))
                .copied()
                .ok_or_else(|| invalid("stsc", track_id, "chunk number past stco"))?;
            for _ in 0..entry.samples_per_chunk {
                let Some(size) = sizes.get(offsets.len()) else {
                    break;
                };
                let end = offset.saturating_add(u64::from(*size));
                if end > object_len {
                    return Err(MediaError::Truncated {
                    reason: format!(
                        "track {track_id} sample {} at offset {offset} runs past the end of the file ({object_len} bytes)",
                        offsets.len() + 1
                    ),
                });
                }
                offsets.push(offset);
                offset = end;
            }
        }
        if offsets.len() == n {
            break;
        }
    }
    if offsets.len() != n {
        return Err(invalid(
            "stsc",
            track_id,
            format!("places {} of {n} samples", offsets.len()),
        ));
    }
    // Every chunk holds a sample: chunks left over mean stsc claims more samples per chunk
    // than there are (a huge samples_per_chunk puts every sample in the first chunk).
    if used_chunks < chunk_offsets.len() as u64 {
        return Err(invalid(
            "stsc",
            track_id,
            format!(
                "places all {n} samples in the first {used_chunks} of {} chunks",
                chunk_offsets.len()
            ),
        ));
    }
    Ok(offsets)
}
