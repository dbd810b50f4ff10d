//! acl: the real binary on loopback, asked over UDP and TCP by clients bound to several
//! loopback addresses (127.0.0.2 … 127.0.0.6) and to ::1. Allowed queries reach whoami
//! (which shows the client's address back); blocked ones are REFUSED with an extended DNS
//! error 15, filtered ones NOERROR with no answer and EDE 17 (with or without the client's
//! EDNS, as CoreDNS); dropped ones get no reply at all. Type filters, zones and the order of
//! rules decide as CoreDNS's; the counts are scraped from prometheus; a bad rule stops the
//! start with `FILE:LINE - message`.
//!
//! Replies are read with hickory-proto (an implementation other than the server's), the
//! OPT record's options with the server's own record walker.

mod common;

use common::metrics::{scrape_until, value};
use common::{Server, free_port, query_full, run_expect_failure, tcp_from, udp_from};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::RecordType;
use std::net::IpAddr;
use std::time::Duration;

/// How long a dropped query is waited for.
const SILENCE: Duration = Duration::from_millis(700);

const A: u16 = 1;
const MX: u16 = 15;
const TXT: u16 = 16;
const AAAA: u16 = 28;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// What a query came to.
#[derive(Debug, PartialEq, Eq)]
enum Got {
    /// whoami answered, with this address.
    Allowed(IpAddr),
    /// REFUSED, no records but an OPT holding EDE 15.
    Blocked,
    /// NOERROR, no records but an OPT holding EDE 17.
    Filtered,
    /// No reply.
    Dropped,
}

fn judge(reply: Option<Vec<u8>>, packet: &[u8]) -> Got {
    let Some(reply) = reply else {
        return Got::Dropped;
    };
    let m = Message::from_vec(&reply).expect("the reply parses");
    assert_eq!(&reply[..2], &packet[..2], "the query's ID");
    let who = m.additionals.iter().find_map(|r| match &r.data {
        hickory_proto::rr::RData::A(a) => Some(IpAddr::V4(a.0)),
        hickory_proto::rr::RData::AAAA(a) => Some(IpAddr::V6(a.0)),
        _ => None,
    });
    if let Some(who) = who {
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        return Got::Allowed(who);
    }
    assert!(m.answers.is_empty() && m.authorities.is_empty(), "{m:?}");
    let ede = common::opt_options(&reply).expect("an OPT record");
    match m.metadata.response_code {
        ResponseCode::Refused => {
            assert_eq!(ede, [(15, vec![0, 15])], "EDE 15, Blocked");
            Got::Blocked
        }
        ResponseCode::NoError => {
            assert_eq!(ede, [(15, vec![0, 17])], "EDE 17, Filtered");
            Got::Filtered
        }
        other => panic!("rcode {other:?}: {m:?}"),
    }
}

/// Asks `name qtype` from `from` over UDP and over TCP, with and without EDNS; every way
/// must come to the same, which is returned.
fn ask(port: u16, from: &str, name: &str, qtype: u16) -> Got {
    let from = ip(from);
    let mut seen = Vec::new();
    for edns in [None, Some((1232, false))] {
        let q = query_full(0x0ac1, name, qtype, 1, edns);
        // A reply lost on loopback is not a drop: up to three tries unless silence is the
        // answer, which then holds for each.
        let udp = (0..3)
            .find_map(|_| udp_from(from, port, &q, SILENCE))
            .map_or(Got::Dropped, |r| judge(Some(r), &q));
        let tcp = judge(tcp_from(from, port, &q, SILENCE), &q);
        seen.push((udp, tcp));
    }
    let first = &seen[0].0;
    for (udp, tcp) in &seen {
        assert_eq!(udp, first, "{from} {name} {qtype}: {seen:?}");
        assert_eq!(tcp, first, "{from} {name} {qtype}: {seen:?}");
    }
    seen.swap_remove(0).0
}

fn start(metrics: u16, body: &str) -> Server {
    let body = body.to_string();
    Server::start(move |p| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n prometheus 127.0.0.1:{metrics}\n{body}\n whoami\n}}\n"
        )
    })
}

