//! What manifests say about protection, per request: the encrypted output's version folder
//! and key signalling, and the signed-URL token carried into every URL they write, as the
//! plain `ManifestOptions` the writers take.

use http::header::{self, HeaderMap};

use super::protector::Protector;
use super::select::Protected;
use crate::package::{DashProfile, DashSubtitleFormat, ManifestOptions, ManifestProtection};
use crate::server::error::ServeError;
use crate::server::route::paths::{KEY_NAME, LICENCE_NAME};
use crate::server::titles::cached::CachedTitle;

/// Where a request came from, for the URLs protected manifests write.
#[derive(Debug, Clone)]
pub struct RequestPlace<'r> {
    /// The request's headers, for its base URL (see [`base_url`]); `None` writes URLs
    /// relative to the server.
    pub headers: Option<&'r HeaderMap>,
    /// The request path.
    pub path: &'r str,
    /// The query string.
    pub query: Option<&'r str>,
}

impl RequestPlace<'_> {
    /// Whether manifests answered to this request carry its token into their URLs.
    pub fn carries_token(&self, protector: &Protector) -> bool {
        protector.carried_token(self.query).is_some()
    }

    /// Scheme and authority (`http://host:port`), no trailing slash; empty without
    /// headers. Worked out only by the manifests that write absolute URLs.
    fn base_url(&self, protector: &Protector) -> String {
        self.headers
            .map_or_else(String::new, |h| base_url(protector, h))
    }

    /// `/vod/KEY/` of the request (its path without the name and version folder), as sent.
    fn title_dir(&self) -> &str {
        let dir = self.path.rsplit_once('/').map_or("/", |(d, _)| d);
        let dir = match dir.rsplit_once('/') {
            Some((parent, last)) if crate::package::parse_version_folder(last).is_some() => parent,
            _ => dir,
        };
        // Keep the trailing slash.
        self.path.get(..dir.len() + 1).unwrap_or("/")
    }
}

/// The base URL for a request: the configured public URL, else `http://` and its Host.
pub fn base_url(protector: &Protector, headers: &HeaderMap) -> String {
    if let Some(url) = protector.public_url() {
        return url.to_owned();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()))
        .unwrap_or("localhost");
    format!("http://{host}")
}

/// What the manifests answered to a request say beyond the title: the selected output's
/// version folder and protection (`protected`; `None` for the clear output), and the
/// request's signed-URL token carried into every URL, and the DASH profile: the title
/// document's own, else the server's `dash_profile`. The writers (`package::hls`,
/// `package::dash`) write it in place.
///
/// # Errors
/// 503 when a track's usage has no key (a key split's key the provider left out).
pub fn manifest_options(
    protector: &Protector,
    cached: &CachedTitle,
    protected: Option<&Protected>,
    place: &RequestPlace<'_>,
    dash_profile: DashProfile,
) -> Result<ManifestOptions, ServeError> {
    let query = (protector.carried_token(place.query)).map(|t| format!("token={t}"));
    // Under a key split, each track's key (or none, for a track left clear).
    let mut track_keys = Vec::new();
    if let Some(p) = protected.filter(|p| !p.keys.presets.is_shared()) {
        for rendition in &cached.title.renditions {
            let key = p.track_key(&cached.title, rendition.track_id)?;
            track_keys.push((rendition.track_id, key.cloned()));
        }
    }
    Ok(ManifestOptions {
        version: protected.map(|p| p.token.clone()),
        query,
        // Trick play is clear only: its key frames are not encrypted (fail closed).
        trick_play: protected.is_none(),
        withheld: Vec::new(),
        // Set by the output from the request's filter (`TitleRequest::load`).
        filtered: Vec::new(),
        protection: protected.map(|p| ManifestProtection {
            scheme: p.scheme,
            key: p.key.clone(),
            clear_token: cached.token.clone(),
            key_name: KEY_NAME.to_owned(),
            licence_url: format!(
                "{}{}{LICENCE_NAME}",
                place.base_url(protector),
                place.title_dir()
            ),
            clearkey: p.clearkey,
            track_keys,
        }),
        // Set by the output when the settings ask for it (`TitleRequest::load`).
        storyboard: None,
        dash_profile: cached.dash_profile.unwrap_or(dash_profile),
        // Set from the settings (`TitleRequest::load`).
        dash_subtitles: DashSubtitleFormat::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_folder_is_found_with_or_without_a_version() {
        let place = |path| RequestPlace {
            headers: None,
            path,
            query: None,
        };
        assert_eq!(
            place("/vod/a%20b.mp4/manifest.mpd").title_dir(),
            "/vod/a%20b.mp4/"
        );
        assert_eq!(
            place("/vod/x/a.mp4/v0123456789abcdef/index-t1.m3u8").title_dir(),
            "/vod/x/a.mp4/"
        );
    }
}
