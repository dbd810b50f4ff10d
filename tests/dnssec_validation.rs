//! DNSSEC as a validating resolver sees it: the zone of tests/data/auth/db.dnssec.test,
//! signed at test time by ldns-signzone (tests/common/peers/dnssec.rs) with NSEC as
//! `nsec.test.` and with NSEC3 as `nsec3.test.`, served by ringdns's `file` on loopback, and
//! asked through a real Unbound (tests/common/peers/unbound.rs) that has each zone's KSK DS
//! as trust anchor and reaches ringdns as a stub. Every answer must come back secure (AD)
//! with the right rcode and records: positive, NXDOMAIN, NODATA, wildcard expansion, and the
//! cases around them (an empty non-terminal, wildcard NODATA, a CNAME, DS at a signed and an
//! unsigned cut). A zone of the test's own (`cname.test.`, `cname3.test.`) adds CNAME chains
//! whose every step needs its proof: wildcard CNAMEs, CNAMEs to a missing name or type, a
//! DNAME.
//!
//! Two zones that must *not* validate keep the test honest: `tampered.test.`, whose `www` A
//! was changed after signing, and `wronganchor.test.`, served signed with other keys than
//! the anchor's. Unbound must answer SERVFAIL for them (and the tampered record with CD set),
//! and log no validation failure for any other zone.
//!
//! The same questions go through Unbound asking ringdns over UDP, over TCP only, at 512
//! bytes (truncated answers retried over TCP) and with Unbound's hardening options on. A
//! last test follows a chain of trust: a signed parent (the only anchor) with the DS of a
//! signed child and an unsigned delegation, all three zones served by one ringdns.
//!
//! One test asks ringdns directly, with and without the DO bit: only DO queries get the
//! RRSIGs, NSECs and NSEC3s.
//!
//! Without `unbound` or ldns's tools the test skips loudly; in CI (`CI=true`) it fails.

mod common;

use common::peers::dnssec::{Denial, Signed, sign_zone};
use common::peers::unbound::{StubZone, Unbound};
use common::peers::{self, Zone};
use common::{Server, TempDir, ask, query_full};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{RData, RecordType};
use std::path::{Path, PathBuf};

const A: u16 = 1;
const NS: u16 = 2;
const SOA: u16 = 6;
const MX: u16 = 15;
const TXT: u16 = 16;
const AAAA: u16 = 28;
const DS: u16 = 43;
const DNSKEY: u16 = 48;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/auth")
        .join(name)
}

/// One question and what a validated answer to it is: the rcode and the answer section's
/// records other than RRSIGs, as `owner TYPE rdata` (the owner relative to the zone, `@`
/// for the apex), in any order.
struct Case<'a> {
    name: &'a str,
    qtype: u16,
    rcode: ResponseCode,
    answer: &'a [&'a str],
}

