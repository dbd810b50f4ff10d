//! External names of a cluster, for `k8s_external` (CoreDNS's `external.Externaler`): the
//! kubernetes plugin knows which services have external IPs or load-balancer ingress, so it
//! answers the lookups of k8s_external's zone. The plugin that knows registers an
//! [`Externaler`] in the block's [`Externalers`] (`BlockSetup::block_shared`) at setup;
//! k8s_external, set up before it (plugin.cfg order), looks it up when it builds its
//! per-core instance. A lookup is one virtual call that writes its hits into the core's
//! reusable [`ExternalHits`], so it allocates nothing once warm.

use crate::registry::Registry;
use crate::wire::Name;
use std::net::IpAddr;

/// What a hit points at, as read back from [`ExternalHits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExternalTarget<'a> {
    /// An address: an A or AAAA record, SRV glue.
    Ip(IpAddr),
    /// A hostname (a load balancer's ingress), as a lower-case wire name with the root: a
    /// CNAME, or an SRV target whose addresses are looked up.
    Host(&'a [u8]),
}

/// One record source of a lookup (CoreDNS's `msg.Service` as k8s_external reads it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExternalHit<'a> {
    /// The address or hostname.
    pub target: ExternalTarget<'a>,
    /// The port, -1 when the service has none (no SRV record).
    pub port: i32,
    /// The TTL the plugin that answered gives its records (CoreDNS's `msg.Service.TTL`).
    pub ttl: u32,
    /// What names the hit below the zone, as wire labels without the root: `svc.ns` for a
    /// service, `endpoint.svc.ns` for a headless endpoint (the SRV target, glue's owner),
    /// `svc.ns` for a PTR's target.
    pub key: &'a [u8],
}

/// A hit as kept: spans into the names.
#[derive(Debug, Clone, Copy)]
struct Stored {
    ip: Option<IpAddr>,
    host: (u32, u32),
    key: (u32, u32),
    port: i32,
    ttl: u32,
}

/// The hits of one lookup: kept by a core and refilled query after query, so that a lookup
/// allocates nothing once the core has seen a large enough answer.
#[derive(Debug, Default, Clone)]
pub struct ExternalHits {
    hits: Vec<Stored>,
    names: Vec<u8>,
}

impl ExternalHits {
    /// Empties the hits, keeping their memory.
    pub fn clear(&mut self) {
        self.hits.clear();
        self.names.clear();
    }

    /// Appends a hit whose key is `labels` (each one label's bytes, without its length);
    /// false, and nothing appended, when a label is empty or longer than 63 bytes, or a
    /// hostname is not a wire name.
    pub fn push(
        &mut self,
        target: ExternalTarget<'_>,
        port: i32,
        ttl: u32,
        labels: &[&[u8]],
    ) -> bool {
        let mark = self.names.len();
        let (ip, host) = match target {
            ExternalTarget::Ip(ip) => (Some(ip), (0, 0)),
            ExternalTarget::Host(h) => {
                if Name::from_wire(h).is_err() {
                    return false;
                }
                self.names.extend_from_slice(h);
                (None, (mark as u32, self.names.len() as u32))
            }
        };
        let key_start = self.names.len();
        for l in labels {
            if l.is_empty() || l.len() > 63 {
                self.names.truncate(mark);
                return false;
            }
            self.names.push(l.len() as u8);
            self.names.extend_from_slice(l);
        }
        self.hits.push(Stored {
            ip,
            host,
            key: (key_start as u32, self.names.len() as u32),
            port,
            ttl,
        });
        true
    }

    /// How many hits.
    pub fn len(&self) -> usize {
        self.hits.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.hits.is_empty()
    }

    /// The `i`th hit.
    pub fn get(&self, i: usize) -> Option<ExternalHit<'_>> {
        let s = self.hits.get(i)?;
        let span = |(a, b): (u32, u32)| &self.names[a as usize..b as usize];
        Some(ExternalHit {
            target: match s.ip {
                Some(ip) => ExternalTarget::Ip(ip),
                None => ExternalTarget::Host(span(s.host)),
            },
            port: s.port,
            ttl: s.ttl,
            key: span(s.key),
        })
    }

    /// The address of the `i`th hit, when it is one, read from what is kept (no hit is
    /// built): what an answer's duplicate checks, every hit against those before it, compare
    /// first.
    pub fn ip_of(&self, i: usize) -> Option<IpAddr> {
        self.hits.get(i)?.ip
    }

    /// The hits in order.
    pub fn iter(&self) -> impl Iterator<Item = ExternalHit<'_>> {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

