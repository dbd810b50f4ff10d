//! The UDP path of one listener on one core. This module is the loop: it has its backend
//! run rounds (receive, serve each query inline, send), flushes the plugins' per-batch work
//! between serving and sending, and hands deferred queries to the listener's worker pool.
//! Between rounds the loop picks up a reloaded configuration (see `swap`).
//!
//! The backend owns the round and its buffers; the loop owns the sequence and what happens
//! between the steps. A round is three calls on the [`DatagramBackend`]:
//!
//! 1. `recv().await`: the backend takes up to `size()` datagrams into buffers of its own and
//!    says how many. Only this step is raced with the stop, so a stop never cuts a round
//!    that is being served or sent.
//! 2. `for_each(serve)`: the backend lends each datagram (bytes, cut or not, sender) and a
//!    reply buffer of its own to `serve`, a closure of the loop, which calls `serve_inline`
//!    and returns whether to send the reply. The closure is a generic parameter, so it is
//!    monomorphized into the backend's loop over its datagrams: no `dyn`, no allocation, no
//!    copy of a datagram; the same work per datagram as when the loop walked the slots.
//! 3. `send().await`: the backend sends the replies `serve` asked for.
//!
//! Why three calls rather than one `round(serve)`: between receive and serving the loop
//! counts the round, picks up a reload (`View::refresh`, which needs the view mutably while
//! `serve` borrows it) and starts the batch clock; between serving and sending it flushes
//! the plugins' per-batch work (`after_batch`). One `round` would have to take each of those
//! as another closure, and racing it with the stop would drop half-sent rounds.
//!
//! A backend with buffers of another kind (io_uring multishot receive into provided buffers)
//! is a module, a `DatagramBackend` impl and a `Backend` variant: the loop (`run_with`) is
//! generic over the trait and needs nothing else (the `a_backend_with_buffers_of_its_own…`
//! test drives it with one).
//!
//! Its modules, each using only those below it in the table (imports run one way; the
//! trait impls of the backends sit in `backend`, beside the enum, so that the backends need
//! not import it):
//!
//! | module | what it is | uses in `udp/` | uses outside |
//! |---|---|---|---|
//! | `mod.rs` | the loop: the round's sequence, the serve closure | `backend`, `deferred`, `send` | `serve`, `swap`, `stop`, `metrics`, `config`, `proxy` |
//! | `deferred` | worker pool for deferred queries; their reply queue and its sender task | `backend` | `serve`, `core`, `plugin` |
//! | `backend` | the `DatagramBackend` trait (a round: recv, for_each, send) and the `Backend` enum | `mmsg`, `single`, `send` | `config` |
//! | `mmsg` | recvmmsg/sendmmsg; owns its slots and the headers pointed at them | `send`, `batch` | `metrics` |
//! | `single` | glommio's UdpSocket, one datagram per operation; owns one slot | `send`, `batch` | `metrics` |
//! | `send` | one datagram now; EMSGSIZE → cut; cut and error counters | | `wire`, `metrics` |
//! | `batch` | the slots (buffers) `mmsg` and `single` own, and their walk for `for_each` | | |

mod backend;
mod batch;
mod deferred;
mod mmsg;
mod send;
mod single;

use super::proxy::{Datagram, UdpProxy};
use super::serve::{Verdict, serve_batched, spawn_refreshes};
use super::stop::Stop;
use super::swap::View;
use crate::config::UdpBackend;
use crate::metrics::udp::UdpCounters;
use crate::plugin::Handler;
use backend::{Backend, DatagramBackend};
use deferred::{DeferredPool, ReplyQueue};
use glommio::net::UdpSocket;
use send::Out;
use std::rc::Rc;
use std::sync::Arc;

/// Full batches received in a row after which the loop lets the core's other tasks run.
const FULL_BATCHES_BEFORE_YIELD: usize = 4;

/// Serves the listener of `view` on `sock` until `stop` is given (at shutdown, or when a
/// reload removes the listener), with the datagram backend `kind` and batches of up to
/// `batch_size` datagrams.
pub async fn run<H: Handler + 'static>(
    view: View<H>,
    kind: UdpBackend,
    sock: Rc<UdpSocket>,
    batch_size: usize,
    stop: Rc<Stop>,
    core_index: usize,
) {
    let name = &view.core.listeners[view.li].name;
    let counters: Arc<UdpCounters> = crate::metrics::registry::cell(&[name], core_index);
    let out = Out::new(sock, crate::metrics::registry::cell(&[name], core_index));
    let backend = Backend::new(kind, out, batch_size);
    run_with(view, backend, counters, stop).await
}

