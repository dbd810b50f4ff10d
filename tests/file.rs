//! The file plugin through the real binary: answers over UDP and TCP, reload of a changed
//! zone (and of a broken one, which leaves the old zone serving; and of the same serial with
//! `reload_by_mtime`), start-up errors, CNAME targets outside the zone looked up through the
//! server, fallthrough, REFUSED, the DS of a child zone's apex answered by its parent in the
//! same block.

mod common;

use common::{Server, TempDir, ask, query, query_full, tcp_exchange};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::RecordType;
use std::time::{Duration, Instant};

const A: u16 = 1;
const SOA: u16 = 6;
const DS: u16 = 43;
const AXFR: u16 = 252;

fn zone(serial: u32, www: &str) -> String {
    format!(
        "$ORIGIN example.org.\n$TTL 1h\n\
         @ IN SOA ns1 hostmaster {serial} 2h 30m 2w 5m\n\
         @ IN NS ns1\n\
         ns1 IN A 192.0.2.53\n\
         www IN A {www}\n\
         out IN CNAME host.example.net.\n\
         gone IN CNAME nothing.example.net.\n"
    )
}

const NET: &str = "$ORIGIN example.net.\n@ 3600 IN SOA ns hm 1 3600 600 86400 60\n\
                   @ 3600 IN NS ns\nns 3600 IN A 192.0.2.2\nhost 60 IN A 198.51.100.7\n";

fn a_records(m: &Message) -> Vec<String> {
    let mut v: Vec<String> = m
        .answers
        .iter()
        .filter(|r| r.record_type() == RecordType::A)
        .map(|r| r.data.to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn answers_authoritatively_over_udp_and_tcp() {
    let dir = TempDir::new();
    let db = dir.write("db.example.org", &zone(1, "192.0.2.80"));
    let s = Server::start(|p| format!("example.org:{p} {{\n    file {}\n}}\n", db.display()));
    let m = ask(s.port, &query(1, "WWW.example.org.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.metadata.authoritative);
    assert_eq!(m.queries[0].name.to_ascii(), "WWW.example.org.");
    assert_eq!(a_records(&m), ["192.0.2.80"]);
    assert_eq!(m.authorities.len(), 1, "the apex NS");
    let m = ask(s.port, &query(2, "nope.example.org.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    assert_eq!(m.authorities[0].record_type(), RecordType::SOA);
    assert_eq!(m.authorities[0].ttl, 300, "min(SOA TTL, MINIMUM)");
    let replies = tcp_exchange(s.port, &[query(3, "www.example.org.", A)]);
    let m = Message::from_vec(&replies[0]).unwrap();
    assert_eq!(a_records(&m), ["192.0.2.80"]);
    // Transfers are not file's.
    let m = ask(s.port, &query(4, "example.org.", AXFR));
    assert_eq!(m.metadata.response_code, ResponseCode::Refused);
}

#[test]
fn a_changed_serial_is_swapped_in_and_a_broken_file_keeps_the_old_zone() {
    let dir = TempDir::new();
    let db = dir.write("db.example.org", &zone(1, "192.0.2.80"));
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n    file {} {{\n        reload 1s\n    }}\n}}\n",
            db.display()
        )
    });
    assert_eq!(
        a_records(&ask(s.port, &query(1, "www.example.org.", A))),
        ["192.0.2.80"]
    );
    // Same serial, new data: not reloaded (CoreDNS's rule).
    std::fs::write(&db, zone(1, "192.0.2.81")).unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(
        a_records(&ask(s.port, &query(2, "www.example.org.", A))),
        ["192.0.2.80"]
    );
    // A new serial: swapped in; every query meanwhile is answered.
    std::fs::write(&db, zone(2, "192.0.2.82")).unwrap();
    let t0 = Instant::now();
    let mut n = 0u16;
    loop {
        n += 1;
        let m = ask(s.port, &query(n, "www.example.org.", A));
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        if a_records(&m) == ["192.0.2.82"] {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the new zone never came"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Broken: logged with its line, the old zone serves on.
    std::fs::write(&db, zone(3, "192.0.2.83") + "bad IN A 1.2.3\n").unwrap();
    assert!(
        s.wait_stdout("db.example.org:9 - ", Duration::from_secs(10)),
        "no FILE:LINE error logged:\n{}",
        s.stdout()
    );
    assert_eq!(
        a_records(&ask(s.port, &query(9, "www.example.org.", A))),
        ["192.0.2.82"]
    );
}

#[test]
fn reload_by_mtime_swaps_in_a_changed_file_with_the_same_serial() {
    let dir = TempDir::new();
    let db = dir.write("db.example.org", &zone(1, "192.0.2.80"));
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n    file {} {{\n        reload 1s\n        reload_by_mtime\n    }}\n}}\n",
            db.display()
        )
    });
    assert_eq!(
        a_records(&ask(s.port, &query(1, "www.example.org.", A))),
        ["192.0.2.80"]
    );
    // The serial stays 1: without reload_by_mtime this is never loaded (the test above).
    dir.replace("db.example.org", &zone(1, "192.0.2.81"));
    let t0 = Instant::now();
    let mut n = 1u16;
    while a_records(&ask(s.port, &query(n, "www.example.org.", A))) != ["192.0.2.81"] {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the changed file was not swapped in:\n{}",
            s.stdout()
        );
        n += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_bad_zone_file_stops_the_start_with_its_line() {
    let dir = TempDir::new();
    let db = dir.write(
        "db.bad",
        &(zone(1, "192.0.2.80") + "x IN MX notanumber mail\n"),
    );
    let (code, err) = common::run_expect_failure(&format!(
        "example.org:0 {{\n    file {}\n}}\n",
        db.display()
    ));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("db.bad:9 - "), "{err}");
}

