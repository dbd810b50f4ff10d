//! The auto plugin through the real binary: zones appear, change and disappear with the
//! files of the directory; REGEXP and ORIGIN_TEMPLATE; the routing of names outside the
//! zones; a bad zone file at start (the start stops with its line) and in a later scan (the
//! old zone serves on); an auto zone transferred out, with NOTIFY at start and when one is
//! added.

mod common;

use common::{Server, TempDir, ask, query, tcp_transfer};
use hickory_proto::op::{Message, OpCode, ResponseCode};
use hickory_proto::rr::RecordType;
use std::net::UdpSocket;
use std::path::Path;
use std::time::{Duration, Instant};

const A: u16 = 1;
const AXFR: u16 = 252;

/// A zone for `origin` whose `www` has address `www`.
fn zone(origin: &str, serial: u32, www: &str) -> String {
    format!(
        "$ORIGIN {origin}\n$TTL 1h\n\
         @ IN SOA ns1 hostmaster {serial} 2h 30m 2w 5m\n\
         @ IN NS ns1\n\
         ns1 IN A 192.0.2.53\n\
         www IN A {www}\n"
    )
}

/// `www.NAME`'s addresses, or the rcode when there are none.
fn www(port: u16, name: &str) -> Result<Vec<String>, ResponseCode> {
    let m = ask(port, &query(1, &format!("www.{name}"), A));
    let v: Vec<String> = m
        .answers
        .iter()
        .filter(|r| r.record_type() == RecordType::A)
        .map(|r| r.data.to_string())
        .collect();
    if v.is_empty() {
        Err(m.metadata.response_code)
    } else {
        Ok(v)
    }
}

