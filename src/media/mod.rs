//! What an MP4 says: locating `moov`, parsing it, and the compact per-track sample index.
//!
//! This is the only module that reads mp4-atom's parse types. It turns a source object,
//! progressive or fragmented, into a [`MediaIndex`]: per track its codec, raw sample
//! description, display matrix, edit list and flat per-sample arrays, and the closed
//! captions its first video samples carry (`captions`); text tracks are kept apart and
//! their payloads read only when a subtitle is asked for. Sample numbers are
//! 0-based here (MP4 tables are 1-based, converted at the parse boundary). Packaging
//! decisions (where to cut, how to shift times) are left to `package`.

mod bits;
mod captions;
mod codec;
mod color;
mod document;
mod dolby;
mod elementary;
mod error;
mod fragments;
mod limits;
mod load;
mod locate;
mod matrix;
mod param_sets;
mod parse;
mod side_by_side;
mod sidecar;
mod skeleton;
pub(crate) mod slice_header;
mod stored;
mod tables;
mod text;

use bytes::Bytes;

use crate::source::ObjectIdentity;

pub use codec::{describe_codec, describe_dolby_vision};
pub use color::{ColorInfo, ColorSource, VideoRange, CICP_UNSPECIFIED};
pub use document::{
    is_title_document, parse_title_document, AudioRole, BreakAsset, CaptionChannel, ClosedCaption,
    DashProfile, DocumentBreak, DocumentClip, DocumentError, DocumentFile, DocumentPart,
    PartSource, ProgramDateTime, TitleDocument, DEFAULT_PROGRAM_DATE_TIME,
};
pub use dolby::DolbyVision;
pub use elementary::{decoder_configuration, stream_config, StreamConfig};
pub use error::MediaError;
pub use fragments::{FragmentDiscovery, FragmentReport};
pub use limits::MediaLimits;
#[doc(hidden)]
pub use load::index_from_bytes;
pub use load::{load_index, load_index_report, IndexReport};
pub use locate::{locate_boxes, TopLevelBoxes};
pub use matrix::UNITY_MATRIX;
pub use parse::parse_index;
pub use sidecar::{parse_sidecar, SidecarCue, SidecarFormat};
pub use slice_header::{SliceHeaderParams, MAX_SLICE_HEADER_BYTES};
pub use stored::{decode_index, encode_index, max_index_bytes, StoredIndexError, INDEX_FORMAT};
pub use text::{parse_text_sample, SampleCue, TextFormat};

/// Everything the packager needs to know about one MP4 object.
#[derive(Debug, Clone)]
pub struct MediaIndex {
    /// The object version this index describes.
    pub identity: ObjectIdentity,
    /// `mvhd` timescale (ticks per second of the movie timeline, used by edit lists).
    pub movie_timescale: u32,
    /// Audio and video tracks in file order. Other tracks (metadata, text in formats other
    /// than `tx3g` and `wvtt`) are skipped.
    pub tracks: Vec<TrackIndex>,
    /// Text tracks (`tx3g`, `wvtt`) in file order. Kept apart from `tracks`: they are not
    /// cut into CMAF segments but turned into WebVTT (`package::webvtt`).
    pub text_tracks: Vec<TextTrackIndex>,
}

impl MediaIndex {
    /// Approximate heap bytes held, for the cache weigher.
    pub fn heap_bytes(&self) -> usize {
        self.tracks
            .iter()
            .map(TrackIndex::heap_bytes)
            .sum::<usize>()
            + self
                .text_tracks
                .iter()
                .map(|t| t.samples.heap_bytes() + 128)
                .sum::<usize>()
            + 256
    }

    /// The track with this id.
    pub fn track(&self, track_id: u32) -> Option<&TrackIndex> {
        self.tracks.iter().find(|t| t.track_id == track_id)
    }

    /// The text track with this id.
    pub fn text_track(&self, track_id: u32) -> Option<&TextTrackIndex> {
        self.text_tracks.iter().find(|t| t.track_id == track_id)
    }
}

