//! The preview page: in a real browser (Debian's headless Chromium, driven by
//! `tests/preview/drive.mjs` through playwright-core from tests/players/node_modules) it
//! shows the catalogue with a poster per title, a title's players playing it to the end
//! with the storyboard and the bit-rate chart, a title document's breaks on the timeline,
//! and a broken file's reason, with no request outside the origin; over HTTP it escapes
//! what it shows, pages, stays in the root, stays off for buckets and asks signed URLs'
//! tokens. The players it serves are checked byte for byte against the npm lock's. The
//! browser test skips without node, chromium or the npm packages, and fails instead under
//! `VODPACK_REQUIRE_TOOLS=1`. `VODPACK_PREVIEW_SCREENSHOTS=DIR` keeps its screenshots
//! (`preview-list.png`, `preview-title.png`, `preview-timeline.png`; docs/images/ holds the
//! committed ones).

mod common;
mod hostile;
#[path = "common/s3.rs"]
mod s3;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{get, start_server_with, TempDir};
use vodpack::config::{PreviewOptions, Settings};

/// The title the browser plays: a ladder of three rungs, two audio languages, subtitles.
const PLAYED: &str = "ladder/ladder.json";

/// Given a folder of fixtures, a title document with two breaks and a broken file, when
/// the page is opened in Chromium with nothing reachable but the server, then the
/// catalogue lists them with every poster loaded, a click on the ladder plays it to the
/// end in hls.js (CMAF and MPEG-TS) and dash.js with no player error, its storyboard and
/// chart load, the document's breaks are marked at their times, and the broken one shows
/// the server's reason instead of players.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_preview_page_shows_plays_and_explains_offline() {
    let Some(driver) = driver() else {
        return;
    };
    let dir = TempDir::new("preview");
    let fixtures = common::fixtures();
    let listed = [
        "h264-aac-3s.mp4",
        "h264-aac-2lang-3s.mp4",
        "aac-3s-audio-only.m4a",
        PLAYED,
    ];
    std::fs::create_dir_all(dir.path().join("ladder")).expect("mkdir");
    for name in listed.iter().filter(|n| !n.starts_with("ladder/")) {
        std::fs::copy(fixtures.join(name), dir.path().join(name)).expect("copy fixture");
    }
    for entry in std::fs::read_dir(fixtures.join("ladder")).expect("ladder") {
        let entry = entry.expect("entry");
        std::fs::copy(
            entry.path(),
            dir.path().join("ladder").join(entry.file_name()),
        )
        .expect("copy ladder");
    }
    let corpus = hostile::corpus();
    let broken = corpus.first().expect("a hostile file");
    std::fs::write(dir.path().join(broken.name), &broken.bytes).expect("write");

    // Segments of about a second (the fixtures' GOP), so the chart has a bar per second.
    let settings = Settings {
        preview: PreviewOptions {
            enabled: Some(true),
            ..Default::default()
        },
        segment_duration_ms: 1000,
        ..Default::default()
    };
    let server = start_server_with(dir.path(), settings).await;
    // Breaks at the key frames of 1 s and 2 s; the ad is this server's own title.
    let ad = format!("http://{}/vod/h264-aac-3s.mp4/master.m3u8", server.addr);
    std::fs::write(
        dir.path().join("breaks.json"),
        format!(
            r#"{{"video": [{{"file": "h264-aac-3s.mp4"}}], "breaks": [
                {{"id": "mid-1", "at": 1000, "duration": 800, "asset_uri": "{ad}"}},
                {{"id": "mid-2", "at": 2000, "duration": 800, "asset_uri": "{ad}"}}]}}"#
        ),
    )
    .expect("document");
    let screenshots = std::env::var("VODPACK_PREVIEW_SCREENSHOTS").ok();
    if let Some(dir) = &screenshots {
        std::fs::create_dir_all(dir).expect("screenshot folder");
    }
    let job = serde_json::json!({
        "base": format!("http://{}", server.addr),
        "play": PLAYED,
        "breaks": "breaks.json",
        "broken": broken.name,
        "screenshots": screenshots,
    });
    let result = drive(driver, job).await;

    assert_eq!(result["outside"], serde_json::json!([]), "{result}");
    assert!(
        result["requests"].as_u64().is_some_and(|n| n > 10),
        "{result}"
    );
    assert_eq!(result["errors"], serde_json::json!([]), "{result}");
    let titles: Vec<&str> = (result["titles"].as_array().into_iter().flatten())
        .filter_map(|t| t.as_str())
        .collect();
    for name in listed.iter().chain([&broken.name, &"breaks.json"]) {
        assert!(titles.contains(name), "{name} not listed: {titles:?}");
    }
    assert!(
        !titles
            .iter()
            .any(|t| t.ends_with(".vtt") || t.ends_with(".srt")),
        "{titles:?}"
    );
    // A poster per title with a video, each loaded: the three files of the ladder, its two
    // documents, the two other videos and the breaks document (not the two audio-only
    // files nor the broken one).
    let posters = &result["posters"];
    assert_eq!(posters["count"], 8, "{result}");
    assert_eq!(posters["loaded"], posters["count"], "{result}");
    let card = |key: &str| {
        (result["cards"].as_array().into_iter().flatten())
            .find(|c| c["key"] == key)
            .cloned()
            .unwrap_or_default()
    };
    let ladder = card(PLAYED)["facts"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        ladder.starts_with("ok 4.0 s · 360p 270p 180p · audio "),
        "{ladder}"
    );
    assert!(ladder.contains("subtitles "), "{ladder}");
    assert_eq!(card("aac-3s-audio-only.m4a")["poster"], false, "{result}");
    let reply = get(server.addr, &format!("/vod/{}/master.m3u8", broken.name)).await;
    assert_eq!(
        card(broken.name)["why"].as_str(),
        Some(reply.text().trim_end()),
        "{result}"
    );

    // Every player to the end, strictly.
    assert_eq!(result["player_errors"], serde_json::json!([]), "{result}");
    let played = result["played"].as_object().cloned().unwrap_or_default();
    let ids: Vec<&String> = played.keys().collect();
    assert_eq!(ids, ["dash-video", "hls-video", "ts-video"], "{result}");
    for (id, state) in &played {
        let (time, duration) = (state["time"].as_f64(), state["duration"].as_f64());
        assert!(
            time.zip(duration)
                .is_some_and(|(t, d)| d > 3.5 && t >= d - 0.25),
            "{id} did not play to the end: {result}"
        );
    }
    let storyboard = &result["storyboard"];
    assert!(
        storyboard["tiles"].as_u64().is_some_and(|n| n > 0),
        "{result}"
    );
    assert_eq!(storyboard["loaded"], storyboard["tiles"], "{result}");
    // Three video rungs and two audio renditions, each with bars and its declared line.
    assert_eq!(result["chart"]["rungs"], 5, "{result}");
    assert_eq!(result["chart"]["declared"], 5, "{result}");
    assert!(
        result["chart"]["bars"].as_u64().is_some_and(|n| n >= 5 * 4),
        "{result}"
    );
    assert_eq!(result["variants"], 3, "{result}");

    // The breaks where the document puts them (each at a key frame), on a 1000-wide axis.
    let duration = result["breaks_duration_ms"].as_f64().unwrap_or_default();
    let breaks = result["breaks"].as_array().cloned().unwrap_or_default();
    assert_eq!(breaks.len(), 2, "{result}");
    for (mark, (label, at)) in breaks.iter().zip([("mid-1", 1000.0), ("mid-2", 2000.0)]) {
        assert_eq!(mark["label"], label, "{result}");
        let ms = mark["ms"].as_f64().unwrap_or(-1.0);
        assert!((ms - at).abs() <= 70.0, "{label} at {ms}: {result}");
        let x = mark["x"].as_f64().unwrap_or(-1.0);
        assert!((x - 1000.0 * ms / duration).abs() < 0.01, "{result}");
    }

    let expected = format!("{} {}", reply.status, reply.text().trim_end());
    assert_eq!(result["reason"], expected.as_str(), "{result}");
    assert_eq!(result["players_on_broken"], 0, "{result}");
}

