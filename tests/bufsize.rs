//! bufsize: the real binary lowers the EDNS0 UDP size of queries that advertise more than
//! its limit, for what forward sends upstream (an upstream of the test's own records what it
//! got) and for the reply (cut to the limit, its OPT saying it), over UDP and TCP on loopback;
//! other queries go on as they came; bad lines are start errors with `FILE:LINE`.

mod common;

use common::authority::{ARecord, Authority, Zone};
use common::{Server, query_full, run_expect_failure, udp_and_tcp, udp_exchange};
use ringdns::wire::Query;
use std::time::Duration;

/// The UDP size of a message's OPT (the query's or the reply's), `None` without one.
fn opt_size(msg: &[u8]) -> Option<u16> {
    ringdns::wire::records(msg)
        .unwrap()
        .flatten()
        .find(|r| r.rtype == 41)
        .map(|r| r.class)
}

#[test]
fn the_upstream_gets_the_limit_and_the_reply_says_it() {
    let up = Authority::start(Zone {
        records: vec![ARecord {
            name: "www.test.".into(),
            ttl: 60,
            addr: [192, 0, 2, 9],
        }],
        ..Zone::default()
    });
    let u = up.port;
    let s = Server::start(|p| format!(".:{p} {{\n bufsize 1100\n forward . 127.0.0.1:{u}\n}}\n"));
    for (id, edns, upstream, reply) in [
        (1, Some(4096), Some(1100), Some(1100)),
        (2, Some(800), Some(800), Some(800)),
        (3, None, None, None),
    ] {
        let before = up.received().len();
        let q = query_full(id, "www.test.", 1, 1, edns.map(|s| (s, false)));
        let (udp, tcp) = udp_and_tcp(s.port, &q);
        for r in [&udp, &tcp] {
            assert_eq!(
                (r[3] & 0x0f, opt_size(r)),
                (0, reply),
                "{edns:?}: the reply"
            );
        }
        let got = up.received();
        let ours: Vec<&Vec<u8>> = got[before..]
            .iter()
            .filter(|p| p[12..].starts_with(b"\x03www\x04test\x00"))
            .collect();
        assert!(ours.len() >= 2, "{edns:?}: both transports went upstream");
        for p in ours {
            let sent = Query::parse(p).unwrap().opt().map(|o| o.udp_size);
            assert_eq!(sent, upstream, "{edns:?}: what went upstream");
        }
    }
}

#[test]
fn a_reply_larger_than_the_limit_is_cut_to_it() {
    // erratic's `large` answer has 30 addresses, 500 bytes and more with an OPT.
    let s = Server::start(|p| {
        format!(".:{p} {{\n bufsize 512\n erratic {{\n  drop 0\n  large\n }}\n}}\n")
    });
    let q = query_full(7, "example.org.", 1, 1, Some((4096, false)));
    let r = (0..3)
        .find_map(|_| udp_exchange(s.port, &q, Duration::from_secs(2)))
        .expect("a reply over UDP");
    assert!(r.len() <= 512, "{} bytes", r.len());
    assert_ne!(r[2] & 0x02, 0, "TC set");
    assert_eq!(opt_size(&r), Some(512));
    // Over TCP the whole answer comes.
    let (_, tcp) = udp_and_tcp(s.port, &q);
    let m = hickory_proto::op::Message::from_vec(&tcp).unwrap();
    assert_eq!(m.answers.len(), 30);
}

#[test]
fn a_bad_bufsize_line_is_a_start_error_with_its_line() {
    for (text, line, want) in [
        (
            ".:1053 {\n bufsize 100\n}\n",
            2,
            "plugin/bufsize: Wrong argument count or unexpected line ending after '100'",
        ),
        (
            ".:1053 {\n bufsize 1232 1400\n}\n",
            2,
            "plugin/bufsize: Wrong argument count or unexpected line ending after '1400'",
        ),
        (
            ".:1053 {\n bufsize\n bufsize 1100\n}\n",
            3,
            "plugin/bufsize: this plugin can only be used once per Server Block",
        ),
    ] {
        let (code, err) = run_expect_failure(text);
        assert_eq!(code, 1, "exit status for:\n{text}\nstderr: {err}");
        let want = format!("Corefile:{line} - Error during parsing: {want}");
        assert!(err.contains(&want), "for:\n{text}\nwant {want:?} in: {err}");
    }
}
