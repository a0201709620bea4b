//! Fragmented MP4 input (ISO/IEC 14496-12 8.8): a `moov` with `mvex`, then `moof`/`mdat`
//! pairs, as written by `ffmpeg -movflags frag_keyframe`, OBS, cameras and live-to-VOD
//! recorders.
//!
//! `scan` finds the `moof` boxes with few ranged reads (using `sidx` or `mfra` when the file
//! has one); this module turns their track fragments into the very per-track sample arrays
//! a progressive file gives (`SampleTable`), so planning and packaging need not know how
//! the file was written. The samples of a track are those of its `moov` tables (usually
//! none), then those of each of its track fragments in file order.

mod scan;

use std::collections::BTreeMap;
use std::ops::Range;

use bytes::Bytes;
use mp4_atom::{Decode, Tfdt, Tfhd, Trex, Trun};

use super::locate::parse_header;
use super::{MediaError, MediaLimits, SampleTable};

pub(super) use scan::find_fragments;

/// How the fragments of a file were found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FragmentDiscovery {
    /// From the subsegment references of a `sidx` box.
    Sidx,
    /// From the `tfra` entries of the `mfra` box at the end of the file.
    Mfra,
    /// By walking the top-level box headers, reading ahead.
    #[default]
    Walk,
}

impl FragmentDiscovery {
    /// `"sidx"`, `"mfra"` or `"walk"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            FragmentDiscovery::Sidx => "sidx",
            FragmentDiscovery::Mfra => "mfra",
            FragmentDiscovery::Walk => "walk",
        }
    }
}

/// What finding the fragments of a file took, for `vodpack inspect` and the tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FragmentReport {
    /// How the `moof` boxes were found (an index, or the walk alone).
    pub discovery: FragmentDiscovery,
    /// Number of `moof` boxes.
    pub fragments: u32,
    /// Source reads issued after `moov` was read; a batch of ranges counts once (one
    /// round trip; the source may split it into several requests).
    pub reads: u32,
    /// Ranges asked for in those reads, before the source coalesces close ones.
    pub ranges: u32,
    /// Bytes asked for in those reads.
    pub bytes: u64,
}

/// The `moof` boxes of a file, as read.
#[derive(Debug, Clone, Default)]
pub(super) struct FoundFragments {
    /// Each `moof` box, header included, in file order.
    pub moofs: Vec<FoundMoof>,
    /// What finding them took.
    pub report: FragmentReport,
}

/// One `moof` box and where it lies in the object.
#[derive(Debug, Clone)]
pub(super) struct FoundMoof {
    /// Offset of the box in the object.
    pub offset: u64,
    /// The whole box.
    pub bytes: Bytes,
}

/// A child box inside a parent held in memory: its type, the whole box and its body.
struct Child {
    kind: [u8; 4],
    whole: Range<usize>,
    body: Range<usize>,
}

/// The child boxes of `buf[body]`, where `buf` starts at `file_offset` in the object.
fn children(buf: &[u8], body: Range<usize>, file_offset: u64) -> Result<Vec<Child>, MediaError> {
    let mut out = Vec::new();
    let mut pos = body.start;
    let end = body.end.min(buf.len());
    while end.saturating_sub(pos) >= 8 {
        let slice = buf.get(pos..end).unwrap_or_default();
        let at = file_offset + pos as u64;
        let header = parse_header(slice, at, at + slice.len() as u64)?.ok_or_else(|| {
            MediaError::Truncated {
                reason: format!("box header at offset {at} is cut off"),
            }
        })?;
        // parse_header checked that the box fits in `slice`.
        let box_end = pos + header.box_len as usize;
        out.push(Child {
            kind: header.kind,
            whole: pos..box_end,
            body: pos + header.header_len as usize..box_end,
        });
        pos = box_end;
    }
    Ok(out)
}

