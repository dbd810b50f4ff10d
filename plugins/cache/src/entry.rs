//! One cached reply: which replies may be stored (CoreDNS's rules), how long, the wire bytes
//! with the offsets of their TTL fields, and writing a hit back out without allocating.

use super::config::CacheConfig;
use ringdns_plugin::wire::be::{get_u32, put_u32};
use ringdns_plugin::wire::rcode::{NOERROR, NOTIMP, NXDOMAIN, SERVFAIL};
use ringdns_plugin::wire::rtype::{AXFR, IXFR, NS, OPT, SOA};
use ringdns_plugin::wire::{
    Header, HeaderMut, Name, QUESTION_OFFSET, Query, Record, Section, flags, opcode,
};
use ringdns_plugin::wire::{name_spans, rdata_names, records, reply};
use std::time::{Duration, Instant};

/// Which of the two caches an entry lives in, and how its lifetime was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// NOERROR with an answer, a referral, or an empty NOERROR without SOA.
    Success,
    /// NXDOMAIN or NODATA with an SOA (RFC 2308).
    Denial,
    /// SERVFAIL or NOTIMP, kept for the `servfail` duration.
    ServFail,
}

/// Why a reply is not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Not cacheable by the rules (TC, REFUSED, transfers, no SOA on a denial, …).
    Rule,
    /// The reply's question is not the query's: counted as a drop.
    Mismatch,
}

/// A stored reply.
pub struct Entry {
    /// One allocation, so that a hit follows one pointer from the map's node (each is a
    /// likely cache miss, and they were the larger part of a hit's time): the lower-case
    /// query name (wire), then the reply without its OPT (TTL fields holding each record's
    /// clamped TTL at store time), then the offsets of the TTL fields in the reply
    /// (native-endian u16 each), then the `zone/wildcard` metadata of the reply (text).
    data: Box<[u8]>,
    /// Length of the name at the start of `data`.
    name_len: u8,
    /// Length of the reply after the name.
    reply_len: u16,
    /// Length of the wildcard text at the end of `data` (0: none published).
    wildcard_len: u16,
    /// Query type.
    pub qtype: u16,
    /// Query class.
    pub qclass: u16,
    /// DO (bit 0) and CD (bit 1) of the query.
    pub bits: u8,
    /// When it was stored.
    pub stored: Instant,
    /// How long it is fresh.
    pub duration: Duration,
    /// Which cache.
    pub kind: Kind,
    /// Hits in the current prefetch window.
    pub hits: u32,
    /// Last hit, for the prefetch window.
    pub last_hit: Instant,
    /// A background refresh is running for it.
    pub refreshing: bool,
    /// No new refresh before this (serve_stale recheck after a failed one).
    pub retry_after: Option<Instant>,
}

impl Entry {
    /// Bytes this entry holds, for the byte budget.
    pub fn size(&self) -> usize {
        self.data.len() + std::mem::size_of::<Entry>()
    }

    /// Packs the name, the reply and its TTL offsets into one entry's storage; `None` when
    /// they do not fit its length fields (a name over 255 bytes, a reply over 64 KiB or an
    /// offset past it, which no DNS message has).
    fn pack(
        name_lower: &[u8],
        reply: &[u8],
        ttl_offsets: &[usize],
        wildcard: &str,
    ) -> Option<(Box<[u8]>, u8, u16, u16)> {
        let name_len = u8::try_from(name_lower.len()).ok()?;
        let reply_len = u16::try_from(reply.len()).ok()?;
        let wildcard_len = u16::try_from(wildcard.len()).ok()?;
        let mut data = Vec::with_capacity(
            name_lower.len() + reply.len() + 2 * ttl_offsets.len() + wildcard.len(),
        );
        data.extend_from_slice(name_lower);
        data.extend_from_slice(reply);
        for &off in ttl_offsets {
            data.extend_from_slice(&u16::try_from(off).ok()?.to_ne_bytes());
        }
        data.extend_from_slice(wildcard.as_bytes());
        Some((data.into_boxed_slice(), name_len, reply_len, wildcard_len))
    }

    /// The lower-case query name (wire).
    fn name(&self) -> &[u8] {
        &self.data[..usize::from(self.name_len)]
    }

