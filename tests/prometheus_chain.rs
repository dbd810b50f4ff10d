//! The prometheus plugin's setup, and its counting through a real chain built as the server
//! builds it (the server's configuration and core, not the binary: the counts are read from
//! the registry directly). The registry is process-wide: every test uses zones of its own.

// The chain's future, as in the server's lib.rs.
#![recursion_limit = "512"]

use ringdns::plugin::metrics::{Sample, Sink};
use ringdns::plugin::{CoreInfo, Proto};
use ringdns::runtime::core::CoreServer;
use ringdns::runtime::serve::{Verdict, serve_inline};
use ringdns::wire::{Name, QueryBuilder};

fn load(text: &str) -> Result<ringdns::config::Config, String> {
    let cf = ringdns::plugin::corefile::parse("Corefile", text, &ringdns::chain::known_directive)
        .map_err(|e| e.to_string())?;
    ringdns::config::load(&cf, 1053).map_err(|e| e.to_string())
}

fn core(config: &ringdns::config::Config, index: usize) -> CoreServer<ringdns::chain::Chain> {
    CoreServer::build(
        config,
        &CoreInfo {
            index,
            cpu: 0,
            cores: 2,
        },
    )
}

fn query(id: u16, name: &str, qtype: u16, do_bit: bool) -> Vec<u8> {
    let wire = ringdns::wire::name_to_wire(name).unwrap();
    let q = QueryBuilder::new(Name::from_wire(&wire).unwrap(), qtype).id(id);
    if do_bit { q.edns(1232, true) } else { q }.build()
}

fn serve(c: &CoreServer<ringdns::chain::Chain>, packet: &[u8], client: &str, proto: Proto) -> u8 {
    let mut reply = Vec::new();
    let v = serve_inline(
        c,
        &c.listeners[0],
        packet,
        false,
        client.parse().unwrap(),
        proto,
        &mut reply,
    );
    assert_eq!(v, Verdict::Send);
    reply[3] & 0x0f
}

fn int(s: &Sink, name: &str, labels: &[&str]) -> u64 {
    match s.get(name, labels) {
        Some(Sample::Int(v)) => *v,
        None => 0,
        other => panic!("{name}{labels:?}: {other:?}"),
    }
}

/// The addresses prometheus registered `/metrics` on.
fn metrics_addrs(c: &ringdns::config::Config) -> Vec<std::net::SocketAddr> {
    c.http
        .iter()
        .filter(|e| e.path == "/metrics")
        .map(|e| e.addr)
        .collect()
}

#[test]
fn setup_takes_an_address_once_per_block() {
    let c = load("a.setup.test {\n prometheus\n whoami\n}\n").unwrap();
    assert_eq!(
        metrics_addrs(&c),
        vec!["127.0.0.1:9153".parse::<std::net::SocketAddr>().unwrap()]
    );
    let c = load(
        "b.setup.test {\n prometheus 127.0.0.1:9253 {\n  runtime_metrics\n }\n whoami\n}\n\
         c.setup.test {\n prometheus 127.0.0.1:9253\n whoami\n}\n",
    )
    .unwrap();
    assert_eq!(metrics_addrs(&c).len(), 1, "one endpoint per address");
    let e = load("d.setup.test {\n prometheus :1 :2\n}\n")
        .err()
        .unwrap();
    assert!(e.contains("Wrong argument count"), "{e}");
    let e = load("e.setup.test {\n prometheus {\n  tls web.yml\n }\n}\n")
        .err()
        .unwrap();
    assert!(e.contains("tls is not supported"), "{e}");
    let e = load("f.setup.test {\n prometheus {\n  bogus\n }\n}\n")
        .err()
        .unwrap();
    assert!(e.contains("unknown property 'bogus'"), "{e}");
    let e = load("g.setup.test {\n prometheus\n prometheus\n}\n")
        .err()
        .unwrap();
    assert!(e.contains("only be used once per Server Block"), "{e}");
}

#[test]
fn queries_are_counted_by_type_proto_family_rcode_and_writer() {
    let c = load("count.test:1053 {\n prometheus 127.0.0.1:0\n whoami\n}\nonly.count.test:1053 {\n prometheus 127.0.0.1:0\n}\n").unwrap();
    let core = core(&c, 0);
    for i in 0..3 {
        assert_eq!(
            serve(
                &core,
                &query(i, "a.count.test.", 1, false),
                "127.0.0.1:5000",
                Proto::Udp
            ),
            0
        );
    }
    serve(
        &core,
        &query(9, "a.count.test.", 28, true),
        "[::1]:5000",
        Proto::Tcp,
    );
    serve(
        &core,
        &query(10, "a.count.test.", 99, false),
        "[::ffff:127.0.0.1]:5000",
        Proto::Udp,
    );
    // prometheus alone: nothing follows it, SERVFAIL written by the server.
    assert_eq!(
        serve(
            &core,
            &query(11, "x.only.count.test.", 1, false),
            "127.0.0.1:1",
            Proto::Udp
        ),
        2
    );

    let s = ringdns::plugin::metrics::registry::collect();
    let req = |zone: &str, proto: &str, fam: &str, ty: &str| {
        int(
            &s,
            "coredns_dns_requests_total",
            &["dns://:1053", zone, "", proto, fam, ty],
        )
    };
    assert_eq!(req("count.test.", "udp", "1", "A"), 3);
    assert_eq!(req("count.test.", "tcp", "2", "AAAA"), 1);
    assert_eq!(
        req("count.test.", "udp", "1", "other"),
        1,
        "IPv4-mapped is family 1"
    );
    assert_eq!(req("only.count.test.", "udp", "1", "A"), 1);
    assert_eq!(
        int(
            &s,
            "coredns_dns_do_requests_total",
            &["dns://:1053", "count.test.", ""]
        ),
        1
    );
    let resp = |zone: &str, rcode: &str, plugin: &str| {
        int(
            &s,
            "coredns_dns_responses_total",
            &["dns://:1053", zone, "", rcode, plugin],
        )
    };
    assert_eq!(resp("count.test.", "NOERROR", "whoami"), 5);
    assert_eq!(resp("only.count.test.", "SERVFAIL", ""), 1);
    let size = s
        .get(
            "coredns_dns_response_size_bytes",
            &["dns://:1053", "count.test.", "", "udp"],
        )
        .unwrap();
    assert_eq!(size.count(), 4.0);
    let dur = s
        .get(
            "coredns_dns_request_duration_seconds",
            &["dns://:1053", "count.test.", ""],
        )
        .unwrap();
    assert_eq!(dur.count(), 5.0);
}

