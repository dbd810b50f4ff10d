//! header: the real binary sets and clears header flags over UDP and TCP on loopback as
//! CoreDNS's header does: `response` rules in the replies the client gets, `query` rules in
//! the queries the rest of the chain sees (an upstream of the test's own, behind forward,
//! records them), the older form without a selector for replies, and CoreDNS's setup errors
//! at start with `FILE:LINE`.

mod common;

use common::authority::{ARecord, Authority, Zone};
use common::{Server, query_full, run_expect_failure, udp_and_tcp};
use std::time::Duration;

const QR: u8 = 0x80;
const AA: u8 = 0x04;
const RD: u8 = 0x01;
const RA: u8 = 0x80;
const AD: u8 = 0x20;
const CD: u8 = 0x10;

/// The reply's flag bytes (header bytes 2 and 3), the same over UDP and TCP.
fn flags(port: u16, packet: &[u8]) -> [u8; 2] {
    let (udp, tcp) = udp_and_tcp(port, packet);
    assert_eq!(udp[2..4], tcp[2..4], "UDP and TCP");
    assert_eq!(udp[..2], packet[..2], "the client's ID");
    [udp[2], udp[3]]
}

/// `www.example.org. A` with the flag bytes `f2` (QR clear) and `f3` (the Z, AD, CD bits).
fn asking(f2: u8, f3: u8) -> Vec<u8> {
    let mut q = query_full(0x4848, "www.example.org.", 1, 1, None);
    q[2] = f2;
    q[3] = f3;
    q
}

#[test]
fn response_rules_set_and_clear_the_replys_flags() {
    let s = Server::start(|p| {
        format!(
            ".:{p} {{\n header {{\n  response set ra aa\n  response clear rd\n  response set ad\n }}\n whoami\n}}\n"
        )
    });
    let [f2, f3] = flags(s.port, &asking(RD, 0));
    assert_eq!((f2 & (QR | AA | RD), f3 & (RA | AD)), (QR | AA, RA | AD));
}

#[test]
fn the_older_form_without_a_selector_is_for_replies() {
    let s = Server::start(|p| format!(".:{p} {{\n header {{\n  set ra\n }}\n whoami\n}}\n"));
    let [_, f3] = flags(s.port, &asking(RD, 0));
    assert_eq!(f3 & RA, RA);
    assert!(
        s.wait_stdout("This syntax is deprecated", Duration::from_secs(5)),
        "{}",
        s.stdout()
    );
}

#[test]
fn query_rules_change_what_goes_upstream_and_what_the_reply_echoes() {
    let up = Authority::start(Zone {
        records: vec![ARecord {
            name: "www.test.".into(),
            ttl: 60,
            addr: [192, 0, 2, 7],
        }],
        ..Zone::default()
    });
    let u = up.port;
    let s = Server::start(|p| {
        format!(
            ".:{p} {{\n header {{\n  query clear rd\n  query set cd\n }}\n forward . 127.0.0.1:{u}\n}}\n"
        )
    });
    let mut q = query_full(0x5151, "www.test.", 1, 1, None);
    q[2] |= RD;
    let (udp, tcp) = udp_and_tcp(s.port, &q);
    for reply in [&udp, &tcp] {
        assert_eq!(reply[3] & 0x0f, 0, "NOERROR");
        assert_eq!(reply[2] & RD, 0, "the upstream echoed the RD it got: none");
    }
    let got: Vec<Vec<u8>> = up
        .received()
        .into_iter()
        .filter(|p| p.len() > 12 && p[12..].starts_with(b"\x03www\x04test\x00"))
        .collect();
    assert!(
        got.len() >= 2,
        "both transports reached the upstream: {got:?}"
    );
    for p in &got {
        assert_eq!(
            (p[2] & RD, p[3] & CD),
            (0, CD),
            "the edited flags went upstream"
        );
    }
}

#[test]
fn a_bad_header_block_is_a_start_error_with_its_line() {
    for (text, line, want) in [
        (
            ".:1053 {\n header\n}\n",
            2,
            "plugin/header: Wrong argument count or unexpected line ending after 'header'",
        ),
        (
            ".:1053 {\n header {\n  reply set ra\n }\n}\n",
            3,
            "plugin/header: setting up rule: invalid selector=reply should be query or response",
        ),
        (
            ".:1053 {\n header {\n  query set tc\n }\n}\n",
            3,
            "plugin/header: setting up rule: unknown/unsupported flag=tc",
        ),
    ] {
        let (code, err) = run_expect_failure(text);
        assert_eq!(code, 1, "exit status for:\n{text}\nstderr: {err}");
        let want = format!("Corefile:{line} - Error during parsing: {want}");
        assert!(err.contains(&want), "for:\n{text}\nwant {want:?} in: {err}");
    }
}
