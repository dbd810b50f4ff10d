//! The plugin on wire replies: the rewrite's two paths, the policies through them, and
//! what is left alone, served in process with a next plugin that writes a given reply.

use super::*;
use crate::rewrite::{Done, rewrite};
use ringdns_plugin::reverse::Cidr;
use ringdns_plugin::wire::rcode::NXDOMAIN;
use ringdns_plugin::wire::rtype;
use ringdns_plugin::wire::rtype::{A, AAAA, CNAME, MX, NS, OPT, TXT};
use ringdns_plugin::wire::{
    MessageWriter, Owner, Query, QueryBuilder, Section, expand_name, expand_rdata, name_to_wire,
    records,
};
use std::collections::HashSet;

fn query(name: &str, qtype: u16) -> Vec<u8> {
    let wire = ringdns_testkit::wire_name(name);
    let n = ringdns_plugin::wire::Name::from_wire(&wire).unwrap();
    QueryBuilder::new(n, qtype).id(7).build()
}

/// A reply to `name`/`qtype` with `records` (section, owner, type, RDATA), then an OPT.
fn reply(
    name: &str,
    qtype: u16,
    rcode: u8,
    recs: &[(Section, Owner<'_>, u16, Vec<u8>)],
) -> Vec<u8> {
    let q = query(name, qtype);
    let q = Query::parse(&q).unwrap();
    let mut out = Vec::new();
    let mut w = MessageWriter::reply(&q, &mut out, rcode);
    for (s, o, t, rd) in recs {
        w.push(*s, *o, *t, 1, 300, rd).unwrap();
    }
    w.push_opt(1232, false, &[]).unwrap();
    w.finish();
    out
}

/// Every record, names expanded: (section, owner, type, TTL, RDATA).
/// A record as the tests compare it.
type Shown = (Section, Vec<u8>, u16, u32, Vec<u8>);

fn shown(m: &[u8]) -> Vec<Shown> {
    records(m)
        .unwrap()
        .map(|r| {
            let r = r.unwrap();
            let (mut o, mut rd) = (Vec::new(), Vec::new());
            expand_name(m, r.owner.start, m.len(), &mut o).unwrap();
            expand_rdata(m, &r, &mut rd).unwrap();
            (r.section, o, r.rtype, r.ttl(m), rd)
        })
        .collect()
}

fn sorted<T: Ord + Clone>(v: &[T]) -> Vec<T> {
    let mut v = v.to_vec();
    v.sort();
    v
}

fn scratch(seed: u64) -> Scratch {
    Scratch::new(fastrand::Rng::with_seed(seed))
}

fn wire(n: &str) -> Vec<u8> {
    name_to_wire(n).unwrap()
}

fn four_a() -> Vec<u8> {
    let recs: Vec<_> = (1..=4)
        .map(|k| (Section::Answer, Owner::Question, A, vec![10, 0, 0, k]))
        .collect();
    reply("www.example.org", A, NOERROR, &recs)
}

#[test]
fn addresses_of_the_question_are_shuffled_in_place() {
    let original = four_a();
    let before = shown(&original);
    let mut s = scratch(1);
    let mut firsts = HashSet::new();
    for _ in 0..200 {
        let mut m = original.clone();
        let done = rewrite(&mut m, A, &Policy::RoundRobin, &[], &mut s, 512);
        assert_ne!(done, Done::Reencoded);
        assert_eq!(m.len(), original.len());
        let after = shown(&m);
        assert_eq!(sorted(&after), sorted(&before), "the same records");
        assert_eq!(after.last().unwrap().2, OPT, "OPT stays last");
        firsts.insert(after[0].4.clone());
    }
    assert!(firsts.len() > 1, "the first address changes: {firsts:?}");
}

#[test]
fn a_cname_stays_first_and_moved_names_are_compressed_anew() {
    // www CNAME web; web A ×3 (owner a pointer into the CNAME's RDATA? written out here);
    // an MX and a TXT owned by other names, all mixed.
    let web = wire("web.example.org");
    let mut mx = vec![0, 10];
    mx.extend(wire("mail.example.org"));
    let recs = vec![
        (Section::Answer, Owner::Wire(&web), A, vec![192, 0, 2, 1]),
        (Section::Answer, Owner::Question, MX, mx),
        (Section::Answer, Owner::Question, CNAME, web.clone()),
        (Section::Answer, Owner::Wire(&web), A, vec![192, 0, 2, 2]),
        (Section::Answer, Owner::Question, TXT, b"\x02hi".to_vec()),
        (Section::Answer, Owner::Wire(&web), A, vec![192, 0, 2, 3]),
        (
            Section::Authority,
            Owner::Question,
            NS,
            wire("ns.example.org"),
        ),
        (
            Section::Additional,
            Owner::Wire(&web),
            AAAA,
            vec![0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        ),
    ];
    let original = reply("www.example.org", A, NOERROR, &recs);
    let before = shown(&original);
    let mut s = scratch(2);
    let mut firsts = HashSet::new();
    for _ in 0..100 {
        let mut m = original.clone();
        assert_eq!(
            rewrite(&mut m, A, &Policy::RoundRobin, &[], &mut s, 4096),
            Done::Reencoded
        );
        let after = shown(&m);
        assert_eq!(
            sorted(&after),
            sorted(&before),
            "the same records, names intact"
        );
        let types: Vec<u16> = after
            .iter()
            .filter(|r| r.0 == Section::Answer)
            .map(|r| r.2)
            .collect();
        assert_eq!(types, [CNAME, TXT, A, A, A, MX]);
        assert_eq!(after.last().unwrap().2, OPT);
        assert!(
            m.len() <= original.len(),
            "compressed again: {} > {}",
            m.len(),
            original.len()
        );
        firsts.insert(after[2].4.clone());
    }
    assert!(firsts.len() > 1);
}

#[test]
fn prefer_orders_by_subnet_and_weighted_by_weight() {
    let ips: [[u8; 4]; 4] = [
        [8, 8, 8, 8],
        [192, 168, 1, 5],
        [10, 9, 20, 1],
        [10, 9, 20, 2],
    ];
    let recs: Vec<_> = ips
        .iter()
        .map(|ip| (Section::Answer, Owner::Question, A, ip.to_vec()))
        .collect();
    let original = reply("www.example.org", A, NOERROR, &recs);
    let subnets = [
        Cidr::parse("10.9.20.0/24").unwrap(),
        Cidr::parse("192.168.1.0/24").unwrap(),
    ];
    let mut s = scratch(3);
    for _ in 0..50 {
        let mut m = original.clone();
        rewrite(&mut m, A, &Policy::RoundRobin, &subnets, &mut s, 512);
        let first: Vec<Vec<u8>> = shown(&m).into_iter().take(4).map(|r| r.4).collect();
        assert!(first[0][0] == 10 && first[1][0] == 10, "{first:?}");
        assert_eq!(first[2], [192, 168, 1, 5]);
        assert_eq!(first[3], [8, 8, 8, 8]);
    }
    let w = weights::parse("www.example.org\n10.9.20.1 5\n8.8.8.8 0x\n", "w").unwrap_err();
    assert!(w.starts_with("wrong weight value"));
    let w = weights::parse("WWW.example.org\n10.9.20.1 6\n192.168.1.5 2\n", "w").unwrap();
    let mut counts = std::collections::HashMap::new();
    for _ in 0..3000 {
        let mut m = original.clone();
        rewrite(&mut m, A, &Policy::Weighted(&w), &[], &mut s, 512);
        *counts.entry(shown(&m)[0].4.clone()).or_insert(0u32) += 1;
    }
    // 6 : 2 : 1 : 1 out of 10, the owner matched whatever its case.
    let n = |ip: [u8; 4]| counts.get(ip.as_slice()).copied().unwrap_or(0);
    assert!((1600..2000).contains(&n([10, 9, 20, 1])), "{counts:?}");
    assert!((450..750).contains(&n([192, 168, 1, 5])), "{counts:?}");
    assert!((180..420).contains(&n([8, 8, 8, 8])), "{counts:?}");
    // Not for other query types.
    let mut m = original.clone();
    assert_eq!(
        rewrite(&mut m, TXT, &Policy::Weighted(&w), &[], &mut s, 512),
        Done::Unchanged
    );
}

/// A next plugin that writes a given reply.
struct Writes(Vec<u8>);

impl Handler for Writes {
    async fn serve(&self, req: &mut Request<'_>) -> Outcome {
        Ok(self.write(req))
    }
    fn serve_now(&self, req: &mut Request<'_>) -> Option<Status> {
        Some(self.write(req))
    }
    fn is_end(&self) -> bool {
        false
    }
    fn after_batch(&self) {}
}

impl Writes {
    fn write(&self, req: &mut Request<'_>) -> Status {
        req.reply.clear();
        req.reply.extend_from_slice(&self.0);
        Status::written()
    }
}

fn plugin(corefile: &str) -> LoadBalance {
    let (_, config) = ringdns_testkit::config::<LoadBalance>(corefile).unwrap();
    LoadBalance::build(
        &Arc::new(config),
        &CoreInfo {
            index: 0,
            cpu: 0,
            cores: 1,
        },
    )
    .unwrap()
}

fn served(lb: &LoadBalance, qtype: u16, reply: &[u8]) -> Vec<Vec<u8>> {
    let packet = query("www.example.org", qtype);
    let q = Query::parse(&packet).unwrap();
    let mut out = Vec::new();
    let at = "127.0.0.1:5353".parse().unwrap();
    let mut req = Request::new(
        q,
        at,
        at,
        ringdns_plugin::Proto::Udp,
        ".",
        "dns://:53",
        &mut out,
        false,
    );
    lb.serve_now(&mut req, &Writes(reply.to_vec())).unwrap();
    shown(&out).into_iter().map(|r| r.4).collect()
}

#[test]
fn only_noerror_replies_and_no_transfers_are_touched() {
    let lb = plugin(". {\n loadbalance\n}\n");
    let original = four_a();
    let first = |r: Vec<Vec<u8>>| r[0].clone();
    let seen: HashSet<_> = (0..100).map(|_| first(served(&lb, A, &original))).collect();
    assert!(seen.len() > 1, "served NOERROR replies are shuffled");
    let mut nx = original.clone();
    nx[3] = (nx[3] & 0xF0) | NXDOMAIN;
    for (qtype, reply) in [(A, &nx), (AXFR, &original), (IXFR, &original)] {
        for _ in 0..30 {
            assert_eq!(first(served(&lb, qtype, reply)), [10, 0, 0, 1], "{qtype}");
        }
    }
}

#[test]
fn a_reencoding_that_outgrows_the_client_keeps_the_reply() {
    // An SRV whose target is a pointer to the question (compressed, as some servers write
    // it) before a CNAME: regrouping re-encodes, and RFC 3597 names are written whole, so
    // the new reply is longer than the old.
    let mut srv = vec![0, 1, 0, 1, 0, 53];
    srv.extend([0xC0, 12]);
    let recs = vec![
        (Section::Answer, Owner::Question, rtype::SRV, srv),
        (
            Section::Answer,
            Owner::Question,
            CNAME,
            wire("web.example.org"),
        ),
    ];
    let original = reply("www.example.org", rtype::SRV, NOERROR, &recs);
    let mut s = scratch(4);
    let mut m = original.clone();
    assert_eq!(
        rewrite(
            &mut m,
            rtype::SRV,
            &Policy::RoundRobin,
            &[],
            &mut s,
            original.len()
        ),
        Done::Unchanged
    );
    assert_eq!(m, original);
    assert_eq!(
        rewrite(&mut m, rtype::SRV, &Policy::RoundRobin, &[], &mut s, 4096),
        Done::Reencoded
    );
    assert!(m.len() > original.len());
    let after = shown(&m);
    assert_eq!(after[0].2, CNAME);
    assert_eq!(after[1].2, rtype::SRV);
    assert_eq!(
        sorted(&after),
        sorted(&shown(&original)),
        "the SRV target expands alike"
    );
}

#[test]
fn tsig_and_opt_stay_last() {
    let recs = vec![
        (Section::Additional, Owner::Question, A, vec![10, 0, 0, 1]),
        (Section::Additional, Owner::Question, MX, {
            let mut v = vec![0, 5];
            v.extend(wire("mx.example.org"));
            v
        }),
        (
            Section::Additional,
            Owner::Question,
            CNAME,
            wire("c.example.org"),
        ),
        (
            Section::Additional,
            Owner::Wire(&[0]),
            rtype::TSIG,
            vec![0; 8],
        ),
    ];
    let original = reply("www.example.org", A, NOERROR, &recs);
    let mut s = scratch(5);
    let mut m = original.clone();
    assert_eq!(
        rewrite(&mut m, A, &Policy::RoundRobin, &[], &mut s, 4096),
        Done::Reencoded
    );
    let types: Vec<u16> = shown(&m).iter().map(|r| r.2).collect();
    assert_eq!(types, [CNAME, A, MX, rtype::TSIG, OPT]);
}
