//! A title over several files: the renditions a title document names, cut
//! together into one [`Title`] that HLS and DASH render like a single file's.
//!
//! The tracks of every file go into one index, their ids packed with the file's number
//! ([`document_track_id`]), and the planner cuts it as it would one file. Other video
//! renditions must have a key frame at each cut (within [`CUT_TOLERANCE_MS`]): a ladder
//! whose key frames do not line up is refused naming the rendition and the time, because a
//! player switching variants there would see a gap or an overlap.

use super::title::SidecarSubtitle;
use super::{document_track_id, plan_segments, PackageError, SegmentPlan, Title};
use crate::media::{MediaIndex, TrackIndex, TrackKind};
use crate::source::ObjectIdentity;

/// How far (ms) a video rendition's key frame may be from the reference's cut time: the
/// output keeps A/V to the millisecond, so a rendition cut further away would not.
pub const CUT_TOLERANCE_MS: u64 = 1;

/// What a document entry takes from its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LadderRole {
    /// Video tracks (a ladder rung). The first video entry also brings its audio and text
    /// tracks: the title's main audio and embedded subtitles.
    Video,
    /// Audio tracks (an extra language).
    Audio,
}

/// One entry of a title document with its file's title.
#[derive(Debug, Clone)]
pub struct LadderEntry<'a> {
    /// The entry as messages name it: `video[1] (title_360p.mp4)`.
    pub label: String,
    /// The file's number in the document (1-based, one per distinct file), which names
    /// its renditions (`f{file}`).
    pub file: u32,
    /// The file's title, as cached for the file alone.
    pub title: &'a Title,
    /// Which tracks of the file the entry offers.
    pub role: LadderRole,
    /// Only this track (`tkhd` track id), else every track of the role's kind.
    pub track: Option<u32>,
    /// Language override for the entry's tracks.
    pub language: Option<String>,
    /// Display name override for the entry's tracks.
    pub name: Option<String>,
}

