//! Reading an index object's values, every one checked (see `stored/mod.rs`).

use super::super::{Edit, EditList, MediaLimits, SampleTable};
use super::write::track_bits;
use super::{
    invalid, Result, SampleBudget, StoredIndexError, LAYOUT_CHUNKS, LAYOUT_RUNS, MAX_EDITS,
    MAX_REPEAT_PERIOD, REPEAT,
};

/// Reads the format's values, every one checked against the bytes left.
pub(super) struct Reader<'a> {
    pub(super) rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.rest.len() {
            return Err(StoredIndexError::Format("cut short".into()));
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let bytes = self.take(N)?;
        <[u8; N]>::try_from(bytes).map_err(|_| StoredIndexError::Format("cut short".into()))
    }

    pub(super) fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    /// One varint. Read straight off the slice, not byte by byte through `take`: an
    /// index holds about four of them a sample, and this is most of its decoding.
    #[inline]
    fn var(&mut self) -> Result<u64> {
        if let Some((&byte, rest)) = self.rest.split_first() {
            if byte < 0x80 {
                self.rest = rest;
                return Ok(u64::from(byte));
            }
        }
        let mut value = 0u64;
        for (i, byte) in self.rest.iter().take(10).enumerate() {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                self.rest = self.rest.get(i + 1..).unwrap_or_default();
                return Ok(value);
            }
        }
        Err(StoredIndexError::Format(if self.rest.len() < 10 {
            "cut short".into()
        } else {
            "a number longer than 64 bits".into()
        }))
    }

    #[inline]
    pub(super) fn signed(&mut self) -> Result<i64> {
        let v = self.var()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    #[inline]
    pub(super) fn u32(&mut self) -> Result<u32> {
        u32::try_from(self.var()?)
            .map_err(|_| StoredIndexError::Invalid("a 32-bit value out of range".into()))
    }

    pub(super) fn u64(&mut self) -> Result<u64> {
        self.var()
    }

    /// A count of items of at least `item_bytes` each: at most `max`, and at most what the
    /// bytes left can hold, so nothing is allocated for what is not there.
    pub(super) fn count(
        &mut self,
        max: usize,
        limit: &'static str,
        item_bytes: usize,
    ) -> Result<usize> {
        let n = usize::try_from(self.var()?).unwrap_or(usize::MAX);
        if n > max {
            return Err(StoredIndexError::TooLarge {
                limit,
                value: n.try_into().unwrap_or(u64::MAX),
                max: max as u64,
            });
        }
        if n.saturating_mul(item_bytes) > self.rest.len() {
            return Err(StoredIndexError::Format("a count past the end".into()));
        }
        Ok(n)
    }

    pub(super) fn take_bytes(&mut self, max: usize) -> Result<&'a [u8]> {
        let n = self.count(max, "index string length", 1)?;
        self.take(n)
    }

    pub(super) fn string(&mut self, max: usize) -> Result<String> {
        let bytes = self.take_bytes(max)?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| StoredIndexError::Invalid("a string that is not UTF-8".into()))
    }

    pub(super) fn edits(&mut self, track_id: u32) -> Result<EditList> {
        let n = self.count(MAX_EDITS, "edits per track", 4)?;
        let mut edits = Vec::with_capacity(n);
        for _ in 0..n {
            let start_ticks = self.u64()?;
            let duration_ticks = self.u64()?;
            let has_media = self.u8()?;
            let media_time = self.u64()?;
            let media_time_ticks = match has_media {
                0 => None,
                1 => Some(media_time),
                other => return Err(invalid(track_id, format!("edit flag {other}"))),
            };
            edits.push(Edit {
                start_ticks,
                duration_ticks,
                media_time_ticks,
            });
        }
        Ok(EditList { edits })
    }

    /// A track's samples block (`Writer::samples_block`), its sample count taken from
    /// `budget` before anything is decoded.
    pub(super) fn samples_block(&mut self, budget: &mut SampleBudget) -> Result<&'a [u8]> {
        let block = self.take_bytes(usize::MAX)?;
        budget.take(Reader { rest: block }.var()?)?;
        Ok(block)
    }

    /// A sample table but its offsets (see [`Reader::layout`]), checked as the parser
    /// checks one: within the limits, decode times that never run backwards.
    pub(super) fn samples(&mut self, track_id: u32, limits: &MediaLimits) -> Result<SampleTable> {
        let max = usize::try_from(limits.max_samples_per_track).unwrap_or(usize::MAX);
        let n = self.count(max, "max_samples_per_track", 1)?;
        let mut sizes = Vec::with_capacity(n);
        let mut last = 0i64;
        for _ in 0..n {
            let size = u32::try_from(last.saturating_add(self.signed()?))
                .map_err(|_| invalid(track_id, "a sample size out of range".into()))?;
            if size > limits.max_sample_bytes {
                return Err(StoredIndexError::TooLarge {
                    limit: "max_sample_bytes",
                    value: u64::from(size),
                    max: u64::from(limits.max_sample_bytes),
                });
            }
            sizes.push(size);
            last = i64::from(size);
        }
        let runs = self.count(n, "duration runs", 2)?;
        let mut durations = Vec::with_capacity(n);
        for _ in 0..runs {
            let count = usize::try_from(self.var()?).unwrap_or(usize::MAX);
            let value = self.u32()?;
            if count > n - durations.len() {
                return Err(invalid(track_id, "duration runs past the samples".into()));
            }
            durations.extend(std::iter::repeat_n(value, count));
        }
        if durations.len() != n {
            return Err(invalid(
                track_id,
                "duration runs short of the samples".into(),
            ));
        }
        let first = self.u64()?;
        let jumps = self.count(n, "decode time jumps", 2)?;
        let dts = self.decode_times(track_id, first, &durations, jumps)?;
        let cts_offsets = match self.u8()? {
            0 => Vec::new(),
            1 => {
                if n > self.rest.len() {
                    return Err(StoredIndexError::Format("cut short".into()));
                }
                let unit = i64::from(self.u32()?);
                if unit == 0 {
                    return Err(invalid(track_id, "a composition unit of 0".into()));
                }
                let mut cts = Vec::with_capacity(n);
                for _ in 0..n {
                    let c = (self.signed()?.checked_mul(unit))
                        .and_then(|c| i32::try_from(c).ok())
                        .ok_or_else(|| invalid(track_id, "a composition offset".into()))?;
                    cts.push(c);
                }
                cts
            }
            other => return Err(invalid(track_id, format!("composition flag {other}"))),
        };
        let has_sync = self.u8()?;
        let count = self.count(n, "sync samples", 1)?;
        let mut list = Vec::with_capacity(count);
        let mut at = 0u32;
        for k in 0..count {
            let step = self.u32()?;
            if k > 0 && step == 0 {
                return Err(invalid(track_id, "sync samples out of order".into()));
            }
            at = (at.checked_add(step))
                .filter(|i| (*i as usize) < n)
                .ok_or_else(|| invalid(track_id, "a sync sample past the samples".into()))?;
            list.push(at);
        }
        let sync = match has_sync {
            0 if count == 0 => None,
            1 => Some(list),
            other => return Err(invalid(track_id, format!("sync flag {other}"))),
        };
        Ok(SampleTable {
            sizes,
            // Filled in from the layout, after the last track.
            offsets: Vec::new().into(),
            dts,
            durations,
            cts_offsets,
            sync,
        })
    }

    /// The next run of `left`: the sample it starts at, `after` the last one's (`None` for
    /// a first run), and its value.
    fn run(
        &mut self,
        left: usize,
        after: Option<usize>,
        track_id: u32,
    ) -> Result<Option<(usize, i64)>> {
        if left == 0 {
            return Ok(None);
        }
        let step = usize::try_from(self.var()?).unwrap_or(usize::MAX);
        if after.is_some() && step == 0 {
            return Err(invalid(track_id, "runs out of order".into()));
        }
        let at = after.unwrap_or(0).saturating_add(step);
        Ok(Some((at, self.signed()?)))
    }

    /// Decode times from the first, the durations and `jumps` runs: each sample's is the
    /// previous one's end but where a run says how far past it (never before the previous
    /// sample's own time).
    fn decode_times(
        &mut self,
        track_id: u32,
        first: u64,
        durations: &[u32],
        jumps: usize,
    ) -> Result<Vec<u64>> {
        let mut dts = Vec::with_capacity(durations.len());
        let mut left = jumps;
        let mut next = self.run(left, None, track_id)?;
        let mut time = first;
        for (i, duration) in durations.iter().enumerate() {
            if let Some((at, gap)) = next.filter(|(at, _)| *at == i) {
                let prev = dts.last().copied();
                time = (i > 0)
                    .then(|| time.checked_add_signed(gap))
                    .flatten()
                    .filter(|t| prev.is_some_and(|p| *t >= p))
                    .ok_or_else(|| invalid(track_id, format!("decode time of sample {at}")))?;
                left -= 1;
                next = self.run(left, Some(at), track_id)?;
            }
            dts.push(time);
            time = time
                .checked_add(u64::from(*duration))
                .ok_or_else(|| invalid(track_id, "decode times overflow".into()))?;
        }
        if next.is_some() {
            return Err(invalid(
                track_id,
                "a decode time jump past the samples".into(),
            ));
        }
        Ok(dts)
    }

    /// The offsets of every sample of the tracks whose sample sizes are `sizes` (the
    /// audio and video tracks, then the text tracks; `ids` their track ids), from the
    /// layout the writer chose (`Writer::layout`); every sample must end inside the
    /// object of `object_size` bytes.
    pub(super) fn layout(
        &mut self,
        sizes: &[&[u32]],
        ids: &[u32],
        object_size: u64,
    ) -> Result<Vec<Vec<u64>>> {
        match self.u8()? {
            LAYOUT_RUNS => (sizes.iter().zip(ids))
                .map(|(sizes, id)| {
                    let runs = self.count(sizes.len(), "offset runs", 2)?;
                    self.offsets(*id, sizes, runs, object_size)
                })
                .collect(),
            LAYOUT_CHUNKS => self.chunks(sizes, ids, object_size),
            other => Err(StoredIndexError::Invalid(format!("layout {other}"))),
        }
    }

    /// Offsets from the file's chunks in file order (`Writer::layout`), repeat tokens
    /// replayed.
    fn chunks(&mut self, sizes: &[&[u32]], ids: &[u32], object_size: u64) -> Result<Vec<Vec<u64>>> {
        let total: usize = sizes.iter().map(|s| s.len()).sum();
        let bits = track_bits(sizes.len());
        let mut placing = Placing {
            sizes,
            ids,
            object_size,
            offsets: sizes.iter().map(|s| Vec::with_capacity(s.len())).collect(),
            end: 0,
            recent: std::collections::VecDeque::with_capacity(MAX_REPEAT_PERIOD + 1),
        };
        let count = self.count(total, "layout chunks", 1)?;
        for _ in 0..count {
            let v = self.var()?;
            if v == REPEAT {
                let period = usize::try_from(self.var()?).unwrap_or(usize::MAX);
                let times = usize::try_from(self.var()?).unwrap_or(usize::MAX);
                placing.repeat(period, times, total)?;
                continue;
            }
            let track = usize::try_from(v & ((1 << bits) - 1)).unwrap_or(usize::MAX);
            let jump = (v >> bits) & 1 == 1;
            let samples = usize::try_from(v >> (bits + 1)).unwrap_or(usize::MAX);
            // The chunk is checked before its distance is read, so a bad one says so.
            placing.fits(track, samples)?;
            let distance = match jump {
                true => Some(self.signed()?),
                false => None,
            };
            placing.chunk(track, samples, distance)?;
        }
        let offsets = placing.offsets;
        if let Some(short) = (offsets.iter().zip(sizes)).position(|(o, s)| o.len() != s.len()) {
            let id = ids.get(short).copied().unwrap_or(0);
            return Err(invalid(id, "samples the layout does not place".into()));
        }
        Ok(offsets)
    }

    /// Sample offsets from `runs` runs: each sample follows the previous one but where a
    /// run places it; every sample must end inside the object.
    fn offsets(
        &mut self,
        track_id: u32,
        sizes: &[u32],
        runs: usize,
        object_size: u64,
    ) -> Result<Vec<u64>> {
        let mut offsets = Vec::with_capacity(sizes.len());
        let mut left = runs;
        let mut next = self.run(left, None, track_id)?;
        let mut at = 0u64;
        for (i, size) in sizes.iter().enumerate() {
            match next.filter(|(start, _)| *start == i) {
                Some((start, gap)) => {
                    at = at
                        .checked_add_signed(gap)
                        .ok_or_else(|| invalid(track_id, format!("offset of sample {start}")))?;
                    left -= 1;
                    next = self.run(left, Some(start), track_id)?;
                }
                None if i == 0 => {
                    return Err(invalid(track_id, "no offset for the first sample".into()))
                }
                None => {}
            }
            let end = at
                .checked_add(u64::from(*size))
                .filter(|e| *e <= object_size);
            let Some(end) = end else {
                return Err(invalid(
                    track_id,
                    format!("sample {i} at {at} ends past the object's {object_size} bytes"),
                ));
            };
            offsets.push(at);
            at = end;
        }
        if next.is_some() {
            return Err(invalid(track_id, "an offset run past the samples".into()));
        }
        Ok(offsets)
    }
}

