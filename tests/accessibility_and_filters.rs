//! Accessibility and manifest filters over HTTP: a title document's accessibility (audio roles, SDH
//! subtitles, declared closed captions) in HLS and DASH, `CLOSED-CAPTIONS=NONE` where none
//! are declared, and manifest filters (`?max_height=` ...) on entry manifests of plain
//! files and of the ladder title: exactly the matching renditions, every segment URL one
//! of the unfiltered manifest's, and bad values or documents answered in one line.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use common::{get, linked, start_server_with, version_folder_in, TempDir, TestServer};
use vodpack::config::Settings;
use vodpack::crypto::settings::SignedUrls;
use vodpack::crypto::{Secret, TokenSigner};

const URL_SECRET: &str = "filters test url secret 0123456";

fn settings() -> Settings {
    common::segments_of(1000)
}

/// The ladder fixture's files, plus `ladder-ad.m4a` (a copy of the French audio, standing
/// for an audio description track) and the documents `a11y.json` and `bad-role.json`.
fn accessible_ladder() -> TempDir {
    let dir = common::ladder_copy("a11y-ladder");
    let from = common::fixtures().join("ladder");
    std::fs::copy(from.join("ladder-fr.m4a"), dir.path().join("ladder-ad.m4a")).unwrap();
    write(
        dir.path(),
        "a11y.json",
        r#"{
  "video": [{"file": "ladder-180p.mp4"}, {"file": "ladder-360p.mp4"}, {"file": "ladder-270p.mp4"}],
  "audio": [{"file": "ladder-fr.m4a", "language": "fr", "name": "Français", "roles": ["dub"]},
            {"file": "ladder-ad.m4a", "language": "en", "name": "English (described)", "roles": ["description"]}],
  "subtitles": [{"file": "ladder-en.vtt", "language": "en", "name": "English SDH", "sdh": true},
                {"file": "ladder-de.srt", "language": "de", "name": "Deutsch"}],
  "closed_captions": [{"channel": "CC1", "language": "en", "name": "English"},
                      {"channel": "SERVICE2", "language": "es", "name": "Español"}]
}"#,
    );
    write(
        dir.path(),
        "bad-role.json",
        r#"{"video": [{"file": "ladder-180p.mp4"}],
            "audio": [{"file": "ladder-fr.m4a", "roles": ["narration"]}]}"#,
    );
    write(
        dir.path(),
        "bad-caption.json",
        r#"{"video": [{"file": "ladder-180p.mp4"}], "closed_captions": [{"channel": "CC9"}]}"#,
    );
    dir
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write document");
}

