//! `ObjectKey`: a validated, relative object name that can never climb out of a root.
//!
//! Keys come from request URLs (already percent-decoded by the router) and name an object
//! under a folder or a bucket prefix. Validation is lexical and strict, so that no backend
//! has to think about `..`: a key is one or more `/`-separated segments, none empty, none
//! `.` or `..`, with no backslash, NUL or other control character, at most
//! [`ObjectKey::MAX_BYTES`] long. Symlinks are the local backend's business (it checks the
//! resolved path against the root).

use std::fmt;

/// Why a key was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// Empty key.
    #[error("empty key")]
    Empty,
    /// Longer than the limit.
    #[error("key longer than {max} bytes")]
    TooLong { max: usize },
    /// A segment that is empty, `.` or `..`, or an absolute path.
    #[error("key has an empty, '.' or '..' segment")]
    BadSegment,
    /// A backslash, NUL or control character.
    #[error("key has a forbidden character")]
    ForbiddenCharacter,
}

/// A relative object key, validated as described in the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey(String);

impl ObjectKey {
    /// Longest key accepted, in bytes (S3's own limit is 1024).
    pub const MAX_BYTES: usize = 1024;

    /// Validate `key`.
    ///
    /// # Errors
    /// A [`KeyError`] saying which rule the key breaks.
    pub fn parse(key: &str) -> Result<Self, KeyError> {
        if key.is_empty() {
            return Err(KeyError::Empty);
        }
        if key.len() > Self::MAX_BYTES {
            return Err(KeyError::TooLong {
                max: Self::MAX_BYTES,
            });
        }
        if key.chars().any(|c| c == '\\' || c.is_control()) {
            return Err(KeyError::ForbiddenCharacter);
        }
        if key
            .split('/')
            .any(|segment| segment.is_empty() || segment == "." || segment == "..")
        {
            return Err(KeyError::BadSegment);
        }
        Ok(Self(key.to_owned()))
    }

    /// The key as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the key ends in `suffix`, ASCII case ignored (`A.MP4` ends in `.mp4`).
    pub fn ends_with_ignore_case(&self, suffix: &str) -> bool {
        (self.0.len().checked_sub(suffix.len()))
            .and_then(|at| self.0.as_bytes().get(at..))
            .is_some_and(|tail| tail.eq_ignore_ascii_case(suffix.as_bytes()))
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suffix_matches_in_any_ascii_case_and_never_panics() {
        let key = |k| ObjectKey::parse(k).unwrap();
        assert!(key("dir/A.MP4").ends_with_ignore_case(".mp4"));
        assert!(key("a.Json").ends_with_ignore_case(".json"));
        assert!(!key("a.mp4").ends_with_ignore_case(".json"));
        assert!(!key("mp4").ends_with_ignore_case(".mp4"));
        // A suffix boundary inside a multi-byte character is simply no match.
        assert!(key("vidéo.MP4").ends_with_ignore_case(".mp4"));
        assert!(!key("é").ends_with_ignore_case("x"));
        assert!(!key("é").ends_with_ignore_case("\u{a9}"));
    }

    #[test]
    fn plain_nested_and_unicode_keys_are_accepted() {
        for key in ["a.mp4", "dir/sub/a b.mp4", "vidéo/ünï.mp4", "x..y.mp4"] {
            assert_eq!(ObjectKey::parse(key).map(|k| k.0), Ok(key.to_owned()));
        }
    }

    #[test]
    fn keys_that_could_leave_the_root_are_refused() {
        for key in [
            "",
            "/etc/passwd",
            "../a.mp4",
            "a/../../b.mp4",
            "a/./b.mp4",
            "a//b.mp4",
            "a\\..\\b.mp4",
            "a\0.mp4",
            "dir/",
        ] {
            assert!(ObjectKey::parse(key).is_err(), "{key:?} accepted");
        }
        assert_eq!(
            ObjectKey::parse(&"a".repeat(1025)),
            Err(KeyError::TooLong { max: 1024 })
        );
    }
}