/// The chunk layout's samples placed so far (`Reader::chunks`).
struct Placing<'s> {
    sizes: &'s [&'s [u32]],
    ids: &'s [u32],
    object_size: u64,
    offsets: Vec<Vec<u64>>,
    /// Where the last chunk ended.
    end: u64,
    /// The last chunks placed, (track, samples), at most [`MAX_REPEAT_PERIOD`], from the
    /// last one placed by a jump on (the writer never repeats over a jump).
    recent: std::collections::VecDeque<(usize, usize)>,
}

impl<'s> Placing<'s> {
    /// The sizes of the next `samples` samples of `track`, if it has them.
    fn next_sizes(&self, track: usize, samples: usize) -> Result<&'s [u32]> {
        let sizes: &'s [&'s [u32]] = self.sizes;
        let (Some(track_sizes), Some(placed)) = (sizes.get(track), self.offsets.get(track)) else {
            return Err(StoredIndexError::Invalid(format!("layout: track {track}")));
        };
        let id = self.ids.get(track).copied().unwrap_or(0);
        (placed.len().checked_add(samples))
            .filter(|_| samples > 0)
            .and_then(|to| track_sizes.get(placed.len()..to))
            .ok_or_else(|| invalid(id, "a layout chunk past the samples".into()))
    }

    /// Whether `track` has `samples` more samples to place.
    fn fits(&self, track: usize, samples: usize) -> Result<()> {
        self.next_sizes(track, samples).map(|_| ())
    }

    /// Place the next `samples` samples of `track` from the previous chunk's end, or
    /// `distance` from it.
    fn chunk(&mut self, track: usize, samples: usize, distance: Option<i64>) -> Result<()> {
        let chunk = self.next_sizes(track, samples)?;
        let id = self.ids.get(track).copied().unwrap_or(0);
        let Some(placed) = self.offsets.get_mut(track) else {
            return Err(StoredIndexError::Invalid(format!("layout: track {track}")));
        };
        let mut at = match distance {
            Some(distance) => (self.end.checked_add_signed(distance))
                .ok_or_else(|| invalid(id, "a layout chunk before the object".into()))?,
            None => self.end,
        };
        for size in chunk {
            let Some(next) = at
                .checked_add(u64::from(*size))
                .filter(|e| *e <= self.object_size)
            else {
                return Err(invalid(
                    id,
                    format!(
                        "sample {} at {at} ends past the object's {} bytes",
                        placed.len(),
                        self.object_size
                    ),
                ));
            };
            placed.push(at);
            at = next;
        }
        self.end = at;
        if distance.is_some() {
            self.recent.clear();
        }
        self.recent.push_back((track, samples));
        if self.recent.len() > MAX_REPEAT_PERIOD {
            self.recent.pop_front();
        }
        Ok(())
    }

    /// The last `period` chunks again, `times` times: at most as many chunks as there are
    /// samples in all (`total`), each of which places one at least.
    fn repeat(&mut self, period: usize, times: usize, total: usize) -> Result<()> {
        let start = self.recent.len().checked_sub(period).filter(|_| period > 0);
        let within = times.checked_mul(period).is_some_and(|n| n <= total);
        let (Some(start), true) = (start, within) else {
            return Err(StoredIndexError::Invalid(format!(
                "layout: a repeat of {period} chunks {times} times"
            )));
        };
        let window: Vec<(usize, usize)> = self.recent.range(start..).copied().collect();
        for _ in 0..times {
            for &(track, samples) in &window {
                self.chunk(track, samples, None)?;
            }
        }
        Ok(())
    }
}
