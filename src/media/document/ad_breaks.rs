//! Ad breaks: a document's `"breaks"` and `"program_date_time"`, checked as
//! written. Whether each break falls inside the title, and where it is cut (the key frame
//! at or before `at`), is known only once the files are read: `package::break_cuts` decides.
//!
//! Everything here ends up in manifest text (HLS quoted strings, XML attributes), so ids
//! and asset URIs are held to a small alphabet rather than escaped later.

use serde::Deserialize;

use super::DocumentError;

/// Most breaks a document may name: far past any real schedule (a feature film carries a
/// handful), small enough that every check here is cheap.
pub const MAX_BREAKS: usize = 64;
/// Longest break, ms (10 minutes): an ad pod longer than that is a programming mistake.
pub const MAX_BREAK_DURATION_MS: u64 = 600_000;
/// Latest `at`, ms (as `package::MAX_CLIP_MS`): past any media, every tick conversion fits.
pub const MAX_BREAK_AT_MS: u64 = 1 << 40;
/// Longest break id, bytes.
const MAX_ID_BYTES: usize = 64;
/// Longest asset URI, bytes.
const MAX_URI_BYTES: usize = 2048;

/// One break as written. Closed: a field this version does not know is refused rather
/// than silently not signalled.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBreak {
    id: String,
    at: u64,
    duration: u64,
    #[serde(default)]
    asset_uri: Option<String>,
    #[serde(default)]
    asset_list: Option<String>,
}

/// What plays in a break: one asset (HLS `X-ASSET-URI`, a multivariant playlist) or an
/// asset list (`X-ASSET-LIST`, a JSON list the player fetches when the break comes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BreakAsset {
    /// `"asset_uri"`.
    Uri(String),
    /// `"asset_list"`.
    List(String),
}

/// One ad break, checked: an insertion point on the title's presentation timeline (the
/// timeline of `clip`, before the document's own clip), where the ad plays and the title
/// then resumes where it left off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentBreak {
    /// Where the break is in the document, for messages: `breaks[1] (mid-1)`.
    pub entry: String,
    /// Its id: 1 to 64 of `A-Z a-z 0-9 . _ : -`, unique in the document.
    pub id: String,
    /// Requested time, ms of the title's presentation; it is cut at the key frame at or
    /// before it.
    pub at_ms: u64,
    /// How long the ad plays, ms: 1 to [`MAX_BREAK_DURATION_MS`].
    pub duration_ms: u64,
    /// What plays.
    pub asset: BreakAsset,
}

/// A document's `"program_date_time"`: the wall-clock time of the title's presentation
/// time 0, ms since 1970-01-01T00:00:00Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProgramDateTime(pub i64);