/// The questions every validly signed zone is asked. An expected record `owner TYPE *`
/// matches any RDATA of that owner and type.
const CASES: &[Case<'static>] = &[
    // the apex
    Case {
        name: "",
        qtype: SOA,
        rcode: ResponseCode::NoError,
        answer: &["@ SOA *"],
    },
    Case {
        name: "",
        qtype: NS,
        rcode: ResponseCode::NoError,
        answer: &["@ NS ns1", "@ NS ns2"],
    },
    Case {
        name: "",
        qtype: MX,
        rcode: ResponseCode::NoError,
        answer: &["@ MX 10 mail"],
    },
    Case {
        name: "",
        qtype: DNSKEY,
        rcode: ResponseCode::NoError,
        answer: &["@ DNSKEY *", "@ DNSKEY *"],
    },
    // positive
    Case {
        name: "www",
        qtype: A,
        rcode: ResponseCode::NoError,
        answer: &["www A 192.0.2.80"],
    },
    Case {
        name: "www",
        qtype: AAAA,
        rcode: ResponseCode::NoError,
        answer: &["www AAAA 2001:db8::80"],
    },
    Case {
        name: "www",
        qtype: TXT,
        rcode: ResponseCode::NoError,
        answer: &["www TXT *"],
    },
    Case {
        name: "explicit.wild",
        qtype: A,
        rcode: ResponseCode::NoError,
        answer: &["explicit.wild A 192.0.2.201"],
    },
    // NXDOMAIN: no such name, and no such name below an existing one
    Case {
        name: "nx",
        qtype: A,
        rcode: ResponseCode::NXDomain,
        answer: &[],
    },
    Case {
        name: "nx.www",
        qtype: A,
        rcode: ResponseCode::NXDomain,
        answer: &[],
    },
    // below an empty non-terminal, with no wildcard there (*.c is one level up)
    Case {
        name: "x.b.c",
        qtype: A,
        rcode: ResponseCode::NXDomain,
        answer: &[],
    },
    // before the first name and after the last in canonical order
    Case {
        name: "0",
        qtype: A,
        rcode: ResponseCode::NXDomain,
        answer: &[],
    },
    Case {
        name: "zzz",
        qtype: A,
        rcode: ResponseCode::NXDomain,
        answer: &[],
    },
    // NODATA: an existing name without the type; an empty non-terminal
    Case {
        name: "www",
        qtype: MX,
        rcode: ResponseCode::NoError,
        answer: &[],
    },
    Case {
        name: "ns1",
        qtype: AAAA,
        rcode: ResponseCode::NoError,
        answer: &[],
    },
    Case {
        name: "b.c",
        qtype: A,
        rcode: ResponseCode::NoError,
        answer: &[],
    },
    // an explicit name beside the wildcard: its own NODATA, not the wildcard's TXT
    Case {
        name: "explicit.wild",
        qtype: TXT,
        rcode: ResponseCode::NoError,
        answer: &[],
    },
    // wildcard expansions, one and two labels deep, and a wildcard without the type
    Case {
        name: "foo.wild",
        qtype: A,
        rcode: ResponseCode::NoError,
        answer: &["foo.wild A 192.0.2.200"],
    },
    Case {
        name: "foo.wild",
        qtype: TXT,
        rcode: ResponseCode::NoError,
        answer: &["foo.wild TXT *"],
    },
    Case {
        name: "a.b.wild",
        qtype: A,
        rcode: ResponseCode::NoError,
        answer: &["a.b.wild A 192.0.2.200"],
    },
    Case {
        name: "x.c",
        qtype: A,
        rcode: ResponseCode::NoError,
        answer: &["x.c A 192.0.2.210"],
    },
    Case {
        name: "foo.wild",
        qtype: MX,
        rcode: ResponseCode::NoError,
        answer: &[],
    },
    // a CNAME to an in-zone name
    Case {
        name: "alias",
        qtype: A,
        rcode: ResponseCode::NoError,
        answer: &["alias CNAME www", "www A 192.0.2.80"],
    },
    // DS at a signed cut; no DS at an unsigned one
    Case {
        name: "secure",
        qtype: DS,
        rcode: ResponseCode::NoError,
        answer: &[
            "secure DS 12345 13 2 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF",
        ],
    },
    Case {
        name: "insecure",
        qtype: DS,
        rcode: ResponseCode::NoError,
        answer: &[],
    },
];

/// A second zone, of this test's own, for the CNAME chains a signed answer must prove
/// every step of: wildcard CNAMEs (one, two in a row, one to a wildcard), CNAMEs to a
/// missing name and to a missing type, and a DNAME. Signed as `cname.test.` (NSEC) and as
/// `cname3.test.` (NSEC3).
const CNAME_ZONE: &str = "$TTL 3600
@         IN SOA   ns1 hostmaster 1 7200 3600 1209600 300
@         IN NS    ns1
ns1       IN A     192.0.2.53
www       IN A     192.0.2.80
*.w       IN A     192.0.2.200
*.c1      IN CNAME www
*.c2      IN CNAME a.c1
*.c3      IN CNAME b.w
dangling  IN CNAME nothere
*.c4      IN CNAME nothere
dn        IN DNAME c1
";

