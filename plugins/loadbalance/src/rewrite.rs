//! Reordering the records of a reply in its wire form. The policies ([`crate::order`])
//! give each section's new order; this module moves the records:
//!
//! - in place when every record that moves is an A (or every one an AAAA) with the same
//!   owner bytes as the record whose place it takes: only TTL, class and RDATA change
//!   places, RDATA holds no names, and no pointer can be broken (the common case: an
//!   answer of addresses for the question name, from hosts, forward, the cache);
//! - else by writing the reply anew into a per-core buffer, names expanded and compressed
//!   again against the new message ([`crate::compress`]), since a moved record would leave
//!   pointers into names that are no longer where they were.
//!
//! OPT and TSIG stay at the end of the additional section, where they are.

use crate::compress::Table;
use crate::order::{self, Item};
use crate::weights::Weights;
use ringdns_plugin::reverse::Cidr;
use ringdns_plugin::wire::rtype::{A, AAAA, OPT, SRV, TSIG};
use ringdns_plugin::wire::{
    Record, Section, copy_rdata, expand_name, rdata_names_compressible, records,
};
use std::net::IpAddr;

/// The policy a reply is reordered by, as [`crate::Config`] holds it.
pub enum Policy<'w> {
    /// `round_robin`.
    RoundRobin,
    /// `weighted`, with the current weights.
    Weighted(&'w Weights),
}

/// A core's working room: grown to the largest reply seen, then reused, so that reordering
/// allocates nothing.
pub struct Scratch {
    recs: Vec<Record>,
    items: Vec<Item>,
    local: Vec<usize>,
    perm: Vec<usize>,
    order: Vec<usize>,
    tmp: Vec<usize>,
    buf: Vec<u8>,
    name: Vec<u8>,
    table: Table,
    /// The shuffles' generator.
    pub rng: fastrand::Rng,
}

impl Scratch {
    /// Room for a typical reply.
    pub fn new(rng: fastrand::Rng) -> Scratch {
        Scratch {
            recs: Vec::with_capacity(64),
            items: Vec::with_capacity(64),
            local: Vec::with_capacity(64),
            perm: Vec::with_capacity(64),
            order: Vec::with_capacity(64),
            tmp: Vec::with_capacity(64),
            buf: Vec::with_capacity(4096),
            name: Vec::with_capacity(256),
            table: Table::default(),
            rng,
        }
    }
}

/// How a reply was changed, for the tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Done {
    /// Nothing moved (or the reply could not be walked).
    Unchanged,
    /// Records swapped in place.
    InPlace,
    /// The reply was written anew.
    Reencoded,
}

/// Reorders the records of the NOERROR reply `msg` to a query of type `qtype`; a new
/// encoding longer than `max` (and than the reply was) is dropped and the reply left as it
/// was.
pub fn rewrite(
    msg: &mut Vec<u8>,
    qtype: u16,
    policy: &Policy<'_>,
    prefer: &[Cidr],
    s: &mut Scratch,
    max: usize,
) -> Done {
    s.recs.clear();
    let question_end = {
        let Ok(mut it) = records(msg) else {
            return Done::Unchanged;
        };
        for r in it.by_ref() {
            match r {
                Ok(r) => s.recs.push(r),
                Err(_) => return Done::Unchanged,
            }
        }
        it.question_end()
    };
    // SRV answers too: CoreDNS weighs the addresses of their additional section.
    let weigh = matches!(qtype, A | AAAA | SRV);
    s.perm.clear();
    let mut lo = 0;
    for section in Section::ALL {
        let hi = lo
            + s.recs[lo..]
                .iter()
                .take_while(|r| r.section == section)
                .count();
        let answer_or_extra = section != Section::Authority;
        let shuffle = matches!(policy, Policy::RoundRobin);
        let weighted = match policy {
            Policy::Weighted(w) if weigh && answer_or_extra => Some(*w),
            _ => None,
        };
        let sort = !prefer.is_empty() && answer_or_extra;
        s.local.clear();
        s.local
            .extend((lo..hi).filter(|&i| !matches!(s.recs[i].rtype, OPT | TSIG)));
        if shuffle || weighted.is_some() || sort {
            items(msg, s, weighted);
            let Scratch {
                items,
                order: o,
                tmp,
                rng,
                ..
            } = s;
            if shuffle {
                order::round_robin(items, o, tmp, rng);
            } else if weighted.is_some() {
                order::weighted(items, o, tmp, rng);
            } else {
                o.clear();
                o.extend(0..items.len());
            }
            if sort {
                order::prefer(items, o, tmp, prefer);
            }
            for &k in s.order.iter() {
                s.perm.push(s.local[k]);
            }
        } else {
            s.perm.extend_from_slice(&s.local);
        }
        s.perm
            .extend((lo..hi).filter(|&i| matches!(s.recs[i].rtype, OPT | TSIG)));
        lo = hi;
    }
    if s.perm.iter().enumerate().all(|(i, &j)| i == j) {
        return Done::Unchanged;
    }
    if in_place(msg, s) {
        return Done::InPlace;
    }
    reencode(msg, s, question_end);
    if s.buf.len() > max && s.buf.len() > msg.len() {
        return Done::Unchanged;
    }
    msg.clear();
    msg.extend_from_slice(&s.buf);
    Done::Reencoded
}

