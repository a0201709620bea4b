//! The preview page at `/`: the titles under a prefix, each one playable in the page, for
//! the operator's first look: a paged list of media files and title documents
//! (`?prefix=`, `?after=`), and for the title picked (`?key=`) the server's own answer
//! (`probe`), the `inspect` description, and its HLS and DASH played side by side with
//! hls.js and dash.js from their version-pinned CDN URLs (settings). What comes from a
//! bucket or a request is HTML-escaped where it is written; URLs reach the script only
//! through escaped `data-` attributes. Bounded: at most [`PAGE_TITLES`] titles and
//! [`PAGE_SCAN`] listed objects a page. On by default for a folder, off for a bucket
//! (`preview` setting); when off, `/` is the usual 404.

use std::fmt::Write as _;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use http::{header, HeaderValue, Method, Request, Response};

use super::describe::{describe, DetailError};
use super::probe::{encode_key, probe, KeyReport};
use crate::server::app::App;
use crate::server::body::ResponseBody;

use crate::config::Settings;
use crate::source::{ObjectKey, SourceError};

/// Titles shown per page.
pub const PAGE_TITLES: usize = 50;
/// Listed objects read at most to fill one page (the rest of a page may be other files).
pub const PAGE_SCAN: usize = 2_000;

/// Extensions of the titles listed: media files and title documents.
const TITLE_EXTENSIONS: [&str; 5] = [".mp4", ".m4v", ".m4a", ".mov", ".json"];

/// Whether the preview page is served: the `preview` setting, else on for a local
/// root and off for a bucket (whose key names may not be for everyone's eyes).
pub fn preview_enabled(settings: &Settings) -> bool {
    settings
        .preview
        .enabled
        .unwrap_or(settings.source.is_none())
}

/// The page's answer to `req`, or `None` when the request is not for the page (another
/// path, another method, or the page is off), to be routed as usual.
pub async fn preview_page<B>(app: &Arc<App>, req: &Request<B>) -> Option<Response<ResponseBody>> {
    if req.uri().path() != "/" || req.method() != Method::GET || !preview_enabled(&app.settings) {
        return None;
    }
    let query = Query::parse(req.uri().query().unwrap_or_default());
    let html = match &query.key {
        Some(key) => title_page(app, &query, key).await,
        None => list_page(app, &query).await,
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
    if let Ok(policy) = HeaderValue::from_str(&content_security_policy(&app.settings)) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    Some(response)
}

/// The page's content security policy: scripts only from this server's inline page and
/// the two players' origins, media and requests only to this server (and the players'
/// `blob:` media and workers). A second line of defence behind the escaping.
fn content_security_policy(settings: &Settings) -> String {
    let origin = |url: &str| {
        url::Url::parse(url)
            .ok()
            .map(|u| u.origin().ascii_serialization())
            .filter(|o| o != "null")
            .unwrap_or_default()
    };
    let preview = &settings.preview;
    format!(
        "default-src 'none'; script-src 'unsafe-inline' {} {}; style-src 'unsafe-inline'; \
         img-src data:; media-src 'self' blob:; connect-src 'self'; worker-src blob:; \
         form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        origin(&preview.hls_js_url),
        origin(&preview.dash_js_url)
    )
}

/// The page's query: the folder listed, where the page starts, and the title picked.
#[derive(Debug, Default)]
struct Query {
    prefix: String,
    after: Option<String>,
    key: Option<String>,
}

impl Query {
    fn parse(query: &str) -> Self {
        let mut parsed = Query::default();
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            let value = value.into_owned();
            match name.as_ref() {
                "prefix" => parsed.prefix = value.trim_matches('/').to_owned(),
                "after" if !value.is_empty() => parsed.after = Some(value),
                "key" if !value.is_empty() => parsed.key = Some(value),
                _ => {}
            }
        }
        parsed
    }

    /// `/?...` for these values.
    fn href(prefix: &str, after: Option<&str>, key: Option<&str>) -> String {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        if !prefix.is_empty() {
            query.append_pair("prefix", prefix);
        }
        if let Some(after) = after {
            query.append_pair("after", after);
        }
        if let Some(key) = key {
            query.append_pair("key", key);
        }
        format!("/?{}", query.finish())
    }
}