/// The questions the CNAME zone is asked.
const CNAME_CASES: &[Case<'static>] = &[
    Case {
        name: "x.c1",
        qtype: A,
        rcode: ResponseCode::NoError,
        answer: &["x.c1 CNAME www", "www A 192.0.2.80"],
    },
    Case {
        name: "x.c2",
        qtype: A,
        rcode: ResponseCode::NoError,
        answer: &["x.c2 CNAME a.c1", "a.c1 CNAME www", "www A 192.0.2.80"],
    },
    Case {
        name: "x.c3",
        qtype: A,
        rcode: ResponseCode::NoError,
        answer: &["x.c3 CNAME b.w", "b.w A 192.0.2.200"],
    },
    Case {
        name: "x.c1",
        qtype: MX,
        rcode: ResponseCode::NoError,
        answer: &["x.c1 CNAME www"],
    },
    Case {
        name: "dangling",
        qtype: A,
        rcode: ResponseCode::NXDomain,
        answer: &["dangling CNAME nothere"],
    },
    Case {
        name: "x.c4",
        qtype: A,
        rcode: ResponseCode::NXDomain,
        answer: &["x.c4 CNAME nothere"],
    },
    Case {
        name: "y.dn",
        qtype: A,
        rcode: ResponseCode::NoError,
        answer: &[
            "dn DNAME *",
            "y.dn CNAME y.c1",
            "y.c1 CNAME www",
            "www A 192.0.2.80",
        ],
    },
];

/// `name` (relative, `""` for the apex) in `origin`.
fn fqdn(name: &str, origin: &str) -> String {
    if name.is_empty() {
        origin.to_string()
    } else {
        format!("{name}.{origin}")
    }
}

/// Asks Unbound over UDP with the DO bit (so that it sets AD on secure answers), and CD
/// when `cd`.
fn resolve(unbound: &Unbound, id: u16, name: &str, qtype: u16, cd: bool) -> Message {
    let mut q = query_full(id, name, qtype, 1, Some((1232, true)));
    if cd {
        q[3] |= 0x10;
    }
    ask(unbound.port, &q)
}

/// The answer section without RRSIGs, as `owner TYPE rdata` with the owner relative to
/// `origin`, sorted, in lower case.
fn answer_of(m: &Message, origin: &str) -> Vec<String> {
    let mut v: Vec<String> = m
        .answers
        .iter()
        .filter(|r| r.record_type() != RecordType::RRSIG)
        .map(|r| {
            let owner = r.name.to_string().to_ascii_lowercase();
            let rel = owner
                .strip_suffix(origin)
                .map(|s| s.trim_end_matches('.'))
                .unwrap_or(&owner);
            let rel = if rel.is_empty() { "@" } else { rel };
            let data = rdata_text(&r.data).to_ascii_lowercase();
            let data = data.strip_suffix(&format!(".{origin}")).unwrap_or(&data);
            format!("{rel} {} {data}", r.record_type()).to_ascii_lowercase()
        })
        .collect();
    v.sort();
    v
}

/// RDATA in presentation format; DS too, which hickory (without its DNSSEC features) keeps
/// as raw bytes: key tag, algorithm, digest type, digest in hex.
fn rdata_text(data: &RData) -> String {
    match data {
        RData::Unknown { code, rdata } if *code == RecordType::DS && rdata.anything.len() > 4 => {
            let b = &rdata.anything;
            let hex: String = b[4..].iter().map(|x| format!("{x:02x}")).collect();
            format!(
                "{} {} {} {hex}",
                u16::from_be_bytes([b[0], b[1]]),
                b[2],
                b[3]
            )
        }
        other => other.to_string(),
    }
}

fn sorted_lower(xs: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = xs.iter().map(|s| s.to_ascii_lowercase()).collect();
    v.sort();
    v
}

/// Whether the records `got` are those of `want` (both sorted), where `owner type *`
/// stands for any RDATA.
fn matches(got: &[String], want: &[String]) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(g, w)| match w.strip_suffix('*') {
                Some(prefix) => g.starts_with(prefix),
                None => g == w,
            })
}

/// Why a reply is not the validated answer `case` expects, if it is not.
fn mismatch(m: &Message, case: &Case, origin: &str) -> Option<String> {
    let got = answer_of(m, origin);
    let want = sorted_lower(case.answer);
    let md = &m.metadata;
    if md.response_code == case.rcode && md.authentic_data && matches(&got, &want) {
        return None;
    }
    Some(format!(
        "{} {}: rcode {:?} AD {} answer {got:?}; want rcode {:?} AD true answer {want:?}",
        fqdn(case.name, origin),
        RecordType::from(case.qtype),
        md.response_code,
        md.authentic_data,
        case.rcode
    ))
}

