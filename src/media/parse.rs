//! `moov` bytes to `MediaIndex`: mp4-atom decodes the boxes, this module interprets them.
//!
//! mp4-atom gives the sample tables as decoded ("without validation or interpretation");
//! here they are expanded into flat per-sample arrays, checking every count against the
//! sample count, every offset against the object's length, and every size against
//! [`MediaLimits`] before allocating. mp4-atom decodes a bounded copy of `moov` made by
//! `skeleton.rs`, which also cuts out the raw `stsd` box of each track, because init segments
//! carry it verbatim (mp4-atom re-encodes sample entries from decoded fields and refuses
//! unknown ones).

use bytes::Bytes;
use mp4_atom::{Decode, Moov, Trak};

use super::fragments::{self, FoundFragments};
use super::matrix;
use super::side_by_side::{cpu_cores, side_by_side};
use super::tables::{self, RawTables};
use super::{
    describe_codec, skeleton, Edit, EditList, MediaError, MediaIndex, MediaLimits, SampleTable,
    TextFormat, TextTrackIndex, TrackIndex, TrackKind,
};
use crate::source::ObjectIdentity;

/// Parse a whole `moov` box (header included) of the object `identity`.
///
/// # Errors
/// A [`MediaError`] naming the first table or limit the file breaks.
pub fn parse_index(
    identity: ObjectIdentity,
    moov_bytes: &Bytes,
    limits: &MediaLimits,
) -> Result<MediaIndex, MediaError> {
    parse_with_fragments(identity, moov_bytes, None, limits)
}

