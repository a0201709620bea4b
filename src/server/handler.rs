//! One request, start to finish, as a straight line of typed steps:
//! route -> identify the object -> cached title -> content -> conditional / HEAD / Range ->
//! response. Segment payloads are streamed as pulled bodies, read from the source as the
//! connection sends them (`pulled.rs`, `ts.rs`); everything else is answered from bytes
//! cached with the title.
//!
//! Rare or long branches (segments, MPEG-TS, subtitles, encryption, licences, nginx-vod
//! names, loads on a miss) are awaited as boxed futures. A request's future is built and
//! moved several times before it first runs; kept inline, those branches made it 11 KiB,
//! and copying it was a visible part of a cached manifest's cost (issue 13).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};

use super::answers::Keep;
use super::body::ResponseBody;
use super::error::ErrorAnswer;
use super::log_context::{self, RequestFacts};
use super::nginx_vod::{
    muxed_answer, parse_nginx_route, resolve, MuxedAnswer, MuxedContent, Resolved,
};
use super::protect::{self, ClientAddr, ProtectedSegment, RequestPlace, Selected};
use super::range::{parse_range, RangeRequest};
use super::route::{parse_route, Route, RouteError};
use super::subtitle::{subtitle_body, SubtitleRequest};
use super::ts::{ts_content, ts_segment_body, TsContent, TsSegmentJob, MP2T};
use super::views::load_view_until;
use super::App;
use super::{Admitted, RequestClass};
use crate::media::{is_title_document, TrackKind};
use crate::package::trick::prepare_key_frame;
use crate::package::{prepare_media_segment, PackageError, PreparedSegment, Resource, View};
use crate::source::{ByteRange, ObjectIdentity, ObjectKey};
use crate::telemetry::{extract_parent, trace_id_of, ShedLabels, REQUEST_SPAN_TARGET};
use futures_util::StreamExt;
use tracing::field::Empty;
use tracing::{Instrument, Span};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// Cache-Control for resources in a version folder (`v{token}/`): the token changes with
/// the object version and the packaging settings, so a CDN may keep them for ever.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// Cache-Control for the entry manifests and unversioned names: short, so a replaced file
/// shows within a minute.
const MANIFEST: &str = "public, max-age=60";
/// Cache-Control for keys and licences: never stored by a CDN or a shared cache.
const KEYS: &str = "no-store, private";

/// What a successful request answers with, before HEAD, conditionals and ranges.
enum Content {
    /// Bytes known in full (manifests, init segments, metrics).
    Inline(Bytes),
    /// A media segment: header bytes, then payload streamed from the source, its ranges
    /// read from the objects of `reads` in turn.
    Segment {
        prepared: PreparedSegment,
        reads: Vec<SegmentRead>,
    },
    /// An encrypted media segment, encrypted as it streams (`server::protect`).
    Protected {
        key: ObjectKey,
        identity: ObjectIdentity,
        segment: ProtectedSegment,
    },
    /// An MPEG-TS segment, written from the source as it streams (see `ts.rs`).
    TsSegment(TsSegmentJob),
}

impl Content {
    fn len(&self) -> u64 {
        match self {
            Content::Inline(b) => b.len() as u64,
            Content::Segment { prepared, .. } => prepared.content_length(),
            Content::Protected { segment, .. } => segment.len,
            Content::TsSegment(job) => job.len,
        }
    }
}

/// The object some of a segment's source ranges are read from: the next `ranges` of its
/// `PreparedSegment::ranges` (a muxed segment's tracks may come from several objects).
#[derive(Debug, Clone)]
pub(super) struct SegmentRead {
    pub key: ObjectKey,
    pub identity: ObjectIdentity,
    pub ranges: usize,
}

/// A successful answer's content and headers.
struct Answer {
    content: Content,
    content_type: &'static str,
    cache_control: &'static str,
    etag: Option<String>,
}

impl From<MuxedAnswer> for Answer {
    fn from(muxed: MuxedAnswer) -> Self {
        let content = match muxed.content {
            MuxedContent::Inline(bytes) => Content::Inline(bytes),
            MuxedContent::Segment { prepared, reads } => Content::Segment { prepared, reads },
        };
        Answer {
            content,
            content_type: muxed.content_type,
            // nginx-vod names carry no version folder: the manifest policy, as theirs.
            cache_control: MANIFEST,
            etag: muxed.etag,
        }
    }
}

