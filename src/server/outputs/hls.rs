//! The HLS output over CMAF: the multivariant playlist, the media playlists (a text
//! track's subtitle playlist answers under the same name) and the I-frame playlists, each
//! rendered once per title and kept with it (`titles::kept::HlsKept`).

use crate::package::Resource;
use crate::server::error::ServeError;
use crate::server::respond::answer::{Answer, Content, M3U8};
use crate::server::title_request::TitleRequest;

/// `master.m3u8`, `index-tN.m3u8` (a rendition's media playlist, or a text track's
/// subtitle playlist) or `iframes-tN.m3u8`.
///
/// # Errors
/// [`ServeError::NoRendition`] for a media playlist of neither; for an I-frame playlist,
/// [`ServeError::NotOffered`] in an encrypted output, [`ServeError::NoVideoRendition`]
/// when the track is no video rendition.
pub async fn hls_playlist(req: &TitleRequest<'_>) -> Result<Answer, ServeError> {
    let (title, kept) = (&req.cached.title, &req.cached.caches);
    match req.resource {
        Resource::Multivariant => {
            let playlist = kept.hls.multivariant_with(title, &req.options);
            Ok(req.manifest(playlist, M3U8))
        }
        Resource::MediaPlaylist { track_id } => {
            let playlist = (kept.hls.media_playlist_with(title, track_id, &req.options))
                .or_else(|| (kept.subtitles).playlist_with(title, track_id, &req.options))
                .ok_or(ServeError::NoRendition(track_id))?;
            Ok(req.manifest(playlist, M3U8))
        }
        Resource::IframePlaylist { track_id } => iframe_playlist(req, track_id),
        resource => Err(ServeError::NoRendition(resource.track_id().unwrap_or(0))),
    }
}

/// A video rendition's I-frame playlist, as the title writes it (it carries no signed-URL
/// token). Trick play is offered by the clear output only: its key frames are not
/// encrypted (fail closed).
fn iframe_playlist(req: &TitleRequest<'_>, track_id: u32) -> Result<Answer, ServeError> {
    if req.protected.is_some() {
        return Err(ServeError::trick_play_not_offered());
    }
    let playlist = (req
        .cached
        .caches
        .hls
        .iframe_playlist(&req.cached.title, track_id))
    .ok_or(ServeError::NoVideoRendition(track_id))?;
    Ok(req.answer(Content::Inline(playlist), M3U8))
}
