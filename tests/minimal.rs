//! minimal: the real binary, in front of file's authoritative answers (and behind the cache),
//! sends positive replies over UDP and TCP with their answer section alone, while NXDOMAIN,
//! NODATA and referrals keep their authority and additional records; a bad `minimal` line is
//! a start error with `FILE:LINE`. Each reply is compared with the same server's reply
//! without minimal.
//!
//! Replies are read with hickory-proto (an implementation other than the server's).

mod common;

use common::{Server, free_port, query_full, run_expect_failure, udp_and_tcp};
use hickory_proto::op::{Message, ResponseCode};

const ZONE: &str = "$ORIGIN example.org.\n$TTL 1h\n\
@ IN SOA ns1 hostmaster 1 2h 30m 2w 5m\n@ IN NS ns1\n@ IN NS ns2\n@ IN MX 10 mail\n\
ns1 IN A 192.0.2.53\nns2 IN A 192.0.2.54\nmail IN A 192.0.2.25\nwww IN A 192.0.2.80\n\
sub IN NS ns.sub\nns.sub IN A 192.0.2.200\n";

/// A server for the zone, with `plugins` in front of file.
fn start(plugins: &str) -> Server {
    let port = free_port();
    let n = port.port;
    Server::try_start_with_files(
        port,
        &format!("example.org:{n} {{\n{plugins}\n file db.example.org\n}}\n"),
        &[],
        &[("db.example.org".to_string(), ZONE.as_bytes().to_vec())],
    )
    .unwrap()
}

/// (rcode, answers, authority, additional records other than the OPT, an OPT) of the
/// reply to `name qtype`, the same over UDP and TCP but for AA.
fn sections(
    port: u16,
    name: &str,
    qtype: u16,
    edns: bool,
) -> (ResponseCode, usize, usize, usize, bool) {
    let q = query_full(0x3131, name, qtype, 1, edns.then_some((1232, false)));
    let (mut udp, mut tcp) = udp_and_tcp(port, &q);
    // A cache hit clears AA (one transport may hit what the other stored): the rest is the
    // same.
    udp[2] &= !0x04;
    tcp[2] &= !0x04;
    assert_eq!(udp, tcp, "{name} {qtype}: the same over UDP and TCP");
    let m = Message::from_vec(&udp).expect("the reply parses");
    (
        m.metadata.response_code,
        m.answers.len(),
        m.authorities.len(),
        m.additionals.len(),
        m.edns.is_some(),
    )
}

#[test]
fn positive_replies_lose_authority_and_additional_and_the_rest_keep_them() {
    let full = start("");
    let minimal = start(" minimal");
    let cached = start(" cache\n minimal");
    for edns in [false, true] {
        for (name, qtype, stripped) in [
            ("example.org.", 15, true),
            ("www.example.org.", 1, true),
            ("example.org.", 2, true),
            ("nope.example.org.", 1, false),
            ("www.example.org.", 15, false),
            ("host.sub.example.org.", 1, false),
        ] {
            let (rc, an, ns, ar, opt) = sections(full.port, name, qtype, edns);
            assert_eq!(opt, edns);
            for port in [minimal.port, cached.port, cached.port] {
                let got = sections(port, name, qtype, edns);
                if stripped {
                    assert!(
                        ns + ar > 0,
                        "{name} {qtype}: file's reply has more to strip"
                    );
                    assert_eq!(got, (rc, an, 0, 0, edns), "{name} {qtype} edns {edns}");
                } else {
                    assert_eq!(got, (rc, an, ns, ar, edns), "{name} {qtype} edns {edns}");
                }
            }
        }
    }
}

#[test]
fn a_bad_minimal_line_is_a_start_error_with_its_line() {
    let text = ".:1053 {\n whoami\n minimal yes\n}\n";
    let (code, err) = run_expect_failure(text);
    assert_eq!(code, 1, "stderr: {err}");
    let want = "Corefile:3 - Error during parsing: plugin/minimal: Wrong argument count or unexpected line ending after 'yes'";
    assert!(err.contains(want), "want {want:?} in: {err}");
}
