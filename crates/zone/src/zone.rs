//! The zone store: one zone's records arranged for answering, built once and then only
//! read, by every core at once (it is `Send + Sync` and holds no lock). Names and RDATA
//! live in two arenas; nodes (one per owner name, empty non-terminals included) are kept
//! in canonical order for NSEC lookups and found by a hash index for everything else.

use crate::canonical;
use foldhash::fast::FixedState;
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// "No such set" in index fields.
pub(crate) const NONE: u32 = u32::MAX;

/// Node flags.
pub(crate) mod flag {
    /// NS records at a name other than the apex: a delegation.
    pub const CUT: u8 = 1;
    /// Below a delegation or a DNAME: not authoritative (glue at most).
    pub const OCCLUDED: u8 = 2;
    /// Holds a DNAME.
    pub const DNAME: u8 = 4;
    /// Holds a CNAME.
    pub const CNAME: u8 = 8;
    /// Holds an NSEC (an authoritative name of a signed zone).
    pub const NSEC: u8 = 16;
}

/// One owner name.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    /// Offset of the lower-case wire name in `Zone::names`.
    pub name: u32,
    pub name_len: u8,
    pub flags: u8,
    /// The node's sets: `sets[first..first + count]`, data sets by type, then RRSIG sets.
    pub first: u32,
    pub count: u16,
}

/// One RRset (or the RRSIGs covering one type at a node).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Set {
    /// The record type (RRSIG for a signature set).
    pub rtype: u16,
    /// The type a signature set covers (`rtype` for a data set).
    pub covers: u16,
    /// Records: `count` entries in `Zone::data` from `data`, each `ttl u32, len u16, rdata`.
    pub data: u32,
    pub count: u16,
    /// The signature set covering this set, or NONE.
    pub sigs: u32,
    /// Nodes whose addresses go into the additional section with this set
    /// (`Zone::extras[extra..extra + nextra]`).
    pub extra: u32,
    pub nextra: u16,
}

/// NSEC3 parameters and the hashed chain (RFC 5155), when the zone is signed with NSEC3.
#[derive(Debug)]
pub(crate) struct Nsec3 {
    pub iterations: u16,
    pub salt: Box<[u8]>,
    /// The NSEC3 owners, sorted by their hash.
    pub hashes: Vec<[u8; 20]>,
    /// The node of each hash (same index), in `Zone::nsec3_nodes`.
    pub nodes: Vec<Node>,
}

/// A zone, ready to answer from.
#[derive(Debug)]
pub struct Zone {
    pub(crate) origin: Box<[u8]>,
    pub(crate) class: u16,
    pub(crate) serial: u32,
    pub(crate) names: Vec<u8>,
    pub(crate) data: Vec<u8>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) sets: Vec<Set>,
    pub(crate) extras: Vec<u32>,
    pub(crate) index: HashTable<u32>,
    pub(crate) hasher: FixedState,
    pub(crate) nsec3: Option<Nsec3>,
    pub(crate) records: usize,
    /// The apex has a DNSKEY: DO queries get signatures and proofs.
    pub(crate) signed: bool,
    /// The steps that led to this version, for IXFR ([`crate::journal`]).
    pub(crate) history: crate::journal::History,
}

/// One record of a set, as stored.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rr<'z> {
    pub ttl: u32,
    pub rdata: &'z [u8],
}

impl Zone {
    /// The zone's apex, lower-case wire form.
    pub fn origin(&self) -> &[u8] {
        &self.origin
    }

    /// The SOA serial, for reload checks, IXFR and NOTIFY.
    pub fn serial(&self) -> u32 {
        self.serial
    }

    /// The zone's class (IN for every zone file CoreDNS loads).
    pub fn class(&self) -> u16 {
        self.class
    }

    /// How many records the zone holds (for logs and metrics).
    pub fn len(&self) -> usize {
        self.records
    }

    /// Whether the zone holds no records (never true for a built zone: it has an SOA).
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// Whether the zone is signed (its apex has a DNSKEY).
    pub fn is_signed(&self) -> bool {
        self.signed
    }

    pub(crate) fn hash(&self, name: &[u8]) -> u64 {
        self.hasher.hash_one(name)
    }

    pub(crate) fn name_of(&self, n: &Node) -> &[u8] {
        &self.names[n.name as usize..n.name as usize + n.name_len as usize]
    }

    /// The node of a lower-case wire name.
    pub(crate) fn find(&self, lower: &[u8]) -> Option<u32> {
        let h = self.hash(lower);
        self.index
            .find(h, |&i| self.name_of(&self.nodes[i as usize]) == lower)
            .copied()
    }

    /// The data set of `rtype` at a node (not a signature set).
    pub(crate) fn find_set(&self, n: &Node, rtype: u16) -> Option<&Set> {
        self.sets_of(n)
            .iter()
            .find(|s| s.rtype == rtype && s.covers == rtype)
    }

    pub(crate) fn sets_of(&self, n: &Node) -> &[Set] {
        &self.sets[n.first as usize..n.first as usize + n.count as usize]
    }

    /// The records of a set.
    pub(crate) fn rrs(&self, s: &Set) -> impl Iterator<Item = Rr<'_>> + '_ {
        let mut pos = s.data as usize;
        (0..s.count).map(move |_| {
            let d = &self.data[pos..];
            let ttl = u32::from_be_bytes([d[0], d[1], d[2], d[3]]);
            let len = u16::from_be_bytes([d[4], d[5]]) as usize;
            pos += 6 + len;
            Rr {
                ttl,
                rdata: &d[6..6 + len],
            }
        })
    }

    /// The nodes whose addresses go into additional with a set.
    pub(crate) fn extras_of(&self, s: &Set) -> &[u32] {
        &self.extras[s.extra as usize..s.extra as usize + s.nextra as usize]
    }

    /// The first record of a set.
    pub(crate) fn first_rr(&self, s: &Set) -> Rr<'_> {
        self.rrs(s).next().expect("sets are never empty")
    }

    /// The NSEC-holding node whose NSEC covers (or matches) `lower`: the predecessor's,
    /// or the nearest NSEC-holding node before it.
    pub(crate) fn covering_nsec(&self, lower: &[u8]) -> Option<u32> {
        let mut i = self
            .nodes
            .partition_point(|n| canonical::cmp(self.name_of(n), lower).is_le());
        while i > 0 {
            i -= 1;
            if self.nodes[i].flags & flag::NSEC != 0 {
                return Some(i as u32);
            }
        }
        None
    }
}
