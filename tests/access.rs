//! What an SRE reads about each request: the client address behind trusted
//! proxies (`--trusted-proxies`, read from X-Forwarded-For and Forwarded only when the peer
//! is trusted), IP-bound tokens bound to that address, the access line's client, user agent
//! and trace id, `vod_build_info`, token refusals by reason, and a URL-secret rotation with
//! tokens of both secrets in flight.

mod common;

use common::logs::{access_line, captured_logs, captured_text, now};
use common::{fixtures, request, start_server_with, TestServer};
use tracing::Level;
use vodpack::config::Settings;
use vodpack::crypto::settings::SignedUrls;
use vodpack::crypto::{Secret, TokenSigner};

const FIXTURE: &str = "h264-aac-3s.mp4";
const URL_SECRET: &str = "access test current url secret";
const PREVIOUS_SECRET: &str = "access test previous url secret";
/// A viewer's address, as a CDN forwards it.
const VIEWER: &str = "198.51.100.23";
const TRACE_ID: &str = "5bf92f3577b34da6a3ce929d0e0e4736";

/// A server with every URL signed, the access log on, and `trusted` proxies.
async fn start(trusted: &str, previous: Option<&str>) -> TestServer {
    captured_logs(Level::INFO);
    let mut settings = Settings::default();
    settings.server.access_log = true;
    settings.trusted_proxies = trusted.parse().unwrap();
    settings.protect.signed_urls = SignedUrls::All;
    settings.protect.url_secret = Some(Secret::from_text(URL_SECRET, "u").unwrap());
    settings.protect.url_secret_previous = previous.map(|p| Secret::from_text(p, "p").unwrap());
    settings.protect.token_skew_secs = 30;
    start_server_with(&fixtures(), settings).await
}

fn signer(secret: &str) -> TokenSigner {
    TokenSigner::new(Secret::from_text(secret, "u").unwrap(), 30)
}

fn master_with(token: &str) -> String {
    format!("/vod/{FIXTURE}/master.m3u8?token={token}")
}

/// The value of `name` in the Prometheus text `metrics` for a line starting with `series`.
fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find(|l| l.starts_with(series))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// Given a token bound to the viewer's address, when it arrives through a trusted proxy
/// (loopback here) that forwards the viewer in X-Forwarded-For or Forwarded, then it is
/// accepted; from a peer that is not trusted the same header is ignored (403), and a
/// token bound to the proxy's address is refused through the proxy.
#[tokio::test]
async fn ip_bound_tokens_bind_to_the_viewer_a_trusted_proxy_forwards() {
    let bound = signer(URL_SECRET).sign(&format!("/vod/{FIXTURE}/"), now() + 600, Some(VIEWER));
    let path = master_with(&bound);
    let xff = format!("203.0.113.99, {VIEWER}");
    let forwarded = format!("for={VIEWER};proto=https");

    let behind_cdn = start("127.0.0.0/8, ::1", None).await;
    let via_xff = request(behind_cdn.addr, "GET", &path, &[("X-Forwarded-For", &xff)]).await;
    assert_eq!(via_xff.status, 200, "{}", via_xff.text());
    let via_forwarded = request(behind_cdn.addr, "GET", &path, &[("Forwarded", &forwarded)]).await;
    assert_eq!(via_forwarded.status, 200, "{}", via_forwarded.text());
    let no_header = request(behind_cdn.addr, "GET", &path, &[]).await;
    assert_eq!(
        no_header.status, 403,
        "the proxy's own address is not the viewer's"
    );
    let for_proxy =
        signer(URL_SECRET).sign(&format!("/vod/{FIXTURE}/"), now() + 600, Some("127.0.0.1"));
    let proxy_token = request(
        behind_cdn.addr,
        "GET",
        &master_with(&for_proxy),
        &[("X-Forwarded-For", VIEWER)],
    )
    .await;
    assert_eq!(
        proxy_token.status, 403,
        "bound to the proxy, used by the viewer"
    );
    behind_cdn.shutdown().await;

    let untrusted = start("10.0.0.0/8", None).await;
    let spoofed = request(untrusted.addr, "GET", &path, &[("X-Forwarded-For", VIEWER)]).await;
    assert_eq!(
        spoofed.status, 403,
        "an untrusted peer cannot name its address"
    );
    untrusted.shutdown().await;
}

