//! CoreDNS's server families (`coredns_dns_*`, `plugin/metrics/vars`), counted per core for one
//! (server, zone) pair: by the `prometheus` plugin for the queries its block serves, and by
//! the runtime for the queries refused before any block (zone `dropped`).
//!
//! Every label that depends on the query (proto, family, type, rcode) is an index into a
//! fixed array created with the cell, so counting allocates nothing and takes no lock.

use super::registry::Export;
use super::{Counter, DURATION_BUCKETS, Desc, Histogram, Kind, SIZE_BUCKETS, Sink};
use std::time::Duration;

/// CoreDNS's `type` label: the common types by name (in its list), everything else `other`.
pub const TYPES: [(u16, &str); 18] = [
    (1, "A"),
    (28, "AAAA"),
    (15, "MX"),
    (6, "SOA"),
    (5, "CNAME"),
    (12, "PTR"),
    (16, "TXT"),
    (2, "NS"),
    (33, "SRV"),
    (43, "DS"),
    (48, "DNSKEY"),
    (46, "RRSIG"),
    (47, "NSEC"),
    (50, "NSEC3"),
    (65, "HTTPS"),
    (251, "IXFR"),
    (252, "AXFR"),
    (255, "ANY"),
];

/// Slots for the `type` label: the named types and `other`.
pub const TYPE_SLOTS: usize = TYPES.len() + 1;

/// The slot of a query type in [`TYPES`], or the `other` slot.
#[inline]
pub const fn type_index(qtype: u16) -> usize {
    match qtype {
        1 => 0,
        28 => 1,
        15 => 2,
        6 => 3,
        5 => 4,
        12 => 5,
        16 => 6,
        2 => 7,
        33 => 8,
        43 => 9,
        48 => 10,
        46 => 11,
        47 => 12,
        50 => 13,
        65 => 14,
        251 => 15,
        252 => 16,
        255 => 17,
        _ => TYPES.len(),
    }
}

fn type_name(slot: usize) -> &'static str {
    TYPES.get(slot).map_or("other", |t| t.1)
}

/// The `proto` label by index.
pub const PROTOS: [&str; 2] = ["udp", "tcp"];

/// The `family` label by index: 1 = IPv4 (also IPv4-mapped IPv6), 2 = IPv6.
pub const FAMILIES: [&str; 2] = ["1", "2"];

/// The index of a client address's family, as CoreDNS's `Family()`.
#[inline]
pub fn family_index(ip: std::net::IpAddr) -> usize {
    match ip {
        std::net::IpAddr::V4(_) => 0,
        std::net::IpAddr::V6(a) if a.to_ipv4_mapped().is_some() => 0,
        std::net::IpAddr::V6(_) => 1,
    }
}

/// Slots for the `rcode` label: 0..=23 by value (the last also takes anything above).
pub const RCODE_SLOTS: usize = 24;

/// The `rcode` label as CoreDNS's `rcode.ToString` prints it (miekg's names, else `RCODEn`).
pub fn rcode_label(rcode: usize) -> String {
    const NAMES: [&str; 24] = [
        "NOERROR",
        "FORMERR",
        "SERVFAIL",
        "NXDOMAIN",
        "NOTIMP",
        "REFUSED",
        "YXDOMAIN",
        "YXRRSET",
        "NXRRSET",
        "NOTAUTH",
        "NOTZONE",
        "DSOTYPENI",
        "",
        "",
        "",
        "",
        "BADSIG",
        "BADKEY",
        "BADTIME",
        "BADMODE",
        "BADNAME",
        "BADALG",
        "BADTRUNC",
        "BADCOOKIE",
    ];
    match NAMES.get(rcode) {
        Some(n) if !n.is_empty() => (*n).to_string(),
        _ => format!("RCODE{rcode}"),
    }
}

/// The slot of an rcode.
#[inline]
pub fn rcode_index(rcode: u8) -> usize {
    usize::from(rcode).min(RCODE_SLOTS - 1)
}

