//! The segment plan: where every track is cut, and how its times map to the output.
//!
//! Invariants it keeps: all tracks of a title are cut at the same presentation times (the
//! reference track on sync samples at or after each multiple of the target duration, the
//! others at the first sample presented at or after those times); output pts = source
//! movie pts + one title-wide shift `S` for every track, edit lists and B-frame delay
//! included; and the plan is a pure function of the index and the target duration, so every
//! replica names and cuts segments identically.

use std::ops::Range;

use crate::media::{MediaIndex, SampleTable, TrackIndex, TrackKind};

/// How a title is cut into segments; built once per title and cached with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentPlan {
    /// Target segment duration in milliseconds.
    pub target_ms: u32,
    /// Number of segments, the same for every track.
    pub segment_count: usize,
    /// Per-track cuts and time mapping, in `MediaIndex::tracks` order.
    pub tracks: Vec<TrackPlan>,
}

/// One track's cuts and its mapping from source to output time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackPlan {
    /// Track id (as in the source).
    pub track_id: u32,
    /// Track timescale (ticks per second).
    pub timescale: u32,
    /// Ticks added to each source decode time to get the output decode time (`tfdt`).
    pub dts_shift: u64,
    /// Subtracted from each source composition offset to get the output one.
    pub cts_base: i32,
    /// The composition delay stated by the init segment's edit (`elst` media_time, ticks):
    /// subtracted from decode time plus composition offset to get the presentation time.
    pub composition_delay: u32,
    /// The title-wide shift S in this track's ticks (rounded up): output times minus S are
    /// source movie times. DASH states it as `presentationTimeOffset`.
    pub title_shift_ticks: u64,
    /// First sample of each segment: `segment_count + 1` entries, the last being the
    /// sample count, so segment `k` holds samples `first_samples[k]..first_samples[k + 1]`.
    pub first_samples: Vec<u32>,
}

impl TrackPlan {
    /// The samples of segment `segment` (0-based), or `None` past the end.
    pub fn samples(&self, segment: usize) -> Option<Range<usize>> {
        let start = *self.first_samples.get(segment)? as usize;
        let end = *self.first_samples.get(segment.checked_add(1)?)? as usize;
        Some(start..end)
    }

    /// Output decode time of sample `i`.
    pub fn output_dts(&self, table: &SampleTable, i: usize) -> u64 {
        table
            .dts
            .get(i)
            .map_or_else(|| table.end_dts(), |d| *d)
            .saturating_add(self.dts_shift)
    }

    /// Output presentation time of sample `i` (after the init segment's edit).
    pub fn output_pts(&self, table: &SampleTable, i: usize) -> u64 {
        let cts = i64::from(table.cts_offset(i)) - i64::from(self.cts_base);
        self.output_dts(table, i)
            .saturating_add(u64::try_from(cts).unwrap_or(0))
            .saturating_sub(u64::from(self.composition_delay))
    }

    /// Decode time of sample `i` on the presentation timeline, for containers without
    /// edits (MPEG-TS): the output decode time less the composition delay, so that
    /// `output_pts - presentation_dts` is the sample's (non-negative) composition offset.
    pub fn presentation_dts(&self, table: &SampleTable, i: usize) -> i128 {
        i128::from(self.output_dts(table, i)) - i128::from(self.composition_delay)
    }

    /// Output start time and duration (ticks) of segment `segment`: it starts when its
    /// first sample (a sync sample) is presented and lasts as long as its samples' decode
    /// durations, so consecutive segments follow on when their first samples share the
    /// same composition delay (closed GOPs).
    pub fn segment_span(&self, table: &SampleTable, segment: usize) -> Option<(u64, u64)> {
        let range = self.samples(segment)?;
        let start = self.output_pts(table, range.start);
        let duration = self
            .output_dts(table, range.end)
            .saturating_sub(self.output_dts(table, range.start));
        Some((start, duration))
    }
}

/// Cut `index` into segments of about `target_ms`.
pub fn plan_segments(index: &MediaIndex, target_ms: u32) -> SegmentPlan {
    plan_segments_forced(index, target_ms, &[])
}

