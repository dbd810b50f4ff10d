//! hosts: the real binary answers A, AAAA and PTR queries from a hosts file and inline
//! entries over real UDP and TCP on loopback, hands queries on as CoreDNS's hosts does,
//! picks up an edited or deleted file, exports its metrics, refuses bad configurations.
//! That its answers allocate nothing is shown in tests/alloc.rs, with the counting allocator.
//!
//! Queries are built with hickory-proto (an implementation other than the server's).
// Computing the layout of the whole chain's future (serve_inline, in process) nests deeper
// than the default limit, as in lib.rs and tests/alloc.rs.
#![recursion_limit = "512"]

mod common;

use common::{Server, TempDir, free_port, run_expect_failure};
use hickory_proto::op::{Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::{Name, RData, RecordType};
use std::path::Path;
use std::time::{Duration, Instant};

/// A query for `name` (in the case given) and `rtype`, RD set, no EDNS.
fn packet(id: u16, name: &str, rtype: RecordType) -> Vec<u8> {
    let mut m = Message::new(id, MessageType::Query, OpCode::Query);
    m.metadata.recursion_desired = true;
    m.add_query(Query::query(Name::from_ascii(name).unwrap(), rtype));
    m.to_vec().unwrap()
}

/// The reply to `name rtype` over UDP and over TCP, which must be the same bytes (but for
/// whoami's records); the UDP one parsed.
fn ask(port: u16, name: &str, rtype: RecordType) -> Message {
    let q = packet(0x4854, name, rtype);
    let (udp, tcp) = common::udp_and_tcp(port, &q);
    let m = Message::from_vec(&udp).expect("the reply parses");
    if m.additionals.is_empty() {
        assert_eq!(udp, tcp, "UDP and TCP replies differ for {name} {rtype}");
    } else {
        // whoami's: its records tell the transports apart.
        let t = Message::from_vec(&tcp).expect("the TCP reply parses");
        assert_eq!(t.metadata.response_code, m.metadata.response_code);
        assert_eq!(t.answers, m.answers);
        assert_eq!(t.additionals.len(), m.additionals.len());
    }
    assert_eq!(m.metadata.id, 0x4854);
    assert_eq!(m.metadata.message_type, MessageType::Response);
    // The question comes back as asked, case included.
    assert_eq!(m.queries.len(), 1);
    assert_eq!(m.queries[0].name().to_string(), name);
    m
}

fn rcode(m: &Message) -> ResponseCode {
    m.metadata.response_code
}

/// The answer section as text: `TTL DATA` per record; every owner is the question name in
/// the client's case, class IN.
fn answers(m: &Message) -> Vec<String> {
    let qname = m.queries[0].name().to_string();
    m.answers
        .iter()
        .map(|r| {
            assert_eq!(r.name.to_string(), qname, "the owner is the question name");
            assert_eq!(r.dns_class, hickory_proto::rr::DNSClass::IN);
            let data = match &r.data {
                RData::A(a) => a.0.to_string(),
                RData::AAAA(a) => a.0.to_string(),
                RData::PTR(p) => p.0.to_string(),
                other => panic!("unexpected record {other:?}"),
            };
            format!("{} {data}", r.ttl)
        })
        .collect()
}

/// An authoritative answer with `want` (`TTL DATA` each) and nothing else.
#[track_caller]
fn assert_answer(m: &Message, want: &[&str]) {
    assert_eq!(rcode(m), ResponseCode::NoError, "{m:?}");
    assert!(m.metadata.authoritative, "AA: {m:?}");
    assert!(!m.metadata.truncation);
    assert_eq!(answers(m), want);
    assert!(
        m.authorities.is_empty() && m.additionals.is_empty(),
        "{m:?}"
    );
}

/// NODATA as CoreDNS's hosts writes it: NOERROR, AA, every section empty.
#[track_caller]
fn assert_nodata(m: &Message) {
    assert_eq!(rcode(m), ResponseCode::NoError, "{m:?}");
    assert!(m.metadata.authoritative, "AA: {m:?}");
    assert!(m.answers.is_empty() && m.authorities.is_empty() && m.additionals.is_empty());
}

/// whoami's reply: the query reached the plugin after hosts.
#[track_caller]
fn assert_whoami(m: &Message) {
    assert_eq!(rcode(m), ResponseCode::NoError, "{m:?}");
    assert!(m.answers.is_empty(), "{m:?}");
    assert_eq!(m.additionals.len(), 2, "whoami's A and SRV: {m:?}");
    assert!(matches!(m.additionals[1].data, RData::SRV(_)), "{m:?}");
}

/// A Corefile with one worker and one root block holding `body`.
fn corefile(port: u16, body: &str) -> String {
    format!("{{\n workers 1\n}}\n.:{port} {{\n{body}\n}}\n")
}

fn start(body: &str) -> Server {
    let body = body.to_string();
    Server::start(move |p| corefile(p, &body))
}

/// Waits (at most 10 s) until `ok` holds for the reply to `name rtype` over both transports,
/// then checks that they give the same bytes.
#[track_caller]
fn eventually(port: u16, name: &str, rtype: RecordType, ok: impl Fn(&Message) -> bool) {
    common::eventually(port, &packet(0x4854, name, rtype), &ok);
    let m = ask(port, name, rtype);
    assert!(ok(&m), "{name} {rtype}: {m:?}");
}

/// Rewrites `path` with `text` and a modification time `ahead` seconds from now, so that
/// the change shows whatever the file system's time granularity.
fn rewrite(path: &Path, text: &str, ahead: u64) {
    std::fs::write(path, text).unwrap();
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(std::time::SystemTime::now() + Duration::from_secs(ahead))
        .unwrap();
}

const FILE: &str = "\
# The test's hosts file.
10.0.0.1        www.example.org www   # two names, one comment
2001:db8::1     www.example.org
::ffff:10.0.0.2 mapped.example.org
fe80::1%lo      scoped.example.org
10.0.0.3        *.apps.example.org
321.0.0.1       bogus.example.org
";

const PTR_V6: &str = "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.";

#[test]
fn a_aaaa_and_ptr_from_the_file_over_udp_and_tcp() {
    let dir = TempDir::new();
    let hosts = dir.write("hosts", FILE);
    let s = start(&format!(" hosts {}", hosts.display()));
    let p = s.port;

    assert_answer(
        &ask(p, "www.example.org.", RecordType::A),
        &["3600 10.0.0.1"],
    );
    assert_answer(
        &ask(p, "WwW.ExAmPlE.OrG.", RecordType::A),
        &["3600 10.0.0.1"],
    );
    assert_answer(&ask(p, "www.", RecordType::A), &["3600 10.0.0.1"]);
    assert_answer(
        &ask(p, "www.example.org.", RecordType::AAAA),
        &["3600 2001:db8::1"],
    );
    assert_answer(
        &ask(p, "1.0.0.10.in-addr.arpa.", RecordType::PTR),
        &["3600 www.example.org.", "3600 www."],
    );
    assert_answer(
        &ask(p, "1.0.0.10.IN-ADDR.ARPA.", RecordType::PTR),
        &["3600 www.example.org.", "3600 www."],
    );
    assert_answer(&ask(p, PTR_V6, RecordType::PTR), &["3600 www.example.org."]);
    // An IPv4-mapped address is IPv4.
    assert_answer(
        &ask(p, "mapped.example.org.", RecordType::A),
        &["3600 10.0.0.2"],
    );
    assert_answer(
        &ask(p, "2.0.0.10.in-addr.arpa.", RecordType::PTR),
        &["3600 mapped.example.org."],
    );
    // A zone-scoped address is served without its zone.
    assert_answer(
        &ask(p, "scoped.example.org.", RecordType::AAAA),
        &["3600 fe80::1"],
    );
    // A wildcard covers one label, not its own name.
    assert_answer(
        &ask(p, "Web.apps.example.org.", RecordType::A),
        &["3600 10.0.0.3"],
    );
    assert_eq!(
        rcode(&ask(p, "apps.example.org.", RecordType::A)),
        ResponseCode::ServFail
    );
    assert_eq!(
        rcode(&ask(p, "3.0.0.10.in-addr.arpa.", RecordType::PTR)),
        ResponseCode::ServFail,
        "no PTR for a wildcard (and no next plugin)"
    );
    // The bogus line is no entry.
    assert_eq!(
        rcode(&ask(p, "bogus.example.org.", RecordType::A)),
        ResponseCode::ServFail
    );
}

#[test]
fn nodata_for_a_known_name_and_servfail_for_an_unknown_one() {
    let dir = TempDir::new();
    let hosts = dir.write("hosts", FILE);
    let s = start(&format!(" hosts {}", hosts.display()));
    for rtype in [RecordType::MX, RecordType::TXT, RecordType::HTTPS] {
        assert_nodata(&ask(s.port, "www.example.org.", rtype));
    }
    // An IPv4-only name asked for IPv6.
    assert_nodata(&ask(s.port, "mapped.example.org.", RecordType::AAAA));
    assert_nodata(&ask(s.port, "x.apps.example.org.", RecordType::AAAA));
    // CoreDNS's hosts has no SOA to deny a name with: SERVFAIL, written by the server.
    let m = ask(s.port, "nothere.example.org.", RecordType::A);
    assert_eq!(rcode(&m), ResponseCode::ServFail);
    assert!(m.answers.is_empty());
    assert_eq!(
        rcode(&ask(s.port, "nothere.example.org.", RecordType::MX)),
        ResponseCode::ServFail
    );
}

#[test]
fn ttl_and_no_reverse() {
    let s = start(
        " hosts /nonexistent/ringdns-hosts-test {\n  10.0.0.1 a.test\n  2001:db8::1 a.test\n  ttl 60\n }",
    );
    assert_answer(&ask(s.port, "a.test.", RecordType::A), &["60 10.0.0.1"]);
    assert_answer(
        &ask(s.port, "a.test.", RecordType::AAAA),
        &["60 2001:db8::1"],
    );
    assert_answer(
        &ask(s.port, "1.0.0.10.in-addr.arpa.", RecordType::PTR),
        &["60 a.test."],
    );
    drop(s);

    // no_reverse: the PTR query is not hosts' any more and goes to the next plugin.
    let s = start(
        " hosts /nonexistent/ringdns-hosts-test {\n  10.0.0.1 a.test\n  2001:db8::1 a.test\n  no_reverse\n }\n whoami",
    );
    assert_answer(&ask(s.port, "a.test.", RecordType::A), &["3600 10.0.0.1"]);
    assert_whoami(&ask(s.port, "1.0.0.10.in-addr.arpa.", RecordType::PTR));
    assert_whoami(&ask(s.port, PTR_V6, RecordType::PTR));
}

#[test]
fn fallthrough_hands_unknown_names_to_the_next_plugin() {
    let dir = TempDir::new();
    let hosts = dir.write("hosts", FILE);
    let s = start(&format!(
        " hosts {} {{\n  fallthrough\n }}\n whoami",
        hosts.display()
    ));
    assert_whoami(&ask(s.port, "nothere.example.org.", RecordType::A));
    assert_whoami(&ask(s.port, "nothere.example.org.", RecordType::MX));
    // Known names are still hosts': records, or NODATA.
    assert_answer(
        &ask(s.port, "www.example.org.", RecordType::A),
        &["3600 10.0.0.1"],
    );
    assert_nodata(&ask(s.port, "www.example.org.", RecordType::TXT));
    // A reverse name nobody has goes on, with or without fallthrough.
    assert_whoami(&ask(s.port, "9.9.9.10.in-addr.arpa.", RecordType::PTR));
    drop(s);

    // Only the zones given fall through; with fallthrough_unsupported, the types hosts does
    // not serve go on too, for known names.
    let s = start(&format!(
        " hosts {} {{\n  fallthrough example.net\n  fallthrough_unsupported\n }}\n whoami",
        hosts.display()
    ));
    assert_whoami(&ask(s.port, "nothere.example.net.", RecordType::A));
    assert_eq!(
        rcode(&ask(s.port, "nothere.example.org.", RecordType::A)),
        ResponseCode::ServFail
    );
    assert_nodata(&ask(s.port, "www.example.org.", RecordType::TXT));
    drop(s);
    let s = start(&format!(
        " hosts {} {{\n  fallthrough\n  fallthrough_unsupported\n }}\n whoami",
        hosts.display()
    ));
    assert_whoami(&ask(s.port, "www.example.org.", RecordType::TXT));
    // AAAA is a type hosts serves: NODATA still.
    assert_nodata(&ask(s.port, "mapped.example.org.", RecordType::AAAA));
}

#[test]
fn names_outside_the_zones_go_to_the_next_plugin() {
    let dir = TempDir::new();
    let hosts = dir.write("hosts", "10.0.0.1 www.example.org www.example.net\n");
    let s = start(&format!(" hosts {} example.org\n whoami", hosts.display()));
    assert_answer(
        &ask(s.port, "www.example.org.", RecordType::A),
        &["3600 10.0.0.1"],
    );
    // Not in the zones: the line's other name was never read, and the query is whoami's.
    assert_whoami(&ask(s.port, "www.example.net.", RecordType::A));
    // PTR queries are looked up whatever their zone.
    assert_answer(
        &ask(s.port, "1.0.0.10.in-addr.arpa.", RecordType::PTR),
        &["3600 www.example.org."],
    );
}

#[test]
fn inline_entries_override_the_file() {
    let dir = TempDir::new();
    let hosts = dir.write(
        "hosts",
        "10.0.0.1 both.test file.test\n2001:db8::1 both.test\n10.0.0.7 shared.test\n",
    );
    let s = start(&format!(
        " hosts {} {{\n  10.9.9.9 both.test\n  10.0.0.7 inline.test\n }}",
        hosts.display()
    ));
    assert_answer(
        &ask(s.port, "both.test.", RecordType::A),
        &["3600 10.9.9.9"],
    );
    // Every record of the name is the inline lines': the file's AAAA is gone.
    assert_nodata(&ask(s.port, "both.test.", RecordType::AAAA));
    assert_answer(
        &ask(s.port, "file.test.", RecordType::A),
        &["3600 10.0.0.1"],
    );
    assert_answer(
        &ask(s.port, "1.0.0.10.in-addr.arpa.", RecordType::PTR),
        &["3600 file.test."],
    );
    assert_answer(
        &ask(s.port, "9.9.9.10.in-addr.arpa.", RecordType::PTR),
        &["3600 both.test."],
    );
    // Both PTR sources merge, the file's first.
    assert_answer(
        &ask(s.port, "7.0.0.10.in-addr.arpa.", RecordType::PTR),
        &["3600 shared.test.", "3600 inline.test."],
    );
}

#[test]
fn an_edited_file_is_read_again() {
    let dir = TempDir::new();
    let hosts = dir.write("hosts", "10.0.0.1 a.test\n");
    let s = start(&format!(" hosts {} {{\n  reload 1s\n }}", hosts.display()));
    assert_answer(&ask(s.port, "a.test.", RecordType::A), &["3600 10.0.0.1"]);
    assert_eq!(reload_threads(&s), 1);

    // The same size, a new modification time.
    rewrite(&hosts, "10.0.0.2 a.test\n", 1);
    eventually(s.port, "a.test.", RecordType::A, |m| {
        answers(m) == ["3600 10.0.0.2"]
    });
    // Another size.
    rewrite(&hosts, "10.0.0.3 a.test\n10.0.0.4 b.test\n", 2);
    eventually(s.port, "b.test.", RecordType::A, |m| {
        answers(m) == ["3600 10.0.0.4"]
    });
    assert_answer(&ask(s.port, "a.test.", RecordType::A), &["3600 10.0.0.3"]);
    // 10.0.0.1 is nobody's now: the PTR query goes on, and nothing follows.
    assert_eq!(
        rcode(&ask(s.port, "1.0.0.10.in-addr.arpa.", RecordType::PTR)),
        ResponseCode::ServFail
    );
}

#[test]
fn a_deleted_file_leaves_the_inline_entries() {
    let dir = TempDir::new();
    let hosts = dir.write("hosts", "10.0.0.1 file.test\n");
    let s = start(&format!(
        " hosts {} {{\n  10.0.0.9 inline.test\n  reload 1s\n }}",
        hosts.display()
    ));
    assert_answer(
        &ask(s.port, "file.test.", RecordType::A),
        &["3600 10.0.0.1"],
    );
    std::fs::remove_file(&hosts).unwrap();
    eventually(s.port, "file.test.", RecordType::A, |m| {
        rcode(m) == ResponseCode::ServFail
    });
    assert_answer(
        &ask(s.port, "inline.test.", RecordType::A),
        &["3600 10.0.0.9"],
    );
    assert_answer(
        &ask(s.port, "9.0.0.10.in-addr.arpa.", RecordType::PTR),
        &["3600 inline.test."],
    );
    // Restored: read again.
    rewrite(&hosts, "10.0.0.1 file.test\n", 1);
    eventually(s.port, "file.test.", RecordType::A, |m| {
        answers(m) == ["3600 10.0.0.1"]
    });
}

/// How many of the server's threads are hosts' reload threads (named by poll_while).
fn reload_threads(s: &Server) -> usize {
    std::fs::read_dir(format!("/proc/{}/task", s.pid()))
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|comm| comm.trim() == "ringdns-hosts")
        .count()
}