/// Check `list`, the document's breaks, in document order (any order is accepted; they
/// must not overlap).
pub(super) fn check_breaks(list: Vec<RawBreak>) -> Result<Vec<DocumentBreak>, DocumentError> {
    if list.len() > MAX_BREAKS {
        return Err(bad(
            "breaks",
            format!("{} breaks, over the limit of {MAX_BREAKS}", list.len()),
        ));
    }
    let mut breaks: Vec<DocumentBreak> = Vec::with_capacity(list.len());
    for (n, raw) in list.into_iter().enumerate() {
        let entry = format!("breaks[{n}]");
        check_id(&entry, &raw.id)?;
        let entry = format!("{entry} ({})", raw.id);
        if let Some(other) = breaks.iter().find(|b| b.id == raw.id) {
            return Err(bad(&entry, format!("id is also {}'s", other.entry)));
        }
        if raw.at > MAX_BREAK_AT_MS {
            return Err(bad(&entry, format!("at is past {MAX_BREAK_AT_MS} ms")));
        }
        if raw.duration == 0 || raw.duration > MAX_BREAK_DURATION_MS {
            return Err(bad(
                &entry,
                format!(
                    "duration is {} ms; a break lasts 1 to {MAX_BREAK_DURATION_MS} ms",
                    raw.duration
                ),
            ));
        }
        let asset = match (raw.asset_uri, raw.asset_list) {
            (Some(uri), None) => BreakAsset::Uri(check_uri(&entry, "asset_uri", uri)?),
            (None, Some(list)) => BreakAsset::List(check_uri(&entry, "asset_list", list)?),
            (Some(_), Some(_)) => {
                return Err(bad(
                    &entry,
                    "names both asset_uri and asset_list (one only)",
                ))
            }
            (None, None) => return Err(bad(&entry, "names neither asset_uri nor asset_list")),
        };
        breaks.push(DocumentBreak {
            entry,
            id: raw.id,
            at_ms: raw.at,
            duration_ms: raw.duration,
            asset,
        });
    }
    // Overlap on the presentation timeline, [at, at + duration), whatever the order.
    let mut order: Vec<&DocumentBreak> = breaks.iter().collect();
    order.sort_by_key(|b| b.at_ms);
    for pair in order.windows(2) {
        if let [a, b] = pair {
            let end = a.at_ms + a.duration_ms;
            if b.at_ms < end {
                return Err(bad(
                    &b.entry,
                    format!(
                        "at {} ms overlaps {}, which runs from {} to {end} ms",
                        b.at_ms, a.entry, a.at_ms
                    ),
                ));
            }
        }
    }
    Ok(breaks)
}

fn bad(entry: &str, reason: impl Into<String>) -> DocumentError {
    DocumentError::BadEntry {
        entry: entry.to_owned(),
        reason: reason.into(),
    }
}

/// An id goes into HLS `ID="..."` and names the SCTE-35 event: a small alphabet, so no
/// quoting question arises anywhere.
fn check_id(entry: &str, id: &str) -> Result<(), DocumentError> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ID_BYTES
        && (id.bytes())
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(bad(
            entry,
            format!("id must be 1 to {MAX_ID_BYTES} of A-Z a-z 0-9 . _ : -"),
        ))
    }
}

/// An asset URI: absolute `http://` or `https://`, or a relative reference (RFC 3986 4.2),
/// which the server resolves against the title's media playlists as RFC 8216 4.1 says a
/// player resolves a playlist's URIs ([`BreakAsset::resolved_against`]): RFC 8216bis
/// Appendix D.2 has `X-ASSET-URI` absolute, and hls.js 1.7 resolves a relative one against
/// the page, not the playlist, so none is written as given. Printable ASCII without what
/// a quoted string or an XML attribute cannot hold, at most [`MAX_URI_BYTES`].
fn check_uri(entry: &str, field: &str, uri: String) -> Result<String, DocumentError> {
    let printable = (uri.bytes())
        .all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b'<' | b'>' | b'\\' | b'`'));
    if uri.is_empty() || uri.len() > MAX_URI_BYTES || !printable {
        return Err(bad(
            entry,
            format!(
                "{field} must be 1 to {MAX_URI_BYTES} bytes of printable ASCII without \
                 quotes, spaces or <>\\`"
            ),
        ));
    }
    if !has_scheme(&uri) {
        // A relative reference, resolved when the title's playlists are written.
        return Ok(uri);
    }
    let lower = uri.to_ascii_lowercase();
    let host = ["http://", "https://"]
        .iter()
        .find_map(|scheme| lower.strip_prefix(scheme));
    if host.is_none_or(|rest| rest.is_empty() || rest.starts_with('/')) {
        return Err(bad(
            entry,
            format!("{field} must be an http:// or https:// URI, or a reference relative to the title's playlists"),
        ));
    }
    Ok(uri)
}

/// Whether `uri` starts with a scheme (RFC 3986 3.1: `ALPHA *( ALPHA / DIGIT / "+" / "-"
/// / "." ) ":"`), so it is not a relative reference.
fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Stands for the server's own origin while a reference is resolved against a path.
const OWN_ORIGIN: &str = "http://vodpack.invalid";

