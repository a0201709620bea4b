//! The TS segment writer: the layout of one segment, the source ranges it needs, and a
//! state machine that turns the sample bytes into packets as they stream in.
//!
//! Each stream's samples are read as their own run of source ranges (a track's samples lie
//! in file order, so the runs merge as CMAF's do, with no over-read), and the writer says
//! which stream it needs bytes of next; it never holds more than the packet being filled,
//! so memory per segment is the caller's read chunks plus 188 bytes, whatever the segment's
//! size. A byte range of the segment starts at the first unit it touches (units start on
//! packet boundaries with counters known from the layout) and reads only those units'
//! samples.

use std::ops::Range;

use super::annexb::NalRewriter;
use super::layout::{segment_units, Pes, Unit};
use super::packet::{pcr_packet, pes_header, Packetizer, Sink};
use super::psi::{pat_packet, pmt_packet};
use super::{StreamKind, TsLayout, TsProgram, PACKET_LEN};
use crate::package::{PackageError, Title};
use crate::source::ByteRange;

/// One TS segment (or a byte range of it) ready to stream.
#[derive(Debug, Clone)]
pub struct TsSegment {
    /// Bytes of the whole segment.
    pub content_length: u64,
    /// Per stream of the program, the source ranges whose bytes the writer takes, in the
    /// order it takes them (adjacent ones merged).
    pub ranges: Vec<Vec<ByteRange>>,
    program: TsProgram,
    /// The units to write, with their continuity counters at their start and, for a PES,
    /// the index of its first sample in `samples[stream]`.
    units: Vec<(Unit, [u8; 4], u32)>,
    /// Per stream, the sizes of the samples to take, in order (a cursor walks them).
    samples: Vec<Vec<u32>>,
    /// Output bytes to drop before the window, and the window's end (relative to the first
    /// unit written).
    skip: u64,
    end: u64,
    state: State,
}

/// Where the writer is.
#[derive(Debug, Clone)]
enum State {
    /// Before unit `next`.
    Between {
        next: usize,
    },
    /// Inside the PES of unit `unit`.
    InPes {
        unit: usize,
        packetizer: Box<Packetizer>,
        /// The piece being written (see `TsSegment::piece`) and the bytes left of the
        /// sample being copied.
        step: usize,
        sample_left: u64,
        rewriter: Option<NalRewriter>,
    },
    Done,
}

/// What the writer needs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Bytes of stream `n`'s ranges.
    Stream(usize),
    /// Nothing: the segment (or the window) is written.
    Done,
}

/// The next thing a PES is made of.
enum Piece {
    Header,
    Prefix,
    Adts(u32),
    Sample(u32),
}

/// A segment of `program`'s PAT and PMT alone: what nginx-vod-module answers for a window
/// holding no sample (`server::outputs::nginx_vod::numbered`). Its continuity counters are
/// those segment `like` of `layout` starts with: a repeated PSI packet is allowed
/// (ISO/IEC 13818-1 2.4.3.3), so a player reading this, then `like`, sees no gap.
pub fn psi_segment(program: &TsProgram, layout: &TsLayout, like: usize) -> Vec<u8> {
    let continuity = (layout.segments.get(like)).map_or([0; 4], |s| s.continuity);
    let mut out = Vec::with_capacity(2 * PACKET_LEN);
    out.extend_from_slice(&pat_packet(continuity[0]));
    out.extend_from_slice(&pmt_packet(
        &program.streams,
        program.sample_aes,
        continuity[1],
    ));
    out
}

/// Build the writer for bytes `window` of segment `segment` (0-based) of `program`.
///
/// # Errors
/// [`PackageError::SegmentOutOfRange`] past the plan; [`PackageError::NotInTs`] for a
/// frame TS cannot carry.
pub fn prepare_ts_segment(
    title: &Title,
    program: &TsProgram,
    layout: &TsLayout,
    segment: usize,
    window: Option<Range<u64>>,
) -> Result<TsSegment, PackageError> {
    prepare(title, program, layout, segment, window, None)
}

