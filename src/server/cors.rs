//! CORS on every answer: browser players fetch cross-origin, so every answer allows any
//! origin (`*`) unless a list of origins is configured, which narrows it to the request's
//! origin when listed (and to none when not).

use http::header::{self, HeaderMap, HeaderValue};

/// The CORS headers every answer carries.
pub fn add_cors(headers: &mut HeaderMap) {
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("Content-Length, Content-Range, ETag"),
    );
}

/// Replace `*` by the request's `origin` when it is on the list `allowed` (and drop the
/// header when it is not); nothing changes when the list is empty.
pub fn narrow_cors(allowed: &[String], origin: Option<&HeaderValue>, headers: &mut HeaderMap) {
    if allowed.is_empty() {
        return;
    }
    headers.remove(header::ACCESS_CONTROL_ALLOW_ORIGIN);
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
    let listed = origin.filter(|o| o.to_str().is_ok_and(|o| allowed.iter().any(|a| a == o)));
    if let Some(origin) = listed {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    }
}