/// The metrics label of a route.
fn route_label(route: Option<&Route>) -> &'static str {
    match route {
        Some(Route::Vod { resource, .. }) => resource_label(resource),
        Some(Route::NginxVod { name, .. }) => name.label(),
        Some(Route::Key { .. }) => "key",
        Some(Route::Licence { .. }) => "licence",
        Some(Route::Metrics) => "metrics",
        Some(Route::Healthz) | Some(Route::Readyz) => "health",
        None => "other",
    }
}

/// The metrics label of a native resource.
fn resource_label(resource: &Resource) -> &'static str {
    match resource {
        Resource::Multivariant | Resource::MultivariantTs => "master",
        Resource::MediaPlaylist { .. } | Resource::IframePlaylist { .. } => "media_playlist",
        Resource::Mpd => "mpd",
        Resource::Init { .. } => "init",
        Resource::Segment { .. } | Resource::KeyFrame { .. } => "segment",
        Resource::SubtitleSegment { .. } | Resource::SubtitleFile { .. } => "subtitle",
        Resource::TsMediaPlaylist { .. } | Resource::TsIframePlaylist { .. } => "media_playlist",
        Resource::TsSegment { .. } => "segment",
        Resource::TsSubtitleSegment { .. } => "subtitle",
    }
}

/// Answer one request: from a held answer (answers.rs) when it is a plain GET of one, else
/// inside its `request` span (see docs/observability.md), with its route and path kept
/// for its log lines (`log_context`).
pub async fn handle<B>(app: Arc<App>, req: Request<B>) -> Response<ResponseBody>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    // A plain GET of a manifest whose answer is held (answers.rs): given as it is.
    let epoch = || app.catalog.source().identity_epoch();
    if let Some(given) = app.answers.answer(&req, epoch) {
        app.metrics.cache_hits.inc();
        app.metrics.sent_bytes.inc_by(given.bytes as u64);
        let seconds = given.started.elapsed().as_secs_f64();
        (app.metrics).observe_request(given.route, 200, seconds);
        return given.response;
    }
    // The preview page at `/` (preview.rs), when it is on; otherwise routed as usual.
    if let Some(page) = super::preview::answer(&app, &req).await {
        return page;
    }
    handle_routed(app, req).await
}

/// [`handle`] without the preview page: what `probe` asks, as a player would.
pub(super) async fn handle_routed<B>(app: Arc<App>, req: Request<B>) -> Response<ResponseBody>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let route = parse_route(req.uri().path()).or_else(|e| match e {
        RouteError::NotFound => {
            parse_nginx_route(&app.settings.nginx_vod_locations, req.uri().path())
        }
        e => Err(e),
    });
    let label = route_label(route.as_ref().ok());
    let facts = RequestFacts {
        route: label,
        uri: req.uri().clone(),
    };
    log_context::scope(facts, handle_route(app, req, route, label)).await
}

async fn handle_route<B>(
    app: Arc<App>,
    req: Request<B>,
    route: Result<Route, super::RouteError>,
    label: &'static str,
) -> Response<ResponseBody>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let started = Instant::now();
    // The body is read only by the licence route.
    let (parts, body) = req.into_parts();
    let req = Request::from_parts(parts, ());
    let span = request_span(&req, label, route.as_ref().ok());
    // Continue the caller's trace (a CDN or player sending `traceparent`).
    let parent = extract_parent(req.headers());
    let _ = span.set_parent(parent.clone());
    let mut response = match route {
        Err(e) => span.in_scope(|| error_response(&(&e).into())),
        Ok(route) => {
            answer(&app, &req, route, body)
                .instrument(span.clone())
                .await
        }
    };
    app.protect
        .apply_cors(req.headers().get(header::ORIGIN), response.headers_mut());
    let status = response.status().as_u16();
    span.record("http.response.status_code", status);
    // Streamed bodies count their bytes as they go; whole media bodies are counted here.
    // Metrics and health answers are not media and are left out.
    if let ResponseBody::Full(Some(bytes)) = response.body() {
        span.record("vod.bytes_sent", bytes.len());
        if !matches!(label, "metrics" | "health" | "other") {
            app.metrics.sent_bytes.inc_by(bytes.len() as u64);
        }
    }
    // The trace id, for support tickets: ours when exporting, else the caller's.
    if let Some(trace_id) = trace_id_of(&span.context()).or_else(|| trace_id_of(&parent)) {
        if let Ok(value) = HeaderValue::from_str(&trace_id) {
            response.headers_mut().insert(TRACE_ID_HEADER, value);
        }
    }
    let elapsed = started.elapsed();
    (app.metrics).observe_request(label, status, elapsed.as_secs_f64());
    if app.settings.server.access_log {
        let bytes = response
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-");
        tracing::info!(
            target: "vodpack::access",
            method = %req.method(),
            path = %req.uri().path(),
            vod.route = label,
            status,
            bytes,
            duration_ms = elapsed.as_secs_f64() * 1000.0,
            "access"
        );
    }
    response
}

