//! Media segments: `prepare_media_segment` builds the `moof` + `mdat` header and the list
//! of source byte ranges whose bytes follow it, without reading any sample data; the
//! muxed segments of several tracks (`prepare_muxed_segment`, nginx-vod's
//! `seg-N-v1-a1.m4s`) are the same fragment with a `traf` per track.
//!
//! Sizes come before bytes: the header's length is known from the sample count alone
//! ([`media_segment_header_len`]), so playlists can state bandwidth and the server can send
//! `Content-Length` and answer `Range` before reading the source. Sample bytes are laid out
//! in decode order; adjacent samples that are adjacent in the file become one range, so a
//! segment costs one read per contiguous run and reads no byte it does not send.

use super::writer::BoxWriter;
use std::ops::Range;

use crate::media::{MediaIndex, TrackIndex, TrackKind};
use crate::package::{PackageError, SegmentPlan, TrackPlan};
use crate::source::ByteRange;

/// `trun` flags (ISO/IEC 14496-12 8.8.8.1).
const TRUN_DATA_OFFSET: u32 = 0x000001;
const TRUN_DURATION: u32 = 0x000100;
const TRUN_SIZE: u32 = 0x000200;
const TRUN_FLAGS: u32 = 0x000400;
const TRUN_CTS: u32 = 0x000800;
/// `tfhd` flags (8.8.7.1).
const TFHD_DEFAULT_FLAGS: u32 = 0x000020;
const TFHD_BASE_IS_MOOF: u32 = 0x020000;
/// Sample flags (8.8.3.1): a sync sample depends on no other; others depend and are not sync.
const SYNC_SAMPLE_FLAGS: u32 = 0x0200_0000;
const NON_SYNC_SAMPLE_FLAGS: u32 = 0x0101_0000;

/// A media segment ready to stream: header bytes, then the bytes of `ranges` in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedSegment {
    /// `moof` followed by the `mdat` header.
    pub header: Vec<u8>,
    /// Source ranges whose bytes form the `mdat` payload, in order, adjacent ones merged.
    pub ranges: Vec<ByteRange>,
    /// Sum of the ranges' lengths.
    pub payload_bytes: u64,
}

impl PreparedSegment {
    /// Total bytes of the segment as sent.
    pub fn content_length(&self) -> u64 {
        self.header.len() as u64 + self.payload_bytes
    }
}

/// Per-sample bytes in `trun` for a track of this kind.
fn trun_entry_len(kind: TrackKind, has_cts: bool) -> u64 {
    let flags = if kind == TrackKind::Video { 4 } else { 0 };
    8 + flags + if has_cts { 4 } else { 0 }
}

/// Length of the header [`prepare_media_segment`] writes for `samples` samples and
/// `payload_bytes` of sample data: moof(mfhd, traf(tfhd, tfdt, trun)) + mdat header.
pub fn media_segment_header_len(
    kind: TrackKind,
    has_cts: bool,
    samples: u64,
    payload_bytes: u64,
) -> u64 {
    MOOF_AND_MFHD_LEN + traf_len(kind, has_cts, samples) + mdat_header_len(payload_bytes)
}

/// `moof` header and `mfhd`.
const MOOF_AND_MFHD_LEN: u64 = 8 + 16;

/// Length of one track's `traf(tfhd, tfdt, trun)` of `samples` samples.
fn traf_len(kind: TrackKind, has_cts: bool, samples: u64) -> u64 {
    8 + 20 + 20 + 20 + samples * trun_entry_len(kind, has_cts)
}

fn mdat_header_len(payload_bytes: u64) -> u64 {
    if payload_bytes + 8 > u64::from(u32::MAX) {
        16
    } else {
        8
    }
}

