//! A batch of datagrams as the UDP loop sees it: received queries and the replies to send,
//! in buffers allocated once per socket and reused for every batch.

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

/// Fixed-size set of slots reused for every receive/send round.
pub struct Batch {
    /// The slots; `recv` fills a prefix of them.
    pub slots: Vec<Slot>,
}

impl Batch {
    /// Allocates `size` slots up front.
    pub fn new(size: usize) -> Self {
        let slots = (0..size.max(1))
            .map(|_| Slot {
                buf: Box::new([0u8; MAX_QUERY + 1]),
                len: 0,
                truncated: false,
                peer: SocketAddr::from(([0, 0, 0, 0], 0)),
                reply: Vec::with_capacity(REPLY_CAPACITY),
                send: false,
            })
            .collect();
        Batch { slots }
    }
}
