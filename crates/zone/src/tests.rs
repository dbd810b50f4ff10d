//! The answering rules, each on a small zone, checked by decoding the reply with
//! hickory-proto.

use crate::{Answered, Record, Zone};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{Record as HRecord, RecordType};
use ringdns_wire::{MessageWriter, Query, name_to_wire, rtype};

/// A record from `owner ttl TYPE rdata` (absolute names; the types the tests use).
fn rr(line: &str) -> Record {
    let f: Vec<&str> = line.split_whitespace().collect();
    let owner = name_to_wire(f[0]).unwrap().into_boxed_slice();
    let ttl: u32 = f[1].parse().unwrap();
    let n = |s: &str| name_to_wire(s).unwrap();
    let (t, rdata): (u16, Vec<u8>) = match f[2] {
        "A" => (
            rtype::A,
            f[3].parse::<std::net::Ipv4Addr>()
                .unwrap()
                .octets()
                .to_vec(),
        ),
        "AAAA" => (
            rtype::AAAA,
            f[3].parse::<std::net::Ipv6Addr>()
                .unwrap()
                .octets()
                .to_vec(),
        ),
        "NS" => (rtype::NS, n(f[3])),
        "CNAME" => (rtype::CNAME, n(f[3])),
        "DNAME" => (rtype::DNAME, n(f[3])),
        "PTR" => (rtype::PTR, n(f[3])),
        "MX" => {
            let mut v = f[3].parse::<u16>().unwrap().to_be_bytes().to_vec();
            v.extend(n(f[4]));
            (rtype::MX, v)
        }
        "SRV" => {
            let mut v = Vec::new();
            for x in &f[3..6] {
                v.extend(x.parse::<u16>().unwrap().to_be_bytes());
            }
            v.extend(n(f[6]));
            (rtype::SRV, v)
        }
        "TXT" => {
            let s = f[3].as_bytes();
            let mut v = vec![s.len() as u8];
            v.extend(s);
            (rtype::TXT, v)
        }
        "DS" => {
            let mut v = f[3].parse::<u16>().unwrap().to_be_bytes().to_vec();
            v.push(f[4].parse().unwrap());
            v.push(f[5].parse().unwrap());
            v.extend(
                (0..f[6].len() / 2)
                    .map(|i| u8::from_str_radix(&f[6][2 * i..2 * i + 2], 16).unwrap()),
            );
            (rtype::DS, v)
        }
        "SOA" => {
            let mut v = n(f[3]);
            v.extend(n(f[4]));
            for x in &f[5..10] {
                v.extend(x.parse::<u32>().unwrap().to_be_bytes());
            }
            (rtype::SOA, v)
        }
        other => panic!("test helper lacks type {other}"),
    };
    Record {
        owner,
        rtype: t,
        class: 1,
        ttl,
        rdata: rdata.into_boxed_slice(),
    }
}

fn zone(origin: &str, lines: &str) -> Zone {
    let records = lines
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(rr)
        .collect();
    Zone::build(&name_to_wire(origin).unwrap(), records).unwrap()
}

const EXAMPLE: &str = "
example.org. 3600 SOA ns1.example.org. admin.example.org. 7 7200 3600 1209600 300
example.org. 3600 NS ns1.example.org.
example.org. 3600 NS ns2.example.org.
example.org. 3600 MX 10 mail.example.org.
example.org. 3600 A 192.0.2.1
ns1.example.org. 3600 A 192.0.2.53
ns2.example.org. 3600 AAAA 2001:db8::53
mail.example.org. 3600 A 192.0.2.25
www.example.org. 300 A 192.0.2.80
www.example.org. 300 A 192.0.2.81
www.example.org. 300 TXT hello
alias.example.org. 60 CNAME www.example.org.
alias2.example.org. 60 CNAME alias.example.org.
nodata-end.example.org. 60 CNAME mail.example.org.
outside.example.org. 60 CNAME www.example.net.
loop1.example.org. 60 CNAME loop2.example.org.
loop2.example.org. 60 CNAME loop1.example.org.
_sip._udp.example.org. 60 SRV 0 5 5060 mail.example.org.
a.b.c.example.org. 60 A 192.0.2.9
*.c.example.org. 60 A 192.0.2.99
*.wild.example.org. 60 A 192.0.2.77
*.wild.example.org. 60 TXT wild
explicit.wild.example.org. 60 A 192.0.2.78
*.cw.example.org. 60 CNAME www.example.org.
sub.example.org. 3600 NS ns.sub.example.org.
sub.example.org. 3600 NS ns1.example.org.
sub.example.org. 3600 DS 12345 8 2 0123456789abcdef
ns.sub.example.org. 3600 A 192.0.2.200
deep.ns.sub.example.org. 3600 A 192.0.2.201
ext.example.org. 3600 NS ns.example.net.
dn.example.org. 60 DNAME example.com.
";

