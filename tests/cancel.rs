//! cancel through the real binary: a query the rest of the block answers within the
//! timeout is answered, over UDP and TCP; one it does not (erratic's delay) gets nothing,
//! where the same block without cancel answers late; bad lines are start errors.

mod common;

use common::{Server, query, run_expect_failure, udp_exchange};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A block where every query is answered after `delay` (erratic), with `cancel` lines
/// `cancel`.
fn start(cancel: &str, delay: &str) -> Server {
    Server::start(|p| {
        format!(".:{p} {{\n{cancel} erratic {{\n  drop 0\n  delay 1 {delay}\n }}\n}}\n")
    })
}

/// The reply over TCP within `wait`, `None` when the server sent none (or closed).
fn tcp_reply(port: u16, q: &[u8], wait: Duration) -> Option<Vec<u8>> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(wait)).unwrap();
    let mut framed = (q.len() as u16).to_be_bytes().to_vec();
    framed.extend_from_slice(q);
    s.write_all(&framed).unwrap();
    let mut len = [0u8; 2];
    s.read_exact(&mut len).ok()?;
    let mut m = vec![0; u16::from_be_bytes(len) as usize];
    s.read_exact(&mut m).ok()?;
    Some(m)
}

#[test]
fn a_query_past_the_timeout_gets_nothing() {
    let s = start(" cancel 300ms\n", "2s");
    let t0 = Instant::now();
    let slow = udp_exchange(
        s.port,
        &query(2, "b.example.", 1),
        Duration::from_millis(2500),
    );
    assert!(
        slow.is_none(),
        "the delayed query was given up on: {slow:?}"
    );
    assert!(t0.elapsed() >= Duration::from_millis(2400));
    assert!(
        tcp_reply(
            s.port,
            &query(4, "d.example.", 1),
            Duration::from_millis(2500)
        )
        .is_none(),
        "over TCP too"
    );
}

#[test]
fn within_the_timeout_the_delayed_answer_comes() {
    for cancel in [" cancel 2s\n", ""] {
        let s = start(cancel, "300ms");
        let t0 = Instant::now();
        let late = udp_exchange(s.port, &query(2, "b.example.", 1), Duration::from_secs(3));
        assert!(late.is_some(), "{cancel:?}: the delayed query is answered");
        assert!(
            t0.elapsed() >= Duration::from_millis(250),
            "{cancel:?}: late, as erratic said"
        );
        assert!(
            tcp_reply(s.port, &query(3, "c.example.", 1), Duration::from_secs(3)).is_some(),
            "{cancel:?}: over TCP too"
        );
    }
}

#[test]
fn bad_lines_are_start_errors_with_their_line() {
    for (line, why) in [
        ("cancel soon", "plugin/cancel: invalid duration: \"soon\""),
        (
            "cancel -1s",
            "plugin/cancel: invalid negative duration: \"-1s\"",
        ),
        ("cancel 1s 2s", "plugin/cancel: Wrong argument count"),
    ] {
        let (code, out) = run_expect_failure(&format!(".:0 {{\n {line}\n whoami\n}}\n"));
        assert_ne!(code, 0, "{line}");
        assert!(
            out.contains(&format!("Corefile:2 - Error during parsing: {why}")),
            "{line}: {out}"
        );
    }
}
