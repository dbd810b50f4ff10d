//! The answers of CoreDNS's kubernetes handler tests (handler_test.go, handler_pod_*_test.go,
//! handler_ignore_emptyservice_test.go, handler_case_test.go, kubernetes_apex_test.go,
//! ns_test.go, reverse_test.go), served in process from a table built out of API-shaped JSON
//! (testdata/fixture.json: the objects of CoreDNS's `APIConnServeTest`), so the decoding and
//! the table building are tested with the answers.

use super::*;
use crate::data::ClusterData;
use crate::setup::Options;
use crate::store::{Change, Kind, Store};
use ringdns_plugin::wire::rcode::NOERROR;
use ringdns_plugin::wire::rtype::HINFO;
use ringdns_testkit::reply::{Case, Reply, neg, ok, query};
use std::net::{IpAddr, SocketAddr};

/// The objects of CoreDNS's test API connection, as the API server would send them.
const FIXTURE: &str = include_str!("../testdata/fixture.json");

/// A store loaded from the fixture's lists.
pub(crate) fn store() -> Store {
    let v: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
    let mut s = Store::default();
    for (key, kind) in [
        ("services", Kind::Services),
        ("endpointslices", Kind::Slices),
        ("namespaces", Kind::Namespaces),
        ("pods", Kind::Pods),
    ] {
        let items: Vec<String> = v[key]["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.to_string())
            .collect();
        let refs: Vec<&str> = items.iter().map(String::as_str).collect();
        s.apply(kind, Change::Replace(&refs)).unwrap();
    }
    s
}

/// The options a `kubernetes` directive (its whole text) in block `cluster.local` sets.
pub(crate) fn options(directive: &str) -> Options {
    let text = format!("cluster.local {{\n{directive}\n}}\n");
    let cf = ringdns_plugin::corefile::parse("Corefile", &text, &|n| n == "kubernetes").unwrap();
    let block = BlockSetup {
        zones: vec!["cluster.local.".into()],
        ..BlockSetup::default()
    };
    setup::parse(
        &mut Dispenser::new(&cf.blocks[0].directives[0].tokens),
        &block,
    )
    .unwrap()
}

fn instance_with(directive: &str, local: &[IpAddr], synced: bool) -> Kubernetes {
    let o = options(directive);
    let data = ClusterData::build(&store(), &o, local, 1499347823, synced);
    test_instance(o, data)
}

fn instance(directive: &str) -> Kubernetes {
    instance_with(directive, &[], true)
}

/// What the next plugin answers (CoreDNS's tests' NextHandler).
const TO_NEXT: u8 = 99;

/// Serves on the inline pass; `None` when it went to the next plugin.
fn ask_from(k: &Kubernetes, name: &str, qtype: u16, client: SocketAddr) -> Option<Reply> {
    let (status, reply) =
        ringdns_testkit::serve_once(k, &query(name, qtype), client, TO_NEXT, true);
    if status.rcode == TO_NEXT {
        return None;
    }
    if reply.is_empty() {
        // An rcode for the server to write (REFUSED for a transfer).
        return Some(Reply::rcode_only(status.rcode));
    }
    Some(Reply::read(&reply))
}

fn ask(k: &Kubernetes, name: &str, qtype: u16) -> Reply {
    ask_from(k, name, qtype, "10.240.0.1:40000".parse().unwrap()).expect("not passed on")
}

const SOA_LINE: &str =
    "cluster.local. 5 SOA ns.dns.cluster.local. hostmaster.cluster.local. S 7200 1800 86400 5";

/// NXDOMAIN with the zone's SOA.
const fn nx(qname: &'static str, qtype: u16) -> Case {
    neg(qname, qtype, NXDOMAIN, &[SOA_LINE])
}

/// NODATA with the zone's SOA.
const fn nodata(qname: &'static str, qtype: u16) -> Case {
    neg(qname, qtype, NOERROR, &[SOA_LINE])
}

/// Asks each case's question and checks its reply.
fn check(k: &Kubernetes, cases: &[Case]) {
    for c in cases {
        c.check(&ask(k, c.qname, c.qtype));
    }
}

/// handler_test.go's commonDnsTestCases and dnsTestCases (namespaces testns), but for the
/// ExternalName to an outside name, which needs the server (tests/kubernetes.rs).
#[test]
fn the_handler_tests_answer_as_coredns() {
    let k = instance("kubernetes {\n namespaces testns\n}");
    check(
        &k,
        &[
            ok(
                "svc1.testns.svc.cluster.local.",
                A,
                &["svc1.testns.svc.cluster.local. 5 A 10.0.0.1"],
            ),
            ok(
                "svcempty.testns.svc.cluster.local.",
                A,
                &["svcempty.testns.svc.cluster.local. 5 A 10.0.0.1"],
            ),
            Case {
                extra: &["svc1.testns.svc.cluster.local. 5 A 10.0.0.1"],
                ..ok(
                    "svc1.testns.svc.cluster.local.",
                    SRV,
                    &[
                        "svc1.testns.svc.cluster.local. 5 SRV 0 100 80 svc1.testns.svc.cluster.local.",
                    ],
                )
            },
            Case {
                extra: &["svc6.testns.svc.cluster.local. 5 AAAA 1234:abcd::1"],
                ..ok(
                    "svc6.testns.svc.cluster.local.",
                    SRV,
                    &[
                        "svc6.testns.svc.cluster.local. 5 SRV 0 100 80 svc6.testns.svc.cluster.local.",
                    ],
                )
            },
            Case {
                extra: &["svc1.testns.svc.cluster.local. 5 A 10.0.0.1"],
                ..ok(
                    "_http._tcp.svc1.testns.svc.cluster.local.",
                    SRV,
                    &[
                        "_http._tcp.svc1.testns.svc.cluster.local. 5 SRV 0 100 80 svc1.testns.svc.cluster.local.",
                    ],
                )
            },
            ok(
                "hdls1.testns.svc.cluster.local.",
                A,
                &[
                    "hdls1.testns.svc.cluster.local. 5 A 172.0.0.2",
                    "hdls1.testns.svc.cluster.local. 5 A 172.0.0.3",
                    "hdls1.testns.svc.cluster.local. 5 A 172.0.0.4",
                    "hdls1.testns.svc.cluster.local. 5 A 172.0.0.5",
                ],
            ),
            ok(
                "hdlsprtls.testns.svc.cluster.local.",
                A,
                &["hdlsprtls.testns.svc.cluster.local. 5 A 172.0.0.20"],
            ),
            nodata("svc1.testns.svc.cluster.local.", AAAA),
            nx("svc0.testns.svc.cluster.local.", AAAA),
            nx("svc0.testns.svc.cluster.local.", A),
            nx("svc0.svc-nons.svc.cluster.local.", A),
            ok(
                "dns-version.cluster.local.",
                TXT,
                &["dns-version.cluster.local. 28800 TXT 1.1.0"],
            ),
            nodata("svc1.testns.svc.cluster.local.", TXT),
            nx("svc0.svc-nons.svc.cluster.local.", TXT),
            nx("bogusendpoint.hdls1.testns.svc.cluster.local.", A),
            nx("bogusendpoint.svc0.testns.svc.cluster.local.", A),
            ok(
                "svc6.testns.svc.cluster.local.",
                AAAA,
                &["svc6.testns.svc.cluster.local. 5 AAAA 1234:abcd::1"],
            ),
            Case {
                extra: &["svc6.testns.svc.cluster.local. 5 AAAA 1234:abcd::1"],
                ..ok(
                    "_http._tcp.svc6.testns.svc.cluster.local.",
                    SRV,
                    &[
                        "_http._tcp.svc6.testns.svc.cluster.local. 5 SRV 0 100 80 svc6.testns.svc.cluster.local.",
                    ],
                )
            },
            ok(
                "hdls1.testns.svc.cluster.local.",
                AAAA,
                &[
                    "hdls1.testns.svc.cluster.local. 5 AAAA 5678:abcd::1",
                    "hdls1.testns.svc.cluster.local. 5 AAAA 5678:abcd::2",
                ],
            ),
            nodata("svc.cluster.local.", A),
            nodata("pod.cluster.local.", A),
            nodata("testns.svc.cluster.local.", A),
            nodata("svc.cluster.local.", NS),
            nodata("testns.svc.cluster.local.", NS),
            nx("foo.cluster.local.", NS),
            nx("foo.svc.cluster.local.", NS),
            ok(
                "svc-dual-stack.testns.svc.cluster.local.",
                A,
                &["svc-dual-stack.testns.svc.cluster.local. 5 A 10.0.0.3"],
            ),
            ok(
                "svc-dual-stack.testns.svc.cluster.local.",
                AAAA,
                &["svc-dual-stack.testns.svc.cluster.local. 5 AAAA 10::3"],
            ),
            Case {
                extra: &[
                    "svc-dual-stack.testns.svc.cluster.local. 5 A 10.0.0.3",
                    "svc-dual-stack.testns.svc.cluster.local. 5 AAAA 10::3",
                ],
                ..ok(
                    "svc-dual-stack.testns.svc.cluster.local.",
                    SRV,
                    &[
                        "svc-dual-stack.testns.svc.cluster.local. 5 SRV 0 50 80 svc-dual-stack.testns.svc.cluster.local.",
                    ],
                )
            },
            nodata("svc1.testns.svc.cluster.local.", SOA),
            nx("endpoint.external.testns.svc.cluster.local.", CNAME),
            nx(
                "subdomain.subdomain.external.testns.svc.cluster.local.",
                CNAME,
            ),
            Case {
                extra: &[
                    "172-0-0-2.hdls1.testns.svc.cluster.local. 5 A 172.0.0.2",
                    "172-0-0-3.hdls1.testns.svc.cluster.local. 5 A 172.0.0.3",
                    "5678-abcd--1.hdls1.testns.svc.cluster.local. 5 AAAA 5678:abcd::1",
                    "5678-abcd--2.hdls1.testns.svc.cluster.local. 5 AAAA 5678:abcd::2",
                    "dup-name.hdls1.testns.svc.cluster.local. 5 A 172.0.0.4",
                    "dup-name.hdls1.testns.svc.cluster.local. 5 A 172.0.0.5",
                ],
                ..ok(
                    "_http._tcp.hdls1.testns.svc.cluster.local.",
                    SRV,
                    &[
                        "_http._tcp.hdls1.testns.svc.cluster.local. 5 SRV 0 16 80 172-0-0-2.hdls1.testns.svc.cluster.local.",
                        "_http._tcp.hdls1.testns.svc.cluster.local. 5 SRV 0 16 80 172-0-0-3.hdls1.testns.svc.cluster.local.",
                        "_http._tcp.hdls1.testns.svc.cluster.local. 5 SRV 0 16 80 5678-abcd--1.hdls1.testns.svc.cluster.local.",
                        "_http._tcp.hdls1.testns.svc.cluster.local. 5 SRV 0 16 80 5678-abcd--2.hdls1.testns.svc.cluster.local.",
                        "_http._tcp.hdls1.testns.svc.cluster.local. 5 SRV 0 16 80 dup-name.hdls1.testns.svc.cluster.local.",
                    ],
                )
            },
            ok(
                "5678-abcd--2.hdls1.testns.svc.cluster.local.",
                AAAA,
                &["5678-abcd--2.hdls1.testns.svc.cluster.local. 5 AAAA 5678:abcd::2"],
            ),
            ok(
                "172-0-0-20.hdlsprtls.testns.svc.cluster.local.",
                A,
                &["172-0-0-20.hdlsprtls.testns.svc.cluster.local. 5 A 172.0.0.20"],
            ),
            ok(
                "172-0-0-2.hdls1.testns.svc.cluster.local.",
                A,
                &["172-0-0-2.hdls1.testns.svc.cluster.local. 5 A 172.0.0.2"],
            ),
            ok(
                "dup-name.hdls1.testns.svc.cluster.local.",
                A,
                &[
                    "dup-name.hdls1.testns.svc.cluster.local. 5 A 172.0.0.4",
                    "dup-name.hdls1.testns.svc.cluster.local. 5 A 172.0.0.5",
                ],
            ),
            ok(
                "external.testns.svc.cluster.local.",
                CNAME,
                &["external.testns.svc.cluster.local. 5 CNAME ext.interwebs.test."],
            ),
            ok(
                "external-to-service.testns.svc.cluster.local.",
                A,
                &[
                    "external-to-service.testns.svc.cluster.local. 5 CNAME svc1.testns.svc.cluster.local.",
                    "svc1.testns.svc.cluster.local. 5 A 10.0.0.1",
                ],
            ),
            // Not exposed: `namespaces testns`.
            nx("svc1.unexposedns.svc.cluster.local.", A),
        ],
    );
}

/// The apex and the other types (kubernetes_apex_test.go, handler.go's switch).
#[test]
fn the_apex_answers_soa_and_ns_and_nodata() {
    let local: [IpAddr; 1] = ["127.0.0.1".parse().unwrap()];
    let k = instance_with("kubernetes", &local, true);
    check(
        &k,
        &[
            ok("cluster.local.", SOA, &[SOA_LINE]),
            Case {
                extra: &["ns.dns.cluster.local. 5 A 127.0.0.1"],
                ..ok(
                    "cluster.local.",
                    NS,
                    &["cluster.local. 5 NS ns.dns.cluster.local."],
                )
            },
            nodata("cluster.local.", A),
            nodata("cluster.local.", AAAA),
            nodata("cluster.local.", SRV),
            nodata("cluster.local.", HINFO),
            ok(
                "ns.dns.cluster.local.",
                A,
                &["ns.dns.cluster.local. 5 A 127.0.0.1"],
            ),
            nodata("ns.dns.cluster.local.", AAAA),
            nx("dns-version.cluster.local.", A),
            nodata("svc1.testns.svc.cluster.local.", HINFO),
            nx("svc0.testns.svc.cluster.local.", HINFO),
            nodata("svc1.testns.svc.cluster.local.", MX),
            nodata("svc1.testns.svc.cluster.local.", CNAME),
        ],
    );
    assert_eq!(ask(&k, "cluster.local.", AXFR).rcode, REFUSED);
}

/// ns_test.go: an endpoint of the server's own address names the NS records after its
/// service, with the service's cluster IP as glue.
#[test]
fn ns_records_name_the_service_whose_endpoint_is_the_server() {
    let local: [IpAddr; 1] = ["172.0.0.100".parse().unwrap()];
    let k = instance_with("kubernetes", &local, true);
    check(
        &k,
        &[Case {
            extra: &["kubedns.kube-system.svc.cluster.local. 5 A 10.0.0.10"],
            ..ok(
                "cluster.local.",
                NS,
                &["cluster.local. 5 NS kubedns.kube-system.svc.cluster.local."],
            )
        }],
    );
}

/// handler_case_test.go: the zone part of owners and SRV targets keeps the client's case.
#[test]
fn the_zone_keeps_the_clients_case() {
    let k = instance("kubernetes");
    let g = ask(&k, "svc1.testns.svc.cLuStEr.LoCaL.", A);
    assert_eq!(g.answer, ["svc1.testns.svc.cLuStEr.LoCaL. 5 A 10.0.0.1"]);
    let g = ask(&k, "_http._tcp.svc1.testns.svc.cLuStEr.LoCaL.", SRV);
    assert_eq!(
        g.answer,
        ["_http._tcp.svc1.testns.svc.cLuStEr.LoCaL. 5 SRV 0 100 80 svc1.testns.svc.cLuStEr.LoCaL."]
    );
    assert_eq!(g.extra, ["svc1.testns.svc.cLuStEr.LoCaL. 5 A 10.0.0.1"]);
    let g = ask(&k, "svc0.testns.svc.cLuStEr.LoCaL.", A);
    assert_eq!(
        g.ns,
        [
            "cLuStEr.LoCaL. 5 SOA ns.dns.cLuStEr.LoCaL. hostmaster.cLuStEr.LoCaL. S 7200 1800 86400 5"
        ]
    );
}

/// handler_pod_disabled_test.go, handler_pod_insecure_test.go, handler_pod_verified_test.go.
#[test]
fn pods_answer_per_mode() {
    let disabled = instance("kubernetes");
    check(
        &disabled,
        &[
            nx("10-240-0-1.podns.pod.cluster.local.", A),
            nx("172-0-0-2.podns.pod.cluster.local.", A),
        ],
    );

    let insecure = instance("kubernetes {\n pods insecure\n}");
    check(
        &insecure,
        &[
            ok(
                "10-240-0-1.podns.pod.cluster.local.",
                A,
                &["10-240-0-1.podns.pod.cluster.local. 5 A 10.240.0.1"],
            ),
            ok(
                "172-0-0-2.podns.pod.cluster.local.",
                A,
                &["172-0-0-2.podns.pod.cluster.local. 5 A 172.0.0.2"],
            ),
            ok(
                "1234--5678.podns.pod.cluster.local.",
                AAAA,
                &["1234--5678.podns.pod.cluster.local. 5 AAAA 1234::5678"],
            ),
            nodata("10-240-0-1.podns.pod.cluster.local.", AAAA),
            nx("blah.podns.pod.cluster.local.", A),
            nx("blah.podns.pod.cluster.local.", AAAA),
            nx("blah.podns.pod.cluster.local.", HINFO),
            nx("blah.pod-nons.pod.cluster.local.", A),
            nodata("podns.pod.cluster.local.", A),
        ],
    );

    let verified = instance("kubernetes {\n pods verified\n}");
    check(
        &verified,
        &[
            ok(
                "10-240-0-1.podns.pod.cluster.local.",
                A,
                &["10-240-0-1.podns.pod.cluster.local. 5 A 10.240.0.1"],
            ),
            nx("172-0-0-2.podns.pod.cluster.local.", A),
            nx("10-240-0-1.otherns.pod.cluster.local.", A),
            nx("10-240-0-2.podns.pod.cluster.local.", A),
            nx("blah.pod-nons.pod.cluster.local.", A),
            nodata("podns.pod.cluster.local.", A),
        ],
    );
}

/// handler_ignore_emptyservice_test.go.
#[test]
fn ignore_empty_service_makes_services_without_endpoints_nxdomain() {
    let k = instance("kubernetes {\n ignore empty_service\n}");
    check(
        &k,
        &[
            ok(
                "svc1.testns.svc.cluster.local.",
                A,
                &["svc1.testns.svc.cluster.local. 5 A 10.0.0.1"],
            ),
            nx("svcempty.testns.svc.cluster.local.", A),
            nx("svcempty.testns.svc.cluster.local.", SRV),
            ok(
                "external.testns.svc.cluster.local.",
                CNAME,
                &["external.testns.svc.cluster.local. 5 CNAME ext.interwebs.test."],
            ),
        ],
    );
}

/// reverse_test.go: cluster IPs name their service, endpoint addresses their endpoint.
#[test]
fn ptr_names_services_then_endpoints() {
    let o = {
        let text = "cluster.local 10.in-addr.arpa 172.in-addr.arpa 5678:abcd::/32 {\nkubernetes cluster.local 10.in-addr.arpa 172.in-addr.arpa 5678:abcd::/32\n}\n";
        let cf = ringdns_plugin::corefile::parse("Corefile", text, &|n| n == "kubernetes").unwrap();
        setup::parse(
            &mut Dispenser::new(&cf.blocks[0].directives[0].tokens),
            &BlockSetup::default(),
        )
        .unwrap()
    };
    let data = ClusterData::build(&store(), &o, &[], 1, true);
    let k = test_instance(o, data);
    let soa10 = "10.in-addr.arpa. 5 SOA ns.dns.10.in-addr.arpa. hostmaster.10.in-addr.arpa. S 7200 1800 86400 5";
    let g = ask(&k, "1.0.0.10.in-addr.arpa.", PTR);
    assert_eq!(
        g.answer,
        ["1.0.0.10.in-addr.arpa. 5 PTR svc1.testns.svc.cluster.local."]
    );
    let g = ask(&k, "3.0.0.10.in-addr.arpa.", PTR);
    assert_eq!(
        g.answer,
        ["3.0.0.10.in-addr.arpa. 5 PTR svc-dual-stack.testns.svc.cluster.local."]
    );
    let g = ask(&k, "2.0.0.172.in-addr.arpa.", PTR);
    assert_eq!(
        g.answer,
        ["2.0.0.172.in-addr.arpa. 5 PTR 172-0-0-2.hdls1.testns.svc.cluster.local."]
    );
    let g = ask(&k, "4.0.0.172.in-addr.arpa.", PTR);
    assert_eq!(
        g.answer,
        ["4.0.0.172.in-addr.arpa. 5 PTR dup-name.hdls1.testns.svc.cluster.local."]
    );
    let g = ask(
        &k,
        "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.c.b.a.8.7.6.5.ip6.arpa.",
        PTR,
    );
    assert_eq!(g.answer.len(), 1);
    assert!(
        g.answer[0].ends_with("PTR 5678-abcd--1.hdls1.testns.svc.cluster.local."),
        "{g:?}"
    );
    let g = ask(&k, "9.9.9.10.in-addr.arpa.", PTR);
    assert_eq!(
        (g.rcode, g.ns.as_slice()),
        (NXDOMAIN, &[soa10.to_string()][..])
    );
    // A partial reverse name: NXDOMAIN; the reverse apex: NODATA.
    assert_eq!(ask(&k, "0.10.in-addr.arpa.", PTR).rcode, NXDOMAIN);
    let apex = ask(&k, "10.in-addr.arpa.", PTR);
    assert_eq!((apex.rcode, apex.answer.len()), (NOERROR, 0));
    // A forward lookup in a reverse zone: NXDOMAIN.
    assert_eq!(ask(&k, "1.0.0.10.in-addr.arpa.", A).rcode, NXDOMAIN);
}

/// Before the first full list NXDOMAIN is SERVFAIL (CoreDNS: not synced); fallthrough passes
/// a name error on before that.
#[test]
fn unsynced_name_errors_are_servfail_and_fallthrough_passes_them_on() {
    let k = instance_with("kubernetes", &[], false);
    let g = ask(&k, "svc0.testns.svc.cluster.local.", A);
    assert_eq!((g.rcode, g.ns.len()), (SERVFAIL, 1));
    // Found names are still answered.
    assert_eq!(ask(&k, "svc1.testns.svc.cluster.local.", A).answer.len(), 1);

    let f = instance("kubernetes {\n fallthrough\n}");
    let client = "10.0.0.9:5353".parse().unwrap();
    assert_eq!(
        ask_from(&f, "svc0.testns.svc.cluster.local.", A, client),
        None
    );
    assert_eq!(
        ask_from(&f, "svc1.testns.svc.cluster.local.", A, client)
            .unwrap()
            .answer
            .len(),
        1
    );
    // A name outside the zone goes on, whatever fallthrough says.
    let k = instance("kubernetes");
    assert_eq!(ask_from(&k, "example.org.", A, client), None);
}

/// `ttl` sets every record's TTL; the SOA's is at most 300 and its MINIMUM is the ttl.
#[test]
fn ttl_applies_to_records_and_the_soa() {
    let k = instance("kubernetes {\n ttl 3600\n}");
    assert_eq!(
        ask(&k, "svc1.testns.svc.cluster.local.", A).answer,
        ["svc1.testns.svc.cluster.local. 3600 A 10.0.0.1"]
    );
    assert_eq!(
        ask(&k, "svc0.testns.svc.cluster.local.", A).ns,
        [
            "cluster.local. 300 SOA ns.dns.cluster.local. hostmaster.cluster.local. S 7200 1800 86400 3600"
        ]
    );
}

/// endpoint_pod_names: an endpoint without a hostname is named by its pod.
#[test]
fn endpoint_pod_names_name_endpoints_by_their_pod() {
    let k = instance("kubernetes {\n endpoint_pod_names\n}");
    check(
        &k,
        &[
            ok(
                "pod-a.hdlspods.testns.svc.cluster.local.",
                A,
                &["pod-a.hdlspods.testns.svc.cluster.local. 5 A 172.0.1.1"],
            ),
            nx("172-0-1-1.hdlspods.testns.svc.cluster.local.", A),
        ],
    );
    let plain = instance("kubernetes");
    check(
        &plain,
        &[ok(
            "172-0-1-1.hdlspods.testns.svc.cluster.local.",
            A,
            &["172-0-1-1.hdlspods.testns.svc.cluster.local. 5 A 172.0.1.1"],
        )],
    );
}

/// CoreDNS's autopath_test.go: a pod's namespace gives its search path; no path for a
/// client that is no pod, or without `pods verified`.
#[test]
fn a_pods_search_path_starts_with_its_namespace() {
    use ringdns_plugin::autopath::{AutoPather, SearchPath};
    let k = instance("kubernetes {\n pods verified\n}");
    let mut path = SearchPath::default();
    let q = ringdns_testkit::wire_name("foo.podns.svc.cluster.local.");
    let qname = Name::from_wire(&q).unwrap();
    let pod: IpAddr = "10.240.0.1".parse().unwrap();
    k.inner.search_path(pod, &qname, &mut path);
    let names: Vec<String> = path
        .iter()
        .map(|w| Name::from_wire(w).unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "podns.svc.cluster.local.",
            "svc.cluster.local.",
            "cluster.local.",
            "."
        ]
    );
    k.inner
        .search_path("10.9.9.9".parse().unwrap(), &qname, &mut path);
    assert!(path.is_empty());
    let outside = ringdns_testkit::wire_name("example.org.");
    k.inner
        .search_path(pod, &Name::from_wire(&outside).unwrap(), &mut path);
    assert!(path.is_empty());
    let insecure = instance("kubernetes {\n pods insecure\n}");
    insecure.inner.search_path(pod, &qname, &mut path);
    assert!(path.is_empty());
}