/// Whether a `moov` box (header included) declares movie fragments (has an `mvex`, 8.8.1).
///
/// # Errors
/// As the box walk: a child box header that is cut off or runs past `moov`.
pub(super) fn declares_fragments(moov: &[u8]) -> Result<bool, MediaError> {
    let Some(top) = parse_header(moov, 0, moov.len() as u64)? else {
        return Ok(false);
    };
    let body = top.header_len as usize..top.box_len as usize;
    Ok(children(moov, body, 0)?.iter().any(|c| &c.kind == b"mvex"))
}

/// The `trex` defaults of each track (8.8.3), by track id.
fn track_defaults(moov: &[u8]) -> Result<BTreeMap<u32, Trex>, MediaError> {
    let mut out = BTreeMap::new();
    let Some(top) = parse_header(moov, 0, moov.len() as u64)? else {
        return Ok(out);
    };
    let body = top.header_len as usize..top.box_len as usize;
    for mvex in children(moov, body, 0)?
        .iter()
        .filter(|c| &c.kind == b"mvex")
    {
        for trex in children(moov, mvex.body.clone(), 0)?
            .iter()
            .filter(|c| &c.kind == b"trex")
        {
            let bytes = moov.get(trex.whole.clone()).unwrap_or_default();
            let trex = Trex::decode(&mut &bytes[..]).map_err(|e| MediaError::Malformed {
                reason: format!("trex: {}", e.to_string().escape_debug()),
            })?;
            out.insert(trex.track_id, trex);
        }
    }
    Ok(out)
}

fn invalid(fourcc: &str, track_id: u32, reason: impl Into<String>) -> MediaError {
    MediaError::InvalidTable {
        fourcc: fourcc.to_owned(),
        track_id,
        reason: reason.into(),
    }
}

/// A track's samples gathered from its track fragments, before they join its `moov` ones.
#[derive(Debug, Default)]
struct TrackFragments {
    /// The samples, with decode times on the track's media timeline (from the first
    /// `tfdt`, or following the `moov` samples). `sync` stays `None`.
    table: SampleTable,
    /// Whether any run gave composition offsets (`cts_offsets` is then filled).
    has_cts: bool,
    /// Indexes (in `table`) of the samples not flagged as non-sync.
    sync: Vec<u32>,
    /// Samples in the track's `moov` tables, for the per-track limit.
    moov_samples: u64,
    /// Decode time just past the track's `moov` samples (0 without any).
    moov_end: u64,
}

/// The samples every track's fragments hold, by track id.
#[derive(Debug, Default)]
pub(super) struct FragmentSamples {
    tracks: BTreeMap<u32, TrackFragments>,
}

/// Flags bit `sample_is_non_sync_sample` of a sample flags word (8.8.3.1).
const NON_SYNC: u32 = 0x0001_0000;
/// `trun` flags (8.8.8.1): first-sample-flags-present and sample-flags-present.
const FIRST_SAMPLE_FLAGS: u32 = 0x0000_0004;
const SAMPLE_FLAGS: u32 = 0x0000_0400;

/// Decode the track fragments of `moofs` for the tracks `moov` declares.
///
/// `declared` gives each track id of the `moov` with the samples its own tables hold
/// (counted against the limits together with the fragments' ones) and the decode time
/// they end at (where a first fragment without `tfdt` starts).
///
/// # Errors
/// [`MediaError::InvalidTable`] for a track fragment that contradicts itself or the
/// `moov` (an undeclared track, a decode time going backwards), [`MediaError::Truncated`]
/// for sample data past the end of the object, [`MediaError::TooLarge`] past a limit.
pub(super) fn decode(
    moov: &[u8],
    moofs: &[FoundMoof],
    declared: &[(u32, u64, u64)],
    object_len: u64,
    limits: &MediaLimits,
) -> Result<FragmentSamples, MediaError> {
    let defaults = track_defaults(moov)?;
    let mut samples = FragmentSamples::default();
    let mut file_total = 0u64;
    for &(track_id, moov_samples, moov_end) in declared {
        file_total = file_total.saturating_add(moov_samples);
        samples.tracks.insert(
            track_id,
            TrackFragments {
                moov_samples,
                moov_end,
                ..TrackFragments::default()
            },
        );
    }
    let mut budget = Budget {
        file_total,
        limits,
        object_len,
    };
    for moof in moofs {
        let bytes = &moof.bytes[..];
        let header_len = parse_header(bytes, moof.offset, moof.offset + bytes.len() as u64)?
            .map_or(8, |h| h.header_len as usize);
        // 8.8.7.1: without an explicit base, the first track fragment's data starts at the
        // moof, each later one's where the previous one's data ended.
        let mut data_end = moof.offset;
        for traf in children(bytes, header_len..bytes.len(), moof.offset)?
            .iter()
            .filter(|c| &c.kind == b"traf")
        {
            data_end = decode_traf(
                bytes,
                traf,
                moof.offset,
                data_end,
                &defaults,
                &mut samples,
                &mut budget,
            )?;
        }
    }
    Ok(samples)
}

