//! Which tracks a TS rendition carries, on which PIDs, and how each codec goes in.
//!
//! A video rendition's segments carry its video and the title's main audio (the default
//! audio rendition, or the first TS can carry) in one program, as players of TS expect;
//! every other audio rendition is an audio-only program. Codecs MPEG-TS carries in HLS:
//! H.264 and HEVC with 4-byte NAL lengths (see `annexb`), AAC that ADTS can describe,
//! MP3, AC-3 and E-AC-3. Anything else (VP9, AV1, Opus, FLAC, ...) is left out of the TS
//! output with the reason, never muxed half right.

use super::adts::AdtsConfig;
use super::annexb::{key_frame_prefix, H264_AUD, HEVC_AUD};
use super::stream_kind::{ac3_setup, sample_aes_stream_type, StreamKind};
use super::{AUDIO_PID, VIDEO_PID};
use crate::media::{stream_config, MediaIndex, StreamConfig, TrackIndex, TrackKind};
use crate::package::PackageError;

/// One elementary stream of a TS program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsStream {
    /// Position of the track in `MediaIndex::tracks` and `SegmentPlan::tracks`.
    pub track_pos: usize,
    /// Its PID.
    pub pid: u16,
    /// How it is carried.
    pub kind: StreamKind,
    /// Annex B bytes written before every access unit: the access unit delimiter (video),
    /// else nothing.
    pub prefix: Vec<u8>,
    /// Written before every sync sample instead: the delimiter, then the parameter sets.
    pub key_prefix: Vec<u8>,
    /// ISO 639-2 language of an audio track (three ASCII letters), for the PMT's
    /// ISO_639_language_descriptor; `None` for video and `und`.
    pub language: Option<[u8; 3]>,
    /// The audio setup data a SAMPLE-AES PMT restates (`sample_aes`): the
    /// AudioSpecificConfig, an AC-3 sync frame's start, the `dec3` body; else empty.
    pub setup: Vec<u8>,
}

impl TsStream {
    /// Whether the stream is video (one PES per frame, PES length 0 allowed).
    pub fn is_video(&self) -> bool {
        matches!(self.kind, StreamKind::H264 { .. } | StreamKind::Hevc { .. })
    }

    /// PES `stream_id` (13818-1 Table 2-22): video 0xE0, MPEG audio 0xC0, and
    /// private_stream_1 for AC-3 and E-AC-3 (ATSC A/52 Annex A).
    pub fn stream_id(&self) -> u8 {
        match self.kind {
            StreamKind::H264 { .. } | StreamKind::Hevc { .. } => 0xE0,
            StreamKind::Aac(_) | StreamKind::Mp3 { .. } => 0xC0,
            StreamKind::Ac3 | StreamKind::Eac3 => 0xBD,
        }
    }

    /// Bytes written before each frame inside a PES, besides the sample: 7 for ADTS.
    pub fn frame_header_len(&self) -> u64 {
        match self.kind {
            StreamKind::Aac(_) => super::adts::ADTS_HEADER_LEN as u64,
            _ => 0,
        }
    }