/// Given signed URLs on every `/vod/` path, when the page is opened with a token for
/// `/vod/` in Chromium, then everything it makes the browser ask for carries the token:
/// every poster and storyboard tile loads, all three players play the ladder to the end,
/// and nothing is refused (no 403) or asked outside the origin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_signed_urls_the_page_plays_with_its_token() {
    let Some(driver) = driver() else {
        return;
    };
    let dir = TempDir::new("preview-signed-browser");
    std::fs::create_dir_all(dir.path().join("ladder")).expect("mkdir");
    for entry in std::fs::read_dir(common::fixtures().join("ladder")).expect("ladder") {
        let entry = entry.expect("entry");
        std::fs::copy(
            entry.path(),
            dir.path().join("ladder").join(entry.file_name()),
        )
        .expect("copy ladder");
    }
    std::fs::write(dir.path().join("empty.mp4"), b"").expect("write");
    let secret =
        || vodpack::crypto::Secret::from_text("preview url signing secret", "u").expect("secret");
    let mut settings = Settings::default();
    settings.protect.signed_urls = vodpack::crypto::settings::SignedUrls::All;
    settings.protect.url_secret = Some(secret());
    let server = start_server_with(dir.path(), settings).await;
    let expires = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
        + 600;
    let token = vodpack::crypto::TokenSigner::new(secret(), 30).sign("/vod/", expires, None);
    let job = serde_json::json!({
        "base": format!("http://{}", server.addr),
        "play": PLAYED,
        "broken": "empty.mp4",
        "token": token,
    });
    let result = drive(driver, job).await;

    assert_eq!(result["outside"], serde_json::json!([]), "{result}");
    assert_eq!(result["errors"], serde_json::json!([]), "{result}");
    assert_eq!(result["player_errors"], serde_json::json!([]), "{result}");
    let posters = &result["posters"];
    assert_eq!(posters["count"], 5, "{result}");
    assert_eq!(posters["loaded"], posters["count"], "{result}");
    let played = result["played"].as_object().cloned().unwrap_or_default();
    assert_eq!(played.len(), 3, "{result}");
    for (id, state) in &played {
        let (time, duration) = (state["time"].as_f64(), state["duration"].as_f64());
        assert!(
            time.zip(duration)
                .is_some_and(|(t, d)| d > 3.5 && t >= d - 0.25),
            "{id} did not play to the end: {result}"
        );
    }
    let storyboard = &result["storyboard"];
    assert!(
        storyboard["tiles"].as_u64().is_some_and(|n| n > 0),
        "{result}"
    );
    assert_eq!(storyboard["loaded"], storyboard["tiles"], "{result}");
    assert!(
        result["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("422 ")),
        "{result}"
    );
}

