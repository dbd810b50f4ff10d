//! Setup: CoreDNS's syntax, defaults, bounds and messages.

use super::*;

fn taps(text: &str) -> Result<Arc<Shared>, String> {
    ringdns_testkit::config::<Dnstap>(text).map(|(_, c)| c.shared)
}

fn err(text: &str) -> String {
    match taps(text) {
        Ok(_) => panic!("{text:?} was accepted"),
        Err(e) => e,
    }
}

#[test]
fn sockets_and_positional_arguments_as_coredns() {
    let s = taps(". {\n dnstap /tmp/d.sock\n}\n").unwrap();
    let t = &s.taps[0];
    assert_eq!(t.endpoint, Endpoint::Unix("/tmp/d.sock".into()));
    assert!(!t.full);
    assert_eq!((t.write_buffer, t.queue), (1 << 20, 10_000));
    assert_eq!(
        t.identity,
        ringdns_plugin::hostname::hostname().into_bytes()
    );
    assert_eq!(t.version, setup::DEFAULT_VERSION.as_bytes());
    assert!(t.extra.is_empty());

    let s = taps(
        ". {\n dnstap unix:///tmp/d.sock full 1024 4096 {\n identity me\n version v1\n extra hello\n }\n dnstap tcp://127.0.0.1:6000 x 2\n}\n",
    )
    .unwrap();
    assert_eq!(s.taps.len(), 2);
    let (a, b) = (&s.taps[0], &s.taps[1]);
    assert_eq!(a.endpoint, Endpoint::Unix("/tmp/d.sock".into()));
    assert!(a.full);
    assert_eq!((a.write_buffer, a.queue), (1024 << 20, 4096 * 10_000));
    assert_eq!(
        (&a.identity[..], &a.version[..], &a.extra[..]),
        (&b"me"[..], &b"v1"[..], &b"hello"[..])
    );
    assert_eq!(b.endpoint, Endpoint::Tcp("127.0.0.1:6000".parse().unwrap()));
    assert!(!b.full, "only the word full sets it");
    assert_eq!((b.write_buffer, b.queue), (2 << 20, 10_000));
    assert_eq!(b.label, "tcp://127.0.0.1:6000");

    let s = taps(". {\n dnstap tls://127.0.0.1:6000 full {\n skipverify\n }\n}\n").unwrap();
    assert_eq!(
        s.taps[0].endpoint,
        Endpoint::Tls("127.0.0.1:6000".parse().unwrap(), "127.0.0.1".into())
    );
    assert!(s.taps[0].tls.is_some());
}

#[test]
fn bad_lines_are_setup_errors_with_their_line() {
    for (text, want) in [
        (". {\n dnstap\n}\n", "Wrong argument count"),
        (
            ". {\n dnstap /s full 0\n}\n",
            "MultipleTcpWriteBuf must be between 1 and 1024 (MiB units): 0",
        ),
        (
            ". {\n dnstap /s full 1025\n}\n",
            "MultipleTcpWriteBuf must be between 1 and 1024",
        ),
        (
            ". {\n dnstap /s full x\n}\n",
            "invalid MultipleTcpWriteBuf \"x\"",
        ),
        (
            ". {\n dnstap /s full 1 4097\n}\n",
            "MultipleQueue must be between 1 and 4096 (x10k messages): 4097",
        ),
        (
            ". {\n dnstap /s full 1 y\n}\n",
            "invalid MultipleQueue \"y\"",
        ),
        (
            ". {\n dnstap /s full 1 1 extra\n}\n",
            "Wrong argument count",
        ),
        (
            ". {\n dnstap /s {\n bogus\n }\n}\n",
            "unknown property 'bogus'",
        ),
        (
            ". {\n dnstap /s {\n identity\n }\n}\n",
            "Wrong argument count",
        ),
        (
            ". {\n dnstap /s {\n tls a b\n }\n}\n",
            "tls directive only valid for listeners",
        ),
        (
            ". {\n dnstap /s {\n skipverify\n }\n}\n",
            "skipverify is only valid for tls://",
        ),
        (
            ". {\n dnstap /s {\n extra {/forward/upstream}\n }\n}\n",
            "is not supported yet",
        ),
        (
            ". {\n dnstap listen\n}\n",
            "dnstap listen requires an endpoint argument",
        ),
        (
            ". {\n dnstap listen tcp://127.0.0.1:6000\n}\n",
            "dnstap listen (the collector dials in) is not supported yet",
        ),
        (". {\n dnstap tcp://\n}\n", "Wrong argument count"),
        (
            ". {\n dnstap tcp://127.0.0.1\n}\n",
            "plugin/dnstap: tcp://127.0.0.1",
        ),
    ] {
        let e = err(text);
        assert!(e.contains(want), "{text:?}: {e}");
        assert!(
            e.contains(":2 - ") || e.contains(":3 - "),
            "{text:?}: no line in {e}"
        );
    }
}

