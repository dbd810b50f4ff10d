//! Building a [`Zone`] from records: sorting them into canonical order, grouping RRsets,
//! adding the empty non-terminals, marking delegations and occluded names, linking
//! signatures and additional-section targets, and the checks a zone must pass (one SOA at
//! the apex, CNAME alone at its name, …).

use crate::canonical;
use crate::nsec3;
use crate::record::Record;
use crate::zone::{NONE, Node, Set, Zone, flag};
use foldhash::fast::FixedState;
use hashbrown::HashTable;
use ringdns_wire::rtype;
use std::hash::BuildHasher;

/// Why records do not make a zone: the message, and the index of the record it is about
/// (for `FILE:LINE`), when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    /// The record the error is about (index into the input), if any.
    pub record: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl BuildError {
    fn at(i: usize, message: String) -> Self {
        BuildError {
            record: Some(i),
            message,
        }
    }
}

/// The RRSIG's covered type (its first two RDATA bytes).
fn covered(r: &Record) -> u16 {
    if r.rdata.len() >= 2 {
        u16::from_be_bytes([r.rdata[0], r.rdata[1]])
    } else {
        0
    }
}

/// The type a record is grouped under: its own, or for an RRSIG the one it covers.
fn group_type(r: &Record) -> u16 {
    if r.rtype == rtype::RRSIG {
        covered(r)
    } else {
        r.rtype
    }
}

/// The name in an RDATA that additional-section processing follows, for the types that
/// have one (NS, MX, SRV, SVCB, HTTPS).
fn target(rtype_: u16, rdata: &[u8]) -> Option<&[u8]> {
    let name = match rtype_ {
        rtype::NS => rdata,
        rtype::MX | rtype::SVCB | rtype::HTTPS => rdata.get(2..)?,
        rtype::SRV => rdata.get(6..)?,
        _ => return None,
    };
    let mut pos = 0;
    while pos < name.len() && name[pos] != 0 {
        pos += name[pos] as usize + 1;
    }
    if pos >= name.len() || pos == 0 {
        // Malformed, or the root (SVCB's "the owner" / MX's null MX).
        return None;
    }
    Some(&name[..=pos])
}

impl Zone {
    /// Builds the zone `origin` (lower-case wire form) from `records` (any order, any case).
    pub fn build(origin: &[u8], records: Vec<Record>) -> Result<Zone, BuildError> {
        let origin: Box<[u8]> = canonical::lower(origin);
        // Sort by (canonical owner, group type, RRSIG after the data, rdata).
        let mut keys: Vec<u8> = Vec::new();
        let mut spans: Vec<(u32, u32)> = Vec::with_capacity(records.len());
        let mut key = Vec::new();
        let mut lowered: Vec<Box<[u8]>> = Vec::with_capacity(records.len());
        for r in &records {
            let low = canonical::lower(&r.owner);
            canonical::sort_key(&low, &mut key);
            spans.push((keys.len() as u32, key.len() as u32));
            keys.extend_from_slice(&key);
            lowered.push(low);
        }
        let key_of = |i: usize| {
            let (s, l) = spans[i];
            &keys[s as usize..(s + l) as usize]
        };
        let mut order: Vec<u32> = (0..records.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| {
            let (ra, rb) = (&records[a as usize], &records[b as usize]);
            key_of(a as usize)
                .cmp(key_of(b as usize))
                .then(group_type(ra).cmp(&group_type(rb)))
                .then((ra.rtype == rtype::RRSIG).cmp(&(rb.rtype == rtype::RRSIG)))
                .then(ra.rdata.cmp(&rb.rdata))
                .then(a.cmp(&b))
        });
        drop(keys);
        drop(spans);

        let mut b = Builder {
            zone: Zone {
                origin: origin.clone(),
                class: 0,
                serial: 0,
                names: Vec::new(),
                data: Vec::new(),
                nodes: Vec::new(),
                sets: Vec::new(),
                extras: Vec::new(),
                index: HashTable::new(),
                hasher: FixedState::with_seed(0x5eed_2015_cafe_f00d),
                nsec3: None,
                records: 0,
                signed: false,
                history: Vec::new(),
            },
            nsec3_nodes: Vec::new(),
        };

        // The SOA decides the class; it must be at the apex and alone.
        let soas: Vec<usize> = (0..records.len())
            .filter(|&i| records[i].rtype == rtype::SOA)
            .collect();
        let Some(&soa) = soas.first() else {
            return Err(BuildError {
                record: None,
                message: "no SOA record for the zone's origin".into(),
            });
        };
        if *lowered[soa] != *origin {
            return Err(BuildError::at(
                soa,
                "SOA record not at the zone's origin".into(),
            ));
        }
        if let Some(&second) = soas.get(1) {
            return Err(BuildError::at(second, "more than one SOA record".into()));
        }
        b.zone.class = records[soa].class;
        let soa_rd = &records[soa].rdata;
        if soa_rd.len() < 20 {
            return Err(BuildError::at(soa, "SOA RDATA too short".into()));
        }
        let t = soa_rd.len() - 20;
        b.zone.serial =
            u32::from_be_bytes([soa_rd[t], soa_rd[t + 1], soa_rd[t + 2], soa_rd[t + 3]]);

        // The apex node first, so that every later name finds its ancestors.
        b.node(&origin);
        let mut i = 0;
        while i < order.len() {
            let first = order[i] as usize;
            let owner = &lowered[first];
            let mut j = i;
            while j < order.len() && lowered[order[j] as usize] == *owner {
                j += 1;
            }
            let group: Vec<usize> = order[i..j].iter().map(|&k| k as usize).collect();
            for &k in &group {
                if records[k].class != b.zone.class {
                    return Err(BuildError::at(
                        k,
                        format!(
                            "record class {} differs from the zone's class {}",
                            records[k].class, b.zone.class
                        ),
                    ));
                }
                if !canonical::is_at_or_below(owner, &origin) {
                    return Err(BuildError::at(k, "out of zone data".into()));
                }
            }
            let is_nsec3 = group
                .iter()
                .all(|&k| group_type(&records[k]) == rtype::NSEC3)
                && canonical::parent(owner) == &*origin;
            b.add_owner(owner, &records, &group, is_nsec3)?;
            i = j;
        }
        b.zone.records = records.len();
        drop(lowered);
        drop(records);
        b.finish()
    }
}

