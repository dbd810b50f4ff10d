//! CoreDNS's `acl_test.go` and `setup_test.go`, ported: every case of theirs, served both at
//! once (`serve_now`) and through `serve`, with the same outcome.

use super::*;
use ringdns_plugin::wire::{Header, Name, QueryBuilder, Section, records, rtype};
use std::net::{Ipv6Addr, SocketAddr, SocketAddrV6};

/// What the next plugin answers (nothing written): a query that reaches it shows this rcode.
const TO_NEXT: u8 = 3;

/// What a query came to.
#[derive(Debug, PartialEq, Eq)]
enum Got {
    /// Handed on to the next plugin.
    Next,
    /// Nothing sent.
    Dropped,
    /// A reply with this rcode, no answer, and the EDE info code of its OPT.
    Reply {
        rcode: u8,
        ede: Option<u16>,
        do_bit: bool,
    },
}

fn plugin(corefile: &str) -> Acl {
    let (_, config) = ringdns_testkit::config_with_zones::<Acl>(corefile).expect("setup");
    Acl::build(
        &Arc::new(config),
        &CoreInfo {
            index: 0,
            cpu: 0,
            cores: 1,
        },
    )
    .expect("an instance")
}

/// CoreDNS's test: `config` in a block whose keys are `zones` (`.` when none).
fn acl(config: &str, zones: &[&str]) -> Acl {
    let keys = if zones.is_empty() {
        ".".to_string()
    } else {
        zones.join(" ")
    };
    plugin(&format!("{keys} {{\n{config}\n}}\n"))
}

fn query(name: &str, qtype: u16, edns: bool) -> Vec<u8> {
    let w = ringdns_testkit::wire_name(name);
    let b = QueryBuilder::new(Name::from_wire(&w).unwrap(), qtype).id(0x4242);
    if edns { b.edns(1232, false) } else { b }.build()
}

fn serve(a: &Acl, packet: &[u8], client: SocketAddr, at_once: bool) -> Got {
    let (status, reply) = ringdns_testkit::serve_once(a, packet, client, TO_NEXT, at_once);
    if reply.is_empty() {
        return match status.rcode {
            TO_NEXT => Got::Next,
            NOERROR => Got::Dropped,
            r => panic!("rcode {r} with nothing written"),
        };
    }
    assert_eq!(status.rcode, NOERROR, "a written reply");
    let h = Header::new(&reply);
    assert_eq!(&reply[..2], &packet[..2], "the query's ID");
    assert!(h.qr(), "a response");
    assert_eq!(h.count(Section::Answer), 0);
    assert_eq!(h.count(Section::Authority), 0);
    let mut ede = None;
    let mut do_bit = false;
    for r in records(&reply).unwrap() {
        let r = r.unwrap();
        assert_eq!(r.rtype, rtype::OPT, "only an OPT");
        do_bit = r.ttl(&reply) & 0x8000 != 0;
        let data = &reply[r.rdata];
        let (code, len) = (
            u16::from_be_bytes([data[0], data[1]]),
            u16::from_be_bytes([data[2], data[3]]),
        );
        assert_eq!((code, len), (edns::EDE, 2), "one EDE, no text");
        ede = Some(u16::from_be_bytes([data[4], data[5]]));
    }
    Got::Reply {
        rcode: h.rcode(),
        ede,
        do_bit,
    }
}

/// Both passes, which must agree.
fn ask(a: &Acl, name: &str, qtype: u16, client: SocketAddr) -> Got {
    let packet = query(name, qtype, false);
    let now = serve(a, &packet, client, true);
    let later = serve(a, &packet, client, false);
    assert_eq!(now, later, "serve_now and serve differ for {name} {qtype}");
    now
}

fn addr(ip: &str) -> SocketAddr {
    SocketAddr::new(ip.parse().unwrap(), 53000)
}

