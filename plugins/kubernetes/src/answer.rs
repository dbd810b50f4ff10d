//! The records a query gets, as CoreDNS's kubernetes `ServeDNS` and the backend lookups of
//! `plugin/backend_lookup.go` make them, written straight into the reply: which names exist
//! (NXDOMAIN vs NODATA), A/AAAA of services, endpoints and pods, SRV with CoreDNS's weights
//! and glue, CNAMEs of ExternalName services (chased inside the zone), PTR, TXT, NS, SOA.
//!
//! A name error is decided before anything is written, so the caller can still pass the
//! query on (fallthrough) or answer NXDOMAIN with the SOA.

use crate::data::{ClusterData, Kind, NsAddr, Svc};
use crate::parse::{Invalid, Parsed, Space, parse};
use crate::setup::{Options, PodMode};
use ringdns_plugin::reverse::reverse_addr;
use ringdns_plugin::wire::class::IN;
use ringdns_plugin::wire::rtype::{CNAME, NS, PTR, SOA, SRV, TXT, of_addr};
use ringdns_plugin::wire::{MessageWriter, Name, Owner, Section};
use std::net::IpAddr;

/// CoreDNS's `maxCnameChainLength`.
const MAX_CNAMES: usize = 10;
/// The Kubernetes DNS schema version `dns-version.ZONE` answers.
const SCHEMA_VERSION: &[u8] = b"1.1.0";

/// The zone a query falls in, as found in the query name (so in the client's case).
#[derive(Debug, Clone, Copy)]
pub struct ZoneOf<'q> {
    /// The zone as the question spells it (wire, with the root).
    pub wire: &'q [u8],
    /// Its offset in the question name.
    pub offset: usize,
    /// Its label count.
    pub labels: usize,
    /// Which of the plugin's zones it is.
    pub index: usize,
}

impl ZoneOf<'_> {
    /// A pointer to the zone in the question, for an owner.
    fn owner(&self) -> Owner<'static> {
        Owner::Pointer(12 + self.offset as u16)
    }
}

/// The longest of `zones` that `qname` is under.
pub fn zone_of<'q>(qname: &Name<'q>, zones: &[Vec<u8>]) -> Option<ZoneOf<'q>> {
    let wire = qname.as_wire();
    let total = qname.label_count();
    let mut best: Option<ZoneOf<'q>> = None;
    for (index, z) in zones.iter().enumerate() {
        if !qname.is_subdomain_of(z) {
            continue;
        }
        let offset = wire.len() - z.len();
        let labels = Name::from_wire(z).map_or(0, |n| n.label_count());
        if best.is_none_or(|b| labels > b.labels) && labels <= total {
            best = Some(ZoneOf {
                wire: &wire[offset..],
                offset,
                labels,
                index,
            });
        }
    }
    best
}

/// What a lookup found, before any record is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// NXDOMAIN (CoreDNS's errNoItems, errNsNotExposed, errInvalidRequest).
    NameError,
    /// Records were written (or none: NODATA); TC when an upstream answer had it.
    Written {
        /// Records in the answer section.
        answers: u16,
    },
    /// An ExternalName CNAME leads outside the zone: its target must be looked up through
    /// the server (on a pass that may wait).
    Upstream,
}

/// One record source of a service: an address and a port, from a cluster IP or from an
/// endpoint (group, address index).
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    /// The address.
    pub ip: IpAddr,
    /// The port, -1 for none.
    pub port: i32,
    /// The endpoint it comes from, for headless and endpoint names.
    pub endpoint: Option<(u32, u32)>,
}

/// What a name is in the cluster (CoreDNS's `Records`).
#[derive(Debug, Clone, Copy)]
pub enum Found<'d> {
    /// A name of the schema with nothing of its own (the apex, `svc.ZONE`, a namespace):
    /// NODATA.
    Empty,
    /// No such name.
    Error,
    /// A service (and the hits in the scratch list).
    Service(&'d Svc),
    /// An ExternalName service: its CNAME target (lower-case wire).
    External(&'d [u8]),
    /// A pod's address.
    Pod(IpAddr),
    /// The NS addresses (`ns.dns.ZONE`), in the scratch list.
    Addresses,
}

/// Everything one answer needs.
pub struct Ctx<'a, 'q, 'h> {
    /// The plugin's options.
    pub o: &'a Options,
    /// The cluster.
    pub data: &'a ClusterData,
    /// The query name.
    pub qname: Name<'q>,
    /// The zone it is in.
    pub zone: ZoneOf<'q>,
    /// Scratch for the hits of a service (kept by the core, so reused).
    pub hits: &'h mut Vec<Hit>,
}