/// Fills `s.items` for the records `s.local` names.
fn items(msg: &[u8], s: &mut Scratch, weights: Option<&Weights>) {
    s.items.clear();
    for &i in &s.local {
        let r = &s.recs[i];
        let rd = &msg[r.rdata.clone()];
        let ip = match (r.rtype, rd.len()) {
            (A, 4) => Some(IpAddr::from(<[u8; 4]>::try_from(rd).unwrap_or_default())),
            (AAAA, 16) => Some(IpAddr::from(<[u8; 16]>::try_from(rd).unwrap_or_default())),
            _ => None,
        };
        let weight = match (weights, ip) {
            (Some(w), Some(ip)) => {
                s.name.clear();
                if expand_name(msg, r.owner.start, msg.len(), &mut s.name).is_ok() {
                    // Length bytes are below 64, so lower-casing the whole name is safe.
                    s.name.make_ascii_lowercase();
                    w.weight(&s.name, ip)
                } else {
                    1
                }
            }
            _ => 1,
        };
        s.items.push(Item {
            rtype: r.rtype,
            ip,
            weight,
        });
    }
}

/// The fast path: when every record that moves is of the type and has the owner bytes and
/// length of the one whose place it takes, and is an A or AAAA, swaps TTL, class and RDATA
/// in place. Returns false, with `msg` untouched, when the reply is not of that kind.
fn in_place(msg: &mut [u8], s: &mut Scratch) -> bool {
    let (mut lo, mut hi) = (usize::MAX, 0);
    for (i, &j) in s.perm.iter().enumerate() {
        if i == j {
            continue;
        }
        let (a, b) = (&s.recs[i], &s.recs[j]);
        if a.rtype != b.rtype
            || !matches!(a.rtype, A | AAAA)
            || a.range.len() != b.range.len()
            || msg[a.owner.clone()] != msg[b.owner.clone()]
        {
            return false;
        }
        lo = lo.min(a.range.start);
        hi = hi.max(a.range.end);
    }
    s.buf.clear();
    s.buf.extend_from_slice(&msg[lo..hi]);
    for (i, &j) in s.perm.iter().enumerate() {
        if i != j {
            let (to, from) = (&s.recs[i], &s.recs[j]);
            let from = from.owner.end - lo..from.range.end - lo;
            msg[to.owner.end..to.range.end].copy_from_slice(&s.buf[from]);
        }
    }
    true
}

/// The slow path: header and question copied, then the records in `s.perm`'s order into
/// `s.buf`, names compressed against the new message. A name that cannot be expanded
/// (which [`records`] would have refused) is copied as it was.
fn reencode(msg: &[u8], s: &mut Scratch, question_end: usize) {
    let Scratch {
        recs,
        perm,
        buf,
        name,
        table,
        ..
    } = s;
    buf.clear();
    buf.extend_from_slice(&msg[..question_end]);
    table.clear();
    if question_end > 12 {
        table.note_name(buf, 12);
    }
    for &i in perm.iter() {
        let r = &recs[i];
        name.clear();
        match expand_name(msg, r.owner.start, msg.len(), name) {
            Ok(_) => table.write(buf, name, true),
            Err(_) => buf.extend_from_slice(&msg[r.owner.clone()]),
        }
        buf.extend_from_slice(&msg[r.owner.end..r.owner.end + 8]);
        let len_at = buf.len();
        buf.extend_from_slice(&[0, 0]);
        rdata(msg, r, buf, name, table);
        let len = u16::try_from(buf.len() - len_at - 2).unwrap_or(u16::MAX);
        buf[len_at..len_at + 2].copy_from_slice(&len.to_be_bytes());
    }
}

/// Writes a record's RDATA: the names of RFC 1035's types compressed, the names of other
/// known types expanded (RFC 3597 §4: never compressed), anything else as it is. RDATA
/// whose names cannot be read is copied as it came.
fn rdata(msg: &[u8], r: &Record, buf: &mut Vec<u8>, name: &mut Vec<u8>, table: &mut Table) {
    let start = buf.len();
    let compress = rdata_names_compressible(r.rtype);
    let written = copy_rdata(msg, r, buf, |out, pos, end| {
        name.clear();
        let next = expand_name(msg, pos, end, name)?;
        table.write(out, name, compress);
        Ok(next)
    });
    if written.is_err() {
        buf.truncate(start);
        table.forget_from(start);
        buf.extend_from_slice(&msg[r.rdata.clone()]);
    }
}
