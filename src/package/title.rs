//! `Title`: a media index with its plan and the renditions players are offered.
//!
//! One rendition per audio or video track (demuxed CMAF). Bandwidth is measured from the
//! segments as they will be sent (header plus payload), so BANDWIDTH is the peak segment
//! bit rate and AVERAGE-BANDWIDTH the whole rendition's (RFC 8216 4.3.4.2).

use super::fmp4::media_segment_header_len;
use super::{plan_segments, present_title, PackageError, SegmentPlan, VersionToken};
use crate::media::{
    AudioRole, ClosedCaption, MediaIndex, SampleTable, SidecarFormat, TrackIndex, TrackKind,
};

/// A title ready to be packaged; cached per object version.
#[derive(Debug, Clone)]
pub struct Title {
    /// The parsed file.
    pub index: MediaIndex,
    /// How it is cut.
    pub plan: SegmentPlan,
    /// What players are offered, videos first, then audios, each in file order.
    pub renditions: Vec<Rendition>,
    /// Sidecar subtitle files of a title document, in document order; empty
    /// for a plain MP4.
    pub sidecars: Vec<SidecarSubtitle>,
    /// Closed captions carried in the video: those the scan at load found in its video
    /// tracks ([`detected_captions`]), or those a title document declares, which replace
    /// them. Empty when there are none, which manifests say outright
    /// (`CLOSED-CAPTIONS=NONE`).
    pub closed_captions: Vec<ClosedCaption>,
    /// A title document's ad breaks as cut, and its program date; the default
    /// (none) for a plain MP4 and documents without them.
    pub breaks: super::AdBreaks,
}

/// The closed captions the scan at load found in the video tracks of `index`, each
/// channel once, in order. The stream says no language, so none is given (HLS leaves
/// `LANGUAGE` out, DASH says `und`), and each is named by its channel (`CC1`,
/// `SERVICE1`), as a document's caption without a name or language is.
pub fn detected_captions(index: &MediaIndex) -> Vec<ClosedCaption> {
    let mut channels: Vec<_> = (index.tracks.iter())
        .flat_map(|t| t.captions.iter().copied())
        .collect();
    channels.sort_unstable();
    channels.dedup();
    (channels.into_iter())
        .map(|channel| ClosedCaption {
            channel,
            language: None,
            name: channel.to_string(),
        })
        .collect()
}

/// A sidecar subtitle file of a title document, offered beside the title's text tracks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SidecarSubtitle {
    /// The id its resources go by: its file number with track 0 (no MP4 track has id 0),
    /// so `index-f5-t0.m3u8`, `sub-f5-t0-K.vtt`, `sub-f5-t0.vtt`.
    pub track_id: u32,
    /// WebVTT or SRT.
    pub format: SidecarFormat,
    /// Language (BCP 47), if the document gives one.
    pub language: Option<String>,
    /// Display name, if the document gives one.
    pub name: Option<String>,
    /// Shown without the viewer asking (`DEFAULT=YES`).
    pub default: bool,
    /// Forced narrative (`FORCED=YES`).
    pub forced: bool,
    /// Subtitles for the deaf and hard of hearing (HLS `CHARACTERISTICS`, DASH Role
    /// `caption`).
    pub sdh: bool,
    /// Size of the file in bytes (its DASH bandwidth over the title's duration).
    pub size_bytes: u64,
    /// Added to the file's cue times (ns) to put them on the title's presentation
    /// timeline: minus the start of a clip, else 0.
    pub offset_ns: i128,
}

/// One rendition: one track of the file, measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendition {
    /// Position of the track in `index.tracks` and `plan.tracks`.
    pub track_pos: usize,
    /// The track id (used in resource names).
    pub track_id: u32,
    /// Audio or video.
    pub kind: TrackKind,
    /// Peak segment bit rate, bits per second.
    pub peak_bandwidth: u64,
    /// Average bit rate over the rendition, bits per second.
    pub average_bandwidth: u64,
    /// Frames per second (video with samples), else `None`.
    pub frame_rate: Option<f64>,
    /// Duration in seconds (sum of its segments).
    pub duration_secs: f64,
    /// When its last segment ends on the output timeline, in seconds (its start, which
    /// includes the title shift and any delay, plus its duration).
    pub end_secs: f64,
    /// The default rendition of its kind (the first in the file).
    pub is_default: bool,
    /// Display name given by a title document (HLS `NAME`), else `None` and the name is
    /// derived from the language.
    pub name: Option<String>,
    /// What an audio rendition is for, as a title document's entry says;
    /// empty when not said.
    pub roles: Vec<AudioRole>,
}

