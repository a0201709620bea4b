//! `thumb-MS.jpg`: one frame of a title's video as a JPEG, for plain files,
//! title documents (their first video rendition, or file N's with `-fN`) and clips.
//!
//! The request was admitted in its own class (`admission.rs`: a few decodes at once, a
//! short queue, 503 past its wait). Here: load the title as the path views it, pick the
//! samples (`package::thumb::pick_frame`, on the blocking pool since it scans the track),
//! read their bytes in a few coalesced ranges, then decode, scale and encode on the
//! blocking pool, inside a `thumbnail.decode` span. Answers are tagged and cached like
//! segments: a year in a version folder, a minute without one. Thumbnails of an encrypted
//! output are not offered: they would show in the clear what the segments protect.

pub mod storyboard;

use std::sync::Arc;

use bytes::Bytes;
use tracing::Instrument;

use crate::media::TrackKind;
use crate::package::thumb::{
    decode_frame, encode_jpeg, output_size, pick_frame, JpegOptions, PickMode, PixelSize,
    ThumbError, ThumbName,
};
use crate::package::{split_document_track_id, View};
use crate::server::admission::Admitted;
use crate::server::app::App;
use crate::server::error::ServeError;
use crate::server::respond::answer::{Answer, Content, IMMUTABLE, MANIFEST};
use crate::server::titles::cached::CachedTitle;
use crate::server::titles::load::load_view_until;
use crate::source::{ByteRange, ObjectIdentity, ObjectKey};

/// Content type of thumbnails.
pub const JPEG: &str = "image/jpeg";

/// Ranges of one thumbnail's samples closer than this are read as one.
const MERGE_GAP_BYTES: u64 = 64 * 1024;

/// Most bytes of samples read for one thumbnail.
const MAX_READ_BYTES: u64 = 64 * 1024 * 1024;

/// The thumbnail `name` of the title at `key` as `view` shows it, in version folder
/// `version` (`None`: the current version, cached briefly).
///
/// # Errors
/// The title's load errors; a gone version; [`ServeError::Thumbnail`] for what the frame
/// cannot give (no video, past the end, a codec or size refused, a frame that does not
/// decode); the source's read errors.
pub async fn thumbnail(
    app: &Arc<App>,
    place: Arc<Admitted>,
    (key, version): (ObjectKey, Option<String>),
    view: View,
    name: ThumbName,
) -> Result<Answer, ServeError> {
    let video = video_of(app, (key, version.as_deref()), &view, name.file).await?;
    let VideoSource {
        cached,
        key,
        identity,
        track_id,
        track_pos,
    } = video;
    let options = app.settings.thumbnails;
    let mode = match options.exact {
        true => PickMode::Exact,
        false => PickMode::KeyFrame,
    };
    let span = tracing::info_span!(
        "thumbnail.decode",
        vod.track_id = track_id,
        vod.time_ms = name.time_ms,
        vod.samples = tracing::field::Empty,
        vod.presented_ms = tracing::field::Empty,
    );
    // Pick the samples and their places in the file, off the workers (a scan of the track,
    // and its offsets worked out if nobody has yet).
    let picked = {
        let cached = cached.clone();
        let span = span.clone();
        blocking(&place, move || {
            let _in = span.enter();
            let (track, plan) = track_of(&cached.title, track_pos)?;
            let (w, h) = (track.codec.width, track.codec.height);
            let pixels = u64::from(w) * u64::from(h);
            if pixels > options.max_source_pixels {
                return Err(ThumbError::FrameTooLarge {
                    width: w.into(),
                    height: h.into(),
                    pixels,
                    max: options.max_source_pixels,
                });
            }
            let pick = pick_frame(track, plan, name.time_ms, mode)?;
            span.record("vod.samples", pick.samples.len());
            span.record("vod.presented_ms", pick.presented_ms);
            let ranges = sample_ranges(track, pick.samples.clone())?;
            Ok((pick, ranges))
        })
        .await?
    };
    let (pick, ranges) = picked;
    let samples = read_samples(app, (&key, &identity), &ranges, &span).await?;
    // Decode, scale and encode, off the workers.
    let jpeg = {
        let cached = cached.clone();
        let span = span.clone();
        blocking(&place, move || {
            let _in = span.enter();
            let (track, _) = track_of(&cached.title, track_pos)?;
            let picture = decode_frame(
                track.codec.fourcc,
                &track.sample_description,
                &samples,
                pick.rank,
                options.max_source_pixels,
            )?;
            let pixels = (picture.width as u64).saturating_mul(picture.height as u64);
            let (pw, ph) = (
                u32::try_from(picture.width).unwrap_or(u32::MAX),
                u32::try_from(picture.height).unwrap_or(u32::MAX),
            );
            if pixels > options.max_source_pixels {
                return Err(ThumbError::FrameTooLarge {
                    width: pw,
                    height: ph,
                    pixels,
                    max: options.max_source_pixels,
                });
            }
            let display = PixelSize::new(track.tkhd_width >> 16, track.tkhd_height >> 16);
            let size = output_size(PixelSize::new(pw, ph), display, name.width, name.height)?;
            let quality = u8::try_from(options.jpeg_quality.clamp(1, 100)).unwrap_or(90);
            encode_jpeg(
                &picture,
                track.codec.color.as_ref(),
                size,
                JpegOptions { quality },
            )
        })
        .await?
    };
    Ok(Answer {
        content: Content::Inline(Bytes::from(jpeg)),
        content_type: JPEG,
        cache_control: if version.is_some() {
            IMMUTABLE
        } else {
            MANIFEST
        },
        etag: Some(format!("\"{}-{name}\"", cached.token)),
    })
}

