//! The preview page at `/`: what it answers and how it is guarded; the catalogue
//! (`catalogue.rs`) and a title's page (`title.rs`) write its content.
//!
//! `/?prefix=P&after=K` is a page of the catalogue, `/?key=K` a title. Both are HTML
//! written here, around the page's own script and style and the players, which vodpack
//! serves itself (`assets.rs`), so the content security policy allows `'self'` only (plus
//! a CDN's origin when a `preview-*-url` setting points at one). Safe to leave on: on by
//! default for a folder and off for a bucket (`preview` setting; off, `/` is the usual
//! 404); with signed URLs the page needs a token granting the `/vod/` prefix it shows
//! (`/vod/P/` for a listing, `/vod/K/` for a title), refused as any URL is (a bare 403),
//! and it carries that token into every URL it writes. What comes from a bucket or a
//! request is HTML-escaped where it is written.

use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};

use super::assets::static_answer;
use super::html::Query;
use super::probe::{encode_key, Caller};
use crate::server::app::App;
use crate::server::body::ResponseBody;
use crate::server::client::{client_addr, PeerAddr};

use crate::config::{PreviewOptions, Settings};

/// Whether the preview page is served: the `preview` setting, else on for a local
/// root and off for a bucket (whose key names may not be for everyone's eyes).
pub fn preview_enabled(settings: &Settings) -> bool {
    settings
        .preview
        .enabled
        .unwrap_or(settings.source.is_none())
}

/// The page's answer to `req` (or its static files'), or `None` when the request is not
/// for the page (another path, another method, or the page is off), to be routed as usual.
pub async fn preview_page<B>(app: &Arc<App>, req: &Request<B>) -> Option<Response<ResponseBody>> {
    if !preview_enabled(&app.settings) {
        return None;
    }
    if let Some(answer) = static_answer(req) {
        return Some(answer);
    }
    if req.uri().path() != "/" || req.method() != Method::GET {
        return None;
    }
    let query = Query::parse(req.uri().query().unwrap_or_default());
    let peer = (req.extensions().get::<PeerAddr>())
        .map(|peer| client_addr(&app.settings.trusted_proxies, peer.0, req.headers()));
    let Some(caller) = admit(app, &query, req.uri().query(), peer) else {
        let mut refused = Response::new(ResponseBody::full(Bytes::from_static(b"forbidden\n")));
        *refused.status_mut() = StatusCode::FORBIDDEN;
        refused
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        return Some(refused);
    };
    let html = match &query.key {
        Some(key) => super::title::title_page(app, &query, &caller, key).await,
        None => super::catalogue::list_page(app, &query, &caller).await,
    };
    let mut response = Response::new(ResponseBody::full(Bytes::from(html)));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if let Ok(policy) = HeaderValue::from_str(&content_security_policy(&app.settings.preview)) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    Some(response)
}

/// Who the page asks the server as, when the request may see what it asks for: with
/// signed URLs, a token granting the `/vod/` prefix of the listing or title (the reason
/// of a refusal is logged and counted, as for any URL); `None` when refused.
fn admit(app: &App, query: &Query, raw: Option<&str>, peer: Option<IpAddr>) -> Option<Caller> {
    if !app.protect.signs_urls() {
        return Some(Caller { token: None, peer });
    }
    let shown = match (&query.key, query.prefix.as_str()) {
        (Some(key), _) => format!("/vod/{}/", encode_key(key)),
        (None, "") => "/vod/".to_owned(),
        (None, prefix) => format!("/vod/{}/", encode_key(prefix)),
    };
    match app.protect.check_path(&shown, raw, peer) {
        Ok(()) => Some(Caller {
            token: query.token.clone(),
            peer,
        }),
        Err(e) => {
            tracing::info!(reason = %e, "token refused");
            app.metrics.token_refused(e.label());
            None
        }
    }
}

/// The page's content security policy: scripts and styles only from this server (or the
/// players' CDN when a setting names one), pictures, media and requests only to it (and
/// the players' `blob:` media and workers, `data:` for the empty icon and the empty text
/// track dash.js makes). A second line of defence behind the escaping.
fn content_security_policy(preview: &PreviewOptions) -> String {
    let origin = |url: &str| {
        url::Url::parse(url)
            .ok()
            .map(|u| u.origin().ascii_serialization())
            .filter(|o| o != "null")
    };
    let mut scripts = vec!["'self'".to_owned()];
    for url in [&preview.hls_js_url, &preview.dash_js_url] {
        if let Some(o) = origin(url).filter(|o| !scripts.contains(o)) {
            scripts.push(o);
        }
    }
    format!(
        "default-src 'none'; script-src {}; style-src 'self'; img-src 'self' data:; \
         media-src 'self' blob: data:; connect-src 'self'; worker-src 'self' blob:; \
         form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        scripts.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::preview::assets::HLS_JS;
    use crate::server::preview::html::player_url;

    #[test]
    fn the_policy_allows_only_the_origin_unless_a_cdn_is_named() {
        let own = content_security_policy(&PreviewOptions::default());
        assert!(own.contains("script-src 'self'; style-src 'self'; img-src 'self' data:;"));
        assert!(own.starts_with("default-src 'none'"));
        assert!(!own.contains("unsafe-inline"), "{own}");
        let cdn = PreviewOptions {
            hls_js_url: "https://cdn.jsdelivr.net/npm/hls.js@1.7.4/dist/hls.min.js".into(),
            dash_js_url: "https://cdn.jsdelivr.net/npm/dashjs@5.2.1/x.js".into(),
            ..PreviewOptions::default()
        };
        let policy = content_security_policy(&cdn);
        assert!(
            policy.contains("script-src 'self' https://cdn.jsdelivr.net;"),
            "{policy}"
        );
        assert_eq!(player_url(&cdn.hls_js_url, &HLS_JS), cdn.hls_js_url);
        assert_eq!(player_url("", &HLS_JS), HLS_JS.path());
    }
}
