//! The query path allocates nothing (ARCHITECTURE.md, Hot-path rules): a counting global allocator
//! around `System` watches `Query::parse`, the router and `serve_inline` over a real
//! configuration built as main.rs builds it.
//!
//! The counter is per thread, so the test functions of this file (which libtest may run on
//! parallel threads) and the harness's own threads do not disturb each other's counts.
// Computing the layout of the whole chain's future (the_chain_future_stays_small) nests deeper
// than the default limit, as in lib.rs.
#![recursion_limit = "512"]

mod common;

use common::kube::{Cluster, external_service, headless_service};
use hickory_proto::op::{Message, MessageType, ResponseCode};
use hickory_proto::rr::{RData, RecordType};
use ringdns::plugin::{CoreInfo, Proto};
use ringdns::runtime::core::CoreServer;
use ringdns::runtime::serve::{Verdict, serve_inline};
use ringdns::wire::Query;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;
use std::net::SocketAddr;

/// Counts the allocations (alloc, alloc_zeroed, realloc) made on the current thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn bump() {
    // `try_with`: the allocator may be called while the thread's locals are torn down.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every call is forwarded unchanged to `System`; counting touches only a
// const-initialised thread-local `Cell` (no lazy initialisation, no destructor, no
// allocation).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made on this thread so far.
fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Runs `f` and returns its result with the number of allocations it made on this thread.
fn counted<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = allocations();
    let r = f();
    (r, allocations() - before)
}

/// How many times each case is served while counting.
const ITERATIONS: usize = 1000;

/// The same with `log`, which prints a line per query to stdout: fewer, to keep the output
/// of the test readable.
const LOG_ITERATIONS: usize = 100;

/// The capacity the UDP loop reserves for each reply (runtime/batch.rs `REPLY_CAPACITY`).
const REPLY_CAPACITY: usize = 8192;

/// Builds a core from Corefile text exactly as main.rs does (parse, load with the default
/// port 53), for core 0 of 1.
fn core_for(text: &str) -> CoreServer<ringdns::chain::Chain> {
    let cf = ringdns::corefile::parse("Corefile", text, &ringdns::chain::known_directive)
        .expect("Corefile parses");
    let config = ringdns::config::load(&cf, 53).expect("configuration loads");
    CoreServer::build(
        &config,
        &CoreInfo {
            index: 0,
            cpu: 0,
            cores: 1,
        },
    )
}

/// Two blocks on one port answering differently, so the replies show the routing:
/// example.org by whoami, everything else by erratic (which never drops with `drop 0`),
/// and an empty block (REFUSED by the server).
const TWO_BLOCKS: &str = "\
example.org:53 {
    whoami
}
.:53 {
    erratic {
        drop 0
    }
}
example.net:53 {
}
";

/// The same with `log` in front, rendering a line for every query.
const WITH_LOG: &str = "\
example.org:53 {
    log
    whoami
}
.:53 {
    log . \"{remote}:{port} {local} {>id} {type} {class} {name} {proto} {size} {>do} {>bufsize} {rcode} {>rflags} {rsize} {duration} {>opcode} {/meta}\"
    erratic {
        drop 0
    }
}
example.net:53 {
}
";

/// One query and what its reply must look like.
struct Case {
    what: &'static str,
    packet: Vec<u8>,
    client: SocketAddr,
    verdict: Verdict,
    /// Expected header rcode (low 4 bits).
    rcode: u8,
    /// Expected ANCOUNT and ARCOUNT.
    answers: u16,
    additionals: u16,
}

const EDNS: Option<(u16, bool)> = Some((1232, true));

fn v4() -> SocketAddr {
    "192.0.2.10:40000".parse().unwrap()
}

fn v6() -> SocketAddr {
    "[2001:db8::10]:40001".parse().unwrap()
}

/// A query with two questions: FORMERR.
fn two_questions(id: u16) -> Vec<u8> {
    let mut p = common::query(id, "www.example.org.", 1);
    p[5] = 2;
    p
}

/// A STATUS (opcode 2) query: NOTIMP.
fn status_opcode(id: u16) -> Vec<u8> {
    let mut p = common::query(id, "www.example.org.", 1);
    p[2] |= 2 << 3;
    p
}

fn cases() -> Vec<Case> {
    let q = common::query_full;
    vec![
        Case {
            what: "whoami, no EDNS",
            packet: q(0x1001, "www.example.org.", 1, 1, None),
            client: v4(),
            verdict: Verdict::Send,
            rcode: 0,
            answers: 0,
            additionals: 2,
        },
        Case {
            what: "whoami, EDNS, mixed case, IPv6 client",
            packet: q(0x1002, "WwW.ExAmPlE.oRg.", 28, 1, EDNS),
            client: v6(),
            verdict: Verdict::Send,
            rcode: 0,
            answers: 0,
            additionals: 3,
        },
        Case {
            what: "whoami, the zone apex in upper case",
            packet: q(0x1003, "EXAMPLE.ORG.", 1, 1, EDNS),
            client: v4(),
            verdict: Verdict::Send,
            rcode: 0,
            answers: 0,
            additionals: 3,
        },
        Case {
            what: "root block (erratic) A, no EDNS",
            packet: q(0x1004, "www.example.com.", 1, 1, None),
            client: v4(),
            verdict: Verdict::Send,
            rcode: 0,
            answers: 1,
            additionals: 0,
        },
        Case {
            what: "root block (erratic) AAAA, EDNS, mixed case",
            packet: q(0x1005, "WWW.Example.COM.", 28, 1, EDNS),
            client: v6(),
            verdict: Verdict::Send,
            rcode: 0,
            answers: 1,
            additionals: 1,
        },
        Case {
            what: "root block (erratic) MX: SERVFAIL written by the server, with OPT",
            packet: q(0x1006, "example.com.", 15, 1, EDNS),
            client: v4(),
            verdict: Verdict::Send,
            rcode: 2,
            answers: 0,
            additionals: 1,
        },
        Case {
            what: "empty block: REFUSED",
            packet: q(0x1007, "www.example.net.", 1, 1, None),
            client: v4(),
            verdict: Verdict::Send,
            rcode: 5,
            answers: 0,
            additionals: 0,
        },
        Case {
            what: "CH class on a listener without chaos: REFUSED",
            packet: q(0x1008, "version.bind.", 16, 3, None),
            client: v4(),
            verdict: Verdict::Send,
            rcode: 5,
            answers: 0,
            additionals: 0,
        },
        Case {
            what: "two questions: FORMERR",
            packet: two_questions(0x1009),
            client: v4(),
            verdict: Verdict::Send,
            rcode: 1,
            answers: 0,
            additionals: 0,
        },
        Case {
            what: "opcode STATUS: NOTIMP",
            packet: status_opcode(0x100a),
            client: v4(),
            verdict: Verdict::Send,
            rcode: 4,
            answers: 0,
            additionals: 0,
        },
    ]
}

/// Checks a reply's header against the case (no allocation).
fn check_header(case: &Case, verdict: Verdict, reply: &[u8]) {
    assert_eq!(verdict, case.verdict, "{}: verdict", case.what);
    assert!(reply.len() >= 12, "{}: reply too short", case.what);
    assert_eq!(reply[..2], case.packet[..2], "{}: ID echoed", case.what);
    assert!(reply[2] & 0x80 != 0, "{}: QR set", case.what);
    assert_eq!(reply[3] & 0x0f, case.rcode, "{}: rcode", case.what);
    let count = |o: usize| u16::from_be_bytes([reply[o], reply[o + 1]]);
    assert_eq!(count(6), case.answers, "{}: ANCOUNT", case.what);
    assert_eq!(count(10), case.additionals, "{}: ARCOUNT", case.what);
}

