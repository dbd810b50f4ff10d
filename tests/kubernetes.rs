//! kubernetes: the real binary against a fake Kubernetes API server of the tests' own
//! (ringdns-testkit's `kubeapi`: HTTPS with its own CA, bearer tokens, list and chunked watch
//! streams), over real UDP and TCP on loopback: every record type of the DNS schema, watch
//! updates shown within seconds, SERVFAIL and /ready before the first sync, the in-cluster
//! configuration, kubeconfig and client-certificate sources, the namespace and label
//! filters, and the metrics.
//!
//! Replies are parsed with hickory-proto (an implementation other than the server's).
#![recursion_limit = "512"]

mod common;

use common::hickory::{answer, ask, eventually, lines, negative};
use common::kube::{Cluster, headless_service};
use common::{Server, TempDir, free_port, http_get};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{RData, RecordType};
use ringdns_testkit::kubeapi::objects::{endpoint, endpoint_slice, namespace, pod, service};
use ringdns_testkit::kubeapi::{FakeApi, FakeApiOptions as ApiOptions};
use std::time::Duration;

/// The objects most tests serve: namespaces, a dual-stack ClusterIP service with its slice,
/// a headless one with hostnames and a not-ready endpoint, an ExternalName into the zone and
/// one out of it, a pod.
fn populate(api: &FakeApi) {
    for ns in ["default", "testns", "other"] {
        api.apply(namespace(
            ns,
            &[("team", if ns == "other" { "b" } else { "a" })],
        ));
    }
    api.apply(
        service("testns", "svc1")
            .cluster_ips(&["10.0.0.1", "fd00::1"])
            .port("http", "TCP", 80)
            .port("dns", "UDP", 53)
            .build(),
    );
    api.apply(
        endpoint_slice("testns", "svc1-x1", "svc1", "IPv4")
            .endpoint(endpoint(&["172.16.0.1"]).target_pod("svc1-pod"))
            .port("http", "TCP", 8080)
            .build(),
    );
    headless_service(api);
    api.apply(
        service("testns", "inside")
            .external_name("svc1.testns.svc.cluster.local")
            .build(),
    );
    api.apply(
        service("testns", "outside")
            .external_name("ext.example.net")
            .build(),
    );
    api.apply(pod("testns", "p1", "172.16.5.5").build());
    api.apply(
        service("other", "svc2")
            .cluster_ips(&["10.0.0.2"])
            .port("http", "TCP", 80)
            .label("tier", "backend")
            .build(),
    );
}

/// A kubeconfig-based Corefile: `kubernetes` in the root block with `directive` lines,
/// plus a block answering the outside ExternalName target.
fn corefile(port: u16, kubeconfig: &std::path::Path, directive: &str) -> String {
    format!(
        "{{\n workers 1\n}}\n.:{port} {{\n kubernetes cluster.local 10.in-addr.arpa 16.172.in-addr.arpa {{\n  kubeconfig {}\n{directive}\n }}\n}}\nexample.net:{port} {{\n hosts {{\n  192.0.2.7 ext.example.net\n }}\n}}\n",
        kubeconfig.display()
    )
}

fn start(c: &Cluster, directive: &str) -> Server {
    let directive = directive.to_string();
    c.serve(move |p, kc| corefile(p, kc, &directive))
}

