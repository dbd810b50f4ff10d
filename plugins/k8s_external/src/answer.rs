//! The records of a reply, as CoreDNS's `apex.go` and `msg_to_dns.go` make them, written
//! straight into the reply: the apex's SOA and NS (with the name servers' addresses), the
//! `APEX` subdomain, and A, AAAA, SRV and PTR from the hits of the kubernetes plugin's
//! lookup. Names are assembled on the stack; nothing is allocated.

use ringdns_plugin::external::{ExternalHit, ExternalHits, ExternalTarget};
use ringdns_plugin::wire::class::IN;
use ringdns_plugin::wire::rtype::{A, AAAA, CNAME, NS, PTR, SOA, SRV, of_addr};
use ringdns_plugin::wire::{MessageWriter, Name, Owner, Section};

/// `ns1`, the name server's label left of `APEX.ZONE` (wire).
pub const NS1: &[u8] = b"\x03ns1";
/// `hostmaster`, the SOA mailbox's label left of `APEX.ZONE` (wire): the longest name the
/// zone's records hold, so the one setup checks against 255 bytes.
pub const HOSTMASTER: &[u8] = b"\x0ahostmaster";

/// The zone a query falls in, as found in the query name (so in the client's case).
#[derive(Debug, Clone, Copy)]
pub struct Zone<'q> {
    /// Which of the plugin's zones it is.
    pub index: usize,
    /// The zone as the question spells it (wire, with the root).
    pub wire: &'q [u8],
    /// Its offset in the question name.
    pub offset: usize,
    /// Its label count.
    pub labels: usize,
}

impl Zone<'_> {
    /// The zone's offset in the message (its place in the question).
    fn at(&self) -> u16 {
        12 + self.offset as u16
    }

    /// A compression pointer to the zone in the question, for RDATA.
    fn pointer(&self) -> [u8; 2] {
        (0xC000 | self.at()).to_be_bytes()
    }
}

/// The longest of `zones` that `qname` is at or under (CoreDNS's `plugin.Zones.Matches`).
pub fn zone_of<'q>(qname: &Name<'q>, zones: &[Vec<u8>]) -> Option<Zone<'q>> {
    let wire = qname.as_wire();
    let mut best: Option<Zone<'q>> = None;
    for (index, z) in zones.iter().enumerate() {
        if !qname.is_subdomain_of(z) {
            continue;
        }
        let labels = Name::from_wire(z).map_or(0, |n| n.label_count());
        if best.is_none_or(|b| labels > b.labels) {
            let offset = wire.len() - z.len();
            best = Some(Zone {
                index,
                wire: &wire[offset..],
                offset,
                labels,
            });
        }
    }
    best
}

/// A name of at most 255 bytes, assembled from wire pieces on the stack.
pub struct Joined {
    buf: [u8; 255],
    len: usize,
}

impl Joined {
    /// The concatenation of `parts` (wire labels, the last part ending with the root).
    pub fn new(parts: &[&[u8]]) -> Option<Joined> {
        let mut j = Joined {
            buf: [0; 255],
            len: 0,
        };
        for p in parts {
            let end = j.len + p.len();
            j.buf.get_mut(j.len..end)?.copy_from_slice(p);
            j.len = end;
        }
        Name::from_wire(j.wire()).ok()?;
        Some(j)
    }

