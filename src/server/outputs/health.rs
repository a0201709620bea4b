//! The service routes: liveness (`/healthz`), readiness (`/readyz`) and the Prometheus
//! exposition (`/metrics`).
//!
//! Readiness is the pod's own: started and not draining. The media source is shared by
//! every replica, so its outage is not a reason to take any replica out of the load
//! balancer (all of them would go at once, leaving no target and no 5xx to alert on):
//! `/readyz` still answers 200, says `degraded` with the reason, and sets
//! `vod_source_up` to 0 and counts `vod_source_check_failures_total`, which the shipped
//! alert watches (deploy/prometheus-rules.yml). Media requests meanwhile answer 502/504
//! with the reason, as ever.

use bytes::Bytes;

use crate::server::app::App;
use crate::server::error::ServeError;
use crate::server::respond::answer::Answer;

const TEXT: &str = "text/plain; charset=utf-8";

/// Longest wait for the source's readiness check: under the shipped probe's 2 s timeout.
const SOURCE_CHECK_DEADLINE: std::time::Duration = std::time::Duration::from_secs(1);

/// `/healthz`: the process answers.
pub fn healthz() -> Answer {
    Answer::plain(Bytes::from_static(b"ok\n"), TEXT)
}

/// `/readyz`: ready unless draining; `ready` when the media source answers, else
/// `ready, degraded: media source unreachable: REASON` (still 200, see the top comment).
///
/// # Errors
/// [`ServeError::Draining`] once shutdown has begun.
pub async fn readyz(app: &App) -> Result<Answer, ServeError> {
    if app.is_draining() {
        return Err(ServeError::Draining);
    }
    // Bounded, so a stalled bucket never makes the probe itself time out (which would
    // take the pod out after all).
    let checked = tokio::time::timeout(SOURCE_CHECK_DEADLINE, app.catalog.source().check_ready())
        .await
        .map_err(|_| "no answer within 1 s".to_owned())
        .and_then(|answered| answered.map_err(|e| e.to_string()));
    app.metrics.source_checked(checked.is_ok());
    match checked {
        Ok(()) => Ok(Answer::plain(Bytes::from_static(b"ready\n"), TEXT)),
        Err(e) => {
            tracing::warn!(error = %e, "readiness: the media source does not answer");
            let text = format!("ready, degraded: media source unreachable: {e}\n");
            Ok(Answer::plain(Bytes::from(text), TEXT))
        }
    }
}

/// `/metrics`: the Prometheus text exposition.
pub async fn metrics(app: &App) -> Answer {
    let text = Box::pin(app.render_metrics()).await;
    Answer::plain(
        Bytes::from(text),
        "text/plain; version=0.0.4; charset=utf-8",
    )
}
