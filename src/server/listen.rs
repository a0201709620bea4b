//! The accept loop: one task per connection, HTTP/1.x (`http1/`) on tokio, each request
//! handed to the service it is given (`service.rs` gives its own). Connections over the
//! cap get a 503 and are closed before their request is read; each connection gets the
//! send timeout (`send_timeout.rs`) and the head timeout (`http1/conn.rs`); on shutdown
//! the listener closes, the server is marked draining (so `/readyz` answers 503),
//! in-flight requests finish up to the drain deadline.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use tokio::net::TcpListener;

use super::app::App;
use super::body::ResponseBody;
use super::client::PeerAddr;
use super::drain::Drain;
use super::http1;
use super::send_timeout::SendTimeout;

/// What a connection takes from a client: a request head of 16 KiB at most (twice
/// nginx's default 8 KiB buffer), a body of 64 KiB at most (a licence request; its route
/// takes 16 KiB and answers 400 above that), the whole request within 10 s of the end of
/// the last answer (or of connecting).
const LIMITS: http1::Limits = http1::Limits {
    head_timeout: Duration::from_secs(10),
    max_head_bytes: 16 * 1024,
    max_body_bytes: 64 * 1024,
};

/// Serve `app` on `listener`, each request answered by `handle`, until `shutdown`
/// completes, then drain.
///
/// # Errors
/// Never for a single connection (those are logged); only if the listener itself fails
/// irrecoverably, which `accept` backs off from.
pub async fn serve<H, F>(
    listener: TcpListener,
    app: Arc<App>,
    shutdown: impl Future<Output = ()>,
    handle: H,
) -> std::io::Result<()>
where
    H: Fn(Arc<App>, Request<Full<Bytes>>) -> F + Copy + Send + 'static,
    F: Future<Output = Response<ResponseBody>> + Send + 'static,
{
    let drain = Drain::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // Usually EMFILE or a reset before accept: back off briefly, keep serving.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let Some(permit) = app.admission.admit_connection() else {
            app.metrics.rejected_connections.inc();
            tokio::spawn(reject_connection(stream));
            continue;
        };
        let app_for_conn = app.clone();
        // The extension map is allocated on first insert: only when a token check or the
        // access log reads it.
        let reads_peer = app.protect.reads_client_addr() || app.settings.server.access_log;
        let client_addr = reads_peer.then(|| peer.ip());
        let service = move |mut req: Request<Full<Bytes>>| {
            if let Some(ip) = client_addr {
                req.extensions_mut().insert(PeerAddr(ip));
            }
            handle(app_for_conn.clone(), req)
        };
        let send_timeout = Duration::from_millis(app.settings.server.send_timeout_ms);
        let stream = SendTimeout::new(stream, send_timeout, app.metrics.stalled_streams.clone());
        let signal = drain.signal();
        let conn = http1::serve(stream, LIMITS, move || signal.is_draining(), service);
        // Pinned in a box once per connection, for `Watched` to poll.
        let watched = drain.watch(Box::pin(conn));
        let metrics = app.metrics.clone();
        tokio::spawn(async move {
            let _permit = permit;
            metrics.connections_open.inc();
            if let Err(e) = watched.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            metrics.connections_open.dec();
        });
    }
    app.start_draining();
    drop(listener);
    tracing::info!("draining connections");
    let deadline = Duration::from_millis(app.settings.server.drain_timeout_ms);
    if tokio::time::timeout(deadline, drain.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("drain deadline passed with connections still open");
    }
    Ok(())
}

/// Answer a connection over the cap with a 503 and close it, without parsing its request.
/// Bounded: a second at most, however the client behaves.
async fn reject_connection(mut stream: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const ANSWER: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\n\
content-type: text/plain; charset=utf-8\r\ncache-control: no-store\r\n\
access-control-allow-origin: *\r\ncontent-length: 21\r\nconnection: close\r\n\r\n\
too many connections\n";
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        // Take what the client sent first, so closing does not reset the connection
        // before it reads the answer.
        let mut buf = [0u8; 4096];
        let _ = tokio::time::timeout(Duration::from_millis(100), stream.read(&mut buf)).await;
        stream.write_all(ANSWER).await?;
        stream.shutdown().await?;
        while stream.read(&mut buf).await? > 0 {}
        Ok::<_, std::io::Error>(())
    })
    .await;
}
