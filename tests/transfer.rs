//! The transfer plugin through the real binary: AXFR of a file zone in many messages,
//! compared with the zone file record by record; IXFR answered with the SOA when the client
//! is up to date and with the zone when it is behind; who is refused; NOTIFY to a
//! secondary (a UDP socket of the test that speaks the protocol) for every zone at start and
//! after a reload, and when a zone changes, from the `source` address; Corefile errors.

mod common;

use common::{Server, TempDir, ask, query, tcp_exchange, tcp_transfer};
use hickory_proto::op::{Message, OpCode, ResponseCode};
use hickory_proto::rr::RecordType;
use std::collections::BTreeSet;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

const A: u16 = 1;
const IXFR: u16 = 251;
const AXFR: u16 = 252;
/// Enough addresses that the transfer takes several messages of 63 000 bytes.
const HOSTS: usize = 4000;

fn host_line(i: usize) -> String {
    format!("host{i}.example.org. 300 IN A 10.0.{}.{}", i / 250, i % 250)
}

/// The zone, with `serial`, and the records of it a transfer must hold besides the SOA.
fn zone(serial: u32) -> (String, usize) {
    let mut z = format!(
        "$ORIGIN example.org.\n$TTL 3600\n\
         @ IN SOA ns1 hostmaster {serial} 7200 1800 1209600 300\n\
         @ IN NS ns1\n\
         @ IN MX 10 mail\n\
         ns1 IN A 192.0.2.53\n\
         mail IN A 192.0.2.25\n\
         txt IN TXT \"one\" \"two\"\n\
         sub IN NS ns.sub\n\
         ns.sub IN A 192.0.2.99\n"
    );
    for i in 0..HOSTS {
        z.push_str(&host_line(i));
        z.push('\n');
    }
    (z, 7 + HOSTS)
}

/// An IXFR query for example.org. saying the client has `serial`.
fn ixfr(id: u16, serial: u32) -> Vec<u8> {
    let mut q = query(id, "example.org.", IXFR);
    q[9] = 1; // NSCOUNT
    let mut rdata = vec![0, 0]; // MNAME and RNAME: the root, enough for a serial
    rdata.extend_from_slice(&serial.to_be_bytes());
    rdata.extend_from_slice(&[0; 16]);
    q.extend_from_slice(&[0xC0, 12, 0, 6, 0, 1, 0, 0, 0, 0, 0, rdata.len() as u8]);
    q.extend_from_slice(&rdata);
    q
}

fn serve_zone(dir: &TempDir, to: &str, extra: &str) -> Server {
    let (text, _) = zone(1);
    let db = dir.write("db.example.org", &text);
    Server::start(|p| {
        format!(
            "example.org:{p} {{\n    transfer {{\n        to {to}\n    }}\n    file {} {{\n{extra}    }}\n}}\n",
            db.display()
        )
    })
}

fn soa_serial(m: &Message) -> Option<u32> {
    m.answers.iter().find_map(|r| match &r.data {
        hickory_proto::rr::RData::SOA(s) => Some(s.serial),
        _ => None,
    })
}

#[test]
fn an_axfr_holds_the_zone_file_record_by_record_in_many_messages() {
    let dir = TempDir::new();
    let s = serve_zone(&dir, "127.0.0.1", "");
    let msgs = tcp_transfer(s.port, &query(7, "example.org.", AXFR));
    assert!(msgs.len() > 1, "{} messages: more than one", msgs.len());
    for m in &msgs {
        assert_eq!(m.metadata.id, 7);
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert!(m.metadata.authoritative);
    }
    assert_eq!(
        msgs[0].queries.len(),
        1,
        "the first message echoes the question"
    );
    let all: Vec<_> = msgs.iter().flat_map(|m| m.answers.iter()).collect();
    let (_, records) = zone(1);
    assert_eq!(all.len(), records + 2, "every record once, the SOA twice");
    assert_eq!(all[0].record_type(), RecordType::SOA, "SOA first");
    assert_eq!(
        all[all.len() - 1].record_type(),
        RecordType::SOA,
        "and last"
    );
    let got: BTreeSet<String> = all
        .iter()
        .filter(|r| r.record_type() == RecordType::A)
        .map(|r| r.to_string())
        .collect();
    let mut want: BTreeSet<String> = (0..HOSTS).map(host_line).collect();
    for l in [
        "ns1.example.org. 3600 IN A 192.0.2.53",
        "mail.example.org. 3600 IN A 192.0.2.25",
        "ns.sub.example.org. 3600 IN A 192.0.2.99",
    ] {
        want.insert(l.into());
    }
    assert_eq!(got, want, "the addresses, glue included");
    let by_type = |t| all.iter().filter(|r| r.record_type() == t).count();
    assert_eq!((by_type(RecordType::NS), by_type(RecordType::MX)), (2, 1));
    let txt = all
        .iter()
        .find(|r| r.record_type() == RecordType::TXT)
        .unwrap();
    let hickory_proto::rr::RData::TXT(t) = &txt.data else {
        panic!("{txt}")
    };
    let strings: Vec<&[u8]> = t.txt_data.iter().map(|b| &b[..]).collect();
    assert_eq!(strings, [&b"one"[..], b"two"], "{txt}");
    assert!(
        s.wait_stdout("Outgoing transfer of", Duration::from_secs(5)),
        "{}",
        s.stdout()
    );
}

