//! Queries written and replies read by hickory-proto (an implementation other than the
//! server's), for the tests that compare whole sections: the reply over UDP, the same over
//! TCP; sections as `NAME TTL TYPE DATA` lines; answers and negative answers checked.

use hickory_proto::op::{Edns, Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::{Name, RData, Record, RecordType};
use std::time::Duration;

/// A query for `name rtype`: RD set, EDNS with a 4096-byte payload.
pub fn packet(id: u16, name: &str, rtype: RecordType) -> Vec<u8> {
    let mut m = Message::new(id, MessageType::Query, OpCode::Query);
    m.metadata.recursion_desired = true;
    m.add_query(Query::query(Name::from_ascii(name).unwrap(), rtype));
    let mut e = Edns::new();
    e.set_max_payload(4096);
    m.set_edns(e);
    m.to_vec().unwrap()
}

/// The reply over UDP, which must equal the reply over TCP.
pub fn ask(port: u16, name: &str, rtype: RecordType) -> Message {
    let q = packet(0x4b38, name, rtype);
    let (udp, tcp) = super::udp_and_tcp(port, &q);
    assert_eq!(udp, tcp, "UDP and TCP replies differ for {name} {rtype}");
    Message::from_vec(&udp).expect("the reply parses")
}

/// A section as `NAME TTL TYPE DATA` lines, sorted (an SOA without its serial, which is a
/// time).
pub fn lines(rs: &[Record]) -> Vec<String> {
    let mut v: Vec<String> = rs
        .iter()
        .filter(|r| r.record_type() != RecordType::OPT)
        .map(|r| {
            let data = match &r.data {
                RData::A(a) => a.0.to_string(),
                RData::AAAA(a) => a.0.to_string(),
                RData::PTR(p) => p.0.to_string(),
                RData::CNAME(c) => c.0.to_string(),
                RData::NS(n) => n.0.to_string(),
                RData::SRV(s) => format!("{} {} {} {}", s.priority, s.weight, s.port, s.target),
                RData::TXT(t) => t.to_string(),
                RData::SOA(s) => format!(
                    "{} {} {} {} {} {}",
                    s.mname, s.rname, s.refresh, s.retry, s.expire, s.minimum
                ),
                other => format!("{other:?}"),
            };
            format!("{} {} {} {data}", r.name, r.ttl, r.record_type())
        })
        .collect();
    v.sort();
    v
}

/// An authoritative NOERROR whose answer section is `want` (in any order).
#[track_caller]
pub fn answer(m: &Message, want: &[&str]) {
    assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{m:?}");
    assert!(m.metadata.authoritative, "AA: {m:?}");
    let mut w: Vec<String> = want.iter().map(|s| s.to_string()).collect();
    w.sort();
    assert_eq!(lines(&m.answers), w, "{m:?}");
}

/// An authoritative negative answer with `rcode`: no answer, the zone's SOA alone in the
/// authority section. Its line.
#[track_caller]
pub fn negative(m: &Message, rcode: ResponseCode) -> String {
    assert_eq!(m.metadata.response_code, rcode, "{m:?}");
    assert!(m.metadata.authoritative, "AA: {m:?}");
    assert!(m.answers.is_empty(), "{m:?}");
    let mut soa = lines(&m.authorities);
    assert_eq!(soa.len(), 1, "the SOA: {m:?}");
    assert_eq!(m.authorities[0].record_type(), RecordType::SOA, "{m:?}");
    soa.remove(0)
}

/// Waits (at most 10 s) until `ok` holds for `name rtype` over UDP and TCP; how long.
#[track_caller]
pub fn eventually(
    port: u16,
    name: &str,
    rtype: RecordType,
    ok: impl Fn(&Message) -> bool,
) -> Duration {
    super::eventually(port, &packet(0x4b39, name, rtype), ok)
}