const BLOCKED: Got = Got::Reply {
    rcode: REFUSED,
    ede: Some(15),
    do_bit: true,
};
const FILTERED: Got = Got::Reply {
    rcode: NOERROR,
    ede: Some(17),
    do_bit: true,
};

/// CoreDNS's case: name, config, block keys, query name, client, type, outcome.
type Case = (
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static str,
    &'static str,
    u16,
    Got,
);

#[test]
fn coredns_serve_dns_cases() {
    use rtype::{A, AAAA};
    #[rustfmt::skip]
    let cases: &[Case] = &[
        // IPv4.
        ("Blacklist 1 BLOCKED", "acl example.org {\n block type A net 192.168.0.0/16\n}", &[], "www.example.org.", "192.168.0.2", A, BLOCKED),
        ("Blacklist 1 ALLOWED", "acl example.org {\n block type A net 192.168.0.0/16\n}", &[], "www.example.org.", "192.167.0.2", A, Got::Next),
        ("Blacklist 2 BLOCKED", "acl example.org {\n block type * net 192.168.0.0/16\n}", &[], "www.example.org.", "192.168.0.2", AAAA, BLOCKED),
        ("Blacklist 3 BLOCKED", "acl example.org {\n block type A\n}", &[], "www.example.org.", "10.1.0.2", A, BLOCKED),
        ("Blacklist 3 ALLOWED", "acl example.org {\n block type A\n}", &[], "www.example.org.", "10.1.0.2", AAAA, Got::Next),
        ("Blacklist 4 Single IP BLOCKED", "acl example.org {\n block type A net 192.168.1.2\n}", &[], "www.example.org.", "192.168.1.2", A, BLOCKED),
        ("Blacklist 4 Single IP ALLOWED", "acl example.org {\n block type A net 192.168.1.2\n}", &[], "www.example.org.", "192.168.1.3", A, Got::Next),
        ("Filter 1 FILTERED", "acl example.org {\n filter type A net 192.168.0.0/16\n}", &[], "www.example.org.", "192.168.0.2", A, FILTERED),
        ("Filter 1 ALLOWED", "acl example.org {\n filter type A net 192.168.0.0/16\n}", &[], "www.example.org.", "192.167.0.2", A, Got::Next),
        ("Whitelist 1 ALLOWED", "acl example.org {\n allow net 192.168.0.0/16\n block\n}", &[], "www.example.org.", "192.168.0.2", A, Got::Next),
        ("Whitelist 1 REFUSED", "acl example.org {\n allow type * net 192.168.0.0/16\n block\n}", &[], "www.example.org.", "10.1.0.2", A, BLOCKED),
        ("Drop 1 DROPPED", "acl example.org {\n drop net 192.168.0.0/16\n}", &[], "www.example.org.", "192.168.0.2", A, Got::Dropped),
        ("Subnet-Order 1 REFUSED", "acl example.org {\n block net 192.168.1.0/24\n drop net 192.168.0.0/16\n}", &[], "www.example.org.", "192.168.1.2", A, BLOCKED),
        ("Subnet-Order 2 DROPPED", "acl example.org {\n drop net 192.168.0.0/16\n block net 192.168.1.0/24\n}", &[], "www.example.org.", "192.168.1.1", A, Got::Dropped),
        ("Drop-Type 1 DROPPED", "acl example.org {\n drop type A\n allow net 192.168.0.0/16\n}", &[], "www.example.org.", "192.168.1.1", A, Got::Dropped),
        ("Drop-Type 2 ALLOWED", "acl example.org {\n drop type A\n allow net 192.168.0.0/16\n}", &[], "www.example.org.", "192.168.1.1", AAAA, Got::Next),
        ("Fine-Grained 1 REFUSED", "acl a.example.org {\n block type * net 192.168.1.0/24\n}", &["example.org"], "a.example.org.", "192.168.1.2", A, BLOCKED),
        ("Fine-Grained 1 ALLOWED", "acl a.example.org {\n block net 192.168.1.0/24\n}", &["example.org"], "www.example.org.", "192.168.1.2", A, Got::Next),
        ("Fine-Grained 2 REFUSED", "acl example.org {\n block net 192.168.1.0/24\n}", &["example.org"], "a.example.org.", "192.168.1.2", A, BLOCKED),
        ("Fine-Grained 2 ALLOWED", "acl {\n block net 192.168.1.0/24\n}", &["example.org"], "a.example.com.", "192.168.1.2", A, Got::Next),
        ("Fine-Grained 3 REFUSED", "acl a.example.org {\n block net 192.168.1.0/24\n}\nacl b.example.org {\n block type * net 192.168.2.0/24\n}", &["example.org"], "b.example.org.", "192.168.2.2", A, BLOCKED),
        ("Fine-Grained 3 ALLOWED", "acl a.example.org {\n block net 192.168.1.0/24\n}\nacl b.example.org {\n block net 192.168.2.0/24\n}", &["example.org"], "b.example.org.", "192.168.1.2", A, Got::Next),
        // IPv6.
        ("Blacklist 1 BLOCKED IPv6", "acl example.org {\n block type A net 2001:db8:abcd:0012::0/64\n}", &[], "www.example.org.", "2001:db8:abcd:0012::1230", A, BLOCKED),
        ("Blacklist 1 ALLOWED IPv6", "acl example.org {\n block type A net 2001:db8:abcd:0012::0/64\n}", &[], "www.example.org.", "2001:db8:abcd:0013::0", A, Got::Next),
        ("Blacklist 2 BLOCKED IPv6", "acl example.org {\n block type A\n}", &[], "www.example.org.", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", A, BLOCKED),
        ("Blacklist 3 Single IP BLOCKED IPv6", "acl example.org {\n block type A net 2001:0db8:85a3:0000:0000:8a2e:0370:7334\n}", &[], "www.example.org.", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", A, BLOCKED),
        ("Blacklist 3 Single IP ALLOWED IPv6", "acl example.org {\n block type A net 2001:0db8:85a3:0000:0000:8a2e:0370:7334\n}", &[], "www.example.org.", "2001:0db8:85a3:0000:0000:8a2e:0370:7335", A, Got::Next),
        ("Fine-Grained 1 REFUSED IPv6", "acl a.example.org {\n block type * net 2001:db8:abcd:0012::0/64\n}", &["example.org"], "a.example.org.", "2001:db8:abcd:0012:2019::0", A, BLOCKED),
        ("Fine-Grained 1 ALLOWED IPv6", "acl a.example.org {\n block net 2001:db8:abcd:0012::0/64\n}", &["example.org"], "www.example.org.", "2001:db8:abcd:0012:2019::0", A, Got::Next),
        ("Drop 1 DROPPED IPV6", "acl example.org {\n drop net 2001:0db8:85a3:0000:0000:8a2e:0370:7334\n}", &[], "www.example.org.", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", AAAA, Got::Dropped),
        ("Subnet-Order 1 REFUSED IPv6", "acl example.org {\n block net 2001:db8:abcd:0012:8000::/66\n drop net 2001:db8:abcd:0012::0/64\n}", &[], "www.example.org.", "2001:db8:abcd:0012:8000::1", AAAA, BLOCKED),
        ("Subnet-Order 2 DROPPED IPv6", "acl example.org {\n drop net 2001:db8:abcd:0012::0/64\n block net 2001:db8:abcd:0012:8000::/66\n}", &[], "www.example.org.", "2001:db8:abcd:0012:8000::1", AAAA, Got::Dropped),
        ("Drop-Type 1 DROPPED IPv6", "acl example.org {\n drop type A\n allow net 2001:db8:85a3:0000::0/64\n}", &[], "www.example.org.", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", A, Got::Dropped),
        ("Drop-Type 2 ALLOWED IPv6", "acl example.org {\n drop type A\n allow net 2001:db8:85a3:0000::0/64\n}", &[], "www.example.org.", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", AAAA, Got::Next),
    ];
    for (name, config, zones, qname, ip, qtype, want) in cases {
        let a = acl(config, zones);
        assert_eq!(&ask(&a, qname, *qtype, addr(ip)), want, "{name}");
    }
}

/// CoreDNS's "Blacklist Address%ifname": a link-local client's interface does not stop the
/// match.
#[test]
fn a_scoped_ipv6_client_is_matched_by_its_address() {
    let a = acl(
        "acl example.org {\n block type AAAA net 2001:0db8:85a3:0000:0000:8a2e:0370:7334\n}",
        &[],
    );
    let ip: Ipv6Addr = "2001:0db8:85a3:0000:0000:8a2e:0370:7334".parse().unwrap();
    let client = SocketAddr::V6(SocketAddrV6::new(ip, 53000, 0, 2));
    assert_eq!(ask(&a, "www.example.org.", rtype::AAAA, client), BLOCKED);
}

/// An IPv4 client on a dual-stack socket (`::ffff:a.b.c.d`) is matched as IPv4, as Go sees it.
#[test]
fn an_ipv4_mapped_client_is_an_ipv4_client() {
    let a = acl("acl {\n block net 192.168.0.0/16\n}", &[]);
    assert_eq!(ask(&a, "x.", rtype::A, addr("::ffff:192.168.3.4")), BLOCKED);
    assert_eq!(ask(&a, "x.", rtype::A, addr("::ffff:10.0.0.1")), Got::Next);
}

/// The client's EDNS is fitted: its DO bit, not the 4096/DO that acl writes; the EDE stays.
#[test]
fn the_reply_opt_follows_an_edns_client() {
    let a = acl("acl {\n block type A\n filter type AAAA\n}", &[]);
    for (qtype, rcode, ede) in [(rtype::A, REFUSED, 15), (rtype::AAAA, NOERROR, 17)] {
        let packet = query("x.example.", qtype, true);
        let want = Got::Reply {
            rcode,
            ede: Some(ede),
            do_bit: false,
        };
        assert_eq!(serve(&a, &packet, addr("127.0.0.1"), true), want);
        assert_eq!(serve(&a, &packet, addr("127.0.0.1"), false), want);
    }
}

/// Zones are matched case-insensitively and on label boundaries, the most specific zone of
/// a rule naming the `zone` label.
#[test]
fn zones_match_on_label_boundaries_in_any_case() {
    let a = acl("acl example.org {\n block\n}", &[]);
    let c = addr("10.0.0.1");
    assert_eq!(ask(&a, "WWW.Example.ORG.", rtype::A, c), BLOCKED);
    assert_eq!(ask(&a, "example.org.", rtype::A, c), BLOCKED);
    assert_eq!(ask(&a, "badexample.org.", rtype::A, c), Got::Next);
    assert_eq!(ask(&a, "org.", rtype::A, c), Got::Next);
}

/// A rule whose policies do not match leaves the query to the next rule; `allow` ends the
/// checking, so a later rule's block is not reached.
#[test]
fn rules_are_asked_in_order_and_allow_ends_it() {
    let a = acl(
        "acl {\n filter type TXT\n}\nacl {\n allow net 10.0.0.0/8\n}\nacl {\n block\n}",
        &[],
    );
    assert_eq!(ask(&a, "x.", rtype::TXT, addr("10.1.1.1")), FILTERED);
    assert_eq!(ask(&a, "x.", rtype::A, addr("10.1.1.1")), Got::Next);
    assert_eq!(ask(&a, "x.", rtype::A, addr("11.1.1.1")), BLOCKED);
}

/// A query no rule decides goes on; and one that an acl without policies sees.
#[test]
fn no_matching_policy_allows() {
    let a = acl("acl", &[]);
    assert_eq!(ask(&a, "x.", rtype::A, addr("10.1.1.1")), Got::Next);
}

/// Several type and net sections add up; `*` and miekg's `None` are every type.
#[test]
fn sections_add_up() {
    let a = acl(
        "acl {\n block type A net 10.0.0.0/8 type MX net 2001:db8::/32\n drop type None net 192.0.2.1\n}",
        &[],
    );
    assert_eq!(ask(&a, "x.", rtype::MX, addr("10.0.0.1")), BLOCKED);
    assert_eq!(ask(&a, "x.", rtype::A, addr("2001:db8::1")), BLOCKED);
    assert_eq!(ask(&a, "x.", rtype::TXT, addr("10.0.0.1")), Got::Next);
    assert_eq!(ask(&a, "x.", rtype::SRV, addr("192.0.2.1")), Got::Dropped);
    assert_eq!(ask(&a, "x.", rtype::SRV, addr("192.0.2.2")), Got::Next);
}

/// A query that the next plugin cannot answer at once gets `None` from `serve_now`, with
/// nothing written and nothing counted, and is counted once `serve` has served it.
#[test]
fn allowed_queries_are_counted_once_served() {
    struct Later;
    impl Handler for Later {
        async fn serve(&self, _req: &mut Request<'_>) -> Outcome {
            Ok(Status::rcode(TO_NEXT))
        }
        fn is_end(&self) -> bool {
            false
        }
        fn after_batch(&self) {}
    }
    let a = acl("acl {\n block net 10.0.0.0/8\n}", &[]);
    let server = "dns://:5301";
    let count = || {
        ringdns_plugin::metrics::registry::collect()
            .get("coredns_acl_allowed_requests_total", &[server, ""])
            .map_or(0.0, |v| v.count())
    };
    let packet = query("x.", rtype::A, false);
    let q = ringdns_plugin::wire::Query::parse(&packet).unwrap();
    let mut reply = Vec::new();
    let c = addr("192.0.2.1");
    let mut req = Request::new(
        q,
        c,
        c,
        ringdns_plugin::Proto::Udp,
        ".",
        server,
        &mut reply,
        false,
    );
    assert!(a.serve_now(&mut req, &Later).is_none());
    assert_eq!(count(), 0.0, "not counted when not served");
    let s = futures_block_on(a.serve(&mut req, &Later)).expect("served");
    assert_eq!(s.rcode, TO_NEXT);
    assert_eq!(count(), 1.0);
    assert!(reply.is_empty());
}

fn futures_block_on<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    match f
        .as_mut()
        .poll(&mut Context::from_waker(std::task::Waker::noop()))
    {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("pending"),
    }
}

/// Denials are counted by action, listener and the matched zone.
#[test]
fn denials_are_counted_by_zone() {
    let a = acl(
        "acl a.example.org example.org {\n block net 10.0.0.1\n filter net 10.0.0.2\n drop net 10.0.0.3\n}",
        &[],
    );
    // A listener of this test's own: the registry is the process's, shared with the
    // other tests.
    let server = "dns://:5302";
    for ip in ["10.0.0.1", "10.0.0.2", "10.0.0.3"] {
        for name in ["x.a.example.org.", "b.example.org.", "a.example.org."] {
            let packet = query(name, rtype::A, false);
            let q = ringdns_plugin::wire::Query::parse(&packet).unwrap();
            let mut reply = Vec::new();
            let c = addr(ip);
            let mut req = Request::new(
                q,
                c,
                c,
                ringdns_plugin::Proto::Udp,
                ".",
                server,
                &mut reply,
                false,
            );
            let next = ringdns_testkit::Next(TO_NEXT);
            assert!(a.serve_now(&mut req, &next).is_some());
        }
    }
    let page = ringdns_plugin::metrics::registry::collect();
    for family in ["blocked", "filtered", "dropped"] {
        let name = format!("coredns_acl_{family}_requests_total");
        for (zone, n) in [("a.example.org.", 2.0), ("example.org.", 1.0)] {
            let v = page.get(&name, &[server, zone, ""]).map(|v| v.count());
            assert_eq!(v, Some(n), "{name} {zone}");
        }
    }
    let allowed = page.get("coredns_acl_allowed_requests_total", &[server, ""]);
    assert!(allowed.is_none(), "nothing allowed: {allowed:?}");
}

fn setup_err(config: &str) -> Option<String> {
    ringdns_testkit::config_with_zones::<Acl>(&format!(". {{\n{config}\n}}\n")).err()
}

#[test]
fn coredns_setup_cases() {
    #[rustfmt::skip]
    let cases: &[(&str, &str, bool)] = &[
        ("Blacklist 1", "acl {\n block type A net 192.168.0.0/16\n}", false),
        ("Blacklist 2", "acl {\n block type * net 192.168.0.0/16\n}", false),
        ("Blacklist 3", "acl {\n block type A net *\n}", false),
        ("Blacklist 4", "acl {\n allow type * net 192.168.1.0/24\n block type * net 192.168.0.0/16\n}", false),
        ("Filter 1", "acl {\n filter type A net 192.168.0.0/16\n}", false),
        ("Whitelist 1", "acl {\n allow type * net 192.168.0.0/16\n block type * net *\n}", false),
        ("Drop 1", "acl {\n drop type * net 192.168.0.0/16\n}", false),
        ("fine-grained 1", "acl a.example.org {\n block type * net 192.168.1.0/24\n}", false),
        ("fine-grained 2", "acl a.example.org {\n block type * net 192.168.1.0/24\n}\nacl b.example.org {\n block type * net 192.168.2.0/24\n}", false),
        ("Multiple Networks 1", "acl example.org {\n block type * net 192.168.1.0/24 192.168.3.0/24\n}", false),
        ("Multiple Qtypes 1", "acl example.org {\n block type TXT ANY CNAME net 192.168.3.0/24\n}", false),
        ("Missing argument 1", "acl {\n block A net 192.168.0.0/16\n}", true),
        ("Missing argument 2", "acl {\n block type net 192.168.0.0/16\n}", true),
        ("Illegal argument 1", "acl {\n block type ABC net 192.168.0.0/16\n}", true),
        ("Illegal argument 2", "acl {\n blck type A net 192.168.0.0/16\n}", true),
        ("Illegal argument 3", "acl {\n block type A net 192.168.0/16\n}", true),
        ("Illegal argument 4", "acl {\n block type A net 192.168.0.0/33\n}", true),
        ("Blacklist 1 IPv6", "acl {\n block type A net 2001:0db8:85a3:0000:0000:8a2e:0370:7334\n}", false),
        ("Blacklist 2 IPv6", "acl {\n block type * net 2001:db8:85a3::8a2e:370:7334\n}", false),
        ("Blacklist 3 IPv6", "acl {\n block type A\n}", false),
        ("Blacklist 4 IPv6", "acl {\n allow net 2001:db8:abcd:0012::0/64\n block net 2001:db8:abcd:0012::0/48\n}", false),
        ("Filter 1 IPv6", "acl {\n filter type A net 2001:0db8:85a3:0000:0000:8a2e:0370:7334\n}", false),
        ("Whitelist 1 IPv6", "acl {\n allow net 2001:db8:abcd:0012::0/64\n block\n}", false),
        ("Drop 1 IPv6", "acl {\n drop net 2001:db8:abcd:0012::0/64\n}", false),
        ("fine-grained 1 IPv6", "acl a.example.org {\n block net 2001:db8:abcd:0012::0/64\n}", false),
        ("fine-grained 2 IPv6", "acl a.example.org {\n block net 2001:db8:abcd:0012::0/64\n}\nacl b.example.org {\n block net 2001:db8:abcd:0013::0/64\n}", false),
        ("Multiple Networks 1 IPv6", "acl example.org {\n block net 2001:db8:abcd:0012::0/64 2001:db8:85a3::8a2e:370:7334/64\n}", false),
        ("Illegal argument 1 IPv6", "acl {\n block type A net 2001::85a3::8a2e:370:7334\n}", true),
        ("Illegal argument 2 IPv6", "acl {\n block type A net 2001:db8:85a3:::8a2e:370:7334\n}", true),
    ];
    for (name, config, want_err) in cases {
        let err = setup_err(config);
        assert_eq!(err.is_some(), *want_err, "{name}: {err:?}");
    }
}

/// CoreDNS's texts, at the line of the policy.
#[test]
fn setup_errors_read_as_coredns_words_them() {
    for (config, msg) in [
        (
            "acl {\n block A net 192.168.0.0/16\n}",
            "Corefile:3 - Error during parsing: plugin/acl: unexpected token \"A\"; expect 'type | net'",
        ),
        (
            "acl {\n block type net 192.168.0.0/16\n}",
            "Corefile:3 - Error during parsing: plugin/acl: no token specified in \"type\" section",
        ),
        (
            "acl {\n block type ABC\n}",
            "Corefile:3 - Error during parsing: plugin/acl: unexpected token \"ABC\"; expect legal QTYPE",
        ),
        (
            "acl {\n block type a\n}",
            "Corefile:3 - Error during parsing: plugin/acl: unexpected token \"a\"; expect legal QTYPE",
        ),
        (
            "acl {\n blck type A\n}",
            "Corefile:3 - Error during parsing: plugin/acl: unexpected token \"blck\"; expect 'allow', 'block', 'filter' or 'drop'",
        ),
        (
            "acl {\n block net 192.168.0/16\n}",
            "Corefile:3 - Error during parsing: plugin/acl: illegal CIDR notation \"192.168.0/16\"",
        ),
        (
            "acl {\n block net 10.0.0.1\n drop NET 10.0.0.300\n}",
            "Corefile:4 - Error during parsing: plugin/acl: illegal CIDR notation \"10.0.0.300/32\"",
        ),
        (
            "acl {\n block net 2001::85a3::1\n}",
            "Corefile:3 - Error during parsing: plugin/acl: illegal CIDR notation \"2001::85a3::1/128\"",
        ),
        (
            "acl {\n block type A net\n}",
            "Corefile:3 - Error during parsing: plugin/acl: no token specified in \"net\" section",
        ),
    ] {
        assert_eq!(setup_err(config).as_deref(), Some(msg), "{config}");
    }
}

/// As CoreDNS, `*` ends its section: what follows it on that section is not read.
#[test]
fn a_star_ends_its_section() {
    assert_eq!(
        setup_err("acl {\n block type * BOGUS net * 10.0.0.300\n}"),
        None
    );
}

#[test]
fn coredns_normalize_cases() {
    assert_eq!(setup::normalize("10.218.10.8/24"), "10.218.10.8/24");
    assert_eq!(setup::normalize("10.218.10.8"), "10.218.10.8/32");
    assert_eq!(
        setup::normalize("2001:0db8:85a3:0000:0000:8a2e:0370:7334"),
        "2001:0db8:85a3:0000:0000:8a2e:0370:7334/128"
    );
}

/// The block's zones are a rule's zones when it names none; reverse zones of CIDR keys too.
#[test]
fn zones_default_to_the_blocks() {
    let a = plugin("example.org 10.0.0.0/8 {\n acl {\n block\n }\n}\n");
    let c = addr("127.0.0.1");
    assert_eq!(ask(&a, "a.example.org.", rtype::A, c), BLOCKED);
    assert_eq!(ask(&a, "1.0.0.10.in-addr.arpa.", rtype::PTR, c), BLOCKED);
    assert_eq!(ask(&a, "example.net.", rtype::A, c), Got::Next);
}
