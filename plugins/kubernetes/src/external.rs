//! The names of the cluster's services outside it, for `k8s_external` (CoreDNS's
//! `plugin/kubernetes/external.go`): the kubernetes plugin registers itself as the block's
//! [`Externaler`], and answers k8s_external's lookups from the same table as its own
//! (`svc.ns.ZONE`, `endpoint.svc.ns.ZONE`, `_port._proto.svc.ns.ZONE`, PTR of external IPs)
//! into the core's scratch hits: nothing is allocated.
//!
//! What does not depend on the query is worked out once per change, with the table: the
//! reverse index of external IPs and the name server's addresses. So is the zone's serial
//! (CoreDNS's `Modified(ModifiedExternal)`): the builder compares what k8s_external can
//! answer ([`Views`]) with the previous table's, and keeps the previous serial unless that
//! changed; a change only the cluster zone sees (a ClusterIP service without external IPs,
//! a pod) leaves it.

use crate::Inner;
use crate::answer::is_reverse_name;
use crate::data::{ClusterData, Kind};
use crate::objects::{Port, Service};
use crate::setup::Options;
use crate::store::{Key, Store};
use ringdns_plugin::external::{ExternalHits, ExternalRequest, ExternalTarget, Externaler};
use ringdns_plugin::reverse::reverse_addr;
use ringdns_plugin::wire::rcode::{NOERROR, NXDOMAIN, SERVFAIL};
use ringdns_plugin::wire::rtype::PTR;
use ringdns_plugin::wire::{Name, name_to_wire};
use std::collections::HashMap;
use std::net::IpAddr;

/// One of a service's external entries: spec.externalIPs, then the load balancer's ingress
/// (IP, else hostname).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExternalAddr {
    /// An address.
    Ip(IpAddr),
    /// A hostname, lower-case wire with the root.
    Host(Box<[u8]>),
}

/// A service's external entries as the answers use them; one that is neither an address nor
/// a name (an ingress with neither) is left out.
pub fn external_addrs(s: &Service) -> Box<[ExternalAddr]> {
    s.external
        .iter()
        .filter_map(|e| match e.parse::<IpAddr>() {
            Ok(ip) => Some(ExternalAddr::Ip(ip)),
            Err(_) if e.is_empty() => None,
            Err(_) => {
                let mut n = e.to_ascii_lowercase();
                if !n.ends_with('.') {
                    n.push('.');
                }
                name_to_wire(&n)
                    .ok()
                    .map(|w| ExternalAddr::Host(w.into_boxed_slice()))
            }
        })
        .collect()
}

/// A service by name and namespace, lower case: a PTR target below k8s_external's zone.
pub type SvcName = (Box<str>, Box<str>);

/// A slice of a service without external entries, as [`Views`] compares it: its key,
/// whether the service is headless, the slice's ports, its ready endpoints and their names.
type SliceView = (Key, bool, Vec<Port>, Vec<(IpAddr, String)>);

/// What the table keeps for k8s_external beyond the services.
#[derive(Debug, Default)]
pub struct ExternalData {
    /// External IP → the services (name, namespace) that have it (CoreDNS's
    /// `SvcExtIndexReverse`, filtered by `namespaces` as `serviceRecordForExternalIP`).
    ptr: HashMap<IpAddr, Box<[SvcName]>, foldhash::fast::RandomState>,
    /// The name server's addresses (CoreDNS's `nsAddrs(true, headless, …)`): without and
    /// with `headless`.
    pub ns: [Box<[IpAddr]>; 2],
    /// The zone's SOA serial, without and with `headless` (the builder sets it).
    pub serial: [u32; 2],
}