/// The test's failure message: what went wrong, Unbound's log (validation failures at
/// val-log-level 2) and ringdns's output.
fn report(what: &[String], unbound: &Unbound, ringdns: &Server) -> String {
    format!(
        "{}\n--- unbound log:\n{}\n--- ringdns stderr:\n{}",
        what.join("\n"),
        unbound.log(),
        ringdns.stderr()
    )
}

/// The signed zones: `nsec.test.` and `nsec3.test.`, `cname.test.` and `cname3.test.`
/// (valid), `tampered.test.` (www's A
/// altered after signing), `wronganchor.test.` (signed twice; the second signing is served,
/// the first one's DS is the anchor). Their files are in `dir`.
fn zones(dir: &TempDir, test: &str) -> Option<Vec<(Zone, String)>> {
    let src = data("db.dnssec.test");
    let mut out = Vec::new();
    for (origin, denial) in [("nsec.test.", Denial::Nsec), ("nsec3.test.", Denial::Nsec3)] {
        let s = sign_zone(&src, origin, &dir.0, denial, test)?;
        out.push((Zone::new(origin, &s.file), s.ds));
    }
    let cname_src = dir.write("db.cname", CNAME_ZONE);
    for (origin, denial) in [
        ("cname.test.", Denial::Nsec),
        ("cname3.test.", Denial::Nsec3),
    ] {
        let s = sign_zone(&cname_src, origin, &dir.0, denial, test)?;
        out.push((Zone::new(origin, &s.file), s.ds));
    }
    let t = sign_zone(&src, "tampered.test.", &dir.0, Denial::Nsec, test)?;
    tamper(&t, "www.tampered.test.", "192.0.2.80", "192.0.2.99");
    out.push((Zone::new(&t.origin, &t.file), t.ds));
    let first = TempDir::new();
    let old = sign_zone(&src, "wronganchor.test.", &first.0, Denial::Nsec, test)?;
    let new = sign_zone(&src, "wronganchor.test.", &dir.0, Denial::Nsec, test)?;
    assert_ne!(old.ds, new.ds, "two signings made the same KSK");
    out.push((Zone::new(&new.origin, &new.file), old.ds));
    Some(out)
}

/// Changes the A record `owner` `from` to `to` in a signed zone file, leaving its RRSIG.
fn tamper(s: &Signed, owner: &str, from: &str, to: &str) {
    let text = std::fs::read_to_string(&s.file).unwrap();
    let mut changed = 0;
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() == 5 && f[0] == owner && f[3] == "A" && f[4] == from {
                changed += 1;
                format!("{owner}\t{}\tIN\tA\t{to}", f[1])
            } else {
                l.to_string()
            }
        })
        .collect();
    assert_eq!(changed, 1, "{owner} A {from} is in {}", s.file.display());
    std::fs::write(&s.file, lines.join("\n") + "\n").unwrap();
}

/// The zones that must fail validation: SERVFAIL for them, the tampered record itself with
/// CD set (so the SERVFAIL is validation's), and the tampered zone's other names secure.
fn negative_controls(unbound: &Unbound) -> Vec<String> {
    let mut failures = Vec::new();
    let mut expect = |what: &str, ok: bool, m: &Message| {
        if !ok {
            failures.push(format!(
                "{what}: got rcode {:?} AD {} answer {:?}",
                m.metadata.response_code,
                m.metadata.authentic_data,
                answer_of(m, "")
            ));
        }
    };
    let servfail = |m: &Message| m.metadata.response_code == ResponseCode::ServFail;
    let m = resolve(unbound, 1001, "www.tampered.test.", A, false);
    expect("tampered www A: SERVFAIL", servfail(&m), &m);
    let m = resolve(unbound, 1002, "www.tampered.test.", A, true);
    let unchecked = m.metadata.response_code == ResponseCode::NoError
        && !m.metadata.authentic_data
        && answer_of(&m, "tampered.test.") == ["www a 192.0.2.99"];
    expect(
        "tampered www A with CD: the altered A, no AD",
        unchecked,
        &m,
    );
    let m = resolve(unbound, 1003, "mail.tampered.test.", A, false);
    let secure = m.metadata.response_code == ResponseCode::NoError
        && m.metadata.authentic_data
        && answer_of(&m, "tampered.test.") == ["mail a 192.0.2.25"];
    expect("tampered zone's mail A: secure", secure, &m);
    let m = resolve(unbound, 1004, "www.wronganchor.test.", A, false);
    expect("wrong anchor www A: SERVFAIL", servfail(&m), &m);
    failures
}

