//! The one way out for a UDP reply that cannot leave in a batch: sent alone now, through
//! glommio (which waits for room in the socket's buffer), or, when the kernel refused it,
//! dealt with here: cut down when it is too long for the path, else counted as lost.
//!
//! The listeners' UDP sockets never fragment (`IP_PMTUDISC_PROBE` and IPv6's, see
//! `sockets::udp`), as RFC 9715 recommends; over IPv4 that also spares the kernel the
//! per-packet IP ID hash it needs for fragmentable packets. A reply longer than the interface
//! MTU then fails with EMSGSIZE instead of leaving in fragments; it is sent again cut down,
//! with TC set, so the client retries over TCP, as it would after a truncation for its
//! advertised size.
//!
//! Every backend's sends end here when they fail, so the counting and the rate-limited log
//! lines are in one place.

use crate::wire;
use glommio::net::UdpSocket;
use socket2::{SockAddr, SockRef};
use std::cell::Cell;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::rc::Rc;

/// The sizes an oversized reply is cut to, tried in order: what fits any Ethernet path
/// (DNS Flag Day 2020's 1232), then the 512 every client accepts.
const CUT_SIZES: [usize; 2] = [1232, wire::MIN_UDP_SIZE];

thread_local! {
    static CUT: Cell<u64> = const { Cell::new(0) };
    static SEND_ERRORS: Cell<u64> = const { Cell::new(0) };
}

/// A listener's UDP socket as the way out for single datagrams; each backend of the
/// listener holds one (a clone: it is an `Rc`).
#[derive(Clone)]
pub struct Out {
    sock: Rc<UdpSocket>,
}

impl Out {
    /// The way out through `sock`.
    pub fn new(sock: Rc<UdpSocket>) -> Self {
        Out { sock }
    }

    /// The socket, for the backends' own calls on it.
    pub fn socket(&self) -> &Rc<UdpSocket> {
        &self.sock
    }

    /// Sends `reply` to `to` now, waiting for room in the socket's buffer; a refusal goes to
    /// [`Out::failed`].
    pub async fn now(&self, reply: &[u8], to: SocketAddr) {
        if let Err(e) = self.sock.send_to(reply, to).await {
            self.failed(&io::Error::from(e), reply, to);
        }
    }

    /// What follows a reply the kernel refused with `e`: one too long to send goes out again
    /// cut ([`Out::send_cut`]); any other failure is counted as a send error.
    pub fn failed(&self, e: &io::Error, reply: &[u8], to: SocketAddr) {
        if is_too_big(e) {
            self.send_cut(reply, to);
        } else {
            note_error(e);
        }
    }

    /// Sends `reply` to `to`, cut (whole records dropped from the end, the OPT kept, TC set)
    /// to the first of [`CUT_SIZES`] the kernel takes. Rare, so it may allocate; a reply that
    /// cannot be cut or sent is counted as a send error.
    fn send_cut(&self, reply: &[u8], to: SocketAddr) {
        // SAFETY: the fd is that of `self.sock`, which stays open while `self` holds it: for
        // all of this call, which the borrow does not outlive.
        let fd = unsafe { BorrowedFd::borrow_raw(self.sock.as_raw_fd()) };
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
        note_error(&last);
    }
}

/// Whether a send failed because the datagram is longer than the path allows.
fn is_too_big(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EMSGSIZE)
}

/// Counts a reply that could not be sent, and logs the first of each thousand.
fn note_error(e: &io::Error) {
    SEND_ERRORS.with(|c| {
        let n = c.get();
        c.set(n + 1);
        if n % 1000 == 0 {
            crate::error!("udp send failed ({} so far on this core): {e}", n + 1);
        }
    });
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
