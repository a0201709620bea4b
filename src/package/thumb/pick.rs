//! Which samples to decode for the frame presented at a time.
//!
//! Times are the title's presentation times (output pts less the title shift, as in
//! `package::plan`), so edit lists and B-frame delay count as they do in segments. The
//! frame shown at `t` is the one presented latest at or before `t`; decoding starts at the
//! last sync sample before it in both decode and presentation order.

use std::ops::Range;

use super::decode::MAX_DECODE_SAMPLES;
use super::ThumbError;
use crate::media::TrackIndex;
use crate::package::TrackPlan;

/// Which frame a time picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickMode {
    /// The frame presented at the time (decoded from the key frame before it).
    Exact,
    /// The key frame presented at or before the time: one sample decoded, faster.
    KeyFrame,
}

/// The samples to decode and which output is the frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FramePick {
    /// Samples to decode, in decode order: from a sync sample to the frame, inclusive.
    pub samples: Range<usize>,
    /// The frame's sample (decode order, 0-based).
    pub target: usize,
    /// The frame's place (0-based) in presentation order among `samples`: the decoder's
    /// output of that number is the frame.
    pub rank: usize,
    /// The frame's presentation time, in ms (rounded down), for spans and logs.
    pub presented_ms: i64,
}

/// The samples of `track` (a presented track of a title, planned by `plan`) to decode for
/// the frame shown at `time_ms`.
///
/// # Errors
/// [`ThumbError::PastEnd`] at or after the end of the video; [`ThumbError::NoVideo`] for a
/// track without samples; [`ThumbError::Undecodable`] when no sync sample precedes the
/// frame; [`ThumbError::TooManySamples`] when the frame is too far from its key frame.
pub fn pick_frame(
    track: &TrackIndex,
    plan: &TrackPlan,
    time_ms: u64,
    mode: PickMode,
) -> Result<FramePick, ThumbError> {
    let table = &track.samples;
    let timescale = i128::from(track.timescale.max(1));
    let shift = i128::from(plan.title_shift_ticks);
    let movie_pts = |i: usize| i128::from(plan.output_pts(table, i)) - shift;
    let to_ms = |ticks: i128| i64::try_from(ticks * 1000 / timescale).unwrap_or(i64::MAX);
    if table.is_empty() {
        return Err(ThumbError::NoVideo {
            detail: String::new(),
        });
    }
    let t = i128::from(time_ms) * timescale / 1000;
    let end = (0..table.len())
        .map(|i| movie_pts(i) + i128::from(table.durations.get(i).copied().unwrap_or(0)))
        .max()
        .unwrap_or(0);
    if t >= end {
        return Err(ThumbError::PastEnd {
            time_ms,
            end_ms: u64::try_from(to_ms(end)).unwrap_or(0),
        });
    }
    let shown = |i: &usize| movie_pts(*i) >= 0 && (mode == PickMode::Exact || table.is_sync(*i));
    // Latest presented at or before t; else (t before the first frame) the first presented.
    let at_or_before = (0..table.len())
        .filter(shown)
        .filter(|&i| movie_pts(i) <= t)
        .max_by_key(|&i| (movie_pts(i), i));
    let target = match at_or_before {
        Some(i) => i,
        None => (0..table.len())
            .filter(shown)
            .min_by_key(|&i| (movie_pts(i), i))
            .ok_or_else(|| undecodable("no frame is presented"))?,
    };
    let target_pts = movie_pts(target);
    let syncs_before = (0..=target).rev().filter(|&i| table.is_sync(i));
    let key = syncs_before
        .clone()
        .find(|&k| movie_pts(k) <= target_pts)
        .or_else(|| syncs_before.clone().next())
        .ok_or_else(|| undecodable("no key frame before the frame"))?;
    let samples = key..target + 1;
    if samples.len() > MAX_DECODE_SAMPLES {
        return Err(ThumbError::TooManySamples {
            samples: samples.len(),
            max: MAX_DECODE_SAMPLES,
        });
    }
    let rank = samples
        .clone()
        .filter(|&i| (movie_pts(i), i) < (target_pts, target))
        .count();
    Ok(FramePick {
        samples,
        target,
        rank,
        presented_ms: to_ms(target_pts),
    })
}

/// The presentation times of the key frames `track` shows (those [`PickMode::KeyFrame`]
/// picks from), in ms of the title's time rounded up, ascending: the first ms at which each
/// is on screen, so a storyboard cue starting there shows that very frame.
pub fn shown_key_frames_ms(track: &TrackIndex, plan: &TrackPlan) -> Vec<u64> {
    let table = &track.samples;
    let timescale = i128::from(track.timescale.max(1));
    let shift = i128::from(plan.title_shift_ticks);
    let mut times: Vec<u64> = (0..table.len())
        .filter(|&i| table.is_sync(i))
        .map(|i| i128::from(plan.output_pts(table, i)) - shift)
        .filter(|&pts| pts >= 0)
        .map(|pts| u64::try_from((pts * 1000 + timescale - 1) / timescale).unwrap_or(u64::MAX))
        .collect();
    times.sort_unstable();
    times.dedup();
    times
}

fn undecodable(reason: &str) -> ThumbError {
    ThumbError::Undecodable {
        reason: reason.to_owned(),
    }
}