/// Answers `qname`/`qtype` from `z` and decodes the reply, as asked over TCP.
fn ask_with(z: &Zone, qname: &str, qtype: RecordType, dnssec: bool) -> (Message, Answered) {
    ask_over(z, qname, qtype, dnssec, false)
}

/// [`ask_with`], over UDP when `udp`.
fn ask_over(
    z: &Zone,
    qname: &str,
    qtype: RecordType,
    dnssec: bool,
    udp: bool,
) -> (Message, Answered) {
    let mut m = Message::query();
    m.metadata.id = 7;
    m.add_query(hickory_proto::op::Query::query(
        hickory_proto::rr::Name::from_ascii(qname).unwrap(),
        qtype,
    ));
    let packet = m.to_vec().unwrap();
    let q = Query::parse(&packet).unwrap();
    let mut out = Vec::with_capacity(4096);
    let mut w = MessageWriter::reply(&q, &mut out, 0);
    let a = z.answer(q.qname_bytes(), q.qtype(), dnssec, udp, &mut w);
    w.finish();
    (Message::from_vec(&out).unwrap(), a)
}

fn ask(z: &Zone, qname: &str, qtype: RecordType) -> Message {
    ask_with(z, qname, qtype, false).0
}

/// A section as sorted `name TYPE rdata` lines (names lower-cased).
fn lines(rrs: &[HRecord]) -> Vec<String> {
    let mut v: Vec<String> = rrs
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {}",
                r.name.to_ascii().to_lowercase(),
                r.ttl,
                r.record_type(),
                r.data
            )
        })
        .collect();
    v.sort();
    v
}

fn types(rrs: &[HRecord]) -> Vec<RecordType> {
    rrs.iter().map(HRecord::record_type).collect()
}

#[test]
fn an_exact_match_is_authoritative_with_the_apex_ns_in_authority() {
    let z = zone("example.org.", EXAMPLE);
    let m = ask(&z, "WWW.Example.ORG.", RecordType::A);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.metadata.authoritative);
    assert_eq!(m.queries[0].name.to_ascii(), "WWW.Example.ORG.");
    assert_eq!(
        lines(&m.answers),
        [
            "www.example.org. 300 A 192.0.2.80",
            "www.example.org. 300 A 192.0.2.81"
        ]
    );
    assert_eq!(
        lines(&m.authorities),
        [
            "example.org. 3600 NS ns1.example.org.",
            "example.org. 3600 NS ns2.example.org."
        ]
    );
    assert!(m.additionals.is_empty());
}

#[test]
fn the_apex_ns_query_carries_the_addresses_and_no_authority() {
    let z = zone("example.org.", EXAMPLE);
    let m = ask(&z, "example.org.", RecordType::NS);
    assert_eq!(types(&m.answers), [RecordType::NS, RecordType::NS]);
    assert!(m.authorities.is_empty());
    assert_eq!(
        lines(&m.additionals),
        [
            "ns1.example.org. 3600 A 192.0.2.53",
            "ns2.example.org. 3600 AAAA 2001:db8::53"
        ]
    );
}

#[test]
fn mx_and_srv_targets_in_the_zone_get_their_addresses() {
    let z = zone("example.org.", EXAMPLE);
    let m = ask(&z, "example.org.", RecordType::MX);
    assert_eq!(
        lines(&m.additionals),
        ["mail.example.org. 3600 A 192.0.2.25"]
    );
    let m = ask(&z, "_sip._udp.example.org.", RecordType::SRV);
    assert_eq!(
        lines(&m.additionals),
        ["mail.example.org. 3600 A 192.0.2.25"]
    );
}

