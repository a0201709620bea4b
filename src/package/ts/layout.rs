//! Where every packet of a TS segment goes: a pure function of the plan and the sample
//! sizes, so nothing needs the sample bytes to know a segment's length, its continuity
//! counters, or the byte range of a key frame.
//!
//! A segment is a list of units of whole 188-byte packets (PSI before every key frame, one
//! PES per frame, PCR packets), ordered by decode time. Continuity counters continue
//! across segments as if the title were one stream, from counts [`TsLayout`] holds.

use std::ops::Range;

use super::{TsProgram, TsStream, MAX_PCR_GAP, PACKET_LEN, PCR_LEAD, TS_TIME_OFFSET};
use crate::media::{SampleTable, TrackIndex};
use crate::package::{PackageError, Title, TrackPlan};

/// Bytes of a PES header with a PTS (9 + 5), and with a DTS too (9 + 10).
const PES_HEADER_PTS: usize = 14;
const PES_HEADER_PTS_DTS: usize = 19;
/// Packets of a PSI unit: PAT and PMT.
pub const PSI_PACKETS: u64 = 2;

/// One PES of a segment: which samples, and the numbers its headers carry. Kept to 48
/// bytes: a segment's plan holds one per video frame for as long as the segment streams,
/// a good part of a TS connection's memory (docs/performance.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pes {
    /// The samples it carries, in decode order.
    samples: Range<u32>,
    /// PTS (90 kHz, [`TS_TIME_OFFSET`] included).
    pub pts: u64,
    /// DTS; equal to the PTS when the header carries none.
    dts: u64,
    /// The PCR carried in its first packet (PCR stream only); [`NO_PCR`] when none.
    pcr: u64,
    /// Bytes after the PES header: prefixes, ADTS headers and samples.
    pub es_len: u64,
    /// Index of the stream in `TsProgram::streams`.
    stream: u8,
    /// A video sync sample (`random_access_indicator`, parameter sets).
    pub key: bool,
}

/// `Pes::pcr` of a PES that carries no PCR (a PCR base has 33 bits).
const NO_PCR: u64 = u64::MAX;

impl Pes {
    /// The PES of sample `sample` of stream `stream`; `None` past the indexes it can hold
    /// (256 streams, 2^32 samples).
    fn new(
        stream: usize,
        sample: usize,
        pts: u64,
        dts: u64,
        key: bool,
        es_len: u64,
    ) -> Option<Self> {
        let first = u32::try_from(sample).ok()?;
        Some(Self {
            samples: first..first.checked_add(1)?,
            pts,
            dts,
            pcr: NO_PCR,
            es_len,
            stream: u8::try_from(stream).ok()?,
            key,
        })
    }

    /// Index of the stream in `TsProgram::streams`.
    pub fn stream(&self) -> usize {
        usize::from(self.stream)
    }

    /// The samples it carries, in decode order.
    pub fn samples(&self) -> Range<usize> {
        self.samples.start as usize..self.samples.end as usize
    }

    /// The DTS, when it differs from the PTS.
    pub fn dts(&self) -> Option<u64> {
        (self.dts != self.pts).then_some(self.dts)
    }

    /// The decode time: the DTS, or the PTS when they are equal.
    pub fn decode_time(&self) -> u64 {
        self.dts
    }

    /// The PCR carried in its first packet.
    pub fn pcr(&self) -> Option<u64> {
        (self.pcr != NO_PCR).then_some(self.pcr)
    }

    /// Bytes of the PES header.
    pub fn header_len(&self) -> usize {
        if self.dts().is_some() {
            PES_HEADER_PTS_DTS
        } else {
            PES_HEADER_PTS
        }
    }

    /// Bytes of the whole PES (header and payload).
    pub fn len(&self) -> u64 {
        self.header_len() as u64 + self.es_len
    }

    /// Bytes of the adaptation field its first packet needs before any stuffing: a PCR
    /// (and the random access flag) takes 8, the flag alone 2.
    pub fn first_adaptation_len(&self) -> usize {
        match (self.pcr().is_some(), self.key) {
            (true, _) => 8,
            (false, true) => 2,
            (false, false) => 0,
        }
    }

    /// Packets it fills.
    pub fn packets(&self) -> u64 {
        let first = (PACKET_LEN - 4 - self.first_adaptation_len()) as u64;
        1 + self
            .len()
            .saturating_sub(first)
            .div_ceil((PACKET_LEN - 4) as u64)
    }
}

/// One unit of a segment, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unit {
    /// PAT then PMT.
    Psi,
    /// An adaptation-field-only packet carrying this PCR (90 kHz base) on the PCR PID.
    Pcr(u64),
    /// A PES.
    Pes(Pes),
}

impl Unit {
    /// Packets of the unit.
    pub fn packets(&self) -> u64 {
        match self {
            Unit::Psi => PSI_PACKETS,
            Unit::Pcr(_) => 1,
            Unit::Pes(pes) => pes.packets(),
        }
    }
}

/// What the playlists and the next segment need to know of one segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentSummary {
    /// Bytes of the segment.
    pub bytes: u64,
    /// Continuity counters at its start: PAT, PMT, then each stream of the program.
    pub continuity: [u8; 4],
}

