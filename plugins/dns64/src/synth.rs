//! The synthesis (CoreDNS's `Synthesize`, RFC 6147 §5.1.7): the reply to the client's AAAA
//! query made of the reply to the A lookup, each A record an AAAA record of the prefix
//! with the IPv4 address embedded as RFC 6052 §2.2 places it.

use crate::{Config, final_rcode};
use ringdns_plugin::Request;
use ringdns_plugin::wire::{
    Header, MessageWriter, Owner, Section, expand_name, expand_rdata, records, rtype,
};
use std::net::Ipv6Addr;

/// CoreDNS's TTL for the synthesised records when the reply had no SOA.
const DEFAULT_SOA_TTL: u32 = 600;

/// CoreDNS's `responseShouldDNS64`: not for an NXDOMAIN, and (unless `translate_all`) not
/// when the answer has an AAAA record.
pub fn wants_synthesis(reply: &[u8], translate_all: bool) -> bool {
    let Some(h) = Header::of(reply) else {
        return false;
    };
    if final_rcode(h.rcode()) {
        return false;
    }
    if translate_all {
        return true;
    }
    let Ok(it) = records(reply) else { return false };
    !it.flatten()
        .any(|r| r.section == Section::Answer && r.rtype == rtype::AAAA)
}

/// The TTL of the SOA in the reply's authority section (the last one), or 600: what caps
/// the synthesised records' TTLs (RFC 6147 §5.1.7).
pub fn soa_ttl(reply: &[u8]) -> u32 {
    let Ok(it) = records(reply) else {
        return DEFAULT_SOA_TTL;
    };
    it.flatten()
        .filter(|r| r.section == Section::Authority && r.rtype == rtype::SOA)
        .last()
        .map_or(DEFAULT_SOA_TTL, |r| r.ttl(reply))
}

/// RFC 6052 §2.2: `v4` embedded in `prefix` of `len` bits, skipping bits 64..72 (the "u"
/// octet), the suffix zero.
pub fn embed(prefix: Ipv6Addr, len: u8, v4: [u8; 4]) -> Ipv6Addr {
    let p = prefix.octets();
    let mut out = [0u8; 16];
    let n = usize::from(len / 8);
    out[..n].copy_from_slice(&p[..n]);
    let mut i = n;
    for b in v4 {
        if i == 8 {
            i += 1;
        }
        out[i] = b;
        i += 1;
    }
    Ipv6Addr::from(out)
}

/// Writes the synthesised reply for `req` from `a`, the reply to the A lookup: its TC, its
/// answer (A records made AAAA, TTLs capped at `soa_ttl`, the others as they are), its
/// authority and its additional records. False when `a` does not parse.
pub fn write(req: &mut Request<'_>, a: &[u8], soa_ttl: u32, c: &Config) -> bool {
    let Ok(it) = records(a) else { return false };
    let tc = Header::of(a).is_some_and(|h| h.tc());
    let q = req.query;
    let mut w = MessageWriter::reply(&q, req.reply, 0);
    w.set_tc(tc);
    let (mut owner, mut rdata) = (Vec::with_capacity(256), Vec::with_capacity(64));
    for r in it {
        let Ok(r) = r else { return false };
        if r.rtype == rtype::OPT {
            continue;
        }
        owner.clear();
        rdata.clear();
        if expand_name(a, r.owner.start, a.len(), &mut owner).is_err() {
            return false;
        }
        let o = if owner.eq_ignore_ascii_case(q.qname_bytes()) {
            Owner::Question
        } else {
            Owner::Wire(&owner)
        };
        let pushed = if r.section == Section::Answer && r.rtype == rtype::A && r.rdata.len() == 4 {
            let d = &a[r.rdata.clone()];
            let v6 = embed(c.prefix, c.len, [d[0], d[1], d[2], d[3]]);
            let ttl = r.ttl(a).min(soa_ttl);
            w.push(r.section, o, rtype::AAAA, r.class, ttl, &v6.octets())
        } else {
            if expand_rdata(a, &r, &mut rdata).is_err() {
                return false;
            }
            w.push(r.section, o, r.rtype, r.class, r.ttl(a), &rdata)
        };
        if pushed.is_err() {
            break;
        }
    }
    w.finish();
    req.finalize_reply();
    true
}
