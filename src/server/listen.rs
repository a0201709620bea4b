//! The accept loop: one task per connection, hyper 1 HTTP/1.1 on tokio. Connections over
//! the cap get a 503 and are closed before their request is read; each connection gets the
//! send timeout (`send_timeout.rs`) and the header read timeout (`head_timeout.rs`); on
//! shutdown the listener closes, the server is marked draining (so `/readyz` answers 503),
//! in-flight requests finish up to the drain deadline.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::app::App;
use super::client::PeerAddr;
use super::drain::Drain;
use super::head_timeout::{Answered, Answering, HeadTimeout};
use super::send_timeout::SendTimeout;
use super::service::handle;

/// hyper's buffer limit per connection, for reading a request head and for queueing body
/// bytes to write. It bounds a request head (16 KiB, twice nginx's default 8 KiB buffer),
/// and how much of a streamed body hyper takes from the body channel ahead of the socket:
/// at 64 KiB it held up to 64 KiB per streaming connection on top of the body's chunks
/// (the bar: at most 64 KiB extra per streaming connection).
const MAX_BUF_BYTES: usize = 16 * 1024;

/// How long a client may take to send a whole request head, from the end of its last
/// answer (or from connecting).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Serve `app` on `listener` until `shutdown` completes, then drain.
///
/// # Errors
/// Never for a single connection (those are logged); only if the listener itself fails
/// irrecoverably, which `accept` backs off from.
pub async fn run(
    listener: TcpListener,
    app: Arc<App>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
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
        let answering = Answering::new();
        let answers = answering.clone();
        let service = service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
            if let Some(ip) = client_addr {
                req.extensions_mut().insert(PeerAddr(ip));
            }
            let answer = answers.begin();
            let app = app_for_conn.clone();
            async move {
                let response = handle(app, req).await;
                Ok::<_, std::convert::Infallible>(response.map(|body| Answered::new(body, answer)))
            }
        });
        let send_timeout = Duration::from_millis(app.settings.server.send_timeout_ms);
        let stream = SendTimeout::new(stream, send_timeout, app.metrics.stalled_streams.clone());
        let stream = HeadTimeout::new(stream, answering, HEADER_READ_TIMEOUT);
        let conn = hyper::server::conn::http1::Builder::new()
            // Kept by `HeadTimeout` instead, for less work per request (`head_timeout.rs`).
            .header_read_timeout(None)
            .max_buf_size(MAX_BUF_BYTES)
            .serve_connection(TokioIo::new(stream), service);
        let watched = drain.watch(conn);
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
