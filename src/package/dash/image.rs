//! The storyboard as DASH-IF thumbnails (IOP v4.3 6.2.6, "Thumbnail Navigation"): an
//! AdaptationSet of `contentType="image"` whose one Representation's segments are the
//! storyboard's sheets, each covering a sheet's tiles of time (`SegmentTemplate@duration`,
//! numbered from 1 as `storyboard-N.jpg`), its `width`/`height` a full sheet's and its
//! grid in an `EssentialProperty` of `http://dashif.org/thumbnail_tile`. dash.js and Shaka
//! cut tiles out by that grid from the Representation's size, so the last sheet, which
//! has only the rows it uses, is still cut right. Players that do not read image sets
//! skip them by the EssentialProperty (ISO/IEC 23009-1 5.8.4.8).

use super::tag::Tag;
use super::Uris;
use crate::package::thumb::{PixelSize, Storyboard, StoryboardPart};

/// DASH-IF's scheme for the grid of a thumbnail sheet (`COLUMNSxROWS`).
const THUMBNAIL_TILE_SCHEME: &str = "http://dashif.org/thumbnail_tile";

/// Timescale of the image set's template: milliseconds.
const TIMESCALE: u32 = 1000;

/// The image AdaptationSet `id` of `board`.
pub(super) fn image_adaptation_set(
    out: &mut String,
    id: usize,
    board: &Storyboard,
    uris: &Uris<'_>,
) {
    let PixelSize { width, height } = board.full_sheet_size();
    let sheet_ms = board.interval_ms.saturating_mul(board.tiles_per_sheet());
    Tag::new(4, "AdaptationSet")
        .attr("id", id)
        .attr("contentType", "image")
        .attr("mimeType", "image/jpeg")
        .open(out);
    // Sheets are named in the version folder, as segments are, so they cache for long.
    let media = StoryboardPart::Sheet(1)
        .to_string()
        .replace("-1.", "-$Number$.");
    Tag::new(6, "SegmentTemplate")
        .attr("timescale", TIMESCALE)
        .attr("duration", sheet_ms)
        .attr("startNumber", 1)
        .uri(
            "media",
            format_args!("{}{media}", uris.folder),
            uris.options,
        )
        .empty(out);
    Tag::new(6, "Representation")
        .attr("id", "storyboard")
        .attr("bandwidth", estimated_bandwidth(board))
        .attr("width", width)
        .attr("height", height)
        .open(out);
    Tag::new(8, "EssentialProperty")
        .attr("schemeIdUri", THUMBNAIL_TILE_SCHEME)
        .attr("value", format_args!("{}x{}", board.columns, board.rows))
        .empty(out);
    out.push_str("      </Representation>\n    </AdaptationSet>\n");
}

/// An estimate of the sheets' bit rate (bits per second): a bit a pixel (a JPEG of video
/// frames at quality 90 to 95 runs 0.5 to 1.5) over a sheet's time. A sheet's bytes are
/// only known once decoded; players use the figure to pick among image Representations.
fn estimated_bandwidth(board: &Storyboard) -> u64 {
    let PixelSize { width, height } = board.full_sheet_size();
    let sheet_ms = board
        .interval_ms
        .saturating_mul(board.tiles_per_sheet())
        .max(1);
    (u64::from(width) * u64::from(height) * 1000 / sheet_ms).max(1)
}