/// Checks a reply in full with hickory (allocates; called outside the counted sections).
fn check_full(case: &Case, reply: &[u8]) {
    let m = Message::from_vec(reply).unwrap_or_else(|e| panic!("{}: reply parses: {e}", case.what));
    assert_eq!(m.metadata.response_code.low(), case.rcode, "{}", case.what);
    let asked = Query::parse(&case.packet).ok();
    if let Some(q) = asked.filter(|_| case.rcode != 1) {
        // The question comes back in the client's case.
        assert_eq!(
            &reply[12..12 + q.question_bytes().len()],
            q.question_bytes(),
            "{}: question echoed",
            case.what
        );
    }
    if case.what.starts_with("whoami") {
        assert!(m.metadata.authoritative, "{}: AA", case.what);
        let ip = case.client.ip();
        let found = m.additionals.iter().any(|r| match &r.data {
            RData::A(a) => ip == std::net::IpAddr::V4(a.0),
            RData::AAAA(a) => ip == std::net::IpAddr::V6(a.0),
            _ => false,
        });
        assert!(found, "{}: the client's address in ADDITIONAL", case.what);
        let srv = m
            .additionals
            .iter()
            .find(|r| r.record_type() == RecordType::SRV)
            .unwrap_or_else(|| panic!("{}: SRV", case.what));
        assert!(
            srv.name.to_ascii().starts_with("_udp."),
            "{}: _udp SRV",
            case.what
        );
    }
    if case.what.starts_with("root block") && case.rcode == 0 {
        assert!(
            m.answers.iter().any(|r| matches!(
                &r.data,
                RData::A(a) if a.0 == std::net::Ipv4Addr::new(192, 0, 2, 53)
            ) || matches!(&r.data, RData::AAAA(_))),
            "{}: erratic's answer",
            case.what
        );
    }
    assert_eq!(
        m.metadata.message_type,
        MessageType::Response,
        "{}",
        case.what
    );
    if case.rcode == 0 {
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    }
}

/// Serves every case once to warm up and check the replies in full, then `ITERATIONS`
/// times counting the allocations made inside `serve_inline` only. `between` runs after
/// each query, outside the counted sections (the log plugin's end-of-batch flush).
fn serve_cases_without_allocating(
    core: &CoreServer<ringdns::chain::Chain>,
    iterations: usize,
    between: impl Fn(),
) {
    let cases = cases();
    let l = &core.listeners[0];
    let mut reply = Vec::with_capacity(REPLY_CAPACITY);
    for case in &cases {
        let v = serve_inline(
            core,
            l,
            &case.packet,
            false,
            case.client,
            Proto::Udp,
            &mut reply,
        );
        check_header(case, v, &reply);
        check_full(case, &reply);
        between();
    }
    let mut per_case = vec![0u64; cases.len()];
    for _ in 0..iterations {
        for (i, case) in cases.iter().enumerate() {
            let (v, n) = counted(|| {
                serve_inline(
                    core,
                    l,
                    black_box(&case.packet),
                    false,
                    case.client,
                    Proto::Udp,
                    &mut reply,
                )
            });
            per_case[i] += n;
            check_header(case, v, &reply);
            between();
        }
    }
    let allocating: Vec<String> = cases
        .iter()
        .zip(&per_case)
        .filter(|(_, n)| **n > 0)
        .map(|(c, n)| format!("{}: {n} allocations in {iterations} queries", c.what))
        .collect();
    assert!(
        allocating.is_empty(),
        "serve_inline allocated:\n{}",
        allocating.join("\n")
    );
}

#[test]
fn the_counter_sees_allocations() {
    let (v, n) = counted(|| black_box(vec![1u8; 100]));
    assert_eq!(v.len(), 100);
    assert!(n >= 1, "a Vec allocation was not counted");
}

#[test]
fn parsing_and_routing_allocate_nothing() {
    let core = core_for(TWO_BLOCKS);
    assert_eq!(
        core.listeners.len(),
        1,
        "three blocks on one port share a listener"
    );
    let router = &core.listeners[0].router;
    let q = common::query_full;
    // (packet, expected block, expected zone)
    let routed = [
        (q(1, "www.example.org.", 1, 1, None), 0, "example.org."),
        (q(2, "WWW.EXAMPLE.ORG.", 28, 1, EDNS), 0, "example.org."),
        (q(3, "Example.Org.", 1, 1, None), 0, "example.org."),
        (q(4, "example.com.", 1, 1, EDNS), 1, "."),
        (q(5, "notexample.org.", 1, 1, None), 1, "."),
        (q(6, "a.b.c.Example.NET.", 1, 1, None), 2, "example.net."),
        (q(7, ".", 2, 1, None), 1, "."),
    ];
    for (p, block, zone) in &routed {
        let parsed = Query::parse(p).expect("parses");
        assert_eq!(
            router.route(parsed.qname_bytes(), parsed.qtype(), |_, _| true),
            Some((*block, *zone))
        );
    }
    let malformed = two_questions(8);
    assert!(Query::parse(&malformed).is_err());

    let (_, n) = counted(|| {
        for _ in 0..ITERATIONS {
            for (p, block, _) in &routed {
                let parsed = Query::parse(black_box(p)).expect("parses");
                let r = router.route(parsed.qname_bytes(), parsed.qtype(), |_, _| true);
                assert_eq!(r.map(|(b, _)| b), Some(*block));
                black_box(parsed.opt());
                black_box(parsed.max_reply_size(false));
            }
            assert!(Query::parse(black_box(&malformed)).is_err());
        }
    });
    assert_eq!(n, 0, "Query::parse + Router::route allocated {n} times");
}

#[test]
fn serving_two_blocks_allocates_nothing() {
    let core = core_for(TWO_BLOCKS);
    serve_cases_without_allocating(&core, ITERATIONS, || {});
}

#[test]
fn serving_with_log_allocates_nothing() {
    let core = core_for(WITH_LOG);
    // The first flush initialises stdout (its buffer is allocated once per process).
    core.after_batch();
    serve_cases_without_allocating(&core, LOG_ITERATIONS, || core.after_batch());
}

/// The same blocks tapped by dnstap (`full`: the server's own error replies are written for
/// the tap too; an `extra` with placeholders, rendered for every query that may be tapped).
/// No reader is connected here (no writer runs without an executor), so every message is
/// counted as dropped: the query path around the taps allocates nothing.
const WITH_DNSTAP: &str = "\
example.org:53 {
    dnstap /nonexistent/alloc-dnstap.sock full
    whoami
}
.:53 {
    dnstap /nonexistent/alloc-dnstap.sock full {
        extra \"{name} {type} {remote} {/forward/upstream}\"
    }
    erratic {
        drop 0
    }
}
example.net:53 {
}
";

#[test]
fn serving_with_dnstap_allocates_nothing() {
    let core = core_for(WITH_DNSTAP);
    serve_cases_without_allocating(&core, ITERATIONS, || {});
    // The queries were tapped (and dropped, with no reader): this is not a chain without it.
    let page = ringdns::metrics::registry::collect();
    let dropped = page.get(
        "coredns_dnstap_dropped_total",
        &["/nonexistent/alloc-dnstap.sock"],
    );
    assert!(
        dropped.is_some_and(|v| v.count() >= ITERATIONS as f64 * 2.0),
        "{dropped:?}"
    );
}