/// Cut the renditions of `entries` together into one title whose version is `identity`
/// (one that covers the document and every file: see the server's titles module).
/// `entries` must start with the first video entry.
///
/// # Errors
/// [`PackageError::LadderTrack`] for an entry without a track of its kind (or without the
/// selected track), [`PackageError::LadderMisaligned`] when a video rendition has no key
/// frame at a cut, [`PackageError::LadderDuration`] when a rendition ends more than one
/// segment from the first video rendition, and the errors of [`Title::new`].
pub fn build_ladder(
    entries: &[LadderEntry<'_>],
    sidecars: Vec<SidecarSubtitle>,
    identity: ObjectIdentity,
    target_ms: u32,
) -> Result<Title, PackageError> {
    let mut tracks: Vec<TrackIndex> = Vec::new();
    let mut names: Vec<Option<String>> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    let mut text_tracks = Vec::new();
    let mut first_video = true;
    for entry in entries {
        let kind = match entry.role {
            LadderRole::Video => TrackKind::Video,
            LadderRole::Audio => TrackKind::Audio,
        };
        let main = entry.role == LadderRole::Video && first_video;
        let bad = |reason: String| PackageError::LadderTrack {
            rendition: entry.label.clone(),
            reason,
        };
        let mut found = false;
        for track in &entry.title.index.tracks {
            let selected = entry.track.is_none_or(|id| id == track.track_id);
            let take = (track.kind == kind && selected) || (main && track.kind == TrackKind::Audio);
            if !take {
                continue;
            }
            found |= track.kind == kind;
            let mut track = track.clone();
            let own_id = track.track_id;
            track.track_id = document_track_id(entry.file, own_id)
                .ok_or_else(|| bad(format!("track id {own_id} is too large")))?;
            if track.kind == kind {
                if let Some(language) = &entry.language {
                    track.language = Some(language.clone());
                }
            }
            names.push(entry.name.clone().filter(|_| track.kind == kind));
            labels.push(entry.label.clone());
            tracks.push(track);
        }
        if !found {
            let what = entry.track.map_or(String::new(), |id| format!(" {id}"));
            return Err(bad(format!(
                "the file has no {} track{what}",
                kind.as_str()
            )));
        }
        if main {
            for text in &entry.title.index.text_tracks {
                let mut text = text.clone();
                let own_id = text.track_id;
                text.track_id = document_track_id(entry.file, own_id)
                    .ok_or_else(|| bad(format!("track id {own_id} is too large")))?;
                text_tracks.push(text);
            }
            first_video = false;
        }
    }
    let movie_timescale = entries
        .first()
        .map_or(1000, |e| e.title.index.movie_timescale);
    let index = MediaIndex {
        identity,
        movie_timescale,
        tracks,
        text_tracks,
    };
    let mut plan = plan_segments(&index, target_ms);
    align_videos(&index, &mut plan, &labels)?;
    let mut title = Title::from_plan(index, plan)?;
    for rendition in &mut title.renditions {
        rendition.name = names.get(rendition.track_pos).cloned().flatten();
    }
    check_durations(&title, &labels)?;
    title.sidecars = sidecars;
    // Variants ordered by bandwidth (RFC 8216 4.3.4.2 leaves the order to us; players
    // start with the first listed): videos first, lowest peak first; audios as they were.
    let videos = title
        .renditions
        .iter()
        .take_while(|r| r.kind == TrackKind::Video)
        .count();
    if let Some(videos) = title.renditions.get_mut(..videos) {
        videos.sort_by_key(|r| r.peak_bandwidth);
    }
    Ok(title)
}

/// Cut every video track other than the reference (the first) at its key frame presented
/// at the reference's cut times, in place of the planner's decode-time cut (which is
/// right for audio but lands after the key frame of a video with composition delay).
pub(super) fn align_videos(
    index: &MediaIndex,
    plan: &mut SegmentPlan,
    labels: &[String],
) -> Result<(), PackageError> {
    let Some(reference) = index.tracks.iter().position(|t| t.kind == TrackKind::Video) else {
        return Ok(());
    };
    let (Some(ref_track), Some(ref_plan)) = (
        index.tracks.get(reference),
        plan.tracks.get(reference).cloned(),
    ) else {
        return Ok(());
    };
    let ref_scale = u128::from(ref_track.timescale.max(1));
    // Cut k's time on the output timeline, in the reference's ticks; k = 0 is its start.
    let cut_ticks: Vec<u64> = ref_plan
        .first_samples
        .iter()
        .take(plan.segment_count)
        .map(|s| ref_plan.output_pts(&ref_track.samples, *s as usize))
        .collect();
    for (pos, track) in index.tracks.iter().enumerate() {
        if pos == reference || track.kind != TrackKind::Video {
            continue;
        }
        let Some(track_plan) = plan.tracks.get_mut(pos) else {
            continue;
        };
        let table = &track.samples;
        let scale = u128::from(track.timescale.max(1));
        let n = table.len();
        // Times compared as pts * other timescale, exactly; the tolerance likewise.
        let tolerance = u128::from(CUT_TOLERANCE_MS) * scale * ref_scale / 1000;
        let end = u128::from(track_plan.output_dts(table, n)) * ref_scale;
        let mut first = Vec::with_capacity(cut_ticks.len() + 1);
        let mut from = 0usize;
        for (k, cut) in cut_ticks.iter().enumerate() {
            let target = u128::from(*cut) * scale;
            if k > 0 && target >= end {
                // The rendition ends before this cut: its later segments are empty (the
                // duration check below decides whether that is acceptable).
                first.push(n as u32);
                from = n;
                continue;
            }
            let mut found = None;
            for i in from..n {
                let pts = u128::from(track_plan.output_pts(table, i)) * ref_scale;
                if table.is_sync(i) && pts.abs_diff(target) <= tolerance {
                    found = Some(i);
                    break;
                }
                // A sample is presented at or after its decode time on the presentation
                // timeline (offsets are non-negative), so past the cut in decode order
                // nothing can match.
                let dts = track_plan.presentation_dts(table, i).max(0);
                let dts = u128::try_from(dts).unwrap_or(0) * ref_scale;
                if dts > target + tolerance {
                    break;
                }
            }
            let Some(i) = found else {
                let shift = u128::from(ref_plan.title_shift_ticks);
                let at_ms = (u128::from(*cut).saturating_sub(shift) * 1000 / ref_scale) as u64;
                return Err(PackageError::LadderMisaligned {
                    rendition: labels.get(pos).cloned().unwrap_or_default(),
                    at_ms,
                    hint: frame_rate_hint(ref_track, track),
                });
            };
            first.push(i as u32);
            from = i + 1;
        }
        first.push(n as u32);
        // Segment 0 always starts at the first sample, as the planner's does.
        if let Some(start) = first.first_mut() {
            *start = 0;
        }
        track_plan.first_samples = first;
    }
    Ok(())
}

/// ` (frame rates A and B cannot be cut together)` when the two tracks' average frame
/// rates differ by more than 0.01 % (30 against 29.97 differ by 0.1 %), else nothing.
fn frame_rate_hint(reference: &TrackIndex, other: &TrackIndex) -> String {
    let rate = |t: &TrackIndex| {
        let secs = t.samples.end_dts() as f64 / f64::from(t.timescale.max(1));
        t.samples.len() as f64 / secs.max(f64::EPSILON)
    };
    let (a, b) = (rate(reference), rate(other));
    if (a - b).abs() > a * 0.0001 {
        format!(" (frame rates {a:.3} and {b:.3} cannot be cut together)")
    } else {
        String::new()
    }
}

/// Every rendition from a file other than the first video's must end within one segment
/// (the reference's longest) of the first video rendition.
fn check_durations(title: &Title, labels: &[String]) -> Result<(), PackageError> {
    let Some(reference) = title.renditions.iter().find(|r| r.kind == TrackKind::Video) else {
        return Ok(());
    };
    let (Some(ref_plan), Some(ref_track)) = (
        title.plan.tracks.get(reference.track_pos),
        title.index.tracks.get(reference.track_pos),
    ) else {
        return Ok(());
    };
    let longest = (0..title.plan.segment_count)
        .filter_map(|k| ref_plan.segment_span(&ref_track.samples, k))
        .map(|(_, d)| d as f64 / f64::from(ref_track.timescale.max(1)))
        .fold(0.0, f64::max);
    let ref_label = labels.get(reference.track_pos);
    for rendition in &title.renditions {
        let label = labels.get(rendition.track_pos);
        if label == ref_label {
            continue;
        }
        if (rendition.end_secs - reference.end_secs).abs() > longest + 1e-6 {
            return Err(PackageError::LadderDuration {
                rendition: label.cloned().unwrap_or_default(),
                end_ms: (rendition.end_secs * 1000.0).round() as u64,
                reference_end_ms: (reference.end_secs * 1000.0).round() as u64,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Title documents' ladders over built tracks: cut at the first video rendition's times,
    //! and misaligned or incomplete ladders refused by name.

    use super::*;
    use crate::package::testing::track;
    use crate::package::{split_document_track_id, Rendition};

    fn title(tracks: Vec<TrackIndex>) -> Title {
        let index = MediaIndex {
            identity: ObjectIdentity {
                size: 1,
                version: "v".into(),
            },
            movie_timescale: 1000,
            tracks,
            text_tracks: Vec::new(),
        };
        Title::new(index, 1000).unwrap()
    }

    fn entry<'a>(n: u32, title: &'a Title, role: LadderRole) -> LadderEntry<'a> {
        LadderEntry {
            label: format!("entry {n}"),
            file: n,
            title,
            role,
            track: None,
            language: None,
            name: None,
        }
    }

    fn ladder(entries: &[LadderEntry<'_>]) -> Result<Title, PackageError> {
        let identity = ObjectIdentity {
            size: 1,
            version: "ladder".into(),
        };
        build_ladder(entries, Vec::new(), identity, 1000)
    }

    /// A video track at `fps_num/fps_den` frames per second over `timescale`, a key frame
    /// every `gop` frames, 10 s, `size` bytes a frame; with `b_frames`, composition offsets
    /// 0, +1, -1 frame in turn (ctts version 1: key frames presented at their decode time).
    fn video(timescale: u32, delta: u32, gop: u32, size: u32, b_frames: bool) -> TrackIndex {
        let mut t = track(1, true);
        let n = (10 * u64::from(timescale) / u64::from(delta)) as u32;
        t.timescale = timescale;
        t.samples.sizes = vec![size; n as usize];
        t.samples.offsets = (0..u64::from(n)).map(|i| i * u64::from(size)).collect();
        t.samples.dts = (0..u64::from(n)).map(|i| i * u64::from(delta)).collect();
        t.samples.durations = vec![delta; n as usize];
        t.samples.sync = Some((0..n).step_by(gop as usize).collect());
        if b_frames {
            let d = delta as i32;
            t.samples.cts_offsets = (0..n).map(|i| [0, d, -d][i as usize % 3]).collect();
        }
        t
    }

    /// Given three rungs (one over another timescale with B-frames) and an extra audio
    /// file, then every video rendition is cut at the first one's times, names say which
    /// file, the extra audio takes the document's language and name, and the variants are
    /// ordered by bandwidth.
    #[test]
    fn a_ladder_is_cut_at_the_first_video_renditions_times() {
        let main = title(vec![video(15360, 512, 30, 2000, false), track(2, false)]);
        let big = title(vec![video(90000, 3000, 30, 9000, true)]);
        let small = title(vec![video(15360, 512, 30, 500, false)]);
        let mut french = title(vec![track(1, false)]);
        french.index.tracks[0].language = Some("fra".into());
        let mut fr = entry(4, &french, LadderRole::Audio);
        fr.language = Some("fr".into());
        fr.name = Some("Français".into());
        let ladder = ladder(&[
            entry(1, &main, LadderRole::Video),
            entry(2, &big, LadderRole::Video),
            entry(3, &small, LadderRole::Video),
            fr,
        ])
        .unwrap();
        assert_eq!(ladder.plan.segment_count, 10);
        let cut_secs = |pos: usize| -> Vec<f64> {
            let (plan, track) = (&ladder.plan.tracks[pos], &ladder.index.tracks[pos]);
            (0..10)
                .map(|k| {
                    let (start, _) = plan.segment_span(&track.samples, k).unwrap();
                    start as f64 / f64::from(track.timescale)
                })
                .collect()
        };
        let reference = cut_secs(0);
        for pos in [2, 3] {
            let times = cut_secs(pos);
            for (a, b) in reference.iter().zip(&times) {
                assert!(
                    (a - b).abs() < 0.001,
                    "track {pos}: {reference:?} {times:?}"
                );
            }
        }
        let videos: Vec<(u32, u32)> = (ladder.renditions.iter())
            .filter(|r| r.kind == TrackKind::Video)
            .map(|r| split_document_track_id(r.track_id).unwrap())
            .collect();
        assert_eq!(videos, [(3, 1), (1, 1), (2, 1)], "lowest bandwidth first");
        let audios: Vec<&Rendition> = (ladder.renditions.iter())
            .filter(|r| r.kind == TrackKind::Audio)
            .collect();
        assert_eq!(audios.len(), 2);
        assert!(audios[0].is_default && !audios[1].is_default);
        assert_eq!(audios[1].name.as_deref(), Some("Français"));
        let french = &ladder.index.tracks[audios[1].track_pos];
        assert_eq!(french.language.as_deref(), Some("fr"));
    }

    /// Given a rung whose key frames fall every 1.5 s, then the ladder is refused naming
    /// the rung and the first cut it cannot make.
    #[test]
    fn key_frames_that_do_not_line_up_are_refused_by_rendition_and_time() {
        let main = title(vec![video(15360, 512, 30, 2000, false)]);
        let other = title(vec![video(15360, 512, 45, 2000, false)]);
        let err = ladder(&[
            entry(1, &main, LadderRole::Video),
            entry(2, &other, LadderRole::Video),
        ])
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "entry 2: no key frame at 1000 ms, where the first video rendition is cut"
        );
    }

    /// Given a rung at 29.97 fps against one at 30, then the refusal says why.
    #[test]
    fn frame_rates_that_cannot_be_cut_together_are_named() {
        let main = title(vec![video(15360, 512, 30, 2000, false)]);
        let ntsc = title(vec![video(30000, 1001, 30, 2000, false)]);
        let err = ladder(&[
            entry(1, &main, LadderRole::Video),
            entry(2, &ntsc, LadderRole::Video),
        ])
        .unwrap_err()
        .to_string();
        // 1.001 s is within a millisecond of 1 s; 2.002 s is not.
        assert!(err.starts_with("entry 2: no key frame at 2000 ms"), "{err}");
        assert!(
            err.ends_with("(frame rates 30.000 and 29.970 cannot be cut together)"),
            "{err}"
        );
    }

    /// Given a rung lasting 5 s against 10 s, then it is refused with both end times.
    #[test]
    fn renditions_ending_more_than_a_segment_apart_are_refused() {
        let main = title(vec![video(15360, 512, 30, 2000, false)]);
        let mut short = video(15360, 512, 30, 2000, false);
        let table = &mut short.samples;
        table.sizes.truncate(150);
        table.offsets_mut().truncate(150);
        table.dts.truncate(150);
        table.durations.truncate(150);
        table.sync = Some((0..150).step_by(30).collect());
        let short = title(vec![short]);
        let err = ladder(&[
            entry(1, &main, LadderRole::Video),
            entry(2, &short, LadderRole::Video),
        ])
        .unwrap_err();
        assert_eq!(
            err,
            PackageError::LadderDuration {
                rendition: "entry 2".into(),
                end_ms: 5000,
                reference_end_ms: 10000
            }
        );
    }

    /// Given an audio entry selecting a track its file lacks, or a video entry over an
    /// audio-only file, then the entry is named.
    #[test]
    fn an_entry_without_its_track_is_refused() {
        let main = title(vec![video(15360, 512, 30, 2000, false)]);
        let audio = title(vec![track(1, false)]);
        let mut missing = entry(2, &audio, LadderRole::Audio);
        missing.track = Some(7);
        let err = ladder(&[entry(1, &main, LadderRole::Video), missing]).unwrap_err();
        assert_eq!(err.to_string(), "entry 2: the file has no audio track 7");
        let err = ladder(&[
            entry(1, &main, LadderRole::Video),
            entry(2, &audio, LadderRole::Video),
        ])
        .unwrap_err();
        assert_eq!(err.to_string(), "entry 2: the file has no video track");
    }
}
