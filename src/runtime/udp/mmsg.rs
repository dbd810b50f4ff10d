//! The batched datagram backend: recvmmsg until the socket is empty, then park on the
//! executor (one io_uring poll, `UdpSocket::readable` of vendor/glommio) until it is
//! readable again;
//! replies leave in one sendmmsg. Under load this is one syscall per batch each way. The
//! backend owns the round's buffers: the slots the kernel writes the queries into (and
//! their replies), and the headers pointed at them.

use super::batch::{self, Batch};
use super::send::Out;
use crate::metrics::udp::SentBy;
use std::io;
use std::mem::MaybeUninit;
use std::net::{SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::AsRawFd;

/// The headers, iovecs and addresses of one recvmmsg/sendmmsg call, allocated once and
/// pointed at the buffers before each call.
///
/// Each header points at its own iovec from the start (the vectors never grow, so their
/// elements never move), and a receive header at its own address. Those raw pointers stay
/// valid only if `iovs` and `addrs` are written through pointers from `as_mut_ptr` (`iov`,
/// `addr`), or references made from such a pointer, never through a reference taken from
/// the vector (`&mut self.addrs[i]`), which would invalidate them.
struct Headers {
    hdrs: Vec<libc::mmsghdr>,
    iovs: Vec<libc::iovec>,
    addrs: Vec<libc::sockaddr_storage>,
}

impl Headers {
    /// Iovec `i`, as the headers point at it (`i` < the headers' length).
    fn iov(&mut self, i: usize) -> *mut libc::iovec {
        self.iovs.as_mut_ptr().wrapping_add(i)
    }

    /// Address `i`, as the headers point at it (`i` < the headers' length).
    fn addr(&mut self, i: usize) -> *mut libc::sockaddr_storage {
        self.addrs.as_mut_ptr().wrapping_add(i)
    }

    /// Points iovec `i` at `bytes` (`i` < the headers' length).
    fn set_iov(&mut self, i: usize, base: *mut u8, len: usize) {
        assert!(i < self.iovs.len());
        // SAFETY: in bounds (checked); no reference to the element is alive, and the write
        // goes through the same kind of pointer the headers hold.
        unsafe {
            self.iov(i).write(libc::iovec {
                iov_base: base.cast(),
                iov_len: len,
            })
        };
    }

    /// Points header `i` at the address `name` (`namelen` bytes of it).
    fn point(&mut self, i: usize, name: *mut libc::c_void, namelen: libc::socklen_t) {
        let h = &mut self.hdrs[i].msg_hdr;
        h.msg_name = name;
        h.msg_namelen = namelen;
    }

    /// Points send header `i` at `bytes` for the address at `name` (`namelen` bytes of it).
    fn set(&mut self, i: usize, bytes: &[u8], name: *mut libc::c_void, namelen: libc::socklen_t) {
        self.set_iov(i, bytes.as_ptr().cast_mut(), bytes.len());
        self.point(i, name, namelen);
    }

    /// Room for `size` datagrams (at least one): each header points at its own iovec, the
    /// rest is zero.
    fn new(size: usize) -> Self {
        let size = size.max(1);
        // SAFETY: mmsghdr, iovec and sockaddr_storage are plain C structs for which all-zero
        // bytes are a valid value.
        let zero_hdr: libc::mmsghdr = unsafe { MaybeUninit::zeroed().assume_init() };
        // SAFETY: as above.
        let zero_addr: libc::sockaddr_storage = unsafe { MaybeUninit::zeroed().assume_init() };
        let mut h = Headers {
            hdrs: vec![zero_hdr; size],
            iovs: vec![
                libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0
                };
                size
            ],
            addrs: vec![zero_addr; size],
        };
        for i in 0..size {
            let iov = h.iov(i);
            let m = &mut h.hdrs[i].msg_hdr;
            m.msg_iov = iov;
            m.msg_iovlen = 1;
        }
        h
    }
}

/// recvmmsg/sendmmsg state for one socket: its slots, the receive headers, pointed at the
/// slots' buffers before each call, and a sender for the replies.
pub struct Mmsg {
    out: Out,
    h: Headers,
    sender: Sender,
    /// The round's buffers: a receive fills a prefix of the slots.
    batch: Batch,
    /// Receive headers the last call filled: the kernel rewrote their address lengths.
    filled: usize,
}

/// The room a receive header offers for the sender's address.
const STORAGE_LEN: libc::socklen_t = size_of::<libc::sockaddr_storage>() as libc::socklen_t;

impl Mmsg {
    /// Prepares slots and headers for batches of `size` datagrams (at least one) on the
    /// socket of `out`.
    pub fn new(out: Out, size: usize) -> Self {
        Mmsg::with(out, size.max(1), size)
    }

