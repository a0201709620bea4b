//! Fragmented MP4 input (ISO/IEC 14496-12 8.8): a `moov` with `mvex`, then `moof`/`mdat`
//! pairs, as written by `ffmpeg -movflags frag_keyframe`, OBS, cameras and live-to-VOD
//! recorders.
//!
//! `scan` finds the `moof` boxes with few ranged reads (using `sidx` or `mfra` when the file
//! has one); this module turns their track fragments into the very per-track sample arrays
//! a progressive file gives (`SampleTable`), so planning and packaging need not know how
//! the file was written. The samples of a track are those of its `moov` tables (usually
//! none), then those of each of its track fragments in file order.
//!
//! Every number comes from the file and is checked before use: sample counts against
//! `MediaLimits` before the arrays grow, every sample's byte range against the object's
//! length, decode times for going backwards.

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
            track.table.offsets.push(data);
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
        if moov_len == 0 {
            samples.sizes = table.sizes;
            samples.offsets = table.offsets;
            samples.dts = table.dts;
            samples.durations = table.durations;
        } else {
            samples.sizes.append(&mut table.sizes);
            samples.offsets.append(&mut table.offsets);
            samples.dts.append(&mut table.dts);
            samples.durations.append(&mut table.durations);
        }
        // The arrays grew run by run: give back the spare capacity the cache would weigh.
        samples.sizes.shrink_to_fit();
        samples.offsets.shrink_to_fit();
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
mod tests {
    use super::*;
    use crate::media::{index_from_bytes, MediaIndex};

