use super::*;
use ringdns_plugin::Link;
use ringdns_plugin::wire::class::IN;
use ringdns_plugin::wire::rcode::{NOERROR, NXDOMAIN, SERVFAIL};
use ringdns_plugin::wire::rtype::{A, AXFR, MX, NS, RRSIG, SOA};
use ringdns_plugin::wire::{Header, MessageWriter, Name, Owner, QueryBuilder};
use ringdns_testkit::{chain_once, config, udp_request, wire_name};

/// What the rest of the chain writes into its reply (rcode first).
type Write = fn(&mut MessageWriter<'_>);

/// The rest of the chain: writes a reply with `rcode` and the records `write` pushes, or
/// leaves a SERVFAIL to the server.
struct Writes(u8, Write);

ringdns_testkit::rest_of_chain!(Writes, write);

impl Writes {
    fn write(&self, req: &mut Request<'_>) -> Status {
        if self.0 == SERVFAIL {
            return Status::rcode(SERVFAIL);
        }
        let mut w = MessageWriter::reply(&req.query, req.reply, self.0);
        (self.1)(&mut w);
        w.finish();
        req.finalize_reply();
        Status::written()
    }
}

const NS1: &[u8] = b"\x03ns1\x07example\x00";

fn answer(w: &mut MessageWriter<'_>) {
    w.push(Section::Answer, Owner::Question, A, IN, 60, &[192, 0, 2, 1])
        .unwrap();
}

fn authority_ns(w: &mut MessageWriter<'_>) {
    w.push(Section::Authority, Owner::Pointer(12), NS, IN, 60, NS1)
        .unwrap();
}

fn glue(w: &mut MessageWriter<'_>) {
    w.push(
        Section::Additional,
        Owner::Wire(NS1),
        A,
        IN,
        60,
        &[192, 0, 2, 53],
    )
    .unwrap();
}

fn soa(w: &mut MessageWriter<'_>) {
    let mut rd = NS1.to_vec();
    rd.extend_from_slice(NS1);
    rd.extend_from_slice(&[0; 20]);
    w.push(Section::Authority, Owner::Pointer(12), SOA, IN, 60, &rd)
        .unwrap();
}

/// An RRSIG in the answer, valid from `inception` to `expiration` (Unix seconds).
fn rrsig(w: &mut MessageWriter<'_>, inception: u32, expiration: u32) {
    let mut rd = vec![0, 1, 8, 2, 0, 0, 0, 60];
    rd.extend_from_slice(&expiration.to_be_bytes());
    rd.extend_from_slice(&inception.to_be_bytes());
    rd.extend_from_slice(&[0, 1]);
    rd.extend_from_slice(NS1);
    rd.extend_from_slice(&[1; 32]);
    w.push(Section::Answer, Owner::Question, RRSIG, IN, 60, &rd)
        .unwrap();
}

fn now() -> u32 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs() as u32
}

/// `www.example. qtype` with EDNS (1232, DO as given), or without.
fn packet(qtype: u16, edns: Option<bool>) -> Vec<u8> {
    let wire = wire_name("www.example.");
    let q = QueryBuilder::new(Name::from_wire(&wire).unwrap(), qtype).id(0x1111);
    match edns {
        Some(do_bit) => q.edns(1232, do_bit).build(),
        None => q.build(),
    }
}

/// (ANCOUNT, NSCOUNT, ARCOUNT, TC) of the reply minimal sends for what `rest` wrote, the
/// same on both passes; `None` when nothing was written (the server writes it).
fn counts(rest: Writes, packet: &[u8]) -> Option<(u16, u16, u16, bool)> {
    let chain = Link {
        plugin: Some(Minimal),
        rest,
    };
    let mut seen = Vec::new();
    for at_once in [true, false] {
        let mut reply = Vec::new();
        let mut req = udp_request(packet, "127.0.0.1:53".parse().unwrap(), &mut reply, false);
        let status = chain_once(&chain, &mut req, at_once);
        seen.push(Header::of(&reply).map(|h| {
            assert_eq!(status, Status::written());
            assert!(
                records(&reply).unwrap().all(|r| r.is_ok()),
                "a valid message"
            );
            (h.ancount(), h.nscount(), h.arcount(), h.tc())
        }));
    }
    assert_eq!(seen[0], seen[1], "both passes");
    seen.remove(0)
}

