//! `storyboard.vtt`, `storyboard.m3u8` and `storyboard-N.jpg`: a title's scrubbing
//! previews, laid out (`package::thumb::Storyboard`) from the settings, the title's
//! duration and its first video's display aspect. The index (cues at their tiles' key
//! frames: one pass over the samples, off the workers) and the image playlist decode
//! nothing and are admitted as manifests; a sheet is admitted as a thumbnail and decodes
//! each distinct key frame of its tiles once, on the blocking pool, from a few merged
//! reads. Tagged and cached like segments; encrypted titles are refused as thumbnails are.

use std::sync::Arc;

use bytes::Bytes;

use super::{blocking, read_samples, sample_ranges, track_of, video_of, VideoSource, JPEG};
use crate::package::thumb::{
    decode_frame, encode_rgb_jpeg, pick_frame, scaled_rgb, shown_key_frames_ms, FramePick,
    JpegOptions, PickMode, PixelSize, Storyboard, StoryboardPart, ThumbError,
};
use crate::package::{render_image_playlist, View};
use crate::server::admission::Admitted;
use crate::server::app::App;
use crate::server::error::ServeError;
use crate::server::respond::answer::{Answer, Content, IMMUTABLE, M3U8, MANIFEST, WEBVTT};
use crate::source::ObjectKey;

/// The storyboard resource `part` of the title at `key` as `view` shows it, in version
/// folder `version` (`None`: the current version, cached briefly).
///
/// # Errors
/// As `thumb::thumbnail`; a sheet past the last is [`ThumbError::NoSuchSheet`].
pub async fn storyboard(
    app: &Arc<App>,
    place: Arc<Admitted>,
    (key, version): (ObjectKey, Option<String>),
    view: View,
    part: StoryboardPart,
    query: Option<&str>,
) -> Result<Answer, ServeError> {
    let video = video_of(app, (key, version.as_deref()), &view, None).await?;
    let (track, _) = track_of(&video.cached.title, video.track_pos)?;
    let board = Storyboard::of_video(&video.cached.title, track, app.storyboard_layout())?;
    let (body, content_type) = match part {
        StoryboardPart::Index => {
            // Each cue starts at its tile's key frame: one pass over the track's samples,
            // off the workers (a long title has hundreds of thousands).
            let cached = video.cached.clone();
            let track_pos = video.track_pos;
            let key_frames = blocking(&place, move || {
                let (track, plan) = track_of(&cached.title, track_pos)?;
                Ok(shown_key_frames_ms(track, plan))
            })
            .await?;
            (Bytes::from(board.vtt(&key_frames)), WEBVTT)
        }
        StoryboardPart::Playlist => {
            // A signed URL's token is carried on to the sheets, as manifests carry it.
            let token = app.protect.carried_token(query);
            let query = token.map(|t| format!("token={t}"));
            let playlist = render_image_playlist(&board, query.as_deref());
            (Bytes::from(playlist), M3U8)
        }
        StoryboardPart::Sheet(number) => (sheet(app, &place, &video, board, number).await?, JPEG),
    };
    Ok(Answer {
        content: Content::Inline(body),
        content_type,
        cache_control: if version.is_some() {
            IMMUTABLE
        } else {
            MANIFEST
        },
        etag: Some(format!("\"{}-{part}\"", video.cached.token)),
    })
}