    /// How `track` goes into TS on `pid`, or why it cannot.
    ///
    /// # Errors
    /// [`PackageError::NotInTs`] naming the track and the reason.
    pub fn new(track: &TrackIndex, track_pos: usize, pid: u16) -> Result<Self, PackageError> {
        let refuse = |reason: String| PackageError::NotInTs {
            track_id: track.track_id,
            reason,
        };
        let fourcc = track.codec.fourcc.escape_ascii().to_string();
        let config = stream_config(&track.sample_description);
        let mut setup = Vec::new();
        let (kind, prefix, key_prefix) = match (track.kind, config) {
            (
                TrackKind::Video,
                StreamConfig::Avc {
                    length_size,
                    parameter_sets,
                },
            ) => (
                StreamKind::H264 { length_size },
                H264_AUD.to_vec(),
                key_frame_prefix(&H264_AUD, &parameter_sets),
            ),
            (
                TrackKind::Video,
                StreamConfig::Hevc {
                    length_size,
                    parameter_sets,
                },
            ) => (
                StreamKind::Hevc { length_size },
                HEVC_AUD.to_vec(),
                key_frame_prefix(&HEVC_AUD, &parameter_sets),
            ),
            (
                TrackKind::Audio,
                StreamConfig::Aac {
                    audio_specific_config,
                },
            ) => {
                let adts = AdtsConfig::from_audio_specific_config(&audio_specific_config)
                    .map_err(refuse)?;
                setup = audio_specific_config;
                (StreamKind::Aac(adts), Vec::new(), Vec::new())
            }
            (TrackKind::Audio, StreamConfig::Mp3) => {
                let lsf = track.codec.sample_rate > 0 && track.codec.sample_rate < 32_000;
                (StreamKind::Mp3 { lsf }, Vec::new(), Vec::new())
            }
            (TrackKind::Audio, StreamConfig::Ac3 { dac3 }) => {
                setup = ac3_setup(&dac3);
                (StreamKind::Ac3, Vec::new(), Vec::new())
            }
            (TrackKind::Audio, StreamConfig::Eac3 { dec3 }) => {
                setup = dec3;
                (StreamKind::Eac3, Vec::new(), Vec::new())
            }
            _ => return Err(refuse(format!("HLS carries {fourcc} in CMAF only"))),
        };
        if let StreamKind::H264 { length_size } | StreamKind::Hevc { length_size } = kind {
            if length_size != 4 {
                return Err(refuse(format!(
                    "{length_size}-byte NAL lengths (only 4-byte lengths are rewritten in place)"
                )));
            }
        }
        let language = (track.kind == TrackKind::Audio)
            .then_some(track.language.as_deref())
            .flatten()
            .and_then(|l| <[u8; 3]>::try_from(l.as_bytes()).ok())
            .filter(|l| l.iter().all(u8::is_ascii_alphabetic));
        Ok(Self {
            track_pos,
            pid,
            kind,
            prefix,
            key_prefix,
            language,
            setup,
        })
    }

    /// A stream for unit tests of the writers.
    #[cfg(test)]
    pub(crate) fn test(pid: u16, kind: StreamKind) -> Self {
        Self {
            track_pos: 0,
            pid,
            kind,
            prefix: Vec::new(),
            key_prefix: Vec::new(),
            language: None,
            setup: Vec::new(),
        }
    }
}

/// The elementary streams of one TS rendition's segments; the first carries the PCR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsProgram {
    /// Video first (if any), then audio; at most one of each.
    pub streams: Vec<TsStream>,
    /// Whether its samples are SAMPLE-AES encrypted (`sample_aes`): the PMT says so.
    pub sample_aes: bool,
}

impl TsProgram {
    /// The program of video track `video` with audio track `audio` muxed in, or of one
    /// audio track alone (`video` `None`).
    ///
    /// # Errors
    /// [`PackageError::NotInTs`] when a track cannot be carried;
    /// [`PackageError::NoSuchTrack`] for a position past the index.
    pub fn new(
        index: &MediaIndex,
        video: Option<usize>,
        audio: Option<usize>,
    ) -> Result<Self, PackageError> {
        let track = |pos: usize| {
            index
                .tracks
                .get(pos)
                .ok_or(PackageError::NoSuchTrack { track: pos as u64 })
        };
        let mut streams = Vec::with_capacity(2);
        if let Some(pos) = video {
            streams.push(TsStream::new(track(pos)?, pos, VIDEO_PID)?);
        }
        if let Some(pos) = audio {
            streams.push(TsStream::new(track(pos)?, pos, AUDIO_PID)?);
        }
        if streams.is_empty() {
            return Err(PackageError::NoTsRenditions);
        }
        Ok(Self {
            streams,
            sample_aes: false,
        })
    }

    /// Whether Apple's sample encryption covers every stream (H.264, AAC, AC-3, E-AC-3).
    pub fn sample_aes_covers(&self) -> bool {
        (self.streams.iter()).all(|s| sample_aes_stream_type(&s.kind).is_some())
    }

    /// The same program with SAMPLE-AES encrypted samples.
    ///
    /// # Errors
    /// [`PackageError::NotInTs`] for a stream Apple's format does not cover (HEVC, MP3).
    pub fn with_sample_aes(&self, index: &MediaIndex) -> Result<Self, PackageError> {
        for stream in &self.streams {
            if sample_aes_stream_type(&stream.kind).is_none() {
                return Err(PackageError::NotInTs {
                    track_id: index.tracks.get(stream.track_pos).map_or(0, |t| t.track_id),
                    reason: "SAMPLE-AES for MPEG-TS covers H.264, AAC, AC-3 and E-AC-3".into(),
                });
            }
        }
        Ok(Self {
            streams: self.streams.clone(),
            sample_aes: true,
        })
    }
}
