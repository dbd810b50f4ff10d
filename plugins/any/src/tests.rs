use super::*;
use ringdns_plugin::wire::Query;
use ringdns_plugin::wire::QueryBuilder;
use ringdns_plugin::wire::rtype::{A, MX};
use ringdns_plugin::wire::{Header, Name, records};
use ringdns_testkit::{config, screen_once, wire_name};

fn packet(name: &str, qtype: u16) -> Vec<u8> {
    let wire = wire_name(name);
    QueryBuilder::new(Name::from_wire(&wire).unwrap(), qtype)
        .id(0x4242)
        .build()
}

fn client() -> std::net::SocketAddr {
    "127.0.0.1:5353".parse().unwrap()
}

#[test]
fn an_any_query_gets_the_rfc_8482_hinfo_on_both_passes() {
    let q = packet("Example.ORG.", ANY);
    for at_once in [true, false] {
        let (status, reply) = screen_once(Any, &q, client(), 9, at_once);
        assert_eq!(status, Status::written(), "at once: {at_once}");
        let h = Header::of(&reply).unwrap();
        assert_eq!((h.id(), h.rcode(), h.ancount()), (0x4242, NOERROR, 1));
        assert!(!h.aa(), "CoreDNS does not set AA");
        let r = records(&reply).unwrap().next().unwrap().unwrap();
        assert_eq!((r.rtype, r.class, r.ttl(&reply)), (HINFO, IN, TTL));
        assert_eq!(&reply[r.rdata], b"\x07RFC8482\x00");
        // Owned by the question name, in the client's case.
        let asked = Query::parse(&q).unwrap();
        assert_eq!(
            &reply[12..12 + asked.question_bytes().len()],
            asked.question_bytes()
        );
    }
}

#[test]
fn other_queries_go_to_the_next_plugin() {
    for qtype in [A, MX, HINFO] {
        let q = packet("example.org.", qtype);
        for at_once in [true, false] {
            let (status, reply) = screen_once(Any, &q, client(), 9, at_once);
            assert_eq!(status.rcode, 9, "qtype {qtype}: the next plugin's rcode");
            assert!(reply.is_empty(), "nothing written");
        }
    }
}

#[test]
fn setup_takes_no_argument_and_no_block() {
    assert!(config::<Any>(". {\n any\n}\n").is_ok());
    let err = config::<Any>(". {\n any x\n}\n").unwrap_err();
    assert_eq!(
        err,
        "Corefile:2 - Error during parsing: plugin/any: Wrong argument count or unexpected line ending after 'x'"
    );
    let err = config::<Any>(". {\n any {\n  foo\n }\n}\n").unwrap_err();
    assert_eq!(
        err,
        "Corefile:3 - Error during parsing: plugin/any: unknown property 'foo'"
    );
}
