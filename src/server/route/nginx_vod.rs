//! nginx-vod-module's URL grammar, translated to vodpack's own routes, so a CDN or an app
//! holding nginx-vod URLs can be pointed at vodpack unchanged: under each configured
//! location a path is `PREFIX/FILE_PATH/NAME`, as nginx-vod's local mode reads it (see
//! [`parse_nginx_route`]). Names that pick tracks stay an `NginxName` (`nginx_names.rs`)
//! until the title is loaded (the Nth video track is the title's business); what vodpack
//! does not produce answers with a clear error rather than something else.

use percent_encoding::percent_decode_str;

use super::nginx_names::{
    parse_av_tokens, parse_name, urlset_document, NginxOutput, URLSET_SUFFIX,
};
use super::path_error::RouteError;
use super::paths::Route;
use crate::config::NginxVodLocations;
use crate::media::TrackKind;
use crate::package::thumb::{StoryboardPart, ThumbName};
use crate::package::{
    parse_version_folder, Clip, PickKind, Resource, TrackPick, TrackSelection, View,
};
use crate::source::ObjectKey;

/// The HLS key's name under a location, as the module names it
/// (`vod_hls_encryption_key_file_name`'s default): the title's `hls.key`.
pub const KEY_NAME: &str = "encryption.key";

