//! local: the real binary answers localhost names and the loopback's reverse names over UDP
//! and TCP on loopback as CoreDNS's local does (the loopback addresses, PTRs to
//! `localhost.`, the zones' SOA for NODATA and NXDOMAIN), lets every other name through,
//! counts the localhost names in `coredns_local_localhost_requests_total`, logs them with
//! `debug`, and refuses bad lines at start with `FILE:LINE`.
//!
//! Replies are read with hickory-proto (an implementation other than the server's).

mod common;

use common::metrics::{scrape_until, value};
use common::{Server, free_port, query_full, run_expect_failure, udp_and_tcp};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{RData, RecordType};
use std::time::Duration;

/// The reply to `name qtype` (the same over UDP and TCP): its rcode, and its answer and
/// authority records as `TYPE OWNER DATA`.
fn ask(port: u16, name: &str, qtype: u16) -> (ResponseCode, Vec<String>, Vec<String>) {
    let (udp, tcp) = udp_and_tcp(port, &query_full(0x4c4c, name, qtype, 1, None));
    let m = Message::from_vec(&udp).expect("the reply parses");
    if m.additionals.is_empty() {
        assert_eq!(udp, tcp, "{name} {qtype}: UDP and TCP");
    }
    let show = |rs: &[hickory_proto::rr::Record]| -> Vec<String> {
        rs.iter()
            .map(|r| {
                assert_eq!(r.ttl, 604_800, "{r:?}");
                let data = match &r.data {
                    RData::A(a) => a.0.to_string(),
                    RData::AAAA(a) => a.0.to_string(),
                    RData::PTR(p) => p.0.to_string(),
                    RData::NS(n) => n.0.to_string(),
                    RData::SOA(s) => format!("{} {} {}", s.mname, s.rname, s.minimum),
                    other => format!("{other:?}"),
                };
                format!("{} {} {data}", r.record_type(), r.name)
            })
            .collect()
    };
    (
        m.metadata.response_code,
        show(&m.answers),
        show(&m.authorities),
    )
}

const SOA: &str = "localhost. root.localhost. 604800";

#[test]
fn local_names_are_answered_and_the_rest_go_on() {
    let s = Server::start(|p| format!(".:{p} {{\n local\n whoami\n}}\n"));
    let p = s.port;
    let none: Vec<String> = Vec::new();
    assert_eq!(
        ask(p, "localhost.", 1),
        (
            ResponseCode::NoError,
            vec!["A localhost. 127.0.0.1".into()],
            none.clone()
        )
    );
    assert_eq!(
        ask(p, "App.Localhost.", 28),
        (
            ResponseCode::NoError,
            vec!["AAAA App.Localhost. ::1".into()],
            none.clone()
        )
    );
    assert_eq!(
        ask(p, "localhost.example.org.", 1).1,
        ["A localhost.example.org. 127.0.0.1"]
    );
    assert_eq!(
        ask(p, "app.localhost.", 15),
        (
            ResponseCode::NoError,
            none.clone(),
            vec![format!("SOA app.localhost. {SOA}")]
        )
    );
    assert_eq!(
        ask(p, "1.0.0.127.in-addr.arpa.", 12).1,
        ["PTR 1.0.0.127.in-addr.arpa. localhost."]
    );
    let v6 = format!("1.{}ip6.arpa.", "0.".repeat(31));
    assert_eq!(ask(p, &v6, 12).1, [format!("PTR {v6} localhost.")]);
    assert_eq!(
        ask(p, "127.in-addr.arpa.", 2).1,
        ["NS 127.in-addr.arpa. localhost."]
    );
    assert_eq!(
        ask(p, "5.0.0.127.in-addr.arpa.", 12),
        (
            ResponseCode::NXDomain,
            none.clone(),
            vec![format!("SOA 127.in-addr.arpa. {SOA}")]
        )
    );
    // Not local: whoami's answer.
    let (udp, _) = udp_and_tcp(p, &query_full(1, "www.example.org.", 1, 1, None));
    let m = Message::from_vec(&udp).unwrap();
    assert!(
        m.additionals
            .iter()
            .any(|r| r.record_type() == RecordType::SRV),
        "{m:?}"
    );
}

#[test]
fn localhost_names_are_counted_and_logged_with_debug() {
    let http = free_port();
    let h = http.port;
    drop(http);
    let s = Server::start(|p| {
        format!(".:{p} {{\n debug\n prometheus 127.0.0.1:{h}\n local\n whoami\n}}\n")
    });
    for name in ["a.localhost.", "localhost.example.org.", "localhost."] {
        ask(s.port, name, 1);
    }
    let counted = |t: &str| value(t, "coredns_local_localhost_requests_total", &[]);
    // Two names, each asked over UDP and TCP; `localhost.` is not counted.
    let t = scrape_until(h, |t| counted(t) == Some(4.0));
    assert_eq!(counted(&t), Some(4.0), "{t}");
    assert!(
        s.wait_stdout(
            "[DEBUG] plugin/local: Intercepting localhost query for \"a.localhost.\" A, from 127.0.0.1",
            Duration::from_secs(5)
        ),
        "{}",
        s.stdout()
    );
}

#[test]
fn the_legacy_prefix_can_be_turned_off() {
    let s = Server::start(|p| {
        format!(".:{p} {{\n local {{\n  localhost_prefix off\n }}\n whoami\n}}\n")
    });
    let (rc, answers, _) = ask(s.port, "localhost.example.org.", 1);
    assert_eq!((rc, answers.len()), (ResponseCode::NoError, 0), "whoami's");
    assert_eq!(
        ask(s.port, "a.localhost.", 1).1,
        ["A a.localhost. 127.0.0.1"]
    );
}

#[test]
fn a_bad_local_line_is_a_start_error_with_its_line() {
    for (text, line, want) in [
        (
            ".:1053 {\n local now\n}\n",
            2,
            "plugin/local: Wrong argument count or unexpected line ending after 'now'",
        ),
        (
            ".:1053 {\n local {\n  localhost_prefix maybe\n }\n}\n",
            3,
            "plugin/local: localhost_prefix expects 'on' or 'off', got \"maybe\"",
        ),
        (
            ".:1053 {\n local {\n  zones x\n }\n}\n",
            3,
            "plugin/local: unknown property 'zones'",
        ),
    ] {
        let (code, err) = run_expect_failure(text);
        assert_eq!(code, 1, "exit status for:\n{text}\nstderr: {err}");
        let want = format!("Corefile:{line} - Error during parsing: {want}");
        assert!(err.contains(&want), "for:\n{text}\nwant {want:?} in: {err}");
    }
}
