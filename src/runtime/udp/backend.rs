//! The datagram backends behind one small trait, so that the batched recvmmsg/sendmmsg
//! backend can be measured against glommio's own one-datagram-per-operation UdpSocket (and
//! later an io_uring multishot receive), and the global block can choose (`udp_backend`).
//!
//! A backend does every receive and send of its listener: the loop's batches, and the
//! replies of deferred queries, which the listener's reply task sends through a second
//! instance of the same backend ([`DatagramBackend::for_replies`]).
//!
//! The loop holds a [`Backend`], an enum, so each call is a `match`, not a `dyn` call. A new
//! backend is a module of its own beside `mmsg` and `single`, one more implementation of
//! [`DatagramBackend`] here (the trait lives with the enum, so the backends' modules do not
//! import this one) and one more variant.

use super::batch::Batch;
use super::mmsg::Mmsg;
use super::send::Out;
use super::single::Single;
use crate::config::UdpBackend;
use std::future::Future;
use std::io;
use std::net::SocketAddr;

/// Receives and sends the datagrams of one socket.
pub trait DatagramBackend {
    /// Fills a prefix of `batch.slots` with datagrams and returns how many; waits on the
    /// executor only when the socket has nothing queued.
    fn recv(&mut self, batch: &mut Batch) -> impl Future<Output = io::Result<usize>>;
    /// Sends every reply of the first `n` slots whose `send` is set.
    fn send(&mut self, batch: &mut Batch, n: usize) -> impl Future<Output = ()>;
    /// Sends replies that are not in a batch's slots (those of deferred queries), each to
    /// its address.
    fn send_replies(&mut self, replies: &[(Vec<u8>, SocketAddr)]) -> impl Future<Output = ()>;
    /// A second backend of the same kind on the same socket, for the listener's reply task:
    /// it sends deferred replies ([`DatagramBackend::send_replies`]), up to `most` at a time,
    /// while the loop owns this one, each with send state of its own. It never receives.
    fn for_replies(&self, most: usize) -> Self
    where
        Self: Sized;
}

impl DatagramBackend for Mmsg {
    fn recv(&mut self, batch: &mut Batch) -> impl Future<Output = io::Result<usize>> {
        Mmsg::recv(self, batch)
    }

    fn send(&mut self, batch: &mut Batch, n: usize) -> impl Future<Output = ()> {
        Mmsg::send(self, batch, n)
    }

    fn send_replies(&mut self, replies: &[(Vec<u8>, SocketAddr)]) -> impl Future<Output = ()> {
        Mmsg::send_replies(self, replies)
    }

    fn for_replies(&self, most: usize) -> Self {
        Mmsg::for_replies(self, most)
    }
}

impl DatagramBackend for Single {
    fn recv(&mut self, batch: &mut Batch) -> impl Future<Output = io::Result<usize>> {
        Single::recv(self, batch)
    }

    fn send(&mut self, batch: &mut Batch, n: usize) -> impl Future<Output = ()> {
        Single::send(self, batch, n)
    }

    fn send_replies(&mut self, replies: &[(Vec<u8>, SocketAddr)]) -> impl Future<Output = ()> {
        Single::send_replies(self, replies)
    }

    fn for_replies(&self, _most: usize) -> Self {
        Single::new(self.out().clone())
    }
}

/// Either backend, chosen at start from the global block, without `dyn`.
pub enum Backend {
    /// recvmmsg/sendmmsg.
    Mmsg(Mmsg),
    /// glommio's UdpSocket.
    Glommio(Single),
}

impl Backend {
    /// The backend `kind` on the socket of `out`, for batches of up to `batch` datagrams
    /// (glommio's takes one at a time whatever `batch` says).
    pub fn new(kind: UdpBackend, out: Out, batch: usize) -> Self {
        match kind {
            UdpBackend::Mmsg => Backend::Mmsg(Mmsg::new(out, batch)),
            UdpBackend::Glommio => Backend::Glommio(Single::new(out)),
        }
    }

    /// The most datagrams one `recv` fills: the size of the loop's [`Batch`].
    pub fn batch_size(&self) -> usize {
        match self {
            Backend::Mmsg(b) => b.size(),
            Backend::Glommio(_) => 1,
        }
    }
}

impl DatagramBackend for Backend {
    async fn recv(&mut self, batch: &mut Batch) -> io::Result<usize> {
        match self {
            Backend::Mmsg(b) => b.recv(batch).await,
            Backend::Glommio(b) => b.recv(batch).await,
        }
    }

    async fn send(&mut self, batch: &mut Batch, n: usize) {
        match self {
            Backend::Mmsg(b) => b.send(batch, n).await,
            Backend::Glommio(b) => b.send(batch, n).await,
        }
    }

    async fn send_replies(&mut self, replies: &[(Vec<u8>, SocketAddr)]) {
        match self {
            Backend::Mmsg(b) => b.send_replies(replies).await,
            Backend::Glommio(b) => b.send_replies(replies).await,
        }
    }

    fn for_replies(&self, most: usize) -> Self {
        match self {
            Backend::Mmsg(b) => Backend::Mmsg(b.for_replies(most)),
            Backend::Glommio(b) => Backend::Glommio(b.for_replies(most)),
        }
    }
}