/// What the sample limits still allow, and the object's length.
struct Budget<'a> {
    file_total: u64,
    limits: &'a MediaLimits,
    object_len: u64,
}

impl Budget<'_> {
    /// Count `more` samples for a track that holds `track_total` so far.
    fn take(&mut self, track_total: u64, more: u64) -> Result<(), MediaError> {
        let track = track_total.saturating_add(more);
        if track > self.limits.max_samples_per_track {
            return Err(MediaError::TooLarge {
                limit: "max_samples_per_track",
                value: track,
                max: self.limits.max_samples_per_track,
            });
        }
        self.file_total = self.file_total.saturating_add(more);
        if self.file_total > self.limits.max_samples_per_file {
            return Err(MediaError::TooLarge {
                limit: "max_samples_per_file",
                value: self.file_total,
                max: self.limits.max_samples_per_file,
            });
        }
        Ok(())
    }
}

fn decode_box<T: Decode>(
    bytes: &[u8],
    child: &Child,
    fourcc: &str,
    track_id: u32,
) -> Result<T, MediaError> {
    let mut whole = bytes.get(child.whole.clone()).unwrap_or_default();
    T::decode(&mut whole)
        .map_err(|e| invalid(fourcc, track_id, e.to_string().escape_debug().to_string()))
}

