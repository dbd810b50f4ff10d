//! k8s_external: the real binary, with the kubernetes plugin in the same block, against the
//! fake Kubernetes API server of the tests' own (ringdns-testkit's `kubeapi`), over real UDP
//! and TCP on loopback: external IPs and load-balancer ingress, SRV, headless services, PTR,
//! the apex's SOA and NS with the name servers' addresses, an ingress hostname answered by
//! another server block, the serial, watch updates, fallthrough, and the start refused
//! without kubernetes.
//!
//! Replies are parsed with hickory-proto (an implementation other than the server's).
#![recursion_limit = "512"]

mod common;

use common::Server;
use common::hickory::{self, answer, ask, eventually, lines, packet};
use common::kube::{Cluster, external_service, headless_service};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{RData, RecordType};
use ringdns_testkit::kubeapi::FakeApi;
use ringdns_testkit::kubeapi::objects::{endpoint, endpoint_slice, namespace, service};
use std::net::IpAddr;
use std::time::Duration;

/// The SOA of example.org. in the authority section.
const SOA_ORG: &str =
    "example.org. 5 SOA ns1.dns.example.org. hostmaster.dns.example.org. 7200 1800 86400 5";

/// A negative answer with `rcode` whose SOA is `soa`.
#[track_caller]
fn negative(m: &Message, rcode: ResponseCode, soa: &str) {
    assert_eq!(hickory::negative(m, rcode), soa, "{m:?}");
}

/// The SOA serial of `zone`.
fn serial(port: u16, zone: &str) -> u32 {
    let m = ask(port, zone, RecordType::SOA);
    match m.answers.first().map(|r| &r.data) {
        Some(RData::SOA(soa)) => soa.serial,
        _ => panic!("no SOA for {zone}: {m:?}"),
    }
}

/// The server's own addresses as it finds them without `bind` (CoreDNS's `boundIPs`):
/// every interface's, loopback excluded. The name server's addresses are these when no
/// endpoint of the cluster holds one of them.
fn own_addresses() -> Vec<IpAddr> {
    let rows = ringdns::plugin::interfaces::rows().expect("the interfaces");
    let mut out: Vec<IpAddr> = Vec::new();
    for ip in rows.into_iter().filter_map(|r| r.addr) {
        if !ip.is_loopback() && !ip.is_unspecified() && !out.contains(&ip) {
            out.push(ip);
        }
    }
    out
}

/// The cluster: a service with external IPs of both families and a load balancer's IP, one
/// whose load balancer has a hostname, a headless service, a ClusterIP service without
/// external IPs, and the server's own service (its endpoints come later, in the tests that
/// need them).
fn populate(api: &FakeApi) {
    for ns in ["default", "testns", "kube-system"] {
        api.apply(namespace(ns, &[]));
    }
    external_service(api);
    api.apply(
        service("testns", "lb")
            .cluster_ips(&["10.0.0.2"])
            .lb_ingress_hostname("lb.example.net")
            .port("https", "TCP", 443)
            .build(),
    );
    headless_service(api);
    api.apply(
        service("testns", "internal")
            .cluster_ips(&["10.0.0.3"])
            .port("http", "TCP", 80)
            .build(),
    );
    api.apply(
        service("kube-system", "ringdns")
            .cluster_ips(&["10.0.0.10"])
            .external_ips(&["203.0.113.53"])
            .port("dns", "UDP", 53)
            .build(),
    );
}

/// The Corefile: k8s_external for example.org (headless, PTR of 192.0.2.0/24) and
/// example.com (falling through to a zone file), kubernetes for cluster.local, and a block
/// for example.net whose hosts answer the load balancer's hostname.
fn corefile(port: u16, kubeconfig: &std::path::Path, zone_file: &std::path::Path) -> String {
    format!(
        "{{\n workers 1\n}}\n\
         .:{port} {{\n k8s_external example.org example.com 192.0.2.0/24 {{\n  headless\n  fallthrough example.com\n }}\n kubernetes cluster.local {{\n  kubeconfig {}\n }}\n file {} example.com\n}}\n\
         example.net:{port} {{\n hosts {{\n  203.0.113.80 lb.example.net\n  2001:db8::80 lb.example.net\n }}\n}}\n",
        kubeconfig.display(),
        zone_file.display()
    )
}

