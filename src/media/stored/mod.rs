//! A title's [`MediaIndex`] as bytes, for the index tiers under the memory cache (a folder
//! on the replica's disk, a prefix in the object store; `server::titles::tiers`).
//!
//! Our own format, not serde with a binary codec: the index is a few flat arrays, which
//! pack far smaller as runs than field by field. A stored index is hostile input like a
//! file, so decoding checks the format version, a CRC-32C, the object it claims to
//! describe, and every count, sample and time before use; one that fails any check is an
//! error, and the caller rebuilds the index from the `moov`.

use bytes::Bytes;
use mp4_atom::{Decode, Stsd};

mod read;
mod write;

use read::Reader;
use write::Writer;

use super::side_by_side::{cpu_cores, side_by_side};
use super::skeleton::check_sample_description_nesting;
use super::{
    describe_codec, CaptionChannel, CodecInfo, EditList, MediaIndex, MediaLimits, SampleTable,
    TextFormat, TextTrackIndex, TrackIndex, TrackKind,
};
use crate::source::{ObjectIdentity, ObjectKey};

/// The first four bytes of an index object.
const MAGIC: &[u8; 4] = b"VPIX";

/// The format written and the only one read. Bump it whenever the index the parser makes
/// from the same file changes, not only the layout (4: each audio and video track's
/// caption channels, after its edits): the object names carry it
/// (`INDEX_FORMAT` in `tiers`), so replicas of two versions never read each other's.
pub const INDEX_FORMAT: u32 = 4;

/// The layout of the samples in the file as runs per track (`Writer::layout`).
const LAYOUT_RUNS: u8 = 0;
/// The layout as the file's chunks in file order (`Writer::layout`).
const LAYOUT_CHUNKS: u8 = 1;

/// In the chunk layout, the token (a chunk of 0 samples of track 0, no jump) that says
/// "the last `period` chunks again, `times` times" (`write::repeat_after`).
const REPEAT: u64 = 0;

/// Longest pattern of chunks a repeat names.
const MAX_REPEAT_PERIOD: usize = 64;

/// Fewest chunks a repeat covers (fewer cost no more written out).
const MIN_REPEATED_CHUNKS: usize = 8;

/// Longest key or version string accepted in an index object.
const MAX_NAME_BYTES: usize = 4096;

/// Largest sample description accepted (a real one is under a few KiB).
const MAX_DESCRIPTION_BYTES: usize = 1 << 20;

/// Most edits accepted per track.
const MAX_EDITS: usize = 65_536;

/// The largest index object read for a title within `limits`: at most 40 bytes for each
/// sample a file may hold (a varint size, composition offset, decode time jump and offset
/// run at their widest) and a sample description per track.
pub fn max_index_bytes(limits: &MediaLimits) -> u64 {
    let tracks = u64::try_from(limits.max_tracks).unwrap_or(u64::MAX);
    (limits.max_samples_per_file.saturating_mul(40))
        .saturating_add(tracks.saturating_mul(MAX_DESCRIPTION_BYTES as u64 + 65_536))
}

/// Why an index object was not used.
#[derive(Debug, thiserror::Error)]
pub enum StoredIndexError {
    /// Not an index object of this format, cut short, or its checksum does not match.
    #[error("not a format-{INDEX_FORMAT} index: {0}")]
    Format(String),
    /// An index of another object, or of another version of it.
    #[error("the index describes {0}, not the object asked for")]
    Foreign(String),
    /// A count over the configured limits.
    #[error("the index exceeds the {limit} limit ({value} > {max})")]
    TooLarge {
        limit: &'static str,
        value: u64,
        max: u64,
    },
    /// A value the parser would never have produced from the object.
    #[error("invalid index: {0}")]
    Invalid(String),
}

type Result<T> = std::result::Result<T, StoredIndexError>;