/// The response header carrying the trace id.
pub const TRACE_ID_HEADER: &str = "x-trace-id";

/// The `request` span with its stable attributes; the rest are recorded as they are known.
fn request_span<B>(req: &Request<B>, label: &'static str, route: Option<&Route>) -> Span {
    let span = tracing::info_span!(
        target: REQUEST_SPAN_TARGET,
        "request",
        otel.name = %format_args!("{} {label}", req.method()),
        otel.kind = "server",
        http.request.method = %req.method(),
        url.path = %req.uri().path(),
        vod.route = label,
        vod.key = Empty,
        vod.track_id = Empty,
        vod.segment = Empty,
        vod.cache = Empty,
        http.response.status_code = Empty,
        vod.bytes_sent = Empty,
    );
    if let Some(Route::Vod { key, resource, .. }) = route {
        span.record("vod.key", key.as_str());
        match resource {
            Resource::MediaPlaylist { track_id }
            | Resource::IframePlaylist { track_id }
            | Resource::Init { track_id }
            | Resource::SubtitleFile { track_id }
            | Resource::TsMediaPlaylist { track_id }
            | Resource::TsIframePlaylist { track_id } => {
                span.record("vod.track_id", track_id);
            }
            Resource::Segment { track_id, number }
            | Resource::KeyFrame { track_id, number }
            | Resource::SubtitleSegment { track_id, number }
            | Resource::TsSegment { track_id, number }
            | Resource::TsSubtitleSegment { track_id, number } => {
                span.record("vod.track_id", track_id);
                span.record("vod.segment", number);
            }
            Resource::Multivariant | Resource::MultivariantTs | Resource::Mpd => {}
        }
    }
    if let Some(Route::NginxVod { key, .. } | Route::Key { key } | Route::Licence { key }) = route {
        span.record("vod.key", key.as_str());
    }
    span
}

