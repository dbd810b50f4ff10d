//! Replies of deferred queries (those that waited for an upstream) on one UDP listener of
//! one core: queued as their tasks finish and sent together with sendmmsg by one sender
//! task, so a burst of upstream answers costs one syscall, not one per reply.

use super::mmsg;
use crate::plugin::spare::SpareBufs;
use glommio::net::UdpSocket;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// Most replies handed to one sendmmsg call.
const BATCH: usize = 64;

/// The queue of one listener on one core.
#[derive(Default)]
pub struct ReplyQueue {
    items: RefCell<Vec<(Vec<u8>, SocketAddr)>>,
    waker: RefCell<Option<Waker>>,
    closed: Cell<bool>,
    spare: SpareBufs,
}

impl ReplyQueue {
    /// An empty buffer for a reply, one that was sent before when there is one.
    pub fn buffer(&self) -> Vec<u8> {
        self.spare.take()
    }

    /// Keeps a reply buffer that is no longer needed for [`ReplyQueue::buffer`].
    pub fn recycle(&self, buf: Vec<u8>) {
        self.spare.put(buf);
    }

    /// Queues a reply and wakes the sender.
    pub fn push(&self, reply: Vec<u8>, to: SocketAddr) {
        self.items.borrow_mut().push((reply, to));
        if let Some(w) = self.waker.borrow_mut().take() {
            w.wake();
        }
    }

    /// Stops the sender once the queue is empty.
    pub fn close(&self) {
        self.closed.set(true);
        if let Some(w) = self.waker.borrow_mut().take() {
            w.wake();
        }
    }

    /// Replies queued and not yet taken by the sender.
    #[cfg(test)]
    pub fn queued(&self) -> usize {
        self.items.borrow().len()
    }

    fn ready(&self) -> Ready<'_> {
        Ready(self)
    }
}

/// Completes when replies are queued (or the queue closed).
struct Ready<'a>(&'a ReplyQueue);

impl Future for Ready<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if !self.0.items.borrow().is_empty() || self.0.closed.get() {
            return Poll::Ready(());
        }
        *self.0.waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// The sender task: sends what is queued, in batches, until the queue is closed and empty.
pub async fn sender(queue: Rc<ReplyQueue>, sock: Rc<UdpSocket>) {
    let mut out = mmsg::Sender::new(BATCH);
    let mut taken: Vec<(Vec<u8>, SocketAddr)> = Vec::with_capacity(BATCH);
    loop {
        queue.ready().await;
        // Let the other tasks that are ready finish first: their replies join this batch.
        futures_lite::future::yield_now().await;
        {
            let mut items = queue.items.borrow_mut();
            if items.is_empty() {
                if queue.closed.get() {
                    return;
                }
                continue;
            }
            let n = items.len().min(BATCH);
            taken.extend(items.drain(..n));
        }
        out.send(&sock, taken.iter().map(|(r, to)| (&r[..], *to)))
            .await;
        for (r, _) in taken.drain(..) {
            queue.recycle(r);
        }
    }
}

/// Sends one reply now, without the queue (for a socket loop that is stopping).
pub async fn send_now(sock: &UdpSocket, reply: &[u8], to: SocketAddr) {
    if let Err(e) = sock.send_to(reply, to).await {
        super::oversize::send_failed(sock.as_raw_fd(), &io::Error::from(e), reply, to);
    }
}
