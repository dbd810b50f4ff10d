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
//! Every backend's sends end here when they fail, so the counting (the listener's
//! `ringdns_udp_replies_cut_total` and `ringdns_udp_send_errors_total`) and the rate-limited
//! log lines are in one place.

use crate::metrics::udp::{SendError, SentBy, UdpSendCounters};
use crate::wire;
use glommio::net::UdpSocket;
use socket2::{SockAddr, SockRef};
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::rc::Rc;
use std::sync::Arc;

/// The sizes an oversized reply is cut to, tried in order: what fits any Ethernet path
/// (DNS Flag Day 2020's 1232), then the 512 every client accepts.
const CUT_SIZES: [usize; 2] = [1232, wire::MIN_UDP_SIZE];

/// A listener's UDP socket as the way out for single datagrams, with the listener's
/// send-side counters on this core; each backend of the listener holds one (a clone: both
/// halves are shared).
#[derive(Clone)]
pub struct Out {
    sock: Rc<UdpSocket>,
    counters: Arc<UdpSendCounters>,
}

impl Out {
    /// The way out through `sock`, counting into `counters`.
    pub fn new(sock: Rc<UdpSocket>, counters: Arc<UdpSendCounters>) -> Self {
        Out { sock, counters }
    }

    /// The socket, for the backends' own calls on it.
    pub fn socket(&self) -> &Rc<UdpSocket> {
        &self.sock
    }

    /// Counts `n` replies of deferred queries that backend `by` is sending.
    #[inline]
    pub fn count_deferred(&self, by: SentBy, n: usize) {
        self.counters.deferred(by, n);
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
            self.note_error(e);
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
                    self.note_cut(reply.len(), cut.len());
                    return;
                }
                Err(e) if is_too_big(&e) => last = e,
                Err(e) => {
                    last = e;
                    break;
                }
            }
        }
        self.note_error(&last);
    }

    /// Counts a reply that could not be sent, and logs the first of each thousand of its
    /// reason on this listener and core.
    fn note_error(&self, e: &io::Error) {
        let why = reason(e);
        let n = self.counters.error(why);
        if n % 1000 == 1 {
            crate::error!(
                "udp send failed ({n} {} so far on this listener and core): {e}",
                why.label()
            );
        }
    }

    /// Counts a reply sent cut, and logs the first of each thousand on this listener and
    /// core.
    fn note_cut(&self, from: usize, to: usize) {
        let n = self.counters.cut();
        if n % 1000 == 1 {
            crate::warning!(
                "a {from}-byte UDP reply was too large to send (longer than the interface \
                 MTU allows): sent cut to {to} bytes with TC ({n} so far on this listener and \
                 core)"
            );
        }
    }
}

/// Whether a send failed because the datagram is longer than the path allows.
fn is_too_big(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EMSGSIZE)
}

/// The `reason` label of a refusal.
fn reason(e: &io::Error) -> SendError {
    match e.raw_os_error() {
        Some(libc::EMSGSIZE) => SendError::TooBig,
        Some(
            libc::ENETUNREACH
            | libc::EHOSTUNREACH
            | libc::ENETDOWN
            | libc::EHOSTDOWN
            | libc::EADDRNOTAVAIL,
        ) => SendError::Unreachable,
        Some(libc::EPERM | libc::EACCES) => SendError::Denied,
        Some(libc::ENOBUFS | libc::ENOMEM) => SendError::NoBuffers,
        _ => SendError::Other,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn refusals_are_counted_by_reason() {
        let of = |errno| reason(&io::Error::from_raw_os_error(errno));
        assert_eq!(of(libc::EMSGSIZE), SendError::TooBig);
        assert_eq!(of(libc::ENETUNREACH), SendError::Unreachable);
        assert_eq!(of(libc::EHOSTUNREACH), SendError::Unreachable);
        assert_eq!(of(libc::EPERM), SendError::Denied);
        assert_eq!(of(libc::EACCES), SendError::Denied);
        assert_eq!(of(libc::ENOBUFS), SendError::NoBuffers);
        assert_eq!(of(libc::EINVAL), SendError::Other);
        assert_eq!(reason(&io::Error::other("no errno")), SendError::Other);
    }

    /// A DNS reply of `records` A records for example.org (16 bytes each after 29).
    pub(in crate::runtime::udp) fn big_reply(records: u16) -> Vec<u8> {
        let mut r = vec![0, 7, 0x81, 0x80, 0, 1];
        r.extend_from_slice(&records.to_be_bytes());
        r.extend_from_slice(&[0, 0, 0, 0]);
        r.extend_from_slice(b"\x07example\x03org\x00\x00\x01\x00\x01");
        for i in 0..records {
            r.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 0]);
            r.extend_from_slice(&i.to_be_bytes());
        }
        r
    }

    /// Over IPv4 a datagram longer than 65 507 bytes is refused with EMSGSIZE, as a reply
    /// over the MTU is with DF: a DNS reply goes out cut and is counted as cut; bytes that
    /// are no DNS message cannot be cut and are counted as a `too_big` send error.
    #[test]
    fn cut_replies_and_replies_too_big_even_cut_are_counted() {
        glommio::LocalExecutor::default().run(async {
            let sock = Rc::new(UdpSocket::bind("127.0.0.1:0").unwrap());
            let counters = Arc::new(UdpSendCounters::default());
            let out = Out::new(sock, counters.clone());
            let client = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            client
                .set_read_timeout(Some(Duration::from_millis(500)))
                .unwrap();
            let to = client.local_addr().unwrap();

            out.now(&big_reply(4093), to).await;
            let mut buf = vec![0u8; 65_536];
            let (len, _) = client.recv_from(&mut buf).unwrap();
            assert!(
                len <= 1232 && buf[2] & 0x02 != 0,
                "{len} bytes, cut with TC"
            );

            out.now(&vec![0xff; 65_508], to).await;
            assert!(client.recv_from(&mut buf).is_err(), "nothing sent");

            let mut page = crate::metrics::Sink::default();
            crate::metrics::Export::export(&*counters, &["l".into()], 0, &mut page);
            let get = |name, labels: &[&str]| page.get(name, labels).cloned();
            let n = crate::metrics::Sample::Int;
            assert_eq!(get("ringdns_udp_replies_cut_total", &["l"]), Some(n(1)));
            let errors = |why| get("ringdns_udp_send_errors_total", &["l", why]);
            assert_eq!(errors("too_big"), Some(n(1)));
            assert_eq!(errors("other"), Some(n(0)));
        });
    }
}
