//! One request's life, as a straight line of steps: route -> `request` span (continuing the
//! caller's trace) -> preflight, signed-URL check, method and admission -> the output that
//! owns the route (`outputs/`) -> the response (`respond::reply`: conditionals, HEAD,
//! Range, streaming) -> CORS, trace id, metrics and the access log.
//!
//! Rare or long branches (segments, MPEG-TS, subtitles, encryption, licences, nginx-vod
//! names, loads on a miss) are awaited as boxed futures. A request's future is built and
//! moved several times before it first runs; kept inline, those branches made it 11 KiB,
//! and copying it was a visible part of a cached manifest's cost (docs/performance.md).

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::header::{self, HeaderValue};
use http::{Method, Request, Response};
use tracing::field::Empty;
use tracing::{Instrument, Span};
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::admission::Admitted;
use super::app::App;
use super::body::ResponseBody;
use super::client::{client_addr, PeerAddr};
use super::cors::narrow_cors;
use super::error::ServeError;
use super::log_context::{self, RequestFacts};
use super::outputs::nginx_vod::answer::NginxAnswer;
use super::outputs::vod::Hold;
use super::outputs::{health, keys, nginx_vod, thumb, vod};
use super::protect::manifest::RequestPlace;
use super::protect::protector::ClientAddr;
use super::respond::reply::{error_response, preflight, redirect, respond};
use super::route::error::RouteError;
use super::route::nginx_vod::parse_nginx_route;
use super::route::paths::{parse_route, Route};
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
            answer(&app, &req, route, body)
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
/// then the output that owns the route.
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
    if req.method() == Method::OPTIONS {
        return preflight();
    }
    // Signed URLs: a bare 403, the reason only in the log (never the token).
    let client = req.extensions().get::<ClientAddr>().map(|c| c.0);
    let (path, query) = (req.uri().path(), req.uri().query());
    // A thumbnail is signed as a media resource of its title is (`protect` knows no
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
    let result = match route {
        Route::Healthz => Ok(health::healthz()),
        Route::Readyz => health::readyz(app).await,
        Route::Metrics => Ok(health::metrics(app).await),
        Route::Key { key } => Box::pin(keys::key(app, &key)).await,
        Route::Licence { key } => Box::pin(keys::licence(app, &key, body)).await,
        Route::Vod {
            key,
            version,
            resource,
            view,
        } => {
            let answer = vod::answer(app, (key, version), resource, view, &place, Hold::Allowed);
            (tokio::time::timeout(deadline, answer).await)
                .unwrap_or(Err(ServeError::DeadlineExceeded))
        }
        Route::Thumbnail {
            key,
            version,
            view,
            name,
        } => {
            let answer = thumb::answer(app, shared(), (key, version), view, name);
            (tokio::time::timeout(deadline, Box::pin(answer)).await)
                .unwrap_or(Err(ServeError::DeadlineExceeded))
        }
        Route::Storyboard {
            key,
            version,
            view,
            part,
        } => {
            let query = place.query;
            let answer =
                thumb::storyboard::answer(app, shared(), (key, version), view, part, query);
            (tokio::time::timeout(deadline, Box::pin(answer)).await)
                .unwrap_or(Err(ServeError::DeadlineExceeded))
        }
        Route::NginxVod { key, view, name } => {
            let answer = nginx_vod::answer::answer(app, key, view, &name, &place);
            match tokio::time::timeout(deadline, Box::pin(answer)).await {
                Ok(Ok(NginxAnswer::Redirect(location))) => return redirect(&location),
                Ok(Ok(NginxAnswer::Answer(answer))) => Ok(answer),
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
        resource: crate::package::Resource::KeyFrame {
            track_id: 0,
            number: 1,
        },
        view: view.clone(),
    })
}
