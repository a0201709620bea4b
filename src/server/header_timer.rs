//! The timer hyper is given for a connection's header read timeout: one tokio timer per
//! connection, moved lazily.
//!
//! Why not hyper-util's `TokioTimer`: hyper asks its timer for a new sleep each time it
//! starts reading a request head (which on a keep-alive connection is as soon as the last
//! answer is written) and drops it once the head is read. With `TokioTimer` each request
//! therefore put an entry in tokio's timer wheel and took it out again, both under the
//! time driver's lock: about 2 % of a held manifest answer's CPU (`perf`, issue 28), for a
//! deadline that almost never fires.
//!
//! Here a connection keeps one tokio `Sleep`. A request's sleep only records its deadline.
//! The tokio sleep is moved when it fires before the deadline of the sleep then waiting
//! (at most once per timeout period on a busy connection) or when a sleep needs an
//! earlier deadline than it is set to. A deadline is never late; a sleep dropped before
//! its deadline costs at most one spurious wake of the connection's task.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use hyper::rt::{Sleep, Timer};

/// A connection's timer for hyper (`http1::Builder::timer`).
#[derive(Clone, Default)]
pub struct HeaderTimer {
    /// The connection's one tokio sleep, made on the first wait.
    armed: Arc<Mutex<Option<Armed>>>,
}

/// The connection's tokio sleep, and the waker it last took.
struct Armed {
    sleep: Pin<Box<tokio::time::Sleep>>,
    /// The waker the sleep holds, until it fires or is moved. While it would wake the
    /// polling task, a poll has nothing to register and returns at once: hyper polls a
    /// request's sleep each time it finds no whole head yet, on every request.
    registered: Option<Waker>,
}

impl HeaderTimer {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Timer for HeaderTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(Deadline {
            deadline: deadline.into(),
            armed: self.armed.clone(),
        })
    }

    fn now(&self) -> Instant {
        // tokio's clock, so that tests with paused time see the same instants.
        tokio::time::Instant::now().into_std()
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn Sleep>>, new_deadline: Instant) {
        match sleep.as_mut().downcast_mut_pin::<Deadline>() {
            Some(mut sleep) => sleep.deadline = new_deadline.into(),
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}

/// One sleep hyper waits on: ready at `deadline`.
struct Deadline {
    deadline: tokio::time::Instant,
    armed: Arc<Mutex<Option<Armed>>>,
}

impl Future for Deadline {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let deadline = self.deadline;
        // Only this connection's task takes the lock: it is never contended, and a
        // poisoned one (a panic while held) still holds a usable sleep.
        let mut armed = self.armed.lock().unwrap_or_else(|e| e.into_inner());
        let armed = armed.get_or_insert_with(|| Armed {
            sleep: Box::pin(tokio::time::sleep_until(deadline)),
            registered: None,
        });
        if armed.sleep.deadline() > deadline {
            armed.sleep.as_mut().reset(deadline);
            armed.registered = None;
        }
        // Set for this deadline or earlier, not fired, and holding this task's waker:
        // it will wake the task in time, so there is nothing to do.
        let waits_for_this_task =
            (armed.registered.as_ref()).is_some_and(|waker| waker.will_wake(cx.waker()));
        if waits_for_this_task && !armed.sleep.is_elapsed() {
            return Poll::Pending;
        }
        if armed.poll_sleep(cx).is_pending() {
            return Poll::Pending;
        }
        if armed.sleep.deadline() >= deadline {
            return Poll::Ready(());
        }
        // It fired for an earlier sleep that is gone: set it to this one's deadline.
        armed.sleep.as_mut().reset(deadline);
        armed.poll_sleep(cx)
    }
}

impl Armed {
    /// Poll the tokio sleep, noting the waker it keeps while it waits.
    fn poll_sleep(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let polled = self.sleep.as_mut().poll(cx);
        self.registered = polled.is_pending().then(|| cx.waker().clone());
        polled
    }
}

impl Sleep for Deadline {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Given a connection whose earlier requests each armed and dropped a sleep, when the
    /// next request's sleep waits, then it is ready at its own deadline, not at the
    /// earlier ones' and not later.
    #[tokio::test(start_paused = true)]
    async fn a_sleep_is_ready_at_its_own_deadline_after_earlier_ones_were_dropped() {
        let timer = HeaderTimer::new();
        let start = tokio::time::Instant::now();

        // Two requests' sleeps, each polled once and dropped before its deadline.
        for _ in 0..2 {
            let mut early = timer.sleep(Duration::from_secs(10));
            let polled = std::future::poll_fn(|cx| Poll::Ready(early.as_mut().poll(cx))).await;
            assert!(polled.is_pending());
            tokio::time::advance(Duration::from_secs(4)).await;
        }

        // The third waits: the connection's tokio sleep is still set to the first one's
        // deadline (10 s), which passes first.
        let waiting = timer.sleep(Duration::from_secs(10));
        waiting.await;
        assert_eq!(tokio::time::Instant::now() - start, Duration::from_secs(18));

        // A shorter sleep after that moves the tokio sleep earlier.
        timer.sleep(Duration::from_secs(1)).await;
        assert_eq!(tokio::time::Instant::now() - start, Duration::from_secs(19));
    }

    /// Given a hyper connection with this timer and a 10 s header read timeout, when a
    /// client sends two requests, then half of a third and nothing more, then both are
    /// answered and the connection is closed 10 s after the second answer, not before.
    #[tokio::test(start_paused = true)]
    async fn hyper_closes_a_connection_whose_head_does_not_come_in_time() {
        use http_body_util::Full;
        use hyper::service::service_fn;
        use hyper_util::rt::TokioIo;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        let (ours, mut client) = tokio::io::duplex(4096);
        let service = service_fn(|_req| async {
            Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(
                bytes::Bytes::from_static(b"ok"),
            )))
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(HeaderTimer::new())
            .header_read_timeout(Duration::from_secs(10))
            .serve_connection(TokioIo::new(ours), service);
        let served = tokio::spawn(conn);

        let mut buf = vec![0u8; 1024];
        for _ in 0..2 {
            tokio::time::advance(Duration::from_secs(6)).await;
            client
                .write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
                .await
                .unwrap();
            let n = client.read(&mut buf).await.unwrap();
            assert!(buf[..n].starts_with(b"HTTP/1.1 200 OK"), "answered");
        }
        let answered = tokio::time::Instant::now();
        client.write_all(b"GET / HTTP/1.1\r\nho").await.unwrap();
        // Bounded in (paused) time: a timer that never fires fails here instead of hanging.
        let read = tokio::time::timeout(Duration::from_secs(60), client.read(&mut buf));
        assert_eq!(read.await.expect("closed in time").unwrap(), 0, "closed");
        assert_eq!(
            tokio::time::Instant::now() - answered,
            Duration::from_secs(10)
        );
        assert!(served.await.unwrap().is_err(), "a header timeout error");
    }

    /// Given hyper's reset of a waiting sleep, then the sleep is ready at the new deadline.
    #[tokio::test(start_paused = true)]
    async fn a_reset_sleep_is_ready_at_the_new_deadline() {
        let timer = HeaderTimer::new();
        let start = tokio::time::Instant::now();
        let mut sleep = timer.sleep(Duration::from_secs(10));
        timer.reset(&mut sleep, timer.now() + Duration::from_secs(3));
        sleep.await;
        assert_eq!(tokio::time::Instant::now() - start, Duration::from_secs(3));
    }
}
