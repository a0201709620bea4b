//! A request head, parsed: `httparse` finds its parts in the connection's read buffer,
//! and they become an `http::Request` whose URI and header values share that buffer's
//! bytes (no copy per header). What the head says of the connection (keep-alive, the
//! body's length, `Expect: 100-continue`) is read here once, and every way a head can be
//! refused maps to the status the connection answers before it closes.

use std::mem::MaybeUninit;

use bytes::BytesMut;
use http::header::{
    HeaderName, HeaderValue, CONNECTION, CONTENT_LENGTH, EXPECT, HOST, TRANSFER_ENCODING,
};
use http::{HeaderMap, Method, Request, StatusCode, Uri, Version};

/// The most header lines a head may carry (hyper's default too).
pub const MAX_HEADERS: usize = 100;

/// A whole head, taken off the read buffer.
#[derive(Debug)]
pub struct Head {
    /// The request, without its body.
    pub request: Request<()>,
    /// The body's length from `Content-Length` (0 without one).
    pub body_len: u64,
    /// Whether the client keeps the connection open after the answer.
    pub keep_alive: bool,
    /// Whether the client waits for `100 Continue` before it sends the body (HTTP/1.1
    /// only: a 1xx is never sent to an HTTP/1.0 client, RFC 9110 15.2).
    pub expects_continue: bool,
    /// `OPTIONS *`: a question about the server, answered by the connection.
    pub asks_server_options: bool,
}

/// Why a head is refused: the status answered before the connection closes (after a
/// refused head, where the next request would start is not known).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A malformed request line or header line, a bad or conflicting `Content-Length`,
    /// a missing, repeated or invalid `Host` (RFC 9112 3.2), a `Transfer-Encoding` whose
    /// final coding is not `chunked` or beside a `Content-Length` (RFC 9112 6.3), a
    /// request target in a form its method cannot take (RFC 9112 3.2).
    BadRequest,
    /// `Transfer-Encoding: chunked`: no route here takes a streamed body, and a length
    /// known up front leaves no doubt where the next request starts (RFC 9110 15.5.12).
    LengthRequired,
    /// A request line longer than the head's limit (RFC 9112 3: 414).
    UriTooLong,
    /// More header lines than [`MAX_HEADERS`], or a head over the buffer's limit.
    HeadTooLarge,
    /// A transfer coding other than `chunked` before the final `chunked` (RFC 9112 6.1),
    /// or `CONNECT`: an origin tunnels nothing.
    NotImplemented,
    /// A major version other than 1 in the request line (RFC 9110 15.6.6).
    VersionNotSupported,
}

impl Refused {
    /// The status a refused head is answered with.
    pub fn status(self) -> StatusCode {
        match self {
            Refused::BadRequest => StatusCode::BAD_REQUEST,
            Refused::LengthRequired => StatusCode::LENGTH_REQUIRED,
            Refused::UriTooLong => StatusCode::URI_TOO_LONG,
            Refused::HeadTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Refused::NotImplemented => StatusCode::NOT_IMPLEMENTED,
            Refused::VersionNotSupported => StatusCode::HTTP_VERSION_NOT_SUPPORTED,
        }
    }
}

/// Why a head not whole within its first `max` bytes cannot be served: a request line
/// that has not ended is a target too long (414), else the header lines are (431).
fn too_large(first: &[u8]) -> Refused {
    if first.contains(&b'\n') {
        Refused::HeadTooLarge
    } else {
        Refused::UriTooLong
    }
}

/// Where one part of the head lies in the buffer.
type Span = (usize, usize);

/// Header lines kept on the stack while a head is taken; more go to the heap.
const INLINE_HEADERS: usize = 16;

/// Take a whole head of at most `max` bytes off the front of `buf`: `Ok(None)` while it
/// is not all there. Only the first `max` bytes are read, so what becomes of a head does
/// not depend on how its bytes arrived, nor on what is pipelined behind it.
///
/// # Errors
/// [`Refused`] for a head that cannot be served; the connection answers and closes.
pub fn take(buf: &mut BytesMut, max: usize) -> Result<Option<Head>, Refused> {
    match take_as_sent(buf, max) {
        Err(Unread::Refused(refused)) => Err(refused),
        // HTTP/1.2 to 1.9 read as 1.1, once: the parser knows 1.0 and 1.1 only.
        Err(Unread::Version) if read_minor_versions_as_one(buf) => match take_as_sent(buf, max) {
            Err(Unread::Refused(refused)) => Err(refused),
            Err(Unread::Version) => version_refused(buf.get(..max).unwrap_or(&buf[..])),
            Ok(head) => Ok(head),
        },
        Err(Unread::Version) => version_refused(buf.get(..max).unwrap_or(&buf[..])),
        Ok(head) => Ok(head),
    }
}

