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
mod tests {
    //! nginx-vod-module's numbering over built titles: the module's count from the longest
    //! track, the windows with no key frame, audio cut at the windows, hostile times.

    use super::*;
    use crate::media::{CodecInfo, Edit, EditList, SampleTable};
    use crate::package::Title;
    use crate::source::ObjectIdentity;

    /// One media edit to the end, starting at media time `media_time` (the AAC priming, a
    /// B-frame delay), as ffmpeg writes it.
    fn skipping(media_time: u64) -> EditList {
        EditList {
            edits: vec![Edit {
                start_ticks: 0,
                duration_ticks: u64::MAX / 4,
                media_time_ticks: Some(media_time),
            }],
        }
    }

    fn track(track_id: u32, kind: TrackKind, timescale: u32, durations: Vec<u32>) -> TrackIndex {
        let n = durations.len();
        let dts = (durations.iter())
            .scan(0u64, |t, d| {
                let at = *t;
                *t += u64::from(*d);
                Some(at)
            })
            .collect();
        TrackIndex {
            track_id,
            kind,
            timescale,
            language: None,
            codec: CodecInfo {
                fourcc: *b"test",
                rfc6381: String::new(),
                width: 0,
                height: 0,
                channels: 0,
                sample_rate: 0,
                color: None,
                dolby_vision: None,
                dolby_channel_mask: None,
            },
            sample_description: bytes::Bytes::new(),
            tkhd_width: 0,
            tkhd_height: 0,
            display_matrix: crate::media::UNITY_MATRIX,
            edits: EditList::default(),
            samples: SampleTable {
                sizes: vec![1; n],
                offsets: (0..n as u64).collect(),
                dts,
                durations,
                cts_offsets: Vec::new(),
                sync: None,
            },
            captions: Vec::new(),
        }
    }

    /// `seconds` of 25 fps video (12800 Hz), a key frame every `gop` frames, two B-frames
    /// delayed by the edit list as ffmpeg writes them.
    fn video(seconds: u32, gop: u32) -> TrackIndex {
        let frames = seconds * 25;
        let mut video = track(1, TrackKind::Video, 12800, vec![512; frames as usize]);
        video.samples.cts_offsets = (0..frames)
            .map(|i| if i % gop == 0 { 1024 } else { 1536 })
            .collect();
        video.samples.sync = Some((0..frames).step_by(gop as usize).collect());
        video.edits = skipping(1024);
        video
    }

    /// 48 kHz AAC lasting `seconds` after its 1024 priming samples, which the edit list skips:
    /// whole frames, the last one short, as ffmpeg's encoder ends a stream.
    fn aac(seconds: f64) -> TrackIndex {
        let total = 1024 + (seconds * 48000.0).round() as u32;
        let mut durations = vec![1024; (total / 1024) as usize];
        if !total.is_multiple_of(1024) {
            durations.push(total % 1024);
        }
        let mut audio = track(2, TrackKind::Audio, 48000, durations);
        audio.edits = skipping(1024);
        audio
    }

    fn title(tracks: Vec<TrackIndex>) -> Title {
        let index = MediaIndex {
            identity: ObjectIdentity {
                size: 0,
                version: String::new(),
            },
            movie_timescale: 1000,
            tracks,
            text_tracks: Vec::new(),
        };
        Title::new(index, 6000).unwrap()
    }

    /// `title` numbered, its tracks' durations read as the module reads a whole file's.
    fn windows(title: &Title) -> Result<Windows, PackageError> {
        let durations = title.index.tracks.iter().map(module_duration_ms).collect();
        Windows::new(&title.index, &title.plan, durations)
    }

    /// The samples of window `window` of track `pos` in `plan`.
    fn samples(plan: &SegmentPlan, pos: usize, window: usize) -> std::ops::Range<usize> {
        plan.tracks[pos].samples(window).unwrap()
    }

    /// Given the default ffmpeg encode of 30 s (video 30.000 s, AAC 30.021 s counting its
    /// priming), then the muxed and audio sets list six segments, the video five; the sixth
    /// states the 21 ms left, as the module's `index-v1-a1.m3u8` does
    /// (`#EXTINF:6.000` five times, then `#EXTINF:0.021`).
    #[test]
    fn an_aac_tail_past_the_video_lists_one_more_segment() {
        let title = title(vec![video(30, 50), aac(30.0)]);
        let windows = windows(&title).unwrap();
        assert_eq!(windows.durations_ms, [30000, 30021]);
        assert_eq!(windows.count(&title.index, &[0, 1]), 6);
        assert_eq!(windows.count(&title.index, &[0]), 5);
        assert_eq!(windows.count(&title.index, &[1]), 6);
        assert_eq!(
            windows.stated_ms(&[0, 1], 6),
            [6000, 6000, 6000, 6000, 6000, 21]
        );
        assert_eq!(windows.stated_ms(&[0], 5), [6000; 5]);
    }

