//! CoreDNS's k8s_external tests (external_test.go, apex_test.go, setup_test.go) ported, and
//! what ringdns adds (the deferred lookup of an ingress hostname, the RFC's one CNAME,
//! fallthrough, the client's case). The answers come from the real kubernetes plugin, set
//! up in the same block after this one against the test kit's fake API server, which
//! serves the objects of testdata/fixture.json: the Externaler found in the block's
//! registry is the one a server would use.

use super::*;
use ringdns_plugin::corefile;
use ringdns_plugin::lookup::{Lookup, LookupFuture};
use ringdns_plugin::wire::class::IN;
use ringdns_plugin::wire::rcode::{NOERROR, NXDOMAIN, REFUSED};
use ringdns_plugin::wire::rtype::{CNAME, HINFO, TXT};
use ringdns_plugin::wire::{Query, expand_rdata, records, type_name};
use ringdns_testkit::kubeapi::FakeApi;
use ringdns_testkit::reply::{Case, Reply, neg, ok, query};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::pin;
use std::task::{Context, Poll, Waker};

type KubernetesPlugin = ringdns_plugin_kubernetes::RingdnsPlugin;

/// The cluster of the tests: CoreDNS's external_test.go objects and ringdns's own.
const FIXTURE: &str = include_str!("../testdata/fixture.json");