#[test]
fn forward_finds_the_same_core_taps_as_the_plugin() {
    let (block, config) =
        ringdns_testkit::config::<Dnstap>(". {\n dnstap /nonexistent/d.sock\n}\n").unwrap();
    let core = CoreInfo {
        index: 0,
        cpu: 0,
        cores: 1,
    };
    let tapper = block.block_shared::<Tappers>().get("dnstap").unwrap();
    let from_forward = tapper.core(&core).unwrap();
    let config = Arc::new(config);
    let plugin = Dnstap::build(&config, &core).unwrap();
    assert_eq!(
        Rc::as_ptr(&from_forward) as *const u8,
        Rc::as_ptr(&plugin.taps) as *const u8
    );
    // Not connected: a tap is dropped and counted.
    plugin.taps.client_query(
        "127.0.0.1:5000".parse().unwrap(),
        ringdns_plugin::Proto::Udp,
        b"q",
        Instant::now(),
    );
    assert_eq!(plugin.taps.sinks[0].counters.dropped.get(), 1);
    assert_eq!(plugin.taps.sinks[0].pending.borrow().frames, 0);
}

#[test]
fn a_connected_sink_queues_until_its_bound_then_drops() {
    let (_, config) = ringdns_testkit::config::<Dnstap>(
        ". {\n dnstap /nonexistent/bound.sock full {\n identity i\n }\n}\n",
    )
    .unwrap();
    let core = CoreInfo {
        index: 7,
        cpu: 0,
        cores: 8,
    };
    let plugin = Dnstap::build(&Arc::new(config), &core).unwrap();
    let sink = &plugin.taps.sinks[0];
    sink.connected.set(true);
    let before = sink.counters.dropped.get();
    let client = "[::ffff:10.0.0.1]:5300".parse().unwrap();
    for _ in 0..10_005 {
        plugin
            .taps
            .client_query(client, ringdns_plugin::Proto::Tcp, b"QQ", Instant::now());
    }
    assert_eq!(sink.pending.borrow().frames, 10_000);
    assert_eq!(sink.counters.dropped.get() - before, 5);
    // The first frame decodes back to a CLIENT_QUERY from 10.0.0.1 over TCP.
    let p = sink.pending.borrow();
    let len = u32::from_be_bytes(p.buf[..4].try_into().unwrap()) as usize;
    let d = <proto::Dnstap as prost::Message>::decode(&p.buf[4..4 + len]).unwrap();
    assert_eq!(d.identity.as_deref(), Some(&b"i"[..]));
    let m = d.message.unwrap();
    assert_eq!(m.r#type, 5);
    assert_eq!(m.query_address.as_deref(), Some(&[10, 0, 0, 1][..]));
    assert_eq!(m.query_port, Some(5300));
    assert_eq!(m.socket_protocol, Some(proto::TCP));
    assert_eq!(m.query_message.as_deref(), Some(&b"QQ"[..]));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(m.query_time_sec.unwrap().abs_diff(now) <= 2);
}