#[test]
fn reload_zero_reads_the_file_once() {
    let dir = TempDir::new();
    let hosts = dir.write("hosts", "10.0.0.1 a.test\n");
    let s = start(&format!(" hosts {} {{\n  reload 0\n }}", hosts.display()));
    assert_eq!(reload_threads(&s), 0, "no thread looks at the file");
    rewrite(&hosts, "10.0.0.2 a.test\n", 1);
    std::thread::sleep(Duration::from_millis(1500));
    assert_answer(&ask(s.port, "a.test.", RecordType::A), &["3600 10.0.0.1"]);
}

#[test]
fn a_corefile_reload_replaces_the_reload_thread() {
    let dir = TempDir::new();
    let hosts = dir.write("hosts", "10.0.0.1 a.test\n");
    // Bound to 127.0.0.1 alone: a socket loop keeps the server it last served until a query
    // comes to it (swap::View::refresh), so an idle wildcard IPv6 loop would keep the old
    // chains, and their reload thread, alive.
    let body = |extra: &str| {
        format!(
            " bind 127.0.0.1\n hosts {} {{\n  reload 1s\n{extra} }}",
            hosts.display()
        )
    };
    let s = start(&body(""));
    assert_eq!(reload_threads(&s), 1);
    let text = corefile(s.port, &body("  10.0.0.5 new.test\n"));
    let tmp = s.dir.write("Corefile.next", &text);
    std::fs::rename(tmp, s.dir.0.join("Corefile")).unwrap();
    s.signal("USR1");
    eventually(s.port, "new.test.", RecordType::A, |m| {
        answers(m) == ["3600 10.0.0.5"]
    });
    assert_answer(&ask(s.port, "a.test.", RecordType::A), &["3600 10.0.0.1"]);
    // The old configuration's thread ends once the old chains are gone.
    let t0 = Instant::now();
    while reload_threads(&s) != 1 {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "{} threads",
            reload_threads(&s)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // And the new one works.
    rewrite(&hosts, "10.0.0.2 a.test\n", 1);
    eventually(s.port, "a.test.", RecordType::A, |m| {
        answers(m) == ["3600 10.0.0.2"]
    });
}

#[test]
fn a_relative_file_is_under_root() {
    let dir = TempDir::new();
    dir.write("my.hosts", "10.0.0.1 rooted.test\n");
    let s = start(&format!(" root {}\n hosts my.hosts", dir.0.display()));
    assert_answer(
        &ask(s.port, "rooted.test.", RecordType::A),
        &["3600 10.0.0.1"],
    );
}

#[test]
fn metrics_count_the_entries_and_show_the_file_time() {
    let dir = TempDir::new();
    let hosts = dir.write("hosts", "10.0.0.1 a.test b.test\n2001:db8::1 a.test\n");
    let hp = free_port();
    let h = hp.port;
    let s = start(&format!(
        " prometheus 127.0.0.1:{h}\n hosts {} {{\n  10.0.0.9 c.test\n  reload 1s\n }}",
        hosts.display()
    ));
    let label = hosts.display().to_string();
    let entries = |page: &str| {
        common::metrics::value(page, "coredns_hosts_entries", &[("hostsfile", &label)])
    };
    // a.test 2, b.test 1, c.test 1; PTR 10.0.0.1 2, 2001:db8::1 1, 10.0.0.9 1.
    let page = common::metrics::scrape(h);
    assert_eq!(entries(&page), Some(8.0), "{page}");
    let mtime = std::fs::metadata(&hosts)
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let ts = common::metrics::value(&page, "coredns_hosts_reload_timestamp_seconds", &[])
        .expect("the timestamp series");
    assert!((ts - mtime).abs() < 1e-3, "{ts} {mtime}");

    rewrite(&hosts, "10.0.0.1 a.test\n", 5);
    let page = common::metrics::scrape_until(h, |p| entries(p) == Some(4.0));
    assert_eq!(entries(&page), Some(4.0), "{page}");
    let ts = common::metrics::value(&page, "coredns_hosts_reload_timestamp_seconds", &[]).unwrap();
    assert!((ts - (mtime + 5.0)).abs() < 1.0, "{ts} {mtime}");
    drop(s);
}

#[test]
fn bad_configurations_do_not_start() {
    for (body, line, want) in [
        (" hosts {\n  ttl 0\n }", 6, "ttl provided is invalid"),
        (" hosts {\n  ttl 65536\n }", 6, "ttl provided is invalid"),
        (" hosts {\n  ttl 1h\n }", 6, "ttl needs a number of second"),
        (" hosts {\n  ttl\n }", 6, "ttl needs a time in second"),
        (
            " hosts {\n  reload -1s\n }",
            6,
            "invalid negative duration for reload '-1s'",
        ),
        (
            " hosts {\n  reload soon\n }",
            6,
            "invalid duration for reload 'soon'",
        ),
        (
            " hosts {\n  reload\n }",
            6,
            "reload needs a duration (zero seconds to disable)",
        ),
        (
            " hosts {\n  fallthrough\n  10.0.0.1 late.test\n }",
            7,
            "unknown property '10.0.0.1'",
        ),
        (
            " hosts {\n  fallthrough_unsupported\n }",
            7,
            "fallthrough_unsupported requires fallthrough",
        ),
        (
            " hosts\n hosts",
            6,
            "this plugin can only be used once per Server Block",
        ),
    ] {
        let text = corefile(1053, body);
        let (code, err) = run_expect_failure(&text);
        assert_eq!(code, 1, "exit status for:\n{text}\nstderr: {err}");
        let want = format!("Corefile:{line} - Error during parsing: plugin/hosts: {want}");
        assert!(err.contains(&want), "for:\n{text}\nwant {want:?} in: {err}");
    }
}