    /// Given the same file, then with a video the windows hold the title's own segments, the
    /// audio tail riding with the last video and the sixth window empty (the module's muxed
    /// `seg-6-v1-a1.m4s` has no sample either); the audio alone is cut at the windows, and
    /// as the edit list ends the AAC with the video its sixth window is empty too.
    #[test]
    fn the_windows_hold_the_title_segments_and_audio_is_cut_at_the_windows() {
        let title = title(vec![video(30, 50), aac(30.0)]);
        let windows = windows(&title).unwrap();
        assert_eq!(title.plan.segment_count, 5);
        assert_eq!(
            windows.title_segments,
            [Some(0), Some(1), Some(2), Some(3), Some(4), None]
        );
        for pos in 0..2 {
            for k in 0..5 {
                assert_eq!(
                    samples(&windows.with_video, pos, k),
                    title.plan.tracks[pos].samples(k).unwrap()
                );
            }
            assert!(samples(&windows.with_video, pos, 5).is_empty());
        }
        let audio = &title.index.tracks[1];
        let n = audio.samples.len();
        assert_eq!(samples(&windows.with_video, 1, 4).end, n);
        // Audio alone: window k holds the frames presented in [6k, 6k + 6) s.
        let plan = &windows.audio_alone;
        for k in 1..5 {
            let first = samples(plan, 1, k).start;
            let at = |i: usize| plan.tracks[1].output_pts(&audio.samples, i);
            let start = windows.with_video.tracks[0].output_pts(&title.index.tracks[0].samples, 0)
                * 48000
                / 12800
                + k as u64 * 288_000;
            assert!(at(first) >= start && at(first - 1) < start, "window {k}");
        }
        assert_eq!(samples(plan, 1, 4).end, n);
        assert!(samples(plan, 1, 5).is_empty());
    }

    /// Given AAC that outlasts a 30 s video by 2 s, then the audio alone fills a sixth,
    /// short window from 30 s to its end (the module's `seg-6-a1.m4s`, `#EXTINF:2.021`),
    /// while with the video it rides in the fifth and the sixth is empty.
    #[test]
    fn audio_that_outlasts_the_video_fills_the_windows_after_it() {
        let title = title(vec![video(30, 50), aac(32.0)]);
        let windows = windows(&title).unwrap();
        assert_eq!(windows.count(&title.index, &[1]), 6);
        assert_eq!(windows.stated_ms(&[1], 6)[5], 2021);
        let n = title.index.tracks[1].samples.len();
        let tail = samples(&windows.audio_alone, 1, 5);
        assert_eq!(tail.end, n);
        // The 1024-sample frames presented from 30 s to 32 s: 93 (the 94th from the end
        // starts 5 ms before 30 s).
        assert_eq!(tail.len(), 93);
        assert_eq!(samples(&windows.with_video, 1, 4).end, n);
        assert!(samples(&windows.with_video, 1, 5).is_empty());
    }

    /// Given a key frame every 10 s, then windows 2 and 4 (12-18 s, 24-30 s) start no
    /// segment and are empty, as the module's are, and the title's three segments keep
    /// windows 0, 1 and 3.
    #[test]
    fn a_window_without_a_key_frame_is_an_empty_segment() {
        let title = title(vec![video(30, 250), aac(30.0)]);
        let windows = windows(&title).unwrap();
        assert_eq!(title.plan.segment_count, 3);
        assert_eq!(
            windows.title_segments,
            [Some(0), Some(1), None, Some(2), None, None]
        );
        assert_eq!(windows.count(&title.index, &[0]), 5);
        assert_eq!(samples(&windows.with_video, 0, 1), 250..500);
        assert!(samples(&windows.with_video, 0, 2).is_empty());
        assert_eq!(samples(&windows.with_video, 0, 3), 500..750);
    }

    /// Given a title of audio alone, then its own cuts are the windows.
    #[test]
    fn audio_alone_in_the_title_is_cut_at_the_same_windows_either_way() {
        let title = title(vec![aac(30.0)]);
        let windows = windows(&title).unwrap();
        assert_eq!(windows.count(&title.index, &[0]), 6);
        for k in 0..5 {
            assert_eq!(
                samples(&windows.audio_alone, 0, k),
                samples(&windows.with_video, 0, k),
                "window {k}"
            );
        }
    }

    /// Given a key frame billions of seconds out (1 tick a second, deltas of 2^32 - 1), then
    /// the numbering is refused before windows that many are allocated.
    #[test]
    fn a_key_frame_past_the_window_limit_is_refused() {
        let huge = track(1, TrackKind::Video, 1, vec![u32::MAX; 3]);
        let title = title(vec![huge]);
        assert!(windows(&title).is_err());
    }
}
