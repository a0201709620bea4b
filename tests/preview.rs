//! The preview page in a real browser: Debian's headless Chromium, driven by
//! `tests/preview/drive.mjs` (playwright-core from tests/players/node_modules). The page
//! lists the titles of a folder, a click on one plays it with hls.js and with dash.js,
//! and a broken file shows the reason the server gives a player. The players are the npm
//! packages' browser builds, served by this test on loopback in place of the CDN (the
//! `preview-*-url` settings). Skips without node, chromium or the npm packages, and fails
//! instead under `VODPACK_REQUIRE_TOOLS=1`. `VODPACK_PREVIEW_SCREENSHOT=FILE` keeps a
//! screenshot of the playing page.

mod common;
mod hostile;
#[path = "common/s3.rs"]
mod s3;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{get, start_server_with, TempDir};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use vodpack::config::{PreviewOptions, Settings};

/// The player scripts served in place of the CDN: (URL path, file in tests/players).
const PLAYER_FILES: [(&str, &str); 2] = [
    ("/hls.min.js", "node_modules/hls.js/dist/hls.min.js"),
    (
        "/dash.all.min.js",
        "node_modules/dashjs/dist/modern/umd/dash.all.min.js",
    ),
];

/// The good title the browser plays.
const PLAYED: &str = "h264-aac-3s.mp4";

/// Given a folder of fixtures and a broken file, when the page is opened in Chromium,
/// then it lists them, a click on one plays it in both players, and the broken one
/// shows the server's status and reason instead of players.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_preview_page_lists_plays_and_explains() {
    let Some(driver) = driver() else {
        return;
    };
    let dir = TempDir::new("preview");
    let fixtures = common::fixtures();
    let listed = [
        PLAYED,
        "h264-aac-2lang-3s.mp4",
        "aac-3s-audio-only.m4a",
        "ladder/ladder.json",
    ];
    std::fs::create_dir_all(dir.path().join("ladder")).expect("mkdir");
    for name in listed {
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

    let scripts = serve_player_scripts().await;
    let settings = Settings {
        preview: PreviewOptions {
            enabled: Some(true),
            hls_js_url: format!("http://{scripts}/hls.min.js"),
            dash_js_url: format!("http://{scripts}/dash.all.min.js"),
        },
        ..Default::default()
    };
    let server = start_server_with(dir.path(), settings).await;
    let job = serde_json::json!({
        "base": format!("http://{}", server.addr),
        "play": PLAYED,
        "broken": broken.name,
        "screenshot": std::env::var("VODPACK_PREVIEW_SCREENSHOT").ok(),
    });
    let output = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg(driver)
            .arg(job.to_string())
            .stdin(Stdio::null())
            .output()
            .expect("run node")
    })
    .await
    .expect("join");
    assert!(output.status.success(), "driver failed: {output:?}");
    let result: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("one JSON object");

    let titles: Vec<&str> = result["titles"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_str())
        .collect();
    for name in listed.iter().chain([&broken.name]) {
        assert!(titles.contains(name), "{name} not listed: {titles:?}");
    }
    assert!(
        !titles
            .iter()
            .any(|t| t.ends_with(".vtt") || t.ends_with(".srt")),
        "{titles:?}"
    );
    let played = &result["played"];
    assert!(
        played["hls"].as_f64().is_some_and(|t| t > 1.0),
        "hls.js did not play: {result}"
    );
    assert!(
        played["dash"].as_f64().is_some_and(|t| t > 1.0),
        "dash.js did not play: {result}"
    );
    assert_eq!(result["variants"], 1, "{result}");
    assert!(
        result["inspect"]
            .as_str()
            .is_some_and(|t| t.contains("track 1 video avc1.")),
        "{result}"
    );
    assert_eq!(result["errors"], serde_json::json!([]), "{result}");

    let reply = get(server.addr, &format!("/vod/{}/master.m3u8", broken.name)).await;
    let expected = format!("{} {}", reply.status, reply.text().trim_end());
    assert_eq!(result["reason"], expected.as_str(), "{result}");
    assert_eq!(result["players_on_broken"], 0, "{result}");
}

/// Serve the players' browser builds from their npm packages on loopback; the address.
async fn serve_player_scripts() -> std::net::SocketAddr {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/players");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let folder = folder.clone();
            tokio::spawn(async move {
                let mut head = vec![0u8; 8192];
                let n = stream.read(&mut head).await.unwrap_or(0);
                let text = String::from_utf8_lossy(&head[..n]);
                let path = text
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or_default()
                    .to_owned();
                let file = PLAYER_FILES.iter().find(|(url, _)| *url == path);
                let body = match file {
                    Some((_, file)) => tokio::fs::read(folder.join(file)).await.ok(),
                    None => None,
                };
                let (status, body) = match body {
                    Some(body) => ("200 OK", body),
                    None => ("404 Not Found", Vec::new()),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/javascript\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.write_all(&body).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    addr
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
        policy
            .starts_with("default-src 'none'; script-src 'unsafe-inline' https://cdn.jsdelivr.net"),
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
    std::fs::copy(common::fixtures().join(PLAYED), media.join("ep 1.mp4")).expect("copy");
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