impl ExternalData {
    /// The reverse index and the name server's addresses, from the store.
    pub fn build(store: &Store, o: &Options, local: &[IpAddr]) -> ExternalData {
        let mut d = ExternalData::default();
        let filter = !o.namespaces.is_empty();
        let mut ptr: HashMap<IpAddr, Vec<SvcName>> = HashMap::new();
        for s in store.services.values() {
            if filter
                && !(o.configured_namespace(&s.namespace)
                    && store.namespaces.contains(&s.namespace))
            {
                continue;
            }
            for e in &s.external {
                if let Ok(ip) = e.parse::<IpAddr>() {
                    let entry = (
                        s.name.to_ascii_lowercase().into_boxed_str(),
                        s.namespace.to_ascii_lowercase().into_boxed_str(),
                    );
                    let list = ptr.entry(ip).or_default();
                    if !list.contains(&entry) {
                        list.push(entry);
                    }
                }
            }
        }
        d.ptr
            .extend(ptr.into_iter().map(|(k, v)| (k, v.into_boxed_slice())));
        d.ns = [
            ns_addrs(store, local, false).into_boxed_slice(),
            ns_addrs(store, local, true).into_boxed_slice(),
        ];
        d
    }

    /// The services with external IP `ip`.
    pub fn ptr(&self, ip: IpAddr) -> &[SvcName] {
        self.ptr.get(&ip).map_or(&[], |v| v)
    }

    /// Whether an external IP's reverse name is below `name` (which makes `name` an empty
    /// non-terminal). A walk over the external IPs, for the uncommon query of a partial
    /// reverse name; it allocates nothing.
    pub fn covers(&self, name: &Name<'_>) -> bool {
        let mut buf = [0u8; 80];
        self.ptr.keys().any(|ip| {
            Name::from_wire(reverse_name(*ip, &mut buf)).is_ok_and(|r| {
                r.label_count() > name.label_count() && r.is_subdomain_of(name.as_wire())
            })
        })
    }
}

/// CoreDNS's `nsAddrs` with `external`: for the services whose endpoints hold one of the
/// server's addresses, their external IPs (with `headless`, a headless service's endpoint
/// addresses instead); the server's own addresses when no endpoint holds one. A hostname
/// ingress has no address and is left out.
fn ns_addrs(store: &Store, local: &[IpAddr], headless: bool) -> Vec<IpAddr> {
    let Some(own) = store.own_slices(local) else {
        return local.to_vec();
    };
    let mut out = Vec::new();
    for (slice, svc) in own {
        if headless && svc.headless() {
            out.extend(slice.addresses.iter().map(|a| a.ip));
        } else {
            out.extend(svc.external.iter().filter_map(|e| e.parse::<IpAddr>().ok()));
        }
    }
    out
}

/// What k8s_external can answer, without `headless`: the namespaces it answers in, the
/// services with external entries and their ports, the name server's addresses.
#[derive(Debug, Default, PartialEq, Eq)]
struct PlainView {
    namespaces: Vec<String>,
    services: Vec<(Key, Vec<String>, Vec<Port>)>,
    ns: Vec<IpAddr>,
}

/// What `headless` adds: the slices of the services without external entries (whether
/// the service is headless, the slice's ports, its ready endpoints with their names). A
/// service without a slice answers nothing either way.
#[derive(Debug, Default, PartialEq, Eq)]
struct HeadlessView {
    slices: Vec<SliceView>,
    ns: Vec<IpAddr>,
}

/// The part of the cluster k8s_external's answers depend on, compared from one table to
/// the next to decide whether its serial moves.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Views {
    plain: PlainView,
    headless: HeadlessView,
}

impl Views {
    /// The views of the store (`ext` is the table's external part, built from it).
    pub fn of(store: &Store, o: &Options, ext: &ExternalData) -> Views {
        let configured = |ns: &str| o.configured_namespace(ns);
        let mut v = Views::default();
        v.plain.namespaces = store
            .namespaces
            .iter()
            .filter(|n| configured(n))
            .cloned()
            .collect();
        for (key, s) in &store.services {
            if configured(&s.namespace) && !s.external.is_empty() {
                v.plain
                    .services
                    .push((key.clone(), s.external.clone(), s.ports.clone()));
            }
        }
        for s in store.slices.values() {
            let Some(svc) = store.service_of(s) else {
                continue;
            };
            if !svc.external.is_empty() || !configured(&s.namespace) {
                continue;
            }
            let key = (s.namespace.clone(), s.service.clone());
            let addrs = s
                .addresses
                .iter()
                .map(|a| (a.ip, a.label(o.endpoint_pod_names)))
                .collect();
            v.headless
                .slices
                .push((key, svc.headless(), s.ports.clone(), addrs));
        }
        v.plain.ns = ext.ns[0].to_vec();
        v.headless.ns = ext.ns[1].to_vec();
        v
    }