/// erratic answers behind the cache: the first query of each kind is a miss (stored), every
/// later one a hit.
const WITH_CACHE: &str = "\
.:53 {
    cache
    erratic {
        drop 0
    }
}
";

/// The same blocks counted by prometheus: every query of the cases, refused ones included,
/// goes through the per-core counters.
const WITH_PROMETHEUS: &str = "\
example.org:53 {
    prometheus 127.0.0.1:0
    whoami
}
.:53 {
    prometheus 127.0.0.1:0
    erratic {
        drop 0
    }
}
example.net:53 {
}
";

#[test]
fn serving_with_prometheus_allocates_nothing() {
    let core = core_for(WITH_PROMETHEUS);
    serve_cases_without_allocating(&core, ITERATIONS, || {});
    // The queries were counted (this is not a chain without the plugin).
    let page = ringdns::metrics::registry::collect();
    let whoami = page.get(
        "coredns_dns_responses_total",
        &["dns://:53", "example.org.", "", "NOERROR", "whoami"],
    );
    assert!(
        whoami.is_some_and(|v| v.count() >= ITERATIONS as f64 * 3.0),
        "{whoami:?}"
    );
}

/// Cache hits counted by prometheus (and by the cache's own counters).
const WITH_PROMETHEUS_AND_CACHE: &str = "\
.:53 {
    prometheus 127.0.0.1:0
    cache
    erratic {
        drop 0
    }
}
";

#[test]
fn a_cache_hit_allocates_nothing() {
    cache_hits_allocate_nothing(WITH_CACHE);
}

/// metadata lends the rest a store on every query in its zones: a cache hit behind it
/// takes the core's store and allocates nothing.
#[test]
fn a_cache_hit_behind_metadata_allocates_nothing() {
    cache_hits_allocate_nothing(".:53 {\n metadata\n cache\n erratic {\n  drop 0\n }\n}\n");
}

/// geoip behind metadata looks the client (192.0.2.10) up on every query and publishes its
/// labels: the record decodes borrowed from the database and the labels go into the core's
/// store, so a cache hit behind it still allocates nothing.
#[test]
fn a_cache_hit_behind_metadata_and_geoip_allocates_nothing() {
    let dir = common::TempDir::new();
    let db = dir.0.join("city.mmdb");
    let record = serde_json::json!({
        "city": {"names": {"en": "Cambridge", "de": "Cambridge"}},
        "continent": {"code": "EU", "names": {"en": "Europe"}},
        "country": {"iso_code": "GB", "names": {"en": "United Kingdom"}, "is_in_european_union": false},
        "location": {"latitude": 52.2242, "longitude": 0.1315, "time_zone": "Europe/London"},
        "postal": {"code": "CB4"},
        "subdivisions": [{"iso_code": "ENG"}, {"iso_code": "CAM"}]
    });
    let bytes = ringdns_testkit::mmdb::write("GeoLite2-City", &[("192.0.2.0/24", record)]);
    std::fs::write(&db, bytes).unwrap();
    cache_hits_allocate_nothing(&format!(
        ".:53 {{\n metadata\n geoip {}\n cache\n erratic {{\n  drop 0\n }}\n}}\n",
        db.display()
    ));
}

/// Issue 17's policy chain: acl letting the client through (after a block rule for other
/// networks), rewrite with rules that do not match (a suffix, a regex TTL rule, a type
/// rule), minimal and cache. A cache hit through it allocates nothing.
#[test]
fn a_cache_hit_through_acl_rewrite_and_minimal_allocates_nothing() {
    cache_hits_allocate_nothing(
        ".:53 {\n acl {\n  block net 198.51.100.0/24\n  allow net 192.0.2.0/24\n }\n rewrite continue name suffix .nomatch.test. .other.test.\n rewrite continue ttl regex ^nomatch\\. 30\n rewrite type HINFO TXT\n minimal\n cache\n erratic {\n  drop 0\n }\n}\n",
    );
}

#[test]
fn a_cache_hit_counted_by_prometheus_allocates_nothing() {
    cache_hits_allocate_nothing(WITH_PROMETHEUS_AND_CACHE);
    let page = ringdns::metrics::registry::collect();
    let hits = page.get(
        "coredns_dns_responses_total",
        &["dns://:53", ".", "", "NOERROR", "cache"],
    );
    assert!(
        hits.is_some_and(|v| v.count() >= ITERATIONS as f64 * 3.0),
        "{hits:?}"
    );
}

/// Serves each of `queries` once (warm-up: a miss the cache then stores, a thread's first
/// snapshot read, which registers it with arc-swap), then `ITERATIONS` times more, each reply
/// checked by `check(index, reply)`; returns the allocations of those later passes.
fn allocations_serving(
    core: &CoreServer<ringdns::chain::Chain>,
    queries: &[Vec<u8>],
    check: impl Fn(usize, &[u8]),
) -> u64 {
    let l = &core.listeners[0];
    let mut reply = Vec::with_capacity(REPLY_CAPACITY);
    let client = v4();
    for q in queries {
        let v = serve_inline(core, l, q, false, client, Proto::Udp, &mut reply);
        assert_eq!(v, Verdict::Send);
    }
    let mut total = 0;
    for _ in 0..ITERATIONS {
        for (i, q) in queries.iter().enumerate() {
            let (v, n) = counted(|| {
                serve_inline(core, l, black_box(q), false, client, Proto::Udp, &mut reply)
            });
            assert_eq!(v, Verdict::Send);
            check(i, &reply);
            total += n;
        }
    }
    total
}

fn cache_hits_allocate_nothing(corefile: &str) {
    let core = core_for(corefile);
    let queries = [
        common::query(0x1111, "hit.example.org.", 1),
        common::query_full(0x2222, "Hit.Example.Org.", 1, 1, EDNS),
        common::query(0x3333, "other.example.net.", 28),
    ];
    // The warm-up misses store the replies; every later pass is a hit.
    let total = allocations_serving(&core, &queries, |i, reply| {
        assert_eq!(&reply[..2], &queries[i][..2], "the query's ID");
        assert_eq!(reply[2] & 0x04, 0, "AA cleared on hits");
    });
    assert_eq!(
        total,
        0,
        "cache hits allocated {total} times in {} queries",
        ITERATIONS * 3
    );
}

/// The plugins that answer or hand on before the rest (`Screens`) in front of a cache:
/// their own answers and the queries they let through to cache hits allocate nothing.
#[test]
fn screened_answers_and_the_queries_let_through_allocate_nothing() {
    let core = core_for(
        ".:53 {\n local\n any\n chaos v1 alice bob carol\n cache\n erratic {\n  drop 0\n }\n}\n",
    );
    let queries = [
        // any's HINFO.
        common::query(0x1001, "Www.Example.org.", 255),
        common::query_full(0x1002, "www.example.org.", 255, 1, EDNS),
        // Let through: cache hits of erratic's answers.
        common::query(0x1003, "www.example.org.", 1),
        common::query_full(0x1004, "www.example.org.", 28, 1, EDNS),
        // chaos's TXT: the version, the authors shuffled.
        common::query_full(0x1005, "Version.Bind.", 16, 3, None),
        common::query_full(0x1006, "authors.bind.", 16, 3, EDNS),
        // local's: the loopback, a PTR, NODATA and NXDOMAIN with the zone's SOA.
        common::query(0x1007, "App.Localhost.", 1),
        common::query(0x1008, "1.0.0.127.in-addr.arpa.", 12),
        common::query(0x1009, "app.localhost.", 15),
        common::query_full(0x100a, "9.0.0.127.in-addr.arpa.", 12, 1, EDNS),
    ];
    // (rcode, answers, additionals)
    let expected = [
        (0, 1, 0),
        (0, 1, 1),
        (0, 1, 0),
        (0, 1, 1),
        (0, 1, 0),
        (0, 3, 1),
        (0, 1, 0),
        (0, 1, 0),
        (0, 0, 0),
        (3, 0, 1),
    ];
    let counts = check_counts(&expected);
    let total = allocations_serving(&core, &queries, |i, reply| {
        counts(i, reply);
        let first = ringdns::wire::records(reply)
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        let want = [13, 13, 1, 28, 16, 16, 1, 12, 6, 6][i];
        assert_eq!(first.rtype, want, "query {i}: the answer's type");
    });
    assert_eq!(total, 0, "screened queries allocated {total} times");
}

