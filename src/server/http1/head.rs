//! A request head, parsed: `httparse` finds its parts in the connection's read buffer,
//! and they become an `http::Request` whose URI and header values share that buffer's
//! bytes (no copy per header). What the head says of the connection (keep-alive, the
//! body's length, `Expect: 100-continue`) is read here once, and every way a head can be
//! refused maps to the status the connection answers before it closes.

use std::mem::MaybeUninit;

use bytes::BytesMut;
use http::header::{
    HeaderName, HeaderValue, CONNECTION, CONTENT_LENGTH, EXPECT, TRANSFER_ENCODING,
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
    /// Whether the client waits for `100 Continue` before it sends the body.
    pub expects_continue: bool,
}

/// Why a head is refused: the status answered before the connection closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Not HTTP/1.x, a malformed line, a bad or conflicting `Content-Length`.
    BadRequest,
    /// A `Transfer-Encoding` on a request: no route here takes a streamed body, and a
    /// length known up front leaves no doubt where the next request starts.
    LengthRequired,
    /// More header lines than [`MAX_HEADERS`], or a head over the buffer's limit.
    HeadTooLarge,
}

impl Refused {
    pub fn status(self) -> StatusCode {
        match self {
            Refused::BadRequest => StatusCode::BAD_REQUEST,
            Refused::LengthRequired => StatusCode::LENGTH_REQUIRED,
            Refused::HeadTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        }
    }
}

/// Where one part of the head lies in the buffer.
type Span = (usize, usize);

/// Header lines kept on the stack while a head is taken; more go to the heap.
const INLINE_HEADERS: usize = 16;

/// Take a whole head off the front of `buf`: `Ok(None)` while it is not all there.
///
/// # Errors
/// [`Refused`] for a head that cannot be served; the connection answers and closes.
pub fn take(buf: &mut BytesMut) -> Result<Option<Head>, Refused> {
    if buf.is_empty() {
        return Ok(None);
    }
    // Left uninitialised: httparse writes the lines it finds, and a head is taken once
    // per request (zeroing 100 lines was a fifth of a held answer's instructions).
    let mut lines = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut []);
    let len = match parsed.parse_with_uninit_headers(buf, &mut lines) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(Refused::HeadTooLarge),
        Err(_) => return Err(Refused::BadRequest),
    };
    let version = match parsed.version {
        Some(0) => Version::HTTP_10,
        Some(1) => Version::HTTP_11,
        _ => return Err(Refused::BadRequest),
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

    let uri = Uri::from_maybe_shared(part(path)).map_err(|_| Refused::BadRequest)?;
    let mut headers = HeaderMap::with_capacity(count);
    let mut framing = Framing::default();
    for &(name, value) in spans.iter() {
        let name = HeaderName::from_bytes(&part(name)).map_err(|_| Refused::BadRequest)?;
        let value = HeaderValue::from_maybe_shared(part(value)).map_err(|_| Refused::BadRequest)?;
        framing.read(&name, &value)?;
        headers.append(name, value);
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
        expects_continue: framing.expects_continue,
    }))
}

/// What the head's headers say of the message and the connection, read line by line.
#[derive(Default)]
struct Framing {
    body_len: Option<u64>,
    close: bool,
    keep_alive: bool,
    expects_continue: bool,
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
            return Err(Refused::LengthRequired);
        } else if name == CONNECTION {
            self.close |= lists(value, "close");
            self.keep_alive |= lists(value, "keep-alive");
        } else if name == EXPECT {
            self.expects_continue = value.as_bytes().eq_ignore_ascii_case(b"100-continue");
        }
        Ok(())
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

/// A head parsed from `text`, for tests.
#[cfg(test)]
pub fn taken(text: &str) -> Result<Option<Head>, Refused> {
    take(&mut BytesMut::from(text.as_bytes()))
}
