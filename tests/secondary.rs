//! The secondary plugin through the real binary, with NSD (Debian's package, run by
//! tests/common/peers.rs) as the primary on loopback: SERVFAIL until the first transfer
//! and the zone after it, a change at the primary brought by its NOTIFY long before the
//! refresh timer, NOTIFY from a stranger ignored, the zone served while the primary is
//! gone until its SOA expire and transferred again when the primary is back, a reload that
//! keeps the zone, a zone that takes many AXFR messages, the zone transferred on by
//! *transfer* record for record as NSD sends it, `fallthrough`, and setup errors.
//!
//! Without NSD the tests that need it say so loudly and pass, except in CI (CI=true),
//! where they fail (see `common::peers::tool`).

mod common;

use common::peers::{self, Kind, Options, Peer, Zone};
use common::{Port, Server, TempDir, ask, free_port, query, tcp_exchange};
use hickory_proto::op::{Message, OpCode, ResponseCode};
use hickory_proto::rr::RecordType;
use std::net::UdpSocket;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

const TEST: &str = "tests/secondary.rs";
const A: u16 = 1;
const SOA: u16 = 6;
const AXFR: u16 = 252;

/// The zone at the primary: serial, SOA timers (refresh, retry, expire) and www's address.
fn zone_text(serial: u32, timers: (u32, u32, u32), www: &str) -> String {
    let (refresh, retry, expire) = timers;
    format!(
        "$ORIGIN example.org.\n$TTL 300\n\
         @ IN SOA ns1 hostmaster {serial} {refresh} {retry} {expire} 60\n\
         @ IN NS ns1\n\
         ns1 IN A 192.0.2.53\n\
         www IN A {www}\n\
         mail IN MX 10 mx\n\
         mx IN A 192.0.2.25\n\
         alias IN CNAME www\n"
    )
}

/// Long timers: nothing but a NOTIFY makes ringdns look at the primary within a test.
const LONG: (u32, u32, u32) = (3600, 600, 86400);

/// Writes the zone file, its modification time moved `ahead` seconds so that NSD (which
/// looks at the mtime on SIGHUP) sees a change made within the same second.
fn write_zone(path: &Path, text: &str, ahead: u64) {
    std::fs::write(path, text).unwrap();
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(ahead))
        .unwrap();
}

/// NSD's options: transfers to loopback, and NOTIFY to `notify` when given.
fn nsd_options(notify: Option<u16>) -> Options {
    let mut zone = vec!["provide-xfr: 127.0.0.1 NOKEY".to_string()];
    if let Some(p) = notify {
        zone.push(format!("notify: 127.0.0.1@{p} NOKEY"));
    }
    Options {
        nsd_zone: zone,
        ..Options::default()
    }
}

/// NSD serving example.org from `text` (in a directory of its own, returned with the file
/// so a test can change it), notifying `notify` when given; `None` without NSD.
fn primary(text: &str, notify: Option<u16>) -> Option<(TempDir, std::path::PathBuf, Peer)> {
    let dir = TempDir::new();
    let db = dir.0.join("db.example.org");
    write_zone(&db, text, 0);
    let zones = [Zone::new("example.org.", &db)];
    let nsd = Peer::start(Kind::Nsd, &zones, &nsd_options(notify), TEST)?;
    Some((dir, db, nsd))
}

/// A block serving example.org as a secondary of `primaries`.
fn corefile(port: u16, primaries: &str) -> String {
    format!(
        "example.org:{port} {{\n    secondary {{\n        transfer from {primaries}\n    }}\n}}\n"
    )
}

/// The A records of the answer.
fn a_records(m: &Message) -> Vec<String> {
    addresses(&m.answers)
}

/// The A records among `records`.
fn addresses(records: &[hickory_proto::rr::Record]) -> Vec<String> {
    let mut v: Vec<String> = records
        .iter()
        .filter(|r| r.record_type() == RecordType::A)
        .map(|r| r.data.to_string())
        .collect();
    v.sort();
    v
}