static REQUESTS: Desc = Desc {
    name: "coredns_dns_requests_total",
    help: "Counter of DNS requests made per zone, protocol and family.",
    kind: Kind::Counter,
    labels: &["server", "zone", "view", "proto", "family", "type"],
};
static DURATION: Desc = Desc {
    name: "coredns_dns_request_duration_seconds",
    help: "Histogram of the time (in seconds) each request took per zone.",
    kind: Kind::Histogram,
    labels: &["server", "zone", "view"],
};
static REQUEST_SIZE: Desc = Desc {
    name: "coredns_dns_request_size_bytes",
    help: "Size of the EDNS0 UDP buffer in bytes (64K for TCP) per zone and protocol.",
    kind: Kind::Histogram,
    labels: &["server", "zone", "view", "proto"],
};
static RESPONSE_SIZE: Desc = Desc {
    name: "coredns_dns_response_size_bytes",
    help: "Size of the returned response in bytes.",
    kind: Kind::Histogram,
    labels: &["server", "zone", "view", "proto"],
};
static DO_REQUESTS: Desc = Desc {
    name: "coredns_dns_do_requests_total",
    help: "Counter of DNS requests with DO bit set per zone.",
    kind: Kind::Counter,
    labels: &["server", "zone", "view"],
};
static RESPONSES: Desc = Desc {
    name: "coredns_dns_responses_total",
    help: "Counter of response status codes.",
    kind: Kind::Counter,
    labels: &["server", "zone", "view", "rcode", "plugin"],
};
static CORE_QUERIES: Desc = Desc {
    name: "ringdns_core_queries_total",
    help: "Queries counted in coredns_dns_requests_total, per core that served them.",
    kind: Kind::Counter,
    labels: &["core"],
};

/// What one query came to, as the counters need it.
#[derive(Debug, Clone, Copy)]
pub struct Observation {
    /// Index into [`PROTOS`].
    pub proto: usize,
    /// Index into [`FAMILIES`] (see [`family_index`]).
    pub family: usize,
    /// The query type.
    pub qtype: u16,
    /// The query had EDNS with DO set.
    pub do_bit: bool,
    /// The query's size in bytes.
    pub request_size: usize,
    /// The reply's size in bytes (0 when the server, not a plugin, wrote it, as in CoreDNS).
    pub response_size: usize,
    /// Time spent in the chain.
    pub duration: Duration,
}

/// One core's counters for one (server, zone): all `coredns_dns_*` families but
/// `responses_total` (see [`Responses`]). Registry labels: server, zone, view.
#[derive(Debug)]
pub struct DnsCounters {
    requests: [[[Counter; TYPE_SLOTS]; 2]; 2],
    do_requests: Counter,
    duration: Histogram,
    request_size: [Histogram; 2],
    response_size: [Histogram; 2],
}

impl Default for DnsCounters {
    fn default() -> Self {
        DnsCounters {
            requests: Default::default(),
            do_requests: Counter::new(),
            duration: Histogram::new(DURATION_BUCKETS),
            request_size: [
                Histogram::sizes(SIZE_BUCKETS),
                Histogram::sizes(SIZE_BUCKETS),
            ],
            response_size: [
                Histogram::sizes(SIZE_BUCKETS),
                Histogram::sizes(SIZE_BUCKETS),
            ],
        }
    }
}

impl DnsCounters {
    /// Counts one query. Only the owning core may call this.
    #[inline]
    pub fn record(&self, o: &Observation) {
        let p = o.proto & 1;
        self.requests[p][o.family & 1][type_index(o.qtype)].inc();
        if o.do_bit {
            self.do_requests.inc();
        }
        self.duration.observe(o.duration);
        self.request_size[p].observe_value(o.request_size as u64);
        self.response_size[p].observe_value(o.response_size as u64);
    }
}

impl Export for DnsCounters {
    fn export(&self, labels: &[String], core: usize, out: &mut Sink) {
        let (server, zone, view) = (labels[0].as_str(), labels[1].as_str(), labels[2].as_str());
        let mut total = 0;
        for (p, by_family) in self.requests.iter().enumerate() {
            for (f, by_type) in by_family.iter().enumerate() {
                for (t, c) in by_type.iter().enumerate() {
                    let v = c.get();
                    total += v;
                    out.counter_nonzero(
                        &REQUESTS,
                        &[server, zone, view, PROTOS[p], FAMILIES[f], type_name(t)],
                        v,
                    );
                }
            }
        }
        out.counter_nonzero(&DO_REQUESTS, &[server, zone, view], self.do_requests.get());
        out.histogram(&DURATION, &[server, zone, view], &self.duration);
        for (p, proto) in PROTOS.iter().enumerate() {
            out.histogram(
                &REQUEST_SIZE,
                &[server, zone, view, proto],
                &self.request_size[p],
            );
            out.histogram(
                &RESPONSE_SIZE,
                &[server, zone, view, proto],
                &self.response_size[p],
            );
        }
        out.counter(&CORE_QUERIES, &[&core.to_string()], total);
    }
}