#[test]
fn an_ixfr_gets_the_soa_when_up_to_date_and_the_zone_when_behind() {
    let dir = TempDir::new();
    let s = serve_zone(&dir, "127.0.0.1", "");
    for serial in [1, 5] {
        let msgs = tcp_transfer(s.port, &ixfr(8, serial));
        assert_eq!(msgs.len(), 1, "serial {serial}: one message");
        assert_eq!(msgs[0].answers.len(), 1, "the SOA alone");
        assert_eq!(soa_serial(&msgs[0]), Some(1));
    }
    let msgs = tcp_transfer(s.port, &ixfr(9, 0));
    let n: usize = msgs.iter().map(|m| m.answers.len()).sum();
    assert_eq!(n, zone(1).1 + 2, "behind: the whole zone");
    // Over UDP: the SOA, so the client comes back over TCP.
    let m = ask(s.port, &ixfr(10, 0));
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert_eq!((m.answers.len(), soa_serial(&m)), (1, Some(1)));
    // No SOA in authority: malformed.
    let r = tcp_exchange(s.port, &[query(11, "example.org.", IXFR)]);
    assert_eq!(common::rcode(&r[0]), 1, "FORMERR");
}

#[test]
fn transfers_are_refused_to_others_over_udp_and_below_the_apex() {
    let dir = TempDir::new();
    let s = serve_zone(&dir, "127.0.0.2 192.0.2.1:5300", "");
    let r = tcp_exchange(s.port, &[query(1, "example.org.", AXFR)]);
    assert_eq!(common::rcode(&r[0]), 5, "127.0.0.1 is not in to: REFUSED");
    let m = ask(s.port, &query(2, "www.example.org.", A));
    assert_eq!(
        m.metadata.response_code,
        ResponseCode::NXDomain,
        "queries go on"
    );

    let dir = TempDir::new();
    let s = serve_zone(&dir, "127.0.0.1", "");
    let m = ask(s.port, &query(3, "example.org.", AXFR));
    assert_eq!(
        m.metadata.response_code,
        ResponseCode::Refused,
        "AXFR over UDP"
    );
    let r = tcp_exchange(s.port, &[query(4, "host1.example.org.", AXFR)]);
    assert_eq!(common::rcode(&r[0]), 5, "not an apex: file refuses it");
    let m = ask(s.port, &query(5, "host1.example.org.", A));
    assert_eq!(m.answers.len(), 1);
}

/// The next NOTIFY `secondary` receives within `limit`, acknowledged (the answer is the
/// query with QR set): the zone it names and where it came from.
fn next_notify(secondary: &UdpSocket, limit: Duration, s: &Server) -> (String, SocketAddr) {
    let mut buf = [0u8; 512];
    let t0 = Instant::now();
    let (n, from) = loop {
        match secondary.recv_from(&mut buf) {
            Ok(got) => break got,
            Err(_) if t0.elapsed() < limit => continue,
            Err(e) => panic!("no NOTIFY within {limit:?}: {e}\n{}", s.stdout()),
        }
    };
    let m = Message::from_vec(&buf[..n]).expect("NOTIFY parses");
    assert_eq!(m.metadata.op_code, OpCode::Notify);
    assert!(m.metadata.authoritative);
    assert_eq!(m.queries[0].query_type(), RecordType::SOA);
    let mut ack = buf[..n].to_vec();
    ack[2] |= 0x80;
    secondary.send_to(&ack, from).unwrap();
    (m.queries[0].name().to_string(), from)
}

