//! One request's life, as a straight line of steps: route -> `request` span (continuing the
//! caller's trace) -> preflight, signed-URL check, method and admission -> the one dispatch
//! to the output that owns the route (`outputs/`) -> the response (`respond::reply`:
//! conditionals, HEAD, Range, streaming) -> CORS, trace id, metrics and the access log.
//!
//! Rare or long branches are awaited as boxed futures: kept inline they made a request's
//! future 11 KiB, and copying it was a visible part of a cached manifest's cost
//! (docs/performance.md).

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::header::{self, HeaderValue};
use http::{Method, Request, Response};
use tracing::field::Empty;
use tracing::{Instrument, Span};
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::access::manifest::RequestPlace;
use super::access::protector::ClientAddr;
use super::admission::Admitted;
use super::app::App;
use super::body::ResponseBody;
use super::client::{client_addr, PeerAddr};
use super::cors::narrow_cors;
use super::error::ServeError;
use super::log_context::{self, RequestFacts};
use super::outputs::nginx_vod::by_name::{by_name, NginxAnswer};
use super::outputs::thumb::storyboard::storyboard;
use super::outputs::thumb::thumbnail;
use super::outputs::{cmaf, dash, health, hls, keys, sequence, subtitles, ts};
use super::respond::answer::{Answer, MANIFEST};
use super::respond::reply::{error_response, preflight, redirect, respond};
use super::route::nginx_names::NginxName;
use super::route::nginx_vod::parse_nginx_route;
use super::route::path_error::RouteError;
use super::route::paths::{parse_route, Route};
use super::title_request::{Hold, TitleRequest, TitleRoute};
use crate::package::{Resource, View};
use crate::source::ObjectKey;
use crate::telemetry::{extract_parent, trace_id_of, ShedLabels, REQUEST_SPAN_TARGET};

/// The response header carrying the trace id.
pub const TRACE_ID_HEADER: &str = "x-trace-id";

/// Answer one request by its route, inside its `request` span (see docs/observability.md),
/// with its route and path kept for its log lines (`log_context`).
pub async fn handle_routed<B>(app: Arc<App>, req: Request<B>) -> Response<ResponseBody>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let route = parse_route(req.uri().path()).or_else(|e| match e {
        RouteError::NotFound => {
            parse_nginx_route(&app.settings.nginx_vod_locations, req.uri().path())
                .map(|route| route.cut_to(app.settings.nginx_vod_cut_ms()))
        }
        e => Err(e),
    });
    let label = route.as_ref().map_or("other", Route::label);
    let facts = RequestFacts {
        route: label,
        uri: req.uri().clone(),
    };
    log_context::scope(facts, handle_route(app, req, route, label)).await
}

async fn handle_route<B>(
    app: Arc<App>,
    req: Request<B>,
    route: Result<Route, RouteError>,
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
    let mut req = Request::from_parts(parts, ());
    // The client: the peer, or the viewer a trusted proxy forwarded (`client.rs`).
    let client = (req.extensions().get::<PeerAddr>())
        .map(|peer| client_addr(&app.settings.trusted_proxies, peer.0, req.headers()));
    if let Some(ip) = client {
        req.extensions_mut().insert(ClientAddr(ip));
    }
    let span = request_span(&req, label, route.as_ref().ok());
    // Continue the caller's trace (a CDN or player sending `traceparent`).
    let parent = extract_parent(req.headers());
    let _ = span.set_parent(parent.clone());
    let mut response = match route {
        Err(e) => span.in_scope(|| error_response(&e.into())),
        Ok(route) => {
            dispatch(&app, &req, route, body)
                .instrument(span.clone())
                .await
        }
    };
    narrow_cors(
        app.protect.cors_origins(),
        req.headers().get(header::ORIGIN),
        response.headers_mut(),
    );
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
    let trace_id = trace_id_of(&span.context()).or_else(|| trace_id_of(&parent));
    if let Some(trace_id) = &trace_id {
        if let Ok(value) = HeaderValue::from_str(trace_id) {
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
        let user_agent = (req.headers().get(header::USER_AGENT))
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-");
        tracing::info!(
            target: "vodpack::access",
            client = %client.map_or_else(|| "-".to_owned(), |ip| ip.to_string()),
            method = %req.method(),
            path = %req.uri().path(),
            vod.route = label,
            status,
            bytes,
            duration_ms = elapsed.as_secs_f64() * 1000.0,
            user_agent,
            trace_id = trace_id.as_deref().unwrap_or("-"),
            "access"
        );
    }
    response
}

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
    if let Some(key) = route.and_then(Route::key) {
        span.record("vod.key", key.as_str());
    }
    if let Some(Route::Vod { resource, .. }) = route {
        if let Some(track_id) = resource.track_id() {
            span.record("vod.track_id", track_id);
        }
        if let Some(number) = resource.number() {
            span.record("vod.segment", number);
        }
    }
    span
}

