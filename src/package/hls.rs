//! HLS playlists (RFC 8216 and draft-pantos-hls-rfc8216bis), for the CMAF and the MPEG-TS
//! outputs. Owns the HLS text format only; every URI is a relative name made by
//! `package::Resource`, and times come from the segment plan.
//!
//! - `multivariant`: `master.m3u8`, its audio and subtitle groups, variants and I-frame
//!   playlists;
//! - `media`: media playlists (a rendition's, the muxed one, I-frame and subtitle ones);
//! - `ts`: what the MPEG-TS output changes in both;
//! - `sequence`: a sequence's playlists, a discontinuity at each part;
//! - `image`: the storyboard as an image stream and its image playlist, when asked;
//! - `attrs`: what they share (attribute lists, codecs, names);
//! - `breaks`: ad breaks' program dates, interstitials and SCTE-35.
//!
//! What a playlist says beyond its title comes in as `package::ManifestOptions` and is
//! written in place: the version folder, the query every URI carries, and the keys
//! (`EXT-X-SESSION-KEY` after the header, `EXT-X-KEY` before the segments it keys, after
//! `EXT-X-MAP` so the init segment stays clear).

mod access;
mod attrs;
mod breaks;
mod image;
mod media;
mod multivariant;
mod sequence;
mod ts;

pub use image::render_image_playlist;
pub use media::{
    render_iframe_playlist, render_iframe_playlist_with, render_media_playlist,
    render_media_playlist_with, render_stated_media_playlist, render_subtitle_playlist,
    render_subtitle_playlist_with,
};
pub use multivariant::{render_multivariant_playlist, render_multivariant_playlist_with};
pub use sequence::{
    render_sequence_media_playlist, render_sequence_multivariant, render_sequence_subtitle_playlist,
};
pub use ts::{
    render_ts_iframe_playlist, render_ts_iframe_playlist_with, render_ts_media_playlist,
    render_ts_media_playlist_with, render_ts_multivariant_playlist,
    render_ts_multivariant_playlist_with, render_ts_subtitle_playlist,
    render_ts_subtitle_playlist_with, ts_subtitle_segment,
};

#[cfg(test)]
mod tests;