    /// The stored reply: no OPT, TTL fields as stored.
    pub fn reply(&self) -> &[u8] {
        let start = usize::from(self.name_len);
        &self.data[start..start + usize::from(self.reply_len)]
    }

    /// Where the TTL fields are in the reply.
    pub fn ttl_offsets(&self) -> impl Iterator<Item = usize> + '_ {
        let start = usize::from(self.name_len) + usize::from(self.reply_len);
        let end = self.data.len() - usize::from(self.wildcard_len);
        self.data[start..end]
            .chunks_exact(2)
            .map(|c| usize::from(u16::from_ne_bytes([c[0], c[1]])))
    }

    /// The `zone/wildcard` metadata the reply was stored with (CoreDNS's `item.wildcard`),
    /// to publish again on its hits; `None` when none was published.
    pub fn wildcard(&self) -> Option<&str> {
        if self.wildcard_len == 0 {
            return None;
        }
        let start = self.data.len() - usize::from(self.wildcard_len);
        std::str::from_utf8(&self.data[start..]).ok()
    }

    /// Whether the entry is for this query (after the hash matched).
    pub fn is_for(&self, name: &Name<'_>, qtype: u16, qclass: u16, bits: u8) -> bool {
        self.qtype == qtype
            && self.qclass == qclass
            && self.bits == bits
            && name.eq_lowercase(self.name())
    }

    /// Whether the entry is for the query `q` (after the hash matched).
    pub fn is_for_query(&self, q: &Query<'_>) -> bool {
        self.is_for(&q.qname(), q.qtype(), q.qclass(), key_bits(q))
    }

    /// Seconds since it was stored (whole seconds, as TTLs count).
    pub fn age(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.stored)
    }
}

#[cfg(test)]
impl Entry {
    /// An A/IN success entry for `name`, holding `reply` with TTL fields at `ttl_offsets`,
    /// stored at `now` and fresh for a minute.
    pub fn for_test(name: &[u8], reply: &[u8], ttl_offsets: &[usize], now: Instant) -> Entry {
        let (data, name_len, reply_len, wildcard_len) =
            Entry::pack(name, reply, ttl_offsets, "").unwrap();
        Entry {
            data,
            name_len,
            reply_len,
            wildcard_len,
            qtype: 1,
            qclass: 1,
            bits: 0,
            stored: now,
            duration: Duration::from_secs(60),
            kind: Kind::Success,
            hits: 0,
            last_hit: now,
            refreshing: false,
            retry_after: None,
        }
    }
}

/// The DO/CD bits of a query as the key sees them.
pub fn key_bits(q: &Query<'_>) -> u8 {
    u8::from(q.do_bit()) | (u8::from(q.cd()) << 1)
}

fn clamp(ttl: u32, min: Duration, max: Duration) -> u32 {
    let (min, max) = (min.as_secs() as u32, max.as_secs().max(1) as u32);
    ttl.clamp(min.min(max), max)
}

fn under_any(name: &ringdns_plugin::wire::Name<'_>, zones: &[Vec<u8>]) -> bool {
    zones.iter().any(|z| name.is_subdomain_of(z))
}

/// Whether a name of record `rr` of `reply` (its owner, or one in its RDATA) is read,
/// through compression pointers, from bytes of a TTL field (`ttl_offsets`, ascending: those
/// of the records before it and its own, as pointers only lead backwards), or does not walk.
/// Well-formed replies point at names only, never into fixed fields.
fn reads_ttls(reply: &[u8], rr: &Record, ttl_offsets: &[usize]) -> bool {
    let bad = std::cell::Cell::new(false);
    let mut check = |s: std::ops::Range<usize>| {
        // The first TTL field that ends after the span starts; it overlaps if it starts
        // before the span ends.
        let i = ttl_offsets.partition_point(|&o| o + 4 <= s.start);
        if ttl_offsets.get(i).is_some_and(|&o| o < s.end) {
            bad.set(true);
        }
    };
    let owner = name_spans(reply, rr.owner.start, reply.len(), &mut check);
    let rdata = rdata_names(rr, |pos, end| name_spans(reply, pos, end, &mut check));
    owner.is_err() || rdata.is_err() || bad.get()
}

