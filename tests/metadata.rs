//! metadata: the real binary, in front of forward to another ringdns, logs what plugins
//! publish through `{/label}` placeholders (forward's `forward/upstream`) over UDP and TCP,
//! `-` for a label nobody set and in blocks without metadata or outside its zones; a bad
//! `metadata` line is a start error with `FILE:LINE`.

mod common;

use common::{Server, query, run_expect_failure, tcp_exchange, udp_exchange};
use std::time::Duration;

const FORMAT: &str = "\"{name} {proto} up={/forward/upstream} none={/none/set}\"";

/// An upstream answering whoami, and a server forwarding to it with `metadata` (its
/// arguments `meta`, or none at all when `None`) and log in front.
fn start(meta: Option<&str>) -> (Server, Server) {
    let up = Server::start(|p| format!(".:{p} {{\n whoami\n}}\n"));
    let upstream = up.port;
    let meta = meta.map_or(String::new(), |z| format!(" metadata {z}\n"));
    let s = Server::start(|p| {
        format!(".:{p} {{\n{meta} log . {FORMAT}\n forward . 127.0.0.1:{upstream}\n}}\n")
    });
    (up, s)
}

fn ask(s: &Server, name: &str) {
    let q = query(0x4d44, name, 1);
    assert!(udp_exchange(s.port, &q, Duration::from_secs(2)).is_some());
    assert_eq!(tcp_exchange(s.port, &[q]).len(), 1);
}

#[test]
fn log_prints_the_upstream_forward_published() {
    let (up, s) = start(Some(""));
    ask(&s, "www.example.org.");
    for proto in ["udp", "tcp"] {
        let line = format!("www.example.org. {proto} up=127.0.0.1:{} none=-", up.port);
        assert!(
            s.wait_stdout(&line, Duration::from_secs(3)),
            "{line} in\n{}",
            s.stdout()
        );
    }
}

#[test]
fn no_metadata_plugin_or_another_zone_prints_dashes() {
    for meta in [None, Some("example.net")] {
        let (_up, s) = start(meta);
        ask(&s, "www.example.org.");
        for proto in ["udp", "tcp"] {
            let line = format!("www.example.org. {proto} up=- none=-");
            assert!(
                s.wait_stdout(&line, Duration::from_secs(3)),
                "{meta:?}: {line} in\n{}",
                s.stdout()
            );
        }
    }
}

#[test]
fn a_bad_metadata_line_is_a_start_error() {
    for (text, line) in [
        (".:0 {\n metadata\n metadata\n}\n", 3),
        (".:0 {\n whoami\n metadata {\n  ttl 5\n }\n}\n", 4),
    ] {
        let (code, err) = run_expect_failure(text);
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains(&format!(
                ":{line} - Error during parsing: plugin/metadata: Wrong argument count"
            )),
            "{text}: {err}"
        );
    }
}