/// [`parse_index`] for a file whose tracks continue in movie fragments: each track's
/// samples are its `moov` ones followed by those of its track fragments in `fragments`.
///
/// # Errors
/// As [`parse_index`], and a [`MediaError`] naming the first fragment box that breaks a
/// rule or limit; a fragmented file without any sample is refused.
pub(super) fn parse_with_fragments(
    identity: ObjectIdentity,
    moov_bytes: &Bytes,
    fragments: Option<&FoundFragments>,
    limits: &MediaLimits,
) -> Result<MediaIndex, MediaError> {
    // Bounded nesting and the track limit are checked here, before mp4-atom sees anything.
    let skeleton = skeleton::build(moov_bytes, limits)?;
    // mp4-atom's messages quote box types and strings from the file: escape them, so the
    // reason stays one printable line.
    let moov = Moov::decode(&mut &skeleton.moov[..]).map_err(|e| MediaError::Malformed {
        reason: format!("moov: {}", e.to_string().escape_debug()),
    })?;
    let movie_timescale = moov.mvhd.timescale;
    if movie_timescale == 0 {
        return Err(MediaError::Malformed {
            reason: "mvhd timescale is 0".into(),
        });
    }
    let raw_tables = skeleton.tables;
    check_sample_budget(&moov.trak, &raw_tables, limits)?;
    let mut fragment_samples = match fragments {
        Some(found) => {
            // A table that cannot be read counts nothing here; it fails the track (if the
            // track is served) when its samples are read.
            let declared: Vec<(u32, u64, u64)> = (moov.trak.iter().zip(&raw_tables))
                .map(|(t, raw)| {
                    let id = t.tkhd.track_id;
                    let count = tables::sample_count(raw, id).unwrap_or(0);
                    (id, count, tables::stts_end(raw, id).unwrap_or(0))
                })
                .collect();
            fragments::decode(moov_bytes, &found.moofs, &declared, identity.size, limits)?
        }
        None => fragments::FragmentSamples::default(),
    };
    let descriptions = skeleton.sample_descriptions;
    let mut tables_read = read_tables(
        &moov.trak,
        &raw_tables,
        identity.size,
        limits,
        PARALLEL_TABLE_BYTES,
    );
    let mut tracks = Vec::new();
    let mut text_tracks = Vec::new();
    let mut first_unsupported = None;
    let no_tables = RawTables::default();
    for (i, trak) in moov.trak.iter().enumerate() {
        let raw = raw_tables.get(i).unwrap_or(&no_tables);
        if let Some(format) = text_format(trak) {
            // A broken text track costs the title its subtitles, not its audio and video.
            match text_track(
                trak,
                raw,
                format,
                movie_timescale,
                &identity,
                limits,
                &mut fragment_samples,
            ) {
                Ok(text) => text_tracks.push(text),
                Err(e) => {
                    tracing::warn!(track_id = trak.tkhd.track_id, error = %e, "skipping text track");
                }
            }
            continue;
        }
        let Some(kind) = track_kind(trak) else {
            continue;
        };
        let track_id = trak.tkhd.track_id;
        let Some(codec) = trak.mdia.minf.stbl.stsd.codecs.first() else {
            return Err(invalid("stsd", track_id, "no sample entry"));
        };
        let codec = match describe_codec(codec, track_id) {
            Ok(codec) => codec,
            Err(e @ MediaError::UnsupportedCodec { .. }) => {
                tracing::warn!(track_id, error = %e, "skipping track");
                first_unsupported.get_or_insert(e);
                continue;
            }
            Err(e) => return Err(e),
        };
        let Some(sample_description) = descriptions.get(i).cloned().flatten() else {
            return Err(invalid("stsd", track_id, "sample description not found"));
        };
        // Dolby Vision boxes are children mp4-atom skips: read them from the raw stsd.
        let codec = codec.with_dolby_vision_of(&sample_description);
        let timescale = trak.mdia.mdhd.timescale;
        if timescale == 0 {
            return Err(invalid("mdhd", track_id, "timescale is 0"));
        }
        let language = Some(trak.mdia.mdhd.language.clone())
            .filter(|l| !l.is_empty() && l != "und" && l.chars().all(|c| c.is_ascii_lowercase()));
        let mut samples = match tables_read.get_mut(i).and_then(Option::take) {
            Some(read) => read?,
            None => tables::sample_table(raw, track_id, identity.size, limits)?,
        };
        fragment_samples.append_to(track_id, &mut samples)?;
        let edits = edit_list(trak, movie_timescale, timescale, &samples)?;
        tracks.push(TrackIndex {
            track_id,
            kind,
            timescale,
            language,
            codec,
            sample_description,
            tkhd_width: fixed_u32(trak.tkhd.width.integer(), trak.tkhd.width.decimal()),
            tkhd_height: fixed_u32(trak.tkhd.height.integer(), trak.tkhd.height.decimal()),
            display_matrix: matrix::track_then_movie(
                matrix_of(&trak.tkhd.matrix),
                matrix_of(&moov.mvhd.matrix),
            ),
            edits,
            samples,
            // Filled by the scan of the samples' heads after the parse (`load`).
            captions: Vec::new(),
        });
    }
    if tracks.is_empty() {
        return Err(first_unsupported.unwrap_or(MediaError::NoTracks));
    }
    if fragments.is_some() && tracks.iter().all(|t| t.samples.is_empty()) {
        return Err(MediaError::Malformed {
            reason: "fragmented file without samples: no moof after moov".to_owned(),
        });
    }
    if fragments.is_some() {
        rebase_late_start(&mut tracks, &mut text_tracks);
    }
    Ok(MediaIndex {
        identity,
        movie_timescale,
        tracks,
        text_tracks,
    })
}

/// Sample tables above this many bytes in all are read one track per thread.
const PARALLEL_TABLE_BYTES: usize = 512 * 1024;

