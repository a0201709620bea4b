//! What the TS output offers for a title: one muxed rendition per video that TS can carry
//! (the video with the main audio), and audio-only renditions for the other audio tracks,
//! each with its layout and measured bandwidth.
//!
//! The main audio is the default audio rendition, or the first that TS can carry when the
//! default cannot go. Where it is muxed with the videos, it is also offered alone (nginx-vod's
//! `index-a1.m3u8` under `hlsts`), worked out only when asked for
//! ([`TsTitle::main_audio_alone`]): the TS output lists it nowhere. Renditions TS cannot carry are left out with their reasons
//! (`skipped`); a title with none is refused with 422 ("use master.m3u8").

use super::{TsLayout, TsProgram};
use crate::media::TrackKind;
use crate::package::title::peak_bit_rate;
use crate::package::{PackageError, Rendition, Title};

/// One rendition of the TS output.
#[derive(Debug, Clone, PartialEq)]
pub struct TsRendition {
    /// The rendition whose track id names it (the video of a muxed rendition).
    pub rendition: Rendition,
    /// Its streams.
    pub program: TsProgram,
    /// Where every packet of every segment goes.
    pub layout: TsLayout,
    /// Peak segment bit rate (RFC 8216 4.3.4.2) and average, bits per second, of the TS
    /// segments as sent.
    pub peak_bandwidth: u64,
    pub average_bandwidth: u64,
}

/// The TS output of a title.
#[derive(Debug, Clone, PartialEq)]
pub struct TsTitle {
    /// Muxed video renditions first, then audio-only ones, each in title order.
    pub renditions: Vec<TsRendition>,
    /// The audio rendition muxed into the video renditions, if any.
    pub main_audio: Option<Rendition>,
    /// Why renditions were left out.
    pub skipped: Vec<PackageError>,
}

impl TsTitle {
    /// Work out the TS output of `title`: programs, layouts (a walk over every sample) and
    /// bandwidths.
    ///
    /// # Errors
    /// [`PackageError::NoTsRenditions`] when no rendition can be carried.
    pub fn new(title: &Title) -> Result<Self, PackageError> {
        let mut skipped = Vec::new();
        let audios: Vec<&Rendition> = (title.renditions.iter())
            .filter(|r| r.kind == TrackKind::Audio)
            .collect();
        let carried = |r: &Rendition| TsProgram::new(&title.index, None, Some(r.track_pos));
        let mut main_audio = None;
        for audio in audios.iter().filter(|a| a.is_default).chain(&audios) {
            if carried(audio).is_ok() {
                main_audio = Some((*audio).clone());
                break;
            }
        }
        let mut renditions = Vec::new();
        let main_pos = main_audio.as_ref().map(|a| a.track_pos);
        for video in title
            .renditions
            .iter()
            .filter(|r| r.kind == TrackKind::Video)
        {
            match TsProgram::new(&title.index, Some(video.track_pos), main_pos)
                .and_then(|program| measure(title, video, program))
            {
                Ok(rendition) => renditions.push(rendition),
                Err(e) => skipped.push(e),
            }
        }
        let muxed = !renditions.is_empty();
        for audio in &audios {
            if muxed && Some(audio.track_pos) == main_pos {
                continue;
            }
            match carried(audio).and_then(|program| measure(title, audio, program)) {
                Ok(rendition) => renditions.push(rendition),
                Err(e) => skipped.push(e),
            }
        }
        if renditions.is_empty() {
            // One track left out: its own reason says more than "none".
            return Err(match <[PackageError; 1]>::try_from(skipped) {
                Ok([only]) => only,
                Err(_) => PackageError::NoTsRenditions,
            });
        }
        Ok(Self {
            renditions,
            main_audio: main_audio.filter(|_| muxed),
            skipped,
        })
    }

    /// The TS rendition named by `track_id`.
    pub fn rendition(&self, track_id: u32) -> Option<&TsRendition> {
        self.renditions
            .iter()
            .find(|r| r.rendition.track_id == track_id)
    }

    /// The main audio alone, when it is muxed with the videos (else it is one of
    /// `renditions` already, or there is none): its program, layout (a walk over its
    /// samples) and bandwidths, at the same segments as the other audio-only renditions.
    ///
    /// # Errors
    /// What laying out its samples meets (it was carried muxed, so rarely any).
    pub fn main_audio_alone(&self, title: &Title) -> Option<Result<TsRendition, PackageError>> {
        let audio = self.main_audio.as_ref()?;
        Some(
            TsProgram::new(&title.index, None, Some(audio.track_pos))
                .and_then(|program| measure(title, audio, program)),
        )
    }

    /// Approximate heap bytes held, for the cache weigher.
    pub fn heap_bytes(&self) -> usize {
        self.renditions
            .iter()
            .map(|r| {
                r.layout.segments.capacity() * std::mem::size_of::<super::SegmentSummary>()
                    + r.layout.key_frames.capacity() * std::mem::size_of::<super::KeyFrame>()
                    + 512
            })
            .sum()
    }
}

/// Lay out `program` and measure its bandwidth over the segments of `named`.
fn measure(
    title: &Title,
    named: &Rendition,
    program: TsProgram,
) -> Result<TsRendition, PackageError> {
    let layout = TsLayout::new(title, &program)?;
    let (Some(plan), Some(track)) = (
        title.plan.tracks.get(named.track_pos),
        title.index.tracks.get(named.track_pos),
    ) else {
        return Err(PackageError::NoSuchTrack {
            track: named.track_pos as u64,
        });
    };
    let timescale = f64::from(track.timescale.max(1));
    let segments: Vec<(u64, f64)> = (layout.segments.iter().enumerate())
        .map(|(k, s)| {
            let secs = plan
                .segment_span(&track.samples, k)
                .map_or(0.0, |(_, d)| d as f64 / timescale);
            (s.bytes, secs)
        })
        .collect();
    let total_bytes: u64 = segments.iter().map(|s| s.0).sum();
    let total_secs: f64 = segments.iter().map(|s| s.1).sum();
    let average = if total_secs > 0.0 {
        total_bytes as f64 * 8.0 / total_secs
    } else {
        0.0
    };
    let peak = peak_bit_rate(&segments, f64::from(title.plan.target_ms) / 1000.0);
    Ok(TsRendition {
        rendition: named.clone(),
        program,
        layout,
        peak_bandwidth: peak.max(average).ceil() as u64,
        average_bandwidth: average.ceil() as u64,
    })
}
