//! chaos: the real binary answers CH TXT version.bind, version.server, authors.bind,
//! hostname.bind and id.server over UDP and TCP on loopback as CoreDNS's chaos does (the
//! server's own name and version by default, the Corefile's version and authors, the host's
//! name), lets every other query through, opens its listener to CH-class queries (which a
//! listener without chaos or forward refuses), and refuses bad lines at start with
//! `FILE:LINE`.
//!
//! Replies are read with hickory-proto (an implementation other than the server's).

mod common;

use common::{Server, query_full, run_expect_failure, udp_and_tcp};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{DNSClass, RData, RecordType};

const CH: u16 = 3;
const TXT: u16 = 16;

/// The TXT strings of the reply to `name` CH TXT, the same over UDP and TCP but for the
/// order of authors, sorted.
fn txt(port: u16, name: &str) -> Vec<String> {
    let q = query_full(0x0c0c, name, TXT, CH, None);
    let (udp, tcp) = udp_and_tcp(port, &q);
    let mut seen = Vec::new();
    for reply in [udp, tcp] {
        let m = Message::from_vec(&reply).expect("the reply parses");
        assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{name}");
        let mut strings: Vec<String> = m
            .answers
            .iter()
            .map(|r| {
                assert_eq!(
                    r.name.to_string(),
                    name,
                    "owned by the question, in its case"
                );
                assert_eq!((r.dns_class, r.ttl), (DNSClass::CH, 0), "{r:?}");
                let RData::TXT(t) = &r.data else {
                    panic!("{r:?}")
                };
                assert_eq!(t.txt_data.len(), 1, "one string: {t:?}");
                String::from_utf8(t.txt_data[0].to_vec()).unwrap()
            })
            .collect();
        strings.sort();
        seen.push(strings);
    }
    assert_eq!(seen[0], seen[1], "{name}: UDP and TCP");
    seen.remove(0)
}

#[test]
fn the_server_is_named_by_its_own_name_and_version_by_default() {
    let s = Server::start(|p| format!(".:{p} {{\n chaos\n}}\n"));
    let own = format!("ringdns-{}", env!("CARGO_PKG_VERSION"));
    for name in ["version.bind.", "Version.Server."] {
        assert_eq!(txt(s.port, name), std::slice::from_ref(&own));
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(txt(s.port, "hostname.bind."), [host.trim_end()]);
    assert_eq!(txt(s.port, "ID.server."), [host.trim_end()]);
}

#[test]
fn the_corefiles_version_and_authors_are_answered() {
    let s = Server::start(|p| {
        format!(".:{p} {{\n chaos ringdns-001 \"Info Desk\" carol alice carol\n whoami\n}}\n")
    });
    assert_eq!(txt(s.port, "version.bind."), ["ringdns-001"]);
    assert_eq!(
        txt(s.port, "authors.bind."),
        ["Info Desk", "alice", "carol"]
    );
}

#[test]
fn other_queries_and_classes_go_on_to_the_next_plugin() {
    let s = Server::start(|p| format!(".:{p} {{\n chaos\n whoami\n}}\n"));
    for (name, qtype, class) in [
        ("version.bind.", TXT, 1),
        ("version.bind.", 1, CH),
        ("www.example.org.", TXT, CH),
    ] {
        let (udp, tcp) = udp_and_tcp(s.port, &query_full(7, name, qtype, class, None));
        for reply in [udp, tcp] {
            let m = Message::from_vec(&reply).unwrap();
            assert_eq!(m.metadata.response_code, ResponseCode::NoError);
            assert!(m.answers.is_empty(), "{name} {qtype} {class}: {m:?}");
            assert!(
                m.additionals
                    .iter()
                    .any(|r| r.record_type() == RecordType::SRV),
                "{name} {qtype} {class}: whoami answered: {m:?}"
            );
        }
    }
}

#[test]
fn a_listener_takes_ch_queries_only_when_one_of_its_blocks_has_chaos() {
    // Two blocks on one port, chaos in one: the listener is open to CH for both (as
    // CoreDNS's server), and the other block's plugin answers its CH queries.
    let open = Server::start(|p| {
        format!("version.bind:{p} {{\n chaos\n}}\nexample.org:{p} {{\n whoami\n}}\n")
    });
    assert_eq!(txt(open.port, "version.bind.").len(), 1);
    let q = query_full(8, "www.example.org.", 1, CH, None);
    let m = Message::from_vec(&udp_and_tcp(open.port, &q).0).unwrap();
    assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{m:?}");
    let closed = Server::start(|p| format!(".:{p} {{\n whoami\n}}\n"));
    let q = query_full(9, "version.bind.", TXT, CH, None);
    let (udp, tcp) = udp_and_tcp(closed.port, &q);
    for reply in [udp, tcp] {
        let m = Message::from_vec(&reply).unwrap();
        assert_eq!(m.metadata.response_code, ResponseCode::Refused, "{m:?}");
    }
}

#[test]
fn a_bad_chaos_line_is_a_start_error_with_its_line() {
    for (text, line, want) in [
        (
            ".:1053 {\n chaos v2 {\n  unknown\n }\n}\n",
            3,
            "plugin/chaos: unknown property 'unknown'",
        ),
        (
            ".:1053 {\n chaos v1\n chaos v2\n}\n",
            3,
            "plugin/chaos: this plugin can only be used once per Server Block",
        ),
    ] {
        let (code, err) = run_expect_failure(text);
        assert_eq!(code, 1, "exit status for:\n{text}\nstderr: {err}");
        let want = format!("Corefile:{line} - Error during parsing: {want}");
        assert!(err.contains(&want), "for:\n{text}\nwant {want:?} in: {err}");
    }
}