#[test]
fn every_record_of_the_schema_from_the_api() {
    let c = Cluster::start(populate);
    let s = start(&c, "  pods insecure\n  ttl 7");
    let p = s.port;
    answer(
        &ask(p, "svc1.testns.svc.cluster.local.", RecordType::A),
        &["svc1.testns.svc.cluster.local. 7 A 10.0.0.1"],
    );
    answer(
        &ask(p, "svc1.testns.svc.cluster.local.", RecordType::AAAA),
        &["svc1.testns.svc.cluster.local. 7 AAAA fd00::1"],
    );
    // SRV of a named port, then of every port (dual stack: one target per port).
    let m = ask(
        p,
        "_http._tcp.svc1.testns.svc.cluster.local.",
        RecordType::SRV,
    );
    answer(
        &m,
        &["_http._tcp.svc1.testns.svc.cluster.local. 7 SRV 0 50 80 svc1.testns.svc.cluster.local."],
    );
    assert_eq!(
        lines(&m.additionals),
        [
            "svc1.testns.svc.cluster.local. 7 A 10.0.0.1",
            "svc1.testns.svc.cluster.local. 7 AAAA fd00::1"
        ]
    );
    let m = ask(p, "svc1.testns.svc.cluster.local.", RecordType::SRV);
    answer(
        &m,
        &[
            "svc1.testns.svc.cluster.local. 7 SRV 0 25 53 svc1.testns.svc.cluster.local.",
            "svc1.testns.svc.cluster.local. 7 SRV 0 25 80 svc1.testns.svc.cluster.local.",
        ],
    );
    // Headless: the ready endpoints, by hostname too.
    answer(
        &ask(p, "hdls.testns.svc.cluster.local.", RecordType::A),
        &[
            "hdls.testns.svc.cluster.local. 7 A 172.16.1.1",
            "hdls.testns.svc.cluster.local. 7 A 172.16.1.2",
        ],
    );
    answer(
        &ask(p, "web-1.hdls.testns.svc.cluster.local.", RecordType::A),
        &["web-1.hdls.testns.svc.cluster.local. 7 A 172.16.1.2"],
    );
    let m = ask(
        p,
        "_http._tcp.hdls.testns.svc.cluster.local.",
        RecordType::SRV,
    );
    answer(
        &m,
        &[
            "_http._tcp.hdls.testns.svc.cluster.local. 7 SRV 0 50 80 web-0.hdls.testns.svc.cluster.local.",
            "_http._tcp.hdls.testns.svc.cluster.local. 7 SRV 0 50 80 web-1.hdls.testns.svc.cluster.local.",
        ],
    );
    negative(
        &ask(
            p,
            "172-16-1-9.hdls.testns.svc.cluster.local.",
            RecordType::A,
        ),
        ResponseCode::NXDomain,
    );
    // An endpoint of a ClusterIP service, by its address.
    answer(
        &ask(
            p,
            "172-16-0-1.svc1.testns.svc.cluster.local.",
            RecordType::A,
        ),
        &["172-16-0-1.svc1.testns.svc.cluster.local. 7 A 172.16.0.1"],
    );
    // ExternalName: into the zone, and out of it (answered by the example.net block).
    answer(
        &ask(p, "inside.testns.svc.cluster.local.", RecordType::A),
        &[
            "inside.testns.svc.cluster.local. 7 CNAME svc1.testns.svc.cluster.local.",
            "svc1.testns.svc.cluster.local. 7 A 10.0.0.1",
        ],
    );
    let m = ask(p, "outside.testns.svc.cluster.local.", RecordType::A);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{m:?}");
    assert_eq!(
        lines(&m.answers),
        [
            "ext.example.net. 3600 A 192.0.2.7",
            "outside.testns.svc.cluster.local. 7 CNAME ext.example.net."
        ]
    );
    answer(
        &ask(p, "outside.testns.svc.cluster.local.", RecordType::CNAME),
        &["outside.testns.svc.cluster.local. 7 CNAME ext.example.net."],
    );
    // PTR of a cluster IP and of endpoints.
    answer(
        &ask(p, "1.0.0.10.in-addr.arpa.", RecordType::PTR),
        &["1.0.0.10.in-addr.arpa. 7 PTR svc1.testns.svc.cluster.local."],
    );
    answer(
        &ask(p, "1.1.16.172.in-addr.arpa.", RecordType::PTR),
        &["1.1.16.172.in-addr.arpa. 7 PTR web-0.hdls.testns.svc.cluster.local."],
    );
    negative(
        &ask(p, "9.9.0.10.in-addr.arpa.", RecordType::PTR),
        ResponseCode::NXDomain,
    );
    // Pods (insecure), dns-version, the SOA, negative answers.
    answer(
        &ask(p, "10-1-2-3.testns.pod.cluster.local.", RecordType::A),
        &["10-1-2-3.testns.pod.cluster.local. 7 A 10.1.2.3"],
    );
    answer(
        &ask(p, "dns-version.cluster.local.", RecordType::TXT),
        &["dns-version.cluster.local. 28800 TXT 1.1.0"],
    );
    answer(
        &ask(p, "cluster.local.", RecordType::SOA),
        &["cluster.local. 7 SOA ns.dns.cluster.local. hostmaster.cluster.local. 7200 1800 86400 7"],
    );
    negative(
        &ask(p, "nope.testns.svc.cluster.local.", RecordType::A),
        ResponseCode::NXDomain,
    );
    negative(
        &ask(p, "svc1.nons.svc.cluster.local.", RecordType::A),
        ResponseCode::NXDomain,
    );
    negative(
        &ask(p, "svc1.testns.svc.cluster.local.", RecordType::MX),
        ResponseCode::NoError,
    );
    negative(
        &ask(p, "testns.svc.cluster.local.", RecordType::A),
        ResponseCode::NoError,
    );
    // The zone part keeps the client's case.
    answer(
        &ask(p, "svc1.testns.svc.CLUSTER.local.", RecordType::A),
        &["svc1.testns.svc.CLUSTER.local. 7 A 10.0.0.1"],
    );
}

