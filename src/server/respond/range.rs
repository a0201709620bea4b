//! Byte `Range` requests (RFC 9110 14.2): one range per request.
//!
//! `bytes=a-b`, `bytes=a-` and `bytes=-n` are served as 206. A range that starts past the
//! end is 416 with `Content-Range: bytes */len`. Several ranges (multipart answers) and
//! malformed headers are refused with 416 too, rather than silently answered in full, so
//! a client that depends on them learns at once (a CDN asks for one range).

/// The outcome of reading a `Range` header against a body of `len` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeRequest {
    /// No `Range` header: send everything.
    Full,
    /// Send bytes `start..end` (end exclusive) as 206.
    Partial { start: u64, end: u64 },
    /// Answer 416.
    Unsatisfiable,
}

/// Longest `Range` header looked at.
const MAX_RANGE_HEADER: usize = 256;

/// Interpret `header` (the `Range` value, if any) for a body of `len` bytes.
pub fn parse_range(header: Option<&str>, len: u64) -> RangeRequest {
    let Some(header) = header else {
        return RangeRequest::Full;
    };
    if header.len() > MAX_RANGE_HEADER {
        return RangeRequest::Unsatisfiable;
    }
    let Some(spec) = header.trim().strip_prefix("bytes=") else {
        return RangeRequest::Unsatisfiable;
    };
    if spec.contains(',') {
        return RangeRequest::Unsatisfiable;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return RangeRequest::Unsatisfiable;
    };
    let number = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    match (first.is_empty(), last.is_empty()) {
        // bytes=-n: the last n bytes.
        (true, false) => match number(last) {
            Some(n) if n > 0 && len > 0 => RangeRequest::Partial {
                start: len.saturating_sub(n),
                end: len,
            },
            _ => RangeRequest::Unsatisfiable,
        },
        // bytes=a-
        (false, true) => match number(first) {
            Some(a) if a < len => RangeRequest::Partial { start: a, end: len },
            _ => RangeRequest::Unsatisfiable,
        },
        // bytes=a-b
        (false, false) => match (number(first), number(last)) {
            (Some(a), Some(b)) if a <= b && a < len => RangeRequest::Partial {
                start: a,
                end: b.saturating_add(1).min(len),
            },
            _ => RangeRequest::Unsatisfiable,
        },
        (true, true) => RangeRequest::Unsatisfiable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_ranges_in_their_three_forms() {
        assert_eq!(parse_range(None, 10), RangeRequest::Full);
        assert_eq!(
            parse_range(Some("bytes=2-4"), 10),
            RangeRequest::Partial { start: 2, end: 5 }
        );
        assert_eq!(
            parse_range(Some("bytes=7-"), 10),
            RangeRequest::Partial { start: 7, end: 10 }
        );
        assert_eq!(
            parse_range(Some("bytes=-3"), 10),
            RangeRequest::Partial { start: 7, end: 10 }
        );
        assert_eq!(
            parse_range(Some("bytes=5-100"), 10),
            RangeRequest::Partial { start: 5, end: 10 }
        );
    }

    #[test]
    fn unsatisfiable_multiple_and_malformed_ranges_are_416() {
        for h in [
            "bytes=10-",
            "bytes=5-2",
            "bytes=0-1,3-4",
            "items=0-1",
            "bytes=-",
            "bytes=a-b",
            "bytes=-0",
            "bytes=+1-2",
            "bytes=99999999999999999999999-",
        ] {
            assert_eq!(parse_range(Some(h), 10), RangeRequest::Unsatisfiable, "{h}");
        }
    }
}
