//! vodpack behind a stand-in CDN: Debian's nginx with `proxy_cache` keyed on the
//! path alone (the riskiest CDN setting) and `X-Forwarded-For`, in front of a vodpack with
//! signed entry manifests, the access log on and nginx's address in `--trusted-proxies`.
//! The viewer connects from 127.0.0.2, nginx from 127.0.0.1: so the viewer's address and
//! the CDN's differ as they do in production, on loopback only.
//!
//! Needs nginx: skips without it, unless `VODPACK_REQUIRE_TOOLS=1` (CI), which fails.
//! nginx is stopped by its own process id; waits are bounded loops.

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::process::Child;
use std::time::Duration;

use common::logs::{access_line, captured_logs, captured_text, now};
use common::{fixtures, start_server_with, Reply, TempDir};
use tracing::Level;
use vodpack::config::Settings;
use vodpack::crypto::settings::SignedUrls;
use vodpack::crypto::{Secret, TokenSigner};

const FIXTURE: &str = "h264-aac-3s.mp4";
const URL_SECRET: &str = "cdn story url secret 0123456789";
/// The viewer's address (the client side of its connection to nginx).
const VIEWER: &str = "127.0.0.2";
const TRACE_ID: &str = "6cf92f3577b34da6a3ce929d0e0e4736";

/// nginx, killed by its own id when dropped.
struct Nginx(Child);

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// nginx as a CDN edge on `port` in front of `origin`: a cache keyed on `$uri` (the path,
/// no query), honouring the origin's Cache-Control, appending the viewer to
/// X-Forwarded-For, and telling the cache's verdict in `X-Cache-Status`.
fn cdn(prefix: &Path, port: u16, origin: SocketAddr) -> Nginx {
    let p = prefix.display();
    let http = format!(
        "access_log off;\n  \
         proxy_cache_path {p}/cache levels=1:2 keys_zone=cdn:1m max_size=64m inactive=10m use_temp_path=off;\n  \
         server {{\n    listen 127.0.0.1:{port};\n    location / {{\n      \
         proxy_pass http://{origin};\n      proxy_http_version 1.1;\n      \
         proxy_set_header Connection \"\";\n      \
         proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n      \
         proxy_cache cdn;\n      proxy_cache_key $uri;\n      \
         add_header X-Cache-Status $upstream_cache_status always;\n    }}\n  }}\n"
    );
    let child = common::spawn_nginx(prefix, 64, &http);
    Nginx(child)
}

/// GET `path` from the CDN at `edge` as the viewer (from 127.0.0.2), with `extra` headers.
async fn viewer_get(edge: SocketAddr, path: &str, extra: &[(&str, &str)]) -> Reply {
    let exchange = async {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket
            .bind(SocketAddr::new(VIEWER.parse().unwrap(), 0))
            .expect("bind the viewer's address");
        let stream = socket.connect(edge).await.expect("connect to the edge");
        common::exchange(stream, "video.example", "GET", path, extra).await
    };
    let raw = tokio::time::timeout(Duration::from_secs(30), exchange)
        .await
        .expect("an answer within 30 s");
    common::parse_reply(&raw, false)
}

