//! Trick play: the key frames a video rendition offers for scrubbing and fast play, the
//! one-frame fMP4 resources that carry them (`ifr-tN-J.m4s`), and their times and rates.
//! The HLS I-frame playlist (hls.rs) and the DASH trick-play AdaptationSet (dash.rs) are
//! both rendered from [`key_frames`]; the server serves [`prepare_key_frame`].
//!
//! Resources of their own, not byte ranges into media segments: a CMAF segment has one
//! `moof` for all its samples, so no byte range of it is a key frame a player can decode
//! alone. Sizes come from the index alone, so playlists state them before anything is read.

use super::fmp4::{media_segment_header_len, prepare_sample_fragment};
use super::{PackageError, PreparedSegment, Rendition, Title};
use crate::media::TrackKind;

/// Least presentation time between two key frames offered, in seconds.
const MIN_SPACING_SECS: u64 = 1;

/// One key frame offered for trick play; frame `J` (1-based) is resource `ifr-tN-J.m4s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyFrame {
    /// The sample, an index into the presented track's sample table.
    pub sample: usize,
    /// Output presentation time, in track ticks (the timeline of the media segments).
    pub pts: u64,
    /// Presentation ticks until the next key frame offered, or until the track's end.
    pub duration: u64,
    /// Decode ticks until the next key frame offered, or until the track's end: the
    /// sample's duration in its fragment, so the frames decode back to back.
    pub decode_span: u64,
    /// Bytes of its resource as sent (`moof`, `mdat` header and the frame).
    pub bytes: u64,
}

/// The key frames that video rendition `rendition` of `title` offers for trick play, in
/// presentation order; empty for audio.
pub fn key_frames(title: &Title, rendition: &Rendition) -> Vec<KeyFrame> {
    let pos = rendition.track_pos;
    let (Some(track), Some(plan)) = (title.index.tracks.get(pos), title.plan.tracks.get(pos))
    else {
        return Vec::new();
    };
    if track.kind != TrackKind::Video {
        return Vec::new();
    }
    let table = &track.samples;
    let spacing = u64::from(track.timescale.max(1)) * MIN_SPACING_SECS;
    let has_cts = !table.cts_offsets.is_empty();
    let candidates: Box<dyn Iterator<Item = usize>> = match &table.sync {
        Some(list) => Box::new(list.iter().map(|s| *s as usize)),
        None => Box::new(0..table.len()),
    };
    let forced: Vec<usize> = (title.breaks.list.iter())
        .filter_map(|b| plan.first_samples.get(b.segment))
        .map(|s| *s as usize)
        .collect();
    // (sample, pts, dts) of each key frame offered.
    let mut chosen: Vec<(usize, u64, u64)> = Vec::new();
    for sample in candidates.take_while(|s| *s < table.len()) {
        let pts = plan.output_pts(table, sample);
        // A key frame an ad break is cut at is always offered, so trick play
        // has the boundary too.
        let keep = forced.contains(&sample)
            || chosen
                .last()
                .is_none_or(|(_, last, _)| pts >= last.saturating_add(spacing));
        if keep {
            chosen.push((sample, pts, plan.output_dts(table, sample)));
        }
    }
    // The track ends where its last segment does.
    let last_segment = title.plan.segment_count.saturating_sub(1);
    let end_pts = plan
        .segment_span(table, last_segment)
        .map_or(0, |(start, duration)| start.saturating_add(duration));
    let end_dts = plan.output_dts(table, table.len());
    let mut frames = Vec::with_capacity(chosen.len());
    for (n, &(sample, pts, dts)) in chosen.iter().enumerate() {
        let (next_pts, next_dts) = chosen
            .get(n + 1)
            .map_or((end_pts, end_dts), |next| (next.1, next.2));
        let size = table.sizes.get(sample).map_or(0, |s| u64::from(*s));
        frames.push(KeyFrame {
            sample,
            pts,
            duration: next_pts.saturating_sub(pts),
            decode_span: next_dts.saturating_sub(dts),
            bytes: media_segment_header_len(TrackKind::Video, has_cts, 1, size) + size,
        });
    }
    frames
}

/// What a rendition's trick-play frames cost and allow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrickRates {
    /// Peak bit rate over the frames, each frame's bytes over its duration (HLS
    /// `BANDWIDTH`, DASH `@bandwidth`).
    pub peak_bandwidth: u64,
    /// All frames' bytes over their total duration (HLS `AVERAGE-BANDWIDTH`).
    pub average_bandwidth: u64,
    /// DASH `@maxPlayoutRate`: how much faster than real time the frames can be played
    /// while decoding no more frames a second than the rendition itself, its frame rate
    /// times the mean time between frames offered (at least 1).
    pub max_playout_rate: u64,
}