async fn answer<B>(
    app: &Arc<App>,
    req: &Request<()>,
    route: Route,
    body: B,
) -> Response<ResponseBody>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let method = req.method();
    if method == Method::OPTIONS {
        return preflight();
    }
    // Signed URLs: a bare 403, the reason only in the log (never the token).
    let client = req.extensions().get::<ClientAddr>().map(|c| c.0);
    let (path, query) = (req.uri().path(), req.uri().query());
    if let Err(e) = app.protect.check(&route, path, query, client) {
        tracing::info!(reason = %e, "token refused");
        return error_response(&ErrorAnswer::new(StatusCode::FORBIDDEN, "forbidden"));
    }
    let is_licence = matches!(route, Route::Licence { .. });
    let allowed = match is_licence {
        true => method == Method::POST,
        false => method == Method::GET || method == Method::HEAD,
    };
    if !allowed {
        let mut response = error_response(&ErrorAnswer {
            status: StatusCode::METHOD_NOT_ALLOWED,
            reason: "method not allowed".into(),
            retry_after: None,
            detail: None,
        });
        response.headers_mut().insert(
            header::ALLOW,
            HeaderValue::from_static(if is_licence {
                "POST, OPTIONS"
            } else {
                "GET, HEAD, OPTIONS"
            }),
        );
        return response;
    }
    // Admission is decided here, before any source read or parse.
    let class = request_class(&route);
    let Some(admitted) = app.admission.admit(class) else {
        let label = match class {
            RequestClass::Segment => "segment",
            _ => "manifest",
        };
        app.metrics
            .shed_requests
            .get_or_create(&ShedLabels { class: label })
            .inc();
        return error_response(&ErrorAnswer {
            retry_after: Some(1),
            ..ErrorAnswer::new(StatusCode::SERVICE_UNAVAILABLE, "overloaded; retry")
        });
    };
    let result = match route {
        Route::Healthz => Ok(plain(Bytes::from_static(b"ok\n"))),
        Route::Readyz => {
            if app.is_draining() {
                Err(ErrorAnswer {
                    status: StatusCode::SERVICE_UNAVAILABLE,
                    reason: "draining".into(),
                    retry_after: Some(1),
                    detail: None,
                })
            } else {
                match app.catalog.source().check_ready().await {
                    Ok(()) => Ok(plain(Bytes::from_static(b"ready\n"))),
                    Err(e) => Err(ErrorAnswer {
                        retry_after: Some(1),
                        ..ErrorAnswer::new(
                            StatusCode::SERVICE_UNAVAILABLE,
                            "media source unreachable",
                        )
                        .with_detail(&e)
                    }),
                }
            }
        }
        Route::Metrics => Ok(Answer {
            content: Content::Inline(Bytes::from(Box::pin(app.render_metrics()).await)),
            content_type: "text/plain; version=0.0.4; charset=utf-8",
            cache_control: "no-store",
            etag: None,
        }),
        Route::Key { key } => Box::pin(protect::key_answer(app, &key))
            .await
            .map(|bytes| key_material(bytes, "application/octet-stream")),
        Route::Licence { key } => Box::pin(licence(app, key, body)).await,
        Route::Vod {
            key,
            version,
            resource,
            view,
        } => {
            let deadline = Duration::from_millis(app.settings.server.request_timeout_ms);
            let place = RequestPlace {
                headers: Some(req.headers()),
                path: req.uri().path(),
                query: req.uri().query(),
            };
            tokio::time::timeout(
                deadline,
                vod_answer(app, key, version, resource, view, &place, true),
            )
            .await
            .unwrap_or_else(|_| {
                Err(ErrorAnswer::new(
                    StatusCode::GATEWAY_TIMEOUT,
                    "request deadline exceeded",
                ))
            })
        }
        Route::NginxVod { key, view, name } => {
            // nginx-vod names pick tracks by their place in the title: resolved against
            // it, then answered as the native resource, or redirected to a view of the
            // title (nginx_vod.rs).
            let deadline = Duration::from_millis(app.settings.server.request_timeout_ms);
            let answer = async {
                match resolve(app, &key, view, &name).await? {
                    Resolved::Native(resource, view) => {
                        let place = RequestPlace {
                            headers: Some(req.headers()),
                            path: req.uri().path(),
                            query: req.uri().query(),
                        };
                        vod_answer(app, key, None, resource, view, &place, false)
                            .await
                            .map(Ok)
                    }
                    Resolved::Muxed(muxed, view) => {
                        let place = RequestPlace {
                            headers: None,
                            path: req.uri().path(),
                            query: req.uri().query(),
                        };
                        let answer = muxed_answer(app, &key, &view, &muxed, &place).await?;
                        Ok(Ok(Answer::from(answer)))
                    }
                    Resolved::Redirect(location) => Ok(Err(location)),
                }
            };
            match tokio::time::timeout(deadline, Box::pin(answer)).await {
                Ok(Ok(Err(location))) => return redirect(&location),
                Ok(Ok(Ok(answer))) => Ok(answer),
                Ok(Err(e)) => Err(e),
                Err(_) => Err(ErrorAnswer::new(
                    StatusCode::GATEWAY_TIMEOUT,
                    "request deadline exceeded",
                )),
            }
        }
    };
    match result {
        Ok(answer) => respond(app, req, answer, admitted).await,
        Err(e) => error_response(&e),
    }
}

/// The licence route's answer: the request body read (16 KiB at most), then the licence.
async fn licence<B>(app: &Arc<App>, key: ObjectKey, body: B) -> Result<Answer, ErrorAnswer>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use http_body_util::BodyExt;
    let limited = http_body_util::Limited::new(body, 16 * 1024);
    match limited.collect().await {
        Err(_) => Err(ErrorAnswer::new(
            StatusCode::BAD_REQUEST,
            "unreadable licence request",
        )),
        Ok(collected) => protect::licence_answer(app, &key, &collected.to_bytes())
            .await
            .map(|bytes| key_material(bytes, "application/json")),
    }
}

/// The answer of a key or a licence: `KEYS` caching, no entity tag.
fn key_material(bytes: Bytes, content_type: &'static str) -> Answer {
    Answer {
        content: Content::Inline(bytes),
        content_type,
        cache_control: KEYS,
        etag: None,
    }
}

/// The admission class of a route.
fn request_class(route: &Route) -> RequestClass {
    match route {
        Route::Vod {
            resource:
                Resource::Segment { .. }
                | Resource::KeyFrame { .. }
                | Resource::Init { .. }
                | Resource::SubtitleSegment { .. }
                | Resource::SubtitleFile { .. }
                | Resource::TsSegment { .. }
                | Resource::TsSubtitleSegment { .. },
            ..
        } => RequestClass::Segment,
        Route::Vod { .. } | Route::Key { .. } | Route::Licence { .. } => RequestClass::Manifest,
        Route::NginxVod { name, .. } if name.is_media() => RequestClass::Segment,
        Route::NginxVod { .. } => RequestClass::Manifest,
        Route::Metrics | Route::Healthz | Route::Readyz => RequestClass::Control,
    }
}

