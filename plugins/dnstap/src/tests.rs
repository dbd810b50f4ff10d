//! Setup: CoreDNS's syntax, defaults, bounds and messages.

use super::*;

fn taps(text: &str) -> Result<Arc<Shared>, String> {
    ringdns_testkit::config::<Dnstap>(text).map(|(_, c)| c.shared)
}

/// A query for `example.org. A` (ID 7), as the wire bytes a request views.
fn packet() -> Vec<u8> {
    let mut p = vec![0, 7, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    p.extend_from_slice(b"\x07example\x03org\x00\x00\x01\x00\x01");
    p
}

/// `f` of a request for [`packet`] from `client` over `proto`.
fn with_request<R>(
    packet: &[u8],
    client: &str,
    proto: ringdns_plugin::Proto,
    f: impl FnOnce(&mut Request<'_>) -> R,
) -> R {
    let q = ringdns_plugin::wire::Query::parse(packet).unwrap();
    let mut reply = Vec::new();
    let mut req = Request::new(
        q,
        client.parse().unwrap(),
        "127.0.0.1:53".parse().unwrap(),
        proto,
        ".",
        "dns://:53",
        &mut reply,
        false,
    );
    f(&mut req)
}

/// The `Dnstap` of the `i`th frame of `buf` (length-prefixed frames).
fn frame(buf: &[u8], i: usize) -> proto::Dnstap {
    let mut at = 0;
    for _ in 0..i {
        at += 4 + u32::from_be_bytes(buf[at..at + 4].try_into().unwrap()) as usize;
    }
    let len = u32::from_be_bytes(buf[at..at + 4].try_into().unwrap()) as usize;
    decode(&buf[at + 4..at + 4 + len]).unwrap()
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
    assert_eq!(t.extra, Extra::Literal(Vec::new()));
    assert!(t.listen.is_none());

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
        (&a.identity[..], &a.version[..], &a.extra),
        (&b"me"[..], &b"v1"[..], &Extra::Literal(b"hello".to_vec()))
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
            ". {\n dnstap listen unix:///s {\n tls a b\n }\n}\n",
            "tls directive only valid for tls:// listeners",
        ),
        (
            ". {\n dnstap listen tcp://127.0.0.1:6000 {\n skipverify\n }\n}\n",
            "skipverify is only valid for tls://",
        ),
        (
            ". {\n dnstap listen tls://127.0.0.1:6000\n}\n",
            "TLS listener requires cert and key files",
        ),
        (
            ". {\n dnstap listen tls://127.0.0.1:6000 {\n tls a\n }\n}\n",
            "tls requires cert and key file paths",
        ),
        (
            ". {\n dnstap listen tls://127.0.0.1:6000 {\n tls a b c d\n }\n}\n",
            "Wrong argument count",
        ),
        (
            ". {\n dnstap listen tls://127.0.0.1:6000 {\n tls /nonexistent/c.pem /nonexistent/k.pem\n }\n}\n",
            "open /nonexistent/c.pem: no such file or directory",
        ),
        (
            ". {\n dnstap listen /s full 1 1 x\n}\n",
            "Wrong argument count",
        ),
        (
            ". {\n dnstap listen\n}\n",
            "dnstap listen requires an endpoint argument",
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
    with_request(
        &packet(),
        "127.0.0.1:5000",
        ringdns_plugin::Proto::Udp,
        |r| plugin.taps.client_query(r, false),
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
    let q = packet();
    with_request(
        &q,
        "[::ffff:10.0.0.1]:5300",
        ringdns_plugin::Proto::Tcp,
        |r| {
            for _ in 0..10_005 {
                plugin.taps.client_query(r, false);
            }
        },
    );
    assert_eq!(sink.pending.borrow().frames, 10_000);
    assert_eq!(sink.counters.dropped.get() - before, 5);
    // The first frame decodes back to a CLIENT_QUERY from 10.0.0.1 over TCP.
    let p = sink.pending.borrow();
    let d = frame(&p.buf, 0);
    assert_eq!(d.identity.as_deref(), Some(&b"i"[..]));
    assert_eq!(d.extra, None, "no extra line, no field");
    let m = d.message.unwrap();
    assert_eq!(m.r#type, 5);
    assert_eq!(m.query_address.as_deref(), Some(&[10, 0, 0, 1][..]));
    assert_eq!(m.query_port, Some(5300));
    assert_eq!(m.socket_protocol, Some(proto::TCP));
    assert_eq!(m.query_message.as_deref(), Some(&q[..]));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(m.query_time_sec.unwrap().abs_diff(now) <= 2);
}

#[test]
fn listen_lines_as_coredns() {
    let s = taps(
        ". {\n dnstap listen /tmp/l.sock full {\n identity me\n }\n dnstap listen tcp://127.0.0.1:6001 x 2 3\n dnstap unix:///tmp/d.sock\n}\n",
    )
    .unwrap();
    let (a, b, c) = (&s.taps[0], &s.taps[1], &s.taps[2]);
    assert_eq!(a.endpoint, Endpoint::Unix("/tmp/l.sock".into()));
    assert!(a.listen.is_some() && a.full && a.identity == b"me");
    assert_eq!(a.label, "/tmp/l.sock");
    assert_eq!(b.endpoint, Endpoint::Tcp("127.0.0.1:6001".parse().unwrap()));
    assert!(b.listen.is_some() && !b.full);
    assert_eq!((b.write_buffer, b.queue), (2 << 20, 30_000));
    assert!(c.listen.is_none());
}

#[test]
fn a_listen_tls_line_loads_its_certificate_and_ca() {
    let ck = rcgen::generate_simple_self_signed(vec!["tap.test".to_string()]).unwrap();
    let dir = std::env::temp_dir().join(format!("dnstap-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key) = (dir.join("c.pem"), dir.join("k.pem"));
    std::fs::write(&cert, ck.cert.pem()).unwrap();
    std::fs::write(&key, ck.signing_key.serialize_pem()).unwrap();
    let (c, k) = (cert.display(), key.display());
    for extra in ["", " {c}", "\n skipverify"] {
        let extra = extra.replace("{c}", &c.to_string());
        let s = taps(&format!(
            ". {{\n dnstap listen tls://127.0.0.1:6002 {{\n tls {c} {k}{extra}\n }}\n}}\n"
        ))
        .unwrap();
        assert!(s.taps[0].listen_tls.is_some());
    }
    // The key in the place of the certificate.
    let e = err(&format!(
        ". {{\n dnstap listen tls://127.0.0.1:6002 {{\n tls {k} {k}\n }}\n}}\n"
    ));
    assert!(e.contains("no PEM certificate found"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn extra_is_literal_unless_it_holds_a_placeholder_the_replacer_knows() {
    assert_eq!(
        Extra::parse("a {bogus} b"),
        Extra::Literal(b"a {bogus} b".to_vec())
    );
    assert!(matches!(
        Extra::parse("up {/forward/upstream}"),
        Extra::Format(_)
    ));
    assert!(matches!(Extra::parse("{name}"), Extra::Format(_)));
}

#[test]
fn extra_placeholders_are_filled_in_per_message_from_the_request_and_its_metadata() {
    let (_, config) = ringdns_testkit::config::<Dnstap>(
        ". {\n dnstap /nonexistent/x.sock {\n extra \"{name} {type} {>id} {rcode} up={/forward/upstream}\"\n }\n dnstap /nonexistent/y.sock {\n extra plain\n }\n}\n",
    )
    .unwrap();
    let core = CoreInfo {
        index: 0,
        cpu: 0,
        cores: 1,
    };
    let plugin = Dnstap::build(&Arc::new(config), &core).unwrap();
    assert!(plugin.taps.formats);
    for s in &plugin.taps.sinks {
        s.connected.set(true);
    }
    let meta = ringdns_plugin::metadata::Metadata::default();
    with_request(
        &packet(),
        "127.0.0.1:5000",
        ringdns_plugin::Proto::Udp,
        |r| {
            let sub = r.with_metadata(&meta);
            // Saved before the rest published, built after: the query's extra has no upstream.
            plugin.taps.save_query_extra(&sub);
            sub.set_metadata("forward/upstream", "127.0.0.1:5301");
            plugin.taps.client_query(&sub, true);
            plugin.taps.client_response(&sub, Instant::now());
        },
    );
    let a = plugin.taps.sinks[0].pending.borrow();
    assert_eq!(a.frames, 2);
    assert_eq!(
        frame(&a.buf, 0).extra.as_deref(),
        Some(&b"example.org. A 7 - up=-"[..])
    );
    assert_eq!(
        frame(&a.buf, 1).extra.as_deref(),
        Some(&b"example.org. A 7 - up=127.0.0.1:5301"[..])
    );
    let b = plugin.taps.sinks[1].pending.borrow();
    assert_eq!(frame(&b.buf, 1).extra.as_deref(), Some(&b"plain"[..]));
}

#[test]
fn a_listen_line_with_no_sink_connected_counts_no_drop() {
    let (_, config) =
        ringdns_testkit::config::<Dnstap>(". {\n dnstap listen /nonexistent/l.sock\n}\n").unwrap();
    let core = CoreInfo {
        index: 0,
        cpu: 0,
        cores: 1,
    };
    let plugin = Dnstap::build(&Arc::new(config), &core).unwrap();
    with_request(
        &packet(),
        "127.0.0.1:5000",
        ringdns_plugin::Proto::Udp,
        |r| plugin.taps.client_query(r, false),
    );
    let sink = &plugin.taps.sinks[0];
    assert_eq!(
        (sink.counters.dropped.get(), sink.pending.borrow().frames),
        (0, 0)
    );
}
