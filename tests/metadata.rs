//! metadata: the real binary, in front of forward to another ringdns, logs what plugins
//! publish through `{/label}` placeholders (forward's `forward/upstream`) over UDP and TCP,
//! `-` for a label nobody set and in blocks without metadata or outside its zones; a bad
//! `metadata` line is a start error with `FILE:LINE`. file, auto and secondary publish
//! `zone/wildcard` for answers a wildcard synthesised, and cache publishes it again on hits.

mod common;

use common::{Server, query, run_expect_failure, tcp_exchange, udp_exchange};
use std::time::Duration;

const FORMAT: &str = "\"{name} {proto} up={/forward/upstream} none={/none/set}\"";

/// An upstream answering whoami, and a server forwarding to it with `metadata` (its
/// arguments `meta`, or none at all when `None`) and log in front.
fn start(meta: Option<&str>) -> (Server, Server) {
    let up = Server::start(|p| format!(".:{p} {{\n whoami\n}}\n"));
    let upstream = up.port;
    let meta = meta.map_or(String::new(), |z| format!(" metadata {z}\n"));
    let s = Server::start(|p| {
        format!(".:{p} {{\n{meta} log . {FORMAT}\n forward . 127.0.0.1:{upstream}\n}}\n")
    });
    (up, s)
}

fn ask(s: &Server, name: &str) {
    let q = query(0x4d44, name, 1);
    assert!(udp_exchange(s.port, &q, Duration::from_secs(2)).is_some());
    assert_eq!(tcp_exchange(s.port, &[q]).len(), 1);
}

#[test]
fn log_prints_the_upstream_forward_published() {
    let (up, s) = start(Some(""));
    ask(&s, "www.example.org.");
    for proto in ["udp", "tcp"] {
        let line = format!("www.example.org. {proto} up=127.0.0.1:{} none=-", up.port);
        assert!(
            s.wait_stdout(&line, Duration::from_secs(3)),
            "{line} in\n{}",
            s.stdout()
        );
    }
}

#[test]
fn no_metadata_plugin_or_another_zone_prints_dashes() {
    for meta in [None, Some("example.net")] {
        let (_up, s) = start(meta);
        ask(&s, "www.example.org.");
        for proto in ["udp", "tcp"] {
            let line = format!("www.example.org. {proto} up=- none=-");
            assert!(
                s.wait_stdout(&line, Duration::from_secs(3)),
                "{meta:?}: {line} in\n{}",
                s.stdout()
            );
        }
    }
}

#[test]
fn a_bad_metadata_line_is_a_start_error() {
    for (text, line) in [
        (".:0 {\n metadata\n metadata\n}\n", 3),
        (".:0 {\n whoami\n metadata {\n  ttl 5\n }\n}\n", 4),
    ] {
        let (code, err) = run_expect_failure(text);
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains(&format!(
                ":{line} - Error during parsing: plugin/metadata: Wrong argument count"
            )),
            "{text}: {err}"
        );
    }
}

/// A zone with wildcards: one with records, a wildcard CNAME inside and one leaving the
/// zone, a CNAME whose target a wildcard answers, and a `*` that is only an empty
/// non-terminal.
const WILD_ZONE: &str = "$ORIGIN example.org.\n$TTL 300\n\
@ IN SOA ns1 hostmaster 1 2h 30m 2w 5m\n@ IN NS ns1\nns1 IN A 192.0.2.53\n\
www IN A 192.0.2.80\n*.wild IN A 192.0.2.77\n*.cw IN CNAME www\n\
*.out IN CNAME target.example.net.\nchain IN CNAME x.wild\na.*.ent IN A 192.0.2.90\n";

/// The log line of each query: its ID, name, type and the wildcard published for it.
const WILD_LOG: &str = "log . \"q{>id} {name} {type} {/zone/wildcard} end\"";

