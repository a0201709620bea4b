//! An answer's head as bytes: the status line, the response's headers as the service
//! set them, then what the connection adds (`connection` when it differs from the
//! version's default, `content-length` from the body when the service set none, `date`),
//! written into the connection's reusable write buffer.

use std::cell::RefCell;
use std::time::{Duration, SystemTime};

use http::header::{HeaderName, HeaderValue, CONNECTION, CONTENT_LENGTH};
use http::{HeaderMap, StatusCode, Version};

/// How the answer's body is framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFraming {
    /// No body at all: HEAD, 1xx, 204, 304.
    None,
    /// `len` bytes, said by `Content-Length`.
    Length(u64),
    /// Bytes until the connection closes (a body of unknown length).
    UntilClose,
}

/// Whether a status may carry a body (RFC 9110 6.4.1).
pub fn status_has_body(status: StatusCode) -> bool {
    !(status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED)
}

/// Write the head of an answer with `status`, `headers` and the body's own header
/// `lines` (see [`super::HeaderLines`]) to `out`.
///
/// `body_len` is the body's exact length when known; `keep_alive` whether the
/// connection stays open after it. Returns how the body is framed, which may turn
/// `keep_alive` off (a body of unknown length ends with the connection).
pub fn write(
    out: &mut Vec<u8>,
    version: Version,
    status: StatusCode,
    headers: &HeaderMap,
    lines: &[u8],
    body_len: Option<u64>,
    keep_alive: &mut bool,
) -> BodyFraming {
    if version == Version::HTTP_10 {
        out.extend_from_slice(b"HTTP/1.0 ");
    } else {
        out.extend_from_slice(b"HTTP/1.1 ");
    }
    out.extend_from_slice(status.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(status.canonical_reason().unwrap_or("").as_bytes());
    out.extend_from_slice(b"\r\n");
    let (mut declared, mut says_close, mut says_connection) = (None, false, false);
    for (name, value) in headers {
        push_line(out, name, value);
        if name == CONTENT_LENGTH {
            declared = (value.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
        } else if name == CONNECTION {
            says_connection = true;
            says_close |= super::head::lists(value, "close");
        }
    }
    out.extend_from_slice(lines);
    let framing = if !status_has_body(status) {
        BodyFraming::None
    } else if let Some(len) = declared {
        BodyFraming::Length(len)
    } else if let Some(len) = body_len {
        out.extend_from_slice(b"content-length: ");
        out.extend_from_slice(itoa(len, &mut [0u8; 20]));
        out.extend_from_slice(b"\r\n");
        BodyFraming::Length(len)
    } else {
        *keep_alive = false;
        BodyFraming::UntilClose
    };
    if says_close {
        *keep_alive = false;
    } else if !*keep_alive && version == Version::HTTP_11 {
        out.extend_from_slice(b"connection: close\r\n");
    } else if *keep_alive && version == Version::HTTP_10 && !says_connection {
        out.extend_from_slice(b"connection: keep-alive\r\n");
    }
    out.extend_from_slice(b"date: ");
    out.extend_from_slice(&http_date());
    out.extend_from_slice(b"\r\n\r\n");
    framing
}

/// One header line, `name: value\r\n`, onto `out`.
pub fn push_line(out: &mut Vec<u8>, name: &HeaderName, value: &HeaderValue) {
    out.extend_from_slice(name.as_str().as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// The head of an answer to a refused head: no body, and the connection closes.
pub fn write_refusal(out: &mut Vec<u8>, status: StatusCode) {
    let mut keep_alive = false;
    write(
        out,
        Version::HTTP_11,
        status,
        &HeaderMap::new(),
        &[],
        Some(0),
        &mut keep_alive,
    );
}

/// `n` in decimal, in `buf`.
fn itoa(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        if let Some(digit) = buf.get_mut(at) {
            *digit = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || at == 0 {
            return buf.get(at..).unwrap_or_default();
        }
    }
}

thread_local! {
    /// The `date` value of the current second, made once a second per worker thread.
    static DATE: RefCell<(u64, [u8; 29])> = const { RefCell::new((u64::MAX, [0u8; 29])) };
}

/// Now as an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`, always 29 bytes).
fn http_date() -> [u8; 29] {
    let now = SystemTime::now();
    let second = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    DATE.with(|cell| {
        let mut cached = cell.borrow_mut();
        if cached.0 != second {
            let text = httpdate::fmt_http_date(now);
            let mut bytes = [b' '; 29];
            for (slot, b) in bytes.iter_mut().zip(text.bytes()) {
                *slot = b;
            }
            *cached = (second, bytes);
        }
        cached.1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head_of(
        version: Version,
        status: StatusCode,
        headers: &HeaderMap,
        body_len: Option<u64>,
        keep_alive: bool,
    ) -> (String, BodyFraming, bool) {
        let mut out = Vec::new();
        let mut keep = keep_alive;
        let framing = write(&mut out, version, status, headers, &[], body_len, &mut keep);
        let text = String::from_utf8(out).unwrap();
        // The date is the one line that changes.
        let (before, date) = text.split_once("date: ").unwrap();
        assert_eq!(date.len(), 29 + 4, "a 29-byte date, then the head's end");
        assert!(date.ends_with(" GMT\r\n\r\n"));
        (before.to_owned(), framing, keep)
    }

    /// Given a service's headers with a length, then they come in order, then the date.
    #[test]
    fn the_services_headers_come_first_in_their_order() {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", "text/plain".parse().unwrap());
        headers.insert("content-length", "2".parse().unwrap());
        let (text, framing, keep) =
            head_of(Version::HTTP_11, StatusCode::OK, &headers, Some(2), true);
        assert_eq!(
            text,
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n"
        );
        assert_eq!(framing, BodyFraming::Length(2));
        assert!(keep);
    }

    /// Given header lines brought by the body, then they follow the map's headers and come
    /// before the length the connection writes.
    #[test]
    fn a_bodys_own_lines_follow_the_headers() {
        let mut headers = HeaderMap::new();
        headers.insert("x-first", "1".parse().unwrap());
        let mut out = Vec::new();
        let mut keep = true;
        let lines = b"etag: \"e\"\r\naccess-control-allow-origin: *\r\n";
        write(
            &mut out,
            Version::HTTP_11,
            StatusCode::OK,
            &headers,
            lines,
            Some(3),
            &mut keep,
        );
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with(
            "HTTP/1.1 200 OK\r\nx-first: 1\r\netag: \"e\"\r\naccess-control-allow-origin: *\r\ncontent-length: 3\r\ndate: "
        ), "{text}");
    }

    /// Given no length from the service, then the body's length is said; given none known
    /// either, then the body runs to the close.
    #[test]
    fn a_length_is_said_from_the_body_or_the_connection_closes() {
        let headers = HeaderMap::new();
        let (text, framing, _) = head_of(
            Version::HTTP_11,
            StatusCode::OK,
            &headers,
            Some(1_234_567_890_123),
            true,
        );
        assert_eq!(text, "HTTP/1.1 200 OK\r\ncontent-length: 1234567890123\r\n");
        assert_eq!(framing, BodyFraming::Length(1_234_567_890_123));
        let (text, framing, keep) = head_of(Version::HTTP_11, StatusCode::OK, &headers, None, true);
        assert_eq!(text, "HTTP/1.1 200 OK\r\nconnection: close\r\n");
        assert_eq!((framing, keep), (BodyFraming::UntilClose, false));
        let (text, framing, _) = head_of(Version::HTTP_11, StatusCode::OK, &headers, Some(0), true);
        assert_eq!(text, "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n");
        assert_eq!(framing, BodyFraming::Length(0));
    }

    /// Given 204 and 304, then no length and no body.
    #[test]
    fn statuses_without_a_body_get_no_length() {
        for status in [StatusCode::NO_CONTENT, StatusCode::NOT_MODIFIED] {
            let (text, framing, _) =
                head_of(Version::HTTP_11, status, &HeaderMap::new(), Some(0), true);
            assert_eq!(text, format!("HTTP/1.1 {status}\r\n"));
            assert_eq!(framing, BodyFraming::None);
        }
    }

    /// Given HTTP/1.0, then keep-alive is said when kept; given HTTP/1.1, close is said
    /// when closing.
    #[test]
    fn the_connection_header_says_what_differs_from_the_versions_default() {
        let headers = HeaderMap::new();
        let (text, _, _) = head_of(Version::HTTP_10, StatusCode::OK, &headers, Some(0), true);
        assert_eq!(
            text,
            "HTTP/1.0 200 OK\r\ncontent-length: 0\r\nconnection: keep-alive\r\n"
        );
        let (text, _, _) = head_of(Version::HTTP_10, StatusCode::OK, &headers, Some(0), false);
        assert_eq!(text, "HTTP/1.0 200 OK\r\ncontent-length: 0\r\n");
        let (text, _, _) = head_of(Version::HTTP_11, StatusCode::OK, &headers, Some(0), false);
        assert_eq!(
            text,
            "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n"
        );
        let mut closing = HeaderMap::new();
        closing.insert("connection", "close".parse().unwrap());
        let (text, _, keep) = head_of(Version::HTTP_11, StatusCode::OK, &closing, Some(0), true);
        assert_eq!(
            text,
            "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n"
        );
        assert!(!keep, "the service's close is kept");
    }

    #[test]
    fn numbers_are_written_in_decimal() {
        for n in [0, 7, 10, 99, 100, 65_536, u64::MAX] {
            assert_eq!(itoa(n, &mut [0u8; 20]), n.to_string().as_bytes());
        }
    }

    #[test]
    fn the_date_is_an_http_date() {
        let date = http_date();
        let text = std::str::from_utf8(&date).unwrap();
        assert!(httpdate::parse_http_date(text).is_ok(), "{text}");
    }
}
