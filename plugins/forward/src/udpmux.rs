//! UDP to one upstream from one core: a few connected sockets on random source ports, each
//! shared by many queries at once. A sender task per socket sends the queries queued during
//! one executor turn with one sendmmsg; a reader task per socket drains replies with
//! non-blocking recvmmsg calls and hands each to the query waiting for its ID, so a busy
//! socket costs a fraction of a syscall per query and one wait per burst. Sockets are
//! replaced after `expire`, so source ports keep changing.

use super::idmap::IdMap;
use super::udpio::{self, OutQueue, Receiver, Sender};
use nix::errno::Errno;
use ringdns_plugin::glommio::net::UdpSocket;
use ringdns_plugin::spare::SpareBufs;
use ringdns_plugin::wire::{self, Header};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// Sockets per upstream per core.
const SOCKETS: usize = 2;

/// Queries sent on one socket before the next one takes over.
const RUN: usize = 64;

/// How often waiting queries are checked for their deadline while any wait; read
/// timeouts are therefore precise to this much.
const SWEEP: Duration = Duration::from_millis(10);

/// How often an idle mux looks whether queries wait again.
const SWEEP_IDLE: Duration = Duration::from_millis(100);

/// Where a waiting query's reply (or its socket's error) lands, with the question a reply
/// must repeat to be accepted.
struct Slot {
    /// The question, kept in the slot itself (no allocation of its own per query).
    question: [u8; MAX_QUESTION],
    question_len: usize,
    /// When the sweeper gives up on it (one per-core sweep instead of a timer per query).
    deadline: Instant,
    /// The reply and when it came in (one clock read per received batch, not per query),
    /// or why none will.
    reply: RefCell<Option<Delivery>>,
    waker: RefCell<Option<Waker>>,
}

/// What a waiting query gets: the reply and when it came in, or why none will.
type Delivery = Result<(Vec<u8>, Instant), io::ErrorKind>;

/// The longest question entry: a 255-byte name, type and class.
const MAX_QUESTION: usize = 255 + 4;

impl Slot {
    fn new(question: &[u8], deadline: Instant) -> Self {
        let mut q = [0; MAX_QUESTION];
        let n = question.len().min(MAX_QUESTION);
        q[..n].copy_from_slice(&question[..n]);
        Slot {
            question: q,
            question_len: n,
            deadline,
            reply: RefCell::new(None),
            waker: RefCell::new(None),
        }
    }

    fn question(&self) -> &[u8] {
        &self.question[..self.question_len]
    }

    fn deliver(&self, r: Delivery) {
        *self.reply.borrow_mut() = Some(r);
        if let Some(w) = self.waker.borrow_mut().take() {
            w.wake();
        }
    }
}

struct SlotWait<'a>(&'a Slot);

impl Future for SlotWait<'_> {
    type Output = Delivery;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(r) = self.0.reply.borrow_mut().take() {
            return Poll::Ready(r);
        }
        *self.0.waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// One shared socket.
struct Shared {
    sock: UdpSocket,
    pending: RefCell<IdMap<Rc<Slot>>>,
    /// Queries waiting for the sender task, and the task's waker.
    out: RefCell<OutQueue>,
    out_waker: RefCell<Option<Waker>>,
    born: Instant,
    retired: Cell<bool>,
    mismatched: Cell<u64>,
    /// The mux's spare slots and reply buffers.
    spare: Rc<Spare>,
}

/// Slots and reply buffers kept for the next queries of a mux, so a forwarded query in the
/// steady state allocates neither.
#[derive(Default)]
struct Spare {
    slots: RefCell<Vec<Rc<Slot>>>,
    bufs: SpareBufs,
}

/// Spare slots kept per mux (more are freed; reply buffers are bounded by `SpareBufs`).
const MAX_SPARE: usize = 256;

impl Spare {
    /// A slot for `question`, reused when one is spare.
    fn slot(&self, question: &[u8], deadline: Instant) -> Rc<Slot> {
        let Some(mut slot) = self.slots.borrow_mut().pop() else {
            return Rc::new(Slot::new(question, deadline));
        };
        match Rc::get_mut(&mut slot) {
            // Rewritten in place: the allocation is what is reused.
            Some(s) => {
                *s = Slot::new(question, deadline);
                slot
            }
            None => Rc::new(Slot::new(question, deadline)),
        }
    }

    /// Keeps a slot nothing else refers to any more.
    fn put_slot(&self, slot: Rc<Slot>) {
        let mut slots = self.slots.borrow_mut();
        if Rc::strong_count(&slot) == 1 && slots.len() < MAX_SPARE {
            slots.push(slot);
        }
    }
}