#[test]
fn services_added_changed_and_deleted_show_within_a_second_or_two() {
    let c = Cluster::start(populate);
    let api = &c.api;
    let s = start(&c, "");
    let p = s.port;
    let name = "new.testns.svc.cluster.local.";
    negative(&ask(p, name, RecordType::A), ResponseCode::NXDomain);
    let serial = |m: &Message| match &m.answers[0].data {
        RData::SOA(soa) => soa.serial,
        _ => 0,
    };
    let before = serial(&ask(p, "cluster.local.", RecordType::SOA));
    // The serial is the time of the last change, in seconds: let the next change be later.
    std::thread::sleep(Duration::from_millis(1100));
    api.apply(
        service("testns", "new")
            .cluster_ips(&["10.0.9.1"])
            .port("http", "TCP", 80)
            .build(),
    );
    let took = eventually(p, name, RecordType::A, |m| {
        lines(&m.answers) == ["new.testns.svc.cluster.local. 5 A 10.0.9.1"]
    });
    assert!(took < Duration::from_secs(2), "added after {took:?}");
    api.apply(
        service("testns", "new")
            .cluster_ips(&["10.0.9.2"])
            .port("http", "TCP", 80)
            .build(),
    );
    let took = eventually(p, name, RecordType::A, |m| {
        lines(&m.answers) == ["new.testns.svc.cluster.local. 5 A 10.0.9.2"]
    });
    assert!(took < Duration::from_secs(2), "changed after {took:?}");
    // A new endpoint of the headless service.
    api.apply(
        endpoint_slice("testns", "hdls-2", "hdls", "IPv4")
            .endpoint(endpoint(&["172.16.1.3"]).hostname("web-2"))
            .port("http", "TCP", 80)
            .build(),
    );
    eventually(
        p,
        "web-2.hdls.testns.svc.cluster.local.",
        RecordType::A,
        |m| m.answers.len() == 1,
    );
    assert!(api.delete("Service", "testns", "new"));
    let took = eventually(p, name, RecordType::A, |m| {
        m.metadata.response_code == ResponseCode::NXDomain
    });
    assert!(took < Duration::from_secs(2), "deleted after {took:?}");
    assert!(
        serial(&ask(p, "cluster.local.", RecordType::SOA)) > before,
        "the SOA serial moved"
    );
}

#[test]
fn before_the_first_sync_names_are_servfail_and_ready_says_no() {
    // An API that refuses the server's token for a while (401): the start waits
    // startup_timeout, then serves.
    let c = Cluster::start(populate);
    let api = &c.api;
    api.set_token(Some("not-the-servers"));
    let ready = free_port();
    let ready_port = ready.port;
    drop(ready);
    let s = c.serve(move |p, kc| {
        format!(
            ".:{p} {{\n ready 127.0.0.1:{ready_port}\n kubernetes cluster.local {{\n  kubeconfig {}\n  startup_timeout 1s\n }}\n}}\n",
            kc.display()
        )
    });
    assert!(
        s.wait_stdout(
            "starting server with unsynced Kubernetes API",
            Duration::from_secs(5)
        ),
        "{}",
        s.stdout()
    );
    negative(
        &ask(s.port, "nope.testns.svc.cluster.local.", RecordType::A),
        ResponseCode::ServFail,
    );
    let (code, body) = http_get(ready_port, "/ready").expect("ready answers");
    assert_eq!(code, 503, "{body}");
    assert!(body.contains("kubernetes"), "{body}");
    // The API takes the token again: after the client's backoff the lists come.
    api.set_token(Some(ringdns_testkit::kubeapi::DEFAULT_TOKEN));
    eventually(
        s.port,
        "svc1.testns.svc.cluster.local.",
        RecordType::A,
        |m| m.answers.len() == 1,
    );
    eventually(
        s.port,
        "nope.testns.svc.cluster.local.",
        RecordType::A,
        |m| m.metadata.response_code == ResponseCode::NXDomain,
    );
    let (code, _) = http_get(ready_port, "/ready").expect("ready answers");
    assert_eq!(code, 200);
}

