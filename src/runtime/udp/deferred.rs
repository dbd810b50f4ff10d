//! The tasks that serve the UDP queries a plugin deferred (forward waiting for its upstream),
//! kept and reused: a query that waits is handed to an idle worker task of its listener
//! instead of becoming a task of its own. Spawning a glommio task per query cost an
//! allocation of the whole chain future and a copy of it, plus glommio's lookup of the
//! executor's sleep notifier under a global lock; a worker pays that once. Query and reply
//! buffers are recycled too (forward's UDP mux swaps its upstream reply buffers with them).
//!
//! The replies are queued as their workers finish ([`ReplyQueue`]) and sent together by one
//! task per listener and core ([`sender`]) through the listener's backend, so that with
//! recvmmsg/sendmmsg a burst of upstream answers costs one sendmmsg, not one syscall per
//! reply.

use super::backend::DatagramBackend;
use crate::plugin::spare::SpareBufs;
use crate::plugin::{Handler, Proto};
use crate::runtime::core::CoreServer;
use crate::runtime::serve::{Verdict, deferred_finished, deferred_started, serve_deferred};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// Idle workers kept per listener and core; a worker that finishes while this many wait
/// ends (a burst of concurrency is served, and its memory given back, ~4 KB per worker).
pub const MAX_IDLE: usize = 256;

/// A deferred query waiting for a worker. It carries the core server it arrived on, so a
/// query that was in flight across a reload finishes on the chain that took it.
struct Job<H> {
    core: Rc<CoreServer<H>>,
    listener: usize,
    packet: Vec<u8>,
    /// Where the reply goes.
    peer: SocketAddr,
    /// The client plugins see: the peer, or the one its PROXY header named.
    client: SocketAddr,
    /// The time of the batch it came in (no clock read of its own).
    received: Instant,
}

/// The deferred queries of one UDP listener on one core and the workers serving them.
pub struct DeferredPool<H> {
    jobs: RefCell<VecDeque<Job<H>>>,
    /// The workers waiting for a job, the most recently idle last: each one's "listed" flag
    /// (shared with the worker) and waker.
    idle: RefCell<Vec<(Rc<Cell<bool>>, Waker)>>,
    /// Queries submitted and not yet finished (queued or being served).
    pending: Cell<usize>,
    closed: Cell<bool>,
    spare: SpareBufs,
    replies: Rc<ReplyQueue>,
}

impl<H: Handler + 'static> DeferredPool<H> {
    /// A pool whose workers queue their replies on `replies`.
    pub fn new(replies: Rc<ReplyQueue>) -> Rc<Self> {
        Rc::new(DeferredPool {
            jobs: RefCell::new(VecDeque::new()),
            idle: RefCell::new(Vec::new()),
            pending: Cell::new(0),
            closed: Cell::new(false),
            spare: SpareBufs::default(),
            replies,
        })
    }

    /// Hands a deferred query, received in the batch of `received`, to an idle worker, or
    /// to a new one when none is idle. The query is counted in the core's in-flight queries
    /// until its reply is queued. `(peer, client)`: where the reply goes, and the client
    /// plugins see (the same but for a PROXY header's).
    pub fn submit(
        self: &Rc<Self>,
        core: &Rc<CoreServer<H>>,
        listener: usize,
        query: &[u8],
        (peer, client): (SocketAddr, SocketAddr),
        received: Instant,
    ) {
        deferred_started(core);
        self.pending.set(self.pending.get() + 1);
        let packet = self.spare.copy_of(query);
        self.jobs.borrow_mut().push_back(Job {
            core: core.clone(),
            listener,
            packet,
            peer,
            client,
            received,
        });
        let idle = self.idle.borrow_mut().pop();
        match idle {
            Some((listed, w)) => {
                listed.set(false);
                w.wake();
            }
            None => {
                glommio::spawn_local(worker(self.clone())).detach();
            }
        }
    }

    /// Lets every worker end once the queued queries are served.
    pub fn close(&self) {
        self.closed.set(true);
        let idle = std::mem::take(&mut *self.idle.borrow_mut());
        for (listed, w) in idle {
            listed.set(false);
            w.wake();
        }
    }

    /// Queries queued or being served.
    pub fn pending(&self) -> usize {
        self.pending.get()
    }

    /// Worker tasks alive (busy or idle): each holds the pool, as does the caller.
    #[cfg(test)]
    pub fn workers(self: &Rc<Self>) -> usize {
        Rc::strong_count(self) - 1
    }

    fn next_job<'a>(&'a self, listed: &'a Rc<Cell<bool>>) -> NextJob<'a, H> {
        NextJob { pool: self, listed }
    }
}