fn plain(bytes: Bytes) -> Answer {
    Answer {
        content: Content::Inline(bytes),
        content_type: "text/plain; charset=utf-8",
        cache_control: "no-store",
        etag: None,
    }
}

/// The content of a resource of the title at `key`.
async fn vod_answer(
    app: &Arc<App>,
    key: ObjectKey,
    version: Option<String>,
    resource: Resource,
    view: View,
    place: &RequestPlace<'_>,
    keep: bool,
) -> Result<Answer, ErrorAnswer> {
    // The object's identity and title: a file, a title document or a urlset, as viewed.
    let (identity, cached, reuse) = load_view_until(app, &key, &view).await?;
    let not_found = |what: String| ErrorAnswer {
        status: StatusCode::NOT_FOUND,
        reason: what,
        retry_after: None,
        detail: None,
    };
    // A request pinned to another version (a playlist cached before the file was replaced)
    // must not get this version's bytes under that name; an encrypted output's folder
    // selects it (server::protect).
    let selected = protect::select(app, &key, &cached, version.as_deref(), &resource).await?;
    let (etag_token, protected) = match &selected {
        Selected::Clear => (&cached.token, None),
        Selected::Protected(p) => (&p.token, Some(p)),
    };
    let etag = Some(entity_tag(etag_token, &resource));
    // Manifests carrying the request's token (signed URLs) differ per token: no tag.
    let carries_token = protect::RequestPlace::carries_token(app, place);
    let manifest_etag = |etag: Option<String>| etag.filter(|_| !carries_token);
    let decorate = |clear: Bytes| match protected {
        None => protect::clear_manifest(app, &resource, clear, place.query),
        Some(p) => protect::protected_manifest(app, &cached, &resource, &clear, p, place),
    };
    let cache_control = if version.is_some() {
        IMMUTABLE
    } else {
        MANIFEST
    };
    let plain_file = !is_title_document(&key);
    let answer = match resource {
        Resource::Multivariant => Answer {
            content: Content::Inline(decorate(cached.multivariant())),
            content_type: "application/vnd.apple.mpegurl",
            cache_control,
            etag: manifest_etag(etag),
        },
        Resource::MultivariantTs
        | Resource::TsMediaPlaylist { .. }
        | Resource::TsIframePlaylist { .. }
        | Resource::TsSegment { .. }
        | Resource::TsSubtitleSegment { .. } => {
            // Playlists carry the key signalling and the request's token as the CMAF ones.
            let (content, content_type, etag) = match Box::pin(ts_content(
                app,
                &cached,
                (&key, &identity),
                resource,
                protected,
            ))
            .await?
            {
                TsContent::Playlist(bytes) => (
                    Content::Inline(decorate(bytes)),
                    "application/vnd.apple.mpegurl",
                    manifest_etag(etag),
                ),
                TsContent::Subtitle(bytes) => (Content::Inline(bytes), WEBVTT, etag),
                TsContent::Segment(job) => (Content::TsSegment(job), MP2T, etag),
            };
            Answer {
                content,
                content_type,
                cache_control,
                etag,
            }
        }
        Resource::Mpd => Answer {
            content: Content::Inline(decorate(cached.mpd())),
            content_type: "application/dash+xml",
            cache_control,
            etag: manifest_etag(etag),
        },
        Resource::MediaPlaylist { track_id } => Answer {
            content: Content::Inline(decorate(
                cached
                    .media_playlist(track_id)
                    .or_else(|| cached.subtitle_playlist(track_id))
                    .ok_or_else(|| not_found(format!("no rendition {track_id}")))?,
            )),
            content_type: "application/vnd.apple.mpegurl",
            cache_control,
            etag: manifest_etag(etag),
        },
        Resource::Init { track_id } => {
            let rendition = cached
                .title
                .rendition(track_id)
                .ok_or_else(|| not_found(format!("no rendition {track_id}")))?;
            let init = match protected {
                Some(p) => protect::protected_init(&cached, track_id, p)?,
                None => cached
                    .init_segment(track_id)
                    .ok_or_else(|| not_found(format!("no rendition {track_id}")))?,
            };
            Answer {
                content_type: mp4_type(rendition.kind),
                content: Content::Inline(init),
                cache_control,
                etag,
            }
        }
        Resource::IframePlaylist { .. } | Resource::KeyFrame { .. } if protected.is_some() => {
            return Err(not_found(
                "trick play is not offered for encrypted outputs".into(),
            ))
        }
        Resource::IframePlaylist { track_id } => Answer {
            content: Content::Inline(
                cached
                    .iframe_playlist(track_id)
                    .ok_or_else(|| not_found(format!("no video rendition {track_id}")))?,
            ),
            content_type: "application/vnd.apple.mpegurl",
            cache_control,
            etag,
        },
        Resource::Segment { track_id, number } | Resource::KeyFrame { track_id, number } => {
            let rendition = cached
                .title
                .rendition(track_id)
                .ok_or_else(|| not_found(format!("no rendition {track_id}")))?;
            let kind = rendition.kind;
            // A title document's track is read from its own file.
            let (key, identity) = cached
                .object_of(track_id)
                .map_or((key, identity), |(k, i)| (k.clone(), i.clone()));
            // Header construction runs on the blocking pool, off the runtime workers.
            let title = cached.clone();
            let assemble = tracing::info_span!(
                "segment.assemble",
                vod.track_id = track_id,
                vod.segment = number
            );
            let prepared = Box::pin(assemble_off_runtime(assemble, move || {
                let title = &title.title;
                let rendition = title.rendition(track_id).ok_or(PackageError::NoSuchTrack {
                    track: u64::from(track_id),
                })?;
                match resource {
                    Resource::KeyFrame { .. } => prepare_key_frame(title, rendition, number),
                    _ => {
                        let segment = usize::try_from(number - 1).unwrap_or(usize::MAX);
                        prepare_media_segment(
                            &title.index,
                            &title.plan,
                            rendition.track_pos,
                            segment,
                        )
                    }
                }
            }))
            .await?;
            if let Some(p) = protected {
                let segment = Box::pin(protect::protect_segment(
                    app,
                    (&key, &identity),
                    &cached,
                    (track_id, number),
                    prepared,
                    p,
                ))
                .await?;
                return Ok(Answer {
                    content: Content::Protected {
                        key,
                        identity,
                        segment,
                    },
                    content_type: mp4_type(kind),
                    cache_control,
                    etag,
                });
            }
            let ranges = prepared.ranges.len();
            Answer {
                content: Content::Segment {
                    prepared,
                    reads: vec![SegmentRead {
                        key,
                        identity,
                        ranges,
                    }],
                },
                content_type: mp4_type(kind),
                cache_control,
                etag,
            }
        }
        Resource::SubtitleSegment { track_id, number } => Answer {
            content: Content::Inline(
                Box::pin(subtitle_body(
                    app,
                    &cached,
                    cached.object_of(track_id).map_or(&key, |o| o.0),
                    cached.object_of(track_id).map_or(&identity, |o| o.1),
                    track_id,
                    SubtitleRequest::Segment { number },
                ))
                .await?,
            ),
            content_type: WEBVTT,
            cache_control,
            etag,
        },
        Resource::SubtitleFile { track_id } => Answer {
            content: Content::Inline(
                Box::pin(subtitle_body(
                    app,
                    &cached,
                    cached.object_of(track_id).map_or(&key, |o| o.0),
                    cached.object_of(track_id).map_or(&identity, |o| o.1),
                    track_id,
                    SubtitleRequest::File,
                ))
                .await?,
            ),
            content_type: WEBVTT,
            cache_control,
            etag,
        },
    };
    // A clear manifest of a plain file, asked for by its own name, is held for the
    // requests like it until the file's identity window ends (answers.rs). A title
    // document's tracks are files of their own, so its answers are not held.
    let manifest = matches!(
        resource,
        Resource::Multivariant
            | Resource::MultivariantTs
            | Resource::Mpd
            | Resource::MediaPlaylist { .. }
            | Resource::IframePlaylist { .. }
            | Resource::TsMediaPlaylist { .. }
            | Resource::TsIframePlaylist { .. }
    );
    if keep && manifest && plain_file && protected.is_none() {
        if let (Some(reuse), Content::Inline(body), Some(etag)) =
            (reuse, &answer.content, &answer.etag)
        {
            let held = Keep {
                body,
                content_type: answer.content_type,
                cache_control: answer.cache_control,
                etag,
                route: resource_label(&resource),
                reuse,
            };
            app.answers.keep(place.path, held, Instant::now());
        }
    }
    Ok(answer)
}

