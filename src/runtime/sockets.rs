//! Opening the listening sockets with socket2: one SO_REUSEPORT UDP socket and one TCP
//! listener per listener and core, all bound on the main thread before any core starts, so a
//! bind error stops the process before anything serves.

use crate::config::Tuning;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::AsRawFd;

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
        // SAFETY: setsockopt reads exactly size_of::<c_int>() bytes from a live c_int.
        let rc = unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&v as *const libc::c_int).cast(),
                size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            return;
        }
    }
}

fn new_socket(addr: SocketAddr, ty: Type, proto: Protocol) -> io::Result<Socket> {
    let sock = Socket::new(Domain::for_address(addr), ty, Some(proto))?;
    sock.set_reuse_address(true)?;
    sock.set_reuse_port(true)?;
    if addr.is_ipv6() {
        // The wildcard serves IPv4 too (dual-stack), as Go's ":53" does.
        sock.set_only_v6(!addr.ip().is_unspecified())?;
    }
    sock.set_nonblocking(true)?;
    Ok(sock)
}

/// A bound UDP socket for `addr` with the tuning's buffer sizes.
pub fn udp(addr: SocketAddr, t: &Tuning) -> io::Result<Socket> {
    let sock = new_socket(addr, Type::DGRAM, Protocol::UDP)?;
    set_buf(&sock, t.udp_rcvbuf, true);
    set_buf(&sock, t.udp_sndbuf, false);
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

/// The IPv6 wildcard, or the IPv4 one when the host has no IPv6.
pub fn wildcard_fallback(addr: SocketAddr, err: &io::Error) -> Option<SocketAddr> {
    let v6_missing = matches!(
        err.raw_os_error(),
        Some(libc::EAFNOSUPPORT | libc::EADDRNOTAVAIL)
    );
    (addr.ip() == IpAddr::from([0u16; 8]) && v6_missing)
        .then(|| SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), addr.port()))
}

/// One listener's sockets for one core.
pub struct ListenerSockets {
    /// The UDP socket.
    pub udp: Socket,
    /// The TCP listener.
    pub tcp: Socket,
}

/// Opens the sockets of every listener for `cores` cores; `sockets[core][listener]`.
pub fn open_all(
    addrs: &[SocketAddr],
    cores: usize,
    t: &Tuning,
) -> Result<Vec<Vec<ListenerSockets>>, String> {
    let mut out: Vec<Vec<ListenerSockets>> = (0..cores).map(|_| Vec::new()).collect();
    for &addr0 in addrs {
        let mut addr = addr0;
        for core in out.iter_mut() {
            let pair = (|| -> io::Result<ListenerSockets> {
                Ok(ListenerSockets {
                    udp: udp(addr, t)?,
                    tcp: tcp(addr, t)?,
                })
            })();
            let pair = match pair {
                Ok(p) => p,
                Err(e) => match wildcard_fallback(addr, &e) {
                    Some(v4) => {
                        addr = v4;
                        ListenerSockets {
                            udp: udp(addr, t).map_err(|e| format!("listen udp {addr}: {e}"))?,
                            tcp: tcp(addr, t).map_err(|e| format!("listen tcp {addr}: {e}"))?,
                        }
                    }
                    None => return Err(format!("listen {addr}: {e}")),
                },
            };
            core.push(pair);
        }
    }
    Ok(out)
}