/// A UDP socket of the test that stands for a secondary, with a short read timeout.
fn secondary_socket(ip: &str) -> UdpSocket {
    let secondary = UdpSocket::bind((ip, 0)).unwrap();
    secondary
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    secondary
}

/// The zones `n` NOTIFYs name, each acknowledged, in the order they came.
fn notified(secondary: &UdpSocket, n: usize, s: &Server) -> Vec<String> {
    (0..n)
        .map(|_| next_notify(secondary, Duration::from_secs(10), s).0)
        .collect()
}

#[test]
fn every_zone_is_notified_at_start_and_after_a_reload() {
    // CoreDNS's file notifies its zones in OnStartup, which runs at start and again with
    // every configuration a reload brings. Only the zones of a transfer line that names an
    // address are notified, each once.
    let secondary = secondary_socket("127.0.0.1");
    let to = secondary.local_addr().unwrap();
    let dir = TempDir::new();
    let net = "$ORIGIN example.net.\n@ 3600 IN SOA ns hm 1 3600 600 86400 60\n@ 3600 IN NS ns\n\
               ns 3600 IN A 192.0.2.2\n";
    let com = net.replace("example.net.", "example.com.");
    let org = dir.write("db.example.org", &zone(1).0);
    let net = dir.write("db.example.net", net);
    let com = dir.write("db.example.com", &com);
    let corefile = |p: u16, com_options: &str| {
        format!(
            "example.org:{p} example.net:{p} example.com:{p} {{\n\
             \x20   transfer example.org example.net {{\n        to {to}\n    }}\n\
             \x20   transfer example.com {{\n        to *\n    }}\n\
             \x20   file {} example.org\n    file {} example.net\n    file {} example.com{com_options}\n}}\n",
            org.display(),
            net.display(),
            com.display()
        )
    };
    let s = Server::start(|p| corefile(p, ""));
    let mut got = notified(&secondary, 2, &s);
    got.sort();
    assert_eq!(got, ["example.net.", "example.org."]);
    let mut buf = [0u8; 512];
    assert!(
        secondary.recv_from(&mut buf).is_err(),
        "each zone once, example.com. (to * only) never"
    );
    // A reload (a changed Corefile, SIGUSR1): the new configuration notifies again.
    s.dir.replace(
        "Corefile",
        &corefile(s.port, " {\n        reload 30s\n    }"),
    );
    s.signal("USR1");
    assert!(
        s.wait_stdout("Reloading complete", Duration::from_secs(10)),
        "{}",
        s.stdout()
    );
    let mut got = notified(&secondary, 2, &s);
    got.sort();
    assert_eq!(got, ["example.net.", "example.org."]);
}

#[test]
fn notify_comes_from_the_source_address() {
    // `source` is the local address NOTIFY is sent from; the secondary listens on another.
    let secondary = secondary_socket("127.0.0.1");
    let to = secondary.local_addr().unwrap();
    let dir = TempDir::new();
    let (text, _) = zone(1);
    let db = dir.write("db.example.org", &text);
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n    transfer {{\n        to {to}\n        source 127.0.0.2\n    \
             }}\n    file {}\n}}\n",
            db.display()
        )
    });
    let (name, from) = next_notify(&secondary, Duration::from_secs(10), &s);
    assert_eq!(name, "example.org.");
    assert_eq!(from.ip().to_string(), "127.0.0.2", "{}", s.stdout());
    // Without `source` it comes from the system's choice for loopback.
    let s2 = serve_zone(&dir, &to.to_string(), "");
    let (_, from) = next_notify(&secondary, Duration::from_secs(10), &s2);
    assert_eq!(from.ip().to_string(), "127.0.0.1");
}