#[test]
fn a_missing_file_is_fatal_without_reload_and_awaited_with_it() {
    let dir = TempDir::new();
    let db = dir.0.join("db.later");
    let (code, err) = common::run_expect_failure(&format!(
        "example.org:0 {{\n    file {} {{\n        reload 0\n    }}\n}}\n",
        db.display()
    ));
    assert_eq!(code, 1, "{err}");
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n    file {} {{\n        reload 1s\n    }}\n}}\n",
            db.display()
        )
    });
    let m = ask(s.port, &query(1, "www.example.org.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::ServFail);
    let log = s.stdout();
    assert!(
        log.contains("plugin/file: Failed to open") && log.contains("No such file"),
        "the warning names the file and why: {log}"
    );
    std::fs::write(&db, zone(1, "192.0.2.80")).unwrap();
    let t0 = Instant::now();
    while a_records(&ask(s.port, &query(2, "www.example.org.", A))) != ["192.0.2.80"] {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the zone never loaded"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn cname_targets_outside_the_zone_are_looked_up_through_the_server() {
    let dir = TempDir::new();
    let org = dir.write("db.example.org", &zone(1, "192.0.2.80"));
    let net = dir.write("db.example.net", NET);
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n    file {}\n}}\nexample.net:{p} {{\n    file {}\n}}\n",
            org.display(),
            net.display()
        )
    });
    for proto_tcp in [false, true] {
        let q = query(1, "out.example.org.", A);
        let m = if proto_tcp {
            Message::from_vec(&tcp_exchange(s.port, &[q])[0]).unwrap()
        } else {
            ask(s.port, &q)
        };
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert_eq!(m.answers[0].record_type(), RecordType::CNAME);
        assert_eq!(a_records(&m), ["198.51.100.7"], "tcp={proto_tcp}");
        assert_eq!(m.answers[1].name.to_ascii(), "host.example.net.");
    }
    // The target's NXDOMAIN is the reply's rcode, the CNAME kept (RFC 6604).
    let m = ask(s.port, &query(2, "gone.example.org.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    assert_eq!(m.answers.len(), 1);
    assert_eq!(m.authorities[0].record_type(), RecordType::SOA);
}

#[test]
fn the_ds_of_a_child_apex_comes_from_the_parent_zone_of_the_same_block() {
    // RFC 4035 §3.1.4.1: one block serves the parent and the child; the DS RRset is the
    // parent's (the child's apex has none), everything else at the apex is the child's.
    let dir = TempDir::new();
    let parent = zone(1, "192.0.2.80")
        + "sub IN NS ns.sub\nns.sub IN A 192.0.2.54\n\
           sub IN DS 12345 8 2 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n";
    let org = dir.write("db.example.org", &parent);
    let sub = dir.write(
        "db.sub.example.org",
        "$ORIGIN sub.example.org.\n$TTL 1h\n@ IN SOA ns hostmaster 1 2h 30m 2w 5m\n\
         @ IN NS ns\nns IN A 192.0.2.54\nwww IN A 192.0.2.90\n",
    );
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n    file {} sub.example.org\n    file {} example.org\n}}\n",
            sub.display(),
            org.display()
        )
    });
    for (id, tcp) in [(1, false), (2, true)] {
        let q = query(id, "Sub.example.org.", DS);
        let m = if tcp {
            Message::from_vec(&tcp_exchange(s.port, &[q])[0]).unwrap()
        } else {
            ask(s.port, &q)
        };
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert!(m.metadata.authoritative);
        assert_eq!(m.answers.len(), 1, "the parent's DS, tcp={tcp}: {m:?}");
        assert_eq!(m.answers[0].record_type(), RecordType::DS);
        assert_eq!(m.answers[0].name.to_ascii(), "Sub.example.org.");
    }
    // Every other type at the child's apex, and names below it, are the child's.
    let m = ask(s.port, &query(3, "sub.example.org.", SOA));
    assert!(m.metadata.authoritative);
    assert_eq!(m.answers[0].record_type(), RecordType::SOA);
    assert_eq!(
        a_records(&ask(s.port, &query(4, "www.sub.example.org.", A))),
        ["192.0.2.90"]
    );
    // A DS below the child's apex is the child's to deny: NODATA with its SOA.
    let m = ask(s.port, &query(5, "www.sub.example.org.", DS));
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.answers.is_empty());
    assert_eq!(
        m.authorities[0].name.to_ascii().to_lowercase(),
        "sub.example.org."
    );
}