/// Bump when the bytes vodpack produces for the same input change (box layout, timing
/// model, naming), so version tokens, URLs and ETags change with them.
/// 2: edit lists in full (`edit.rs`): later edits, edit ends and pre-roll before a first
/// edit deep in the media now select samples, so files with such edit lists change.
/// 3: one audio frame per MPEG-TS PES (every TS segment's bytes and the I-frame
/// byte ranges into them), SAMPLE-AES slices escaped as Apple's format says, audio
/// pre-roll of up to one second before a first edit, display matrices in init segments.
/// 4: a video track's composition delay is an `elst` in its init segment and its fMP4
/// decode times (`tfdt`) start that much later (`plan.rs`); presentation times, TS and
/// WebVTT are unchanged.
/// 5: closed captions found in the video's SEI are announced with no title document
/// (`media::captions`): the masters and MPDs of such files change, and their entity tags
/// must too, or a CDN revalidating them would keep `CLOSED-CAPTIONS=NONE`.
pub const PACKAGER_FORMAT: u32 = 5;

impl Title {
    /// The version token of everything derived from this title: a hash of the object's
    /// identity, the segment duration and [`PACKAGER_FORMAT`]. 16 lowercase hex digits;
    /// the same on every replica that sees the same object version.
    pub fn version_token(&self) -> VersionToken {
        let identity = &self.index.identity;
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let (size, target, format) = (
            identity.size.to_be_bytes(),
            self.plan.target_ms.to_be_bytes(),
            PACKAGER_FORMAT.to_be_bytes(),
        );
        let fields: [&[u8]; 4] = [&size, identity.version.as_bytes(), &target, &format];
        for field in fields {
            for b in field.iter().chain(b"\0") {
                hash ^= u64::from(*b);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
        }
        VersionToken::of_hash(hash)
    }

    /// Apply every track's edit list ([`present_title`]), plan the result with segments of about
    /// `target_ms` and measure every rendition. `index` of the title is the index as
    /// presented: each track's samples as its edits select them, with an equivalent
    /// one-edit list.
    ///
    /// # Errors
    /// Never an empty success: [`PackageError::NoRenditions`] when the index has no track
    /// to offer, [`PackageError::EmptyTrack`] when an audio or video track has no samples,
    /// [`PackageError::ZeroDuration`] when one lasts no time at all;
    /// [`PackageError::UnsupportedEdit`] when an edit list cannot be presented exactly.
    pub fn new(mut index: MediaIndex, target_ms: u32) -> Result<Self, PackageError> {
        for track in &index.tracks {
            if track.samples.is_empty() {
                return Err(PackageError::EmptyTrack {
                    track_id: track.track_id,
                });
            }
            if track.samples.durations.iter().all(|d| *d == 0) {
                return Err(PackageError::ZeroDuration {
                    track_id: track.track_id,
                });
            }
        }
        index.tracks = present_title(std::mem::take(&mut index.tracks))?;
        let plan = plan_segments(&index, target_ms);
        Self::from_plan(index, plan)
    }

    /// Measure every rendition of `index` (tracks already presented) cut by `plan`:
    /// videos first, then audios, each in index order, the first of each kind the default.
    ///
    /// # Errors
    /// [`PackageError::NoRenditions`] when there is nothing to offer.
    pub(super) fn from_plan(index: MediaIndex, plan: SegmentPlan) -> Result<Self, PackageError> {
        let mut renditions = Vec::with_capacity(index.tracks.len());
        for kind in [TrackKind::Video, TrackKind::Audio] {
            let mut first = true;
            for (pos, track) in index.tracks.iter().enumerate() {
                if track.kind != kind {
                    continue;
                }
                renditions.push(measure(&plan, pos, track, first));
                first = false;
            }
        }
        if renditions.is_empty() || plan.segment_count == 0 {
            return Err(PackageError::NoRenditions);
        }
        let closed_captions = detected_captions(&index);
        Ok(Self {
            index,
            plan,
            renditions,
            sidecars: Vec::new(),
            closed_captions,
            breaks: super::AdBreaks::default(),
        })
    }

    /// The rendition of track `track_id`.
    pub fn rendition(&self, track_id: u32) -> Option<&Rendition> {
        self.renditions.iter().find(|r| r.track_id == track_id)
    }

    /// Duration of the presentation in seconds: the longest rendition.
    pub fn duration_secs(&self) -> f64 {
        self.renditions
            .iter()
            .map(|r| r.duration_secs)
            .fold(0.0, f64::max)
    }

    /// When the presentation ends on the output timeline: the latest rendition end. This
    /// is what a DASH `mediaPresentationDuration` must cover.
    pub fn end_secs(&self) -> f64 {
        self.renditions
            .iter()
            .map(|r| r.end_secs)
            .fold(0.0, f64::max)
    }

    /// How long the DASH Period lasts: from its start (output time S, less any video
    /// pre-roll: see [`Title::dash_preroll_secs`]) to the latest rendition end. Every
    /// Representation's `presentationTimeOffset` is that start
    /// ([`Title::dash_presentation_offset_ticks`]).
    pub fn period_duration_secs(&self) -> f64 {
        let preroll = self.dash_preroll_secs();
        self.renditions
            .iter()
            .map(|r| {
                let shift = self.plan.tracks.get(r.track_pos).map_or(0.0, |p| {
                    p.title_shift_ticks as f64 / f64::from(p.timescale.max(1))
                });
                r.end_secs - (shift - preroll)
            })
            .fold(0.0, f64::max)
    }

    /// The video pre-roll the DASH Period shows before the presentation start, in seconds
    /// (0 without pre-roll). The standard would hide it with `presentationTimeOffset` = S,
    /// but browsers' Media Source Extensions drop every frame before a Representation's
    /// start, and with them every frame up to the next sync sample, which cannot be
    /// decoded without them: dash.js and Shaka would lose picture and sound up to the next
    /// key frame (found playing `ffmpeg -ss X -c copy` files). Showing a GOP's worth of
    /// frames the source hides is the lesser fault; HLS still hides them (`EXT-X-START`).
    pub fn dash_preroll_secs(&self) -> f64 {
        self.renditions
            .iter()
            .filter_map(|r| self.video_preroll_secs(r))
            .fold(0.0, f64::max)
    }

    /// [`Title::dash_preroll_secs`] in nanoseconds, for timelines kept in them (WebVTT).
    pub fn dash_preroll_ns(&self) -> i128 {
        (self.dash_preroll_secs() * 1e9).round() as i128
    }

    /// DASH `presentationTimeOffset` of the track at `track_pos`, in its ticks: the title
    /// shift S less the DASH pre-roll, so every Representation starts the Period at the
    /// same instant.
    pub fn dash_presentation_offset_ticks(&self, track_pos: usize) -> u64 {
        let Some(plan) = self.plan.tracks.get(track_pos) else {
            return 0;
        };
        let preroll = (self.dash_preroll_secs() * f64::from(plan.timescale)).round() as u64;
        plan.title_shift_ticks.saturating_sub(preroll)
    }

    /// Seconds from the start of video rendition `rendition` to the presentation start
    /// (output time S), when video pre-roll precedes it: the first edit starts inside a GOP
    /// and the frames from its sync sample on are carried only to be decoded. HLS states it
    /// as `EXT-X-START`; DASH shows them (see [`Title::dash_preroll_secs`]). `None` without pre-roll
    /// and for audio (whose one frame of priming or pre-roll players play through).
    pub fn video_preroll_secs(&self, rendition: &Rendition) -> Option<f64> {
        if rendition.kind != TrackKind::Video {
            return None;
        }
        let plan = self.plan.tracks.get(rendition.track_pos)?;
        let track = self.index.tracks.get(rendition.track_pos)?;
        let (start, _) = plan.segment_span(&track.samples, 0)?;
        let preroll = plan.title_shift_ticks.checked_sub(start)?;
        (preroll > 0).then(|| preroll as f64 / f64::from(track.timescale.max(1)))
    }

    /// Approximate heap bytes held, for the cache weigher.
    pub fn heap_bytes(&self) -> usize {
        self.index.heap_bytes()
            + self
                .plan
                .tracks
                .iter()
                .map(|t| t.first_samples.capacity() * 4 + 64)
                .sum::<usize>()
            + self.renditions.len() * std::mem::size_of::<Rendition>()
    }
}

fn measure(plan: &SegmentPlan, pos: usize, track: &TrackIndex, is_default: bool) -> Rendition {
    let table = &track.samples;
    let has_cts = !table.cts_offsets.is_empty();
    let timescale = f64::from(track.timescale.max(1));
    // (bytes, seconds) of each segment as sent.
    let mut segments = Vec::with_capacity(plan.segment_count);
    if let Some(track_plan) = plan.tracks.get(pos) {
        for segment in 0..plan.segment_count {
            let (Some(range), Some((_, duration))) = (
                track_plan.samples(segment),
                track_plan.segment_span(table, segment),
            ) else {
                continue;
            };
            let payload: u64 = table
                .sizes
                .get(range.clone())
                .map_or(0, |s| s.iter().map(|v| u64::from(*v)).sum());
            let bytes = payload
                + media_segment_header_len(track.kind, has_cts, range.len() as u64, payload);
            segments.push((bytes, duration as f64 / timescale));
        }
    }
    let start_secs = plan
        .tracks
        .get(pos)
        .and_then(|p| p.segment_span(table, 0))
        .map_or(0.0, |(start, _)| start as f64 / timescale);
    let total_bytes: u64 = segments.iter().map(|s| s.0).sum();
    let total_secs: f64 = segments.iter().map(|s| s.1).sum();
    let peak = peak_bit_rate(&segments, f64::from(plan.target_ms) / 1000.0);
    let average = if total_secs > 0.0 {
        total_bytes as f64 * 8.0 / total_secs
    } else {
        0.0
    };
    let frame_rate = (track.kind == TrackKind::Video && total_secs > 0.0 && !table.is_empty())
        .then(|| video_frame_rate(table, timescale));
    Rendition {
        track_pos: pos,
        track_id: track.track_id,
        kind: track.kind,
        peak_bandwidth: peak.max(average).ceil() as u64,
        average_bandwidth: average.ceil() as u64,
        frame_rate,
        duration_secs: total_secs,
        end_secs: start_secs + total_secs,
        is_default,
        name: None,
        roles: Vec::new(),
    }
}

/// Frames per second of a video sample table: samples over their decode durations, leaving
/// out samples that last more than twice the average (a frame held across a mid-track empty
/// edit, see `edit.rs`), which would otherwise lower the rate. Every sample counts when
/// none is that long, as in a constant-rate track.
fn video_frame_rate(table: &SampleTable, timescale: f64) -> f64 {
    let average = table.end_dts() as f64 / table.len().max(1) as f64;
    let (count, ticks) = (table.durations.iter())
        .filter(|d| f64::from(**d) <= 2.0 * average)
        .fold((0usize, 0u64), |(n, t), d| (n + 1, t + u64::from(*d)));
    if count == table.len() {
        return table.len() as f64 / (table.end_dts() as f64 / timescale).max(f64::EPSILON);
    }
    count as f64 / (ticks as f64 / timescale).max(f64::EPSILON)
}

/// Most segments one window of [`peak_bit_rate`] spans. Segments last about the target
/// duration, so a real window holds two or three; a file whose decode times stand still
/// while its composition offsets advance makes segments of zero duration, which would
/// otherwise make every window run to the end of the title (quadratic: 10 s of CPU for
/// 100,000 segments, hours for a few million).
const MAX_WINDOW_SEGMENTS: usize = 64;

/// The peak segment bit rate of RFC 8216 4.3.4.2: the largest bit rate of any contiguous
/// run of segments lasting between 0.5 and 1.5 times the target duration (a segment longer
/// than that counts alone), so a short last segment does not inflate it.
pub(super) fn peak_bit_rate(segments: &[(u64, f64)], target_secs: f64) -> f64 {
    let (low, high) = (0.5 * target_secs, 1.5 * target_secs);
    let mut peak = 0.0f64;
    for start in 0..segments.len() {
        let (mut bytes, mut secs) = (0u64, 0.0f64);
        let window = segments.iter().skip(start).take(MAX_WINDOW_SEGMENTS);
        for (n, (b, s)) in window.enumerate() {
            bytes += b;
            secs += s;
            let in_window = secs >= low && secs <= high;
            // A lone long segment counts by itself, and so does a title shorter than `low`.
            let alone = n == 0 && (secs > high || (start == 0 && segments.len() == 1));
            if secs > 0.0 && (in_window || alone) {
                peak = peak.max(bytes as f64 * 8.0 / secs);
            }
            if secs > high {
                break;
            }
        }
    }
    peak
}

#[cfg(test)]
mod tests {
    //! Titles over built tracks: refused tracks, and peak bandwidth and frame rate measured.

