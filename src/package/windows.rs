//! nginx-vod-module's numbering of a title's segments, for the nginx-vod names
//! (`server::outputs::nginx_vod`): a player or CDN moved from the module holds segment names
//! numbered its way, so each number must mean the same media here.
//!
//! The module numbers by windows of the target duration T: segment N covers `[(N-1)T, NT)`.
//! With a video, a window holds the title's own segments that start in it (an empty one
//! where it has no key frame); audio alone is cut at the windows themselves, as the module
//! cuts it. Times stay vodpack's (edit lists applied).

use crate::media::{MediaIndex, TrackIndex, TrackKind};
use crate::package::{PackageError, SegmentPlan, TrackPlan};

/// Most windows a title is numbered into: the module's own limit (`MAX_SEGMENT_COUNT`).
/// A title that would need more is refused before anything that long is allocated.
pub const MAX_WINDOWS: usize = 100_000;

/// A title's segments numbered by windows (see the module comment), worked out once per
/// title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Windows {
    /// The window length T, in milliseconds.
    pub target_ms: u32,
    /// Each track's duration as the module reads it, in milliseconds, in index order.
    pub durations_ms: Vec<u64>,
    /// Cuts for a set with a video: the title's segments placed by window, every track cut
    /// as the title's plan cuts it, the windows between them empty.
    pub with_video: SegmentPlan,
    /// For each window of `with_video`, the title's segment (0-based) it holds.
    pub title_segments: Vec<Option<usize>>,
    /// Cuts for a set of audio alone: audio tracks cut at the windows (video tracks as in
    /// `with_video`).
    pub audio_alone: SegmentPlan,
    /// Windows the title's segments reach: the last one's window, plus one.
    reached: usize,
}

/// The error for a title that would need more than [`MAX_WINDOWS`] windows.
fn too_many(windows: u64) -> PackageError {
    PackageError::TooManyWindows {
        windows,
        limit: MAX_WINDOWS as u64,
    }
}

impl Windows {
    /// Number the segments of `index`, cut by `plan`, by windows of the plan's target;
    /// `durations_ms` are its tracks' durations as the module reads them, in index order
    /// ([`module_duration_ms`] of each, for a title not clipped).
    ///
    /// # Errors
    /// [`PackageError::TooManyWindows`] when the title would need more than
    /// [`MAX_WINDOWS`] windows (its duration, or a key frame's time, is that far out).
    pub fn new(
        index: &MediaIndex,
        plan: &SegmentPlan,
        durations_ms: Vec<u64>,
    ) -> Result<Self, PackageError> {
        let target_ms = plan.target_ms.max(1);
        let longest = durations_ms.iter().copied().max().unwrap_or(0);
        let by_duration = longest.div_ceil(u64::from(target_ms));
        if by_duration > MAX_WINDOWS as u64 {
            return Err(too_many(by_duration));
        }
        let clock = Clock::of(index, plan, target_ms);
        // The window each of the title's segments starts in, strictly increasing (a
        // segment starts at the first key frame at or after a multiple of T, so only a file
        // whose times run backwards could put two in one window: the later moves on).
        let mut windows: Vec<usize> = Vec::with_capacity(plan.segment_count);
        for segment in 0..plan.segment_count {
            let start = clock.segment_start(segment);
            let window = start
                .map_or(0, |t| clock.window_of(t))
                .max(windows.last().map_or(0, |w| w.saturating_add(1)));
            if window >= MAX_WINDOWS {
                return Err(too_many(window as u64));
            }
            windows.push(window);
        }
        let reached = windows.last().map_or(0, |w| w + 1);
        let count = reached.max(by_duration as usize).max(1);
        let mut title_segments = vec![None; count];
        for (segment, window) in windows.iter().enumerate() {
            if let Some(slot) = title_segments.get_mut(*window) {
                *slot = Some(segment);
            }
        }
        let with_video = placed_plan(plan, &title_segments);
        let audio_alone = audio_plan(index, &with_video, &clock, &durations_ms, count);
        Ok(Self {
            target_ms,
            durations_ms,
            with_video,
            title_segments,
            audio_alone,
            reached,
        })
    }

