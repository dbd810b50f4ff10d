//! any: the real binary answers ANY queries over UDP and TCP on loopback with the one HINFO
//! record RFC 8482 asks for (CPU "RFC8482", OS empty), owned by the question name in the
//! client's case, with the client's OPT; every other query goes on to the next plugin; a bad
//! `any` line is a start error with `FILE:LINE`.
//!
//! Replies are read with hickory-proto (an implementation other than the server's).

mod common;

use common::{Server, query_full, run_expect_failure, udp_and_tcp};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{RData, RecordType};

fn start() -> Server {
    Server::start(|p| format!("{{\n workers 1\n}}\nexample.org:{p} {{\n any\n whoami\n}}\n"))
}

#[test]
fn an_any_query_gets_the_rfc_8482_hinfo_over_udp_and_tcp() {
    let s = start();
    for edns in [None, Some((1232, true))] {
        let q = query_full(0x0a0a, "WWW.Example.org.", 255, 1, edns);
        let (udp, tcp) = udp_and_tcp(s.port, &q);
        assert_eq!(udp, tcp, "the same reply over both transports");
        let m = Message::from_vec(&udp).expect("the reply parses");
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert!(!m.metadata.authoritative, "no AA, as CoreDNS");
        assert_eq!(m.answers.len(), 1, "{m:?}");
        let r = &m.answers[0];
        assert_eq!(r.name.to_string(), "WWW.Example.org.", "the client's case");
        assert_eq!((r.record_type(), r.ttl), (RecordType::HINFO, 8482));
        let RData::HINFO(h) = &r.data else {
            panic!("{r:?}")
        };
        assert_eq!((&h.cpu[..], &h.os[..]), (&b"RFC8482"[..], &b""[..]));
        assert!(m.authorities.is_empty());
        assert_eq!(m.edns.is_some(), edns.is_some(), "the client's OPT: {m:?}");
        let question = ringdns::wire::Query::parse(&q).unwrap().question_bytes();
        assert_eq!(
            &udp[12..12 + question.len()],
            question,
            "the question echoed"
        );
    }
}

#[test]
fn other_queries_go_on_to_the_next_plugin() {
    let s = start();
    for qtype in [1, 28, 13, 16] {
        let q = query_full(0x0b0b, "www.example.org.", qtype, 1, None);
        let (udp, tcp) = udp_and_tcp(s.port, &q);
        for reply in [udp, tcp] {
            let m = Message::from_vec(&reply).unwrap();
            assert_eq!(m.metadata.response_code, ResponseCode::NoError);
            assert!(m.answers.is_empty(), "qtype {qtype}: {m:?}");
            assert!(
                m.additionals
                    .iter()
                    .any(|r| r.record_type() == RecordType::SRV),
                "qtype {qtype}: whoami answered: {m:?}"
            );
        }
    }
}

#[test]
fn a_bad_any_line_is_a_start_error_with_its_line() {
    for (text, line, want) in [
        (
            ".:1053 {\n any extra\n}\n",
            2,
            "plugin/any: Wrong argument count or unexpected line ending after 'extra'",
        ),
        (
            ".:1053 {\n whoami\n any {\n  ttl 5\n }\n}\n",
            4,
            "plugin/any: unknown property 'ttl'",
        ),
    ] {
        let (code, err) = run_expect_failure(text);
        assert_eq!(code, 1, "exit status for:\n{text}\nstderr: {err}");
        let want = format!("Corefile:{line} - Error during parsing: {want}");
        assert!(err.contains(&want), "for:\n{text}\nwant {want:?} in: {err}");
    }
}