/// Labels of `name` below the zone.
fn base_labels(name: &Name<'_>, zone: &ZoneOf<'_>) -> usize {
    name.label_count().saturating_sub(zone.labels)
}

/// Whether `name` is `ns.dns.ZONE` (CoreDNS's `isDefaultNS`).
fn is_default_ns(name: &Name<'_>, zone: &ZoneOf<'_>) -> bool {
    let mut l = name.labels();
    base_labels(name, zone) == 2
        && l.next().is_some_and(|x| x.eq_ignore_ascii_case(b"ns"))
        && l.next().is_some_and(|x| x.eq_ignore_ascii_case(b"dns"))
}

impl<'a, 'q, 'h> Ctx<'a, 'q, 'h> {
    /// CoreDNS's `Records` for `name` (under the context's zone), filling `hits`.
    pub fn records<'n>(&mut self, name: &Name<'n>) -> Found<'a> {
        self.hits.clear();
        let r = match parse(name, self.zone.labels) {
            Ok(r) => r,
            Err(Invalid) => return Found::Error,
        };
        let Some(space) = r.space else {
            return Found::Empty;
        };
        // A forward lookup of a name in a reverse zone: NXDOMAIN.
        if is_reverse_name(name) {
            return Found::Error;
        }
        if !self.exposed(r.namespace) {
            return Found::Error;
        }
        match space {
            Space::Pod => self.pod(&r),
            Space::Svc => self.service(&r),
        }
    }

    fn exposed(&self, ns: &[u8]) -> bool {
        let configured = self.o.namespaces.is_empty()
            || std::str::from_utf8(ns)
                .is_ok_and(|n| self.o.namespaces.iter().any(|c| c.eq_ignore_ascii_case(n)));
        configured && self.data.namespace_exists(ns)
    }

    /// CoreDNS's `findPods`.
    fn pod(&mut self, r: &Parsed<'_>) -> Found<'a> {
        if self.o.pods == PodMode::Disabled {
            return Found::Error;
        }
        if r.service.is_empty() {
            return Found::Empty;
        }
        let Some(ip) = pod_ip(r.service) else {
            return Found::Error;
        };
        match self.o.pods {
            PodMode::Insecure => Found::Pod(ip),
            _ if self.data.pod_in(ip, r.namespace) => Found::Pod(ip),
            _ => Found::Error,
        }
    }

    /// CoreDNS's `findServices`.
    fn service(&mut self, r: &Parsed<'_>) -> Found<'a> {
        if r.service.is_empty() {
            return Found::Empty;
        }
        let Some(svc) = self.data.service(r.service, r.namespace) else {
            return Found::Error;
        };
        if self.o.ignore_empty_service && matches!(svc.kind, Kind::ClusterIp(_)) && svc.ready == 0 {
            return Found::Error;
        }
        match &svc.kind {
            Kind::Nothing => Found::Error,
            Kind::ExternalName(target) => {
                if !r.endpoint.is_empty() || !r.port.is_empty() || !r.protocol.is_empty() {
                    return Found::Error;
                }
                Found::External(target)
            }
            kind if matches!(kind, Kind::Headless) || !r.endpoint.is_empty() => {
                for (gi, g) in svc.groups.iter().enumerate() {
                    for (ai, a) in g.addrs.iter().enumerate() {
                        if !r.endpoint.is_empty()
                            && !a.label.as_bytes().eq_ignore_ascii_case(r.endpoint)
                        {
                            continue;
                        }
                        for p in g.ports.iter().filter(|p| p.matches(r.port, r.protocol)) {
                            self.hits.push(Hit {
                                ip: a.ip,
                                port: p.port,
                                endpoint: Some((gi as u32, ai as u32)),
                            });
                        }
                    }
                }
                if self.hits.is_empty() {
                    Found::Error
                } else {
                    Found::Service(svc)
                }
            }
            Kind::ClusterIp(ips) => {
                let mut any = false;
                for p in svc.ports.iter().filter(|p| p.matches(r.port, r.protocol)) {
                    any = true;
                    for ip in ips.iter() {
                        self.hits.push(Hit {
                            ip: *ip,
                            port: p.port,
                            endpoint: None,
                        });
                    }
                }
                if any {
                    Found::Service(svc)
                } else {
                    Found::Error
                }
            }
            Kind::Headless => unreachable!("matched above"),
        }
    }
}

/// A pod label as an address: `1-2-3-4` (exactly three dashes, no `--`) is IPv4, else
/// dashes are colons.
fn pod_ip(label: &[u8]) -> Option<IpAddr> {
    if label.len() > 63 {
        return None;
    }
    let dashes = label.iter().filter(|b| **b == b'-').count();
    let v4 = dashes == 3 && !label.windows(2).any(|w| w == b"--");
    let mut buf = [0u8; 63];
    for (i, b) in label.iter().enumerate() {
        buf[i] = match (*b, v4) {
            (b'-', true) => b'.',
            (b'-', false) => b':',
            (b, _) => b,
        };
    }
    std::str::from_utf8(&buf[..label.len()]).ok()?.parse().ok()
}

/// Whether a name is under in-addr.arpa or ip6.arpa (CoreDNS's `dnsutil.IsReverse`).
pub fn is_reverse_name(name: &Name<'_>) -> bool {
    name.is_subdomain_of(b"\x07in-addr\x04arpa\x00") || name.is_subdomain_of(b"\x03ip6\x04arpa\x00")
}

/// A name written as `prefix` labels then the zone as the question spells it.
struct Joined {
    buf: [u8; 255],
    len: usize,
}

impl Joined {
    fn new(parts: &[&[u8]], zone: &[u8]) -> Option<Joined> {
        let mut j = Joined {
            buf: [0; 255],
            len: 0,
        };
        for p in parts {
            j.label(p)?;
        }
        j.raw(zone)?;
        Some(j)
    }

    fn label(&mut self, l: &[u8]) -> Option<()> {
        if l.is_empty() || l.len() > 63 {
            return None;
        }
        self.raw(&[l.len() as u8])?;
        self.raw(l)
    }

    fn raw(&mut self, b: &[u8]) -> Option<()> {
        let end = self.len + b.len();
        self.buf.get_mut(self.len..end)?.copy_from_slice(b);
        self.len = end;
        Some(())
    }

    fn wire(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// The CNAME hops of an ExternalName chain: each target in lower-case wire form.
pub struct Chain<'d> {
    targets: [&'d [u8]; MAX_CNAMES + 1],
    n: usize,
}

impl<'d> Chain<'d> {
    /// The targets, in order.
    pub fn targets(&self) -> &[&'d [u8]] {
        &self.targets[..self.n]
    }

    /// The owner of what follows the chain: the question name, or the last target.
    fn last_owner(&self) -> Owner<'d> {
        self.targets()
            .last()
            .map_or(Owner::Question, |t| Owner::Wire(t))
    }

    /// Writes the chain's CNAMEs (the first owned by the question name); how many.
    pub fn write(&self, w: &mut MessageWriter<'_>, ttl: u32) -> u16 {
        let mut n = 0;
        for (i, target) in self.targets().iter().enumerate() {
            let owner = if i == 0 {
                Owner::Question
            } else {
                Owner::Wire(self.targets[i - 1])
            };
            n += u16::from(
                w.push(Section::Answer, owner, CNAME, IN, ttl, target)
                    .is_ok(),
            );
        }
        n
    }
}

/// Where the chain of an address lookup ends.
enum End<'d> {
    /// At records of the zone (in the scratch hits, or a pod's address).
    Records(Found<'d>),
    /// At nothing: no record is written (CoreDNS drops the CNAMEs of such a chain).
    Nothing,
    /// Outside the zone: the last target is looked up through the server.
    Outside,
}

impl<'a, 'q, 'h> Ctx<'a, 'q, 'h> {
    /// A or AAAA (CoreDNS's `plugin.A`/`plugin.AAAA` with `checkForApex`), written.
    pub fn address(&mut self, qtype: u16, w: &mut MessageWriter<'_>) -> Verdict {
        let Some((chain, end)) = self.chase() else {
            return Verdict::NameError;
        };
        match end {
            End::Outside => Verdict::Upstream,
            End::Nothing => Verdict::Written { answers: 0 },
            End::Records(found) => self.write_chain(&chain, found, qtype, w),
        }
    }

    /// The ExternalName chain of the question name, as CoreDNS's `plugin.A` recurses over
    /// it: followed inside the zone, stopped at `x CNAME x`, a repeated CNAME or more than
    /// ten. `None` when the name itself is a name error.
    fn chase(&mut self) -> Option<(Chain<'a>, End<'a>)> {
        let mut chain = Chain {
            targets: [&[]; MAX_CNAMES + 1],
            n: 0,
        };
        let mut cur: Name<'_> = self.qname;
        let mut found = self.address_found(&cur);
        if matches!(found, Found::Error) {
            return None;
        }
        loop {
            let Found::External(target) = found else {
                return Some(match found {
                    Found::Error | Found::Empty => (chain, End::Nothing),
                    _ => (chain, End::Records(found)),
                });
            };
            if cur.eq_ignore_ascii_case(target)
                || chain.n > MAX_CNAMES
                || chain.targets().contains(&target)
            {
                return Some((chain, End::Nothing));
            }
            chain.targets[chain.n] = target;
            chain.n += 1;
            let Ok(t) = Name::from_wire(target) else {
                return Some((chain, End::Nothing));
            };
            if !t.is_subdomain_of(&self.o.zone_wires[self.zone.index]) {
                return Some((chain, End::Outside));
            }
            cur = t;
            found = self.address_found(&cur);
        }
    }

    /// What an address lookup of `name` finds: the apex is NODATA, `ns.dns.ZONE` the NS
    /// addresses, else the name's records.
    fn address_found(&mut self, name: &Name<'_>) -> Found<'a> {
        if base_labels(name, &self.zone) == 0 {
            self.hits.clear();
            return Found::Empty;
        }
        if is_default_ns(name, &self.zone) {
            self.hits.clear();
            for a in self.data.ns.iter() {
                self.hits.push(Hit {
                    ip: a.ip,
                    port: 0,
                    endpoint: None,
                });
            }
            return Found::Addresses;
        }
        self.records(name)
    }

    /// Writes the CNAMEs of `chain` and the addresses of the family it ends at, owned by
    /// the last target; nothing when there is no such address (CoreDNS drops the CNAMEs of a
    /// chain that ends in nothing).
    fn write_chain(
        &mut self,
        chain: &Chain<'_>,
        end: Found<'_>,
        qtype: u16,
        w: &mut MessageWriter<'_>,
    ) -> Verdict {
        let ttl = self.o.ttl;
        let any = match end {
            Found::Pod(ip) => of_addr(&ip) == qtype,
            _ => self.hits.iter().any(|h| of_addr(&h.ip) == qtype),
        };
        if !any {
            return Verdict::Written { answers: 0 };
        }
        let mut n = chain.write(w, ttl);
        let owner = chain.last_owner();
        if let Found::Pod(ip) = end {
            n += u16::from(w.push_addr(Section::Answer, owner, ttl, ip).is_ok());
        } else {
            for (i, h) in self.hits.iter().enumerate() {
                if of_addr(&h.ip) == qtype && !self.hits[..i].iter().any(|p| p.ip == h.ip) {
                    n += u16::from(w.push_addr(Section::Answer, owner, ttl, h.ip).is_ok());
                }
            }
        }
        Verdict::Written { answers: n }
    }

    /// The CNAMEs of an ExternalName chain that leads outside the zone, for the pass that
    /// looks its last target up.
    pub fn outside_chain(&mut self) -> Option<Chain<'a>> {
        match self.chase()? {
            (chain, End::Outside) => Some(chain),
            _ => None,
        }
    }

    /// TXT (CoreDNS's `Services` for TXT): `dns-version.ZONE`, else NODATA for a name with
    /// records of another type, else NXDOMAIN.
    pub fn txt(&mut self, w: &mut MessageWriter<'_>) -> Verdict {
        let qname = self.qname;
        if base_labels(&qname, &self.zone) == 1
            && qname
                .labels()
                .next()
                .is_some_and(|l| l.eq_ignore_ascii_case(b"dns-version"))
        {
            let mut rdata = [0u8; 6];
            rdata[0] = SCHEMA_VERSION.len() as u8;
            rdata[1..].copy_from_slice(SCHEMA_VERSION);
            let ok = w
                .push(Section::Answer, Owner::Question, TXT, IN, 28800, &rdata)
                .is_ok();
            return Verdict::Written {
                answers: u16::from(ok),
            };
        }
        match self.records(&qname) {
            Found::Service(_) | Found::External(_) | Found::Pod(_) | Found::Addresses => {
                Verdict::Written { answers: 0 }
            }
            Found::Empty | Found::Error => Verdict::NameError,
        }
    }

    /// CNAME: the target of an ExternalName service.
    pub fn cname(&mut self, w: &mut MessageWriter<'_>) -> Verdict {
        let qname = self.qname;
        if is_default_ns(&qname, &self.zone) {
            return Verdict::Written { answers: 0 };
        }
        match self.records(&qname) {
            Found::Error => Verdict::NameError,
            Found::External(target) => {
                let ok = w
                    .push(
                        Section::Answer,
                        Owner::Question,
                        CNAME,
                        IN,
                        self.o.ttl,
                        target,
                    )
                    .is_ok();
                Verdict::Written {
                    answers: u16::from(ok),
                }
            }
            _ => Verdict::Written { answers: 0 },
        }
    }

    /// MX: the cluster has none; NXDOMAIN for a name that does not exist.
    pub fn other_services(&mut self) -> Verdict {
        let qname = self.qname;
        if is_default_ns(&qname, &self.zone) {
            return Verdict::Written { answers: 0 };
        }
        match self.records(&qname) {
            Found::Error => Verdict::NameError,
            _ => Verdict::Written { answers: 0 },
        }
    }

    /// Any other type: NXDOMAIN when an A lookup of the name is a name error, else NODATA
    /// (CoreDNS's "fake A lookup").
    pub fn fake_a(&mut self) -> Verdict {
        let qname = self.qname;
        match self.address_found(&qname) {
            Found::Error => Verdict::NameError,
            _ => Verdict::Written { answers: 0 },
        }
    }

    /// PTR: the names of an address (CoreDNS's `Reverse`).
    pub fn ptr(&mut self, w: &mut MessageWriter<'_>) -> Verdict {
        let qname = self.qname;
        let Some(ip) = reverse_addr(&qname) else {
            return match self.records(&qname) {
                Found::Error => Verdict::NameError,
                _ => Verdict::Written { answers: 0 },
            };
        };
        let names = self.data.ptr(ip);
        if names.is_empty() {
            return Verdict::NameError;
        }
        let mut n = 0;
        for t in names {
            if w.push(Section::Answer, Owner::Question, PTR, IN, self.o.ttl, t)
                .is_ok()
            {
                n += 1;
            }
        }
        Verdict::Written { answers: n }
    }

    /// SRV (CoreDNS's `plugin.SRV`): one per (target, port), weight 100/n, priority 0,
    /// targets `svc.ns.svc.ZONE` or `label.svc.ns.svc.ZONE`, their addresses as glue.
    pub fn srv(&mut self, w: &mut MessageWriter<'_>) -> Verdict {
        let qname = self.qname;
        if is_default_ns(&qname, &self.zone) {
            return Verdict::Written { answers: 0 };
        }
        let found = self.records(&qname);
        let ttl = self.o.ttl;
        let zone = self.zone.wire;
        match found {
            Found::Error => Verdict::NameError,
            Found::Service(svc) => {
                let n = self.hits.len().max(1);
                let weight = ((100 / n) as u16).max(1);
                let mut answers = 0;
                for (i, h) in self.hits.iter().enumerate() {
                    if h.port == -1 {
                        continue;
                    }
                    let dup = self.hits[..i]
                        .iter()
                        .any(|p| p.port == h.port && same_target(svc, p, h));
                    if dup {
                        continue;
                    }
                    let Some(target) = target_of(svc, h, zone) else {
                        continue;
                    };
                    let ok = w
                        .push_with(Section::Answer, Owner::Question, SRV, IN, ttl, |out| {
                            out.extend_from_slice(&[0, 0]);
                            out.extend_from_slice(&weight.to_be_bytes());
                            out.extend_from_slice(&(h.port as u16).to_be_bytes());
                            out.extend_from_slice(target.wire());
                        })
                        .is_ok();
                    answers += u16::from(ok);
                }
                for (i, h) in self.hits.iter().enumerate() {
                    if h.port == -1 {
                        continue;
                    }
                    let dup = self.hits[..i]
                        .iter()
                        .any(|p| p.port != -1 && p.ip == h.ip && same_target(svc, p, h));
                    if dup {
                        continue;
                    }
                    if let Some(target) = target_of(svc, h, zone) {
                        let _ =
                            w.push_addr(Section::Additional, Owner::Wire(target.wire()), ttl, h.ip);
                    }
                }
                Verdict::Written { answers }
            }
            Found::Pod(ip) => {
                // A pod name as SRV: weight 100, port 0, the pod's own name (as the question
                // spells it) as target, its address as glue.
                let ok = w
                    .push_with(Section::Answer, Owner::Question, SRV, IN, ttl, |out| {
                        out.extend_from_slice(&[0, 0, 0, 100, 0, 0]);
                        out.extend_from_slice(qname.as_wire());
                    })
                    .is_ok();
                let _ = w.push_addr(Section::Additional, Owner::Question, ttl, ip);
                Verdict::Written {
                    answers: u16::from(ok),
                }
            }
            Found::External(_) | Found::Empty | Found::Addresses => Verdict::Written { answers: 0 },
        }
    }

    /// NS at the apex: CoreDNS's `nsAddrs` names, with their addresses as glue.
    pub fn ns(&mut self, w: &mut MessageWriter<'_>) -> Verdict {
        let ttl = self.o.ttl;
        let zone = self.zone.wire;
        let ns: &[NsAddr] = &self.data.ns;
        let mut answers = 0;
        for (i, a) in ns.iter().enumerate() {
            if ns[..i].iter().any(|p| p.prefix == a.prefix) {
                continue;
            }
            let Some(t) = join_prefix(&a.prefix, zone) else {
                continue;
            };
            answers += u16::from(
                w.push(Section::Answer, Owner::Question, NS, IN, ttl, t.wire())
                    .is_ok(),
            );
        }
        for a in ns {
            if let Some(t) = join_prefix(&a.prefix, zone) {
                let _ = w.push_addr(Section::Additional, Owner::Wire(t.wire()), ttl, a.ip);
            }
        }
        Verdict::Written { answers }
    }

    /// The SOA of the zone, in the answer (apex SOA query) or the authority section
    /// (negative answers): CoreDNS's `plugin.SOA`.
    pub fn soa(&self, w: &mut MessageWriter<'_>, section: Section) -> bool {
        let ttl = self.o.ttl;
        let zone_ptr = (0xC000u16 | (12 + self.zone.offset as u16)).to_be_bytes();
        let serial = self.data.serial;
        w.push_with(section, self.zone.owner(), SOA, IN, ttl.min(300), |out| {
            out.extend_from_slice(b"\x02ns\x03dns");
            out.extend_from_slice(&zone_ptr);
            out.extend_from_slice(b"\x0ahostmaster");
            out.extend_from_slice(&zone_ptr);
            for v in [serial, 7200, 1800, 86400, ttl] {
                out.extend_from_slice(&v.to_be_bytes());
            }
        })
        .is_ok()
    }
}

fn join_prefix(prefix: &[u8], zone: &[u8]) -> Option<Joined> {
    let mut j = Joined {
        buf: [0; 255],
        len: 0,
    };
    j.raw(prefix)?;
    j.raw(zone)?;
    Some(j)
}

/// Whether two hits of a service name the same SRV target.
fn same_target(svc: &Svc, a: &Hit, b: &Hit) -> bool {
    match (a.endpoint, b.endpoint) {
        (None, None) => true,
        (Some(x), Some(y)) => label_of(svc, x) == label_of(svc, y),
        _ => false,
    }
}

fn label_of(svc: &Svc, (g, a): (u32, u32)) -> &str {
    &svc.groups[g as usize].addrs[a as usize].label
}

/// The SRV target of a hit: `svc.ns.svc.ZONE`, or `label.svc.ns.svc.ZONE` for an
/// endpoint.
fn target_of(svc: &Svc, h: &Hit, zone: &[u8]) -> Option<Joined> {
    let (name, ns) = (svc.name.as_bytes(), svc.ns.as_bytes());
    match h.endpoint {
        None => Joined::new(&[name, ns, b"svc"], zone),
        Some(e) => Joined::new(&[label_of(svc, e).as_bytes(), name, ns, b"svc"], zone),
    }
}
