//! Title documents over HTTP, as small stories against the real server: the
//! ladder fixture's entry points, names and version, and the answer to each kind of bad
//! document. What players decode from the ladder is checked in `conformance.rs`.

mod common;
#[path = "common/s3.rs"]
mod s3;

use std::path::Path;
use std::sync::Arc;

use common::{get, start_server_with, version_folder_in};
use vodpack::config::Settings;
use vodpack::media::MediaLimits;
use vodpack::source::ObjectStoreOptions;

const LADDER: &str = "ladder/ladder.json";

/// Settings of these tests: 1 s segments (so the 4 s ladder has four), identities checked
/// on every request (so a replaced file shows at once), small document limits.
fn settings() -> Settings {
    Settings {
        segment_duration_ms: 1000,
        limits: MediaLimits {
            max_title_document_bytes: 1024,
            max_title_renditions: 6,
            max_text_read_bytes: 4096,
            ..MediaLimits::default()
        },
        object_store: ObjectStoreOptions {
            identity_ttl_ms: 0,
            ..ObjectStoreOptions::default()
        },
        ..Settings::default()
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write document");
}

/// Given the ladder fixture's document, then its multivariant playlist offers each rung
/// once, lowest bandwidth first, named by file, with both audio languages; every playlist,
/// init segment and segment it leads to is served; and the MPD holds the ladder in one
/// video AdaptationSet and one audio AdaptationSet per language.
#[tokio::test]
async fn a_title_document_serves_its_ladder_over_hls_and_dash() {
    let server = start_server_with(&common::fixtures(), settings()).await;
    let master = get(server.addr, &format!("/vod/{LADDER}/master.m3u8")).await;
    assert_eq!(master.status, 200, "{}", master.text());
    let master = master.text();
    let folder = version_folder_in(&master);
    let bandwidths: Vec<u64> = (master.lines())
        .filter_map(|l| l.strip_prefix("#EXT-X-STREAM-INF:BANDWIDTH="))
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(bandwidths.len(), 3, "{master}");
    assert!(bandwidths.windows(2).all(|w| w[0] <= w[1]), "{master}");
    for rung in ["index-f1-t1.m3u8", "index-f2-t1.m3u8", "index-f3-t1.m3u8"] {
        assert!(
            master.contains(&format!("{folder}{rung}")),
            "{rung}: {master}"
        );
    }
    assert!(master.contains("RESOLUTION=640x360"), "{master}");
    assert!(
        master.contains(r#"NAME="Français",LANGUAGE="fr",DEFAULT=NO"#),
        "{master}"
    );
    assert!(master.contains(r#"LANGUAGE="eng",DEFAULT=YES"#), "{master}");
    // The 270p file's own audio is not offered.
    assert!(!master.contains("index-f3-t2"), "{master}");
    for playlist in ["index-f2-t1.m3u8", "index-f4-t1.m3u8"] {
        let media = get(server.addr, &format!("/vod/{LADDER}/{folder}{playlist}")).await;
        assert_eq!(media.status, 200, "{playlist}");
        let media = media.text();
        let segments: Vec<&str> = media.lines().filter(|l| l.ends_with(".m4s")).collect();
        assert_eq!(segments.len(), 4, "{media}");
        for name in segments.iter().take(1).chain(segments.last()) {
            let reply = get(server.addr, &format!("/vod/{LADDER}/{folder}{name}")).await;
            assert_eq!(reply.status, 200, "{name}: {}", reply.text());
            assert!(reply.body.len() > 100, "{name}");
        }
    }
    let init = get(
        server.addr,
        &format!("/vod/{LADDER}/{folder}init-f2-t1.mp4"),
    )
    .await;
    assert_eq!(init.status, 200);
    assert_eq!(init.header("content-type"), Some("video/mp4"));

    let mpd = get(server.addr, &format!("/vod/{LADDER}/manifest.mpd")).await;
    assert_eq!(mpd.status, 200);
    let mpd = mpd.text();
    // One video set with the whole ladder, and its trick-play set (a Representation of
    // key frames per rung).
    assert_eq!(mpd.matches("contentType=\"video\"").count(), 2, "{mpd}");
    assert_eq!(
        mpd.matches("guidelines/trickmode\" value=\"0\"").count(),
        1,
        "{mpd}"
    );
    assert_eq!(mpd.matches("<Representation id=\"f").count(), 7, "{mpd}");
    assert_eq!(
        mpd.matches("<Representation id=\"ifr-f").count(),
        3,
        "{mpd}"
    );
    assert!(
        mpd.contains(r#"<Representation id="f6-t0" codecs="wvtt""#),
        "{mpd}"
    );
    assert!(
        master.contains(r#"NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,FORCED=NO"#),
        "{master}"
    );
    assert!(mpd.contains(r#"contentType="audio" mimeType="audio/mp4" lang="eng""#));
    assert!(mpd.contains(r#"contentType="audio" mimeType="audio/mp4" lang="fr""#));
    server.shutdown().await;
}

/// Given a document and then a replaced audio file, then the version token changes and a
/// playlist of the old version is gone (404), never mixed with the new file.
#[tokio::test]
async fn replacing_any_named_file_gives_a_new_version() {
    let dir = common::ladder_copy("replace");
    let server = start_server_with(dir.path(), settings()).await;
    let first = get(server.addr, "/vod/ladder.json/master.m3u8")
        .await
        .text();
    let old = version_folder_in(&first);
    std::fs::copy(
        common::fixtures().join("aac-3s-audio-only.m4a"),
        dir.path().join("ladder-fr.m4a"),
    )
    .expect("replace audio");
    let second = get(server.addr, "/vod/ladder.json/master.m3u8").await;
    assert_eq!(second.status, 200, "{}", second.text());
    let new = version_folder_in(&second.text());
    assert_ne!(old, new);
    let stale = get(
        server.addr,
        &format!("/vod/ladder.json/{old}index-f1-t1.m3u8"),
    )
    .await;
    assert_eq!(stale.status, 404);
    server.shutdown().await;
}

/// Given two documents naming the same four files, asked for at once, then each file is
/// loaded once (the per-file cache is shared and single-flight).
#[tokio::test]
async fn files_shared_by_documents_are_loaded_once() {
    let dir = common::ladder_copy("shared");
    let doc = std::fs::read_to_string(dir.path().join("ladder.json")).unwrap();
    write(dir.path(), "again.json", &doc);
    let server = start_server_with(dir.path(), settings()).await;
    let (a, b) = tokio::join!(
        get(server.addr, "/vod/ladder.json/manifest.mpd"),
        get(server.addr, "/vod/again.json/manifest.mpd"),
    );
    assert_eq!((a.status, b.status), (200, 200));
    assert_eq!(server.app.metrics.cache_misses.get(), 4);
    server.shutdown().await;
}

/// Given each kind of bad document, then the entry point answers with a 4xx and a
/// one-line reason naming what is wrong (and, for an entry, which one).
#[tokio::test]
async fn bad_documents_are_refused_naming_the_entry() {
    let dir = common::ladder_copy("bad");
    let d = dir.path();
    let mid_gop = "h264-aac-edit-mid-gop.mp4";
    std::fs::copy(common::fixtures().join(mid_gop), d.join(mid_gop)).unwrap();
    write(d, "broken.mp4", "this is not an mp4 file at all");
    write(d, "big.vtt", &"x".repeat(5000));
    let cases: &[(&str, &str, u16, &str)] = &[
        (
            "malformed.json",
            "{\"video\": [",
            422,
            "title document is not valid: ",
        ),
        (
            "unknown.json",
            r#"{"video": [{"file": "ladder-180p.mp4"}], "chapters": []}"#,
            422,
            "title document is not valid: unknown field `chapters`",
        ),
        (
            "novideo.json",
            r#"{"video": []}"#,
            422,
            "title document has no video rendition",
        ),
        (
            "missing.json",
            r#"{"video": [{"file": "ladder-180p.mp4"}, {"file": "nope.mp4"}]}"#,
            422,
            "video[1]: nope.mp4: no such file",
        ),
        (
            "broken.json",
            r#"{"video": [{"file": "ladder-180p.mp4"}, {"file": "broken.mp4"}]}"#,
            422,
            "video[1]: broken.mp4: ",
        ),
        (
            "escape.json",
            r#"{"video": [{"file": "../../etc/passwd.mp4"}]}"#,
            422,
            "video[0]: file \"../../etc/passwd.mp4\" leaves the root",
        ),
        (
            "many.json",
            r#"{"video": [{"file": "ladder-180p.mp4"}, {"file": "ladder-180p.mp4"},
                {"file": "ladder-180p.mp4"}, {"file": "ladder-180p.mp4"},
                {"file": "ladder-180p.mp4"}, {"file": "ladder-180p.mp4"},
                {"file": "ladder-180p.mp4"}]}"#,
            422,
            "title document names 7 renditions, over the limit of 6",
        ),
        (
            // Its presentation starts 16 frames into a GOP: no key frame at the start.
            "midgop.json",
            r#"{"video": [{"file": "ladder-180p.mp4"}, {"file": "h264-aac-edit-mid-gop.mp4"}]}"#,
            422,
            "video[1] (h264-aac-edit-mid-gop.mp4): no key frame at 0 ms, where the first video \
             rendition is cut",
        ),
        (
            "notaudio.json",
            r#"{"video": [{"file": "ladder-180p.mp4"}], "audio": [{"file": "ladder-360p.mp4"}]}"#,
            422,
            "audio[0] (ladder-360p.mp4): the file has no audio track",
        ),
        (
            "subtitles.json",
            r#"{"video": [{"file": "ladder-180p.mp4"}],
                "subtitles": [{"file": "en.vtt", "language": "en"}]}"#,
            422,
            "subtitles[0]: en.vtt: no such file",
        ),
        (
            "bigvtt.json",
            r#"{"video": [{"file": "ladder-180p.mp4"}], "subtitles": [{"file": "big.vtt"}]}"#,
            422,
            "subtitles[0]: big.vtt is 5000 bytes, over the subtitle limit of 4096",
        ),
    ];
    let big = format!(
        r#"{{"video": [{{"file": "ladder-180p.mp4"}}], "padding": "{}"}}"#,
        "x".repeat(2000)
    );
    write(d, "big.json", &big);
    for (name, text, _, _) in cases {
        write(d, name, text);
    }
    let server = start_server_with(d, settings()).await;
    let big_case = (
        "big.json",
        "",
        422,
        "title document is 2055 bytes, over the limit of 1024",
    );
    for (name, _, status, reason) in cases.iter().chain([&big_case]) {
        for entry in ["master.m3u8", "manifest.mpd"] {
            let reply = get(server.addr, &format!("/vod/{name}/{entry}")).await;
            let body = reply.text();
            assert_eq!(reply.status, *status, "{name} {entry}: {body}");
            assert!(body.starts_with(reason), "{name}: {body}");
            assert_eq!(body.trim_end().lines().count(), 1, "{name}: {body}");
        }
    }
    // A document that does not exist is not found, like any key.
    assert_eq!(
        get(server.addr, "/vod/none.json/master.m3u8").await.status,
        404
    );
    server.shutdown().await;
}

/// Given a sidecar that is not WebVTT, then the title is served and its subtitle
/// resources answer 422 with the reason, while the video plays on.
#[tokio::test]
async fn a_broken_sidecar_is_refused_on_its_own_resources() {
    let dir = common::ladder_copy("broken-sidecar");
    write(dir.path(), "ladder-en.vtt", "this is not WebVTT");
    let server = start_server_with(dir.path(), settings()).await;
    let master = get(server.addr, "/vod/ladder.json/master.m3u8").await;
    assert_eq!(master.status, 200, "{}", master.text());
    let folder = version_folder_in(&master.text());
    for name in ["sub-f5-t0-1.vtt", "sub-f5-t0.vtt"] {
        let reply = get(server.addr, &format!("/vod/ladder.json/{folder}{name}")).await;
        assert_eq!(reply.status, 422, "{name}");
        assert_eq!(
            reply.text(),
            "ladder-en.vtt: WebVTT file does not start with WEBVTT\n"
        );
    }
    let srt = get(
        server.addr,
        &format!("/vod/ladder.json/{folder}sub-f6-t0.vtt"),
    )
    .await;
    assert_eq!(srt.status, 200);
    assert!(
        srt.text().contains("<b>Hallo</b>, Leiter!"),
        "{}",
        srt.text()
    );
    let video = get(
        server.addr,
        &format!("/vod/ladder.json/{folder}seg-f1-t1-1.m4s"),
    )
    .await;
    assert_eq!(video.status, 200);
    server.shutdown().await;
}

/// Given the ladder title in a bucket (the in-process S3 server), when its multivariant
/// playlist is first asked for, then the document takes one GET and each of its four
/// media files at most two, as a single file does (sidecars are read only when a subtitle
/// is asked for), and at most one HEAD per object; a second request reads nothing.
#[tokio::test]
async fn a_ladder_in_a_bucket_loads_each_object_with_a_single_files_gets() {
    let dir = common::ladder_copy("s3");
    std::fs::create_dir_all(dir.path().join("media/t")).unwrap();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let to = dir.path().join("media/t").join(path.file_name().unwrap());
            std::fs::rename(&path, to).unwrap();
        }
    }
    let s3 = s3::S3Server::start(dir.path()).await;
    let options = ObjectStoreOptions {
        identity_ttl_ms: 60_000,
        ..ObjectStoreOptions::default()
    };
    let source = Arc::new(s3.source("media", options));
    let vod = s3::VodServer::start(source, settings()).await;
    let before = s3.tally();
    let started = std::time::Instant::now();
    let reply = get(vod.addr, "/vod/t/ladder.json/master.m3u8").await;
    let cold = started.elapsed();
    assert_eq!(reply.status, 200, "{}", reply.text());
    let spent = s3.tally() - before;
    eprintln!(
        "ladder title cold load from S3: {} GET, {} HEAD, {} bytes, {cold:?}",
        spent.gets, spent.heads, spent.get_bytes
    );
    assert!(spent.gets <= 1 + 4 * 2, "{} GETs", spent.gets);
    assert!(spent.heads <= 7, "{} HEADs for 7 objects", spent.heads);
    let before = s3.tally();
    let again = get(vod.addr, "/vod/t/ladder.json/manifest.mpd").await;
    assert_eq!(again.status, 200);
    assert_eq!((s3.tally() - before).gets, 0);
    vod.shutdown().await;
}

/// Given sequences that cannot be played: a part whose ladder has another
/// shape, a part whose title is itself a sequence (title -> title -> title), and a part
/// naming a title that does not exist, then each answers 4xx with a one-line reason
/// naming the part, and the server stays healthy: a good sequence beside them plays.
#[tokio::test]
async fn bad_sequences_are_refused_naming_the_part() {
    let dir = common::ladder_copy("bad-sequences");
    write(
        dir.path(),
        "good.json",
        r#"{"parts": [{"file": "ladder-180p.mp4"}, {"title": "ladder.json"}]}"#,
    );
    write(
        dir.path(),
        "shape.json",
        r#"{"parts": [{"title": "ladder.json"},
                      {"video": [{"file": "ladder-180p.mp4"}, {"file": "ladder-270p.mp4"}]}]}"#,
    );
    write(
        dir.path(),
        "middle.json",
        r#"{"parts": [{"title": "ladder.json"}]}"#,
    );
    write(
        dir.path(),
        "nested.json",
        r#"{"parts": [{"title": "middle.json"}]}"#,
    );
    write(
        dir.path(),
        "languages.json",
        r#"{"parts": [{"title": "ladder.json"},
                      {"video": [{"file": "ladder-180p.mp4"}],
                       "audio": [{"file": "ladder-fr.m4a", "language": "de"}]}]}"#,
    );
    write(
        dir.path(),
        "missing.json",
        r#"{"parts": [{"title": "nope.json"}]}"#,
    );
    let server = start_server_with(dir.path(), settings()).await;
    for (key, status, reason) in [
        (
            "shape.json",
            422,
            "parts[1]: video: 2 rungs, where parts[0] (ladder.json) has 3 rungs",
        ),
        (
            "nested.json",
            422,
            "parts[0]: middle.json has parts of its own; a part's title cannot be a sequence (one level only)",
        ),
        (
            "languages.json",
            422,
            "parts[1]: audio fr: no such audio, where parts[0] (ladder.json) has one",
        ),
        ("missing.json", 422, "parts[0]: nope.json: no such file"),
    ] {
        for name in ["master.m3u8", "manifest.mpd"] {
            let reply = get(server.addr, &format!("/vod/{key}/{name}")).await;
            assert_eq!(reply.status, status, "{key}: {}", reply.text());
            assert_eq!(reply.text().trim(), reason, "{key}");
            assert!(!reply.text().trim().contains('\n'), "one line");
        }
    }
    assert_eq!(get(server.addr, "/healthz").await.status, 200);
    let good = get(server.addr, "/vod/good.json/master.m3u8").await;
    assert_eq!(good.status, 200, "{}", good.text());
    let folder = version_folder_in(&good.text());
    // The one-rung part plays in every rung; a clip or track selection in the URL and
    // the outputs sequences do not have are refused.
    let playlist = get(
        server.addr,
        &format!("/vod/good.json/{folder}index-f2-t1.m3u8"),
    )
    .await;
    assert_eq!(playlist.status, 200, "{}", playlist.text());
    assert!(playlist.text().contains("init-p1-f2-t1.mp4"));
    let clip = get(server.addr, "/vod/good.json/clip/0-1000/master.m3u8").await;
    assert_eq!(clip.status, 400, "{}", clip.text());
    for name in ["master-ts.m3u8", &format!("{folder}iframes-f1-t1.m3u8")] {
        let reply = get(server.addr, &format!("/vod/good.json/{name}")).await;
        assert_eq!(reply.status, 404, "{name}: {}", reply.text());
        assert!(reply.text().contains("not offered for sequences"), "{name}");
    }
    server.shutdown().await;
}
