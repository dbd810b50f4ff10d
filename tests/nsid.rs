//! nsid: the real binary puts its identifier in the NSID option (RFC 5001) of the replies to
//! queries that carry one, over UDP and TCP on loopback, cache hits included, and only to
//! those; a second `nsid` in a block is a start error with `FILE:LINE`.
//!
//! Replies are parsed with hickory-proto, their OPT options read with the server's own
//! record walker.

mod common;

use common::metrics::{scrape, scrape_until, value};
use common::{Server, free_port, query_full, run_expect_failure, udp_and_tcp};
use hickory_proto::op::{Message, ResponseCode};

const NSID: u16 = 3;
const COOKIE: u16 = 10;

/// `name A` with EDNS and `options` (code, data) in its OPT.
fn with_options(id: u16, name: &str, options: &[(u16, &[u8])]) -> Vec<u8> {
    let mut q = query_full(id, name, 1, 1, Some((1232, false)));
    let mut rd = Vec::new();
    for (c, d) in options {
        rd.extend_from_slice(&c.to_be_bytes());
        rd.extend_from_slice(&(d.len() as u16).to_be_bytes());
        rd.extend_from_slice(d);
    }
    // The OPT is the query's last record: its RDLENGTH is the packet's last two bytes.
    let n = q.len();
    q[n - 2..].copy_from_slice(&(rd.len() as u16).to_be_bytes());
    q.extend_from_slice(&rd);
    q
}

/// The options of a reply's OPT, `None` without one.
fn options(reply: &[u8]) -> Option<Vec<(u16, Vec<u8>)>> {
    let opt = ringdns::wire::records(reply)
        .unwrap()
        .map(Result::unwrap)
        .find(|r| r.rtype == 41)?;
    Some(
        ringdns::wire::EdnsOptions::new(&reply[opt.rdata])
            .map(|(c, d)| (c, d.to_vec()))
            .collect(),
    )
}

/// The replies to `packet` over UDP and TCP, each NOERROR.
fn both(port: u16, packet: &[u8]) -> [Vec<u8>; 2] {
    let (udp, tcp) = udp_and_tcp(port, packet);
    for r in [&udp, &tcp] {
        let m = Message::from_vec(r).expect("the reply parses");
        assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{m:?}");
    }
    [udp, tcp]
}

#[test]
fn only_queries_with_the_option_get_the_identifier() {
    let s = Server::start(|p| format!(".:{p} {{\n nsid Use The Force\n whoami\n}}\n"));
    for reply in both(s.port, &with_options(1, "example.org.", &[(NSID, b"")])) {
        assert_eq!(
            options(&reply).unwrap(),
            [(NSID, b"Use The Force".to_vec())]
        );
    }
    let q = with_options(2, "example.org.", &[(COOKIE, &[9; 8]), (NSID, b"")]);
    for reply in both(s.port, &q) {
        assert_eq!(
            options(&reply).unwrap(),
            [(COOKIE, vec![9; 8]), (NSID, b"Use The Force".to_vec())]
        );
    }
    for reply in both(
        s.port,
        &with_options(3, "example.org.", &[(COOKIE, &[9; 8])]),
    ) {
        assert_eq!(options(&reply).unwrap(), [(COOKIE, vec![9; 8])], "no NSID");
    }
    for reply in both(s.port, &query_full(4, "example.org.", 1, 1, None)) {
        assert_eq!(options(&reply), None, "no OPT without EDNS");
    }
}

#[test]
fn cache_hits_get_the_identifier_too() {
    let http = free_port();
    let h = http.port;
    drop(http);
    let s = Server::start(|p| {
        format!(
            // One core: each core has its own cache, and the hits are counted below.
            "{{\n workers 1\n}}\n.:{p} {{\n prometheus 127.0.0.1:{h}\n nsid\n cache\n erratic {{\n  drop 0\n }}\n}}\n"
        )
    });
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let host = host.trim_end().as_bytes().to_vec();
    let labels = [
        ("server", format!("dns://:{}", s.port)),
        ("zones", ".".to_string()),
        ("view", String::new()),
        ("type", "success".to_string()),
    ];
    let labels: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let hits = |t: &str| value(t, "coredns_cache_hits_total", &labels).unwrap_or(0.0);
    // The miss, stored without the option; then hits over UDP and TCP, which carry it.
    let [miss, _] = both(s.port, &with_options(5, "hit.example.org.", &[]));
    assert_eq!(options(&miss).unwrap(), []);
    let before = hits(&scrape(h));
    for reply in both(s.port, &with_options(6, "hit.example.org.", &[(NSID, b"")])) {
        assert_eq!(options(&reply).unwrap(), [(NSID, host.clone())]);
        let m = Message::from_vec(&reply).unwrap();
        assert_eq!(
            m.answers.len(),
            1,
            "erratic's answer, from the cache: {m:?}"
        );
    }
    let after = scrape_until(h, |t| hits(t) >= before + 2.0);
    assert_eq!(hits(&after), before + 2.0, "both were cache hits:\n{after}");
}

#[test]
fn a_second_nsid_in_a_block_is_a_start_error() {
    let text = ".:1053 {\n nsid a\n nsid b\n}\n";
    let (code, err) = run_expect_failure(text);
    assert_eq!(code, 1, "stderr: {err}");
    let want = "Corefile:3 - Error during parsing: plugin/nsid: this plugin can only be used once per Server Block";
    assert!(err.contains(want), "want {want:?} in: {err}");
}