/// `name qtype` with EDNS (1232, DO clear) and an empty NSID option, as `dig +nsid` asks.
fn asking_nsid(id: u16, name: &str, qtype: u16) -> Vec<u8> {
    let mut q = common::query_full(id, name, qtype, 1, Some((1232, false)));
    // The OPT is the query's last record: its RDLENGTH is the packet's last two bytes.
    let n = q.len();
    q[n - 2..].copy_from_slice(&4u16.to_be_bytes());
    q.extend_from_slice(&[0, 3, 0, 0]);
    q
}

/// nsid in front of cache hits: the identifier set in the hit's OPT (a query that asks for
/// it) and the hits of queries that do not ask allocate nothing.
#[test]
fn nsid_on_a_cache_hit_allocates_nothing() {
    let core = core_for(".:53 {\n nsid ringdns-a\n cache\n erratic {\n  drop 0\n }\n}\n");
    let queries = [
        asking_nsid(0x1001, "hit.example.org.", 1),
        asking_nsid(0x1002, "Hit.Example.ORG.", 28),
        common::query_full(0x1003, "hit.example.org.", 1, 1, EDNS),
        common::query(0x1004, "hit.example.org.", 1),
    ];
    // (rcode, answers, additionals): the OPT counts.
    let expected = [(0, 1, 1), (0, 1, 1), (0, 1, 1), (0, 1, 0)];
    let counts = check_counts(&expected);
    let total = allocations_serving(&core, &queries, |i, reply| {
        counts(i, reply);
        let opt = ringdns::wire::records(reply)
            .unwrap()
            .map(Result::unwrap)
            .find(|r| r.rtype == 41);
        let nsid = opt
            .and_then(|o| ringdns::wire::EdnsOptions::new(&reply[o.rdata]).find(|(c, _)| *c == 3));
        let want: Option<(u16, &[u8])> = (i < 2).then_some((3, &b"ringdns-a"[..]));
        assert_eq!(nsid, want, "query {i}");
    });
    assert_eq!(total, 0, "nsid on cache hits allocated {total} times");
}

/// bufsize in front of cache hits: a query it serves as a copy with its limit (in the
/// core's scratch buffer) and those it lets through as they came allocate nothing.
#[test]
fn bufsize_on_cache_hits_allocates_nothing() {
    let core = core_for(".:53 {\n bufsize 1100\n cache\n erratic {\n  drop 0\n }\n}\n");
    let queries = [
        common::query_full(0x1001, "hit.example.org.", 1, 1, Some((4096, false))),
        common::query_full(0x1002, "hit.example.org.", 1, 1, Some((1000, false))),
        common::query(0x1003, "hit.example.org.", 1),
    ];
    let sizes = [Some(1100), Some(1000), None];
    let counts = check_counts(&[(0, 1, 1), (0, 1, 1), (0, 1, 0)]);
    let total = allocations_serving(&core, &queries, |i, reply| {
        counts(i, reply);
        let opt = ringdns::wire::records(reply)
            .unwrap()
            .flatten()
            .find(|r| r.rtype == 41)
            .map(|r| r.class);
        assert_eq!(opt, sizes[i], "query {i}: the reply's OPT size");
    });
    assert_eq!(total, 0, "bufsize allocated {total} times");
}

/// A cache hit is answered without the chain's future (`serve_now`); it must be the very
/// reply the future gives, and a miss must leave `serve_now` with nothing written, so that
/// the future can serve it.
#[test]
fn a_hit_answered_at_once_is_the_hit_the_chains_future_gives() {
    use ringdns::plugin::{Handler, Request};
    let core = core_for(WITH_PROMETHEUS_AND_CACHE);
    let l = &core.listeners[0];
    let chain = &core.blocks[0].chain;
    fn request<'a>(packet: &'a [u8], server: &'a str, reply: &'a mut Vec<u8>) -> Request<'a> {
        let query = Query::parse(packet).expect("query parses");
        Request::new(query, v4(), v4(), Proto::Udp, ".", server, reply, false)
    }

    let miss = common::query(0x1111, "hit.example.org.", 1);
    let mut nothing = Vec::new();
    let mut req = request(&miss, &l.name, &mut nothing);
    assert!(
        chain.serve_now(&mut req).is_none(),
        "a miss is not answered at once"
    );
    assert!(nothing.is_empty(), "and nothing is written");
    let mut stored = Vec::new();
    let v = serve_inline(&core, l, &miss, false, v4(), Proto::Udp, &mut stored);
    assert_eq!(v, Verdict::Send, "the miss is served and stored");

    let hit = common::query(0x2222, "Hit.Example.Org.", 1);
    let (mut at_once, mut through) = (Vec::new(), Vec::new());
    let mut req = request(&hit, &l.name, &mut at_once);
    let now = chain
        .serve_now(&mut req)
        .expect("a hit is answered at once");
    assert_eq!(req.writer(), Some("cache"));
    let mut req = request(&hit, &l.name, &mut through);
    let later = futures_lite::future::block_on(chain.serve(&mut req)).expect("not deferred");
    assert_eq!(now.rcode, later.rcode);
    assert_eq!(at_once, through, "the same bytes");
}