/// The zone behind example.com's fallthrough: a name k8s_external does not have.
const ZONE: &str = "$ORIGIN example.com.\n@ 3600 IN SOA ns.example.com. admin.example.com. 7 3600 600 86400 60\n@ 3600 IN NS ns.example.com.\nns 3600 IN A 198.51.100.1\nghost.testns 3600 IN A 198.51.100.7\n";

/// The cluster of [`populate`], and the binary on [`corefile`].
fn start() -> (Cluster, Server) {
    let c = Cluster::start(populate);
    let zone = c.dir.write("db.example.com", ZONE);
    let s = c.serve(move |p, kc| corefile(p, kc, &zone));
    (c, s)
}

#[test]
fn external_ips_load_balancers_srv_headless_and_ptr() {
    let (_c, s) = start();
    let p = s.port;
    // spec.externalIPs then the load balancer's IP, per family.
    answer(
        &ask(p, "web.testns.example.org.", RecordType::A),
        &[
            "web.testns.example.org. 5 A 192.0.2.10",
            "web.testns.example.org. 5 A 198.51.100.10",
        ],
    );
    answer(
        &ask(p, "web.testns.example.org.", RecordType::AAAA),
        &["web.testns.example.org. 5 AAAA 2001:db8::10"],
    );
    // The other zone answers the same; the zone keeps the client's case.
    answer(
        &ask(p, "web.testns.EXAMPLE.com.", RecordType::A),
        &[
            "web.testns.EXAMPLE.com. 5 A 192.0.2.10",
            "web.testns.EXAMPLE.com. 5 A 198.51.100.10",
        ],
    );
    // SRV of the named port: one target, its three addresses as glue.
    let m = ask(p, "_http._tcp.web.testns.example.org.", RecordType::SRV);
    answer(
        &m,
        &["_http._tcp.web.testns.example.org. 5 SRV 0 33 80 web.testns.example.org."],
    );
    assert_eq!(
        lines(&m.additionals),
        [
            "web.testns.example.org. 5 A 192.0.2.10",
            "web.testns.example.org. 5 A 198.51.100.10",
            "web.testns.example.org. 5 AAAA 2001:db8::10",
        ]
    );
    negative(
        &ask(p, "_dns._udp.web.testns.example.org.", RecordType::SRV),
        ResponseCode::NXDomain,
        SOA_ORG,
    );
    // headless: the ready endpoints, by name too, and SRV to each.
    answer(
        &ask(p, "hdls.testns.example.org.", RecordType::A),
        &[
            "hdls.testns.example.org. 5 A 172.16.1.1",
            "hdls.testns.example.org. 5 A 172.16.1.2",
        ],
    );
    answer(
        &ask(p, "web-1.hdls.testns.example.org.", RecordType::A),
        &["web-1.hdls.testns.example.org. 5 A 172.16.1.2"],
    );
    let m = ask(p, "_http._tcp.hdls.testns.example.org.", RecordType::SRV);
    answer(
        &m,
        &[
            "_http._tcp.hdls.testns.example.org. 5 SRV 0 50 80 web-0.hdls.testns.example.org.",
            "_http._tcp.hdls.testns.example.org. 5 SRV 0 50 80 web-1.hdls.testns.example.org.",
        ],
    );
    assert_eq!(
        lines(&m.additionals),
        [
            "web-0.hdls.testns.example.org. 5 A 172.16.1.1",
            "web-1.hdls.testns.example.org. 5 A 172.16.1.2",
        ]
    );
    // PTR of an external IP, under the first zone.
    answer(
        &ask(p, "10.2.0.192.in-addr.arpa.", RecordType::PTR),
        &["10.2.0.192.in-addr.arpa. 5 PTR web.testns.example.org."],
    );
    negative(
        &ask(p, "11.2.0.192.in-addr.arpa.", RecordType::PTR),
        ResponseCode::NXDomain,
        "2.0.192.in-addr.arpa. 5 SOA ns1.dns.2.0.192.in-addr.arpa. hostmaster.dns.2.0.192.in-addr.arpa. 7200 1800 86400 5",
    );
    // A service without external IPs, one that does not exist, a namespace, other types.
    for name in [
        "internal.testns.example.org.",
        "nope.testns.example.org.",
        "web.nons.example.org.",
        "a.b.web.testns.example.org.",
    ] {
        negative(
            &ask(p, name, RecordType::A),
            ResponseCode::NXDomain,
            SOA_ORG,
        );
    }
    negative(
        &ask(p, "testns.example.org.", RecordType::A),
        ResponseCode::NoError,
        SOA_ORG,
    );
    negative(
        &ask(p, "web.testns.example.org.", RecordType::TXT),
        ResponseCode::NoError,
        SOA_ORG,
    );
    // The cluster zone is still the kubernetes plugin's.
    answer(
        &ask(p, "web.testns.svc.cluster.local.", RecordType::A),
        &["web.testns.svc.cluster.local. 5 A 10.0.0.1"],
    );
    // No transfer of the zone.
    let tcp = common::tcp_exchange(p, &[packet(7, "example.org.", RecordType::AXFR)]);
    assert_eq!(common::rcode(&tcp[0]), 5, "AXFR REFUSED");
}