/// The entity tag of `resource` in the output with version token `token`: `"TOKEN-NAME"`.
fn entity_tag(token: &str, resource: &Resource) -> String {
    use std::fmt::Write;
    let mut tag = String::with_capacity(token.len() + 32);
    tag.push('"');
    tag.push_str(token);
    tag.push('-');
    let _ = write!(tag, "{resource}");
    tag.push('"');
    tag
}

/// Run `work` (a segment's header construction) on the blocking pool, off the runtime
/// workers, inside `span` (`segment.assemble`).
///
/// # Errors
/// The packager's answer, as its status; 500 if the work is lost.
pub(super) async fn assemble_off_runtime<T: Send + 'static>(
    span: Span,
    work: impl FnOnce() -> Result<T, PackageError> + Send + 'static,
) -> Result<T, ErrorAnswer> {
    tokio::task::spawn_blocking(work)
        .instrument(span)
        .await
        .map_err(|_| {
            ErrorAnswer::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "segment preparation failed",
            )
        })?
        .map_err(|e| ErrorAnswer::from(&e))
}

/// Content type of WebVTT subtitles.
const WEBVTT: &str = "text/vtt; charset=utf-8";

fn mp4_type(kind: TrackKind) -> &'static str {
    match kind {
        TrackKind::Video => "video/mp4",
        TrackKind::Audio => "audio/mp4",
    }
}