/// A block with k8s_external and kubernetes set up, and this core's k8s_external.
struct Cluster {
    plugin: K8sExternal,
    /// Keeps the kubernetes plugin's feed (and so its table) alive.
    _kubernetes: <KubernetesPlugin as Plugin>::Config,
    _api: FakeApi,
    dir: std::path::PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Sets up `k8s_external` (the directive's text) and `kubernetes cluster.local` with
/// `kubernetes` lines, against a fake API server holding the fixture, the server's own
/// address being 172.0.0.100 (as `bind` gives it), as the server sets up a block: the
/// directives in plugin.cfg order, k8s_external first.
fn cluster(k8s_external: &str, kubernetes: &str) -> Cluster {
    let api = FakeApi::start();
    let v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
    for item in v["items"].as_array().unwrap() {
        api.apply(item.clone());
    }
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "ringdns-k8s-external-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let kc = api.kubeconfig(&dir);
    let text = format!(
        ". {{\n{k8s_external}\nkubernetes cluster.local {{\n kubeconfig {}\n{kubernetes}\n}}\n}}\n",
        kc.display()
    );
    let cf = corefile::parse("Corefile", &text, &|n| n == NAME || n == SOURCE).unwrap();
    let mut block = BlockSetup {
        zones: vec![".".into()],
        bind: vec!["172.0.0.100".parse().unwrap()],
        directives: vec![NAME, SOURCE],
        ..BlockSetup::default()
    };
    let dirs = &cf.blocks[0].directives;
    assert_eq!(
        (dirs[0].name.as_str(), dirs[1].name.as_str()),
        (NAME, SOURCE)
    );
    let config = K8sExternal::setup(&mut Dispenser::new(&dirs[0].tokens), &mut block).unwrap();
    let kubernetes =
        KubernetesPlugin::setup(&mut Dispenser::new(&dirs[1].tokens), &mut block).unwrap();
    let config = Arc::new(config);
    let core = CoreInfo {
        index: 0,
        cpu: 0,
        cores: 1,
    };
    let plugin = K8sExternal::build(&config, &core).expect("kubernetes registered");
    Cluster {
        plugin,
        _kubernetes: kubernetes,
        _api: api,
        dir,
    }
}

/// What the next plugin answers (CoreDNS's tests' NextHandler).
const TO_NEXT: u8 = 99;

fn client() -> SocketAddr {
    "10.240.0.1:40000".parse().unwrap()
}

/// Serves on the inline passes (at once, and the future polled once, which must agree);
/// `None` when it went to the next plugin.
fn ask_inline(c: &Cluster, name: &str, qtype: u16) -> Option<Reply> {
    let p = query(name, qtype);
    let (status, reply) = ringdns_testkit::serve_once(&c.plugin, &p, client(), TO_NEXT, true);
    let (status2, reply2) = ringdns_testkit::serve_once(&c.plugin, &p, client(), TO_NEXT, false);
    assert_eq!(
        (status.rcode, &reply),
        (status2.rcode, &reply2),
        "{name}: the passes agree"
    );
    if status.rcode == TO_NEXT {
        return None;
    }
    if reply.is_empty() {
        // An rcode for the server to write (REFUSED for a transfer).
        return Some(Reply::rcode_only(status.rcode));
    }
    Some(Reply::read(&reply))
}

/// A lookup through "the server": answers the names of its table with an A or AAAA
/// record (TTL 300), TC on the names marked so, NXDOMAIN for the others; counts the
/// lookups.
#[derive(Default)]
struct Upstream {
    names: Vec<(&'static str, u16, &'static str, bool)>,
    asked: std::cell::RefCell<Vec<String>>,
}

impl Lookup for Upstream {
    fn lookup<'a>(&'a self, query: &'a [u8]) -> LookupFuture<'a> {
        Box::pin(async move {
            let q = Query::parse(query).ok()?;
            let name = q.qname().to_string();
            self.asked
                .borrow_mut()
                .push(format!("{name} {}", type_name(q.qtype())));
            let mut out = Vec::new();
            let hit = self
                .names
                .iter()
                .find(|(n, t, _, _)| *n == name && *t == q.qtype());
            let mut w =
                MessageWriter::reply(&q, &mut out, if hit.is_some() { NOERROR } else { NXDOMAIN });
            if let Some((_, t, addr, tc)) = hit {
                let rd: Vec<u8> = match *t {
                    A => addr.parse::<Ipv4Addr>().unwrap().octets().to_vec(),
                    _ => addr.parse::<Ipv6Addr>().unwrap().octets().to_vec(),
                };
                w.push(Section::Answer, Owner::Question, *t, IN, 300, &rd)
                    .unwrap();
                w.set_tc(*tc);
            }
            w.finish();
            Some(out)
        })
    }
}

/// Serves on a deferred pass (may wait), with `upstream` as the server's lookup.
fn ask_deferred(c: &Cluster, name: &str, qtype: u16, upstream: Option<&Upstream>) -> Reply {
    let p = query(name, qtype);
    let mut reply = Vec::new();
    let mut req = ringdns_testkit::udp_request(&p, client(), &mut reply, true);
    if let Some(u) = upstream {
        req.set_lookup(u);
    }
    let next = ringdns_testkit::Next(TO_NEXT);
    let status = {
        let mut fut = pin!(c.plugin.serve(&mut req, &next));
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(s) = fut.as_mut().poll(&mut cx) {
                break s.expect("a deferred pass does not defer");
            }
        }
    };
    assert_ne!(status.rcode, TO_NEXT, "{name}: passed on");
    Reply::read(&reply)
}

/// Serves as the server would: inline, else deferred with `upstream`.
fn ask_with(c: &Cluster, name: &str, qtype: u16, upstream: Option<&Upstream>) -> Reply {
    let p = query(name, qtype);
    let mut reply = Vec::new();
    let mut req = ringdns_testkit::udp_request(&p, client(), &mut reply, false);
    let next = ringdns_testkit::Next(TO_NEXT);
    if c.plugin.serve_now(&mut req, &next).is_some() {
        return ask_inline(c, name, qtype).expect("answered");
    }
    assert!(
        reply.is_empty(),
        "{name}: nothing written before a deferral"
    );
    ask_deferred(c, name, qtype, upstream)
}

fn ask(c: &Cluster, name: &str, qtype: u16) -> Reply {
    ask_with(c, name, qtype, None)
}

const SOA_COM: &str =
    "example.com. 5 SOA ns1.dns.example.com. hostmaster.dns.example.com. S 7200 1800 86400 5";
const SOA_ARPA: &str =
    "in-addr.arpa. 5 SOA ns1.dns.in-addr.arpa. hostmaster.dns.in-addr.arpa. S 7200 1800 86400 5";

/// The SOA lines of negative answers in example.com. and in-addr.arpa.
const COM: &[&str] = &[SOA_COM];
const ARPA: &[&str] = &[SOA_ARPA];

/// Asks each case's question and checks its reply.
fn check(c: &Cluster, cases: &[Case]) {
    for t in cases {
        t.check(&ask(c, t.qname, t.qtype));
    }
}

/// external_test.go: zones example.com. and in-addr.arpa., `headless`, the kubernetes
/// plugin with `namespaces testns`. svc12's hostname has no answer upstream here (the
/// tests' upstream is nothing), so its A is the CNAME alone, as in CoreDNS's test.
#[test]
fn the_external_tests_answer_as_coredns() {
    let c = cluster(
        "k8s_external example.com in-addr.arpa {\n headless\n}",
        " namespaces testns",
    );
    check(
        &c,
        &[
            // PTR reverse lookup
            ok(
                "4.3.2.1.in-addr.arpa.",
                PTR,
                &["4.3.2.1.in-addr.arpa. 5 PTR svc1.testns.example.com."],
            ),
            // Bad PTR reverse lookups: an existing service's name, a missing one's.
            neg("svc1.testns.example.com.", PTR, NOERROR, COM),
            neg("not-existing.testns.example.com.", PTR, NXDOMAIN, COM),
            ok(
                "svc1.testns.example.com.",
                A,
                &["svc1.testns.example.com. 5 A 1.2.3.4"],
            ),
            Case {
                extra: &["svc1.testns.example.com. 5 A 1.2.3.4"],
                ..ok(
                    "svc1.testns.example.com.",
                    SRV,
                    &["svc1.testns.example.com. 5 SRV 0 100 80 svc1.testns.example.com."],
                )
            },
            // SRV, not udp or tcp
            neg(
                "*._not-udp-or-tcp.svc1.testns.example.com.",
                SRV,
                NXDOMAIN,
                COM,
            ),
            Case {
                extra: &["svc1.testns.example.com. 5 A 1.2.3.4"],
                ..ok(
                    "_http._tcp.svc1.testns.example.com.",
                    SRV,
                    &[
                        "_http._tcp.svc1.testns.example.com. 5 SRV 0 100 80 svc1.testns.example.com.",
                    ],
                )
            },
            // AAAA of a service with an A record only; of a missing service; a namespace
            // that does not exist.
            neg("svc1.testns.example.com.", AAAA, NOERROR, COM),
            neg("svc0.testns.example.com.", AAAA, NXDOMAIN, COM),
            neg("svc0.testns.example.com.", A, NXDOMAIN, COM),
            neg("svc0.svc-nons.example.com.", A, NXDOMAIN, COM),
            ok(
                "svc6.testns.example.com.",
                AAAA,
                &["svc6.testns.example.com. 5 AAAA 1:2::5"],
            ),
            Case {
                extra: &["svc6.testns.example.com. 5 AAAA 1:2::5"],
                ..ok(
                    "_http._tcp.svc6.testns.example.com.",
                    SRV,
                    &[
                        "_http._tcp.svc6.testns.example.com. 5 SRV 0 100 80 svc6.testns.example.com.",
                    ],
                )
            },
            Case {
                extra: &["svc6.testns.example.com. 5 AAAA 1:2::5"],
                ..ok(
                    "svc6.testns.example.com.",
                    SRV,
                    &["svc6.testns.example.com. 5 SRV 0 100 80 svc6.testns.example.com."],
                )
            },
            neg("testns.example.com.", A, NOERROR, COM),
            neg("testns.example.com.", SOA, NOERROR, COM),
            // svc11: a load balancer's IP.
            ok(
                "svc11.testns.example.com.",
                A,
                &["svc11.testns.example.com. 5 A 2.3.4.5"],
            ),
            Case {
                extra: &["svc11.testns.example.com. 5 A 2.3.4.5"],
                ..ok(
                    "_http._tcp.svc11.testns.example.com.",
                    SRV,
                    &[
                        "_http._tcp.svc11.testns.example.com. 5 SRV 0 100 80 svc11.testns.example.com.",
                    ],
                )
            },
            Case {
                extra: &["svc11.testns.example.com. 5 A 2.3.4.5"],
                ..ok(
                    "svc11.testns.example.com.",
                    SRV,
                    &["svc11.testns.example.com. 5 SRV 0 100 80 svc11.testns.example.com."],
                )
            },
            // svc12: a load balancer's hostname.
            ok(
                "svc12.testns.example.com.",
                A,
                &["svc12.testns.example.com. 5 CNAME dummy.hostname."],
            ),
            ok(
                "_http._tcp.svc12.testns.example.com.",
                SRV,
                &["_http._tcp.svc12.testns.example.com. 5 SRV 0 100 80 dummy.hostname."],
            ),
            ok(
                "svc12.testns.example.com.",
                SRV,
                &["svc12.testns.example.com. 5 SRV 0 100 80 dummy.hostname."],
            ),
            // A headless service.
            ok(
                "svc-headless.testns.example.com.",
                A,
                &[
                    "svc-headless.testns.example.com. 5 A 1.2.3.4",
                    "svc-headless.testns.example.com. 5 A 1.2.3.5",
                ],
            ),
            Case {
                extra: &[
                    "endpoint-svc-0.svc-headless.testns.example.com. 5 A 1.2.3.4",
                    "endpoint-svc-1.svc-headless.testns.example.com. 5 A 1.2.3.5",
                ],
                ..ok(
                    "svc-headless.testns.example.com.",
                    SRV,
                    &[
                        "svc-headless.testns.example.com. 5 SRV 0 50 80 endpoint-svc-0.svc-headless.testns.example.com.",
                        "svc-headless.testns.example.com. 5 SRV 0 50 80 endpoint-svc-1.svc-headless.testns.example.com.",
                    ],
                )
            },
            Case {
                extra: &[
                    "endpoint-svc-0.svc-headless.testns.example.com. 5 A 1.2.3.4",
                    "endpoint-svc-1.svc-headless.testns.example.com. 5 A 1.2.3.5",
                ],
                ..ok(
                    "_http._tcp.svc-headless.testns.example.com.",
                    SRV,
                    &[
                        "_http._tcp.svc-headless.testns.example.com. 5 SRV 0 50 80 endpoint-svc-0.svc-headless.testns.example.com.",
                        "_http._tcp.svc-headless.testns.example.com. 5 SRV 0 50 80 endpoint-svc-1.svc-headless.testns.example.com.",
                    ],
                )
            },
            Case {
                extra: &["endpoint-svc-0.svc-headless.testns.example.com. 5 A 1.2.3.4"],
                ..ok(
                    "endpoint-svc-0.svc-headless.testns.example.com.",
                    SRV,
                    &[
                        "endpoint-svc-0.svc-headless.testns.example.com. 5 SRV 0 100 80 endpoint-svc-0.svc-headless.testns.example.com.",
                    ],
                )
            },
            Case {
                extra: &["endpoint-svc-1.svc-headless.testns.example.com. 5 A 1.2.3.5"],
                ..ok(
                    "endpoint-svc-1.svc-headless.testns.example.com.",
                    SRV,
                    &[
                        "endpoint-svc-1.svc-headless.testns.example.com. 5 SRV 0 100 80 endpoint-svc-1.svc-headless.testns.example.com.",
                    ],
                )
            },
            ok(
                "endpoint-svc-0.svc-headless.testns.example.com.",
                A,
                &["endpoint-svc-0.svc-headless.testns.example.com. 5 A 1.2.3.4"],
            ),
            ok(
                "endpoint-svc-1.svc-headless.testns.example.com.",
                A,
                &["endpoint-svc-1.svc-headless.testns.example.com. 5 A 1.2.3.5"],
            ),
            // Not exposed (`namespaces testns`); PTR of an address nothing has.
            neg("svc1.other.example.com.", A, NXDOMAIN, COM),
            neg("9.9.9.9.in-addr.arpa.", PTR, NXDOMAIN, ARPA),
        ],
    );
}

/// apex_test.go: zone example.com., `headless`; ns1's address is the external IP of the
/// service whose endpoint is the server (CoreDNS's test fakes 127.0.0.1 there).
#[test]
fn the_apex_tests_answer_as_coredns() {
    let c = cluster(
        "k8s_external example.com {\n headless\n}",
        " namespaces testns",
    );
    check(
        &c,
        &[
            ok("example.com.", SOA, &[SOA_COM]),
            Case {
                extra: &["ns1.dns.example.com. 5 A 203.0.113.53"],
                ..ok(
                    "example.com.",
                    NS,
                    &["example.com. 5 NS ns1.dns.example.com."],
                )
            },
            neg("example.com.", SRV, NOERROR, COM),
            neg("dns.example.com.", SRV, NOERROR, COM),
            neg("dns.example.com.", NS, NOERROR, COM),
            neg("ns1.dns.example.com.", SRV, NOERROR, COM),
            neg("ns1.dns.example.com.", NS, NOERROR, COM),
            neg("ns1.dns.example.com.", AAAA, NOERROR, COM),
            ok(
                "ns1.dns.example.com.",
                A,
                &["ns1.dns.example.com. 5 A 203.0.113.53"],
            ),
            // Other names of the subdomain do not exist (serveSubApex).
            neg("ns2.dns.example.com.", A, NXDOMAIN, COM),
            neg("a.ns1.dns.example.com.", A, NXDOMAIN, COM),
            neg("hostmaster.dns.example.com.", A, NXDOMAIN, COM),
            neg("example.com.", A, NOERROR, COM),
        ],
    );
    // The serial is the kubernetes plugin's external one, set once the table is built.
    let serial = c.plugin.ext.external_serial(true);
    assert!(serial > 1_700_000_000, "a Unix time: {serial}");
    let p = query("example.com.", SOA);
    let (_, reply) = ringdns_testkit::serve_once(&c.plugin, &p, client(), TO_NEXT, true);
    let soa = records(&reply)
        .unwrap()
        .map(Result::unwrap)
        .find(|r| r.rtype == SOA)
        .unwrap();
    let mut rd = Vec::new();
    expand_rdata(&reply, &soa, &mut rd).unwrap();
    let at = rd.len() - 20;
    assert_eq!(
        u32::from_be_bytes(rd[at..at + 4].try_into().unwrap()),
        serial
    );

    // An apex of two labels: its ns1 name is the name server's (CoreDNS's is NXDOMAIN).
    let c = cluster("k8s_external example.com {\n apex ns.ext\n}", "");
    const APEX_SOA: &[&str] = &[
        "example.com. 5 SOA ns1.ns.ext.example.com. hostmaster.ns.ext.example.com. S 7200 1800 86400 5",
    ];
    check(
        &c,
        &[
            ok("example.com.", SOA, APEX_SOA),
            ok(
                "ns1.ns.ext.example.com.",
                A,
                &["ns1.ns.ext.example.com. 5 A 203.0.113.53"],
            ),
            neg("ns.ext.example.com.", A, NOERROR, APEX_SOA),
            neg("x.ns.ext.example.com.", A, NXDOMAIN, APEX_SOA),
            // Not below the apex: a lookup, of a namespace that does not exist.
            neg("ext.example.com.", A, NXDOMAIN, APEX_SOA),
        ],
    );

    // The longest apex setup takes: the SOA's hostmaster name has 255 bytes, and is read
    // back whole.
    let long = format!("{0}.{0}.{0}.{1}", "a".repeat(63), "b".repeat(38));
    let c = cluster(
        &format!("k8s_external example.com {{\n apex {long}\n}}"),
        "",
    );
    let g = ask(&c, "example.com.", SOA);
    assert_eq!(
        g.answer,
        [format!(
            "example.com. 5 SOA ns1.{long}.example.com. hostmaster.{long}.example.com. S 7200 1800 86400 5"
        )]
    );
}

/// ringdns's cases: an ingress hostname is a CNAME whose target is looked up through the
/// server (on the deferred pass, TC kept); a name with an address has no CNAME (RFC 1034
/// §3.6.2), and a CNAME is written once (RFC 2181 §10.1) however many ports and ingress
/// entries give it; SRV glue of a hostname from its lookups; weights; no SRV for a service
/// without ports.
#[test]
fn ingress_hostnames_and_the_rfcs() {
    let c = cluster("k8s_external example.com", "");
    let up = Upstream {
        names: vec![
            ("dummy.hostname.", A, "203.0.113.7", false),
            ("lb.example.net.", A, "203.0.113.8", true),
            ("lb.example.net.", AAAA, "2001:db8::8", false),
        ],
        ..Upstream::default()
    };
    // Inline, the hostname's answer waits for the deferred pass.
    let p = query("svc12.testns.example.com.", A);
    let mut reply = Vec::new();
    let mut req = ringdns_testkit::udp_request(&p, client(), &mut reply, false);
    let next = ringdns_testkit::Next(TO_NEXT);
    assert!(c.plugin.serve_now(&mut req, &next).is_none());
    {
        let mut fut = pin!(c.plugin.serve(&mut req, &next));
        let polled = fut.as_mut().poll(&mut Context::from_waker(Waker::noop()));
        assert!(matches!(polled, Poll::Ready(Err(_))), "deferred");
    }

    assert!(reply.is_empty());
    let g = ask_with(&c, "svc12.testns.example.com.", A, Some(&up));
    assert_eq!(
        g.answer,
        [
            "dummy.hostname. 300 A 203.0.113.7",
            "svc12.testns.example.com. 5 CNAME dummy.hostname."
        ]
    );
    assert!(!g.tc && g.ns.is_empty());
    // No AAAA upstream: the CNAME alone.
    let g = ask_with(&c, "svc12.testns.example.com.", AAAA, Some(&up));
    assert_eq!(
        g.answer,
        ["svc12.testns.example.com. 5 CNAME dummy.hostname."]
    );
    // Two ports and the same hostname twice, then another: one CNAME, the first, and TC
    // from the lookup's reply.
    up.asked.borrow_mut().clear();
    let g = ask_with(&c, "svc-lb.testns.example.com.", A, Some(&up));
    assert_eq!(
        g.answer,
        [
            "lb.example.net. 300 A 203.0.113.8",
            "svc-lb.testns.example.com. 5 CNAME lb.example.net."
        ]
    );
    assert!(g.tc, "the lookup's TC");
    assert_eq!(*up.asked.borrow(), ["lb.example.net. A"]);
    // An address and a hostname: the address only, answered at once.
    check(
        &c,
        &[
            ok(
                "svc-mixed.testns.example.com.",
                A,
                &["svc-mixed.testns.example.com. 5 A 192.0.2.10"],
            ),
            neg("svc-mixed.testns.example.com.", AAAA, NOERROR, COM),
        ],
    );
    // SRV of hostnames: each target once per port, its addresses looked up once each.
    up.asked.borrow_mut().clear();
    let g = ask_with(&c, "svc-lb.testns.example.com.", SRV, Some(&up));
    assert_eq!(
        g.answer,
        [
            "svc-lb.testns.example.com. 5 SRV 0 16 443 lb.example.net.",
            "svc-lb.testns.example.com. 5 SRV 0 16 443 other-lb.example.net.",
            "svc-lb.testns.example.com. 5 SRV 0 16 80 lb.example.net.",
            "svc-lb.testns.example.com. 5 SRV 0 16 80 other-lb.example.net.",
        ]
    );
    assert_eq!(
        g.extra,
        [
            "lb.example.net. 300 A 203.0.113.8",
            "lb.example.net. 300 AAAA 2001:db8::8"
        ]
    );
    assert_eq!(
        *up.asked.borrow(),
        [
            "lb.example.net. A",
            "lb.example.net. AAAA",
            "other-lb.example.net. A",
            "other-lb.example.net. AAAA"
        ]
    );
    // The mixed service's SRV: the address's target and glue, the hostname's target and
    // its looked-up glue.
    let g = ask_with(&c, "svc-mixed.testns.example.com.", SRV, Some(&up));
    assert_eq!(
        g.answer,
        [
            "svc-mixed.testns.example.com. 5 SRV 0 50 80 lb.example.net.",
            "svc-mixed.testns.example.com. 5 SRV 0 50 80 svc-mixed.testns.example.com.",
        ]
    );
    assert_eq!(
        g.extra,
        [
            "lb.example.net. 300 A 203.0.113.8",
            "lb.example.net. 300 AAAA 2001:db8::8",
            "svc-mixed.testns.example.com. 5 A 192.0.2.10"
        ]
    );
    check(
        &c,
        &[
            // Two families on two ports: four hits, weight 25, one glue record each.
            Case {
                extra: &[
                    "svc-dual.testns.example.com. 5 A 192.0.2.20",
                    "svc-dual.testns.example.com. 5 AAAA 2001:db8::20",
                ],
                ..ok(
                    "svc-dual.testns.example.com.",
                    SRV,
                    &[
                        "svc-dual.testns.example.com. 5 SRV 0 25 53 svc-dual.testns.example.com.",
                        "svc-dual.testns.example.com. 5 SRV 0 25 80 svc-dual.testns.example.com.",
                    ],
                )
            },
            ok(
                "_dns._udp.svc-dual.testns.example.com.",
                AAAA,
                &["_dns._udp.svc-dual.testns.example.com. 5 AAAA 2001:db8::20"],
            ),
            // No port: an address, no SRV.
            ok(
                "svc-noports.testns.example.com.",
                A,
                &["svc-noports.testns.example.com. 5 A 192.0.2.30"],
            ),
            neg("svc-noports.testns.example.com.", SRV, NOERROR, COM),
            // Other types of a name that exists: NODATA.
            neg("svc1.testns.example.com.", TXT, NOERROR, COM),
            neg("svc12.testns.example.com.", CNAME, NOERROR, COM),
            neg("svc1.testns.example.com.", HINFO, NOERROR, COM),
            // Without `headless`, a headless service is nothing.
            neg("svc-headless.testns.example.com.", A, NXDOMAIN, COM),
            // Without `namespaces`, every namespace.
            ok(
                "svc1.other.example.com.",
                A,
                &["svc1.other.example.com. 5 A 1.2.3.4"],
            ),
        ],
    );
    // Without the server's lookup (a background refresh has none), the CNAME alone.
    let g = ask_deferred(&c, "svc-lb.testns.example.com.", A, None);
    assert_eq!(
        g.answer,
        ["svc-lb.testns.example.com. 5 CNAME lb.example.net."]
    );
}

/// `fallthrough` passes on a name that does not exist only, in its zones; transfers are
/// refused; names outside the zones go on; the zone keeps the client's case; `ttl` and
/// `apex` change the records; a zone of its own for PTR names targets under the first.
#[test]
fn fallthrough_transfers_case_ttl_and_apex() {
    let c = cluster(
        "k8s_external example.com example.org 2.0.192.in-addr.arpa {\n fallthrough example.org\n ttl 30\n apex ext\n}",
        " ttl 7",
    );
    assert!(
        ask_inline(&c, "nope.testns.example.org.", A).is_none(),
        "fell through"
    );
    assert!(
        ask_inline(&c, "nope.nons.example.org.", A).is_none(),
        "fell through"
    );
    let g = ask_inline(&c, "svc1.testns.example.org.", AAAA).unwrap();
    assert_eq!(
        (g.rcode, g.answer.len()),
        (NOERROR, 0),
        "NODATA does not fall through"
    );
    let g = ask_inline(&c, "nope.testns.example.com.", A).unwrap();
    assert_eq!(g.rcode, NXDOMAIN, "not in fallthrough's zones");
    assert_eq!(
        g.ns,
        [
            "example.com. 30 SOA ns1.ext.example.com. hostmaster.ext.example.com. S 7200 1800 86400 30"
        ]
    );
    // The apex subdomain does not fall through either.
    assert_eq!(
        ask_inline(&c, "x.ext.example.org.", A).unwrap().rcode,
        NXDOMAIN
    );
    assert!(
        ask_inline(&c, "svc1.testns.svc.cluster.local.", A).is_none(),
        "not ours"
    );
    assert_eq!(ask_inline(&c, "example.com.", AXFR).unwrap().rcode, REFUSED);
    assert_eq!(
        ask_inline(&c, "svc1.testns.example.com.", IXFR)
            .unwrap()
            .rcode,
        REFUSED
    );
    // ttl 30 for the records k8s_external makes; SRV has the kubernetes plugin's (CoreDNS's
    // msg.Service TTL), its glue k8s_external's.
    let g = ask_inline(&c, "SVC1.testns.Example.COM.", A).unwrap();
    assert_eq!(g.answer, ["SVC1.testns.Example.COM. 30 A 1.2.3.4"]);
    let g = ask_inline(&c, "svc1.testns.EXAMPLE.com.", SRV).unwrap();
    assert_eq!(
        g.answer,
        ["svc1.testns.EXAMPLE.com. 7 SRV 0 100 80 svc1.testns.EXAMPLE.com."]
    );
    assert_eq!(g.extra, ["svc1.testns.EXAMPLE.com. 30 A 1.2.3.4"]);
    let g = ask_inline(&c, "Example.Com.", NS).unwrap();
    assert_eq!(g.answer, ["Example.Com. 30 NS ns1.ext.Example.Com."]);
    assert_eq!(g.extra, ["ns1.ext.Example.Com. 30 A 203.0.113.53"]);
    let g = ask_inline(&c, "ns1.ext.example.com.", A).unwrap();
    assert_eq!(g.answer, ["ns1.ext.example.com. 30 A 203.0.113.53"]);
    let g = ask_inline(&c, "10.2.0.192.in-addr.arpa.", PTR).unwrap();
    assert_eq!(
        g.answer,
        ["10.2.0.192.in-addr.arpa. 30 PTR svc-mixed.testns.example.com."]
    );
    let g = ask_inline(&c, "11.2.0.192.in-addr.arpa.", PTR).unwrap();
    assert_eq!(g.rcode, NXDOMAIN);
    assert_eq!(
        g.ns,
        [
            "2.0.192.in-addr.arpa. 30 SOA ns1.ext.2.0.192.in-addr.arpa. hostmaster.ext.2.0.192.in-addr.arpa. S 7200 1800 86400 30"
        ]
    );
}

/// setup_test.go's cases, and CoreDNS's errors.
#[test]
fn setup_parses_as_coredns() {
    fn parse(text: &str, directives: &[&'static str]) -> Result<Config, String> {
        let cf = corefile::parse("Corefile", text, &|n| n == NAME || n == SOURCE)
            .map_err(|e| e.to_string())?;
        let block = BlockSetup {
            zones: vec!["example.net.".into()],
            directives: directives.to_vec(),
            ..BlockSetup::default()
        };
        let d = &cf.blocks[0].directives[0];
        setup::parse(&mut Dispenser::new(&d.tokens), &block).map_err(|e| e.to_string())
    }
    let both = [NAME, SOURCE];
    let wire = |s: &str| ringdns_plugin::wire::name_to_wire(s).unwrap();
    for (text, zone, apex, headless, fall) in [
        ("k8s_external", "example.net.", "dns", false, None),
        (
            "k8s_external example.org",
            "example.org.",
            "dns",
            false,
            None,
        ),
        (
            "k8s_external example.org {\n apex testdns\n}",
            "example.org.",
            "testdns",
            false,
            None,
        ),
        (
            "k8s_external example.org {\n headless\n}",
            "example.org.",
            "dns",
            true,
            None,
        ),
        (
            "k8s_external example.org {\n fallthrough\n}",
            "example.org.",
            "dns",
            false,
            Some(&[][..]),
        ),
        (
            "k8s_external example.org {\n fallthrough ip6.arpa inaddr.arpa foo.com\n}",
            "example.org.",
            "dns",
            false,
            Some(&["ip6.arpa", "inaddr.arpa", "foo.com"][..]),
        ),
    ] {
        let c = parse(&format!(". {{\n{text}\nkubernetes\n}}\n"), &both).expect(text);
        assert_eq!(c.zones[0], wire(zone), "{text}");
        let mut a = wire(&format!("{apex}."));
        a.pop();
        assert_eq!(c.apex, a, "{text}");
        assert_eq!(c.headless, headless, "{text}");
        let want = match fall {
            None => ringdns_plugin::Fallthrough::default(),
            Some(z) => ringdns_plugin::Fallthrough::parse(
                &z.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
            .unwrap(),
        };
        assert_eq!(c.fall, want, "{text}");
        assert_eq!((c.ttl, c.zones.len()), (5, 1), "{text}");
    }
    let c = parse(
        ". {\nk8s_external a.org b.org {\n ttl 0\n}\nkubernetes\n}\n",
        &both,
    )
    .unwrap();
    assert_eq!((c.ttl, c.zones.len()), (0, 2));
    assert_eq!(c.apex_zones[1], wire("dns.b.org."));
    for (text, want) in [
        (
            "k8s_external {\n ttl\n}",
            "plugin/k8s_external: Wrong argument count",
        ),
        (
            "k8s_external {\n ttl x\n}",
            "plugin/k8s_external: strconv.Atoi: parsing \"x\": invalid syntax",
        ),
        (
            "k8s_external {\n ttl -1\n}",
            "ttl must be in range [0, 3600]: -1",
        ),
        (
            "k8s_external {\n ttl 3601\n}",
            "ttl must be in range [0, 3600]: 3601",
        ),
        (
            "k8s_external {\n apex\n}",
            "plugin/k8s_external: Wrong argument count",
        ),
        (
            "k8s_external {\n bogus\n}",
            "plugin/k8s_external: unknown property 'bogus'",
        ),
        // caddy's blocks: an argument of `headless` is read as the next property.
        ("k8s_external {\n headless yes\n}", "unknown property 'yes'"),
    ] {
        let err = parse(&format!(". {{\n{text}\nkubernetes\n}}\n"), &both).err();
        let err = err.unwrap_or_else(|| panic!("{text}: no error"));
        assert!(err.contains(want), "{text}: {err} (want {want})");
        assert!(err.starts_with("Corefile:"), "{err}");
    }
    // An apex that leaves the SOA's `hostmaster.APEX.ZONE` over 255 bytes is refused, even
    // when `APEX.ZONE` itself fits (the SOA's names are written compressed, so nothing
    // would catch it later).
    let apex = |last: usize| format!("{0}.{0}.{0}.{1}", "a".repeat(63), "b".repeat(last));
    // 238 bytes of apex and 13 of zone: APEX.ZONE has 251, hostmaster.APEX.ZONE 262.
    let err = parse(
        &format!(
            ". {{\nk8s_external {{\n apex {}\n}}\nkubernetes\n}}\n",
            apex(45)
        ),
        &both,
    )
    .err();
    let err = err.expect("a hostmaster name over 255 bytes");
    assert!(err.contains("makes a name too long"), "{err}");
    // 231 bytes: hostmaster.APEX.ZONE has 255, the most a name may have.
    let c = parse(
        &format!(
            ". {{\nk8s_external {{\n apex {}\n}}\nkubernetes\n}}\n",
            apex(38)
        ),
        &both,
    )
    .unwrap();
    assert_eq!(b"\x0ahostmaster".len() + c.apex_zones[0].len(), 255);
    // Without kubernetes in the block: at the directive's line.
    let err = parse(
        ". {\n\nk8s_external example.org {\n headless\n}\n}\n",
        &[NAME],
    )
    .err();
    assert_eq!(
        err.as_deref(),
        Some(
            "Corefile:3 - Error during parsing: plugin/k8s_external: kubernetes plugin not loaded"
        )
    );
}
