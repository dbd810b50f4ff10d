use super::*;
use ringdns_plugin::wire::rtype::MX;
use ringdns_plugin::wire::{Header, Name, QueryBuilder, expand_name, records};
use ringdns_testkit::{config, screen_once, wire_name};

fn local(text: &str) -> Local {
    let (_, c) = config::<Local>(text).unwrap();
    let core = CoreInfo {
        index: 0,
        cpu: 0,
        cores: 1,
    };
    Local::build(&Arc::new(c), &core).unwrap()
}

/// The reply to `name qtype` on both passes (which must be the same): its rcode and its
/// records as `SECTION TYPE OWNER RDATA` (names expanded, lower-case wire bytes shown as
/// text).
fn ask(name: &str, qtype: u16) -> Option<(u8, Vec<String>)> {
    let wire = wire_name(name);
    let q = QueryBuilder::new(Name::from_wire(&wire).unwrap(), qtype)
        .id(0x6161)
        .build();
    let mut seen = Vec::new();
    for at_once in [true, false] {
        let (status, reply) = screen_once(
            local(". {\n local\n}\n"),
            &q,
            "127.0.0.1:9".parse().unwrap(),
            9,
            at_once,
        );
        if status.rcode == 9 {
            assert!(reply.is_empty());
            seen.push(None);
            continue;
        }
        assert_eq!(status, Status::written());
        let h = Header::of(&reply).unwrap();
        assert!(!h.aa(), "no AA, as CoreDNS");
        let rrs = records(&reply)
            .unwrap()
            .map(Result::unwrap)
            .map(|r| {
                assert_eq!((r.class, r.ttl(&reply)), (IN, TTL));
                let mut owner = Vec::new();
                expand_name(&reply, r.owner.start, reply.len(), &mut owner).unwrap();
                let owner = Name::from_wire(&owner).unwrap().to_string();
                let data = match r.rtype {
                    A | AAAA => format!("{:?}", &reply[r.rdata]),
                    _ => {
                        let mut n = Vec::new();
                        expand_name(&reply, r.rdata.start, r.rdata.end, &mut n).unwrap();
                        Name::from_wire(&n).unwrap().to_string()
                    }
                };
                format!("{:?} {} {owner} {data}", r.section, type_name(r.rtype))
            })
            .collect();
        seen.push(Some((h.rcode(), rrs)));
    }
    assert_eq!(seen[0], seen[1], "{name}: both passes");
    seen.remove(0)
}

#[test]
fn localhost_names_get_the_loopback_addresses() {
    for name in ["localhost.", "www.LocalHost.", "localhost.example.org."] {
        let (rc, rrs) = ask(name, A).unwrap();
        assert_eq!(
            (rc, rrs),
            (NOERROR, vec![format!("Answer A {name} [127, 0, 0, 1]")])
        );
        let (_, rrs) = ask(name, AAAA).unwrap();
        assert_eq!(
            rrs,
            [format!(
                "Answer AAAA {name} {:?}",
                [0u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
            )]
        );
    }
    // Other types: NODATA, with an SOA owned by the name itself.
    let (rc, rrs) = ask("www.localhost.", MX).unwrap();
    assert_eq!(
        (rc, rrs),
        (
            NOERROR,
            vec!["Authority SOA www.localhost. localhost.".into()]
        )
    );
}

#[test]
fn the_loopbacks_reverse_names_point_to_localhost() {
    let (rc, rrs) = ask("1.0.0.127.in-addr.arpa.", PTR).unwrap();
    assert_eq!(
        (rc, rrs),
        (
            NOERROR,
            vec!["Answer PTR 1.0.0.127.in-addr.arpa. localhost.".into()]
        )
    );
    let v6 = format!("1.{}ip6.arpa.", "0.".repeat(31));
    let (_, rrs) = ask(&v6, PTR).unwrap();
    assert_eq!(rrs, [format!("Answer PTR {v6} localhost.")]);
    // The zone's SOA for NODATA under 127.in-addr.arpa.
    let (rc, rrs) = ask("1.0.0.127.in-addr.arpa.", A).unwrap();
    assert_eq!(
        (rc, rrs),
        (
            NOERROR,
            vec!["Authority SOA 127.in-addr.arpa. localhost.".into()]
        )
    );
}

#[test]
fn the_zones_answer_their_apex_and_deny_the_rest() {
    let (_, rrs) = ask("127.in-addr.arpa.", SOA).unwrap();
    assert_eq!(rrs, ["Answer SOA 127.in-addr.arpa. localhost."]);
    let (_, rrs) = ask("localhost.", NS).unwrap();
    assert_eq!(rrs, ["Answer NS localhost. localhost."]);
    let (rc, rrs) = ask("9.9.0.127.in-addr.arpa.", PTR).unwrap();
    assert_eq!(
        (rc, rrs),
        (
            NXDOMAIN,
            vec!["Authority SOA 127.in-addr.arpa. localhost.".into()]
        )
    );
    let (rc, rrs) = ask("1.255.in-addr.arpa.", A).unwrap();
    assert_eq!(
        (rc, rrs),
        (
            NXDOMAIN,
            vec!["Authority SOA 255.in-addr.arpa. localhost.".into()]
        )
    );
}

#[test]
fn other_names_go_to_the_next_plugin() {
    for name in [
        "example.org.",
        "localhostx.org.",
        "1.0.0.10.in-addr.arpa.",
        "in-addr.arpa.",
    ] {
        assert_eq!(ask(name, A), None, "{name}");
    }
}

#[test]
fn localhost_names_are_counted_and_the_prefix_can_be_turned_off() {
    let l = local(". {\n local {\n  localhost_prefix off\n }\n}\n");
    let q = |name: &str| {
        let wire = wire_name(name);
        QueryBuilder::new(Name::from_wire(&wire).unwrap(), A).build()
    };
    let served = |name: &str| {
        let packet = q(name);
        let query = ringdns_plugin::wire::Query::parse(&packet).unwrap();
        let at = "127.0.0.1:9".parse().unwrap();
        let mut reply = Vec::new();
        let mut req = Request::new(
            query,
            at,
            at,
            ringdns_plugin::Proto::Udp,
            ".",
            "dns://:53",
            &mut reply,
            false,
        );
        l.screen(&mut req).is_some()
    };
    let before = l.requests.0.get();
    assert!(
        !served("localhost.example.org."),
        "the legacy prefix is off"
    );
    assert!(served("localhost."));
    assert_eq!(
        l.requests.0.get(),
        before,
        "localhost. itself is not counted"
    );
    assert!(served("a.localhost."));
    assert_eq!(l.requests.0.get(), before + 1);
}

#[test]
fn setup_refuses_what_coredns_refuses() {
    for (text, want) in [
        (
            ". {\n local x\n}\n",
            "Corefile:2 - Error during parsing: plugin/local: Wrong argument count or unexpected line ending after 'x'",
        ),
        (
            ". {\n local {\n  localhost_prefix\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/local: Wrong argument count or unexpected line ending after 'localhost_prefix'",
        ),
        (
            ". {\n local {\n  localhost_prefix maybe\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/local: localhost_prefix expects 'on' or 'off', got \"maybe\"",
        ),
        (
            ". {\n local {\n  other\n }\n}\n",
            "Corefile:3 - Error during parsing: plugin/local: unknown property 'other'",
        ),
    ] {
        assert_eq!(config::<Local>(text).unwrap_err(), want, "{text}");
    }
    assert!(!config::<Local>(". {\n local\n}\n").unwrap().1.debug);
}