/// Waits (10 s at most) until `www.NAME` answers `want`.
fn wait_for(s: &Server, name: &str, want: Result<Vec<String>, ResponseCode>) {
    let t0 = Instant::now();
    loop {
        let got = www(s.port, name);
        if got == want {
            return;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "www.{name}: {got:?}, want {want:?}\n{}",
            s.stdout()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn auto_block(zones: &str, port: u16, dir: &Path, directory_args: &str, extra: &str) -> String {
    format!(
        "{zones}:{port} {{\n    auto {{\n        directory {} {directory_args}\n        reload 1s\n    }}\n{extra}}}\n",
        dir.display()
    )
}

#[test]
fn zones_appear_change_and_disappear_with_their_files() {
    let zones = TempDir::new();
    zones.write("db.example.org", &zone("example.org.", 1, "192.0.2.1"));
    std::fs::create_dir(zones.0.join("sub")).unwrap();
    zones.write("sub/db.Example.NET", &zone("example.net.", 1, "192.0.2.2"));
    zones.write("README", "not a zone");
    let s = Server::start(|p| auto_block(".", p, &zones.0, "", ""));
    assert_eq!(www(s.port, "example.org."), Ok(vec!["192.0.2.1".into()]));
    assert_eq!(
        www(s.port, "example.net."),
        Ok(vec!["192.0.2.2".into()]),
        "found below, lower-cased"
    );
    let m = ask(s.port, &query(2, "www.example.org.", A));
    assert!(m.metadata.authoritative);
    // A new file: a new zone.
    zones.replace("db.example.com", &zone("example.com.", 1, "192.0.2.3"));
    wait_for(&s, "example.com.", Ok(vec!["192.0.2.3".into()]));
    // A changed serial: the new data.
    zones.replace("db.example.org", &zone("example.org.", 2, "192.0.2.11"));
    wait_for(&s, "example.org.", Ok(vec!["192.0.2.11".into()]));
    // A removed file: no zone, and with nothing after auto, REFUSED.
    std::fs::remove_file(zones.0.join("sub/db.Example.NET")).unwrap();
    wait_for(&s, "example.net.", Err(ResponseCode::Refused));
    assert!(
        s.stdout()
            .contains("plugin/auto: Deleting zone `example.net.'"),
        "{}",
        s.stdout()
    );
    // A file that no longer parses: logged with its line; the old zone serves on.
    zones.replace(
        "db.example.org",
        &(zone("example.org.", 3, "192.0.2.12") + "bad IN A 1.2.3\n"),
    );
    assert!(
        s.wait_stdout("db.example.org:7 - ", Duration::from_secs(10)),
        "no FILE:LINE error logged:\n{}",
        s.stdout()
    );
    assert_eq!(www(s.port, "example.org."), Ok(vec!["192.0.2.11".into()]));
    // A new file that does not parse is logged and left out; the others serve on.
    zones.replace(
        "db.example.info",
        "$ORIGIN example.info.\n@ IN SOA broken\n",
    );
    assert!(
        s.wait_stdout(
            "plugin/auto: Parse zone `example.info.'",
            Duration::from_secs(10)
        ),
        "{}",
        s.stdout()
    );
    assert_eq!(www(s.port, "example.info."), Err(ResponseCode::Refused));
    assert_eq!(www(s.port, "example.com."), Ok(vec!["192.0.2.3".into()]));
}

#[test]
fn regexp_and_template_make_the_origins_and_zones_limit_what_is_answered() {
    let zones = TempDir::new();
    zones.write("www.db.example.org", &zone("example.org.", 1, "192.0.2.1"));
    zones.write("db.example.net", &zone("example.net.", 1, "192.0.2.2"));
    zones.write("example.com.zone", &zone("example.com.", 1, "192.0.2.3"));
    zones.write(
        "example.com.zone.bak",
        &zone("example.com.", 1, "192.0.2.99"),
    );
    let s = Server::start(|p| {
        format!(
            ".:{p} {{\n    auto example.org example.com {{\n        directory {} ^(?:www\\.db\\.)?(example\\.[a-z]+)(?:\\.zone)?$ {{1}}\n    }}\n}}\n",
            zones.0.display()
        )
    });
    assert_eq!(www(s.port, "example.org."), Ok(vec!["192.0.2.1".into()]));
    assert_eq!(
        www(s.port, "example.com."),
        Ok(vec!["192.0.2.3".into()]),
        "the .bak file does not match"
    );
    // db.example.net does not match, and example.net. is outside the plugin's zones
    // anyway: with nothing after auto, SERVFAIL (CoreDNS's NextOrFailure).
    assert_eq!(www(s.port, "example.net."), Err(ResponseCode::ServFail));
    // Below a loaded zone: that zone's answer.
    let m = ask(s.port, &query(2, "www.sub.example.com.", A));
    assert_eq!(
        m.metadata.response_code,
        ResponseCode::NXDomain,
        "in example.com."
    );
    let s2 = Server::start(|p| {
        format!(
            "example.org:{p} example.info:{p} {{\n    auto {{\n        directory {} www\\.db\\.(.*) {{1}}\n    }}\n}}\n",
            zones.0.display()
        )
    });
    assert_eq!(www(s2.port, "example.org."), Ok(vec!["192.0.2.1".into()]));
    assert_eq!(www(s2.port, "example.info."), Err(ResponseCode::Refused));
}

#[test]
fn names_auto_does_not_hold_go_on_to_the_next_plugin() {
    let zones = TempDir::new();
    zones.write("db.example.org", &zone("example.org.", 1, "192.0.2.1"));
    let other = TempDir::new();
    let net = other.write("db.example.net", &zone("example.net.", 1, "198.51.100.1"));
    let s = Server::start(|p| {
        auto_block(
            ".",
            p,
            &zones.0,
            "",
            &format!("    file {} example.net\n", net.display()),
        )
    });
    assert_eq!(www(s.port, "example.org."), Ok(vec!["192.0.2.1".into()]));
    assert_eq!(
        www(s.port, "example.net."),
        Ok(vec!["198.51.100.1".into()]),
        "file, after auto, answers"
    );
}

#[test]
fn an_auto_zone_is_transferred_and_a_new_one_notified() {
    let secondary = UdpSocket::bind("127.0.0.1:0").unwrap();
    secondary
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let to = secondary.local_addr().unwrap();
    let zones = TempDir::new();
    zones.write("db.example.org", &zone("example.org.", 7, "192.0.2.1"));
    let s = Server::start(|p| {
        auto_block(
            ".",
            p,
            &zones.0,
            "",
            &format!("    transfer {{\n        to * {to}\n    }}\n"),
        )
    });
    let msgs = tcp_transfer(s.port, &query(3, "example.org.", AXFR));
    let answers: Vec<_> = msgs.iter().flat_map(|m| m.answers.iter()).collect();
    assert_eq!(answers.len(), 5, "SOA, NS, two A, SOA: {answers:?}");
    assert_eq!(answers[0].record_type(), RecordType::SOA);
    assert_eq!(answers[4].record_type(), RecordType::SOA);
    // transfer notifies the zones at start (acknowledged here, so it is not sent again),
    // then auto each new one.
    let mut buf = [0u8; 512];
    let t0 = Instant::now();
    let (n, from) = loop {
        match secondary.recv_from(&mut buf) {
            Ok(got) => break got,
            Err(_) if t0.elapsed() < Duration::from_secs(10) => continue,
            Err(e) => panic!("no NOTIFY at start: {e}\n{}", s.stdout()),
        }
    };
    let m = Message::from_vec(&buf[..n]).expect("NOTIFY parses");
    assert_eq!(m.metadata.op_code, OpCode::Notify);
    assert_eq!(m.queries[0].name().to_string(), "example.org.");
    let mut ack = buf[..n].to_vec();
    ack[2] |= 0x80;
    secondary.send_to(&ack, from).unwrap();
    assert!(secondary.recv_from(&mut buf).is_err(), "once at start");
    zones.replace("db.example.com", &zone("example.com.", 1, "192.0.2.3"));
    let t0 = Instant::now();
    let n = loop {
        match secondary.recv_from(&mut buf) {
            Ok((n, _)) => break n,
            Err(_) if t0.elapsed() < Duration::from_secs(15) => continue,
            Err(e) => panic!("no NOTIFY for the new zone: {e}\n{}", s.stdout()),
        }
    };
    let m = Message::from_vec(&buf[..n]).expect("NOTIFY parses");
    assert_eq!(m.metadata.op_code, OpCode::Notify);
    assert_eq!(m.queries[0].name().to_string(), "example.com.");
    let msgs = tcp_transfer(s.port, &query(4, "example.com.", AXFR));
    assert_eq!(msgs.iter().map(|m| m.answers.len()).sum::<usize>(), 5);
}

#[test]
fn a_bad_zone_file_at_start_stops_it_with_its_line() {
    let zones = TempDir::new();
    zones.write("db.example.org", &zone("example.org.", 1, "192.0.2.1"));
    zones.write(
        "db.bad.test",
        &(zone("bad.test.", 1, "192.0.2.2") + "x IN MX notanumber mail\n"),
    );
    let (code, err) = common::run_expect_failure(&format!(
        ".:0 {{\n    auto {{\n        directory {}\n    }}\n}}\n",
        zones.0.display()
    ));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("db.bad.test:7 - "), "{err}");
    let (code, err) = common::run_expect_failure(&format!(
        ".:0 {{\n    auto {{\n        directory {} db\\.x {{1}}\n    }}\n}}\n",
        zones.0.display()
    ));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "Corefile:3 - Error during parsing: plugin/auto: Need at least one sub expression"
        ),
        "{err}"
    );
}