struct Builder {
    zone: Zone,
    nsec3_nodes: Vec<Node>,
}

impl Builder {
    /// Adds a node for `lower` (its ancestors must exist) and indexes it.
    fn node(&mut self, lower: &[u8]) -> u32 {
        let z = &mut self.zone;
        let idx = z.nodes.len() as u32;
        let name = z.names.len() as u32;
        z.names.extend_from_slice(lower);
        z.nodes.push(Node {
            name,
            name_len: lower.len() as u8,
            flags: 0,
            first: z.sets.len() as u32,
            count: 0,
        });
        let h = z.hash(lower);
        let (nodes, names, hasher) = (&z.nodes, &z.names, &z.hasher);
        z.index.insert_unique(h, idx, |&i| {
            let n = &nodes[i as usize];
            hasher.hash_one(&names[n.name as usize..n.name as usize + n.name_len as usize])
        });
        idx
    }

    /// Adds the records of one owner name (already sorted by type).
    fn add_owner(
        &mut self,
        owner: &[u8],
        records: &[Record],
        group: &[usize],
        is_nsec3: bool,
    ) -> Result<(), BuildError> {
        let idx = if is_nsec3 {
            let name = self.zone.names.len() as u32;
            self.zone.names.extend_from_slice(owner);
            self.nsec3_nodes.push(Node {
                name,
                name_len: owner.len() as u8,
                flags: 0,
                first: 0,
                count: 0,
            });
            None
        } else if *owner == *self.zone.origin {
            Some(0)
        } else {
            // The empty non-terminals between the apex and this name, top down.
            let depth = canonical::label_count(owner) - canonical::label_count(&self.zone.origin);
            for up in (1..depth).rev() {
                let mut anc = owner;
                for _ in 0..up {
                    anc = canonical::parent(anc);
                }
                if self.zone.find(anc).is_none() {
                    self.node(anc);
                }
            }
            Some(self.node(owner))
        };
        // Data sets first (by type), then signature sets (by covered type).
        let first = self.zone.sets.len() as u32;
        let mut data_sets = Vec::new();
        let mut sig_sets = Vec::new();
        let mut k = 0;
        while k < group.len() {
            let r0 = &records[group[k]];
            let (rt, cov) = (r0.rtype, group_type(r0));
            let mut end = k;
            while end < group.len()
                && records[group[end]].rtype == rt
                && group_type(&records[group[end]]) == cov
            {
                end += 1;
            }
            let data = self.zone.data.len() as u32;
            let mut count = 0u16;
            let mut last: Option<&[u8]> = None;
            for &g in &group[k..end] {
                let r = &records[g];
                // Duplicates are one record (RFC 2181 §5).
                if last == Some(&r.rdata) {
                    continue;
                }
                last = Some(&r.rdata);
                if r.rdata.len() > usize::from(u16::MAX) {
                    return Err(BuildError::at(g, "RDATA longer than 65535 bytes".into()));
                }
                self.zone.data.extend_from_slice(&r.ttl.to_be_bytes());
                self.zone
                    .data
                    .extend_from_slice(&(r.rdata.len() as u16).to_be_bytes());
                self.zone.data.extend_from_slice(&r.rdata);
                count = count.checked_add(1).ok_or_else(|| {
                    BuildError::at(g, "more than 65535 records in one RRset".into())
                })?;
            }
            let set = Set {
                rtype: rt,
                covers: cov,
                data,
                count,
                sigs: NONE,
                extra: 0,
                nextra: 0,
            };
            if rt == rtype::RRSIG {
                sig_sets.push((set, group[k]));
            } else {
                data_sets.push((set, group[k]));
            }
            k = end;
        }
        // The rules of coexistence.
        let has = |t: u16| data_sets.iter().any(|(s, _)| s.rtype == t);
        if let Some((cname, at)) = data_sets.iter().find(|(s, _)| s.rtype == rtype::CNAME) {
            if cname.count > 1 {
                return Err(BuildError::at(
                    *at,
                    "more than one CNAME record at a name".into(),
                ));
            }
            let other = data_sets.iter().find(|(s, _)| {
                !matches!(
                    s.rtype,
                    rtype::CNAME | rtype::NSEC | rtype::RRSIG | 25 /* KEY */
                )
            });
            if let Some((_, at)) = other {
                return Err(BuildError::at(
                    *at,
                    "CNAME and other data at the same name".into(),
                ));
            }
            if *owner == *self.zone.origin {
                return Err(BuildError::at(*at, "CNAME at the zone's origin".into()));
            }
        }
        if let Some((d, at)) = data_sets.iter().find(|(s, _)| s.rtype == rtype::DNAME)
            && d.count > 1
        {
            return Err(BuildError::at(
                *at,
                "more than one DNAME record at a name".into(),
            ));
        }
        let mut flags = 0;
        if *owner != *self.zone.origin && has(rtype::NS) {
            flags |= flag::CUT;
        }
        if has(rtype::DNAME) {
            flags |= flag::DNAME;
        }
        if has(rtype::CNAME) {
            flags |= flag::CNAME;
        }
        if has(rtype::NSEC) {
            flags |= flag::NSEC;
        }
        let base = first as usize;
        let nd = data_sets.len();
        for (mut set, _) in data_sets {
            if let Some(p) = sig_sets.iter().position(|(s, _)| s.covers == set.rtype) {
                set.sigs = (base + nd + p) as u32;
            }
            self.zone.sets.push(set);
        }
        for (set, _) in sig_sets {
            self.zone.sets.push(set);
        }
        let count = (self.zone.sets.len() - base) as u16;
        let node = match idx {
            Some(i) => &mut self.zone.nodes[i as usize],
            None => self.nsec3_nodes.last_mut().expect("pushed above"),
        };
        node.first = first;
        node.count = count;
        node.flags |= flags;
        Ok(())
    }