impl BreakAsset {
    /// The URI as written in the document.
    pub fn uri(&self) -> &str {
        match self {
            Self::Uri(uri) | Self::List(uri) => uri,
        }
    }

    /// Whether the document gives it relative (to be resolved before it is written).
    pub fn is_relative(&self) -> bool {
        !has_scheme(self.uri())
    }

    /// The asset with a relative reference resolved against `base` (RFC 3986 5.2, as
    /// RFC 8216 4.1 resolves a playlist's URIs): `base` is the URI of the playlist that
    /// carries it, an absolute URI or an absolute path on this server (`/vod/KEY/vTOKEN/
    /// index-t1.m3u8`). The result is absolute, or an absolute path when `base` is one; an
    /// absolute asset is kept as written. `None` when the reference cannot be resolved
    /// or the result is no longer printable ASCII of at most [`MAX_URI_BYTES`].
    pub fn resolved_against(&self, base: &str) -> Option<BreakAsset> {
        // An absolute URI, or a network-path reference (`//host/a.m3u8`), which keeps the
        // scheme of whatever resolves it, is written as given.
        if !self.is_relative() || self.uri().starts_with("//") {
            return Some(self.clone());
        }
        let on_path = base.starts_with('/');
        let base = match on_path {
            true => url::Url::parse(&format!("{OWN_ORIGIN}{base}")).ok()?,
            false => url::Url::parse(base).ok()?,
        };
        let joined = base.join(self.uri()).ok()?;
        let text = joined.as_str();
        let text = match (on_path, text.strip_prefix(OWN_ORIGIN)) {
            (true, Some(path)) if path.starts_with('/') => path.to_owned(),
            _ => text.to_owned(),
        };
        let printable = (text.bytes())
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b'<' | b'>' | b'\\' | b'`'));
        if text.is_empty() || text.len() > MAX_URI_BYTES || !printable {
            return None;
        }
        Some(match self {
            Self::Uri(_) => Self::Uri(text),
            Self::List(_) => Self::List(text),
        })
    }
}

impl ProgramDateTime {
    /// Parse an RFC 3339 date-time (`2026-12-04T20:00:00Z`, `2026-12-04T21:00:00.250+01:00`;
    /// `t` and `z` in either case, fractions to any length, kept to the millisecond).
    ///
    /// # Errors
    /// A one-line reason naming `program_date_time`.
    pub fn parse(text: &str) -> Result<Self, DocumentError> {
        let malformed = || {
            bad(
                "program_date_time",
                format!("{text:?} is not an RFC 3339 date-time such as 2026-12-04T20:00:00Z"),
            )
        };
        parse_rfc3339(text).map(Self).ok_or_else(malformed)
    }

    /// This time plus `offset_ms` (which may be negative), as RFC 3339 in UTC with
    /// milliseconds: `2026-12-04T20:00:01.500Z`.
    pub fn format_after(self, offset_ms: i64) -> String {
        format_rfc3339(self.0.saturating_add(offset_ms))
    }
}

/// The fixed epoch used when a document gives no `program_date_time`:
/// 2000-01-01T00:00:00Z. Not 1970: hls.js takes a program date of 0 ms for none, and a
/// pre-roll before a clip's start would put the first segment before 1970.
pub const DEFAULT_PROGRAM_DATE_TIME: ProgramDateTime = ProgramDateTime(946_684_800_000);

