//! cache in front of real upstreams: an authority run by the test (whose TTLs, denials and
//! failures the test chooses) behind forward, and erratic.

mod common;

use common::authority::{ARecord, Authority, Zone};
use common::{Server, ask, query, query_full};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::RecordType;
use std::time::{Duration, Instant};

const A: u16 = 1;

fn zone(records: &[(&str, u32)]) -> Zone {
    Zone {
        records: records
            .iter()
            .enumerate()
            .map(|(i, (n, ttl))| ARecord {
                name: n.to_string(),
                ttl: *ttl,
                addr: [192, 0, 2, i as u8 + 1],
            })
            .collect(),
        soa_ttl: 3600,
        soa_minimum: 60,
        servfail_under_fail: true,
    }
}

/// ringdns with `cache_body` in front of forward to the authority, on one core (so one cache).
fn cached(auth: &Authority, cache_body: &str) -> Server {
    let body = cache_body.to_string();
    let up = auth.port;
    Server::start(move |p| {
        format!("{{\n workers 1\n}}\n.:{p} {{\n {body}\n forward . 127.0.0.1:{up}\n}}\n")
    })
}

fn ttls(m: &Message) -> Vec<u32> {
    m.answers.iter().map(|r| r.ttl).collect()
}

#[test]
fn ttls_are_clamped_to_the_configured_range() {
    let auth = Authority::start(zone(&[("long.test.", 3600), ("short.test.", 1)]));
    let s = cached(&auth, "cache 10");
    let m = ask(s.port, &query(1, "long.test.", A));
    assert_eq!(
        ttls(&m),
        vec![10],
        "cache 10 caps a TTL of 3600, already on the first reply"
    );
    let m = ask(s.port, &query(2, "short.test.", A));
    assert_eq!(ttls(&m), vec![5], "a TTL of 1 is raised to the 5 s minimum");
    let m = ask(s.port, &query(3, "long.test.", A));
    assert!(ttls(&m)[0] <= 10);
    assert_eq!(auth.count("long.test."), 1, "the second query was a hit");
}

#[test]
fn ttls_count_down_and_each_record_keeps_its_own() {
    let mut z = zone(&[]);
    z.records = vec![
        ARecord {
            name: "two.test.".into(),
            ttl: 300,
            addr: [192, 0, 2, 1],
        },
        ARecord {
            name: "two.test.".into(),
            ttl: 100,
            addr: [192, 0, 2, 2],
        },
    ];
    let auth = Authority::start(z);
    let s = cached(&auth, "cache");
    let first = ask(s.port, &query(1, "two.test.", A));
    assert_eq!(ttls(&first), vec![300, 100]);
    std::thread::sleep(Duration::from_millis(2100));
    let second = ask(s.port, &query(2, "two.test.", A));
    let t = ttls(&second);
    assert!(t[0] <= 298 && t[0] >= 296, "{t:?}");
    assert_eq!(t[0] - t[1], 200, "records keep their own TTLs: {t:?}");
    assert_eq!(auth.count("two.test."), 1);
}