/// Asks `name`/`qtype` with `id` over UDP; waits for the log line showing `wildcard`
/// (`-`: none) and returns whether the answer was authoritative (AA clear: a cache hit).
#[track_caller]
fn logged(s: &Server, id: u16, name: &str, qtype: u16, wildcard: &str) -> bool {
    let m = common::ask(s.port, &query(id, name, qtype));
    let t = if qtype == 28 { "AAAA" } else { "A" };
    let line = format!("q{id} {name} {t} {wildcard} end");
    assert!(
        s.wait_stdout(&line, Duration::from_secs(3)),
        "{line} in\n{}",
        s.stdout()
    );
    m.metadata.authoritative
}

/// file behind cache, with example.net (the target of the wildcard CNAME leaving the zone)
/// answered by whoami in another block, on one core (one cache).
#[test]
fn file_publishes_the_wildcard_and_the_cache_publishes_it_again_on_hits() {
    let dir = common::TempDir::new();
    let db = dir.write("db.example.org", WILD_ZONE);
    let s = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\nexample.org:{p} {{\n metadata\n {WILD_LOG}\n cache\n file {}\n}}\n\
             example.net:{p} {{\n whoami\n}}\n",
            db.display()
        )
    });
    let mut id = 100;
    for (name, qtype, wildcard) in [
        // An answer from the wildcard, and NODATA from it (CoreDNS: `wildElem != nil`).
        ("a.wild.example.org.", 1, "*.wild.example.org."),
        ("b.wild.example.org.", 28, "*.wild.example.org."),
        // Wildcard CNAMEs: followed inside the zone, and leaving it (the deferred pass).
        ("x.cw.example.org.", 1, "*.cw.example.org."),
        ("x.out.example.org.", 1, "*.out.example.org."),
        // No wildcard: a plain answer, NXDOMAIN, a CNAME whose target a wildcard answers
        // (CoreDNS looks the target up through the server, with metadata of its own), a
        // `*` that is an empty non-terminal.
        ("www.example.org.", 1, "-"),
        ("nope.example.org.", 1, "-"),
        ("chain.example.org.", 1, "-"),
        ("x.ent.example.org.", 1, "-"),
    ] {
        id += 1;
        assert!(
            logged(&s, id, name, qtype, wildcard),
            "{name}: from the zone"
        );
        // Again: a hit (AA clear), which publishes what was stored with the reply.
        id += 1;
        assert!(
            !logged(&s, id, name, qtype, wildcard),
            "{name}: a cache hit"
        );
    }
}

/// Without the metadata plugin nothing is collected: the wildcard answer logs `-`.
#[test]
fn without_metadata_the_wildcard_is_not_published() {
    let dir = common::TempDir::new();
    let db = dir.write("db.example.org", WILD_ZONE);
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n {WILD_LOG}\n file {}\n}}\n",
            db.display()
        )
    });
    assert!(logged(&s, 1, "a.wild.example.org.", 1, "-"));
}

/// auto and secondary answer from the same zone code, and publish the same.
#[test]
fn auto_and_secondary_publish_the_wildcard() {
    let dir = common::TempDir::new();
    dir.write("db.example.org", WILD_ZONE);
    let auto = Server::start(|p| {
        format!(
            "example.org:{p} {{\n metadata\n {WILD_LOG}\n auto {{\n  directory {}\n }}\n}}\n",
            dir.0.display()
        )
    });
    assert!(logged(
        &auto,
        1,
        "a.wild.example.org.",
        1,
        "*.wild.example.org."
    ));
    assert!(logged(&auto, 2, "www.example.org.", 1, "-"));
    // The secondary transfers the zone from another ringdns serving it with file.
    let db = dir.0.join("db.example.org");
    let primary = Server::start(|p| {
        format!(
            "example.org:{p} {{\n file {}\n transfer {{\n  to *\n }}\n}}\n",
            db.display()
        )
    });
    let from = primary.port;
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n metadata\n {WILD_LOG}\n secondary {{\n  transfer from 127.0.0.1:{from}\n }}\n}}\n"
        )
    });
    common::eventually(s.port, &query(3, "www.example.org.", 1), |m| {
        !m.answers.is_empty()
    });
    assert!(logged(
        &s,
        4,
        "a.wild.example.org.",
        1,
        "*.wild.example.org."
    ));
    assert!(logged(&s, 5, "www.example.org.", 1, "-"));
}
