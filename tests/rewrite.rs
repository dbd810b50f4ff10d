//! rewrite through the real binary, with forward behind it to an upstream of the test's own
//! that records what it got: the upstream sees the rewritten name, type and EDNS0 options;
//! the client (dig, and a DNS library) gets its own question back with the answer's names
//! mapped back, TTLs clamped and rcodes mapped, over UDP and TCP. A CNAME rule's target is
//! looked up again through the server. Bad rules are start errors with `FILE:LINE`.

mod common;

use common::authority::{ARecord, Authority, Zone};
use common::peers::tool;
use common::{Server, TempDir, opt_options, query_full, run_expect_failure, udp_and_tcp};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{RData, RecordType};
use ringdns::wire::Query;
use std::process::Command;

/// An upstream with `names` (A records, TTL 5), and a server with `rules` forwarding to it.
fn start(rules: &str, names: &[&str]) -> (Authority, Server) {
    let up = Authority::start(Zone {
        records: names
            .iter()
            .map(|n| ARecord {
                name: n.to_string(),
                ttl: 5,
                addr: [192, 0, 2, 53],
            })
            .collect(),
        ..Zone::default()
    });
    let u = up.port;
    let s = Server::start(|p| format!(".:{p} {{\n{rules}\n forward . 127.0.0.1:{u}\n}}\n"));
    (up, s)
}

/// A query the upstream got: its name, type and EDNS options (`None` without an OPT).
type Sent = (String, u16, Option<Vec<(u16, Vec<u8>)>>);

/// The queries the upstream got since `before`, parsed.
fn sent(up: &Authority, before: usize) -> Vec<Sent> {
    up.received()[before..]
        .iter()
        .map(|p| {
            let q = Query::parse(p).unwrap();
            (q.qname().to_string(), q.qtype(), opt_options(p))
        })
        .collect()
}

/// Both transports' replies to `name`/`qtype`, parsed.
fn both(s: &Server, id: u16, name: &str, qtype: u16, edns: bool) -> [Message; 2] {
    let q = query_full(id, name, qtype, 1, edns.then_some((1232, false)));
    let (udp, tcp) = udp_and_tcp(s.port, &q);
    [udp, tcp].map(|r| Message::from_vec(&r).unwrap())
}

#[test]
fn a_rewritten_name_goes_upstream_and_the_client_sees_its_own() {
    let (up, s) = start(
        " rewrite name exact www.example.net. www.example.org.",
        &["www.example.org."],
    );
    for m in both(&s, 1, "WWW.Example.NET.", 1, false) {
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert_eq!(
            m.queries[0].name.to_ascii(),
            "WWW.Example.NET.",
            "the client's question"
        );
        assert_eq!(m.answers.len(), 1);
        assert_eq!(
            m.answers[0].name.to_ascii(),
            "WWW.Example.NET.",
            "mapped back"
        );
        assert!(matches!(m.answers[0].data, RData::A(a) if a.0.octets() == [192, 0, 2, 53]));
    }
    let names: Vec<String> = sent(&up, 0).into_iter().map(|(n, _, _)| n).collect();
    assert!(
        !names.is_empty() && names.iter().all(|n| n == "www.example.org."),
        "{names:?}"
    );
}