/// Asks for www.example.org A until the answer is `want` (NOERROR with that address), for
/// `limit` at most; every answer meanwhile must be NOERROR or `also` (SERVFAIL while it is
/// not loaded). Panics with the server's log when the answer never comes.
fn wait_www(s: &Server, want: &str, also: Option<ResponseCode>, limit: Duration) -> Duration {
    let t0 = Instant::now();
    let mut id = 0u16;
    loop {
        id = id.wrapping_add(1);
        let m = ask(s.port, &query(id, "www.example.org.", A));
        let rc = m.metadata.response_code;
        if rc == ResponseCode::NoError && a_records(&m) == [want] {
            return t0.elapsed();
        }
        assert!(
            rc == ResponseCode::NoError || Some(rc) == also,
            "unexpected {rc:?} while waiting for {want}:\n{}",
            s.stdout()
        );
        assert!(
            t0.elapsed() < limit,
            "www.example.org. was not {want} within {limit:?}:\n{}",
            s.stdout()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The rcode of a query for www.example.org A.
fn www_rcode(s: &Server, id: u16) -> ResponseCode {
    ask(s.port, &query(id, "www.example.org.", A))
        .metadata
        .response_code
}

/// A NOTIFY for example.org. (opcode 4, QTYPE SOA, AA set, RD clear) with ID `id`.
fn notify(id: u16) -> Vec<u8> {
    let mut q = query(id, "example.org.", SOA);
    q[2] = (4 << 3) | 0x04;
    q
}

/// Sends `msg` from `from` (a loopback address) to the server over UDP; the reply, if one
/// comes within `wait`.
fn send_from(from: &str, port: u16, msg: &[u8], wait: Duration) -> Option<Vec<u8>> {
    let s = UdpSocket::bind((from, 0)).unwrap();
    s.set_read_timeout(Some(wait)).unwrap();
    s.send_to(msg, ("127.0.0.1", port)).unwrap();
    let mut buf = vec![0u8; 4096];
    s.recv(&mut buf).ok().map(|n| buf[..n].to_vec())
}

/// Waits until the server's log holds `needle`, for `limit` at most.
fn wait_log(s: &Server, needle: &str, limit: Duration) {
    assert!(
        s.wait_stdout(needle, limit),
        "no `{needle}` in the log within {limit:?}:\n{}",
        s.stdout()
    );
}

/// How often `needle` is in the log.
fn count(s: &Server, needle: &str) -> usize {
    s.stdout().matches(needle).count()
}

/// NSD's main process (the one that reloads on SIGHUP), from its pid file.
fn nsd_main_pid(nsd: &Peer) -> u32 {
    let text = std::fs::read_to_string(nsd.dir.0.join("nsd.pid")).unwrap();
    let pid: u32 = text.trim().parse().unwrap();
    assert!(
        peers::process_tree(nsd.pid()).contains(&pid),
        "NSD's pid file names a process we did not start"
    );
    pid
}

/// Starts ringdns on `port` with `corefile`.
fn start(port: Port, corefile: &str) -> Server {
    Server::try_start_on(port, corefile, &[]).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn fallthrough_passes_an_nxdomain_of_its_zones_to_the_next_plugin() {
    let Some((_dir, _db, nsd)) = primary(&zone_text(1, LONG, "192.0.2.80"), None) else {
        return;
    };
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n    secondary {{\n        transfer from 127.0.0.1:{}\n        \
             fallthrough sub.example.org\n    }}\n    whoami\n}}\n",
            nsd.port
        )
    });
    wait_www(
        &s,
        "192.0.2.80",
        Some(ResponseCode::ServFail),
        Duration::from_secs(20),
    );
    // NXDOMAIN under a fallthrough zone: whoami's answer (the client's address in
    // additional), not the zone's.
    let m = ask(
        s.port,
        &common::query_full(1, "nope.sub.example.org.", A, 1, Some((1232, false))),
    );
    assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{m:?}");
    assert!(m.answers.is_empty());
    assert!(
        m.additionals
            .iter()
            .any(|r| r.record_type() == RecordType::A),
        "whoami answered: {m:?}"
    );
    // Elsewhere in the zone NXDOMAIN is the answer, and NODATA never falls through.
    let m = ask(s.port, &query(2, "nope.example.org.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    assert!(m.metadata.authoritative);
    assert_eq!(m.authorities[0].record_type(), RecordType::SOA);
    let m = ask(s.port, &query(3, "www.example.org.", 15));
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.metadata.authoritative);
    assert_eq!(m.authorities[0].record_type(), RecordType::SOA);
}

