//! Request paths to typed routes: `/vod/KEY/NAME`, `/metrics`, `/healthz`, `/readyz`.
//!
//! KEY may hold slashes, spaces and UTF-8, percent-encoded; it is decoded here and then
//! validated by `ObjectKey`, so an encoded `..` (`%2e%2e`), an encoded slash that would
//! form one, a backslash or a NUL is refused whatever its spelling. NAME is the last path
//! segment and must be a resource name (`package::Resource`); it may sit in a version
//! folder (`/vod/KEY/v{token}/NAME`), which is how manifests refer to everything else.
//! Between KEY and the rest may come a view: `clip/FROM-TO/` and
//! `tracks/SPEC/` (`package::View`), so `/vod/KEY/clip/0-5000/master.m3u8` and everything
//! it refers to (`/vod/KEY/clip/0-5000/v{token}/...`) are a clipped title.

use percent_encoding::percent_decode_str;

use super::nginx_names::NginxName;
use super::path_error::RouteError;
use crate::package::thumb::{StoryboardPart, ThumbName};
use crate::package::{parse_version_folder, Clip, Resource, ResourceKind, TrackSelection, View};
use crate::server::admission::RequestClass;
use crate::source::ObjectKey;

/// Name of the HLS AES-128 key resource (GET, 16 raw bytes).
pub const KEY_NAME: &str = "hls.key";
/// Name of the W3C ClearKey licence resource (POST, EME ClearKey JSON).
pub const LICENCE_NAME: &str = "clearkey.json";

/// Longest request path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;

/// What a request path asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// A resource of a title, optionally pinned to a title version.
    Vod {
        key: ObjectKey,
        /// The version token of the folder the name was in, if any.
        version: Option<String>,
        resource: Resource,
        /// The clip and track selection the path asks for; the whole title by default.
        view: View,
    },
    /// A resource named in nginx-vod-module's grammar whose tracks are resolved against
    /// the title (`server::outputs::nginx_vod`); only under `--nginx-vod-locations`.
    NginxVod {
        key: ObjectKey,
        /// The clip and track selection of the path parameters.
        view: View,
        name: NginxName,
    },
    /// A frame of a title as a JPEG (`/vod/KEY/[vTOKEN/]thumb-MS[-wW][-hH][-fN].jpg`,
    /// `server::outputs::thumb`); also under nginx-vod locations.
    Thumbnail {
        key: ObjectKey,
        /// The version token of the folder the name was in, if any.
        version: Option<String>,
        /// The clip and track selection the path asks for.
        view: View,
        name: ThumbName,
    },
    /// A title's storyboard: its WebVTT index, its HLS image playlist or a sprite sheet
    /// (`/vod/KEY/[vTOKEN/]storyboard.vtt`, `storyboard.m3u8`, `storyboard-N.jpg`,
    /// `server::outputs::thumb::storyboard`).
    Storyboard {
        key: ObjectKey,
        /// The version token of the folder the name was in, if any.
        version: Option<String>,
        /// The clip and track selection the path asks for.
        view: View,
        part: StoryboardPart,
    },
    /// The HLS key of a title (`/vod/KEY/[vTOKEN/]hls.key`, GET).
    Key { key: ObjectKey },
    /// The W3C ClearKey licence of a title (`/vod/KEY/clearkey.json`, POST).
    Licence { key: ObjectKey },
    /// Prometheus metrics.
    Metrics,
    /// Liveness.
    Healthz,
    /// Readiness.
    Readyz,
}

/// The facts about a route that the request's life needs (metrics label, admission class,
/// methods, the span's fields), answered here once.
impl Route {
    /// The route with its title cut to segments of `segment_ms` (an nginx-vod location's
    /// `vod_segment_duration`, when not the server's): every route that loads a title, so
    /// a location's manifests, the version folders they name and its nginx-vod names agree.
    #[must_use]
    pub fn cut_to(mut self, segment_ms: Option<u32>) -> Self {
        match &mut self {
            Route::Vod { view, .. }
            | Route::NginxVod { view, .. }
            | Route::Thumbnail { view, .. }
            | Route::Storyboard { view, .. } => view.segment_ms = segment_ms,
            Route::Key { .. }
            | Route::Licence { .. }
            | Route::Metrics
            | Route::Healthz
            | Route::Readyz => {}
        }
        self
    }