    /// The name, wire.
    pub fn wire(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// What one reply is written with: the plugin's settings and the zone of the query.
pub struct Ctx<'a, 'q> {
    /// `apex`'s labels (wire, no root).
    pub apex: &'a [u8],
    /// `ttl`.
    pub ttl: u32,
    /// The zone the query is in.
    pub zone: Zone<'q>,
}

impl Ctx<'_, '_> {
    /// The zone's SOA (CoreDNS's `External.soa`): `ns1.APEX.ZONE hostmaster.APEX.ZONE
    /// SERIAL 7200 1800 86400 TTL`, owned by the zone, at the plugin's TTL.
    pub fn soa(&self, w: &mut MessageWriter<'_>, section: Section, serial: u32) -> bool {
        self.push_at_apex(w, section, SOA, |out| {
            self.put_apex_name(out, NS1);
            self.put_apex_name(out, HOSTMASTER);
            for v in [serial, 7200, 1800, 86400, self.ttl] {
                out.extend_from_slice(&v.to_be_bytes());
            }
        })
    }

    /// The zone's NS record, `ns1.APEX.ZONE`.
    pub fn ns(&self, w: &mut MessageWriter<'_>) -> bool {
        self.push_at_apex(w, Section::Answer, NS, |out| self.put_apex_name(out, NS1))
    }

    /// A record owned by the zone's apex (a pointer to the zone in the question), at the
    /// plugin's TTL, its RDATA written by `fill`.
    fn push_at_apex(
        &self,
        w: &mut MessageWriter<'_>,
        section: Section,
        rtype: u16,
        fill: impl FnOnce(&mut Vec<u8>),
    ) -> bool {
        let owner = Owner::Pointer(self.zone.at());
        w.push_with(section, owner, rtype, IN, self.ttl, fill)
            .is_ok()
    }

    /// `LABEL.APEX.ZONE` into RDATA: `label` (wire), the apex, a pointer to the zone.
    fn put_apex_name(&self, out: &mut Vec<u8>, label: &[u8]) {
        out.extend_from_slice(label);
        out.extend_from_slice(self.apex);
        out.extend_from_slice(&self.zone.pointer());
    }

    /// `ns1.APEX.ZONE` (the zone as the question spells it), the name servers' addresses'
    /// owner in the NS reply's additional section.
    pub fn ns1(&self) -> Option<Joined> {
        Joined::new(&[NS1, self.apex, self.zone.wire])
    }

    /// Whether two hits have the same SRV target. Keys (under the same zone) and hostnames
    /// compare as they are, without building the names: SRV's duplicate checks compare
    /// every hit with those before it. Only a key against a hostname builds both.
    fn same_target(&self, a: &ExternalHit<'_>, b: &ExternalHit<'_>) -> bool {
        match (a.target, b.target) {
            (ExternalTarget::Ip(_), ExternalTarget::Ip(_)) => a.key.eq_ignore_ascii_case(b.key),
            (ExternalTarget::Host(x), ExternalTarget::Host(y)) => x.eq_ignore_ascii_case(y),
            _ => matches!((self.target(a), self.target(b)),
                (Some(x), Some(y)) if x.wire().eq_ignore_ascii_case(y.wire())),
        }
    }

    /// The SRV target of a hit: its key under the zone (as the question spells it), or its
    /// hostname.
    fn target(&self, h: &ExternalHit<'_>) -> Option<Joined> {
        match h.target {
            ExternalTarget::Ip(_) => Joined::new(&[h.key, self.zone.wire]),
            ExternalTarget::Host(host) => Joined::new(&[host]),
        }
    }
}

/// The replies of the lookups a deferred pass made, by hostname and type.
pub struct Looked {
    /// The hostname, wire.
    pub host: Vec<u8>,
    /// The type looked up.
    pub qtype: u16,
    /// The reply, when one came.
    pub reply: Option<Vec<u8>>,
}

/// The reply to a lookup of `host` for `qtype`, if one was made and answered.
fn looked_up<'l>(looked: &'l [Looked], host: &[u8], qtype: u16) -> Option<&'l [u8]> {
    looked
        .iter()
        .find(|l| l.qtype == qtype && l.host.eq_ignore_ascii_case(host))
        .and_then(|l| l.reply.as_deref())
}

/// The hostname an address query is answered with a CNAME to: the first, when no hit is an
/// address (a name with a CNAME has no other data, RFC 1034 §3.6.2, and one CNAME at most,
/// RFC 2181 §10.1).
pub fn alias(hits: &ExternalHits) -> Option<(&[u8], u32)> {
    let mut first = None;
    for h in hits.iter() {
        match h.target {
            ExternalTarget::Ip(_) => return None,
            ExternalTarget::Host(host) => {
                first.get_or_insert((host, h.ttl));
            }
        }
    }
    first
}

/// The hostnames whose addresses an SRV reply's additional section needs, each once.
pub fn srv_hosts(hits: &ExternalHits) -> impl Iterator<Item = &[u8]> {
    hits.iter().enumerate().filter_map(|(i, h)| match h.target {
        ExternalTarget::Host(host) if h.port != -1 => {
            let dup = hits.iter().take(i).any(|p| {
                p.port != -1
                    && matches!(p.target, ExternalTarget::Host(x) if x.eq_ignore_ascii_case(host))
            });
            (!dup).then_some(host)
        }
        _ => None,
    })
}

