//! view: several server blocks for one zone and port, each query served by the first (in
//! Corefile order) whose view's expressions all hold, as CoreDNS's `plugin/view`. Clients
//! bound to several loopback addresses (and ::1) ask over UDP and TCP, with dig among them;
//! answers come from `hosts` blocks that tell the views apart, or from whoami. A query no
//! view of its zone takes goes on to shorter zones and `.`; the view's name labels the
//! block's metrics (acl's, cache's and template's families too) and is published as
//! `view/name` metadata; a bad expression stops the start with `FILE:LINE` and its column.

mod common;

use common::metrics::{scrape_until, value};
use common::{Server, free_port, query, run_expect_failure, tcp_from, udp_from};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::RData;
use std::net::IpAddr;
use std::process::Command;
use std::time::Duration;

const A: u16 = 1;
const MX: u16 = 15;
const AAAA: u16 = 28;
const WAIT: Duration = Duration::from_secs(3);

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// The addresses of the answer (A/AAAA), or of whoami's additional records, as text.
fn addresses(reply: &[u8]) -> Vec<String> {
    let m = Message::from_vec(reply).expect("the reply parses");
    assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{m:?}");
    let records = if m.answers.is_empty() {
        &m.additionals
    } else {
        &m.answers
    };
    records
        .iter()
        .filter_map(|r| match &r.data {
            RData::A(a) => Some(a.0.to_string()),
            RData::AAAA(a) => Some(a.0.to_string()),
            _ => None,
        })
        .collect()
}

fn ask_udp(from: &str, port: u16, name: &str, qtype: u16) -> Vec<String> {
    let reply = udp_from(ip(from), port, &query(7, name, qtype), WAIT).expect("a reply");
    addresses(&reply)
}

fn ask_tcp(from: &str, port: u16, name: &str, qtype: u16) -> Vec<String> {
    let reply = tcp_from(ip(from), port, &query(8, name, qtype), WAIT).expect("a reply");
    addresses(&reply)
}

#[test]
fn split_dns_by_client_network_as_coredns_readme_example() {
    let s = Server::start(|p| {
        format!(
            ".:{p} {{
    view example1 {{
        expr incidr(client_ip(), '127.0.0.2/31')
    }}
    hosts {{
        1.1.1.1 test
    }}
}}
.:{p} {{
    view v6_example1 {{
        expr incidr(client_ip(), '::1/128')
    }}
    hosts {{
        2001:db8::1 test
    }}
}}
.:{p} {{
    hosts {{
        3.3.3.3 test
    }}
}}
"
        )
    });
    let p = s.port;
    assert_eq!(ask_udp("127.0.0.2", p, "test.", A), ["1.1.1.1"]);
    assert_eq!(ask_udp("127.0.0.3", p, "test.", A), ["1.1.1.1"]);
    assert_eq!(ask_tcp("127.0.0.3", p, "test.", A), ["1.1.1.1"]);
    assert_eq!(ask_udp("127.0.0.4", p, "test.", A), ["3.3.3.3"]);
    assert_eq!(ask_tcp("127.0.0.1", p, "test.", A), ["3.3.3.3"]);
    assert_eq!(ask_udp("::1", p, "test.", AAAA), ["2001:db8::1"]);
    assert_eq!(ask_tcp("::1", p, "test.", AAAA), ["2001:db8::1"]);

    // dig, a client of its own, bound to an address of the first view.
    let out = Command::new("dig")
        .args(["@127.0.0.1", "-p", &p.to_string(), "-b", "127.0.0.2"])
        .args(["+short", "+tries=1", "+time=3", "test.", "A"])
        .output()
        .expect("dig runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1.1.1.1");
}

#[test]
fn a_query_no_view_of_its_zone_takes_goes_on_to_shorter_zones() {
    let s = Server::start(|p| {
        format!(
            r"example.org:{p} {{
    view names {{
        expr type() in ['A', 'AAAA'] && name() matches '^abc\\..*\\.example\\.org\\.$'
    }}
    hosts {{
        10.0.0.1 abc.x.example.org abc.x.y.example.org www.example.org
    }}
}}
example.org:{p} {{
    view tcp_only {{
        expr proto() == 'tcp'
        expr server_port() == '{p}' && port() != ''
    }}
    hosts {{
        10.0.0.2 www.example.org
    }}
}}
.:{p} {{
    whoami
}}
"
        )
    });
    let p = s.port;
    assert_eq!(
        ask_udp("127.0.0.1", p, "abc.x.example.org.", A),
        ["10.0.0.1"]
    );
    assert_eq!(
        ask_udp("127.0.0.1", p, "ABC.x.Y.example.org.", A),
        ["10.0.0.1"]
    );
    // MX fails the first view, UDP the second: `.` (whoami, the client's address).
    assert_eq!(
        ask_udp("127.0.0.5", p, "abc.x.example.org.", MX),
        ["127.0.0.5"]
    );
    assert_eq!(
        ask_udp("127.0.0.5", p, "www.example.org.", A),
        ["127.0.0.5"]
    );
    // Over TCP the second view takes what the first does not.
    assert_eq!(ask_tcp("127.0.0.1", p, "www.example.org.", A), ["10.0.0.2"]);
    assert_eq!(
        ask_tcp("127.0.0.1", p, "abc.x.example.org.", A),
        ["10.0.0.1"]
    );
}