    /// The `route` label of metrics, spans and log lines.
    pub fn label(&self) -> &'static str {
        match self {
            Route::Vod { resource, .. } => resource.kind().label(),
            Route::NginxVod { name, .. } => name.label(),
            Route::Thumbnail { .. } => "thumbnail",
            Route::Storyboard { .. } => "storyboard",
            Route::Key { .. } => "key",
            Route::Licence { .. } => "licence",
            Route::Metrics => "metrics",
            Route::Healthz | Route::Readyz => "health",
        }
    }

    /// The admission class its requests are counted in.
    pub fn class(&self) -> RequestClass {
        match self {
            Route::Vod { resource, .. } => match resource.kind() {
                ResourceKind::Init | ResourceKind::Segment | ResourceKind::Subtitle => {
                    RequestClass::Segment
                }
                _ => RequestClass::Manifest,
            },
            Route::Key { .. } | Route::Licence { .. } => RequestClass::Manifest,
            Route::NginxVod { name, .. } if name.is_media() => RequestClass::Segment,
            Route::NginxVod { .. } => RequestClass::Manifest,
            Route::Thumbnail { .. } => RequestClass::Thumbnail,
            // The index decodes nothing; a sheet decodes a grid of key frames.
            Route::Storyboard { part, .. } => match part {
                StoryboardPart::Index | StoryboardPart::Playlist => RequestClass::Manifest,
                StoryboardPart::Sheet(_) => RequestClass::Thumbnail,
            },
            Route::Metrics | Route::Healthz | Route::Readyz => RequestClass::Control,
        }
    }

    /// The methods it answers (besides `OPTIONS`, the CORS preflight), for `Allow`.
    pub fn allowed_methods(&self) -> &'static str {
        match self {
            Route::Licence { .. } => "POST, OPTIONS",
            _ => "GET, HEAD, OPTIONS",
        }
    }

    /// Whether it answers `method` (besides `OPTIONS`).
    pub fn allows(&self, method: &http::Method) -> bool {
        match self {
            Route::Licence { .. } => method == http::Method::POST,
            _ => method == http::Method::GET || method == http::Method::HEAD,
        }
    }

    /// The object key it is about, if any.
    pub fn key(&self) -> Option<&ObjectKey> {
        match self {
            Route::Vod { key, .. }
            | Route::NginxVod { key, .. }
            | Route::Thumbnail { key, .. }
            | Route::Storyboard { key, .. }
            | Route::Key { key }
            | Route::Licence { key } => Some(key),
            Route::Metrics | Route::Healthz | Route::Readyz => None,
        }
    }
}

/// Extensions a KEY may end in (case-insensitive): media files, and `.json` for title
/// documents.
const MEDIA_EXTENSIONS: [&str; 5] = [".mp4", ".m4v", ".m4a", ".mov", ".json"];

/// Parse a request path (without the query string).
///
/// # Errors
/// [`RouteError::NotFound`] for paths that name nothing we serve,
/// [`RouteError::BadPath`] for malformed ones.
pub fn parse_route(path: &str) -> Result<Route, RouteError> {
    if path.len() > MAX_PATH_BYTES {
        return Err(RouteError::TooLong {
            max: MAX_PATH_BYTES,
        });
    }
    match path {
        "/metrics" => return Ok(Route::Metrics),
        "/healthz" => return Ok(Route::Healthz),
        "/readyz" => return Ok(Route::Readyz),
        _ => {}
    }
    let rest = path.strip_prefix("/vod/").ok_or(RouteError::NotFound)?;
    let (mut encoded_key, name) = rest.rsplit_once('/').ok_or(RouteError::NotFound)?;
    // The key and licence names (server::protect) are not media resources.
    let protection_name = matches!(name, KEY_NAME | LICENCE_NAME).then_some(name);
    let thumbnail = ThumbName::parse(name);
    let storyboard = StoryboardPart::parse(name);
    let resource = match (protection_name, thumbnail, storyboard) {
        (Some(_), _, _) | (_, Some(_), _) | (_, _, Some(_)) => None,
        (None, None, None) => Some(Resource::parse(name).ok_or(RouteError::NotFound)?),
    };
    // A key always ends in a media extension, so a last folder that is a version token is
    // never part of the key.
    let mut version = None;
    if let Some((key_part, folder)) = encoded_key.rsplit_once('/') {
        if let Some(token) = parse_version_folder(folder) {
            version = Some(token.to_string());
            encoded_key = key_part;
        }
    }
    let (encoded_key, view) = split_view(encoded_key)?;
    let key = percent_decode_str(encoded_key)
        .decode_utf8()
        .map_err(|_| RouteError::BadPath {
            reason: "key is not valid percent-encoded UTF-8".into(),
        })?;
    let key = ObjectKey::parse(&key)?;
    if !MEDIA_EXTENSIONS
        .iter()
        .any(|ext| key.ends_with_ignore_case(ext))
    {
        return Err(RouteError::NotFound);
    }
    if let Some(name) = thumbnail {
        return Ok(Route::Thumbnail {
            key,
            version,
            view,
            name,
        });
    }
    if let Some(part) = storyboard {
        return Ok(Route::Storyboard {
            key,
            version,
            view,
            part,
        });
    }
    let Some(resource) = resource else {
        return Ok(match protection_name {
            Some(KEY_NAME) => Route::Key { key },
            _ => Route::Licence { key },
        });
    };
    Ok(Route::Vod {
        key,
        version,
        resource,
        view,
    })
}

