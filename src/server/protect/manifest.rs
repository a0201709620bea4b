//! What manifests say about protection, per request: the encrypted output's version folder
//! and key signalling, and the signed-URL token carried into every URL they write.

use bytes::Bytes;
use http::header::{self, HeaderMap};

use super::protector::Protector;
use super::select::Protected;
use crate::crypto::Scheme;
use crate::package::protect::manifest::{self, HlsKey};
use crate::package::protect::{hls_segment_iv, hls_ts_sample_aes_iv, hls_ts_segment_iv};
use crate::package::Resource;
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

/// The protected form of a manifest: its clear rendering with the protected version
/// folder, the key signalling, and the request's token carried into its URLs.
pub fn protected_manifest(
    protector: &Protector,
    cached: &CachedTitle,
    resource: &Resource,
    clear: &Bytes,
    p: &Protected,
    place: &RequestPlace<'_>,
) -> Bytes {
    let text = String::from_utf8_lossy(clear);
    let token = protector.carried_token(place.query);
    let query = token.map(|t| format!("token={t}"));
    let licence = format!(
        "{}{}{LICENCE_NAME}",
        place.base_url(protector),
        place.title_dir()
    );
    let with_token = |url: &str| match &query {
        Some(q) => format!("{url}?{q}"),
        None => url.to_owned(),
    };
    let out = match resource {
        Resource::Multivariant | Resource::MultivariantTs => {
            // Trick play is clear-only for now: its key frames are not encrypted, so an
            // encrypted output does not offer them (fail closed; vod_answer refuses them).
            let text = manifest::hls_without_iframes(&text);
            let swapped = manifest::swap_version_folder(&text, &cached.token, &p.token);
            let method = HlsKey::of(p.scheme, *resource == Resource::MultivariantTs);
            let uri = match method {
                HlsKey::SampleAesClearKey => licence,
                _ => format!("{}{KEY_NAME}", crate::package::version_folder(&p.token)),
            };
            let out = manifest::hls_multivariant(&swapped, method, &uri, &p.key);
            match &query {
                Some(q) => manifest::hls_with_query(&out, q),
                None => out,
            }
        }
        Resource::MediaPlaylist { track_id } if cached.title.rendition(*track_id).is_some() => {
            let uri = match p.scheme {
                Scheme::Aes128 => KEY_NAME.to_owned(),
                _ => licence,
            };
            let (token, kid, track) = (&cached.token, p.key.kid, *track_id);
            let method = HlsKey::of(p.scheme, false);
            let out = manifest::hls_media_playlist(&text, method, &uri, &p.key, |n| {
                hls_segment_iv(token, &kid, track, n)
            });
            match &query {
                Some(q) => manifest::hls_with_query(&out, q),
                None => out,
            }
        }
        // A TS rendition's playlist (AES-128 or SAMPLE-AES, `select`): named by its video's
        // track.
        Resource::TsMediaPlaylist { track_id } if cached.title.rendition(*track_id).is_some() => {
            let method = HlsKey::of(p.scheme, true);
            let out = manifest::hls_media_playlist(&text, method, KEY_NAME, &p.key, |n| {
                ts_segment_iv(cached, p, *track_id, n)
            });
            match &query {
                Some(q) => manifest::hls_with_query(&out, q),
                None => out,
            }
        }
        Resource::Mpd => {
            let text = manifest::dash_without_trick_play(&text);
            let swapped = manifest::swap_version_folder(&text, &cached.token, &p.token);
            let out = manifest::dash_mpd(&swapped, p.scheme, &p.key, &with_token(&licence));
            match &query {
                Some(q) => manifest::dash_with_query(&out, q),
                None => out,
            }
        }
        // Subtitle playlists: not encrypted, only the token carried on.
        _ => match &query {
            Some(q) => manifest::hls_with_query(&text, q),
            None => text.into_owned(),
        },
    };
    Bytes::from(out)
}

/// The IV of MPEG-TS segment `number` of the TS rendition named by `track_id` in output
/// `p`: AES-128 and SAMPLE-AES each from a base of their own (SAMPLE-AES: one IV for all
/// segments).
pub fn ts_segment_iv(cached: &CachedTitle, p: &Protected, track_id: u32, number: u64) -> [u8; 16] {
    match p.scheme {
        Scheme::Aes128 => hls_ts_segment_iv(&cached.token, &p.key.kid, track_id, number),
        _ => hls_ts_sample_aes_iv(&cached.token, &p.key.kid, track_id),
    }
}

/// A clear manifest with the request's token carried into its URLs (signed URLs on
/// every path, nothing encrypted).
pub fn clear_manifest(
    protector: &Protector,
    resource: &Resource,
    clear: Bytes,
    query: Option<&str>,
) -> Bytes {
    let Some(token) = protector.carried_token(query) else {
        return clear;
    };
    let q = format!("token={token}");
    let text = String::from_utf8_lossy(&clear);
    Bytes::from(match resource {
        Resource::Mpd => manifest::dash_with_query(&text, &q),
        _ => manifest::hls_with_query(&text, &q),
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
