//! `moov` bytes to `MediaIndex`: mp4-atom decodes the boxes, this module interprets them.
//!
//! mp4-atom gives the sample tables as decoded ("without validation or interpretation");
//! here they are expanded into flat per-sample arrays, checking every count against the
//! sample count, every offset against the object's length, and every size against
//! [`MediaLimits`] before allocating. The raw `stsd` box of each track is cut out of the
//! `moov` bytes with a small box walker of our own, because init segments carry it verbatim
//! (mp4-atom re-encodes sample entries from decoded fields and refuses unknown ones).

use bytes::Bytes;
use mp4_atom::{Decode, Moov, StszSamples, Trak};

use super::{
    describe_codec, EditShift, MediaError, MediaIndex, MediaLimits, SampleTable, TrackIndex,
    TrackKind,
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
    let moov = Moov::decode(&mut &moov_bytes[..]).map_err(|e| MediaError::Malformed {
        reason: format!("moov: {e}"),
    })?;
    let movie_timescale = moov.mvhd.timescale;
    if movie_timescale == 0 {
        return Err(MediaError::InvalidTable {
            fourcc: "mvhd".into(),
            track_id: 0,
            reason: "timescale is 0".into(),
        });
    }
    if moov.trak.len() > limits.max_tracks {
        return Err(MediaError::TooLarge {
            limit: "max_tracks",
            value: moov.trak.len() as u64,
            max: limits.max_tracks as u64,
        });
    }
    let descriptions = raw_sample_descriptions(moov_bytes);
    let mut tracks = Vec::new();
    let mut first_unsupported = None;
    for (i, trak) in moov.trak.iter().enumerate() {
        let kind = match &<[u8; 4]>::from(trak.mdia.hdlr.handler) {
            b"vide" => TrackKind::Video,
            b"soun" => TrackKind::Audio,
            _ => continue,
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
        let samples = sample_table(trak, identity.size, limits)?;
        let edit = edit_shift(trak, movie_timescale, timescale);
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

/// Expand one track's sample tables into flat arrays.
fn sample_table(
    trak: &Trak,
    object_len: u64,
    limits: &MediaLimits,
) -> Result<SampleTable, MediaError> {
    let track_id = trak.tkhd.track_id;
    let stbl = &trak.mdia.minf.stbl;

    // Sizes first: they fix the sample count every other table must agree with.
    let count = match &stbl.stsz.samples {
        StszSamples::Identical { count, .. } => u64::from(*count),
        StszSamples::Different { sizes } => sizes.len() as u64,
    };
    if count > limits.max_samples_per_track {
        return Err(MediaError::TooLarge {
            limit: "max_samples_per_track",
            value: count,
            max: limits.max_samples_per_track,
        });
    }
    // Bounded by max_samples_per_track, which is far below usize::MAX.
    let n = count as usize;
    let sizes: Vec<u32> = match &stbl.stsz.samples {
        StszSamples::Identical { size, .. } => vec![*size; n],
        StszSamples::Different { sizes } => sizes.clone(),
    };
    if let Some(big) = sizes.iter().find(|s| **s > limits.max_sample_bytes) {
        return Err(MediaError::TooLarge {
            limit: "max_sample_bytes",
            value: u64::from(*big),
            max: u64::from(limits.max_sample_bytes),
        });
    }

    // Decode times (stts, ISO/IEC 14496-12 8.6.1.2).
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
    Ok(offsets)
}

/// Reduce the edit list to a leading empty edit and a start media time.
fn edit_shift(trak: &Trak, movie_timescale: u32, timescale: u32) -> EditShift {
    let Some(elst) = trak.edts.as_ref().and_then(|e| e.elst.as_ref()) else {
        return EditShift::default();
    };
    let mut shift = EditShift::default();
    for entry in &elst.entries {
        match entry.media_time {
            None => {
                let ticks = u128::from(entry.segment_duration) * u128::from(timescale)
                    / u128::from(movie_timescale);
                shift.empty_ticks = shift
                    .empty_ticks
                    .saturating_add(u64::try_from(ticks).unwrap_or(u64::MAX));
            }
            Some(media_time) => {
                shift.media_time_ticks = media_time;
                break;
            }
        }
    }
    shift
}

/// The raw `stsd` box (header included) of each `trak` in `moov`, in file order.
fn raw_sample_descriptions(moov: &Bytes) -> Vec<Option<Bytes>> {
    let Some((_, body)) = boxes(moov, 0..moov.len()).next() else {
        return Vec::new();
    };
    boxes(moov, body)
        .filter(|(kind, _)| kind == b"trak")
        .map(|(_, trak)| {
            let mut range = trak;
            for path in [b"mdia", b"minf", b"stbl"] {
                range = boxes(moov, range).find(|(kind, _)| kind == path)?.1;
            }
            let body = boxes(moov, range).find(|(kind, _)| kind == b"stsd")?.1;
            // Include the 8-byte header: the body starts right after it.
            Some(moov.slice(body.start.checked_sub(8)?..body.end))
        })
        .collect()
}

/// The children of the box body `range` of `buf`: (kind, body range). Stops at the first
/// malformed header (mp4-atom has already validated the structure).
fn boxes(
    buf: &Bytes,
    range: std::ops::Range<usize>,
) -> impl Iterator<Item = ([u8; 4], std::ops::Range<usize>)> + '_ {
    let mut pos = range.start;
    let end = range.end.min(buf.len());
    std::iter::from_fn(move || {
        let head = buf.get(pos..pos.checked_add(8)?.min(end))?;
        let size = u32::from_be_bytes(head.get(..4)?.try_into().ok()?) as usize;
        let kind: [u8; 4] = head.get(4..8)?.try_into().ok()?;
        // Only plain 32-bit sizes appear inside moov in practice; a 64-bit or to-the-end
        // size stops the walk (the track is then reported as lacking its description).
        if size < 8 || pos.checked_add(size)? > end {
            return None;
        }
        let body = pos + 8..pos + size;
        pos += size;
        Some((kind, body))
    })
}
