//! The header read timeout, kept by the connection rather than by hyper: between answers, a
//! client has `timeout` to bring a whole request head, or its connection is closed. Like
//! nginx's `client_header_timeout`, it also ends a keep-alive connection left idle.
//!
//! Why not hyper's `header_read_timeout`: hyper arms it each time it starts reading a head.
//! It asks its timer for a new boxed sleep per request, and polls the connection once more
//! after every answer only to arm it. That was 780 of 11,425 instructions per held manifest
//! answer (callgrind, issue 28), for a deadline that almost never fires.
//!
//! Here the connection's service counts its answers in flight and notes when the last one
//! ended (`Answering`). The connection's reads look at the deadline only when they would
//! wait with no answer in flight: a slow head, or an idle connection. While an answer is in
//! flight, however long it streams, no head is due. The connection keeps one tokio sleep,
//! moved lazily: a deadline is never late, and an answer that ended after the sleep was set
//! costs at most one early wake.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use http_body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// One connection's answers: how many are in flight, and when the last one ended.
#[derive(Debug)]
pub struct Answering {
    /// The connection's start: `idle_since_ns` counts from it.
    started: Instant,
    in_flight: AtomicU32,
    /// When the connection last had no answer in flight, in ns after `started`.
    idle_since_ns: AtomicU64,
}

impl Answering {
    /// A connection that starts now, idle.
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            started: Instant::now(),
            in_flight: AtomicU32::new(0),
            idle_since_ns: AtomicU64::new(0),
        })
    }

    /// A request's answer begins (its head was read); it ends when the guard is dropped,
    /// which is when the connection drops its body: sent, or given up.
    pub fn begin(self: &Arc<Self>) -> Answer {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        Answer(self.clone())
    }

    /// Since when the connection has had no answer in flight, if it has none.
    fn idle_since(&self) -> Option<Instant> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        let ns = self.idle_since_ns.load(Ordering::Acquire);
        // None past the clock's range: never, in practice; then no deadline is kept.
        self.started.checked_add(Duration::from_nanos(ns))
    }
}

/// An answer in flight on its connection (see [`Answering::begin`]).
#[derive(Debug)]
pub struct Answer(Arc<Answering>);

