//! Byte `Range` requests (RFC 9110 14.2), as a CDN in front sends them.
//!
//! `bytes=a-b`, `bytes=a-` and `bytes=-n` are served as 206; a set of ranges that
//! overlap or touch is coalesced into one (14.2 allows it). A range set none of whose
//! ranges can be served is 416 with `Content-Range: bytes */len`. What the RFC lets an
//! origin ignore is answered in full (200), as nginx does: a unit other than `bytes`
//! (14.2: MUST ignore), a header not of the form `bytes=...`, and several ranges that
//! stay apart (14.2: ignore or multipart; no player or CDN asks an origin for multipart
//! segments). A set whose spec is malformed (`bytes=a-b`) is 416 (14.2: ignore or reject).

/// The outcome of reading a `Range` header against a body of `len` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeRequest {
    /// No `Range` header, or one the RFC lets us ignore: send everything.
    Full,
    /// Send bytes `start..end` (end exclusive) as 206.
    Partial { start: u64, end: u64 },
    /// Answer 416.
    Unsatisfiable,
}

/// Longest `Range` header looked at; a longer one is ignored.
const MAX_RANGE_HEADER: usize = 256;

/// One `range-spec` read against a body of `len` bytes.
enum Spec {
    /// Bytes `start..end` of the body.
    Satisfiable(u64, u64),
    /// Well formed, but not within the body.
    Unsatisfiable,
}

/// Interpret `header` (the `Range` value, if any) for a body of `len` bytes.
pub fn parse_range(header: Option<&str>, len: u64) -> RangeRequest {
    let Some(header) = header else {
        return RangeRequest::Full;
    };
    if header.len() > MAX_RANGE_HEADER {
        return RangeRequest::Full;
    }
    // The unit is case-insensitive (14.1); anything but `bytes=` is ignored.
    let spec = match header.trim().split_at_checked(6) {
        Some((unit, spec)) if unit.eq_ignore_ascii_case("bytes=") => spec,
        _ => return RangeRequest::Full,
    };
    let mut served: Vec<(u64, u64)> = Vec::new();
    // A list (RFC 9110 5.6.1): empty elements and whitespace around commas are allowed.
    for element in spec.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        match read_spec(element, len) {
            Some(Spec::Satisfiable(start, end)) => served.push((start, end)),
            Some(Spec::Unsatisfiable) => {}
            None => return RangeRequest::Unsatisfiable,
        }
        if served.len() > 64 {
            // More ranges than any client needs: answered whole.
            return RangeRequest::Full;
        }
    }
    served.sort_unstable();
    let mut merged = served.into_iter();
    let Some((start, mut end)) = merged.next() else {
        return RangeRequest::Unsatisfiable;
    };
    for (next_start, next_end) in merged {
        if next_start > end {
            // Ranges that stay apart would need a multipart answer.
            return RangeRequest::Full;
        }
        end = end.max(next_end);
    }
    RangeRequest::Partial { start, end }
}

/// One `range-spec`: `None` when it is malformed.
fn read_spec(element: &str, len: u64) -> Option<Spec> {
    let (first, last) = element.split_once('-')?;
    let number = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    Some(match (first.is_empty(), last.is_empty()) {
        // bytes=-n: the last n bytes.
        (true, false) => match number(last)? {
            n if n > 0 && len > 0 => Spec::Satisfiable(len.saturating_sub(n), len),
            _ => Spec::Unsatisfiable,
        },
        // bytes=a-
        (false, true) => match number(first)? {
            a if a < len => Spec::Satisfiable(a, len),
            _ => Spec::Unsatisfiable,
        },
        // bytes=a-b
        (false, false) => {
            let (a, b) = (number(first)?, number(last)?);
            if a > b {
                return None;
            }
            if a < len {
                Spec::Satisfiable(a, b.saturating_add(1).min(len))
            } else {
                Spec::Unsatisfiable
            }
        }
        (true, true) => return None,
    })
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
    fn unsatisfiable_and_malformed_ranges_are_416() {
        for h in [
            "bytes=10-",
            "bytes=5-2",
            "bytes=-",
            "bytes=a-b",
            "bytes=-0",
            "bytes=+1-2",
            "bytes=99999999999999999999999-",
            "bytes=10-12,20-",
            "bytes=",
        ] {
            assert_eq!(parse_range(Some(h), 10), RangeRequest::Unsatisfiable, "{h}");
        }
    }

    #[test]
    fn what_the_rfc_lets_an_origin_ignore_is_answered_whole() {
        for h in [
            "items=0-1",
            "bytes = 0-0",
            "0-1",
            "bytes=0-0,2-3",
            "bytes=0-1, 5-",
            "bits=0-1",
        ] {
            assert_eq!(parse_range(Some(h), 10), RangeRequest::Full, "{h}");
        }
    }

    #[test]
    fn ranges_that_overlap_or_touch_are_one_range() {
        assert_eq!(
            parse_range(Some("bytes=0-2,3-4"), 10),
            RangeRequest::Partial { start: 0, end: 5 }
        );
        assert_eq!(
            parse_range(Some("BYTES=4-6, 0-5"), 10),
            RangeRequest::Partial { start: 0, end: 7 }
        );
        // An unsatisfiable member is dropped from a set that has a satisfiable one.
        assert_eq!(
            parse_range(Some("bytes=20-30,2-4"), 10),
            RangeRequest::Partial { start: 2, end: 5 }
        );
    }
}
