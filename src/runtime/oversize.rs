//! Replies the network path cannot carry whole. The listeners' UDP sockets never fragment
//! (`IP_PMTUDISC_PROBE` and IPv6's, see `sockets::udp`), as RFC 9715 recommends; over IPv4
//! that also spares the kernel the per-packet IP ID hash it needs for fragmentable packets.
//! A reply longer than the interface MTU then fails with EMSGSIZE instead of leaving in
//! fragments; it is sent again cut down, with TC set, so the client retries over TCP, as it
//! would after a truncation for its advertised size.

use crate::wire;
use socket2::{SockAddr, SockRef};
use std::cell::Cell;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{BorrowedFd, RawFd};

/// The sizes an oversized reply is cut to, tried in order: what fits any Ethernet path
/// (DNS Flag Day 2020's 1232), then the 512 every client accepts.
const CUT_SIZES: [usize; 2] = [1232, wire::MIN_UDP_SIZE];

thread_local! {
    static CUT: Cell<u64> = const { Cell::new(0) };
}

/// Whether a send failed because the datagram is longer than the path allows.
fn is_too_big(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EMSGSIZE)
}

/// What follows a reply the kernel refused with `e`: one too long to send goes out again
/// cut ([`send_cut`]); any other failure is counted as a send error.
pub fn send_failed(fd: RawFd, e: &io::Error, reply: &[u8], to: SocketAddr) {
    if is_too_big(e) {
        send_cut(fd, reply, to);
    } else {
        super::udp::note_send_error(e);
    }
}

/// Sends `reply` to `to` on the socket `fd`, cut (whole records dropped from the end, the
/// OPT kept, TC set) to the first of [`CUT_SIZES`] the kernel takes. Rare, so it may
/// allocate; a reply that cannot be cut or sent is counted as a send error.
fn send_cut(fd: RawFd, reply: &[u8], to: SocketAddr) {
    // SAFETY: `fd` is the caller's open socket, alive for this call; the borrow ends with it.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let sock = SockRef::from(&fd);
    let addr = SockAddr::from(to);
    let mut cut = Vec::with_capacity(CUT_SIZES[0]);
    let mut last = io::Error::from_raw_os_error(libc::EMSGSIZE);
    for size in CUT_SIZES.into_iter().filter(|&s| s < reply.len()) {
        cut.clear();
        cut.extend_from_slice(reply);
        if !wire::fit(&mut cut, size) {
            break;
        }
        match sock.send_to_with_flags(&cut, &addr, libc::MSG_DONTWAIT) {
            Ok(_) => {
                note_cut(reply.len(), cut.len());
                return;
            }
            Err(e) if is_too_big(&e) => last = e,
            Err(e) => {
                last = e;
                break;
            }
        }
    }
    super::udp::note_send_error(&last);
}

/// Counts a reply sent cut, and logs the first of each thousand.
fn note_cut(from: usize, to: usize) {
    CUT.with(|c| {
        let n = c.get();
        c.set(n + 1);
        if n % 1000 == 0 {
            crate::warning!(
                "a {from}-byte UDP reply was too large to send (longer than the interface \
                 MTU allows): sent cut to {to} bytes with TC ({} so far on this core)",
                n + 1
            );
        }
    });
}
