//! Opening the listening sockets with socket2: one SO_REUSEPORT UDP socket and one TCP
//! listener per listener and core, all bound on the main thread before any core starts, so a
//! bind error stops the process before anything serves.

use crate::config::Tuning;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::AsRawFd;

/// Sets an integer socket option.
fn set_int(sock: &Socket, level: libc::c_int, opt: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: setsockopt reads exactly size_of::<c_int>() bytes from a live c_int.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            opt,
            (&v as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sets a socket buffer size, forcing past `net.core.*mem_max` when allowed (root).
fn set_buf(sock: &Socket, size: usize, recv: bool) {
    if size == 0 {
        return;
    }
    let (force, plain) = if recv {
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF)
    } else {
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF)
    };
    let v = size.min(i32::MAX as usize) as libc::c_int;
    for opt in [force, plain] {
        if set_int(sock, libc::SOL_SOCKET, opt, v).is_ok() {
            return;
        }
    }
}

fn new_socket(addr: SocketAddr, ty: Type, proto: Protocol) -> io::Result<Socket> {
    let sock = Socket::new(Domain::for_address(addr), ty, Some(proto))?;
    sock.set_reuse_address(true)?;
    sock.set_reuse_port(true)?;
    if addr.is_ipv6() {
        // The IPv4 wildcard has its own socket: an IPv6 one would serve IPv4 clients through
        // mapped addresses, a slower path in the kernel.
        sock.set_only_v6(true)?;
    }
    sock.set_nonblocking(true)?;
    Ok(sock)
}

/// A bound UDP socket for `addr` with the tuning's buffer sizes. Replies leave with the
/// interface MTU as their limit and are never fragmented (`IP_PMTUDISC_PROBE`, IPv6's
/// `IPV6_PMTUDISC_PROBE`; RFC 9715): immune to forged "fragmentation needed" messages, and
/// over IPv4 cheaper to send, as the kernel gives unfragmentable (DF) packets IP ID 0
/// instead of hashing one per packet. A reply over the MTU is sent cut, with TC
/// (`udp::send`).
pub fn udp(addr: SocketAddr, t: &Tuning) -> io::Result<Socket> {
    let sock = new_socket(addr, Type::DGRAM, Protocol::UDP)?;
    set_buf(&sock, t.udp_rcvbuf, true);
    set_buf(&sock, t.udp_sndbuf, false);
    if addr.is_ipv4() {
        set_int(
            &sock,
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            libc::IP_PMTUDISC_PROBE,
        )?;
    } else {
        set_int(
            &sock,
            libc::IPPROTO_IPV6,
            libc::IPV6_MTU_DISCOVER,
            libc::IPV6_PMTUDISC_PROBE,
        )?;
    }
    sock.bind(&addr.into())?;
    Ok(sock)
}

/// A bound, listening TCP socket for `addr`; accepted connections inherit its buffer sizes.
pub fn tcp(addr: SocketAddr, t: &Tuning) -> io::Result<Socket> {
    let sock = new_socket(addr, Type::STREAM, Protocol::TCP)?;
    set_buf(&sock, t.tcp_rcvbuf, true);
    set_buf(&sock, t.tcp_sndbuf, false);
    sock.bind(&addr.into())?;
    sock.listen(1024)?;
    Ok(sock)
}

/// One pair of sockets (UDP and TCP) of a listener on one core.
pub struct ListenerSockets {
    /// The UDP socket.
    pub udp: Socket,
    /// The TCP listener.
    pub tcp: Socket,
}

/// The addresses a listener binds: itself, or for the wildcard both the IPv4 and the IPv6
/// wildcard (as Go's ":53" serves both).
fn bind_addrs(addr: SocketAddr) -> Vec<SocketAddr> {
    if addr.ip() == IpAddr::from([0u16; 8]) {
        vec![
            SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), addr.port()),
            addr,
        ]
    } else {
        vec![addr]
    }
}

/// The sockets of every listener by core: `[core]` lists (listener index, sockets) pairs.
pub type PerCore = Vec<Vec<(usize, ListenerSockets)>>;

/// Opens the sockets of every listener for `cores` cores: `sockets[core]` lists
/// (listener index, sockets) pairs, two for a wildcard listener (IPv4 and IPv6), one for the
/// IPv6 wildcard's half when the host has no IPv6. A listener gets one pair per core, or
/// with a count (`multisocket`) that many, given to the cores in turn. An error names the
/// listener's index and says `listen ADDR: why`.
pub fn open_all(
    addrs: &[(SocketAddr, Option<usize>)],
    cores: usize,
    t: &Tuning,
) -> Result<PerCore, (usize, String)> {
    let mut out: PerCore = (0..cores).map(|_| Vec::new()).collect();
    for (li, &(listener, count)) in addrs.iter().enumerate() {
        let wildcard = listener.ip().is_unspecified();
        for addr in bind_addrs(listener) {
            for n in 0..count.unwrap_or(cores) {
                let pair = udp(addr, t).and_then(|u| {
                    Ok(ListenerSockets {
                        udp: u,
                        tcp: tcp(addr, t)?,
                    })
                });
                match pair {
                    Ok(p) => out[n % cores].push((li, p)),
                    // No IPv6 on this host: the IPv4 wildcard alone serves.
                    Err(e)
                        if wildcard
                            && addr.is_ipv6()
                            && matches!(
                                e.raw_os_error(),
                                Some(libc::EAFNOSUPPORT | libc::EADDRNOTAVAIL)
                            ) => {}
                    Err(e) => return Err((li, format!("listen {addr}: {e}"))),
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get_int(sock: &Socket, level: libc::c_int, opt: libc::c_int) -> libc::c_int {
        let mut v: libc::c_int = -1;
        let mut len = size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most `len` bytes into a live c_int and updates len.
        let rc = unsafe {
            libc::getsockopt(
                sock.as_raw_fd(),
                level,
                opt,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        assert_eq!(rc, 0, "{}", io::Error::last_os_error());
        v
    }

    #[test]
    fn udp_listeners_never_fragment_their_replies() {
        let t = Tuning::default();
        let v4 = udp("127.0.0.1:0".parse().unwrap(), &t).unwrap();
        assert_eq!(
            get_int(&v4, libc::IPPROTO_IP, libc::IP_MTU_DISCOVER),
            libc::IP_PMTUDISC_PROBE
        );
        match udp("[::1]:0".parse().unwrap(), &t) {
            Ok(v6) => assert_eq!(
                get_int(&v6, libc::IPPROTO_IPV6, libc::IPV6_MTU_DISCOVER),
                libc::IPV6_PMTUDISC_PROBE
            ),
            Err(e) => eprintln!("no IPv6 loopback here ({e}): skipped"),
        }
    }
}