#[test]
fn the_in_cluster_configuration_and_its_token() {
    let api = FakeApi::start();
    populate(&api);
    let dir = TempDir::new();
    let sa = dir.0.join("serviceaccount");
    std::fs::create_dir_all(&sa).unwrap();
    api.incluster_dir(&sa);
    let [(hk, hv), (pk, pv)] = api.incluster_env();
    let sa_dir = sa.display().to_string();
    let env = [
        (hk, hv.as_str()),
        (pk, pv.as_str()),
        ("RINGDNS_K8S_SERVICEACCOUNT_DIR", sa_dir.as_str()),
    ];
    let s = Server::start_with_env(
        |p| format!(".:{p} {{\n kubernetes cluster.local\n}}\n"),
        &env,
    );
    answer(
        &ask(s.port, "svc1.testns.svc.cluster.local.", RecordType::A),
        &["svc1.testns.svc.cluster.local. 5 A 10.0.0.1"],
    );
    // Every request carried the service account's token.
    let reqs = api.requests();
    assert!(!reqs.is_empty());
    assert!(
        reqs.iter()
            .all(|r| r.authorization.as_deref() == Some("Bearer fake-token")),
        "{reqs:?}"
    );
    // Without the environment, the start fails as CoreDNS's does.
    let (code, out) = common::run_expect_failure(".:53 {\n kubernetes cluster.local\n}\n");
    assert_eq!(code, 1);
    assert!(
        out.contains("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"),
        "{out}"
    );
}

#[test]
fn an_endpoint_with_a_client_certificate() {
    let api = FakeApi::with(ApiOptions {
        tls: true,
        client_auth: true,
        token: None,
    });
    populate(&api);
    let dir = TempDir::new();
    let (cert, key, ca) = api.client_cert_files(&dir.0);
    let url = api.url();
    let s = Server::start(move |p| {
        format!(
            ".:{p} {{\n kubernetes cluster.local {{\n  endpoint {url}\n  tls {} {} {}\n }}\n}}\n",
            cert.display(),
            key.display(),
            ca.display()
        )
    });
    answer(
        &ask(s.port, "svc1.testns.svc.cluster.local.", RecordType::A),
        &["svc1.testns.svc.cluster.local. 5 A 10.0.0.1"],
    );
}

/// Starts the plugin with `directive` and checks that every name of `hidden` is NXDOMAIN and
/// every name of `shown` has one A record.
#[track_caller]
fn filtered(c: &Cluster, directive: &str, hidden: &[&str], shown: &[&str]) {
    let s = start(c, directive);
    for name in hidden {
        negative(&ask(s.port, name, RecordType::A), ResponseCode::NXDomain);
    }
    for name in shown {
        let m = ask(s.port, name, RecordType::A);
        assert_eq!(m.answers.len(), 1, "{directive}: {name}: {m:?}");
    }
}

