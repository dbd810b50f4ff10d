//! A pooled, pipelined TCP or TLS connection to one upstream: queries are written one after
//! another, a reader task hands each reply to the query with its ID, so many queries share
//! one connection (at most [`MAX_PIPELINE`] at a time).
//!
//! Everything one query does on a connection (waiting for the writer, writing, waiting for
//! the reply) is bounded by its deadline. A connection is shut down when a write fails or
//! times out (a partial frame would desynchronise it), when a query times out with nothing
//! read since it was sent (the upstream is silent: a dead host, lost state), and when it
//! leaves the pool.

use super::idmap::IdMap;
use super::split::{Half, split};
use futures_lite::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use ringdns_plugin::glommio::sync::RwLock;
use ringdns_plugin::wire::{Header, HeaderMut};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::io;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// Queries in flight on one connection before another one is opened. Upstreams that
/// answer one TCP query at a time (many do) would otherwise make every query wait behind
/// the slowest.
pub const MAX_PIPELINE: usize = 32;

/// Why a pipelined exchange failed.
#[derive(Debug)]
pub enum ConnError {
    /// The connection was closed (by the peer or locally) before the reply came.
    Closed,
    /// No reply before the deadline.
    Timeout,
    /// Writing the query failed.
    Io(io::Error),
    /// No free ID (the connection is full): use another connection.
    Full,
}

/// A raw fd lent to socket2 for a shutdown; the connection owns the socket and outlives
/// the call.
struct Fd(RawFd);

impl std::os::fd::AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

/// Where a waiting query's reply lands.
#[derive(Default)]
struct Slot {
    reply: RefCell<Option<Result<Vec<u8>, ()>>>,
    waker: RefCell<Option<Waker>>,
}

impl Slot {
    fn deliver(&self, r: Result<Vec<u8>, ()>) {
        *self.reply.borrow_mut() = Some(r);
        if let Some(w) = self.waker.borrow_mut().take() {
            w.wake();
        }
    }
}

struct SlotWait<'a>(&'a Slot);

impl Future for SlotWait<'_> {
    type Output = Result<Vec<u8>, ()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(r) = self.0.reply.borrow_mut().take() {
            return Poll::Ready(r);
        }
        *self.0.waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// One connection and the queries waiting on it.
pub struct Conn<S> {
    writer: RwLock<Half<S>>,
    fd: RawFd,
    pending: RefCell<IdMap<Rc<Slot>>>,
    closed: Cell<bool>,
    born: Instant,
    last_used: Cell<Instant>,
    last_read: Cell<Instant>,
    mismatched: Cell<u64>,
    /// Whether a reply ever came back on it (a peer that closes connections unanswered is
    /// backed off, one that closes an old connection is not).
    answered: Cell<bool>,
    /// Whether the upstream ended it (its end of the stream, or a reset), not our shutdown.
    peer_closed: Cell<bool>,
}