/// Split the view folders (`clip/FROM-TO/`, `tracks/SPEC/`, each at most once, in any
/// order) off the end of the encoded key part of a path.
///
/// # Errors
/// [`RouteError::BadPath`] with the reason for a malformed or repeated one.
pub fn split_view(mut encoded_key: &str) -> Result<(&str, View), RouteError> {
    let mut view = View::default();
    let bad = |reason: String| RouteError::BadPath { reason };
    while let Some((rest, value)) = encoded_key.rsplit_once('/') {
        let Some((key_part, name)) = rest.rsplit_once('/') else {
            break;
        };
        match name {
            "clip" if view.clip.is_none() => {
                view.clip = Some(Clip::parse(value).map_err(|e| bad(e.to_string()))?);
            }
            "tracks" if view.tracks.is_none() => {
                let value = percent_decode_str(value).decode_utf8_lossy();
                let tracks = TrackSelection::parse(&value).map_err(|e| bad(e.to_string()))?;
                view.tracks = Some(tracks);
            }
            "clip" | "tracks" => return Err(bad(format!("{name} given twice"))),
            _ => break,
        }
        encoded_key = key_part;
    }
    Ok((encoded_key, view))
}

/// Characters percent-encoded in a key's path segments: everything but unreserved ones.
const KEY_SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `key` as a URL path, each segment percent-encoded, slashes kept: how the preview page
/// and a break's resolved asset path write a key (the inverse of this module's reading).
pub fn encode_key(key: &str) -> String {
    key.split('/')
        .map(|s| percent_encoding::utf8_percent_encode(s, KEY_SEGMENT).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vod_paths_decode_their_key() {
        assert_eq!(
            parse_route("/vod/dir/my%20movie%C3%A9.mp4/seg-t1-3.m4s"),
            Ok(Route::Vod {
                key: ObjectKey::parse("dir/my movieé.mp4").unwrap(),
                version: None,
                resource: Resource::Segment {
                    track_id: 1,
                    number: 3
                },
                view: View::default(),
            })
        );
    }

    #[test]
    fn a_version_folder_pins_the_title_version() {
        assert_eq!(
            parse_route("/vod/a/b.mp4/v0123456789abcdef/index-t2.m3u8"),
            Ok(Route::Vod {
                key: ObjectKey::parse("a/b.mp4").unwrap(),
                version: Some("0123456789abcdef".into()),
                resource: Resource::MediaPlaylist { track_id: 2 },
                view: View::default(),
            })
        );
        // Not a token: part of the key, which then lacks a media extension.
        assert_eq!(
            parse_route("/vod/b.mp4/vXYZ/index-t2.m3u8"),
            Err(RouteError::NotFound)
        );
    }

    #[test]
    fn a_title_document_key_has_the_same_entry_points() {
        for name in ["master.m3u8", "manifest.mpd"] {
            let route = parse_route(&format!("/vod/shows/ep%201.json/{name}"));
            assert_eq!(
                route,
                Ok(Route::Vod {
                    key: ObjectKey::parse("shows/ep 1.json").unwrap(),
                    version: None,
                    resource: Resource::parse(name).unwrap(),
                    view: View::default(),
                })
            );
        }
    }

    #[test]
    fn a_clip_and_a_track_selection_are_a_view_of_the_key() {
        let route = parse_route(
            "/vod/dir/a.mp4/clip/1000-5000/tracks/v1-a2/v0123456789abcdef/seg-t1-2.m4s",
        );
        assert_eq!(
            route,
            Ok(Route::Vod {
                key: ObjectKey::parse("dir/a.mp4").unwrap(),
                version: Some("0123456789abcdef".into()),
                resource: Resource::Segment {
                    track_id: 1,
                    number: 2
                },
                view: View {
                    clip: Some(Clip::new(1000, Some(5000)).unwrap()),
                    tracks: Some(TrackSelection::parse("v1-a2").unwrap()),
                    segment_ms: None,
                },
            })
        );
        let Ok(Route::Vod { view, .. }) = parse_route("/vod/a.mp4/tracks/lang=fr/master.m3u8")
        else {
            panic!("a language selection is a route");
        };
        assert_eq!(view.path(), "tracks/lang=fr/");
        for path in [
            "/vod/a.mp4/clip/5000-1000/master.m3u8",
            "/vod/a.mp4/clip/5000-5000/master.m3u8",
            "/vod/a.mp4/clip/abc/master.m3u8",
            "/vod/a.mp4/clip/1-2/clip/3-4/master.m3u8",
            "/vod/a.mp4/tracks/x9/master.m3u8",
        ] {
            assert!(
                matches!(parse_route(path), Err(RouteError::BadPath { .. })),
                "{path}: {:?}",
                parse_route(path)
            );
        }
    }

    #[test]
    fn storyboard_names_are_storyboard_routes() {
        assert_eq!(
            parse_route("/vod/a.mp4/v0123456789abcdef/storyboard-3.jpg"),
            Ok(Route::Storyboard {
                key: ObjectKey::parse("a.mp4").unwrap(),
                version: Some("0123456789abcdef".into()),
                view: View::default(),
                part: StoryboardPart::Sheet(3),
            })
        );
        let Ok(route) = parse_route("/vod/a.mp4/storyboard.vtt") else {
            panic!("the storyboard index is a route");
        };
        assert_eq!(route.class(), RequestClass::Manifest);
        let Ok(sheet) = parse_route("/vod/a.mp4/storyboard-2.jpg") else {
            panic!("a sheet is a route");
        };
        // A sheet decodes: it waits for the thumbnails' decode places.
        assert_eq!(sheet.class(), RequestClass::Thumbnail);
        assert_eq!(sheet.label(), "storyboard");
        assert_eq!(
            parse_route("/vod/a.mp4/storyboard-0.jpg"),
            Err(RouteError::NotFound)
        );
    }

    #[test]
    fn a_thumbnail_name_is_a_thumbnail_route() {
        assert_eq!(
            parse_route("/vod/dir/a.mp4/clip/1000-5000/thumb-1500-w150.jpg"),
            Ok(Route::Thumbnail {
                key: ObjectKey::parse("dir/a.mp4").unwrap(),
                version: None,
                view: View {
                    clip: Some(Clip::new(1000, Some(5000)).unwrap()),
                    tracks: None,
                    segment_ms: None,
                },
                name: ThumbName::parse("thumb-1500-w150.jpg").unwrap(),
            })
        );
        let Ok(Route::Thumbnail { version, .. }) =
            parse_route("/vod/t.json/v0123456789abcdef/thumb-0-h90-f2.jpg")
        else {
            panic!("a thumbnail in a version folder is a route");
        };
        assert_eq!(version.as_deref(), Some("0123456789abcdef"));
        assert_eq!(
            parse_route("/vod/a.mp4/thumb-01.jpg"),
            Err(RouteError::NotFound)
        );
    }

    #[test]
    fn traversal_in_every_spelling_is_refused() {
        for path in [
            "/vod/../etc/passwd.mp4/master.m3u8",
            "/vod/%2e%2e/secret.mp4/master.m3u8",
            "/vod/a%2f..%2f..%2fb.mp4/master.m3u8",
            "/vod/a%5c..%5cb.mp4/master.m3u8",
            "/vod/a%00.mp4/master.m3u8",
            "/vod//etc/x.mp4/master.m3u8",
            "/vod/%2fetc%2fx.mp4/master.m3u8",
            "/vod/%ff.mp4/master.m3u8",
        ] {
            assert!(
                matches!(parse_route(path), Err(RouteError::BadPath { .. })),
                "{path}: {:?}",
                parse_route(path)
            );
        }
    }

    #[test]
    fn other_paths_are_not_found() {
        for path in [
            "/",
            "/vod/a.mp4",
            "/vod/a.txt/master.m3u8",
            "/vod/a.mp4/nothing.m3u8",
            "/vod/a.mp4/seg-t1-0.m4s",
        ] {
            assert_eq!(parse_route(path), Err(RouteError::NotFound), "{path}");
        }
        assert_eq!(
            parse_route(&format!("/vod/{}.mp4/master.m3u8", "a".repeat(5000))),
            Err(RouteError::TooLong {
                max: MAX_PATH_BYTES
            })
        );
    }
}
