//! The HLS output over CMAF: the multivariant playlist, the media playlists (a text
//! track's subtitle playlist answers under the same name) and the I-frame playlists, each
//! rendered once per title and kept with it (`titles::cached`).

use super::context::TitleRequest;
use crate::server::error::ServeError;
use crate::server::respond::answer::{Answer, Content, M3U8};

/// `master.m3u8`.
pub fn multivariant(req: &TitleRequest<'_>) -> Answer {
    req.manifest(req.cached.multivariant_with(&req.options), M3U8)
}

/// `index-tN.m3u8`: a rendition's media playlist, or a text track's subtitle playlist.
///
/// # Errors
/// [`ServeError::NoRendition`] when the title has neither.
pub fn media_playlist(req: &TitleRequest<'_>, track_id: u32) -> Result<Answer, ServeError> {
    let playlist = (req.cached.media_playlist_with(track_id, &req.options))
        .or_else(|| req.cached.subtitle_playlist_with(track_id, &req.options))
        .ok_or(ServeError::NoRendition(track_id))?;
    Ok(req.manifest(playlist, M3U8))
}

/// `iframes-tN.m3u8`: a video rendition's I-frame playlist, as the title writes it (it
/// carries no signed-URL token). Trick play is offered by the clear output only: its key
/// frames are not encrypted (fail closed).
///
/// # Errors
/// [`ServeError::NotOffered`] for an encrypted output, [`ServeError::NoVideoRendition`]
/// when the track is no video rendition.
pub fn iframe_playlist(req: &TitleRequest<'_>, track_id: u32) -> Result<Answer, ServeError> {
    if req.protected.is_some() {
        return Err(trick_play_not_offered());
    }
    let playlist =
        (req.cached.iframe_playlist(track_id)).ok_or(ServeError::NoVideoRendition(track_id))?;
    Ok(req.answer(Content::Inline(playlist), M3U8))
}

/// Why an encrypted output has no I-frame playlists or key frames.
pub fn trick_play_not_offered() -> ServeError {
    ServeError::NotOffered("trick play is not offered for encrypted outputs".into())
}
