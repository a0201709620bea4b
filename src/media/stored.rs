//! A title's [`MediaIndex`] as bytes, for the index tiers under the memory cache (a folder
//! on the replica's disk, a prefix in the object store; `server::titles::tiers`).
//!
//! Our own format, not serde with a binary codec: the index is a few flat arrays, which
//! pack far smaller as runs (a `moov` file's decode times and offsets follow from its
//! durations and sizes but for a few jumps) than field by field, and an index object is
//! hostile input like a file. So decoding checks what the parser guarantees before it is
//! used: the format version and a CRC-32C of the whole; the object it claims to describe
//! (key, size, version) against the one asked for; every count against the limits and
//! against the bytes actually there before anything is allocated; every sample inside the
//! object; times that never run backwards or overflow; and the sample description, from
//! which the codec is worked out again by the parser's own code (`describe_codec`), with
//! its nesting bounded first. One that fails any check is an error: the caller rebuilds
//! the index from the `moov` and writes it again.
//!
//! Layout, format 1: `VPIX`, then every number as an unsigned LEB128 varint (signed ones
//! zigzagged), then the CRC-32C of everything before it (4 bytes, little-endian). After the
//! magic: the format, key, size, version, movie timescale, the audio and video tracks, the
//! text tracks. Strings and byte strings are a length and the bytes. Per track: id, kind,
//! timescale, language (empty for none), sample description, `tkhd` width and height,
//! display matrix, edits, samples. Samples: count, sizes, duration runs (count, value);
//! the first decode time and runs where a decode time is not the previous sample's end;
//! composition offsets (flag, one per sample); sync samples (flag, count, steps); offset
//! runs where a sample does not follow the previous one. A run is (samples since the last
//! run, distance from where the sample would otherwise be).

use bytes::Bytes;
use mp4_atom::{Decode, Stsd};

use super::skeleton::check_sample_description_nesting;
use super::{
    describe_codec, describe_dolby_vision, CodecInfo, Edit, EditList, MediaIndex, MediaLimits,
    SampleTable, TextFormat, TextTrackIndex, TrackIndex, TrackKind,
};
use crate::source::{ObjectIdentity, ObjectKey};

/// The first four bytes of an index object.
const MAGIC: &[u8; 4] = b"VPIX";

/// The format written and the only one read. Bump it whenever the index the parser makes
/// from the same file changes, not only the layout: the object names carry it
/// (`INDEX_FORMAT` in `tiers`), so replicas of two versions never read each other's.
pub const INDEX_FORMAT: u32 = 1;

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
        out.samples(&track.samples);
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
        out.samples(&text.samples);
    }
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
    let mut tracks = Vec::with_capacity(track_count);
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
        let samples = r.samples(track_id, identity.size, limits, &mut budget)?;
        check_edits(&edits, &samples, track_id)?;
        tracks.push(TrackIndex {
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
            samples,
        });
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
        let samples = r.samples(track_id, identity.size, limits, &mut budget)?;
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