/// Completes when queries wait to be sent or the socket is retired.
struct OutReady<'a>(&'a Shared);

impl Future for OutReady<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if !self.0.out.borrow().is_empty() || self.0.retired.get() {
            return Poll::Ready(());
        }
        *self.0.out_waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Shared {
    fn raw(&self) -> socket2_04::SockRef<'_> {
        socket2_04::SockRef::from(&self.sock)
    }

    fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    /// Queues a query for the sender task (which sends after the other ready tasks had
    /// their turn, so theirs join the same sendmmsg).
    fn queue(&self, id: u16, query: &[u8]) {
        self.out.borrow_mut().push(id, query);
        if let Some(w) = self.out_waker.borrow_mut().take() {
            w.wake();
        }
    }

    /// No new queries: the sender ends once its queue is empty, the reader once the last
    /// waiting query is done.
    fn retire(&self) {
        self.retired.set(true);
        if let Some(w) = self.out_waker.borrow_mut().take() {
            w.wake();
        }
        self.close_if_done();
    }

    /// Sends what is queued, in batches, until the socket is retired with nothing queued.
    async fn send_loop(self: Rc<Self>) {
        let mut tx = Sender::default();
        let mut batch = OutQueue::default();
        loop {
            OutReady(&self).await;
            // Let the other ready tasks run first: their queries join this batch.
            futures_lite::future::yield_now().await;
            std::mem::swap(&mut *self.out.borrow_mut(), &mut batch);
            if batch.is_empty() {
                if self.retired.get() {
                    return;
                }
                continue;
            }
            self.send_all(&mut tx, &batch).await;
            batch.clear();
        }
    }

    /// Sends `batch` with as few sendmmsg calls as the kernel allows; a query that cannot be
    /// sent fails with its error.
    async fn send_all(&self, tx: &mut Sender, batch: &OutQueue) {
        let mut done = 0;
        while done < batch.len() {
            match tx.send(self.fd(), batch, done) {
                Ok(n) if n > 0 => done += n,
                Err(Errno::EINTR) => {}
                // The send buffer is full: let glommio wait for room, one query at a time.
                Ok(_) | Err(Errno::EAGAIN) => {
                    for i in done..batch.len() {
                        let (id, query) = batch.get(i);
                        if let Err(e) = self.sock.send(query).await {
                            self.fail_one(id, io::Error::from(e).kind());
                        }
                    }
                    return;
                }
                Err(e) => {
                    self.fail_one(batch.get(done).0, io::Error::from(e).kind());
                    done += 1;
                }
            }
        }
    }

    /// Fails the query waiting for `id` (its send failed).
    fn fail_one(&self, id: u16, kind: io::ErrorKind) {
        let slot = self.pending.borrow_mut().remove(&id);
        if let Some(s) = slot {
            s.deliver(Err(kind));
        }
    }

    /// Drains and dispatches until the socket is empty, then waits for more.
    async fn read_loop(self: Rc<Self>, rx: Rc<RefCell<Receiver>>) {
        loop {
            loop {
                let mut rx = rx.borrow_mut();
                match rx.recv(self.fd()) {
                    Ok(n) => {
                        let at = Instant::now();
                        for i in 0..n {
                            let d = rx.datagram(i);
                            // A retired socket was shut down: its last query is done.
                            if d.is_empty() && self.retired.get() {
                                return;
                            }
                            self.dispatch(d, at);
                        }
                        if n < udpio::RECV_BATCH {
                            break;
                        }
                    }
                    Err(Errno::EAGAIN) => break,
                    Err(Errno::EINTR) => {}
                    // An ICMP error (port unreachable, …) for this connected socket: every
                    // query waiting on it learns it now instead of timing out.
                    Err(e) => self.fail_all(io::Error::from(e).kind()),
                }
            }
            if self.retired.get() && self.pending.borrow().is_empty() {
                break;
            }
            // One io_uring poll; an ICMP error wakes it too and the next recvmmsg reports it.
            if let Err(e) = self.sock.readable().await {
                let e: io::Error = e.into();
                if e.kind() != io::ErrorKind::Interrupted {
                    self.fail_all(e.kind());
                    if self.retired.get() {
                        break;
                    }
                }
            }
        }
    }

    fn dispatch(&self, reply: &[u8], at: Instant) {
        let Some(header) = Header::of(reply) else {
            self.mismatched.set(self.mismatched.get() + 1);
            return;
        };
        let id = header.id();
        let mut pending = self.pending.borrow_mut();
        // Our ID and our question (or an error rcode with no question: the upstream could
        // not parse the query); anything else is dropped and the query keeps waiting.
        let slot = match pending.get(&id) {
            Some(s) if wire::reply::answers_or_rejects(reply, id, s.question()) => {
                pending.remove(&id)
            }
            _ => None,
        };
        drop(pending);
        match slot {
            Some(s) => s.deliver(Ok((self.spare.bufs.copy_of(reply), at))),
            None => self.mismatched.set(self.mismatched.get() + 1),
        }
    }

    /// Fails the queries whose deadline has passed; true when queries still wait.
    fn expire(&self, now: Instant) -> bool {
        let mut late: Vec<Rc<Slot>> = Vec::new();
        self.pending.borrow_mut().retain(|_, slot| {
            let keep = now < slot.deadline;
            if !keep {
                late.push(slot.clone());
            }
            keep
        });
        for slot in late {
            slot.deliver(Err(io::ErrorKind::TimedOut));
        }
        !self.pending.borrow().is_empty()
    }

    fn fail_all(&self, kind: io::ErrorKind) {
        let waiting: Vec<Rc<Slot>> = self.pending.borrow_mut().drain().map(|(_, s)| s).collect();
        for s in waiting {
            s.deliver(Err(kind));
        }
    }

    /// Closes a retired socket once nothing waits on it: the reader wakes and ends.
    fn close_if_done(&self) {
        if self.retired.get() && self.pending.borrow().is_empty() {
            let _ = self.raw().shutdown(std::net::Shutdown::Read);
        }
    }

    fn free_id(&self, rng: &mut fastrand::Rng) -> Option<u16> {
        let pending = self.pending.borrow();
        (0..64)
            .map(|_| rng.u16(..))
            .find(|id| !pending.contains_key(id))
    }
}