#[test]
fn the_view_name_labels_metrics_and_is_published_as_metadata() {
    let metrics = free_port();
    let s = Server::start(|p| {
        format!(
            ".:{p} {{
    view inside {{
        expr incidr(client_ip(), '127.0.0.2/32')
    }}
    metadata
    prometheus 127.0.0.1:{m}
    log . \"{{remote}} {{name}} view={{/view/name}}\"
    hosts {{
        1.1.1.1 test
    }}
}}
.:{p} {{
    prometheus 127.0.0.1:{m}
    hosts {{
        3.3.3.3 test
    }}
}}
",
            m = metrics.port
        )
    });
    let p = s.port;
    assert_eq!(ask_udp("127.0.0.2", p, "test.", A), ["1.1.1.1"]);
    assert_eq!(ask_udp("127.0.0.2", p, "test.", A), ["1.1.1.1"]);
    assert_eq!(ask_udp("127.0.0.3", p, "test.", A), ["3.3.3.3"]);
    assert!(
        s.wait_stdout("127.0.0.2 test. view=inside", WAIT),
        "{}",
        s.stdout()
    );
    let server = format!("dns://:{p}");
    let requests = |text: &str, view: &str| {
        let labels = [
            ("server", server.as_str()),
            ("zone", "."),
            ("view", view),
            ("proto", "udp"),
            ("family", "1"),
            ("type", "A"),
        ];
        value(text, "coredns_dns_requests_total", &labels)
    };
    let text = scrape_until(metrics.port, |t| {
        requests(t, "inside") == Some(2.0) && requests(t, "") == Some(1.0)
    });
    assert_eq!(requests(&text, "inside"), Some(2.0), "{text}");
    assert_eq!(
        value(
            &text,
            "coredns_plugin_enabled",
            &[
                ("server", &server),
                ("zone", "."),
                ("view", "inside"),
                ("name", "hosts")
            ]
        ),
        Some(1.0),
        "{text}"
    );
}

/// The plugins' own families carry the block's view too: two blocks of one zone and port
/// (one in a view, one without) count apart in acl's, cache's and template's series.
#[test]
fn acl_cache_and_template_count_per_view() {
    let metrics = free_port();
    let block = |view: &str, blocked: &str, answer: &str| {
        format!(
            "{view}
    prometheus 127.0.0.1:{m}
    acl {{
        block net {blocked}
    }}
    cache
    template IN A test {{
        answer \"{{{{ .Name }}}} 60 IN A {answer}\"
    }}
",
            m = metrics.port
        )
    };
    let inside = block(
        "view inside {\n        expr incidr(client_ip(), '127.0.0.2/31')\n    }",
        "127.0.0.3",
        "1.1.1.1",
    );
    let outside = block("", "127.0.0.5", "3.3.3.3");
    // One core: the second query from 127.0.0.2 is a hit of the same cache.
    let s = Server::start(|p| {
        format!("{{\n workers 1\n}}\n.:{p} {{\n{inside}}}\n.:{p} {{\n{outside}}}\n")
    });
    let p = s.port;
    assert_eq!(ask_udp("127.0.0.2", p, "test.", A), ["1.1.1.1"]);
    assert_eq!(ask_udp("127.0.0.2", p, "test.", A), ["1.1.1.1"], "a hit");
    let refused = |from: &str| {
        let reply = udp_from(ip(from), p, &query(9, "test.", A), WAIT).expect("a reply");
        Message::from_vec(&reply).unwrap().metadata.response_code == ResponseCode::Refused
    };
    assert!(refused("127.0.0.3"), "blocked in the view");
    assert_eq!(ask_udp("127.0.0.4", p, "test.", A), ["3.3.3.3"]);
    assert!(refused("127.0.0.5"), "blocked outside it");

    let server = format!("dns://:{p}");
    let count = |text: &str, family: &str, labels: &[(&str, &str)]| {
        let mut all = vec![("server", server.as_str())];
        all.extend_from_slice(labels);
        value(text, family, &all)
    };
    let matches = |t: &str, view: &str| {
        let labels = [
            ("zone", "test."),
            ("view", view),
            ("class", "IN"),
            ("type", "A"),
        ];
        count(t, "coredns_template_matches_total", &labels)
    };
    let text = scrape_until(metrics.port, |t| {
        matches(t, "inside") == Some(1.0) && matches(t, "") == Some(1.0)
    });
    for (view, allowed, requests) in [("inside", 2.0, 2.0), ("", 1.0, 1.0)] {
        let v = ("view", view);
        assert_eq!(
            count(&text, "coredns_acl_allowed_requests_total", &[v]),
            Some(allowed),
            "view {view:?}: {text}"
        );
        assert_eq!(
            count(
                &text,
                "coredns_acl_blocked_requests_total",
                &[("zone", "."), v]
            ),
            Some(1.0),
            "view {view:?}"
        );
        assert_eq!(
            count(&text, "coredns_cache_requests_total", &[("zones", "."), v]),
            Some(requests),
            "view {view:?}"
        );
        assert_eq!(matches(&text, view), Some(1.0), "view {view:?}");
    }
    let hits = [("type", "success"), ("zones", "."), ("view", "inside")];
    assert_eq!(count(&text, "coredns_cache_hits_total", &hits), Some(1.0));
}

#[test]
fn a_bad_expression_stops_the_start_with_its_place() {
    let (code, err) = run_expect_failure(
        ".:1053 {\n    view broken {\n        expr type( == 'A'\n    }\n    whoami\n}\n",
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("Corefile:3 - Error during parsing: plugin/view: invalid expression")
            && err.contains("at column 7"),
        "{err}"
    );
    let (code, err) = run_expect_failure(
        ".:1053 {\n    view broken {\n        expr clientip() == '::1'\n    }\n    whoami\n}\n",
    );
    assert_ne!(code, 0);
    assert!(err.contains("unknown function clientip"), "{err}");
    // Without a view, the same zone twice is still CoreDNS's error.
    let (code, err) = run_expect_failure(".:1053 {\n    whoami\n}\n.:1053 {\n    whoami\n}\n");
    assert_ne!(code, 0);
    assert!(err.contains("it is already defined"), "{err}");
}
