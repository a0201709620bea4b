//! One connection's life: wait for a whole head (within the head timeout, unless the
//! server drains), read the body its `Content-Length` announces, hand the request to the
//! service, write the answer's head and body, and go round again while both sides keep
//! the connection open.
//!
//! The connection runs as its own task, start to end: the head timeout's one sleep is
//! registered with that task's waker and is not polled again until it fires (a wait
//! that began later only moves its deadline when it does), so a keep-alive connection
//! pays for the timer once per timeout, not once per request.

use std::future::{poll_fn, Future};
use std::io::{self, IoSlice};
use std::pin::{pin, Pin};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::Full;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::{Instant, Sleep};

use super::answer_head::{self, BodyFraming};
use super::head::{self, Head, Refused};
use super::HeaderLines;

/// What a connection may take from a client, and for how long it waits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// How long a client may take to send a whole request (head and body), from the
    /// end of its last answer or from connecting.
    pub head_timeout: Duration,
    /// The largest request head.
    pub max_head_bytes: usize,
    /// The largest request body; a larger one is answered 413 and the connection closes.
    pub max_body_bytes: usize,
}

/// Bodies up to this size go out with their head in one write.
const COALESCE_BYTES: usize = 16 * 1024;
/// The read buffer's first size, and how much room a read asks for: most heads of
/// players and CDNs fit in one.
const READ_BYTES: usize = 4 * 1024;
/// How long a refused client's leftover bytes are read before the close, so the close
/// does not reset the connection before the client reads the refusal.
const LINGER: Duration = Duration::from_secs(1);

/// Serve HTTP/1.x on `io` until either side closes, the head timeout passes, or
/// `closing()` turns true between answers.
///
/// # Errors
/// An I/O error, or a body that failed or ended short of its length (the connection is
/// then cut, so no client takes a cut body for a whole one).
pub async fn serve<IO, S, F, B>(
    io: IO,
    limits: Limits,
    closing: impl Fn() -> bool,
    mut service: S,
) -> io::Result<()>
where
    IO: AsyncRead + AsyncWrite + Unpin,
    S: FnMut(Request<Full<Bytes>>) -> F,
    F: Future<Output = Response<B>>,
    B: Body<Data = Bytes> + HeaderLines + Default,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut conn = Conn {
        io,
        read: BytesMut::with_capacity(READ_BYTES),
        write: Vec::new(),
        limits,
        deadline: Instant::now() + limits.head_timeout,
        timer: None,
        timer_armed: false,
    };
    loop {
        let head = match conn.next_head(&closing).await? {
            Next::Head(head) => head,
            Next::Closed => return Ok(()),
            Next::Refused(refused) => return conn.refuse(refused.status()).await,
        };
        let Head {
            request,
            body_len,
            mut keep_alive,
            expects_continue,
            asks_server_options,
        } = head;
        let Some(body_len) = usize::try_from(body_len)
            .ok()
            .filter(|len| *len <= limits.max_body_bytes)
        else {
            return conn.refuse(StatusCode::PAYLOAD_TOO_LARGE).await;
        };
        let body = match conn.read_body(body_len, expects_continue).await? {
            Some(body) => body,
            None => return Ok(()),
        };
        let (parts, ()) = request.into_parts();
        let version = parts.version;
        let sends_body = parts.method != Method::HEAD;
        let response = if asks_server_options {
            server_options()
        } else {
            service(Request::from_parts(parts, Full::new(body))).await
        };
        let (answer, body) = response.into_parts();
        let framing = answer_head::write(
            &mut conn.write,
            version,
            answer.status,
            &answer.headers,
            body.header_lines(),
            body.size_hint().exact(),
            &mut keep_alive,
        );
        match framing {
            BodyFraming::Length(len) if sends_body => conn.send_body(body, Some(len)).await?,
            BodyFraming::UntilClose if sends_body => conn.send_body(body, None).await?,
            _ => conn.flush_head().await?,
        }
        conn.deadline = Instant::now() + limits.head_timeout;
        if !keep_alive || closing() {
            let _ = conn.io.shutdown().await;
            return Ok(());
        }
    }
}

/// The answer to `OPTIONS *`, a question about the server rather than a resource (RFC
/// 9110 9.3.7): the methods it serves, and no body.
fn server_options<B: Default>() -> Response<B> {
    let mut answer = Response::new(B::default());
    answer.headers_mut().insert(
        http::header::ALLOW,
        HeaderValue::from_static("GET, HEAD, OPTIONS, POST"),
    );
    answer
}

/// A connection's state between requests.
struct Conn<IO> {
    io: IO,
    /// Bytes read and not yet taken: part of a head, or the next pipelined request.
    read: BytesMut,
    /// An answer's head, and a small body after it, waiting for one write.
    write: Vec<u8>,
    limits: Limits,
    /// When the request being waited for must be whole.
    deadline: Instant,
    /// The head timeout's sleep, made on the first wait.
    timer: Option<Pin<Box<Sleep>>>,
    /// Whether the sleep holds this task's waker and has not fired since.
    timer_armed: bool,
}

/// What waiting for the next head ends with.
// Moved once per request; boxing the head would allocate once per request instead.
#[allow(clippy::large_enum_variant)]
enum Next {
    Head(Head),
    Refused(Refused),
    /// The client closed, the head timeout passed, or the server drains.
    Closed,
}

/// What one read ends with.
enum Filled {
    Bytes,
    Closed,
}