/// One text track: timed text samples (ISO/IEC 14496-30) whose payloads stay in `mdat`
/// until a subtitle resource is requested; only their sizes, offsets and times are indexed.
#[derive(Debug, Clone)]
pub struct TextTrackIndex {
    /// `tkhd` track id.
    pub track_id: u32,
    /// How the samples are coded.
    pub format: TextFormat,
    /// `mdhd` timescale. Never 0.
    pub timescale: u32,
    /// ISO 639-2/T language from `mdhd`; `None` when the file says `und`.
    pub language: Option<String>,
    /// The edit list. Cues are timed by its leading empty edits and its first media edit
    /// (`EditList::leading_empty_ticks`, `first_media_time_ticks`): text tracks of joined
    /// clips are not cut and rejoined as audio and video are.
    pub edits: EditList,
    /// The samples (each one stretch of time: a cue, several, or none).
    pub samples: SampleTable,
}

/// Whether a track is audio or video.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrackKind {
    /// A `vide` handler.
    Video,
    /// A `soun` handler.
    Audio,
}

impl TrackKind {
    /// `"video"` or `"audio"`, as in DASH `contentType` and our URL names.
    pub fn as_str(&self) -> &'static str {
        match self {
            TrackKind::Video => "video",
            TrackKind::Audio => "audio",
        }
    }
}

/// One audio or video track.
#[derive(Debug, Clone)]
pub struct TrackIndex {
    /// `tkhd` track id.
    pub track_id: u32,
    /// Audio or video.
    pub kind: TrackKind,
    /// `mdhd` timescale: ticks per second of this track's media timeline. Never 0.
    pub timescale: u32,
    /// ISO 639-2/T language from `mdhd`; `None` when the file says `und`.
    pub language: Option<String>,
    /// What the codec is, for playlists.
    pub codec: CodecInfo,
    /// The source `stsd` box, header included, copied verbatim into init segments so every
    /// codec is described exactly as the source describes it.
    pub sample_description: Bytes,
    /// `tkhd` width and height, 16.16 fixed point, as the source has them: the picture's
    /// size before `display_matrix` turns it (a portrait phone video says 1920x1080).
    pub tkhd_width: u32,
    /// See `tkhd_width`.
    pub tkhd_height: u32,
    /// How a player turns the picture (ISO/IEC 14496-12 8.3.2.3): the source's `tkhd`
    /// matrix followed by its `mvhd` matrix, copied into init segments. [`UNITY_MATRIX`]
    /// for a picture shown as coded; see `matrix.rs`.
    pub display_matrix: [i32; 9],
    /// The edit list, every edit in the track's ticks (see [`EditList`]).
    pub edits: EditList,
    /// The samples.
    pub samples: SampleTable,
    /// The CEA-608 channels and CEA-708 services found in the video's SEI by the bounded
    /// scan at load (`media::captions`), in order; empty for audio, for video without
    /// them, and for codecs other than H.264 and HEVC.
    pub captions: Vec<CaptionChannel>,
}

impl TrackIndex {
    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.samples.heap_bytes()
            + self.sample_description.len()
            + self.edits.edits.capacity() * std::mem::size_of::<Edit>()
            + self.captions.capacity() * std::mem::size_of::<CaptionChannel>()
            + 128
    }

    /// Track duration in ticks of `timescale` (decode time of the end of the last sample).
    pub fn duration_ticks(&self) -> u64 {
        self.samples.end_dts()
    }
}

/// A track's edit list (ISO/IEC 14496-12 8.6.6), converted to the track's ticks at the parse
/// boundary: which spans of the media timeline are presented, in order, on the movie
/// timeline. No edits means the file has no edit list: the media is presented as it is,
/// from movie time 0. Edits with a `media_rate` other than 1 are refused when parsing, so
/// every media edit here plays at normal speed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EditList {
    /// The edits in file order, zero-length ones included (they present nothing).
    pub edits: Vec<Edit>,
}

/// One edit: a span of the movie timeline, filled by media or left empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edit {
    /// Where the edit starts on the movie timeline, in track ticks: the sum of the earlier
    /// edits' movie durations, converted (rounded to nearest) from movie ticks as a whole,
    /// so rounding never accumulates.
    pub start_ticks: u64,
    /// How long it lasts on the movie timeline, in track ticks (the next edit's start minus
    /// this one's). A last media edit of duration 0 (written by fragmented-file muxers that
    /// do not know the duration) runs to the end of the media.
    pub duration_ticks: u64,
    /// The media time (composition time, track ticks) presented at `start_ticks`; `None` for
    /// an empty edit, during which the track presents nothing.
    pub media_time_ticks: Option<u64>,
}

