//! The connection's send timeout: a client that takes none of an answer for
//! `send_timeout_ms` is cut off, as nginx's `send_timeout` does ("set only between two
//! successive write operations").
//!
//! A streamed body is pulled by the connection (`body.rs`), with no producer task to time
//! its own sends: when the client stops reading, the socket stops taking bytes, the
//! connection (`http1/conn.rs`) stops polling the body, and only the connection can notice. So every write that would wait
//! arms one timer per connection, and any progress disarms it; a connection that never
//! waits to write never touches the timer.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// `io` with a deadline on writes that make no progress.
pub struct SendTimeout<T> {
    io: T,
    timeout: Duration,
    /// The deadline of the write that is waiting, if one is; made on the first wait.
    sleep: Option<Pin<Box<Sleep>>>,
    armed: bool,
    /// Counts the connections closed for it.
    stalled: Counter,
}

impl<T> SendTimeout<T> {
    pub fn new(io: T, timeout: Duration, stalled: Counter) -> Self {
        Self {
            io,
            timeout,
            sleep: None,
            armed: false,
            stalled,
        }
    }

    /// Pass a finished write through, or time a waiting one.
    fn watch<R>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        if polled.is_ready() {
            self.armed = false;
            return polled;
        }
        if !self.armed {
            let deadline = Instant::now() + self.timeout;
            match self.sleep.as_mut() {
                Some(sleep) => sleep.as_mut().reset(deadline),
                None => self.sleep = Some(Box::pin(tokio::time::sleep_until(deadline))),
            }
            self.armed = true;
        }
        let timeout = self.timeout;
        let sleep = (self.sleep).get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match sleep.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => {
                self.stalled.inc();
                tracing::warn!("client stopped reading; closing the connection");
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "send timeout: the client took nothing",
                )))
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for SendTimeout<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for SendTimeout<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write(cx, buf);
        this.watch(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.watch(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_flush(cx);
        this.watch(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_shutdown(cx);
        this.watch(cx, polled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// Given a connection whose reader takes nothing, when the server writes more than the
    /// pipe holds, then the write fails after the timeout and the stall is counted; a reader
    /// that keeps reading is never cut.
    #[tokio::test(start_paused = true)]
    async fn a_client_that_takes_nothing_is_cut_off() {
        let (ours, mut theirs) = tokio::io::duplex(1024);
        let stalled = Counter::default();
        let mut conn = SendTimeout::new(ours, Duration::from_secs(30), stalled.clone());
        let failed = conn.write_all(&[0u8; 4096]).await;
        assert_eq!(failed.map_err(|e| e.kind()), Err(io::ErrorKind::TimedOut));
        assert_eq!(stalled.get(), 1);

        let (ours, mut reader) = tokio::io::duplex(1024);
        let mut conn = SendTimeout::new(ours, Duration::from_secs(30), stalled.clone());
        let read = tokio::spawn(async move {
            let mut all = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut reader, &mut all)
                .await
                .map(|_| all.len())
        });
        conn.write_all(&[0u8; 4096]).await.unwrap();
        conn.shutdown().await.unwrap();
        drop(conn);
        assert_eq!(read.await.unwrap().unwrap(), 4096);
        assert_eq!(stalled.get(), 1);
        drop(theirs.shutdown().await);
    }
}
