//! Edit lists applied: which source samples each track presents, and when (ISO/IEC 14496-12
//! 8.6.6).
//!
//! [`present`] turns a track and its full edit list into the track *as presented*: a sample
//! table listing, in output decode order, the source samples the edits select (clips joined
//! by several media edits are concatenated, a sample presented twice appears twice), with
//! decode times on one continuous timeline, plus an equivalent one-edit list (leading empty
//! edit + start media time). Everything downstream (the planner, the fMP4 writer, HLS and
//! DASH) then only ever sees that simple form, so it needs no knowledge of edits.

use std::ops::Range;

use super::plan::title_shift;
use super::PackageError;
use crate::media::{Edit, EditList, SampleTable, TrackIndex, TrackKind};

/// How many times over a track's samples its edit list may present them (a loop of a
/// clip is legitimate; a million edits each presenting the whole track is not).
const MAX_PRESENTATIONS: usize = 4;

/// One media edit's selection: source samples `samples` (decode order), whose decode times
/// map to the output by `+ movie_start - media_time`.
#[derive(Debug, Clone)]
struct Run {
    /// The edit's number in the file (1-based), for errors.
    edit: usize,
    samples: Range<usize>,
    movie_start: u64,
    media_time: u64,
}

/// The track as its edit list presents it (see the module comment). A track without an
/// edit list, or whose edits select every sample once in order, comes back unchanged.
///
/// # Errors
/// [`PackageError::UnsupportedEdit`] naming the edit (1-based, as in the file) and its
/// movie time when the edit list cannot be presented exactly.
pub fn present(track: TrackIndex) -> Result<TrackIndex, PackageError> {
    present_with(track, None)
}

/// Every track of a title as its edit list presents it ([`present`]), with the audio
/// pre-roll decoders need to decode the first presented frames as ffmpeg does reading the
/// source.
///
/// ffmpeg's mov demuxer starts an audio decoder one second before the first edit's media
/// time (clamped to the first frame) and drops what precedes it; a codec whose decoder
/// carries state from frame to frame (AAC's perceptual noise substitution draws from a
/// random generator) decodes different PCM when started one frame before. So the first
/// audio edit starts where ffmpeg starts, but only as far back as the title shift S
/// already reaches without that pre-roll: S is the largest lead of any track, so audio
/// pre-roll never moves the presentation start, the video pre-roll DASH shows, or any
/// timestamp of another track; it falls at output times from 0 to S, before the
/// presentation start. Where S is shorter than ffmpeg's second (a cut on a key frame),
/// the audio starts as early as S allows, and at least one frame before.
///
/// # Errors
/// As [`present`].
pub fn present_title(tracks: Vec<TrackIndex>) -> Result<Vec<TrackIndex>, PackageError> {
    // Only an audio track with edits can take more pre-roll: keep its source form.
    let sources: Vec<Option<TrackIndex>> = (tracks.iter())
        .map(|t| (t.kind == TrackKind::Audio && !t.edits.edits.is_empty()).then(|| t.clone()))
        .collect();
    let mut presented = (tracks.into_iter())
        .map(present)
        .collect::<Result<Vec<_>, _>>()?;
    let (shift_num, shift_den) = title_shift(&presented);
    for (slot, source) in presented.iter_mut().zip(sources) {
        let Some(source) = source else { continue };
        // S in this track's ticks, rounded down: a lead up to it cannot raise S.
        let limit = shift_num * i128::from(source.timescale) / shift_den.max(1);
        *slot = present_with(source, u64::try_from(limit).ok())?;
    }
    Ok(presented)
}

/// [`present`], letting the first audio edit start up to `audio_lead_limit` ticks before
/// the presentation start (see [`present_title`]).
fn present_with(
    track: TrackIndex,
    audio_lead_limit: Option<u64>,
) -> Result<TrackIndex, PackageError> {
    let table = &track.samples;
    if track.edits.edits.is_empty() || table.is_empty() {
        return Ok(track);
    }
    let runs = select(&track, audio_lead_limit)?;
    if let [run] = runs.as_slice() {
        // Every sample once, in order, from decode time 0, by the first media edit: the
        // source table as it is, with that edit's shift (the planner reads it).
        if run.samples == (0..table.len())
            && table.dts.first() == Some(&0)
            && run.movie_start == track.edits.leading_empty_ticks()
            && run.media_time == track.edits.first_media_time_ticks()
        {
            return Ok(track);
        }
    }
    let (samples, lead) = concatenate(&track, &runs)?;
    // lead = output decode time of the first sample on the movie timeline (in track ticks,
    // before the title shift): a leading empty edit when positive, a start media time
    // when negative.
    let total: u64 = samples.end_dts();
    let mut edits = Vec::with_capacity(2);
    let (empty, media_time) = if lead >= 0 {
        (u64::try_from(lead).unwrap_or(u64::MAX), 0)
    } else {
        (0, u64::try_from(-lead).unwrap_or(u64::MAX))
    };
    if empty > 0 {
        edits.push(Edit {
            start_ticks: 0,
            duration_ticks: empty,
            media_time_ticks: None,
        });
    }
    edits.push(Edit {
        start_ticks: empty,
        duration_ticks: total.saturating_sub(media_time).max(1),
        media_time_ticks: Some(media_time),
    });
    Ok(TrackIndex {
        edits: EditList { edits },
        samples,
        ..track
    })
}