/// A video key frame's place, for I-frame playlists: the PSI before it and its PES.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyFrame {
    /// Segment index (0-based).
    pub segment: usize,
    /// Offset of its PSI in the segment, and bytes of PSI and PES together.
    pub offset: u64,
    pub len: u64,
    /// Its presentation time on the output timeline, in microseconds.
    pub pts_us: u64,
}

/// The layout of every segment of one TS rendition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsLayout {
    /// One per segment of the plan.
    pub segments: Vec<SegmentSummary>,
    /// Every video key frame, in order.
    pub key_frames: Vec<KeyFrame>,
}

impl TsLayout {
    /// Walk every segment of `program` over `title`.
    ///
    /// # Errors
    /// [`PackageError::NotInTs`] for a frame TS cannot carry (an AAC frame too large for
    /// ADTS, an audio PES past 64 KiB).
    pub fn new(title: &Title, program: &TsProgram) -> Result<Self, PackageError> {
        let mut segments = Vec::with_capacity(title.plan.segment_count);
        let mut key_frames = Vec::new();
        let mut continuity = [0u8; 4];
        for segment in 0..title.plan.segment_count {
            segments.push(SegmentSummary {
                bytes: 0,
                continuity,
            });
            let units = segment_units(title, program, segment, None)?;
            let mut offset = 0u64;
            let mut previous: Option<(u64, u64)> = None;
            for unit in &units {
                let len = unit.packets() * PACKET_LEN as u64;
                match unit {
                    Unit::Psi => {
                        continuity[0] = continuity[0].wrapping_add(1) & 0x0F;
                        continuity[1] = continuity[1].wrapping_add(1) & 0x0F;
                    }
                    Unit::Pcr(_) => {}
                    Unit::Pes(pes) => {
                        let slot = &mut continuity[2 + pes.stream().min(1)];
                        *slot = ((u64::from(*slot) + pes.packets()) % 16) as u8;
                        if pes.key
                            && program
                                .streams
                                .get(pes.stream())
                                .is_some_and(TsStream::is_video)
                        {
                            if let Some((psi_offset, psi_len)) = previous {
                                key_frames.push(KeyFrame {
                                    segment,
                                    offset: psi_offset,
                                    len: psi_len + len,
                                    pts_us: pes.pts.saturating_sub(TS_TIME_OFFSET) * 100 / 9,
                                });
                            }
                        }
                    }
                }
                previous = matches!(unit, Unit::Psi).then_some((offset, len));
                offset += len;
            }
            if let Some(last) = segments.last_mut() {
                last.bytes = offset;
            }
        }
        Ok(Self {
            segments,
            key_frames,
        })
    }
}

/// Ticks of `timescale` to 90 kHz, rounded down.
fn to_90k(ticks: u64, timescale: u32) -> u64 {
    let t = u128::from(ticks) * 90_000 / u128::from(timescale.max(1));
    u64::try_from(t).unwrap_or(u64::MAX)
}

/// The DTS (90 kHz, [`TS_TIME_OFFSET`] included) of sample `i`: its decode time on the
/// presentation timeline (TS has no edit to take back a composition delay), never after
/// its PTS.
fn decode_time_90k(plan: &TrackPlan, table: &SampleTable, i: usize, timescale: u32) -> u64 {
    let pts = to_90k(plan.output_pts(table, i), timescale) + TS_TIME_OFFSET;
    let dts = (plan.presentation_dts(table, i) * 90_000).div_euclid(i128::from(timescale.max(1)))
        + i128::from(TS_TIME_OFFSET);
    u64::try_from(dts.max(0)).unwrap_or(u64::MAX).min(pts)
}