/// The next job for a worker; `None` when the worker should end (the pool is closed, or
/// enough workers are already idle).
struct NextJob<'a, H> {
    pool: &'a DeferredPool<H>,
    /// Whether this worker is in the idle list: `submit` and `close` clear it when they take
    /// the worker out to wake it.
    listed: &'a Rc<Cell<bool>>,
}

impl<H> Future for NextJob<'_, H> {
    type Output = Option<Job<H>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (pool, listed) = (self.pool, self.listed);
        let job = pool.jobs.borrow_mut().pop_front();
        let mut idle = pool.idle.borrow_mut();
        let leave = pool.closed.get() || (!listed.get() && idle.len() >= MAX_IDLE);
        if job.is_some() || leave {
            if listed.replace(false) {
                // Woken by something else while listed (see below): off the list.
                idle.retain(|(l, _)| !Rc::ptr_eq(l, listed));
            }
            return Poll::Ready(job);
        }
        // Woken while still listed is a stale waker, e.g. that of an upstream wait the chain
        // dropped (serve_stale's verify timeout), fired after the task moved on: the worker
        // keeps its one place in the list, whose waker is this task's already (only the
        // worker's own task polls its NextJob).
        if !listed.replace(true) {
            idle.push((listed.clone(), cx.waker().clone()));
        }
        Poll::Pending
    }
}

/// One worker: serves jobs until the pool lets it go.
async fn worker<H: Handler + 'static>(pool: Rc<DeferredPool<H>>) {
    let listed = Rc::new(Cell::new(false));
    while let Some(job) = pool.next_job(&listed).await {
        let Job {
            core,
            listener,
            packet,
            peer,
            client,
            received,
        } = job;
        let mut reply = pool.replies.buffer();
        let l = &core.listeners[listener];
        let from = (client, Proto::Udp, None);
        let verdict = serve_deferred(&core, l, &packet, from, received, &mut reply).await;
        if verdict == Verdict::Send {
            pool.replies.push(reply, peer);
        } else {
            pool.replies.recycle(reply);
        }
        pool.spare.put(packet);
        // (A panic in a block with `debug` is not recovered anywhere: it ends the core's
        // thread, as it did with a task per query; other panics end in serve_deferred.)
        pool.pending.set(pool.pending.get() - 1);
        deferred_finished(&core);
    }
}

/// Most replies the sender takes from the queue at once (one sendmmsg with `mmsg`).
const REPLY_BATCH: usize = 64;

