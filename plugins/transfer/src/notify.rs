//! NOTIFY out (RFC 1996): when a zone of the block changes, and for every zone when the
//! configuration starts (at start-up and after a reload), its secondaries named in `to`
//! hear of it at once instead of at their next refresh. Sent from a thread of its own per
//! change (one for all the zones at start), never from a core: each address gets up to
//! three tries, two seconds each, as CoreDNS's `sendNotify`.

use crate::setup::To;
use ringdns_plugin::wire::{Name, QueryBuilder, rcode, rtype};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::time::Duration;

/// How long one try waits for the secondary's answer.
const TRY_TIMEOUT: Duration = Duration::from_secs(2);
/// Tries per address.
const TRIES: usize = 3;

/// The NOTIFY message for `origin` (wire form): opcode NOTIFY, AA, question `origin SOA IN`
/// (RFC 1996 §3.7), as miekg's `SetNotify` builds it.
pub fn message(origin: &[u8], id: u16) -> Option<Vec<u8>> {
    let name = Name::from_wire(origin).ok()?;
    let mut m = QueryBuilder::new(name, rtype::SOA).id(id).rd(false).build();
    let flags: u16 = (u16::from(ringdns_plugin::wire::opcode::NOTIFY) << 11) | 0x0400;
    m[2..4].copy_from_slice(&flags.to_be_bytes());
    Some(m)
}

/// One zone to notify: its origin (wire form), its name for logs, who hears of it and
/// from where.
pub struct Notice {
    pub origin: Vec<u8>,
    pub name: String,
    pub to: Vec<To>,
    pub source: Option<IpAddr>,
}

/// Sends each notice from a new thread, one after the other (as CoreDNS's file notifies
/// its zones at start), after `before` (which may wait); see [`send_all`].
pub fn spawn(before: impl FnOnce() -> Vec<Notice> + Send + 'static) {
    let spawned = std::thread::Builder::new()
        .name("transfer-notify".into())
        .spawn(move || {
            for n in before() {
                send_all(&n);
            }
        });
    if let Err(e) = spawned {
        ringdns_plugin::warning!("plugin/transfer: cannot start a thread to send notifies: {e}");
    }
}

/// Sends NOTIFY for one zone to every address of its `to` (not `*`), and logs the addresses
/// that did not accept it.
fn send_all(n: &Notice) {
    for t in &n.to {
        let To::Addr(t) = *t else { continue };
        if let Err(e) = send(&n.origin, t, n.source) {
            ringdns_plugin::warning!(
                "plugin/transfer: Failed sending notifies: notify for zone \"{}\" was not accepted by \"{t}\": {e}",
                n.name
            );
        }
    }
}

/// One address: up to [`TRIES`] tries, until it answers NOERROR.
fn send(origin: &[u8], to: SocketAddr, source: Option<IpAddr>) -> Result<(), String> {
    let local = match (source, to) {
        (Some(ip), _) => SocketAddr::new(ip, 0),
        (None, SocketAddr::V4(_)) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
        (None, SocketAddr::V6(_)) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
    };
    let sock = UdpSocket::bind(local).map_err(|e| format!("cannot bind {local}: {e}"))?;
    sock.set_read_timeout(Some(TRY_TIMEOUT))
        .map_err(|e| e.to_string())?;
    let mut last = String::from("no answer");
    let mut buf = [0u8; 4096];
    for _ in 0..TRIES {
        let id = fastrand::u16(..);
        let Some(m) = message(origin, id) else {
            return Err("bad zone name".into());
        };
        if let Err(e) = sock.send_to(&m, to) {
            last = e.to_string();
            continue;
        }
        loop {
            match sock.recv_from(&mut buf) {
                Ok((n, from)) if from == to && n >= 12 => {
                    let r = &buf[..n];
                    if u16::from_be_bytes([r[0], r[1]]) != id || r[2] & 0x80 == 0 {
                        continue; // not the answer to this try
                    }
                    let code = r[3] & 0x0f;
                    if code == rcode::NOERROR {
                        return Ok(());
                    }
                    let name = ringdns_plugin::wire::rcode_name(u16::from(code));
                    last = format!("rcode was \"{name}\"");
                    break;
                }
                Ok(_) => continue,
                Err(e) => {
                    last = e.to_string();
                    break;
                }
            }
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notify_names_the_zone_soa_with_opcode_notify_and_aa() {
        let origin = ringdns_plugin::wire::name_to_wire("example.org.").unwrap();
        let m = message(&origin, 0x1234).unwrap();
        let q = ringdns_plugin::wire::Query::parse(&m).unwrap();
        assert_eq!(q.id(), 0x1234);
        assert_eq!(q.opcode(), ringdns_plugin::wire::opcode::NOTIFY);
        assert_eq!(q.flags() & 0x0400, 0x0400, "AA");
        assert!(!q.rd());
        assert_eq!((q.qtype(), q.qclass()), (rtype::SOA, 1));
        assert_eq!(q.qname_bytes(), &origin[..]);
    }

    #[test]
    fn a_secondary_that_refuses_is_an_error_naming_the_rcode() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap();
        let t = std::thread::spawn(move || {
            let mut buf = [0u8; 512];
            for _ in 0..TRIES {
                let (n, from) = server.recv_from(&mut buf).unwrap();
                let mut r = buf[..n].to_vec();
                r[2] |= 0x80;
                r[3] = (r[3] & 0xf0) | rcode::REFUSED;
                server.send_to(&r, from).unwrap();
            }
        });
        let origin = ringdns_plugin::wire::name_to_wire("example.org.").unwrap();
        let e = send(&origin, addr, None).unwrap_err();
        assert_eq!(e, "rcode was \"REFUSED\"");
        t.join().unwrap();
    }
}