/// The video rendition a thumbnail or storyboard pictures, and where its samples are.
pub(crate) struct VideoSource {
    /// The loaded title.
    pub cached: Arc<CachedTitle>,
    /// The object holding the rendition's samples (a title document's file, or the key).
    pub key: ObjectKey,
    /// That object's identity, for the reads.
    pub identity: ObjectIdentity,
    /// The rendition's track id.
    pub track_id: u32,
    /// Its place in the title's index and plan.
    pub track_pos: usize,
}

/// Load the title at `key` as `view` shows it and find its first video rendition (of file
/// `file` when given), refusing a gone version and an encrypted title.
///
/// # Errors
/// The title's load errors; [`ServeError::VersionGone`]; [`ServeError::NotOffered`] for an
/// encrypted title; [`ThumbError::NoVideo`] without a video rendition.
pub(crate) async fn video_of(
    app: &Arc<App>,
    (key, version): (ObjectKey, Option<&str>),
    view: &View,
    file: Option<u32>,
) -> Result<VideoSource, ServeError> {
    let (identity, cached, _) = load_view_until(&app.catalog, &key, view).await?;
    if version.is_some_and(|v| v != cached.token) {
        return Err(ServeError::VersionGone);
    }
    if cached.sequence.is_some() {
        return Err(ServeError::NotOffered(
            "thumbnails are not offered for sequences".into(),
        ));
    }
    let encrypted = cached.encryption.unwrap_or(app.protect.policy()).any();
    if encrypted {
        return Err(ServeError::NotOffered(
            "thumbnails are not offered for an encrypted title".into(),
        ));
    }
    let title = &cached.title;
    let in_file = |track_id: u32| match (file, split_document_track_id(track_id)) {
        (None, _) => true,
        (Some(f), Some((n, _))) => n == f,
        // A plain file is file 1.
        (Some(f), None) => f == 1,
    };
    let rendition = (title.renditions.iter())
        .find(|r| r.kind == TrackKind::Video && in_file(r.track_id))
        .ok_or_else(|| ThumbError::NoVideo {
            detail: file.map_or_else(String::new, |f| format!(" in file {f}")),
        })?;
    let (track_id, track_pos) = (rendition.track_id, rendition.track_pos);
    let (key, identity) = cached
        .object_of(track_id)
        .map_or((key, identity), |(k, i)| (k.clone(), i.clone()));
    Ok(VideoSource {
        cached,
        key,
        identity,
        track_id,
        track_pos,
    })
}