/// Presentation time (dts + composition offset) of sample `i`, in track ticks.
fn pts(table: &SampleTable, i: usize) -> i128 {
    let dts = table.dts.get(i).copied().unwrap_or(0);
    i128::from(dts) + i128::from(table.cts_offset(i))
}

fn duration(table: &SampleTable, i: usize) -> i128 {
    i128::from(table.durations.get(i).copied().unwrap_or(0))
}

/// Which samples each media edit presents, with their pre-roll.
///
/// Inside the presentation, a sample belongs to an edit when at least half of it falls
/// inside (its midpoint is in `[media_time, media_time + duration)`), so a join that falls
/// between frames (a boundary the movie timescale cannot state exactly, or an audio edit off
/// the frame grid) moves by less than half a frame; each sample keeps its exact time, and
/// the join absorbs the difference. At the two ends the rule is ffmpeg's: the first edit
/// presents the sample covering its start (audio decoders trim it), the last edit every
/// sample that starts before its end.
fn select(track: &TrackIndex, audio_lead_limit: Option<u64>) -> Result<Vec<Run>, PackageError> {
    let table = &track.samples;
    let n = table.len();
    let media: Vec<(usize, &Edit)> = (track.edits.edits.iter().enumerate())
        .filter(|(_, e)| e.media_time_ticks.is_some() && e.duration_ticks > 0)
        .map(|(i, e)| (i + 1, e))
        .collect();
    let unsupported = |edit: usize, start: u64, reason: String| PackageError::UnsupportedEdit {
        track_id: track.track_id,
        edit,
        at_ms: start.saturating_mul(1000) / u64::from(track.timescale.max(1)),
        reason,
    };
    if media.is_empty() {
        return Err(unsupported(
            1,
            0,
            "is empty and no edit presents media: the track shows nothing".into(),
        ));
    }
    // Bounds of a sample's presentation time from its decode time, to search the decode
    // order by binary search and then scan only a reorder window.
    let min_cts = i128::from(table.cts_offsets.iter().copied().min().unwrap_or(0));
    let max_cts = i128::from(table.cts_offsets.iter().copied().max().unwrap_or(0));
    let max_duration = i128::from(table.durations.iter().copied().max().unwrap_or(0));
    let is_video = track.kind == TrackKind::Video;

    let mut runs = Vec::with_capacity(media.len());
    let mut scanned = 0usize;
    let last_k = media.len() - 1;
    for (k, &(number, edit)) in media.iter().enumerate() {
        let m = i128::from(edit.media_time_ticks.unwrap_or(0));
        let end = m + i128::from(edit.duration_ticks);
        let (first, last) = (k == 0, k == last_k);
        let starts_in = |i: usize| {
            let (p, d) = (pts(table, i), duration(table, i));
            if first {
                p + d > m || (d == 0 && p >= m)
            } else {
                2 * p + d >= 2 * m
            }
        };
        let ends_in = |i: usize| {
            let (p, d) = (pts(table, i), duration(table, i));
            if last {
                p < end
            } else {
                2 * p + d < 2 * end
            }
        };
        // Samples before `lo` end before m; samples from `hi` on start at or after `end`.
        let lo = table
            .dts
            .partition_point(|d| i128::from(*d) + max_cts + max_duration < m);
        let hi = table
            .dts
            .partition_point(|d| i128::from(*d) + min_cts < end);
        scanned = scanned.saturating_add(hi.saturating_sub(lo));
        if scanned > n.saturating_mul(MAX_PRESENTATIONS) {
            return Err(unsupported(
                number,
                edit.start_ticks,
                format!("presents the media more than {MAX_PRESENTATIONS} times over"),
            ));
        }
        let mut presented = (lo..hi).filter(|&i| starts_in(i) && ends_in(i));
        let first_presented = presented.next();
        let (Some(f), Some(l)) = (first_presented, presented.next_back().or(first_presented))
        else {
            // The edit falls between two samples (shorter than half a frame): it presents
            // nothing, and the timeline absorbs it as it does an empty edit.
            continue;
        };
        // Decoding starts at a sync sample: the last one at or before the first presented.
        let mut a = match &table.sync {
            Some(sync) => {
                let at = sync.partition_point(|s| (*s as usize) <= f);
                at.checked_sub(1)
                    .and_then(|p| sync.get(p))
                    .map_or(0, |s| *s as usize)
            }
            None => f,
        };
        if !is_video && first && a > 0 {
            a = audio_decoder_start(table, a, m, edit, track.timescale, audio_lead_limit);
        }
        let b = l + 1;
        for i in a..b {
            if !starts_in(i) && !first {
                return Err(unsupported(
                    number,
                    edit.start_ticks,
                    "starts inside a GOP: its pre-roll frames would be shown in the middle \
                     of the presentation"
                        .into(),
                ));
            }
            if !ends_in(i) && !last {
                return Err(unsupported(
                    number,
                    edit.start_ticks.saturating_add(edit.duration_ticks),
                    "ends inside a GOP: a frame it needs is presented after its end".into(),
                ));
            }
        }
        if first && is_video {
            // Pre-roll is hidden by the title shift only if it ends by movie time 0; after
            // a leading empty edit it would be shown while the source shows nothing yet.
            let visible = (a..b).any(|i| {
                i128::from(edit.start_ticks) + pts(table, i) + duration(table, i) > m
                    && !starts_in(i)
            });
            if visible {
                return Err(unsupported(
                    number,
                    edit.start_ticks,
                    "starts inside a GOP after an empty edit: its pre-roll frames would be \
                     shown before the track starts"
                        .into(),
                ));
            }
        }
        runs.push(Run {
            edit: number,
            samples: a..b,
            movie_start: edit.start_ticks,
            media_time: edit.media_time_ticks.unwrap_or(0),
        });
    }
    if runs.is_empty() {
        let (number, edit) = media[0];
        return Err(unsupported(
            number,
            edit.start_ticks,
            "presents no sample of the media".into(),
        ));
    }
    Ok(runs)
}

