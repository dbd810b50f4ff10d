//! multisocket: the real binary's listeners open as many SO_REUSEPORT socket pairs as
//! `multisocket N` says (one per core without it, or without N), counted in the kernel's
//! own tables (/proc/net/udp and /proc/net/tcp, joined with the process's descriptors);
//! queries from many source ports are answered over all of them, and a reload to another
//! count swaps the sockets without stopping the answers.

mod common;

use common::{Server, query, rcode, tcp_exchange, udp_exchange};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// The socket inodes the process holds.
fn inodes(pid: u32) -> HashSet<u64> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("the server's descriptors")
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().into_owned();
            l.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
        })
        .collect()
}

/// How many sockets of the process in `/proc/net/TABLE` are bound to 127.0.0.1:`port`
/// (TCP: listening).
fn bound(pid: u32, table: &str, port: u16) -> usize {
    let mine = inodes(pid);
    let local = format!("0100007F:{port:04X}");
    std::fs::read_to_string(format!("/proc/net/{table}"))
        .expect("the kernel's socket table")
        .lines()
        .skip(1)
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 9
                && f[1] == local
                && (table != "tcp" || f[3] == "0A")
                && f[9].parse().is_ok_and(|i: u64| mine.contains(&i))
        })
        .count()
}

fn start(sockets: &str) -> Server {
    let sockets = sockets.to_string();
    Server::start(move |p| format!(".:{p} {{\n    bind 127.0.0.1\n    {sockets}\n    whoami\n}}\n"))
}

/// Every one of `n` queries, each from a socket of its own (a port of its own, so the
/// kernel spreads them over the group), gets NOERROR.
fn answers_from_many_ports(port: u16, n: u16) {
    for i in 0..n {
        let r = udp_exchange(port, &query(i, "example.org.", 1), Duration::from_secs(2))
            .unwrap_or_else(|| panic!("query {i} unanswered"));
        assert_eq!(rcode(&r), 0);
    }
    let r = tcp_exchange(port, &[query(9, "example.org.", 1)]);
    assert_eq!(rcode(&r[0]), 0);
}

#[test]
fn a_listener_opens_as_many_socket_pairs_as_asked() {
    let default = start("");
    let per_core = bound(default.pid(), "udp", default.port);
    assert!(per_core >= 1);
    assert_eq!(bound(default.pid(), "tcp", default.port), per_core);

    let bare = start("multisocket");
    assert_eq!(
        bound(bare.pid(), "udp", bare.port),
        per_core,
        "no number: one per core"
    );

    for n in [1, 3, 5] {
        let s = start(&format!("multisocket {n}"));
        assert_eq!(bound(s.pid(), "udp", s.port), n, "multisocket {n}: UDP");
        assert_eq!(bound(s.pid(), "tcp", s.port), n, "multisocket {n}: TCP");
        answers_from_many_ports(s.port, 40);
    }
}

#[test]
fn a_reload_to_another_count_swaps_the_sockets() {
    let s = start("multisocket 4");
    assert_eq!(bound(s.pid(), "udp", s.port), 4);
    let p = s.port;
    let next = format!(".:{p} {{\n    bind 127.0.0.1\n    multisocket 1\n    whoami\n}}\n");
    assert!(s.reload(&next), "{}", s.stdout());
    let t0 = Instant::now();
    while bound(s.pid(), "udp", p) != 1 && t0.elapsed() < Duration::from_secs(10) {
        // Old loops close their sockets once they take the new configuration.
        let _ = udp_exchange(p, &query(1, "example.org.", 1), Duration::from_millis(200));
    }
    assert_eq!(bound(s.pid(), "udp", p), 1);
    assert_eq!(bound(s.pid(), "tcp", p), 1);
    answers_from_many_ports(p, 20);
}