/// Run the driver with `job`; its one JSON object.
async fn drive(driver: PathBuf, job: serde_json::Value) -> serde_json::Value {
    // Bounded: past the limit the driver and the browser it started are killed by their
    // process group's id.
    let mut command = Command::new("node");
    command.arg(driver).arg(job.to_string());
    let limit = std::time::Duration::from_secs(600);
    let output = common::bounded::run_with_limit(command, limit).await;
    assert!(
        output.status.is_some_and(|s| s.success()),
        "driver failed (killed past {limit:?}: {}): {}",
        output.timed_out,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("one JSON object")
}

/// The players' browser builds: (file in assets/players, file in
/// tests/players/node_modules, npm package).
const PLAYER_BUILDS: [(&str, &str, &str); 2] = [
    ("hls.min.js", "hls.js/dist/hls.min.js", "hls.js"),
    (
        "dash.all.min.js",
        "dashjs/dist/modern/umd/dash.all.min.js",
        "dashjs",
    ),
];

/// Given the players vodpack serves itself, then each is byte for byte the browser build
/// `npm ci` installs from tests/players/package-lock.json, at the lock's version, and the
/// server answers those bytes at the path its page names, cached as immutable: the lock
/// stays the one source of the players' versions.
#[tokio::test]
async fn the_served_players_are_the_npm_locks_builds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let modules = root.join("tests/players/node_modules");
    if !modules.is_dir() {
        assert!(
            std::env::var("VODPACK_REQUIRE_TOOLS").map_or(true, |v| v != "1"),
            "tests/players/node_modules is required (VODPACK_REQUIRE_TOOLS=1): \
             cd tests/players && npm ci"
        );
        eprintln!("skipping: tests/players/node_modules not found (cd tests/players && npm ci)");
        return;
    }
    let lock: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join("tests/players/package-lock.json")).expect("lock"),
    )
    .expect("lock is JSON");
    let readme = std::fs::read_to_string(root.join("assets/players/README.md")).expect("README");
    let dir = TempDir::new("preview-assets");
    std::fs::copy(
        common::fixtures().join("h264-aac-3s.mp4"),
        dir.path().join("a.mp4"),
    )
    .expect("copy");
    let server = start_server_with(dir.path(), Settings::default()).await;
    let page = get(server.addr, "/?key=a.mp4").await.text();
    for (asset, installed, package) in PLAYER_BUILDS {
        let ours = std::fs::read(root.join("assets/players").join(asset)).expect("asset");
        let theirs = std::fs::read(modules.join(installed)).expect("installed build");
        assert!(ours == theirs, "assets/players/{asset} is not {installed}");
        let locked = &lock["packages"][format!("node_modules/{package}")]["version"];
        let manifest: serde_json::Value = serde_json::from_slice(
            &std::fs::read(modules.join(package).join("package.json")).expect("package.json"),
        )
        .expect("package.json is JSON");
        assert_eq!(manifest["version"], *locked, "{package}: run npm ci");
        let version = locked.as_str().unwrap_or_default();
        assert!(
            readme.contains(&format!("{package} {version}")),
            "assets/players/README.md names {package} {version}"
        );
        let path = (page.split('"'))
            .find(|s| s.starts_with("/preview/static/") && s.ends_with(asset))
            .unwrap_or_else(|| panic!("the title page loads {asset}: {page}"))
            .to_owned();
        let reply = get(server.addr, &path).await;
        assert_eq!(reply.status, 200, "{path}");
        assert!(reply.body == ours, "{path} answers other bytes");
        assert_eq!(
            reply.header("cache-control"),
            Some("public, max-age=31536000, immutable")
        );
    }
}

