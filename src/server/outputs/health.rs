//! The service routes: liveness (`/healthz`), readiness (`/readyz`: not draining, and the
//! media source answers) and the Prometheus exposition (`/metrics`).

use bytes::Bytes;

use crate::server::app::App;
use crate::server::error::ServeError;
use crate::server::respond::answer::Answer;

const TEXT: &str = "text/plain; charset=utf-8";

/// `/healthz`: the process answers.
pub fn healthz() -> Answer {
    Answer::plain(Bytes::from_static(b"ok\n"), TEXT)
}

/// `/readyz`: ready unless draining or the media source does not answer.
///
/// # Errors
/// [`ServeError::Draining`], or [`ServeError::SourceNotReady`] with the source's error.
pub async fn readyz(app: &App) -> Result<Answer, ServeError> {
    if app.is_draining() {
        return Err(ServeError::Draining);
    }
    (app.catalog.source().check_ready().await).map_err(ServeError::SourceNotReady)?;
    Ok(Answer::plain(Bytes::from_static(b"ready\n"), TEXT))
}

/// `/metrics`: the Prometheus text exposition.
pub async fn metrics(app: &App) -> Answer {
    let text = Box::pin(app.render_metrics()).await;
    Answer::plain(
        Bytes::from(text),
        "text/plain; version=0.0.4; charset=utf-8",
    )
}