/// The answer to a routed request: the gate (preflight, signed URL, method, admission),
/// then the one dispatch to the output that owns the route.
async fn dispatch<B>(
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
    if req.method() == Method::OPTIONS {
        return preflight();
    }
    // Signed URLs: a bare 403, the reason only in the log (never the token).
    let client = req.extensions().get::<ClientAddr>().map(|c| c.0);
    let (path, query) = (req.uri().path(), req.uri().query());
    // A thumbnail is signed as a media resource of its title is (`access` knows no
    // thumbnails yet): with every URL signed it needs its token.
    let signed_as = thumbnail_signed_as(&route);
    if let Err(e) = (app.protect).check(signed_as.as_ref().unwrap_or(&route), path, query, client) {
        tracing::info!(reason = %e, "token refused");
        app.metrics.token_refused(e.label());
        return error_response(&ServeError::Forbidden);
    }
    if !route.allows(req.method()) {
        let allow = route.allowed_methods();
        return error_response(&ServeError::MethodNotAllowed { allow });
    }
    // Admission is decided here, before any source read or parse.
    let class = route.class();
    let (admitted, queued) = app.admission.admit_or_queue(class).await;
    if queued {
        app.metrics.queued_requests.inc();
    }
    let Some(admitted) = admitted else {
        let shed = ShedLabels {
            class: class.shed_label(),
        };
        app.metrics.shed_requests.get_or_create(&shed).inc();
        return error_response(&ServeError::Overloaded);
    };
    // Thumbnails and storyboards share their place with the decode they start on the
    // blocking pool, which may outlive the request (its deadline past): the decode limit
    // counts the decodes running.
    let (admitted, shared) = match route {
        Route::Thumbnail { .. } | Route::Storyboard { .. } => {
            (Admitted::none(), Some(Arc::new(admitted)))
        }
        _ => (admitted, None),
    };
    let shared = move || shared.unwrap_or_else(|| Arc::new(Admitted::none()));
    let deadline = Duration::from_millis(app.settings.server.request_timeout_ms);
    let place = RequestPlace {
        headers: Some(req.headers()),
        path: req.uri().path(),
        query: req.uri().query(),
    };
    // The one dispatch: every route to the output that owns it. An nginx-vod name that
    // stands for a native resource, and a sequence's part, come back to `title_answer`.
    let result = match route {
        Route::Healthz => Ok(health::healthz()),
        Route::Readyz => health::readyz(app).await,
        Route::Metrics => Ok(health::metrics(app).await),
        Route::Key { key } => Box::pin(keys::hls_key(app, &key)).await,
        Route::Licence { key } => Box::pin(keys::licence(app, &key, body)).await,
        Route::Vod {
            key,
            version,
            resource,
            view,
        } => {
            let route = TitleRoute {
                key,
                version,
                resource,
                view,
            };
            within(deadline, title_answer(app, route, &place, Hold::Allowed)).await
        }
        Route::Thumbnail {
            key,
            version,
            view,
            name,
        } => {
            within(
                deadline,
                Box::pin(thumbnail(app, shared(), (key, version), view, name)),
            )
            .await
        }
        Route::Storyboard {
            key,
            version,
            view,
            part,
        } => {
            let query = place.query;
            let answer = storyboard(app, shared(), (key, version), view, part, query);
            within(deadline, Box::pin(answer)).await
        }
        Route::NginxVod { key, view, name } => {
            let answer = nginx_answer(app, (key, view), &name, &place);
            match tokio::time::timeout(deadline, Box::pin(answer)).await {
                Ok(Ok(NginxReply::Redirect(location))) => return redirect(&location),
                Ok(Ok(NginxReply::Answer(answer))) => Ok(answer),
                Ok(Err(e)) => Err(e),
                Err(_) => Err(ServeError::DeadlineExceeded),
            }
        }
    };
    match result {
        Ok(answer) => respond(app, req, answer, admitted).await,
        Err(e) => error_response(&e),
    }
}