/// Build the header and read list of segment `segment` (0-based) of the track at position
/// `track_pos` in `index.tracks`.
///
/// # Errors
/// [`PackageError::SegmentOutOfRange`] for a segment past the plan,
/// [`PackageError::NoSuchTrack`] for a track position past the index.
pub fn prepare_media_segment(
    index: &MediaIndex,
    plan: &SegmentPlan,
    track_pos: usize,
    segment: usize,
) -> Result<PreparedSegment, PackageError> {
    let (track, track_plan) = track_and_plan(index, plan, track_pos)?;
    let out_of_range = PackageError::SegmentOutOfRange {
        number: (segment as u64).saturating_add(1),
        count: plan.segment_count as u64,
    };
    let samples = track_plan.samples(segment).ok_or(out_of_range.clone())?;
    let sequence = u32::try_from(segment + 1).unwrap_or(u32::MAX);
    let run = TrackRun {
        track,
        plan: track_plan,
        samples,
        last_duration: None,
    };
    (fragment(&[run], sequence).map(|f| f.prepared)).ok_or(out_of_range)
}

/// Build the header and read list of a one-sample fragment holding sample `sample` of the
/// track at `track_pos`, lasting `duration` ticks (the trick-play resources of
/// `package::trick`, whose one key frame lasts until the next one offered). `sequence` is
/// the `mfhd` sequence number.
///
/// # Errors
/// [`PackageError::NoSuchTrack`] for a track position past the index,
/// [`PackageError::SegmentOutOfRange`] for a sample past the track.
pub fn prepare_sample_fragment(
    index: &MediaIndex,
    plan: &SegmentPlan,
    track_pos: usize,
    sample: usize,
    sequence: u32,
    duration: u32,
) -> Result<PreparedSegment, PackageError> {
    let (track, track_plan) = track_and_plan(index, plan, track_pos)?;
    let out_of_range = PackageError::SegmentOutOfRange {
        number: u64::from(sequence),
        count: track.samples.len() as u64,
    };
    let samples = sample..sample.checked_add(1).ok_or(out_of_range.clone())?;
    let run = TrackRun {
        track,
        plan: track_plan,
        samples,
        last_duration: Some(duration),
    };
    (fragment(&[run], sequence).map(|f| f.prepared)).ok_or(out_of_range)
}

/// A muxed media segment of several tracks: one `moof` with a `traf` per track that has
/// samples in the segment, one `mdat` holding those tracks' samples one track after the
/// other, each `trun`'s data offset pointing at its track's first sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedMuxedSegment {
    /// Header and read list; the ranges are the first track's, then the next track's, ...
    pub segment: PreparedSegment,
    /// How many of `segment.ranges` each track asked for contributes, in the order they
    /// were asked for (0 for a track with no sample in the segment).
    pub ranges_per_track: Vec<usize>,
}

/// Build the header and read list of muxed segment `segment` (0-based) of the tracks at
/// positions `track_positions` in `index.tracks`, in that order. Every track is cut as in
/// its own CMAF segment of the same number (the plan cuts all tracks at the same times),
/// with the same decode times, so the muxed stream keeps the CMAF output's timing. A track
/// with no sample in this segment (one that starts late or ends early) gets no `traf`,
/// unless none has any.
///
/// # Errors
/// [`PackageError::NoSuchTrack`] for a track position past the index,
/// [`PackageError::SegmentOutOfRange`] for a segment past the plan.
pub fn prepare_muxed_segment(
    index: &MediaIndex,
    plan: &SegmentPlan,
    track_positions: &[usize],
    segment: usize,
) -> Result<PreparedMuxedSegment, PackageError> {
    let out_of_range = PackageError::SegmentOutOfRange {
        number: (segment as u64).saturating_add(1),
        count: plan.segment_count as u64,
    };
    let mut runs = Vec::with_capacity(track_positions.len());
    for &pos in track_positions {
        let (track, track_plan) = track_and_plan(index, plan, pos)?;
        runs.push(TrackRun {
            track,
            plan: track_plan,
            samples: track_plan.samples(segment).ok_or(out_of_range.clone())?,
            last_duration: None,
        });
    }
    let written: Vec<bool> = match runs.iter().any(|r| !r.samples.is_empty()) {
        true => runs.iter().map(|r| !r.samples.is_empty()).collect(),
        false => vec![true; runs.len()],
    };
    let kept: Vec<TrackRun<'_>> = (runs.into_iter().zip(&written))
        .filter_map(|(run, keep)| keep.then_some(run))
        .collect();
    let sequence = u32::try_from(segment.saturating_add(1)).unwrap_or(u32::MAX);
    let fragment = fragment(&kept, sequence).ok_or(out_of_range)?;
    let mut per_run = fragment.ranges_per_run.into_iter();
    let ranges_per_track = (written.iter())
        .map(|keep| match keep {
            true => per_run.next().unwrap_or(0),
            false => 0,
        })
        .collect();
    Ok(PreparedMuxedSegment {
        segment: fragment.prepared,
        ranges_per_track,
    })
}

