//! "Every Corefile in a plugin README's Examples starts in a test" (ARCHITECTURE.md, Tests).
//!
//! Every `~~~ corefile` block of every `plugins/*/README.md`'s `## Examples` section is
//! started with the real binary, port 1053 replaced by a free port, in a directory holding
//! the files and directories of the plugin's `examples/` (zone files and directories of
//! them that the Corefiles name), and must answer a UDP query; one that serves a zone from
//! data (`file`, `auto`) must answer `example.org. SOA` with NOERROR, AA and the SOA. Every
//! plugin of plugin.cfg must have a README with the agreed sections.
//!
//! The examples are started by this file rather than by `common::Server::start`: its
//! readiness probe waits 100 ms per query, and erratic's `delay 1 300ms` example answers
//! every query after 300 ms, so that probe would never see a reply.

mod common;

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The port the README examples use.
const EXAMPLE_PORT: &str = "1053";

/// The headings every plugin README must have.
const SECTIONS: [&str; 4] = [
    "## Syntax",
    "## Examples",
    "## Metrics",
    "## Differences from CoreDNS",
];

/// How many queries a started example gets before it counts as not serving. erratic's
/// default `drop 2` drops every second query of the block; five queries always include an
/// answered one.
const ATTEMPTS: usize = 5;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The plugin READMEs under plugins/, sorted.
fn readmes() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("plugins"))
        .expect("plugins/ exists")
        .map(|e| e.unwrap().path().join("README.md"))
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// The headings (`## …` lines) of a README, ignoring lines inside fenced blocks.
fn headings(text: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_end();
        if t.starts_with("~~~") || t.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced && t.starts_with("## ") {
            out.push(t);
        }
    }
    out
}

/// The `~~~ corefile` blocks of the `## Examples` section, in order.
fn corefile_examples(text: &str) -> Vec<String> {
    let mut in_examples = false;
    let mut fence: Option<(bool, String)> = None; // (is a corefile block, its text)
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_end();
        if let Some((is_corefile, body)) = &mut fence {
            if t.trim_start() == "~~~" || t.trim_start() == "```" {
                if *is_corefile && in_examples {
                    out.push(std::mem::take(body));
                }
                fence = None;
            } else {
                body.push_str(line);
                body.push('\n');
            }
            continue;
        }
        let s = t.trim_start();
        if s.starts_with("~~~") || s.starts_with("```") {
            let info = s.trim_start_matches(['~', '`']).trim();
            fence = Some((s.starts_with("~~~") && info == "corefile", String::new()));
        } else if t.starts_with("## ") {
            in_examples = t == "## Examples";
        }
    }
    assert!(fence.is_none(), "unterminated fenced block");
    out
}

/// A README path as the failure messages show it.
fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

/// Replaces the port `1053` (as `:1053` or a whole word) with `port`.
fn with_port(corefile: &str, port: u16) -> String {
    let mut out = String::with_capacity(corefile.len());
    let mut rest = corefile;
    while let Some(i) = rest.find(EXAMPLE_PORT) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + EXAMPLE_PORT.len()..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_ascii_alphanumeric());
        out.push_str(&rest[..i]);
        if boundary(before) && boundary(after) {
            out.push_str(&port.to_string());
        } else {
            out.push_str(EXAMPLE_PORT);
        }
        rest = &rest[i + EXAMPLE_PORT.len()..];
    }
    out.push_str(rest);
    out
}

/// The address to query: a bound address from the banner (`zone:port on ADDR`), loopback
/// preferred; 127.0.0.1 when the block listens on the wildcard.
fn target(server: &common::Server) -> SocketAddr {
    let out = server.stdout();
    let suffix = format!(":{} on ", server.port);
    let bound: Vec<IpAddr> = out
        .lines()
        .filter_map(|l| l.split_once(&suffix))
        .filter_map(|(_, a)| a.trim().parse().ok())
        .collect();
    let ip = bound
        .iter()
        .find(|a| a.is_loopback())
        .or(bound.first())
        .copied()
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    SocketAddr::new(ip, server.port)
}