/// `tests/preview/drive.mjs` when node, chromium and the npm packages are there; None
/// (after saying why) when one is missing, or a panic under `VODPACK_REQUIRE_TOOLS=1`.
fn driver() -> Option<PathBuf> {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let packages = ["playwright-core", "hls.js", "dashjs"]
        .iter()
        .all(|p| tests.join("players/node_modules").join(p).is_dir());
    let missing = match (node, chromium.exists(), packages) {
        (false, _, _) => Some("node (apt-get install nodejs npm)".to_owned()),
        (_, false, _) => Some(format!("{} (apt-get install chromium)", chromium.display())),
        (_, _, false) => Some("tests/players/node_modules (cd tests/players && npm ci)".to_owned()),
        _ => None,
    };
    match missing {
        Some(missing) if std::env::var("VODPACK_REQUIRE_TOOLS").is_ok_and(|v| v == "1") => {
            panic!("{missing} is required (VODPACK_REQUIRE_TOOLS=1) but was not found")
        }
        Some(missing) => {
            eprintln!(
                "skipping: {missing} not found (set VODPACK_REQUIRE_TOOLS=1 to fail instead)"
            );
            None
        }
        None => Some(tests.join("preview/drive.mjs")),
    }
}

/// Given key names holding HTML, then the list and the title page show them escaped, and
/// the server's reason too; no tag from a key reaches the page.
#[tokio::test]
async fn keys_and_reasons_are_escaped_in_the_page() {
    let dir = TempDir::new("preview-escape");
    let name = "<img src=x onerror=alert(1)>&\"'.mp4";
    std::fs::write(dir.path().join(name), b"not an mp4").expect("write");
    let server = start_server_with(dir.path(), Settings::default()).await;
    let list = get(server.addr, "/").await;
    assert_eq!(list.status, 200);
    assert_eq!(
        list.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let policy = list.header("content-security-policy").unwrap_or_default();
    assert!(
        policy.starts_with("default-src 'none'; script-src 'self'; style-src 'self';"),
        "{policy}"
    );
    let html = list.text();
    assert!(!html.contains("<img"), "{html}");
    assert!(
        html.contains("&lt;img src=x onerror=alert(1)&gt;&amp;&quot;&#39;.mp4"),
        "{html}"
    );
    let href = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("key", name)
        .finish();
    let page = get(server.addr, &format!("/?{href}")).await;
    let html = page.text();
    assert!(!html.contains("<img"), "{html}");
    assert!(html.contains("id=\"reason\">422 "), "{html}");
    assert!(
        !html.contains("<video"),
        "no players for a broken file: {html}"
    );
}

/// Given more titles than a page holds, then the page links to the next, which starts
/// after the last one shown, and together they list every title once.
#[tokio::test]
async fn the_list_is_paged() {
    let dir = TempDir::new("preview-pages");
    for n in 0..57 {
        std::fs::write(dir.path().join(format!("t{n:03}.mp4")), b"").expect("write");
    }
    std::fs::write(dir.path().join("notes.txt"), b"").expect("write");
    let server = start_server_with(dir.path(), Settings::default()).await;
    let mut seen = Vec::new();
    let mut path = "/".to_owned();
    for _ in 0..3 {
        let html = get(server.addr, &path).await.text();
        seen.extend(
            html.lines()
                .filter_map(|l| l.split("class=\"title\" href=\"").nth(1))
                .filter_map(|l| l.split('>').nth(1))
                .filter_map(|l| l.split('<').next())
                .map(str::to_owned),
        );
        match html.split("id=\"next\" href=\"").nth(1) {
            Some(rest) => {
                path = rest
                    .split('"')
                    .next()
                    .unwrap_or_default()
                    .replace("&amp;", "&")
            }
            None => break,
        }
    }
    let expected: Vec<String> = (0..57).map(|n| format!("t{n:03}.mp4")).collect();
    assert_eq!(seen, expected);
}

/// Given a server over a bucket (or with the page turned off), then `/` is the usual 404:
/// a bucket's key names are listed only when the setting asks for it.
#[tokio::test]
async fn the_page_is_off_for_buckets_and_when_turned_off() {
    let off = Settings {
        source: Some("s3://bucket/prefix".into()),
        ..Default::default()
    };
    assert!(!vodpack::server::preview_enabled(&off));
    let on = Settings {
        preview: PreviewOptions {
            enabled: Some(true),
            ..Default::default()
        },
        ..off
    };
    assert!(vodpack::server::preview_enabled(&on));
    let dir = TempDir::new("preview-off");
    let settings = Settings {
        preview: PreviewOptions {
            enabled: Some(false),
            ..Default::default()
        },
        ..Default::default()
    };
    let server = start_server_with(dir.path(), settings).await;
    assert_eq!(get(server.addr, "/").await.status, 404);
}

/// Given a prefix that climbs out of the root, then the page lists nothing and says so.
#[tokio::test]
async fn a_prefix_outside_the_root_lists_nothing() {
    let dir = TempDir::new("preview-climb");
    std::fs::create_dir_all(dir.path().join("media")).expect("mkdir");
    std::fs::write(dir.path().join("secret.mp4"), b"").expect("write");
    let server = start_server_with(&dir.path().join("media"), Settings::default()).await;
    for prefix in ["..", "%2E%2E", "a/../..", "/etc"] {
        let html = get(server.addr, &format!("/?prefix={prefix}")).await.text();
        assert!(!html.contains("secret.mp4"), "{prefix}: {html}");
        assert!(
            html.contains("id=\"reason\">no such prefix<"),
            "{prefix}: {html}"
        );
    }
}

/// Given a bucket with the page turned on, then it lists the bucket's titles under the
/// prefix, from the S3 listing.
#[tokio::test]
async fn the_page_lists_a_bucket_when_turned_on() {
    let dir = TempDir::new("preview-bucket");
    let media = dir.path().join("media/videos/shows");
    std::fs::create_dir_all(&media).expect("mkdir");
    std::fs::copy(
        common::fixtures().join("h264-aac-3s.mp4"),
        media.join("ep 1.mp4"),
    )
    .expect("copy");
    std::fs::write(media.join("cover.jpg"), b"").expect("write");
    let s3 = s3::S3Server::start(dir.path()).await;
    let source = s3::s3_source(
        &s3.endpoint(),
        "media/videos",
        vodpack::source::ObjectStoreOptions::default(),
        s3::SECRET_KEY,
    );
    let settings = Settings {
        source: Some("s3://media/videos".into()),
        preview: PreviewOptions {
            enabled: Some(true),
            ..Default::default()
        },
        ..Default::default()
    };
    let server = common::start_server_on(std::sync::Arc::new(source), settings).await;
    let html = get(server.addr, "/?prefix=shows").await.text();
    assert!(html.contains(">shows/ep 1.mp4</a>"), "{html}");
    assert!(!html.contains("cover.jpg"), "{html}");
    let page = get(server.addr, "/?key=shows%2Fep%201.mp4").await.text();
    assert!(
        page.contains("data-hls=\"/vod/shows/ep%201.mp4/master.m3u8\""),
        "{page}"
    );
}

/// Given signed URLs, then the page asks for a token granting the `/vod/` prefix it
/// shows: none, a foreign prefix or a tampered token is a bare 403; a token for
/// `/vod/shows/` lists that folder and opens its titles, and every URL the page writes
/// (title links, posters, manifests, the storyboard) carries it.
#[tokio::test]
async fn with_signed_urls_the_page_needs_a_token_for_what_it_shows() {
    let dir = TempDir::new("preview-signed");
    std::fs::create_dir_all(dir.path().join("shows")).expect("mkdir");
    std::fs::copy(
        common::fixtures().join("h264-aac-3s.mp4"),
        dir.path().join("shows/ep1.mp4"),
    )
    .expect("copy");
    std::fs::write(dir.path().join("secret.mp4"), b"").expect("write");
    let mut settings = Settings::default();
    settings.protect.signed_urls = vodpack::crypto::settings::SignedUrls::All;
    settings.protect.url_secret = Some(
        vodpack::crypto::Secret::from_text("preview url signing secret", "u").expect("secret"),
    );
    let signer = vodpack::crypto::TokenSigner::new(
        vodpack::crypto::Secret::from_text("preview url signing secret", "u").expect("secret"),
        30,
    );
    let server = start_server_with(dir.path(), settings).await;
    let expires = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
        + 600;
    let shows = signer.sign("/vod/shows/", expires, None);
    let everything = signer.sign("/vod/", expires, None);
    let mut tampered = shows.clone();
    tampered.pop();

    for path in [
        "/".to_owned(),
        format!("/?token={shows}"),
        format!("/?prefix=shows&token={tampered}"),
        format!("/?key=secret.mp4&token={shows}"),
    ] {
        let reply = get(server.addr, &path).await;
        assert_eq!(reply.status, 403, "{path}");
        assert!(!reply.text().contains("secret"), "{path}");
    }
    let list = get(server.addr, &format!("/?prefix=shows&token={shows}")).await;
    assert_eq!(list.status, 200);
    let html = list.text();
    assert!(html.contains(">shows/ep1.mp4</a>"), "{html}");
    assert!(
        html.contains(&format!(
            "href=\"/?prefix=shows&amp;key=shows%2Fep1.mp4&amp;token={shows}\""
        )),
        "{html}"
    );
    assert!(
        html.contains(&format!("-w320.jpg?token={shows}\"")),
        "{html}"
    );
    assert!(
        html.contains("badge ok"),
        "the probe is answered with the token: {html}"
    );
    let root = get(server.addr, &format!("/?token={everything}"))
        .await
        .text();
    assert!(root.contains(">secret.mp4</a>"), "{root}");

    let page = get(server.addr, &format!("/?key=shows%2Fep1.mp4&token={shows}")).await;
    assert_eq!(page.status, 200);
    let html = page.text();
    assert!(
        html.contains(&format!(
            "data-hls=\"/vod/shows/ep1.mp4/master.m3u8?token={shows}\""
        )),
        "{html}"
    );
    assert!(html.contains(&format!("data-token=\"{shows}\"")), "{html}");
    assert!(
        html.contains("<rect class=\"seg"),
        "the chart is drawn: {html}"
    );
}

/// Titles in the big catalogue of [`a_2000_title_catalogue_is_listed_in_bounded_pages`].
const CATALOGUE_TITLES: usize = 2_000;

/// Given a bucket of 2,000 titles (hard links to one fixture), when the catalogue is
/// paged through, then each page shows at most 50 titles, every title is shown once,
/// and a page costs the store its listing plus, per title shown, no more than that
/// title's manifest requests cost on their own (measured first, on a fresh server); a
/// page seen again costs the store nothing per title (the titles are in the catalog). The
/// figures (store requests and time per page; printed with `--nocapture`) are the ones in
/// docs/operations.md.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2000_title_catalogue_is_listed_in_bounded_pages() {
    let dir = TempDir::new("preview-catalogue");
    let shows = dir.path().join("media/catalogue");
    std::fs::create_dir_all(&shows).expect("mkdir");
    let fixture = shows.join("t0000.mp4");
    std::fs::copy(common::fixtures().join("h264-aac-3s.mp4"), &fixture).expect("copy");
    for n in 1..CATALOGUE_TITLES {
        std::fs::hard_link(&fixture, shows.join(format!("t{n:04}.mp4"))).expect("link");
    }
    let s3 = s3::S3Server::start(dir.path()).await;
    let settings = || Settings {
        source: Some("s3://media/catalogue".into()),
        preview: PreviewOptions {
            enabled: Some(true),
            ..Default::default()
        },
        ..Default::default()
    };
    let source = || {
        std::sync::Arc::new(s3::s3_source(
            &s3.endpoint(),
            "media/catalogue",
            vodpack::source::ObjectStoreOptions::default(),
            s3::SECRET_KEY,
        ))
    };
    // What one title's manifests cost the store, alone, on a fresh server.
    let alone = common::start_server_on(source(), settings()).await;
    let before = s3.tally();
    for entry in ["master.m3u8", "manifest.mpd"] {
        assert_eq!(
            get(alone.addr, &format!("/vod/t0000.mp4/{entry}"))
                .await
                .status,
            200
        );
    }
    let one_title = s3.tally() - before;
    let per_title = one_title.gets + one_title.heads;

    let bucket = source();
    let server = common::start_server_on(bucket.clone(), settings()).await;
    // Requests the server sent twice on purpose (a hedge after a late answer, a retry
    // after a failure: more likely on a loaded machine) are not the page's cost.
    let counters = vodpack::source::MediaSource::counters(bucket.as_ref()).clone();
    let resent = || counters.hedged_requests.get() + counters.read_retries.get();
    let mut seen = Vec::new();
    let mut path = "/".to_owned();
    let mut pages = 0;
    let mut worst = 0u64;
    let mut slowest = std::time::Duration::ZERO;
    let first_page = loop {
        let (before, resent_before) = (s3.tally(), resent());
        let started = std::time::Instant::now();
        let reply = get(server.addr, &path).await;
        let took = started.elapsed();
        let cost = s3.tally() - before;
        let extra = resent() - resent_before;
        assert_eq!(reply.status, 200);
        let html = reply.text();
        let shown: Vec<String> = (html.split("class=\"title\" href=\"").skip(1))
            .filter_map(|rest| rest.split('>').nth(1)?.split('<').next())
            .map(str::to_owned)
            .collect();
        assert!(shown.len() <= 50, "{} titles on a page", shown.len());
        assert_eq!(html.matches("class=\"badge ok\"").count(), shown.len());
        // The listing (one LIST per 1,000 keys) and each title's manifests, nothing more.
        let listing = 1 + (50u64.div_ceil(1000));
        assert!(
            cost.gets + cost.heads <= listing + per_title * shown.len() as u64 + extra,
            "page {pages}: {cost:?} for {} titles at {per_title} each, {extra} resent",
            shown.len()
        );
        worst = worst.max(cost.gets + cost.heads - extra);
        slowest = slowest.max(took);
        if pages == 0 {
            eprintln!(
                "first page: {} titles, {} store requests ({} GET, {} HEAD, {} bytes), {:?}",
                shown.len(),
                cost.gets + cost.heads,
                cost.gets,
                cost.heads,
                cost.get_bytes,
                took
            );
        }
        seen.extend(shown);
        pages += 1;
        match html.split("id=\"next\" href=\"").nth(1) {
            Some(rest) => {
                path = rest
                    .split('"')
                    .next()
                    .unwrap_or_default()
                    .replace("&amp;", "&")
            }
            None => break pages,
        }
    };
    assert_eq!(first_page, CATALOGUE_TITLES.div_ceil(50));
    let expected: Vec<String> = (0..CATALOGUE_TITLES)
        .map(|n| format!("t{n:04}.mp4"))
        .collect();
    assert_eq!(seen, expected, "every title once, in order");
    // Seen again, a page costs the listing and at most the titles' identities.
    let (before, resent_before) = (s3.tally(), resent());
    let started = std::time::Instant::now();
    assert_eq!(get(server.addr, "/").await.status, 200);
    let took = started.elapsed();
    let again = s3.tally() - before;
    // One GET, the listing; at most an identity check (HEAD) per title, no metadata read
    // (give or take the requests the server sent twice on purpose).
    let extra = resent() - resent_before;
    assert!(again.gets <= 1 + extra, "{again:?}, {extra} resent");
    assert!(again.heads <= 50 + extra, "{again:?}, {extra} resent");
    assert!(
        again.get_bytes < 2 * 122_313 + 4096,
        "only the listing is read: {again:?}"
    );
    eprintln!(
        "{CATALOGUE_TITLES} titles in {pages} pages; one title's manifests alone: {per_title} \
         store requests; worst page: {worst} requests; slowest page {slowest:?}; first page \
         again: {} requests ({} bytes), {took:?}",
        again.gets + again.heads,
        again.get_bytes
    );
}