/// The writer of the whole of segment `segment` over samples of the given `sizes` (per
/// program stream, the segment's samples in order), for samples that are not the source's
/// (`sample_aes`). Its `ranges` still name the source's bytes; its input is the caller's.
///
/// # Errors
/// As [`prepare_ts_segment`].
pub(super) fn prepare_sized_segment(
    title: &Title,
    program: &TsProgram,
    layout: &TsLayout,
    segment: usize,
    sizes: &[Vec<u32>],
) -> Result<TsSegment, PackageError> {
    prepare(title, program, layout, segment, None, Some(sizes))
}

fn prepare(
    title: &Title,
    program: &TsProgram,
    layout: &TsLayout,
    segment: usize,
    window: Option<Range<u64>>,
    sizes: Option<&[Vec<u32>]>,
) -> Result<TsSegment, PackageError> {
    let summary = layout
        .segments
        .get(segment)
        .ok_or(PackageError::SegmentOutOfRange {
            number: (segment as u64).saturating_add(1),
            count: layout.segments.len() as u64,
        })?;
    let units = segment_units(title, program, segment, sizes)?;
    let mut continuity = summary.continuity;
    let mut offset = 0u64;
    // The layout knows a segment's length; sizes of the caller's change it (`sample_aes`).
    let whole = match sizes {
        None => summary.bytes,
        Some(_) => units.iter().map(|u| u.packets() * PACKET_LEN as u64).sum(),
    };
    let window = window.unwrap_or(0..whole);
    let mut placed = Vec::new();
    let mut first_offset = None;
    for unit in units {
        let len = unit.packets() * PACKET_LEN as u64;
        let at = continuity;
        match &unit {
            Unit::Psi => {
                continuity[0] = (continuity[0] + 1) & 0x0F;
                continuity[1] = (continuity[1] + 1) & 0x0F;
            }
            Unit::Pcr(_) => {}
            Unit::Pes(pes) => {
                let slot = &mut continuity[2 + pes.stream().min(1)];
                *slot = ((u64::from(*slot) + pes.packets()) % 16) as u8;
            }
        }
        if offset < window.end && offset + len > window.start {
            first_offset.get_or_insert(offset);
            placed.push((unit, at, 0));
        }
        offset += len;
    }
    let first_offset = first_offset.unwrap_or(0);
    let streams = program.streams.len();
    let mut ranges: Vec<Vec<ByteRange>> = vec![Vec::new(); streams];
    let mut samples: Vec<Vec<u32>> = vec![Vec::new(); streams];
    for (unit, _, first_sample) in &mut placed {
        let Unit::Pes(pes) = unit else { continue };
        let Some(stream) = program.streams.get(pes.stream()) else {
            continue;
        };
        if let Some(sizes) = sizes {
            // Samples of the caller's: sizes only, no source ranges.
            let start = title
                .plan
                .tracks
                .get(stream.track_pos)
                .and_then(|p| p.samples(segment))
                .map_or(0, |r| r.start);
            let own = sizes.get(pes.stream()).and_then(|s| {
                let r = pes.samples();
                s.get(r.start.saturating_sub(start)..r.end.saturating_sub(start))
            });
            if let (Some(own), Some(out)) = (own, samples.get_mut(pes.stream())) {
                *first_sample = u32::try_from(out.len()).unwrap_or(u32::MAX);
                out.extend_from_slice(own);
            }
            continue;
        }
        let table = title
            .index
            .tracks
            .get(stream.track_pos)
            .map(|t| &t.samples)
            .ok_or(PackageError::NoSuchTrack {
                track: stream.track_pos as u64,
            })?;
        let (Some(sizes), Some(offsets)) = (
            table.sizes.get(pes.samples()),
            table.offsets().get(pes.samples()),
        ) else {
            continue;
        };
        let (Some(list), Some(sizes_out)) =
            (ranges.get_mut(pes.stream()), samples.get_mut(pes.stream()))
        else {
            continue;
        };
        *first_sample = u32::try_from(sizes_out.len()).unwrap_or(u32::MAX);
        for (&offset, &size) in offsets.iter().zip(sizes) {
            sizes_out.push(size);
            let size = u64::from(size);
            match list.last_mut() {
                Some(last) if last.end() == offset => last.len += size,
                _ => list.push(ByteRange::new(offset, size)),
            }
        }
    }
    // A segment's plan lives as long as its stream: keep no spare capacity (it is a good
    // part of a TS connection's memory, docs/performance.md).
    placed.shrink_to_fit();
    for list in &mut ranges {
        list.shrink_to_fit();
    }
    for sizes in &mut samples {
        sizes.shrink_to_fit();
    }
    Ok(TsSegment {
        content_length: whole,
        ranges,
        program: program.clone(),
        units: placed,
        samples,
        skip: window.start.saturating_sub(first_offset),
        end: window.end.saturating_sub(first_offset),
        state: State::Between { next: 0 },
    })
}