/// Validation failures in Unbound's log for names outside the zones `bogus` (ones that a
/// retry hid from the answer would show only there), and its errors: a query it could not
/// send (to an address off the loopback, which its `outgoing-interface` forbids).
fn unexpected_failures(unbound: &Unbound, bogus: &[&str]) -> Vec<String> {
    unbound
        .log()
        .lines()
        .filter(|l| {
            l.contains("validation failure")
                || l.contains("failed to prime")
                || l.contains("error:")
        })
        .filter(|l| l.contains("error:") || !bogus.iter().any(|z| l.contains(z)))
        .map(|l| format!("unbound logged: {l}"))
        .collect()
}

/// Signs the zones, serves them with ringdns, asks every case of both valid zones and the
/// negative controls through an Unbound with `extra` in its `server:` clause; fails with
/// every mismatch, Unbound's log and ringdns's output. `truncated_at`: a UDP size at which
/// ringdns must truncate an NSEC3 NXDOMAIN, so that the run covers Unbound's TCP retry.
fn validate(test: &str, extra: &[&str], truncated_at: Option<u16>) {
    let dir = TempDir::new();
    let Some(zones) = zones(&dir, test) else {
        return;
    };
    let served: Vec<Zone> = zones.iter().map(|(z, _)| z.clone()).collect();
    let ringdns = peers::ringdns_file(&served);
    if let Some(size) = truncated_at {
        let q = query_full(1, "nx.nsec3.test.", A, 1, Some((size, true)));
        let r = ask(ringdns.port, &q);
        assert!(
            r.metadata.truncation,
            "{test}: not truncated at {size}: {r:?}"
        );
    }
    let stubs: Vec<StubZone> = zones
        .iter()
        .map(|(z, ds)| StubZone {
            origin: z.origin.clone(),
            port: ringdns.port,
            anchor: Some(ds.clone()),
        })
        .collect();
    let Some(unbound) = Unbound::start(&stubs, extra, test) else {
        return;
    };
    let mut failures = Vec::new();
    let mut id = 0u16;
    let asked = [
        ("nsec.test.", CASES),
        ("nsec3.test.", CASES),
        ("cname.test.", CNAME_CASES),
        ("cname3.test.", CNAME_CASES),
    ];
    for (origin, cases) in asked {
        for case in cases {
            id += 1;
            let m = resolve(&unbound, id, &fqdn(case.name, origin), case.qtype, false);
            failures.extend(mismatch(&m, case, origin));
        }
    }
    failures.extend(negative_controls(&unbound));
    failures.extend(unexpected_failures(
        &unbound,
        &["tampered.test.", "wronganchor.test."],
    ));
    if !unbound
        .log()
        .contains("validation failure <www.tampered.test. A IN>")
    {
        failures.push("no validation failure logged for www.tampered.test. A".to_string());
    }
    assert!(
        failures.is_empty(),
        "{test}:\n{}",
        report(&failures, &unbound, &ringdns)
    );
}

/// The DNSSEC records of a reply, all sections: `TYPE@section` for each RRSIG, NSEC and
/// NSEC3 (`an`, `ns`, `ar`).
fn dnssec_records(m: &Message) -> Vec<String> {
    let sections = [
        ("an", &m.answers),
        ("ns", &m.authorities),
        ("ar", &m.additionals),
    ];
    let mut v = Vec::new();
    for (sec, rrs) in sections {
        for r in rrs.iter() {
            let t = r.record_type();
            if matches!(t, RecordType::RRSIG | RecordType::NSEC | RecordType::NSEC3) {
                v.push(format!("{t}@{sec}"));
            }
        }
    }
    v
}