/// Where decoding of a first audio edit (media time `m`, first presented frame `first`)
/// starts: AAC and its kin need at least the frame before the first presented one; ffmpeg
/// starts one second before `m` (see [`present_title`]), which this follows as far as the
/// output decode times stay at or after 0 (a lead up to `lead_limit`). After a leading
/// empty edit the pre-roll would be presented during it, so only the one frame is kept.
fn audio_decoder_start(
    table: &SampleTable,
    first: usize,
    m: i128,
    edit: &Edit,
    timescale: u32,
    lead_limit: Option<u64>,
) -> usize {
    let one_before = first.saturating_sub(1);
    let Some(limit) = lead_limit.filter(|_| edit.start_ticks == 0) else {
        return one_before;
    };
    let one_second_before = m - i128::from(timescale);
    let ffmpeg_start = (table.dts)
        .partition_point(|d| i128::from(*d) <= one_second_before)
        .saturating_sub(1);
    let earliest = (table.dts).partition_point(|d| i128::from(*d) < m - i128::from(limit));
    ffmpeg_start.max(earliest).min(one_before)
}

/// The output sample table of `runs`, and the output decode time of its first sample
/// relative to movie time 0 (negative when pre-roll or composition delay precede it).
fn concatenate(track: &TrackIndex, runs: &[Run]) -> Result<(SampleTable, i128), PackageError> {
    let table = &track.samples;
    let count: usize = runs.iter().map(|r| r.samples.len()).sum();
    let has_cts = !table.cts_offsets.is_empty();
    let mut out = SampleTable {
        sizes: Vec::with_capacity(count),
        offsets: Vec::with_capacity(count).into(),
        dts: Vec::with_capacity(count),
        durations: Vec::with_capacity(count),
        cts_offsets: Vec::with_capacity(if has_cts { count } else { 0 }),
        sync: table.sync.as_ref().map(|_| Vec::new()),
    };
    // Output decode time (movie ticks, before the title shift) of a source sample in a run.
    let time = |run: &Run, i: usize| -> i128 {
        let dts = table.dts.get(i).copied().unwrap_or(0);
        i128::from(run.movie_start) + i128::from(dts) - i128::from(run.media_time)
    };
    let Some(lead) = runs.first().map(|r| time(r, r.samples.start)) else {
        return Ok((out, 0));
    };
    for (r, run) in runs.iter().enumerate() {
        let next = runs.get(r + 1);
        for i in run.samples.clone() {
            let at = time(run, i);
            let mut duration = table.durations.get(i).copied().unwrap_or(0);
            if i + 1 == run.samples.end {
                if let Some(next) = next {
                    // The join: this sample lasts until the next run's first decode time,
                    // which also spans any empty edit between them.
                    let gap = time(next, next.samples.start) - at;
                    duration = u32::try_from(gap).map_err(|_| PackageError::UnsupportedEdit {
                        track_id: track.track_id,
                        edit: next.edit,
                        at_ms: next.movie_start.saturating_mul(1000)
                            / u64::from(track.timescale.max(1)),
                        reason: format!(
                            "joins the previous edit {gap} ticks from its last decode time: \
                             decode times would run backwards or leave a gap over 2^32 ticks"
                        ),
                    })?;
                }
            }
            let (Some(size), Some(offset)) = (table.sizes.get(i), table.offsets().get(i)) else {
                continue;
            };
            let j = out.sizes.len();
            out.sizes.push(*size);
            out.offsets_mut().push(*offset);
            out.dts.push(u64::try_from(at - lead).unwrap_or(u64::MAX));
            out.durations.push(duration);
            if has_cts {
                out.cts_offsets.push(table.cts_offset(i));
            }
            if let Some(sync) = out.sync.as_mut() {
                if table.is_sync(i) {
                    sync.push(u32::try_from(j).unwrap_or(u32::MAX));
                }
            }
        }
    }
    Ok((out, lead))
}

#[cfg(test)]
mod tests;
