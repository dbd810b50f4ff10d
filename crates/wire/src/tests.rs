//! Cross-module tests: decoding our output with hickory-proto, queries
//! built by hickory, and randomised robustness checks.

use std::net::{Ipv4Addr, Ipv6Addr};

use hickory_proto::op::{Edns, Message, MessageType, OpCode};
use hickory_proto::rr::{Name as HName, RData, RecordType};

use super::be::get_u16;
use super::header::write_header;
use super::*;

fn hickory_query(name: &str, qtype: RecordType, edns: Option<(u16, bool)>) -> Vec<u8> {
    let mut m = Message::new(0x4242, MessageType::Query, OpCode::Query);
    m.metadata.recursion_desired = true;
    m.add_query(hickory_proto::op::Query::query(
        HName::from_ascii(name).unwrap(),
        qtype,
    ));
    if let Some((size, do_bit)) = edns {
        let mut e = Edns::new();
        e.set_max_payload(size);
        e.set_dnssec_ok(do_bit);
        m.set_edns(e);
    }
    m.to_vec().unwrap()
}

#[test]
fn parses_hickory_queries() {
    let p = hickory_query("WwW.Example.org.", RecordType::AAAA, Some((1232, true)));
    let q = Query::parse(&p).unwrap();
    assert_eq!(q.id(), 0x4242);
    assert!(q.rd());
    assert_eq!(q.qtype(), rtype::AAAA);
    assert_eq!(q.qclass(), class::IN);
    assert_eq!(q.qname().to_string(), "WwW.Example.org.");
    assert_eq!(q.qname().lowercase().to_string(), "www.example.org.");
    let o = q.opt().unwrap();
    assert_eq!((o.udp_size, o.do_bit, o.version), (1232, true, 0));
    assert_eq!(q.udp_reply_size(), 1232);

    let p = hickory_query(".", RecordType::NS, None);
    let q = Query::parse(&p).unwrap();
    assert!(q.qname().is_root());
    assert_eq!(q.qname().to_string(), ".");
    assert!(q.opt().is_none());
}

#[test]
fn a_pointer_owner_names_a_suffix_of_the_question() {
    let p = hickory_query("www.Example.org.", RecordType::A, None);
    let q = Query::parse(&p).unwrap();
    let mut out = Vec::with_capacity(512);
    let mut w = MessageWriter::reply(&q, &mut out, rcode::NOERROR);
    // `Example.org.` starts after `www` (1 + 3 bytes) in the question at offset 12.
    w.push(
        Section::Authority,
        Owner::Pointer(16),
        rtype::NS,
        class::IN,
        60,
        b"\x02ns\xC0\x10",
    )
    .unwrap();
    assert_eq!(
        w.push(
            Section::Additional,
            Owner::Pointer(11),
            rtype::A,
            class::IN,
            0,
            &[0; 4]
        ),
        Err(WriteError::BadOwner)
    );
    assert_eq!(
        w.push(
            Section::Additional,
            Owner::Pointer(0x4000),
            rtype::A,
            class::IN,
            0,
            &[0; 4]
        ),
        Err(WriteError::BadOwner)
    );
    w.finish();
    let m = Message::from_vec(&out).unwrap();
    assert_eq!(m.authorities[0].name.to_ascii(), "Example.org.");
    match &m.authorities[0].data {
        RData::NS(ns) => assert_eq!(ns.0.to_ascii(), "ns.Example.org."),
        other => panic!("{other:?}"),
    }
}