/// Given a sequence of two parts, then its page marks where each part starts on the
/// timeline (the MPD's Periods), draws no chart (a sequence's reference part alone would
/// mislead) and shows no poster in the catalogue (thumbnails are not offered for
/// sequences), and the catalogue says its duration, the parts' sum.
#[tokio::test]
async fn a_sequence_s_parts_are_marked_on_its_timeline() {
    let dir = TempDir::new("preview-sequence");
    for name in ["ladder-180p.mp4", "ladder-270p.mp4"] {
        std::fs::copy(
            common::fixtures().join("ladder").join(name),
            dir.path().join(name),
        )
        .expect("copy");
    }
    std::fs::write(
        dir.path().join("seq.json"),
        r#"{"parts": [{"file": "ladder-180p.mp4"}, {"file": "ladder-270p.mp4"}]}"#,
    )
    .expect("document");
    let server = start_server_with(dir.path(), Settings::default()).await;
    let html = get(server.addr, "/?key=seq.json").await.text();
    let parts: Vec<&str> = (html.split("<g class=\"mark part\" data-ms=\"").skip(1))
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert_eq!(parts.len(), 2, "{html}");
    assert_eq!(parts.first(), Some(&"0"));
    let second: u64 = parts.get(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    assert!((3900..=4100).contains(&second), "{parts:?}");
    assert!(html.contains("not drawn for a sequence"), "{html}");
    let list = get(server.addr, "/").await.text();
    let card = (list
        .split("<li class=\"card\" data-key=\"seq.json\">")
        .nth(1))
    .and_then(|rest| rest.split("</li>").next())
    .unwrap_or_default();
    assert!(card.contains("noposter"), "{card}");
    assert!(card.contains("ok</span> 8.0 s"), "{card}");
}
