//! deploy/kubernetes and the Dockerfile: the manifests parse and agree with each other and
//! with the Corefile they carry, the ClusterRole grants exactly what the kubernetes plugin
//! uses, the Dockerfile builds the binary into a non-root image, and the runtime's io_uring
//! preflight turns a refusal into exit 1 with its message.

mod common;

use common::{TempDir, free_port};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use yaml_rust2::{Yaml, YamlLoader};

/// What the ClusterRole grants, (apiGroup, resource, verbs): what the kubernetes plugin
/// lists and watches, and nothing more. the kubeadm test below compares the requests
/// the plugin makes to the test API server with this set.
const CLUSTER_ROLE: &[(&str, &str, &[&str])] = &[
    ("", "services", &["list", "watch"]),
    ("", "pods", &["list", "watch"]),
    ("", "namespaces", &["list", "watch"]),
    ("discovery.k8s.io", "endpointslices", &["list", "watch"]),
];

fn repo(path: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn docs(path: &str) -> Vec<Yaml> {
    YamlLoader::load_from_str(&repo(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The document of `kind` named `name`.
fn find<'a>(docs: &'a [Yaml], kind: &str, name: &str) -> &'a Yaml {
    docs.iter()
        .find(|d| d["kind"].as_str() == Some(kind) && d["metadata"]["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

fn s(y: &Yaml) -> &str {
    y.as_str().unwrap_or_else(|| panic!("not a string: {y:?}"))
}

fn list(y: &Yaml) -> &[Yaml] {
    y.as_vec().map(Vec::as_slice).unwrap_or(&[])
}

fn strings(y: &Yaml) -> Vec<&str> {
    list(y).iter().map(s).collect()
}

/// The key=value pairs of a label map.
fn labels(y: &Yaml) -> BTreeSet<(String, String)> {
    y.as_hash()
        .map(|h| {
            h.iter()
                .map(|(k, v)| (s(k).to_string(), s(v).to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// A probe's port, named or numbered, as a number through the container's ports.
fn probe_port(container: &Yaml, probe: &str) -> i64 {
    let port = &container[probe]["httpGet"]["port"];
    match port.as_i64() {
        Some(n) => n,
        None => list(&container["ports"])
            .iter()
            .find(|p| p["name"].as_str() == Some(s(port)))
            .and_then(|p| p["containerPort"].as_i64())
            .unwrap_or_else(|| panic!("no port named {port:?}")),
    }
}

/// The port of a `health` or `ready` line of a Corefile: its address's, else the default.
fn http_port(corefile: &str, directive: &str, default: i64) -> i64 {
    let line = corefile
        .lines()
        .map(str::trim)
        .find(|l| l.split_whitespace().next() == Some(directive))
        .unwrap_or_else(|| panic!("no {directive} in the Corefile"));
    match line.split_whitespace().nth(1).filter(|a| *a != "{") {
        Some(addr) => addr.rsplit(':').next().unwrap().parse().unwrap(),
        None => default,
    }
}

#[test]
fn ringdns_yaml_has_each_object_in_kube_system() {
    let d = docs("deploy/kubernetes/ringdns.yaml");
    let kinds: Vec<(&str, &str)> = d
        .iter()
        .map(|d| (s(&d["kind"]), s(&d["metadata"]["name"])))
        .collect();
    assert_eq!(
        kinds,
        [
            ("ServiceAccount", "ringdns"),
            ("ClusterRole", "system:ringdns"),
            ("ClusterRoleBinding", "system:ringdns"),
            ("ConfigMap", "ringdns"),
            ("Deployment", "ringdns"),
            ("Service", "kube-dns"),
        ]
    );
    for doc in &d {
        let namespaced = !s(&doc["kind"]).starts_with("Cluster");
        assert_eq!(
            doc["metadata"]["namespace"].as_str(),
            namespaced.then_some("kube-system"),
            "{:?}",
            doc["kind"]
        );
    }
    let binding = find(&d, "ClusterRoleBinding", "system:ringdns");
    assert_eq!(s(&binding["roleRef"]["name"]), "system:ringdns");
    let subject = &list(&binding["subjects"])[0];
    assert_eq!(
        (s(&subject["kind"]), s(&subject["name"])),
        ("ServiceAccount", "ringdns")
    );
    let pod = &find(&d, "Deployment", "ringdns")["spec"]["template"]["spec"];
    assert_eq!(s(&pod["serviceAccountName"]), "ringdns");
    assert_eq!(s(&pod["dnsPolicy"]), "Default");
    assert_eq!(s(&pod["priorityClassName"]), "system-cluster-critical");
}

#[test]
fn the_cluster_role_grants_exactly_what_the_plugin_lists_and_watches() {
    let d = docs("deploy/kubernetes/ringdns.yaml");
    let mut granted = BTreeSet::new();
    for rule in list(&find(&d, "ClusterRole", "system:ringdns")["rules"]) {
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                let mut verbs = strings(&rule["verbs"]);
                verbs.sort();
                assert!(
                    granted.insert((group, resource, verbs)),
                    "{group}/{resource} twice"
                );
            }
        }
    }
    let want: BTreeSet<_> = CLUSTER_ROLE
        .iter()
        .map(|(g, r, v)| {
            let mut v = v.to_vec();
            v.sort();
            (*g, *r, v)
        })
        .collect();
    assert_eq!(granted, want);
}

#[test]
fn the_config_map_holds_kubeadms_corefile_and_the_probes_agree_with_it() {
    let d = docs("deploy/kubernetes/ringdns.yaml");
    let corefile = s(&find(&d, "ConfigMap", "ringdns")["data"]["Corefile"]);
    assert_eq!(corefile, repo("tests/data/kubeadm.Corefile"));
    let deploy = find(&d, "Deployment", "ringdns");
    let pod = &deploy["spec"]["template"]["spec"];
    let c = &list(&pod["containers"])[0];
    assert_eq!(strings(&c["args"]), ["-conf", "/etc/ringdns/Corefile"]);
    let mount = &list(&c["volumeMounts"])[0];
    assert_eq!(s(&mount["mountPath"]), "/etc/ringdns");
    let volume = &list(&pod["volumes"])[0];
    assert_eq!(s(&volume["name"]), s(&mount["name"]));
    assert_eq!(s(&volume["configMap"]["name"]), "ringdns");
    assert_eq!(
        s(&list(&volume["configMap"]["items"])[0]["path"]),
        "Corefile"
    );
    // health and ready as the Corefile has them (defaults :8080 and :8181).
    assert_eq!(s(&c["livenessProbe"]["httpGet"]["path"]), "/health");
    assert_eq!(
        probe_port(c, "livenessProbe"),
        http_port(corefile, "health", 8080)
    );
    assert_eq!(s(&c["readinessProbe"]["httpGet"]["path"]), "/ready");
    assert_eq!(
        probe_port(c, "readinessProbe"),
        http_port(corefile, "ready", 8181)
    );
    assert_eq!(c["livenessProbe"]["initialDelaySeconds"].as_i64(), Some(60));
    assert_eq!(c["livenessProbe"]["failureThreshold"].as_i64(), Some(5));
    let ports: BTreeSet<(i64, &str)> = list(&c["ports"])
        .iter()
        .map(|p| (p["containerPort"].as_i64().unwrap(), s(&p["protocol"])))
        .collect();
    for want in [(53, "UDP"), (53, "TCP"), (9153, "TCP")] {
        assert!(ports.contains(&want), "{want:?}");
    }
    assert!(corefile.contains("prometheus :9153"));
    // The image is the version this tree builds.
    assert_eq!(
        s(&c["image"]),
        format!("ringdns:{}", env!("CARGO_PKG_VERSION"))
    );
    // What glommio and port 53 need, and nothing more.
    let sc = &c["securityContext"];
    assert_eq!(strings(&sc["capabilities"]["drop"]), ["ALL"]);
    assert_eq!(strings(&sc["capabilities"]["add"]), ["NET_BIND_SERVICE"]);
    assert_eq!(sc["allowPrivilegeEscalation"].as_bool(), Some(false));
    assert_eq!(sc["readOnlyRootFilesystem"].as_bool(), Some(true));
    assert_eq!(s(&sc["seccompProfile"]["type"]), "Unconfined");
    assert!(
        c["resources"]["limits"]["cpu"].as_str().is_some(),
        "a CPU limit"
    );
}

#[test]
fn the_service_selects_the_pods_on_the_ports_they_serve() {
    let d = docs("deploy/kubernetes/ringdns.yaml");
    let deploy = find(&d, "Deployment", "ringdns");
    let pod_labels = labels(&deploy["spec"]["template"]["metadata"]["labels"]);
    let selector = labels(&deploy["spec"]["selector"]["matchLabels"]);
    assert!(selector.is_subset(&pod_labels));
    let svc = find(&d, "Service", "kube-dns");
    let svc_selector = labels(&svc["spec"]["selector"]);
    assert_eq!(
        svc_selector,
        BTreeSet::from([("k8s-app".into(), "kube-dns".into())])
    );
    assert!(svc_selector.is_subset(&pod_labels));
    // The Deployment's own selector is narrower than the Service's: CoreDNS's pods, also
    // k8s-app=kube-dns, are not its.
    assert!(selector.len() > svc_selector.len());
    let c = &list(&deploy["spec"]["template"]["spec"]["containers"])[0];
    let served: BTreeSet<(i64, &str)> = list(&c["ports"])
        .iter()
        .map(|p| (p["containerPort"].as_i64().unwrap(), s(&p["protocol"])))
        .collect();
    for p in list(&svc["spec"]["ports"]) {
        let target = p["targetPort"].as_i64().unwrap();
        assert!(served.contains(&(target, s(&p["protocol"]))), "{p:?}");
    }
    assert_eq!(s(&svc["spec"]["clusterIP"]), "10.96.0.10");
}

#[test]
fn nodelocal_yaml_uses_only_its_documented_placeholders() {
    let text = repo("deploy/kubernetes/nodelocal.yaml");
    let d = docs("deploy/kubernetes/nodelocal.yaml");
    let kinds: Vec<&str> = d.iter().map(|d| s(&d["kind"])).collect();
    assert_eq!(
        kinds,
        ["ServiceAccount", "ConfigMap", "DaemonSet", "Service"]
    );
    let mut used = BTreeSet::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("__PILLAR__") {
        let tail = &rest[i + "__PILLAR__".len()..];
        let end = tail
            .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
            .unwrap_or(tail.len());
        used.insert(format!("__PILLAR__{}", &tail[..end]));
        rest = &tail[end..];
    }
    let documented = [
        "__PILLAR__CLUSTER__DNS__",
        "__PILLAR__DNS__DOMAIN__",
        "__PILLAR__LOCAL__DNS__",
    ];
    assert_eq!(used, documented.iter().map(|p| p.to_string()).collect());
    let readme = repo("deploy/kubernetes/README.md");
    for p in documented {
        assert!(readme.contains(p), "README names {p}");
    }
    let ds = find(&d, "DaemonSet", "ringdns-node-local");
    let pod = &ds["spec"]["template"]["spec"];
    assert_eq!(pod["hostNetwork"].as_bool(), Some(true));
    let pod_labels = labels(&ds["spec"]["template"]["metadata"]["labels"]);
    assert!(labels(&ds["spec"]["selector"]["matchLabels"]).is_subset(&pod_labels));
    let metrics = find(&d, "Service", "ringdns-node-local");
    assert!(labels(&metrics["spec"]["selector"]).is_subset(&pod_labels));
    let init = &list(&pod["initContainers"])[0];
    assert_eq!(
        strings(&init["securityContext"]["capabilities"]["add"]),
        ["NET_ADMIN"]
    );
    let script = s(&list(&init["command"])[2]);
    assert!(
        script.contains("ip link add nodelocaldns type dummy"),
        "{script}"
    );
    assert!(script.contains("__PILLAR__LOCAL__DNS__/32 dev nodelocaldns"));
    // The init image is the Dockerfile's node-local-init stage.
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        s(&init["image"]),
        format!("ringdns-node-local-init:{version}")
    );
    assert!(repo("Dockerfile").contains("AS node-local-init"));
    let c = &list(&pod["containers"])[0];
    assert_eq!(s(&c["image"]), format!("ringdns:{version}"));
    let corefile = s(&find(&d, "ConfigMap", "ringdns-node-local")["data"]["Corefile"]);
    assert_eq!(c["livenessProbe"]["httpGet"]["port"].as_i64(), Some(8080));
    assert!(corefile.contains("health __PILLAR__LOCAL__DNS__:8080"));
    assert_eq!(
        s(&c["livenessProbe"]["httpGet"]["host"]),
        "__PILLAR__LOCAL__DNS__"
    );
    assert_eq!(corefile.matches("bind __PILLAR__LOCAL__DNS__\n").count(), 4);
    assert_eq!(corefile.matches("force_tcp").count(), 3);
}

#[test]
fn the_dockerfile_builds_the_binary_into_a_non_root_image() {
    let text = repo("Dockerfile");
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let froms: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("FROM "))
        .copied()
        .collect();
    assert_eq!(
        froms,
        [
            "FROM rust:1-bookworm AS build",
            "FROM debian:bookworm-slim AS node-local-init",
            "FROM debian:bookworm-slim",
        ]
    );
    assert!(text.contains("cargo build --release --locked --bin ringdns"));
    assert!(text.contains("setcap cap_net_bind_service=+ep /ringdns"));
    // The last stage is the image: the binary, a numeric non-root user, the ports.
    let last = &text[text.rfind("\nFROM ").unwrap()..];
    assert!(last.contains("COPY --from=build /ringdns /usr/local/bin/ringdns"));
    let user = last
        .lines()
        .find_map(|l| l.strip_prefix("USER "))
        .expect("USER in the image");
    let uid: u32 = user.split(':').next().unwrap().parse().expect("numeric");
    assert_ne!(uid, 0);
    let expose: Vec<&str> = last
        .lines()
        .find_map(|l| l.strip_prefix("EXPOSE "))
        .expect("EXPOSE")
        .split_whitespace()
        .collect();
    for p in ["53", "53/udp", "9153"] {
        assert!(expose.contains(&p), "EXPOSE {p}");
    }
    assert!(last.contains("ENTRYPOINT [\"/usr/local/bin/ringdns\"]"));
    let ignore = repo(".dockerignore");
    assert!(ignore.lines().any(|l| l == "target"));
}

/// kubeadm's Corefile with only what a test must change: the DNS port and the
/// resolv.conf it forwards to (a test never forwards to the machine's).
fn kubeadm_for_test(port: u16, upstream: u16) -> String {
    repo("tests/data/kubeadm.Corefile")
        .replacen(".:53 {", &format!(".:{port} {{"), 1)
        .replacen(
            "forward . /etc/resolv.conf {",
            &format!("forward . 127.0.0.1:{upstream} {{"),
            1,
        )
}

#[test]
fn the_kubeadm_corefile_for_tests_differs_in_its_port_and_upstream_only() {
    let orig = repo("tests/data/kubeadm.Corefile");
    let changed = kubeadm_for_test(1053, 2053);
    let diff: Vec<(&str, &str)> = orig
        .lines()
        .zip(changed.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(orig.lines().count(), changed.lines().count());
    assert_eq!(
        diff,
        [
            (".:53 {", ".:1053 {"),
            (
                "    forward . /etc/resolv.conf {",
                "    forward . 127.0.0.1:2053 {"
            ),
        ]
    );
}

/// kubeadm's Corefile, changed only in its port and upstream, against the test API server
/// through the in-cluster configuration (its environment, token and CA): ready after the
/// sync, the cluster's answers, a PTR outside the cluster through to the stub, loop quiet
/// after its probe, and every request the plugin made allowed by the manifest's ClusterRole
/// (and every rule of the role used). health :8080, ready :8181 and prometheus :9153 keep
/// kubeadm's fixed ports, claimed for the test's run.
#[test]
fn kubeadms_corefile_starts_with_only_its_port_and_upstream_changed() {
    use ringdns_testkit::kubeapi::FakeApi;
    use ringdns_testkit::kubeapi::objects::{endpoint, endpoint_slice, namespace, service};
    let stub = common::authority::Authority::start(common::authority::Zone {
        records: vec![common::authority::ARecord {
            name: "up.test.".into(),
            ttl: 60,
            addr: [192, 0, 2, 1],
        }],
        soa_ttl: 60,
        soa_minimum: 60,
        ..Default::default()
    });
    let api = FakeApi::start();
    for ns in ["default", "kube-system"] {
        api.apply(namespace(ns, &[]));
    }
    api.apply(
        service("kube-system", "kube-dns")
            .cluster_ips(&["10.96.0.10"])
            .port("dns", "UDP", 53)
            .port("dns-tcp", "TCP", 53)
            .build(),
    );
    api.apply(
        endpoint_slice("kube-system", "kube-dns-x1", "kube-dns", "IPv4")
            .endpoint(endpoint(&["10.244.0.5"]).target_pod("ringdns-abc"))
            .port("dns", "UDP", 53)
            .build(),
    );
    let dir = TempDir::new();
    api.incluster_dir(&dir.0);
    let [(hk, hv), (pk, pv)] = api.incluster_env();
    let sa = dir.0.display().to_string();
    let env = [
        (hk, hv.as_str()),
        (pk, pv.as_str()),
        ("RINGDNS_K8S_SERVICEACCOUNT_DIR", sa.as_str()),
    ];
    let _fixed = [8080, 8181, 9153].map(common::claim_port);
    let server = common::Server::start_with_env(|port| kubeadm_for_test(port, stub.port), &env);
    let port = server.addr().port();
    assert_eq!(
        common::http_get(8181, "/ready").map(|r| r.0),
        Some(200),
        "ready"
    );
    assert_eq!(
        common::http_get(8080, "/health").map(|r| r.0),
        Some(200),
        "health"
    );
    // The cluster's names (ttl 30, pods insecure), a cluster IP's PTR.
    let a = common::ask(
        port,
        &common::query(1, "kube-dns.kube-system.svc.cluster.local.", 1),
    );
    assert_eq!(a.answers.len(), 1, "{a:?}");
    assert_eq!(a.answers[0].ttl, 30);
    let srv = common::ask(
        port,
        &common::query(2, "_dns._udp.kube-dns.kube-system.svc.cluster.local.", 33),
    );
    assert_eq!(srv.answers.len(), 1, "{srv:?}");
    let pod = common::ask(
        port,
        &common::query(3, "10-244-0-9.default.pod.cluster.local.", 1),
    );
    assert_eq!(pod.answers.len(), 1, "{pod:?}");
    let ptr = common::ask(port, &common::query(4, "10.0.96.10.in-addr.arpa.", 12));
    assert_eq!(ptr.answers.len(), 1, "{ptr:?}");
    // An address outside the cluster falls through to forward: the stub's answer, not the
    // plugin's NXDOMAIN for in-addr.arpa.
    let before = stub.count("1.2.0.192.in-addr.arpa.");
    let out = common::ask(port, &common::query(5, "1.2.0.192.in-addr.arpa.", 12));
    assert_eq!(stub.count("1.2.0.192.in-addr.arpa."), before + 1, "{out:?}");
    // An outside name goes through forward to the loopback stub.
    let reply = common::ask(port, &common::query(6, "up.test.", 1));
    assert_eq!(reply.answers.len(), 1, "{}", server.stderr());
    // loop's probe came back once and the server went on.
    std::thread::sleep(Duration::from_millis(500));
    assert!(!server.stdout().contains("Loop ("), "{}", server.stdout());
    assert_eq!(
        common::ask(port, &common::query(7, "up.test.", 1))
            .answers
            .len(),
        1
    );
    // Every request is a list or a watch of a resource the role grants, and each rule
    // was used.
    let resource = |path: &str| -> Option<(&'static str, &'static str)> {
        Some(match path {
            "/api/v1/services" => ("", "services"),
            "/api/v1/pods" => ("", "pods"),
            "/api/v1/namespaces" => ("", "namespaces"),
            "/apis/discovery.k8s.io/v1/endpointslices" => ("discovery.k8s.io", "endpointslices"),
            _ => return None,
        })
    };
    let mut used = BTreeSet::new();
    for r in api.requests() {
        let (group, res) = resource(&r.path).unwrap_or_else(|| panic!("unexpected request {r:?}"));
        let verb = if r.is_watch() { "watch" } else { "list" };
        let rule = CLUSTER_ROLE
            .iter()
            .find(|(g, n, _)| *g == group && *n == res)
            .unwrap_or_else(|| panic!("{res} is not in the ClusterRole"));
        assert!(rule.2.contains(&verb), "{verb} {res} is not granted");
        used.insert((group, res, verb));
    }
    // pods are watched only with `pods verified` (or autopath): kubeadm's Corefile has
    // `pods insecure`, so every rule but the pods' is used here; tests/kubernetes.rs
    // shows the pods watch.
    for (g, r, verbs) in CLUSTER_ROLE.iter().filter(|(_, r, _)| *r != "pods") {
        for v in *verbs {
            assert!(used.contains(&(*g, *r, *v)), "{v} {r} never used: {used:?}");
        }
    }
}

#[test]
fn a_refused_io_uring_stops_the_start_with_the_reason() {
    // strace injects the error a seccomp profile or the sysctl would give.
    let Some(strace) = common::peers::tool("strace", "strace", "deploy") else {
        return;
    };
    let dir = TempDir::new();
    let port = free_port();
    let conf = dir.write("Corefile", &format!(".:{} {{\n whoami\n}}\n", port.port));
    for (errno, want) in [
        ("EPERM", "io_uring_setup was refused with EPERM"),
        ("ENOSYS", "failed with ENOSYS"),
    ] {
        // The trace records every bind(2), to show the start stopped before any socket.
        let trace = dir.0.join(format!("trace-{errno}"));
        let mut child = Command::new(&strace)
            .args(["-f", "-e", "trace=bind,io_uring_setup", "-o"])
            .arg(&trace)
            .arg("-e")
            .arg(format!("inject=io_uring_setup:error={errno}"))
            .arg(common::binary())
            .arg("-conf")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = std::time::Instant::now();
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if t0.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("still running 20 s after io_uring was refused ({errno})");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(status.code(), Some(1), "{errno}: {stderr}");
        assert!(stderr.contains(want), "{errno}: {stderr}");
        assert!(stderr.contains("glommio"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{errno}: {stderr}");
        // It stopped before binding its port: strace saw io_uring refused and no bind.
        let trace = std::fs::read_to_string(&trace).unwrap();
        assert!(trace.contains(&format!("= -1 {errno}")), "{trace}");
        assert!(!trace.contains("bind("), "{trace}");
    }
}

/// The node-local Corefile with its placeholders filled for loopback: the cache on
/// 127.0.0.1:`port`, the cluster's names and the rest to the stub, health and metrics on
/// ports of their own.
fn nodelocal_for_test(port: u16, stub: u16, health: u16, metrics: u16) -> String {
    let d = docs("deploy/kubernetes/nodelocal.yaml");
    s(&find(&d, "ConfigMap", "ringdns-node-local")["data"]["Corefile"])
        .replace(
            "__PILLAR__LOCAL__DNS__:8080",
            &format!("127.0.0.1:{health}"),
        )
        .replace("__PILLAR__LOCAL__DNS__", "127.0.0.1")
        .replace("__PILLAR__DNS__DOMAIN__", "cluster.local")
        .replace("__PILLAR__CLUSTER__DNS__", &format!("127.0.0.1:{stub}"))
        .replace(
            "forward . /etc/resolv.conf",
            &format!("forward . 127.0.0.1:{stub}"),
        )
        .replace(":53 {", &format!(":{port} {{"))
        .replace(
            "prometheus :9253",
            &format!("prometheus 127.0.0.1:{metrics}"),
        )
}

#[test]
fn the_node_local_corefile_serves_through_its_upstreams() {
    use common::authority::{ARecord, Authority, Zone};
    let stub = Authority::start(Zone {
        records: vec![ARecord {
            name: "up.test.".into(),
            ttl: 60,
            addr: [192, 0, 2, 1],
        }],
        soa_ttl: 60,
        soa_minimum: 60,
        ..Default::default()
    });
    let (health, metrics) = (free_port(), free_port());
    let server = common::Server::start(|port| {
        nodelocal_for_test(port, stub.port, health.port, metrics.port)
    });
    let port = server.addr().port();
    // The `.` block forwards over UDP; a name under cluster.local goes over TCP (force_tcp).
    let reply = common::ask(port, &common::query(1, "up.test.", 1));
    assert_eq!(reply.answers.len(), 1, "{}", server.stderr());
    assert_eq!(stub.count_tcp("up.test."), 0, "{}", server.stderr());
    common::ask(port, &common::query(2, "svc.cluster.local.", 1));
    assert!(stub.count("svc.cluster.local.") >= 1, "{}", server.stderr());
    assert_eq!(
        stub.count_tcp("svc.cluster.local."),
        stub.count("svc.cluster.local."),
        "{}",
        server.stderr()
    );
    assert_eq!(
        common::http_get(health.port, "/health").map(|r| r.0),
        Some(200)
    );
    let text = common::metrics::scrape(metrics.port);
    assert!(text.contains("coredns_dns_requests_total"), "{text}");
}

/// The image's claim (Dockerfile, deploy/kubernetes/README.md): the binary carries
/// NET_BIND_SERVICE as a file capability, so a non-root user whose bounding set holds only
/// that capability binds port 53; without the file capability the same start is refused.
/// Run as root (CI is) on a loopback address of its own; skipped elsewhere.
#[test]
fn the_file_capability_lets_a_non_root_user_bind_port_53() {
    let uid = Command::new("id").arg("-u").output().unwrap();
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        eprintln!("not root: skipping the file capability test");
        return;
    }
    let (Some(setcap), Some(setpriv)) = (
        common::peers::tool("setcap", "libcap2-bin", "deploy"),
        common::peers::tool("setpriv", "util-linux", "deploy"),
    ) else {
        return;
    };
    let dir = TempDir::new();
    let bin = dir.0.join("ringdns");
    std::fs::copy(common::binary(), &bin).unwrap();
    // 127.83.0.53: no other test or service listens there.
    let conf = dir.write("Corefile", ".:53 {\n bind 127.83.0.53\n whoami\n}\n");
    let start = || {
        Command::new(&setpriv)
            .args(["--reuid=65532", "--regid=65532", "--clear-groups"])
            .args([
                "--inh-caps=-all",
                "--bounding-set=-all,+net_bind_service",
                "--",
            ])
            .arg(&bin)
            .arg("-conf")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Without the file capability: refused.
    let out = start().wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.to_lowercase().contains("permission denied"),
        "{stderr}"
    );
    // With it, as the Dockerfile sets it: serving.
    let set = Command::new(&setcap)
        .args(["cap_net_bind_service=+ep"])
        .arg(&bin)
        .status()
        .unwrap();
    assert!(set.success());
    let mut child = start();
    let server: std::net::SocketAddr = "127.83.0.53:53".parse().unwrap();
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut answered = false;
    for _ in 0..50 {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        sock.send_to(&common::query(7, "whoami.test.", 1), server)
            .unwrap();
        let mut buf = [0u8; 512];
        if sock.recv_from(&mut buf).is_ok() {
            answered = true;
            break;
        }
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    assert!(answered, "{}", String::from_utf8_lossy(&out.stderr));
}