/// `answer`, or [`ServeError::DeadlineExceeded`] past `deadline`.
async fn within<F>(deadline: Duration, answer: F) -> Result<Answer, ServeError>
where
    F: std::future::Future<Output = Result<Answer, ServeError>>,
{
    (tokio::time::timeout(deadline, answer).await).unwrap_or(Err(ServeError::DeadlineExceeded))
}

/// What an nginx-vod name is answered with, once answered.
enum NginxReply {
    Answer(Answer),
    /// A 302 to this location.
    Redirect(String),
}

/// What nginx-vod name `name` of the title at `key` as `view` shows it is answered with:
/// the native resource it stands for answered here, through the same dispatch as its own
/// name (never held; under the manifest cache policy when the name carries no folder).
///
/// # Errors
/// The name's resolution errors, and the answering output's.
async fn nginx_answer(
    app: &Arc<App>,
    (key, view): (ObjectKey, View),
    name: &NginxName,
    place: &RequestPlace<'_>,
) -> Result<NginxReply, ServeError> {
    Ok(match by_name(app, key, view, name, place).await? {
        NginxAnswer::Native { route, unversioned } => {
            let mut answer = Box::pin(title_answer(app, route, place, Hold::Never)).await?;
            if unversioned {
                answer.cache_control = MANIFEST;
            }
            NginxReply::Answer(answer)
        }
        NginxAnswer::Answer(answer) => NginxReply::Answer(answer),
        NginxAnswer::Redirect(location) => NginxReply::Redirect(location),
    })
}

/// The answer to `route`, a resource of a title, asked from `place`: the request loaded
/// (`TitleRequest::load`), a sequence's part resolved to the part's own request, then the
/// output that owns the resource.
///
/// # Errors
/// The request's load errors, and the output's.
async fn title_answer(
    app: &Arc<App>,
    route: TitleRoute,
    place: &RequestPlace<'_>,
    hold: Hold,
) -> Result<Answer, ServeError> {
    let req = TitleRequest::load(app, route, place).await?;
    let answer = match (req.part_request()?, req.cached.sequence.is_some()) {
        (Some(part), _) => Box::pin(output_answer(&part)).await?,
        (None, true) => Box::pin(sequence::sequence_resource(&req)).await?,
        (None, false) => output_answer(&req).await?,
    };
    Ok(req.held(answer, place, hold))
}

/// The output that owns `req.resource`, answering it.
///
/// # Errors
/// The output's; [`ServeError::NoRendition`] for a sequence's part resource of a title
/// that is none.
async fn output_answer(req: &TitleRequest<'_>) -> Result<Answer, ServeError> {
    match req.resource {
        Resource::Multivariant
        | Resource::MediaPlaylist { .. }
        | Resource::IframePlaylist { .. } => hls::hls_playlist(req).await,
        Resource::Mpd => dash::mpd(req).await,
        Resource::Init { .. } | Resource::Segment { .. } | Resource::KeyFrame { .. } => {
            Box::pin(cmaf::cmaf_segment(req)).await
        }
        Resource::SubtitleSegment { .. } | Resource::SubtitleFile { .. } => {
            Box::pin(subtitles::webvtt(req)).await
        }
        Resource::TextInit { .. } | Resource::TextSegment { .. } => {
            Box::pin(subtitles::text_segment(req)).await
        }
        Resource::MultivariantTs
        | Resource::TsMediaPlaylist { .. }
        | Resource::TsIframePlaylist { .. }
        | Resource::TsSegment { .. }
        | Resource::TsSubtitleSegment { .. } => Box::pin(ts::ts_resource(req)).await,
        Resource::PartInit { .. }
        | Resource::PartSegment { .. }
        | Resource::PartSubtitleSegment { .. }
        | Resource::PartSubtitleFile { .. }
        | Resource::PartTextInit { .. }
        | Resource::PartTextSegment { .. } => Err(ServeError::NoRendition(
            req.resource.track_id().unwrap_or(0),
        )),
    }
}

/// The media resource a thumbnail or storyboard route is signed as (a key frame of its title), for the
/// signed-URL check; `None` for other routes.
fn thumbnail_signed_as(route: &Route) -> Option<Route> {
    let (Route::Thumbnail {
        key, version, view, ..
    }
    | Route::Storyboard {
        key, version, view, ..
    }) = route
    else {
        return None;
    };
    Some(Route::Vod {
        key: key.clone(),
        version: version.clone(),
        resource: Resource::KeyFrame {
            track_id: 0,
            number: 1,
        },
        view: view.clone(),
    })
}
