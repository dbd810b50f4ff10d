//! dns64 through the real binary, in front of forward to another ringdns serving a zone:
//! an AAAA query from an IPv6 client (::1) for a name with only A records gets AAAA records
//! of the prefix with the A addresses embedded (RFC 6052), over UDP and TCP; a name with AAAA
//! records, an NXDOMAIN, an IPv4 client and an A query go through untouched; `translate_all`
//! and `allow_ipv4` change that as CoreDNS's; the translations are counted in
//! `coredns_dns64_requests_translated_total`; bad lines are start errors.

mod common;

use common::metrics::{scrape_until, value};
use common::{Server, TempDir, free_port, query, run_expect_failure, tcp_from, udp_from};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::RData;
use std::net::IpAddr;
use std::time::Duration;

const AAAA: u16 = 28;

const ZONE: &str = "$ORIGIN test.
@ 300 IN SOA ns.test. admin.test. 1 3600 600 86400 120
@ 300 IN NS ns.test.
ns 300 IN A 192.0.2.1
v4only 3600 IN A 192.0.2.33
v4only 3600 IN A 198.51.100.7
dual 300 IN A 192.0.2.34
dual 300 IN AAAA 2001:db8::34
alias 300 IN CNAME v4only.test.
";

/// An upstream serving ZONE, and a server with `dns64` lines `dns64` (and prometheus on
/// `metrics`) forwarding to it.
fn start(dns64: &str, metrics: u16) -> (TempDir, Server, Server) {
    let dir = TempDir::new();
    let db = dir.write("db.test", ZONE);
    let up = Server::start(|p| format!("test:{p} {{\n file {}\n}}\n", db.display()));
    let u = up.port;
    let s = Server::start(|p| {
        format!(
            ".:{p} {{\n prometheus 127.0.0.1:{metrics}\n{dns64}\n forward . 127.0.0.1:{u}\n}}\n"
        )
    });
    (dir, up, s)
}

/// The answers (as text) and rcode from `from` over UDP and TCP, the same on both.
fn ask(s: &Server, from: &str, name: &str, qtype: u16) -> (ResponseCode, Vec<String>) {
    let from: IpAddr = from.parse().unwrap();
    let q = query(0x64, name, qtype);
    let udp = udp_from(from, s.port, &q, Duration::from_secs(3)).expect("a UDP reply");
    let tcp = tcp_from(from, s.port, &q, Duration::from_secs(3)).expect("a TCP reply");
    let [u, t] = [udp, tcp].map(|r| {
        let m = Message::from_vec(&r).unwrap();
        assert_eq!(m.queries[0].name.to_ascii(), name, "the client's question");
        let answers = m
            .answers
            .iter()
            .map(|r| {
                let data = match &r.data {
                    RData::AAAA(a) => a.0.to_string(),
                    other => other.to_string(),
                };
                format!(
                    "{} {} {:?} {data}",
                    r.name.to_ascii(),
                    r.ttl,
                    r.record_type()
                )
            })
            .collect::<Vec<_>>();
        (m.metadata.response_code, answers)
    });
    assert_eq!(u, t, "UDP and TCP");
    u
}

#[test]
fn an_ipv6_client_gets_aaaa_records_made_of_the_a_records() {
    let m = free_port();
    let (_d, _up, s) = start(" dns64", m.port);
    let (rc, answers) = ask(&s, "::1", "v4only.test.", AAAA);
    assert_eq!(rc, ResponseCode::NoError);
    // TTL: min(the A's 3600, the SOA's in the NODATA reply: 120, its MINIMUM).
    assert_eq!(
        answers,
        [
            "v4only.test. 120 AAAA 64:ff9b::c000:221",
            "v4only.test. 120 AAAA 64:ff9b::c633:6407"
        ]
    );
    // A CNAME chain: the CNAME kept, the target's A records made AAAA.
    let (_, answers) = ask(&s, "::1", "alias.test.", AAAA);
    assert_eq!(answers[0], "alias.test. 300 CNAME v4only.test.");
    assert_eq!(answers.len(), 3, "{answers:?}");
    // Untouched: a name with AAAA records, an NXDOMAIN, an IPv4 client, an A query.
    assert_eq!(
        ask(&s, "::1", "dual.test.", AAAA).1,
        ["dual.test. 300 AAAA 2001:db8::34"]
    );
    assert_eq!(
        ask(&s, "::1", "nope.test.", AAAA),
        (ResponseCode::NXDomain, vec![])
    );
    assert_eq!(
        ask(&s, "127.0.0.1", "v4only.test.", AAAA),
        (ResponseCode::NoError, vec![])
    );
    assert_eq!(
        ask(&s, "::1", "v4only.test.", 1).1.len(),
        2,
        "A queries go on as they came"
    );
    // Two translations of each transport: v4only and alias.
    let server = format!("dns://:{}", s.port);
    let labels = [("server", server.as_str())];
    let page = scrape_until(m.port, |p| {
        value(p, "coredns_dns64_requests_translated_total", &labels).is_some_and(|v| v >= 4.0)
    });
    assert_eq!(
        value(&page, "coredns_dns64_requests_translated_total", &labels),
        Some(4.0),
        "{page}"
    );
}

#[test]
fn a_custom_prefix_translate_all_and_allow_ipv4() {
    let m = free_port();
    let (_d, _up, s) = start(
        " dns64 {\n  prefix 2001:db8:122::/48\n  translate_all\n  allow_ipv4\n }",
        m.port,
    );
    assert_eq!(
        ask(&s, "127.0.0.1", "dual.test.", AAAA).1,
        ["dual.test. 300 AAAA 2001:db8:122:c000:2:2200::"],
        "an IPv4 client, and the AAAA record replaced"
    );
    assert_eq!(ask(&s, "::1", "nope.test.", AAAA).0, ResponseCode::NXDomain);
}

#[test]
fn bad_lines_are_start_errors_with_their_line() {
    for (line, why) in [
        (
            "dns64 64:ff9b::/100",
            "plugin/dns64: invalid prefix length \"64:ff9b::/100\"",
        ),
        (
            "dns64 {\n  nat46\n }",
            "plugin/dns64: unknown property 'nat46'",
        ),
    ] {
        let (code, out) = run_expect_failure(&format!(".:0 {{\n {line}\n whoami\n}}\n"));
        assert_ne!(code, 0, "{line}");
        assert!(
            out.contains("Error during parsing: ") && out.contains(why),
            "{line}: {out}"
        );
    }
}