/// Sends `packet` to `to` and returns the reply with the same ID, if one comes within `wait`.
fn exchange(to: SocketAddr, packet: &[u8], wait: Duration) -> Option<Vec<u8>> {
    let local: SocketAddr = match to {
        SocketAddr::V4(_) => "0.0.0.0:0".parse().unwrap(),
        SocketAddr::V6(_) => "[::]:0".parse().unwrap(),
    };
    let s = UdpSocket::bind(local).ok()?;
    s.send_to(packet, to).ok()?;
    let t0 = Instant::now();
    let mut buf = vec![0u8; 65535];
    while let Some(left) = wait.checked_sub(t0.elapsed()) {
        s.set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .unwrap();
        match s.recv_from(&mut buf) {
            Ok((n, from)) if from == to && n >= 12 && buf[..2] == packet[..2] => {
                return Some(buf[..n].to_vec());
            }
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

/// The files of a plugin's `examples/` directory, its subdirectories included (zone files
/// and directories of them that its README's Corefiles name), as paths relative to it:
/// each example finds them in its working directory.
fn example_files(readme: &Path) -> Vec<(String, Vec<u8>)> {
    let Some(dir) = readme.parent().map(|p| p.join("examples")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut dirs = vec![dir.clone()];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for p in entries.map(|e| e.unwrap().path()) {
            if p.is_dir() {
                dirs.push(p);
            } else if p.is_file() {
                let name = p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
                out.push((name, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Whether an example serves a zone from data: a `file` or `auto` line. Such an example
/// serves `example.org.` from the plugin's `examples/` (every one of them does), so it must
/// answer that apex's SOA authoritatively, not merely reply.
fn serves_a_zone(corefile: &str) -> bool {
    corefile
        .lines()
        .any(|l| matches!(l.split_whitespace().next(), Some("file" | "auto")))
}

/// What is wrong with `reply` as the answer of a zone to its apex SOA query: not NOERROR,
/// no AA, or no SOA in the answer section.
fn not_the_apex_soa(reply: &[u8]) -> Option<String> {
    let m = match hickory_proto::op::Message::from_vec(reply) {
        Ok(m) => m,
        Err(e) => return Some(format!("the reply does not parse: {e}")),
    };
    let soa = m
        .answers
        .iter()
        .any(|r| r.record_type() == hickory_proto::rr::RecordType::SOA);
    let ok = m.metadata.response_code == hickory_proto::op::ResponseCode::NoError
        && m.metadata.authoritative
        && soa;
    (!ok).then(|| format!("example.org. SOA is not answered from the zone: {m:?}"))
}

/// Starts one example and checks that it answers; Err carries what went wrong and the
/// server's output.
fn check_example(
    corefile: &str,
    files: &[(String, Vec<u8>)],
    env: &[(&str, &str)],
) -> Result<(), String> {
    let port = common::free_port();
    let text = with_port(corefile, port.port);
    let dns_port = port.port.to_string();
    let server = common::Server::try_start_with_files_env(
        port,
        &text,
        &["-dns.port", &dns_port],
        files,
        env,
    )
    .map_err(|e| format!("{e}\nCorefile:\n{text}"))?;
    let to = target(&server);
    let (name, qtype) = if serves_a_zone(corefile) {
        ("example.org.", 6)
    } else {
        ("example.org.", 1)
    };
    for i in 0..ATTEMPTS {
        let q = common::query(0x5300 + i as u16, name, qtype);
        if let Some(reply) = exchange(to, &q, Duration::from_secs(2)) {
            if reply[2] & 0x80 == 0 {
                return Err(format!(
                    "the reply has no QR bit\nstdout:\n{}",
                    server.stdout()
                ));
            }
            if qtype == 6
                && let Some(e) = not_the_apex_soa(&reply)
            {
                return Err(format!(
                    "{e}\nCorefile:\n{text}\nstdout:\n{}",
                    server.stdout()
                ));
            }
            return Ok(());
        }
    }
    Err(format!(
        "no reply to {ATTEMPTS} queries for {name} {qtype} sent to {to}\nCorefile:\n{text}\nstdout:\n{}\nstderr:\n{}",
        server.stdout(),
        server.stderr()
    ))
}

#[test]
fn readme_examples_parse_as_expected() {
    let text = "# x\n\n## Syntax\n\n~~~ corefile\nnot an example\n~~~\n\n## Examples\n\n\
                ~~~ corefile\n.:1053 {\n    whoami\n}\n~~~\n\n~~~ sh\n## not a heading\n~~~\n\n\
                ~~~ corefile\nexample.org:1053 {\n}\n~~~\n\n## Metrics\n\n~~~ corefile\nno\n~~~\n";
    assert_eq!(
        corefile_examples(text),
        [".:1053 {\n    whoami\n}\n", "example.org:1053 {\n}\n"]
    );
    assert_eq!(headings(text), ["## Syntax", "## Examples", "## Metrics"]);
    assert_eq!(
        with_port(".:1053 {\n}\nexample.org:10530 {\n}\n21053:1053\n", 5),
        ".:5 {\n}\nexample.org:10530 {\n}\n21053:5\n"
    );
    assert!(serves_a_zone(
        "org {\n    auto {\n        directory zones\n    }\n}\n"
    ));
    assert!(serves_a_zone("org {\n    file db.example.org\n}\n"));
    assert!(!serves_a_zone(
        "org {\n    hosts {\n        fallthrough\n    }\n}\n"
    ));
}

#[test]
fn an_examples_directory_is_copied_with_its_subdirectories() {
    let auto = root().join("plugins/auto/README.md");
    let names: Vec<String> = example_files(&auto).into_iter().map(|(n, _)| n).collect();
    assert!(
        names.iter().any(|n| n == "zones/db.example.org"),
        "{names:?}"
    );
}

#[test]
fn every_plugin_of_plugin_cfg_has_a_complete_readme() {
    let cfg = std::fs::read_to_string(root().join("plugin.cfg")).unwrap();
    let mut problems = Vec::new();
    let mut plugins = 0;
    for line in cfg.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, module) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("plugin.cfg line without ':': {line}"));
        // A line naming another crate (a third party's plugin) is documented by that crate.
        if !root().join("plugins").join(module).is_dir() {
            continue;
        }
        plugins += 1;
        let path = root().join("plugins").join(module).join("README.md");
        let Ok(text) = std::fs::read_to_string(&path) else {
            problems.push(format!("{name}: {} is missing", rel(&path)));
            continue;
        };
        let found = headings(&text);
        for s in SECTIONS {
            if !found.contains(&s) {
                problems.push(format!("{name}: {} has no `{s}` heading", rel(&path)));
            }
        }
        if corefile_examples(&text).is_empty() {
            problems.push(format!(
                "{name}: {} has no `~~~ corefile` block under `## Examples`",
                rel(&path)
            ));
        }
    }
    assert!(plugins > 0, "plugin.cfg lists no plugin");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The cluster the examples of kubernetes and k8s_external (which needs kubernetes in its
/// block) run in: a fake API server of the tests' own, reached by the in-cluster
/// configuration (its environment and a service-account directory), with the service of
/// k8s_external's README.
struct Cluster {
    api: ringdns_testkit::kubeapi::FakeApi,
    dir: common::TempDir,
}

impl Cluster {
    fn for_readme(path: &Path) -> Option<Cluster> {
        if !path.ends_with("kubernetes/README.md") && !path.ends_with("k8s_external/README.md") {
            return None;
        }
        use ringdns_testkit::kubeapi::{FakeApi, objects};
        let api = FakeApi::start();
        api.apply(objects::namespace("default", &[]));
        api.apply(
            objects::service("default", "kubernetes")
                .cluster_ips(&["10.96.0.1"])
                .port("https", "TCP", 443)
                .build(),
        );
        api.apply(
            objects::service("default", "test")
                .headless()
                .external_ips(&["192.168.200.123"])
                .build(),
        );
        let dir = common::TempDir::new();
        api.incluster_dir(&dir.0);
        Some(Cluster { api, dir })
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        let mut env: Vec<(&'static str, String)> = self.api.incluster_env().into();
        env.push((
            "RINGDNS_K8S_SERVICEACCOUNT_DIR",
            self.dir.0.display().to_string(),
        ));
        env
    }
}

#[test]
fn every_readme_example_starts_and_answers() {
    let mut failures = Vec::new();
    let mut started = 0;
    for path in readmes() {
        let text = std::fs::read_to_string(&path).unwrap();
        let files = example_files(&path);
        let cluster = Cluster::for_readme(&path);
        let env = cluster.as_ref().map(Cluster::env).unwrap_or_default();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        for (i, example) in corefile_examples(&text).iter().enumerate() {
            started += 1;
            if let Err(e) = check_example(example, &files, &env) {
                failures.push(format!(
                    "=== {} example {} (1-based) failed: {e}",
                    rel(&path),
                    i + 1
                ));
            }
        }
    }
    assert!(started > 0, "no README example found");
    assert!(
        failures.is_empty(),
        "{} of {started} README examples failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
