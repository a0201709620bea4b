//! A track's sample tables (`stsz`, `stts`, `ctts`, `stss`, `stsc`, `stco`/`co64`), read
//! straight from the `moov` bytes into the flat arrays of [`SampleTable`].
//!
//! Our own reader, not mp4-atom's: decoding each table into entry structs and expanding
//! them again was most of the work of a cold first playlist (docs/performance.md). Every
//! table is read once into arrays allocated at their final size, after its entry count has
//! been checked against the bytes its box holds. `raw` holds the table boxes and the reads
//! they share; `chunks` walks `stsc` and `stco`/`co64` into each sample's file offset.

mod chunks;
mod raw;

use super::{MediaError, MediaLimits, SampleTable};
use chunks::sample_offsets;
pub(super) use chunks::LaterOffsets;
pub(super) use raw::RawTables;
use raw::{be_u32, entries, full_box, invalid};

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
