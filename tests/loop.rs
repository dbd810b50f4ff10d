//! loop: the real binary probes itself at start. Two servers forwarding to each other over
//! loopback: the one with `loop` finds the loop, logs CoreDNS's `[FATAL]` line and exits with
//! status 1. A server whose upstream answers (a stub that answers SERVFAIL, another ringdns)
//! keeps serving and passes HINFO queries on. After a reload that makes a loop, the probe
//! runs again and finds it.

mod common;

use common::{Port, Server, free_port, udp_exchange};
use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const HINFO: u16 = 13;

/// CoreDNS's line, up to the query's random name.
fn fatal_line(zone: &str) -> String {
    format!(
        "detected for zone \"{zone}\", see https://coredns.io/plugins/loop#troubleshooting. Query: \"HINFO "
    )
}

/// Starts a server on `port` expecting it to exit: its exit code and output, whether it
/// exited before it served (the probe can be quicker than the start-up check) or after.
fn expect_exit(port: Port, corefile: &str, limit: Duration) -> (Option<i32>, String) {
    let t0 = Instant::now();
    match Server::try_start_on(port, corefile, &[]) {
        Err(e) => {
            let code = e
                .lines()
                .next()
                .and_then(|l| l.split("exit status: ").nth(1))
                .and_then(|c| c.split_whitespace().next())
                .and_then(|c| c.parse().ok());
            (code, e)
        }
        Ok(mut s) => {
            let left = limit.saturating_sub(t0.elapsed());
            let code = s.wait_exit(left);
            // Let the reader threads take the last bytes.
            std::thread::sleep(Duration::from_millis(100));
            (code, s.stdout())
        }
    }
}

#[test]
fn two_servers_forwarding_to_each_other_are_a_loop() {
    let a = free_port();
    let pa = a.port;
    let b = Server::start(|pb| format!(".:{pb} {{\n forward . 127.0.0.1:{pa}\n}}\n"));
    let t0 = Instant::now();
    let (code, out) = expect_exit(
        a,
        &format!(".:{pa} {{\n loop\n forward . 127.0.0.1:{}\n}}\n", b.port),
        Duration::from_secs(15),
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(
        t0.elapsed() < Duration::from_secs(12),
        "found in {:?}",
        t0.elapsed()
    );
    let line = out
        .lines()
        .find(|l| l.starts_with("[FATAL] plugin/loop: Loop (127.0.0.1:"))
        .unwrap_or_else(|| panic!("no FATAL line:\n{out}"));
    assert!(line.contains(&format!(" -> :{pa}) ")), "{line}");
    assert!(line.contains(&fatal_line(".")), "{line}");
    assert!(
        line.ends_with(".\"") && line.matches('.').count() > 4,
        "{line}"
    );
}

#[test]
fn a_loop_in_a_zone_is_reported_for_that_zone() {
    let port = free_port();
    let p = port.port;
    // The block forwards to itself: bind keeps it on 127.0.0.1, as the probe's address shows.
    let (code, out) = expect_exit(
        port,
        &format!("example.org:{p} {{\n bind 127.0.0.1\n loop\n forward . 127.0.0.1:{p}\n}}\n"),
        Duration::from_secs(15),
    );
    assert_eq!(code, Some(1), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("[FATAL] plugin/loop: Loop ("))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains(&format!(" -> 127.0.0.1:{p}) ")), "{line}");
    assert!(line.contains(&fatal_line("example.org.")), "{line}");
    assert!(line.ends_with(".example.org.\""), "{line}");
}