/// [`plan_segments`] with a cut forced at each of `forced`, sample indexes of sync samples
/// of the reference track (ascending): ad breaks (`break_cuts.rs`). The target duration's
/// cadence starts again from each forced cut, so the segment after a break is a whole one.
pub(super) fn plan_segments_forced(
    index: &MediaIndex,
    target_ms: u32,
    forced: &[u32],
) -> SegmentPlan {
    let target_ms = target_ms.max(1);
    let (shift_num, shift_den) = title_shift(&index.tracks);
    let mut tracks: Vec<TrackPlan> = index
        .tracks
        .iter()
        .map(|t| {
            let base = cts_base(t);
            let delay = composition_delay(t);
            // S in this track's ticks, rounded up so the shift below is never negative
            // (exact for the track that sets S).
            let shift_ticks = (shift_num * i128::from(t.timescale)).div_euclid(shift_den)
                + i128::from((shift_num * i128::from(t.timescale)).rem_euclid(shift_den) != 0);
            let shift = shift_ticks
                + i128::from(base)
                + i128::from(delay)
                + i128::from(t.edits.leading_empty_ticks())
                - i128::from(t.edits.first_media_time_ticks());
            TrackPlan {
                track_id: t.track_id,
                timescale: t.timescale,
                dts_shift: u64::try_from(shift.max(0)).unwrap_or(u64::MAX),
                cts_base: base,
                composition_delay: delay,
                title_shift_ticks: u64::try_from(shift_ticks.max(0)).unwrap_or(u64::MAX),
                first_samples: Vec::new(),
            }
        })
        .collect();

    let reference = index
        .tracks
        .iter()
        .position(|t| t.kind == TrackKind::Video)
        .unwrap_or(0);
    let (Some(ref_track), Some(ref_plan)) = (index.tracks.get(reference), tracks.get(reference))
    else {
        return SegmentPlan {
            target_ms,
            segment_count: 0,
            tracks,
        };
    };

    // Cut times on the reference track, as (output pts in its ticks, first sample).
    let cuts = reference_cuts(ref_track, ref_plan, target_ms, forced);
    let ref_timescale = u128::from(ref_track.timescale);
    for (plan, track) in tracks.iter_mut().zip(&index.tracks) {
        let n = track.samples.len() as u32;
        let mut first = Vec::with_capacity(cuts.len() + 2);
        first.push(0u32);
        for (cut_pts, cut_sample) in &cuts {
            let index_at = if std::ptr::eq(track, ref_track) {
                *cut_sample
            } else {
                let t = u128::from(*cut_pts) * u128::from(track.timescale) / ref_timescale;
                let t = u64::try_from(t).unwrap_or(u64::MAX);
                let shift = plan.dts_shift;
                track
                    .samples
                    .dts
                    .partition_point(|d| d.saturating_add(shift) < t) as u32
            };
            // Never step backwards: a later cut can only start at or after the previous one.
            let last = first.last().copied().unwrap_or(0);
            first.push(index_at.clamp(last, n));
        }
        first.push(n);
        plan.first_samples = first;
    }
    SegmentPlan {
        target_ms,
        segment_count: cuts.len() + 1,
        tracks,
    }
}

/// S, the title-wide shift, as an exact fraction of a second (numerator, denominator): the
/// largest lead of any of `tracks` (as [`super::present`] left them), never negative.
pub(super) fn title_shift(tracks: &[TrackIndex]) -> (i128, i128) {
    tracks
        .iter()
        .map(|t| (lead_ticks(t), i128::from(t.timescale.max(1))))
        .fold((0i128, 1i128), |(n, d), (tn, td)| {
            if tn * d > n * td {
                (tn, td)
            } else {
                (n, d)
            }
        })
}

/// The composition offset base of a track: the most negative offset (ctts v1), else 0, so
/// every output offset is non-negative. Negative offsets (trun v1) would let the first frame
/// start at its decode time, but ffmpeg's demuxer (5.x) then presents the whole track late
/// by the largest negative offset, shifting video against audio; non-negative offsets with
/// a title-wide start shift read the same in every player.
fn cts_base(track: &TrackIndex) -> i32 {
    track
        .samples
        .cts_offsets
        .iter()
        .copied()
        .min()
        .unwrap_or(0)
        .min(0)
}

/// The composition delay of a video track: its first sample's output composition offset
/// (see [`cts_base`]), which its init segment's edit takes back; 0 for other tracks, and
/// at most `i32::MAX` (an `elst` v0 media_time).
pub(crate) fn composition_delay(track: &TrackIndex) -> u32 {
    if track.kind != TrackKind::Video || track.samples.is_empty() {
        return 0;
    }
    let offset = i64::from(track.samples.cts_offset(0)) - i64::from(cts_base(track));
    u32::try_from(offset.clamp(0, i64::from(i32::MAX))).unwrap_or(0)
}

/// How far (in the track's ticks) its first output decode time would fall before zero if
/// it were not shifted and had no composition delay: `media_time - cts_base - empty`. A
/// video track's delay counts here, though its edit takes it back: it gives audio room
/// for pre-roll before the presentation start (`edit::present_title`) and keeps every
/// presentation time where it was before the edit was written.
fn lead_ticks(track: &TrackIndex) -> i128 {
    i128::from(track.edits.first_media_time_ticks())
        - i128::from(cts_base(track))
        - i128::from(track.edits.leading_empty_ticks())
}

