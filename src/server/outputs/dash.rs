//! The DASH output: the static MPD, rendered once per title and kept with it; its
//! segments are the CMAF output's (`cmaf.rs`), and its subtitle files `subtitles.rs`'.

use super::context::TitleRequest;
use crate::server::respond::answer::{Answer, MPD};

/// `manifest.mpd`.
pub fn mpd(req: &TitleRequest<'_>) -> Answer {
    req.manifest(req.cached.mpd_with(&req.options), MPD)
}
