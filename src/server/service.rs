//! The server's front: `run` serves the accept loop (`listen.rs`) with `handle`, which
//! every request goes through first: a held answer when the request is a plain `GET` of
//! one (`held.rs`), else the preview page at `/` when it is on (`preview/`), else the
//! request's life by its route (`request.rs`).

use std::future::Future;
use std::sync::Arc;

use http::{Request, Response};
use tokio::net::TcpListener;

use super::app::App;
use super::body::ResponseBody;
use super::listen::serve;
use super::preview;
use super::request::handle_routed;

/// Serve `app` on `listener` until `shutdown` completes, then drain (`listen::serve`).
///
/// # Errors
/// Only if the listener itself fails irrecoverably.
pub async fn run(
    listener: TcpListener,
    app: Arc<App>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    serve(listener, app, shutdown, handle).await
}

/// Answer one request.
pub async fn handle<B>(app: Arc<App>, req: Request<B>) -> Response<ResponseBody>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    // A plain GET of a manifest whose answer is held: given as it is.
    let epoch = || app.catalog.source().identity_epoch();
    if let Some(given) = app.answers.answer_to(&req, epoch) {
        app.metrics.cache_hits.inc();
        app.metrics.sent_bytes.inc_by(given.bytes as u64);
        let seconds = given.started.elapsed().as_secs_f64();
        (app.metrics).observe_request(given.route, 200, seconds);
        return given.response;
    }
    // Boxed: the full path's future holds every output's state, many kilobytes, and the
    // connection moves each request's future into place. Inline, that copy was 5 % of a
    // held answer's instructions (callgrind).
    Box::pin(handle_unheld(app, req)).await
}

/// The preview page at `/`, when it is on; otherwise the request routed as usual.
async fn handle_unheld<B>(app: Arc<App>, req: Request<B>) -> Response<ResponseBody>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    if let Some(page) = preview::page::preview_page(&app, &req).await {
        return page;
    }
    handle_routed(app, req).await
}
