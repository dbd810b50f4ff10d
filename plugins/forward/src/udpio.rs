//! Batched datagram I/O on connected UDP sockets, in safe Rust through nix: one `sendmmsg`
//! for the queries a socket collected during one executor turn, one `recvmmsg` for up to
//! [`RECV_BATCH`] waiting replies. A forwarded query then costs a fraction of a syscall on
//! each side instead of one (plus a failed read per drain).

use nix::errno::Errno;
use nix::sys::socket::{
    ControlMessage, MsgFlags, MultiHeaders, SockaddrStorage, recvmmsg, sendmmsg,
};
use ringdns_plugin::wire::HeaderMut;
use std::io::{IoSlice, IoSliceMut};
use std::os::fd::RawFd;

/// Most queries handed to one sendmmsg call.
pub const SEND_BATCH: usize = 32;

/// Most replies taken by one recvmmsg call.
pub const RECV_BATCH: usize = 16;

/// Room for each reply: the largest UDP payload, so no reply is ever cut. Only the pages a
/// reply touches are ever written; one receiver serves all the sockets of a core.
const RECV_BUF: usize = 65_535;

/// Queries waiting to be sent on one socket: their bytes back to back (no allocation per
/// query once the buffers have grown), with each one's ID and place.
#[derive(Default)]
pub struct OutQueue {
    bytes: Vec<u8>,
    items: Vec<(u16, usize, usize)>,
}

impl OutQueue {
    /// Queues `query` (a whole message, header included) to be sent with the ID `id` instead
    /// of its own.
    pub fn push(&mut self, id: u16, query: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(query);
        HeaderMut::new(&mut self.bytes[start..]).set_id(id);
        self.items.push((id, start, query.len()));
    }

    /// How many queries wait.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Forgets them all, keeping the buffers.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.items.clear();
    }

    /// Query `i`: its ID and bytes.
    pub fn get(&self, i: usize) -> (u16, &[u8]) {
        let (id, start, len) = self.items[i];
        (id, &self.bytes[start..start + len])
    }
}

/// The sendmmsg side: headers allocated once per socket.
pub struct Sender {
    hdrs: MultiHeaders<()>,
}

impl Default for Sender {
    fn default() -> Self {
        Sender {
            hdrs: MultiHeaders::preallocate(SEND_BATCH, None),
        }
    }
}

impl Sender {
    /// Sends queries `from..` of `q` (at most [`SEND_BATCH`]) with one sendmmsg on the
    /// connected socket `fd`, without waiting; returns how many the kernel took. An error
    /// means the first of them could not be sent.
    pub fn send(&mut self, fd: RawFd, q: &OutQueue, from: usize) -> Result<usize, Errno> {
        const NO_ADDR: [Option<()>; SEND_BATCH] = [None; SEND_BATCH];
        let n = (q.len() - from).min(SEND_BATCH);
        let iovs: [[IoSlice<'_>; 1]; SEND_BATCH] =
            std::array::from_fn(|i| [IoSlice::new(if i < n { q.get(from + i).1 } else { &[] })]);
        let cmsgs: [ControlMessage<'_>; 0] = [];
        sendmmsg(
            fd,
            &mut self.hdrs,
            &iovs[..n],
            &NO_ADDR[..n],
            cmsgs,
            MsgFlags::MSG_DONTWAIT,
        )
        .map(|r| r.count())
    }
}

/// The recvmmsg side: one per core, shared by the reader tasks of all its sockets (a reader
/// drains without awaiting, so they never use it at the same time).
pub struct Receiver {
    // With no room for the source address (`()`), the kernel would write the address length
    // it wanted into the header and the next call would store an address nowhere: keep room.
    hdrs: MultiHeaders<SockaddrStorage>,
    bufs: Vec<u8>,
    lens: [usize; RECV_BATCH],
}

impl Default for Receiver {
    fn default() -> Self {
        Receiver {
            hdrs: MultiHeaders::preallocate(RECV_BATCH, None),
            bufs: vec![0; RECV_BATCH * RECV_BUF],
            lens: [0; RECV_BATCH],
        }
    }
}

impl Receiver {
    /// One non-blocking recvmmsg on `fd`: how many datagrams arrived (read them with
    /// [`Receiver::datagram`]). `EAGAIN` means none was waiting.
    pub fn recv(&mut self, fd: RawFd) -> Result<usize, Errno> {
        let mut chunks = self.bufs.chunks_mut(RECV_BUF);
        let iovs: [[IoSliceMut<'_>; 1]; RECV_BATCH] =
            std::array::from_fn(|_| [IoSliceMut::new(chunks.next().unwrap_or_default())]);
        let got = recvmmsg(fd, &mut self.hdrs, &iovs, MsgFlags::MSG_DONTWAIT, None)?;
        let mut n = 0;
        for (len, m) in self.lens.iter_mut().zip(got) {
            *len = m.bytes;
            n += 1;
        }
        Ok(n)
    }

    /// Datagram `i` of the last [`Receiver::recv`].
    pub fn datagram(&self, i: usize) -> &[u8] {
        let start = i * RECV_BUF;
        &self.bufs[start..start + self.lens[i].min(RECV_BUF)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;

    fn pair() -> (UdpSocket, UdpSocket) {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        a.connect(b.local_addr().unwrap()).unwrap();
        b.connect(a.local_addr().unwrap()).unwrap();
        (a, b)
    }

    #[test]
    fn a_queue_goes_out_in_one_call_and_comes_back_in_order() {
        let (a, b) = pair();
        let mut q = OutQueue::default();
        for i in 0..40u16 {
            q.push(i, &[i as u8; 30][..usize::from(i % 19 + 12)]);
        }
        let mut tx = Sender::default();
        let first = tx.send(a.as_raw_fd(), &q, 0).unwrap();
        assert_eq!(first, SEND_BATCH);
        assert_eq!(tx.send(a.as_raw_fd(), &q, first).unwrap(), 40 - SEND_BATCH);
        let mut rx = Receiver::default();
        let mut seen = Vec::new();
        while seen.len() < 40 {
            let n = rx.recv(b.as_raw_fd()).unwrap();
            assert!(n <= RECV_BATCH);
            seen.extend((0..n).map(|i| rx.datagram(i).to_vec()));
        }
        for (i, d) in seen.iter().enumerate() {
            let (id, sent) = q.get(i);
            assert_eq!(d, sent);
            // The queued ID replaced the query's own.
            assert_eq!(d[..2], (i as u16).to_be_bytes());
            assert_eq!(id, i as u16);
            assert!(d[2..].iter().all(|&b| b == i as u8));
        }
        assert_eq!(rx.recv(b.as_raw_fd()), Err(Errno::EAGAIN));
        q.clear();
        assert!(q.is_empty());
    }

    #[test]
    fn a_large_reply_is_not_cut() {
        let (a, b) = pair();
        let big = vec![7u8; 60_000];
        a.send(&big).unwrap();
        a.send(b"small").unwrap();
        let mut rx = Receiver::default();
        let mut got = Vec::new();
        while got.len() < 2 {
            let n = rx.recv(b.as_raw_fd()).unwrap();
            got.extend((0..n).map(|i| rx.datagram(i).to_vec()));
        }
        assert_eq!(got[0], big);
        assert_eq!(got[1], b"small");
    }
}
