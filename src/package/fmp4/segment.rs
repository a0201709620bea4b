//! CMAF media segments: `prepare_media_segment` builds the `moof` + `mdat` header and the
//! list of source byte ranges whose bytes follow it, without reading any sample data.
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
    let moof = 8 + 16 + 8 + 20 + 20 + 20 + samples * trun_entry_len(kind, has_cts);
    moof + mdat_header_len(payload_bytes)
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
    fragment(track, track_plan, samples, sequence, None).ok_or(out_of_range)
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
    fragment(track, track_plan, samples, sequence, Some(duration)).ok_or(out_of_range)
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

/// One `moof` + `mdat` header for `samples` of `track`, the last sample lasting
/// `last_duration` when given (else its own duration); `None` when the samples are not in
/// the track.
fn fragment(
    track: &TrackIndex,
    track_plan: &TrackPlan,
    samples: Range<usize>,
    sequence: u32,
    last_duration: Option<u32>,
) -> Option<PreparedSegment> {
    let table = &track.samples;
    let (Some(sizes), Some(offsets), Some(durations)) = (
        table.sizes.get(samples.clone()),
        table.offsets.get(samples.clone()),
        table.durations.get(samples.clone()),
    ) else {
        return None;
    };

    let mut ranges: Vec<ByteRange> = Vec::new();
    let mut payload_bytes = 0u64;
    for (&offset, &size) in offsets.iter().zip(sizes) {
        let size = u64::from(size);
        payload_bytes += size;
        match ranges.last_mut() {
            Some(last) if last.end() == offset => last.len += size,
            _ => ranges.push(ByteRange::new(offset, size)),
        }
    }

    let has_cts = !table.cts_offsets.is_empty();
    let is_video = track.kind == TrackKind::Video;
    let count = samples.len() as u64;
    let header_len = media_segment_header_len(track.kind, has_cts, count, payload_bytes);
    let mut w = BoxWriter::with_capacity(header_len as usize);

    w.begin(b"moof");
    w.begin_full(b"mfhd", 0, 0);
    w.u32(sequence);
    w.end();
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
    w.u64(track_plan.output_dts(table, samples.start));
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
    w.u32(u32::try_from(count).unwrap_or(u32::MAX));
    let data_offset_at = w.len();
    w.u32(0);
    let sync = table.sync.as_deref();
    let mut next_sync = sync.map(|s| s.partition_point(|i| (*i as usize) < samples.start));
    let last = sizes.len().saturating_sub(1);
    for (k, (&size, &duration)) in sizes.iter().zip(durations).enumerate() {
        let i = samples.start + k;
        w.u32(match last_duration {
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
            let cts = i64::from(table.cts_offset(i)) - i64::from(track_plan.cts_base);
            w.u32(u32::try_from(cts).unwrap_or(0));
        }
    }
    w.end(); // trun
    w.end(); // traf
    w.end(); // moof
    let data_offset = w.len() as u64 + mdat_header_len(payload_bytes);
    w.patch_u32(
        data_offset_at,
        u32::try_from(data_offset).unwrap_or(u32::MAX),
    );
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
    Some(PreparedSegment {
        header,
        ranges,
        payload_bytes,
    })
}