    /// `slots` slots with their receive headers, and send headers for `sends` replies at a
    /// time. Each receive header points at its own address for good.
    fn with(out: Out, slots: usize, sends: usize) -> Self {
        let mut h = Headers::new(slots);
        for i in 0..h.hdrs.len() {
            let name = h.addr(i).cast();
            h.point(i, name, STORAGE_LEN);
        }
        Mmsg {
            out,
            h,
            sender: Sender::new(sends),
            batch: Batch::new(slots),
            filled: 0,
        }
    }

    /// The most datagrams one receive takes.
    pub fn size(&self) -> usize {
        self.batch.slots.len()
    }

    /// One non-blocking recvmmsg into the slots; `Ok(0)` when the socket is empty. Per call
    /// only what changes is written: the buffers' iovecs, and the address lengths the last
    /// call overwrote.
    fn try_recv(&mut self) -> io::Result<usize> {
        let batch = &mut self.batch;
        let n = batch.slots.len().min(self.h.hdrs.len());
        for hdr in &mut self.h.hdrs[..self.filled] {
            hdr.msg_hdr.msg_namelen = STORAGE_LEN;
        }
        self.filled = 0;
        for (i, slot) in batch.slots[..n].iter_mut().enumerate() {
            self.h.set_iov(i, slot.buf.as_mut_ptr(), slot.buf.len());
        }
        // SAFETY: every header points at live buffers owned by `self` (its slots, iovecs and
        // addresses) for the duration of the call, with lengths that match them; n ≤ the
        // headers' length.
        let got = unsafe {
            libc::recvmmsg(
                self.out.socket().as_raw_fd(),
                self.h.hdrs.as_mut_ptr(),
                n as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if got < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        let got = got as usize;
        self.filled = got;
        for i in 0..got {
            let slot = &mut batch.slots[i];
            slot.len = (self.h.hdrs[i].msg_len as usize).min(slot.buf.len());
            slot.truncated = self.h.hdrs[i].msg_hdr.msg_flags & libc::MSG_TRUNC != 0
                || slot.len > batch::MAX_QUERY;
            match to_socket_addr(&self.h.addrs[i]) {
                Some(peer) => slot.peer = peer,
                // A family we do not serve: drop the datagram (an empty packet is dropped).
                None => slot.len = 0,
            }
        }
        Ok(got)
    }

    /// Fills a prefix of its slots, waiting (one io_uring poll) only when the socket is
    /// empty. Dropped at that wait (the loop's stop), it has taken nothing.
    pub async fn recv(&mut self) -> io::Result<usize> {
        self.batch.begin();
        loop {
            let n = self.try_recv()?;
            if n > 0 {
                self.batch.received(n);
                return Ok(n);
            }
            // Empty: wait for readability without consuming the datagram.
            self.out
                .socket()
                .readable()
                .await
                .map_err(io::Error::from)?;
        }
    }

    /// Hands each datagram received and not yet served to `serve` (see `Batch::for_each`).
    #[inline(always)]
    pub fn for_each<F>(&mut self, serve: F)
    where
        F: FnMut(&[u8], bool, SocketAddr, &mut Vec<u8>) -> bool,
    {
        self.batch.for_each(serve);
    }

    /// Sends the replies of the served slots whose `send` is set, in one sendmmsg when the
    /// kernel takes them all. They go back to the addresses the kernel wrote for their
    /// queries, as they are: no conversion back from the `SocketAddr` a slot keeps per
    /// datagram.
    pub async fn send(&mut self) {
        let n = self.batch.take_served().min(self.filled);
        let batch = &self.batch;
        let mut count = 0;
        for (i, slot) in batch.slots[..n].iter().enumerate() {
            if !slot.send {
                continue;
            }
            // The pointer and length the kernel just wrote the query's address through.
            let h = &self.h.hdrs[i].msg_hdr;
            self.sender
                .h
                .set(count, &slot.reply, h.msg_name, h.msg_namelen);
            count += 1;
        }
        let replies = batch.slots[..n]
            .iter()
            .filter(|s| s.send)
            .map(|s| (&s.reply[..], s.peer));
        self.sender.send_prepared(&self.out, count, replies).await;
    }

    /// Sends each reply to its address, as many per sendmmsg as the send headers hold.
    pub async fn send_replies(&mut self, replies: &[(Vec<u8>, SocketAddr)]) {
        self.out.count_deferred(SentBy::Mmsg, replies.len());
        self.sender.send(&self.out, replies).await;
    }

    /// Another instance on the same socket, with headers of its own for `most` replies at a
    /// time, for replies that arrive one by one (deferred queries) while the loop holds this
    /// one. It has no slots: it never receives.
    pub fn for_replies(&self, most: usize) -> Self {
        Mmsg::with(self.out.clone(), 0, most)
    }
}

/// The send headers of one [`Mmsg`]: for the replies of a batch (pointed at the addresses
/// the receive headers hold), or for replies with addresses of their own.
struct Sender {
    h: Headers,
}

impl Sender {
    /// Headers for batches of up to `size` replies.
    fn new(size: usize) -> Self {
        Sender {
            h: Headers::new(size),
        }
    }

    /// Sends each reply to its address, as many per sendmmsg as the headers hold; what the
    /// kernel cannot take now goes out through [`Out::now`], which waits for room.
    async fn send(&mut self, out: &Out, replies: &[(Vec<u8>, SocketAddr)]) {
        for chunk in replies.chunks(self.h.hdrs.len()) {
            for (i, (reply, to)) in chunk.iter().enumerate() {
                let name = self.h.addr(i);
                // SAFETY: i < the headers' length (a chunk is no longer); the only reference
                // to the address lives for this call, made from the pointer the header keeps.
                let len = from_socket_addr(to, unsafe { &mut *name });
                self.h.set(i, reply, name.cast(), len);
            }
            let each = chunk.iter().map(|(r, to)| (&r[..], *to));
            self.send_prepared(out, chunk.len(), each).await;
        }
    }

    /// Sends the `count` replies the headers were set up for, which `replies` yields again
    /// in the same order (for the ones the kernel cannot take now: glommio then waits for
    /// room).
    async fn send_prepared<'r>(
        &mut self,
        out: &Out,
        count: usize,
        replies: impl Iterator<Item = (&'r [u8], SocketAddr)> + Clone,
    ) {
        let mut done = 0;
        while done < count {
            // SAFETY: headers [done, count) point at reply bytes borrowed for 'r (alive for
            // the call) and at addresses that outlive it (in `self`, or the receive headers
            // of the caller's `Mmsg`); sendmmsg only reads them.
            let sent = unsafe {
                libc::sendmmsg(
                    out.socket().as_raw_fd(),
                    self.h.hdrs.as_mut_ptr().add(done),
                    (count - done) as libc::c_uint,
                    libc::MSG_DONTWAIT,
                )
            };
            if sent > 0 {
                done += sent as usize;
                continue;
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock => {
                    // The send buffer is full: glommio waits for room for the rest.
                    for (bytes, to) in replies.skip(done).take(count - done) {
                        out.now(bytes, to).await;
                    }
                    return;
                }
                _ => {
                    // This datagram cannot be sent as it is (too long for the interface, an
                    // unreachable address): it goes out cut, or is skipped and counted.
                    if let Some((bytes, to)) = replies.clone().nth(done) {
                        out.failed(&e, bytes, to);
                    }
                    done += 1;
                }
            }
        }
    }
}

/// Converts a kernel address to a std one; `None` for families we do not serve.
fn to_socket_addr(s: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match s.ss_family as libc::c_int {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let a = unsafe { &*(s as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            Some(SocketAddr::V4(SocketAddrV4::new(
                u32::from_be(a.sin_addr.s_addr).into(),
                u16::from_be(a.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6.
            let a = unsafe { &*(s as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            Some(SocketAddr::V6(SocketAddrV6::new(
                a.sin6_addr.s6_addr.into(),
                u16::from_be(a.sin6_port),
                a.sin6_flowinfo,
                a.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// Writes a std address into kernel form; returns its length.
fn from_socket_addr(addr: &SocketAddr, out: &mut libc::sockaddr_storage) -> libc::socklen_t {
    match addr {
        SocketAddr::V4(a) => {
            // SAFETY: sockaddr_storage is large and aligned enough for a sockaddr_in.
            let s =
                unsafe { &mut *(out as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            s.sin_family = libc::AF_INET as libc::sa_family_t;
            s.sin_port = a.port().to_be();
            s.sin_addr = libc::in_addr {
                s_addr: u32::from(*a.ip()).to_be(),
            };
            s.sin_zero = [0; 8];
            size_of::<libc::sockaddr_in>() as libc::socklen_t
        }
        SocketAddr::V6(a) => {
            // SAFETY: sockaddr_storage is large and aligned enough for a sockaddr_in6.
            let s =
                unsafe { &mut *(out as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            s.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            s.sin6_port = a.port().to_be();
            s.sin6_flowinfo = a.flowinfo();
            s.sin6_addr = libc::in6_addr {
                s6_addr: a.ip().octets(),
            };
            s.sin6_scope_id = a.scope_id();
            size_of::<libc::sockaddr_in6>() as libc::socklen_t
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::send::tests::big_reply;
    use super::*;
    use glommio::net::UdpSocket;
    use std::rc::Rc;
    use std::time::Duration;

    /// Each client whose slot has a reply gets it back, from the server's address; the one
    /// whose slot sends nothing gets nothing. Twice, the second time with the clients in the
    /// reverse order, so that the replies' headers no longer line up with the slots.
    fn round_trip(local: &str) {
        glommio::LocalExecutor::default().run(async {
            let Ok(sock) = UdpSocket::bind(local) else {
                eprintln!("no {local} here: skipped");
                return;
            };
            let sock = Rc::new(sock);
            let server = sock.local_addr().unwrap();
            let clients: Vec<_> = (0..3)
                .map(|_| std::net::UdpSocket::bind(local).unwrap())
                .collect();
            for c in &clients {
                c.set_read_timeout(Some(Duration::from_millis(300)))
                    .unwrap();
            }
            let mut mmsg = Mmsg::new(Out::new(sock, Default::default()), 8);
            for round in 0..2u8 {
                let order: Vec<usize> = if round == 0 {
                    vec![0, 1, 2]
                } else {
                    vec![2, 1, 0]
                };
                for &i in &order {
                    clients[i].send_to(&[round, i as u8], server).unwrap();
                }
                // Loopback has them queued by now: one receive takes all three.
                glommio::timer::sleep(Duration::from_millis(20)).await;
                let n = mmsg.recv().await.unwrap();
                assert_eq!(n, clients.len());
                mmsg.for_each(|packet, _, _, reply| {
                    let (r, i) = (packet[0], packet[1]);
                    *reply = vec![b'r', r, i];
                    // Client 1 is answered nothing (as for a dropped or deferred query).
                    i != 1
                });
                mmsg.send().await;
                for (i, c) in clients.iter().enumerate() {
                    let mut buf = [0u8; 8];
                    let got = c.recv_from(&mut buf);
                    if i == 1 {
                        assert!(got.is_err(), "round {round}: client 1 got {got:?}");
                        continue;
                    }
                    let (len, from) = got.unwrap();
                    assert_eq!(&buf[..len], &[b'r', round, i as u8], "round {round}");
                    assert_eq!(from, server);
                }
            }
        });
    }

    #[test]
    fn replies_go_back_to_each_sender_over_ipv4_and_ipv6() {
        round_trip("127.0.0.1:0");
        round_trip("[::1]:0");
    }

    /// A reply the kernel refuses as too long (EMSGSIZE; here over IPv4's 65 507-byte
    /// limit, as a reply over the MTU is with DF) goes out cut with TC, in its place: the
    /// replies before and after it in the same sendmmsg arrive whole.
    #[test]
    fn a_reply_too_long_to_send_goes_out_cut_and_the_others_whole() {
        glommio::LocalExecutor::default().run(async {
            let sock = Rc::new(UdpSocket::bind("127.0.0.1:0").unwrap());
            let server = sock.local_addr().unwrap();
            let clients: Vec<_> = (0..3)
                .map(|_| std::net::UdpSocket::bind("127.0.0.1:0").unwrap())
                .collect();
            for (i, c) in clients.iter().enumerate() {
                c.set_read_timeout(Some(Duration::from_millis(500)))
                    .unwrap();
                c.send_to(&[i as u8], server).unwrap();
            }
            glommio::timer::sleep(Duration::from_millis(20)).await;
            let mut mmsg = Mmsg::new(Out::new(sock, Default::default()), 8);
            let n = mmsg.recv().await.unwrap();
            assert_eq!(n, 3);
            let big = big_reply(4093);
            assert!(big.len() > 65_507);
            mmsg.for_each(|packet, _, _, reply| {
                *reply = if packet[0] == 1 {
                    big.clone()
                } else {
                    vec![b'r', packet[0]]
                };
                true
            });
            mmsg.send().await;
            let mut buf = vec![0u8; 65_536];
            for (i, c) in clients.iter().enumerate() {
                let (len, _) = c.recv_from(&mut buf).unwrap();
                if i != 1 {
                    assert_eq!(&buf[..len], &[b'r', i as u8]);
                    continue;
                }
                assert!(len <= 1232, "{len} bytes");
                assert_eq!(&buf[..2], &big[..2]);
                assert_ne!(buf[2] & 0x02, 0, "TC set");
                let answers = u16::from_be_bytes([buf[6], buf[7]]) as usize;
                assert_eq!(len, 29 + 16 * answers);
                assert_eq!(answers, (1232 - 29) / 16);
            }
        });
    }

    #[test]
    fn addresses_round_trip() {
        // SAFETY: all-zero is a valid sockaddr_storage.
        let mut st: libc::sockaddr_storage = unsafe { MaybeUninit::zeroed().assume_init() };
        for a in ["127.0.0.1:53", "[::1]:5353", "[fe80::1%2]:1"] {
            let addr: SocketAddr = a.parse().unwrap();
            from_socket_addr(&addr, &mut st);
            assert_eq!(to_socket_addr(&st), Some(addr));
        }
    }
}