/// An index error about track `track_id`.
fn invalid(track_id: u32, reason: String) -> StoredIndexError {
    StoredIndexError::Invalid(format!("track {track_id}: {reason}"))
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
    Ok(CodecInfo {
        dolby_vision: codec.dolby_vision.or(describe_dolby_vision(stsd)),
        ..codec
    })
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
struct SampleBudget {
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

    fn take(&mut self, n: u64) -> Result<()> {
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

/// Appends the format's values: unsigned LEB128 varints, signed ones zigzagged first.
struct Writer(Vec<u8>);

impl Writer {
    fn var(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn signed(&mut self, v: i64) {
        self.var(((v << 1) ^ (v >> 63)) as u64);
    }

    fn u32(&mut self, v: u32) {
        self.var(u64::from(v));
    }

    fn u64(&mut self, v: u64) {
        self.var(v);
    }

    fn count(&mut self, n: usize) {
        self.var(n as u64);
    }

    fn bytes(&mut self, b: &[u8]) {
        self.count(b.len());
        self.0.extend_from_slice(b);
    }

    fn edits(&mut self, edits: &EditList) {
        self.count(edits.edits.len());
        for e in &edits.edits {
            self.u64(e.start_ticks);
            self.u64(e.duration_ticks);
            self.0.push(u8::from(e.media_time_ticks.is_some()));
            self.u64(e.media_time_ticks.unwrap_or(0));
        }
    }

    fn samples(&mut self, s: &SampleTable) {
        let n = s.len();
        self.count(n);
        for size in &s.sizes {
            self.u32(*size);
        }
        // Durations as runs of one value.
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for d in &s.durations {
            match runs.last_mut() {
                Some((count, value)) if value == d => *count += 1,
                _ => runs.push((1, *d)),
            }
        }
        self.count(runs.len());
        for (count, value) in runs {
            self.u32(count);
            self.u32(value);
        }
        // Decode times: the first, then each that is not the previous sample's end, as
        // (samples since the last jump, time past that end).
        self.u64(s.dts.first().copied().unwrap_or(0));
        let jumps: Vec<(usize, u64)> = (1..n)
            .filter_map(|i| {
                let (prev, d, dts) = (s.dts.get(i - 1)?, s.durations.get(i - 1)?, s.dts.get(i)?);
                let end = prev.saturating_add(u64::from(*d));
                (end != *dts).then_some((i, dts.wrapping_sub(end)))
            })
            .collect();
        self.count(jumps.len());
        let mut last = 0;
        for (i, gap) in jumps {
            self.count(i - last);
            self.signed(gap as i64);
            last = i;
        }
        self.0.push(u8::from(!s.cts_offsets.is_empty()));
        for c in &s.cts_offsets {
            self.signed(i64::from(*c));
        }
        self.0.push(u8::from(s.sync.is_some()));
        let sync = s.sync.as_deref().unwrap_or(&[]);
        self.count(sync.len());
        let mut last = 0u32;
        for i in sync {
            self.u32(i.wrapping_sub(last));
            last = *i;
        }
        // Offsets: a run starts wherever a sample does not follow the previous one, as
        // (samples since the last run, distance from the previous sample's end).
        let offsets = s.offsets();
        let mut starts: Vec<(usize, i64)> = Vec::new();
        let mut end = 0u64;
        for (i, (at, size)) in offsets.iter().zip(&s.sizes).enumerate() {
            if i == 0 || *at != end {
                starts.push((i, at.wrapping_sub(end) as i64));
            }
            end = at.saturating_add(u64::from(*size));
        }
        self.count(starts.len());
        let mut last = 0;
        for (i, gap) in starts {
            self.count(i - last);
            self.signed(gap);
            last = i;
        }
    }
}

/// Reads the format's values, every one checked against the bytes left.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.rest.len() {
            return Err(StoredIndexError::Format("cut short".into()));
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let bytes = self.take(N)?;
        <[u8; N]>::try_from(bytes).map_err(|_| StoredIndexError::Format("cut short".into()))
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    fn var(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(StoredIndexError::Format(
            "a number longer than 64 bits".into(),
        ))
    }

    fn signed(&mut self) -> Result<i64> {
        let v = self.var()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    fn u32(&mut self) -> Result<u32> {
        u32::try_from(self.var()?)
            .map_err(|_| StoredIndexError::Invalid("a 32-bit value out of range".into()))
    }

    fn u64(&mut self) -> Result<u64> {
        self.var()
    }

    /// A count of items of at least `item_bytes` each: at most `max`, and at most what the
    /// bytes left can hold, so nothing is allocated for what is not there.
    fn count(&mut self, max: usize, limit: &'static str, item_bytes: usize) -> Result<usize> {
        let n = usize::try_from(self.var()?).unwrap_or(usize::MAX);
        if n > max {
            return Err(StoredIndexError::TooLarge {
                limit,
                value: n.try_into().unwrap_or(u64::MAX),
                max: max as u64,
            });
        }
        if n.saturating_mul(item_bytes) > self.rest.len() {
            return Err(StoredIndexError::Format("a count past the end".into()));
        }
        Ok(n)
    }

    fn take_bytes(&mut self, max: usize) -> Result<&'a [u8]> {
        let n = self.count(max, "index string length", 1)?;
        self.take(n)
    }

    fn string(&mut self, max: usize) -> Result<String> {
        let bytes = self.take_bytes(max)?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| StoredIndexError::Invalid("a string that is not UTF-8".into()))
    }

    fn edits(&mut self, track_id: u32) -> Result<EditList> {
        let n = self.count(MAX_EDITS, "edits per track", 4)?;
        let mut edits = Vec::with_capacity(n);
        for _ in 0..n {
            let start_ticks = self.u64()?;
            let duration_ticks = self.u64()?;
            let has_media = self.u8()?;
            let media_time = self.u64()?;
            let media_time_ticks = match has_media {
                0 => None,
                1 => Some(media_time),
                other => return Err(invalid(track_id, format!("edit flag {other}"))),
            };
            edits.push(Edit {
                start_ticks,
                duration_ticks,
                media_time_ticks,
            });
        }
        Ok(EditList { edits })
    }

    /// A sample table, checked as the parser checks one: within the limits, every sample
    /// inside the object of `object_size` bytes, decode times that never run backwards.
    fn samples(
        &mut self,
        track_id: u32,
        object_size: u64,
        limits: &MediaLimits,
        budget: &mut SampleBudget,
    ) -> Result<SampleTable> {
        let max = usize::try_from(limits.max_samples_per_track).unwrap_or(usize::MAX);
        let n = self.count(max, "max_samples_per_track", 1)?;
        budget.take(n as u64)?;
        let mut sizes = Vec::with_capacity(n);
        for _ in 0..n {
            let size = self.u32()?;
            if size > limits.max_sample_bytes {
                return Err(StoredIndexError::TooLarge {
                    limit: "max_sample_bytes",
                    value: u64::from(size),
                    max: u64::from(limits.max_sample_bytes),
                });
            }
            sizes.push(size);
        }
        let runs = self.count(n, "duration runs", 2)?;
        let mut durations = Vec::with_capacity(n);
        for _ in 0..runs {
            let count = usize::try_from(self.var()?).unwrap_or(usize::MAX);
            let value = self.u32()?;
            if count > n - durations.len() {
                return Err(invalid(track_id, "duration runs past the samples".into()));
            }
            durations.extend(std::iter::repeat_n(value, count));
        }
        if durations.len() != n {
            return Err(invalid(
                track_id,
                "duration runs short of the samples".into(),
            ));
        }
        let first = self.u64()?;
        let jumps = self.count(n, "decode time jumps", 2)?;
        let dts = self.decode_times(track_id, first, &durations, jumps)?;
        let cts_offsets = match self.u8()? {
            0 => Vec::new(),
            1 => {
                if n > self.rest.len() {
                    return Err(StoredIndexError::Format("cut short".into()));
                }
                let mut cts = Vec::with_capacity(n);
                for _ in 0..n {
                    let c = i32::try_from(self.signed()?)
                        .map_err(|_| invalid(track_id, "a composition offset".into()))?;
                    cts.push(c);
                }
                cts
            }
            other => return Err(invalid(track_id, format!("composition flag {other}"))),
        };
        let has_sync = self.u8()?;
        let count = self.count(n, "sync samples", 1)?;
        let mut list = Vec::with_capacity(count);
        let mut at = 0u32;
        for k in 0..count {
            let step = self.u32()?;
            if k > 0 && step == 0 {
                return Err(invalid(track_id, "sync samples out of order".into()));
            }
            at = (at.checked_add(step))
                .filter(|i| (*i as usize) < n)
                .ok_or_else(|| invalid(track_id, "a sync sample past the samples".into()))?;
            list.push(at);
        }
        let sync = match has_sync {
            0 if count == 0 => None,
            1 => Some(list),
            other => return Err(invalid(track_id, format!("sync flag {other}"))),
        };
        let runs = self.count(n, "offset runs", 2)?;
        let offsets = self.offsets(track_id, &sizes, runs, object_size)?;
        Ok(SampleTable {
            sizes,
            offsets: offsets.into(),
            dts,
            durations,
            cts_offsets,
            sync,
        })
    }

    /// The next run of `left`: the sample it starts at, `after` the last one's (`None` for
    /// a first run), and its value.
    fn run(
        &mut self,
        left: usize,
        after: Option<usize>,
        track_id: u32,
    ) -> Result<Option<(usize, i64)>> {
        if left == 0 {
            return Ok(None);
        }
        let step = usize::try_from(self.var()?).unwrap_or(usize::MAX);
        if after.is_some() && step == 0 {
            return Err(invalid(track_id, "runs out of order".into()));
        }
        let at = after.unwrap_or(0).saturating_add(step);
        Ok(Some((at, self.signed()?)))
    }

    /// Decode times from the first, the durations and `jumps` runs: each sample's is the
    /// previous one's end but where a run says how far past it (never before the previous
    /// sample's own time).
    fn decode_times(
        &mut self,
        track_id: u32,
        first: u64,
        durations: &[u32],
        jumps: usize,
    ) -> Result<Vec<u64>> {
        let mut dts = Vec::with_capacity(durations.len());
        let mut left = jumps;
        let mut next = self.run(left, None, track_id)?;
        let mut time = first;
        for (i, duration) in durations.iter().enumerate() {
            if let Some((at, gap)) = next.filter(|(at, _)| *at == i) {
                let prev = dts.last().copied();
                time = (i > 0)
                    .then(|| time.checked_add_signed(gap))
                    .flatten()
                    .filter(|t| prev.is_some_and(|p| *t >= p))
                    .ok_or_else(|| invalid(track_id, format!("decode time of sample {at}")))?;
                left -= 1;
                next = self.run(left, Some(at), track_id)?;
            }
            dts.push(time);
            time = time
                .checked_add(u64::from(*duration))
                .ok_or_else(|| invalid(track_id, "decode times overflow".into()))?;
        }
        if next.is_some() {
            return Err(invalid(
                track_id,
                "a decode time jump past the samples".into(),
            ));
        }
        Ok(dts)
    }

    /// Sample offsets from `runs` runs: each sample follows the previous one but where a
    /// run places it; every sample must end inside the object.
    fn offsets(
        &mut self,
        track_id: u32,
        sizes: &[u32],
        runs: usize,
        object_size: u64,
    ) -> Result<Vec<u64>> {
        let mut offsets = Vec::with_capacity(sizes.len());
        let mut left = runs;
        let mut next = self.run(left, None, track_id)?;
        let mut at = 0u64;
        for (i, size) in sizes.iter().enumerate() {
            match next.filter(|(start, _)| *start == i) {
                Some((start, gap)) => {
                    at = at
                        .checked_add_signed(gap)
                        .ok_or_else(|| invalid(track_id, format!("offset of sample {start}")))?;
                    left -= 1;
                    next = self.run(left, Some(start), track_id)?;
                }
                None if i == 0 => {
                    return Err(invalid(track_id, "no offset for the first sample".into()))
                }
                None => {}
            }
            let end = at
                .checked_add(u64::from(*size))
                .filter(|e| *e <= object_size);
            let Some(end) = end else {
                return Err(invalid(
                    track_id,
                    format!("sample {i} at {at} ends past the object's {object_size} bytes"),
                ));
            };
            offsets.push(at);
            at = end;
        }
        if next.is_some() {
            return Err(invalid(track_id, "an offset run past the samples".into()));
        }
        Ok(offsets)
    }
}

#[cfg(test)]
mod tests;