/// Why [`take_as_sent`] took no head.
enum Unread {
    Refused(Refused),
    /// The parser did not take the request line's version.
    Version,
}

impl From<Refused> for Unread {
    fn from(refused: Refused) -> Self {
        Unread::Refused(refused)
    }
}

/// [`take`], with the version as the client sent it.
#[inline(always)]
fn take_as_sent(buf: &mut BytesMut, max: usize) -> Result<Option<Head>, Unread> {
    if buf.is_empty() {
        return Ok(None);
    }
    let first: &[u8] = buf.get(..max).unwrap_or(&buf[..]);
    // Left uninitialised: httparse writes the lines it finds, and a head is taken once
    // per request (zeroing 100 lines was a fifth of a held answer's instructions).
    let mut lines = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut []);
    let len = match parsed.parse_with_uninit_headers(first, &mut lines) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if first.len() >= max => return Err(too_large(first).into()),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(Refused::HeadTooLarge.into()),
        Err(httparse::Error::Version) => return Err(Unread::Version),
        Err(_) => return Err(Refused::BadRequest.into()),
    };
    let version = match parsed.version {
        Some(0) => Version::HTTP_10,
        Some(1) => Version::HTTP_11,
        _ => return Err(Refused::BadRequest.into()),
    };
    // The parts as offsets, so the buffer can be split off and shared.
    let base = buf.as_ptr() as usize;
    let span = |part: &[u8]| ((part.as_ptr() as usize).saturating_sub(base), part.len());
    let method = parsed
        .method
        .map(str::as_bytes)
        .ok_or(Refused::BadRequest)?;
    let method = Method::from_bytes(method).map_err(|_| Refused::BadRequest)?;
    let path = span(parsed.path.map(str::as_bytes).ok_or(Refused::BadRequest)?);
    let count = parsed.headers.len();
    let mut inline = [((0, 0), (0, 0)); INLINE_HEADERS];
    let mut spilled = Vec::new();
    let spans: &mut [(Span, Span)] = match inline.get_mut(..count) {
        Some(spans) => spans,
        None => {
            spilled.resize(count, ((0, 0), (0, 0)));
            &mut spilled
        }
    };
    for (slot, line) in spans.iter_mut().zip(parsed.headers.iter()) {
        *slot = (span(line.name.as_bytes()), span(line.value));
    }
    let bytes = buf.split_to(len).freeze();
    // httparse's parts lie within the buffer; anything else would be an empty part.
    let part = |(at, len): Span| {
        let end = at.saturating_add(len);
        if end <= bytes.len() {
            bytes.slice(at..end)
        } else {
            bytes::Bytes::new()
        }
    };

    let target = part(path);
    let form = TargetForm::of(&method, &target)?;
    let uri = Uri::from_maybe_shared(target).map_err(|_| Refused::BadRequest)?;
    let mut headers = HeaderMap::with_capacity(count);
    let mut framing = Framing::default();
    for &(name, value) in spans.iter() {
        let name = HeaderName::from_bytes(&part(name)).map_err(|_| Refused::BadRequest)?;
        let value = HeaderValue::from_maybe_shared(part(value)).map_err(|_| Refused::BadRequest)?;
        framing.read(&name, &value)?;
        headers.append(name, value);
    }
    framing.check()?;
    // RFC 9112 3.2: one valid Host, and in HTTP/1.1 always one.
    if framing.hosts > 1 || framing.bad_host || (framing.hosts == 0 && version == Version::HTTP_11)
    {
        return Err(Refused::BadRequest.into());
    }
    if form == TargetForm::Absolute {
        // RFC 9112 3.2.2: the target's authority stands for Host, whatever Host said.
        let authority = uri.authority().map(|a| a.as_str().as_bytes());
        let host = authority
            .filter(|a| valid_host(a))
            .and_then(|a| HeaderValue::from_bytes(a).ok())
            .ok_or(Refused::BadRequest)?;
        headers.insert(HOST, host);
    }
    let keep_alive = if version == Version::HTTP_11 {
        !framing.close
    } else {
        framing.keep_alive && !framing.close
    };
    let mut request = Request::new(());
    *request.method_mut() = method;
    *request.uri_mut() = uri;
    *request.version_mut() = version;
    *request.headers_mut() = headers;
    Ok(Some(Head {
        request,
        body_len: framing.body_len.unwrap_or(0),
        keep_alive,
        expects_continue: framing.expects_continue && version == Version::HTTP_11,
        asks_server_options: form == TargetForm::Asterisk,
    }))
}