#[test]
fn each_action_for_its_clients_over_udp_and_tcp() {
    let metrics = free_port();
    let s = start(
        metrics.port,
        " acl {\n  allow net 127.0.0.2\n  block net 127.0.0.3 ::1/128\n  filter net 127.0.0.4/32\n  drop net 127.0.0.5\n }",
    );
    let p = s.port;
    assert_eq!(
        ask(p, "127.0.0.2", "a.example.", A),
        Got::Allowed(ip("127.0.0.2"))
    );
    assert_eq!(ask(p, "127.0.0.3", "a.example.", A), Got::Blocked);
    assert_eq!(ask(p, "::1", "a.example.", AAAA), Got::Blocked);
    assert_eq!(ask(p, "127.0.0.4", "a.example.", A), Got::Filtered);
    assert_eq!(ask(p, "127.0.0.5", "a.example.", A), Got::Dropped);
    // No rule for it: allowed.
    assert_eq!(
        ask(p, "127.0.0.6", "a.example.", A),
        Got::Allowed(ip("127.0.0.6"))
    );

    // Four queries each way (UDP, TCP; with and without EDNS), UDP tried up to three times
    // when silent: so 127.0.0.5's drops are 2 × (3 + 1).
    let page = scrape_until(metrics.port, |t| {
        value(
            t,
            "coredns_acl_dropped_requests_total",
            &[
                ("server", &format!("dns://:{p}")),
                ("zone", "."),
                ("view", ""),
            ],
        ) == Some(8.0)
    });
    let server = format!("dns://:{p}");
    let zoned = |family: &str| {
        value(
            &page,
            &format!("coredns_acl_{family}_requests_total"),
            &[("server", &server), ("zone", "."), ("view", "")],
        )
    };
    assert_eq!(zoned("blocked"), Some(8.0), "127.0.0.3 and ::1, four each");
    assert_eq!(zoned("filtered"), Some(4.0));
    assert_eq!(zoned("dropped"), Some(8.0));
    let allowed = value(
        &page,
        "coredns_acl_allowed_requests_total",
        &[("server", &server), ("view", "")],
    );
    assert_eq!(allowed, Some(8.0), "127.0.0.2 and 127.0.0.6, four each");
}

#[test]
fn types_and_ipv6_networks() {
    let metrics = free_port();
    let s = start(
        metrics.port,
        " acl {\n  block type A net ::1\n  filter type MX TXT net 127.0.0.0/8 ::/0\n  drop type AAAA net 127.0.0.2\n }",
    );
    let p = s.port;
    assert_eq!(ask(p, "::1", "x.example.", A), Got::Blocked);
    assert_eq!(ask(p, "::1", "x.example.", AAAA), Got::Allowed(ip("::1")));
    assert_eq!(ask(p, "::1", "x.example.", TXT), Got::Filtered);
    assert_eq!(ask(p, "127.0.0.3", "x.example.", MX), Got::Filtered);
    assert_eq!(ask(p, "127.0.0.2", "x.example.", AAAA), Got::Dropped);
    assert_eq!(
        ask(p, "127.0.0.2", "x.example.", A),
        Got::Allowed(ip("127.0.0.2"))
    );
}

/// CoreDNS's order: the rules (one per `acl`) in turn, skipping those whose zones do not
/// hold the name; in a rule, the first policy that matches; `allow` stops the checking,
/// a rule that nothing matches leaves the query to the next.
#[test]
fn zones_and_the_order_of_rules() {
    let metrics = free_port();
    let s = start(
        metrics.port,
        " acl a.example.org {\n  block net 127.0.0.2\n }\n\
         acl example.org {\n  drop type TXT\n  allow net 127.0.0.0/29\n  filter\n }\n\
         acl {\n  block\n }",
    );
    let p = s.port;
    // a.example.org's rule first, then example.org's, whose drop comes before its allow.
    assert_eq!(ask(p, "127.0.0.2", "www.a.example.org.", A), Got::Blocked);
    assert_eq!(ask(p, "127.0.0.3", "www.a.example.org.", TXT), Got::Dropped);
    // Allowed by example.org's rule: the catch-all block is not reached.
    assert_eq!(
        ask(p, "127.0.0.2", "Www.Example.ORG.", A),
        Got::Allowed(ip("127.0.0.2"))
    );
    // Outside the /29: example.org's filter.
    assert_eq!(ask(p, "127.0.0.9", "example.org.", A), Got::Filtered);
    // Other names: only the catch-all rule holds them.
    assert_eq!(ask(p, "127.0.0.2", "example.net.", A), Got::Blocked);

    let server = format!("dns://:{p}");
    let page = scrape_until(metrics.port, |t| t.contains("coredns_acl_filtered"));
    for (family, zone, n) in [
        ("blocked", "a.example.org.", 4.0),
        ("dropped", "example.org.", 8.0),
        ("filtered", "example.org.", 4.0),
        ("blocked", ".", 4.0),
    ] {
        let v = value(
            &page,
            &format!("coredns_acl_{family}_requests_total"),
            &[("server", &server), ("zone", zone), ("view", "")],
        );
        assert_eq!(v, Some(n), "{family} {zone}");
    }
}