#[test]
fn a_cname_out_of_the_zone_is_answered_by_a_hosts_block_of_the_server() {
    // As CoreDNS's upstream lookup: the target goes through the server, so another block's
    // plugin (here hosts, not a zone) answers it.
    let dir = TempDir::new();
    let org = dir.write("db.example.org", &zone(1, "192.0.2.80"));
    let hosts = dir.write("hosts", "198.51.100.7 host.example.net\n");
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n    file {}\n}}\nexample.net:{p} {{\n    hosts {}\n}}\n",
            org.display(),
            hosts.display()
        )
    });
    for tcp in [false, true] {
        let q = query(1, "out.example.org.", A);
        let m = if tcp {
            Message::from_vec(&tcp_exchange(s.port, &[q])[0]).unwrap()
        } else {
            ask(s.port, &q)
        };
        assert_eq!(m.metadata.response_code, ResponseCode::NoError, "tcp={tcp}");
        assert_eq!(m.answers[0].record_type(), RecordType::CNAME);
        assert_eq!(m.answers[1].name.to_ascii(), "host.example.net.");
        assert_eq!(a_records(&m), ["198.51.100.7"], "tcp={tcp}: {m:?}");
    }
}

#[test]
fn names_not_in_the_zone_are_refused_and_fallthrough_goes_on() {
    let dir = TempDir::new();
    let db = dir.write("db.example.org", &zone(1, "192.0.2.80"));
    let s = Server::start(|p| format!(".:{p} {{\n    file {} example.org\n}}\n", db.display()));
    let m = ask(s.port, &query(1, "example.com.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::Refused);
    let s2 = Server::start(|p| {
        format!(
            "example.org:{p} {{\n    file {} {{\n        fallthrough\n    }}\n    whoami\n}}\n",
            db.display()
        )
    });
    // NXDOMAIN falls through to whoami; existing names stay file's.
    let m = ask(
        s2.port,
        &query_full(2, "nope.example.org.", A, 1, Some((1232, false))),
    );
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(
        m.additionals
            .iter()
            .any(|r| r.record_type() == RecordType::A)
    );
    assert!(m.answers.is_empty());
    assert_eq!(
        a_records(&ask(s2.port, &query(3, "www.example.org.", A))),
        ["192.0.2.80"]
    );
}

/// `VmRSS` and `VmHWM` of a process, kB.
fn rss_and_peak(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb = |key: &str| -> u64 {
        let line = status.lines().find(|l| l.starts_with(key)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    (kb("VmRSS:"), kb("VmHWM:"))
}

#[test]
fn a_large_zone_gives_what_its_parse_freed_back_to_the_system() {
    // 300 000 addresses: the parse's records take about twice what the built zone keeps.
    let dir = TempDir::new();
    let mut text = zone(1, "192.0.2.80");
    for i in 0..300_000u32 {
        text.push_str(&format!(
            "h{i} IN A 10.{}.{}.{}\n",
            i >> 16,
            (i >> 8) & 255,
            i & 255
        ));
    }
    let db = dir.write("db.example.org", &text);
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n    file {} {{\n        reload 1s\n    }}\n}}\n",
            db.display()
        )
    });
    assert_eq!(
        a_records(&ask(s.port, &query(1, "h299999.example.org.", A))),
        ["10.4.147.223"]
    );
    let (rss, peak) = rss_and_peak(s.pid());
    assert!(
        rss * 10 < peak * 7,
        "after the load {rss} kB resident, {peak} kB at the peak: the parse's memory was kept"
    );
    // And after a reload, on the reloading thread: back near what the first load held,
    // not both versions (the old one is freed by whichever thread drops it last).
    dir.replace("db.example.org", &text.replace(" 1 2h 30m", " 2 2h 30m"));
    let t0 = Instant::now();
    while !s.stdout().contains("with 2 SOA serial") {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no reload\n{}",
            s.stdout()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The log line comes before the zone is swapped.
    loop {
        let (now, peak) = rss_and_peak(s.pid());
        if now * 10 < rss * 13 {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "after the reload {now} kB resident ({rss} kB after the load, {peak} kB at the peak)"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