#[test]
fn writer_output_decodes_with_hickory() {
    let p = hickory_query("WwW.Example.org.", RecordType::A, Some((4096, true)));
    let q = Query::parse(&p).unwrap();
    let zone = name_to_wire("example.org").unwrap();
    let mut out = Vec::with_capacity(1024);
    let mut w = MessageWriter::reply(&q, &mut out, rcode::NOERROR);
    w.set_aa(true);
    w.push(
        Section::Answer,
        Owner::Question,
        rtype::A,
        class::IN,
        300,
        &[192, 0, 2, 7],
    )
    .unwrap();
    w.push_with(
        Section::Answer,
        Owner::Question,
        rtype::TXT,
        class::IN,
        30,
        |rd| {
            rd.push(5);
            rd.extend_from_slice(b"hello");
        },
    )
    .unwrap();
    w.push(
        Section::Authority,
        Owner::Wire(&zone),
        rtype::NS,
        class::IN,
        3600,
        b"\x03ns1\xC0\x10",
    )
    .unwrap();
    let v6: Ipv6Addr = "2001:db8::1".parse().unwrap();
    w.push(
        Section::Additional,
        Owner::Question,
        rtype::AAAA,
        class::IN,
        0,
        &v6.octets(),
    )
    .unwrap();
    w.push_with(
        Section::Additional,
        Owner::LabelThenQuestion(b"_udp"),
        rtype::SRV,
        class::IN,
        0,
        |rd| {
            rd.extend_from_slice(&[0, 0, 0, 0]);
            rd.extend_from_slice(&5353u16.to_be_bytes());
            rd.push(0);
        },
    )
    .unwrap();
    w.finish();
    finalize(&mut out, &q, q.udp_reply_size());

    let m = Message::from_vec(&out).unwrap();
    assert_eq!(m.metadata.id, 0x4242);
    assert_eq!(m.metadata.message_type, MessageType::Response);
    assert!(m.metadata.authoritative);
    assert!(m.metadata.recursion_desired);
    assert!(!m.metadata.truncation);
    assert_eq!(m.queries.len(), 1);
    assert_eq!(m.queries[0].name.to_ascii(), "WwW.Example.org.");
    assert_eq!(m.answers.len(), 2);
    assert_eq!(m.answers[0].name.to_ascii(), "WwW.Example.org.");
    match &m.answers[0].data {
        RData::A(a) => assert_eq!(a.0, Ipv4Addr::new(192, 0, 2, 7)),
        other => panic!("{other:?}"),
    }
    assert_eq!(m.answers[0].ttl, 300);
    assert_eq!(m.answers[1].record_type(), RecordType::TXT);
    assert_eq!(m.authorities.len(), 1);
    assert_eq!(m.authorities[0].name.to_ascii(), "example.org.");
    assert_eq!(m.authorities[0].record_type(), RecordType::NS);
    assert_eq!(m.additionals.len(), 2);
    assert_eq!(m.additionals[1].name.to_ascii(), "_udp.WwW.Example.org.");
    match &m.additionals[1].data {
        RData::SRV(s) => {
            assert_eq!(s.port, 5353);
            assert!(s.target.is_root());
        }
        other => panic!("{other:?}"),
    }
    let e = m.edns.as_ref().expect("OPT");
    assert_eq!(e.max_payload(), 4096);
    assert!(e.flags().dnssec_ok);
    assert_eq!(e.version(), 0);
}

/// Writes a NOERROR reply to `q` with 40 A records (over 512 bytes) into `out`.
fn forty_a_records(q: &Query<'_>, out: &mut Vec<u8>) {
    let mut w = MessageWriter::reply(q, out, rcode::NOERROR);
    for i in 0..40u8 {
        w.push(
            Section::Answer,
            Owner::Question,
            rtype::A,
            class::IN,
            60,
            &[10, 0, 0, i],
        )
        .unwrap();
    }
    w.finish();
}

