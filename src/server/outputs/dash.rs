//! The DASH output: the static MPD, rendered once per title and kept with it
//! (`titles::kept::DashKept`); its segments are the CMAF output's, and its text segments
//! and subtitle files the subtitle output's.

use crate::server::error::ServeError;
use crate::server::respond::answer::{Answer, MPD};
use crate::server::title_request::TitleRequest;

/// `manifest.mpd`.
///
/// # Errors
/// None today; the same signature as every output of a title.
pub async fn mpd(req: &TitleRequest<'_>) -> Result<Answer, ServeError> {
    let mpd = (req.cached.caches.dash).mpd_with(&req.cached.title, &req.options);
    Ok(req.manifest(mpd, MPD))
}