/// Decides whether `reply` (the answer to `q` the rest of the chain wrote) can be stored;
/// if so clamps its TTLs in place (so the client sees what later hits will show) and
/// returns the entry, which keeps `wildcard` (the `zone/wildcard` metadata published for
/// the reply; empty: none).
#[allow(clippy::too_many_arguments)]
pub fn build(
    reply: &mut [u8],
    q: &Query<'_>,
    name_lower: &[u8],
    wildcard: &str,
    cfg: &CacheConfig,
    disable_success: &[Vec<u8>],
    disable_denial: &[Vec<u8>],
    now: Instant,
) -> Result<Entry, Skip> {
    let Some(header) = Header::of(reply) else {
        return Err(Skip::Rule);
    };
    if header.tc() || header.opcode() != opcode::QUERY {
        return Err(Skip::Rule);
    }
    let rcode = header.rcode();
    let qtype = q.qtype();
    if qtype == AXFR || qtype == IXFR {
        return Err(Skip::Rule);
    }
    let question = q.question_bytes();
    if !reply::repeats_question(reply, question) {
        return Err(Skip::Mismatch);
    }
    let (mut answers, mut matching, mut ns, mut soa_neg) = (0, false, 0, None::<u32>);
    let mut min_ttl = u32::MAX;
    let mut opt: Option<std::ops::Range<usize>> = None;
    let mut ttl_offsets: Vec<usize> = Vec::new();
    let mut soa_offsets: Vec<usize> = Vec::new();
    let walk = records(reply).map_err(|_| Skip::Rule)?;
    for rr in walk {
        let rr = rr.map_err(|_| Skip::Rule)?;
        if rr.rtype != OPT {
            ttl_offsets.push(rr.ttl_offset);
        }
        if reads_ttls(reply, &rr, &ttl_offsets) {
            // The TTLs are rewritten in place (now, and aged on every hit): a name read
            // through one would change with it.
            return Err(Skip::Rule);
        }
        if rr.rtype == OPT {
            // Only the additional section's OPT is EDNS (RFC 6891 §6.1.1); one elsewhere makes
            // the reply malformed, and removing it would leave that section's count wrong.
            if rr.section != Section::Additional || reply[rr.ttl_offset] != 0 {
                return Err(Skip::Rule); // misplaced, or an extended rcode: not cacheable
            }
            opt = Some(rr.range.clone());
            continue;
        }
        let ttl = get_u32(reply, rr.ttl_offset);
        min_ttl = min_ttl.min(ttl);
        match rr.section {
            Section::Answer => {
                answers += 1;
                matching |= rr.rtype == qtype;
            }
            Section::Authority if rr.rtype == SOA => {
                // RFC 2308: the negative TTL is the smaller of the SOA's TTL and MINIMUM.
                let rd = &reply[rr.rdata.clone()];
                let minimum = if rd.len() >= 4 {
                    get_u32(rd, rd.len() - 4)
                } else {
                    ttl
                };
                soa_neg = Some(soa_neg.unwrap_or(u32::MAX).min(ttl.min(minimum)));
                soa_offsets.push(rr.ttl_offset);
            }
            Section::Authority if rr.rtype == NS => ns += 1,
            _ => {}
        }
    }
    if let Some(o) = &opt
        && o.end != reply.len()
    {
        return Err(Skip::Rule); // OPT not last: removing it would move records
    }
    let name = q.qname();
    let (kind, duration_secs) = match rcode {
        NOERROR if answers > 0 && matching => (
            Kind::Success,
            clamp(min_ttl, cfg.success.min_ttl, cfg.success.max_ttl),
        ),
        NOERROR if soa_neg.is_some() => (
            Kind::Denial,
            clamp(soa_neg.unwrap_or(0), cfg.denial.min_ttl, cfg.denial.max_ttl),
        ),
        NOERROR if answers > 0 => return Err(Skip::Rule),
        // Referrals and empty NOERROR replies: CoreDNS keeps them for the minimum TTL.
        NOERROR => {
            let _ = ns;
            (Kind::Success, cfg.success.min_ttl.as_secs() as u32)
        }
        NXDOMAIN if soa_neg.is_some() => (
            Kind::Denial,
            clamp(soa_neg.unwrap_or(0), cfg.denial.min_ttl, cfg.denial.max_ttl),
        ),
        SERVFAIL | NOTIMP if !cfg.servfail.is_zero() => {
            (Kind::ServFail, cfg.servfail.as_secs().max(1) as u32)
        }
        _ => return Err(Skip::Rule),
    };
    if duration_secs == 0
        || (kind == Kind::Success && under_any(&name, disable_success))
        || (kind == Kind::Denial && under_any(&name, disable_denial))
    {
        return Err(Skip::Rule);
    }
    // Each record keeps its own TTL, clamped into the cache's range; a denial's SOA carries
    // the negative TTL.
    let (lo, hi) = match kind {
        Kind::Success => (cfg.success.min_ttl, cfg.success.max_ttl),
        _ => (cfg.denial.min_ttl, cfg.denial.max_ttl),
    };
    for &off in &ttl_offsets {
        let t = if kind == Kind::ServFail || (kind == Kind::Denial && soa_offsets.contains(&off)) {
            duration_secs
        } else {
            clamp(get_u32(reply, off), lo, hi).max(duration_secs)
        };
        put_u32(reply, off, t);
    }
    let end = opt.as_ref().map_or(reply.len(), |o| o.start);
    let (mut data, name_len, reply_len, wildcard_len) =
        Entry::pack(name_lower, &reply[..end], &ttl_offsets, wildcard).ok_or(Skip::Rule)?;
    if opt.is_some() {
        // The OPT is not stored: one additional record fewer.
        let mut header = HeaderMut::new(&mut data[name_lower.len()..]);
        let n = header.get().arcount().saturating_sub(1);
        header.set_count(Section::Additional, n);
    }
    Ok(Entry {
        data,
        name_len,
        reply_len,
        wildcard_len,
        qtype,
        qclass: q.qclass(),
        bits: key_bits(q),
        stored: now,
        duration: Duration::from_secs(u64::from(duration_secs)),
        kind,
        hits: 0,
        last_hit: now,
        refreshing: false,
        retry_after: None,
    })
}