/// Parse `path` against the nginx-vod locations.
///
/// Under each configured location (`--nginx-vod-locations hls=/hls/,hlsts=/hlsts/,dash=/dash/`,
/// and `thumb=/thumb/` for a `vod thumb` location) a path is `PREFIX/FILE_PATH/NAME`, as
/// nginx-vod's local mode reads it:
/// - path parameters anywhere in FILE_PATH, removed from it, the first of each kind winning
///   as in `ngx_http_vod_extract_uri_params`: `clipFrom/MS/`, `clipTo/MS/`, `tracks/v1-a1/`;
///   they become a `package::View`;
/// - a multi-URL set, `folder/,a,b,.mp4.urlset`: the files `folder/a.mp4` and
///   `folder/b.mp4` as one title, made into a title document in memory (its video
///   renditions, the first bringing its audio), served by the title-document machinery;
/// - NAME is one of vodpack's own names (what our manifests refer to, relative to
///   themselves, so a player that started from an nginx-vod URL stays under it) or one of
///   nginx-vod's: `master.m3u8`, `index[-...].m3u8`, `iframes-...m3u8`, `seg-N-...m4s|ts`,
///   `init-...mp4`, DASH `manifest.mpd` and `fragment-N-...m4s`, with nginx-vod's track
///   tokens (`f2`: file 2 of a set, `v1`/`a2`: the Nth video/audio track, `v`/`v0`: all of
///   them, `leng`: a language, `x3`: a version, ignored); thumbnails
///   (`thumb-1000-w150.jpg`, the name being the same in both grammars) under every
///   location, and storyboards (vodpack's, referred to by its manifests) under the
///   packagers' locations.
///
/// Names that pick tracks are resolved against the title (the Nth video track is the title's
/// business), which is why they stay an `NginxName` (nginx_names.rs) until the title is loaded.
/// Media playlists and segments are numbered as nginx-vod-module numbers them, and under
/// the `hls` location names of several tracks are muxed fMP4 as nginx-vod serves it
/// (`index-v1-a1.m3u8`, `init-v1-a1.mp4`, `seg-1-v1-a1.m4s`: `outputs/nginx_vod/numbered.rs`);
/// a bare `index.m3u8` stays the multivariant playlist. What vodpack does not produce
/// answers with a clear error rather than something else: a muxed DASH segment is a 404
/// naming the single-track names, muxed names of an HLS-encrypted output too.
///
/// # Errors
/// [`RouteError::NotFound`] outside the locations or for a name nginx-vod does not have,
/// [`RouteError::BadPath`] for a malformed key, parameter or name.
pub fn parse_nginx_route(locations: &NginxVodLocations, path: &str) -> Result<Route, RouteError> {
    let (location, rest) = locations
        .prefixes()
        .find_map(|(name, prefix)| {
            let location = match name {
                "hls" => Location::Packager(NginxOutput::Hls),
                "hlsts" => Location::Packager(NginxOutput::HlsTs),
                "dash" => Location::Packager(NginxOutput::Dash),
                _ => Location::Thumb,
            };
            Some((location, path.strip_prefix(prefix)?))
        })
        .ok_or(RouteError::NotFound)?;
    let bad = |reason: String| RouteError::BadPath { reason };
    let (mut dir, name) = rest.rsplit_once('/').ok_or(RouteError::NotFound)?;
    let mut version = None;
    if let Some((before, folder)) = dir.rsplit_once('/') {
        if let Some(token) = parse_version_folder(folder) {
            version = Some(token.to_string());
            dir = before;
        }
    }
    // vodpack's own view folders (`clip/FROM-TO/`, `tracks/SPEC/`) at the end, where our
    // redirects put them (see `resolve`): they win over nginx-vod's parameters.
    let (dir, native_view) = split_native_view(dir);
    let base = format!("{}{dir}/", &path[..path.len() - rest.len()]);
    // Path parameters, anywhere in the file path, the first of each winning.
    let mut segments: Vec<&str> = Vec::new();
    let (mut clip_from, mut clip_to, mut tracks) = (None, None, None);
    let mut parts = dir.split('/');
    while let Some(segment) = parts.next() {
        let param = segment.to_ascii_lowercase();
        if matches!(param.as_str(), "shift" | "speed") {
            return Err(bad(format!(
                "the {segment} parameter is not supported (see docs/migrating-from-nginx-vod.md)"
            )));
        }
        if !matches!(param.as_str(), "clipfrom" | "clipto" | "tracks") {
            segments.push(segment);
            continue;
        }
        let value = parts
            .next()
            .ok_or_else(|| bad(format!("{segment} has no value")))?;
        let ms = || {
            value
                .parse::<u32>()
                .map(u64::from)
                .map_err(|_| bad(format!("{segment}/{value}: not a number of milliseconds")))
        };
        match param.as_str() {
            "clipfrom" if clip_from.is_none() => clip_from = Some(ms()?),
            "clipto" if clip_to.is_none() => clip_to = Some(ms()?),
            "tracks" if tracks.is_none() => tracks = Some(parse_track_param(value)?),
            _ => {}
        }
    }
    let key = percent_decode_str(&segments.join("/"))
        .decode_utf8()
        .map_err(|_| bad("key is not valid percent-encoded UTF-8".into()))?
        .into_owned();
    let key = ObjectKey::parse(&key)?;
    let lower = key.as_str().to_ascii_lowercase();
    if lower.ends_with(URLSET_SUFFIX) {
        urlset_document(&key).map_err(bad)?;
    } else if ![".mp4", ".m4v", ".m4a", ".mov"]
        .iter()
        .any(|e| lower.ends_with(e))
    {
        return Err(RouteError::NotFound);
    }
    let clip = match (clip_from, clip_to) {
        (None, None) => None,
        (from, to) => Some(Clip::new(from.unwrap_or(0), to).map_err(|e| bad(e.to_string()))?),
    };
    let view = View {
        clip: native_view.clip.or(clip),
        tracks: native_view.tracks.or(tracks),
        segment_ms: None,
    };
    // Thumbnails under every location (vodpack's own name is nginx-vod's); storyboards,
    // which the manifests refer to, under the packagers'. A `vod thumb` location has
    // nothing else.
    if let Some(name) = ThumbName::parse(name) {
        return Ok(Route::Thumbnail {
            key,
            version,
            view,
            name,
        });
    }
    let output = match location {
        Location::Packager(output) => output,
        Location::Thumb => return Err(RouteError::NotFound),
    };
    // The key the AES-128 playlists name (`numbered.rs`): the title's, whatever the view.
    if name == KEY_NAME && output != NginxOutput::Dash {
        return Ok(Route::Key { key });
    }
    if let Some(part) = StoryboardPart::parse(name) {
        return Ok(Route::Storyboard {
            key,
            version,
            view,
            part,
        });
    }
    // vodpack's own names: what its manifests refer to.
    if let Some(resource) = Resource::parse(name) {
        let resource = match (output, resource) {
            (NginxOutput::HlsTs, Resource::Multivariant) => Resource::MultivariantTs,
            (_, resource) => resource,
        };
        return Ok(Route::Vod {
            key,
            version,
            resource,
            view,
        });
    }
    let mut name = parse_name(output, name)?;
    name.base = base;
    Ok(Route::NginxVod { key, view, name })
}

/// What a location serves: a packager's output, or thumbnails (`vod thumb`).
#[derive(Debug, Clone, Copy)]
enum Location {
    Packager(NginxOutput),
    Thumb,
}