#[test]
fn truncated_reply_is_valid_for_hickory() {
    let p = hickory_query("big.example.org.", RecordType::A, None);
    let q = Query::parse(&p).unwrap();
    let mut out = Vec::with_capacity(2048);
    forty_a_records(&q, &mut out);
    assert!(out.len() > 512);
    finalize(&mut out, &q, q.max_reply_size(false));
    assert!(out.len() <= 512);
    let m = Message::from_vec(&out).unwrap();
    assert!(m.metadata.truncation);
    assert_eq!(m.answers.len(), get_u16(&out, 6) as usize);
    assert!(!m.answers.is_empty());
    assert!(m.edns.is_none());

    // the same over EDNS 4096: untouched but for the OPT
    let p = hickory_query("big.example.org.", RecordType::A, Some((4096, false)));
    let q = Query::parse(&p).unwrap();
    forty_a_records(&q, &mut out);
    let before = out.clone();
    finalize(&mut out, &q, q.max_reply_size(false));
    assert_eq!(out[..10], before[..10]);
    assert_eq!(out[12..before.len()], before[12..]);
    let m = Message::from_vec(&out).unwrap();
    assert!(!m.metadata.truncation);
    assert_eq!(m.answers.len(), 40);
    assert_eq!(m.edns.as_ref().unwrap().max_payload(), 4096);
}

#[test]
fn fit_cuts_a_finished_reply_keeping_its_opt() {
    let p = hickory_query("big.example.org.", RecordType::A, Some((4096, false)));
    let q = Query::parse(&p).unwrap();
    let mut out = Vec::with_capacity(2048);
    forty_a_records(&q, &mut out);
    finalize(&mut out, &q, q.max_reply_size(false));
    let whole = out.clone();
    // Room enough: untouched.
    assert!(fit(&mut out, 4096));
    assert_eq!(out, whole);
    assert!(fit(&mut out, 512));
    assert!(out.len() <= 512);
    let m = Message::from_vec(&out).unwrap();
    assert!(m.metadata.truncation);
    assert!(!m.answers.is_empty() && m.answers.len() < 40);
    assert_eq!(m.answers.len(), get_u16(&out, 6) as usize);
    assert_eq!(m.edns.as_ref().unwrap().max_payload(), 4096);
    // The question and OPT alone are longer than the limit: cannot fit.
    let mut out = whole.clone();
    assert!(!fit(&mut out, 40));
}

#[test]
fn error_replies_decode_with_hickory() {
    let p = hickory_query("x.example.", RecordType::A, Some((1232, false)));
    let q = Query::parse(&p).unwrap();
    let mut out = Vec::new();
    // CoreDNS errorFunc: SetRcode + SizeAndDo
    MessageWriter::reply(&q, &mut out, rcode::REFUSED).finish();
    finalize(&mut out, &q, q.udp_reply_size());
    let m = Message::from_vec(&out).unwrap();
    assert_eq!(u16::from(m.metadata.response_code), 5);
    assert_eq!(m.queries.len(), 1);
    assert!(m.edns.is_some());

    badvers_reply(&q, &mut out);
    let m = Message::from_vec(&out).unwrap();
    assert_eq!(m.edns.as_ref().unwrap().rcode_high(), 1);

    let mut bad = p.clone();
    bad[5] = 2; // QDCOUNT 2
    assert_eq!(Query::parse(&bad).unwrap_err(), Reject::FormErr);
    assert!(reject_reply(&bad, rcode::FORMERR, &mut out));
    let m = Message::from_vec(&out).unwrap();
    assert_eq!(u16::from(m.metadata.response_code), 1);
    assert!(m.queries.is_empty());
}

