//! The receive and transmit buffers of the `mmsg` and `single` backends: slots allocated
//! once per backend and reused for every round, each one datagram in and at most one reply
//! out. The loop never sees them: it is handed each datagram through
//! [`Batch::for_each`], which the backends' `DatagramBackend::for_each` calls.

use std::net::SocketAddr;

/// The largest query datagram read; longer ones are cut and answered FORMERR.
pub const MAX_QUERY: usize = 4096;

/// Capacity reserved for each reply so writing one never allocates in the common case.
pub const REPLY_CAPACITY: usize = 8192;

/// One datagram in, at most one reply out.
pub struct Slot {
    /// The received bytes (`len` of them are valid); one byte longer than [`MAX_QUERY`] so
    /// that a datagram of exactly MAX_QUERY bytes is not mistaken for a cut one.
    pub buf: Box<[u8; MAX_QUERY + 1]>,
    /// How many bytes of `buf` the datagram filled.
    pub len: usize,
    /// The datagram did not fit in `buf` and was cut.
    pub truncated: bool,
    /// Where it came from, and where the reply goes.
    pub peer: SocketAddr,
    /// The reply, when `send` is set.
    pub reply: Vec<u8>,
    /// Whether `reply` is to be sent.
    pub send: bool,
}

/// Fixed-size set of slots reused for every receive/send round, and where the round is:
/// how many slots hold datagrams received and not yet served, and how many were served and
/// not yet sent. Both backends keep their round here, so that `send` without `for_each`
/// sends nothing and a second `for_each` serves nothing (no stale flag goes out).
pub struct Batch {
    /// The slots; a receive fills a prefix of them.
    pub slots: Vec<Slot>,
    received: usize,
    served: usize,
}

impl Batch {
    /// Allocates `size` slots up front (none for a backend that only sends).
    pub fn new(size: usize) -> Self {
        let slots = (0..size)
            .map(|_| Slot {
                buf: Box::new([0u8; MAX_QUERY + 1]),
                len: 0,
                truncated: false,
                peer: SocketAddr::from(([0, 0, 0, 0], 0)),
                reply: Vec::with_capacity(REPLY_CAPACITY),
                send: false,
            })
            .collect();
        Batch {
            slots,
            received: 0,
            served: 0,
        }
    }

    /// Starts a round: nothing received, nothing to send.
    pub fn begin(&mut self) {
        (self.received, self.served) = (0, 0);
    }

    /// Notes that a receive filled the first `n` slots.
    pub fn received(&mut self, n: usize) {
        self.received = n;
    }

    /// The number of slots served and not yet sent, which the send takes (at most once).
    pub fn take_served(&mut self) -> usize {
        std::mem::take(&mut self.served)
    }

    /// Hands each slot received and not yet served to `serve` with the slot's reply buffer,
    /// and keeps what it returns as the slot's `send`: every one of them is written, so no
    /// flag of an earlier round survives. (Not `inline(always)`: both backends call the
    /// same instance, `serve` inlined into it once.)
    pub fn for_each<F>(&mut self, mut serve: F)
    where
        F: FnMut(&[u8], bool, SocketAddr, &mut Vec<u8>) -> bool,
    {
        self.served = std::mem::take(&mut self.received);
        for slot in &mut self.slots[..self.served] {
            slot.send = serve(
                &slot.buf[..slot.len],
                slot.truncated,
                slot.peer,
                &mut slot.reply,
            );
        }
    }
}
