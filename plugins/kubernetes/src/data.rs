//! What queries read: the cluster as one immutable table, built by the builder thread from
//! the [`Store`] and swapped whole into a `Snapshot` every core reads without a lock. A
//! service is found by a hash of its lower-cased name and namespace labels, taken straight
//! from the query and compared in place: no key is built, nothing is allocated. What the
//! answers need that does not depend on the query is worked out here, once per change:
//! endpoint labels, PTR targets, the namespaces answered, the NS addresses, and
//! k8s_external's reverse index and name server addresses.

use crate::external::{ExternalAddr, ExternalData, external_addrs};
use crate::objects::{Port, ServiceKind};
use crate::setup::Options;
use crate::store::Store;
use hashbrown::HashTable;
use ringdns_plugin::wire::name_to_wire;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::net::IpAddr;

/// A service as the answers use it.
#[derive(Debug)]
pub struct Svc {
    /// Lower-case name.
    pub name: Box<str>,
    /// Lower-case namespace.
    pub ns: Box<str>,
    /// How it answers; an ExternalName target in lower-case wire form.
    pub kind: Kind,
    /// Its ports.
    pub ports: Box<[Port]>,
    /// Its EndpointSlices, by slice name.
    pub groups: Box<[Group]>,
    /// Ready addresses over all its slices (`ignore empty_service`).
    pub ready: usize,
    /// Its external IPs and load-balancer ingress, for k8s_external.
    pub external: Box<[ExternalAddr]>,
    /// Whether the API gave it any external entry, even one left out of `external`
    /// (CoreDNS's `len(ExternalIPs) > 0`, which keeps `headless` from its endpoints).
    pub has_external: bool,
}

/// How a service answers.
#[derive(Debug)]
pub enum Kind {
    /// Its cluster IPs, in the API's order.
    ClusterIp(Box<[IpAddr]>),
    /// Headless: its endpoints.
    Headless,
    /// A CNAME to this lower-case wire name.
    ExternalName(Box<[u8]>),
    /// Nothing to answer.
    Nothing,
}

/// One EndpointSlice of a service.
#[derive(Debug)]
pub struct Group {
    /// The slice's ports.
    pub ports: Box<[Port]>,
    /// Its ready addresses.
    pub addrs: Box<[Endpoint]>,
}

/// A ready address and the label that names it.
#[derive(Debug)]
pub struct Endpoint {
    /// The address.
    pub ip: IpAddr,
    /// CoreDNS's `endpointHostname`, lower case.
    pub label: Box<str>,
}

/// A pod with an address, as `pods verified` answers and the metadata of a client with
/// that address need it (CoreDNS's `object.Pod`).
#[derive(Debug)]
pub struct ClientPod {
    /// Lower-case namespace.
    pub ns: Box<str>,
    /// Its name.
    pub name: Box<str>,
    /// Its labels as metadata: (`kubernetes/client-label/KEY`, value), the label names
    /// made here once, so that publishing them copies text and builds nothing.
    pub labels: Box<[(Box<str>, Box<str>)]>,
}

/// An NS record's target, relative to the zone, with its address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NsAddr {
    /// The target's labels left of the zone, as wire labels without the root.
    pub prefix: Box<[u8]>,
    /// Its address (glue).
    pub ip: IpAddr,
}

/// The cluster as the answers see it.
#[derive(Debug)]
pub struct ClusterData {
    keys: foldhash::fast::RandomState,
    services: HashTable<Svc>,
    namespaces: HashTable<Box<str>>,
    /// Address → PTR targets (lower-case wire names under the primary zone).
    ptr: HashMap<IpAddr, Box<[Box<[u8]>]>, foldhash::fast::RandomState>,
    /// Pod address → the pods that have it (`pods verified`), in the store's order.
    pods: HashMap<IpAddr, Box<[ClientPod]>, foldhash::fast::RandomState>,
    /// The NS records of the zone apex, with glue (CoreDNS's `nsAddrs`).
    pub ns: Box<[NsAddr]>,
    /// The SOA serial: the Unix time of the last change that altered an answer.
    pub serial: u32,
    /// Every watched kind had its first list (before that, NXDOMAIN is SERVFAIL).
    pub synced: bool,
    /// k8s_external's part: the reverse index of external IPs, the name server's
    /// addresses, the serial.
    pub external: ExternalData,
}

/// Hashes a service key (name, namespace) from lower-case bytes, whichever side they come
/// from.
fn key_hash(keys: &foldhash::fast::RandomState, name: &[u8], ns: &[u8]) -> u64 {
    let mut h = keys.build_hasher();
    for b in name {
        h.write_u8(b.to_ascii_lowercase());
    }
    h.write_u8(b'.');
    for b in ns {
        h.write_u8(b.to_ascii_lowercase());
    }
    h.finish()
}