impl<S: AsyncRead + AsyncWrite + Unpin + 'static> Conn<S> {
    /// Wraps a connected stream (whose socket is `fd`) and starts its reader task.
    pub fn start(stream: S, fd: RawFd) -> Rc<Self> {
        let (r, w) = split(stream);
        let now = Instant::now();
        let conn = Rc::new(Conn {
            writer: RwLock::new(w),
            fd,
            pending: RefCell::new(IdMap::default()),
            closed: Cell::new(false),
            born: now,
            last_used: Cell::new(now),
            last_read: Cell::new(now),
            mismatched: Cell::new(0),
            answered: Cell::new(false),
            peer_closed: Cell::new(false),
        });
        let c = conn.clone();
        ringdns_plugin::glommio::spawn_local(async move { c.read_loop(r).await }).detach();
        conn
    }

    async fn read_loop(self: Rc<Self>, mut r: Half<S>) {
        loop {
            let mut len = [0u8; 2];
            if r.read_exact(&mut len).await.is_err() {
                break;
            }
            let n = usize::from(u16::from_be_bytes(len));
            let mut buf = vec![0u8; n];
            if r.read_exact(&mut buf).await.is_err() {
                break;
            }
            self.last_read.set(Instant::now());
            let Some(id) = Header::of(&buf).map(Header::id) else {
                self.mismatched.set(self.mismatched.get() + 1);
                continue;
            };
            let slot = self.pending.borrow_mut().remove(&id);
            match slot {
                Some(slot) => {
                    self.answered.set(true);
                    slot.deliver(Ok(buf))
                }
                None => self.mismatched.set(self.mismatched.get() + 1),
            }
        }
        // Before the waiting queries learn of the close, so they can tell whose it was.
        self.peer_closed.set(!self.closed.get());
        self.closed.set(true);
        let waiting: Vec<Rc<Slot>> = self.pending.borrow_mut().drain().map(|(_, s)| s).collect();
        for slot in waiting {
            slot.deliver(Err(()));
        }
        // The reader is the last user of the read half: make sure the socket is gone.
        self.shutdown();
    }

    /// Shuts the socket down both ways: the reader sees EOF, fails what is pending and
    /// ends, and the connection is freed with the last query holding it.
    pub fn shutdown(&self) {
        self.closed.set(true);
        let _ = socket2_04::SockRef::from(&Fd(self.fd)).shutdown(std::net::Shutdown::Both);
    }

    /// Whether a new query may use this connection now.
    pub fn usable(&self, now: Instant, max_age: Duration, expire: Duration) -> bool {
        !self.closed.get()
            && (max_age.is_zero() || now.duration_since(self.born) < max_age)
            && !self.idle_expired(now, expire)
            && self.pending.borrow().len() < MAX_PIPELINE
    }

    /// How long the connection has been open.
    pub fn age(&self, now: Instant) -> Duration {
        now.duration_since(self.born)
    }

    /// Idle (nothing pending) for at least `expire`.
    pub fn idle_expired(&self, now: Instant, expire: Duration) -> bool {
        self.pending.borrow().is_empty() && now.duration_since(self.last_used.get()) >= expire
    }

    /// Whether queries wait on this connection.
    pub fn has_pending(&self) -> bool {
        !self.pending.borrow().is_empty()
    }

    /// Queries waiting on it, to pick the least loaded connection.
    pub fn load(&self) -> usize {
        self.pending.borrow().len()
    }

    /// Whether a reply has ever come back on it.
    pub fn has_answered(&self) -> bool {
        self.answered.get()
    }

    /// Whether the upstream closed it (rather than we, after a timeout or a failed write).
    pub fn closed_by_peer(&self) -> bool {
        self.peer_closed.get()
    }

    /// Whether the connection is closed.
    pub fn is_closed(&self) -> bool {
        self.closed.get()
    }

    /// Replies that matched no waiting query (late or forged), since the last call.
    pub fn take_mismatched(&self) -> u64 {
        self.mismatched.replace(0)
    }

    /// An ID not in use on this connection, if one is found in a few tries.
    fn free_id(&self, rng: &mut fastrand::Rng) -> Option<u16> {
        let pending = self.pending.borrow();
        (0..64)
            .map(|_| rng.u16(..))
            .find(|id| !pending.contains_key(id))
    }

    /// Sends `query` (no length prefix) with an ID chosen here and waits for the reply with
    /// that ID, all before `deadline`.
    pub async fn exchange(
        &self,
        query: &[u8],
        rng: &mut fastrand::Rng,
        deadline: Instant,
    ) -> Result<Vec<u8>, ConnError> {
        if self.closed.get() {
            return Err(ConnError::Closed);
        }
        let id = self.free_id(rng).ok_or(ConnError::Full)?;
        let slot = Rc::new(Slot::default());
        self.pending.borrow_mut().insert(id, slot.clone());
        let sent_at = Instant::now();
        self.last_used.set(sent_at);
        let mut frame = Vec::with_capacity(query.len() + 2);
        frame.extend_from_slice(&(query.len() as u16).to_be_bytes());
        frame.extend_from_slice(query);
        HeaderMut::new(&mut frame[2..]).set_id(id);
        let left = deadline.saturating_duration_since(sent_at);
        let write = async {
            let mut w = self
                .writer
                .write()
                .await
                .map_err(|_| io::Error::other("closed"))?;
            w.write_all(&frame).await?;
            w.flush().await
        };
        match ringdns_plugin::glommio::timer::timeout(left, async { Ok(write.await) }).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                self.pending.borrow_mut().remove(&id);
                self.shutdown();
                return Err(ConnError::Io(e));
            }
            Err(_) => {
                self.pending.borrow_mut().remove(&id);
                self.shutdown();
                return Err(ConnError::Timeout);
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let got =
            ringdns_plugin::glommio::timer::timeout(left, async { Ok(SlotWait(&slot).await) })
                .await;
        self.last_used.set(Instant::now());
        match got {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(())) => Err(ConnError::Closed),
            Err(_) => {
                self.pending.borrow_mut().remove(&id);
                if self.last_read.get() < sent_at {
                    // Silent since we asked: take it out of service.
                    self.shutdown();
                }
                Err(ConnError::Timeout)
            }
        }
    }
}
