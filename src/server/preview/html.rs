//! The HTML pieces the preview's pages share: the page around a body, escaping, the
//! players' and the page's own script tags, the query a page is asked with and the links
//! it writes (carrying the viewer's token). Below `page.rs` (which answers and guards),
//! `catalogue.rs` and `title.rs` (which write the content), so none of them import each
//! other in a circle.

use super::assets::{Asset, DASH_JS, HLS_JS, PAGE_CSS, PAGE_JS};
use super::probe::Caller;
use crate::config::PreviewOptions;

/// Where the page loads a player from: the setting when it names a URL, else vodpack's own
/// copy.
pub fn player_url(setting: &str, own: &'static Asset) -> String {
    match setting.trim() {
        "" => own.path(),
        url => url.to_owned(),
    }
}

/// The players' script tags, then the page's own.
pub fn player_scripts(preview: &PreviewOptions) -> String {
    format!(
        "<script src=\"{}\"></script>\n<script src=\"{}\"></script>\n{}",
        escape(&player_url(&preview.hls_js_url, &HLS_JS)),
        escape(&player_url(&preview.dash_js_url, &DASH_JS)),
        page_script(),
    )
}

/// The page's own script tag.
pub fn page_script() -> String {
    format!("<script src=\"{}\"></script>\n", escape(&PAGE_JS.path()))
}

/// The page's query: the folder listed, where the page starts, the title picked, and the
/// token it was given (carried into its links).
#[derive(Debug, Default)]
pub struct Query {
    /// The key prefix listed (no leading or trailing slash).
    pub prefix: String,
    /// The key the listing starts after.
    pub after: Option<String>,
    /// The title shown.
    pub key: Option<String>,
    /// The signed-URL token.
    pub token: Option<String>,
}

impl Query {
    /// The query of a request for the page.
    pub fn parse(query: &str) -> Self {
        let mut parsed = Query::default();
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            let value = value.into_owned();
            match name.as_ref() {
                "prefix" => parsed.prefix = value.trim_matches('/').to_owned(),
                "after" if !value.is_empty() => parsed.after = Some(value),
                "key" if !value.is_empty() => parsed.key = Some(value),
                "token" if !value.is_empty() => parsed.token = Some(value),
                _ => {}
            }
        }
        parsed
    }

    /// `/?...` for these values, with `token` when there is one.
    pub fn href(
        prefix: &str,
        after: Option<&str>,
        key: Option<&str>,
        token: Option<&str>,
    ) -> String {
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
        if let Some(token) = token {
            query.append_pair("token", token);
        }
        format!("/?{}", query.finish())
    }
}

/// `path` with `?token=` when the caller has one (to write into the page).
pub fn with_token(path: String, caller: &Caller) -> String {
    match &caller.token {
        Some(token) => format!(
            "{path}?{}",
            url::form_urlencoded::Serializer::new(String::new())
                .append_pair("token", token)
                .finish()
        ),
        None => path,
    }
}

/// A whole HTML document around `body`, with `scripts` at the end.
pub fn page(title: &str, body: &str, scripts: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <link rel=\"icon\" href=\"data:,\">\
         <link rel=\"stylesheet\" href=\"{}\">\
         <title>{}</title></head>\n<body>\n{body}{scripts}</body></html>\n",
        escape(&PAGE_CSS.path()),
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
    fn page_links_carry_the_key_form_encoded() {
        let href = Query::href("shows", None, Some("a b/é&x.mp4"), None);
        assert_eq!(href, "/?prefix=shows&key=a+b%2F%C3%A9%26x.mp4");
        let q = Query::parse(href.trim_start_matches("/?"));
        assert_eq!(q.key.as_deref(), Some("a b/é&x.mp4"));
        assert_eq!(q.prefix, "shows");
    }
}