#[test]
fn nodata_and_nxdomain_carry_the_soa_with_the_negative_ttl() {
    let z = zone("example.org.", EXAMPLE);
    let m = ask(&z, "www.example.org.", RecordType::MX);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.answers.is_empty());
    assert_eq!(types(&m.authorities), [RecordType::SOA]);
    // min(SOA TTL 3600, MINIMUM 300).
    assert_eq!(m.authorities[0].ttl, 300);
    let m = ask(&z, "nope.example.org.", RecordType::A);
    assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    assert!(m.metadata.authoritative);
    assert_eq!(types(&m.authorities), [RecordType::SOA]);
}

#[test]
fn an_empty_non_terminal_is_nodata_and_a_wildcard_above_does_not_cover_it() {
    let z = zone("example.org.", EXAMPLE);
    // b.c exists as an empty non-terminal (a.b.c has data): NODATA, not *.c's A.
    let m = ask(&z, "b.c.example.org.", RecordType::A);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.answers.is_empty());
    assert_eq!(types(&m.authorities), [RecordType::SOA]);
    // Below the ENT nothing matches: *.c is not the closest encloser's wildcard.
    let m = ask(&z, "x.b.c.example.org.", RecordType::A);
    assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    // Beside it, the wildcard answers.
    let m = ask(&z, "q.c.example.org.", RecordType::A);
    assert_eq!(lines(&m.answers), ["q.c.example.org. 60 A 192.0.2.99"]);
}

#[test]
fn wildcards_synthesise_for_absent_names_only() {
    let z = zone("example.org.", EXAMPLE);
    let m = ask(&z, "Any.Wild.example.org.", RecordType::TXT);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert_eq!(lines(&m.answers), ["any.wild.example.org. 60 TXT wild"]);
    let m = ask(&z, "explicit.wild.example.org.", RecordType::A);
    assert_eq!(
        lines(&m.answers),
        ["explicit.wild.example.org. 60 A 192.0.2.78"]
    );
    // The explicit name has no TXT: NODATA, the wildcard does not fill in.
    let m = ask(&z, "explicit.wild.example.org.", RecordType::TXT);
    assert!(m.answers.is_empty());
    // The wildcard has no MX: NODATA.
    let m = ask(&z, "x.wild.example.org.", RecordType::MX);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.answers.is_empty());
    // Two labels below: the closest encloser is still wild.example.org.
    let m = ask(&z, "a.b.wild.example.org.", RecordType::A);
    assert_eq!(lines(&m.answers), ["a.b.wild.example.org. 60 A 192.0.2.77"]);
    // A wildcard CNAME is followed.
    let m = ask(&z, "x.cw.example.org.", RecordType::A);
    assert_eq!(
        lines(&m.answers),
        [
            "www.example.org. 300 A 192.0.2.80",
            "www.example.org. 300 A 192.0.2.81",
            "x.cw.example.org. 60 CNAME www.example.org."
        ]
    );
}

/// A zone for [`the_wildcard_that_answered_is_named`]: wildcards with data, a wildcard
/// CNAME in and out of the zone, a chain into a wildcard, and a `*` that is only an empty
/// non-terminal.
const WILDCARDS: &str = "
example.org. 3600 SOA ns1.example.org. admin.example.org. 7 7200 3600 1209600 300
example.org. 3600 NS ns1.example.org.
ns1.example.org. 3600 A 192.0.2.53
www.example.org. 300 A 192.0.2.80
*.wild.example.org. 60 A 192.0.2.77
explicit.wild.example.org. 60 A 192.0.2.78
*.cw.example.org. 60 CNAME www.example.org.
*.out.example.org. 60 CNAME www.example.net.
chain.example.org. 60 CNAME x.wild.example.org.
a.*.ent.example.org. 60 A 192.0.2.90
";

