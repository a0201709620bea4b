//! Planning reads for a list of byte ranges, and cutting the answers back into those
//! ranges: one GET per run for an object store, one `pread` per run for a local file
//! (`local.rs`, with a smaller gap: there a merged gap costs a copy, not a round trip).
//!
//! [`plan_runs`] groups the ranges a caller wants into runs, one GET each: ranges that follow
//! one another with a gap of at most `max_gap` bytes share a GET, and the gap bytes are read
//! and dropped (over-read). Gaps are merged smallest first while their sum stays within the
//! over-read budget, so a plan never over-reads more than the budget however the file is
//! interleaved. [`RunCursor`] takes a GET's body in whatever chunks the network gives and
//! hands on only the wanted bytes, in pieces of at most a given size.

use std::collections::VecDeque;

use bytes::Bytes;

use super::range::ByteRange;

/// Most bytes one read (a segment's ranges, or a batch) may read and not pass on: the
/// brief's over-read budget per segment. Gap merging stops before it, in both backends.
pub const OVER_READ_BUDGET_BYTES: u64 = 256 * 1024;

/// One GET: the range fetched and the parts of it the caller wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Run {
    /// The bytes requested from the store: from the first part's start to the last's end.
    pub fetch: ByteRange,
    /// The wanted parts, in the caller's order, ascending and not overlapping, none empty.
    pub parts: Vec<ByteRange>,
}

impl Run {
    /// A run of one range.
    pub fn single(range: ByteRange) -> Self {
        Self {
            fetch: range,
            parts: vec![range],
        }
    }

    /// Bytes fetched but not wanted (the gaps between parts).
    #[cfg(test)]
    pub fn over_read(&self) -> u64 {
        self.fetch
            .len
            .saturating_sub(self.parts.iter().map(|p| p.len).sum::<u64>())
    }

    /// Bytes wanted.
    pub fn wanted(&self) -> u64 {
        self.parts.iter().map(|p| p.len).sum()
    }
}

/// Group `ranges` (in the caller's order; empty ranges are dropped) into runs, one GET
/// each. A range joins the run before it when it starts at or after that run's end, no
/// more than `max_gap` bytes later, and the gaps merged so far plus this one stay within
/// `over_read_budget`. Gaps are considered smallest first, so the budget buys the most
/// requests saved. Concatenating the runs' parts gives back the non-empty ranges in order.
pub(crate) fn plan_runs(ranges: &[ByteRange], max_gap: u64, over_read_budget: u64) -> Vec<Run> {
    // Sized once: this runs for every batch of every streamed segment.
    let mut kept: Vec<ByteRange> = Vec::with_capacity(ranges.len());
    kept.extend(ranges.iter().copied().filter(|r| r.len > 0));
    let ranges = kept;
    // (gap bytes, index of the range after the gap), for gaps that may be merged.
    let mut gaps: Vec<(u64, usize)> = Vec::with_capacity(ranges.len());
    let mut all_gaps = 0u64;
    for (i, pair) in ranges.windows(2).enumerate() {
        if let [before, after] = pair {
            if after.start >= before.end() {
                let gap = after.start - before.end();
                if gap <= max_gap {
                    gaps.push((gap, i + 1));
                    all_gaps = all_gaps.saturating_add(gap);
                }
            }
        }
    }
    // Smallest first, when the budget cannot buy them all (usually it can: no sort then).
    if all_gaps > over_read_budget {
        gaps.sort_unstable();
    }
    let mut joins_previous = vec![false; ranges.len()];
    let mut spent = 0u64;
    for (gap, at) in gaps {
        match spent.checked_add(gap) {
            Some(total) if total <= over_read_budget => spent = total,
            // Gaps are sorted: every later one is at least as large.
            _ => break,
        }
        if let Some(join) = joins_previous.get_mut(at) {
            *join = true;
        }
    }
    // Each run takes the ranges from one that does not join the one before, up to the
    // next such: its parts are copied once, at their final size.
    let mut runs: Vec<Run> = Vec::new();
    let mut first = 0usize;
    for end in 1..=ranges.len() {
        if joins_previous.get(end).copied().unwrap_or(false) {
            continue;
        }
        if let (Some(parts), Some(head)) = (ranges.get(first..end), ranges.get(first)) {
            let last = parts.last().unwrap_or(head);
            runs.push(Run {
                fetch: ByteRange::new(head.start, last.end().saturating_sub(head.start)),
                parts: parts.to_vec(),
            });
        }
        first = end;
    }
    runs
}

