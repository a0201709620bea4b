//! From an output's [`Answer`] to the HTTP response: conditionals (If-Match,
//! If-None-Match, If-Range), HEAD and `Range` applied once here for every output, then the
//! body: a slice of the bytes in hand, or a segment streamed (`stream.rs`), clear,
//! encrypted or MPEG-TS. Error answers, redirects and the CORS preflight are written here
//! too, so every response leaves through this file with its CORS headers.

use std::sync::Arc;

use futures_util::StreamExt;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};

use super::answer::{Answer, CmafSegment, Content, TsSegmentJob, MANIFEST};
use super::cipher_stream::encrypted_stream;
use super::conditional::etag_list_matches;
use super::range::{parse_range, RangeRequest};
use super::stream::{segment_parts, start_stream};
use super::ts_stream::ts_chunks;
use crate::server::admission::Admitted;
use crate::server::app::App;
use crate::server::body::ResponseBody;
use crate::server::cors::add_cors;
use crate::server::error::ServeError;
use crate::server::log_context;
use crate::source::{ByteRange, ByteStream};

/// Apply conditionals, HEAD and Range to a successful answer. `admitted` is held until the
/// body is sent: by this call for whole bodies, by the streamed body for segments.
pub async fn respond<B>(
    app: &Arc<App>,
    req: &Request<B>,
    answer: Answer,
    admitted: Admitted,
) -> Response<ResponseBody> {
    let len = answer.content.len();
    let mut builder = Response::builder();
    if let Some(headers) = builder.headers_mut() {
        // Room for every header of an answer, so the map never grows.
        headers.reserve(12);
    }
    // The static strings are taken as they are (no copy, no check per request).
    let mut builder = builder
        .header(
            header::CONTENT_TYPE,
            HeaderValue::from_static(answer.content_type),
        )
        .header(
            header::CACHE_CONTROL,
            HeaderValue::from_static(answer.cache_control),
        )
        .header(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    let header_str =
        |name: header::HeaderName| req.headers().get(name).and_then(|v| v.to_str().ok());
    let mut range_header = header_str(header::RANGE);
    if let Some(etag) = &answer.etag {
        builder = builder.header(header::ETAG, etag.as_str());
        // RFC 9110 13.1.1: If-Match uses the strong comparison; 412 when nothing matches.
        if header_str(header::IF_MATCH).is_some_and(|v| !etag_list_matches(v, etag, false)) {
            let builder = no_store(builder.status(StatusCode::PRECONDITION_FAILED));
            return finish(builder, ResponseBody::Empty);
        }
        // 13.1.2: If-None-Match uses the weak comparison.
        if header_str(header::IF_NONE_MATCH).is_some_and(|v| etag_list_matches(v, etag, true)) {
            return finish(
                builder.status(StatusCode::NOT_MODIFIED),
                ResponseBody::Empty,
            );
        }
        // 13.1.5: a Range is honoured only if If-Range names the current entity (strong).
        if header_str(header::IF_RANGE).is_some_and(|v| v.trim() != etag) {
            range_header = None;
        }
    } else if header_str(header::IF_RANGE).is_some() {
        range_header = None;
    }
    let (status, start, end) = match parse_range(range_header, len) {
        RangeRequest::Full => (StatusCode::OK, 0, len),
        RangeRequest::Partial { start, end } => {
            builder = builder.header(
                header::CONTENT_RANGE,
                format!("bytes {}-{}/{len}", start, end - 1),
            );
            (StatusCode::PARTIAL_CONTENT, start, end)
        }
        RangeRequest::Unsatisfiable => {
            let builder = no_store(builder.status(StatusCode::RANGE_NOT_SATISFIABLE))
                .header(header::CONTENT_RANGE, format!("bytes */{len}"))
                .header(header::CONTENT_LENGTH, 0);
            return finish(builder, ResponseBody::Empty);
        }
    };
    let builder = builder
        .status(status)
        .header(header::CONTENT_LENGTH, end - start);
    if req.method() == Method::HEAD {
        return finish(builder, ResponseBody::Empty);
    }
    let window = ByteRange::new(start, end - start);
    let body = match answer.content {
        // start <= end <= len == bytes.len(), so these casts and the slice are in bounds.
        Content::Inline(bytes) => Ok(ResponseBody::full(
            bytes.slice(start as usize..end as usize),
        )),
        Content::Segment(segment) if segment.cipher.is_none() => {
            Box::pin(segment_body(app, segment, window, admitted)).await
        }
        Content::Segment(segment) => Box::pin(encrypted_body(app, segment, window, admitted)).await,
        Content::Ts(job) => Box::pin(ts_body(app, job, window, admitted)).await,
    };
    match body {
        Ok(body) => finish(builder, body),
        Err(e) => error_response(&e),
    }
}

/// The body of bytes `window` of a clear CMAF segment: header bytes, then its ranges
/// read from each object in turn, started the one way every segment starts.
async fn segment_body(
    app: &Arc<App>,
    segment: CmafSegment,
    window: ByteRange,
    admitted: Admitted,
) -> Result<ResponseBody, ServeError> {
    let source = app.catalog.source();
    let (head, wanted) = segment_parts(segment.prepared, segment.reads, window);
    let payload = wanted.iter().flat_map(|(_, r)| r).map(|r| r.len).sum();
    let chunk = body_chunk_bytes(app.settings.stream_chunk_bytes, payload);
    let mut streams: Vec<ByteStream> = (wanted.into_iter())
        .map(|(read, ranges)| {
            (source.clone()).stream_ranges(read.key, read.identity, ranges, chunk)
        })
        .collect();
    // One object (every CMAF segment) streams as it is; a muxed segment's objects one
    // after the other, each read only when the one before is done.
    let chunks = match streams.len() {
        1 => streams
            .pop()
            .unwrap_or_else(|| Box::pin(futures_util::stream::empty())),
        _ => Box::pin(futures_util::stream::iter(streams).flatten()),
    };
    start_stream(app, head, chunks, window.len, admitted).await
}

/// The body of bytes `window` of an encrypted CMAF segment (read from one object): its
/// source ranges through the encrypting stream, started the one way every segment starts.
async fn encrypted_body(
    app: &Arc<App>,
    segment: CmafSegment,
    window: ByteRange,
    admitted: Admitted,
) -> Result<ResponseBody, ServeError> {
    let CmafSegment {
        prepared,
        reads,
        cipher,
    } = segment;
    let (Some(read), Some(cipher)) = (reads.into_iter().next(), cipher) else {
        return Err(ServeError::Internal("encrypted segment without its object"));
    };
    let ranges = prepared.ranges;
    let payload = ranges.iter().map(|r| r.len).sum();
    let chunk = body_chunk_bytes(app.settings.stream_chunk_bytes, payload);
    let key = read.key;
    let chunks =
        (app.catalog.source().clone()).stream_ranges(key.clone(), read.identity, ranges, chunk);
    let header = bytes::Bytes::from(prepared.header);
    let encrypted = encrypted_stream(&key, (header, cipher), chunks, window);
    start_stream(app, None, encrypted, window.len, admitted).await
}

/// The chunk size a segment's payload of `payload` bytes is read and sent in: the whole
/// payload when it is at most two `stream_chunk_bytes`, else `stream_chunk_bytes`.
///
/// A stream holds the chunk being sent and the one being read, so one chunk of up to two
/// `stream_chunk_bytes` keeps the same memory bound; and a short segment (a 112 KB
/// segment of the bench asset against 64 KiB chunks) then costs one read and one socket
/// write instead of two each: 9 % less CPU per segment in an A/B of the two sizes
/// (docs/performance.md).
fn body_chunk_bytes(stream_chunk_bytes: usize, payload: u64) -> usize {
    let twice = stream_chunk_bytes.saturating_mul(2);
    match usize::try_from(payload) {
        Ok(whole) if whole <= twice => whole.max(stream_chunk_bytes),
        _ => stream_chunk_bytes,
    }
}

/// The body of bytes `window` of an MPEG-TS segment, written as it streams, started the
/// one way every segment starts.
async fn ts_body(
    app: &Arc<App>,
    job: TsSegmentJob,
    window: ByteRange,
    admitted: Admitted,
) -> Result<ResponseBody, ServeError> {
    let chunks = ts_chunks(app, job, window).await?;
    start_stream(app, None, chunks, window.len, admitted).await
}

/// Replace the answer's cache policy: error-like answers must not be cached with it.
fn no_store(mut builder: http::response::Builder) -> http::response::Builder {
    if let Some(headers) = builder.headers_mut() {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    builder
}

fn finish(builder: http::response::Builder, body: ResponseBody) -> Response<ResponseBody> {
    let mut response = builder.body(body).unwrap_or_else(|_| {
        let mut fallback = Response::new(ResponseBody::Empty);
        *fallback.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        fallback
    });
    add_cors(response.headers_mut());
    response
}

/// The one-line error answer of `error` (the table: `server::error`), and its log line,
/// which names the key and the route (from `log_context`): 404s at info, other client
/// errors at warn, server errors at error.
pub fn error_response(error: &ServeError) -> Response<ResponseBody> {
    let e = error.answer();
    let status = e.status.as_u16();
    let detail = e.detail.as_deref().unwrap_or(&e.reason);
    log_context::facts(|key, route| {
        if e.status == StatusCode::NOT_FOUND {
            tracing::info!(status, reason = %e.reason, vod.key = key, vod.route = route, "request failed");
        } else if e.status.is_server_error() {
            tracing::error!(status, reason = %e.reason, error = %detail, vod.key = key, vod.route = route, "request failed");
        } else {
            tracing::warn!(status, reason = %e.reason, error = %detail, vod.key = key, vod.route = route, "request failed");
        }
    });
    let mut builder = Response::builder()
        .status(e.status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header(
            header::CACHE_CONTROL,
            if e.status == StatusCode::NOT_FOUND {
                "public, max-age=10"
            } else {
                "no-store"
            },
        );
    if let Some(seconds) = e.retry_after {
        builder = builder.header(header::RETRY_AFTER, seconds);
    }
    if let Some(allow) = e.allow {
        builder = builder.header(header::ALLOW, HeaderValue::from_static(allow));
    }
    let line = format!("{}\n", e.reason.replace(['\r', '\n'], " "));
    finish(builder, ResponseBody::full(line))
}

/// A 302 to `location` (an nginx-vod name answered by a view of the title), cacheable like
/// a manifest.
pub fn redirect(location: &str) -> Response<ResponseBody> {
    let builder = Response::builder()
        .status(StatusCode::FOUND)
        .header(header::LOCATION, location)
        .header(header::CACHE_CONTROL, MANIFEST)
        .header(header::CONTENT_LENGTH, 0);
    finish(builder, ResponseBody::Empty)
}

/// The answer to a CORS preflight (`OPTIONS`).
pub fn preflight() -> Response<ResponseBody> {
    let builder = Response::builder()
        .status(StatusCode::NO_CONTENT)
        .header(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            "GET, HEAD, POST, OPTIONS",
        )
        .header(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            "Range, If-None-Match, If-Modified-Since, traceparent, tracestate, Content-Type",
        )
        .header(header::ACCESS_CONTROL_MAX_AGE, "86400");
    finish(builder, ResponseBody::Empty)
}

#[cfg(test)]
mod tests {
    use super::body_chunk_bytes;

    #[test]
    fn a_payload_of_up_to_two_chunks_is_one_chunk_and_a_longer_one_keeps_the_setting() {
        assert_eq!(body_chunk_bytes(65_536, 111_786), 111_786);
        assert_eq!(body_chunk_bytes(65_536, 131_072), 131_072);
        assert_eq!(body_chunk_bytes(65_536, 131_073), 65_536);
        assert_eq!(body_chunk_bytes(65_536, 1_000), 65_536);
        assert_eq!(body_chunk_bytes(65_536, u64::MAX), 65_536);
    }
}