impl TsSegment {
    /// Bytes this writer emits in all (the window's length).
    pub fn window_len(&self) -> u64 {
        self.end.saturating_sub(self.skip)
    }

    /// The `step`-th piece of `pes`: the header, the video prefix, then per sample its
    /// ADTS header (AAC) and bytes; `None` past the end.
    fn piece(&self, pes: &Pes, first: usize, step: usize) -> Option<Piece> {
        let stream = self.program.streams.get(pes.stream())?;
        if step == 0 {
            return Some(Piece::Header);
        }
        let count = pes.samples().len();
        let sample_at = |k: usize| self.samples.get(pes.stream())?.get(first + k).copied();
        if stream.is_video() {
            return match step {
                1 => Some(Piece::Prefix),
                2 => sample_at(0).map(Piece::Sample),
                _ => None,
            };
        }
        if matches!(stream.kind, StreamKind::Aac(_)) {
            let k = (step - 1) / 2;
            if k >= count {
                return None;
            }
            let size = sample_at(k)?;
            return Some(if (step - 1).is_multiple_of(2) {
                Piece::Adts(size)
            } else {
                Piece::Sample(size)
            });
        }
        (step - 1 < count)
            .then(|| sample_at(step - 1))
            .flatten()
            .map(Piece::Sample)
    }

    /// Write what can be written into `out`: literal units and PES bytes, taking each
    /// stream's sample bytes from `inputs[stream]` (the bytes of its `ranges` not yet
    /// taken, in order). Returns what it needs next: more bytes of a stream whose input
    /// is used up, or nothing more.
    pub fn write(&mut self, inputs: &mut [&[u8]], out: &mut Vec<u8>) -> Need {
        let mut sink = Sink {
            out,
            pos: 0,
            skip: self.skip,
            end: self.end,
        };
        // `pos` is kept in `skip`/`end` terms: shift them back after.
        let need = self.run(inputs, &mut sink);
        let consumed = sink.pos;
        self.skip = self.skip.saturating_sub(consumed);
        self.end = self.end.saturating_sub(consumed);
        need
    }

    fn run(&mut self, inputs: &mut [&[u8]], sink: &mut Sink<'_>) -> Need {
        loop {
            if sink.pos >= sink.end {
                self.state = State::Done;
            }
            match &mut self.state {
                State::Done => return Need::Done,
                State::Between { next } => {
                    let next = *next;
                    let Some((unit, continuity, _)) = self.units.get(next) else {
                        self.state = State::Done;
                        continue;
                    };
                    match unit {
                        Unit::Psi => {
                            sink.emit(&pat_packet(continuity[0]));
                            sink.emit(&pmt_packet(
                                &self.program.streams,
                                self.program.sample_aes,
                                continuity[1],
                            ));
                            self.state = State::Between { next: next + 1 };
                        }
                        Unit::Pcr(pcr) => {
                            sink.emit(&pcr_packet(
                                self.program.streams[0].pid,
                                continuity[2],
                                *pcr,
                            ));
                            self.state = State::Between { next: next + 1 };
                        }
                        Unit::Pes(pes) => {
                            let pid = self
                                .program
                                .streams
                                .get(pes.stream())
                                .map_or(0x1FFF, |s| s.pid);
                            let packetizer = Box::new(Packetizer::new(
                                pid,
                                continuity[2 + pes.stream().min(1)],
                                pes,
                            ));
                            self.state = State::InPes {
                                unit: next,
                                packetizer,
                                step: 0,
                                sample_left: 0,
                                rewriter: None,
                            };
                        }
                    }
                }
                State::InPes { .. } => {
                    if let Some(need) = self.run_pes(inputs, sink) {
                        return need;
                    }
                }
            }
        }
    }

