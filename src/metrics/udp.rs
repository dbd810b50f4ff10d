//! ringdns's own UDP families, for tuning `udp_batch` and `udp_rcvbuf`: how many datagrams
//! each receive call of a listener took, and how many the kernel dropped on a listener's
//! sockets because their receive buffers were full (read from `/proc` at scrape time, so the
//! query path pays nothing for it). And for the send side: replies sent cut because they did
//! not fit the interface MTU, replies the kernel refused, and which backend sent the replies
//! of deferred queries. Those are counted only where a reply leaves the batched path (a cut,
//! an error, a deferred reply), never per inline reply.

use ringdns_metrics::registry::{Export, Source};
use ringdns_metrics::{Counter, Histogram};
use ringdns_metrics::{Desc, Kind, Sink};
use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Batch-size buckets: powers of two up to the largest `udp_batch`.
pub const BATCH_BUCKETS: &[f64] = &[
    1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0,
];

static BATCH: Desc = Desc {
    name: "ringdns_udp_batch_size",
    help: "Datagrams taken by one receive call (recvmmsg) on a UDP listener.",
    kind: Kind::Histogram,
    labels: &["server"],
};

static RECEIVE_CALLS: Desc = Desc {
    name: "ringdns_udp_receive_calls_total",
    help: "Receive calls on a UDP listener that returned datagrams, per core.",
    kind: Kind::Counter,
    labels: &["server", "core"],
};

static DROPS: Desc = Desc {
    name: "ringdns_udp_socket_drops_total",
    help: "Datagrams the kernel dropped on a UDP listener's sockets (full receive buffer), as /proc/net/udp counts them for the sockets open now.",
    kind: Kind::Counter,
    labels: &["server"],
};

/// One core's counters for one UDP listener. Registry labels: server.
#[derive(Debug)]
pub struct UdpCounters {
    batch: Histogram,
    calls: Counter,
}

impl Default for UdpCounters {
    fn default() -> Self {
        UdpCounters {
            batch: Histogram::sizes(BATCH_BUCKETS),
            calls: Counter::new(),
        }
    }
}

impl UdpCounters {
    /// Counts one receive call that took `n` datagrams. Only the owning core may call this.
    #[inline]
    pub fn received(&self, n: usize) {
        self.batch.observe_value(n as u64);
        self.calls.inc();
    }
}

impl Export for UdpCounters {
    fn export(&self, labels: &[String], core: usize, out: &mut Sink) {
        out.histogram(&BATCH, &[&labels[0]], &self.batch);
        out.counter(
            &RECEIVE_CALLS,
            &[&labels[0], &core.to_string()],
            self.calls.get(),
        );
    }
}

static CUT: Desc = Desc {
    name: "ringdns_udp_replies_cut_total",
    help: "UDP replies longer than the interface MTU allows (EMSGSIZE; the sockets never fragment), sent again cut to 1232 or 512 bytes with TC set.",
    kind: Kind::Counter,
    labels: &["server"],
};

static SEND_ERRORS: Desc = Desc {
    name: "ringdns_udp_send_errors_total",
    help: "UDP replies the kernel refused and that were not sent: reason too_big (EMSGSIZE even cut to 512 bytes, or not cuttable), unreachable (ENETUNREACH, EHOSTUNREACH, ENETDOWN, EHOSTDOWN, EADDRNOTAVAIL), denied (EPERM, EACCES: a firewall rule, a broadcast address), no_buffers (ENOBUFS, ENOMEM), other.",
    kind: Kind::Counter,
    labels: &["server", "reason"],
};

static DEFERRED: Desc = Desc {
    name: "ringdns_udp_deferred_replies_total",
    help: "Replies of deferred queries (those that waited, e.g. for an upstream) handed to a UDP listener's datagram backend to send, by the backend that sent them (udp_backend: mmsg or glommio).",
    kind: Kind::Counter,
    labels: &["server", "backend"],
};

/// Why the kernel refused a UDP reply, as the `reason` label of
/// `ringdns_udp_send_errors_total` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendError {
    /// Longer than the path allows, even cut (or not a message that can be cut).
    TooBig,
    /// No route to the client.
    Unreachable,
    /// Refused by policy: a firewall rule, a broadcast address.
    Denied,
    /// The kernel had no memory for it.
    NoBuffers,
    /// Anything else.
    Other,
}