/// Apply conditionals, HEAD and Range to a successful answer. `admitted` is held until the
/// body is sent: by this call for whole bodies, by the pulled body for streams.
async fn respond<B>(
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
    let body = match answer.content {
        Content::Protected {
            key,
            identity,
            segment,
        } => {
            let parts = (key, identity, segment);
            return Box::pin(respond_protected(
                app,
                builder,
                parts,
                (start, end),
                admitted,
            ))
            .await;
        }
        Content::Inline(bytes) => {
            // start <= end <= len == bytes.len(), so these casts and the slice are in bounds.
            ResponseBody::full(bytes.slice(start as usize..end as usize))
        }
        Content::Segment { prepared, reads } => {
            let (header_part, wanted) = segment_parts(prepared, reads, start, end);
            let source = app.catalog.source().clone();
            let chunk = app.settings.stream_chunk_bytes;
            let has_payload = !wanted.is_empty();
            let mut streams: Vec<crate::source::ByteStream> = (wanted.into_iter())
                .map(|(read, ranges)| {
                    (source.clone()).stream_ranges(read.key, read.identity, ranges, chunk)
                })
                .collect();
            // One object (every CMAF segment) streams as it is; a muxed segment's objects
            // one after the other, each read only when the one before is done.
            let mut chunks = match streams.len() {
                1 => streams
                    .pop()
                    .unwrap_or_else(|| Box::pin(futures_util::stream::empty())),
                _ => Box::pin(futures_util::stream::iter(streams).flatten()),
            };
            // Wait for the first payload bytes before committing to a status: a source that
            // fails or stalls now gets a clean 5xx, not a 200 cut short.
            let mut first = None;
            if has_payload {
                let deadline = Duration::from_millis(app.settings.server.request_timeout_ms);
                match tokio::time::timeout(deadline, chunks.next()).await {
                    Ok(Some(Ok(bytes))) => first = Some(bytes),
                    Ok(Some(Err(e))) => {
                        return error_response(&ErrorAnswer::from(&e).with_detail(&e))
                    }
                    Ok(None) => {}
                    Err(_) => {
                        return error_response(&ErrorAnswer::new(
                            StatusCode::GATEWAY_TIMEOUT,
                            "media source timed out",
                        ))
                    }
                }
            }
            // Pulled by the connection itself (`pulled.rs`): the header and first chunk,
            // then the source chunks as the socket takes them.
            let parts: Vec<Bytes> = header_part.into_iter().chain(first).collect();
            let stream = super::pulled::PulledSegment::new(app, parts, chunks, admitted);
            ResponseBody::pulled(end - start, stream)
        }
        Content::TsSegment(job) => {
            match Box::pin(ts_segment_body(app, job, start, end, admitted)).await {
                Ok(body) => body,
                Err(e) => return error_response(&e),
            }
        }
    };
    finish(builder, body)
}

