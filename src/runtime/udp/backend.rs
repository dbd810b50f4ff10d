//! The datagram backends behind one small trait, so that the batched recvmmsg/sendmmsg
//! backend can be measured against glommio's own one-datagram-per-operation UdpSocket (and
//! later an io_uring multishot receive), and the global block can choose (`udp_backend`).
//!
//! A backend owns the whole round of its listener, buffers included: it receives into
//! buffers of its own, lends each datagram and a reply buffer to the loop's serve closure
//! ([`DatagramBackend::for_each`]), and sends the replies the closure asked for. The loop
//! holds no buffer and knows no slot, so a backend whose receive buffers are the kernel's
//! (io_uring provided buffers) hands those out as they are, with no copy. It also sends the
//! replies of deferred queries, which the listener's reply task sends through a second
//! instance of the same backend ([`DatagramBackend::for_replies`]).
//!
//! The loop holds a [`Backend`], an enum, so each call is a `match`, not a `dyn` call, and
//! the serve closure is a generic parameter, monomorphized into each backend's loop over its
//! datagrams. A new backend is a module of its own beside `mmsg` and `single`, one more
//! implementation of [`DatagramBackend`] here (the trait lives with the enum, so the
//! backends' modules do not import this one) and one more variant.

use super::mmsg::Mmsg;
use super::send::Out;
use super::single::Single;
use crate::config::UdpBackend;
use std::future::Future;
use std::io;
use std::net::SocketAddr;

/// Receives and sends the datagrams of one socket, in rounds: [`recv`], then
/// [`for_each`], then [`send`].
///
/// [`recv`]: DatagramBackend::recv
/// [`for_each`]: DatagramBackend::for_each
/// [`send`]: DatagramBackend::send
pub trait DatagramBackend {
    /// Receives a round of datagrams into the backend's own buffers and returns how many
    /// (at most [`DatagramBackend::size`]); waits on the executor only when the socket has
    /// nothing queued. The loop races it with its stop and drops it then: it must lose
    /// nothing but the round it has not returned.
    fn recv(&mut self) -> impl Future<Output = io::Result<usize>>;
    /// Hands each datagram of the round [`DatagramBackend::recv`] returned, once, to `serve`:
    /// its bytes, whether it was cut (longer than the buffer), its sender, and a reply
    /// buffer of the backend's (holding what it last held: `serve` clears it and writes the
    /// reply into it). `serve` returns whether to send that reply. Never waits.
    fn for_each<F>(&mut self, serve: F)
    where
        F: FnMut(&[u8], bool, SocketAddr, &mut Vec<u8>) -> bool;
    /// Sends the replies of the round that `serve` asked for, each to its datagram's sender.
    fn send(&mut self) -> impl Future<Output = ()>;
    /// Sends replies that are not in a round (those of deferred queries), each to its
    /// address.
    fn send_replies(&mut self, replies: &[(Vec<u8>, SocketAddr)]) -> impl Future<Output = ()>;
    /// A second backend of the same kind on the same socket, for the listener's reply task:
    /// it sends deferred replies ([`DatagramBackend::send_replies`]), up to `most` at a time,
    /// while the loop owns this one, each with send state of its own. It never receives.
    fn for_replies(&self, most: usize) -> Self
    where
        Self: Sized;
    /// The most datagrams one [`DatagramBackend::recv`] takes: a round this full means more
    /// is waiting.
    fn size(&self) -> usize;
}

impl DatagramBackend for Mmsg {
    fn recv(&mut self) -> impl Future<Output = io::Result<usize>> {
        Mmsg::recv(self)
    }

    #[inline(always)]
    fn for_each<F>(&mut self, serve: F)
    where
        F: FnMut(&[u8], bool, SocketAddr, &mut Vec<u8>) -> bool,
    {
        Mmsg::for_each(self, serve)
    }

    fn send(&mut self) -> impl Future<Output = ()> {
        Mmsg::send(self)
    }

    fn send_replies(&mut self, replies: &[(Vec<u8>, SocketAddr)]) -> impl Future<Output = ()> {
        Mmsg::send_replies(self, replies)
    }

    fn for_replies(&self, most: usize) -> Self {
        Mmsg::for_replies(self, most)
    }

    fn size(&self) -> usize {
        Mmsg::size(self)
    }
}

impl DatagramBackend for Single {
    fn recv(&mut self) -> impl Future<Output = io::Result<usize>> {
        Single::recv(self)
    }

    #[inline(always)]
    fn for_each<F>(&mut self, serve: F)
    where
        F: FnMut(&[u8], bool, SocketAddr, &mut Vec<u8>) -> bool,
    {
        Single::for_each(self, serve)
    }

    fn send(&mut self) -> impl Future<Output = ()> {
        Single::send(self)
    }

    fn send_replies(&mut self, replies: &[(Vec<u8>, SocketAddr)]) -> impl Future<Output = ()> {
        Single::send_replies(self, replies)
    }

    fn for_replies(&self, _most: usize) -> Self {
        Single::for_replies(self)
    }

    fn size(&self) -> usize {
        1
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
    /// The backend `kind` on the socket of `out`, for rounds of up to `batch` datagrams
    /// (glommio's takes one at a time whatever `batch` says).
    pub fn new(kind: UdpBackend, out: Out, batch: usize) -> Self {
        match kind {
            UdpBackend::Mmsg => Backend::Mmsg(Mmsg::new(out, batch)),
            UdpBackend::Glommio => Backend::Glommio(Single::new(out)),
        }
    }
}

impl DatagramBackend for Backend {
    async fn recv(&mut self) -> io::Result<usize> {
        match self {
            Backend::Mmsg(b) => b.recv().await,
            Backend::Glommio(b) => b.recv().await,
        }
    }

    #[inline(always)]
    fn for_each<F>(&mut self, serve: F)
    where
        F: FnMut(&[u8], bool, SocketAddr, &mut Vec<u8>) -> bool,
    {
        match self {
            Backend::Mmsg(b) => b.for_each(serve),
            Backend::Glommio(b) => b.for_each(serve),
        }
    }

    async fn send(&mut self) {
        match self {
            Backend::Mmsg(b) => b.send().await,
            Backend::Glommio(b) => b.send().await,
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
            Backend::Glommio(b) => Backend::Glommio(b.for_replies()),
        }
    }

    fn size(&self) -> usize {
        match self {
            Backend::Mmsg(b) => b.size(),
            Backend::Glommio(_) => 1,
        }
    }
}