impl SendError {
    /// Every reason, in the order of the counters.
    pub const ALL: [SendError; 5] = [
        SendError::TooBig,
        SendError::Unreachable,
        SendError::Denied,
        SendError::NoBuffers,
        SendError::Other,
    ];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            SendError::TooBig => "too_big",
            SendError::Unreachable => "unreachable",
            SendError::Denied => "denied",
            SendError::NoBuffers => "no_buffers",
            SendError::Other => "other",
        }
    }
}

/// The datagram backend that sent a reply, as the `backend` label names it (the values of
/// `udp_backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SentBy {
    /// recvmmsg/sendmmsg.
    Mmsg,
    /// glommio's UdpSocket.
    Glommio,
}

impl SentBy {
    /// Every backend, in the order of the counters.
    const ALL: [SentBy; 2] = [SentBy::Mmsg, SentBy::Glommio];

    /// The label value.
    fn label(self) -> &'static str {
        match self {
            SentBy::Mmsg => "mmsg",
            SentBy::Glommio => "glommio",
        }
    }
}

/// One core's send-side counters for one UDP listener. Registry labels: server.
#[derive(Debug, Default)]
pub struct UdpSendCounters {
    cut: Counter,
    errors: [Counter; SendError::ALL.len()],
    deferred: [Counter; SentBy::ALL.len()],
}

impl UdpSendCounters {
    /// Counts a reply sent cut; returns how many so far (for rate-limiting a log line).
    /// Only the owning core may call this.
    pub fn cut(&self) -> u64 {
        self.cut.inc();
        self.cut.get()
    }

    /// Counts a reply that was not sent; returns how many so far for `why`. Only the owning
    /// core may call this.
    pub fn error(&self, why: SendError) -> u64 {
        let c = &self.errors[why as usize];
        c.inc();
        c.get()
    }

    /// Counts `n` replies of deferred queries handed to backend `by`. Only the owning core
    /// may call this.
    #[inline]
    pub fn deferred(&self, by: SentBy, n: usize) {
        self.deferred[by as usize].add(n as u64);
    }
}

impl Export for UdpSendCounters {
    fn export(&self, labels: &[String], _core: usize, out: &mut Sink) {
        let server = &labels[0];
        out.counter(&CUT, &[server], self.cut.get());
        for why in SendError::ALL {
            out.counter(
                &SEND_ERRORS,
                &[server, why.label()],
                self.errors[why as usize].get(),
            );
        }
        // Only the backend in use (udp_backend is process-wide) has counted anything.
        for by in SentBy::ALL {
            out.counter_nonzero(
                &DEFERRED,
                &[server, by.label()],
                self.deferred[by as usize].get(),
            );
        }
    }
}

/// The UDP listeners whose kernel drop counts a scrape reports: (server name, bound address).
/// A wildcard address matches the IPv4 and the IPv6 wildcard sockets of its port.
pub struct SocketDrops {
    listeners: Vec<(String, SocketAddr)>,
}

impl SocketDrops {
    /// Drop counts for these listeners.
    pub fn new(listeners: Vec<(String, SocketAddr)>) -> Self {
        SocketDrops { listeners }
    }
}

impl Source for SocketDrops {
    fn collect(&self, out: &mut Sink) {
        let ours = own_socket_inodes();
        let mut rows = Vec::new();
        for table in ["/proc/self/net/udp", "/proc/self/net/udp6"] {
            if let Ok(text) = std::fs::read_to_string(table) {
                rows.extend(parse_udp_table(&text));
            }
        }
        for (name, addr) in &self.listeners {
            let drops: u64 = rows
                .iter()
                .filter(|r| ours.contains(&r.inode) && matches(*addr, r.local))
                .map(|r| r.drops)
                .sum();
            out.counter(&DROPS, &[name], drops);
        }
    }
}

/// Whether a socket bound to `local` serves the listener bound to `listener`.
fn matches(listener: SocketAddr, local: SocketAddr) -> bool {
    listener.port() == local.port()
        && (listener.ip() == local.ip()
            || (listener.ip().is_unspecified() && local.ip().is_unspecified()))
}