impl EditList {
    /// The media edits (those with a media time and a non-zero duration), in order.
    pub fn media_edits(&self) -> impl Iterator<Item = &Edit> + '_ {
        self.edits
            .iter()
            .filter(|e| e.media_time_ticks.is_some() && e.duration_ticks > 0)
    }

    /// Movie time (track ticks) at which the first media edit starts: the length of the
    /// leading empty edits. 0 without edits.
    pub fn leading_empty_ticks(&self) -> u64 {
        self.media_edits().next().map_or(0, |e| e.start_ticks)
    }

    /// Media time presented first (the first media edit's). 0 without edits.
    pub fn first_media_time_ticks(&self) -> u64 {
        self.media_edits()
            .next()
            .and_then(|e| e.media_time_ticks)
            .unwrap_or(0)
    }

    /// The movie time (track ticks) at which media time `media_ticks` of this track is
    /// presented: by the first media edit that covers it, or `None` when no edit presents
    /// it. Without edits the two timelines are the same. Text tracks timed on the same
    /// timeline as audio and video map their cue times through this (output time = movie
    /// time + the title shift, see `package::TrackPlan::title_shift_ticks`).
    pub fn movie_time(&self, media_ticks: u64) -> Option<u64> {
        if self.edits.is_empty() {
            return Some(media_ticks);
        }
        self.media_edits().find_map(|e| {
            let start = e.media_time_ticks?;
            let offset = media_ticks.checked_sub(start)?;
            (offset < e.duration_ticks).then(|| e.start_ticks.saturating_add(offset))
        })
    }
}

/// Codec facts for playlists, derived from the sample description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecInfo {
    /// The sample entry fourcc (`avc1`, `hvc1`, `mp4a`, `Opus`, ...).
    pub fourcc: [u8; 4],
    /// RFC 6381 `codecs` parameter, e.g. `avc1.64001f` or `mp4a.40.2`.
    pub rfc6381: String,
    /// Coded width in pixels (video), else 0.
    pub width: u16,
    /// Coded height in pixels (video), else 0.
    pub height: u16,
    /// Channel count (audio), else 0.
    pub channels: u16,
    /// Sample rate in Hz (audio), else 0.
    pub sample_rate: u32,
    /// The colour description (video), from `colr` or the codec's own header; `None` for
    /// audio and for video that describes no colour.
    pub color: Option<ColorInfo>,
    /// The Dolby Vision configuration (video with a `dvcC`/`dvvC`/`dvwC` box), else `None`.
    pub dolby_vision: Option<DolbyVision>,
    /// The loudspeakers of an AC-3 or E-AC-3 track, from its `dac3`/`dec3` (whose sample
    /// entry's channel count is always 2, ETSI TS 102 366 F.3), as a 16-bit Dolby channel
    /// mask (bit 15 L, 14 C, 13 R, 12 Ls, 11 Rs, ..., 0 LFE); `None` for other codecs.
    pub dolby_channel_mask: Option<u16>,
}

/// Flat per-sample arrays of one track, all of the same length, in decode order.
#[derive(Debug, Clone, Default)]
pub struct SampleTable {
    /// Sample sizes in bytes.
    pub sizes: Vec<u32>,
    /// Absolute file offsets of each sample's first byte: read them with
    /// [`SampleTable::offsets`]. A long `moov` track's are worked out on first use (see
    /// [`SampleOffsets`]).
    pub offsets: SampleOffsets,
    /// Decode times in track ticks, non-decreasing, starting at 0 (in a fragmented file,
    /// at the first fragment's `tfdt`: its decode time on the media timeline, less the
    /// start all tracks share when every one starts late; see `parse::rebase_late_start`).
    pub dts: Vec<u64>,
    /// Sample durations in track ticks.
    pub durations: Vec<u32>,
    /// Composition offsets (pts - dts) in track ticks; empty when the track has no `ctts`.
    pub cts_offsets: Vec<i32>,
    /// 0-based indexes of sync samples, ascending; `None` when every sample is sync.
    pub sync: Option<Vec<u32>>,
}