/// The replies of one listener's deferred queries on one core, waiting for the sender.
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

    /// Waits for replies, lets the other tasks that are ready finish first (their replies
    /// join these), then moves up to [`REPLY_BATCH`] of them into `into`. `false` once the
    /// queue is closed and empty.
    async fn take(&self, into: &mut Vec<(Vec<u8>, SocketAddr)>) -> bool {
        loop {
            Ready(self).await;
            futures_lite::future::yield_now().await;
            let mut items = self.items.borrow_mut();
            if items.is_empty() {
                if self.closed.get() {
                    return false;
                }
                continue;
            }
            let n = items.len().min(REPLY_BATCH);
            into.extend(items.drain(..n));
            return true;
        }
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

/// The sender task of one listener on one core, to spawn: it sends what is queued, in
/// batches, through a second instance of the listener's backend `like`
/// ([`DatagramBackend::for_replies`]), until the queue is closed and empty.
pub fn sender<B: DatagramBackend + 'static>(
    queue: Rc<ReplyQueue>,
    like: &B,
) -> impl Future<Output = ()> + 'static {
    let mut backend = like.for_replies(REPLY_BATCH);
    async move {
        let mut taken = Vec::with_capacity(REPLY_BATCH);
        while queue.take(&mut taken).await {
            backend.send_replies(&taken).await;
            for (r, _) in taken.drain(..) {
                queue.recycle(r);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::{Outcome, Request, Status};
    use crate::runtime::core::tests::{QUERY, one_block};
    use crate::wire::MessageWriter;
    use crate::wire::rcode::NOERROR;
    use std::time::Duration;

    thread_local! {
        /// Whether [`Waits`] answers yet, and the queries waiting until it does: the test
        /// decides when the "upstream" answers. (A 2 ms sleep did not: glommio polls a
        /// spawned task at once, and on a loaded machine a sleep whose deadline passed
        /// before that first poll ended there, so a worker was idle again before the burst
        /// was submitted and was reused: 299 workers for 300 queries, CI on 5f1cd6b.)
        static GATE: RefCell<(bool, Vec<Waker>)> = const { RefCell::new((true, Vec::new())) };
    }

    fn gate(open: bool) {
        let waiting = GATE.with(|g| {
            let mut g = g.borrow_mut();
            g.0 = open;
            std::mem::take(&mut g.1)
        });
        waiting.into_iter().for_each(Waker::wake);
    }

    /// Answers once the gate is open, as forward does after its upstream's reply.
    struct Waits;

    impl Handler for Waits {
        async fn serve(&self, req: &mut Request<'_>) -> Outcome {
            if !req.can_wait() {
                return req.defer();
            }
            std::future::poll_fn(|cx| {
                GATE.with(|g| {
                    let mut g = g.borrow_mut();
                    if g.0 {
                        return Poll::Ready(());
                    }
                    g.1.push(cx.waker().clone());
                    Poll::Pending
                })
            })
            .await;
            MessageWriter::reply(&req.query, req.reply, NOERROR).finish();
            Ok(Status::rcode(NOERROR))
        }

        fn is_end(&self) -> bool {
            false
        }

        fn after_batch(&self) {}
    }

    async fn settle<H: Handler + 'static>(pool: &DeferredPool<H>) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while pool.pending() != 0 && Instant::now() < deadline {
            glommio::timer::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(pool.pending(), 0, "queries still pending after 30 s");
        // Let finished workers reach their next wait.
        futures_lite::future::yield_now().await;
    }

    #[test]
    fn workers_are_reused_bounded_and_end_when_closed() {
        glommio::LocalExecutor::default().run(async {
            let core = Rc::new(one_block(Waits, false));
            let replies = Rc::new(ReplyQueue::default());
            let pool = DeferredPool::new(replies.clone());
            let peer: SocketAddr = "127.0.0.1:5000".parse().unwrap();

            // A burst wider than the idle bound: one worker per waiting query...
            let burst = MAX_IDLE + 44;
            gate(false);
            for _ in 0..burst {
                pool.submit(&core, 0, QUERY, (peer, peer), Instant::now());
            }
            assert_eq!(pool.workers(), burst);
            assert_eq!(core.inflight.get(), burst);
            gate(true);
            settle(&pool).await;
            assert_eq!(replies.queued(), burst, "every query answered");
            assert_eq!(core.inflight.get(), 0);
            // ...and only MAX_IDLE of them stay.
            assert_eq!(pool.workers(), MAX_IDLE);

            // The next queries are served by the idle workers: none is spawned.
            gate(false);
            for _ in 0..10 {
                pool.submit(&core, 0, QUERY, (peer, peer), Instant::now());
            }
            assert_eq!(pool.workers(), MAX_IDLE);
            gate(true);
            settle(&pool).await;
            assert_eq!(replies.queued(), burst + 10);

            // A stale wake of an idle worker (a waker it left behind in an upstream wait)
            // neither lists it twice nor loses it: the next query is still served.
            let stale = pool.idle.borrow().last().map(|(_, w)| w.clone()).unwrap();
            stale.wake();
            futures_lite::future::yield_now().await;
            assert_eq!(pool.idle.borrow().len(), MAX_IDLE, "listed once");
            pool.submit(&core, 0, QUERY, (peer, peer), Instant::now());
            settle(&pool).await;
            assert_eq!(replies.queued(), burst + 11);
            assert_eq!(pool.workers(), MAX_IDLE);

            // Queued work is finished after close; then every worker ends.
            pool.submit(&core, 0, QUERY, (peer, peer), Instant::now());
            pool.close();
            settle(&pool).await;
            assert_eq!(replies.queued(), burst + 12);
            assert_eq!(pool.workers(), 0);
        });
    }
}