/// The zones of a rule default to its block's.
#[test]
fn a_rule_without_zones_takes_its_blocks() {
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n acl {{\n  block\n }}\n whoami\n}}\n\
             example.net:{p} {{\n acl example.com {{\n  block\n }}\n whoami\n}}\n"
        )
    });
    let p = s.port;
    assert_eq!(ask(p, "127.0.0.2", "a.example.org.", A), Got::Blocked);
    assert_eq!(
        ask(p, "127.0.0.2", "a.example.net.", A),
        Got::Allowed(ip("127.0.0.2"))
    );
}

/// A block's reply is the same whether or not the query came with EDNS, but the OPT follows
/// the client's: its DO bit as it sent it.
#[test]
fn the_opt_follows_the_client() {
    let metrics = free_port();
    let s = start(metrics.port, " acl {\n  block\n }");
    for do_bit in [false, true] {
        let q = query_full(7, "x.example.", A, 1, Some((1232, do_bit)));
        let reply = udp_from(ip("127.0.0.2"), s.port, &q, Duration::from_secs(2)).unwrap();
        let m = Message::from_vec(&reply).unwrap();
        let edns = m.edns.expect("an OPT");
        assert_eq!(edns.flags().dnssec_ok, do_bit);
    }
    // Without EDNS, CoreDNS's reply carries miekg's SetEdns0(4096, true) as it was made.
    let q = query_full(8, "x.example.", A, 1, None);
    let reply = udp_from(ip("127.0.0.2"), s.port, &q, Duration::from_secs(2)).unwrap();
    let m = Message::from_vec(&reply).unwrap();
    let edns = m.edns.expect("an OPT");
    assert!(edns.flags().dnssec_ok);
    assert_eq!(edns.max_payload(), 4096);
    assert!(m.queries.iter().all(|q| q.query_type() == RecordType::A));
}

#[test]
fn bad_rules_stop_the_start_with_file_and_line() {
    for (body, line, want) in [
        (
            " acl {\n  blck net 10.0.0.0/8\n }",
            3,
            "unexpected token \"blck\"; expect 'allow', 'block', 'filter' or 'drop'",
        ),
        (
            " acl {\n  block A\n }",
            3,
            "unexpected token \"A\"; expect 'type | net'",
        ),
        (
            " acl {\n  allow\n  block type\n }",
            4,
            "no token specified in \"type\" section",
        ),
        (
            " acl {\n  block type ABC\n }",
            3,
            "unexpected token \"ABC\"; expect legal QTYPE",
        ),
        (
            " acl {\n  block net 192.168.0.0/33\n }",
            3,
            "illegal CIDR notation \"192.168.0.0/33\"",
        ),
        (
            " acl {\n  block net 2001:db8:85a3:::8a2e:370:7334\n }",
            3,
            "illegal CIDR notation \"2001:db8:85a3:::8a2e:370:7334/128\"",
        ),
    ] {
        let text = format!(".:1053 {{\n{body}\n}}\n");
        let (code, err) = run_expect_failure(&text);
        assert_eq!(code, 1, "exit status for:\n{text}\nstderr: {err}");
        let want = format!("Corefile:{line} - Error during parsing: plugin/acl: {want}");
        assert!(err.contains(&want), "for:\n{text}\nwant {want:?} in: {err}");
    }
}