/// The file offsets of a track's samples: known (a fragmented file's, a presented edit
/// list's, a short track's), or, for a long `moov` track, worked out from its `stsc` and
/// `stco`/`co64` on first use and then kept.
///
/// Why: playlists need sizes and times, never offsets, and a 60-minute title's first master
/// answers about a millisecond sooner without them (docs/performance.md). At load the chunk
/// tables are still checked in full, with a sum of sizes per chunk instead of a stored
/// offset per sample: every sample placed once, inside the file. So a broken or cut file is
/// refused before its first playlist, as before, and working the offsets out later cannot
/// fail. The catalog works them out on the blocking pool shortly after a load
/// (`CachedTitle::with_offsets_soon`); whichever comes first, that or a segment, does it,
/// once. The chunk tables are shared with the `moov` buffer, which is let go then.
#[derive(Debug, Clone, Default)]
pub struct SampleOffsets {
    known: Vec<u64>,
    /// Set while the offsets are still to be worked out (then `known` is empty).
    later: Option<std::sync::Arc<tables::LaterOffsets>>,
}

impl From<Vec<u64>> for SampleOffsets {
    fn from(known: Vec<u64>) -> Self {
        Self { known, later: None }
    }
}

impl FromIterator<u64> for SampleOffsets {
    fn from_iter<I: IntoIterator<Item = u64>>(offsets: I) -> Self {
        Vec::from_iter(offsets).into()
    }
}

impl PartialEq for SampleTable {
    fn eq(&self, other: &Self) -> bool {
        self.sizes == other.sizes
            && self.dts == other.dts
            && self.durations == other.durations
            && self.cts_offsets == other.cts_offsets
            && self.sync == other.sync
            && self.offsets() == other.offsets()
    }
}

impl Eq for SampleTable {}

impl SampleTable {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// Every sample's file offset, worked out now if they are not known yet (a one-off
    /// pass over the chunk tables: call it off the runtime workers for a long track).
    pub fn offsets(&self) -> &[u64] {
        match &self.offsets.later {
            Some(later) => later.offsets(&self.sizes),
            None => &self.offsets.known,
        }
    }

    /// The file offsets of the first `n` samples (fewer if the track has fewer), without
    /// working out the rest of a long track's.
    pub fn first_offsets(&self, n: usize) -> Vec<u64> {
        match &self.offsets.later {
            Some(later) => later.first(&self.sizes, n),
            None => self.offsets.known.iter().take(n).copied().collect(),
        }
    }

    /// The offsets to change or extend (worked out first if need be).
    pub fn offsets_mut(&mut self) -> &mut Vec<u64> {
        if let Some(later) = self.offsets.later.take() {
            self.offsets.known = later.offsets(&self.sizes).to_vec();
        }
        &mut self.offsets.known
    }

    /// Whether the offsets are known (not left to work out on first use).
    pub fn offsets_known(&self) -> bool {
        self.offsets.later.as_ref().is_none_or(|l| l.worked_out())
    }

    /// True when the track has no samples.
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    /// The composition offset of sample `i` (0 without `ctts`).
    pub fn cts_offset(&self, i: usize) -> i32 {
        self.cts_offsets.get(i).copied().unwrap_or(0)
    }

    /// Whether sample `i` is a sync sample.
    pub fn is_sync(&self, i: usize) -> bool {
        match &self.sync {
            None => true,
            Some(list) => u32::try_from(i).is_ok_and(|i| list.binary_search(&i).is_ok()),
        }
    }

    /// Decode time just past the last sample.
    pub fn end_dts(&self) -> u64 {
        match (self.dts.last(), self.durations.last()) {
            (Some(dts), Some(duration)) => dts.saturating_add(u64::from(*duration)),
            _ => 0,
        }
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.sizes.capacity() * 4
            // Offsets left for later are weighed as they will be.
            + self.offsets.known.capacity().max(self.sizes.len()) * 8
            + self.dts.capacity() * 8
            + self.durations.capacity() * 4
            + self.cts_offsets.capacity() * 4
            + self.sync.as_ref().map_or(0, |s| s.capacity() * 4)
    }
}