/// [`plan_runs`] for a reader that also fetches `spare` ranges for other readers
/// (`object_store/shared.rs`): the runs are planned over both lists in file order, spare
/// ranges count as wanted (not against `over_read_budget`), and each run keeps only
/// `own`'s ranges as its parts, fetching the spare ones as gaps. Runs of spare ranges
/// alone are left out. `own` must be ascending and disjoint (a reader in file order);
/// spare ranges that overlap one of them are ignored.
pub(crate) fn plan_runs_with_spare(
    own: &[ByteRange],
    spare: &[ByteRange],
    max_gap: u64,
    over_read_budget: u64,
) -> Vec<Run> {
    let overlaps_own = |r: &ByteRange| {
        // The first own range ending after r's start is the only one that can overlap it.
        let at = own.partition_point(|o| o.end() <= r.start);
        own.get(at).is_some_and(|o| o.start < r.end())
    };
    let mut union: Vec<ByteRange> = Vec::with_capacity(own.len() + spare.len());
    union.extend(own.iter().copied());
    union.extend(
        spare
            .iter()
            .copied()
            .filter(|r| r.len > 0 && !overlaps_own(r)),
    );
    union.sort_unstable_by_key(|r| r.start);
    union.dedup();
    // Two spare ranges may still overlap each other: keep the union disjoint.
    let mut disjoint: Vec<ByteRange> = Vec::with_capacity(union.len());
    for range in union {
        match disjoint.last() {
            Some(last) if range.start < last.end() => {}
            _ => disjoint.push(range),
        }
    }
    let is_own = |r: &ByteRange| own.binary_search_by_key(&r.start, |o| o.start).is_ok();
    plan_runs(&disjoint, max_gap, over_read_budget)
        .into_iter()
        .filter_map(|mut run| {
            run.parts.retain(|p| is_own(p));
            (!run.parts.is_empty()).then_some(run)
        })
        .collect()
}

/// Why a GET body did not fit its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the store sent more bytes than the {expected} asked for")]
pub(crate) struct Overrun {
    /// Bytes the run asked for.
    pub expected: u64,
}

/// Follows one GET body through its run: passes on the wanted parts, drops the gaps.
#[derive(Debug)]
pub(crate) struct RunCursor {
    parts: Vec<ByteRange>,
    /// Index in `parts` of the part the next wanted byte belongs to.
    next_part: usize,
    /// Object offset of the next byte the body will give.
    offset: u64,
    /// Object offset one past the last byte of the run.
    end: u64,
}

impl RunCursor {
    /// A cursor at the start of `run`.
    pub fn new(run: &Run) -> Self {
        Self {
            parts: run.parts.clone(),
            next_part: 0,
            offset: run.fetch.start,
            end: run.fetch.end(),
        }
    }

    /// Take the next `chunk` of the body: push its wanted bytes onto `out` in pieces of at
    /// most `max_piece` bytes, and return how many gap bytes were dropped.
    ///
    /// # Errors
    /// [`Overrun`] when the chunk runs past the end of the run.
    pub fn feed(
        &mut self,
        chunk: Bytes,
        max_piece: usize,
        out: &mut VecDeque<Bytes>,
    ) -> Result<u64, Overrun> {
        self.feed_keeping(chunk, max_piece, out, |_, _| {})
    }

    /// [`RunCursor::feed`], handing each gap's bytes to `keep` with their object offset
    /// instead of dropping them (`object_store/shared.rs` keeps them for other segments).
    ///
    /// # Errors
    /// As [`RunCursor::feed`].
    pub fn feed_keeping(
        &mut self,
        mut chunk: Bytes,
        max_piece: usize,
        out: &mut VecDeque<Bytes>,
        mut keep: impl FnMut(u64, &[u8]),
    ) -> Result<u64, Overrun> {
        let remaining = self.end - self.offset;
        if chunk.len() as u64 > remaining {
            return Err(Overrun { expected: self.end });
        }
        let max_piece = max_piece.max(1);
        let mut dropped = 0u64;
        while !chunk.is_empty() {
            let available = chunk.len() as u64;
            let Some(part) = self.parts.get(self.next_part).copied() else {
                // Past the last part: only possible for a run whose fetch outlasts its
                // parts (a run read further for another segment's sake). Drop the bytes.
                keep(self.offset, &chunk);
                dropped += available;
                self.offset += available;
                break;
            };
            if self.offset < part.start {
                // Both bounds fit in the chunk's usize length.
                let skip = (part.start - self.offset).min(available);
                let gap = chunk.split_to(skip as usize);
                keep(self.offset, &gap);
                dropped += skip;
                self.offset += skip;
                continue;
            }
            let take = (part.end() - self.offset).min(available);
            let mut wanted = chunk.split_to(take as usize);
            while wanted.len() > max_piece {
                out.push_back(wanted.split_to(max_piece));
            }
            if !wanted.is_empty() {
                out.push_back(wanted);
            }
            self.offset += take;
            if self.offset == part.end() {
                self.next_part += 1;
            }
        }
        Ok(dropped)
    }