/// `index` of the object `key` as an index object. Works out any sample offsets still left
/// for later (a pass over the chunk tables): call it off the runtime workers.
pub fn encode_index(key: &ObjectKey, index: &MediaIndex) -> Vec<u8> {
    let mut out = Writer(Vec::with_capacity(index.heap_bytes() / 4 + 1024));
    out.0.extend_from_slice(MAGIC);
    out.u32(INDEX_FORMAT);
    out.bytes(key.as_str().as_bytes());
    out.u64(index.identity.size);
    out.bytes(index.identity.version.as_bytes());
    out.u32(index.movie_timescale);
    out.count(index.tracks.len());
    for track in &index.tracks {
        out.u32(track.track_id);
        out.0.push(match track.kind {
            TrackKind::Video => 0,
            TrackKind::Audio => 1,
        });
        out.u32(track.timescale);
        out.bytes(track.language.as_deref().unwrap_or("").as_bytes());
        out.bytes(&track.sample_description);
        out.u32(track.tkhd_width);
        out.u32(track.tkhd_height);
        for m in track.display_matrix {
            out.signed(i64::from(m));
        }
        out.edits(&track.edits);
        out.count(track.captions.len());
        for channel in &track.captions {
            out.0.extend_from_slice(&match channel {
                CaptionChannel::Cea608(n) => [0, *n],
                CaptionChannel::Cea708(n) => [1, *n],
            });
        }
        out.samples_block(&track.samples);
    }
    out.count(index.text_tracks.len());
    for text in &index.text_tracks {
        out.u32(text.track_id);
        out.0.push(match text.format {
            TextFormat::Tx3g => 0,
            TextFormat::Wvtt => 1,
        });
        out.u32(text.timescale);
        out.bytes(text.language.as_deref().unwrap_or("").as_bytes());
        out.edits(&text.edits);
        out.samples_block(&text.samples);
    }
    let tables: Vec<&SampleTable> = (index.tracks.iter().map(|t| &t.samples))
        .chain(index.text_tracks.iter().map(|t| &t.samples))
        .collect();
    out.layout(&tables);
    let crc = crc32c::crc32c(&out.0);
    out.0.extend_from_slice(&crc.to_le_bytes());
    out.0
}

/// The index in index object `bytes`, if it is a sound one of object version `identity`
/// under `key`, within `limits`.
///
/// # Errors
/// Why it is not used (see [`StoredIndexError`]).
pub fn decode_index(
    bytes: &[u8],
    key: &ObjectKey,
    identity: &ObjectIdentity,
    limits: &MediaLimits,
) -> Result<MediaIndex> {
    let short = || StoredIndexError::Format("shorter than its header".into());
    let (body, crc) = bytes.split_last_chunk::<4>().ok_or_else(short)?;
    if body.get(..4) != Some(MAGIC.as_slice()) {
        return Err(StoredIndexError::Format("no VPIX magic".into()));
    }
    if crc32c::crc32c(body) != u32::from_le_bytes(*crc) {
        return Err(StoredIndexError::Format("checksum mismatch".into()));
    }
    let mut r = Reader {
        rest: body.get(4..).ok_or_else(short)?,
    };
    let format = r.u32()?;
    if format != INDEX_FORMAT {
        return Err(StoredIndexError::Format(format!("format {format}")));
    }
    let stored_key = r.string(MAX_NAME_BYTES)?;
    let size = r.u64()?;
    let version = r.string(MAX_NAME_BYTES)?;
    if stored_key != key.as_str() || size != identity.size || version != identity.version {
        return Err(StoredIndexError::Foreign(format!(
            "{stored_key:?} of {size} bytes, version {version:?}"
        )));
    }
    let movie_timescale = r.u32()?;
    if movie_timescale == 0 {
        return Err(StoredIndexError::Invalid("movie timescale 0".into()));
    }
    let mut budget = SampleBudget::new(limits);
    let track_count = r.count(limits.max_tracks, "max_tracks", 1)?;
    let mut headers = Vec::with_capacity(track_count);
    for _ in 0..track_count {
        let track_id = r.u32()?;
        let kind = match r.u8()? {
            0 => TrackKind::Video,
            1 => TrackKind::Audio,
            other => return Err(invalid(track_id, format!("kind {other}"))),
        };
        let timescale = timescale(&mut r, track_id)?;
        let language = language(&mut r, track_id)?;
        let description = r.take_bytes(MAX_DESCRIPTION_BYTES)?;
        let sample_description = Bytes::copy_from_slice(description);
        let codec = codec_of(&sample_description, track_id, limits)?;
        let tkhd_width = r.u32()?;
        let tkhd_height = r.u32()?;
        let mut display_matrix = [0i32; 9];
        for m in &mut display_matrix {
            *m = i32::try_from(r.signed()?)
                .map_err(|_| invalid(track_id, "display matrix".into()))?;
        }
        let edits = r.edits(track_id)?;
        let captions = captions(&mut r, track_id)?;
        let block = r.samples_block(&mut budget)?;
        let track = TrackIndex {
            track_id,
            kind,
            timescale,
            language,
            codec,
            sample_description,
            tkhd_width,
            tkhd_height,
            display_matrix,
            edits,
            samples: SampleTable::default(),
            captions,
        };
        headers.push((track, block));
    }
    let blocks: Vec<(u32, &[u8])> = headers.iter().map(|(t, b)| (t.track_id, *b)).collect();
    let mut tracks = Vec::with_capacity(track_count);
    for ((mut track, _), samples) in headers.into_iter().zip(decode_blocks(&blocks, limits)) {
        track.samples = samples?;
        check_edits(&track.edits, &track.samples, track.track_id)?;
        tracks.push(track);
    }
    if tracks.is_empty() {
        return Err(StoredIndexError::Invalid("no audio or video track".into()));
    }
    let text_count = r.count(limits.max_tracks, "max_tracks", 1)?;
    let mut text_tracks = Vec::with_capacity(text_count);
    for _ in 0..text_count {
        let track_id = r.u32()?;
        let format = match r.u8()? {
            0 => TextFormat::Tx3g,
            1 => TextFormat::Wvtt,
            other => return Err(invalid(track_id, format!("text format {other}"))),
        };
        let timescale = timescale(&mut r, track_id)?;
        let language = language(&mut r, track_id)?;
        let edits = r.edits(track_id)?;
        let block = r.samples_block(&mut budget)?;
        let samples = decode_block(track_id, block, limits)?;
        check_edits(&edits, &samples, track_id)?;
        text_tracks.push(TextTrackIndex {
            track_id,
            format,
            timescale,
            language,
            edits,
            samples,
        });
    }
    let ids: Vec<u32> = (tracks.iter().map(|t| t.track_id))
        .chain(text_tracks.iter().map(|t| t.track_id))
        .collect();
    let sizes: Vec<&[u32]> = (tracks.iter().map(|t| t.samples.sizes.as_slice()))
        .chain(text_tracks.iter().map(|t| t.samples.sizes.as_slice()))
        .collect();
    let offsets = r.layout(&sizes, &ids, identity.size)?;
    let tables = (tracks.iter_mut().map(|t| &mut t.samples))
        .chain(text_tracks.iter_mut().map(|t| &mut t.samples));
    for (table, offsets) in tables.zip(offsets) {
        table.offsets = offsets.into();
    }
    if !r.rest.is_empty() {
        return Err(StoredIndexError::Format(format!(
            "{} bytes after the last track",
            r.rest.len()
        )));
    }
    Ok(MediaIndex {
        identity: identity.clone(),
        movie_timescale,
        tracks,
        text_tracks,
    })
}