/// The rates of `frames`, key frames of `rendition` (track timescale `timescale`).
pub fn rates(frames: &[KeyFrame], rendition: &Rendition, timescale: u32) -> TrickRates {
    let ticks = f64::from(timescale.max(1));
    let bits_per_sec = |bytes: u64, duration: u64| match duration {
        0 => 0,
        d => (bytes as f64 * 8.0 * ticks / d as f64).ceil() as u64,
    };
    let peak = frames
        .iter()
        .map(|f| bits_per_sec(f.bytes, f.duration))
        .max()
        .unwrap_or(0);
    let (bytes, duration) = frames.iter().fold((0u64, 0u64), |(b, d), f| {
        (b.saturating_add(f.bytes), d.saturating_add(f.duration))
    });
    let mean_secs = match frames.len() {
        0 => 0.0,
        n => duration as f64 / ticks / n as f64,
    };
    let rate = rendition.frame_rate.unwrap_or(0.0) * mean_secs;
    TrickRates {
        peak_bandwidth: peak.max(1),
        average_bandwidth: bits_per_sec(bytes, duration).max(1),
        max_playout_rate: (rate.round() as u64).max(1),
    }
}

/// The resource of key frame `number` (1-based, as [`key_frames`] lists them) of video
/// rendition `rendition`: a one-sample fragment, its sample lasting until the next frame.
///
/// # Errors
/// [`PackageError::SegmentOutOfRange`] when the rendition has fewer key frames offered.
pub fn prepare_key_frame(
    title: &Title,
    rendition: &Rendition,
    number: u64,
) -> Result<PreparedSegment, PackageError> {
    let frames = key_frames(title, rendition);
    let out_of_range = PackageError::SegmentOutOfRange {
        number,
        count: frames.len() as u64,
    };
    let frame = usize::try_from(number)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|n| frames.get(n))
        .ok_or(out_of_range.clone())?;
    let sequence = u32::try_from(number).map_err(|_| out_of_range.clone())?;
    let duration = u32::try_from(frame.decode_span).unwrap_or(u32::MAX);
    prepare_sample_fragment(
        &title.index,
        &title.plan,
        rendition.track_pos,
        frame.sample,
        sequence,
        duration,
    )
}

#[cfg(test)]
mod tests {
    //! Trick play over the fixtures: key frames that tile the timeline and one-frame resources.

    use super::*;
    use mp4_atom::{Decode, Moof};

    fn fixture_title(name: &str, target_ms: u32) -> Title {
        crate::package::fmp4::tests::fixture(name, target_ms).0
    }

    #[test]
    fn key_frames_are_sync_samples_that_tile_the_video_timeline() {
        let title = fixture_title("h264-bframes-editlist-aac.mp4", 1000);
        let video = title.renditions.first().unwrap();
        assert_eq!(video.kind, TrackKind::Video);
        let frames = key_frames(&title, video);
        assert!(
            frames.len() > 1,
            "a few seconds with key frames every second or two"
        );
        let track = &title.index.tracks[video.track_pos];
        let plan = &title.plan.tracks[video.track_pos];
        for pair in frames.windows(2) {
            assert!(track.samples.is_sync(pair[0].sample));
            assert_eq!(
                pair[0].pts + pair[0].duration,
                pair[1].pts,
                "no gap, no overlap"
            );
            assert!(pair[0].duration >= u64::from(track.timescale));
        }
        // The first frame starts the track; the last ends where its last segment does.
        let (start, _) = plan.segment_span(&track.samples, 0).unwrap();
        assert_eq!(frames[0].pts, start);
        let last = frames.last().unwrap();
        let k = title.plan.segment_count - 1;
        let (s, d) = plan.segment_span(&track.samples, k).unwrap();
        assert_eq!(last.pts + last.duration, s + d);
    }

    #[test]
    fn a_key_frame_resource_is_one_sync_sample_lasting_until_the_next() {
        let title = fixture_title("h264-bframes-editlist-aac.mp4", 1000);
        let video = title.renditions.first().unwrap();
        let frames = key_frames(&title, video);
        let track = &title.index.tracks[video.track_pos];
        for (n, frame) in frames.iter().enumerate() {
            let prepared = prepare_key_frame(&title, video, n as u64 + 1).unwrap();
            assert_eq!(prepared.content_length(), frame.bytes);
            let moof = Moof::decode(&mut &prepared.header[..]).unwrap();
            let trun = &moof.traf[0].trun[0];
            let samples: Vec<_> = trun.samples.iter().collect();
            assert_eq!(samples.len(), 1);
            assert_eq!(samples[0].duration, Some(frame.decode_span as u32));
            assert_eq!(samples[0].flags, Some(0x0200_0000), "a sync sample");
            assert_eq!(
                prepared.payload_bytes,
                u64::from(track.samples.sizes[frame.sample])
            );
        }
        assert!(matches!(
            prepare_key_frame(&title, video, frames.len() as u64 + 1),
            Err(PackageError::SegmentOutOfRange { .. })
        ));
        assert!(prepare_key_frame(&title, video, 0).is_err());
    }

    #[test]
    fn audio_offers_no_key_frames() {
        let title = fixture_title("h264-aac-3s.mp4", 1000);
        let audio = title.renditions.iter().find(|r| r.kind == TrackKind::Audio);
        assert!(key_frames(&title, audio.unwrap()).is_empty());
    }
}