    /// True once every byte of the run has been fed.
    pub fn is_complete(&self) -> bool {
        self.offset == self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: u64, len: u64) -> ByteRange {
        ByteRange::new(start, len)
    }

    fn flat_parts(runs: &[Run]) -> Vec<ByteRange> {
        runs.iter().flat_map(|run| run.parts.clone()).collect()
    }

    #[test]
    fn close_ranges_share_a_get_and_far_ones_do_not() {
        let ranges = [r(0, 10), r(15, 5), r(1000, 10), r(1010, 4)];
        let runs = plan_runs(&ranges, 100, 1024);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].fetch, r(0, 20));
        assert_eq!(runs[0].over_read(), 5);
        assert_eq!(runs[1].fetch, r(1000, 14));
        assert_eq!(runs[1].over_read(), 0);
        assert_eq!(flat_parts(&runs), ranges);
    }

    #[test]
    fn a_zero_gap_limit_merges_only_adjacent_ranges() {
        let ranges = [r(0, 10), r(10, 5), r(16, 4)];
        let runs = plan_runs(&ranges, 0, 1 << 20);
        assert_eq!(runs.len(), 2);
        assert!(runs.iter().all(|run| run.over_read() == 0));
    }

    #[test]
    fn the_budget_caps_over_read_and_buys_the_smallest_gaps_first() {
        // Gaps of 50, 10, 30 and 20 bytes; a budget of 60 takes 10 + 20 + 30.
        let ranges = [r(0, 10), r(60, 10), r(80, 10), r(120, 10), r(150, 10)];
        let runs = plan_runs(&ranges, 1000, 60);
        let over_read: u64 = runs.iter().map(Run::over_read).sum();
        assert_eq!(over_read, 60);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].fetch, r(0, 10));
        assert_eq!(runs[1].fetch, r(60, 100));
        assert_eq!(flat_parts(&runs), ranges);
    }

    #[test]
    fn ranges_out_of_file_order_are_never_merged_backwards() {
        let ranges = [r(100, 10), r(0, 10), r(105, 10), r(0, 0)];
        let runs = plan_runs(&ranges, 50, 1000);
        assert_eq!(runs.len(), 3);
        assert_eq!(flat_parts(&runs), [r(100, 10), r(0, 10), r(105, 10)]);
    }

    #[test]
    fn the_cursor_keeps_wanted_bytes_in_bounded_pieces_whatever_the_chunking() {
        let object: Vec<u8> = (0..=255u8).cycle().take(300).collect();
        let run = plan_runs(&[r(10, 20), r(40, 5), r(50, 100)], 64, 1024)
            .pop()
            .expect("one run");
        assert_eq!(run.fetch, r(10, 140));
        for chunk_len in [1usize, 3, 7, 64, 140] {
            let mut cursor = RunCursor::new(&run);
            let mut out = VecDeque::new();
            let mut dropped = 0;
            let body = &object[10..150];
            for chunk in body.chunks(chunk_len) {
                dropped += cursor
                    .feed(Bytes::copy_from_slice(chunk), 8, &mut out)
                    .expect("fits");
            }
            assert!(cursor.is_complete());
            assert_eq!(dropped, run.over_read());
            assert!(out
                .iter()
                .all(|piece| piece.len() <= 8 && !piece.is_empty()));
            let got: Vec<u8> = out.iter().flat_map(|b| b.iter().copied()).collect();
            let mut expected = object[10..30].to_vec();
            expected.extend_from_slice(&object[40..45]);
            expected.extend_from_slice(&object[50..150]);
            assert_eq!(got, expected, "chunks of {chunk_len}");
        }
    }

    #[test]
    fn a_body_longer_than_its_run_is_an_overrun() {
        let run = Run::single(r(0, 4));
        let mut cursor = RunCursor::new(&run);
        let mut out = VecDeque::new();
        assert_eq!(
            cursor.feed(Bytes::from_static(b"12345"), 4, &mut out),
            Err(Overrun { expected: 4 })
        );
    }
}