#[test]
fn servfail_until_the_first_transfer_then_the_zone() {
    if peers::tool("nsd", "nsd", TEST).is_none() {
        return;
    }
    let dir = TempDir::new();
    let db = dir.0.join("db.example.org");
    write_zone(&db, &zone_text(1, LONG, "192.0.2.1"), 0);
    // The primary's port is known before the primary runs.
    let primary = free_port();
    let p = primary.port;
    let s = Server::start(|port| corefile(port, &format!("127.0.0.1:{p}")));
    // Nothing to transfer from: SERVFAIL, over UDP and TCP, and the failures logged.
    assert_eq!(www_rcode(&s, 1), ResponseCode::ServFail);
    let replies = tcp_exchange(s.port, &[query(2, "www.example.org.", A)]);
    assert_eq!(common::rcode(&replies[0]), 2, "SERVFAIL over TCP");
    wait_log(
        &s,
        &format!(
            "[ERROR] plugin/secondary: Failed to setup transfer `example.org.' with `\"127.0.0.1:{p}\"': "
        ),
        Duration::from_secs(10),
    );
    wait_log(
        &s,
        "[WARNING] plugin/secondary: All 'example.org.' masters failed to transfer, retrying in ",
        Duration::from_secs(10),
    );
    // The primary starts: the retry (every 10 s at most) transfers the zone.
    let Some(_nsd) = Peer::start_on(
        Kind::Nsd,
        primary,
        &[Zone::new("example.org.", &db)],
        &nsd_options(None),
        TEST,
    ) else {
        return;
    };
    wait_www(
        &s,
        "192.0.2.1",
        Some(ResponseCode::ServFail),
        Duration::from_secs(20),
    );
    wait_log(
        &s,
        &format!("[INFO] plugin/secondary: Transferred: example.org. from 127.0.0.1:{p}"),
        Duration::from_secs(1),
    );
    // Authoritative answers from the transferred zone, as file gives them.
    let m = ask(s.port, &query(3, "www.example.org.", A));
    assert!(m.metadata.authoritative);
    assert_eq!(m.authorities.len(), 1, "the apex NS");
    let m = ask(s.port, &query(4, "mail.example.org.", 15));
    assert_eq!(m.answers.len(), 1);
    assert_eq!(
        addresses(&m.additionals),
        ["192.0.2.25"],
        "the MX target's address"
    );
    let m = ask(s.port, &query(5, "alias.example.org.", A));
    assert_eq!(m.answers.len(), 2, "the CNAME and its target");
    let m = ask(s.port, &query(6, "nope.example.org.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    assert_eq!(m.authorities[0].record_type(), RecordType::SOA);
    let replies = tcp_exchange(s.port, &[query(7, "www.example.org.", A)]);
    assert_eq!(
        a_records(&Message::from_vec(&replies[0]).unwrap()),
        ["192.0.2.1"]
    );
    // Transfers out are not secondary's.
    let m = ask(s.port, &query(8, "example.org.", AXFR));
    assert_eq!(m.metadata.response_code, ResponseCode::Refused);
    // Outside the zone: REFUSED (no next plugin).
    let m = ask(s.port, &query(9, "www.example.net.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::Refused);
}

#[test]
fn a_notify_from_the_primary_brings_a_change_long_before_the_refresh() {
    if peers::tool("nsd", "nsd", TEST).is_none() {
        return;
    }
    // ringdns's port is known before NSD starts, so NSD can be told to notify it.
    let ours = free_port();
    let Some((_dir, db, nsd)) = primary(&zone_text(1, LONG, "192.0.2.1"), Some(ours.port)) else {
        return;
    };
    let text = corefile(ours.port, &format!("127.0.0.1:{}", nsd.port));
    let s = start(ours, &text);
    wait_www(
        &s,
        "192.0.2.1",
        Some(ResponseCode::ServFail),
        Duration::from_secs(10),
    );

    // A NOTIFY from a stranger (127.0.0.2 is no primary) is ignored: no reply, logged.
    assert_eq!(
        send_from(
            "127.0.0.2",
            s.port,
            &notify(0x7001),
            Duration::from_millis(700)
        ),
        None
    );
    wait_log(
        &s,
        "[ERROR] plugin/secondary: Dropping notify from 127.0.0.2 for example.org.",
        Duration::from_secs(5),
    );

    // The zone changes at the primary; NSD reloads it on SIGHUP and sends its NOTIFY.
    // The refresh timer is an hour: only the NOTIFY can bring the change this soon.
    let before = count(
        &s,
        "Notify from 127.0.0.1 for example.org.: checking transfer",
    );
    write_zone(&db, &zone_text(2, LONG, "192.0.2.2"), 5);
    common::send_signal(nsd_main_pid(&nsd), "HUP");
    let took = wait_www(&s, "192.0.2.2", None, Duration::from_secs(20));
    assert!(
        count(
            &s,
            "Notify from 127.0.0.1 for example.org.: checking transfer"
        ) > before,
        "the change came without a NOTIFY (after {took:?}):\n{}\nNSD:\n{}",
        s.stdout(),
        nsd.log()
    );
    assert_eq!(count(&s, "Transferred: example.org."), 2, "{}", s.stdout());

    // Our own NOTIFY from the primary's address: answered at once (NOERROR, AA, opcode
    // NOTIFY, the question echoed), and a check that finds no newer serial.
    let q = notify(0x7002);
    let r = send_from("127.0.0.1", s.port, &q, Duration::from_secs(2)).expect("a reply");
    let m = Message::from_vec(&r).unwrap();
    assert_eq!(m.metadata.id, 0x7002);
    assert_eq!(m.metadata.op_code, OpCode::Notify);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.metadata.authoritative);
    assert_eq!(m.queries.len(), 1);
    assert_eq!(m.queries[0].name.to_ascii(), "example.org.");
    assert_eq!(m.queries[0].query_type, RecordType::SOA);
    assert!(m.answers.is_empty());
    wait_log(
        &s,
        "Notify from 127.0.0.1 for example.org.: no SOA serial increase seen",
        Duration::from_secs(10),
    );
}

#[test]
fn the_zone_outlives_its_primary_until_expire_and_comes_back_with_it() {
    if peers::tool("nsd", "nsd", TEST).is_none() {
        return;
    }
    let dir = TempDir::new();
    let db = dir.0.join("db.example.org");
    // Refresh and retry every second, expire after 5 s without a successful check.
    write_zone(&db, &zone_text(1, (1, 1, 5), "192.0.2.1"), 0);
    let zones = [Zone::new("example.org.", &db)];
    let Some(nsd) = Peer::start(Kind::Nsd, &zones, &nsd_options(None), TEST) else {
        return;
    };
    let p = nsd.port;
    let s = Server::start(|port| corefile(port, &format!("127.0.0.1:{p}")));
    wait_www(
        &s,
        "192.0.2.1",
        Some(ResponseCode::ServFail),
        Duration::from_secs(10),
    );
    // Checks succeed every second meanwhile: no expiry while the primary answers.
    std::thread::sleep(Duration::from_secs(7));
    assert_eq!(www_rcode(&s, 1), ResponseCode::NoError, "{}", s.stdout());

    // The primary goes away (stopped by its PID). The last good check was at most about
    // 1.25 s before, so the zone is served for 3.75 s at least.
    let stopped = Instant::now();
    let port = nsd.stop();
    let m = ask(s.port, &query(2, "www.example.org.", A));
    assert_eq!(
        a_records(&m),
        ["192.0.2.1"],
        "served right after the primary went"
    );
    if let Some(left) = Duration::from_millis(2500).checked_sub(stopped.elapsed()) {
        std::thread::sleep(left);
    }
    if stopped.elapsed() < Duration::from_millis(3500) {
        let m = ask(s.port, &query(3, "www.example.org.", A));
        assert_eq!(a_records(&m), ["192.0.2.1"], "still served 2.5 s later");
    }
    // Then it expires: SERVFAIL, logged.
    let t0 = Instant::now();
    let mut id = 10u16;
    while www_rcode(&s, id) != ResponseCode::ServFail {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the zone never expired:\n{}",
            s.stdout()
        );
        id += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        stopped.elapsed() >= Duration::from_millis(3700),
        "expired {:?} after the primary went, before EXPIRE could have passed",
        stopped.elapsed()
    );
    wait_log(
        &s,
        "[ERROR] plugin/secondary: Zone example.org. is expired: no successful check of its primaries for 5s",
        Duration::from_secs(2),
    );
    // The failed checks before: the refresh check, then retries.
    for check in ["refresh", "retry"] {
        let line = format!(
            "[WARNING] plugin/secondary: Failed {check} check for example.org.: dial tcp 127.0.0.1:{p}: "
        );
        assert!(s.stdout().contains(&line), "no `{line}`:\n{}", s.stdout());
    }
    // It stays SERVFAIL.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(www_rcode(&s, 99), ResponseCode::ServFail);

    // The primary comes back on its port, with new data: transferred again (RFC 1034
    // §4.3.5: the expired copy was discarded).
    write_zone(&db, &zone_text(2, (1, 1, 5), "192.0.2.2"), 5);
    let Some(_nsd) = Peer::start_on(Kind::Nsd, port, &zones, &nsd_options(None), TEST) else {
        return;
    };
    wait_www(
        &s,
        "192.0.2.2",
        Some(ResponseCode::ServFail),
        Duration::from_secs(20),
    );
}

#[test]
fn a_reload_keeps_a_zone_that_stays_and_transfers_one_whose_primaries_change() {
    if peers::tool("nsd", "nsd", TEST).is_none() {
        return;
    }
    let Some((_dir, _db, nsd)) = primary(&zone_text(1, LONG, "192.0.2.1"), None) else {
        return;
    };
    let p = nsd.port;
    let s = Server::start(|port| corefile(port, &format!("127.0.0.1:{p}")));
    wait_www(
        &s,
        "192.0.2.1",
        Some(ResponseCode::ServFail),
        Duration::from_secs(10),
    );
    // The primary goes: only the data kept can answer from now on.
    drop(nsd);
    let reload = |text: &str| {
        let before = count(&s, "[INFO] Reloading complete");
        std::fs::write(s.dir.0.join("Corefile"), text).unwrap();
        s.signal("USR1");
        let t0 = Instant::now();
        while count(&s, "[INFO] Reloading complete") == before {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "no reload:\n{}",
                s.stdout()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    // Another block added: the zone stays, with the same primary, and keeps serving.
    let port = s.port;
    reload(&format!(
        "{}example.net:{port} {{\n    whoami\n}}\n",
        corefile(port, &format!("127.0.0.1:{p}"))
    ));
    let m = ask(s.port, &query(2, "www.example.org.", A));
    assert_eq!(a_records(&m), ["192.0.2.1"], "{}", s.stdout());
    assert_eq!(count(&s, "Transferred: example.org."), 1);
    // Another primary list: a new zone, which has nothing to transfer from.
    reload(&corefile(port, &format!("127.0.0.1:{p} 127.0.0.2:{p}")));
    assert_eq!(www_rcode(&s, 3), ResponseCode::ServFail, "{}", s.stdout());
}

#[test]
fn a_zone_of_many_messages_transfers_whole() {
    if peers::tool("nsd", "nsd", TEST).is_none() {
        return;
    }
    // 4000 names with an A, a TXT and an MX each: NSD sends the AXFR in many messages,
    // with names compressed across records.
    const N: usize = 4000;
    let mut text = zone_text(1, LONG, "192.0.2.1");
    for i in 0..N {
        text.push_str(&format!(
            "h{i} IN A 10.{}.{}.{}\nh{i} IN TXT \"host number {i} of the big zone\"\n\
             h{i} IN MX 10 h{}.example.org.\n",
            i / 65536,
            (i / 256) % 256,
            i % 256,
            (i + 1) % N
        ));
    }
    let Some((_dir, _db, nsd)) = primary(&text, None) else {
        return;
    };
    let p = nsd.port;
    let s = Server::start(|port| corefile(port, &format!("127.0.0.1:{p}")));
    wait_www(
        &s,
        "192.0.2.1",
        Some(ResponseCode::ServFail),
        Duration::from_secs(20),
    );
    for i in [0, 1, 255, 256, 2999, N - 1] {
        let name = format!("h{i}.example.org.");
        let m = ask(s.port, &query(i as u16, &name, A));
        let want = format!("10.{}.{}.{}", i / 65536, (i / 256) % 256, i % 256);
        assert_eq!(a_records(&m), [want], "{name}");
        let m = ask(s.port, &query(i as u16, &name, 15));
        let target = format!("h{}.example.org.", (i + 1) % N);
        assert!(
            m.answers[0].data.to_string().ends_with(&target),
            "{name} MX: {:?}",
            m.answers
        );
        let m = ask(s.port, &query(i as u16, &name, 16));
        assert_eq!(m.answers.len(), 1, "{name} TXT");
    }
}

#[test]
fn a_secondary_zone_is_transferred_on_as_the_primary_sends_it() {
    if peers::tool("nsd", "nsd", TEST).is_none() {
        return;
    }
    let mut text = zone_text(3, LONG, "192.0.2.1");
    for i in 0..2000 {
        text.push_str(&format!(
            "h{i} IN A 10.0.{}.{}\nh{i} IN TXT \"t {i}\"\n",
            i / 256,
            i % 256
        ));
    }
    let Some((_dir, _db, nsd)) = primary(&text, None) else {
        return;
    };
    let p = nsd.port;
    let s = Server::start(|port| {
        format!(
            "example.org:{port} {{\n    transfer {{\n        to 127.0.0.1\n    }}\n    \
             secondary {{\n        transfer from 127.0.0.1:{p}\n    }}\n}}\n"
        )
    });
    wait_www(
        &s,
        "192.0.2.1",
        Some(ResponseCode::ServFail),
        Duration::from_secs(20),
    );
    let ours = common::axfr_records(s.port, "example.org.");
    let nsds = common::axfr_records(p, "example.org.");
    assert_eq!(ours.len(), nsds.len(), "as many records as NSD sends");
    assert_eq!(ours, nsds, "the same records");
}

#[test]
fn setup_errors_are_coredns_s() {
    for (block, want) in [
        (
            "    secondary\n",
            "Error during parsing: secondary zones require a transfer from property",
        ),
        (
            "    secondary {\n        transfer to 127.0.0.1\n    }\n",
            "Error during parsing: unknown property to",
        ),
        (
            "    secondary {\n        transfer from ns1.example.org\n    }\n",
            "plugin/secondary: must specify an IP address: `ns1.example.org'",
        ),
        (
            "    secondary {\n        transfer from 127.0.0.1\n        reload 1s\n    }\n",
            "Error during parsing: unknown property 'reload'",
        ),
        (
            "    secondary {\n        transfer from 127.0.0.1\n        catalog\n    }\n",
            "plugin/secondary: catalog zones (RFC 9432) are not supported by ringdns",
        ),
    ] {
        let (code, err) = common::run_expect_failure(&format!("example.org:0 {{\n{block}}}\n"));
        assert_eq!(code, 1, "{err}");
        assert!(err.contains(want), "{block}: {err}");
    }
}