    fn fixture(name: &str) -> Bytes {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name);
        Bytes::from(std::fs::read(path).unwrap())
    }

    fn index(file: &Bytes) -> MediaIndex {
        index_from_bytes(file, &MediaLimits::default()).unwrap()
    }

    /// The fragmented remuxes of the main fixture (made with `-c copy`) hold the same
    /// samples: sizes, composition offsets, sync flags and the bytes at every offset are
    /// equal, and so are decode times and durations, but for one thing ffmpeg's fragmenting
    /// muxer changes. The progressive file trims the AAC priming frame and the video's
    /// B-frame delay with edit lists; the fragmented ones have no edit list, so the video's
    /// first frame is presented at 1024/15360 s, and to keep audio with it the muxer makes
    /// the priming frame last 3200 ticks (the same 1/15 s at 48 kHz) instead of 1024. The
    /// test checks exactly that (ffprobe reads the fragmented files the same way).
    #[test]
    fn fragmented_files_index_like_the_progressive_file() {
        let progressive_file = fixture("h264-aac-3s.mp4");
        let progressive = index(&progressive_file);
        for name in [
            "h264-aac-3s-frag-walk.mp4",
            "h264-aac-3s-frag-sidx.mp4",
            "h264-aac-3s-frag-mfra.mp4",
            "h264-aac-3s-frag-moov-samples.mp4",
        ] {
            let file = fixture(name);
            let fragmented = index(&file);
            assert_eq!(fragmented.tracks.len(), progressive.tracks.len(), "{name}");
            for (f, p) in fragmented.tracks.iter().zip(&progressive.tracks) {
                let (fs, ps) = (&f.samples, &p.samples);
                let what = format!("{name} track {}", f.track_id);
                assert_eq!(f.track_id, p.track_id, "{what}");
                assert_eq!(f.codec, p.codec, "{what}");
                assert_eq!(fs.sizes, ps.sizes, "{what}");
                assert_eq!(fs.cts_offsets, ps.cts_offsets, "{what}");
                let sync = |t: &SampleTable| (0..t.len()).map(|i| t.is_sync(i)).collect::<Vec<_>>();
                assert_eq!(sync(fs), sync(ps), "{what}");
                for i in 0..fs.len() {
                    let at = |file: &Bytes, t: &SampleTable| {
                        let start = t.offsets[i] as usize;
                        file.slice(start..start + t.sizes[i] as usize)
                    };
                    assert_eq!(
                        at(&file, fs),
                        at(&progressive_file, ps),
                        "{what} sample {i}"
                    );
                }
                let priming_stretch = match f.kind {
                    crate::media::TrackKind::Video => 0,
                    crate::media::TrackKind::Audio => 3200 - 1024,
                };
                let mut durations = ps.durations.clone();
                durations[0] += priming_stretch;
                assert_eq!(fs.durations, durations, "{what}");
                let dts: Vec<u64> = ps
                    .dts
                    .iter()
                    .enumerate()
                    .map(|(i, d)| d + if i > 0 { u64::from(priming_stretch) } else { 0 })
                    .collect();
                assert_eq!(fs.dts, dts, "{what}");
            }
        }
    }

    /// With a probe too small to hold the fragments, each fixture's fragments are found the
    /// way it allows, in a number of reads that does not depend on the fragment count when
    /// the file has an index.
    #[test]
    fn fragments_are_found_by_sidx_mfra_or_walk_in_few_reads() {
        let limits = MediaLimits {
            probe_bytes: 4096,
            ..MediaLimits::default()
        };
        for (name, discovery, fragments, reads) in [
            // the end of the file (64 KiB: no mfro) holds the last fragments; before
            // it, one read per fragment not in the 4 KiB probe (a local file or memory
            // never reads ahead into payloads).
            ("h264-aac-3s-frag-walk.mp4", FragmentDiscovery::Walk, 7, 2),
            // the sidx in the probe gives every fragment: one batch.
            ("h264-aac-3s-frag-sidx.mp4", FragmentDiscovery::Sidx, 3, 1),
            // the end of the file (64 KiB) holds the mfra and, in a file this small, the
            // fragments it points at.
            ("h264-aac-3s-frag-mfra.mp4", FragmentDiscovery::Mfra, 3, 1),
            (
                "h264-aac-3s-frag-moov-samples.mp4",
                FragmentDiscovery::Mfra,
                2,
                1,
            ),
        ] {
            let (_, report) =
                crate::media::load::report_from_bytes(&fixture(name), &limits).unwrap();
            let found = report.fragments.expect("fragmented");
            assert_eq!(found.discovery, discovery, "{name}: {found:?}");
            assert_eq!(found.fragments, fragments, "{name}: {found:?}");
            assert_eq!(found.reads, reads, "{name}: {found:?}");
        }
        let (_, report) =
            crate::media::load::report_from_bytes(&fixture("h264-aac-3s.mp4"), &limits).unwrap();
        assert_eq!(report.fragments, None);
    }

    fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut out = ((body.len() + 8) as u32).to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend_from_slice(body);
        out
    }

    /// A full box: version, 24-bit flags, then the fields (each a big-endian u32 or u64).
    fn full(kind: &[u8; 4], version: u8, flags: u32, fields: &[u64], wide: &[bool]) -> Vec<u8> {
        let mut body = ((u32::from(version) << 24) | flags).to_be_bytes().to_vec();
        for (value, wide) in fields
            .iter()
            .zip(wide.iter().chain(std::iter::repeat(&false)))
        {
            if *wide {
                body.extend_from_slice(&value.to_be_bytes());
            } else {
                body.extend_from_slice(&(*value as u32).to_be_bytes());
            }
        }
        boxed(kind, &body)
    }

    fn moov_with_trex() -> Vec<u8> {
        let trex1 = full(b"trex", 0, 0, &[1, 1, 100, 10, 0x0001_0000], &[]);
        let trex2 = full(b"trex", 0, 0, &[2, 1, 1024, 5, 0], &[]);
        boxed(b"moov", &boxed(b"mvex", &[trex1, trex2].concat()))
    }

    fn moof(offset: u64, trafs: &[Vec<u8>]) -> FoundMoof {
        let mfhd = full(b"mfhd", 0, 0, &[1], &[]);
        let trafs: Vec<u8> = trafs.iter().flatten().copied().collect();
        FoundMoof {
            offset,
            bytes: Bytes::from(boxed(b"moof", &[mfhd, trafs].concat())),
        }
    }

    fn samples_of(mut decoded: FragmentSamples, track_id: u32) -> SampleTable {
        let mut table = SampleTable::default();
        decoded.append_to(track_id, &mut table).unwrap();
        table
    }

    /// ISO/IEC 14496-12 8.8: defaults from trex, overridden by tfhd, overridden by trun;
    /// the first traf's data from the moof, a later traf's where the previous one's ended,
    /// a run without data_offset after the previous run, an explicit base_data_offset;
    /// decode times from tfdt, else following on; signed (v1) composition offsets; sync
    /// from first-sample-flags and the non-sync bit.
    #[test]
    fn track_fragments_follow_the_defaults_and_offset_rules() {
        let moov = moov_with_trex();
        // moof 1 at 1000: track 1 (no base: the moof), then track 2 (no base: after it).
        let run_a = full(b"trun", 0, 0x005, &[3, 200, 0], &[]);
        let run_b = full(
            b"trun",
            1,
            0xb00,
            &[2, 50, 7, (-20i32) as u32 as u64, 60, 8, 30],
            &[],
        );
        let traf1 = boxed(
            b"traf",
            &[full(b"tfhd", 0, 0, &[1], &[]), run_a, run_b].concat(),
        );
        let tfdt2 = full(b"tfdt", 1, 0, &[5000], &[true]);
        let run_c = full(b"trun", 0, 0, &[2], &[]);
        let traf2 = boxed(
            b"traf",
            &[full(b"tfhd", 0, 0, &[2], &[]), tfdt2, run_c].concat(),
        );
        // moof 2 at 3000: track 1 with an explicit base and a tfhd default duration.
        let tfhd = full(b"tfhd", 0, 0x09, &[1, 2000, 90], &[false, true]);
        let run_d = full(b"trun", 0, 0x001, &[1, 0], &[]);
        let traf3 = boxed(b"traf", &[tfhd, run_d].concat());
        let moofs = [moof(1000, &[traf1, traf2]), moof(3000, &[traf3])];
        let limits = MediaLimits::default();
        let decoded = decode(&moov, &moofs, &[(1, 0, 0), (2, 0, 0)], 10_000, &limits).unwrap();
        let video = samples_of(decoded, 1);
        assert_eq!(video.sizes, [10, 10, 10, 7, 8, 10]);
        assert_eq!(video.offsets, [1200, 1210, 1220, 1230, 1237, 2000]);
        assert_eq!(video.durations, [100, 100, 100, 50, 60, 90]);
        assert_eq!(video.dts, [0, 100, 200, 300, 350, 410]);
        assert_eq!(video.cts_offsets, [0, 0, 0, -20, 30, 0]);
        assert_eq!(video.sync, Some(vec![0]));
        let decoded = decode(&moov, &moofs, &[(1, 0, 0), (2, 0, 0)], 10_000, &limits).unwrap();
        let audio = samples_of(decoded, 2);
        assert_eq!(audio.sizes, [5, 5]);
        assert_eq!(audio.offsets, [1245, 1250]);
        assert_eq!(audio.dts, [5000, 6024]);
        assert_eq!(audio.sync, None);
        assert!(audio.cts_offsets.is_empty());
    }

    /// Every `tfdt` of a recording moved 10 hours on (a live-to-VOD file keeps the live
    /// timeline): the index starts at 0 again, with the same decode times as the file
    /// that starts at 0, rather than a title 10 hours long whose content sits at its end.
    #[test]
    fn a_recording_that_starts_late_indexes_from_zero() {
        let file = fixture("h264-aac-3s-frag-walk.mp4");
        let mut late = file.to_vec();
        let (mut at, mut moved) = (0, 0);
        while let Some(pos) = late[at..].windows(4).position(|w| w == b"tfdt") {
            let tfdt = at + pos;
            let tfhd = late[..tfdt].windows(4).rposition(|w| w == b"tfhd").unwrap();
            let track = u32::from_be_bytes(late[tfhd + 8..tfhd + 12].try_into().unwrap());
            let timescale = if track == 1 { 15_360 } else { 48_000 };
            assert_eq!(late[tfdt + 4], 1, "the fixture writes 64-bit tfdt");
            let field = tfdt + 8..tfdt + 16;
            let time = u64::from_be_bytes(late[field.clone()].try_into().unwrap());
            late[field].copy_from_slice(&(time + 36_000 * timescale).to_be_bytes());
            at = tfdt + 4;
            moved += 1;
        }
        assert!(moved > 2, "the fixture's fragments carry tfdt");
        let (plain, late) = (index(&file), index(&Bytes::from(late)));
        for (p, l) in plain.tracks.iter().zip(&late.tracks) {
            assert_eq!(l.samples.dts, p.samples.dts, "track {}", l.track_id);
        }
    }

    /// Sample data that lies inside the moof describing it (here an explicit
    /// base_data_offset at the moof itself, as ffmpeg's `global_sidx` leaves after moving
    /// the fragments behind the sidx) is refused, not served as media.
    #[test]
    fn sample_data_inside_its_own_moof_is_refused() {
        let moov = moov_with_trex();
        let limits = MediaLimits::default();
        let traf = |base: u64| {
            let tfhd = full(b"tfhd", 0, 0x01, &[1, base], &[false, true]);
            let run = full(b"trun", 0, 0x001, &[1, 0], &[]);
            boxed(b"traf", &[tfhd, run].concat())
        };
        let inside = [moof(100, &[traf(110)])];
        let err = decode(&moov, &inside, &[(1, 0, 0)], 1000, &limits).unwrap_err();
        assert!(err.to_string().contains("inside its own moof"), "{err}");
        let len = inside[0].bytes.len() as u64;
        let after = [moof(100, &[traf(100 + len)])];
        let decoded = decode(&moov, &after, &[(1, 0, 0)], 1000, &limits).unwrap();
        assert_eq!(samples_of(decoded, 1).offsets, [100 + len]);
    }

    /// A tfdt ahead of where the previous fragment ended lengthens the last sample; one
    /// behind it, or a traf for a track the moov does not declare, is refused.
    #[test]
    fn decode_times_only_move_forward_and_tracks_must_be_declared() {
        let moov = moov_with_trex();
        let limits = MediaLimits::default();
        let traf = |tfdt: u64| {
            let tfdt = full(b"tfdt", 1, 0, &[tfdt], &[true]);
            let run = full(b"trun", 0, 0x001, &[1, 100], &[]);
            boxed(
                b"traf",
                &[full(b"tfhd", 0, 0x20000, &[1], &[]), tfdt, run].concat(),
            )
        };
        let gap = [moof(100, &[traf(0)]), moof(300, &[traf(150)])];
        let decoded = decode(&moov, &gap, &[(1, 0, 0)], 1000, &limits).unwrap();
        let table = samples_of(decoded, 1);
        assert_eq!(table.dts, [0, 150]);
        assert_eq!(table.durations, [150, 100]);
        assert_eq!(table.offsets, [200, 400]);

        let back = [moof(100, &[traf(500)]), moof(300, &[traf(450)])];
        let err = decode(&moov, &back, &[(1, 0, 0)], 1000, &limits).unwrap_err();
        assert!(err.to_string().contains("goes backwards"), "{err}");

        let err = decode(&moov, &gap, &[(2, 0, 0)], 1000, &limits).unwrap_err();
        assert!(err.to_string().contains("does not declare"), "{err}");

        // A moov with 2 samples ending at 200, then a fragment without tfdt: it follows
        // on; a later tfdt of 250 is compared with that timeline (not one from 0).
        let no_tfdt = {
            let run = full(b"trun", 0, 0x001, &[1, 100], &[]);
            boxed(
                b"traf",
                &[full(b"tfhd", 0, 0x20000, &[1], &[]), run].concat(),
            )
        };
        let after_moov = [moof(100, &[no_tfdt]), moof(300, &[traf(350)])];
        let mut decoded = decode(&moov, &after_moov, &[(1, 2, 200)], 1000, &limits).unwrap();
        let mut table = SampleTable {
            sizes: vec![10, 10],
            offsets: vec![0, 10],
            dts: vec![0, 100],
            durations: vec![100, 100],
            ..SampleTable::default()
        };
        decoded.append_to(1, &mut table).unwrap();
        assert_eq!(table.dts, [0, 100, 200, 350]);
        assert_eq!(table.durations, [100, 100, 150, 100]);
        let err = decode(&moov, &after_moov, &[(1, 2, 400)], 1000, &limits).unwrap_err();
        assert!(err.to_string().contains("goes backwards"), "{err}");
    }
}