#[test]
fn the_apex_and_its_name_servers() {
    let (c, s) = start();
    let api = &c.api;
    let p = s.port;
    let m = ask(p, "example.org.", RecordType::SOA);
    answer(&m, &[SOA_ORG]);
    negative(
        &ask(p, "example.org.", RecordType::A),
        ResponseCode::NoError,
        SOA_ORG,
    );
    negative(
        &ask(p, "dns.example.org.", RecordType::A),
        ResponseCode::NoError,
        SOA_ORG,
    );
    negative(
        &ask(p, "ns2.dns.example.org.", RecordType::A),
        ResponseCode::NXDomain,
        SOA_ORG,
    );
    // No endpoint is the server: the name server's addresses are its own (none on a
    // machine with loopback alone).
    let own = own_addresses();
    let glue = |rtype: RecordType, ips: &[IpAddr]| -> Vec<String> {
        let mut v: Vec<String> = ips
            .iter()
            .filter(|ip| ip.is_ipv4() == (rtype == RecordType::A))
            .map(|ip| format!("ns1.dns.example.org. 5 {rtype} {ip}"))
            .collect();
        v.sort();
        v
    };
    let mut all = [glue(RecordType::A, &own), glue(RecordType::AAAA, &own)].concat();
    all.sort();
    let m = ask(p, "example.org.", RecordType::NS);
    answer(&m, &["example.org. 5 NS ns1.dns.example.org."]);
    assert_eq!(lines(&m.additionals), all, "{own:?}");
    for rtype in [RecordType::A, RecordType::AAAA] {
        let m = ask(p, "ns1.dns.example.org.", rtype);
        let want = glue(rtype, &own);
        if want.is_empty() {
            negative(&m, ResponseCode::NoError, SOA_ORG);
        } else {
            let want: Vec<&str> = want.iter().map(String::as_str).collect();
            answer(&m, &want);
        }
    }
    // The server becomes its service's endpoint: the service's external IP.
    let Some(addr) = own.first() else {
        return;
    };
    let family = if addr.is_ipv4() { "IPv4" } else { "IPv6" };
    api.apply(
        endpoint_slice("kube-system", "ringdns-1", "ringdns", family)
            .endpoint(endpoint(&[&addr.to_string()]))
            .port("dns", "UDP", 53)
            .build(),
    );
    let took = eventually(p, "ns1.dns.example.org.", RecordType::A, |m| {
        lines(&m.answers) == ["ns1.dns.example.org. 5 A 203.0.113.53"]
    });
    assert!(took < Duration::from_secs(2), "after {took:?}");
    let m = ask(p, "example.org.", RecordType::NS);
    answer(&m, &["example.org. 5 NS ns1.dns.example.org."]);
    assert_eq!(
        lines(&m.additionals),
        ["ns1.dns.example.org. 5 A 203.0.113.53"]
    );
    negative(
        &ask(p, "ns1.dns.example.org.", RecordType::AAAA),
        ResponseCode::NoError,
        SOA_ORG,
    );
}

#[test]
fn an_ingress_hostname_is_a_cname_to_what_another_block_answers() {
    let (_c, s) = start();
    let p = s.port;
    let m = ask(p, "lb.testns.example.org.", RecordType::A);
    answer(
        &m,
        &[
            "lb.example.net. 3600 A 203.0.113.80",
            "lb.testns.example.org. 5 CNAME lb.example.net.",
        ],
    );
    answer(
        &ask(p, "lb.testns.example.org.", RecordType::AAAA),
        &[
            "lb.example.net. 3600 AAAA 2001:db8::80",
            "lb.testns.example.org. 5 CNAME lb.example.net.",
        ],
    );
    let m = ask(p, "_https._tcp.lb.testns.example.org.", RecordType::SRV);
    answer(
        &m,
        &["_https._tcp.lb.testns.example.org. 5 SRV 0 100 443 lb.example.net."],
    );
    assert_eq!(
        lines(&m.additionals),
        [
            "lb.example.net. 3600 A 203.0.113.80",
            "lb.example.net. 3600 AAAA 2001:db8::80"
        ]
    );
}