#[test]
fn namespaces_labels_and_the_other_filters() {
    let c = Cluster::start(populate);
    let api = &c.api;
    let (svc1, svc2) = (
        "svc1.testns.svc.cluster.local.",
        "svc2.other.svc.cluster.local.",
    );
    // `namespaces`: only testns.
    filtered(&c, "  namespaces testns", &[svc2], &[svc1]);
    // `namespace_labels`: namespaces of team b only.
    filtered(&c, "  namespace_labels team=b", &[svc1], &[svc2]);
    // `labels`: services (and slices) with tier=backend only, selected by the API server.
    filtered(&c, "  labels tier=backend", &[svc1], &[svc2]);
    assert!(
        api.requests()
            .iter()
            .any(|r| r.path == "/api/v1/services"
                && r.param("labelSelector") == Some("tier=backend")),
        "the selector went to the API"
    );
    // `noendpoints`: no slice watch, headless services answer nothing.
    filtered(
        &c,
        "  noendpoints",
        &["hdls.testns.svc.cluster.local."],
        &[svc1],
    );
    // `ignore empty_service`: a ClusterIP service without a ready endpoint is NXDOMAIN.
    api.apply(
        service("testns", "empty")
            .cluster_ips(&["10.0.0.8"])
            .port("http", "TCP", 80)
            .build(),
    );
    filtered(
        &c,
        "  ignore empty_service",
        &["empty.testns.svc.cluster.local."],
        &[svc1],
    );
    // `pods verified`: only an address a pod of the namespace has.
    filtered(
        &c,
        "  pods verified",
        &[
            "172-16-5-6.testns.pod.cluster.local.",
            "172-16-5-5.other.pod.cluster.local.",
        ],
        &["172-16-5-5.testns.pod.cluster.local."],
    );
    assert!(
        api.requests().iter().any(|r| r.path == "/api/v1/pods"),
        "pods are watched with pods verified"
    );
}

#[test]
fn metrics_of_the_plugin_and_its_client() {
    let c = Cluster::start(populate);
    let api = &c.api;
    let metrics = free_port();
    let mport = metrics.port;
    drop(metrics);
    let s = c.serve(move |p, kc| {
        format!(
            ".:{p} {{\n prometheus 127.0.0.1:{mport}\n kubernetes cluster.local {{\n  kubeconfig {}\n }}\n}}\n",
            kc.display()
        )
    });
    // A slice change with a trigger time is a programming duration.
    api.apply(
        endpoint_slice("testns", "svc1-x2", "svc1", "IPv4")
            .endpoint(endpoint(&["172.16.0.2"]))
            .port("http", "TCP", 8080)
            .trigger_time(Some("2026-01-01T00:00:00Z"))
            .build(),
    );
    eventually(
        s.port,
        "172-16-0-2.svc1.testns.svc.cluster.local.",
        RecordType::A,
        |m| m.answers.len() == 1,
    );
    let (code, body) = http_get(mport, "/metrics").expect("metrics answer");
    assert_eq!(code, 200);
    for want in [
        "coredns_kubernetes_dns_programming_duration_seconds_bucket{service_kind=\"cluster_ip\"",
        "coredns_kubernetes_rest_client_requests_total{code=\"200\",method=\"GET\"",
        "coredns_kubernetes_rest_client_request_duration_seconds_bucket{",
    ] {
        assert!(body.contains(want), "no {want} in\n{body}");
    }
}