/// Every query builds the chain's future (on the stack inline; boxed when it is deferred), so
/// its size is paid per query: a plugin that keeps a large state inline (a TLS handshake, a
/// timer) grows it for every plugin and every query. It was 13 KB before forward boxed its
/// stream exchanges, 3 KB before cache stopped keeping the lower-cased name across its awaits
/// and a second copy of the rest of the chain in serve_stale's verify, 2.1 KB before
/// `next_or_failure` and the zone plugins' `serve` stopped being `async fn`s; keep it small.
/// Each serving plugin in the chain type wraps the rest in its `ServeFuture` layer (a tag and
/// padding): with loadbalance, loop, kubernetes and autopath (issue 16) it was 2064 bytes,
/// and the bound went from 2048 to 2112 to leave room for k8s_external's layer (2104 with
/// it). A link then stopped keeping its plugin's reference beside itself, 8 bytes off every
/// serving slot of plugin.cfg, used or not; issue 17's first plugins: local, any and chaos
/// are `Screens`, which add nothing, and acl, nsid, bufsize, header and minimal a link each
/// (their reply edits in `Serve::amend`, their query edits' waits boxed): 2136 bytes, and the
/// bound 2176. acl could be a screen too once a screen can count a query on its last pass
/// only (acl counts the queries it allows once). metadata's, dnstap's (its response tapped in `Serve::amend`,
/// so that it keeps nothing across the rest's await), rewrite's, cancel's, dns64's and
/// tsig's links (tsig signs in `Serve::amend` and hands the rest a stripped copy or a
/// signing stream): 2328 bytes, and the bound 2336. Each serving link costs
/// its tag and padding (24 to 32 bytes) whether the block uses the plugin or not: a link
/// that skips an empty slot without a layer of its own would stop this growth.
#[test]
fn the_chain_future_stays_small() {
    let core = core_for(
        "\
.:53 {
    errors
    log
    cache
    template IN A example.org {
        match ^ip-(?P<a>[0-9]+)[.]example[.]org[.]$
        answer \"{{ .Name }} 60 IN A 10.0.0.{{ .Group.a }}\"
        fallthrough
    }
    forward . 127.0.0.1:1 tls://127.0.0.1:2
    erratic
    whoami
}
",
    );
    let packet = common::query(0x1234, "example.org.", 1);
    let query = Query::parse(&packet).expect("query parses");
    let mut reply = Vec::new();
    let mut req = ringdns::plugin::Request::new(
        query,
        v4(),
        v4(),
        Proto::Udp,
        ".",
        "dns://:53",
        &mut reply,
        false,
    );
    use ringdns::plugin::Handler;
    let fut = core.blocks[0].chain.serve(&mut req);
    let size = std::mem::size_of_val(&fut);
    drop(fut);
    assert!(size <= 2336, "the chain's future is {size} bytes");
}

/// Cache hits behind acl rules that none of the queries matches (another zone, other
/// networks and types, an allow of another network): each is checked against every policy
/// and counted as allowed.
const WITH_ACL_AND_CACHE: &str = "\
.:53 {
    prometheus 127.0.0.1:0
    acl example.com {
        block
    }
    acl {
        allow net 198.51.100.0/24
        block net 10.0.0.0/8 2001:db8::/32
        filter type MX
        drop type TXT net 192.0.2.0/24
    }
    cache
    erratic {
        drop 0
    }
}
";

#[test]
fn a_cache_hit_through_acl_allocates_nothing() {
    cache_hits_allocate_nothing(WITH_ACL_AND_CACHE);
    let page = ringdns::metrics::registry::collect();
    let allowed = page.get("coredns_acl_allowed_requests_total", &["dns://:53", ""]);
    assert!(
        allowed.is_some_and(|v| v.count() >= ITERATIONS as f64 * 3.0),
        "{allowed:?}"
    );
}

/// Cache hits behind rrl with allowances no test reaches: every hit is accounted (a request
/// and a response debit) and sent.
const WITH_RRL_AND_CACHE: &str = "\
.:53 {
    prometheus 127.0.0.1:0
    rrl {
        responses-per-second 1000000
        requests-per-second 1000000
    }
    cache
    erratic {
        drop 0
    }
}
";

#[test]
fn a_cache_hit_through_rrl_allocates_nothing() {
    cache_hits_allocate_nothing(WITH_RRL_AND_CACHE);
}

/// rrl answers a cache hit at once too: the hit is not pushed onto the chain's future.
#[test]
fn rrl_answers_a_cache_hit_at_once() {
    use ringdns::plugin::{Handler, Request};
    let core = core_for(WITH_RRL_AND_CACHE);
    let l = &core.listeners[0];
    let q = common::query(0x1111, "at-once.example.org.", 1);
    let mut reply = Vec::new();
    assert_eq!(
        serve_inline(&core, l, &q, false, v4(), Proto::Udp, &mut reply),
        Verdict::Send
    );
    let query = Query::parse(&q).expect("query parses");
    let mut reply = Vec::new();
    let mut req = Request::new(
        query,
        v4(),
        v4(),
        Proto::Udp,
        ".",
        &l.name,
        &mut reply,
        false,
    );
    let status = core.blocks[0].chain.serve_now(&mut req);
    assert!(status.is_some(), "the hit is answered without a future");
    assert_eq!(req.writer(), Some("cache"));
}

/// A flood over rrl's limit from one client: after the first queries, each is dropped or
/// slipped (TC=1), and neither allocates. (With `errors` in the block each drop's error is
/// logged, and that line is formatted into new strings.)
#[test]
fn dropping_and_slipping_allocate_nothing() {
    let core = core_for(
        "\
.:53 {
    rrl {
        responses-per-second 1
        slip-ratio 2
    }
    cache
    erratic {
        drop 0
    }
}
",
    );
    let l = &core.listeners[0];
    let mut reply = Vec::with_capacity(REPLY_CAPACITY);
    let q = common::query_full(0x5555, "flood.example.org.", 1, 1, EDNS);
    // The miss is stored and the account made.
    for _ in 0..4 {
        serve_inline(&core, l, &q, false, v4(), Proto::Udp, &mut reply);
    }
    let (mut dropped, mut slipped) = (0, 0);
    let mut total = 0;
    for _ in 0..ITERATIONS {
        let (v, n) =
            counted(|| serve_inline(&core, l, black_box(&q), false, v4(), Proto::Udp, &mut reply));
        total += n;
        match v {
            Verdict::Drop => dropped += 1,
            Verdict::Send => {
                assert_ne!(reply[2] & 0x02, 0, "over the limit, a reply is a slip");
                slipped += 1;
            }
            v => panic!("{v:?}"),
        }
    }
    assert!(
        dropped > 0 && slipped > 0,
        "{dropped} dropped, {slipped} slipped"
    );
    assert_eq!(
        total, 0,
        "{total} allocations in {ITERATIONS} limited queries"
    );
}

/// A zone for `file`: exact answers, additional addresses, a wildcard, a delegation, and
/// names that do not exist.
const ZONE: &str = "$ORIGIN example.org.\n$TTL 1h\n\
@ IN SOA ns1 hostmaster 1 2h 30m 2w 5m\n@ IN NS ns1\n@ IN MX 10 mail\n\
ns1 IN A 192.0.2.53\nmail IN A 192.0.2.25\nwww IN A 192.0.2.80\nalias IN CNAME www\n\
*.apps IN A 192.0.2.81\nsub IN NS ns.sub\nns.sub IN A 192.0.2.200\n";

/// What a reply's header must say: rcode, answer count, additional count.
fn check_counts(expected: &[(u8, u16, u16)]) -> impl Fn(usize, &[u8]) + '_ {
    move |i, reply| {
        let h = ringdns::wire::Header::of(reply).unwrap();
        let (rcode, an, ar) = expected[i];
        assert_eq!(h.rcode(), rcode, "query {i}");
        assert_eq!(h.count(ringdns::wire::Section::Answer), an, "query {i}");
        assert_eq!(h.count(ringdns::wire::Section::Additional), ar, "query {i}");
    }
}

#[test]
fn authoritative_answers_from_file_allocate_nothing() {
    zone_answers_allocate_nothing("file", |dir| {
        format!(
            "example.org:53 {{\n    file {} {{\n        reload 0\n    }}\n}}\n",
            dir.join("db.example.org").display()
        )
    });
}

#[test]
fn authoritative_answers_from_auto_allocate_nothing() {
    zone_answers_allocate_nothing("auto", |dir| {
        format!(
            "example.org:53 {{\n    auto {{\n        directory {}\n        reload 0\n    }}\n}}\n",
            dir.display()
        )
    });
}