/// The sample tables of the audio and video tracks, read side by side on scoped threads
/// ([`side_by_side`], by the bytes each writes) when a title's tables hold `min_bytes` or
/// more (a long title's cold load is mostly this), else none (the caller reads each in
/// turn). A track later skipped (an unsupported codec) wastes its read; its result, error
/// included, is used only where the caller would have read it.
fn read_tables(
    traks: &[Trak],
    raw_tables: &[RawTables],
    object_len: u64,
    limits: &MediaLimits,
    min_bytes: usize,
) -> Vec<Option<Result<super::SampleTable, MediaError>>> {
    let wanted: Vec<(usize, u32, &RawTables)> = (traks.iter().zip(raw_tables).enumerate())
        .filter(|(_, (trak, _))| text_format(trak).is_none() && track_kind(trak).is_some())
        .map(|(i, (trak, raw))| (i, trak.tkhd.track_id, raw))
        .collect();
    let bytes: usize = wanted.iter().map(|(_, _, raw)| raw.len()).sum();
    let mut out: Vec<Option<Result<super::SampleTable, MediaError>>> =
        (0..traks.len()).map(|_| None).collect();
    if wanted.len() < 2 || cpu_cores() < 2 || bytes < min_bytes {
        return out;
    }
    // A track whose thread panicked is left `None`: the caller reads it again.
    let results = side_by_side(
        &wanted,
        |&(_, id, raw)| table_work(raw, id),
        |&(_, id, raw)| tables::sample_table(raw, id, object_len, limits),
    );
    for (k, result) in results {
        let slot = (wanted.get(k)).and_then(|&(i, _, _)| out.get_mut(i));
        if let Some(slot) = slot {
            *slot = Some(result);
        }
    }
    out
}

/// About how many bytes of arrays reading a track's tables writes: its sample count times
/// the bytes a sample takes (sizes, offsets, times, durations, and composition offsets when
/// it has them). 0 when the count cannot be read (the read itself then says why).
fn table_work(raw: &RawTables, track_id: u32) -> u64 {
    let per_sample = if raw.ctts.is_some() { 28 } else { 24 };
    tables::sample_count(raw, track_id).map_or(0, |n| n.saturating_mul(per_sample))
}

/// Move a fragmented file whose every track starts late back to time 0, keeping the
/// tracks' offsets from one another: a live-to-VOD recording's first `tfdt` carries on
/// the live timeline (hours, or time since an epoch), which as it stands would give a title
/// hours long whose content sits at its very end. Progressive files always start at 0 (a
/// later start is an empty edit), so this makes the fragmented file index like its
/// progressive twin. Left alone when any track has an edit list: its media times are on
/// the file's own timeline and already say where the presentation starts.
fn rebase_late_start(tracks: &mut [TrackIndex], text_tracks: &mut [TextTrackIndex]) {
    if tracks.iter().any(|t| !t.edits.edits.is_empty())
        || text_tracks.iter().any(|t| !t.edits.edits.is_empty())
    {
        return;
    }
    let starts = tracks
        .iter()
        .map(|t| (&t.samples, t.timescale))
        .chain(text_tracks.iter().map(|t| (&t.samples, t.timescale)));
    // The earliest first decode time, in seconds as an exact fraction (ticks, timescale).
    let Some((start, scale)) = starts
        .filter_map(|(samples, scale)| Some((*samples.dts.first()?, u64::from(scale.max(1)))))
        .min_by(|a, b| {
            (u128::from(a.0) * u128::from(b.1)).cmp(&(u128::from(b.0) * u128::from(a.1)))
        })
    else {
        return;
    };
    if start == 0 {
        return;
    }
    // In each track's ticks, rounded down: never past that track's own first sample.
    let rebase = |samples: &mut SampleTable, timescale: u32| {
        let ticks = u128::from(start) * u128::from(timescale) / u128::from(scale);
        let ticks = u64::try_from(ticks).unwrap_or(u64::MAX);
        for dts in &mut samples.dts {
            *dts = dts.saturating_sub(ticks);
        }
    };
    for track in tracks.iter_mut() {
        rebase(&mut track.samples, track.timescale);
    }
    for track in text_tracks.iter_mut() {
        rebase(&mut track.samples, track.timescale);
    }
}