/// Given the access log on behind a trusted proxy, when a viewer's request arrives with a
/// user agent and a W3C traceparent, then its access line names the viewer's address (not
/// the proxy's), the user agent and the trace id, and the token is not in it.
#[tokio::test]
async fn access_lines_carry_the_viewer_the_user_agent_and_the_trace_id() {
    let server = start("127.0.0.1/32", None).await;
    let token = signer(URL_SECRET).sign(&format!("/vod/{FIXTURE}/"), now() + 600, None);
    let traceparent = format!("00-{TRACE_ID}-00f067aa0ba902b7-01");
    let reply = request(
        server.addr,
        "GET",
        &master_with(&token),
        &[
            ("X-Forwarded-For", VIEWER),
            ("User-Agent", "AccessStory/1.0 (viewer)"),
            ("traceparent", &traceparent),
        ],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.header("x-trace-id"), Some(TRACE_ID));
    server.shutdown().await;
    let logs = captured_text(Level::INFO);
    let line = access_line(&logs, TRACE_ID);
    assert!(line.contains(&format!("client={VIEWER}")), "{line}");
    assert!(
        line.contains("user_agent=\"AccessStory/1.0 (viewer)\""),
        "{line}"
    );
    assert!(
        line.contains(&format!("trace_id=\"{TRACE_ID}\""))
            || line.contains(&format!("trace_id={TRACE_ID}")),
        "{line}"
    );
    assert!(line.contains("status=200"), "{line}");
    assert!(
        !line.contains(token.rsplit('.').next().unwrap()),
        "no token in {line}"
    );
}

/// Given a URL-secret rotation (the new secret current, the old one previous), when
/// tokens of both secrets arrive, then both are accepted, a token of any other secret is a
/// 403, and /metrics counts the refusal by its reason beside `vod_build_info`.
#[tokio::test]
async fn a_rotation_accepts_both_secrets_and_refusals_are_counted() {
    let server = start("", Some(PREVIOUS_SECRET)).await;
    let prefix = format!("/vod/{FIXTURE}/");
    let current = signer(URL_SECRET).sign(&prefix, now() + 600, None);
    let previous = signer(PREVIOUS_SECRET).sign(&prefix, now() + 600, None);
    let unknown = signer("a secret nobody configured").sign(&prefix, now() + 600, None);
    for token in [&current, &previous] {
        let reply = request(server.addr, "GET", &master_with(token), &[]).await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        // It carries the token on: no shared cache may keep it (docs/cdn.md).
        assert_eq!(reply.header("cache-control"), Some("private, max-age=60"));
        assert!(reply.text().contains(token.as_str()));
    }
    let refused = request(server.addr, "GET", &master_with(&unknown), &[]).await;
    assert_eq!(refused.status, 403);
    let expired = signer(URL_SECRET).sign(&prefix, now() - 3600, None);
    let late = request(server.addr, "GET", &master_with(&expired), &[]).await;
    assert_eq!(late.status, 403);
    let bare = request(server.addr, "GET", &format!("{prefix}master.m3u8"), &[]).await;
    assert_eq!(bare.status, 403);

    let metrics = request(server.addr, "GET", "/metrics", &[]).await.text();
    for (reason, count) in [("bad_signature", 1.0), ("expired", 1.0), ("missing", 1.0)] {
        let series = format!("vod_token_refusals_total{{reason=\"{reason}\"}}");
        assert_eq!(
            sample(&metrics, &series),
            Some(count),
            "{series} in {metrics}"
        );
    }
    let build = format!(
        "vod_build_info{{version=\"{}\",commit=\"",
        env!("CARGO_PKG_VERSION")
    );
    let line = metrics
        .lines()
        .find(|l| l.starts_with(&build))
        .unwrap_or_else(|| panic!("{build} in {metrics}"));
    assert!(
        line.ends_with(&format!(
            "packager_format=\"{}\"}} 1",
            vodpack::package::PACKAGER_FORMAT
        )),
        "{line}"
    );
    server.shutdown().await;
}
