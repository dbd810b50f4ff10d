use super::*;
use ringdns_plugin::wire::class::IN;
use ringdns_plugin::wire::rtype::A;
use ringdns_plugin::wire::{Header, Name, QueryBuilder, records};
use ringdns_testkit::{config, screen_once, setup, wire_name};

fn chaos(text: &str) -> Chaos {
    let (_, c) = config::<Chaos>(text).unwrap();
    let core = CoreInfo {
        index: 0,
        cpu: 0,
        cores: 1,
    };
    Chaos::build(&Arc::new(c), &core).unwrap()
}

fn packet(name: &str, qtype: u16, class: u16) -> Vec<u8> {
    let wire = wire_name(name);
    QueryBuilder::new(Name::from_wire(&wire).unwrap(), qtype)
        .id(0x0c0c)
        .class(class)
        .build()
}

/// The TXT strings answered to `name` (CH TXT) on both passes, which must agree but for
/// the order of authors.
fn answered(text: &str, name: &str) -> Vec<String> {
    let mut seen = Vec::new();
    for at_once in [true, false] {
        let (status, reply) = screen_once(
            chaos(text),
            &packet(name, TXT, CH),
            "127.0.0.1:1".parse().unwrap(),
            9,
            at_once,
        );
        assert_eq!(status, Status::written(), "{name}");
        let h = Header::of(&reply).unwrap();
        assert_eq!((h.rcode(), h.aa()), (NOERROR, false), "{name}");
        let mut strings: Vec<String> = records(&reply)
            .unwrap()
            .map(Result::unwrap)
            .map(|r| {
                assert_eq!((r.rtype, r.class, r.ttl(&reply)), (TXT, CH, 0), "{name}");
                let rdata = &reply[r.rdata];
                assert_eq!(usize::from(rdata[0]), rdata.len() - 1, "one string");
                String::from_utf8(rdata[1..].to_vec()).unwrap()
            })
            .collect();
        strings.sort();
        seen.push(strings);
    }
    assert_eq!(seen[0], seen[1], "{name}: the same on both passes");
    seen.remove(0)
}

#[test]
fn version_names_answer_the_version_ringdns_by_default() {
    let want = format!("ringdns-{}", env!("CARGO_PKG_VERSION"));
    for name in ["version.bind.", "VERSION.Server."] {
        assert_eq!(
            answered(". {\n chaos\n}\n", name),
            std::slice::from_ref(&want)
        );
        assert_eq!(answered(". {\n chaos v2\n}\n", name), ["v2"]);
    }
}

#[test]
fn authors_are_answered_sorted_once_each_and_in_a_new_order_each_time() {
    let text = ". {\n chaos v3 \"Miek Gieben\" carol alice bob alice\n}\n";
    assert_eq!(
        answered(text, "authors.bind."),
        ["Miek Gieben", "alice", "bob", "carol"]
    );
    let c = chaos(text);
    let q = packet("authors.bind.", TXT, CH);
    let orders: BTreeSet<Vec<u8>> = (0..50)
        .map(|_| {
            let (_, reply) = screen_once_ref(&c, &q);
            reply[q.len()..].to_vec()
        })
        .collect();
    assert!(orders.len() > 1, "shuffled: {} orders in 50", orders.len());
}

#[test]
fn the_host_name_answers_hostname_bind_and_id_server() {
    let host = ringdns_plugin::hostname::hostname();
    for name in ["hostname.bind.", "id.server."] {
        assert_eq!(
            answered(". {\n chaos\n}\n", name),
            std::slice::from_ref(&host)
        );
    }
}

#[test]
fn long_strings_are_cut_to_255_bytes() {
    let long = "v".repeat(300);
    let got = answered(
        &format!(". {{\n chaos {long} {long}\n}}\n"),
        "version.bind.",
    );
    assert_eq!(got, ["v".repeat(255)]);
    let got = answered(&format!(". {{\n chaos v {long}\n}}\n"), "authors.bind.");
    assert_eq!(got, ["v".repeat(255)]);
}

#[test]
fn other_queries_go_to_the_next_plugin() {
    let c = ". {\n chaos\n}\n";
    for (name, qtype, class) in [
        ("version.bind.", TXT, IN),
        ("version.bind.", A, CH),
        ("version.example.", TXT, CH),
        ("www.version.bind.", TXT, CH),
    ] {
        for at_once in [true, false] {
            let (status, reply) = screen_once(
                chaos(c),
                &packet(name, qtype, class),
                "127.0.0.1:1".parse().unwrap(),
                9,
                at_once,
            );
            assert_eq!(status.rcode, 9, "{name} {qtype} {class}");
            assert!(reply.is_empty());
        }
    }
}

#[test]
fn setup_opens_the_block_to_ch_queries_and_refuses_what_coredns_refuses() {
    assert!(setup::<Chaos>(". {\n chaos\n}\n").unwrap().allow_chaos);
    assert_eq!(
        setup::<Chaos>(". {\n chaos v2 {\n  unknown\n }\n}\n").unwrap_err(),
        "Corefile:3 - Error during parsing: plugin/chaos: unknown property 'unknown'"
    );
    assert_eq!(
        setup::<Chaos>(". {\n chaos v1\n chaos v2\n}\n").unwrap_err(),
        "Corefile:3 - Error during parsing: plugin/chaos: this plugin can only be used once per Server Block"
    );
}

/// One answer through the screen itself (the instance kept across queries).
fn screen_once_ref(c: &Chaos, packet: &[u8]) -> (Status, Vec<u8>) {
    let q = ringdns_plugin::wire::Query::parse(packet).unwrap();
    let at = "127.0.0.1:1".parse().unwrap();
    let mut reply = Vec::new();
    let mut req = Request::new(
        q,
        at,
        at,
        ringdns_plugin::Proto::Udp,
        ".",
        "dns://:53",
        &mut reply,
        false,
    );
    let status = c.screen(&mut req).expect("answered");
    (status, reply)
}
