use super::*;
use ringdns_plugin::Link;
use ringdns_plugin::wire::rtype::A;
use ringdns_plugin::wire::{Name, QueryBuilder};
use ringdns_testkit::{chain_once, config_with_zones, udp_request, wire_name};
use std::cell::RefCell;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// The rest of the chain: publishes `test/name` (the query name) and `test/pass`, and
/// notes what it could read back; SERVFAIL, for the server to write.
#[derive(Default)]
struct Publisher {
    read: RefCell<Vec<Option<String>>>,
}

ringdns_testkit::rest_of_chain!(Publisher, publish);

impl Publisher {
    fn publish(&self, req: &mut Request<'_>) -> Status {
        let published = req.set_metadata("test/name", req.query.qname());
        req.set_metadata("test/pass", if req.can_wait() { "later" } else { "now" });
        let read = req.metadata().and_then(|m| m.get("test/name"));
        assert_eq!(published, read.is_some());
        self.read.borrow_mut().push(read);
        Status::rcode(ringdns_plugin::wire::rcode::SERVFAIL)
    }
}

fn plugin(text: &str) -> Metadata {
    let (_, c) = config_with_zones::<Metadata>(text).unwrap();
    let core = CoreInfo {
        index: 0,
        cpu: 0,
        cores: 1,
    };
    Metadata::build(&Arc::new(c), &core).unwrap()
}

fn packet(name: &str) -> Vec<u8> {
    let wire = wire_name(name);
    QueryBuilder::new(Name::from_wire(&wire).unwrap(), A).build()
}

/// What the rest read of `test/name` for `name`, at once, inline and deferred.
fn read_on_every_pass(text: &str, name: &str) -> Vec<Option<String>> {
    let chain = Link {
        plugin: Some(plugin(text)),
        rest: Publisher::default(),
    };
    let q = packet(name);
    let client = "192.0.2.1:5353".parse().unwrap();
    for at_once in [true, false] {
        let mut reply = Vec::new();
        let mut req = udp_request(&q, client, &mut reply, false);
        chain_once(&chain, &mut req, at_once);
        assert!(
            req.metadata().is_none(),
            "the store is lent to the rest only"
        );
    }
    let mut reply = Vec::new();
    let mut req = udp_request(&q, client, &mut reply, true);
    req.start_later_pass();
    let polled = pin!(chain.serve(&mut req)).poll(&mut Context::from_waker(Waker::noop()));
    assert!(matches!(polled, Poll::Ready(Ok(_))));
    chain.rest.read.take()
}

#[test]
fn the_rest_publishes_and_reads_metadata_on_every_pass() {
    let read = read_on_every_pass(". {\n metadata\n}\n", "www.example.org.");
    assert_eq!(read, vec![Some("www.example.org.".to_owned()); 3]);
}

#[test]
fn only_names_in_its_zones_get_metadata() {
    let text = ". {\n metadata example.org\n}\n";
    assert_eq!(
        read_on_every_pass(text, "a.EXAMPLE.org."),
        vec![Some("a.EXAMPLE.org.".to_owned()); 3]
    );
    assert_eq!(read_on_every_pass(text, "example.net."), vec![None; 3]);
    // The zones default to the block's.
    let text = "example.com {\n metadata\n}\n";
    assert_eq!(read_on_every_pass(text, "x.example.org."), vec![None; 3]);
    assert!(read_on_every_pass(text, "x.example.com.")[0].is_some());
}

#[test]
fn each_query_starts_with_no_metadata() {
    let chain = Link {
        plugin: Some(plugin(". {\n metadata\n}\n")),
        rest: Publisher::default(),
    };
    let client = "192.0.2.1:5353".parse().unwrap();
    for name in ["a.example.", "b.example."] {
        let q = packet(name);
        let mut reply = Vec::new();
        let mut req = udp_request(&q, client, &mut reply, false);
        chain_once(&chain, &mut req, true);
    }
    assert_eq!(
        chain.rest.read.take(),
        [Some("a.example.".into()), Some("b.example.".into())]
    );
}

fn setup_err(text: &str) -> String {
    config_with_zones::<Metadata>(text).unwrap_err()
}

#[test]
fn setup_takes_zones_and_nothing_else_once() {
    assert!(config_with_zones::<Metadata>(". {\n metadata a.org b.org\n}\n").is_ok());
    for bad in [
        ". {\n metadata {\n  x\n }\n}\n",
        ". {\n metadata\n metadata\n}\n",
    ] {
        let e = setup_err(bad);
        assert!(
            e.contains("plugin/metadata: Wrong argument count"),
            "{bad}: {e}"
        );
    }
}