/// Sample blocks above this many bytes in all are decoded one group of tracks per core.
const PARALLEL_BLOCK_BYTES: usize = 128 * 1024;

/// The sample tables of `blocks` (track id, samples block), in order: side by side on
/// scoped threads ([`side_by_side`], by bytes) when there are two or more and they hold
/// [`PARALLEL_BLOCK_BYTES`] or more, as the parser reads a long title's tables
/// (`parse::read_tables`); a first master from a tier is mostly this decoding.
fn decode_blocks(blocks: &[(u32, &[u8])], limits: &MediaLimits) -> Vec<Result<SampleTable>> {
    let total: usize = blocks.iter().map(|(_, b)| b.len()).sum();
    if blocks.len() < 2 || cpu_cores() < 2 || total < PARALLEL_BLOCK_BYTES {
        return (blocks.iter())
            .map(|(id, block)| decode_block(*id, block, limits))
            .collect();
    }
    // A block whose thread panicked stays "not decoded": the index is refused.
    let mut out: Vec<Result<SampleTable>> = (blocks.iter())
        .map(|(id, _)| Err(invalid(*id, "samples not decoded".into())))
        .collect();
    let results = side_by_side(
        blocks,
        |(_, block)| block.len() as u64,
        |(id, block)| decode_block(*id, block, limits),
    );
    for (i, result) in results {
        if let Some(slot) = out.get_mut(i) {
            *slot = result;
        }
    }
    out
}

/// The sample table of track `track_id` from its samples block, which it must fill.
fn decode_block(track_id: u32, block: &[u8], limits: &MediaLimits) -> Result<SampleTable> {
    let mut r = Reader { rest: block };
    let samples = r.samples(track_id, limits)?;
    if !r.rest.is_empty() {
        return Err(invalid(
            track_id,
            format!("{} bytes after the samples", r.rest.len()),
        ));
    }
    Ok(samples)
}