fn ns_hash(keys: &foldhash::fast::RandomState, ns: &[u8]) -> u64 {
    let mut h = keys.build_hasher();
    for b in ns {
        h.write_u8(b.to_ascii_lowercase());
    }
    h.finish()
}

/// `labels` (each a presentation label) as wire labels, no root.
fn prefix(labels: &[&str]) -> Box<[u8]> {
    let mut out = Vec::new();
    for l in labels {
        let l = &l.as_bytes()[..l.len().min(63)];
        out.push(l.len() as u8);
        out.extend_from_slice(l);
    }
    out.into_boxed_slice()
}

impl ClusterData {
    /// An empty cluster, not synced: what queries see before the first list.
    pub fn empty() -> ClusterData {
        ClusterData {
            keys: foldhash::fast::RandomState::default(),
            services: HashTable::new(),
            namespaces: HashTable::new(),
            ptr: HashMap::default(),
            pods: HashMap::default(),
            ns: Box::new([]),
            serial: 0,
            synced: false,
            external: ExternalData::default(),
        }
    }

    /// Builds the table from the store. `local` are the server's own addresses (its
    /// `bind` addresses, else its interfaces', loopback excluded), for the NS records.
    pub fn build(
        store: &Store,
        o: &Options,
        local: &[IpAddr],
        serial: u32,
        synced: bool,
    ) -> ClusterData {
        let mut d = ClusterData {
            serial,
            synced,
            ..ClusterData::empty()
        };
        let exists = |ns: &str| store.namespaces.contains(ns);
        let exposed = |ns: &str| o.configured_namespace(ns) && exists(ns);
        for ns in &store.namespaces {
            let h = ns_hash(&d.keys, ns.as_bytes());
            d.namespaces
                .insert_unique(h, ns.to_ascii_lowercase().into_boxed_str(), |n| {
                    ns_hash(&d.keys, n.as_bytes())
                });
        }
        let pod_names = o.endpoint_pod_names;
        let mut slices_of: HashMap<(&str, &str), Vec<&crate::objects::Slice>> = HashMap::new();
        for s in store.slices.values() {
            slices_of
                .entry((s.namespace.as_str(), s.service.as_str()))
                .or_default()
                .push(s);
        }
        for s in store.services.values() {
            let groups: Vec<Group> = slices_of
                .get(&(s.namespace.as_str(), s.name.as_str()))
                .map(|slices| {
                    slices
                        .iter()
                        .map(|sl| Group {
                            ports: sl.ports.clone().into_boxed_slice(),
                            addrs: sl
                                .addresses
                                .iter()
                                .map(|a| Endpoint {
                                    ip: a.ip,
                                    label: a.label(pod_names).into_boxed_str(),
                                })
                                .collect(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let kind = match &s.kind {
                ServiceKind::ClusterIp(ips) => Kind::ClusterIp(ips.clone().into_boxed_slice()),
                ServiceKind::Headless => Kind::Headless,
                ServiceKind::ExternalName(n) => match name_to_wire(n) {
                    Ok(w) => Kind::ExternalName(w.into_boxed_slice()),
                    Err(_) => Kind::Nothing,
                },
                ServiceKind::Nothing => Kind::Nothing,
            };
            let svc = Svc {
                name: s.name.to_ascii_lowercase().into_boxed_str(),
                ns: s.namespace.to_ascii_lowercase().into_boxed_str(),
                kind,
                ports: s.ports.clone().into_boxed_slice(),
                ready: groups.iter().map(|g| g.addrs.len()).sum(),
                groups: groups.into_boxed_slice(),
                external: external_addrs(s),
                has_external: !s.external.is_empty(),
            };
            let h = key_hash(&d.keys, svc.name.as_bytes(), svc.ns.as_bytes());
            d.services.insert_unique(h, svc, |v| {
                key_hash(&d.keys, v.name.as_bytes(), v.ns.as_bytes())
            });
        }

        // PTR (CoreDNS's serviceRecordForIP): a cluster IP names its first service; else
        // every endpoint with the address names itself under its slice's service.
        let primary = &o.zones[o.primary];
        let filter = !o.namespaces.is_empty();
        let mut ptr: HashMap<IpAddr, Vec<Box<[u8]>>> = HashMap::new();
        let mut by_cluster_ip: HashMap<IpAddr, Box<[u8]>> = HashMap::new();
        for s in store.services.values() {
            if filter && !exposed(&s.namespace) {
                continue;
            }
            if let ServiceKind::ClusterIp(ips) = &s.kind {
                for ip in ips {
                    by_cluster_ip.entry(*ip).or_insert_with(|| {
                        let n = format!("{}.{}.svc.{primary}", s.name, s.namespace);
                        name_to_wire(&n).unwrap_or_default().into_boxed_slice()
                    });
                }
            }
        }
        for s in store.slices.values() {
            if filter && !exposed(&s.namespace) {
                continue;
            }
            for a in &s.addresses {
                if by_cluster_ip.contains_key(&a.ip) {
                    continue;
                }
                let n = format!(
                    "{}.{}.{}.svc.{primary}",
                    a.label(pod_names),
                    s.service,
                    s.namespace
                );
                if let Ok(w) = name_to_wire(&n) {
                    let list = ptr.entry(a.ip).or_default();
                    if !list.iter().any(|x| **x == *w) {
                        list.push(w.into_boxed_slice());
                    }
                }
            }
        }
        for (ip, n) in by_cluster_ip {
            ptr.insert(ip, vec![n]);
        }
        d.ptr
            .extend(ptr.into_iter().map(|(k, v)| (k, v.into_boxed_slice())));

        let mut pods: HashMap<IpAddr, Vec<ClientPod>> = HashMap::new();
        for p in store.pods.values() {
            if let Some(ip) = p.ip {
                pods.entry(ip).or_default().push(ClientPod {
                    ns: p.namespace.to_ascii_lowercase().into_boxed_str(),
                    name: p.name.as_str().into(),
                    labels: p
                        .labels
                        .iter()
                        .map(|(k, v)| {
                            let label = format!("{}{k}", crate::metadata::CLIENT_LABEL);
                            (label.into_boxed_str(), v.as_str().into())
                        })
                        .collect(),
                });
            }
        }
        d.pods
            .extend(pods.into_iter().map(|(k, v)| (k, v.into_boxed_slice())));

        d.ns = ns_addrs(store, local, pod_names).into_boxed_slice();
        d.external = ExternalData::build(store, o, local);
        d
    }

    /// The service `name.ns` (labels as the query spells them).
    pub fn service(&self, name: &[u8], ns: &[u8]) -> Option<&Svc> {
        if self.services.is_empty() {
            return None;
        }
        self.services.find(key_hash(&self.keys, name, ns), |s| {
            s.name.as_bytes().eq_ignore_ascii_case(name) && s.ns.as_bytes().eq_ignore_ascii_case(ns)
        })
    }

    /// Whether the namespace exists (and matches `namespace_labels`).
    pub fn namespace_exists(&self, ns: &[u8]) -> bool {
        !self.namespaces.is_empty()
            && self
                .namespaces
                .find(ns_hash(&self.keys, ns), |n| {
                    n.as_bytes().eq_ignore_ascii_case(ns)
                })
                .is_some()
    }

    /// The PTR targets of an address.
    pub fn ptr(&self, ip: IpAddr) -> &[Box<[u8]>] {
        self.ptr.get(&ip).map_or(&[], |v| v)
    }

    /// Whether a pod of namespace `ns` has address `ip`.
    pub fn pod_in(&self, ip: IpAddr, ns: &[u8]) -> bool {
        self.pods.get(&ip).is_some_and(|list| {
            list.iter()
                .any(|p| p.ns.as_bytes().eq_ignore_ascii_case(ns))
        })
    }

    /// The first pod with address `ip` (CoreDNS's `podWithIP`): autopath's client, and the
    /// client the metadata describes.
    pub fn pod_with_ip(&self, ip: IpAddr) -> Option<&ClientPod> {
        self.pods.get(&ip).and_then(|l| l.first())
    }

    /// The namespace of the first pod with address `ip` (autopath's client).
    pub fn pod_namespace(&self, ip: IpAddr) -> Option<&str> {
        self.pod_with_ip(ip).map(|p| &*p.ns)
    }
}

/// CoreDNS's `nsAddrs` (internal): the services whose endpoints hold one of the server's own
/// addresses name the zone's NS records (their cluster IPs, or for a headless one its
/// endpoints, as glue); when no endpoint holds one, `ns.dns.ZONE` with the addresses
/// themselves.
fn ns_addrs(store: &Store, local: &[IpAddr], pod_names: bool) -> Vec<NsAddr> {
    let Some(own) = store.own_slices(local) else {
        let prefix = prefix(&["ns", "dns"]);
        return local
            .iter()
            .map(|ip| NsAddr {
                prefix: prefix.clone(),
                ip: *ip,
            })
            .collect();
    };
    let mut out = Vec::new();
    for (slice, svc) in own {
        match &svc.kind {
            ServiceKind::Headless => {
                for a in &slice.addresses {
                    let label = a.label(pod_names);
                    out.push(NsAddr {
                        prefix: prefix(&[&label, &svc.name, &svc.namespace, "svc"]),
                        ip: a.ip,
                    });
                }
            }
            ServiceKind::ClusterIp(ips) => {
                for cip in ips {
                    out.push(NsAddr {
                        prefix: prefix(&[&svc.name, &svc.namespace, "svc"]),
                        ip: *cip,
                    });
                }
            }
            _ => {}
        }
    }
    out
}