/// The byte ranges of samples `samples` of `track`.
pub(crate) fn sample_ranges(
    track: &crate::media::TrackIndex,
    samples: std::ops::Range<usize>,
) -> Result<Vec<ByteRange>, ThumbError> {
    let offsets = track.samples.offsets();
    samples
        .map(|i| {
            let start = offsets.get(i).copied()?;
            let len = track.samples.sizes.get(i).copied()?;
            Some(ByteRange::new(start, u64::from(len)))
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| ThumbError::Undecodable {
            reason: "a sample has no place in the file".into(),
        })
}

/// The bytes of `ranges` of `key`, read in a few merged ranges (at most
/// [`MAX_READ_BYTES`] in all), each cut back out.
///
/// # Errors
/// [`ThumbError::Undecodable`] past the byte limit; the source's read errors.
pub(crate) async fn read_samples(
    app: &Arc<App>,
    (key, identity): (&ObjectKey, &ObjectIdentity),
    ranges: &[ByteRange],
    span: &tracing::Span,
) -> Result<Vec<Bytes>, ServeError> {
    let total: u64 = ranges.iter().map(|r| r.len).sum();
    if total > MAX_READ_BYTES {
        return Err(ThumbError::Undecodable {
            reason: format!("the frames need {total} bytes of samples, over {MAX_READ_BYTES}"),
        }
        .into());
    }
    let merged = merge(ranges);
    let source = app.catalog.source();
    let bodies = (source.read_ranges(key, identity, &merged))
        .instrument(span.clone())
        .await?;
    split(ranges, &merged, &bodies).ok_or(ServeError::SourceEndedEarly)
}

/// The presented track at `track_pos` of `title` and its plan.
pub(crate) fn track_of(
    title: &crate::package::Title,
    track_pos: usize,
) -> Result<(&crate::media::TrackIndex, &crate::package::TrackPlan), ThumbError> {
    let track = title.index.tracks.get(track_pos);
    let plan = title.plan.tracks.get(track_pos);
    track.zip(plan).ok_or_else(|| ThumbError::NoVideo {
        detail: String::new(),
    })
}

/// Run `work` on the blocking pool, holding the request's admission `place` until it
/// ends, even when the request has given up waiting for it.
pub(crate) async fn blocking<T: Send + 'static>(
    place: &Arc<Admitted>,
    work: impl FnOnce() -> Result<T, ThumbError> + Send + 'static,
) -> Result<T, ServeError> {
    let place = Arc::clone(place);
    let done = tokio::task::spawn_blocking(move || {
        let done = work();
        drop(place);
        done
    })
    .await
    .map_err(|_| ServeError::Internal("thumbnail work failed"))?;
    Ok(done?)
}

/// `ranges` (in file order or not) merged where they touch or nearly do, sorted.
fn merge(ranges: &[ByteRange]) -> Vec<ByteRange> {
    let mut sorted = ranges.to_vec();
    sorted.sort_by_key(|r| r.start);
    let mut merged: Vec<ByteRange> = Vec::with_capacity(sorted.len());
    for r in sorted {
        match merged.last_mut() {
            Some(last) if r.start <= last.end().saturating_add(MERGE_GAP_BYTES) => {
                let end = last.end().max(r.end());
                last.len = end - last.start;
            }
            _ => merged.push(r),
        }
    }
    merged
}

/// Each of `ranges` cut out of the `bodies` read for `merged`; `None` if a body is short.
fn split(ranges: &[ByteRange], merged: &[ByteRange], bodies: &[Bytes]) -> Option<Vec<Bytes>> {
    ranges
        .iter()
        .map(|r| {
            let at = merged.partition_point(|m| m.end() < r.end());
            let (m, body) = (merged.get(at)?, bodies.get(at)?);
            let from = usize::try_from(r.start.checked_sub(m.start)?).ok()?;
            let to = from.checked_add(usize::try_from(r.len).ok()?)?;
            (to <= body.len()).then(|| body.slice(from..to))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_ranges_are_read_merged_and_cut_back_out() {
        let ranges = [
            ByteRange::new(100, 10),
            ByteRange::new(110, 5),
            ByteRange::new(1_000_000, 4),
            ByteRange::new(50, 10),
        ];
        let merged = merge(&ranges);
        assert_eq!(
            merged,
            [ByteRange::new(50, 65), ByteRange::new(1_000_000, 4)]
        );
        let bodies: Vec<Bytes> = merged
            .iter()
            .map(|m| Bytes::from((m.start..m.end()).map(|b| b as u8).collect::<Vec<u8>>()))
            .collect();
        let samples = split(&ranges, &merged, &bodies).unwrap();
        for (r, s) in ranges.iter().zip(&samples) {
            assert_eq!(s.len() as u64, r.len);
            assert_eq!(s.first().copied(), Some(r.start as u8));
        }
        assert_eq!(split(&ranges, &merged, &bodies[..1]), None);
    }
}