/// Writes the cached reply for `q` into `out`: the query's ID and question (its exact case),
/// RD and CD from the query, AA cleared (a cache is not the authority), AD only for clients
/// that asked with DO or AD, and each TTL from `ttl` (stored TTL → served TTL).
pub fn write_hit(e: &Entry, q: &Query<'_>, out: &mut Vec<u8>, ttl: impl Fn(u32) -> u32) {
    out.clear();
    out.extend_from_slice(e.reply());
    let mut header = HeaderMut::new(out);
    header.set_id(q.id());
    let ad = if q.do_bit() || q.ad() { flags::AD } else { 0 };
    let stored = flags::QR | flags::TC | flags::RA | ad | flags::RCODE_MASK;
    let asked = flags::OPCODE_MASK | flags::RD | flags::CD;
    header.set_flags((header.get().flags() & stored) | (q.flags() & asked));
    let question = q.question_bytes();
    out[QUESTION_OFFSET..QUESTION_OFFSET + question.len()].copy_from_slice(question);
    for off in e.ttl_offsets() {
        let t = ttl(get_u32(out, off));
        put_u32(out, off, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opt_outside_the_additional_section_is_not_stored() {
        let name = Name::from_wire(b"\x01a\x00").unwrap();
        let query = &ringdns_plugin::wire::QueryBuilder::new(name, ringdns_plugin::wire::rtype::A)
            .id(0x1234)
            .build();
        let q = Query::parse(query).unwrap();
        let cfg = super::super::setup::parse(
            &mut ringdns_plugin::corefile::Dispenser::new(&[]),
            &ringdns_plugin::BlockSetup::default(),
        )
        .unwrap();
        let build_from = |counts: [u8; 3]| {
            let mut reply = query.to_vec();
            let mut header = HeaderMut::new(&mut reply);
            header.set_flags(flags::QR | flags::RD | flags::RA);
            for (section, n) in Section::ALL.into_iter().zip(counts) {
                header.set_count(section, n.into());
            }
            // A 192.0.2.1 for the question's name, then an OPT
            reply.extend_from_slice(
                b"\xC0\x0C\x00\x01\x00\x01\x00\x00\x01\x2C\x00\x04\xC0\x00\x02\x01",
            );
            reply.extend_from_slice(b"\x00\x00\x29\x04\xD0\x00\x00\x80\x00\x00\x00");
            build(
                &mut reply,
                &q,
                b"\x01a\x00",
                "",
                &cfg,
                &[],
                &[],
                Instant::now(),
            )
            .map(|e| e.reply().len())
        };
        assert_eq!(
            build_from([1, 0, 1]),
            Ok(query.len() + 16),
            "the OPT is not stored"
        );
        assert_eq!(
            build_from([1, 1, 0]).err(),
            Some(Skip::Rule),
            "an OPT in authority"
        );
        assert_eq!(
            build_from([2, 0, 0]).err(),
            Some(Skip::Rule),
            "an OPT in the answer"
        );
    }

    #[test]
    fn one_allocation_gives_back_the_name_reply_and_offsets() {
        let reply: Vec<u8> = (0..300u16).map(|i| i as u8).collect();
        let e = Entry::for_test(b"\x01a\x00", &reply, &[12, 290], Instant::now());
        assert_eq!(e.name(), b"\x01a\x00");
        assert_eq!(e.reply(), &reply[..]);
        assert_eq!(e.ttl_offsets().collect::<Vec<_>>(), [12, 290]);
        let name = |w: &'static [u8]| Name::from_wire(w).unwrap();
        assert!(e.is_for(&name(b"\x01A\x00"), 1, 1, 0));
        assert!(!e.is_for(&name(b"\x01b\x00"), 1, 1, 0));
        assert!(!e.is_for(&name(b"\x01a\x00"), 28, 1, 0));
        assert_eq!(e.wildcard(), None);
        assert!(
            Entry::pack(&[0; 256], &reply, &[], "").is_none(),
            "name over 255 bytes"
        );
        assert!(
            Entry::pack(b"\x00", &vec![0; 70_000], &[], "").is_none(),
            "reply over 64 KiB"
        );
    }

    #[test]
    fn a_name_read_through_a_ttl_field_is_found() {
        // One question (a. A IN, ending at 19), then records at 19 whose TTL is at 25..29.
        let msg = |records: &[&[u8]]| {
            let mut m = vec![0, 0, 0x81, 0x80, 0, 1, 0, records.len() as u8, 0, 0, 0, 0];
            m.extend_from_slice(b"\x01a\x00\x00\x01\x00\x01");
            for r in records {
                m.extend_from_slice(r);
            }
            m
        };
        let a = b"\xC0\x0C\x00\x01\x00\x01\x00\x00\x01\x2C\x00\x04\xC0\x00\x02\x01";
        // An owner pointing at the first TTL's zero byte: the root name, until the TTL ages.
        let owner_in_ttl = b"\xC0\x19\x00\x01\x00\x01\x00\x00\x01\x2C\x00\x04\xC0\x00\x02\x02";
        // A CNAME whose target points into its own TTL field.
        let target_in_ttl = b"\xC0\x0C\x00\x05\x00\x01\x00\x00\x01\x2C\x00\x02\xC0\x19";
        // As `build` asks: each record against the TTLs up to its own.
        let any_reads = |m: &[u8]| {
            let mut offsets = Vec::new();
            records(m).unwrap().any(|r| {
                let r = r.unwrap();
                offsets.push(r.ttl_offset);
                reads_ttls(m, &r, &offsets)
            })
        };
        assert!(!any_reads(&msg(&[a, a])));
        assert!(any_reads(&msg(&[a, owner_in_ttl])));
        assert!(any_reads(&msg(&[target_in_ttl])));
    }

    #[test]
    fn the_wildcard_follows_the_offsets() {
        let (data, name_len, reply_len, wildcard_len) =
            Entry::pack(b"\x01a\x00", &[7; 40], &[12, 30], "*.example.org.").unwrap();
        let mut e = Entry::for_test(b"\x01a\x00", &[7; 40], &[12, 30], Instant::now());
        (e.data, e.name_len, e.reply_len, e.wildcard_len) =
            (data, name_len, reply_len, wildcard_len);
        assert_eq!(e.reply(), &[7; 40][..]);
        assert_eq!(e.ttl_offsets().collect::<Vec<_>>(), [12, 30]);
        assert_eq!(e.wildcard(), Some("*.example.org."));
    }
}