    /// The serials (without and with `headless`) after `prev`, whose serials were
    /// `serial`: each moves to `now` when what it covers changed, or was never set.
    pub fn serials(&self, prev: Option<&Views>, serial: [u32; 2], now: u32) -> [u32; 2] {
        let plain = prev.is_none_or(|p| p.plain != self.plain);
        let headless = plain || prev.is_none_or(|p| p.headless != self.headless);
        [
            if plain || serial[0] == 0 {
                now
            } else {
                serial[0]
            },
            if headless || serial[1] == 0 {
                now
            } else {
                serial[1]
            },
        ]
    }
}

/// The reverse name of `ip` (`4.3.2.1.in-addr.arpa.`, nibbles under `ip6.arpa.`), wire, in
/// `buf`.
fn reverse_name(ip: IpAddr, buf: &mut [u8; 80]) -> &[u8] {
    let mut n = 0;
    let mut put = |b: &[u8]| {
        buf[n..n + b.len()].copy_from_slice(b);
        n += b.len();
    };
    match ip {
        IpAddr::V4(v4) => {
            for o in v4.octets().iter().rev() {
                let mut digits = [0u8; 3];
                let mut len = 0;
                let mut v = *o;
                loop {
                    digits[len] = b'0' + v % 10;
                    len += 1;
                    v /= 10;
                    if v == 0 {
                        break;
                    }
                }
                digits[..len].reverse();
                put(&[len as u8]);
                put(&digits[..len]);
            }
            put(b"\x07in-addr\x04arpa\x00");
        }
        IpAddr::V6(v6) => {
            for b in v6.octets().iter().rev() {
                for nibble in [b & 0xf, b >> 4] {
                    put(&[1, b"0123456789abcdef"[usize::from(nibble)]]);
                }
            }
            put(b"\x03ip6\x04arpa\x00");
        }
    }
    &buf[..n]
}

/// `_x` → `x` (CoreDNS's `stripUnderscore`).
fn strip_underscore(l: &[u8]) -> &[u8] {
    l.strip_prefix(b"_").unwrap_or(l)
}