/// Answers from [`ZONE`] (in `db.example.org` of a directory of the test's) through the
/// block `corefile` makes of that directory: exact, additional, CNAME, wildcard,
/// referral, NXDOMAIN and NODATA answers, none of which may allocate.
fn zone_answers_allocate_nothing(plugin: &str, corefile: impl Fn(&std::path::Path) -> String) {
    let dir = std::env::temp_dir().join(format!("ringdns-alloc-{plugin}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("db.example.org"), ZONE).unwrap();
    let core = core_for(&corefile(&dir));
    let queries = [
        common::query(0x1001, "www.example.org.", 1),
        common::query_full(0x1002, "WWW.Example.ORG.", 1, 1, EDNS),
        common::query(0x1003, "example.org.", 15),
        common::query(0x1004, "alias.example.org.", 1),
        common::query(0x1005, "x.apps.example.org.", 1),
        common::query(0x1006, "host.sub.example.org.", 1),
        common::query(0x1007, "nope.example.org.", 1),
        common::query(0x1008, "www.example.org.", 28),
    ];
    // (rcode, answers, additionals)
    let expected = [
        (0, 1, 0),
        (0, 1, 1),
        (0, 1, 1),
        (0, 2, 0),
        (0, 1, 0),
        (0, 0, 1),
        (3, 0, 0),
        (0, 0, 0),
    ];
    let total = allocations_serving(&core, &queries, check_counts(&expected));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(total, 0, "{plugin} answers allocated {total} times");
}

/// file behind metadata publishes `zone/wildcard` for a wildcard answer into the core's
/// store, and a cache between them keeps it with the reply and publishes it again on each
/// hit: neither the answers nor the hits allocate once warm.
#[test]
fn wildcard_metadata_from_file_and_its_cache_hits_allocate_nothing() {
    let dir = common::TempDir::new();
    let db = dir.write("db.example.org", ZONE);
    for cache in ["", " cache\n"] {
        let core = core_for(&format!(
            "example.org:53 {{\n metadata\n{cache} file {} {{\n  reload 0\n }}\n}}\n",
            db.display()
        ));
        let queries = [
            common::query(0x1005, "x.apps.example.org.", 1),
            common::query(0x1001, "www.example.org.", 1),
        ];
        let total = allocations_serving(&core, &queries, check_counts(&[(0, 1, 0), (0, 1, 0)]));
        assert_eq!(total, 0, "{cache:?}: allocated {total} times");
    }
}

/// minimal in front of file (every positive answer stripped as it is served), and behind
/// the cache (hits of the stripped replies): neither allocates.
#[test]
fn minimal_stripping_and_its_cache_hits_allocate_nothing() {
    let dir = std::env::temp_dir().join(format!("ringdns-alloc-minimal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("db.example.org"), ZONE).unwrap();
    let file = format!(
        " file {} {{\n  reload 0\n }}\n",
        dir.join("db.example.org").display()
    );
    let queries = [
        common::query(0x1001, "www.example.org.", 1),
        common::query_full(0x1002, "WWW.Example.ORG.", 1, 1, EDNS),
        common::query(0x1003, "example.org.", 15),
        common::query(0x1004, "alias.example.org.", 1),
        common::query(0x1005, "host.sub.example.org.", 1),
        common::query(0x1006, "nope.example.org.", 1),
    ];
    // (rcode, answers, authority, additional): MX's glue gone, the OPT kept; the referral
    // and the NXDOMAIN keep theirs.
    let expected = [
        (0, 1, 0, 0),
        (0, 1, 0, 1),
        (0, 1, 0, 0),
        (0, 2, 0, 0),
        (0, 0, 1, 1),
        (3, 0, 1, 0),
    ];
    let check = |i: usize, reply: &[u8]| {
        let h = ringdns::wire::Header::of(reply).unwrap();
        let got = (h.rcode(), h.ancount(), h.nscount(), h.arcount());
        assert_eq!(got, expected[i], "query {i}");
    };
    for (what, block) in [
        (
            "minimal",
            format!("example.org:53 {{\n minimal\n{file}}}\n"),
        ),
        (
            "cache and minimal",
            format!("example.org:53 {{\n cache\n minimal\n{file}}}\n"),
        ),
    ] {
        let core = core_for(&block);
        let total = allocations_serving(&core, &queries, check);
        assert_eq!(total, 0, "{what}: {total} allocations");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// header in front of whoami: a query its `query` rules leave as it came, and one they
/// edit (served a copy in the core's scratch buffer), both with the `response` rules set in
/// the reply, allocate nothing.
#[test]
fn header_rules_allocate_nothing() {
    let core = core_for(".:53 {\n header {\n  query set rd\n  response set ra\n }\n whoami\n}\n");
    let as_it_came = common::query(0x1001, "www.example.org.", 1);
    let mut edited = common::query_full(0x1002, "www.example.org.", 28, 1, EDNS);
    edited[2] &= !0x01;
    let queries = [as_it_came, edited];
    let expected = [(0, 0, 2), (0, 0, 3)];
    let counts = check_counts(&expected);
    let total = allocations_serving(&core, &queries, |i, reply| {
        counts(i, reply);
        assert_eq!(
            reply[2] & 0x01,
            0x01,
            "query {i}: RD, echoed from the query whoami saw"
        );
        assert_eq!(reply[3] & 0x80, 0x80, "query {i}: RA set in the reply");
    });
    assert_eq!(total, 0, "header allocated {total} times");
}

/// A hosts file: names, an IPv6 address, a wildcard.
const HOSTS: &str = "10.0.0.1 www.example.org www\n2001:db8::1 www.example.org\n\
                     10.0.0.3 *.apps.example.org\n";

#[test]
fn hosts_answers_allocate_nothing() {
    let dir = std::env::temp_dir().join(format!("ringdns-alloc-hosts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let hosts = dir.join("hosts");
    std::fs::write(&hosts, HOSTS).unwrap();
    let core = core_for(&format!(
        ".:53 {{\n hosts {} {{\n  10.0.0.9 inline.test\n  reload 0\n }}\n}}\n",
        hosts.display()
    ));
    let ptr_v6 = "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.";
    // NODATA, a wildcard, PTR v4 and v6, inline, and a SERVFAIL (an unknown name).
    let queries = [
        common::query(1, "WWW.example.org.", 1),
        common::query(2, "www.example.org.", 28),
        common::query(3, "www.example.org.", 15),
        common::query(4, "x.apps.example.org.", 1),
        common::query(5, "1.0.0.10.in-addr.arpa.", 12),
        common::query(6, ptr_v6, 12),
        common::query(7, "inline.test.", 1),
        common::query(8, "nothere.test.", 1),
    ];
    let expected = [
        (0, 1, 0),
        (0, 1, 0),
        (0, 0, 0),
        (0, 1, 0),
        (0, 2, 0),
        (0, 1, 0),
        (0, 1, 0),
        (2, 0, 0),
    ];
    let total = allocations_serving(&core, &queries, check_counts(&expected));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(total, 0, "hosts allocated {total} times on the query path");
}

/// Queries the templates do not answer (another zone or type, a regex that does
/// not match under `fallthrough`) go on to the next plugin without allocating; whoami
/// answers them.
#[test]
fn queries_templates_pass_on_allocate_nothing() {
    let core = core_for(
        "\
.:53 {
    template IN A example.org {
        match ^ip-(?P<a>[0-9]+)[.]example[.]org[.]$
        answer \"{{ .Name }} 60 IN A 10.0.0.{{ .Group.a }}\"
        fallthrough
    }
    template ANY TXT example.net {
        fallthrough
    }
    whoami
}
",
    );
    let queries = [
        common::query(1, "ip-1.example.com.", 1),
        common::query(2, "ip-1.example.org.", 15),
        common::query(3, "a.example.net.", 28),
        common::query(4, "www.example.org.", 1),
        common::query(5, "WWW.Example.ORG.", 1),
        common::query(6, "a.example.net.", 1),
    ];
    // whoami's: NOERROR, no answer, its A and SRV in the additional section.
    let expected = [(0, 0, 2); 6];
    let total = allocations_serving(&core, &queries, check_counts(&expected));
    assert_eq!(
        total, 0,
        "queries passed on by template allocated {total} times"
    );
}

/// Cluster answers of the kubernetes plugin, from a fake API server of the test's own:
/// ClusterIP A and AAAA, a headless service's endpoints, SRV with glue, PTR, NODATA and
/// NXDOMAIN with the SOA: none may allocate (the core's scratch list grows on the first
/// pass, which allocations_serving does not count). Nor with *metadata* and `pods verified`,
/// the client (192.0.2.10) a pod with labels: the name's parts and the client's labels go
/// into the core's metadata store.
#[test]
fn cluster_answers_from_kubernetes_allocate_nothing() {
    use ringdns_testkit::kubeapi::objects::{namespace, pod, service};
    let c = Cluster::start(|api| {
        api.apply(namespace("testns", &[]));
        api.apply(
            service("testns", "svc1")
                .cluster_ips(&["10.0.0.1", "fd00::1"])
                .port("http", "TCP", 80)
                .build(),
        );
        headless_service(api);
        api.apply(
            pod("testns", "client", "192.0.2.10")
                .label("app", "web")
                .label("tier", "front")
                .build(),
        );
    });
    let queries = [
        common::query(1, "svc1.testns.svc.cluster.local.", 1),
        common::query(2, "SVC1.testns.svc.Cluster.Local.", 28),
        common::query_full(3, "hdls.testns.svc.cluster.local.", 1, 1, EDNS),
        common::query_full(4, "_http._tcp.hdls.testns.svc.cluster.local.", 33, 1, EDNS),
        common::query(5, "1.0.0.10.in-addr.arpa.", 12),
        common::query(6, "svc1.testns.svc.cluster.local.", 15),
        common::query(7, "nope.testns.svc.cluster.local.", 1),
        common::query(8, "web-1.hdls.testns.svc.cluster.local.", 1),
    ];
    // (rcode, answers, additionals; the EDNS queries' OPT counts)
    let expected = [
        (0, 1, 0),
        (0, 1, 0),
        (0, 2, 1),
        (0, 2, 3),
        (0, 1, 0),
        (0, 0, 0),
        (3, 0, 0),
        (0, 1, 0),
    ];
    for (meta, pods) in [("", ""), (" metadata\n", "  pods verified\n")] {
        let core = core_for(&format!(
            ".:53 {{\n{meta} kubernetes cluster.local 10.in-addr.arpa {{\n  kubeconfig {}\n{pods} }}\n}}\n",
            c.kubeconfig.display()
        ));
        let total = allocations_serving(&core, &queries, check_counts(&expected));
        assert_eq!(
            total, 0,
            "kubernetes answers ({meta:?}) allocated {total} times"
        );
    }
}

/// A zone whose answers loadbalance reorders: four addresses of one name (moved in place),
/// a CNAME to them (moved in place after the CNAME), and three MX whose targets' addresses
/// come in the additional section (the MX move: the reply is written anew, names compressed
/// again).
const LB_ZONE: &str = "$ORIGIN example.org.\n$TTL 1h\n\
@ IN SOA ns1 hostmaster 1 2h 30m 2w 5m\n@ IN NS ns1\n\
@ IN MX 10 mx1\n@ IN MX 20 mx2\n@ IN MX 30 mx3\n\
ns1 IN A 192.0.2.53\nmx1 IN A 10.0.0.1\nmx2 IN A 10.0.0.2\nmx3 IN A 10.0.0.3\n\
www IN A 10.0.1.1\nwww IN A 10.0.1.2\nwww IN A 10.0.1.3\nwww IN A 10.0.1.4\n\
alias IN CNAME www\n";

/// The RDATA of the `n`th record (from 0) of `section` in `reply`.
fn nth_rdata(reply: &[u8], section: ringdns::wire::Section, n: usize) -> Vec<u8> {
    let r = ringdns::wire::records(reply)
        .unwrap()
        .map(Result::unwrap)
        .filter(|r| r.section == section)
        .nth(n)
        .expect("a record in the section");
    reply[r.rdata].to_vec()
}

/// The distinct records seen in one place of a reply.
type Seen = std::collections::BTreeSet<Vec<u8>>;

/// loadbalance in front of file, with `options` in its block (the policy's line is
/// `loadbalance POLICY`): the zone's answers served [`ITERATIONS`] times each after a
/// warm-up, none allocating. Returns how many distinct records were seen, per query, first
/// among the addresses (or MX) of the answer and first in the additional section.
fn loadbalance_answers_allocate_nothing(
    policy: &str,
    options: &str,
    files: &[(&str, &str)],
) -> Vec<(usize, usize)> {
    use ringdns::wire::Section;
    let dir = std::env::temp_dir().join(format!(
        "ringdns-alloc-lb-{}-{}",
        policy.split_whitespace().next().unwrap_or("default"),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("db.example.org"), LB_ZONE).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let core = core_for(&format!(
        "example.org:53 {{\n root {}\n loadbalance {policy} {{\n{options}\n }}\n file db.example.org {{\n  reload 0\n }}\n}}\n",
        dir.display()
    ));
    let queries = [
        common::query(0x1001, "www.example.org.", 1),
        common::query(0x1002, "Alias.Example.ORG.", 1),
        common::query(0x1003, "example.org.", 15),
    ];
    // (rcode, answers, additionals)
    let expected = [(0, 4, 0), (0, 5, 0), (0, 3, 3)];
    // Where the records that move are: the alias's addresses come after its CNAME.
    let first_moving = [0, 1, 0];
    let counts = check_counts(&expected);
    // Filled between the counted queries, so these sets' allocations are not counted.
    let seen: std::cell::RefCell<Vec<[Seen; 2]>> =
        std::cell::RefCell::new(vec![Default::default(); queries.len()]);
    let total = allocations_serving(&core, &queries, |i, reply| {
        counts(i, reply);
        let mut seen = seen.borrow_mut();
        seen[i][0].insert(nth_rdata(reply, Section::Answer, first_moving[i]));
        if expected[i].2 > 0 {
            seen[i][1].insert(nth_rdata(reply, Section::Additional, 0));
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        total,
        0,
        "loadbalance {policy} allocated {total} times in {} queries",
        ITERATIONS * queries.len()
    );
    seen.into_inner()
        .iter()
        .map(|[a, b]| (a.len(), b.len()))
        .collect()
}

/// round_robin: the addresses swapped in place, and the MX moved in a reply written anew,
/// allocate nothing; `prefer` then puts mx2's address first in the additional section.
#[test]
fn loadbalance_reordering_allocates_nothing() {
    let seen = loadbalance_answers_allocate_nothing("round_robin", "  prefer 10.0.0.2/32", &[]);
    let [www, alias, mx] = seen[..] else {
        panic!("{seen:?}")
    };
    assert!(www.0 > 1, "www's addresses moved: {seen:?}");
    assert!(alias.0 > 1, "the alias's addresses moved: {seen:?}");
    assert!(mx.0 > 1, "the MX moved: {seen:?}");
    assert_eq!(mx.1, 1, "prefer kept mx2's address first: {seen:?}");
}

/// weighted: the weights looked up by owner name, and the drawn address swapped in place,
/// allocate nothing.
#[test]
fn loadbalance_weighted_allocates_nothing() {
    let weights = "www.example.org\n10.0.1.1 1\n10.0.1.2 1\n10.0.1.3 1\n10.0.1.4 1\n";
    let seen = loadbalance_answers_allocate_nothing(
        "weighted weights",
        "  reload 0s",
        &[("weights", weights)],
    );
    assert!(seen[0].0 > 1, "the first address is drawn: {seen:?}");
}

/// autopath walking hosts' names, every element answered at once: the first element, the
/// second, the root, none (SERVFAIL), and a name autopath passes on.
#[test]
fn a_walk_answered_at_once_allocates_nothing() {
    let dir = std::env::temp_dir().join(format!("ringdns-alloc-autopath-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let resolv = dir.join("resolv.conf");
    std::fs::write(
        &resolv,
        "search default.svc.cluster.local svc.cluster.local cluster.local\n",
    )
    .unwrap();
    // hosts answers every element at once: SERVFAIL for the names it does not have.
    let core = core_for(&format!(
        ".:53 {{\n autopath cluster.local {}\n hosts {{\n  10.0.0.10 web.default.svc.cluster.local\n  \
         10.0.0.20 db.svc.cluster.local\n  192.0.2.1 outside.test\n }}\n}}\n",
        resolv.display()
    ));
    let queries = [
        common::query(1, "web.default.svc.cluster.local.", 1),
        common::query(2, "db.default.svc.cluster.local.", 1),
        common::query(3, "outside.test.default.svc.cluster.local.", 1),
        common::query(4, "nothere.default.svc.cluster.local.", 1),
        common::query(5, "outside.test.", 1),
    ];
    // (rcode, answers, additionals): a CNAME before the answers of a later element.
    let expected = [(0, 1, 0), (0, 2, 0), (0, 2, 0), (2, 0, 0), (0, 1, 0)];
    let total = allocations_serving(&core, &queries, check_counts(&expected));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        total, 0,
        "autopath allocated {total} times on the query path"
    );
}

/// k8s_external's answers from the kubernetes plugin's table, from a fake API server of the
/// test's own: external IPs and a load balancer's IP (A, AAAA), SRV with glue, a headless
/// service's endpoints, PTR of an external IP, the apex's SOA and NS with the name
/// server's address, ns1, NODATA and NXDOMAIN with the SOA: none may allocate (the core's
/// scratch grows on the first pass, which allocations_serving does not count). An ingress
/// hostname's CNAME is looked up on the deferred pass, which may allocate.
#[test]
fn external_answers_from_k8s_external_allocate_nothing() {
    use ringdns_testkit::kubeapi::objects::namespace;
    let c = Cluster::start(|api| {
        api.apply(namespace("testns", &[]));
        external_service(api);
        headless_service(api);
    });
    // `bind` gives the name server its address (no socket is opened here).
    let core = core_for(&format!(
        ".:53 {{\n bind 198.51.100.53\n k8s_external example.org 192.0.2.0/24 {{\n  headless\n }}\n kubernetes cluster.local {{\n  kubeconfig {}\n }}\n}}\n",
        c.kubeconfig.display()
    ));
    let queries = [
        common::query(1, "web.testns.example.org.", 1),
        common::query(2, "WEB.testns.Example.Org.", 28),
        common::query_full(3, "_http._tcp.web.testns.example.org.", 33, 1, EDNS),
        common::query_full(4, "hdls.testns.example.org.", 1, 1, EDNS),
        common::query(5, "10.2.0.192.in-addr.arpa.", 12),
        common::query(6, "example.org.", 6),
        common::query(7, "example.org.", 2),
        common::query(8, "ns1.dns.example.org.", 1),
        common::query(9, "web.testns.example.org.", 16),
        common::query(10, "nope.testns.example.org.", 1),
    ];
    // (rcode, answers, additionals; the EDNS queries' OPT counts)
    let expected = [
        (0, 2, 0),
        (0, 1, 0),
        (0, 1, 4),
        (0, 2, 1),
        (0, 1, 0),
        (0, 1, 0),
        (0, 1, 1),
        (0, 1, 0),
        (0, 0, 0),
        (3, 0, 0),
    ];
    let total = allocations_serving(&core, &queries, check_counts(&expected));
    assert_eq!(total, 0, "k8s_external answers allocated {total} times");
}

/// `packet` signed with hmac-sha256 under `k.` ("secret-key-for-tests") now, as a client
/// signs it (RFC 8945 §4.3.1).
fn tsig_signed(mut packet: Vec<u8>) -> Vec<u8> {
    use hmac::{Hmac, Mac};
    let key = common::wire_name("k.");
    let alg = common::wire_name("hmac-sha256.");
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut vars = key.clone();
    vars.extend_from_slice(&[0, 255, 0, 0, 0, 0]);
    vars.extend_from_slice(&alg);
    vars.extend_from_slice(&time.to_be_bytes()[2..]);
    vars.extend_from_slice(&[1, 44, 0, 0, 0, 0]); // fudge 300, error 0, no other data
    let mut m = <Hmac<sha2::Sha256> as Mac>::new_from_slice(b"secret-key-for-tests").unwrap();
    m.update(&packet);
    m.update(&vars);
    let mac = m.finalize().into_bytes();
    let id = [packet[0], packet[1]];
    packet.extend_from_slice(&key);
    packet.extend_from_slice(&[0, 250, 0, 255, 0, 0, 0, 0]);
    packet.extend_from_slice(&((alg.len() + 16 + mac.len()) as u16).to_be_bytes());
    packet.extend_from_slice(&alg);
    packet.extend_from_slice(&time.to_be_bytes()[2..]);
    packet.extend_from_slice(&[1, 44, 0, 32]);
    packet.extend_from_slice(&mac);
    packet.extend_from_slice(&id);
    packet.extend_from_slice(&[0, 0, 0, 0]);
    packet[11] += 1;
    packet
}

#[test]
fn tsig_unsigned_refused_and_signed_queries_allocate_nothing() {
    let core = core_for(
        ".:53 {\n tsig {\n  secret k. c2VjcmV0LWtleS1mb3ItdGVzdHM=\n  require TXT\n }\n whoami\n}\n",
    );
    let queries = [
        common::query(0x1001, "www.example.org.", 1),
        common::query_full(0x1002, "www.example.org.", 28, 1, EDNS),
        common::query(0x1003, "www.example.org.", 16),
        tsig_signed(common::query(0x1004, "www.example.org.", 1)),
        tsig_signed(common::query_full(0x1005, "www.example.org.", 16, 1, EDNS)),
    ];
    // whoami: the address and the port in additional; then the OPT, then the TSIG.
    let expected = [(0, 0, 2), (0, 0, 3), (5, 0, 0), (0, 0, 3), (0, 0, 4)];
    let counts = check_counts(&expected);
    let total = allocations_serving(&core, &queries, |i, reply| {
        counts(i, reply);
        if i >= 3 {
            // The TSIG record is last (74 bytes): its type follows the key name `k.`.
            let n = reply.len();
            assert_eq!(
                &reply[n - 74 + 3..n - 74 + 5],
                &[0, 250],
                "query {i}: signed"
            );
        }
    });
    assert_eq!(total, 0, "tsig allocated {total} times");
}