/// The four forms of a request target (RFC 9112 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TargetForm {
    /// `/path?query`: what players and CDNs send.
    Origin,
    /// `http://host/path`: what a client sends to a proxy; served as the origin form.
    Absolute,
    /// `*`, with `OPTIONS` only.
    Asterisk,
}

impl TargetForm {
    /// The form of `target`, refused when its method cannot take it. The authority form
    /// (`host:port`) is `CONNECT`'s alone, and an origin has nothing to tunnel to.
    fn of(method: &Method, target: &[u8]) -> Result<Self, Refused> {
        if method == Method::CONNECT {
            return Err(Refused::NotImplemented);
        }
        match target {
            [b'/', ..] => Ok(TargetForm::Origin),
            b"*" if method == Method::OPTIONS => Ok(TargetForm::Asterisk),
            _ if contains(target, b"://") => Ok(TargetForm::Absolute),
            _ => Err(Refused::BadRequest),
        }
    }
}

/// Whether `haystack` holds `needle`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A `Host` value: `uri-host [ ":" port ]` (RFC 9110 7.2), the host not empty. A comma
/// is refused although RFC 3986 allows it in a name: it is what two Host lines joined
/// by a proxy look like, and nginx refuses it too.
fn valid_host(value: &[u8]) -> bool {
    let (host, port) = match value {
        [b'[', rest @ ..] => {
            // An IP literal: `[v6 or vFuture]`, then an optional port.
            let Some(close) = rest.iter().position(|&b| b == b']') else {
                return false;
            };
            let (literal, after) = rest.split_at(close);
            let ok = !literal.is_empty()
                && literal
                    .iter()
                    .all(|&b| b.is_ascii_hexdigit() || matches!(b, b':' | b'.' | b'v' | b'V'));
            if !ok {
                return false;
            }
            return match after.get(1..) {
                Some([]) | None => true,
                Some([b':', port @ ..]) => valid_port(port),
                Some(_) => false,
            };
        }
        _ => match value.iter().rposition(|&b| b == b':') {
            Some(at) => (
                value.get(..at).unwrap_or_default(),
                value.get(at + 1..).unwrap_or_default(),
            ),
            None => (value, &[][..]),
        },
    };
    let name_ok = !host.is_empty() && host.iter().all(|&b| HOST_BYTES[usize::from(b)]);
    name_ok && valid_port(port)
}

/// The bytes of a `reg-name` or IPv4 address (RFC 3986 3.2.2: unreserved, pct-encoded
/// and sub-delims, less the comma), as a table: every `Host` of every request is read.
const HOST_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.' | b'_' | b'~' | b'%' | b'!' | b'$' | b'&' | b'\''
            )
            || matches!(c, b'(' | b')' | b'*' | b'+' | b';' | b'=');
        b += 1;
    }
    table
};

/// A port: up to five digits (RFC 3986 allows none).
fn valid_port(port: &[u8]) -> bool {
    port.len() <= 5 && port.iter().all(u8::is_ascii_digit)
}

/// HTTP/1.2 to HTTP/1.9 are read as HTTP/1.1 (RFC 9110 2.5: a recipient SHOULD treat a
/// higher minor version as the highest it knows): the request line's minor digit is
/// rewritten in place when the parser refused the version. Whether it was.
fn read_minor_versions_as_one(buf: &mut BytesMut) -> bool {
    // The line so far when its end has not come: the parser reads the version as soon
    // as its digits are there.
    let end = buf.iter().position(|&b| b == b'\n').unwrap_or(buf.len());
    let line_end = if end > 0 && buf.get(end - 1) == Some(&b'\r') {
        end - 1
    } else {
        end
    };
    let Some(version) = line_end
        .checked_sub(8)
        .and_then(|at| buf.get_mut(at..line_end))
    else {
        return false;
    };
    if let [b'H', b'T', b'T', b'P', b'/', b'1', b'.', minor @ b'2'..=b'9'] = version {
        *minor = b'1';
        return true;
    }
    false
}

