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