/// Stream an encrypted segment's bytes `start..end` (see `respond`): the same first-bytes
/// wait and bounded channel as a clear segment, with the encryptor between source and
/// channel.
async fn respond_protected(
    app: &Arc<App>,
    builder: http::response::Builder,
    (key, identity, segment): (ObjectKey, ObjectIdentity, ProtectedSegment),
    (start, end): (u64, u64),
    admitted: Admitted,
) -> Response<ResponseBody> {
    let source = app.catalog.source().clone();
    let chunk = app.settings.stream_chunk_bytes;
    let ranges = segment.ranges.clone();
    let chunks = source.stream_ranges(key.clone(), identity, ranges, chunk);
    let mut stream = protect::encrypted_stream(&key, segment, chunks, (start, end));
    let deadline = Duration::from_millis(app.settings.server.request_timeout_ms);
    let first = match tokio::time::timeout(deadline, stream.next()).await {
        Ok(Some(Ok(bytes))) => Some(bytes),
        Ok(Some(Err(e))) => return error_response(&ErrorAnswer::from(&e).with_detail(&e)),
        Ok(None) => None,
        Err(_) => {
            return error_response(&ErrorAnswer::new(
                StatusCode::GATEWAY_TIMEOUT,
                "media source timed out",
            ))
        }
    };
    let parts: Vec<Bytes> = first.into_iter().collect();
    let stream = super::pulled::PulledSegment::new(app, parts, stream, admitted);
    finish(builder, ResponseBody::pulled(end - start, stream))
}

/// Replace the answer's cache policy: error-like answers must not be cached with it.
fn no_store(mut builder: http::response::Builder) -> http::response::Builder {
    if let Some(headers) = builder.headers_mut() {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    builder
}

/// Whether the `If-Match`/`If-None-Match` list `list` names `etag`: `*` matches anything;
/// the weak comparison ignores a `W/` prefix on either side (RFC 9110 8.8.3.2).
fn etag_list_matches(list: &str, etag: &str, weak: bool) -> bool {
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

/// The part of a prepared segment's header inside `start..end`, and the source ranges of
/// its payload inside `start..end` (the payload follows the header in the body), with the
/// object of `reads` each is read from; objects with no such range are left out.
fn segment_parts(
    prepared: PreparedSegment,
    reads: Vec<SegmentRead>,
    start: u64,
    end: u64,
) -> (Option<Bytes>, Vec<(SegmentRead, Vec<ByteRange>)>) {
    let header = Bytes::from(prepared.header);
    let header_len = header.len() as u64;
    // start <= end <= content length, so these bounds lie inside the header.
    let header_part =
        (start < header_len).then(|| header.slice(start as usize..end.min(header_len) as usize));
    debug_assert_eq!(
        reads.iter().map(|r| r.ranges).sum::<usize>(),
        prepared.ranges.len()
    );
    let mut ranges = prepared.ranges.into_iter();
    let mut body_offset = header_len;
    let mut parts = Vec::with_capacity(reads.len());
    for read in reads {
        let mut wanted = Vec::with_capacity(read.ranges);
        for range in ranges.by_ref().take(read.ranges) {
            let (range_start, range_end) = (body_offset, body_offset + range.len);
            body_offset = range_end;
            let (from, to) = (start.max(range_start), end.min(range_end));
            if from < to {
                wanted.push(ByteRange::new(
                    range.start + (from - range_start),
                    to - from,
                ));
            }
        }
        if !wanted.is_empty() {
            parts.push((read, wanted));
        }
    }
    (header_part, parts)
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

/// The CORS headers every answer carries (a configured origin list narrows them later:
/// `Protector::apply_cors`).
pub(super) fn add_cors(headers: &mut http::HeaderMap) {
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("Content-Length, Content-Range, ETag"),
    );
}

/// The one-line error answer, and its log line (which names the key and the route, from
/// `log_context`): 404s at info, other client errors at warn, server errors at error.
pub fn error_response(e: &ErrorAnswer) -> Response<ResponseBody> {
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
    let line = format!("{}\n", e.reason.replace(['\r', '\n'], " "));
    finish(builder, ResponseBody::full(line))
}

/// A 302 to `location` (an nginx-vod name answered by a view of the title: nginx_vod.rs),
/// cacheable like a manifest.
fn redirect(location: &str) -> Response<ResponseBody> {
    let builder = Response::builder()
        .status(StatusCode::FOUND)
        .header(header::LOCATION, location)
        .header(header::CACHE_CONTROL, MANIFEST)
        .header(header::CONTENT_LENGTH, 0);
    finish(builder, ResponseBody::Empty)
}

fn preflight() -> Response<ResponseBody> {
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