/// A or AAAA (CoreDNS's `External.a`/`aaaa`): the addresses of the family, each once; or
/// the CNAME of [`alias`] and the answers of its lookup (TC when that reply had it).
/// How many answers.
pub fn addresses(
    ctx: &Ctx<'_, '_>,
    w: &mut MessageWriter<'_>,
    hits: &ExternalHits,
    qtype: u16,
    looked: &[Looked],
) -> u16 {
    if let Some((host, ttl)) = alias(hits) {
        let mut n = u16::from(
            w.push(Section::Answer, Owner::Question, CNAME, IN, ttl, host)
                .is_ok(),
        );
        if let Some(reply) = looked_up(looked, host, qtype) {
            n += ringdns_plugin::lookup::append_answers(reply, w) as u16;
            if reply.get(2).is_some_and(|f| f & 0x02 != 0) {
                w.set_tc(true);
            }
        }
        return n;
    }
    let mut n = 0;
    for (i, h) in hits.iter().enumerate() {
        let ExternalTarget::Ip(ip) = h.target else {
            continue;
        };
        let dup = (0..i).any(|j| hits.ip_of(j) == Some(ip));
        if of_addr(&ip) == qtype && !dup {
            n += u16::from(
                w.push_addr(Section::Answer, Owner::Question, ctx.ttl, ip)
                    .is_ok(),
            );
        }
    }
    n
}

/// SRV (CoreDNS's `External.srv`): one per target and port (priority 0, weight 100 / the
/// number of hits, at least 1, at the TTL the hit has), the targets' addresses in the
/// additional section: a hit's own, or the answers of the lookups of a hostname (A, then
/// AAAA). How many answers.
pub fn srv(
    ctx: &Ctx<'_, '_>,
    w: &mut MessageWriter<'_>,
    hits: &ExternalHits,
    looked: &[Looked],
) -> u16 {
    // CoreDNS's float arithmetic, for the same rounding: 100 / (100 n) * 100, floored.
    let total = 100.0 * hits.len() as f64;
    let weight = ((100.0 / total * 100.0).floor() as u16).max(1);
    let same = |a: &ExternalHit<'_>, b: &ExternalHit<'_>| ctx.same_target(a, b);
    let mut answers = 0;
    for (i, h) in hits.iter().enumerate() {
        if h.port == -1 {
            continue;
        }
        let Some(target) = ctx.target(&h) else {
            continue;
        };
        let dup = hits
            .iter()
            .take(i)
            .any(|p| p.port == h.port && same(&p, &h));
        if dup {
            continue;
        }
        let ok = w
            .push_with(Section::Answer, Owner::Question, SRV, IN, h.ttl, |out| {
                out.extend_from_slice(&[0, 0]);
                out.extend_from_slice(&weight.to_be_bytes());
                out.extend_from_slice(&(h.port as u16).to_be_bytes());
                out.extend_from_slice(target.wire());
            })
            .is_ok();
        answers += u16::from(ok);
    }
    for (i, h) in hits.iter().enumerate() {
        if h.port == -1 {
            continue;
        }
        // An address differs from most before it: compared first, without reading them.
        let dup = (0..i).any(|j| match h.target {
            ExternalTarget::Ip(ip) if hits.ip_of(j) != Some(ip) => false,
            _ => hits
                .get(j)
                .is_some_and(|p| p.port != -1 && p.target == h.target && same(&p, &h)),
        });
        if dup {
            continue;
        }
        match h.target {
            ExternalTarget::Ip(ip) => {
                if let Some(target) = ctx.target(&h) {
                    let _ =
                        w.push_addr(Section::Additional, Owner::Wire(target.wire()), ctx.ttl, ip);
                }
            }
            ExternalTarget::Host(host) => {
                for t in [A, AAAA] {
                    if let Some(reply) = looked_up(looked, host, t) {
                        ringdns_plugin::lookup::append_answers_to(reply, w, Section::Additional);
                    }
                }
            }
        }
    }
    answers
}

/// PTR (CoreDNS's `External.ptr`): each service once, named under the plugin's first zone.
pub fn ptr(
    ctx: &Ctx<'_, '_>,
    w: &mut MessageWriter<'_>,
    hits: &ExternalHits,
    first_zone: &[u8],
) -> u16 {
    let mut n = 0;
    for (i, h) in hits.iter().enumerate() {
        if hits.iter().take(i).any(|p| p.key == h.key) {
            continue;
        }
        if let Some(t) = Joined::new(&[h.key, first_zone]) {
            n += u16::from(
                w.push(Section::Answer, Owner::Question, PTR, IN, ctx.ttl, t.wire())
                    .is_ok(),
            );
        }
    }
    n
}
