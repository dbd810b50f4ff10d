//! The `ready` plugin's per-plugin readiness with the real binary: erratic is ready only
//! while it has received 3 or 4 queries (as CoreDNS's), so `/ready` must flip as queries
//! arrive; `monitor` decides whether it flips back; blocks without `ready` are not waited
//! for; reloads bring the new configuration's plugins and mode, failed ones nothing.
//!
//! erratic sits in a zone block (`example.test`) and the root block is whoami, so that no
//! query but the test's own reaches the counted erratic.

mod common;

use common::{Server, free_port, http_get, query, rcode, tcp_exchange};
use std::time::{Duration, Instant};

/// What `/ready` says while the server is starting or stopping (before plugins are asked).
const STARTING: &str = "not ready: the server is starting or stopping\n";

/// `/ready` now. Cores read queries only once the server's own start-up is over, so after
/// `Server::start` (which waits for an answer) it is never the start-up 503.
fn ready(port: u16) -> (u16, String) {
    let got = http_get(port, "/ready").expect("/ready answers");
    assert_ne!(got.1, STARTING, "an answering server is past its start-up");
    got
}

/// One query over TCP (never lost, so erratic counts exactly one), answered NOERROR.
fn ask_tcp(port: u16, id: u16, name: &str) {
    let replies = tcp_exchange(port, &[query(id, name, 1)]);
    assert_eq!(replies.len(), 1, "a reply for {name}");
    assert_eq!(rcode(&replies[0]), 0, "NOERROR for {name}");
}

fn not_ready_erratic() -> (u16, String) {
    (503, "erratic".to_string())
}

fn ok() -> (u16, String) {
    (200, "OK".to_string())
}

/// A Corefile: `ready` (with `monitor`, when given) and erratic for example.test, whoami for
/// the rest; `extra` goes into the root block.
fn corefile(p: u16, r: u16, monitor: Option<&str>, extra: &str) -> String {
    let block = monitor.map_or(String::new(), |m| format!(" {{\n  monitor {m}\n }}"));
    format!(
        "example.test:{p} {{\n ready 127.0.0.1:{r}{block}\n erratic {{\n  drop 0\n }}\n}}\n\
         .:{p} {{\n{extra} whoami\n}}\n"
    )
}

/// Drives erratic through its first five queries and checks `/ready` after each: 503 before
/// the third, 200 after the third and fourth, `after_fifth` after the fifth.
fn flip(monitor: Option<&str>, after_fifth: (u16, String)) {
    let rp = free_port();
    let r = rp.port;
    let s = Server::start(move |p| corefile(p, r, monitor, ""));
    // No query yet: not ready, and erratic is named.
    assert_eq!(ready(r), not_ready_erratic());
    for n in 1..=5u16 {
        ask_tcp(s.port, n, "q.example.test.");
        let want = match n {
            1 | 2 => not_ready_erratic(),
            3 | 4 => ok(),
            _ => after_fifth.clone(),
        };
        assert_eq!(ready(r), want, "after query {n} ({monitor:?})");
    }
    assert!(
        s.stdout()
            .contains("[INFO] plugin/ready: Plugins not ready: \"erratic\""),
        "{}",
        s.stdout()
    );
}

#[test]
fn until_ready_is_the_default_and_stays_ready() {
    flip(None, ok());
    flip(Some("until-ready"), ok());
}

#[test]
fn continuously_goes_back_to_not_ready() {
    flip(Some("continuously"), not_ready_erratic());
}

#[test]
fn a_block_without_ready_does_not_hold_ready() {
    let rp = free_port();
    let r = rp.port;
    // erratic in the root block, without `ready`; `ready` in a whoami block.
    let s = Server::start(move |p| {
        format!(
            "example.test:{p} {{\n ready 127.0.0.1:{r}\n whoami\n}}\n\
             .:{p} {{\n erratic {{\n  drop 0\n }}\n}}\n"
        )
    });
    // Past erratic's ready window (whatever the start-up probes counted): were it waited
    // for, /ready would say 503.
    for n in 1..=5u16 {
        ask_tcp(s.port, n, "q.other.");
    }
    assert_eq!(ready(r), ok());
}

/// Writes `text` as the Corefile, sends SIGUSR1 and waits for `verdict` in the log.
fn reload(s: &Server, text: &str, verdict: &str) {
    let before = s.stdout().matches(verdict).count();
    let tmp = s.dir.write("Corefile.next", text);
    std::fs::rename(tmp, s.dir.0.join("Corefile")).unwrap();
    s.signal("USR1");
    let t0 = Instant::now();
    while s.stdout().matches(verdict).count() == before {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "no '{verdict}' after the reload:\n{}",
            s.stdout()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn reloads_bring_their_plugins_and_mode_and_failed_ones_nothing() {
    let rp = free_port();
    let r = rp.port;
    let s = Server::start(move |p| corefile(p, r, None, ""));
    for n in 1..=3u16 {
        ask_tcp(s.port, n, "q.example.test.");
    }
    assert_eq!(ready(r), ok());
    // A good reload: a new erratic (no query yet) and `monitor continuously`.
    let p = s.port;
    reload(
        &s,
        &corefile(p, r, Some("continuously"), ""),
        "[INFO] Reloading complete",
    );
    assert_eq!(
        ready(r),
        not_ready_erratic(),
        "the new erratic is waited for"
    );
    for n in 1..=3u16 {
        ask_tcp(s.port, n, "q.example.test.");
    }
    assert_eq!(ready(r), ok());
    // A reload that fails after every setup ran (its health port is taken) and asks for
    // `until-ready`: nothing of it may stay.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let t = taken.local_addr().unwrap().port();
    reload(
        &s,
        &corefile(
            p,
            r,
            Some("until-ready"),
            &format!(" health 127.0.0.1:{t}\n"),
        ),
        "[ERROR] SIGUSR1: ",
    );
    assert!(
        s.stdout().contains(&format!("listen tcp 127.0.0.1:{t}")),
        "{}",
        s.stdout()
    );
    assert_eq!(ready(r), ok(), "the running erratic, still at 3 queries");
    for n in 4..=5u16 {
        ask_tcp(s.port, n, "q.example.test.");
    }
    assert_eq!(
        ready(r),
        not_ready_erratic(),
        "still `continuously`, still the running erratic"
    );
}
