//! The preview page's static files, built into the binary: the two web players' browser
//! builds (`assets/players/`, the versions `tests/players/package-lock.json` pins, checked
//! byte for byte against it by `tests/preview.rs`) and the page's own script and style
//! (`assets/preview/`). The page works with no internet access and its content security
//! policy can allow scripts from `'self'` only.
//!
//! Each file is served at `/preview/static/HASH/NAME`, HASH a hash of its bytes taken once
//! at first use, so a URL names one content forever: cached for a year as immutable, with
//! the hash as its entity tag. Another HASH is 404. The files are public code and say
//! nothing of the catalogue, so they need no token when URLs are signed.

use std::sync::LazyLock;

use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};

use crate::server::body::ResponseBody;
use crate::server::respond::answer::IMMUTABLE;

/// Where the static files live: `/preview/static/HASH/NAME`.
pub const STATIC_PREFIX: &str = "/preview/static/";

/// One embedded file.
#[derive(Debug)]
pub struct Asset {
    /// Its file name, the last segment of its URL.
    pub name: &'static str,
    /// Its `content-type`.
    pub content_type: &'static str,
    /// Its bytes.
    pub bytes: &'static [u8],
}

const JS: &str = "text/javascript; charset=utf-8";

/// hls.js's browser build (`hls.js/dist/hls.min.js`).
pub static HLS_JS: Asset = Asset {
    name: "hls.min.js",
    content_type: JS,
    bytes: include_bytes!("../../../assets/players/hls.min.js"),
};

/// dash.js's browser build (`dashjs/dist/modern/umd/dash.all.min.js`).
pub static DASH_JS: Asset = Asset {
    name: "dash.all.min.js",
    content_type: JS,
    bytes: include_bytes!("../../../assets/players/dash.all.min.js"),
};

/// The page's script: players, timeline scrubbing, the catalogue's poster fallbacks.
pub static PAGE_JS: Asset = Asset {
    name: "page.js",
    content_type: JS,
    bytes: include_bytes!("../../../assets/preview/page.js"),
};

/// The page's style sheet.
pub static PAGE_CSS: Asset = Asset {
    name: "page.css",
    content_type: "text/css; charset=utf-8",
    bytes: include_bytes!("../../../assets/preview/page.css"),
};

/// Every embedded file, with its hash (16 hex digits of FNV-1a 64 over its bytes).
static HASHED: LazyLock<[(&'static Asset, String); 4]> = LazyLock::new(|| {
    [&HLS_JS, &DASH_JS, &PAGE_JS, &PAGE_CSS]
        .map(|asset| (asset, format!("{:016x}", fnv1a(asset.bytes))))
});

/// FNV-1a, 64 bits: a content fingerprint for URLs, not a security measure.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

impl Asset {
    /// The path it is served at: `/preview/static/HASH/NAME`.
    pub fn path(&'static self) -> String {
        let hash = (HASHED.iter())
            .find(|(asset, _)| std::ptr::eq(*asset, self))
            .map_or("0", |(_, hash)| hash.as_str());
        format!("{STATIC_PREFIX}{hash}/{}", self.name)
    }
}

/// The answer for a static file's path, or `None` when `req` is not for one (another path
/// or method), to be routed as usual. A path under the prefix that names no file (or an
/// old hash) is 404.
pub fn static_answer<B>(req: &Request<B>) -> Option<Response<ResponseBody>> {
    let rest = req.uri().path().strip_prefix(STATIC_PREFIX)?;
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return None;
    }
    let found = rest.split_once('/').and_then(|(hash, name)| {
        (HASHED.iter()).find(|(asset, h)| h == hash && asset.name == name)
    });
    let Some((asset, hash)) = found else {
        let mut response = Response::new(ResponseBody::full(Bytes::from_static(b"not found\n")));
        *response.status_mut() = StatusCode::NOT_FOUND;
        return Some(response);
    };
    let etag = format!("\"{hash}\"");
    let unchanged = (req.headers().get(header::IF_NONE_MATCH))
        .and_then(|v| v.to_str().ok())
        .is_some_and(|list| list.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut response = match unchanged {
        true => {
            let mut r = Response::new(ResponseBody::Empty);
            *r.status_mut() = StatusCode::NOT_MODIFIED;
            r
        }
        false => Response::new(ResponseBody::full(Bytes::from_static(asset.bytes))),
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(IMMUTABLE));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str) -> Response<ResponseBody> {
        let req = Request::get(path).body(()).expect("request");
        static_answer(&req).expect("a static path")
    }

    #[test]
    fn each_file_is_served_at_its_hash_and_cached_as_immutable() {
        let path = HLS_JS.path();
        assert!(path.starts_with("/preview/static/") && path.ends_with("/hls.min.js"));
        let answer = get(&path);
        assert_eq!(answer.status(), StatusCode::OK);
        assert_eq!(answer.headers()[header::CACHE_CONTROL], IMMUTABLE);
        assert_eq!(answer.headers()[header::CONTENT_TYPE], JS);
        assert_ne!(
            DASH_JS.path(),
            path.replace("hls.min.js", "dash.all.min.js")
        );
    }

    #[test]
    fn an_old_hash_or_another_name_is_404_and_other_paths_are_not_answered() {
        let stale = format!("{STATIC_PREFIX}0123456789abcdef/hls.min.js");
        assert_eq!(get(&stale).status(), StatusCode::NOT_FOUND);
        let other = PAGE_JS.path().replace("page.js", "../../etc/passwd");
        assert_eq!(get(&other).status(), StatusCode::NOT_FOUND);
        let req = Request::get("/vod/a.mp4/master.m3u8")
            .body(())
            .expect("request");
        assert!(static_answer(&req).is_none());
    }

    #[test]
    fn a_matching_entity_tag_is_not_modified() {
        let path = PAGE_CSS.path();
        let etag = get(&path).headers()[header::ETAG].clone();
        let req = Request::get(&path)
            .header(header::IF_NONE_MATCH, etag)
            .body(())
            .expect("request");
        let answer = static_answer(&req).expect("answered");
        assert_eq!(answer.status(), StatusCode::NOT_MODIFIED);
    }
}