#[test]
fn dig_sees_no_question_mismatch_with_answer_auto() {
    let Some(dig) = tool(
        "dig",
        "bind9-dnsutils",
        "dig_sees_no_question_mismatch_with_answer_auto",
    ) else {
        return;
    };
    let (up, s) = start(
        " rewrite stop {\n  name suffix .coredns.rocks. .service.consul. answer auto\n }",
        &["ftp.service.consul."],
    );
    for tcp in [false, true] {
        let mut cmd = Command::new(&dig);
        cmd.args([
            "@127.0.0.1",
            "-p",
            &s.port.to_string(),
            "ftp.coredns.rocks",
            "A",
        ])
        .args(["+time=2", "+tries=1", "+norecurse"]);
        if tcp {
            cmd.arg("+tcp");
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{text}");
        assert!(!text.contains("mismatch"), "{text}");
        assert!(text.contains("status: NOERROR"), "{text}");
        assert!(
            text.lines()
                .any(|l| l.starts_with("ftp.coredns.rocks.") && l.ends_with("192.0.2.53")),
            "{text}"
        );
    }
    assert!(
        sent(&up, 0)
            .iter()
            .all(|(n, _, _)| n == "ftp.service.consul.")
    );
}

#[test]
fn type_ttl_and_rcode_rules_shape_the_query_and_the_reply() {
    let (up, s) = start(
        " rewrite continue type ANY A\n rewrite continue ttl suffix .example.org. 30-300\n rewrite rcode exact nope.example.org. NXDOMAIN NOERROR",
        &["a.example.org."],
    );
    for m in both(&s, 2, "a.example.org.", 255, false) {
        assert_eq!(
            m.queries[0].query_type,
            RecordType::ANY,
            "the client's type"
        );
        assert_eq!(m.answers.len(), 1);
        assert_eq!(m.answers[0].ttl, 30, "5 raised to the minimum");
    }
    assert!(
        sent(&up, 0).iter().all(|(_, t, _)| *t == 1),
        "ANY went upstream as A"
    );
    for m in both(&s, 3, "nope.example.org.", 1, false) {
        assert_eq!(
            m.metadata.response_code,
            ResponseCode::NoError,
            "NXDOMAIN mapped"
        );
        assert_eq!(m.queries[0].name.to_ascii(), "nope.example.org.");
    }
    // A name the rcode rule does not match keeps its NXDOMAIN.
    for m in both(&s, 4, "other.example.org.", 1, false) {
        assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    }
}

#[test]
fn edns0_rules_shape_what_goes_upstream() {
    let (up, s) = start(
        " rewrite continue edns0 local set 0xffee abcd\n rewrite continue edns0 local set 0xffef {client_ip}\n rewrite edns0 subnet set 24 56",
        &["a.example.org."],
    );
    let before = up.received().len();
    for (edns, m) in [
        (false, both(&s, 5, "a.example.org.", 1, false)),
        (true, both(&s, 6, "a.example.org.", 1, true)),
    ] {
        for m in m {
            assert_eq!(m.metadata.response_code, ResponseCode::NoError);
            assert_eq!(
                m.edns.is_some(),
                edns,
                "an OPT only for a client that sent one"
            );
        }
    }
    let got = sent(&up, before);
    assert!(got.len() >= 4, "{got:?}");
    for (_, _, opts) in got {
        let opts = opts.expect("the upstream got an OPT");
        assert!(opts.contains(&(0xffee, b"abcd".to_vec())), "{opts:?}");
        assert!(opts.contains(&(0xffef, vec![127, 0, 0, 1])), "{opts:?}");
        assert!(
            opts.contains(&(8, vec![0, 1, 24, 0, 127, 0, 0])),
            "{opts:?}"
        );
    }
}

#[test]
fn a_cname_rule_rewrites_the_target_and_looks_the_new_one_up() {
    let dir = TempDir::new();
    let db = dir.write(
        "db.test",
        "$ORIGIN test.\n@ 300 IN SOA ns.test. admin.test. 1 3600 600 86400 300\n@ 300 IN NS ns.test.\nns 300 IN A 192.0.2.1\nmy-app 200 IN CNAME my-app.cdn.example.test.\nmy-app.cdn.example 300 IN A 20.2.0.1\nmy-app.other.cdn 300 IN A 30.3.1.2\n",
    );
    let up = Server::start(|p| format!("test:{p} {{\n file {}\n}}\n", db.display()));
    let u = up.port;
    let s = Server::start(|p| {
        format!(
            ".:{p} {{\n rewrite cname regex (.*)\\.cdn\\.example\\.test\\. {{1}}.other.cdn.test.\n forward . 127.0.0.1:{u}\n}}\n"
        )
    });
    for m in both(&s, 7, "my-app.test.", 1, false) {
        let got: Vec<String> = m
            .answers
            .iter()
            .map(|r| format!("{} {}", r.name.to_ascii(), r.data))
            .collect();
        assert_eq!(
            got,
            [
                "my-app.test. my-app.other.cdn.test.",
                "my-app.other.cdn.test. 30.3.1.2"
            ],
        );
    }
}

#[test]
fn bad_rules_are_start_errors_with_their_line() {
    for (rule, why) in [
        ("rewrite bogus a b", "invalid rule type \"bogus\""),
        (
            "rewrite name regex ( b",
            "invalid regex matching pattern: (",
        ),
        ("rewrite ttl a 5-1", "invalid TTL '5-1' for a ttl rule"),
        (
            "rewrite edns0 subnet set 33 56",
            "invalid IPv4 bit mask length 33",
        ),
    ] {
        let (code, out) = run_expect_failure(&format!(".:0 {{\n whoami\n {rule}\n}}\n"));
        assert_ne!(code, 0);
        let want = format!("Corefile:3 - Error during parsing: plugin/rewrite: {why}");
        assert!(out.contains(&want), "{rule}: {out} lacks {want}");
    }
}