/// Sheet `number` of `board` as a JPEG.
async fn sheet(
    app: &Arc<App>,
    place: &Arc<Admitted>,
    video: &VideoSource,
    board: Storyboard,
    number: u32,
) -> Result<Bytes, ServeError> {
    let no_such_sheet = || ThumbError::NoSuchSheet {
        number,
        sheets: board.sheet_count(),
    };
    let tiles = board.tiles_of_sheet(number).ok_or_else(no_such_sheet)?;
    let size = board.sheet_size(number).ok_or_else(no_such_sheet)?;
    let span = tracing::info_span!(
        "thumbnail.decode",
        vod.track_id = video.track_id,
        vod.sheet = number,
        vod.samples = tracing::field::Empty,
    );
    let track_pos = video.track_pos;
    // Pick each tile's key frame, each distinct one once, off the workers.
    let (picks, tile_picks, ranges) = {
        let cached = video.cached.clone();
        let span = span.clone();
        blocking(place, move || {
            let _in = span.enter();
            let (track, plan) = track_of(&cached.title, track_pos)?;
            let mut picks: Vec<FramePick> = Vec::new();
            let mut tile_picks = Vec::new();
            for index in tiles {
                let shows_ms = board.tile(index).shows_ms;
                let pick = match pick_frame(track, plan, shows_ms, PickMode::KeyFrame) {
                    // A last cue starting past the video's end shows its last key frame.
                    Err(ThumbError::PastEnd { end_ms, .. }) => {
                        let last_ms = end_ms.saturating_sub(1);
                        pick_frame(track, plan, last_ms, PickMode::KeyFrame)?
                    }
                    other => other?,
                };
                let at = match picks.iter().position(|p| p.target == pick.target) {
                    Some(at) => at,
                    None => {
                        picks.push(pick);
                        picks.len() - 1
                    }
                };
                tile_picks.push(at);
            }
            let mut ranges = Vec::new();
            for pick in &picks {
                ranges.extend(sample_ranges(track, pick.samples.clone())?);
            }
            span.record("vod.samples", ranges.len());
            Ok((picks, tile_picks, ranges))
        })
        .await?
    };
    let samples = read_samples(app, (&video.key, &video.identity), &ranges, &span).await?;
    let quality = u8::try_from(app.settings.thumbnails.jpeg_quality.clamp(1, 100)).unwrap_or(90);
    let max_pixels = app.settings.thumbnails.max_source_pixels;
    let cached = video.cached.clone();
    let jpeg = blocking(place, move || {
        let _in = span.enter();
        let (track, _) = track_of(&cached.title, track_pos)?;
        let mut rest = samples.as_slice();
        let mut tile_images = Vec::with_capacity(picks.len());
        for pick in &picks {
            let (run, after) = rest.split_at_checked(pick.samples.len()).ok_or_else(|| {
                ThumbError::Undecodable {
                    reason: "fewer samples read than picked".into(),
                }
            })?;
            rest = after;
            let picture = decode_frame(
                track.codec.fourcc,
                &track.sample_description,
                run,
                pick.rank,
                max_pixels,
            )?;
            let pixels = (picture.width as u64).saturating_mul(picture.height as u64);
            if pixels > max_pixels {
                return Err(ThumbError::FrameTooLarge {
                    width: u32::try_from(picture.width).unwrap_or(u32::MAX),
                    height: u32::try_from(picture.height).unwrap_or(u32::MAX),
                    pixels,
                    max: max_pixels,
                });
            }
            tile_images.push(scaled_rgb(
                &picture,
                track.codec.color.as_ref(),
                board.tile,
            )?);
        }
        let first = board.tiles_of_sheet(number).map_or(0, |t| t.start);
        let mut canvas = vec![0u8; pixel_bytes(size)?];
        for (n, at) in tile_picks.into_iter().enumerate() {
            let place = board.tile(first + n as u64).at;
            if let Some(image) = tile_images.get(at) {
                blit(&mut canvas, size.width, image, board.tile, place);
            }
        }
        encode_rgb_jpeg(&canvas, size, JpegOptions { quality })
    })
    .await?;
    Ok(Bytes::from(jpeg))
}

/// Bytes of packed RGB of `size`, bounded by the sheet's limits.
fn pixel_bytes(size: PixelSize) -> Result<usize, ThumbError> {
    let PixelSize {
        width: w,
        height: h,
    } = size;
    let bytes = u64::from(w) * u64::from(h) * 3;
    usize::try_from(bytes).map_err(|_| ThumbError::BadSize {
        width: w,
        height: h,
        max: crate::package::thumb::MAX_SHEET_SIDE,
    })
}

/// Copy packed RGB `tile` of `tile_size` into `canvas` (packed RGB, `canvas_width` wide)
/// with its top left at `at`; rows or pixels falling outside are left out.
fn blit(canvas: &mut [u8], canvas_width: u32, tile: &[u8], tile_size: PixelSize, at: (u32, u32)) {
    let row_bytes = tile_size.width as usize * 3;
    let canvas_row = canvas_width as usize * 3;
    for (y, row) in tile.chunks_exact(row_bytes.max(1)).enumerate() {
        let start = (at.1 as usize + y) * canvas_row + at.0 as usize * 3;
        if let Some(target) = canvas.get_mut(start..start + row.len()) {
            target.copy_from_slice(row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_land_at_their_place_and_nothing_spills() {
        // A 4x2 canvas; a 2x1 tile at (2, 1) and one hanging off the bottom.
        let mut canvas = vec![0u8; 4 * 2 * 3];
        blit(&mut canvas, 4, &[9; 6], PixelSize::new(2, 1), (2, 1));
        blit(&mut canvas, 4, &[7; 12], PixelSize::new(2, 2), (0, 1));
        let row1 = &canvas[12..];
        assert_eq!(row1, &[7, 7, 7, 7, 7, 7, 9, 9, 9, 9, 9, 9]);
        assert!(canvas[..12].iter().all(|b| *b == 0));
    }
}
