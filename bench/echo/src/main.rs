//! Bare UDP DNS "echo" responder: the physical limit of this machine for a DNS server.
//!
//! One blocking socket on 127.0.0.1:PORT. Loop: `recvmmsg` up to BATCH datagrams, set the QR
//! bit in each (so a load generator counts it as an answer), `sendmmsg` each back to its
//! source. No parsing, no allocation on the hot path.
//!
//! Usage: `echo PORT [BATCH [df]]` (BATCH defaults to 32). With `df` the replies leave with
//! DF set (`IP_PMTUDISC_PROBE`), as ringdns's do: the kernel then skips the per-packet IP ID
//! hash, and the echo stays the limit for a server that does the same.

#![deny(clippy::undocumented_unsafe_blocks)]

use std::io;
use std::mem::{size_of, zeroed};
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::process::ExitCode;

/// Largest datagram we keep; anything longer is truncated (DNS over UDP queries are far smaller).
const BUF_SIZE: usize = 4096;
/// Receive buffer we ask for, so a descheduled responder does not drop the client's burst.
const RCVBUF: libc::c_int = 4 << 20;
const DEFAULT_BATCH: usize = 32;
const MAX_BATCH: usize = 1024;

fn usage() -> ExitCode {
    eprintln!("usage: echo PORT [BATCH [df]]   (BATCH 1..={MAX_BATCH}, default {DEFAULT_BATCH})");
    ExitCode::from(2)
}

fn set_int_opt(fd: libc::c_int, opt: libc::c_int, val: libc::c_int) -> io::Result<()> {
    set_opt(fd, libc::SOL_SOCKET, opt, val)
}

fn set_opt(
    fd: libc::c_int,
    level: libc::c_int,
    opt: libc::c_int,
    val: libc::c_int,
) -> io::Result<()> {
    // SAFETY: `fd` is an open socket owned by the caller; we pass a pointer to a live c_int
    // and its exact size, which is what integer socket options expect.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (&val as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Big buffers: SO_*BUFFORCE ignores net.core.{r,w}mem_max but needs CAP_NET_ADMIN (root).
fn grow_buffers(fd: libc::c_int) {
    for (force, plain, name) in [
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF, "SO_RCVBUF"),
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF, "SO_SNDBUF"),
    ] {
        if set_int_opt(fd, force, RCVBUF).is_err() {
            if let Err(e) = set_int_opt(fd, plain, RCVBUF) {
                eprintln!("echo: warning: {name}: {e}");
            }
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let port: u16 = match args.get(1).and_then(|s| s.parse().ok()) {
        Some(p) => p,
        None => return usage(),
    };
    let batch: usize = match args.get(2).map(|s| s.parse()) {
        None => DEFAULT_BATCH,
        Some(Ok(b)) if (1..=MAX_BATCH).contains(&b) => b,
        Some(_) => return usage(),
    };
    let df = match args.get(3).map(String::as_str) {
        None => false,
        Some("df") => true,
        Some(_) => return usage(),
    };

    let sock = match UdpSocket::bind(("127.0.0.1", port)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("echo: bind 127.0.0.1:{port}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let fd = sock.as_raw_fd();
    grow_buffers(fd);
    if df {
        if let Err(e) = set_opt(
            fd,
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            libc::IP_PMTUDISC_PROBE,
        ) {
            eprintln!("echo: IP_MTU_DISCOVER: {e}");
            return ExitCode::FAILURE;
        }
    }
    eprintln!(
        "echo: listening on 127.0.0.1:{port}, batch {batch}{}",
        if df { ", DF" } else { "" }
    );

    match serve(fd, batch) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("echo: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The hot loop. Never returns unless a syscall fails with something other than EINTR.
fn serve(fd: libc::c_int, batch: usize) -> io::Result<()> {
    // All buffers are allocated once and never resized, so the raw pointers stored in
    // `iovs` and `msgs` stay valid for the whole loop.
    let mut bufs = vec![[0u8; BUF_SIZE]; batch];
    // SAFETY: sockaddr_storage is plain old data; all-zero is a valid value.
    let mut addrs: Vec<libc::sockaddr_storage> = vec![unsafe { zeroed() }; batch];
    let mut iovs: Vec<libc::iovec> = bufs
        .iter_mut()
        .map(|b| libc::iovec {
            iov_base: b.as_mut_ptr().cast(),
            iov_len: BUF_SIZE,
        })
        .collect();
    // SAFETY: mmsghdr is plain old data (pointers + integers); all-zero is a valid value.
    let mut msgs: Vec<libc::mmsghdr> = vec![unsafe { zeroed() }; batch];
    for ((m, iov), addr) in msgs.iter_mut().zip(iovs.iter_mut()).zip(addrs.iter_mut()) {
        m.msg_hdr.msg_iov = iov;
        m.msg_hdr.msg_iovlen = 1;
        m.msg_hdr.msg_name = (addr as *mut libc::sockaddr_storage).cast();
    }

    loop {
        for (m, iov) in msgs.iter_mut().zip(iovs.iter_mut()) {
            iov.iov_len = BUF_SIZE;
            m.msg_hdr.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            m.msg_hdr.msg_flags = 0;
            m.msg_len = 0;
        }
        // SAFETY: `msgs` holds `batch` initialised mmsghdr whose name/iov pointers point into
        // `addrs`/`iovs`/`bufs`, all alive and unmoved for this call; lengths match the
        // buffers. A null timeout is allowed. MSG_WAITFORONE: block for the first datagram,
        // then take whatever else is already queued.
        let n = unsafe {
            libc::recvmmsg(
                fd,
                msgs.as_mut_ptr(),
                batch as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(io::Error::new(e.kind(), format!("recvmmsg: {e}")));
        }
        let n = n as usize;

        for ((m, iov), buf) in msgs
            .iter()
            .zip(iovs.iter_mut())
            .zip(bufs.iter_mut())
            .take(n)
        {
            let len = (m.msg_len as usize).min(BUF_SIZE);
            if len > 2 {
                buf[2] |= 0x80; // QR: this is a response
            }
            iov.iov_len = len;
        }

        // sendmmsg may send fewer than asked; resend the rest (bounded by n).
        let mut sent = 0;
        while sent < n {
            // SAFETY: msgs[sent..n] are initialised by the recvmmsg above: names hold the
            // sources with their lengths, iovecs point at the received bytes in `bufs`.
            let r = unsafe {
                libc::sendmmsg(
                    fd,
                    msgs.as_mut_ptr().add(sent),
                    (n - sent) as libc::c_uint,
                    0,
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // A reply that cannot be sent (e.g. ECONNREFUSED, ENOBUFS) is dropped, as a
                // real server would; skip that datagram and go on.
                sent += 1;
                continue;
            }
            sent += r as usize;
        }
    }
}