#[test]
fn the_wildcard_that_answered_is_named() {
    let z = zone("example.org.", WILDCARDS);
    let named = |qname: &str, qtype: RecordType| {
        let (_, a) = ask_with(&z, qname, qtype, false);
        a.wildcard().map(|w| z.wildcard_name(w).to_string())
    };
    let wild = Some("*.wild.example.org.".to_string());
    assert_eq!(named("x.wild.example.org.", RecordType::A), wild);
    assert_eq!(named("A.B.Wild.example.org.", RecordType::A), wild);
    // NODATA from a wildcard with records names it too (CoreDNS: `wildElem != nil`).
    assert_eq!(named("x.wild.example.org.", RecordType::AAAA), wild);
    // A wildcard CNAME, followed inside the zone or left to the caller.
    let cw = Some("*.cw.example.org.".to_string());
    assert_eq!(named("x.cw.example.org.", RecordType::A), cw);
    let (_, a) = ask_with(&z, "x.out.example.org.", RecordType::A, false);
    assert!(matches!(a, Answered::External { .. }));
    assert_eq!(
        a.wildcard().map(|w| z.wildcard_name(w).to_string()),
        Some("*.out.example.org.".to_string())
    );
    // No wildcard: exact names, NXDOMAIN, a chain whose target a wildcard answers (CoreDNS
    // looks the target up through the server), a `*` that is an empty non-terminal.
    for (qname, qtype) in [
        ("explicit.wild.example.org.", RecordType::A),
        ("www.example.org.", RecordType::A),
        ("nope.example.org.", RecordType::A),
        ("chain.example.org.", RecordType::A),
        ("x.ent.example.org.", RecordType::A),
    ] {
        assert_eq!(named(qname, qtype), None, "{qname}");
    }
    let m = ask(&z, "chain.example.org.", RecordType::A);
    assert_eq!(m.answers.len(), 2, "the chain is answered all the same");
    // The empty `*` still synthesises: NODATA, not NXDOMAIN (RFC 4592 §2.2.2).
    let m = ask(&z, "x.ent.example.org.", RecordType::A);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
}

#[test]
fn cname_chains_are_followed_inside_the_zone() {
    let z = zone("example.org.", EXAMPLE);
    let m = ask(&z, "alias2.example.org.", RecordType::A);
    assert_eq!(
        types(&m.answers)[..2],
        [RecordType::CNAME, RecordType::CNAME]
    );
    assert_eq!(m.answers.len(), 4);
    // The CNAME itself when asked for.
    let m = ask(&z, "alias.example.org.", RecordType::CNAME);
    assert_eq!(
        lines(&m.answers),
        ["alias.example.org. 60 CNAME www.example.org."]
    );
    // NODATA at the chain's end: the SOA, not the NS (RFC 2308 §2.2).
    let m = ask(&z, "nodata-end.example.org.", RecordType::AAAA);
    assert_eq!(types(&m.answers), [RecordType::CNAME]);
    assert_eq!(types(&m.authorities), [RecordType::SOA]);
}

#[test]
fn a_cname_out_of_the_zone_is_left_to_the_caller() {
    let z = zone("example.org.", EXAMPLE);
    let (m, a) = ask_with(&z, "outside.example.org.", RecordType::A, false);
    assert_eq!(types(&m.answers), [RecordType::CNAME]);
    match a {
        Answered::External { target, len, .. } => {
            assert_eq!(
                &target[..len as usize],
                &name_to_wire("www.example.net.").unwrap()[..]
            )
        }
        Answered::Done { .. } => panic!("the target is outside the zone"),
    }
}

#[test]
fn a_cname_loop_ends_with_the_chain() {
    let z = zone("example.org.", EXAMPLE);
    let (m, a) = ask_with(&z, "loop1.example.org.", RecordType::A, false);
    assert_eq!(a, Answered::Done { wildcard: None });
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert_eq!(types(&m.answers), [RecordType::CNAME, RecordType::CNAME]);
}

#[test]
fn delegations_refer_with_glue_and_hide_what_is_below() {
    let z = zone("example.org.", EXAMPLE);
    for q in [
        "sub.example.org.",
        "x.sub.example.org.",
        "ns.sub.example.org.",
        "deep.ns.sub.example.org.",
    ] {
        let m = ask(&z, q, RecordType::A);
        assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{q}");
        assert!(!m.metadata.authoritative, "{q}");
        assert!(m.answers.is_empty(), "{q}");
        assert_eq!(
            lines(&m.authorities),
            [
                "sub.example.org. 3600 NS ns.sub.example.org.",
                "sub.example.org. 3600 NS ns1.example.org."
            ],
            "{q}"
        );
        assert_eq!(
            lines(&m.additionals),
            [
                "ns.sub.example.org. 3600 A 192.0.2.200",
                "ns1.example.org. 3600 A 192.0.2.53"
            ],
            "{q}"
        );
    }
    // A delegation to a server outside the zone has no glue.
    let m = ask(&z, "ext.example.org.", RecordType::NS);
    assert_eq!(types(&m.authorities), [RecordType::NS]);
    assert!(m.additionals.is_empty());
}

