use super::*;
use ringdns_plugin::Link;
use ringdns_plugin::wire::flags::{AA, CD, RA, RD};
use ringdns_plugin::wire::rcode::{NOERROR, SERVFAIL};
use ringdns_plugin::wire::{Header as View, MessageWriter};
use ringdns_testkit::{chain_once, config, udp_request};
use std::cell::Cell;

fn parsed(text: &str) -> Result<Config, String> {
    config::<Header>(text).map(|(_, c)| c)
}

#[test]
fn rules_are_read_per_selector_in_order() {
    let c = parsed(
        ". {\n header {\n  response set ra aa\n  response clear rd\n  query set cd\n }\n}\n",
    )
    .unwrap();
    assert_eq!(
        c.response,
        Masks {
            set: RA | AA,
            clear: RD
        }
    );
    assert_eq!(c.query, Masks { set: CD, clear: 0 });
    // The older form, without a selector, is for replies.
    let c = parsed(". {\n header {\n  set ra\n  clear aa\n }\n}\n").unwrap();
    assert_eq!(c.response, Masks { set: RA, clear: AA });
    assert!(c.query.is_empty());
}

#[test]
fn setup_refuses_what_coredns_refuses() {
    for (text, want) in [
        (
            ". {\n header\n}\n",
            "Corefile:2 - Error during parsing: plugin/header: Wrong argument count or unexpected line ending after 'header'",
        ),
        (
            ". {\n header {\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/header: Wrong argument count or unexpected line ending after '}'",
        ),
        (
            ". {\n header {\n  reply set ra\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/header: setting up rule: invalid selector=reply should be query or response",
        ),
        (
            ". {\n header {\n  query\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/header: setting up rule: no flag action provided",
        ),
        (
            ". {\n header {\n  query set\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/header: setting up rule: invalid length for flags, at least one should be provided",
        ),
        (
            ". {\n header {\n  response flip ra\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/header: setting up rule: unknown flag action=flip, should be set or clear",
        ),
        (
            ". {\n header {\n  response set tc\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/header: setting up rule: unknown/unsupported flag=tc",
        ),
    ] {
        assert_eq!(parsed(text).unwrap_err(), want, "{text}");
    }
}

/// The rest of the chain: notes the flags word it saw and writes a reply (RD and CD echoed
/// from the query it saw), or leaves a SERVFAIL to the server.
struct Rest {
    saw: Cell<u16>,
    rcode: u8,
}

ringdns_testkit::rest_of_chain!(Rest, answer);

impl Rest {
    fn answer(&self, req: &mut Request<'_>) -> Status {
        self.saw.set(req.query.flags());
        if self.rcode != NOERROR {
            return Status::rcode(self.rcode);
        }
        MessageWriter::reply(&req.query, req.reply, NOERROR).finish();
        req.finalize_reply();
        Status::written()
    }
}

/// `example. A IN` with `flags`.
fn packet(flags: u16) -> Vec<u8> {
    let mut p = ringdns_testkit::QUERY.to_vec();
    p[2..4].copy_from_slice(&flags.to_be_bytes());
    p
}

/// Serves a query with `flags` through header (its `text`) in front of the rest, at once
/// and inline: the flags word the rest saw and the reply's, the same on both passes.
fn served(text: &str, flags: u16, rcode: u8) -> (u16, Option<u16>) {
    let mut seen = Vec::new();
    for at_once in [true, false] {
        let (_, c) = config::<Header>(text).unwrap();
        let core = CoreInfo {
            index: 0,
            cpu: 0,
            cores: 1,
        };
        let chain = Link {
            plugin: Header::build(&Arc::new(c), &core),
            rest: Rest {
                saw: Cell::new(0xffff),
                rcode,
            },
        };
        let p = packet(flags);
        let mut reply = Vec::new();
        let mut req = udp_request(&p, "127.0.0.1:53".parse().unwrap(), &mut reply, false);
        let status = chain_once(&chain, &mut req, at_once);
        assert_eq!(req.query.flags(), flags, "the client's query as it came");
        assert_eq!(status.rcode, if rcode == NOERROR { 0 } else { rcode });
        seen.push((chain.rest.saw.get(), View::of(&reply).map(|h| h.flags())));
    }
    assert_eq!(seen[0], seen[1], "both passes");
    seen.remove(0)
}

#[test]
fn query_rules_edit_what_the_rest_sees_and_the_reply_echoes_it() {
    let text = ". {\n header {\n  query set cd\n  query clear rd\n }\n}\n";
    let (saw, reply) = served(text, RD, NOERROR);
    assert_eq!(saw, CD);
    assert_eq!(
        reply.unwrap() & (RD | CD),
        CD,
        "RD and CD echoed from the edited query"
    );
    // A query that has the flags already goes on as it came.
    assert_eq!(served(text, CD, NOERROR).0, CD);
}

#[test]
fn response_rules_edit_the_reply_the_rest_wrote() {
    let text = ". {\n header {\n  response set ra aa\n  response clear rd\n }\n}\n";
    let (saw, reply) = served(text, RD, NOERROR);
    assert_eq!(saw, RD, "the query as it came");
    let reply = reply.unwrap();
    assert_eq!(reply & (RA | AA | RD), RA | AA);
    // A SERVFAIL left to the server has no reply to edit.
    assert_eq!(served(text, RD, SERVFAIL).1, None);
}