#[test]
fn a_changed_zone_is_notified_to_the_secondaries() {
    let secondary = UdpSocket::bind("127.0.0.1:0").unwrap();
    secondary
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let to = secondary.local_addr().unwrap();
    let dir = TempDir::new();
    let s = serve_zone(&dir, &format!("* {to}"), "        reload 1s\n");
    // The NOTIFY of start, acknowledged; then none until the zone changes.
    let (name, _) = next_notify(&secondary, Duration::from_secs(10), &s);
    assert_eq!(name, "example.org.");
    let mut buf = [0u8; 512];
    assert!(
        secondary.recv_from(&mut buf).is_err(),
        "no NOTIFY before a change"
    );
    let (text, _) = zone(2);
    dir.replace("db.example.org", &text);
    let t0 = Instant::now();
    let (n, from) = loop {
        match secondary.recv_from(&mut buf) {
            Ok(got) => break got,
            Err(_) if t0.elapsed() < Duration::from_secs(15) => continue,
            Err(e) => panic!("no NOTIFY after the change: {e}\n{}", s.stdout()),
        }
    };
    let m = Message::from_vec(&buf[..n]).expect("NOTIFY parses");
    assert_eq!(m.metadata.op_code, OpCode::Notify);
    assert!(m.metadata.authoritative);
    assert_eq!(m.queries[0].name().to_string(), "example.org.");
    assert_eq!(m.queries[0].query_type(), RecordType::SOA);
    // Not acknowledged: it is sent again (three tries in all).
    secondary
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let (n2, from2) = secondary.recv_from(&mut buf).expect("a second try");
    assert_eq!(from2, from);
    // Acknowledge: the answer is the query with QR set.
    let mut ack = buf[..n2].to_vec();
    ack[2] |= 0x80;
    secondary.send_to(&ack, from2).unwrap();
    // Only the serial changed: the step is the two SOAs, framed by the new one.
    let msgs = tcp_transfer(s.port, &ixfr(12, 1));
    let n: usize = msgs.iter().map(|m| m.answers.len()).sum();
    assert_eq!(n, 4, "{msgs:?}");
    assert_eq!(soa_serial(&msgs[0]), Some(2));
    let msgs = tcp_transfer(s.port, &ixfr(13, 0));
    let n: usize = msgs.iter().map(|m| m.answers.len()).sum();
    assert_eq!(
        n,
        zone(2).1 + 2,
        "from a serial it never had: the whole zone"
    );
}

/// Reads every message of one IXFR answer on a fresh connection, to its end as RFC 1995 §4
/// lays it out (an incremental answer holds many SOAs, so `tcp_transfer`'s count of two
/// cannot tell): the SOA alone; or a full transfer, to its second SOA; or steps (old SOA,
/// deletions, new SOA, additions), to the SOA of the new serial where a step would start. At most 200 messages, 30 seconds.
fn ixfr_transfer(port: u16, packet: &[u8]) -> Vec<Message> {
    use std::io::{Read, Write};
    #[derive(PartialEq)]
    enum At {
        First,
        Second,
        Full,
        Deleting,
        Adding,
        End,
    }
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut framed = (packet.len() as u16).to_be_bytes().to_vec();
    framed.extend_from_slice(packet);
    s.write_all(&framed).unwrap();
    let (mut out, mut at, mut last) = (Vec::new(), At::First, 0);
    let t0 = Instant::now();
    while at != At::End {
        assert!(
            out.len() < 200 && t0.elapsed() < Duration::from_secs(30),
            "the IXFR never ended"
        );
        let mut len = [0u8; 2];
        s.read_exact(&mut len).expect("the IXFR goes on");
        let mut buf = vec![0u8; u16::from_be_bytes(len) as usize];
        s.read_exact(&mut buf).unwrap();
        let m = Message::from_vec(&buf).expect("an IXFR message parses");
        for r in &m.answers {
            let serial = match &r.data {
                hickory_proto::rr::RData::SOA(soa) => Some(soa.serial),
                _ => None,
            };
            at = match (at, serial) {
                (At::First, Some(n)) => {
                    last = n;
                    At::Second
                }
                (At::Second, None) => At::Full,
                (At::Second, Some(_)) => At::Deleting,
                (At::Full, Some(_)) => At::End,
                (At::Adding, Some(n)) if n == last => At::End,
                (At::Adding, Some(_)) => At::Deleting,
                (At::Deleting, Some(_)) => At::Adding,
                (state, _) => state,
            };
        }
        // The SOA alone: an up-to-date client's answer.
        if at == At::Second && out.is_empty() && m.answers.len() == 1 {
            at = At::End;
        }
        out.push(m);
    }
    out
}