/// The loop of [`run`], on any backend: rounds until `stop`, then the deferred queries'
/// drain.
async fn run_with<H: Handler + 'static, B: DatagramBackend + 'static>(
    mut view: View<H>,
    mut backend: B,
    counters: Arc<UdpCounters>,
    stop: Rc<Stop>,
) {
    let mut full_streak = 0;
    let queue = Rc::new(ReplyQueue::default());
    let sender = glommio::spawn_local(deferred::sender(queue.clone(), &backend));
    let pool = DeferredPool::new(queue.clone());
    // The listener's PROXY sessions on this core (none made without `proxyproto`).
    let mut proxy = UdpProxy::default();
    loop {
        let received = futures_lite::future::or(async { Some(backend.recv().await) }, async {
            stop.wait().await;
            None
        })
        .await;
        let n = match received {
            None => break,
            Some(Ok(n)) => n,
            Some(Err(e)) => {
                crate::error!("udp receive on {}: {e}", view.core.listeners[view.li].name);
                glommio::timer::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        counters.received(n);
        view.refresh();
        let (core, li) = (&view.core, view.li);
        let l = &core.listeners[li];
        // One clock read for the batch: every query's request carries it.
        let batch_time = std::time::Instant::now();
        // One branch per batch: a listener without `proxyproto` serves each datagram as it
        // came, from its sender.
        match &l.proxy {
            None => backend.for_each(|packet, truncated, peer, reply| {
                let from = (peer, peer);
                serve_one(
                    core,
                    li,
                    &pool,
                    (packet, truncated),
                    from,
                    batch_time,
                    reply,
                )
            }),
            Some(p) => {
                proxy.configure(p);
                backend.for_each(|packet, truncated, peer, reply| {
                    match proxy.datagram(p, packet, peer, batch_time) {
                        Datagram::Serve { payload, client } => {
                            let from = (peer, client);
                            serve_one(
                                core,
                                li,
                                &pool,
                                (payload, truncated),
                                from,
                                batch_time,
                                reply,
                            )
                        }
                        Datagram::Nothing | Datagram::Invalid => false,
                    }
                })
            }
        }
        core.after_batch();
        backend.send().await;
        spawn_refreshes(&view.core);
        if stop.is_set() {
            break;
        }
        // Full batches in a row: more is waiting and the receive returns at once again.
        // glommio does not preempt, so without a yield a listener under a steady flood
        // would never let the core's other tasks run (forward's workers, the reply sender,
        // the upstream readers). Not after every full batch: a burst fills one or two, and
        // an executor turn each cost 2 % of the forward benchmark's CPU.
        full_streak = if n == backend.size() {
            full_streak + 1
        } else {
            0
        };
        if full_streak == FULL_BATCHES_BEFORE_YIELD {
            full_streak = 0;
            futures_lite::future::yield_now().await;
        }
    }
    // Deferred queries still being served push their replies after this: wait for them,
    // then let the sender finish.
    pool.close();
    let t0 = std::time::Instant::now();
    while pool.pending() > 0 && t0.elapsed() < super::DRAIN {
        glommio::timer::sleep(std::time::Duration::from_millis(5)).await;
    }
    queue.close();
    sender.await;
}

/// Serves one datagram inline (`cut`: longer than the buffer) and says whether to send the
/// reply; a query that must wait goes to the pool. `(peer, client)`: where the reply goes,
/// and the client plugins see (the same but for a PROXY header's).
#[inline(always)]
fn serve_one<H: Handler + 'static>(
    core: &Rc<crate::runtime::core::CoreServer<H>>,
    li: usize,
    pool: &Rc<DeferredPool<H>>,
    (packet, cut): (&[u8], bool),
    (peer, client): (std::net::SocketAddr, std::net::SocketAddr),
    batch_time: std::time::Instant,
    reply: &mut Vec<u8>,
) -> bool {
    let l = &core.listeners[li];
    match serve_batched(core, l, packet, cut, client, batch_time, reply) {
        Verdict::Send => true,
        Verdict::Drop => false,
        Verdict::Defer => {
            pool.submit(core, li, packet, (peer, client), batch_time);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::{Outcome, Request, Status};
    use crate::runtime::core::tests::{Notes, QUERY, one_block};
    use crate::runtime::swap::Current;
    use crate::wire::MessageWriter;
    use crate::wire::rcode::{FORMERR, NOERROR};
    use std::cell::RefCell;
    use std::collections::VecDeque;
    use std::net::SocketAddr;
    use std::time::Duration;

    /// What the test hands a [`Fed`] backend and what it sent, shared with its second
    /// instance (the reply task's).
    #[derive(Default)]
    struct Wire {
        /// Datagrams to receive: bytes, cut, sender.
        inbox: RefCell<VecDeque<(Vec<u8>, bool, SocketAddr)>>,
        /// How many datagrams each receive returned.
        rounds: RefCell<Vec<usize>>,
        /// Replies sent by `send`: bytes, to, the round (index into `rounds`).
        sent: RefCell<Vec<(Vec<u8>, SocketAddr, usize)>>,
        /// Replies sent by `send_replies` (deferred ones).
        deferred: RefCell<Vec<(Vec<u8>, SocketAddr)>>,
    }

    /// A backend with no socket and no slots: it keeps a round's datagrams end to end in
    /// one buffer of its own (as a ring of provided buffers would hold them) and its replies
    /// in another vector. Written against the trait alone.
    struct Fed {
        wire: Rc<Wire>,
        size: usize,
        /// The round's datagrams, end to end.
        arena: Vec<u8>,
        /// Per datagram of the round: where it is in `arena`, its length, cut, sender.
        taken: Vec<(usize, usize, bool, SocketAddr)>,
        replies: Vec<Vec<u8>>,
        send: Vec<bool>,
        got: usize,
        served: usize,
    }

    impl Fed {
        fn new(wire: Rc<Wire>, size: usize) -> Self {
            Fed {
                wire,
                size,
                arena: Vec::with_capacity(size * 512),
                taken: Vec::with_capacity(size),
                replies: (0..size).map(|_| Vec::with_capacity(512)).collect(),
                send: vec![false; size],
                got: 0,
                served: 0,
            }
        }
    }

    impl DatagramBackend for Fed {
        async fn recv(&mut self) -> std::io::Result<usize> {
            (self.got, self.served) = (0, 0);
            while self.wire.inbox.borrow().is_empty() {
                glommio::timer::sleep(Duration::from_millis(1)).await;
            }
            self.arena.clear();
            self.taken.clear();
            let mut inbox = self.wire.inbox.borrow_mut();
            while self.taken.len() < self.size {
                let Some((bytes, cut, peer)) = inbox.pop_front() else {
                    break;
                };
                self.taken.push((self.arena.len(), bytes.len(), cut, peer));
                self.arena.extend_from_slice(&bytes);
            }
            self.got = self.taken.len();
            self.wire.rounds.borrow_mut().push(self.got);
            Ok(self.got)
        }

        fn for_each<F>(&mut self, mut serve: F)
        where
            F: FnMut(&[u8], bool, SocketAddr, &mut Vec<u8>) -> bool,
        {
            self.served = std::mem::take(&mut self.got);
            for i in 0..self.served {
                let (at, len, cut, peer) = self.taken[i];
                let packet = &self.arena[at..at + len];
                self.send[i] = serve(packet, cut, peer, &mut self.replies[i]);
            }
        }

        async fn send(&mut self) {
            let round = self.wire.rounds.borrow().len() - 1;
            for i in 0..std::mem::take(&mut self.served) {
                if self.send[i] {
                    let reply = (self.replies[i].clone(), self.taken[i].3, round);
                    self.wire.sent.borrow_mut().push(reply);
                }
            }
        }

        async fn send_replies(&mut self, replies: &[(Vec<u8>, SocketAddr)]) {
            self.wire.deferred.borrow_mut().extend_from_slice(replies);
        }

        fn for_replies(&self, _most: usize) -> Self {
            Fed::new(self.wire.clone(), 0)
        }

        fn size(&self) -> usize {
            self.size
        }
    }

    /// Answers NOERROR inline, except a query whose ID starts with 0xde: that one it
    /// defers, and answers when served again (as forward does after its upstream).
    struct Mixed;

    impl Handler for Mixed {
        async fn serve(&self, req: &mut Request<'_>) -> Outcome {
            if req.query.id() >> 8 == 0xde && !req.can_wait() {
                return req.defer();
            }
            MessageWriter::reply(&req.query, req.reply, NOERROR).finish();
            Ok(Status::rcode(NOERROR))
        }

        fn is_end(&self) -> bool {
            false
        }

        fn after_batch(&self) {}
    }

    /// The loop runs on a backend that implements the trait with buffers of its own (no
    /// `Batch`, no socket): each round is served from the backend's buffers and its replies
    /// leave through the backend's `send` in the same round, a cut datagram is answered
    /// FORMERR, an empty one nothing, and a deferred query's reply leaves through
    /// `send_replies` of the backend's second instance.
    #[test]
    fn a_backend_with_buffers_of_its_own_runs_the_loop() {
        const SIZE: usize = 4;
        glommio::LocalExecutor::default().run(async {
            let server = one_block(Mixed, false);
            let key = server.meta[0].key;
            let view = View::new(Rc::new(Current::new(server)), key).unwrap();
            let wire = Rc::new(Wire::default());
            let peer = |i: u16| SocketAddr::from(([127, 0, 0, 1], 6000 + i));
            for i in 0..10u16 {
                let mut q = QUERY.to_vec();
                let id = if i == 6 { 0xde06 } else { i };
                q[..2].copy_from_slice(&id.to_be_bytes());
                if i == 5 {
                    q.clear();
                }
                wire.inbox.borrow_mut().push_back((q, i == 3, peer(i)));
            }
            let stop = Rc::new(Stop::new());
            let backend = Fed::new(wire.clone(), SIZE);
            let listener =
                glommio::spawn_local(run_with(view, backend, Default::default(), stop.clone()));
            for _ in 0..5000 {
                if wire.sent.borrow().len() == 8 && !wire.deferred.borrow().is_empty() {
                    break;
                }
                glommio::timer::sleep(Duration::from_millis(1)).await;
            }
            stop.trigger();
            listener.await;

            assert_eq!(*wire.rounds.borrow(), [4, 4, 2]);
            let sent = wire.sent.borrow();
            let ids: Vec<u16> = sent
                .iter()
                .map(|(r, _, _)| u16::from_be_bytes([r[0], r[1]]))
                .collect();
            assert_eq!(ids, [0, 1, 2, 3, 4, 7, 8, 9], "5 empty, 6 deferred");
            for (reply, to, round) in sent.iter() {
                let id = u16::from_be_bytes([reply[0], reply[1]]);
                assert_eq!(*to, peer(id), "reply {id} to its sender");
                assert_eq!(
                    *round,
                    id as usize / SIZE,
                    "reply {id} in its query's round"
                );
                let rcode = if id == 3 { FORMERR } else { NOERROR };
                assert_eq!(reply[3] & 0x0f, rcode, "reply {id}");
            }
            let deferred = wire.deferred.borrow();
            assert_eq!(deferred.len(), 1);
            let (reply, to) = &deferred[0];
            assert_eq!(&reply[..2], &[0xde, 0x06]);
            assert_eq!(reply[3] & 0x0f, NOERROR);
            assert_eq!(*to, peer(6));
        });
    }

    #[test]
    fn a_listener_with_more_waiting_than_a_batch_lets_other_tasks_run() {
        const BATCH: usize = 8;
        const QUERIES: usize = 10 * BATCH;
        glommio::LocalExecutor::default().run(async {
            let notes = Notes::default();
            let (other_ran, served_before, served) = (
                notes.other_ran.clone(),
                notes.served_before.clone(),
                notes.served.clone(),
            );
            let server = one_block(notes, false);
            let key = server.meta[0].key;
            let view = View::new(Rc::new(Current::new(server)), key).unwrap();
            let sock = Rc::new(UdpSocket::bind("127.0.0.1:0").unwrap());
            let to = sock.local_addr().unwrap();
            // Queued before the loop starts: every receive finds a full batch waiting.
            let client = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            for _ in 0..QUERIES {
                client.send_to(QUERY, to).unwrap();
            }
            let stop = Rc::new(Stop::new());
            let listener =
                glommio::spawn_local(run(view, UdpBackend::Mmsg, sock, BATCH, stop.clone(), 0));
            // Spawned after the loop: it runs only when the loop gives the core back.
            let flag = other_ran.clone();
            glommio::spawn_local(async move { flag.set(true) }).detach();
            // Wait on the executor (a blocking receive here would stop the loop too).
            for _ in 0..5000 {
                if served.get() == QUERIES {
                    break;
                }
                glommio::timer::sleep(std::time::Duration::from_millis(1)).await;
            }
            assert_eq!(served.get(), QUERIES);
            stop.trigger();
            listener.await;
            // Without the yield after full batches all QUERIES were served first.
            assert!(
                served_before.get() <= FULL_BATCHES_BEFORE_YIELD * BATCH,
                "{} queries served before the other task ran",
                served_before.get()
            );
        });
    }
}
