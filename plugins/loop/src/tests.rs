//! Setup, the probe's name, and the counting on the query path (short of the fatal end,
//! which tests/loop.rs sees the real binary take).

use super::*;
use ringdns_plugin::wire::rtype::A;
use ringdns_plugin::wire::{Query, QueryBuilder};
use ringdns_testkit::Next;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

fn config(text: &str) -> Result<Config, String> {
    ringdns_testkit::config_with_zones::<Loop>(text).map(|(_, c)| c)
}

#[test]
fn setup_takes_no_arguments_once_per_block() {
    assert!(config(". {\n loop\n}\n").is_ok());
    let e = config(". {\n loop x\n}\n").err().unwrap();
    assert!(e.contains("plugin/loop: Wrong argument count"), "{e}");
    let e = config(". {\n loop\n loop\n}\n").err().unwrap();
    assert!(
        e.ends_with("plugin/loop: this plugin can only be used once per Server Block"),
        "{e}"
    );
}

#[test]
fn the_probe_name_is_two_random_numbers_under_the_first_zone() {
    let c = config("Example.ORG:1053 b.test {\n loop\n}\n").unwrap();
    let i = &c.inner;
    assert_eq!(i.zone, "example.org.");
    let labels: Vec<&str> = i.qname.split('.').collect();
    assert_eq!(labels.len(), 5, "{}", i.qname);
    for l in &labels[..2] {
        assert!(l.parse::<u64>().unwrap() < 1 << 62);
    }
    assert!(i.qname.ends_with(".example.org."));
    let root = config(". {\n loop\n}\n").unwrap();
    assert_eq!(root.inner.qname.matches('.').count(), 2);
    assert_ne!(
        root.inner.qname,
        config(". {\n loop\n}\n").unwrap().inner.qname
    );
}

fn packet(name: &str, qtype: u16) -> Vec<u8> {
    let wire = ringdns_testkit::wire_name(name);
    let n = ringdns_plugin::wire::Name::from_wire(&wire).unwrap();
    QueryBuilder::new(n, qtype).id(3).build()
}

/// Serves `p` as the server would: `serve_now`, else `serve` inline, else `serve` as a
/// deferred task. Returns the status and how many passes it took.
fn serve(l: &Loop, p: &[u8]) -> (Status, usize) {
    let at = "127.0.0.1:5300".parse().unwrap();
    let next = Next(9);
    for (pass, can_wait) in [(1, false), (2, false), (3, true)] {
        let q = Query::parse(p).unwrap();
        let mut reply = Vec::new();
        let mut req = Request::new(
            q,
            at,
            at,
            ringdns_plugin::Proto::Udp,
            ".",
            "dns://:53",
            &mut reply,
            can_wait,
        );
        if pass == 1 {
            if let Some(s) = l.serve_now(&mut req, &next) {
                return (s, 1);
            }
            continue;
        }
        let fut = pin!(l.serve(&mut req, &next));
        match fut.poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Ok(s)) => return (s, pass),
            Poll::Ready(Err(_)) => continue,
            Poll::Pending => panic!("loop never waits"),
        }
    }
    panic!("deferred on the task pass")
}

#[test]
fn the_probe_is_counted_once_per_query_and_only_while_on() {
    let c = config("example.org {\n loop\n}\n").unwrap();
    let l = Loop::build(
        &Arc::new(c),
        &CoreInfo {
            index: 0,
            cpu: 0,
            cores: 1,
        },
    )
    .unwrap();
    let qname = l.inner.qname.clone();
    // Other queries go on at once.
    assert_eq!(serve(&l, &packet(&qname, A)), (Status::rcode(9), 1));
    assert_eq!(serve(&l, &packet("x.other.", HINFO)), (Status::rcode(9), 1));
    assert_eq!(l.inner.seen.load(Ordering::Relaxed), 0);
    // HINFO under the zone: through the task pass, counted once; its name in any case.
    assert_eq!(
        serve(&l, &packet("x.example.org.", HINFO)),
        (Status::rcode(9), 3)
    );
    assert_eq!(l.inner.seen.load(Ordering::Relaxed), 0);
    assert_eq!(
        serve(&l, &packet(&qname.to_uppercase(), HINFO)),
        (Status::rcode(9), 3)
    );
    assert_eq!(serve(&l, &packet(&qname, HINFO)), (Status::rcode(9), 3));
    assert_eq!(l.inner.seen.load(Ordering::Relaxed), 2);
    // A third would end the process; once off, the probe's name passes uncounted.
    l.inner.disable();
    assert_eq!(serve(&l, &packet(&qname, HINFO)), (Status::rcode(9), 1));
    assert_eq!(l.inner.seen.load(Ordering::Relaxed), 2);
    l.inner.reset();
    assert_eq!(l.inner.seen.load(Ordering::Relaxed), 0);
}

#[test]
fn the_probe_goes_to_the_listener_of_the_first_key() {
    let c = config("example.org:1053 example.com:1054 {\n loop\n}\n").unwrap();
    let i = &c.inner;
    assert_eq!(i.target(), None, "no routes before the listeners are known");
    // An earlier block opened :1054, so the block's routes list it first.
    i.routes
        .set(vec![
            ("dns://:1054".into(), "example.com.".into()),
            ("dns://:1053".into(), "example.org.".into()),
        ])
        .unwrap();
    assert_eq!(
        i.target(),
        Some((":1053".into(), "127.0.0.1:1053".parse().unwrap()))
    );
    // Without a route of the zone, the block's first.
    let c = config("example.org:1053 {\n loop\n}\n").unwrap();
    c.inner
        .routes
        .set(vec![("dns://127.0.0.2:53".into(), "example.net.".into())])
        .unwrap();
    assert_eq!(c.inner.target().unwrap().0, "127.0.0.2:53");
}