/// CoreDNS's `External`: the hits of one lookup, into `hits`; the rcode.
pub fn lookup(
    o: &Options,
    data: &ClusterData,
    req: &ExternalRequest<'_, '_>,
    hits: &mut ExternalHits,
) -> u8 {
    hits.clear();
    let qname = req.qname;
    if is_reverse_name(qname) {
        if let Some(ip) = reverse_addr(qname) {
            let names = data.external.ptr(ip);
            if req.qtype == PTR {
                for (name, ns) in names {
                    hits.push(
                        ExternalTarget::Ip(ip),
                        0,
                        o.ttl,
                        &[name.as_bytes(), ns.as_bytes()],
                    );
                }
                return if hits.is_empty() { NXDOMAIN } else { NOERROR };
            }
            if !names.is_empty() {
                // The name has PTR records: NODATA for another type (CoreDNS reads it as a
                // service's name, which is NXDOMAIN).
                return NOERROR;
            }
        } else if data.external.covers(qname) {
            // An empty non-terminal above an external IP's name: NODATA (RFC 8020).
            return NOERROR;
        }
    }
    let base = qname.label_count().saturating_sub(req.zone_labels);
    if base == 0 {
        return SERVFAIL;
    }
    // The labels below the zone that matter: the first two, and the namespace's.
    let (mut first, mut second, mut namespace, mut service) = (&[][..], &[][..], &[][..], &[][..]);
    for (i, l) in qname.labels().take(base).enumerate() {
        match i {
            0 => first = l,
            1 => second = l,
            _ => {}
        }
        if i + 2 == base {
            service = l;
        }
        if i + 1 == base {
            namespace = l;
        }
    }
    let exposed = std::str::from_utf8(namespace).is_ok_and(|n| {
        o.namespaces.is_empty() || o.namespaces.iter().any(|c| c.eq_ignore_ascii_case(n))
    }) && data.namespace_exists(namespace);
    if !exposed {
        return NXDOMAIN;
    }
    let (endpoint, port, protocol) = match base {
        1 => return NOERROR,
        2 => (&[][..], &[][..], &[][..]),
        3 => (strip_underscore(first), &[][..], &[][..]),
        4 => (&[][..], strip_underscore(first), strip_underscore(second)),
        _ => return NXDOMAIN,
    };
    let Some(svc) = data.service(service, namespace) else {
        return NXDOMAIN;
    };
    let mut rcode = NXDOMAIN;
    let (name, ns) = (svc.name.as_bytes(), svc.ns.as_bytes());
    if req.headless
        && !svc.has_external
        && (matches!(svc.kind, Kind::Headless) || !endpoint.is_empty())
    {
        for g in svc.groups.iter() {
            for a in g.addrs.iter() {
                if !endpoint.is_empty() && !a.label.as_bytes().eq_ignore_ascii_case(endpoint) {
                    continue;
                }
                for p in g.ports.iter().filter(|p| p.matches(port, protocol)) {
                    rcode = NOERROR;
                    hits.push(
                        ExternalTarget::Ip(a.ip),
                        p.port,
                        o.ttl,
                        &[a.label.as_bytes(), name, ns],
                    );
                }
            }
        }
        // `_proto.svc` of a headless service is an empty non-terminal when a named port of
        // that protocol has endpoints (its `_port._proto.svc` exists): NODATA (RFC 8020).
        let ent = base == 3
            && matches!(svc.kind, Kind::Headless)
            && svc.groups.iter().any(|g| {
                !g.addrs.is_empty()
                    && g.ports.iter().any(|p| {
                        !p.name.is_empty() && p.protocol.as_bytes().eq_ignore_ascii_case(endpoint)
                    })
            });
        if rcode == NXDOMAIN && ent {
            rcode = NOERROR;
        }
    } else {
        for e in svc.external.iter() {
            for p in svc.ports.iter().filter(|p| p.matches(port, protocol)) {
                rcode = NOERROR;
                let target = match e {
                    ExternalAddr::Ip(ip) => ExternalTarget::Ip(*ip),
                    ExternalAddr::Host(h) => ExternalTarget::Host(h),
                };
                hits.push(target, p.port, o.ttl, &[name, ns]);
            }
        }
        // With `headless`, a service without external entries whose endpoints are named
        // below it is an empty non-terminal: NODATA (RFC 8020).
        let ent = base == 2
            && req.headless
            && !svc.has_external
            && svc.groups.iter().any(|g| !g.addrs.is_empty());
        if rcode == NXDOMAIN && ent {
            rcode = NOERROR;
        }
    }
    if req.qtype == PTR {
        // A PTR query of a name that is no reverse name: the name's rcode, no record.
        hits.clear();
    }
    rcode
}

impl Externaler for Inner {
    fn external(&self, req: &ExternalRequest<'_, '_>, hits: &mut ExternalHits) -> u8 {
        let data = self.data.load();
        lookup(&self.options, &data, req, hits)
    }

    fn external_address(&self, headless: bool, out: &mut Vec<IpAddr>) {
        out.clear();
        out.extend_from_slice(&self.data.load().external.ns[usize::from(headless)]);
    }

