//! A pooled, pipelined TCP or TLS connection to one upstream: queries are written one after
//! another, a reader task hands each reply to the query with its ID, so many queries share
//! one connection.

use super::split::{Half, split};
use futures_lite::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use glommio::sync::RwLock;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// Why a pipelined exchange failed.
#[derive(Debug)]
pub enum ConnError {
    /// The connection was closed (by the peer or locally) before the reply came.
    Closed,
    /// No reply within the read timeout.
    Timeout,
    /// Writing the query failed.
    Io(io::Error),
}

/// Closing what the two halves share, so the reader sees EOF.
pub trait Shutdown {
    /// Shuts the socket down in both directions.
    fn shutdown_now(&mut self);
}

impl Shutdown for glommio::net::TcpStream {
    fn shutdown_now(&mut self) {
        let _ = socket2_04::SockRef::from(&*self).shutdown(std::net::Shutdown::Both);
    }
}

impl Shutdown for futures_rustls::client::TlsStream<glommio::net::TcpStream> {
    fn shutdown_now(&mut self) {
        self.get_mut().0.shutdown_now();
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
    pending: RefCell<HashMap<u16, Rc<Slot>>>,
    closed: Cell<bool>,
    born: Instant,
    last_used: Cell<Instant>,
    mismatched: Cell<u64>,
}

impl<S: AsyncRead + AsyncWrite + Shutdown + Unpin + 'static> Conn<S> {
    /// Wraps a connected stream and starts its reader task on this core.
    pub fn start(stream: S) -> Rc<Self> {
        let (r, w) = split(stream);
        let now = Instant::now();
        let conn = Rc::new(Conn {
            writer: RwLock::new(w),
            pending: RefCell::new(HashMap::new()),
            closed: Cell::new(false),
            born: now,
            last_used: Cell::new(now),
            mismatched: Cell::new(0),
        });
        let c = conn.clone();
        glommio::spawn_local(async move { c.read_loop(r).await }).detach();
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
            if n < 12 {
                self.mismatched.set(self.mismatched.get() + 1);
                continue;
            }
            let id = u16::from_be_bytes([buf[0], buf[1]]);
            match self.pending.borrow_mut().remove(&id) {
                Some(slot) => slot.deliver(Ok(buf)),
                None => self.mismatched.set(self.mismatched.get() + 1),
            }
        }
        self.closed.set(true);
        for (_, slot) in self.pending.borrow_mut().drain() {
            slot.deliver(Err(()));
        }
    }

    /// Whether new queries may use this connection.
    pub fn usable(&self, now: Instant, max_age: Duration) -> bool {
        !self.closed.get() && (max_age.is_zero() || now.duration_since(self.born) < max_age)
    }

    /// Whether the connection has been idle longer than `expire` with nothing pending.
    pub fn idle_expired(&self, now: Instant, expire: Duration) -> bool {
        self.pending.borrow().is_empty() && now.duration_since(self.last_used.get()) >= expire
    }

    /// Whether queries wait on this connection.
    pub fn has_pending(&self) -> bool {
        !self.pending.borrow().is_empty()
    }

    /// Whether the connection is closed.
    pub fn is_closed(&self) -> bool {
        self.closed.get()
    }

    /// Number of replies that matched no waiting query (late or forged), since the last call.
    pub fn take_mismatched(&self) -> u64 {
        self.mismatched.replace(0)
    }

    /// An ID not in use on this connection.
    pub fn free_id(&self, rng: &mut fastrand::Rng) -> u16 {
        let pending = self.pending.borrow();
        loop {
            let id = rng.u16(..);
            if !pending.contains_key(&id) {
                return id;
            }
        }
    }

    /// Closes the connection: the reader sees EOF and fails what is pending.
    pub async fn close(&self) {
        self.closed.set(true);
        if let Ok(w) = self.writer.write().await {
            w.with(|s| s.shutdown_now());
        }
    }

    /// Sends `query` (whose ID is `id`, without the length prefix) and waits up to
    /// `timeout` for the reply with that ID.
    pub async fn exchange(
        &self,
        id: u16,
        query: &[u8],
        timeout: Duration,
    ) -> Result<Vec<u8>, ConnError> {
        if self.closed.get() {
            return Err(ConnError::Closed);
        }
        let slot = Rc::new(Slot::default());
        self.pending.borrow_mut().insert(id, slot.clone());
        self.last_used.set(Instant::now());
        let mut frame = Vec::with_capacity(query.len() + 2);
        frame.extend_from_slice(&(query.len() as u16).to_be_bytes());
        frame.extend_from_slice(query);
        let written = async {
            let mut w = self
                .writer
                .write()
                .await
                .map_err(|_| io::Error::other("closed"))?;
            w.write_all(&frame).await?;
            w.flush().await
        }
        .await;
        if let Err(e) = written {
            self.pending.borrow_mut().remove(&id);
            self.closed.set(true);
            return Err(ConnError::Io(e));
        }
        let got = glommio::timer::timeout(timeout, async { Ok(SlotWait(&slot).await) }).await;
        self.last_used.set(Instant::now());
        match got {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(())) => Err(ConnError::Closed),
            Err(_) => {
                self.pending.borrow_mut().remove(&id);
                Err(ConnError::Timeout)
            }
        }
    }
}