impl Drop for Answer {
    fn drop(&mut self) {
        let ns = u64::try_from(self.0.started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.0.idle_since_ns.fetch_max(ns, Ordering::AcqRel);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that ends its answer when the connection drops it.
#[derive(Debug)]
pub struct Answered<B> {
    body: B,
    _answer: Answer,
}

impl<B> Answered<B> {
    pub fn new(body: B, answer: Answer) -> Self {
        Self {
            body,
            _answer: answer,
        }
    }
}

impl<B: Body + Unpin> Body for Answered<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// `io` whose reads fail with `TimedOut` once a head is overdue (see the module
/// documentation).
pub struct HeadTimeout<T> {
    io: T,
    answering: Arc<Answering>,
    timeout: Duration,
    /// The connection's one sleep, made on the first wait.
    sleep: Option<Pin<Box<Sleep>>>,
    /// The waker the sleep holds, until it fires or is moved: while it would wake the
    /// polling task, a wait has nothing to register.
    registered: Option<Waker>,
}

impl<T> HeadTimeout<T> {
    pub fn new(io: T, answering: Arc<Answering>, timeout: Duration) -> Self {
        Self {
            io,
            answering,
            timeout,
            sleep: None,
            registered: None,
        }
    }

    /// Ready once `deadline` has passed; until then the task is woken at or before it.
    fn wait_until(&mut self, cx: &mut Context<'_>, deadline: Instant) -> Poll<()> {
        let sleep =
            (self.sleep).get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if sleep.deadline() > deadline {
            sleep.as_mut().reset(deadline);
            self.registered = None;
        }
        if self.waits_for(cx) {
            return Poll::Pending;
        }
        if self.poll_sleep(cx).is_ready() {
            if self
                .sleep
                .as_ref()
                .is_some_and(|s| s.deadline() >= deadline)
            {
                return Poll::Ready(());
            }
            // It was set for an earlier answer's end: move it to this deadline.
            return self.arm(cx, deadline);
        }
        Poll::Pending
    }

    /// While an answer is in flight no head is due, but the task must still be woken to
    /// look again after the answer ends: hyper's read that waits for the next head may have
    /// come before the answer ended. So a sleep stays set, at most `timeout` ahead.
    fn keep_set(&mut self, cx: &mut Context<'_>) {
        if !self.waits_for(cx) {
            let _ = self.arm(cx, Instant::now() + self.timeout);
        }
    }

    /// Whether the sleep is set, not yet fired, and holds this task's waker.
    fn waits_for(&self, cx: &Context<'_>) -> bool {
        let registered_here = (self.registered.as_ref()).is_some_and(|w| w.will_wake(cx.waker()));
        registered_here && self.sleep.as_ref().is_some_and(|s| !s.is_elapsed())
    }

    /// Set the sleep to `deadline` and register this task's waker.
    fn arm(&mut self, cx: &mut Context<'_>, deadline: Instant) -> Poll<()> {
        match self.sleep.as_mut() {
            Some(sleep) => sleep.as_mut().reset(deadline),
            None => self.sleep = Some(Box::pin(tokio::time::sleep_until(deadline))),
        }
        self.poll_sleep(cx)
    }

    /// Poll the sleep, noting the waker it keeps while it waits.
    fn poll_sleep(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let polled = match self.sleep.as_mut() {
            Some(sleep) => sleep.as_mut().poll(cx),
            None => Poll::Ready(()),
        };
        self.registered = polled.is_pending().then(|| cx.waker().clone());
        polled
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for HeadTimeout<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if polled.is_ready() {
            return polled;
        }
        let Some(idle_since) = this.answering.idle_since() else {
            this.keep_set(cx);
            return Poll::Pending;
        };
        // Past the clock's range (never, in practice) there is no deadline to keep.
        let Some(deadline) = idle_since.checked_add(this.timeout) else {
            return Poll::Pending;
        };
        match this.wait_until(cx, deadline) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "header read timeout: no whole request head in time",
            ))),
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for HeadTimeout<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http_body_util::Full;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

    const TIMEOUT: Duration = Duration::from_secs(10);

    /// A hyper connection served as `listen.rs` serves one, over a pipe, whose answers
    /// take `answer_takes` each; and the client's end of the pipe.
    fn serve(answer_takes: Duration) -> (tokio::task::JoinHandle<hyper::Result<()>>, DuplexStream) {
        let (ours, client) = tokio::io::duplex(4096);
        let answering = Answering::new();
        let for_service = answering.clone();
        let service = service_fn(move |_req| {
            let answer = for_service.begin();
            async move {
                tokio::time::sleep(answer_takes).await;
                let body = Full::new(Bytes::from_static(b"ok"));
                Ok::<_, std::convert::Infallible>(hyper::Response::new(Answered::new(body, answer)))
            }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .header_read_timeout(None)
            .serve_connection(
                TokioIo::new(HeadTimeout::new(ours, answering, TIMEOUT)),
                service,
            );
        (tokio::spawn(conn), client)
    }

    /// Reads until the connection answers or closes; bounded in (paused) time, so a timeout
    /// that never fires fails the test instead of hanging it.
    async fn read_some(client: &mut (impl AsyncRead + Unpin)) -> Vec<u8> {
        let mut buf = vec![0u8; 1024];
        let read = tokio::time::timeout(Duration::from_secs(120), client.read(&mut buf));
        let n = read.await.expect("an answer or a close in time").unwrap();
        buf.truncate(n);
        buf
    }

    /// Given a connection answering at once, when a client sends two requests 6 s apart,
    /// then half of a third and nothing more, then both are answered and the connection is
    /// closed 10 s after the second answer, not before.
    #[tokio::test(start_paused = true)]
    async fn a_head_that_does_not_come_in_time_closes_the_connection() {
        let (served, mut client) = serve(Duration::ZERO);
        for _ in 0..2 {
            tokio::time::advance(Duration::from_secs(6)).await;
            client
                .write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
                .await
                .unwrap();
            assert!(
                read_some(&mut client).await.starts_with(b"HTTP/1.1 200 OK"),
                "answered"
            );
        }
        let answered = Instant::now();
        client.write_all(b"GET / HTTP/1.1\r\nho").await.unwrap();
        assert_eq!(read_some(&mut client).await, b"", "closed");
        assert_eq!(Instant::now() - answered, TIMEOUT);
        assert!(
            served.await.unwrap().is_err(),
            "the connection ends with the timeout"
        );
    }

    /// Given a client that sends a head a byte every 3 s, then the connection is closed
    /// 10 s after it opened, while bytes still come: they make no whole head.
    #[tokio::test(start_paused = true)]
    async fn a_head_sent_a_byte_at_a_time_is_cut_at_the_deadline() {
        let opened = Instant::now();
        let (_served, client) = serve(Duration::ZERO);
        let (mut from_server, mut to_server) = tokio::io::split(client);
        let trickle = tokio::spawn(async move {
            for byte in b"GET / HTTP/1.1\r\nhost: x\r\n" {
                if to_server.write_all(&[*byte]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_secs(3)).await;
            }
        });
        assert_eq!(read_some(&mut from_server).await, b"", "closed");
        assert_eq!(Instant::now() - opened, TIMEOUT);
        trickle.abort();
    }

    /// Given an answer that takes 25 s, when a client asks for it and then says nothing,
    /// then it gets the whole answer, and the connection closes 10 s after that answer
    /// ended, not 10 s after the request.
    #[tokio::test(start_paused = true)]
    async fn an_answer_in_flight_is_never_cut_and_the_wait_starts_when_it_ends() {
        let (served, mut client) = serve(Duration::from_secs(25));
        let asked = Instant::now();
        client
            .write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        let answer = read_some(&mut client).await;
        assert!(answer.starts_with(b"HTTP/1.1 200 OK"), "answered");
        assert!(answer.ends_with(b"ok"), "the whole body");
        assert_eq!(Instant::now() - asked, Duration::from_secs(25));
        assert_eq!(read_some(&mut client).await, b"", "closed");
        assert_eq!(Instant::now() - asked, Duration::from_secs(35));
        let _ = served.await.unwrap();
    }
}
