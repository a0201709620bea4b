//! Storyboards: the layout of a title's scrubbing previews, its WebVTT index
//! (`storyboard.vtt`) and the names of its sprite sheets (`storyboard-N.jpg`).
//!
//! One tile per interval of the players' timeline, tiles filling sheets of a grid left to
//! right, then top to bottom, every cue's `#xywh` inside its sheet. A tile shows the key
//! frame at or before its interval's start: one sample decoded a tile, where the exact
//! frame could cost a GOP of decoding. Pixels are bounded by the settings' limits.

use std::fmt::{self, Write as _};
use std::ops::Range;

use super::{output_size, PixelSize, ThumbError};
use crate::media::{TrackIndex, TrackKind};
use crate::package::Title;

/// The WebVTT index's name.
pub const INDEX_NAME: &str = "storyboard.vtt";

/// The HLS image playlist's name.
pub const PLAYLIST_NAME: &str = "storyboard.m3u8";

/// Largest side of a sheet, in pixels.
pub const MAX_SHEET_SIDE: u32 = 16_384;

/// Most tiles of one title (a VTT of a few MB at most).
pub const MAX_TILES: u64 = 100_000;

/// A storyboard resource, as its file name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoryboardPart {
    /// `storyboard.vtt`: the cues.
    Index,
    /// `storyboard-N.jpg`: sheet N, 1-based.
    Sheet(u32),
    /// `storyboard.m3u8`: the sheets as an HLS image media playlist.
    Playlist,
}

impl StoryboardPart {
    /// Parse a file name; `None` when it is no storyboard name.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            INDEX_NAME => return Some(Self::Index),
            PLAYLIST_NAME => return Some(Self::Playlist),
            _ => {}
        }
        let digits = name.strip_prefix("storyboard-")?.strip_suffix(".jpg")?;
        let canonical = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && !digits.starts_with('0');
        let number = canonical.then(|| digits.parse().ok()).flatten()?;
        Some(Self::Sheet(number))
    }
}

impl fmt::Display for StoryboardPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Index => f.write_str(INDEX_NAME),
            Self::Sheet(n) => write!(f, "storyboard-{n}.jpg"),
            Self::Playlist => f.write_str(PLAYLIST_NAME),
        }
    }
}

/// The storyboard of one title: how many tiles, where each sits, what time it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Storyboard {
    /// The duration on the players' timeline, in ms: the last cue ends here.
    pub duration_ms: u64,
    /// Where the title's time 0 sits on the players' timeline, in ms: the DASH video
    /// pre-roll (HLS's first segment carries the same), 0 without one.
    pub offset_ms: u64,
    /// Time between tiles, in ms (> 0).
    pub interval_ms: u64,
    /// Tiles across a sheet (> 0).
    pub columns: u32,
    /// Tiles down a full sheet (> 0).
    pub rows: u32,
    /// Tile width and height in pixels (> 0).
    pub tile: PixelSize,
}

/// How the settings lay storyboards out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoryboardLayout {
    /// Time between tiles, in ms.
    pub interval_ms: u64,
    /// Tiles across and down a sheet.
    pub grid: (u32, u32),
    /// Tile width in pixels; the height follows the display aspect.
    pub tile_width: u32,
}

/// One tile: its sheet, its place in it, and the time it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tile {
    /// Sheet number, 1-based.
    pub sheet: u32,
    /// Left and top of the tile in the sheet, in pixels.
    pub at: (u32, u32),
    /// Interval start on the players' timeline, in ms: where the image tracks (DASH, HLS)
    /// place the tile; its WebVTT cue starts at the tile's key frame instead
    /// ([`Storyboard::cue_start`]).
    pub start_ms: u64,
    /// Interval end, in ms: the next tile's start, or the title's end.
    pub end_ms: u64,
    /// The title time whose key frame (at or before it) the tile shows, in ms: the
    /// interval's start less [`Storyboard::offset_ms`], at least 0.
    pub shows_ms: u64,
}