/// The units of segment `segment` (0-based) of `program`, in order, starting with PSI.
/// `sizes`, when given, are per program stream the sizes of the segment's samples to use
/// instead of the index's (SAMPLE-AES, where encryption changes video sizes).
///
/// # Errors
/// [`PackageError::SegmentOutOfRange`] past the plan; [`PackageError::NotInTs`] for a
/// frame TS cannot carry.
pub(crate) fn segment_units(
    title: &Title,
    program: &TsProgram,
    segment: usize,
    sizes: Option<&[Vec<u32>]>,
) -> Result<Vec<Unit>, PackageError> {
    // (decode time, order, unit): order 0 for PCR packets, then the stream index + 1.
    let mut timed: Vec<(u64, usize, Unit)> = Vec::new();
    for (index, stream) in program.streams.iter().enumerate() {
        let (track, plan) = track_and_plan(title, stream)?;
        let range = plan
            .samples(segment)
            .ok_or(PackageError::SegmentOutOfRange {
                number: (segment as u64).saturating_add(1),
                count: title.plan.segment_count as u64,
            })?;
        let own = sizes.and_then(|s| s.get(index)).map(Vec::as_slice);
        let pes_list = stream_pes(stream, index, track, plan, range, own)?;
        if index == 0 {
            // The PCR stream: each PES carries one; packets fill gaps over 40 ms, counting
            // from the last PES of the segment before.
            let before = match segment.checked_sub(1).and_then(|k| plan.samples(k)) {
                // A video PES is one frame: the one before is the previous sample.
                Some(range) if stream.is_video() => range
                    .end
                    .checked_sub(1)
                    .map(|i| decode_time_90k(plan, &track.samples, i, track.timescale)),
                Some(range) => stream_pes(stream, index, track, plan, range, None)?
                    .last()
                    .map(Pes::decode_time),
                None => None,
            };
            let mut last_pcr = before.map(|dts| dts.saturating_sub(PCR_LEAD));
            for mut pes in pes_list {
                let pcr = pes.decode_time().saturating_sub(PCR_LEAD);
                if let Some(last) = last_pcr.filter(|last| pcr > last + MAX_PCR_GAP) {
                    let gap = pcr - last;
                    let fillers = gap.div_ceil(MAX_PCR_GAP) - 1;
                    for j in 1..=fillers {
                        let at = last + gap * j / (fillers + 1);
                        timed.push((at + PCR_LEAD, 0, Unit::Pcr(at)));
                    }
                }
                last_pcr = Some(pcr);
                pes.pcr = pcr.min(NO_PCR - 1);
                timed.push((pcr + PCR_LEAD, 1, Unit::Pes(pes)));
            }
        } else {
            timed.extend(
                pes_list
                    .into_iter()
                    .map(|pes| (pes.decode_time(), index + 1, Unit::Pes(pes))),
            );
        }
    }
    timed.sort_by_key(|(time, order, _)| (*time, *order));
    let mut units = Vec::with_capacity(timed.len() + 8);
    units.push(Unit::Psi);
    for (_, _, unit) in timed {
        let key_video = match &unit {
            Unit::Pes(pes) => {
                pes.key
                    && program
                        .streams
                        .get(pes.stream())
                        .is_some_and(TsStream::is_video)
            }
            _ => false,
        };
        if key_video && units.last() != Some(&Unit::Psi) {
            units.push(Unit::Psi);
        }
        units.push(unit);
    }
    Ok(units)
}

fn track_and_plan<'a>(
    title: &'a Title,
    stream: &TsStream,
) -> Result<(&'a TrackIndex, &'a TrackPlan), PackageError> {
    let track = title.index.tracks.get(stream.track_pos);
    let plan = title.plan.tracks.get(stream.track_pos);
    track.zip(plan).ok_or(PackageError::NoSuchTrack {
        track: stream.track_pos as u64,
    })
}

/// The PES of one stream over `range` of its samples: one per frame. `sizes` replace the
/// index's sizes of those samples.
fn stream_pes(
    stream: &TsStream,
    index: usize,
    track: &TrackIndex,
    plan: &TrackPlan,
    range: Range<usize>,
    sizes: Option<&[u32]>,
) -> Result<Vec<Pes>, PackageError> {
    let table = &track.samples;
    let timescale = track.timescale;
    let time = |ticks: u64| to_90k(ticks, timescale) + TS_TIME_OFFSET;
    let sizes = sizes.unwrap_or_else(|| table.sizes.get(range.clone()).unwrap_or_default());
    let too_large = |reason: String| PackageError::NotInTs {
        track_id: track.track_id,
        reason,
    };
    let unindexable = || too_large("more streams or samples than a segment can index".into());
    let mut out = Vec::new();
    if stream.is_video() {
        out.reserve(range.len());
        let sync = table.sync.as_deref();
        let mut next_sync = sync.map(|s| s.partition_point(|i| (*i as usize) < range.start));
        for (i, size) in range.clone().zip(sizes) {
            let key = match (sync, next_sync.as_mut()) {
                (Some(list), Some(pos)) => {
                    let hit = list.get(*pos).is_some_and(|s| *s as usize == i);
                    *pos += usize::from(hit);
                    hit
                }
                _ => true,
            };
            let prefix = if key {
                stream.key_prefix.len()
            } else {
                stream.prefix.len()
            };
            let pts = time(plan.output_pts(table, i));
            let dts = decode_time_90k(plan, table, i, timescale);
            let es_len = prefix as u64 + u64::from(*size);
            out.push(Pes::new(index, i, pts, dts, key, es_len).ok_or_else(unindexable)?);
        }
        return Ok(out);
    }
    let header = stream.frame_header_len();
    out.reserve(range.len());
    for (i, size) in range.zip(sizes) {
        let size = u64::from(*size);
        if header > 0 && size > u64::from(super::adts::MAX_ADTS_PAYLOAD) {
            return Err(too_large(format!(
                "an AAC frame of {size} bytes is too large for ADTS"
            )));
        }
        let frame = header + size;
        // PES_packet_length counts from after the length field: at most 65535.
        if frame + (PES_HEADER_PTS as u64 - 6) > 65_535 {
            return Err(too_large(format!(
                "an audio frame of {size} bytes is too large for a PES"
            )));
        }
        let pts = time(plan.output_pts(table, i));
        out.push(Pes::new(index, i, pts, pts, false, frame).ok_or_else(unindexable)?);
    }
    Ok(out)
}
