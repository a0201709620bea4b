//! Entity tags and the conditional requests that compare them (RFC 9110 13.1): If-Match
//! (strong comparison, 412 when nothing matches), If-None-Match (weak, 304) and If-Range
//! (strong: a Range is honoured only for the current entity).

use crate::package::Resource;

/// The entity tag of `resource` in the output with version token `token`: `"TOKEN-NAME"`.
pub fn entity_tag(token: &str, resource: &Resource) -> String {
    use std::fmt::Write;
    let mut tag = String::with_capacity(token.len() + 32);
    tag.push('"');
    tag.push_str(token);
    tag.push('-');
    let _ = write!(tag, "{resource}");
    tag.push('"');
    tag
}

/// Whether the `If-Match`/`If-None-Match` list `list` names `etag`: `*` matches anything;
/// the weak comparison ignores a `W/` prefix on either side (RFC 9110 8.8.3.2).
pub fn etag_list_matches(list: &str, etag: &str, weak: bool) -> bool {
    let bare = |t: &str| -> String {
        let t = t.trim();
        if weak {
            t.trim_start_matches("W/").to_owned()
        } else {
            t.to_owned()
        }
    };
    let ours = bare(etag);
    list.split(',').any(|t| {
        let t = t.trim();
        // The strong comparison never matches a weak tag.
        t == "*" || ((weak || !t.starts_with("W/")) && bare(t) == ours)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_strong_comparison_never_matches_a_weak_tag() {
        assert!(etag_list_matches("\"a-b\"", "\"a-b\"", false));
        assert!(!etag_list_matches("W/\"a-b\"", "\"a-b\"", false));
        assert!(etag_list_matches("W/\"a-b\"", "\"a-b\"", true));
    }

    #[test]
    fn a_list_matches_when_any_of_it_does() {
        assert!(etag_list_matches("\"x\", \"a-b\"", "\"a-b\"", false));
        assert!(etag_list_matches("*", "\"a-b\"", false));
        assert!(!etag_list_matches("\"x\", \"y\"", "\"a-b\"", true));
    }

    #[test]
    fn a_tag_names_the_version_and_the_resource() {
        let tag = entity_tag("0123456789abcdef", &Resource::Mpd);
        assert_eq!(tag, "\"0123456789abcdef-manifest.mpd\"");
    }
}