/// Split vodpack's view folders (`clip/FROM-TO/`, `tracks/SPEC/` in vodpack's grammar,
/// each at most once) off the end of `dir`. Unlike `/vod/` paths, what does not parse
/// stays in place, to be read as nginx-vod parameters (`tracks/v0/`, a second `tracks/`).
fn split_native_view(mut dir: &str) -> (&str, View) {
    let mut view = View::default();
    while let Some((rest, value)) = dir.rsplit_once('/') {
        let Some((before, name)) = rest.rsplit_once('/') else {
            break;
        };
        match name {
            "clip" if view.clip.is_none() => match Clip::parse(value) {
                Ok(clip) => view.clip = Some(clip),
                Err(_) => break,
            },
            "tracks" if view.tracks.is_none() => match TrackSelection::parse(value) {
                Ok(tracks) => view.tracks = Some(tracks),
                Err(_) => break,
            },
            _ => break,
        }
        dir = before;
    }
    (dir, view)
}

/// nginx-vod's `tracks` path parameter (`v1-a1`, `a2`, `v`, `v0-a0`): `v`/`a` tokens
/// only, as its `ngx_http_vod_parse_tracks_param`.
fn parse_track_param(value: &str) -> Result<TrackSelection, RouteError> {
    let mut selection = TrackSelection::default();
    let rest = parse_av_tokens(value, &mut |kind, n| {
        let kind = match kind {
            TrackKind::Video => PickKind::Video,
            TrackKind::Audio => PickKind::Audio,
        };
        selection.picks.push(TrackPick::Kind {
            kind,
            nth: (n > 0).then_some(n),
        });
    });
    if !rest.is_empty() || selection.picks.is_empty() {
        return Err(RouteError::BadPath {
            reason: format!("tracks/{value}: not a list of v/a tokens such as v1-a1"),
        });
    }
    Ok(selection)
}

#[cfg(test)]
mod tests {
    //! The nginx-vod URL grammar, parsed: routes, parameters, names and urlsets.

    use super::*;
    use crate::server::route::nginx_names::{
        urlset_document, NginxKind, NginxOutput, NginxStream, Picks, StreamPart,
    };

    fn locations() -> NginxVodLocations {
        "hls=/hls/,hlsts=/hlsts/,dash=/dash/".parse().unwrap()
    }

    fn route(path: &str) -> Result<Route, RouteError> {
        parse_nginx_route(&locations(), path)
    }

    #[test]
    fn manifests_and_our_own_names_are_native_routes() {
        let Ok(Route::Vod {
            key,
            resource,
            view,
            version,
        }) = route("/hls/dir/a.mp4/master.m3u8")
        else {
            panic!("master is a native route");
        };
        assert_eq!(
            (key.as_str(), resource, view, version),
            ("dir/a.mp4", Resource::Multivariant, View::default(), None)
        );
        let Ok(Route::Vod { resource, .. }) = route("/hlsts/a.mp4/master.m3u8") else {
            panic!("hlsts master");
        };
        assert_eq!(resource, Resource::MultivariantTs);
        let Ok(Route::Vod {
            resource, version, ..
        }) = route("/dash/a.mp4/v0123456789abcdef/seg-t1-3.m4s")
        else {
            panic!("our own names under a location");
        };
        assert_eq!(
            resource,
            Resource::Segment {
                track_id: 1,
                number: 3
            }
        );
        assert_eq!(version.as_deref(), Some("0123456789abcdef"));
    }

    #[test]
    fn path_parameters_become_a_view_wherever_they_are() {
        let Ok(Route::Vod { key, view, .. }) =
            route("/hls/clipTo/5000/dir/a.mp4/clipFrom/1000/tracks/v1-a2/master.m3u8")
        else {
            panic!("params");
        };
        assert_eq!(key.as_str(), "dir/a.mp4");
        assert_eq!(view.path(), "clip/1000-5000/tracks/v1-a2/");
        // The first of each wins, as in nginx-vod.
        let Ok(Route::Vod { view, .. }) = route("/hls/a.mp4/clipTo/5000/clipTo/9000/master.m3u8")
        else {
            panic!("repeated");
        };
        assert_eq!(view.clip, Some(Clip::new(0, Some(5000)).unwrap()));
        for path in [
            "/hls/a.mp4/clipFrom/5000/clipTo/1000/master.m3u8",
            "/hls/a.mp4/clipFrom/x/master.m3u8",
            "/hls/a.mp4/tracks/s1/clipFrom/0/master.m3u8",
            "/hls/a.mp4/clipTo/master.m3u8",
        ] {
            assert!(
                matches!(route(path), Err(RouteError::BadPath { .. })),
                "{path}: {:?}",
                route(path)
            );
        }
    }