/// One core's replies by rcode for one (server, zone, plugin that wrote the reply; empty
/// when the server wrote it): `coredns_dns_responses_total`. Registry labels: server, zone,
/// view, plugin.
#[derive(Debug, Default)]
pub struct Responses([Counter; RCODE_SLOTS]);

impl Responses {
    /// Counts one reply. Only the owning core may call this.
    #[inline]
    pub fn record(&self, rcode: u8) {
        self.0[rcode_index(rcode)].inc();
    }
}

impl Export for Responses {
    fn export(&self, labels: &[String], _core: usize, out: &mut Sink) {
        for (rc, c) in self.0.iter().enumerate() {
            let v = c.get();
            if v != 0 {
                let rcode = rcode_label(rc);
                out.counter(
                    &RESPONSES,
                    &[&labels[0], &labels[1], &labels[2], &rcode, &labels[3]],
                    v,
                );
            }
        }
    }
}

/// The zone label of queries refused before any block (CoreDNS's `vars.Dropped`).
pub const DROPPED: &str = "dropped";

/// A listener's counters for queries answered by the server itself before any block (no
/// zone, class not allowed, a block without plugins, a recovered panic).
#[derive(Debug, Clone)]
pub struct Dropped {
    dns: std::sync::Arc<DnsCounters>,
    responses: std::sync::Arc<Responses>,
}

impl Dropped {
    /// This core's counters for listener `server`.
    pub fn new(server: &str, core: usize) -> Self {
        Dropped {
            dns: super::registry::cell(&[server, DROPPED, ""], core),
            responses: super::registry::cell(&[server, DROPPED, "", ""], core),
        }
    }

    /// Counts one query the server answered with `rcode` in a reply of `response_size`.
    /// Only the owning core may call this.
    #[inline]
    pub fn record(&self, o: &Observation, rcode: u8) {
        self.dns.record(o);
        self.responses.record(rcode);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sample;

    #[test]
    fn type_slots_follow_the_table() {
        for (i, (t, _)) in TYPES.iter().enumerate() {
            assert_eq!(type_index(*t), i);
        }
        assert_eq!(type_name(type_index(99)), "other");
        assert_eq!(type_name(type_index(65)), "HTTPS");
    }

    #[test]
    fn families_and_rcodes_are_labelled_as_coredns() {
        assert_eq!(family_index("127.0.0.1".parse().unwrap()), 0);
        assert_eq!(family_index("::ffff:127.0.0.1".parse().unwrap()), 0);
        assert_eq!(family_index("::1".parse().unwrap()), 1);
        assert_eq!(rcode_label(3), "NXDOMAIN");
        assert_eq!(rcode_label(12), "RCODE12");
        assert_eq!(rcode_label(23), "BADCOOKIE");
    }

    #[test]
    fn an_observation_lands_in_every_family() {
        let c = DnsCounters::default();
        let o = Observation {
            proto: 1,
            family: 1,
            qtype: 28,
            do_bit: true,
            request_size: 40,
            response_size: 600,
            duration: Duration::from_micros(100),
        };
        c.record(&o);
        c.record(&Observation { qtype: 99, ..o });
        let mut s = Sink::default();
        c.export(&["dns://:53".into(), ".".into(), "".into()], 3, &mut s);
        let req = |t: &str| s.get(REQUESTS.name, &["dns://:53", ".", "", "tcp", "2", t]);
        assert_eq!(req("AAAA"), Some(&Sample::Int(1)));
        assert_eq!(req("other"), Some(&Sample::Int(1)));
        assert_eq!(req("A"), None, "zero series are not exported");
        assert_eq!(
            s.get(DO_REQUESTS.name, &["dns://:53", ".", ""]),
            Some(&Sample::Int(2))
        );
        let rsize = s
            .get(RESPONSE_SIZE.name, &["dns://:53", ".", "", "tcp"])
            .unwrap();
        assert_eq!(rsize.count(), 2.0);
        assert!(
            s.get(RESPONSE_SIZE.name, &["dns://:53", ".", "", "udp"])
                .is_none()
        );
        assert_eq!(
            s.get(CORE_QUERIES.name, &["3"]),
            Some(&Sample::Int(2)),
            "the per-core total"
        );
    }
}