/// What a version the parser does not take comes to, once the request line has ended:
/// another major (`HTTP/2.0`) is 505, anything else 400. Until the line ends, a version
/// that may still be `HTTP/d.d` and a line end is waited for (the parser refuses as soon
/// as it sees the major digit), so the verdict does not depend on how the bytes arrived.
fn version_refused(first: &[u8]) -> Result<Option<Head>, Refused> {
    let end = first.iter().position(|&b| b == b'\n');
    let line = first.get(..end.unwrap_or(first.len())).unwrap_or_default();
    // What follows `METHOD SP TARGET SP`.
    let version = line.splitn(3, |&b| b == b' ').nth(2).unwrap_or_default();
    const SHAPE: &[u8] = b"HTTP/d.d\r";
    let fits = |(i, &b): (usize, &u8)| match SHAPE.get(i) {
        Some(b'd') => b.is_ascii_digit(),
        Some(&c) => b == c,
        None => false,
    };
    let shaped = version.iter().enumerate().all(fits);
    if end.is_none() {
        return if shaped {
            Ok(None)
        } else {
            Err(Refused::BadRequest)
        };
    }
    match version.strip_suffix(b"\r").unwrap_or(version) {
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && *major != b'1' && minor.is_ascii_digit() =>
        {
            Err(Refused::VersionNotSupported)
        }
        _ => Err(Refused::BadRequest),
    }
}

/// What the head's headers say of the message and the connection, read line by line.
#[derive(Default)]
struct Framing {
    body_len: Option<u64>,
    /// The last coding of the `Transfer-Encoding` lines read so far, and whether any
    /// came before it: `None` without the header.
    coding: Option<Coding>,
    close: bool,
    keep_alive: bool,
    expects_continue: bool,
    hosts: usize,
    /// Whether a `Host` value is not `uri-host [":" port]`.
    bad_host: bool,
}

/// What a request's `Transfer-Encoding` lines say, all of them read as one list.
#[derive(Default, Clone, Copy)]
struct Coding {
    /// Whether the final coding so far is `chunked`.
    chunked_last: bool,
    /// How many codings have been listed.
    count: usize,
}

impl Framing {
    fn read(&mut self, name: &HeaderName, value: &HeaderValue) -> Result<(), Refused> {
        if name == CONTENT_LENGTH {
            // Every Content-Length the same digits (RFC 9112 6.3).
            let len = parse_length(value.as_bytes()).ok_or(Refused::BadRequest)?;
            if self.body_len.is_some_and(|seen| seen != len) {
                return Err(Refused::BadRequest);
            }
            self.body_len = Some(len);
        } else if name == TRANSFER_ENCODING {
            let coding = self.coding.get_or_insert_with(Coding::default);
            for member in value.as_bytes().split(|&b| b == b',') {
                let member = member.trim_ascii();
                if member.is_empty() {
                    continue;
                }
                coding.count += 1;
                coding.chunked_last = member.eq_ignore_ascii_case(b"chunked");
            }
        } else if name == CONNECTION {
            self.close |= lists(value, "close");
            self.keep_alive |= lists(value, "keep-alive");
        } else if name == EXPECT {
            self.expects_continue = value.as_bytes().eq_ignore_ascii_case(b"100-continue");
        } else if name == HOST {
            self.hosts += 1;
            self.bad_host |= !valid_host(value.as_bytes());
        }
        Ok(())
    }

    /// The verdict on a `Transfer-Encoding`, once every line is read (RFC 9112 6.1, 6.3):
    /// beside a `Content-Length`, or not ending in `chunked`, the body's end is unknown
    /// (400); a coding before `chunked` is one not understood here (501); `chunked`
    /// alone is a streamed body no route takes (411).
    fn check(&self) -> Result<(), Refused> {
        match self.coding {
            None => Ok(()),
            Some(_) if self.body_len.is_some() => Err(Refused::BadRequest),
            Some(Coding {
                chunked_last: false,
                ..
            }) => Err(Refused::BadRequest),
            Some(Coding { count, .. }) if count > 1 => Err(Refused::NotImplemented),
            Some(_) => Err(Refused::LengthRequired),
        }
    }
}

/// A `Content-Length` value: digits only, no sign, no overflow.
fn parse_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() || value.len() > 19 {
        return None;
    }
    value.iter().try_fold(0u64, |n, &b| {
        b.is_ascii_digit().then(|| n * 10 + u64::from(b - b'0'))
    })
}

/// Whether a `Connection` value lists `token`.
pub fn lists(value: &HeaderValue, token: &str) -> bool {
    (value.as_bytes().split(|&b| b == b','))
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

/// A head parsed from `text`, for tests (a 16 KiB limit, as the server's).
#[cfg(test)]
pub fn taken(text: &str) -> Result<Option<Head>, Refused> {
    take(&mut BytesMut::from(text.as_bytes()), 16 * 1024)
}
