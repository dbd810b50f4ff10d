//! The `udp_backend glommio` baseline: glommio's own `UdpSocket`, one `recv_from` and one
//! `send_to` (each an io_uring operation) per datagram, so that the batched backend can be
//! measured against it.

use super::batch::{self, Batch};
use super::send::Out;
use crate::metrics::udp::SentBy;
use std::io;
use std::net::SocketAddr;

/// glommio's UdpSocket: one datagram per operation.
pub struct Single {
    out: Out,
}

impl Single {
    /// Receives and sends through the socket of `out`.
    pub fn new(out: Out) -> Self {
        Single { out }
    }

    /// Its way out.
    pub fn out(&self) -> &Out {
        &self.out
    }

    /// Receives one datagram into the first slot.
    pub async fn recv(&mut self, batch: &mut Batch) -> io::Result<usize> {
        let slot = &mut batch.slots[0];
        let (n, peer) = self
            .out
            .socket()
            .recv_from(&mut slot.buf[..])
            .await
            .map_err(io::Error::from)?;
        slot.len = n;
        slot.truncated = n > batch::MAX_QUERY;
        slot.peer = peer;
        Ok(1)
    }

    /// Sends the replies of the first `n` slots whose `send` is set, one `send_to` each.
    pub async fn send(&mut self, batch: &mut Batch, n: usize) {
        for slot in batch.slots[..n].iter().filter(|s| s.send) {
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