/// The text format of a track with a text handler (`text` in ISO/IEC 14496-30 and 3GPP,
/// `sbtl` as ffmpeg writes for mov_text in MP4, `subt`) and a `tx3g` or `wvtt` sample
/// entry; `None` for every other track.
fn text_format(trak: &Trak) -> Option<TextFormat> {
    match &<[u8; 4]>::from(trak.mdia.hdlr.handler) {
        b"text" | b"sbtl" | b"subt" => TextFormat::of(trak.mdia.minf.stbl.stsd.codecs.first()?),
        _ => None,
    }
}

/// Index one text track: the same sample tables and edit list as audio and video.
fn text_track(
    trak: &Trak,
    raw: &RawTables,
    format: TextFormat,
    movie_timescale: u32,
    identity: &ObjectIdentity,
    limits: &MediaLimits,
    fragment_samples: &mut fragments::FragmentSamples,
) -> Result<TextTrackIndex, MediaError> {
    let track_id = trak.tkhd.track_id;
    let timescale = trak.mdia.mdhd.timescale;
    if timescale == 0 {
        return Err(invalid("mdhd", track_id, "timescale is 0"));
    }
    // A fragmented file's text samples are in its fragments, like its audio and video.
    let mut samples = tables::sample_table(raw, track_id, identity.size, limits)?;
    fragment_samples.append_to(track_id, &mut samples)?;
    let edits = edit_list(trak, movie_timescale, timescale, &samples)?;
    Ok(TextTrackIndex {
        track_id,
        format,
        timescale,
        language: language(trak),
        edits,
        samples,
    })
}

/// The `mdhd` language, `None` for `und` or anything that is not ISO 639-2/T letters.
fn language(trak: &Trak) -> Option<String> {
    Some(trak.mdia.mdhd.language.clone())
        .filter(|l| !l.is_empty() && l != "und" && l.chars().all(|c| c.is_ascii_lowercase()))
}

fn fixed_u32(integer: u16, fraction: u16) -> u32 {
    (u32::from(integer) << 16) | u32::from(fraction)
}

/// mp4-atom's matrix as the nine numbers in file order.
fn matrix_of(m: &mp4_atom::Matrix) -> [i32; 9] {
    [m.a, m.b, m.u, m.c, m.d, m.v, m.x, m.y, m.w]
}

fn invalid(fourcc: &str, track_id: u32, reason: impl Into<String>) -> MediaError {
    MediaError::InvalidTable {
        fourcc: fourcc.to_owned(),
        track_id,
        reason: reason.into(),
    }
}

/// The audio or video kind of a track, from its handler; `None` for tracks not served.
fn track_kind(trak: &Trak) -> Option<TrackKind> {
    match &<[u8; 4]>::from(trak.mdia.hdlr.handler) {
        b"vide" => Some(TrackKind::Video),
        b"soun" => Some(TrackKind::Audio),
        _ => None,
    }
}

/// Refuse a file whose audio, video or text tracks claim more samples than
/// `max_samples_per_track` each or `max_samples_per_file` together, before any per-sample array is allocated. (A `stsz` with one
/// size for every sample claims its count in 8 bytes, so the tables' own size bounds
/// nothing.)
fn check_sample_budget(
    traks: &[Trak],
    tables: &[RawTables],
    limits: &MediaLimits,
) -> Result<(), MediaError> {
    let mut total = 0u64;
    for (trak, raw) in traks.iter().zip(tables) {
        if track_kind(trak).is_none() && text_format(trak).is_none() {
            continue;
        }
        let count = tables::sample_count(raw, trak.tkhd.track_id)?;
        if count > limits.max_samples_per_track {
            return Err(MediaError::TooLarge {
                limit: "max_samples_per_track",
                value: count,
                max: limits.max_samples_per_track,
            });
        }
        total = total.saturating_add(count);
    }
    if total > limits.max_samples_per_file {
        return Err(MediaError::TooLarge {
            limit: "max_samples_per_file",
            value: total,
            max: limits.max_samples_per_file,
        });
    }
    Ok(())
}