    /// vodpack's own view folders, where its redirects put them, win over the parameters.
    #[test]
    fn our_view_folders_win_over_the_parameters() {
        let Ok(Route::NginxVod { view, name, .. }) =
            route("/hls/a.mp4/clipFrom/1000/tracks/v1/tracks/t1-t2/index.m3u8")
        else {
            panic!("view folders");
        };
        assert_eq!(view.path(), "clip/1000-/tracks/t1-t2/");
        assert_eq!(name.base, "/hls/a.mp4/clipFrom/1000/tracks/v1/");
    }

    #[test]
    fn nginx_names_keep_their_tracks_for_the_title() {
        let Ok(Route::NginxVod { name, .. }) = route("/hls/a.mp4/seg-3-v1-a1.m4s") else {
            panic!("segment");
        };
        assert_eq!(
            name.kind,
            NginxKind::Segment {
                number: 3,
                ts: false
            }
        );
        assert_eq!(
            (name.video, name.audio),
            (Some(Picks::Numbers(vec![1])), Some(Picks::Numbers(vec![1])))
        );
        let Ok(Route::NginxVod { name, .. }) = route("/dash/a.mp4/fragment-12-f2-v1-x3.m4s") else {
            panic!("fragment");
        };
        assert_eq!(
            (name.kind, name.files.as_slice()),
            (
                NginxKind::Segment {
                    number: 12,
                    ts: false
                },
                &[2][..]
            )
        );
        let Ok(Route::NginxVod { name, .. }) = route("/hls/a.mp4/index-v-a2-leng.m3u8") else {
            panic!("index");
        };
        assert_eq!(
            (name.video, name.audio, name.languages),
            (
                Some(Picks::All),
                Some(Picks::Numbers(vec![2])),
                vec!["eng".to_owned()]
            )
        );
        let Ok(Route::NginxVod { name, .. }) = route("/hlsts/a.mp4/seg-1-v1-a1.ts") else {
            panic!("ts");
        };
        assert_eq!(
            name.kind,
            NginxKind::Segment {
                number: 1,
                ts: true
            }
        );
        assert!(matches!(
            route("/hls/a.mp4/index.m3u8"),
            Ok(Route::NginxVod { .. })
        ));
        for path in [
            "/hls/a.mp4/seg-0-v1.m4s",
            "/hls/a.mp4/seg-v1.m4s",
            "/hls/a.mp4/index-q1.m3u8",
            "/hls/a.mp4/init-v1-lxx.mp4",
        ] {
            assert!(
                matches!(route(path), Err(RouteError::BadPath { .. })),
                "{path}: {:?}",
                route(path)
            );
        }
        for path in [
            "/hls/a.mp4/seg-1-v1.ts",
            "/dash/a.mp4/seg-1-v1.m4s",
            "/other/a.mp4/master.m3u8",
            "/hls/a.txt/master.m3u8",
        ] {
            assert_eq!(route(path), Err(RouteError::NotFound), "{path}");
        }
    }

    #[test]
    fn a_urlset_is_a_document_of_its_files() {
        let Ok(Route::Vod { key, .. }) =
            route("/hls/folder/,title_360p,title_720p,.mp4.urlset/master.m3u8")
        else {
            panic!("urlset");
        };
        let document = urlset_document(&key).unwrap();
        let files: Vec<&str> = document.video.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(files, ["folder/title_360p.mp4", "folder/title_720p.mp4"]);
        for path in [
            "/hls/folder/a.mp4.urlset/master.m3u8",
            "/hls/,a,.txt.urlset/master.m3u8",
            "/hls/x/,/a,.mp4.urlset/master.m3u8",
        ] {
            assert!(
                matches!(route(path), Err(RouteError::BadPath { .. })),
                "{path}: {:?}",
                route(path)
            );
        }
    }

