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
mod tests;