impl Storyboard {
    /// The storyboard of a title lasting `duration_ms`.
    ///
    /// # Errors
    /// [`ThumbError::BadSize`] when a sheet would be over [`MAX_SHEET_SIDE`], a side or
    /// the interval is 0, or the title would have over [`MAX_TILES`] tiles.
    pub fn new(
        duration_ms: u64,
        interval_ms: u64,
        columns: u32,
        rows: u32,
        tile: PixelSize,
    ) -> Result<Self, ThumbError> {
        let board = Self {
            duration_ms,
            offset_ms: 0,
            interval_ms,
            columns,
            rows,
            tile,
        };
        let PixelSize {
            width: w,
            height: h,
        } = board.full_sheet_size();
        let zero = interval_ms == 0 || columns == 0 || rows == 0;
        let zero = zero || tile.width == 0 || tile.height == 0;
        if zero || w > MAX_SHEET_SIDE || h > MAX_SHEET_SIDE || board.tile_count() > MAX_TILES {
            return Err(ThumbError::BadSize {
                width: w,
                height: h,
                max: MAX_SHEET_SIDE,
            });
        }
        Ok(board)
    }

    /// The storyboard of `title` pictured from its video track `track`: the players'
    /// timeline (the MPD's duration, from the DASH video pre-roll's key frame), tiles of the
    /// layout's width at the track's display aspect.
    ///
    /// # Errors
    /// As [`Storyboard::new`].
    pub fn of_video(
        title: &Title,
        track: &TrackIndex,
        layout: StoryboardLayout,
    ) -> Result<Self, ThumbError> {
        let picture = PixelSize::new(u32::from(track.codec.width), u32::from(track.codec.height));
        let display = PixelSize::new(track.tkhd_width >> 16, track.tkhd_height >> 16);
        let tile = output_size(picture, display, Some(layout.tile_width), None)?;
        // Finite and non-negative by construction; saturating casts all the same.
        let to_ms = |secs: f64| (secs * 1000.0).round().clamp(0.0, u64::MAX as f64) as u64;
        let duration_ms = to_ms(title.period_duration_secs());
        let (columns, rows) = layout.grid;
        let board = Self::new(duration_ms, layout.interval_ms, columns, rows, tile)?;
        Ok(board.with_offset(to_ms(title.dash_preroll_secs())))
    }

    /// This storyboard with the title's time 0 at `offset_ms` of the players' timeline.
    pub fn with_offset(self, offset_ms: u64) -> Self {
        Self { offset_ms, ..self }
    }

    /// The storyboard of `title`'s first video rendition, for manifests; `None` without
    /// video, without tiles, or for a layout out of bounds.
    pub fn of_title(title: &Title, layout: StoryboardLayout) -> Option<Self> {
        let video = (title.renditions.iter()).find(|r| r.kind == TrackKind::Video)?;
        let track = title.index.tracks.get(video.track_pos)?;
        let board = Self::of_video(title, track, layout).ok()?;
        (board.tile_count() > 0).then_some(board)
    }

    /// Tiles of the title: one per started interval.
    pub fn tile_count(&self) -> u64 {
        self.duration_ms.div_ceil(self.interval_ms.max(1))
    }

    /// Tiles of a full sheet.
    pub fn tiles_per_sheet(&self) -> u64 {
        u64::from(self.columns) * u64::from(self.rows)
    }

    /// Sheets of the title.
    pub fn sheet_count(&self) -> u64 {
        self.tile_count().div_ceil(self.tiles_per_sheet().max(1))
    }

    /// Width and height of a full sheet, in pixels (saturating).
    pub fn full_sheet_size(&self) -> PixelSize {
        PixelSize::new(
            self.columns.saturating_mul(self.tile.width),
            self.rows.saturating_mul(self.tile.height),
        )
    }

    /// The tiles (title-wide numbers, 0-based) on sheet `sheet`; `None` past the last.
    pub fn tiles_of_sheet(&self, sheet: u32) -> Option<Range<u64>> {
        let first = u64::from(sheet.checked_sub(1)?) * self.tiles_per_sheet();
        let end = (first + self.tiles_per_sheet()).min(self.tile_count());
        (first < end).then_some(first..end)
    }