#[test]
fn a_rebuilt_configuration_counts_on() {
    let text = "rebuild.test:1053 {\n prometheus 127.0.0.1:0\n whoami\n}\n";
    let labels = ["dns://:1053", "rebuild.test.", "", "udp", "1", "TXT"];
    let first = load(text).unwrap();
    let c0 = core(&first, 0);
    for i in 0..4 {
        serve(
            &c0,
            &query(i, "rebuild.test.", 16, false),
            "127.0.0.1:5000",
            Proto::Udp,
        );
    }
    drop(c0);
    drop(first);
    // A reload: a new configuration from the same Corefile, new instances on the same core.
    let second = load(text).unwrap();
    let c0 = core(&second, 0);
    serve(
        &c0,
        &query(7, "rebuild.test.", 16, false),
        "127.0.0.1:5000",
        Proto::Udp,
    );
    let c1 = core(&second, 1);
    serve(
        &c1,
        &query(8, "rebuild.test.", 16, false),
        "127.0.0.1:5000",
        Proto::Udp,
    );
    let s = ringdns::plugin::metrics::registry::collect();
    assert_eq!(
        int(&s, "coredns_dns_requests_total", &labels),
        6,
        "4 before, 2 after"
    );
}

#[test]
fn enabled_plugins_are_listed_while_the_configuration_lives() {
    let c =
        load("enabled.test:1053 {\n prometheus 127.0.0.1:0\n log\n bind 127.0.0.1\n whoami\n}\n")
            .unwrap();
    let _core = core(&c, 0);
    let s = ringdns::plugin::metrics::registry::collect();
    let on = |name: &str| {
        s.get(
            "coredns_plugin_enabled",
            &["dns://127.0.0.1:1053", "enabled.test.", "", name],
        )
        .is_some()
    };
    assert!(on("prometheus") && on("log") && on("whoami"));
    assert!(
        !on("bind"),
        "configuration-only directives are not handlers"
    );
    drop(_core);
    drop(c);
    // Another test's scrape may hold the block's source for the length of its collect (it
    // upgrades the weak sources): the series is gone once no scrape holds it, so look a few
    // times (bounded: 200 scrapes, 10 ms apart).
    let gone = (0..200).any(|_| {
        let s = ringdns::plugin::metrics::registry::collect();
        let present = s
            .get(
                "coredns_plugin_enabled",
                &["dns://127.0.0.1:1053", "enabled.test.", "", "whoami"],
            )
            .is_some();
        if present {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        !present
    });
    assert!(gone, "the series outlives its configuration");
}

#[test]
fn queries_the_server_refuses_before_any_block_are_counted_as_dropped() {
    let c = load(
        "dropped.test:1063 {\n prometheus 127.0.0.1:0\n whoami\n}\nempty.dropped.test:1063 {\n}\n",
    )
    .unwrap();
    let core = core(&c, 0);
    let client = "127.0.0.1:5000";
    // No zone for the name.
    assert_eq!(
        serve(&core, &query(1, "elsewhere.", 1, false), client, Proto::Udp),
        5
    );
    // CH class on a listener without chaos or forward.
    let mut ch = query(2, "version.bind.", 16, false);
    let n = ch.len();
    ch[n - 1] = 3;
    assert_eq!(serve(&core, &ch, client, Proto::Tcp), 5);
    // A block without plugins.
    assert_eq!(
        serve(
            &core,
            &query(3, "a.empty.dropped.test.", 1, false),
            client,
            Proto::Udp
        ),
        5
    );
    let s = ringdns::plugin::metrics::registry::collect();
    let req = |proto: &str, ty: &str| {
        int(
            &s,
            "coredns_dns_requests_total",
            &["dns://:1063", "dropped", "", proto, "1", ty],
        )
    };
    assert_eq!(req("udp", "A"), 2);
    assert_eq!(req("tcp", "TXT"), 1);
    assert_eq!(
        int(
            &s,
            "coredns_dns_responses_total",
            &["dns://:1063", "dropped", "", "REFUSED", ""]
        ),
        3
    );
    assert_eq!(
        int(
            &s,
            "coredns_dns_requests_total",
            &["dns://:1063", "dropped.test.", "", "udp", "1", "A"]
        ),
        0,
        "nothing reached the block"
    );
}