    /// Whether the set of tracks at `positions` has a video (it is cut by `with_video`).
    pub fn has_video(index: &MediaIndex, positions: &[usize]) -> bool {
        (positions.iter()).any(|p| index.tracks.get(*p).map(|t| t.kind) == Some(TrackKind::Video))
    }

    /// The cuts of the set of tracks at `positions`.
    pub fn plan_for(&self, index: &MediaIndex, positions: &[usize]) -> &SegmentPlan {
        match Self::has_video(index, positions) {
            true => &self.with_video,
            false => &self.audio_alone,
        }
    }

    /// The set's longest duration as the module reads it, in milliseconds.
    fn duration_ms(&self, positions: &[usize]) -> u64 {
        (positions.iter())
            .filter_map(|p| self.durations_ms.get(*p))
            .copied()
            .max()
            .unwrap_or(0)
    }

    /// How many segments the set of tracks at `positions` lists: the module's count, or,
    /// for a set with a video, as many as the title's segments reach when that is more (a
    /// video presented past its own duration, behind an empty edit: every one of its
    /// segments keeps a name). At least one.
    pub fn count(&self, index: &MediaIndex, positions: &[usize]) -> usize {
        let by_duration = self
            .duration_ms(positions)
            .div_ceil(u64::from(self.target_ms));
        let by_duration = usize::try_from(by_duration).unwrap_or(usize::MAX);
        let count = match Self::has_video(index, positions) {
            true => by_duration.max(self.reached),
            false => by_duration,
        };
        count.clamp(1, self.with_video.segment_count.max(1))
    }

    /// The durations (milliseconds) the module states for the set's `count` segments: T
    /// each, the last what remains of the set's duration (T when nothing does: a count
    /// past the duration).
    pub fn stated_ms(&self, positions: &[usize], count: usize) -> Vec<u64> {
        let target = u64::from(self.target_ms);
        let before_last = target.saturating_mul(count.saturating_sub(1) as u64);
        let last = match self.duration_ms(positions).checked_sub(before_last) {
            Some(rest) if rest > 0 => rest.min(target),
            _ => target,
        };
        let mut stated = vec![target; count];
        if let Some(slot) = stated.last_mut() {
            *slot = last;
        }
        stated
    }
}

/// A track's duration as nginx-vod-module reads it, in milliseconds rounded to nearest
/// (`rescale_time` of `mdhd`): its samples' total. Of a clip, the module counts
/// `min(D, clipTo) - clipFrom` of the whole track's (`mp4_parser.c`).
pub fn module_duration_ms(track: &TrackIndex) -> u64 {
    let table = &track.samples;
    let first = table.dts.first().copied().unwrap_or(0);
    let ticks = u128::from(table.end_dts().saturating_sub(first));
    let timescale = u128::from(track.timescale.max(1));
    u64::try_from((ticks * 1000 + timescale / 2) / timescale).unwrap_or(u64::MAX)
}

/// The windows' clock: the reference track's output times from its first presentation,
/// as `plan::reference_cuts` measures them.
struct Clock<'a> {
    reference: Option<(&'a TrackIndex, &'a TrackPlan)>,
    origin: u64,
    window_ticks: u64,
}

impl<'a> Clock<'a> {
    fn of(index: &'a MediaIndex, plan: &'a SegmentPlan, target_ms: u32) -> Self {
        let position = (index.tracks.iter())
            .position(|t| t.kind == TrackKind::Video)
            .unwrap_or(0);
        let reference = index.tracks.get(position).zip(plan.tracks.get(position));
        let (origin, window_ticks) = match reference {
            Some((track, track_plan)) if !track.samples.is_empty() => (
                track_plan.output_pts(&track.samples, 0),
                (u64::from(target_ms) * u64::from(track.timescale) / 1000).max(1),
            ),
            _ => (0, 1),
        };
        Self {
            reference,
            origin,
            window_ticks,
        }
    }

