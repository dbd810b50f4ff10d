//! The datagram backends behind one small trait, so that the batched recvmmsg/sendmmsg loop
//! can be measured against glommio's own one-datagram-per-syscall UdpSocket (and later an
//! io_uring multishot receive), and the global block can choose (`udp_backend`).

use super::batch::Batch;
use super::mmsg::Mmsg;
use glommio::net::UdpSocket;
use std::future::Future;
use std::io;

/// Receives and sends batches of datagrams on one socket.
pub trait DatagramBackend {
    /// Fills a prefix of `batch.slots` with datagrams and returns how many; waits on the
    /// executor only when the socket has nothing queued.
    fn recv(&mut self, batch: &mut Batch) -> impl Future<Output = io::Result<usize>>;
    /// Sends every reply of the first `n` slots whose `send` is set.
    fn send(&mut self, batch: &mut Batch, n: usize) -> impl Future<Output = ()>;
}

/// glommio's UdpSocket: one recv_from/send_to per datagram; the baseline.
pub struct GlommioBackend {
    sock: std::rc::Rc<UdpSocket>,
}

impl GlommioBackend {
    /// Wraps a bound socket.
    pub fn new(sock: std::rc::Rc<UdpSocket>) -> Self {
        GlommioBackend { sock }
    }
}

impl DatagramBackend for GlommioBackend {
    async fn recv(&mut self, batch: &mut Batch) -> io::Result<usize> {
        let slot = &mut batch.slots[0];
        let (n, peer) = self
            .sock
            .recv_from(&mut slot.buf[..])
            .await
            .map_err(io::Error::from)?;
        slot.len = n;
        slot.truncated = n > super::batch::MAX_QUERY;
        slot.peer = peer;
        Ok(1)
    }

    async fn send(&mut self, batch: &mut Batch, n: usize) {
        for slot in batch.slots[..n].iter().filter(|s| s.send) {
            super::replies::send_now(&self.sock, &slot.reply, slot.peer).await;
        }
    }
}

/// Either backend, chosen at start from the tuning block, without `dyn`.
pub enum Backend {
    /// recvmmsg/sendmmsg.
    Mmsg(Mmsg),
    /// glommio's UdpSocket.
    Glommio(GlommioBackend),
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
}