/// Given vodpack behind nginx as a path-keyed caching CDN, with signed entry manifests and
/// nginx's address trusted:
/// - a token bound to the viewer's address plays, one bound to the CDN's is refused;
/// - after a viewer with a valid token fetched the manifest through the CDN, a request
///   without a token, or with a bad one, is refused: the CDN never serves the cached
///   manifest to it (it was never cached: `private`), while segments are cached;
/// - the origin's access lines name the viewer's address and the trace id it sent.
#[tokio::test]
async fn behind_a_caching_cdn_tokens_bind_to_the_viewer_and_manifests_stay_private() {
    if !common::have_program("nginx", "-v") {
        return;
    }
    captured_logs(Level::INFO);
    let mut settings = Settings::default();
    settings.server.access_log = true;
    settings.trusted_proxies = "127.0.0.1/32".parse().unwrap();
    settings.protect.signed_urls = SignedUrls::Entry;
    settings.protect.url_secret = Some(Secret::from_text(URL_SECRET, "u").unwrap());
    settings.protect.token_skew_secs = 30;
    let origin = start_server_with(&fixtures(), settings).await;
    let prefix = TempDir::new("cdn-nginx");
    let port = common::free_port();
    let _nginx = cdn(prefix.path(), port, origin.addr);
    let edge = SocketAddr::from(([127, 0, 0, 1], port));
    let mut up = false;
    for _ in 0..400 {
        if tokio::net::TcpStream::connect(edge).await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(up, "nginx never listened");

    let signer = TokenSigner::new(Secret::from_text(URL_SECRET, "u").unwrap(), 30);
    let title = format!("/vod/{FIXTURE}/");
    let for_viewer = signer.sign(&title, now() + 600, Some(VIEWER));
    let for_cdn = signer.sign(&title, now() + 600, Some("127.0.0.1"));
    let master = format!("{title}master.m3u8");
    let traceparent = format!("00-{TRACE_ID}-00f067aa0ba902b7-01");

    let played = viewer_get(
        edge,
        &format!("{master}?token={for_viewer}"),
        &[
            ("traceparent", &traceparent),
            ("User-Agent", "CdnStory/1.0"),
        ],
    )
    .await;
    assert_eq!(
        played.status,
        200,
        "{}",
        String::from_utf8_lossy(&played.body)
    );
    assert_eq!(played.header("cache-control"), Some("private, max-age=60"));
    let bound_to_cdn = viewer_get(edge, &format!("{master}?token={for_cdn}"), &[]).await;
    assert_eq!(
        bound_to_cdn.status, 403,
        "a token bound to the CDN's address"
    );

    for path in [master.clone(), format!("{master}?token=1.n.bm8.bm8")] {
        let refused = viewer_get(edge, &path, &[]).await;
        assert_eq!(
            refused.status, 403,
            "{path}: the cached manifest was served"
        );
        assert_ne!(refused.header("x-cache-status"), Some("HIT"), "{path}");
    }
    let again = viewer_get(edge, &format!("{master}?token={for_viewer}"), &[]).await;
    assert_eq!(again.status, 200);
    assert_ne!(
        again.header("x-cache-status"),
        Some("HIT"),
        "manifests are not cached"
    );

    // The cache does work: a segment is served from it the second time.
    let text = String::from_utf8_lossy(&played.body).into_owned();
    let variant = text
        .lines()
        .find(|l| !l.starts_with('#') && !l.is_empty())
        .expect("a variant");
    let playlist_path = format!("{title}{variant}");
    let playlist = viewer_get(edge, &playlist_path, &[]).await;
    assert_eq!(playlist.status, 200);
    let folder = &playlist_path[..playlist_path.rfind('/').unwrap() + 1];
    let segment = String::from_utf8_lossy(&playlist.body)
        .lines()
        .find(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| format!("{folder}{}", l.split('?').next().unwrap()))
        .expect("a segment");
    let first = viewer_get(edge, &segment, &[]).await;
    let second = viewer_get(edge, &segment, &[]).await;
    assert_eq!((first.status, second.status), (200, 200), "{segment}");
    assert_eq!(second.header("x-cache-status"), Some("HIT"), "{segment}");
    assert_eq!(first.body, second.body);
    origin.shutdown().await;

    let logs = captured_text(Level::INFO);
    let line = access_line(&logs, TRACE_ID);
    assert!(line.contains(&format!("client={VIEWER}")), "{line}");
    assert!(line.contains("CdnStory/1.0"), "{line}");
    let refusals = logs
        .lines()
        .filter(|l| l.contains("access") && l.contains("status=403"))
        .collect::<Vec<_>>();
    assert!(
        refusals
            .iter()
            .all(|l| l.contains(&format!("client={VIEWER}"))),
        "{refusals:?}"
    );
}