    /// Output presentation time (reference ticks) of the first sample of the title's
    /// segment `segment`.
    fn segment_start(&self, segment: usize) -> Option<u64> {
        let (track, plan) = self.reference?;
        let first = plan.samples(segment)?.start;
        (first < track.samples.len()).then(|| plan.output_pts(&track.samples, first))
    }

    /// The window (0-based) reference time `t` falls in.
    fn window_of(&self, t: u64) -> usize {
        usize::try_from(t.saturating_sub(self.origin) / self.window_ticks).unwrap_or(usize::MAX)
    }

    /// The start of window `window`, in ticks of `timescale`, rounded down (as the title's
    /// cuts are converted between tracks).
    fn window_start(&self, window: usize, timescale: u32) -> u64 {
        let reference = self.reference.map_or(1, |(t, _)| t.timescale.max(1));
        let t = u128::from(self.origin) + u128::from(self.window_ticks) * window as u128;
        let t = t * u128::from(timescale) / u128::from(reference);
        u64::try_from(t).unwrap_or(u64::MAX)
    }
}

/// `plan` with its segments moved to their windows (`title_segments`): window k holds the
/// samples of the title's segment placed there, and none when none is.
fn placed_plan(plan: &SegmentPlan, title_segments: &[Option<usize>]) -> SegmentPlan {
    let tracks = (plan.tracks.iter())
        .map(|track| {
            let n = track.first_samples.last().copied().unwrap_or(0);
            // A window starts where the next placed segment does: empty ones there too.
            let mut first = vec![n; title_segments.len() + 1];
            let mut next = n;
            for (window, segment) in title_segments.iter().enumerate().rev() {
                if let Some(segment) = segment {
                    next = track.first_samples.get(*segment).copied().unwrap_or(n);
                }
                if let Some(slot) = first.get_mut(window) {
                    *slot = next;
                }
            }
            TrackPlan {
                first_samples: first,
                ..track.clone()
            }
        })
        .collect();
    SegmentPlan {
        target_ms: plan.target_ms,
        segment_count: title_segments.len(),
        tracks,
    }
}

/// `with_video` with each audio track cut at the windows: window k holds the samples
/// presented in it, window `own - 1` (the track's own count) the rest, later ones none.
fn audio_plan(
    index: &MediaIndex,
    with_video: &SegmentPlan,
    clock: &Clock<'_>,
    durations_ms: &[u64],
    count: usize,
) -> SegmentPlan {
    let target = u64::from(with_video.target_ms.max(1));
    let tracks = (with_video.tracks.iter().zip(&index.tracks))
        .zip(durations_ms)
        .map(|((plan, track), duration)| {
            if track.kind != TrackKind::Audio {
                return plan.clone();
            }
            let own = usize::try_from(duration.div_ceil(target))
                .unwrap_or(usize::MAX)
                .clamp(1, count);
            let table = &track.samples;
            let n = table.len() as u32;
            let mut first = Vec::with_capacity(count + 1);
            first.push(0u32);
            for window in 1..=count {
                let at = match window < own {
                    true => {
                        let t = clock.window_start(window, track.timescale);
                        let shift = plan.dts_shift;
                        table.dts.partition_point(|d| d.saturating_add(shift) < t) as u32
                    }
                    false => n,
                };
                let last = first.last().copied().unwrap_or(0);
                first.push(at.clamp(last, n));
            }
            TrackPlan {
                first_samples: first,
                ..plan.clone()
            }
        })
        .collect();
    SegmentPlan {
        target_ms: with_video.target_ms,
        segment_count: count,
        tracks,
    }
}

#[cfg(test)]
mod tests;