/// One page of the titles under the prefix.
async fn list_page(app: &Arc<App>, query: &Query) -> String {
    let source = app.catalog.source().clone();
    let mut listing = source.list(query.prefix.clone(), query.after.clone());
    let mut titles: Vec<(String, u64)> = Vec::new();
    let mut last_scanned: Option<String> = None;
    let mut error: Option<String> = None;
    let mut scanned = 0usize;
    let mut more = false;
    while let Some(item) = listing.next().await {
        if titles.len() >= PAGE_TITLES || scanned >= PAGE_SCAN {
            more = true;
            break;
        }
        scanned += 1;
        match item {
            Ok(object) => {
                let lower = object.key.to_ascii_lowercase();
                if TITLE_EXTENSIONS.iter().any(|ext| lower.ends_with(ext)) {
                    titles.push((object.key.clone(), object.size));
                }
                last_scanned = Some(object.key);
            }
            Err(e) => {
                tracing::warn!(error = %e, prefix = %query.prefix, "preview listing failed");
                error = Some(match e {
                    SourceError::NotFound { .. } | SourceError::OutsideRoot { .. } => {
                        "no such prefix".to_owned()
                    }
                    _ => "the source could not be listed".to_owned(),
                });
                break;
            }
        }
    }
    drop(listing);
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>vodpack preview</h1>\n<form method=\"get\" action=\"/\"><label>prefix \
         <input name=\"prefix\" value=\"{}\"></label> <button>list</button></form>\n",
        escape(&query.prefix)
    );
    if let Some(error) = error {
        let _ = writeln!(
            body,
            "<p class=\"reason\" id=\"reason\">{}</p>",
            escape(&error)
        );
    }
    if titles.is_empty() {
        body.push_str("<p>No titles (.mp4, .m4v, .m4a, .mov, .json) here.</p>\n");
    }
    body.push_str("<ul id=\"titles\">\n");
    for (key, size) in &titles {
        let _ = writeln!(
            body,
            "<li><a class=\"title\" href=\"{}\">{}</a> <small>{} bytes</small></li>",
            escape(&Query::href(&query.prefix, None, Some(key))),
            escape(key),
            size
        );
    }
    body.push_str("</ul>\n");
    if let (true, Some(last)) = (more, last_scanned) {
        let _ = writeln!(
            body,
            "<p><a id=\"next\" href=\"{}\">next page</a></p>",
            escape(&Query::href(&query.prefix, Some(&last), None))
        );
    }
    page("vodpack preview", &body, "")
}

/// One title: the server's answer, its description, and the two players.
async fn title_page(app: &Arc<App>, query: &Query, key: &str) -> String {
    let back = Query::href(&query.prefix, None, None);
    let mut body = format!(
        "<p><a id=\"back\" href=\"{}\">&larr; titles</a></p>\n<h1 id=\"key\">{}</h1>\n",
        escape(&back),
        escape(key)
    );
    let parsed = match ObjectKey::parse(key) {
        Ok(parsed) => parsed,
        Err(e) => {
            let _ = writeln!(
                body,
                "<p class=\"reason\" id=\"reason\">400 bad request path: {}</p>",
                escape(&e.to_string())
            );
            return page(key, &body, "");
        }
    };
    let report = probe(app, &parsed).await;
    answer_html(&mut body, &report);
    let mut scripts = String::new();
    if report.is_ok() {
        let base = format!("/vod/{}", encode_key(parsed.as_str()));
        let preview = &app.settings.preview;
        let _ = write!(
            body,
            "<div id=\"players\" data-hls=\"{}\" data-dash=\"{}\">\n\
             <figure><figcaption>HLS (hls.js) <span id=\"hls-state\"></span></figcaption>\
             <video id=\"hls-video\" controls muted autoplay playsinline></video></figure>\n\
             <figure><figcaption>DASH (dash.js) <span id=\"dash-state\"></span></figcaption>\
             <video id=\"dash-video\" controls muted autoplay playsinline></video></figure>\n\
             </div>\n",
            escape(&format!("{base}/master.m3u8")),
            escape(&format!("{base}/manifest.mpd")),
        );
        let _ = write!(
            scripts,
            "<script src=\"{}\"></script>\n<script src=\"{}\"></script>\n<script>{PLAYERS_JS}</script>\n",
            escape(&preview.hls_js_url),
            escape(&preview.dash_js_url),
        );
    }
    if !parsed.as_str().to_ascii_lowercase().ends_with(".json") {
        let source = app.catalog.source().clone();
        let settings = &app.settings;
        let text = match describe(
            &source,
            &parsed,
            &settings.limits,
            settings.segment_duration_ms,
            settings.protect.encryption,
        )
        .await
        {
            Ok(text) => text,
            Err(DetailError::Package(edits, e)) => format!("{edits}cannot package: {e}\n"),
            Err(e) => format!("cannot read: {e}\n"),
        };
        let _ = write!(
            body,
            "<h2>inspect</h2>\n<pre id=\"inspect\">{}</pre>\n",
            escape(&text)
        );
    }
    page(key, &body, &scripts)
}