#[test]
fn a_positive_reply_keeps_its_answer_and_the_clients_opt() {
    let w = |w: &mut MessageWriter<'_>| {
        answer(w);
        authority_ns(w);
        glue(w);
    };
    assert_eq!(
        counts(Writes(NOERROR, w), &packet(A, None)),
        Some((1, 0, 0, false))
    );
    // The OPT finalize appended goes and comes back.
    assert_eq!(
        counts(Writes(NOERROR, w), &packet(A, Some(false))),
        Some((1, 0, 1, false))
    );
}

#[test]
fn a_plain_empty_noerror_is_stripped_too() {
    let w = |w: &mut MessageWriter<'_>| glue(w);
    assert_eq!(
        counts(Writes(NOERROR, w), &packet(MX, None)),
        Some((0, 0, 0, false))
    );
}

#[test]
fn denials_delegations_errors_and_transfers_go_out_as_they_are() {
    let nodata = |w: &mut MessageWriter<'_>| soa(w);
    assert_eq!(
        counts(Writes(NOERROR, nodata), &packet(MX, None)),
        Some((0, 1, 0, false))
    );
    assert_eq!(
        counts(Writes(NXDOMAIN, nodata), &packet(A, None)),
        Some((0, 1, 0, false))
    );
    let delegation = |w: &mut MessageWriter<'_>| {
        authority_ns(w);
        glue(w);
    };
    assert_eq!(
        counts(Writes(NOERROR, delegation), &packet(A, None)),
        Some((0, 1, 1, false))
    );
    // NXDOMAIN with an answer (a CNAME to a name that does not exist) is OtherError.
    let alias = |w: &mut MessageWriter<'_>| {
        answer(w);
        soa(w);
    };
    assert_eq!(
        counts(Writes(NXDOMAIN, alias), &packet(A, None)),
        Some((1, 1, 0, false))
    );
    let full = |w: &mut MessageWriter<'_>| {
        answer(w);
        authority_ns(w);
    };
    assert_eq!(
        counts(Writes(NOERROR, full), &packet(AXFR, None)),
        Some((1, 1, 0, false))
    );
    assert_eq!(counts(Writes(SERVFAIL, full), &packet(A, None)), None);
}

#[test]
fn a_dnssec_reply_with_an_expired_signature_is_left_alone() {
    let expired = |w: &mut MessageWriter<'_>| {
        answer(w);
        rrsig(w, now() - 7200, now() - 3600);
        authority_ns(w);
    };
    let valid = |w: &mut MessageWriter<'_>| {
        answer(w);
        rrsig(w, now() - 3600, now() + 3600);
        authority_ns(w);
    };
    assert_eq!(
        counts(Writes(NOERROR, expired), &packet(A, Some(true))),
        Some((2, 1, 1, false))
    );
    assert_eq!(
        counts(Writes(NOERROR, valid), &packet(A, Some(true))),
        Some((2, 0, 1, false))
    );
    // Without DO, Typify does not look at signatures.
    assert_eq!(
        counts(Writes(NOERROR, expired), &packet(A, Some(false))),
        Some((2, 0, 1, false))
    );
}

#[test]
fn a_reply_cut_for_its_additional_records_is_whole_once_they_go() {
    // 40 glue records do not fit in 512 bytes beside the answer: the reply is cut with TC,
    // its answer whole; without them it fits.
    let big = |w: &mut MessageWriter<'_>| {
        answer(w);
        authority_ns(w);
        for _ in 0..40 {
            glue(w);
        }
    };
    assert_eq!(
        counts(Writes(NOERROR, big), &packet(A, None)),
        Some((1, 0, 0, false))
    );
}

#[test]
fn setup_takes_no_argument() {
    assert!(config::<Minimal>(". {\n minimal\n}\n").is_ok());
    assert_eq!(
        config::<Minimal>(". {\n minimal x\n}\n").unwrap_err(),
        "Corefile:2 - Error during parsing: plugin/minimal: Wrong argument count or unexpected line ending after 'x'"
    );
}