    use super::*;
    use crate::package::testing::track;
    use crate::source::ObjectIdentity;

    fn index(tracks: Vec<TrackIndex>) -> MediaIndex {
        MediaIndex {
            identity: ObjectIdentity {
                size: 0,
                version: String::new(),
            },
            movie_timescale: 1000,
            tracks,
            text_tracks: Vec::new(),
        }
    }

    /// Given an audio track whose tables hold no samples (a fragmented file whose fragments
    /// were not read, say), then the title is refused, naming the track, rather than
    /// packaged into a presentation of 0 seconds.
    #[test]
    fn a_track_without_samples_is_refused_by_name() {
        let mut audio = track(2, false);
        audio.samples = Default::default();
        let err = Title::new(index(vec![track(1, true), audio]), 6000).unwrap_err();
        assert_eq!(err, PackageError::EmptyTrack { track_id: 2 });
        assert_eq!(err.to_string(), "track 2 has no samples");
    }

    /// Given a video track whose samples all last 0 ticks, then it is refused too.
    #[test]
    fn a_track_lasting_no_time_is_refused() {
        let mut video = track(1, true);
        video.samples.durations.iter_mut().for_each(|d| *d = 0);
        video.samples.dts.iter_mut().for_each(|d| *d = 0);
        let err = Title::new(index(vec![video]), 6000).unwrap_err();
        assert_eq!(err, PackageError::ZeroDuration { track_id: 1 });
    }

