//! The `udp_backend glommio` baseline: glommio's own `UdpSocket`, one `recv_from` and one
//! `send_to` (each an io_uring operation) per datagram, so that the batched backend can be
//! measured against it. It owns one slot: its receive buffer and its reply.

use super::batch::{self, Batch};
use super::send::Out;
use crate::metrics::udp::SentBy;
use std::io;
use std::net::SocketAddr;

/// glommio's UdpSocket: one datagram per operation.
pub struct Single {
    out: Out,
    /// One slot for the loop's instance; none for the reply task's, which never receives.
    batch: Batch,
}

impl Single {
    /// Receives and sends through the socket of `out`, with one slot.
    pub fn new(out: Out) -> Self {
        Single {
            out,
            batch: Batch::new(1),
        }
    }

    /// Another instance on the same socket that only sends (deferred replies): no slot.
    pub fn for_replies(&self) -> Self {
        Single {
            out: self.out.clone(),
            batch: Batch::new(0),
        }
    }

    /// Receives one datagram into its slot.
    pub async fn recv(&mut self) -> io::Result<usize> {
        self.batch.begin();
        let slot = &mut self.batch.slots[0];
        let (n, peer) = self
            .out
            .socket()
            .recv_from(&mut slot.buf[..])
            .await
            .map_err(io::Error::from)?;
        slot.len = n;
        slot.truncated = n > batch::MAX_QUERY;
        slot.peer = peer;
        self.batch.received(1);
        Ok(1)
    }

    /// Hands the received datagram, if not yet served, to `serve` (see `Batch::for_each`).
    #[inline(always)]
    pub fn for_each<F>(&mut self, serve: F)
    where
        F: FnMut(&[u8], bool, SocketAddr, &mut Vec<u8>) -> bool,
    {
        self.batch.for_each(serve);
    }

    /// Sends the reply of the served datagram if `serve` said so, with one `send_to`.
    pub async fn send(&mut self) {
        let served = self.batch.take_served();
        for slot in self.batch.slots[..served].iter().filter(|s| s.send) {
            self.out.now(&slot.reply, slot.peer).await;
        }
    }

    /// Sends each reply to its address, one `send_to` each.
    pub async fn send_replies(&mut self, replies: &[(Vec<u8>, SocketAddr)]) {
        self.out.count_deferred(SentBy::Glommio, replies.len());
        for (reply, to) in replies {
            self.out.now(reply, *to).await;
        }
    }
}