/// The server's answer: status and reason, or the variants, renditions and ad breaks.
fn answer_html(body: &mut String, report: &KeyReport) {
    if let Some(reason) = &report.reason {
        let _ = writeln!(
            body,
            "<p class=\"reason\" id=\"reason\">{} {}</p>",
            report.status(),
            escape(reason)
        );
        return;
    }
    let _ = writeln!(
        body,
        "<p id=\"status\">master.m3u8 {} &middot; manifest.mpd {}</p>",
        report.hls_status, report.dash_status
    );
    body.push_str(
        "<h2>variants</h2>\n<table id=\"variants\"><tr><th>bandwidth</th><th>resolution</th>\
         <th>codecs</th><th>frame rate</th><th>range</th><th>audio</th><th>subtitles</th>\
         <th>captions</th></tr>\n",
    );
    let cell = |v: &Option<String>| escape(v.as_deref().unwrap_or("-"));
    for v in &report.variants {
        let _ = writeln!(
            body,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td></tr>",
            v.bandwidth,
            cell(&v.resolution),
            cell(&v.codecs),
            cell(&v.frame_rate),
            cell(&v.video_range),
            cell(&v.audio),
            cell(&v.subtitles),
            cell(&v.closed_captions),
        );
    }
    body.push_str("</table>\n");
    if !report.renditions.is_empty() {
        body.push_str(
            "<h2>languages and subtitles</h2>\n<table id=\"renditions\"><tr><th>type</th>\
             <th>group</th><th>language</th><th>name</th><th>default</th>\
             <th>accessibility</th></tr>\n",
        );
        for r in &report.renditions {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&r.kind),
                escape(&r.group),
                cell(&r.language),
                cell(&r.name),
                if r.default { "yes" } else { "" },
                escape(&accessibility(r)),
            );
        }
        body.push_str("</table>\n");
    }
    if !report.breaks.is_empty() {
        body.push_str(
            "<h2>ad breaks</h2>\n<table id=\"breaks\"><tr><th>id</th><th>cut at</th>\
             <th>duration</th><th>asset</th></tr>\n",
        );
        for b in &report.breaks {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}.{:03} s</td><td>{} s</td><td>{}</td></tr>",
                escape(&b.id),
                b.cut_ms / 1000,
                b.cut_ms % 1000,
                cell(&b.duration),
                cell(&b.asset),
            );
        }
        body.push_str("</table>\n");
    }
}

/// What a rendition says for accessibility, in words: its caption channel, audio
/// description, SDH; empty when nothing.
fn accessibility(r: &super::probe::Rendition) -> String {
    let mut words: Vec<&str> = Vec::new();
    if let Some(id) = r.instream_id.as_deref() {
        words.push(id);
    }
    let characteristics = r.characteristics.as_deref().unwrap_or("");
    if characteristics.contains("public.accessibility.describes-video") {
        words.push("audio description");
    }
    if characteristics.contains("public.accessibility.transcribes-spoken-dialog") {
        words.push("SDH");
    }
    words.join(", ")
}

/// A whole HTML document around `body`, with `scripts` at the end.
fn page(title: &str, body: &str, scripts: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <link rel=\"icon\" href=\"data:,\">\
         <title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}{scripts}</body></html>\n",
        escape(title)
    )
}

/// HTML-escape text for an element's content or a quoted attribute value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:15px system-ui,sans-serif;margin:1.5em;max-width:1100px}\
a.title{font-family:monospace}li{margin:.2em 0}table{border-collapse:collapse;margin:.5em 0}\
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;font-size:13px}\
.reason{color:#a00;font-weight:bold}pre{background:#f4f4f4;padding:.6em;overflow:auto;font-size:12px}\
#players{display:flex;gap:1em;flex-wrap:wrap}figure{margin:0}video{width:480px;background:#000}";

/// Starts both players on the URLs of `#players`' data attributes; a player's fatal
/// error is written next to it (`#hls-state`, `#dash-state`).
const PLAYERS_JS: &str = r#"
(function () {
  var box = document.getElementById('players');
  if (!box) return;
  function state(id, text) { document.getElementById(id).textContent = text; }
  var hlsVideo = document.getElementById('hls-video');
  if (window.Hls && window.Hls.isSupported()) {
    var hls = new window.Hls();
    hls.on(window.Hls.Events.ERROR, function (_e, data) {
      if (data.fatal) state('hls-state', 'error: ' + data.details);
    });
    hls.loadSource(box.dataset.hls);
    hls.attachMedia(hlsVideo);
  } else if (hlsVideo.canPlayType('application/vnd.apple.mpegurl')) {
    hlsVideo.src = box.dataset.hls;
  } else {
    state('hls-state', 'hls.js did not load');
  }
  var dashVideo = document.getElementById('dash-video');
  if (window.dashjs) {
    var player = window.dashjs.MediaPlayer().create();
    player.on('error', function (e) {
      state('dash-state', 'error: ' + ((e.error && e.error.message) || 'playback failed'));
    });
    player.initialize(dashVideo, box.dataset.dash, true);
  } else {
    state('dash-state', 'dash.js did not load');
  }
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_text_and_quoted_attributes() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn the_policy_allows_scripts_only_from_the_players_origins() {
        let policy = content_security_policy(&Settings::default());
        assert!(policy.contains(
            "script-src 'unsafe-inline' https://cdn.jsdelivr.net https://cdn.jsdelivr.net;"
        ));
        assert!(policy.contains("default-src 'none'"));
    }

    #[test]
    fn page_links_carry_the_key_form_encoded() {
        let href = Query::href("shows", None, Some("a b/é&x.mp4"));
        assert_eq!(href, "/?prefix=shows&key=a+b%2F%C3%A9%26x.mp4");
        let q = Query::parse(href.trim_start_matches("/?"));
        assert_eq!(q.key.as_deref(), Some("a b/é&x.mp4"));
        assert_eq!(q.prefix, "shows");
    }
}
