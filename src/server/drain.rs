//! Closing the open connections on shutdown: every connection is watched; when the server
//! drains, each is woken, reads the flag ([`DrainSignal`]), finishes the answer in flight
//! and closes (an idle keep-alive connection closes at once), and [`Drain::shutdown`]
//! waits until they are all gone.
//!
//! Why not a `watch` channel (as hyper-util's `GracefulShutdown` has): its `changed()`
//! future, polled every time the connection is, takes the channel's waiter lock: about
//! 4 % of a held manifest answer's instructions (callgrind). Here a connection
//! hands over its task's waker once, on its first poll, and reads one flag when it
//! decides whether to go on.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::sync::Notify;

/// The server's open connections, and whether it is draining.
#[derive(Default)]
pub struct Drain {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    draining: AtomicBool,
    open: Mutex<Open>,
    /// Told when the last connection closes while draining.
    all_closed: Notify,
}

#[derive(Default)]
struct Open {
    next_id: u64,
    /// Each open connection's task waker, once it has been polled.
    wakers: HashMap<u64, Option<Waker>>,
}

impl Inner {
    fn open(&self) -> MutexGuard<'_, Open> {
        // Nothing panics while holding it; a poisoned map is still the right map.
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drain {
    pub fn new() -> Self {
        Self::default()
    }

    /// What a connection reads to know the server drains.
    pub fn signal(&self) -> DrainSignal {
        DrainSignal(self.inner.clone())
    }

    /// Watch `conn`: it is counted open until the returned future ends or is dropped.
    /// It is woken when the server drains, and reads its [`DrainSignal`] to close.
    pub fn watch<C>(&self, conn: C) -> Watched<C> {
        let mut open = self.inner.open();
        let id = open.next_id;
        open.next_id += 1;
        open.wakers.insert(id, None);
        Watched {
            conn,
            drain: self.inner.clone(),
            id,
            polled: false,
        }
    }

    /// Tell every connection to close after its answer in flight, and wait until all have.
    pub async fn shutdown(&self) {
        self.inner.draining.store(true, Ordering::SeqCst);
        let wakers: Vec<Waker> = (self.inner.open().wakers.values())
            .flatten()
            .cloned()
            .collect();
        for waker in wakers {
            waker.wake();
        }
        loop {
            // Enabled before the count is read, so a close in between is not missed.
            let closed = self.inner.all_closed.notified();
            tokio::pin!(closed);
            closed.as_mut().enable();
            if self.inner.open().wakers.is_empty() {
                return;
            }
            closed.await;
        }
    }
}

/// Whether the server drains, as a connection sees it.
#[derive(Clone)]
pub struct DrainSignal(Arc<Inner>);

impl DrainSignal {
    pub fn is_draining(&self) -> bool {
        self.0.draining.load(Ordering::SeqCst)
    }
}

/// A connection as it is served, woken once the server drains.
pub struct Watched<C> {
    conn: C,
    drain: Arc<Inner>,
    id: u64,
    /// Whether its waker has been handed over.
    polled: bool,
}

impl<C: Future + Unpin> Future for Watched<C> {
    type Output = C::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<C::Output> {
        let this = self.get_mut();
        if !this.polled {
            // A task keeps its waker for life: one hand-over per connection. Taking the
            // lock orders it with `shutdown`: either that sees this waker, or the flag
            // below is seen set.
            let mut open = this.drain.open();
            if let Some(slot) = open.wakers.get_mut(&this.id) {
                *slot = Some(cx.waker().clone());
            }
            this.polled = true;
        }
        Pin::new(&mut this.conn).poll(cx)
    }
}

impl<C> Drop for Watched<C> {
    fn drop(&mut self) {
        let mut open = self.drain.open();
        open.wakers.remove(&self.id);
        if open.wakers.is_empty() && self.drain.draining.load(Ordering::SeqCst) {
            self.drain.all_closed.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use http_body_util::Full;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use crate::server::http1;

    /// Given two keep-alive connections, one idle after an answer and one never used,
    /// when the server drains, then both are closed and the drain ends.
    #[tokio::test]
    async fn draining_closes_idle_connections_and_ends_when_all_are_closed() {
        let drain = Drain::new();
        let mut clients = Vec::new();
        let mut served = Vec::new();
        for _ in 0..2 {
            let (ours, theirs) = tokio::io::duplex(4096);
            let service =
                |_req| async { http::Response::new(Full::new(bytes::Bytes::from_static(b"ok"))) };
            let limits = http1::Limits {
                head_timeout: Duration::from_secs(60),
                max_head_bytes: 4096,
                max_body_bytes: 0,
            };
            let signal = drain.signal();
            let conn = http1::serve(ours, limits, move || signal.is_draining(), service);
            served.push(tokio::spawn(drain.watch(Box::pin(conn))));
            clients.push(theirs);
        }

        let mut buf = vec![0u8; 1024];
        clients[0]
            .write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        let n = clients[0].read(&mut buf).await.unwrap();
        assert!(buf[..n].starts_with(b"HTTP/1.1 200 OK"));
        tokio::task::yield_now().await;

        tokio::time::timeout(Duration::from_secs(10), drain.shutdown())
            .await
            .expect("the drain ends once both connections close");
        for client in &mut clients {
            assert_eq!(client.read(&mut buf).await.unwrap(), 0, "closed");
        }
        for conn in served {
            conn.await.unwrap().unwrap();
        }
        assert!(drain.inner.open().wakers.is_empty());
    }
}