fn lines_starting<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// Given a document with a dubbed and a described audio, SDH subtitles and two declared
/// caption channels, then HLS (CMAF and MPEG-TS) and DASH carry exactly the attributes
/// and elements that say so.
#[tokio::test]
async fn accessibility_is_signalled_in_hls_and_dash() {
    let dir = accessible_ladder();
    let server = start_server_with(dir.path(), settings()).await;
    let master = get(server.addr, "/vod/a11y.json/master.m3u8").await;
    assert_eq!(master.status, 200, "{}", master.text());
    let master = master.text();
    let v = version_folder_in(&master);
    let expected = [
        r#"#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,INSTREAM-ID="CC1""#.to_owned(),
        r#"#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="Español",LANGUAGE="es",DEFAULT=NO,AUTOSELECT=YES,INSTREAM-ID="SERVICE2""#.to_owned(),
        format!(r#"#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="English (described)",LANGUAGE="en",DEFAULT=NO,AUTOSELECT=YES,CHARACTERISTICS="public.accessibility.describes-video",CHANNELS="2",URI="{v}index-f5-t1.m3u8""#),
        format!(r#"#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English SDH",LANGUAGE="en",DEFAULT=NO,AUTOSELECT=YES,FORCED=NO,CHARACTERISTICS="public.accessibility.transcribes-spoken-dialog,public.accessibility.describes-music-and-sound",URI="{v}index-f6-t0.m3u8""#),
        format!(r#"#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="Deutsch",LANGUAGE="de",DEFAULT=NO,AUTOSELECT=YES,FORCED=NO,URI="{v}index-f7-t0.m3u8""#),
    ];
    for line in &expected {
        assert!(master.lines().any(|l| l == line), "{line}\n{master}");
    }
    // Dub and main have no Apple characteristic.
    let french = lines_starting(&master, "#EXT-X-MEDIA:TYPE=AUDIO")
        .into_iter()
        .find(|l| l.contains("Français"))
        .unwrap();
    assert!(!french.contains("CHARACTERISTICS"), "{french}");
    let variants = lines_starting(&master, "#EXT-X-STREAM-INF:");
    assert_eq!(variants.len(), 3, "{master}");
    for variant in variants {
        assert!(variant.ends_with(r#",CLOSED-CAPTIONS="cc""#), "{variant}");
    }
    for iframe in lines_starting(&master, "#EXT-X-I-FRAME-STREAM-INF:") {
        assert!(!iframe.contains("CLOSED-CAPTIONS"), "{iframe}");
    }
    let ts = get(server.addr, "/vod/a11y.json/master-ts.m3u8")
        .await
        .text();
    assert!(ts.lines().any(|l| l == expected[0]), "{ts}");
    for variant in lines_starting(&ts, "#EXT-X-STREAM-INF:") {
        assert!(variant.contains(r#"CLOSED-CAPTIONS="cc""#), "{variant}");
    }

    let mpd = get(server.addr, "/vod/a11y.json/manifest.mpd").await;
    assert_eq!(mpd.status, 200);
    let mpd = mpd.text();
    let video_set = set_of(&mpd, "contentType=\"video\"");
    assert!(
        video_set.contains(
            "\n      <Accessibility schemeIdUri=\"urn:scte:dash:cc:cea-608:2015\" value=\"CC1=eng\"/>\n      <Accessibility schemeIdUri=\"urn:scte:dash:cc:cea-708:2015\" value=\"2=lang:spa\"/>\n"
        ),
        "{video_set}"
    );
    let described = set_of(&mpd, "lang=\"en\"");
    assert!(
        described.contains(
            "\n      <Accessibility schemeIdUri=\"urn:tva:metadata:cs:AudioPurposeCS:2007\" value=\"1\"/>\n      <Role schemeIdUri=\"urn:mpeg:dash:role:2011\" value=\"description\"/>\n"
        ),
        "{described}"
    );
    assert!(described.contains("id=\"f5-t1\""), "{described}");
    let dubbed = set_of(&mpd, "lang=\"fr\"");
    assert!(
        dubbed.contains("<Role schemeIdUri=\"urn:mpeg:dash:role:2011\" value=\"dub\"/>"),
        "{dubbed}"
    );
    assert!(!dubbed.contains("Accessibility"), "{dubbed}");
    // The main audio (the first video file's, English too) is a set of its own.
    let main = set_of(&mpd, "lang=\"eng\"");
    assert!(
        main.contains("value=\"main\"") && !main.contains("f5-t1"),
        "{main}"
    );
    let sdh = set_of(&mpd, "mimeType=\"application/mp4\" lang=\"en\"");
    assert!(sdh.contains("value=\"caption\""), "{sdh}");
    let de = set_of(&mpd, "mimeType=\"application/mp4\" lang=\"de\"");
    assert!(de.contains("value=\"subtitle\""), "{de}");
}

/// Given the same document, then the preview page's tables show the caption group of
/// each variant and, per rendition, its caption channel, audio description and SDH.
#[tokio::test]
async fn the_preview_page_shows_accessibility() {
    let dir = accessible_ladder();
    let server = start_server_with(dir.path(), settings()).await;
    let page = get(server.addr, "/?key=a11y.json").await;
    assert_eq!(page.status, 200);
    let html = page.text();
    assert!(html.contains("<th>captions</th>"), "{html}");
    assert_eq!(
        html.matches("<td>subs</td><td>cc</td></tr>").count(),
        3,
        "{html}"
    );
    for row in [
        "<td>CLOSED-CAPTIONS</td><td>cc</td><td>en</td><td>English</td><td>yes</td><td>CC1</td></tr>",
        "<td>CLOSED-CAPTIONS</td><td>cc</td><td>es</td><td>Español</td><td></td><td>SERVICE2</td></tr>",
        "<td>English (described)</td><td></td><td>audio description</td></tr>",
        "<td>English SDH</td><td></td><td>SDH</td></tr>",
        "<td>Deutsch</td><td></td><td></td></tr>",
    ] {
        assert!(html.contains(row), "{row}\n{html}");
    }
}

/// The AdaptationSet (start tag to end tag) whose start tag holds `marker`.
fn set_of<'a>(mpd: &'a str, marker: &str) -> &'a str {
    let at = mpd
        .split("<AdaptationSet")
        .skip(1)
        .find(|s| s[..s.find('>').unwrap()].contains(marker))
        .unwrap_or_else(|| panic!("no set with {marker}: {mpd}"));
    &at[..at.find("</AdaptationSet>").unwrap()]
}

/// Given files and documents that declare no captions, then every video variant says
/// `CLOSED-CAPTIONS=NONE` (so iOS shows no CC button), and the MPD has no caption
/// descriptor.
#[tokio::test]
async fn without_declared_captions_every_variant_says_none() {
    let server = start_server_with(&common::fixtures(), settings()).await;
    for path in [
        "/vod/h264-aac-3s.mp4/master.m3u8",
        "/vod/h264-aac-2lang-3s.mp4/master-ts.m3u8",
        "/vod/ladder/ladder.json/master.m3u8",
    ] {
        let master = get(server.addr, path).await.text();
        let variants = lines_starting(&master, "#EXT-X-STREAM-INF:");
        assert!(!variants.is_empty(), "{path}: {master}");
        for variant in variants {
            assert!(
                variant.contains("CLOSED-CAPTIONS=NONE"),
                "{path}: {variant}"
            );
        }
        assert!(!master.contains("TYPE=CLOSED-CAPTIONS"), "{path}");
    }
    // An audio-only title has no video variant to say it on.
    let audio = get(server.addr, "/vod/aac-3s-audio-only.m4a/master.m3u8").await;
    assert!(
        !audio.text().contains("CLOSED-CAPTIONS"),
        "{}",
        audio.text()
    );
    let mpd = get(server.addr, "/vod/h264-aac-3s.mp4/manifest.mpd")
        .await
        .text();
    assert!(!mpd.contains("urn:scte:dash:cc"), "{mpd}");
}

/// Given documents with an unknown audio role or caption channel, then each is a 422
/// naming the entry in one line, and the server still serves everything else.
#[tokio::test]
async fn bad_accessibility_is_refused_in_one_line() {
    let dir = accessible_ladder();
    let server = start_server_with(dir.path(), settings()).await;
    for (key, reason) in [
        (
            "bad-role.json",
            "audio[0]: unknown role \"narration\" (known: main, description, commentary, dub)",
        ),
        (
            "bad-caption.json",
            "closed_captions[0]: channel \"CC9\" is not CC1 to CC4 or SERVICE1 to SERVICE63",
        ),
    ] {
        for name in ["master.m3u8", "manifest.mpd"] {
            let reply = get(server.addr, &format!("/vod/{key}/{name}")).await;
            assert_eq!(reply.status, 422, "{key}: {}", reply.text());
            assert_eq!(reply.text().trim_end(), reason);
        }
    }
    assert_eq!(get(server.addr, "/healthz").await.status, 200);
    let good = get(server.addr, "/vod/a11y.json/master.m3u8").await;
    assert_eq!(good.status, 200);
}

/// Every media URL a manifest leads to: for HLS, the URIs of the multivariant playlist
/// and of each media and I-frame playlist it names; for DASH, each Representation
/// (its id, template and timeline, from which every segment URL follows) and BaseURL.
async fn media_urls(server: &TestServer, path: &str) -> BTreeSet<String> {
    let reply = get(server.addr, path).await;
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    let text = reply.text();
    let path = path.split('?').next().unwrap();
    if path.ends_with(".mpd") {
        let reps = text.split("<Representation").skip(1);
        return reps
            .map(|r| r[..r.find("</Representation>").unwrap()].to_owned())
            .collect();
    }
    let mut urls = BTreeSet::new();
    for url in linked(path, &text) {
        let url = url.split('?').next().unwrap().to_owned();
        if url.ends_with(".m3u8") {
            let playlist = get(server.addr, &url).await;
            assert_eq!(playlist.status, 200, "{url}");
            urls.extend(linked(&url, &playlist.text()));
        }
        urls.insert(url);
    }
    urls
}

/// Representation ids of an MPD (`f1-t1`, `ifr-f1-t1`, ...) and variant/rendition URIs
/// of a multivariant playlist, without the version folder.
fn offered(text: &str) -> BTreeSet<String> {
    if text.contains("<MPD") {
        let reps = text.split("<Representation id=\"").skip(1);
        return reps.map(|r| r[..r.find('"').unwrap()].to_owned()).collect();
    }
    let names = linked("/", text).into_iter();
    names
        .map(|n| n.rsplit('/').next().unwrap().to_owned())
        .collect()
}

/// Assert the filtered manifest at `path?query` offers exactly `expected` (names as
/// [`offered`] gives them), and leads only to media URLs the unfiltered one leads to.
async fn check_filter(server: &TestServer, path: &str, query: &str, expected: &[&str]) {
    let filtered_path = format!("{path}?{query}");
    let reply = get(server.addr, &filtered_path).await;
    assert_eq!(reply.status, 200, "{filtered_path}: {}", reply.text());
    let got = offered(&reply.text());
    let want: BTreeSet<String> = expected.iter().map(|s| s.to_string()).collect();
    assert_eq!(got, want, "{filtered_path}:\n{}", reply.text());
    let all = media_urls(server, path).await;
    for url in media_urls(server, &filtered_path).await {
        assert!(
            all.contains(&url),
            "{filtered_path}: {url} is not unfiltered"
        );
    }
}

/// Given a plain file, then each filter keeps exactly the matching renditions, in HLS and
/// DASH, and the filtered manifests lead to the unfiltered media URLs.
#[tokio::test]
async fn filters_on_plain_files_keep_exactly_what_matches() {
    let server = start_server_with(&common::fixtures(), settings()).await;
    let two = "/vod/h264-aac-2lang-3s.mp4";
    let all = offered(&get(server.addr, &format!("{two}/master.m3u8")).await.text());
    assert_eq!(
        all,
        [
            "iframes-t1.m3u8",
            "index-t1.m3u8",
            "index-t2.m3u8",
            "index-t3.m3u8"
        ]
        .map(String::from)
        .into(),
    );
    let hls = |ids: &[&'static str]| ids.to_vec();
    check_filter(
        &server,
        &format!("{two}/master.m3u8"),
        "audio_languages=fr",
        &hls(&["index-t1.m3u8", "iframes-t1.m3u8", "index-t3.m3u8"]),
    )
    .await;
    check_filter(
        &server,
        &format!("{two}/manifest.mpd"),
        "audio_languages=fra",
        &["t1", "ifr-t1", "t3"],
    )
    .await;
    check_filter(
        &server,
        &format!("{two}/master.m3u8"),
        "audio_languages=en,fr&max_height=1080",
        &hls(&[
            "index-t1.m3u8",
            "iframes-t1.m3u8",
            "index-t2.m3u8",
            "index-t3.m3u8",
        ]),
    )
    .await;
    check_filter(
        &server,
        &format!("{two}/master.m3u8"),
        "video_codecs=avc1",
        &hls(&[
            "index-t1.m3u8",
            "iframes-t1.m3u8",
            "index-t2.m3u8",
            "index-t3.m3u8",
        ]),
    )
    .await;
    let text = "/vod/h264-aac-movtext-3s.mp4";
    check_filter(
        &server,
        &format!("{text}/master.m3u8"),
        "subtitle_languages=ja",
        &["index-t1.m3u8", "iframes-t1.m3u8", "index-t2.m3u8"],
    )
    .await;
    check_filter(
        &server,
        &format!("{text}/manifest.mpd"),
        "subtitle_languages=ja",
        &["t1", "ifr-t1", "t2"],
    )
    .await;
    for (query, status) in [
        ("max_height=100", 422),
        ("video_codecs=hvc1", 422),
        ("max_bandwidth=1000", 422),
        ("audio_languages=ja", 422),
    ] {
        for name in ["master.m3u8", "master-ts.m3u8", "manifest.mpd"] {
            let reply = get(server.addr, &format!("{two}/{name}?{query}")).await;
            assert_eq!(reply.status, status, "{name}?{query}: {}", reply.text());
            assert!(
                reply.text().starts_with("the filter leaves no "),
                "{}",
                reply.text()
            );
        }
    }
}

/// Given the ladder title, then each filter keeps exactly the matching rungs, languages
/// and subtitles in HLS (CMAF and MPEG-TS) and DASH, trick play included.
#[tokio::test]
async fn filters_on_the_ladder_title_keep_exactly_what_matches() {
    let server = start_server_with(&common::fixtures(), settings()).await;
    let ladder = "/vod/ladder/ladder.json";
    // Rungs: f1 180p, f2 360p, f3 270p; audio f1-t2 (eng, main) and f4-t1 (fr);
    // subtitles f5-t0 (en) and f6-t0 (de).
    let everything = [
        "index-f1-t1.m3u8",
        "index-f2-t1.m3u8",
        "index-f3-t1.m3u8",
        "iframes-f1-t1.m3u8",
        "iframes-f2-t1.m3u8",
        "iframes-f3-t1.m3u8",
        "index-f1-t2.m3u8",
        "index-f4-t1.m3u8",
        "index-f5-t0.m3u8",
        "index-f6-t0.m3u8",
    ];
    let without = |gone: &[&str]| -> Vec<&str> {
        everything
            .iter()
            .copied()
            .filter(|n| !gone.iter().any(|g| n.contains(g)))
            .collect()
    };
    let master = format!("{ladder}/master.m3u8");
    check_filter(&server, &master, "max_height=270", &without(&["f2-t1"])).await;
    check_filter(
        &server,
        &master,
        "max_height=180",
        &without(&["f2-t1", "f3-t1"]),
    )
    .await;
    check_filter(&server, &master, "video_codecs=avc1", &everything).await;
    check_filter(&server, &master, "audio_languages=fr", &without(&["f1-t2"])).await;
    check_filter(
        &server,
        &master,
        "subtitle_languages=de",
        &without(&["f5-t0"]),
    )
    .await;
    check_filter(
        &server,
        &master,
        "subtitle_languages=ja&audio_languages=en",
        &without(&["f4-t1", "f5-t0", "f6-t0"]),
    )
    .await;
    // max_bandwidth against the variants' own BANDWIDTH: the lowest one's keeps it alone.
    let full = get(server.addr, &master).await.text();
    let lowest: u64 = lines_starting(&full, "#EXT-X-STREAM-INF:BANDWIDTH=")
        .iter()
        .map(|l| l[28..].split(',').next().unwrap().parse::<u64>().unwrap())
        .min()
        .unwrap();
    check_filter(
        &server,
        &master,
        &format!("max_bandwidth={lowest}"),
        &without(&["f2-t1", "f3-t1"]),
    )
    .await;
    let mpd = format!("{ladder}/manifest.mpd");
    check_filter(
        &server,
        &mpd,
        "max_height=270",
        &[
            "f1-t1",
            "f3-t1",
            "ifr-f1-t1",
            "ifr-f3-t1",
            "f1-t2",
            "f4-t1",
            "f5-t0",
            "f6-t0",
        ],
    )
    .await;
    check_filter(
        &server,
        &mpd,
        "audio_languages=en&subtitle_languages=en",
        &[
            "f1-t1",
            "f2-t1",
            "f3-t1",
            "ifr-f1-t1",
            "ifr-f2-t1",
            "ifr-f3-t1",
            "f1-t2",
            "f5-t0",
        ],
    )
    .await;
    let ts = format!("{ladder}/master-ts.m3u8");
    let reply = get(server.addr, &format!("{ts}?max_height=180")).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let variants = lines_starting(&reply.text(), "#EXT-X-STREAM-INF:").len();
    assert_eq!(variants, 1, "{}", reply.text());
    let all = media_urls(&server, &ts).await;
    for url in media_urls(&server, &format!("{ts}?max_height=180")).await {
        assert!(all.contains(&url), "{url}");
    }
    for query in [
        "max_height=100",
        "video_codecs=hvc1,av01",
        "audio_languages=de",
    ] {
        let reply = get(server.addr, &format!("{master}?{query}")).await;
        assert_eq!(reply.status, 422, "{query}: {}", reply.text());
    }
}

/// Given malformed filter values, then each is a 400 with a one-line reason naming the
/// parameter, before the title is loaded, and the server keeps serving.
#[tokio::test]
async fn bad_filter_values_are_400_in_one_line() {
    let server = start_server_with(&common::fixtures(), settings()).await;
    for (query, reason) in [
        ("max_height=", "max_height: is empty"),
        (
            "max_height=tall",
            "max_height: must be pixels, a whole number from 1 to 16384",
        ),
        (
            "max_height=0",
            "max_height: must be pixels, a whole number from 1 to 16384",
        ),
        (
            "max_height=1000000",
            "max_height: must be pixels, a whole number from 1 to 16384",
        ),
        (
            "max_bandwidth=-1",
            "max_bandwidth: must be bits per second, a whole number from 1 to 1000000000000",
        ),
        (
            "max_bandwidth=5&max_bandwidth=6",
            "max_bandwidth: given more than once",
        ),
        ("video_codecs=", "video_codecs: is empty"),
        (
            "audio_languages=1",
            "audio_languages: a language code starts with 2 to 8 letters",
        ),
    ] {
        for name in [
            "h264-aac-3s.mp4/master.m3u8",
            "ladder/ladder.json/manifest.mpd",
            "nope.mp4/master.m3u8",
        ] {
            let reply = get(server.addr, &format!("/vod/{name}?{query}")).await;
            assert_eq!(reply.status, 400, "{name}?{query}: {}", reply.text());
            assert_eq!(reply.text().trim_end(), reason, "{name}?{query}");
        }
    }
    // Filters are for entry manifests: elsewhere they are ignored, as any query is.
    let master = get(server.addr, "/vod/h264-aac-3s.mp4/master.m3u8")
        .await
        .text();
    let v = version_folder_in(&master);
    let media = get(
        server.addr,
        &format!("/vod/h264-aac-3s.mp4/{v}index-t1.m3u8?max_height=0"),
    )
    .await;
    assert_eq!(media.status, 200);
    assert_eq!(get(server.addr, "/healthz").await.status, 200);
}

/// Given a filtered request, then its answer is cached like the unfiltered one (60 s)
/// under its own entity tag, and never given for the unfiltered URL (the answers held by
/// path leave filtered ones out).
#[tokio::test]
async fn a_filtered_manifest_never_answers_for_the_unfiltered_one() {
    let server = start_server_with(&common::fixtures(), settings()).await;
    let path = "/vod/h264-aac-2lang-3s.mp4/master.m3u8";
    let filtered = get(server.addr, &format!("{path}?audio_languages=fr")).await;
    let plain = get(server.addr, path).await;
    let again = get(server.addr, path).await;
    assert_eq!(filtered.header("cache-control"), Some("public, max-age=60"));
    assert_eq!(plain.header("cache-control"), Some("public, max-age=60"));
    assert_ne!(filtered.header("etag"), plain.header("etag"));
    assert!(filtered.header("etag").is_some());
    assert_eq!(plain.text(), again.text());
    assert!(plain.text().contains("index-t2.m3u8") && !filtered.text().contains("index-t2.m3u8"));
    // A filter that leaves nothing out answers the unfiltered bytes and tag.
    let same = get(server.addr, &format!("{path}?max_height=16384")).await;
    assert_eq!(
        (same.text(), same.header("etag")),
        (plain.text(), plain.header("etag"))
    );
    // A conditional request with the unfiltered tag is not a 304 for the filtered URL.
    let etag = plain.header("etag").unwrap().to_owned();
    let reply = common::request(
        server.addr,
        "GET",
        &format!("{path}?audio_languages=fr"),
        &[("If-None-Match", &etag)],
    )
    .await;
    assert_eq!(reply.status, 200);
}

/// Given signed URLs on every path, then a token for the title plays a filtered manifest
/// (filters are not covered by the signature: they only narrow what it grants), the
/// filtered manifest carries the token into every URL, and those URLs are the unfiltered
/// signed manifest's.
#[tokio::test]
async fn filters_work_with_signed_urls() {
    let mut settings = settings();
    settings.protect.signed_urls = SignedUrls::All;
    settings.protect.url_secret = Some(Secret::from_text(URL_SECRET, "u").unwrap());
    let server = start_server_with(&common::fixtures(), settings).await;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let signer = TokenSigner::new(Secret::from_text(URL_SECRET, "u").unwrap(), 30);
    let token = signer.sign("/vod/ladder/ladder.json/", now + 600, None);
    let path = "/vod/ladder/ladder.json/master.m3u8";
    let unsigned = get(server.addr, &format!("{path}?max_height=180")).await;
    assert_eq!(unsigned.status, 403);
    let full = get(server.addr, &format!("{path}?token={token}")).await;
    let filtered = get(server.addr, &format!("{path}?max_height=180&token={token}")).await;
    assert_eq!(filtered.status, 200, "{}", filtered.text());
    let full_uris = linked(path, &full.text());
    let uris = linked(path, &filtered.text());
    assert_eq!(uris.len() + 4, full_uris.len(), "{}", filtered.text());
    for uri in &uris {
        assert!(uri.ends_with(&format!("?token={token}")), "{uri}");
        assert!(full_uris.contains(uri), "{uri}");
        assert!(!uri.contains("max_height"), "{uri}");
        assert_eq!(get(server.addr, uri).await.status, 200, "{uri}");
    }
    // Answers carrying a token are per token: no tag, as for every signed manifest.
    assert_eq!(filtered.header("etag"), None);
}