/// The inodes of this process's sockets (`/proc/self/fd/N -> socket:[INODE]`): the UDP
/// tables list every socket of the network namespace.
fn own_socket_inodes() -> HashSet<u64> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return HashSet::new();
    };
    dir.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|target| {
            let t = target.to_str()?;
            t.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
        })
        .collect()
}

/// One socket of `/proc/net/udp{,6}`.
#[derive(Debug, PartialEq, Eq)]
struct UdpRow {
    local: SocketAddr,
    inode: u64,
    drops: u64,
}

/// The rows of a `/proc/net/udp` or `/proc/net/udp6` table (header skipped, bad lines left
/// out): `sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ref
/// pointer drops`.
fn parse_udp_table(text: &str) -> Vec<UdpRow> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 13 {
                return None;
            }
            Some(UdpRow {
                local: parse_proc_addr(f[1])?,
                inode: f[9].parse().ok()?,
                drops: f[12].parse().ok()?,
            })
        })
        .collect()
}

/// `0100007F:0035` or a 32-digit IPv6 form: the address as the kernel's 32-bit words in host
/// byte order, each printed in hex, then the port in hex.
fn parse_proc_addr(s: &str) -> Option<SocketAddr> {
    let (ip, port) = s.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let w = u32::from_str_radix(ip.get(i * 8..i * 8 + 8)?, 16).ok()?;
        Some(w.to_ne_bytes())
    };
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut b = [0u8; 16];
            for i in 0..4 {
                b[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(b))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_counters_export_per_reason_and_backend() {
        let c = UdpSendCounters::default();
        assert_eq!(c.cut(), 1);
        assert_eq!(c.error(SendError::TooBig), 1);
        assert_eq!(c.error(SendError::TooBig), 2);
        c.deferred(SentBy::Glommio, 3);
        let mut out = Sink::default();
        c.export(&["dns://:53".into()], 0, &mut out);
        let int = |name, labels: &[&str]| out.get(name, labels).cloned();
        let n = super::super::Sample::Int;
        assert_eq!(int(CUT.name, &["dns://:53"]), Some(n(1)));
        assert_eq!(int(SEND_ERRORS.name, &["dns://:53", "too_big"]), Some(n(2)));
        assert_eq!(int(SEND_ERRORS.name, &["dns://:53", "other"]), Some(n(0)));
        assert_eq!(int(DEFERRED.name, &["dns://:53", "glommio"]), Some(n(3)));
        assert_eq!(int(DEFERRED.name, &["dns://:53", "mmsg"]), None);
    }

    #[test]
    fn proc_addresses_parse_in_host_order() {
        // Little-endian hosts (x86_64, aarch64) print 127.0.0.1 as 0100007F.
        if cfg!(target_endian = "little") {
            assert_eq!(
                parse_proc_addr("0100007F:0035"),
                Some("127.0.0.1:53".parse().unwrap())
            );
            assert_eq!(
                parse_proc_addr("00000000000000000000000001000000:14E9"),
                Some("[::1]:5353".parse().unwrap())
            );
        }
        assert_eq!(
            parse_proc_addr("00000000:1F90"),
            Some("0.0.0.0:8080".parse().unwrap())
        );
        assert_eq!(parse_proc_addr("nonsense"), None);
    }

    #[test]
    fn a_table_gives_address_inode_and_drops() {
        let text = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n\
            1234: 00000000:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 98765 2 0000000000000000 17\n\
            garbage\n";
        assert_eq!(
            parse_udp_table(text),
            vec![UdpRow {
                local: "0.0.0.0:53".parse().unwrap(),
                inode: 98765,
                drops: 17
            }]
        );
        let wild: SocketAddr = "0.0.0.0:53".parse().unwrap();
        assert!(matches(wild, "[::]:53".parse().unwrap()));
        assert!(!matches(wild, "127.0.0.1:53".parse().unwrap()));
        assert!(matches(
            "127.0.0.1:53".parse().unwrap(),
            "127.0.0.1:53".parse().unwrap()
        ));
    }

    #[test]
    fn this_process_sockets_are_found() {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = s.local_addr().unwrap();
        let ours = own_socket_inodes();
        let rows = parse_udp_table(&std::fs::read_to_string("/proc/self/net/udp").unwrap());
        assert!(
            rows.iter()
                .any(|r| r.local == addr && ours.contains(&r.inode)),
            "{addr} not among {rows:?}"
        );
    }
}