    /// Given an index with no audio or video track, then there is nothing to package.
    #[test]
    fn an_index_without_tracks_is_refused() {
        let err = Title::new(index(Vec::new()), 6000).unwrap_err();
        assert_eq!(err, PackageError::NoRenditions);
    }

    #[test]
    fn a_short_last_segment_does_not_set_the_peak() {
        let segments = [(6_000, 6.0), (6_000, 6.0), (500, 0.1)];
        let peak = peak_bit_rate(&segments, 6.0);
        // The last two segments are 6.1 s of 6,500 bytes: 8,525 bit/s, not the last one's
        // 0.1 s of 500 bytes (40,000 bit/s).
        assert!((peak - 6_500.0 * 8.0 / 6.1).abs() < 1.0, "{peak}");
    }

    #[test]
    fn zero_length_segments_keep_the_peak_linear() {
        // Without the window bound this is 2 * 10^10 steps: hours in a debug build.
        let segments = vec![(1_000, 0.0); 200_000];
        assert_eq!(peak_bit_rate(&segments, 6.0), 0.0);
    }

    /// Given 64 frames at 30 fps, one of them held 0.5333 s longer across an empty edit,
    /// then the frame rate is still 30.
    #[test]
    fn a_frame_held_across_an_empty_edit_does_not_lower_the_frame_rate() {
        let mut durations = vec![512u32; 64];
        durations[31] += 8192;
        let dts = (durations.iter())
            .scan(0u64, |t, d| {
                let at = *t;
                *t += u64::from(*d);
                Some(at)
            })
            .collect();
        let table = SampleTable {
            sizes: vec![1; 64],
            offsets: vec![0; 64].into(),
            dts,
            durations,
            ..SampleTable::default()
        };
        assert!((video_frame_rate(&table, 15360.0) - 30.0).abs() < 1e-9);
    }

    #[test]
    fn a_title_shorter_than_half_the_target_still_has_a_rate() {
        assert!((peak_bit_rate(&[(1_000, 2.0)], 6.0) - 4_000.0).abs() < 1.0);
    }

    /// Given a title, then its version token is FNV-1a of its identity, segment duration and
    /// packager format 3 (which changed TS, SAMPLE-AES and audio pre-roll bytes, so every
    /// title's URLs moved once, and a CDN never mixes old and new segments of one title); a
    /// turned title gets the same token as an upright one of the same identity.
    #[test]
    fn the_version_token_hashes_identity_duration_and_format() {
        let upright = Title::new(index(vec![track(1, true), track(2, false)]), 6000).unwrap();
        let mut video = track(1, true);
        video.display_matrix = [0, 0x1_0000, 0, -0x1_0000, 0, 0, 0, 0, 0x4000_0000];
        let turned = Title::new(index(vec![video, track(2, false)]), 6000).unwrap();
        // FNV-1a of the four fields (size 0, version "", 6000 ms, format 5), each ending in a
        // NUL, computed apart from this code.
        assert_eq!(upright.version_token(), "f8339817d365141f");
        assert_eq!(turned.version_token(), upright.version_token());
    }
}