#[test]
fn the_serial_and_watch_updates() {
    let (c, s) = start();
    let api = &c.api;
    let p = s.port;
    let before = serial(p, "example.org.");
    let cluster_before = serial(p, "cluster.local.");
    // The serials are Unix times in seconds: let a change be in a later second.
    std::thread::sleep(Duration::from_millis(1100));
    // A change only the cluster zone sees: its serial moves, the external one stays.
    api.apply(
        service("testns", "another")
            .cluster_ips(&["10.0.0.4"])
            .port("http", "TCP", 80)
            .build(),
    );
    eventually(p, "another.testns.svc.cluster.local.", RecordType::A, |m| {
        m.answers.len() == 1
    });
    assert!(
        serial(p, "cluster.local.") > cluster_before,
        "the cluster's serial moved"
    );
    assert_eq!(
        serial(p, "example.org."),
        before,
        "the external serial stayed"
    );
    std::thread::sleep(Duration::from_millis(1100));
    // An external IP added: shown within 2 s, and the serial moves.
    api.apply(
        service("testns", "another")
            .cluster_ips(&["10.0.0.4"])
            .external_ips(&["192.0.2.44"])
            .port("http", "TCP", 80)
            .build(),
    );
    let took = eventually(p, "another.testns.example.org.", RecordType::A, |m| {
        lines(&m.answers) == ["another.testns.example.org. 5 A 192.0.2.44"]
    });
    assert!(took < Duration::from_secs(2), "added after {took:?}");
    let moved = serial(p, "example.org.");
    assert!(
        moved > before,
        "the external serial moved: {before} -> {moved}"
    );
    answer(
        &ask(p, "44.2.0.192.in-addr.arpa.", RecordType::PTR),
        &["44.2.0.192.in-addr.arpa. 5 PTR another.testns.example.org."],
    );
    // And removed.
    api.apply(
        service("testns", "another")
            .cluster_ips(&["10.0.0.4"])
            .port("http", "TCP", 80)
            .build(),
    );
    let took = eventually(p, "another.testns.example.org.", RecordType::A, |m| {
        m.metadata.response_code == ResponseCode::NXDomain
    });
    assert!(took < Duration::from_secs(2), "removed after {took:?}");
    negative(
        &ask(p, "44.2.0.192.in-addr.arpa.", RecordType::PTR),
        ResponseCode::NXDomain,
        "2.0.192.in-addr.arpa. 5 SOA ns1.dns.2.0.192.in-addr.arpa. hostmaster.dns.2.0.192.in-addr.arpa. 7200 1800 86400 5",
    );
}

#[test]
fn fallthrough_hands_only_nxdomain_to_the_next_plugin() {
    let (_c, s) = start();
    let p = s.port;
    // example.com falls through: the zone file has the name.
    let m = ask(p, "ghost.testns.example.com.", RecordType::A);
    answer(&m, &["ghost.testns.example.com. 3600 A 198.51.100.7"]);
    // A name neither has: the file's NXDOMAIN, with its SOA.
    let m = ask(p, "nope.testns.example.com.", RecordType::A);
    assert_eq!(m.metadata.response_code, ResponseCode::NXDomain, "{m:?}");
    assert_eq!(
        lines(&m.authorities),
        ["example.com. 60 SOA ns.example.com. admin.example.com. 3600 600 86400 60"]
    );
    // NODATA stays k8s_external's, and example.org does not fall through.
    let soa_com =
        "example.com. 5 SOA ns1.dns.example.com. hostmaster.dns.example.com. 7200 1800 86400 5";
    negative(
        &ask(p, "web.testns.example.com.", RecordType::TXT),
        ResponseCode::NoError,
        soa_com,
    );
    negative(
        &ask(p, "ghost.testns.example.org.", RecordType::A),
        ResponseCode::NXDomain,
        SOA_ORG,
    );
}

#[test]
fn without_kubernetes_the_start_fails() {
    let (code, err) = common::run_expect_failure(
        ".:53 {\n whoami\n k8s_external example.org {\n  headless\n }\n}\n",
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "Corefile:3 - Error during parsing: plugin/k8s_external: kubernetes plugin not loaded"
        ),
        "{err}"
    );
}
