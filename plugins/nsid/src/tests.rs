use super::*;
use ringdns_plugin::Link;
use ringdns_plugin::wire::class::IN;
use ringdns_plugin::wire::edns::COOKIE;
use ringdns_plugin::wire::rcode::{NOERROR, SERVFAIL};
use ringdns_plugin::wire::rtype::{A, OPT};
use ringdns_plugin::wire::{
    EdnsOptions, Header, MessageWriter, Name, Owner, QueryBuilder, Section, records,
};
use ringdns_testkit::{chain_once, config, udp_request, wire_name};

/// The rest of the chain: an A answer with `records` of them (so a reply can be made too
/// large for the client), or `rcode` for the server to write.
struct Answers {
    records: usize,
    rcode: u8,
}

ringdns_testkit::rest_of_chain!(Answers, answer);

impl Answers {
    fn answer(&self, req: &mut Request<'_>) -> Status {
        if self.rcode != NOERROR {
            return Status::rcode(self.rcode);
        }
        let mut w = MessageWriter::reply(&req.query, req.reply, NOERROR);
        for i in 0..self.records {
            w.push(
                Section::Answer,
                Owner::Question,
                A,
                IN,
                60,
                &[10, 0, 0, i as u8],
            )
            .unwrap();
        }
        w.finish();
        req.finalize_reply();
        Status::written()
    }
}

fn nsid(text: &str) -> Nsid {
    let (_, c) = config::<Nsid>(text).unwrap();
    let core = CoreInfo {
        index: 0,
        cpu: 0,
        cores: 1,
    };
    Nsid::build(&Arc::new(c), &core).unwrap()
}

/// `example.org. A` with EDNS (size 1232) and `options` (code, data).
fn packet(options: &[(u16, &[u8])]) -> Vec<u8> {
    let wire = wire_name("example.org.");
    let mut q = QueryBuilder::new(Name::from_wire(&wire).unwrap(), A)
        .edns(1232, false)
        .build();
    let mut rd = Vec::new();
    for (c, d) in options {
        rd.extend_from_slice(&c.to_be_bytes());
        rd.extend_from_slice(&(d.len() as u16).to_be_bytes());
        rd.extend_from_slice(d);
    }
    let n = q.len();
    q[n - 2..].copy_from_slice(&(rd.len() as u16).to_be_bytes());
    q.extend_from_slice(&rd);
    q
}

/// An OPT's options: (code, data).
type Options = Vec<(u16, Vec<u8>)>;

/// Serves `packet` through nsid in front of `rest`, as the chain holds it: at once, or
/// through the future polled once. The status, the reply, and its OPT's options (`None`
/// without an OPT).
fn served(
    plugin: Nsid,
    rest: Answers,
    packet: &[u8],
    at_once: bool,
) -> (Status, Vec<u8>, Option<Options>) {
    let chain = Link {
        plugin: Some(plugin),
        rest,
    };
    let mut reply = Vec::new();
    let mut req = udp_request(packet, "127.0.0.1:53".parse().unwrap(), &mut reply, false);
    let status = chain_once(&chain, &mut req, at_once);
    let opt = records(&reply).ok().and_then(|rs| {
        rs.map(Result::unwrap).find(|r| r.rtype == OPT).map(|r| {
            EdnsOptions::new(&reply[r.rdata])
                .map(|(c, d)| (c, d.to_vec()))
                .collect()
        })
    });
    (status, reply, opt)
}

#[test]
fn a_query_with_an_nsid_option_gets_the_identifier_on_both_passes() {
    for at_once in [true, false] {
        for asked in [&b""[..], b"ignored payload"] {
            let q = packet(&[(COOKIE, &[7; 8]), (NSID, asked)]);
            let (status, reply, opt) = served(
                nsid(". {\n nsid Use The Force\n}\n"),
                Answers {
                    records: 1,
                    rcode: NOERROR,
                },
                &q,
                at_once,
            );
            assert_eq!(status, Status::written());
            assert_eq!(Header::of(&reply).unwrap().ancount(), 1);
            assert_eq!(
                opt.unwrap(),
                [(COOKIE, vec![7; 8]), (NSID, b"Use The Force".to_vec())],
                "at once: {at_once}"
            );
        }
    }
}

#[test]
fn the_host_name_is_the_default_identifier() {
    let q = packet(&[(NSID, b"")]);
    let (_, _, opt) = served(
        nsid(". {\n nsid\n}\n"),
        Answers {
            records: 1,
            rcode: NOERROR,
        },
        &q,
        true,
    );
    let host = ringdns_plugin::hostname::hostname();
    assert_eq!(opt.unwrap(), [(NSID, host.into_bytes())]);
}

#[test]
fn a_query_without_the_option_and_a_reply_the_server_writes_get_none() {
    let q = packet(&[(COOKIE, &[7; 8])]);
    let (_, _, opt) = served(
        nsid(". {\n nsid x\n}\n"),
        Answers {
            records: 1,
            rcode: NOERROR,
        },
        &q,
        true,
    );
    assert_eq!(opt.unwrap(), [(COOKIE, vec![7; 8])]);
    let q = packet(&[(NSID, b"")]);
    let (status, reply, _) = served(
        nsid(". {\n nsid x\n}\n"),
        Answers {
            records: 1,
            rcode: SERVFAIL,
        },
        &q,
        false,
    );
    assert_eq!(status.rcode, SERVFAIL);
    assert!(reply.is_empty(), "the server writes it, without NSID");
}

#[test]
fn a_reply_the_identifier_makes_too_large_is_cut_as_the_server_cuts() {
    // 1232 bytes allowed: 70 addresses of 16 bytes fit with room to spare, but not beside
    // an identifier of 300 bytes.
    let q = packet(&[(NSID, b"")]);
    let id = "i".repeat(300);
    let (_, reply, opt) = served(
        nsid(&format!(". {{\n nsid {id}\n}}\n")),
        Answers {
            records: 70,
            rcode: NOERROR,
        },
        &q,
        true,
    );
    assert!(reply.len() <= 1232, "{} bytes", reply.len());
    let h = Header::of(&reply).unwrap();
    assert!(h.tc(), "truncated");
    assert!(h.ancount() < 70);
    assert_eq!(
        opt.unwrap(),
        [(NSID, id.into_bytes())],
        "the identifier kept"
    );
}

#[test]
fn setup_takes_the_data_once_per_block() {
    assert_eq!(
        config::<Nsid>(". {\n nsid a  b c\n}\n").unwrap().1.data,
        b"a b c"
    );
    assert_eq!(
        config::<Nsid>(". {\n nsid a\n nsid b\n}\n").unwrap_err(),
        "Corefile:3 - Error during parsing: plugin/nsid: this plugin can only be used once per Server Block"
    );
    assert_eq!(
        config::<Nsid>(". {\n nsid a {\n  b\n }\n}\n").unwrap_err(),
        "Corefile:3 - Error during parsing: plugin/nsid: unknown property 'b'"
    );
}