#[test]
fn ds_is_answered_from_the_parent_side_of_the_cut() {
    let z = zone("example.org.", EXAMPLE);
    let m = ask(&z, "sub.example.org.", RecordType::DS);
    assert!(m.metadata.authoritative);
    assert_eq!(types(&m.answers), [RecordType::DS]);
    let m = ask(&z, "ext.example.org.", RecordType::DS);
    assert!(m.metadata.authoritative);
    assert!(m.answers.is_empty());
    assert_eq!(types(&m.authorities), [RecordType::SOA]);
}

#[test]
fn dname_substitutes_and_synthesises_a_cname() {
    let z = zone("example.org.", EXAMPLE);
    let (m, a) = ask_with(&z, "www.Dn.example.org.", RecordType::A, false);
    // hickory shows DNAME RDATA as opaque: the type, owner and the CNAME tell.
    assert_eq!(types(&m.answers), [RecordType::DNAME, RecordType::CNAME]);
    // Owners above the query name point into it: the client's case.
    assert_eq!(m.answers[0].name.to_ascii(), "Dn.example.org.");
    assert_eq!(
        lines(&m.answers[1..]),
        ["www.dn.example.org. 60 CNAME www.example.com."]
    );
    assert!(matches!(a, Answered::External { .. }));
    // The DNAME owner itself is ordinary data.
    let m = ask(&z, "dn.example.org.", RecordType::DNAME);
    assert_eq!(types(&m.answers), [RecordType::DNAME]);
    let m = ask(&z, "dn.example.org.", RecordType::A);
    assert!(m.answers.is_empty());
}

#[test]
fn any_returns_the_rrsets_of_the_name() {
    let z = zone("example.org.", EXAMPLE);
    let m = ask(&z, "www.example.org.", RecordType::ANY);
    assert_eq!(
        types(&m.answers),
        [RecordType::A, RecordType::A, RecordType::TXT]
    );
    let m = ask(&z, "b.c.example.org.", RecordType::ANY);
    assert!(m.answers.is_empty());
}

#[test]
fn any_over_udp_gets_one_rrset() {
    // RFC 8482 §4.1: over UDP one RRset of the name (against amplification), whole; over
    // TCP every one (`any_returns_the_rrsets_of_the_name`).
    let z = zone("example.org.", EXAMPLE);
    let (m, _) = ask_over(&z, "www.example.org.", RecordType::ANY, false, true);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.metadata.authoritative);
    assert_eq!(
        lines(&m.answers),
        [
            "www.example.org. 300 A 192.0.2.80",
            "www.example.org. 300 A 192.0.2.81"
        ]
    );
    // The apex has four RRsets: one of them, and no addresses in additional.
    let (m, _) = ask_over(&z, "example.org.", RecordType::ANY, false, true);
    let t = types(&m.answers);
    assert!(!t.is_empty());
    assert!(t.iter().all(|x| *x == t[0]), "one RRset: {t:?}");
    assert!(m.additionals.is_empty());
    let (m, _) = ask_over(&z, "example.org.", RecordType::ANY, false, false);
    let mut all = types(&m.answers);
    all.dedup();
    assert_eq!(all.len(), 4, "over TCP all of them: {all:?}");
    // A name without data is NODATA either way.
    let (m, _) = ask_over(&z, "b.c.example.org.", RecordType::ANY, false, true);
    assert!(m.answers.is_empty());
    assert_eq!(types(&m.authorities), [RecordType::SOA]);
}

#[test]
fn a_bad_zone_is_refused_with_the_record_it_is_about() {
    let origin = name_to_wire("example.org.").unwrap();
    let err = Zone::build(&origin, vec![rr("www.example.org. 60 A 192.0.2.1")]).unwrap_err();
    assert_eq!(err.record, None);
    assert!(err.message.contains("no SOA"), "{err:?}");
    let soa = "example.org. 3600 SOA ns1.example.org. admin.example.org. 7 7200 3600 1209600 300";
    let err = Zone::build(
        &origin,
        vec![
            rr(soa),
            rr("x.example.org. 60 CNAME y.example.org."),
            rr("x.example.org. 60 A 192.0.2.1"),
        ],
    )
    .unwrap_err();
    assert!(err.message.contains("CNAME and other data"), "{err:?}");
    let err = Zone::build(&origin, vec![rr(soa), rr("x.example.com. 60 A 192.0.2.1")]).unwrap_err();
    assert_eq!(err.record, Some(1));
    assert!(err.message.contains("out of zone"), "{err:?}");
}