#[test]
fn the_probe_goes_to_the_first_keys_listener_when_another_block_opened_the_others() {
    // The first block opens the second port; the looped block's first key is on the
    // server's port, where the probe must go (sent to the other port, it would be REFUSED,
    // have its reply, and find nothing).
    let other = free_port();
    let q = other.port;
    let port = free_port();
    let p = port.port;
    let (code, out) = expect_exit(
        port,
        &format!(
            "example.net:{q} {{\n whoami\n}}\nexample.org:{p} example.com:{q} {{\n loop\n forward . 127.0.0.1:{p}\n}}\n"
        ),
        Duration::from_secs(15),
    );
    drop(other);
    assert_eq!(code, Some(1), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("[FATAL] plugin/loop: Loop ("))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains(&format!(" -> :{p}) ")), "{line}");
    assert!(line.contains(&fatal_line("example.org.")), "{line}");
}

/// A stub upstream on loopback that answers every query SERVFAIL, until dropped.
struct Stub {
    port: u16,
    stop: Arc<AtomicBool>,
    queries: Arc<std::sync::atomic::AtomicUsize>,
}

impl Stub {
    fn start() -> Stub {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let port = sock.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let queries = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (s, q) = (stop.clone(), queries.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 1500];
            while !s.load(Ordering::Relaxed) {
                let Ok((n, from)) = sock.recv_from(&mut buf) else {
                    continue;
                };
                if n < 12 {
                    continue;
                }
                q.fetch_add(1, Ordering::Relaxed);
                let mut r = buf[..n].to_vec();
                r[2] |= 0x80; // QR
                r[3] = (r[3] & 0xF0) | 2; // SERVFAIL
                let _ = sock.send_to(&r, from);
            }
        });
        Stub {
            port,
            stop,
            queries,
        }
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// HINFO queries for names in the zone, asked `n` times: each must come back with `rcode`.
fn hinfo_passes(port: u16, n: u16, rcode: u8) {
    for i in 0..n {
        let q = common::query(100 + i, &format!("{i}.probe.example."), HINFO);
        let r = (0..3)
            .find_map(|_| udp_exchange(port, &q, Duration::from_secs(3)))
            .expect("a reply to HINFO");
        assert_eq!(common::rcode(&r), rcode, "HINFO {i}");
    }
}

#[test]
fn an_upstream_that_answers_servfail_is_no_loop() {
    let stub = Stub::start();
    let mut s =
        Server::start(|p| format!(".:{p} {{\n loop\n forward . 127.0.0.1:{}\n}}\n", stub.port));
    // The probe went to the stub through the server and had its reply.
    let t0 = Instant::now();
    while stub.queries.load(Ordering::Relaxed) == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the probe never reached the upstream"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_secs(3));
    hinfo_passes(s.port, 5, 2);
    assert_eq!(
        s.wait_exit(Duration::from_millis(200)),
        None,
        "still running"
    );
    assert!(!s.stdout().contains("[FATAL]"), "{}", s.stdout());
}

#[test]
fn an_upstream_ringdns_that_answers_is_no_loop_until_a_reload_makes_one() {
    let upstream = Server::start(|p| format!(".:{p} {{\n whoami\n}}\n"));
    let mut s = Server::start(|p| {
        format!(
            ".:{p} {{\n loop\n forward . 127.0.0.1:{}\n}}\n",
            upstream.port
        )
    });
    std::thread::sleep(Duration::from_secs(3));
    hinfo_passes(s.port, 5, 0);
    assert_eq!(
        s.wait_exit(Duration::from_millis(200)),
        None,
        "still running"
    );
    // The same server forwarding to itself after a reload: the new configuration probes.
    let looped = format!(
        ".:{p} {{\n loop\n forward . 127.0.0.1:{p}\n}}\n",
        p = s.port
    );
    s.dir.replace("Corefile", &looped);
    s.signal("USR1");
    assert_eq!(
        s.wait_exit(Duration::from_secs(15)),
        Some(1),
        "{}",
        s.stdout()
    );
    std::thread::sleep(Duration::from_millis(100));
    let out = s.stdout();
    assert!(out.contains("[INFO] Reloading"), "{out}");
    assert!(out.contains(&fatal_line(".")), "{out}");
}