/// Cut points of the reference track: the first sync sample at or after each multiple of
/// the target duration, as (output pts, sample index), excluding sample 0; and each of
/// `forced` (ascending sync sample indexes), after which the multiples count from it.
fn reference_cuts(
    track: &TrackIndex,
    plan: &TrackPlan,
    target_ms: u32,
    forced: &[u32],
) -> Vec<(u64, u32)> {
    let table = &track.samples;
    let target_ticks = (u64::from(target_ms) * u64::from(track.timescale) / 1000).max(1);
    let pts = |i: usize| plan.output_pts(table, i);
    let first_pts = if table.is_empty() { 0 } else { pts(0) };
    // The next multiple of the target after the start; `None` once past u64 (times from a
    // hostile file can saturate), after which there are no more cuts.
    let mut next_cut = first_pts.checked_add(target_ticks);
    // Where the multiples count from: the start, then the last forced cut.
    let mut origin = first_pts;
    let mut cuts = Vec::new();
    let mut consider = |i: usize, cuts: &mut Vec<(u64, u32)>| {
        let t = pts(i);
        let is_forced = u32::try_from(i).is_ok_and(|i| forced.binary_search(&i).is_ok());
        if is_forced && i > 0 {
            cuts.push((t, i as u32));
            next_cut = t.checked_add(target_ticks);
            origin = t;
            return;
        }
        if let Some(cut) = next_cut.filter(|cut| i > 0 && t >= *cut) {
            cuts.push((t, i as u32));
            // The first multiple after t, in one step: a file can make t jump by billions
            // of targets at once (`cut > origin`, so this cannot underflow).
            let steps = (t - origin) / target_ticks + 1;
            next_cut = steps
                .checked_mul(target_ticks)
                .and_then(|d| origin.checked_add(d));
            debug_assert!(next_cut.is_none_or(|next| next > t && next > cut));
        }
    };
    match &table.sync {
        Some(sync) => sync.iter().for_each(|&i| consider(i as usize, &mut cuts)),
        None => (0..table.len()).for_each(|i| consider(i, &mut cuts)),
    }
    cuts
}

#[cfg(test)]
mod tests {
    //! The segment planner over built tracks: where tracks are cut, the A/V relationship kept,
    //! and hostile times.

    use super::*;
    use crate::media::{CodecInfo, Edit, EditList};
    use crate::source::ObjectIdentity;

    /// An edit list of an optional leading empty edit and one media edit to the end.
    fn edits(empty_ticks: u64, media_time_ticks: u64) -> EditList {
        let mut edits = Vec::new();
        if empty_ticks > 0 {
            edits.push(Edit {
                start_ticks: 0,
                duration_ticks: empty_ticks,
                media_time_ticks: None,
            });
        }
        edits.push(Edit {
            start_ticks: empty_ticks,
            duration_ticks: u64::MAX / 4,
            media_time_ticks: Some(media_time_ticks),
        });
        EditList { edits }
    }