/// `autopath @kubernetes` with `pods verified`: a query from a pod's address for the first
/// name of its search path is resolved along the whole path on the server and answered at
/// once, with the CNAME; a client that is no pod gets the plain answer.
#[test]
fn autopath_resolves_a_pods_search_path_in_one_query() {
    let c = Cluster::start(|api| {
        populate(api);
        // The test's client is 127.0.0.1: make it a pod of `default`.
        api.apply(pod("default", "client", "127.0.0.1").build());
        api.apply(
            service("default", "web")
                .cluster_ips(&["10.0.1.1"])
                .port("http", "TCP", 80)
                .build(),
        );
    });
    let api = &c.api;
    // The upstream knows outside.test and denies every other name, so that whatever
    // search domains the host's resolv.conf adds to the path are walked past.
    let upstream = Server::start(|p| {
        format!(
            ".:{p} {{\n template IN A outside.test {{\n  answer \"{{{{ .Name }}}} 3600 IN A 192.0.2.10\"\n }}\n template ANY ANY {{\n  rcode NXDOMAIN\n }}\n}}\n"
        )
    });
    let up = upstream.port;
    let metrics = free_port();
    let mport = metrics.port;
    drop(metrics);
    let s = c.serve(move |p, kc| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n prometheus 127.0.0.1:{mport}\n autopath @kubernetes\n kubernetes cluster.local {{\n  kubeconfig {}\n  pods verified\n }}\n forward . 127.0.0.1:{up}\n}}\n",
            kc.display()
        )
    });
    let m = ask(
        s.port,
        "outside.test.default.svc.cluster.local.",
        RecordType::A,
    );
    assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{m:?}");
    assert_eq!(
        lines(&m.answers),
        [
            "outside.test. 3600 A 192.0.2.10",
            "outside.test.default.svc.cluster.local. 3600 CNAME outside.test."
        ],
        "{m:?}"
    );
    assert_eq!(
        m.queries[0].name().to_string(),
        "outside.test.default.svc.cluster.local."
    );
    // A name of the pod's own namespace: the first candidate, no CNAME.
    answer(
        &ask(s.port, "web.default.svc.cluster.local.", RecordType::A),
        &["web.default.svc.cluster.local. 5 A 10.0.1.1"],
    );
    // A service of another namespace, asked the way a pod's resolver walks to it.
    let m = ask(
        s.port,
        "svc1.testns.default.svc.cluster.local.",
        RecordType::A,
    );
    assert_eq!(
        lines(&m.answers),
        [
            "svc1.testns.default.svc.cluster.local. 5 CNAME svc1.testns.svc.cluster.local.",
            "svc1.testns.svc.cluster.local. 5 A 10.0.0.1"
        ],
        "{m:?}"
    );
    let (_, body) = http_get(mport, "/metrics").expect("metrics answer");
    assert!(
        body.lines()
            .any(|l| l.starts_with("coredns_autopath_success_total{") && !l.ends_with(" 0")),
        "{body}"
    );
    // Once the client is no pod, there is no search path: the name as asked.
    assert!(api.delete("Pod", "default", "client"));
    eventually(
        s.port,
        "outside.test.default.svc.cluster.local.",
        RecordType::A,
        |m| m.metadata.response_code == ResponseCode::NXDomain,
    );
}

/// The log format that prints every label the plugin publishes (`-` for one not set).
const META_FORMAT: &str = "\"{name} {proto} ns={/kubernetes/namespace} svc={/kubernetes/service} ep={/kubernetes/endpoint} port={/kubernetes/port-name} proto={/kubernetes/protocol} kind={/kubernetes/kind} err={/kubernetes/parse-error} cluster={/kubernetes/cluster} cns={/kubernetes/client-namespace} cpod={/kubernetes/client-pod-name} app={/kubernetes/client-label/app} tier={/kubernetes/client-label/tier}\"";

/// A server logging [`META_FORMAT`], with *metadata* in its block when `metadata`.
fn meta_server(c: &Cluster, metadata: bool) -> Server {
    let meta = if metadata { " metadata\n" } else { "" };
    c.serve(move |p, kc| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n{meta} log . {META_FORMAT}\n kubernetes cluster.local {{\n  kubeconfig {}\n  pods verified\n }}\n}}\n",
            kc.display()
        )
    })
}

/// Asks `name` over UDP and TCP from `from` (a loopback address) and waits for the log line
/// of each, which must read `want` after the name and the protocol.
#[track_caller]
fn logged(s: &Server, from: &str, name: &str, rtype: RecordType, want: &str) {
    let from: std::net::IpAddr = from.parse().unwrap();
    let q = common::hickory::packet(0x6b6d, name, rtype);
    let wait = Duration::from_secs(3);
    assert!(
        common::udp_from(from, s.port, &q, wait).is_some(),
        "{name}: UDP reply"
    );
    assert!(
        common::tcp_from(from, s.port, &q, wait).is_some(),
        "{name}: TCP reply"
    );
    for proto in ["udp", "tcp"] {
        let line = format!("{name} {proto} {want}");
        assert!(s.wait_stdout(&line, wait), "{line} in\n{}", s.stdout());
    }
}