    /// A muxed name's track tokens, written back canonically, parse to the same picks: the
    /// muxed playlist names its init and segments with them.
    #[test]
    fn track_tokens_round_trip_through_the_names() {
        for (path, tokens) in [
            ("/hls/a.mp4/index-v1-a1.m3u8", "v1-a1"),
            ("/hls/a.mp4/index-a2-v1.m3u8", "v1-a2"),
            ("/hls/a.mp4/seg-3-f2-v-a1-leng.m4s", "f2-v-a1-leng"),
            ("/hls/a.mp4/init-v0-a0.mp4", "v-a"),
            ("/hls/a.mp4/seg-1.m4s", ""),
        ] {
            let Ok(Route::NginxVod { name, .. }) = route(path) else {
                panic!("{path}");
            };
            assert_eq!(name.track_tokens(), tokens, "{path}");
            let muxed = NginxStream {
                output: NginxOutput::Hls,
                part: StreamPart::Init,
                track_ids: vec![1, 2],
                tokens: name.track_tokens(),
            };
            let Ok(Route::NginxVod { name: again, .. }) =
                route(&format!("/hls/a.mp4/{}", muxed.segment_name(7)))
            else {
                panic!("{tokens}: segment name");
            };
            assert_eq!(
                again.kind,
                NginxKind::Segment {
                    number: 7,
                    ts: false
                }
            );
            assert_eq!(
                (again.files, again.video, again.audio, again.languages),
                (name.files, name.video, name.audio, name.languages),
                "{tokens}"
            );
            assert!(matches!(
                route(&format!("/hls/a.mp4/{}", muxed.init_name())),
                Ok(Route::NginxVod { name, .. }) if name.kind == NginxKind::Init
            ));
        }
    }

    #[test]
    fn thumbnails_answer_under_every_location_and_storyboards_under_the_packagers() {
        let locations: NginxVodLocations = "hls=/hls/,dash=/dash/,thumb=/thumb/".parse().unwrap();
        let route = |path: &str| parse_nginx_route(&locations, path);
        let thumb = ThumbName::parse("thumb-1000-w150.jpg").unwrap();
        for path in [
            "/thumb/dir/a.mp4/thumb-1000-w150.jpg",
            "/hls/dir/a.mp4/thumb-1000-w150.jpg",
            "/dash/dir/a.mp4/thumb-1000-w150.jpg",
        ] {
            let Ok(Route::Thumbnail {
                key, name, view, ..
            }) = route(path)
            else {
                panic!("{path} is a thumbnail");
            };
            assert_eq!((key.as_str(), name), ("dir/a.mp4", thumb), "{path}");
            assert_eq!(view, View::default());
        }
        // nginx-vod's path parameters view the title the thumbnail is taken from.
        let Ok(Route::Thumbnail { view, .. }) = route("/thumb/a.mp4/clipFrom/2000/thumb-500.jpg")
        else {
            panic!("a clipped thumbnail");
        };
        assert_eq!(view.path(), "clip/2000-/");
        // The storyboard the manifests refer to, in their version folder.
        let Ok(Route::Storyboard { part, version, .. }) =
            route("/dash/a.mp4/v0123456789abcdef/storyboard-2.jpg")
        else {
            panic!("a storyboard sheet under the dash location");
        };
        assert_eq!(part, StoryboardPart::Sheet(2));
        assert_eq!(version.as_deref(), Some("0123456789abcdef"));
        // A `vod thumb` location serves thumbnails only.
        for path in [
            "/thumb/a.mp4/manifest.mpd",
            "/thumb/a.mp4/storyboard.vtt",
            "/thumb/a.mp4/seg-1-v1.m4s",
        ] {
            assert_eq!(route(path), Err(RouteError::NotFound), "{path}");
        }
    }

    /// Given the module's key name under a packager location, then it is the title's key
    /// route (with or without path parameters); under `dash` it is no name of the module's.
    #[test]
    fn the_module_s_key_name_is_the_title_s_key() {
        for path in [
            "/hlsts/dir/a.mp4/encryption.key",
            "/hls/dir/a.mp4/encryption.key",
            "/hlsts/dir/clipFrom/1000/a.mp4/encryption.key",
        ] {
            assert_eq!(
                route(path),
                Ok(Route::Key {
                    key: ObjectKey::parse("dir/a.mp4").unwrap()
                }),
                "{path}"
            );
        }
        assert!(route("/dash/dir/a.mp4/encryption.key").is_err());
    }

    /// Given a route under a location, when it is cut to the location's duration, then every
    /// title-loading route carries it in its view, and its URL folders do not.
    #[test]
    fn a_location_s_routes_are_cut_to_its_duration() {
        for path in [
            "/hls/a.mp4/master.m3u8",
            "/hls/a.mp4/index-v1.m3u8",
            "/dash/a.mp4/clipTo/5000/manifest.mpd",
            "/hls/a.mp4/thumb-1000.jpg",
        ] {
            let cut = route(path).unwrap().cut_to(Some(10_000));
            let view = match &cut {
                Route::Vod { view, .. }
                | Route::NginxVod { view, .. }
                | Route::Thumbnail { view, .. }
                | Route::Storyboard { view, .. } => view,
                other => panic!("{path}: {other:?}"),
            };
            assert_eq!(view.segment_ms, Some(10_000), "{path}");
            assert!(!view.path().contains("10000"), "{path}");
        }
    }
}
