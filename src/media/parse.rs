//! `moov` bytes to `MediaIndex`: mp4-atom decodes the boxes, this module interprets them.
//!
//! mp4-atom gives the sample tables as decoded ("without validation or interpretation");
//! here they are expanded into flat per-sample arrays, checking every count against the
//! sample count, every offset against the object's length, and every size against
//! [`MediaLimits`] before allocating. mp4-atom decodes a bounded copy of `moov` made by
//! `skeleton.rs`, which also cuts out the raw `stsd` box of each track, because init segments
//! carry it verbatim (mp4-atom re-encodes sample entries from decoded fields and refuses
//! unknown ones).

use bytes::Bytes;
use mp4_atom::{Decode, Moov, StszSamples, Trak};

use super::fragments::{self, FoundFragments};
use super::{
    describe_codec, skeleton, EditShift, MediaError, MediaIndex, MediaLimits, SampleTable,
    TrackIndex, TrackKind,
};
use crate::source::ObjectIdentity;

/// Parse a whole `moov` box (header included) of the object `identity`.
///
/// # Errors
/// A [`MediaError`] naming the first table or limit the file breaks.
pub fn parse_index(
    identity: ObjectIdentity,
    moov_bytes: &Bytes,
    limits: &MediaLimits,
) -> Result<MediaIndex, MediaError> {
    parse_with_fragments(identity, moov_bytes, None, limits)
}

/// [`parse_index`] for a file whose tracks continue in movie fragments: each track's
/// samples are its `moov` ones followed by those of its track fragments in `fragments`.
///
/// # Errors
/// As [`parse_index`], and a [`MediaError`] naming the first fragment box that breaks a
/// rule or limit; a fragmented file without any sample is refused.
pub(super) fn parse_with_fragments(
    identity: ObjectIdentity,
    moov_bytes: &Bytes,
    fragments: Option<&FoundFragments>,
    limits: &MediaLimits,
) -> Result<MediaIndex, MediaError> {
    // Bounded nesting and the track limit are checked here, before mp4-atom sees anything.
    let skeleton = skeleton::build(moov_bytes, limits)?;
    // mp4-atom's messages quote box types and strings from the file: escape them, so the
    // reason stays one printable line.
    let moov = Moov::decode(&mut &skeleton.moov[..]).map_err(|e| MediaError::Malformed {
        reason: format!("moov: {}", e.to_string().escape_debug()),
    })?;
    let movie_timescale = moov.mvhd.timescale;
    if movie_timescale == 0 {
        return Err(MediaError::Malformed {
            reason: "mvhd timescale is 0".into(),
        });
    }
    check_sample_budget(&moov.trak, limits)?;
    let mut fragment_samples = match fragments {
        Some(found) => {
            let declared: Vec<(u32, u64, u64)> = moov
                .trak
                .iter()
                .map(|t| (t.tkhd.track_id, sample_count(t), stts_end(t)))
                .collect();
            fragments::decode(moov_bytes, &found.moofs, &declared, identity.size, limits)?
        }
        None => fragments::FragmentSamples::default(),
    };
    let descriptions = skeleton.sample_descriptions;
    let mut tracks = Vec::new();
    let mut first_unsupported = None;
    for (i, trak) in moov.trak.iter().enumerate() {
        let Some(kind) = track_kind(trak) else {
            continue;
        };
        let track_id = trak.tkhd.track_id;
        let Some(codec) = trak.mdia.minf.stbl.stsd.codecs.first() else {
            return Err(invalid("stsd", track_id, "no sample entry"));
        };
        let codec = match describe_codec(codec, track_id) {
            Ok(codec) => codec,
            Err(e @ MediaError::UnsupportedCodec { .. }) => {
                tracing::warn!(track_id, error = %e, "skipping track");
                first_unsupported.get_or_insert(e);
                continue;
            }
            Err(e) => return Err(e),
        };
        let Some(sample_description) = descriptions.get(i).cloned().flatten() else {
            return Err(invalid("stsd", track_id, "sample description not found"));
        };
        let timescale = trak.mdia.mdhd.timescale;
        if timescale == 0 {
            return Err(invalid("mdhd", track_id, "timescale is 0"));
        }
        let language = Some(trak.mdia.mdhd.language.clone())
            .filter(|l| !l.is_empty() && l != "und" && l.chars().all(|c| c.is_ascii_lowercase()));
        let mut samples = sample_table(trak, identity.size, limits)?;
        fragment_samples.append_to(track_id, &mut samples)?;
        let edit = edit_shift(trak, movie_timescale, timescale, samples.end_dts())?;
        tracks.push(TrackIndex {
            track_id,
            kind,
            timescale,
            language,
            codec,
            sample_description,
            tkhd_width: fixed_u32(trak.tkhd.width.integer(), trak.tkhd.width.decimal()),
            tkhd_height: fixed_u32(trak.tkhd.height.integer(), trak.tkhd.height.decimal()),
            edit,
            samples,
        });
    }
    if tracks.is_empty() {
        return Err(first_unsupported.unwrap_or(MediaError::NoTracks));
    }
    if fragments.is_some() && tracks.iter().all(|t| t.samples.is_empty()) {
        return Err(MediaError::Malformed {
            reason: "fragmented file without samples: no moof after moov".to_owned(),
        });
    }
    Ok(MediaIndex {
        identity,
        movie_timescale,
        tracks,
    })
}