/// Applies an IXFR's answer (RFC 1995 §4) to `zone` (the client's records, SOA left out, as
/// `axfr_records` gives them); the serial it ends at. Panics when a deletion deletes what
/// is not there or the sequence is malformed.
fn apply_ixfr(zone: &mut BTreeSet<String>, msgs: &[Message]) -> u32 {
    let rrs: Vec<&hickory_proto::rr::Record> = msgs.iter().flat_map(|m| m.answers.iter()).collect();
    let serial = |r: &hickory_proto::rr::Record| match &r.data {
        hickory_proto::rr::RData::SOA(s) => Some(s.serial),
        _ => None,
    };
    let last = serial(rrs[0]).expect("an SOA first");
    assert_eq!(serial(rrs[rrs.len() - 1]), Some(last), "and last");
    assert!(serial(rrs[1]).is_some(), "incremental: the old SOA second");
    let mut i = 1;
    while i < rrs.len() - 1 {
        serial(rrs[i]).expect("a step opens with its old SOA");
        i += 1;
        while serial(rrs[i]).is_none() {
            let text = rrs[i].to_string().to_ascii_lowercase();
            assert!(zone.remove(&text), "deleted but not there: {text}");
            i += 1;
        }
        i += 1;
        while i < rrs.len() - 1 && serial(rrs[i]).is_none() {
            zone.insert(rrs[i].to_string().to_ascii_lowercase());
            i += 1;
        }
    }
    last
}

/// `zone(serial)` with host0..host{changed} moved to new addresses, `txt` gone, a record added.
fn changed_zone(serial: u32, changed: usize) -> String {
    let (text, _) = zone(serial);
    let mut out: String = text
        .lines()
        .filter(|l| !l.starts_with("txt "))
        .map(|l| {
            let moved = (0..changed).find(|i| l == host_line(*i));
            match moved {
                Some(i) => format!(
                    "host{i}.example.org. 300 IN A 10.9.{}.{}\n",
                    i / 250,
                    i % 250
                ),
                None => format!("{l}\n"),
            }
        })
        .collect();
    out.push_str(&format!("new{serial} IN AAAA 2001:db8::{serial}\n"));
    out
}

/// The zone's records from an AXFR, the SOA left out.
fn records_but_soa(port: u16) -> BTreeSet<String> {
    common::axfr_records(port, "example.org.")
        .into_iter()
        .filter(|r| !r.contains(" in soa "))
        .collect()
}