impl<IO: AsyncRead + AsyncWrite + Unpin> Conn<IO> {
    /// The next whole head: from the bytes already read (a pipelined request), else
    /// from reads until it is whole.
    async fn next_head(&mut self, closing: &impl Fn() -> bool) -> io::Result<Next> {
        loop {
            match head::take(&mut self.read, self.limits.max_head_bytes) {
                Ok(Some(head)) => return Ok(Next::Head(head)),
                Ok(None) => {}
                Err(refused) => return Ok(Next::Refused(refused)),
            }
            // An idle connection closes when the server drains; one mid-head is given
            // until its timeout, as it would be otherwise.
            let idle = self.read.is_empty();
            if let Filled::Closed = self.fill(|| idle && closing()).await? {
                return Ok(Next::Closed);
            }
        }
    }

    /// The request's body of `len` bytes, `None` if the client closed or ran out of time
    /// before sending it.
    async fn read_body(&mut self, len: usize, expects_continue: bool) -> io::Result<Option<Bytes>> {
        if len == 0 {
            return Ok(Some(Bytes::new()));
        }
        if expects_continue && self.read.len() < len {
            self.io.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
        }
        while self.read.len() < len {
            if let Filled::Closed = self.fill(|| false).await? {
                return Ok(None);
            }
        }
        Ok(Some(self.read.split_to(len).freeze()))
    }

    /// Read what the client sent next, waiting until the deadline at most.
    async fn fill(&mut self, closing: impl Fn() -> bool) -> io::Result<Filled> {
        if closing() {
            return Ok(Filled::Closed);
        }
        if self.read.capacity() - self.read.len() < READ_BYTES / 4 {
            self.read.reserve(READ_BYTES);
        }
        let Conn {
            io,
            read,
            deadline,
            timer,
            timer_armed,
            ..
        } = self;
        let mut reading = pin!(io.read_buf(read));
        poll_fn(|cx| {
            if let Poll::Ready(read) = reading.as_mut().poll(cx) {
                return Poll::Ready(read.map(|n| {
                    if n == 0 {
                        Filled::Closed
                    } else {
                        Filled::Bytes
                    }
                }));
            }
            if closing() || timed_out(timer, timer_armed, *deadline, cx) {
                return Poll::Ready(Ok(Filled::Closed));
            }
            Poll::Pending
        })
        .await
    }

    /// Send the head written to `self.write` and the body after it, checking the body
    /// against `len` when the head said one.
    async fn send_body<B>(&mut self, body: B, mut len: Option<u64>) -> io::Result<()>
    where
        B: Body<Data = Bytes>,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let mut body = pin!(body);
        loop {
            // What is written so far goes out while the body makes its next chunk.
            let frame = match poll_fn(|cx| Poll::Ready(body.as_mut().poll_frame(cx))).await {
                Poll::Ready(frame) => frame,
                Poll::Pending => {
                    self.flush_head().await?;
                    poll_fn(|cx| body.as_mut().poll_frame(cx)).await
                }
            };
            let Some(frame) = frame else { break };
            let frame = frame.map_err(|e| io::Error::other(e.into()))?;
            // Trailers are not sent: every body here has a length.
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if let Some(left) = len.as_mut() {
                *left = (left.checked_sub(data.len() as u64))
                    .ok_or_else(|| io::Error::other("a body longer than its length"))?;
            }
            if self.write.len() + data.len() <= COALESCE_BYTES {
                self.write.extend_from_slice(&data);
            } else {
                self.write_with(&data).await?;
            }
        }
        if len.is_some_and(|left| left > 0) {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "a body shorter than its length",
            ));
        }
        self.flush_head().await
    }

    /// Write what waits in `self.write`.
    async fn flush_head(&mut self) -> io::Result<()> {
        if !self.write.is_empty() {
            self.io.write_all(&self.write).await?;
            self.write.clear();
        }
        self.io.flush().await
    }

    /// Write what waits in `self.write`, then `data`, in as few writes as the socket takes.
    async fn write_with(&mut self, data: &[u8]) -> io::Result<()> {
        let (mut head_at, mut data_at) = (0, 0);
        while head_at < self.write.len() || data_at < data.len() {
            let head = self.write.get(head_at..).unwrap_or_default();
            let rest = data.get(data_at..).unwrap_or_default();
            let bufs = [IoSlice::new(head), IoSlice::new(rest)];
            let io = &mut self.io;
            let n = poll_fn(|cx| Pin::new(&mut *io).poll_write_vectored(cx, &bufs)).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            let from_head = n.min(head.len());
            head_at += from_head;
            data_at += n - from_head;
        }
        self.write.clear();
        if self.write.capacity() > COALESCE_BYTES {
            self.write = Vec::new();
        }
        Ok(())
    }

    /// Answer a refused request with `status` and close, reading what the client still
    /// sends for a moment so the close does not reset the connection under the answer.
    async fn refuse(mut self, status: StatusCode) -> io::Result<()> {
        self.write.clear();
        answer_head::write_refusal(&mut self.write, status);
        self.flush_head().await?;
        let _ = self.io.shutdown().await;
        let mut sink = [0u8; 1024];
        let _ = tokio::time::timeout(LINGER, async {
            while self.io.read(&mut sink).await? > 0 {}
            Ok::<_, io::Error>(())
        })
        .await;
        Ok(())
    }
}

/// Whether `deadline` has passed, polling the head timeout's one sleep only when it is
/// not already set with this task's waker, or has fired: one registration per timeout
/// rather than per request.
fn timed_out(
    timer: &mut Option<Pin<Box<Sleep>>>,
    armed: &mut bool,
    deadline: Instant,
    cx: &mut Context<'_>,
) -> bool {
    let sleep = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
    if *armed && !sleep.is_elapsed() {
        return false;
    }
    if sleep.deadline() < deadline {
        sleep.as_mut().reset(deadline);
    }
    let fired = sleep.as_mut().poll(cx).is_ready();
    *armed = !fired;
    fired
}