    /// Width and height of sheet `sheet`: full width, the rows it uses.
    pub fn sheet_size(&self, sheet: u32) -> Option<PixelSize> {
        let tiles = self.tiles_of_sheet(sheet)?;
        let rows = (tiles.end - tiles.start).div_ceil(u64::from(self.columns.max(1)));
        let rows = u32::try_from(rows).ok()?;
        let height = rows.checked_mul(self.tile.height)?;
        Some(PixelSize::new(self.full_sheet_size().width, height))
    }

    /// Tile `index` (title-wide, 0-based).
    pub fn tile(&self, index: u64) -> Tile {
        let per_sheet = self.tiles_per_sheet().max(1);
        let columns = u64::from(self.columns.max(1));
        let on_sheet = index % per_sheet;
        let place = |n: u64, side: u32| u32::try_from(n).unwrap_or(0).saturating_mul(side);
        let start_ms = index.saturating_mul(self.interval_ms);
        Tile {
            sheet: u32::try_from(index / per_sheet + 1).unwrap_or(u32::MAX),
            at: (
                place(on_sheet % columns, self.tile.width),
                place(on_sheet / columns, self.tile.height),
            ),
            start_ms,
            end_ms: start_ms
                .saturating_add(self.interval_ms)
                .min(self.duration_ms),
            shows_ms: start_ms.saturating_sub(self.offset_ms),
        }
    }

    /// Where tile `index`'s cue starts in the WebVTT index: at the players' time of the
    /// key frame the tile shows (`key_frames_ms`: [`super::shown_key_frames_ms`], title
    /// time), so the frame on screen at a cue's start is its tile; the first cue at 0.
    /// Without key frames, the interval's start.
    pub fn cue_start(&self, index: u64, key_frames_ms: &[u64]) -> u64 {
        let tile = self.tile(index);
        if index == 0 {
            return 0;
        }
        let before = key_frames_ms.partition_point(|&k| k <= tile.shows_ms);
        let key = match before.checked_sub(1) {
            Some(last) => key_frames_ms.get(last),
            None => key_frames_ms.first(),
        };
        key.map_or(tile.start_ms, |k| k.saturating_add(self.offset_ms))
            .min(self.duration_ms)
    }

    /// The WebVTT index: a cue per tile whose text is `storyboard-N.jpg#xywh=X,Y,W,H`,
    /// relative to the index (so a version folder carries over to the sheets). Each cue
    /// starts at its tile's key frame ([`Storyboard::cue_start`]) and ends where the next
    /// begins, the last at the end; a tile whose key frame the next tile shows too has no
    /// cue of its own (the two images are the same).
    pub fn vtt(&self, key_frames_ms: &[u64]) -> String {
        let mut text = String::from("WEBVTT\n");
        let count = self.tile_count();
        let mut start = 0;
        for index in 0..count {
            let tile = self.tile(index);
            let end = if index + 1 < count {
                self.cue_start(index + 1, key_frames_ms).max(start)
            } else {
                self.duration_ms
            };
            if end <= start {
                continue;
            }
            let _ = write!(
                text,
                "\n{} --> {}\n{}#xywh={},{},{},{}\n",
                vtt_time(start),
                vtt_time(end),
                StoryboardPart::Sheet(tile.sheet),
                tile.at.0,
                tile.at.1,
                self.tile.width,
                self.tile.height
            );
            start = end;
        }
        text
    }
}

