//! HLS playlists (RFC 8216 and draft-pantos-hls-rfc8216bis), for the CMAF and the MPEG-TS
//! outputs. Owns the HLS text format only; every URI is a relative name made by
//! `package::Resource`, times come from the segment plan, and what a playlist says beyond
//! its title comes in as `package::ManifestOptions`.
//!
//! `multivariant` writes `master.m3u8`; `media` the media, I-frame and subtitle playlists;
//! `ts` what the MPEG-TS output changes in both; `sequence_playlists` a sequence's playlists; `image`
//! the storyboard; `break_tags` ad breaks; `attrs` what they share.

mod access;
mod attrs;
mod break_tags;
mod image;
mod media;
mod multivariant;
mod sequence_playlists;
mod ts;

pub use image::render_image_playlist;
pub use media::{
    render_iframe_playlist, render_iframe_playlist_with, render_media_playlist,
    render_media_playlist_with, render_stated_media_playlist, render_subtitle_playlist,
    render_subtitle_playlist_with,
};
pub use multivariant::{render_multivariant_playlist, render_multivariant_playlist_with};
pub use sequence_playlists::{
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