    /// Advance inside the current PES; `Some(need)` when it must wait for input.
    fn run_pes(&mut self, inputs: &mut [&[u8]], sink: &mut Sink<'_>) -> Option<Need> {
        let State::InPes {
            unit,
            mut packetizer,
            mut step,
            mut sample_left,
            mut rewriter,
        } = std::mem::replace(&mut self.state, State::Done)
        else {
            return None;
        };
        let Some((Unit::Pes(pes), _, first)) = self.units.get(unit) else {
            self.state = State::Between { next: unit + 1 };
            return None;
        };
        let (pes, first) = (pes.clone(), *first as usize);
        let stream = self.program.streams.get(pes.stream()).cloned();
        let Some(stream) = stream else {
            self.state = State::Done;
            return None;
        };
        let mut empty: &[u8] = &[];
        let input = match inputs.get_mut(pes.stream()) {
            Some(input) => input,
            None => &mut empty,
        };
        loop {
            if sample_left > 0 {
                if input.is_empty() {
                    self.state = State::InPes {
                        unit,
                        packetizer,
                        step,
                        sample_left,
                        rewriter,
                    };
                    return Some(Need::Stream(pes.stream()));
                }
                let n = (sample_left.min(input.len() as u64)) as usize;
                packetizer.put_sample(&input[..n], rewriter.as_mut(), sink);
                *input = &input[n..];
                sample_left -= n as u64;
                if sample_left > 0 {
                    continue;
                }
                step += 1;
            }
            match self.piece(&pes, first, step) {
                None => break,
                Some(Piece::Header) => {
                    let mut header = [0u8; 19];
                    // SAMPLE-AES states every PES's length where it fits, video too, so
                    // a reader knows a frame is whole (and decrypts it with this
                    // segment's key) without waiting for the next one.
                    let unbounded = stream.is_video() && !self.program.sample_aes;
                    let len = pes_header(&pes, stream.stream_id(), unbounded, &mut header);
                    packetizer.put(&header[..len], sink);
                    step += 1;
                }
                Some(Piece::Prefix) => {
                    let prefix = if pes.key {
                        &stream.key_prefix
                    } else {
                        &stream.prefix
                    };
                    packetizer.put(prefix, sink);
                    step += 1;
                }
                Some(Piece::Adts(size)) => {
                    if let StreamKind::Aac(config) = &stream.kind {
                        packetizer.put(&config.header(size), sink);
                    }
                    step += 1;
                }
                Some(Piece::Sample(size)) => {
                    sample_left = u64::from(size);
                    rewriter = stream.is_video().then(|| NalRewriter::new(u64::from(size)));
                    if sample_left == 0 {
                        step += 1;
                    }
                }
            }
        }
        // Every byte of the PES is placed; a PES whose sizes lied would leave a packet open.
        debug_assert_eq!(packetizer.fill, 0);
        self.state = State::Between { next: unit + 1 };
        None
    }

    #[cfg(test)]
    pub(crate) fn debug_state(&self) -> String {
        match &self.state {
            State::InPes {
                unit,
                step,
                sample_left,
                ..
            } => format!(
                "unit {unit}/{} step {step} left {sample_left} {:?}",
                self.units.len(),
                self.units.get(*unit).map(|u| &u.0)
            ),
            other => format!("{other:?}"),
        }
    }

    /// Whether every unit has been written (or the window is full).
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done)
    }
}