/// Waits (10 s at most) until the server answers the SOA with `serial`.
fn wait_serial(s: &Server, serial: u32) {
    let t0 = Instant::now();
    while soa_serial(&ask(s.port, &query(1, "example.org.", 6))) != Some(serial) {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "serial {serial} never served\n{}",
            s.stdout()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_ixfr_behind_by_steps_of_the_history_gets_those_steps() {
    let dir = TempDir::new();
    let s = serve_zone(&dir, "127.0.0.1", "        reload 1s\n");
    let mut v1 = records_but_soa(s.port);
    // Serial 2 moves 1500 addresses (a step of more than one message), serial 3 one more;
    // the history (3000 and 4 records and the SOAs) stays within the zone's 4007.
    dir.replace("db.example.org", &changed_zone(2, 1500));
    wait_serial(&s, 2);
    dir.replace("db.example.org", &changed_zone(3, 1501));
    wait_serial(&s, 3);
    let v3 = records_but_soa(s.port);
    let msgs = ixfr_transfer(s.port, &ixfr(20, 1));
    assert!(msgs.len() > 1, "{} messages", msgs.len());
    assert_eq!(apply_ixfr(&mut v1, &msgs), 3);
    let missing: Vec<_> = v3.difference(&v1).take(5).collect();
    let extra: Vec<_> = v1.difference(&v3).take(5).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "serial 1 and the two steps make serial 3: missing {missing:?}, extra {extra:?}"
    );
    let n: usize = msgs.iter().map(|m| m.answers.len()).sum();
    assert!(
        n < 2 * 3000 + 2 * 3001 + 10,
        "{n} records: the steps, not the zone"
    );
    assert!(
        s.wait_stdout("Outgoing incremental transfer of", Duration::from_secs(5)),
        "{}",
        s.stdout()
    );
    // One step behind: one step (old SOA, the deleted address, new SOA, the added
    // address and the AAAA of serial 3, new{2} deleted), framed by the new SOA.
    let msgs = ixfr_transfer(s.port, &ixfr(21, 2));
    let soas = msgs
        .iter()
        .flat_map(|m| m.answers.iter())
        .filter(|r| r.record_type() == RecordType::SOA)
        .count();
    assert_eq!(soas, 4, "{msgs:?}");
    // A serial the history does not have: the whole zone.
    let msgs = ixfr_transfer(s.port, &ixfr(22, 0));
    let all: Vec<_> = msgs.iter().flat_map(|m| m.answers.iter()).collect();
    assert_ne!(all[1].record_type(), RecordType::SOA, "AXFR-style");
    assert_eq!(all.len(), v3.len() + 2);
}

#[test]
fn nsd_as_a_secondary_follows_the_zone_by_notify_and_ixfr() {
    const TEST: &str = "tests/transfer.rs";
    if common::peers::tool("nsd", "nsd", TEST).is_none() {
        return;
    }
    let claim = common::free_port();
    let nsd_port = claim.port;
    let dir = TempDir::new();
    let s = serve_zone(
        &dir,
        &format!("127.0.0.1:{nsd_port}"),
        "        reload 1s\n",
    );
    let opts = common::peers::Options {
        nsd_zone: vec![
            format!("request-xfr: 127.0.0.1@{} NOKEY", s.port),
            "allow-notify: 127.0.0.1 NOKEY".into(),
            "provide-xfr: 127.0.0.1 NOKEY".into(),
        ],
        ..Default::default()
    };
    let nsd_dir = TempDir::new();
    let zones = [common::peers::Zone {
        origin: "example.org.".into(),
        file: nsd_dir.0.join("example.org.zone"),
    }];
    let Some(nsd) =
        common::peers::Peer::start_on(common::peers::Kind::Nsd, claim, &zones, &opts, TEST)
    else {
        return;
    };
    assert_eq!(
        common::axfr_records(nsd.port, "example.org."),
        common::axfr_records(s.port, "example.org."),
        "NSD's first copy"
    );
    dir.replace("db.example.org", &changed_zone(2, 100));
    wait_serial(&s, 2);
    let t0 = Instant::now();
    while soa_serial(&ask(nsd.port, &query(2, "example.org.", 6))) != Some(2) {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "NSD never got serial 2\nringdns:\n{}\nnsd:\n{}",
            s.stdout(),
            nsd.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        common::axfr_records(nsd.port, "example.org."),
        common::axfr_records(s.port, "example.org."),
        "NSD's copy after the IXFR"
    );
    assert!(
        s.stdout().contains("Outgoing incremental transfer of"),
        "NSD asked for IXFR and got the step:\n{}",
        s.stdout()
    );
}

#[test]
fn corefile_errors_name_the_line() {
    let cases = [
        (
            "transfer {\n        source 127.0.0.1\n    }",
            "'to' is required",
        ),
        (
            "transfer {\n        to example.net\n    }",
            "must specify an IP address",
        ),
        (
            "transfer {\n        to *\n        bogus\n    }",
            "unknown property \"bogus\"",
        ),
        (
            "transfer {\n        to *\n        source 127.0.0.1\n        source 127.0.0.1\n    }",
            "source already specified",
        ),
        (
            "transfer {\n        to *\n        source nowhere\n    }",
            "invalid source address",
        ),
        ("transfer {\n        to\n    }", "Wrong argument count"),
    ];
    for (body, want) in cases {
        let (code, err) =
            common::run_expect_failure(&format!("example.org:0 {{\n    {body}\n    whoami\n}}\n"));
        assert_eq!(code, 1, "{body}: {err}");
        assert!(err.contains(want), "{body}: want {want:?} in {err}");
        assert!(err.contains("Corefile:"), "{body}: FILE:LINE in {err}");
    }
}
