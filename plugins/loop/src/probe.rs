//! The probe: `HINFO <qname>` sent to the block's own listener, as CoreDNS's
//! `OnStartup` in `plugin/loop/setup.go` does it, on a thread of its own: tried for up to
//! 30 s (an exchange that fails resets the count and is retried a second later); the first
//! reply of any kind, or the end of the 30 s, disables the detection.

use crate::Inner;
use ringdns_plugin::wire::{Name, QueryBuilder};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::Weak;
use std::time::{Duration, Instant};

/// How long the probe is tried.
pub const TRY_FOR: Duration = Duration::from_secs(30);
/// miekg's `dns.Exchange` read timeout.
const READ_TIMEOUT: Duration = Duration::from_secs(2);
/// The pause after an exchange that failed.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// The address CoreDNS probes, from the block's first listener as ringdns names it
/// (`dns://:1053`, `dns://127.0.0.1:1053`): `:1053` / `127.0.0.1:1053`, as CoreDNS's
/// `JoinHostPort(ListenHosts[0], Port)` writes it for the log line, and where to send.
pub fn target(server: &str) -> Option<(String, SocketAddr)> {
    let shown = server.split_once("://").map_or(server, |(_, rest)| rest);
    let (host, port) = shown.rsplit_once(':')?;
    let port: u16 = port.parse().ok()?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let ip: IpAddr = if host.is_empty() {
        // Go dials ":port" on the local system.
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        host.parse().ok()?
    };
    let ip = match ip {
        IpAddr::V4(a) if a.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(a) if a.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    Some((shown.to_string(), SocketAddr::new(ip, port)))
}

/// One `dns.Exchange` of the probe with `to`: any reply with the query's ID counts.
fn exchange(qname: &[u8], to: SocketAddr) -> std::io::Result<()> {
    let bind: SocketAddr = match to {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let sock = UdpSocket::bind(bind)?;
    sock.set_read_timeout(Some(READ_TIMEOUT))?;
    let id = crate::random_u16();
    let name = Name::from_wire(qname).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    let packet = QueryBuilder::new(name, ringdns_plugin::wire::rtype::HINFO)
        .id(id)
        .build();
    sock.send_to(&packet, to)?;
    let mut buf = [0u8; 512];
    let deadline = Instant::now() + READ_TIMEOUT;
    loop {
        let (n, from) = sock.recv_from(&mut buf)?;
        if from == to && n >= 12 && buf[..2] == id.to_be_bytes() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
    }
}

/// Runs the probe for the configuration `inner` belongs to; ends early when a reload has
/// dropped it.
pub fn run(inner: Weak<Inner>) {
    // Every core first, so that the probe meets this configuration and not the one before a
    // reload on a core that has not swapped yet; a core that never does is not waited for
    // past a second.
    let wait = Instant::now() + Duration::from_secs(1);
    while Instant::now() < wait {
        match inner.upgrade() {
            Some(l) if !l.all_started() => std::thread::sleep(Duration::from_millis(5)),
            Some(_) => break,
            None => return,
        }
    }
    let deadline = Instant::now() + TRY_FOR;
    while Instant::now() < deadline {
        let Some(l) = inner.upgrade() else { return };
        let Some((shown, to)) = l.target() else {
            ringdns_plugin::warning!("plugin/loop: no listener to send the probe to");
            break;
        };
        l.set_address(shown);
        let qname = l.qname_wire.clone();
        drop(l);
        if exchange(&qname, to).is_ok() {
            break;
        }
        let Some(l) = inner.upgrade() else { return };
        l.reset();
        drop(l);
        std::thread::sleep(RETRY_AFTER);
    }
    if let Some(l) = inner.upgrade() {
        l.disable();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_is_the_first_listener() {
        assert_eq!(
            target("dns://:1053"),
            Some((":1053".into(), "127.0.0.1:1053".parse().unwrap()))
        );
        assert_eq!(
            target("dns://127.0.0.2:53"),
            Some(("127.0.0.2:53".into(), "127.0.0.2:53".parse().unwrap()))
        );
        assert_eq!(
            target("dns://[::1]:53"),
            Some(("[::1]:53".into(), "[::1]:53".parse().unwrap()))
        );
        assert_eq!(
            target("dns://0.0.0.0:53").unwrap().1,
            "127.0.0.1:53".parse().unwrap()
        );
        assert_eq!(target("dns://nope"), None);
    }
}