/// xorshift64* — deterministic randomness without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn seed_corpus() -> Vec<Vec<u8>> {
    let mut c = vec![
        hickory_query("WwW.Example.org.", RecordType::A, None),
        hickory_query("a.b.c.d.example.", RecordType::TXT, Some((1232, true))),
        hickory_query(".", RecordType::NS, Some((512, false))),
    ];
    // query with options, a SOA answer and a TSIG-like record
    let mut p = Vec::new();
    write_header(&mut p, 1, 4 << 11, [1, 1, 0, 2]);
    p.extend_from_slice(b"\x07example\x00\x00\x06\x00\x01");
    p.extend_from_slice(b"\xC0\x0C\x00\x06\x00\x01\x00\x00\x00\x3C\x00\x1A\x02ns\xC0\x0C\x00");
    p.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5]);
    p.extend_from_slice(&[0, 0, 41, 4, 0, 0, 0, 0x80, 0, 0, 20]);
    p.extend_from_slice(&[0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 8, 0, 4, 0, 1, 0, 0]);
    p.extend_from_slice(b"\x03key\x00\x00\xfa\x00\xff\x00\x00\x00\x00\x00\x02\xAA\xBB");
    c.push(p);
    // replies made by the writer (also fed to finalize as replies)
    for (i, src) in c.clone().iter().enumerate() {
        let q = Query::parse(src).unwrap();
        let mut out = Vec::new();
        let mut w = MessageWriter::reply(&q, &mut out, rcode::NOERROR);
        for j in 0..(5 + 10 * i as u8) {
            w.push(
                Section::Answer,
                Owner::Question,
                rtype::A,
                class::IN,
                60,
                &[10, 0, 0, j],
            )
            .unwrap();
        }
        w.push(
            Section::Authority,
            Owner::LabelThenQuestion(b"x"),
            rtype::NS,
            class::IN,
            1,
            b"\x01y\xC0\x0C",
        )
        .unwrap();
        w.push(
            Section::Additional,
            Owner::Wire(&[0]),
            rtype::OPT,
            1232,
            0,
            &[0, 3, 0, 1, b'n'],
        )
        .unwrap();
        w.push(
            Section::Additional,
            Owner::Question,
            rtype::AAAA,
            class::IN,
            1,
            &[0; 16],
        )
        .unwrap();
        w.finish();
        c.push(out);
    }
    c
}

/// Every record of `msg` parses.
fn walks_cleanly(msg: &[u8]) -> bool {
    match records(msg) {
        Ok(it) => it.into_iter().all(|r| r.is_ok()),
        Err(_) => false,
    }
}

fn exercise(pkt: &[u8], fixed_query: &Query<'_>, scratch: &mut Vec<u8>, rng: &mut Rng) {
    // records() on anything
    let _ = walks_cleanly(pkt);
    let _ = header_rcode(pkt);

    match Query::parse(pkt) {
        Ok(q) => {
            let name = q.qname();
            let _ = name.to_string();
            let _ = name.lowercase().to_string();
            assert!(name.wire_len() <= MAX_NAME_LEN);
            for s in name.suffixes() {
                assert!(name.is_subdomain_of(s));
            }
            let _ = q.opt().map(|o| o.iter().count());
            let mut w = MessageWriter::reply(&q, scratch, rcode::NOERROR);
            for i in 0..rng.below(50) as u8 {
                w.push(
                    Section::Answer,
                    Owner::Question,
                    rtype::A,
                    class::IN,
                    60,
                    &[1, 2, 3, i],
                )
                .unwrap();
            }
            let _ = w.push(
                Section::Additional,
                Owner::LabelThenQuestion(b"_udp"),
                rtype::SRV,
                1,
                0,
                &[0; 7],
            );
            w.finish();
            assert!(walks_cleanly(scratch));
            let limit = [0, 512, 600, 1232, 65535][rng.below(5)];
            finalize(scratch, &q, limit);
            assert!(walks_cleanly(scratch));
            assert!(scratch.len() <= limit.max(512) || get_u16(scratch, 6) == 0);
            badvers_reply(&q, scratch);
            assert!(walks_cleanly(scratch));
            // the raw packet treated as a reply to itself
            let mut as_reply = pkt.to_vec();
            let was_valid = walks_cleanly(&as_reply);
            finalize(&mut as_reply, &q, limit);
            if was_valid {
                assert!(walks_cleanly(&as_reply));
            }
        }
        Err(r) => {
            if let Some(rc) = r.rcode() {
                assert!(reject_reply(pkt, rc, scratch));
                assert!(walks_cleanly(scratch));
            } else {
                let _ = reject_reply(pkt, rcode::FORMERR, scratch);
            }
        }
    }

    // arbitrary bytes as a reply to a fixed EDNS query
    let mut as_reply = pkt.to_vec();
    let was_valid = walks_cleanly(&as_reply);
    let limit = [512, 700, 65535][rng.below(3)];
    finalize(&mut as_reply, fixed_query, limit);
    if was_valid {
        assert!(walks_cleanly(&as_reply), "{pkt:?}");
    } else {
        assert_eq!(as_reply, pkt, "malformed replies are left alone");
    }
}