/// A signed zone asked directly, with no resolver between: without the DO bit (with EDNS
/// or without it) no reply carries an RRSIG, NSEC or NSEC3 (RFC 4035 §3.1: they go to DO
/// queries only), while DNSKEY and DS asked for by type still come; with DO the same
/// questions get their signatures and, for denials and an unsigned delegation, their
/// proofs. Over UDP and TCP, for the NSEC and the NSEC3 signing of the zone.
#[test]
fn only_do_queries_get_signatures_and_proofs() {
    let test = "only_do_queries_get_signatures_and_proofs";
    let dir = TempDir::new();
    let src = data("db.dnssec.test");
    let mut zones = Vec::new();
    for (origin, denial) in [("nsec.test.", Denial::Nsec), ("nsec3.test.", Denial::Nsec3)] {
        let Some(s) = sign_zone(&src, origin, &dir.0, denial, test) else {
            return;
        };
        zones.push(Zone::new(origin, &s.file));
    }
    let ringdns = peers::ringdns_file(&zones);
    // (name, type, the denial proof a DO reply needs, the type asked for that is DNSSEC's)
    let questions: &[(&str, u16, bool, Option<RecordType>)] = &[
        ("www", A, false, None),
        ("", DNSKEY, false, Some(RecordType::DNSKEY)),
        ("secure", DS, false, Some(RecordType::DS)),
        ("secure", A, false, None),
        ("x.wild", A, true, None),
        ("nx", A, true, None),
        ("www", MX, true, None),
        ("b.c", A, true, None),
        ("insecure", A, true, None),
    ];
    let mut failures = Vec::new();
    let mut id = 0u16;
    for z in &zones {
        for &(name, qtype, proof, own) in questions {
            let qname = fqdn(name, &z.origin);
            for (edns, tcp) in [
                (None, false),
                (Some((4096, false)), false),
                (Some((4096, true)), false),
                (None, true),
                (Some((4096, true)), true),
            ] {
                id += 1;
                let q = query_full(id, &qname, qtype, 1, edns);
                let m = if tcp {
                    Message::from_vec(&common::tcp_exchange(ringdns.port, &[q])[0]).unwrap()
                } else {
                    ask(ringdns.port, &q)
                };
                let got = dnssec_records(&m);
                let what = format!("{qname} {qtype} edns={edns:?} tcp={tcp}");
                if m.metadata.truncation {
                    failures.push(format!("{what}: truncated"));
                    continue;
                }
                if let Some(t) = own
                    && !m.answers.iter().any(|r| r.record_type() == t)
                {
                    failures.push(format!("{what}: no {t} answered: {m:?}"));
                }
                let dnssec_ok = edns.is_some_and(|(_, d)| d);
                if !dnssec_ok {
                    if !got.is_empty() {
                        failures.push(format!("{what}: without DO it carries {got:?}"));
                    }
                    continue;
                }
                if !got.iter().any(|r| r.starts_with("RRSIG@")) {
                    failures.push(format!("{what}: with DO, no RRSIG: {got:?}"));
                }
                let proofs = got
                    .iter()
                    .filter(|r| r.starts_with("NSEC@") || r.starts_with("NSEC3@"))
                    .count();
                if proof && proofs == 0 {
                    failures.push(format!("{what}: with DO, no NSEC/NSEC3 proof: {got:?}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{}\nringdns:\n{}",
        failures.join("\n"),
        ringdns.stdout()
    );
}

/// Unbound asks ringdns over UDP (EDNS 1232, its default).
#[test]
fn unbound_validates_over_udp() {
    validate("unbound_validates_over_udp", &[], None);
}

/// Unbound asks ringdns over TCP only.
#[test]
fn unbound_validates_over_tcp() {
    validate("unbound_validates_over_tcp", &["tcp-upstream: yes"], None);
}

/// Unbound offers 512 bytes over UDP: the larger answers (DNSKEY, NSEC3 denials with their
/// signatures) come back truncated and are asked again over TCP.
#[test]
fn unbound_validates_truncated_answers() {
    validate(
        "unbound_validates_truncated_answers",
        &["edns-buffer-size: 512"],
        Some(512),
    );
}

/// Unbound at its strictest: 0x20 in its queries, the referral path checked, strict query
/// name minimisation, no downgrade of algorithms.
#[test]
fn unbound_validates_hardened() {
    validate(
        "unbound_validates_hardened",
        &[
            "use-caps-for-id: yes",
            "harden-referral-path: yes",
            "harden-algo-downgrade: yes",
            "harden-below-nxdomain: yes",
            "qname-minimisation-strict: yes",
        ],
        None,
    );
}

// ---- a chain of trust through a delegation ---------------------------------------------------

/// The parent of the chain test, `chain.test.`: a signed delegation to `sub` (its DS is
/// added when the child is signed) and an unsigned one to `plain`.
const CHAIN_PARENT: &str = "$TTL 3600
@         IN SOA ns1 hostmaster 1 7200 3600 1209600 300
@         IN NS  ns1
ns1       IN A   192.0.2.53
sub       IN NS  ns1.sub
ns1.sub   IN A   192.0.2.60
plain     IN NS  ns1.plain
ns1.plain IN A   192.0.2.61
";

/// A child zone of the chain test (`sub.chain.test.` signed, `plain.chain.test.` not).
const CHAIN_CHILD: &str = "$TTL 3600
@         IN SOA ns1 hostmaster 1 7200 3600 1209600 300
@         IN NS  ns1
ns1       IN A   192.0.2.60
www       IN A   192.0.2.80
";

/// `chain.test.` (NSEC, the trust anchor), `sub.chain.test.` (NSEC3, secured by its DS in
/// the parent) and `plain.chain.test.` (unsigned, no DS), files in `dir`; the anchor.
fn chain_zones(dir: &TempDir, test: &str) -> Option<(Vec<Zone>, String)> {
    let child_src = dir.write("db.child", CHAIN_CHILD);
    let sub = sign_zone(&child_src, "sub.chain.test.", &dir.0, Denial::Nsec3, test)?;
    let parent_src = dir.write("db.chain", &format!("{CHAIN_PARENT}{}\n", sub.ds));
    let parent = sign_zone(&parent_src, "chain.test.", &dir.0, Denial::Nsec, test)?;
    let zones = vec![
        Zone::new("chain.test.", &parent.file),
        Zone::new("sub.chain.test.", &sub.file),
        Zone::new("plain.chain.test.", &child_src),
    ];
    Some((zones, parent.ds))
}

/// The parent, the signed child and the unsigned child served by one ringdns, each reached
/// by Unbound as a stub, the parent's DS the only trust anchor: the signed child's answers
/// are secure through the DS that ringdns answers from the parent (its router sends DS to
/// the highest zone), the unsigned child's are insecure (NOERROR without AD), not bogus.
#[test]
fn unbound_validates_a_chain_of_trust() {
    const TEST: &str = "unbound_validates_a_chain_of_trust";
    let dir = TempDir::new();
    let Some((zones, anchor)) = chain_zones(&dir, TEST) else {
        return;
    };
    let ringdns = peers::ringdns_file(&zones);
    let stubs: Vec<StubZone> = zones
        .iter()
        .map(|z| StubZone {
            origin: z.origin.clone(),
            port: ringdns.port,
            anchor: (z.origin == "chain.test.").then(|| anchor.clone()),
        })
        .collect();
    let Some(unbound) = Unbound::start(&stubs, &[], TEST) else {
        return;
    };
    let secure = [
        (
            "sub.chain.test.",
            "www",
            A,
            ResponseCode::NoError,
            "www A 192.0.2.80",
        ),
        ("sub.chain.test.", "nx", A, ResponseCode::NXDomain, ""),
        ("chain.test.", "sub", DS, ResponseCode::NoError, "sub DS *"),
        ("chain.test.", "plain", DS, ResponseCode::NoError, ""),
    ];
    let mut failures = Vec::new();
    for (i, (origin, name, qtype, rcode, rec)) in secure.into_iter().enumerate() {
        let recs = [rec];
        let case = Case {
            name,
            qtype,
            rcode,
            answer: &recs[..usize::from(!rec.is_empty())],
        };
        let m = resolve(&unbound, i as u16 + 1, &fqdn(name, origin), qtype, false);
        failures.extend(mismatch(&m, &case, origin));
    }
    let m = resolve(&unbound, 100, "www.plain.chain.test.", A, false);
    let insecure = m.metadata.response_code == ResponseCode::NoError
        && !m.metadata.authentic_data
        && answer_of(&m, "plain.chain.test.") == ["www a 192.0.2.80"];
    if !insecure {
        failures.push(format!(
            "www.plain.chain.test. A: rcode {:?} AD {} answer {:?}; want NOERROR, no AD, \
             www A 192.0.2.80",
            m.metadata.response_code,
            m.metadata.authentic_data,
            answer_of(&m, "plain.chain.test.")
        ));
    }
    failures.extend(unexpected_failures(&unbound, &[]));
    assert!(
        failures.is_empty(),
        "{TEST}:\n{}",
        report(&failures, &unbound, &ringdns)
    );
}