fn fixed_u32(integer: u16, fraction: u16) -> u32 {
    (u32::from(integer) << 16) | u32::from(fraction)
}

fn invalid(fourcc: &str, track_id: u32, reason: impl Into<String>) -> MediaError {
    MediaError::InvalidTable {
        fourcc: fourcc.to_owned(),
        track_id,
        reason: reason.into(),
    }
}

/// The audio or video kind of a track, from its handler; `None` for tracks not served.
fn track_kind(trak: &Trak) -> Option<TrackKind> {
    match &<[u8; 4]>::from(trak.mdia.hdlr.handler) {
        b"vide" => Some(TrackKind::Video),
        b"soun" => Some(TrackKind::Audio),
        _ => None,
    }
}

/// The sample count `stsz` claims for a track.
fn sample_count(trak: &Trak) -> u64 {
    match &trak.mdia.minf.stbl.stsz.samples {
        StszSamples::Identical { count, .. } => u64::from(*count),
        StszSamples::Different { sizes } => sizes.len() as u64,
    }
}

/// Decode time just past a track's `moov` samples, by its `stts` (which `sample_table`
/// later checks against the sample count).
fn stts_end(trak: &Trak) -> u64 {
    trak.mdia
        .minf
        .stbl
        .stts
        .entries
        .iter()
        .map(|e| u64::from(e.sample_count).saturating_mul(u64::from(e.sample_delta)))
        .fold(0, u64::saturating_add)
}

/// Refuse a file whose audio or video tracks claim more samples than
/// `max_samples_per_track` each or `max_samples_per_file` together, before any per-sample array is allocated. (A `stsz` with one
/// size for every sample claims its count in 8 bytes, so the tables' own size bounds
/// nothing.)
fn check_sample_budget(traks: &[Trak], limits: &MediaLimits) -> Result<(), MediaError> {
    let mut total = 0u64;
    for count in traks
        .iter()
        .filter(|t| track_kind(t).is_some())
        .map(sample_count)
    {
        if count > limits.max_samples_per_track {
            return Err(MediaError::TooLarge {
                limit: "max_samples_per_track",
                value: count,
                max: limits.max_samples_per_track,
            });
        }
        total = total.saturating_add(count);
    }
    if total > limits.max_samples_per_file {
        return Err(MediaError::TooLarge {
            limit: "max_samples_per_file",
            value: total,
            max: limits.max_samples_per_file,
        });
    }
    Ok(())
}

/// Expand one track's sample tables into flat arrays.
fn sample_table(
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
        offsets,
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

/// Reduce the edit list to a leading empty edit and a start media time.
///
/// # Errors
/// [`MediaError::InvalidTable`] for empty edits longer than 2^64 ticks of the track, or a
/// start past the track's last sample (`end_ticks`): times no real file has, which would
/// otherwise saturate every output time of the title.
fn edit_shift(
    trak: &Trak,
    movie_timescale: u32,
    timescale: u32,
    end_ticks: u64,
) -> Result<EditShift, MediaError> {
    let Some(elst) = trak.edts.as_ref().and_then(|e| e.elst.as_ref()) else {
        return Ok(EditShift::default());
    };
    let track_id = trak.tkhd.track_id;
    let mut shift = EditShift::default();
    for entry in &elst.entries {
        match entry.media_time {
            None => {
                let ticks = u128::from(entry.segment_duration) * u128::from(timescale)
                    / u128::from(movie_timescale);
                shift.empty_ticks = u64::try_from(ticks)
                    .ok()
                    .and_then(|ticks| shift.empty_ticks.checked_add(ticks))
                    .ok_or_else(|| invalid("elst", track_id, "empty edits overflow 64 bits"))?;
            }
            Some(media_time) => {
                if media_time > end_ticks {
                    return Err(invalid(
                        "elst",
                        track_id,
                        format!("starts at {media_time}, past the track's end at {end_ticks}"),
                    ));
                }
                shift.media_time_ticks = media_time;
                break;
            }
        }
    }
    Ok(shift)
}
