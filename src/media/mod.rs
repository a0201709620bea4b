//! What an MP4 says: locating `moov`, parsing it, and the compact per-track sample index.
//!
//! This is the only module that reads mp4-atom's parse types. It turns a source object into
//! a [`MediaIndex`]: for each audio or video track its codec, raw sample description (carried
//! byte for byte into init segments), edit list, and flat per-sample arrays (size, file
//! offset, decode time, duration, composition offset, sync flags). Sample numbers are
//! 0-based here; MP4 tables are 1-based and are converted at the parse boundary. A
//! fragmented file (`moov` with `mvex`, then `moof`/`mdat` pairs) gives the same index:
//! `fragments` finds its `moof` boxes with few reads and appends their samples.
//!
//! Packaging decisions (where to cut, how to shift times) are not made here: see `package`.

mod codec;
mod error;
mod fragments;
mod limits;
mod load;
mod locate;
mod parse;
mod skeleton;

use bytes::Bytes;

use crate::source::ObjectIdentity;

pub use codec::describe_codec;
pub use error::MediaError;
pub use fragments::{FragmentDiscovery, FragmentReport};
pub use limits::MediaLimits;
#[doc(hidden)]
pub use load::index_from_bytes;
pub use load::{load_index, load_index_report, IndexReport};
pub use locate::{locate_boxes, TopLevelBoxes};
pub use parse::parse_index;

/// Everything the packager needs to know about one MP4 object.
#[derive(Debug, Clone)]
pub struct MediaIndex {
    /// The object version this index describes.
    pub identity: ObjectIdentity,
    /// `mvhd` timescale (ticks per second of the movie timeline, used by edit lists).
    pub movie_timescale: u32,
    /// Audio and video tracks in file order. Other tracks (text, metadata) are skipped.
    pub tracks: Vec<TrackIndex>,
}

impl MediaIndex {
    /// Approximate heap bytes held, for the cache weigher.
    pub fn heap_bytes(&self) -> usize {
        self.tracks
            .iter()
            .map(TrackIndex::heap_bytes)
            .sum::<usize>()
            + 256
    }

    /// The track with this id.
    pub fn track(&self, track_id: u32) -> Option<&TrackIndex> {
        self.tracks.iter().find(|t| t.track_id == track_id)
    }
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
    /// `tkhd` width and height, 16.16 fixed point, as the source has them.
    pub tkhd_width: u32,
    /// See `tkhd_width`.
    pub tkhd_height: u32,
    /// The edit list reduced to the one shift the packager honours.
    pub edit: EditShift,
    /// The samples.
    pub samples: SampleTable,
}

impl TrackIndex {
    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.samples.heap_bytes() + self.sample_description.len() + 128
    }

    /// Track duration in ticks of `timescale` (decode time of the end of the last sample).
    pub fn duration_ticks(&self) -> u64 {
        self.samples.end_dts()
    }
}

/// An edit list reduced to what a VOD packager honours (ISO/IEC 14496-12 8.6.6): an
/// optional leading empty edit (the track starts later than the movie) and the media
/// time where presentation starts. Further edits are not supported and are ignored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EditShift {
    /// Duration of leading empty edits, in ticks of the track's timescale.
    pub empty_ticks: u64,
    /// Media time (track ticks) presented at the start of the first non-empty edit.
    pub media_time_ticks: u64,
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
}

/// Flat per-sample arrays of one track, all of the same length, in decode order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SampleTable {
    /// Sample sizes in bytes.
    pub sizes: Vec<u32>,
    /// Absolute file offsets of each sample's first byte.
    pub offsets: Vec<u64>,
    /// Decode times in track ticks, non-decreasing, starting at 0 (in a fragmented file,
    /// at the first fragment's `tfdt`: its decode time on the media timeline).
    pub dts: Vec<u64>,
    /// Sample durations in track ticks.
    pub durations: Vec<u32>,
    /// Composition offsets (pts - dts) in track ticks; empty when the track has no `ctts`.
    pub cts_offsets: Vec<i32>,
    /// 0-based indexes of sync samples, ascending; `None` when every sample is sync.
    pub sync: Option<Vec<u32>>,
}

impl SampleTable {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.sizes.len()
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
            + self.offsets.capacity() * 8
            + self.dts.capacity() * 8
            + self.durations.capacity() * 4
            + self.cts_offsets.capacity() * 4
            + self.sync.as_ref().map_or(0, |s| s.capacity() * 4)
    }
}
