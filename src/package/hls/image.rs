//! The storyboard as an HLS image stream (the Image Media Playlist specification of Roku,
//! Disney and WarnerMedia, read by Roku OS 9.3 and later): `#EXT-X-IMAGE-STREAM-INF` in
//! the multivariant playlist naming `storyboard.m3u8`, whose segments are the sheets, each
//! lasting a sheet's tiles of time, after `#EXT-X-IMAGES-ONLY` and with `#EXT-X-TILES`
//! (a tile's size, the grid, a tile's time). Players that do not know the tags ignore
//! them (RFC 8216 6.3.1: unknown tags are ignored), which hls.js does.

use std::fmt::Write as _;

use super::attrs::{Attrs, UriBase, VERSION};
use crate::package::thumb::{PixelSize, Storyboard, StoryboardPart};

/// `#EXT-X-IMAGE-STREAM-INF` of `board`'s image playlist, in `folder`: a tile's size as
/// `RESOLUTION` (as in the specification's examples, where it equals `EXT-X-TILES`'s; Shaka
/// multiplies it by the layout to find the sheet), `CODECS="jpeg"`, and a bit rate
/// estimated at a bit a pixel.
pub(super) fn image_stream_inf(
    out: &mut String,
    board: &Storyboard,
    UriBase { options, folder }: UriBase<'_>,
) {
    let PixelSize { width, height } = board.full_sheet_size();
    let sheet_ms = board
        .interval_ms
        .saturating_mul(board.tiles_per_sheet())
        .max(1);
    let bandwidth = (u64::from(width) * u64::from(height) * 1000 / sheet_ms).max(1);
    let attrs = Attrs::default()
        .plain("BANDWIDTH", bandwidth)
        .plain(
            "RESOLUTION",
            format_args!("{}x{}", board.tile.width, board.tile.height),
        )
        .quoted("CODECS", "jpeg")
        .uri(
            format_args!("{folder}{}", StoryboardPart::Playlist),
            options,
        );
    let _ = writeln!(out, "#EXT-X-IMAGE-STREAM-INF:{}", attrs.0);
}

/// The image media playlist (`storyboard.m3u8`) of `board`: a sheet a segment, named
/// relative to the playlist, each followed by `query` when given (a signed URL's token).
pub fn render_image_playlist(board: &Storyboard, query: Option<&str>) -> String {
    let sheet_ms = board.interval_ms.saturating_mul(board.tiles_per_sheet());
    let target = sheet_ms.div_ceil(1000).max(1);
    let mut out = format!(
        "#EXTM3U\n#EXT-X-VERSION:{VERSION}\n#EXT-X-TARGETDURATION:{target}\n\
         #EXT-X-MEDIA-SEQUENCE:1\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-IMAGES-ONLY\n"
    );
    for sheet in 1..=board.sheet_count() {
        let Some(tiles) = u32::try_from(sheet).ok().and_then(|s| {
            let tiles = board.tiles_of_sheet(s)?;
            Some((s, tiles))
        }) else {
            break;
        };
        let (number, range) = tiles;
        let start_ms = board.tile(range.start).start_ms;
        let end_ms = board.tile(range.end.saturating_sub(1)).end_ms;
        let seconds = end_ms.saturating_sub(start_ms) as f64 / 1000.0;
        let _ = write!(
            out,
            "#EXTINF:{seconds:.3},\n#EXT-X-TILES:RESOLUTION={}x{},LAYOUT={}x{},DURATION={:.3}\n{}",
            board.tile.width,
            board.tile.height,
            board.columns,
            board.rows,
            board.interval_ms as f64 / 1000.0,
            StoryboardPart::Sheet(number)
        );
        match query {
            Some(query) => {
                let _ = writeln!(out, "?{query}");
            }
            None => out.push('\n'),
        }
    }
    out.push_str("#EXT-X-ENDLIST\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::signalling::ManifestOptions;

    #[test]
    fn each_sheet_is_a_segment_of_its_tiles_time() {
        let board = Storyboard::new(3_000, 400, 3, 2, PixelSize::new(160, 90)).unwrap();
        let playlist = render_image_playlist(&board, Some("token=t"));
        assert!(playlist.contains("#EXT-X-IMAGES-ONLY\n"), "{playlist}");
        assert!(playlist.contains("#EXT-X-TARGETDURATION:3\n"), "{playlist}");
        assert!(playlist.contains(
            "#EXTINF:2.400,\n#EXT-X-TILES:RESOLUTION=160x90,LAYOUT=3x2,DURATION=0.400\n\
             storyboard-1.jpg?token=t\n"
        ));
        assert!(playlist.contains("#EXTINF:0.600,\n"), "{playlist}");
        assert!(playlist.ends_with("storyboard-2.jpg?token=t\n#EXT-X-ENDLIST\n"));
        let mut out = String::new();
        let options = ManifestOptions::default();
        let uris = UriBase {
            options: &options,
            folder: "vabc/",
        };
        image_stream_inf(&mut out, &board, uris);
        assert_eq!(
            out,
            "#EXT-X-IMAGE-STREAM-INF:BANDWIDTH=36000,RESOLUTION=160x90,CODECS=\"jpeg\",\
             URI=\"vabc/storyboard.m3u8\"\n"
        );
    }
}