/// Decode one track fragment of the `moof` at `moof_offset` into its track's samples.
/// `previous_end` is where the previous track fragment's data ended. Returns where this
/// one's data ends.
fn decode_traf(
    bytes: &[u8],
    traf: &Child,
    moof_offset: u64,
    previous_end: u64,
    defaults: &BTreeMap<u32, Trex>,
    samples: &mut FragmentSamples,
    budget: &mut Budget<'_>,
) -> Result<u64, MediaError> {
    let parts = children(bytes, traf.body.clone(), moof_offset)?;
    // `bytes` is the whole moof.
    let moof_end = moof_offset + bytes.len() as u64;
    let Some(tfhd) = parts.iter().find(|c| &c.kind == b"tfhd") else {
        return Err(invalid("traf", 0, "no tfhd"));
    };
    let tfhd: Tfhd = decode_box(bytes, tfhd, "tfhd", 0)?;
    let track_id = tfhd.track_id;
    let Some(track) = samples.tracks.get_mut(&track_id) else {
        return Err(invalid(
            "tfhd",
            track_id,
            "a track fragment for a track the moov does not declare",
        ));
    };
    let trex = defaults.get(&track_id).cloned().unwrap_or_default();
    let tfdt = match parts.iter().find(|c| &c.kind == b"tfdt") {
        Some(child) => {
            Some(decode_box::<Tfdt>(bytes, child, "tfdt", track_id)?.base_media_decode_time)
        }
        None => None,
    };

    // Decode time of this fragment's first sample (8.8.12): its tfdt, else where the
    // track's previous fragment (or its moov samples) ended.
    let first = track.table.is_empty();
    let end = match first {
        true => track.moov_end,
        false => track.table.end_dts(),
    };
    let mut dts = match tfdt {
        Some(t) if t < end => {
            return Err(invalid(
                "tfdt",
                track_id,
                format!("goes backwards: {t} after the previous samples ended at {end}"),
            ));
        }
        // A gap after the moov samples is closed when they are joined (append_to).
        Some(t) if first => t,
        Some(t) => {
            // A gap: the previous sample lasts until this fragment starts, so decode times
            // and durations keep agreeing.
            stretch_last(&mut track.table, t - end, track_id)?;
            t
        }
        None => end,
    };

    let base = match tfhd.base_data_offset {
        Some(base) => base,
        None if tfhd.default_base_is_moof => moof_offset,
        None => previous_end,
    };
    let mut data = base;
    for (run_index, child) in parts.iter().filter(|c| &c.kind == b"trun").enumerate() {
        let flags = bytes
            .get(child.body.start..child.body.start + 4)
            .map_or(0, |w| u32::from_be_bytes([0, w[1], w[2], w[3]]));
        if flags & FIRST_SAMPLE_FLAGS != 0 && flags & SAMPLE_FLAGS != 0 {
            return Err(invalid(
                "trun",
                track_id,
                "first-sample-flags and per-sample flags together (ISO/IEC 14496-12 8.8.8)",
            ));
        }
        let trun: Trun = decode_box(bytes, child, "trun", track_id)?;
        let count = trun.samples.len() as u64;
        budget.take(track.moov_samples + track.table.len() as u64, count)?;
        // 8.8.8.1: data_offset counts from the base; without one, a run follows the
        // previous run of this track fragment (the first one starts at the base).
        data = match trun.data_offset {
            Some(offset) => base.checked_add_signed(i64::from(offset)).ok_or_else(|| {
                invalid(
                    "trun",
                    track_id,
                    "data offset points before the start of the file",
                )
            })?,
            None if run_index == 0 => base,
            None => data,
        };
        for entry in trun.samples.iter() {
            let size = entry
                .size
                .or(tfhd.default_sample_size)
                .unwrap_or(trex.default_sample_size);
            let duration = entry
                .duration
                .or(tfhd.default_sample_duration)
                .unwrap_or(trex.default_sample_duration);
            let sample_flags = entry
                .flags
                .or(tfhd.default_sample_flags)
                .unwrap_or(trex.default_sample_flags);
            if size > budget.limits.max_sample_bytes {
                return Err(MediaError::TooLarge {
                    limit: "max_sample_bytes",
                    value: u64::from(size),
                    max: u64::from(budget.limits.max_sample_bytes),
                });
            }
            let sample_end = data
                .checked_add(u64::from(size))
                .filter(|e| *e <= budget.object_len)
                .ok_or_else(|| MediaError::Truncated {
                    reason: format!(
                        "track {track_id} sample {} in the fragment at offset {moof_offset} runs past the end of the file ({} bytes)",
                        track.moov_samples + track.table.len() as u64 + 1,
                        budget.object_len
                    ),
                })?;
            // A sample inside the very moof that describes it is a wrong base or data
            // offset (ffmpeg's `global_sidx` without `default_base_moof` writes absolute
            // bases, then inserts the sidx in front of them): refuse rather than serve
            // header bytes as media.
            if size > 0 && data < moof_end && sample_end > moof_offset {
                return Err(invalid(
                    "trun",
                    track_id,
                    format!(
                        "sample {} data at offset {data} lies inside its own moof (offset {moof_offset}, {} bytes): a wrong base_data_offset or data_offset",
                        track.moov_samples + track.table.len() as u64 + 1,
                        moof_end - moof_offset
                    ),
                ));
            }
            let index = track.table.len();
            if sample_flags & NON_SYNC == 0 {
                track.sync.push(index as u32);
            }
            match entry.cts {
                Some(cts) => {
                    let cts = i32::try_from(cts).map_err(|_| {
                        invalid("trun", track_id, "composition offset out of range")
                    })?;
                    if !track.has_cts {
                        track.has_cts = true;
                        track.table.cts_offsets.resize(index, 0);
                    }
                    track.table.cts_offsets.push(cts);
                }
                None if track.has_cts => track.table.cts_offsets.push(0),
                None => {}
            }
            track.table.sizes.push(size);
            track.table.offsets_mut().push(data);
            track.table.dts.push(dts);
            track.table.durations.push(duration);
            dts = dts.saturating_add(u64::from(duration));
            data = sample_end;
        }
    }
    Ok(data)
}