/// One lookup k8s_external asks for (CoreDNS's `request.Request` with its zone).
#[derive(Debug, Clone, Copy)]
pub struct ExternalRequest<'a, 'q> {
    /// The query name.
    pub qname: &'a Name<'q>,
    /// How many of its last labels are k8s_external's zone.
    pub zone_labels: usize,
    /// The query type (PTR of a reverse name looks the address up).
    pub qtype: u16,
    /// k8s_external's `headless`: headless services (without external IPs) answer their
    /// ready endpoints.
    pub headless: bool,
}

/// A plugin that answers k8s_external's names (CoreDNS's `Externaler`, but for
/// `ExternalServices`, which only its zone transfer uses).
pub trait Externaler: Send + Sync {
    /// CoreDNS's `External`: fills `hits` (cleared first) with the services that match the
    /// request and returns the rcode of the lookup, NOERROR or NXDOMAIN (NOERROR with no hit
    /// for a name that exists without records, such as a namespace). A PTR query of a
    /// reverse name gets the services with that external IP; of any other name, no hit
    /// and the rcode of the name.
    fn external(&self, req: &ExternalRequest<'_, '_>, hits: &mut ExternalHits) -> u8;

    /// CoreDNS's `ExternalAddress`: the addresses of the zone's name server, `ns1.APEX.ZONE`
    /// (the external IPs of the services whose endpoints are the server, else its own
    /// addresses), into `out` (cleared first).
    fn external_address(&self, headless: bool, out: &mut Vec<IpAddr>);

    /// CoreDNS's `ExternalSerial`: the zone's SOA serial, which moves only when something
    /// this plugin answers changes (with `headless`, the headless services' endpoints too).
    fn external_serial(&self, headless: bool) -> u32;
}

/// The block's plugins that answer k8s_external's names, by directive name.
pub type Externalers = Registry<dyn Externaler>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn hits_keep_their_targets_and_keys_and_reuse_their_memory() {
        let mut h = ExternalHits::default();
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        assert!(h.push(ExternalTarget::Ip(ip), 80, 5, &[b"svc1", b"testns"]));
        assert!(h.push(
            ExternalTarget::Host(b"\x02lb\x07example\x00"),
            -1,
            7,
            &[b"svc1", b"testns"]
        ));
        // A bad label or hostname is left out, and leaves nothing behind.
        assert!(!h.push(ExternalTarget::Ip(ip), 80, 5, &[b"", b"testns"]));
        assert!(!h.push(ExternalTarget::Ip(ip), 80, 5, &[&[b'a'; 64]]));
        assert!(!h.push(ExternalTarget::Host(b"\x05lb"), 80, 5, &[b"x"]));
        assert_eq!(h.len(), 2);
        let a = h.get(0).unwrap();
        assert_eq!(a.target, ExternalTarget::Ip(ip));
        assert_eq!((a.port, a.ttl), (80, 5));
        assert_eq!(a.key, b"\x04svc1\x06testns");
        let b = h.get(1).unwrap();
        assert_eq!(b.target, ExternalTarget::Host(b"\x02lb\x07example\x00"));
        assert_eq!((b.port, b.ttl), (-1, 7));
        assert_eq!(b.key, b"\x04svc1\x06testns");
        assert_eq!(h.iter().count(), 2);
        assert_eq!((h.ip_of(0), h.ip_of(1), h.ip_of(2)), (Some(ip), None, None));
        let (hc, nc) = (h.hits.capacity(), h.names.capacity());
        h.clear();
        assert!(h.is_empty() && h.get(0).is_none());
        assert_eq!((h.hits.capacity(), h.names.capacity()), (hc, nc));
    }

    #[test]
    fn registered_externalers_are_found_by_name() {
        struct Fixed;
        impl Externaler for Fixed {
            fn external(&self, _: &ExternalRequest<'_, '_>, hits: &mut ExternalHits) -> u8 {
                hits.clear();
                3
            }
            fn external_address(&self, _: bool, out: &mut Vec<IpAddr>) {
                out.clear();
            }
            fn external_serial(&self, headless: bool) -> u32 {
                if headless { 2 } else { 1 }
            }
        }
        let e = Externalers::default();
        assert!(e.get("kubernetes").is_none());
        e.register("kubernetes", Arc::new(Fixed));
        let x = e.get("kubernetes").unwrap();
        let name = Name::from_wire(b"\x00").unwrap();
        let req = ExternalRequest {
            qname: &name,
            zone_labels: 0,
            qtype: 1,
            headless: false,
        };
        assert_eq!(x.external(&req, &mut ExternalHits::default()), 3);
        assert_eq!((x.external_serial(false), x.external_serial(true)), (1, 2));
        assert!(e.get("other").is_none());
    }
}