/// With *metadata*, the plugin publishes the parts of a name in its zone (CoreDNS's
/// parseRequest: service, SRV, pod and endpoint names, or the parse error) and, with `pods
/// verified`, the client pod's namespace, name and labels when the client's address is a
/// pod's (127.0.0.5 here, for any name); a client that is no pod gets none of those, and a
/// block without *metadata* prints `-` for all.
#[test]
fn metadata_of_the_query_name_and_of_a_client_pod() {
    let c = Cluster::start(|api| {
        populate(api);
        api.apply(
            pod("testns", "client", "127.0.0.5")
                .label("app", "web")
                .label("tier", "front")
                .build(),
        );
    });
    let s = meta_server(&c, true);
    let none = "cluster=- cns=- cpod=- app=- tier=-";
    logged(
        &s,
        "127.0.0.1",
        "svc1.testns.svc.cluster.local.",
        RecordType::A,
        &format!("ns=testns svc=svc1 ep= port= proto= kind=svc err=- {none}"),
    );
    logged(
        &s,
        "127.0.0.1",
        "_http._tcp.svc1.testns.svc.cluster.local.",
        RecordType::SRV,
        &format!("ns=testns svc=svc1 ep= port=http proto=tcp kind=svc err=- {none}"),
    );
    logged(
        &s,
        "127.0.0.1",
        "172-16-5-5.testns.pod.cluster.local.",
        RecordType::A,
        &format!("ns=testns svc=172-16-5-5 ep= port= proto= kind=pod err=- {none}"),
    );
    logged(
        &s,
        "127.0.0.1",
        "web-1.hdls.testns.svc.cluster.local.",
        RecordType::A,
        &format!("ns=testns svc=hdls ep=web-1 port= proto= kind=svc err=- {none}"),
    );
    let unparsed = "ns=- svc=- ep=- port=- proto=- kind=-";
    logged(
        &s,
        "127.0.0.1",
        "foo.bar.notapod.cluster.local.",
        RecordType::A,
        &format!("{unparsed} err=invalid query name {none}"),
    );
    // The client is the pod testns/client: its labels for a name of the zone, and for a
    // name outside it (which the plugin hands on: SERVFAIL, no next plugin).
    let pod = "cluster=- cns=testns cpod=client app=web tier=front";
    logged(
        &s,
        "127.0.0.5",
        "svc2.other.svc.cluster.local.",
        RecordType::A,
        &format!("ns=other svc=svc2 ep= port= proto= kind=svc err=- {pod}"),
    );
    logged(
        &s,
        "127.0.0.5",
        "www.example.org.",
        RecordType::A,
        &format!("{unparsed} err=- {pod}"),
    );
    // 127.0.0.6 is no pod.
    logged(
        &s,
        "127.0.0.6",
        "www.example.org.",
        RecordType::A,
        &format!("{unparsed} err=- {none}"),
    );
    // Without *metadata*: nothing collected, nothing printed.
    let s = meta_server(&c, false);
    logged(
        &s,
        "127.0.0.5",
        "svc1.testns.svc.cluster.local.",
        RecordType::A,
        &format!("{unparsed} err=- {none}"),
    );
}

/// A view chooses its block by what the plugin publishes before the choice: only a client
/// that is a pod of `testns` reaches the cluster; the others get the other block's answer.
#[test]
fn a_view_chooses_by_the_client_pods_namespace() {
    let c = Cluster::start(|api| {
        populate(api);
        api.apply(pod("testns", "client", "127.0.0.5").build());
        api.apply(pod("other", "stranger", "127.0.0.6").build());
    });
    let s = c.serve(move |p, kc| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n metadata\n view pods {{\n  expr metadata('kubernetes/client-namespace') == 'testns'\n }}\n kubernetes cluster.local {{\n  kubeconfig {}\n  pods verified\n }}\n}}\n.:{p} {{\n hosts {{\n  192.0.2.9 svc1.testns.svc.cluster.local\n }}\n}}\n",
            kc.display()
        )
    });
    let q = common::hickory::packet(0x6b6e, "svc1.testns.svc.cluster.local.", RecordType::A);
    let wait = Duration::from_secs(3);
    for (from, want) in [
        ("127.0.0.5", "svc1.testns.svc.cluster.local. 5 A 10.0.0.1"),
        (
            "127.0.0.6",
            "svc1.testns.svc.cluster.local. 3600 A 192.0.2.9",
        ),
        (
            "127.0.0.1",
            "svc1.testns.svc.cluster.local. 3600 A 192.0.2.9",
        ),
    ] {
        let ip: std::net::IpAddr = from.parse().unwrap();
        for reply in [
            common::udp_from(ip, s.port, &q, wait),
            common::tcp_from(ip, s.port, &q, wait),
        ] {
            let m = Message::from_vec(&reply.expect("a reply")).unwrap();
            assert_eq!(lines(&m.answers), [want], "{from}: {m:?}");
        }
    }
}