    fn external_serial(&self, headless: bool) -> u32 {
        self.data.load().external.serial[usize::from(headless)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Change, Kind as StoreKind};
    use crate::tests::options;
    use ringdns_plugin::wire::rtype::{A, SRV};

    /// A service as the API sends it: `cluster` is its clusterIP (`None`: headless),
    /// `external` its spec.externalIPs, `ingress` its load balancer's (IP or hostname).
    fn svc(ns: &str, name: &str, cluster: &str, external: &[&str], ingress: &[&str]) -> String {
        let ingress: Vec<String> = ingress
            .iter()
            .map(|i| match i.parse::<IpAddr>() {
                Ok(_) => format!(r#"{{"ip":"{i}"}}"#),
                Err(_) => format!(r#"{{"hostname":"{i}"}}"#),
            })
            .collect();
        format!(
            r#"{{"metadata":{{"name":"{name}","namespace":"{ns}"}},"spec":{{"type":"ClusterIP","clusterIP":"{cluster}","clusterIPs":["{cluster}"],"externalIPs":{},"ports":[{{"name":"http","protocol":"TCP","port":80}}]}},"status":{{"loadBalancer":{{"ingress":[{}]}}}}}}"#,
            serde_json::to_string(external).unwrap(),
            ingress.join(",")
        )
    }

    /// An EndpointSlice of `service` with ready endpoints (address, hostname).
    fn slice(ns: &str, name: &str, service: &str, eps: &[(&str, &str)]) -> String {
        let eps: Vec<String> = eps
            .iter()
            .map(|(ip, h)| {
                format!(
                    r#"{{"addresses":["{ip}"],"hostname":"{h}","conditions":{{"ready":true}}}}"#
                )
            })
            .collect();
        format!(
            r#"{{"metadata":{{"name":"{name}","namespace":"{ns}","labels":{{"kubernetes.io/service-name":"{service}"}}}},"addressType":"IPv4","endpoints":[{}],"ports":[{{"name":"http","protocol":"TCP","port":80}}]}}"#,
            eps.join(",")
        )
    }

    fn namespace(name: &str) -> String {
        format!(r#"{{"metadata":{{"name":"{name}"}}}}"#)
    }

    /// The objects of CoreDNS's external_test.go (its svc11's external IP as a load
    /// balancer's, svc12's hostname likewise), a service of another namespace sharing
    /// svc1's address, and the server's own service.
    fn store() -> Store {
        let mut s = Store::default();
        let services = [
            svc("testns", "svc1", "10.0.0.1", &["1.2.3.4"], &[]),
            svc("testns", "svc6", "10.0.0.3", &["1:2::5"], &[]),
            svc("testns", "svc11", "10.0.0.3", &[], &["2.3.4.5"]),
            svc("testns", "svc12", "10.0.0.3", &[], &["dummy.hostname"]),
            svc("testns", "svc-headless", "None", &[], &[]),
            svc("testns", "internal", "10.0.0.9", &[], &[]),
            svc("other", "svc1", "10.0.1.1", &["1.2.3.4"], &[]),
            svc("kube-system", "dns", "10.0.0.10", &["203.0.113.53"], &[]),
            svc("kube-system", "dns-hdls", "None", &[], &[]),
        ];
        let slices = [
            slice(
                "testns",
                "svc-headless-1",
                "svc-headless",
                &[("1.2.3.4", "endpoint-svc-0"), ("1.2.3.5", "endpoint-svc-1")],
            ),
            slice("testns", "internal-1", "internal", &[("10.1.0.1", "ep")]),
            slice("kube-system", "dns-1", "dns", &[("172.0.0.100", "")]),
            slice(
                "kube-system",
                "dns-hdls-1",
                "dns-hdls",
                &[("172.0.0.101", "ns-a"), ("172.0.0.102", "ns-b")],
            ),
        ];
        let namespaces = ["testns", "other", "kube-system"].map(namespace);
        for (kind, items) in [
            (StoreKind::Services, &services[..]),
            (StoreKind::Slices, &slices[..]),
            (StoreKind::Namespaces, &namespaces[..]),
        ] {
            let refs: Vec<&str> = items.iter().map(String::as_str).collect();
            s.apply(kind, Change::Replace(&refs)).unwrap();
        }
        s
    }

    fn table(o: &Options, store: &Store, local: &[IpAddr]) -> ClusterData {
        ClusterData::build(store, o, local, 1, true)
    }

    /// One lookup of `name` (under the two-label zone example.org.): the rcode and the
    /// hits as `TARGET PORT KEY` lines.
    fn ext(
        data: &ClusterData,
        o: &Options,
        name: &str,
        qtype: u16,
        headless: bool,
    ) -> (u8, Vec<String>) {
        let w = ringdns_testkit::wire_name(name);
        let qname = Name::from_wire(&w).unwrap();
        // example.org. and in-addr.arpa. both have two labels.
        let req = ExternalRequest {
            qname: &qname,
            zone_labels: 2,
            qtype,
            headless,
        };
        let mut hits = ExternalHits::default();
        let rcode = lookup(o, data, &req, &mut hits);
        let lines = hits
            .iter()
            .map(|h| {
                let target = match h.target {
                    ExternalTarget::Ip(ip) => ip.to_string(),
                    ExternalTarget::Host(w) => Name::from_wire(w).unwrap().to_string(),
                };
                let mut key = h.key.to_vec();
                key.push(0);
                format!("{target} {} {}", h.port, Name::from_wire(&key).unwrap())
            })
            .collect();
        (rcode, lines)
    }

    /// CoreDNS's kubernetes external_test.go (`namespaces testns`, headless), and what the
    /// rest of `External` does: unexposed namespaces, a namespace alone, too many labels,
    /// an endpoint name of a service with external IPs, load-balancer ingress, PTR.
    #[test]
    fn external_finds_what_coredns_finds() {
        let o = options("kubernetes {\n namespaces testns\n}");
        let d = table(&o, &store(), &[]);
        let cases: &[(&str, u16, bool, u8, &[&str])] = &[
            (
                "svc1.testns.example.org.",
                A,
                true,
                NOERROR,
                &["1.2.3.4 80 svc1.testns."],
            ),
            (
                "svc6.testns.example.org.",
                A,
                true,
                NOERROR,
                &["1:2::5 80 svc6.testns."],
            ),
            (
                "_http._tcp.svc1.testns.example.org.",
                A,
                true,
                NOERROR,
                &["1.2.3.4 80 svc1.testns."],
            ),
            (
                "http.tcp.svc1.testns.example.org.",
                A,
                true,
                NOERROR,
                &["1.2.3.4 80 svc1.testns."],
            ),
            (
                "_http._udp.svc1.testns.example.org.",
                A,
                true,
                NXDOMAIN,
                &[],
            ),
            ("svc0.testns.example.org.", A, true, NXDOMAIN, &[]),
            ("svc0.svc-nons.example.org.", A, true, NXDOMAIN, &[]),
            (
                "svc-headless.testns.example.org.",
                A,
                true,
                NOERROR,
                &[
                    "1.2.3.4 80 endpoint-svc-0.svc-headless.testns.",
                    "1.2.3.5 80 endpoint-svc-1.svc-headless.testns.",
                ],
            ),
            (
                "endpoint-svc-0.svc-headless.testns.example.org.",
                A,
                true,
                NOERROR,
                &["1.2.3.4 80 endpoint-svc-0.svc-headless.testns."],
            ),
            (
                "endpoint-1.svc-nons.testns.example.org.",
                A,
                true,
                NXDOMAIN,
                &[],
            ),
            // Without `headless`, a headless service without external IPs is nothing.
            ("svc-headless.testns.example.org.", A, false, NXDOMAIN, &[]),
            // With it, an endpoint name of a ClusterIP service without external IPs too.
            (
                "ep.internal.testns.example.org.",
                A,
                true,
                NOERROR,
                &["10.1.0.1 80 ep.internal.testns."],
            ),
            ("ep.internal.testns.example.org.", A, false, NXDOMAIN, &[]),
            // RFC 8020: with `headless`, the name above endpoint names exists (CoreDNS:
            // NXDOMAIN), as does `_tcp` above a headless service's `_http._tcp`.
            ("internal.testns.example.org.", A, true, NOERROR, &[]),
            ("internal.testns.example.org.", A, false, NXDOMAIN, &[]),
            ("tcp.internal.testns.example.org.", A, true, NXDOMAIN, &[]),
            (
                "_tcp.svc-headless.testns.example.org.",
                SRV,
                true,
                NOERROR,
                &[],
            ),
            (
                "_udp.svc-headless.testns.example.org.",
                SRV,
                true,
                NXDOMAIN,
                &[],
            ),
            (
                "_tcp.svc-headless.testns.example.org.",
                SRV,
                false,
                NXDOMAIN,
                &[],
            ),
            // An endpoint name of a service with external IPs is the service (CoreDNS).
            (
                "any.svc1.testns.example.org.",
                A,
                true,
                NOERROR,
                &["1.2.3.4 80 svc1.testns."],
            ),
            ("testns.example.org.", A, true, NOERROR, &[]),
            ("a.b.c.svc1.testns.example.org.", A, true, NXDOMAIN, &[]),
            ("svc1.other.example.org.", A, true, NXDOMAIN, &[]),
            (
                "svc11.testns.example.org.",
                A,
                true,
                NOERROR,
                &["2.3.4.5 80 svc11.testns."],
            ),
            (
                "svc12.testns.example.org.",
                A,
                true,
                NOERROR,
                &["dummy.hostname. 80 svc12.testns."],
            ),
            // PTR: a reverse name gets the services; another name its rcode alone.
            (
                "4.3.2.1.in-addr.arpa.",
                PTR,
                true,
                NOERROR,
                &["1.2.3.4 0 svc1.testns."],
            ),
            ("9.9.9.9.in-addr.arpa.", PTR, true, NXDOMAIN, &[]),
            ("svc1.testns.example.org.", PTR, true, NOERROR, &[]),
            ("nope.testns.example.org.", PTR, true, NXDOMAIN, &[]),
            // RFC 8020 again: names above an external IP's reverse name, and that name for
            // another type, exist.
            ("3.2.1.in-addr.arpa.", PTR, true, NOERROR, &[]),
            ("1.in-addr.arpa.", A, true, NOERROR, &[]),
            ("4.3.2.1.in-addr.arpa.", A, true, NOERROR, &[]),
            ("5.3.2.1.in-addr.arpa.", A, true, NXDOMAIN, &[]),
            ("9.9.in-addr.arpa.", PTR, true, NXDOMAIN, &[]),
            ("2.0.0.0.1.0.0.0.ip6.arpa.", PTR, true, NOERROR, &[]),
            ("3.0.0.0.1.0.0.0.ip6.arpa.", PTR, true, NXDOMAIN, &[]),
        ];
        for (name, qtype, headless, rcode, want) in cases {
            let (r, got) = ext(&d, &o, name, *qtype, *headless);
            assert_eq!(r, *rcode, "{name} {qtype} headless={headless}: {got:?}");
            assert_eq!(got, *want, "{name} {qtype} headless={headless}");
        }
        // Without `namespaces`, every namespace: svc1's address names both services.
        let o = options("kubernetes");
        let d = table(&o, &store(), &[]);
        let (r, got) = ext(&d, &o, "4.3.2.1.in-addr.arpa.", PTR, false);
        assert_eq!(r, NOERROR);
        assert_eq!(got, ["1.2.3.4 0 svc1.other.", "1.2.3.4 0 svc1.testns."]);
        assert_eq!(ext(&d, &o, "svc1.other.example.org.", A, false).0, NOERROR);
    }

    #[test]
    fn reverse_names_are_the_resolvers() {
        let mut buf = [0u8; 80];
        let name = |ip: &str, buf: &mut [u8; 80]| {
            Name::from_wire(reverse_name(ip.parse().unwrap(), buf))
                .unwrap()
                .to_string()
        };
        assert_eq!(name("192.0.2.10", &mut buf), "10.2.0.192.in-addr.arpa.");
        assert_eq!(name("0.0.0.0", &mut buf), "0.0.0.0.in-addr.arpa.");
        assert_eq!(
            name("2001:db8::ab", &mut buf),
            "b.a.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa."
        );
    }

    /// CoreDNS's `nsAddrs(true, headless, …)`: the external IPs of the service whose
    /// endpoint is the server, or with `headless` a headless one's endpoints; the server's
    /// own addresses when no endpoint holds them.
    #[test]
    fn the_name_servers_addresses_are_the_servers_services_external_ips() {
        let o = options("kubernetes");
        let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
        let d = table(&o, &store(), &[ip("172.0.0.100")]);
        assert_eq!(&*d.external.ns[0], [ip("203.0.113.53")]);
        assert_eq!(&*d.external.ns[1], [ip("203.0.113.53")]);
        let d = table(&o, &store(), &[ip("172.0.0.101")]);
        assert!(
            d.external.ns[0].is_empty(),
            "a headless service has no external IP"
        );
        assert_eq!(&*d.external.ns[1], [ip("172.0.0.101"), ip("172.0.0.102")]);
        let d = table(&o, &store(), &[ip("198.51.100.1")]);
        assert_eq!(&*d.external.ns[0], [ip("198.51.100.1")]);
        assert_eq!(&*d.external.ns[1], [ip("198.51.100.1")]);
    }

    /// The serial moves with what k8s_external answers only: not with a service without
    /// external IPs nor with endpoints of a service that has some; `headless`'s serial also
    /// with the endpoints of services without external IPs.
    #[test]
    fn the_serial_moves_only_with_what_k8s_external_answers() {
        let o = options("kubernetes");
        let local: [IpAddr; 1] = ["172.0.0.100".parse().unwrap()];
        let mut s = store();
        let views = |s: &Store| Views::of(s, &o, &table(&o, s, &local).external);
        let first = views(&s);
        let serial = first.serials(None, [0, 0], 100);
        assert_eq!(serial, [100, 100]);
        let step = |s: &mut Store, kind, json: String, prev: &Views, serial, now| {
            s.apply(kind, Change::Upsert(&json)).unwrap();
            let v = views(s);
            let next = v.serials(Some(prev), serial, now);
            (v, next)
        };
        // A ClusterIP service without external IPs, and a slice of a service with them.
        let (v, serial) = step(
            &mut s,
            StoreKind::Services,
            svc("testns", "new", "10.0.0.7", &[], &[]),
            &first,
            serial,
            200,
        );
        assert_eq!(serial, [100, 100]);
        let (v, serial) = step(
            &mut s,
            StoreKind::Slices,
            slice("testns", "svc1-1", "svc1", &[("10.1.1.1", "")]),
            &v,
            serial,
            300,
        );
        assert_eq!(serial, [100, 100]);
        // A headless service's endpoints: only headless's serial.
        let (v, serial) = step(
            &mut s,
            StoreKind::Slices,
            slice(
                "testns",
                "svc-headless-1",
                "svc-headless",
                &[("1.2.3.4", "endpoint-svc-0")],
            ),
            &v,
            serial,
            400,
        );
        assert_eq!(serial, [100, 400]);
        // An external IP: both.
        let (v, serial) = step(
            &mut s,
            StoreKind::Services,
            svc("testns", "new", "10.0.0.7", &["192.0.2.7"], &[]),
            &v,
            serial,
            500,
        );
        assert_eq!(serial, [500, 500]);
        // The server's endpoint leaving its service: the name server's addresses fall back
        // to the server's own.
        let (v, serial) = step(
            &mut s,
            StoreKind::Slices,
            slice("kube-system", "dns-1", "dns", &[("172.0.0.200", "")]),
            &v,
            serial,
            600,
        );
        assert_eq!(serial, [600, 600]);
        // A namespace.
        let (_, serial) = step(
            &mut s,
            StoreKind::Namespaces,
            namespace("fresh"),
            &v,
            serial,
            700,
        );
        assert_eq!(serial, [700, 700]);
    }
}