/// The edit list of a track in its own ticks (ISO/IEC 14496-12 8.6.6).
///
/// Movie-time positions are converted from the running sum of movie ticks, rounded to
/// nearest (as ffmpeg's `av_rescale` does), so a long list does not drift.
///
/// # Errors
/// [`MediaError::UnsupportedEdit`] for a media edit whose `media_rate` is not 1 (a dwell
/// holds one frame, other rates change speed: neither can be packaged without re-encoding);
/// [`MediaError::InvalidTable`] for edits that start past the end of the media or whose
/// times overflow 64 bits (times no real file has, which would saturate every output time).
fn edit_list(
    trak: &Trak,
    movie_timescale: u32,
    timescale: u32,
    samples: &SampleTable,
) -> Result<EditList, MediaError> {
    let Some(elst) = trak.edts.as_ref().and_then(|e| e.elst.as_ref()) else {
        return Ok(EditList::default());
    };
    let track_id = trak.tkhd.track_id;
    let media_end = media_end_ticks(samples);
    let to_track = |movie_ticks: u128| {
        (movie_ticks * u128::from(timescale) + u128::from(movie_timescale) / 2)
            / u128::from(movie_timescale)
    };
    let overflow = || invalid("elst", track_id, "edit times overflow 64 bits");
    let last_media = elst.entries.iter().rposition(|e| e.media_time.is_some());
    let mut edits = Vec::with_capacity(elst.entries.len());
    let mut movie_start = 0u128;
    for (i, entry) in elst.entries.iter().enumerate() {
        let number = i + 1;
        let start_ticks = u64::try_from(to_track(movie_start)).map_err(|_| overflow())?;
        movie_start += u128::from(entry.segment_duration);
        let mut duration_ticks = u64::try_from(to_track(movie_start))
            .map_err(|_| overflow())?
            .saturating_sub(start_ticks);
        if let Some(media_time) = entry.media_time {
            let rate = (entry.media_rate.integer(), entry.media_rate.decimal());
            if rate == (0, 0) {
                return Err(MediaError::UnsupportedEdit {
                    track_id,
                    edit: number,
                    reason: "is a dwell (media_rate 0: one frame held), which cannot be \
                             packaged without re-encoding"
                        .into(),
                });
            }
            if rate != (1, 0) {
                let rate = f64::from(rate.0) + f64::from(rate.1 as u16) / 65536.0;
                return Err(MediaError::UnsupportedEdit {
                    track_id,
                    edit: number,
                    reason: format!(
                        "plays at media_rate {rate}, not 1, which cannot be packaged without \
                         re-encoding"
                    ),
                });
            }
            if media_time > media_end {
                return Err(invalid(
                    "elst",
                    track_id,
                    format!(
                        "edit {number} starts at {media_time}, past the media's end at {media_end}"
                    ),
                ));
            }
            if entry.segment_duration == 0 && Some(i) == last_media {
                duration_ticks = media_end - media_time;
            }
        }
        edits.push(Edit {
            start_ticks,
            duration_ticks,
            media_time_ticks: entry.media_time,
        });
    }
    Ok(EditList { edits })
}

/// The end of the media's presentation in track ticks: the latest sample end in
/// composition time (decode end when there are no composition offsets).
fn media_end_ticks(samples: &SampleTable) -> u64 {
    if samples.cts_offsets.is_empty() {
        return samples.end_dts();
    }
    let ends = (samples.dts.iter().zip(&samples.durations))
        .zip(&samples.cts_offsets)
        .map(|((dts, duration), cts)| {
            let end = i128::from(*dts) + i128::from(*duration) + i128::from(*cts);
            u64::try_from(end.max(0)).unwrap_or(u64::MAX)
        });
    ends.max().unwrap_or(0).max(samples.end_dts())
}

#[cfg(test)]
mod tests;