/// The sockets of one upstream on one core.
pub struct UdpMux {
    addr: SocketAddr,
    source: Option<IpAddr>,
    rx: Rc<RefCell<Receiver>>,
    socks: Rc<RefCell<Vec<Rc<Shared>>>>,
    next: Cell<usize>,
    sweeping: Cell<bool>,
    spare: Rc<Spare>,
}

/// What one UDP exchange came to.
pub enum Outcome {
    /// The reply with our ID (the caller checks its question), and when it came in.
    Reply(Vec<u8>, Instant),
    /// The socket reported an error (e.g. connection refused).
    Failed(io::Error),
    /// Nothing before the deadline.
    Timeout,
}

impl UdpMux {
    /// No sockets yet: they open with the first queries. `rx` is the core's receiver.
    pub fn new(addr: SocketAddr, source: Option<IpAddr>, rx: Rc<RefCell<Receiver>>) -> Self {
        UdpMux {
            addr,
            source,
            rx,
            socks: Rc::new(RefCell::new(Vec::new())),
            next: Cell::new(0),
            sweeping: Cell::new(false),
            spare: Rc::new(Spare::default()),
        }
    }

    /// Starts the task that fails queries past their deadline (once per mux).
    fn start_sweeper(&self) {
        if self.sweeping.replace(true) {
            return;
        }
        let weak = Rc::downgrade(&self.socks);
        ringdns_plugin::glommio::spawn_local(async move {
            loop {
                let Some(socks) = weak.upgrade() else { break };
                let now = Instant::now();
                let mut waiting = false;
                for s in socks.borrow().iter() {
                    waiting |= s.expire(now);
                }
                drop(socks);
                ringdns_plugin::glommio::timer::sleep(if waiting { SWEEP } else { SWEEP_IDLE })
                    .await;
            }
        })
        .detach();
    }

    /// A live socket, opening one while there are fewer than [`SOCKETS`]; true when it is
    /// a new one (for the connection-cache counters).
    fn pick(&self) -> io::Result<(Rc<Shared>, bool)> {
        self.start_sweeper();
        let mut socks = self.socks.borrow_mut();
        // Retired sockets stay listed (for the sweeper) until their last query is done.
        socks.retain(|s| !s.retired.get() || !s.pending.borrow().is_empty());
        let live = socks.iter().filter(|s| !s.retired.get()).count();
        if live < SOCKETS {
            let sock = super::dial::udp(self.addr, self.source)?;
            let s = Rc::new(Shared {
                sock,
                pending: RefCell::new(IdMap::default()),
                out: RefCell::new(OutQueue::default()),
                out_waker: RefCell::new(None),
                born: Instant::now(),
                retired: Cell::new(false),
                mismatched: Cell::new(0),
                spare: self.spare.clone(),
            });
            ringdns_plugin::glommio::spawn_local(s.clone().read_loop(self.rx.clone())).detach();
            ringdns_plugin::glommio::spawn_local(s.clone().send_loop()).detach();
            socks.push(s.clone());
            return Ok((s, true));
        }
        // Runs of queries on one socket, not one query each: a burst's replies then wake
        // one reader, while over time every socket (every source port) carries queries.
        let n = self.next.get();
        self.next.set(n.wrapping_add(1));
        let i = (n / RUN) % live;
        let s = socks.iter().filter(|s| !s.retired.get()).nth(i).cloned();
        Ok((s.unwrap_or_else(|| socks[0].clone()), false))
    }