/// A WebVTT timestamp, `hh:mm:ss.ttt`.
fn vtt_time(ms: u64) -> String {
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_to_themselves() {
        for name in [
            "storyboard.vtt",
            "storyboard.m3u8",
            "storyboard-1.jpg",
            "storyboard-12.jpg",
        ] {
            let part = StoryboardPart::parse(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(part.to_string(), name);
        }
        for name in [
            "storyboard-0.jpg",
            "storyboard-01.jpg",
            "storyboard-.jpg",
            "storyboard-1.png",
            "storyboard-x.jpg",
            "storyboard-99999999999.jpg",
            "storyboards.vtt",
        ] {
            assert_eq!(StoryboardPart::parse(name), None, "{name}");
        }
    }

    #[test]
    fn cues_tile_the_duration_and_sheets_fill_row_by_row() {
        // 3.5 s at 1 s a tile on 2x2 sheets: 4 tiles, one full sheet and a one-row one.
        let board = Storyboard::new(3_500, 1_000, 2, 2, PixelSize::new(160, 90)).unwrap();
        let board5 = Storyboard::new(4_500, 1_000, 2, 2, PixelSize::new(160, 90)).unwrap();
        assert_eq!(board.tile_count(), 4);
        assert_eq!(board.sheet_count(), 1);
        assert_eq!(board5.sheet_count(), 2);
        assert_eq!(board5.sheet_size(1), Some(PixelSize::new(320, 180)));
        assert_eq!(board5.sheet_size(2), Some(PixelSize::new(320, 90)));
        assert_eq!(board5.sheet_size(3), None);
        assert_eq!(board5.tiles_of_sheet(0), None);
        assert_eq!(
            board.tile(3),
            Tile {
                sheet: 1,
                at: (160, 90),
                start_ms: 3_000,
                end_ms: 3_500,
                shows_ms: 3_000,
            }
        );
        // A 500 ms pre-roll before the title's start: the cues keep the players' timeline,
        // each tile shows the title 500 ms earlier than its cue's start.
        let moved = board.with_offset(500);
        assert_eq!((moved.tile(0).start_ms, moved.tile(0).shows_ms), (0, 0));
        assert_eq!(
            (moved.tile(3).start_ms, moved.tile(3).shows_ms),
            (3_000, 2_500)
        );
        assert_eq!(moved.vtt(&[]), board.vtt(&[]));
        assert_eq!(board5.tile(4).sheet, 2);
        assert_eq!(board5.tile(4).at, (0, 0));
        let vtt = board.vtt(&[]);
        assert!(vtt.starts_with("WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n"));
        assert!(vtt.contains("00:00:01.000 --> 00:00:02.000\nstoryboard-1.jpg#xywh=160,0,160,90\n"));
        assert!(
            vtt.ends_with("00:00:03.000 --> 00:00:03.500\nstoryboard-1.jpg#xywh=160,90,160,90\n")
        );
        assert_eq!(vtt_time(3_723_004), "01:02:03.004");
    }

    #[test]
    fn cues_start_at_the_key_frames_their_tiles_show() {
        // Key frames at 0, 0.9 and 2.4 s, a tile a second: tile 1 (1 s) and tile 2 (2 s)
        // both show the key frame of 0.9 s, so tile 1 has no cue and tile 2's starts there.
        let board = Storyboard::new(3_500, 1_000, 2, 2, PixelSize::new(160, 90)).unwrap();
        let keys = [0, 900, 2_400];
        assert_eq!(
            board.vtt(&keys),
            "WEBVTT\n\
             \n00:00:00.000 --> 00:00:00.900\nstoryboard-1.jpg#xywh=0,0,160,90\n\
             \n00:00:00.900 --> 00:00:02.400\nstoryboard-1.jpg#xywh=0,90,160,90\n\
             \n00:00:02.400 --> 00:00:03.500\nstoryboard-1.jpg#xywh=160,90,160,90\n"
        );
        // Title time 0 at 500 ms of the players' timeline: every key frame plays 500 ms
        // later; the first cue still starts at 0.
        let moved = board.with_offset(500);
        let starts: Vec<u64> = (0..4).map(|i| moved.cue_start(i, &keys)).collect();
        assert_eq!(starts, [0, 500, 1_400, 2_900]);
        // No key frame at or before a tile's time: the first one; none at all: the interval.
        assert_eq!(board.cue_start(1, &[1_500]), 1_500);
        assert_eq!(board.cue_start(2, &[]), 2_000);
    }

    #[test]
    fn oversized_or_empty_layouts_are_refused() {
        assert!(Storyboard::new(1_000, 0, 2, 2, PixelSize::new(160, 90)).is_err());
        assert!(Storyboard::new(1_000, 1_000, 200, 2, PixelSize::new(160, 90)).is_err());
        assert!(Storyboard::new(u64::MAX, 100, 2, 2, PixelSize::new(160, 90)).is_err());
        assert!(Storyboard::new(1_000, 1_000, 2, 2, PixelSize::new(160, 0)).is_err());
    }
}