/// Lengthen the last sample of `table` by `gap` ticks.
fn stretch_last(table: &mut SampleTable, gap: u64, track_id: u32) -> Result<(), MediaError> {
    if let Some(last) = table.durations.last_mut() {
        *last = u32::try_from(gap)
            .ok()
            .and_then(|gap| last.checked_add(gap))
            .ok_or_else(|| invalid("tfdt", track_id, format!("jumps ahead by {gap} ticks")))?;
    }
    Ok(())
}

impl FragmentSamples {
    /// Append the fragments' samples of track `track_id` to its `moov` samples.
    ///
    /// # Errors
    /// [`MediaError::InvalidTable`] when the first fragment's `tfdt` lies before the end
    /// of the `moov` samples.
    pub(super) fn append_to(
        &mut self,
        track_id: u32,
        samples: &mut SampleTable,
    ) -> Result<(), MediaError> {
        let Some(fragments) = self.tracks.remove(&track_id) else {
            return Ok(());
        };
        if fragments.table.is_empty() {
            return Ok(());
        }
        let moov_len = samples.len();
        let moov_end = samples.end_dts();
        let first_dts = fragments.table.dts.first().copied().unwrap_or(moov_end);
        if moov_len > 0 {
            if first_dts < moov_end {
                return Err(invalid(
                    "tfdt",
                    track_id,
                    format!(
                        "goes backwards: {first_dts} before the moov samples end at {moov_end}"
                    ),
                ));
            }
            // A gap: the last moov sample lasts until the first fragment starts.
            stretch_last(samples, first_dts - moov_end, track_id)?;
        }
        let all_sync = fragments.sync.len() == fragments.table.len();
        samples.sync = match (samples.sync.take(), all_sync) {
            (None, true) => None,
            (moov_sync, _) => {
                let mut list = moov_sync.unwrap_or_else(|| (0..moov_len as u32).collect());
                list.extend(fragments.sync.iter().map(|i| i + moov_len as u32));
                Some(list)
            }
        };
        if fragments.has_cts || !samples.cts_offsets.is_empty() {
            samples.cts_offsets.resize(moov_len, 0);
            if fragments.has_cts {
                samples.cts_offsets.extend(&fragments.table.cts_offsets);
            } else {
                samples
                    .cts_offsets
                    .resize(moov_len + fragments.table.len(), 0);
            }
        }
        let mut table = fragments.table;
        // The moov samples' offsets, worked out now if they were left for later: they are
        // the samples the moov's tables place.
        samples.offsets_mut();
        if moov_len == 0 {
            samples.sizes = table.sizes;
            samples.offsets = table.offsets;
            samples.dts = table.dts;
            samples.durations = table.durations;
        } else {
            samples.sizes.append(&mut table.sizes);
            samples.offsets_mut().append(table.offsets_mut());
            samples.dts.append(&mut table.dts);
            samples.durations.append(&mut table.durations);
        }
        // The arrays grew run by run: give back the spare capacity the cache would weigh.
        samples.sizes.shrink_to_fit();
        samples.offsets_mut().shrink_to_fit();
        samples.dts.shrink_to_fit();
        samples.durations.shrink_to_fit();
        samples.cts_offsets.shrink_to_fit();
        if let Some(sync) = samples.sync.as_mut() {
            sync.shrink_to_fit();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