    /// Sends `query` (its ID is set here) and waits until `deadline` for the reply with
    /// that ID and `question`; others are counted and the wait goes on. Returns whether a
    /// new socket was opened, and the outcome.
    pub async fn exchange(
        &self,
        query: &[u8],
        question: &[u8],
        rng: &mut fastrand::Rng,
        deadline: Instant,
    ) -> (bool, Outcome) {
        let (s, fresh) = match self.pick() {
            Ok(p) => p,
            Err(e) => return (true, Outcome::Failed(e)),
        };
        let outcome = Self::ask(&s, query, question, rng, deadline).await;
        s.close_if_done();
        (fresh, outcome)
    }

    async fn ask(
        s: &Shared,
        query: &[u8],
        question: &[u8],
        rng: &mut fastrand::Rng,
        deadline: Instant,
    ) -> Outcome {
        let Some(id) = s.free_id(rng) else {
            return Outcome::Failed(io::Error::other("no free query ID on the upstream socket"));
        };
        let slot = s.spare.slot(question, deadline);
        s.pending.borrow_mut().insert(id, slot.clone());
        // Sent by the socket's sender task; a send error reaches the slot like a reply.
        s.queue(id, query);
        // No timer per query: the mux's sweeper fails this slot once its deadline passed.
        let outcome = match SlotWait(&slot).await {
            Ok((reply, at)) => Outcome::Reply(reply, at),
            Err(io::ErrorKind::TimedOut) => Outcome::Timeout,
            Err(kind) => Outcome::Failed(io::Error::from(kind)),
        };
        s.spare.put_slot(slot);
        outcome
    }

    /// Keeps a reply buffer the caller is done with for a later reply.
    pub fn recycle(&self, buf: Vec<u8>) {
        self.spare.bufs.put(buf);
    }

    /// Retires sockets older than `rotate` (they close once their last reply is in) and
    /// returns the replies that matched no query since the last call.
    pub fn maintain(&self, rotate: Duration) -> u64 {
        let now = Instant::now();
        let mut mismatched = 0;
        for s in self.socks.borrow().iter() {
            mismatched += s.mismatched.replace(0);
            if now.duration_since(s.born) >= rotate {
                s.retire();
            }
        }
        mismatched
    }
}

impl Drop for UdpMux {
    fn drop(&mut self) {
        for s in self.socks.borrow().iter() {
            s.retire();
            let _ = s.raw().shutdown(std::net::Shutdown::Read);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::wire::HeaderMut;
    use ringdns_testkit::QUERY;
    use std::time::Duration;

    #[test]
    fn slots_and_reply_buffers_are_reused() {
        const ROUNDS: usize = 3;
        let up = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = up.local_addr().unwrap();
        // The upstream: each query back as its reply (QR set, same ID and question).
        let upstream = std::thread::spawn(move || {
            let mut b = [0u8; 512];
            for _ in 0..ROUNDS {
                let (n, from) = up.recv_from(&mut b).unwrap();
                HeaderMut::new(&mut b[..n]).set_flag(wire::flags::QR, true);
                up.send_to(&b[..n], from).unwrap();
            }
        });
        ringdns_plugin::glommio::LocalExecutor::default().run(async move {
            let mux = UdpMux::new(addr, None, Rc::new(RefCell::new(Receiver::default())));
            let question = wire::Query::parse(QUERY).unwrap().question_bytes();
            let mut rng = fastrand::Rng::with_seed(7);
            for _ in 0..ROUNDS {
                let deadline = Instant::now() + Duration::from_secs(5);
                let (_, outcome) = mux.exchange(QUERY, question, &mut rng, deadline).await;
                let Outcome::Reply(reply, _) = outcome else {
                    panic!("no reply");
                };
                assert_eq!(&reply[12..], question);
                mux.recycle(reply);
                // Taken from the spares and given back: the pools do not grow.
                assert_eq!(mux.spare.slots.borrow().len(), 1, "the slot came back");
                assert_eq!(mux.spare.bufs.len(), 1, "the buffer came back");
            }
        });
        upstream.join().unwrap();
    }
}