/// An index error about track `track_id`.
fn invalid(track_id: u32, reason: String) -> StoredIndexError {
    StoredIndexError::Invalid(format!("track {track_id}: {reason}"))
}

/// Most caption channels a track may list: CC1-CC4 and SERVICE1-SERVICE63.
const MAX_CAPTION_CHANNELS: usize = 4 + 63;

/// A track's caption channels, each known, in order, each once.
fn captions(r: &mut Reader<'_>, track_id: u32) -> Result<Vec<CaptionChannel>> {
    let n = r.count(MAX_CAPTION_CHANNELS, "caption channels", 2)?;
    let mut out: Vec<CaptionChannel> = Vec::with_capacity(n);
    for _ in 0..n {
        let channel = match (r.u8()?, r.u8()?) {
            (0, n @ 1..=4) => CaptionChannel::Cea608(n),
            (1, n @ 1..=63) => CaptionChannel::Cea708(n),
            (kind, n) => return Err(invalid(track_id, format!("caption channel {kind}/{n}"))),
        };
        if out.last().is_some_and(|last| *last >= channel) {
            return Err(invalid(track_id, "caption channels out of order".into()));
        }
        out.push(channel);
    }
    Ok(out)
}

/// A track's timescale, never 0.
fn timescale(r: &mut Reader<'_>, track_id: u32) -> Result<u32> {
    match r.u32()? {
        0 => Err(invalid(track_id, "timescale 0".into())),
        t => Ok(t),
    }
}

/// A track's language as the parser keeps it: three lowercase letters, or none.
fn language(r: &mut Reader<'_>, track_id: u32) -> Result<Option<String>> {
    let language = r.string(3)?;
    if language.is_empty() {
        return Ok(None);
    }
    if language == "und" || !language.chars().all(|c| c.is_ascii_lowercase()) {
        return Err(invalid(track_id, format!("language {language:?}")));
    }
    Ok(Some(language))
}

/// The codec of sample description `stsd` (the whole box), as the parser works it out.
fn codec_of(stsd: &Bytes, track_id: u32, limits: &MediaLimits) -> Result<CodecInfo> {
    check_sample_description_nesting(stsd, limits)
        .map_err(|e| invalid(track_id, format!("sample description: {e}")))?;
    let decoded = Stsd::decode(&mut stsd.as_ref())
        .map_err(|e| invalid(track_id, format!("sample description: {e}")))?;
    let first =
        (decoded.codecs.first()).ok_or_else(|| invalid(track_id, "no sample entry".into()))?;
    let codec = describe_codec(first, track_id).map_err(|e| invalid(track_id, e.to_string()))?;
    Ok(codec.with_dolby_vision_of(stsd))
}

/// Edits the parser could have made from these samples: media times inside the media,
/// movie times that do not overflow.
fn check_edits(edits: &EditList, samples: &SampleTable, track_id: u32) -> Result<()> {
    let media_end = samples
        .dts
        .iter()
        .zip(&samples.durations)
        .enumerate()
        .map(|(i, (dts, d))| {
            let end = i128::from(*dts) + i128::from(*d) + i128::from(samples.cts_offset(i));
            u64::try_from(end.max(0)).unwrap_or(u64::MAX)
        })
        .max()
        .unwrap_or(0)
        .max(samples.end_dts());
    for edit in &edits.edits {
        if edit.start_ticks.checked_add(edit.duration_ticks).is_none() {
            return Err(invalid(track_id, "edit times overflow".into()));
        }
        if edit.media_time_ticks.is_some_and(|t| t > media_end) {
            return Err(invalid(track_id, "an edit starts past the media".into()));
        }
    }
    Ok(())
}

/// Samples counted so far against the per-file limit.
pub(super) struct SampleBudget {
    used: u64,
    max: u64,
}

impl SampleBudget {
    fn new(limits: &MediaLimits) -> Self {
        Self {
            used: 0,
            max: limits.max_samples_per_file,
        }
    }

    pub(super) fn take(&mut self, n: u64) -> Result<()> {
        self.used = self.used.saturating_add(n);
        if self.used > self.max {
            return Err(StoredIndexError::TooLarge {
                limit: "max_samples_per_file",
                value: self.used,
                max: self.max,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
