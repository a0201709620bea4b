//! Writing an index object's values (see the format in `stored/mod.rs`).

use super::super::{EditList, SampleTable};
use super::{LAYOUT_CHUNKS, LAYOUT_RUNS, MAX_REPEAT_PERIOD, MIN_REPEATED_CHUNKS, REPEAT};

/// Appends the format's values: unsigned LEB128 varints, signed ones zigzagged first.
pub(super) struct Writer(pub(super) Vec<u8>);

impl Writer {
    pub(super) fn var(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    pub(super) fn signed(&mut self, v: i64) {
        self.var(((v << 1) ^ (v >> 63)) as u64);
    }

    pub(super) fn u32(&mut self, v: u32) {
        self.var(u64::from(v));
    }

    pub(super) fn u64(&mut self, v: u64) {
        self.var(v);
    }

    pub(super) fn count(&mut self, n: usize) {
        self.var(n as u64);
    }

    pub(super) fn bytes(&mut self, b: &[u8]) {
        self.count(b.len());
        self.0.extend_from_slice(b);
    }

    pub(super) fn edits(&mut self, edits: &EditList) {
        self.count(edits.edits.len());
        for e in &edits.edits {
            self.u64(e.start_ticks);
            self.u64(e.duration_ticks);
            self.0.push(u8::from(e.media_time_ticks.is_some()));
            self.u64(e.media_time_ticks.unwrap_or(0));
        }
    }

    /// A track's samples as a byte string (length, then `samples`), so a reader can find
    /// each track's and decode them side by side.
    pub(super) fn samples_block(&mut self, s: &SampleTable) {
        let mut block = Writer(Vec::with_capacity(s.len() * 3 + 16));
        block.samples(s);
        self.bytes(&block.0);
    }

    pub(super) fn samples(&mut self, s: &SampleTable) {
        let n = s.len();
        self.count(n);
        // Sizes as the change from the previous sample's: an audio track's sizes move
        // within a few dozen bytes, one byte where the size itself takes two.
        let mut last = 0i64;
        for size in &s.sizes {
            self.signed(i64::from(*size) - last);
            last = i64::from(*size);
        }
        // Durations as runs of one value.
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for d in &s.durations {
            match runs.last_mut() {
                Some((count, value)) if value == d => *count += 1,
                _ => runs.push((1, *d)),
            }
        }
        self.count(runs.len());
        for (count, value) in runs {
            self.u32(count);
            self.u32(value);
        }
        // Decode times: the first, then each that is not the previous sample's end, as
        // (samples since the last jump, time past that end).
        self.u64(s.dts.first().copied().unwrap_or(0));
        let jumps: Vec<(usize, u64)> = (1..n)
            .filter_map(|i| {
                let (prev, d, dts) = (s.dts.get(i - 1)?, s.durations.get(i - 1)?, s.dts.get(i)?);
                let end = prev.saturating_add(u64::from(*d));
                (end != *dts).then_some((i, dts.wrapping_sub(end)))
            })
            .collect();
        self.count(jumps.len());
        let mut last = 0;
        for (i, gap) in jumps {
            self.count(i - last);
            self.signed(gap as i64);
            last = i;
        }
        // Composition offsets in units of their greatest common divisor (a frame's
        // duration, in a B-frame stream): one byte each where the ticks take two or three.
        self.0.push(u8::from(!s.cts_offsets.is_empty()));
        if !s.cts_offsets.is_empty() {
            let unit = cts_unit(&s.cts_offsets);
            self.u32(unit);
            for c in &s.cts_offsets {
                self.signed(i64::from(*c) / i64::from(unit));
            }
        }
        self.0.push(u8::from(s.sync.is_some()));
        let sync = s.sync.as_deref().unwrap_or(&[]);
        self.count(sync.len());
        let mut last = 0u32;
        for i in sync {
            self.u32(i.wrapping_sub(last));
            last = *i;
        }
    }

    /// Where every sample of `tables` (the audio and video tracks, then the text tracks)
    /// is in the file. When each track's samples run forward in the file, as in every
    /// muxer's output, as the file's chunks in file order ([`LAYOUT_CHUNKS`]): per chunk
    /// one varint, `(samples << (bits + 1)) | (jump << bits) | track`, and after a chunk
    /// that does not start where the previous one ended, its distance from there. An
    /// interleaved file then costs about a byte per chunk, where runs per track cost
    /// three or four (each chunk is a jump over the other tracks' chunk). Otherwise, per
    /// track, runs where a sample does not follow the previous one ([`LAYOUT_RUNS`]).
    pub(super) fn layout(&mut self, tables: &[&SampleTable]) {
        let offsets: Vec<&[u64]> = tables.iter().map(|t| t.offsets()).collect();
        let forward = offsets.iter().all(|o| o.windows(2).all(|w| w[0] <= w[1]));
        if !forward {
            self.0.push(LAYOUT_RUNS);
            for (table, offsets) in tables.iter().zip(&offsets) {
                self.runs(offsets, &table.sizes);
            }
            return;
        }
        self.0.push(LAYOUT_CHUNKS);
        let bits = track_bits(tables.len());
        // (track, samples, distance from the previous chunk's end)
        let mut chunks: Vec<(usize, u64, i64)> = Vec::new();
        let mut next = vec![0usize; tables.len()];
        let mut end = 0u64;
        loop {
            // The track whose next sample comes first in the file.
            let pick = (offsets.iter().zip(&next).enumerate())
                .filter_map(|(t, (o, n))| Some((*o.get(*n)?, t)))
                .min();
            let Some((at, t)) = pick else { break };
            let size = (tables.get(t)).and_then(|table| table.sizes.get(next[t]));
            match chunks.last_mut() {
                Some((track, samples, _)) if *track == t && at == end => *samples += 1,
                _ => chunks.push((t, 1, at.wrapping_sub(end) as i64)),
            }
            next[t] += 1;
            end = at.saturating_add(u64::from(size.copied().unwrap_or(0)));
        }
        let mut tokens = Writer(Vec::new());
        let mut count = 0usize;
        let mut i = 0;
        while let Some(&(track, samples, gap)) = chunks.get(i) {
            let jump = u64::from(gap != 0);
            tokens.var((samples << (bits + 1)) | (jump << bits) | track as u64);
            if gap != 0 {
                tokens.signed(gap);
            }
            count += 1;
            i += 1;
            if let Some((period, times)) = repeat_after(&chunks, i) {
                tokens.var(REPEAT);
                tokens.count(period);
                tokens.count(times);
                count += 1;
                i += period * times;
            }
        }
        self.count(count);
        self.0.extend_from_slice(&tokens.0);
    }

    /// A track's offsets as runs: one wherever a sample does not follow the previous one,
    /// as (samples since the last run, distance from the previous sample's end).
    pub(super) fn runs(&mut self, offsets: &[u64], sizes: &[u32]) {
        let mut starts: Vec<(usize, i64)> = Vec::new();
        let mut end = 0u64;
        for (i, (at, size)) in offsets.iter().zip(sizes).enumerate() {
            if i == 0 || *at != end {
                starts.push((i, at.wrapping_sub(end) as i64));
            }
            end = at.saturating_add(u64::from(*size));
        }
        self.count(starts.len());
        let mut last = 0;
        for (i, gap) in starts {
            self.count(i - last);
            self.signed(gap);
            last = i;
        }
    }
}

/// Bits a track's number takes in a chunk of the layout (0 for a single track).
/// Where the chunks from `at` on repeat the `period` chunks before `at` (none of them, nor
/// of the repeats, placed by a jump) `times` whole times: the period covering most chunks,
/// if that is at least [`MIN_REPEATED_CHUNKS`]. An interleaved file's chunks follow one
/// pattern (a video frame, then the audio frames up to its time) from start to end.
fn repeat_after(chunks: &[(usize, u64, i64)], at: usize) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    for period in 1..=MAX_REPEAT_PERIOD.min(at) {
        let window = chunks.get(at - period..at)?;
        if window.iter().any(|c| c.2 != 0) {
            continue;
        }
        let same = (at..chunks.len())
            .take_while(|&j| chunks.get(j) == chunks.get(j - period))
            .count();
        let times = same / period;
        let covered = times * period;
        if covered >= MIN_REPEATED_CHUNKS && best.is_none_or(|(p, t)| covered > p * t) {
            best = Some((period, times));
        }
    }
    best
}

pub(super) fn track_bits(tracks: usize) -> u32 {
    usize::BITS - tracks.saturating_sub(1).leading_zeros()
}

/// The greatest common divisor of `offsets` (at least 1): every offset is a whole number
/// of it.
pub(super) fn cts_unit(offsets: &[i32]) -> u32 {
    let gcd = |mut a: u32, mut b: u32| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    offsets
        .iter()
        .fold(0, |g, c| gcd(g, c.unsigned_abs()))
        .max(1)
}