    /// Marks occluded names, links additional-section targets, sets up NSEC3.
    fn finish(mut self) -> Result<Zone, BuildError> {
        let z = &mut self.zone;
        if z.find_set(&z.nodes[0], rtype::SOA).is_none() {
            return Err(BuildError {
                record: None,
                message: "no SOA record for the zone's origin".into(),
            });
        }
        // Occlusion: below a cut, or below a DNAME (the apex's too).
        let apex_dname = z.nodes[0].flags & flag::DNAME != 0;
        for i in 1..z.nodes.len() {
            let name = z.name_of(&z.nodes[i]).to_vec();
            let mut anc: &[u8] = canonical::parent(&name);
            let mut occluded = false;
            while anc.len() > z.origin.len() {
                if let Some(a) = z.find(anc) {
                    let f = z.nodes[a as usize].flags;
                    if f & (flag::CUT | flag::DNAME) != 0 {
                        occluded = true;
                        break;
                    }
                }
                anc = canonical::parent(anc);
            }
            if occluded || apex_dname {
                z.nodes[i].flags |= flag::OCCLUDED;
            }
        }
        // Additional-section targets: A/AAAA of in-zone names; glue (occluded names) only
        // for NS sets.
        let mut extras = Vec::new();
        for si in 0..z.sets.len() {
            let s = z.sets[si];
            if s.rtype != s.covers {
                continue;
            }
            let start = extras.len();
            let mut buf = [0u8; 255];
            for rr in z.rrs(&s) {
                let Some(t) = target(s.rtype, rr.rdata) else {
                    continue;
                };
                let low = canonical::lower_into(t, &mut buf);
                if !canonical::is_at_or_below(low, &z.origin) {
                    continue;
                }
                let Some(n) = z.find(low) else { continue };
                let node = &z.nodes[n as usize];
                if node.flags & flag::OCCLUDED != 0 && s.rtype != rtype::NS {
                    continue;
                }
                let has_addr =
                    z.find_set(node, rtype::A).is_some() || z.find_set(node, rtype::AAAA).is_some();
                if has_addr && !extras[start..].contains(&n) {
                    extras.push(n);
                }
            }
            z.sets[si].extra = start as u32;
            z.sets[si].nextra = (extras.len() - start) as u16;
        }
        z.extras = extras;
        z.signed = z.find_set(&z.nodes[0], rtype::DNSKEY).is_some();
        z.nsec3 = nsec3::chain(z, std::mem::take(&mut self.nsec3_nodes))?;
        z.names.shrink_to_fit();
        z.data.shrink_to_fit();
        z.nodes.shrink_to_fit();
        z.sets.shrink_to_fit();
        z.extras.shrink_to_fit();
        Ok(self.zone)
    }
}