#[test]
fn denials_are_cached_for_the_soa_negative_ttl() {
    let auth = Authority::start(zone(&[("exists.test.", 300)]));
    let s = cached(&auth, "cache");
    let m = ask(s.port, &query(1, "missing.test.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    let soa = &m.authorities[0];
    assert_eq!(soa.record_type(), RecordType::SOA);
    assert_eq!(soa.ttl, 60, "min(SOA TTL 3600, MINIMUM 60)");
    let m = ask(s.port, &query(2, "missing.test.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    assert!(m.authorities[0].ttl <= 60);
    assert_eq!(auth.count("missing.test."), 1);
    // NODATA: the name exists, not the type.
    let m = ask(s.port, &query(3, "exists.test.", 28));
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.answers.is_empty());
    ask(s.port, &query(4, "exists.test.", 28));
    assert_eq!(auth.count("exists.test."), 1);
}

#[test]
fn do_bit_queries_get_their_own_entries_and_hits_keep_the_clients_case_without_aa() {
    let auth = Authority::start(zone(&[("case.test.", 300)]));
    let s = cached(&auth, "cache");
    let miss = ask(s.port, &query(1, "case.test.", A));
    assert!(
        miss.metadata.authoritative,
        "the upstream's own reply is relayed as it is"
    );
    let r =
        common::udp_exchange(s.port, &query(2, "CaSe.TeSt.", A), Duration::from_secs(2)).unwrap();
    let hit = Message::from_vec(&r).unwrap();
    assert_eq!(hit.metadata.id, 2);
    assert_eq!(
        &r[12..23],
        &common::wire_name("CaSe.TeSt.")[..],
        "question in the client's case"
    );
    assert!(
        !hit.metadata.authoritative,
        "a cached answer is not authoritative"
    );
    assert_eq!(auth.count("case.test."), 1);
    ask(
        s.port,
        &query_full(3, "case.test.", A, 1, Some((1232, true))),
    );
    assert_eq!(auth.count("case.test."), 2, "DO=1 is another entry");
    ask(
        s.port,
        &query_full(4, "case.test.", A, 1, Some((1232, true))),
    );
    assert_eq!(auth.count("case.test."), 2);
}

#[test]
fn stale_answers_are_served_while_the_upstream_is_down() {
    let auth = Authority::start(zone(&[("stale.test.", 1)]));
    let s = cached(&auth, "cache {\n  success 100 1 1\n  serve_stale 1h\n }");
    assert_eq!(ttls(&ask(s.port, &query(1, "stale.test.", A))), vec![1]);
    drop(auth); // the upstream is gone
    std::thread::sleep(Duration::from_millis(1300));
    let m = ask(s.port, &query(2, "stale.test.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert_eq!(
        ttls(&m),
        vec![0],
        "stale answers carry the response TTL (0)"
    );
}

#[test]
fn serve_stale_verify_asks_first_and_falls_back_to_stale() {
    let auth = Authority::start(zone(&[("verify.test.", 1)]));
    let port = auth.port;
    let s = cached(
        &auth,
        "cache {\n  success 100 1 1\n  serve_stale 1h verify 300ms\n }",
    );
    ask(s.port, &query(1, "verify.test.", A));
    std::thread::sleep(Duration::from_millis(1200));
    // Upstream up: verify refreshes first, so the answer is fresh (TTL 1) and reached it.
    let m = ask(s.port, &query(2, "verify.test.", A));
    assert_eq!(ttls(&m), vec![1]);
    assert_eq!(auth.count("verify.test."), 2);
    drop(auth);
    std::thread::sleep(Duration::from_millis(1200));
    let t0 = Instant::now();
    let m = ask(s.port, &query(3, "verify.test.", A));
    assert_eq!(
        m.metadata.response_code,
        ResponseCode::NoError,
        "stale after the refresh failed"
    );
    assert_eq!(ttls(&m), vec![0]);
    assert!(
        t0.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t0.elapsed()
    );
    let _ = port;
}

#[test]
fn prefetch_refreshes_a_popular_entry_before_it_expires() {
    let auth = Authority::start(zone(&[("pop.test.", 4)]));
    let s = cached(&auth, "cache {\n  success 100 4 1\n  prefetch 2 1m 80%\n }");
    ask(s.port, &query(1, "pop.test.", A));
    std::thread::sleep(Duration::from_millis(1100));
    // Second and third hits: popular, and at most 80 % of its 4 s left: prefetched.
    ask(s.port, &query(2, "pop.test.", A));
    ask(s.port, &query(3, "pop.test.", A));
    let t0 = Instant::now();
    while auth.count("pop.test.") < 2 && t0.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        auth.count("pop.test."),
        2,
        "the prefetch reached the upstream"
    );
    // The refreshed entry answers with a fresh TTL.
    let m = ask(s.port, &query(4, "pop.test.", A));
    assert!(ttls(&m)[0] >= 3, "{:?}", ttls(&m));
    assert_eq!(auth.count("pop.test."), 2);
}

#[test]
fn servfail_is_cached_briefly_and_capacity_evicts_an_entry_not_hit_since_it_was_stored() {
    let auth = Authority::start(zone(&[
        ("a.test.", 300),
        ("b.test.", 300),
        ("c.test.", 300),
    ]));
    let s = cached(&auth, "cache {\n  success 2\n }");
    for n in ["a.test.", "b.test.", "a.test.", "c.test."] {
        ask(s.port, &query(1, n, A));
    }
    // Capacity 2: c pushed out b (never hit), a (hit, so given a second chance) stayed.
    ask(s.port, &query(2, "a.test.", A));
    ask(s.port, &query(3, "b.test.", A));
    assert_eq!(auth.count("a.test."), 1);
    assert_eq!(auth.count("b.test."), 2);
    let m = ask(s.port, &query(4, "x.fail.test.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::ServFail);
    ask(s.port, &query(5, "x.fail.test.", A));
    assert_eq!(
        auth.count("x.fail.test."),
        1,
        "SERVFAIL cached (5 s by default)"
    );
}

/// Resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[test]
fn a_flood_of_a_million_unique_names_stays_within_the_memory_bound() {
    // erratic answers every name (TTL 0, kept 5 s): every query is a miss that is stored.
    let s = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n cache {{\n  success 1000000\n  max_bytes 4M\n }}\n erratic {{\n  drop 0\n }}\n}}\n"
        )
    });
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = [0u8; 512];
    let warm = 50_000u32;
    let total = 1_000_000u32;
    let (mut sent, mut got) = (0u32, 0u32);
    let mut baseline = 0;
    let t0 = Instant::now();
    while got < total && t0.elapsed() < Duration::from_secs(240) {
        while sent < total && sent - got < 200 {
            let q = query((sent & 0xffff) as u16, &format!("n{sent}.flood.test."), A);
            sock.send_to(&q, ("127.0.0.1", s.port)).unwrap();
            sent += 1;
        }
        if sock.recv_from(&mut buf).is_err() {
            break;
        }
        got += 1;
        if got == warm {
            baseline = rss_kib(s.pid());
        }
    }
    assert!(got > total * 99 / 100, "answered {got} of {total}");
    let end = rss_kib(s.pid());
    // 4 MiB of stored replies plus their map: the process must not grow by more than a
    // few times that, however many names went by.
    assert!(
        end < baseline + 16 * 1024,
        "RSS grew from {baseline} KiB to {end} KiB"
    );
}