/// Days from 1970-01-01 to the civil date (proleptic Gregorian).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count from 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(range)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    let sep = |i: usize, want: &[u8]| b.get(i).is_some_and(|c| want.contains(c));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let max_day = *month_days.get(usize::try_from(month - 1).ok()?)?;
    // RFC 3339 5.7: a leap second (60) is allowed; it is taken as the next second.
    if !(1..=max_day).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut i = 19;
    let mut millis = 0i64;
    if sep(i, b".") {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start || i - start > 9 {
            return None;
        }
        let fraction = std::str::from_utf8(b.get(start..i)?).ok()?;
        let padded = format!("{fraction:0<3}");
        millis = padded.get(..3)?.parse().ok()?;
    }
    let offset_minutes = match b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if i + 6 == b.len() && sep(i + 3, b":") => {
            let (h, m) = (digits(i + 1..i + 3)?, digits(i + 4..i + 6)?);
            if h > 23 || m > 59 {
                return None;
            }
            let minutes = h * 60 + m;
            if *sign == b'-' {
                -minutes
            } else {
                minutes
            }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(secs * 1000 + millis)
}

fn format_rfc3339(ms: i64) -> String {
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (year, month, day) = civil_from_days(days);
    let (hour, rest) = (rest / 3_600_000, rest % 3_600_000);
    let (minute, rest) = (rest / 60_000, rest % 60_000);
    let (second, millis) = (rest / 1000, rest % 1000);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_assets_resolve_against_the_playlist_as_rfc_3986_says() {
        let base = "/vod/shows/film.json/v0123456789abcdef/index.m3u8";
        let resolve = |uri: &str| {
            BreakAsset::Uri(uri.into())
                .resolved_against(base)
                .map(|a| a.uri().to_owned())
        };
        // RFC 3986 5.4's kinds: a sibling, dot segments, an absolute path, a query.
        assert_eq!(
            resolve("ad/master.m3u8").as_deref(),
            Some("/vod/shows/film.json/v0123456789abcdef/ad/master.m3u8")
        );
        assert_eq!(
            resolve("../../ad.mp4/master.m3u8").as_deref(),
            Some("/vod/shows/ad.mp4/master.m3u8")
        );
        assert_eq!(
            resolve("../../../../../../x.m3u8").as_deref(),
            Some("/x.m3u8"),
            "dot segments stop at the root"
        );
        assert_eq!(
            resolve("/ads/a.m3u8?b=1").as_deref(),
            Some("/ads/a.m3u8?b=1")
        );
        assert_eq!(
            resolve("//ads.example/a.m3u8").as_deref(),
            Some("//ads.example/a.m3u8")
        );
        assert_eq!(
            resolve("https://ads.example/a.m3u8").as_deref(),
            Some("https://ads.example/a.m3u8")
        );
        // Against an absolute playlist URI the result is absolute.
        let absolute = BreakAsset::List("../pod.json?b=mid".into())
            .resolved_against("https://cdn.example/vod/a.json/v0123456789abcdef/index-t1.m3u8");
        assert_eq!(
            absolute,
            Some(BreakAsset::List(
                "https://cdn.example/vod/a.json/pod.json?b=mid".into()
            ))
        );
    }

    #[test]
    fn a_scheme_other_than_http_is_refused_and_a_relative_reference_kept() {
        assert!(has_scheme("https://a/b"));
        assert!(has_scheme("javascript:alert(1)"));
        assert!(!has_scheme("../a.m3u8"));
        assert!(
            !has_scheme("/vod/a:b.mp4/master.m3u8"),
            "a colon after a slash"
        );
        assert!(check_uri("b", "asset_uri", "javascript:alert(1)".into()).is_err());
        assert!(check_uri("b", "asset_uri", "ftp://h/a".into()).is_err());
        assert_eq!(
            check_uri("b", "asset_uri", "../ad.mp4/master.m3u8".into())
                .ok()
                .as_deref(),
            Some("../ad.mp4/master.m3u8")
        );
    }

    #[test]
    fn dates_round_trip_through_rfc3339() {
        let cases = [
            ("1970-01-01T00:00:00Z", 0, "1970-01-01T00:00:00.000Z"),
            (
                "2000-01-01T00:00:00Z",
                946_684_800_000,
                "2000-01-01T00:00:00.000Z",
            ),
            (
                "2024-02-29T23:59:59.999z",
                1_709_251_199_999,
                "2024-02-29T23:59:59.999Z",
            ),
            (
                "2026-12-04t21:00:00.25+01:00",
                1_796_414_400_250,
                "2026-12-04T20:00:00.250Z",
            ),
            (
                "1969-12-31T23:59:59.5-00:00",
                -500,
                "1969-12-31T23:59:59.500Z",
            ),
        ];
        for (text, ms, formatted) in cases {
            let date = ProgramDateTime::parse(text).expect(text);
            assert_eq!(date.0, ms, "{text}");
            assert_eq!(date.format_after(0), formatted, "{text}");
        }
        assert_eq!(
            DEFAULT_PROGRAM_DATE_TIME.format_after(-1),
            "1999-12-31T23:59:59.999Z"
        );
    }

    #[test]
    fn bad_dates_are_refused() {
        for text in [
            "",
            "2026-12-04",
            "2026-12-04 20:00:00Z",
            "2026-13-04T20:00:00Z",
            "2026-02-29T20:00:00Z",
            "2026-12-04T24:00:00Z",
            "2026-12-04T20:00:00",
            "2026-12-04T20:00:00.Z",
            "2026-12-04T20:00:00+0100",
            "2026-12-04T20:00:00Zjunk",
            "+2026-12-04T20:00:00Z",
            "2026-12-04T20:00:00.1234567890Z",
        ] {
            assert!(ProgramDateTime::parse(text).is_err(), "{text:?}");
        }
    }

    fn raw(id: &str, at: u64, duration: u64) -> RawBreak {
        RawBreak {
            id: id.into(),
            at,
            duration,
            asset_uri: Some("https://ads.example/ad/master.m3u8".into()),
            asset_list: None,
        }
    }

    #[test]
    fn breaks_are_checked_one_by_one_then_for_overlap() {
        let ok = check_breaks(vec![raw("b", 60_000, 30_000), raw("a", 0, 15_000)]).expect("ok");
        assert_eq!(ok.len(), 2);
        let reason = |list: Vec<RawBreak>| check_breaks(list).expect_err("refused").to_string();
        assert_eq!(
            reason(vec![raw("a", 10_000, 30_000), raw("b", 39_999, 1000)]),
            "breaks[1] (b): at 39999 ms overlaps breaks[0] (a), which runs from 10000 to 40000 ms"
        );
        assert!(reason(vec![raw("a", 0, 1), raw("a", 5, 1)]).contains("id is also breaks[0] (a)'s"));
        assert!(reason(vec![raw("a b", 0, 1)]).contains("id must be"));
        assert!(reason(vec![raw("", 0, 1)]).contains("id must be"));
        assert!(reason(vec![raw("a", 0, 0)]).contains("a break lasts 1 to 600000 ms"));
        assert!(reason(vec![raw("a", 0, 600_001)]).contains("a break lasts"));
        let both = RawBreak {
            asset_list: Some("https://ads.example/list.json".into()),
            ..raw("a", 0, 1)
        };
        assert!(reason(vec![both]).contains("both asset_uri and asset_list"));
        let neither = RawBreak {
            asset_uri: None,
            ..raw("a", 0, 1)
        };
        assert!(reason(vec![neither]).contains("neither"));
        for uri in [
            "javascript:alert(1)",
            "https://ads.example/a\"b",
            "https://ads.example/a b",
            "",
            "file:///etc/passwd",
            "https:///path",
        ] {
            let bad = RawBreak {
                asset_uri: Some(uri.into()),
                ..raw("a", 0, 1)
            };
            assert!(check_breaks(vec![bad]).is_err(), "{uri:?}");
        }
        let many = (0..=MAX_BREAKS)
            .map(|n| raw(&format!("b{n}"), n as u64 * 10, 1))
            .collect();
        assert!(reason(many).contains("over the limit"));
    }
}