/// The track at `track_pos` and its plan.
fn track_and_plan<'a>(
    index: &'a MediaIndex,
    plan: &'a SegmentPlan,
    track_pos: usize,
) -> Result<(&'a TrackIndex, &'a TrackPlan), PackageError> {
    match (index.tracks.get(track_pos), plan.tracks.get(track_pos)) {
        (Some(track), Some(track_plan)) => Ok((track, track_plan)),
        _ => Err(PackageError::NoSuchTrack {
            track: track_pos as u64,
        }),
    }
}

/// One track's part of a fragment.
struct TrackRun<'a> {
    track: &'a TrackIndex,
    plan: &'a TrackPlan,
    /// Its samples in the fragment.
    samples: Range<usize>,
    /// The last sample's duration when given, else its own.
    last_duration: Option<u32>,
}

/// A fragment's header, read list, and how many of its ranges each run contributes.
struct Fragment {
    prepared: PreparedSegment,
    ranges_per_run: Vec<usize>,
}

/// One `moof` (a `traf` per run, in order) + `mdat` header, the `mdat` holding the runs'
/// samples one run after the other; `None` when some run's samples are not in its track.
fn fragment(runs: &[TrackRun<'_>], sequence: u32) -> Option<Fragment> {
    // At most a range per sample; sized once, as this runs for every segment.
    let samples: usize = runs.iter().map(|run| run.samples.len()).sum();
    let mut ranges: Vec<ByteRange> = Vec::with_capacity(samples);
    let mut ranges_per_run = Vec::with_capacity(runs.len());
    // Each run's payload bytes, in order.
    let mut run_bytes = Vec::with_capacity(runs.len());
    let mut header_len = MOOF_AND_MFHD_LEN;
    for run in runs {
        let table = &run.track.samples;
        let (Some(sizes), Some(offsets), Some(_)) = (
            table.sizes.get(run.samples.clone()),
            table.offsets().get(run.samples.clone()),
            table.durations.get(run.samples.clone()),
        ) else {
            return None;
        };
        let before = ranges.len();
        let mut bytes = 0u64;
        for (&offset, &size) in offsets.iter().zip(sizes) {
            let size = u64::from(size);
            bytes += size;
            // Adjacent in the file and in the same run: one range.
            match ranges.get_mut(before..).and_then(<[ByteRange]>::last_mut) {
                Some(last) if last.end() == offset => last.len += size,
                _ => ranges.push(ByteRange::new(offset, size)),
            }
        }
        ranges_per_run.push(ranges.len() - before);
        run_bytes.push(bytes);
        let has_cts = !table.cts_offsets.is_empty();
        header_len += traf_len(run.track.kind, has_cts, run.samples.len() as u64);
    }
    let payload_bytes: u64 = run_bytes.iter().sum();
    header_len += mdat_header_len(payload_bytes);

    let mut w = BoxWriter::with_capacity(usize::try_from(header_len).unwrap_or(0));
    w.begin(b"moof");
    w.begin_full(b"mfhd", 0, 0);
    w.u32(sequence);
    w.end();
    let data_offsets_at: Vec<usize> = runs.iter().map(|run| write_traf(&mut w, run)).collect();
    w.end(); // moof
             // Each trun's data offset (from the moof's first byte, tfhd's default-base-is-moof):
             // past the mdat header and the runs before it.
    let mut data_offset = w.len() as u64 + mdat_header_len(payload_bytes);
    for (at, bytes) in data_offsets_at.into_iter().zip(&run_bytes) {
        w.patch_u32(at, u32::try_from(data_offset).unwrap_or(u32::MAX));
        data_offset += bytes;
    }
    if mdat_header_len(payload_bytes) == 16 {
        w.u32(1);
        w.bytes(b"mdat");
        w.u64(payload_bytes + 16);
    } else {
        // Checked by mdat_header_len: fits in 32 bits.
        w.u32((payload_bytes + 8) as u32);
        w.bytes(b"mdat");
    }
    let header = w.finish();
    debug_assert_eq!(header.len() as u64, header_len);
    Some(Fragment {
        prepared: PreparedSegment {
            header,
            ranges,
            payload_bytes,
        },
        ranges_per_run,
    })
}

/// Write the `traf` of `run` (its samples already checked to be in the track); returns
/// where its `trun` data offset is, to be patched once the `moof` is complete.
fn write_traf(w: &mut BoxWriter, run: &TrackRun<'_>) -> usize {
    let (track, samples) = (run.track, run.samples.clone());
    let table = &track.samples;
    let sizes = table.sizes.get(samples.clone()).unwrap_or_default();
    let durations = table.durations.get(samples.clone()).unwrap_or_default();
    let has_cts = !table.cts_offsets.is_empty();
    let is_video = track.kind == TrackKind::Video;
    w.begin(b"traf");
    w.begin_full(b"tfhd", 0, TFHD_BASE_IS_MOOF | TFHD_DEFAULT_FLAGS);
    w.u32(track.track_id);
    w.u32(if is_video {
        NON_SYNC_SAMPLE_FLAGS
    } else {
        SYNC_SAMPLE_FLAGS
    });
    w.end();
    w.begin_full(b"tfdt", 1, 0);
    w.u64(run.plan.output_dts(table, samples.start));
    w.end();
    let mut flags = TRUN_DATA_OFFSET | TRUN_DURATION | TRUN_SIZE;
    if is_video {
        flags |= TRUN_FLAGS;
    }
    if has_cts {
        flags |= TRUN_CTS;
    }
    // Version 0: the plan makes every composition offset non-negative (see plan.rs).
    w.begin_full(b"trun", 0, flags);
    w.u32(u32::try_from(samples.len()).unwrap_or(u32::MAX));
    let data_offset_at = w.len();
    w.u32(0);
    let sync = table.sync.as_deref();
    let mut next_sync = sync.map(|s| s.partition_point(|i| (*i as usize) < samples.start));
    let last = sizes.len().saturating_sub(1);
    for (k, (&size, &duration)) in sizes.iter().zip(durations).enumerate() {
        let i = samples.start + k;
        w.u32(match run.last_duration {
            Some(d) if k == last => d,
            _ => duration,
        });
        w.u32(size);
        if is_video {
            let is_sync = match (sync, next_sync.as_mut()) {
                (Some(list), Some(pos)) => {
                    let hit = list.get(*pos).is_some_and(|s| *s as usize == i);
                    if hit {
                        *pos += 1;
                    }
                    hit
                }
                _ => true,
            };
            w.u32(if is_sync {
                SYNC_SAMPLE_FLAGS
            } else {
                NON_SYNC_SAMPLE_FLAGS
            });
        }
        if has_cts {
            let cts = i64::from(table.cts_offset(i)) - i64::from(run.plan.cts_base);
            w.u32(u32::try_from(cts).unwrap_or(0));
        }
    }
    w.end(); // trun
    w.end(); // traf
    data_offset_at
}