#[test]
fn fuzz_random_and_bitflipped_packets() {
    let corpus = seed_corpus();
    let fixed = hickory_query("fixed.example.", RecordType::A, Some((700, true)));
    let fq = Query::parse(&fixed).unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut scratch = Vec::with_capacity(4096);
    let mut accepted = 0;

    // purely random datagrams, biased towards plausible headers
    for _ in 0..20_000 {
        let len = rng.below(300);
        let mut p: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        if p.len() >= 12 && rng.below(2) == 0 {
            p[2] &= 0x07; // QR=0, opcode QUERY
            p[4] = 0;
            p[5] = 1;
            p[6] = 0;
            p[7] = rng.below(2) as u8;
            p[8] = 0;
            p[9] = rng.below(2) as u8;
            p[10] = 0;
            p[11] = rng.below(3) as u8;
        }
        if Query::parse(&p).is_ok() {
            accepted += 1;
        }
        exercise(&p, &fq, &mut scratch, &mut rng);
    }

    // bit flips, byte changes, truncations and extensions of valid messages
    for _ in 0..30_000 {
        let mut p = corpus[rng.below(corpus.len())].clone();
        for _ in 0..=rng.below(4) {
            match rng.below(4) {
                0 if !p.is_empty() => {
                    let i = rng.below(p.len());
                    p[i] ^= 1 << rng.below(8);
                }
                1 if !p.is_empty() => {
                    let i = rng.below(p.len());
                    p[i] = rng.next() as u8;
                }
                2 if !p.is_empty() => {
                    let n = rng.below(p.len());
                    p.truncate(n);
                }
                _ => p.push(rng.next() as u8),
            }
        }
        if Query::parse(&p).is_ok() {
            accepted += 1;
        }
        exercise(&p, &fq, &mut scratch, &mut rng);
    }
    assert!(
        accepted > 1000,
        "the fuzzer should reach the accept path ({accepted})"
    );
}

#[test]
fn acceptance_agrees_with_hickory_on_valid_queries() {
    // Every query hickory builds is accepted, with the same name and type.
    for (name, t) in [
        ("a.", RecordType::A),
        ("xn--bcher-kva.example.", RecordType::HTTPS),
        ("_sip._udp.example.com.", RecordType::SRV),
        ("1.0.0.127.in-addr.arpa.", RecordType::PTR),
    ] {
        let p = hickory_query(name, t, Some((1400, false)));
        let q = Query::parse(&p).unwrap();
        assert_eq!(q.qname().to_string(), name);
        assert_eq!(q.qtype(), u16::from(t));
        assert_eq!(type_name(q.qtype()).to_string(), t.to_string());
    }
}

#[test]
fn built_queries_are_byte_for_byte_hickorys() {
    for (name, wire, qtype, edns) in [
        (
            "WwW.Example.org.",
            &b"\x03WwW\x07Example\x03org\x00"[..],
            RecordType::AAAA,
            None,
        ),
        (
            "a.b.",
            b"\x01a\x01b\x00",
            RecordType::NS,
            Some((1232, true)),
        ),
        (".", b"\x00", RecordType::SOA, Some((4096, false))),
    ] {
        let mut ours =
            QueryBuilder::new(Name::from_wire(wire).unwrap(), u16::from(qtype)).id(0x4242);
        if let Some((size, do_bit)) = edns {
            ours = ours.edns(size, do_bit);
        }
        assert_eq!(
            ours.build(),
            hickory_query(name, qtype, edns),
            "{name} {qtype}"
        );
    }
}
