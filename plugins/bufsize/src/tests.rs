use super::*;
use ringdns_plugin::Link;
use ringdns_plugin::wire::class::IN;
use ringdns_plugin::wire::rcode::NOERROR;
use ringdns_plugin::wire::rtype::A;
use ringdns_plugin::wire::{Header, MessageWriter, Name, Owner, QueryBuilder};
use ringdns_testkit::{chain_once, config, udp_request, wire_name};
use std::cell::Cell;

fn size(text: &str) -> Result<u16, String> {
    config::<Bufsize>(text).map(|(_, c)| c.size)
}

#[test]
fn setup_takes_a_size_from_512_to_4096_defaulting_to_1232() {
    assert_eq!(size(". {\n bufsize\n}\n"), Ok(1232));
    assert_eq!(size(". {\n bufsize 512\n}\n"), Ok(512));
    assert_eq!(size(". {\n bufsize 4096\n}\n"), Ok(4096));
    assert_eq!(
        size(". {\n bufsize 1100\n bufsize 1200\n}\n"),
        Err("Corefile:3 - Error during parsing: plugin/bufsize: this plugin can only be used once per Server Block".into())
    );
    for (arg, after) in [
        ("511", "511"),
        ("4097", "4097"),
        ("big", "big"),
        ("1100 1200", "1200"),
    ] {
        assert_eq!(
            size(&format!(". {{\n bufsize {arg}\n}}\n")),
            Err(format!(
                "Corefile:2 - Error during parsing: plugin/bufsize: Wrong argument count or unexpected line ending after '{after}'"
            )),
            "{arg}"
        );
    }
}

/// The rest of the chain: notes the UDP size it saw, answers with `records` addresses.
struct Rest {
    saw: Cell<Option<u16>>,
    records: usize,
}

ringdns_testkit::rest_of_chain!(Rest, answer);

impl Rest {
    fn answer(&self, req: &mut Request<'_>) -> Status {
        self.saw.set(req.query.opt().map(|o| o.udp_size));
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

/// Serves `example.org. A` (EDNS with `edns` as its size, or none) through `bufsize SIZE`
/// at once and inline: the size the rest saw, the reply's length, its TC bit and its OPT's
/// size, the same on both passes.
fn served(
    limit: u16,
    edns: Option<u16>,
    records: usize,
) -> (Option<u16>, usize, bool, Option<u16>) {
    let mut seen = Vec::new();
    for at_once in [true, false] {
        let (_, c) = config::<Bufsize>(&format!(". {{\n bufsize {limit}\n}}\n")).unwrap();
        let core = CoreInfo {
            index: 0,
            cpu: 0,
            cores: 1,
        };
        let chain = Link {
            plugin: Bufsize::build(&Arc::new(c), &core),
            rest: Rest {
                saw: Cell::new(None),
                records,
            },
        };
        let wire = wire_name("example.org.");
        let b = QueryBuilder::new(Name::from_wire(&wire).unwrap(), A);
        let p = match edns {
            Some(s) => b.edns(s, false).build(),
            None => b.build(),
        };
        let mut reply = Vec::new();
        let mut req = udp_request(&p, "127.0.0.1:53".parse().unwrap(), &mut reply, false);
        chain_once(&chain, &mut req, at_once);
        assert_eq!(
            req.query.opt().map(|o| o.udp_size),
            edns,
            "the client's query as it came"
        );
        let opt = ringdns_plugin::wire::records(&reply)
            .unwrap()
            .flatten()
            .find(|r| r.rtype == OPT)
            .map(|r| r.class);
        let h = Header::of(&reply).unwrap();
        seen.push((chain.rest.saw.get(), reply.len(), h.tc(), opt));
    }
    assert_eq!(seen[0], seen[1], "both passes");
    seen.remove(0)
}

#[test]
fn a_larger_size_is_cut_for_the_rest_and_for_the_reply() {
    let (saw, len, tc, opt) = served(1100, Some(4096), 1);
    assert_eq!((saw, tc, opt), (Some(1100), false, Some(1100)));
    assert!(len < 100);
    // 80 addresses (1.3 KB) fit the client's 4096 but not the limit: cut, with TC.
    let (_, len, tc, opt) = served(1100, Some(4096), 80);
    assert!(len <= 1100 && tc, "{len} bytes");
    assert_eq!(opt, Some(1100));
}

#[test]
fn a_smaller_size_and_a_query_without_edns_go_on_as_they_came() {
    assert_eq!(served(1232, Some(1232), 1).0, Some(1232));
    assert_eq!(served(1232, Some(600), 1).0, Some(600));
    assert_eq!(served(1232, None, 1).0, None);
}