    fn track(
        track_id: u32,
        kind: TrackKind,
        timescale: u32,
        n: usize,
        delta: u32,
        edits: EditList,
    ) -> TrackIndex {
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
            edits,
            samples: SampleTable {
                sizes: vec![1; n],
                offsets: (0..n as u64).collect(),
                dts: (0..n as u64).map(|i| i * u64::from(delta)).collect(),
                durations: vec![delta; n],
                cts_offsets: Vec::new(),
                sync: None,
            },
            captions: Vec::new(),
        }
    }

    /// 10 s of 30 fps video with a sync sample every second and a 2-frame B-frame delay,
    /// and 48 kHz AAC whose edit list skips 1024 priming samples.
    fn av_index() -> MediaIndex {
        let mut video = track(1, TrackKind::Video, 15360, 300, 512, edits(0, 1024));
        video.samples.cts_offsets = (0..300)
            .map(|i| if i % 30 == 0 { 1024 } else { 1536 })
            .collect();
        video.samples.sync = Some((0..10).map(|i| i * 30).collect());
        let audio = track(2, TrackKind::Audio, 48000, 469, 1024, edits(0, 1024));
        MediaIndex {
            identity: ObjectIdentity {
                size: 0,
                version: String::new(),
            },
            movie_timescale: 1000,
            tracks: vec![video, audio],
            text_tracks: Vec::new(),
        }
    }

    #[test]
    fn video_is_cut_on_sync_samples_at_the_target() {
        let plan = plan_segments(&av_index(), 4000);
        assert_eq!(plan.segment_count, 3);
        assert_eq!(plan.tracks[0].first_samples, [0, 120, 240, 300]);
    }

    #[test]
    fn audio_is_cut_at_the_same_times_as_video() {
        let index = av_index();
        let plan = plan_segments(&index, 4000);
        let (video, audio) = (&plan.tracks[0], &plan.tracks[1]);
        for segment in 1..plan.segment_count {
            let (v_start, _) = video
                .segment_span(&index.tracks[0].samples, segment)
                .unwrap();
            let (a_start, _) = audio
                .segment_span(&index.tracks[1].samples, segment)
                .unwrap();
            let v = v_start as f64 / 15360.0;
            let a = a_start as f64 / 48000.0;
            // Audio starts at the first frame at or after the video cut: within one frame.
            assert!(
                a >= v && a - v < 1024.0 / 48000.0,
                "segment {segment}: {v} vs {a}"
            );
        }
    }

    #[test]
    fn edit_lists_and_composition_delay_keep_the_av_relationship() {
        let index = av_index();
        let plan = plan_segments(&index, 6000);
        let (video, audio) = (&plan.tracks[0], &plan.tracks[1]);
        // Source movie time of video sample 0 is (0 + 1024 - 1024) / 15360 = 0 s, of audio
        // sample 0 is (0 - 1024) / 48000 s. The output must keep that difference.
        let video_pts = video.output_pts(&index.tracks[0].samples, 0) as f64 / 15360.0;
        let audio_pts = audio.output_pts(&index.tracks[1].samples, 0) as f64 / 48000.0;
        let source_difference = 0.0 - (-1024.0 / 48000.0);
        let output_difference = video_pts - audio_pts;
        assert!((output_difference - source_difference).abs() < 0.001);
        // The title shift S is video's B-frame delay (2 frames): its first frame is presented
        // at S, and audio's priming starts at S - 1024. The delay is also the init segment's
        // edit, so video's first decode time is S too: its first picture at its `tfdt`.
        assert_eq!(video.composition_delay, 1024);
        assert_eq!(audio.composition_delay, 0);
        assert_eq!(video.dts_shift, 1024);
        assert_eq!(video.output_pts(&index.tracks[0].samples, 0), 1024);
        assert_eq!(audio.dts_shift, 3200 - 1024);
    }

    #[test]
    fn a_delayed_track_keeps_its_empty_edit() {
        let mut index = av_index();
        index.tracks[1].edits = edits(24000, 0);
        let plan = plan_segments(&index, 6000);
        // Video sets S (its 2-frame delay, 3200 audio ticks), and is presented from S at its
        // first decode time; audio starts 0.5 s after it.
        assert_eq!(plan.tracks[0].dts_shift, 1024);
        assert_eq!(plan.tracks[0].output_pts(&index.tracks[0].samples, 0), 1024);
        assert_eq!(plan.tracks[1].dts_shift, 3200 + 24000);
    }

    #[test]
    fn the_plan_is_deterministic_and_covers_every_sample() {
        let index = av_index();
        let a = plan_segments(&index, 2000);
        assert_eq!(a, plan_segments(&index, 2000));
        for (plan, track) in a.tracks.iter().zip(&index.tracks) {
            assert_eq!(plan.first_samples.len(), a.segment_count + 1);
            assert_eq!(
                *plan.first_samples.last().unwrap() as usize,
                track.samples.len()
            );
            assert!(plan.first_samples.windows(2).all(|w| w[0] <= w[1]));
        }
    }

    /// Given decode times that jump by billions of targets (1 tick per second, deltas of
    /// 2^32 - 1), then each jump is one step: every sample starts a segment.
    #[test]
    fn huge_time_jumps_cost_one_step_each() {
        let mut index = av_index();
        index.tracks = vec![track(
            1,
            TrackKind::Video,
            1,
            1000,
            u32::MAX,
            EditList::default(),
        )];
        let plan = plan_segments(&index, 6000);
        assert_eq!(plan.segment_count, 1000);
    }

    /// Given an empty edit so long that every output time saturates at u64::MAX, then the
    /// plan is one segment, not an endless search for the next cut.
    #[test]
    fn saturated_times_end_the_cutting() {
        let mut index = av_index();
        index.tracks[0].edits = edits(u64::MAX, 0);
        index.tracks.truncate(1);
        let plan = plan_segments(&index, 6000);
        assert_eq!(plan.segment_count, 1);
        assert_eq!(plan.tracks[0].first_samples, [0, 300]);
    }

    #[test]
    fn an_audio_only_title_is_cut_on_any_sample() {
        let mut index = av_index();
        index.tracks.remove(0);
        let plan = plan_segments(&index, 6000);
        assert_eq!(plan.segment_count, 2);
    }
}
