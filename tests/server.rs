//! The server over real sockets: answers, routing, the acceptance rules, EDNS, truncation,
//! TCP pipelining and deferred queries.

mod common;

use common::{Server, ask, query, query_full, rcode, tcp_exchange, udp_exchange, wire_name};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{RData, RecordType};
use std::time::{Duration, Instant};

const A: u16 = 1;
const AAAA: u16 = 28;

#[test]
fn whoami_answers_over_udp_and_tcp() {
    let s = Server::start(|p| format!(".:{p} {{\n    whoami\n}}\n"));
    let m = ask(s.port, &query(7, "example.org.", A));
    assert_eq!(m.metadata.id, 7);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.metadata.authoritative);
    assert!(m.answers.is_empty());
    assert_eq!(m.additionals.len(), 2);
    let a = &m.additionals[0];
    assert_eq!(a.name.to_string(), "example.org.");
    assert!(matches!(&a.data, RData::A(ip) if ip.0 == std::net::Ipv4Addr::LOCALHOST));
    let srv = &m.additionals[1];
    assert_eq!(srv.name.to_string(), "_udp.example.org.");
    assert_eq!(srv.record_type(), RecordType::SRV);

    let replies = tcp_exchange(s.port, &[query(8, "example.org.", A)]);
    let m = Message::from_vec(&replies[0]).unwrap();
    assert_eq!(m.metadata.id, 8);
    assert_eq!(m.additionals[1].name.to_string(), "_tcp.example.org.");
}

#[test]
fn blocks_on_one_port_route_by_longest_suffix() {
    // example.org's block has only `log`, which falls off the chain: SERVFAIL tells it apart.
    let s = Server::start(|p| {
        format!(
            ".:{p} {{\n whoami\n}}\nexample.org:{p} {{\n log\n}}\nsub.example.org:{p} {{\n whoami\n}}\n"
        )
    });
    let rc = |name: &str| ask(s.port, &query(1, name, A)).metadata.response_code;
    assert_eq!(rc("www.example.net."), ResponseCode::NoError);
    assert_eq!(rc("www.example.org."), ResponseCode::ServFail);
    assert_eq!(rc("EXAMPLE.ORG."), ResponseCode::ServFail);
    assert_eq!(rc("a.sub.example.org."), ResponseCode::NoError);
    assert_eq!(rc("org."), ResponseCode::NoError);
}

#[test]
fn unserved_zones_and_empty_blocks_are_refused() {
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{\n bind 127.0.0.1\n whoami\n}}\nempty.test:{p} {{\n bind 127.0.0.1\n}}\nbound.test:{p} {{\n bind 127.0.0.1\n}}\n"
        )
    });
    let rc = |name: &str| ask(s.port, &query(1, name, A)).metadata.response_code;
    assert_eq!(rc("example.org."), ResponseCode::NoError);
    assert_eq!(rc("example.net."), ResponseCode::Refused);
    assert_eq!(rc("x.empty.test."), ResponseCode::Refused);
    assert_eq!(rc("x.bound.test."), ResponseCode::Refused);
}

#[test]
fn non_in_class_is_refused_without_chaos_or_forward() {
    let s = Server::start(|p| format!(".:{p} {{\n whoami\n}}\n"));
    let m = ask(s.port, &query_full(3, "version.bind.", 16, 3, None));
    assert_eq!(m.metadata.response_code, ResponseCode::Refused);
}

#[test]
fn malformed_packets_get_formerr_or_are_dropped_and_serving_goes_on() {
    let s = Server::start(|p| format!(".:{p} {{\n whoami\n}}\n"));
    let wait = Duration::from_millis(300);
    // Shorter than a header: dropped.
    assert_eq!(udp_exchange(s.port, &[1, 2, 3, 4, 5], wait), None);
    // A response (QR set): dropped.
    let mut resp = query(9, "example.org.", A);
    resp[2] |= 0x80;
    assert_eq!(udp_exchange(s.port, &resp, wait), None);
    // Two questions: FORMERR.
    let mut two = query(10, "example.org.", A);
    two[5] = 2;
    let r = udp_exchange(s.port, &two, wait).expect("FORMERR reply");
    assert_eq!(rcode(&r), 1);
    assert_eq!(&r[..2], &10u16.to_be_bytes());
    // A name running past the end: FORMERR.
    let mut cut = query(11, "example.org.", A);
    cut.truncate(16);
    cut[12] = 60;
    let r = udp_exchange(s.port, &cut, wait).expect("FORMERR reply");
    assert_eq!(rcode(&r), 1);
    // Opcode STATUS: NOTIMP.
    let mut status = query(12, "example.org.", A);
    status[2] = (status[2] & 0x87) | (2 << 3);
    let r = udp_exchange(s.port, &status, wait).expect("NOTIMP reply");
    assert_eq!(rcode(&r), 4);
    // Garbage of every length up to 64 bytes: never a crash.
    for len in 0..64u8 {
        let junk: Vec<u8> = (0..len)
            .map(|i| i.wrapping_mul(37).wrapping_add(len))
            .collect();
        let _ = udp_exchange(s.port, &junk, Duration::from_millis(20));
    }
    // Still serving.
    assert_eq!(
        ask(s.port, &query(13, "example.org.", A))
            .metadata
            .response_code,
        ResponseCode::NoError
    );
    let r = tcp_exchange(s.port, &[two.clone(), query(14, "example.org.", A)]);
    assert_eq!(r.len(), 2);
    assert_eq!(rcode(&r[0]), 1);
    assert_eq!(rcode(&r[1]), 0);
}

#[test]
fn fifty_pipelined_queries_on_one_tcp_connection_get_fifty_answers() {
    let s = Server::start(|p| format!(".:{p} {{\n whoami\n}}\n"));
    let queries: Vec<Vec<u8>> = (0..50u16)
        .map(|i| query(1000 + i, &format!("q{i}.example.org."), A))
        .collect();
    let replies = tcp_exchange(s.port, &queries);
    assert_eq!(replies.len(), 50);
    let mut ids: Vec<u16> = replies
        .iter()
        .map(|r| u16::from_be_bytes([r[0], r[1]]))
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (1000..1050).collect::<Vec<_>>());
}

#[test]
fn the_question_comes_back_in_the_clients_case() {
    let s = Server::start(|p| format!(".:{p} {{\n whoami\n}}\n"));
    let q = query(5, "ExAmPlE.oRg.", A);
    let r = udp_exchange(s.port, &q, Duration::from_secs(2)).unwrap();
    let qname = wire_name("ExAmPlE.oRg.");
    assert_eq!(&r[12..12 + qname.len()], &qname[..]);
    let m = Message::from_vec(&r).unwrap();
    assert_eq!(m.additionals[0].name.to_string(), "ExAmPlE.oRg.");
}

#[test]
fn a_large_answer_is_truncated_for_a_client_without_edns_and_complete_over_tcp() {
    let s = Server::start(|p| format!(".:{p} {{\n erratic {{\n  drop 0\n  large\n }}\n}}\n"));
    let q = query(21, "large.example.org.", A);
    let r = udp_exchange(s.port, &q, Duration::from_secs(2)).unwrap();
    assert!(r.len() <= 512, "{} bytes", r.len());
    let m = Message::from_vec(&r).unwrap();
    assert!(m.metadata.truncation, "TC must be set");
    assert!(m.answers.len() < 30);

    // With EDNS 4096 it fits.
    let m = ask(
        s.port,
        &query_full(22, "large.example.org.", A, 1, Some((4096, false))),
    );
    assert!(!m.metadata.truncation);
    assert_eq!(m.answers.len(), 30);

    let r = tcp_exchange(s.port, &[q]);
    let m = Message::from_vec(&r[0]).unwrap();
    assert!(!m.metadata.truncation);
    assert_eq!(m.answers.len(), 30);
}

#[test]
fn edns_is_echoed_with_the_do_bit_and_bad_versions_get_badvers() {
    let s = Server::start(|p| format!(".:{p} {{\n whoami\n}}\n"));
    let m = ask(
        s.port,
        &query_full(31, "example.org.", A, 1, Some((1232, true))),
    );
    let edns = m.edns.expect("OPT in the reply");
    assert!(edns.flags().dnssec_ok);
    assert_eq!(edns.version(), 0);

    let m = ask(s.port, &query(32, "example.org.", A));
    assert!(m.edns.is_none(), "no OPT to a client without EDNS");

    let mut q = query_full(33, "example.org.", A, 1, Some((1232, false)));
    let n = q.len();
    q[n - 5] = 1; // EDNS version 1
    let r = udp_exchange(s.port, &q, Duration::from_secs(2)).unwrap();
    assert_eq!(rcode(&r), 0, "BADVERS is 16: header bits 0");
    // The OPT (no options) closes the reply; its extended rcode byte holds 16 >> 4.
    let n = r.len();
    assert_eq!(&r[n - 10..n - 8], &[0, 41], "OPT last");
    assert_eq!(r[n - 6], 1, "extended rcode 1");
}

#[test]
fn a_waiting_plugin_does_not_hold_up_other_queries() {
    let s = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\nslow.test:{p} {{\n erratic {{\n  delay 1 800ms\n }}\n}}\n.:{p} {{\n whoami\n}}\n"
        )
    });
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let t0 = Instant::now();
    sock.send_to(&query(41, "a.slow.test.", A), ("127.0.0.1", s.port))
        .unwrap();
    sock.send_to(&query(42, "fast.example.", A), ("127.0.0.1", s.port))
        .unwrap();
    let mut buf = [0u8; 512];
    let (n, _) = sock.recv_from(&mut buf).unwrap();
    assert_eq!(
        u16::from_be_bytes([buf[0], buf[1]]),
        42,
        "the fast query answers first"
    );
    assert!(t0.elapsed() < Duration::from_millis(700));
    let (n2, _) = sock.recv_from(&mut buf).unwrap();
    assert_eq!(u16::from_be_bytes([buf[0], buf[1]]), 41);
    assert!(t0.elapsed() >= Duration::from_millis(800));
    let m = Message::from_vec(&buf[..n2]).unwrap();
    assert_eq!(m.answers.len(), 1);
    let _ = n;

    // The same over TCP: the delayed answer still arrives.
    let r = tcp_exchange(s.port, &[query(43, "b.slow.test.", AAAA)]);
    assert_eq!(Message::from_vec(&r[0]).unwrap().answers.len(), 1);
}

#[test]
fn log_writes_coredns_common_log_lines() {
    let s = Server::start(|p| format!(".:{p} {{\n log\n whoami\n}}\n"));
    ask(s.port, &query(51, "LOG.example.org.", AAAA));
    assert!(
        s.wait_stdout("\"AAAA IN log.example.org. udp ", Duration::from_secs(3)),
        "stdout:\n{}",
        s.stdout()
    );
    let line = s
        .stdout()
        .lines()
        .find(|l| l.contains("log.example.org."))
        .unwrap()
        .to_string();
    assert!(line.starts_with("[INFO] 127.0.0.1:"), "{line}");
    assert!(
        line.contains(" - 51 \"AAAA IN log.example.org. udp "),
        "{line}"
    );
    assert!(line.contains(" false 512\" NOERROR qr,aa,rd "), "{line}");
    assert!(line.ends_with('s'), "{line}");
}

#[test]
fn errors_logs_what_falls_off_the_chain() {
    let s = Server::start(|p| format!(".:{p} {{\n errors\n log\n}}\n"));
    let m = ask(s.port, &query(61, "Err.example.org.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::ServFail);
    assert!(
        s.wait_stdout(
            "[ERROR] plugin/errors: 2 err.example.org. A: plugin/log: no next plugin found",
            Duration::from_secs(3)
        ),
        "stdout:\n{}",
        s.stdout()
    );
}

#[test]
fn the_banner_lists_the_served_zones() {
    let s = Server::start(|p| {
        format!("example.org:{p} {{\n whoami\n}}\n10.0.0.0/24:{p} {{\n whoami\n}}\n")
    });
    assert!(
        s.wait_stdout("ringdns-", Duration::from_secs(3)),
        "{}",
        s.stdout()
    );
    let out = s.stdout();
    assert!(out.contains(&format!("example.org.:{}\n", s.port)), "{out}");
    assert!(
        out.contains(&format!("0.0.10.in-addr.arpa.:{}\n", s.port)),
        "{out}"
    );
    assert!(out.contains("ringdns-"), "{out}");
}

#[test]
fn reverse_zone_keys_route_ptr_queries() {
    let s = Server::start(|p| format!("10.0.0.0/24:{p} {{\n whoami\n}}\n"));
    let m = ask(s.port, &query(71, "5.0.0.10.in-addr.arpa.", 12));
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    let m = ask(s.port, &query(72, "5.1.0.10.in-addr.arpa.", 12));
    assert_eq!(m.metadata.response_code, ResponseCode::Refused);
}

#[test]
fn tcp_connections_time_out_and_a_full_table_closes_the_idlest() {
    use std::io::Read;
    let s =
        Server::start(|p| format!("{{\n workers 1\n tcp_max_conns 2\n}}\n.:{p} {{\n whoami\n}}\n"));
    // A connection that never sends is closed after the 3 s first-read timeout.
    let mut idle = std::net::TcpStream::connect(s.addr()).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(6))).unwrap();
    let t0 = Instant::now();
    let mut buf = [0u8; 16];
    assert_eq!(idle.read(&mut buf).unwrap_or(0), 0, "closed by the server");
    let waited = t0.elapsed();
    assert!(
        waited >= Duration::from_millis(2500) && waited < Duration::from_secs(6),
        "{waited:?}"
    );

    // Two open connections fill the cap; a third closes the one idle longest, is answered,
    // and it is logged.
    let mut a = std::net::TcpStream::connect(s.addr()).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let b = std::net::TcpStream::connect(s.addr()).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let q = query(81, "example.org.", A);
    assert_eq!(
        tcp_exchange(s.port, std::slice::from_ref(&q)).len(),
        1,
        "the newcomer"
    );
    a.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    assert_eq!(a.read(&mut buf).unwrap_or(0), 0, "the idlest was closed");
    assert!(
        s.wait_stdout("TCP connection limit (2) reached", Duration::from_secs(2)),
        "{}",
        s.stdout()
    );
    drop(b);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(tcp_exchange(s.port, &[q]).len(), 1, "room again");
}

#[test]
fn on_tcp_a_slow_answer_does_not_hold_up_the_ones_behind_it() {
    let s = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\nslow.test:{p} {{\n erratic {{\n  delay 1 600ms\n }}\n}}\n.:{p} {{\n whoami\n}}\n"
        )
    });
    let t0 = Instant::now();
    let replies = tcp_exchange(
        s.port,
        &[
            query(91, "a.slow.test.", A),
            query(92, "fast.example.", A),
            query(93, "fast2.example.", A),
        ],
    );
    let ids: Vec<u16> = replies
        .iter()
        .map(|r| u16::from_be_bytes([r[0], r[1]]))
        .collect();
    assert_eq!(ids, vec![92, 93, 91], "answers leave as they are ready");
    assert!(t0.elapsed() >= Duration::from_millis(600));
}

#[test]
fn timeouts_set_the_tcp_idle_limit_and_the_query_cap() {
    use std::io::{Read, Write};
    let s = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n timeouts {{\n  read 1\n  idle 1s\n  maxtcpqueries 3\n }}\n whoami\n}}\n"
        )
    });
    // maxtcpqueries 3: five pipelined queries get three answers, then the connection closes.
    let replies = tcp_exchange(
        s.port,
        &(0..5u16)
            .map(|i| query(200 + i, "cap.test.", A))
            .collect::<Vec<_>>(),
    );
    assert_eq!(replies.len(), 3);
    // read 1s: a silent connection is closed after about a second, not the default 3 s.
    let mut c = std::net::TcpStream::connect(s.addr()).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let t0 = Instant::now();
    let mut buf = [0u8; 4];
    assert_eq!(c.read(&mut buf).unwrap_or(0), 0);
    assert!(
        t0.elapsed() < Duration::from_millis(2500),
        "{:?}",
        t0.elapsed()
    );
    let _ = c.write_all(&[0]);
}

#[test]
fn once_stopped_the_server_leaves_no_listener_behind() {
    // glommio holds a socket open while an io_uring request on it is in flight. A core that
    // ended right after its loops left the cancellations of their last waits (an accept, a
    // poll) unsubmitted, and its listening sockets to the ring's teardown after exit: for a
    // few milliseconds a connection to the stopped server was accepted and then reset
    // (about one stop in four). Stopped, the port must refuse (the accept loop shuts its
    // listener down as it ends).
    let port = common::free_port();
    for round in 0..12 {
        let mut s = common::start_on_port(port.port, ".:PORT {\n    whoami\n}\n");
        s.signal("TERM");
        assert_eq!(
            s.wait_exit(Duration::from_secs(10)),
            Some(0),
            "round {round}"
        );
        // From another loopback address: from 127.0.0.1, a client given the target port as
        // its own would connect to itself.
        let client =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        let from: std::net::SocketAddr = "127.0.0.2:0".parse().unwrap();
        client.bind(&from.into()).unwrap();
        let to = std::net::SocketAddr::from(([127, 0, 0, 1], port.port));
        match client.connect(&to.into()) {
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused),
            Ok(()) => panic!("round {round}: the stopped server's port accepted a connection"),
        }
    }
}

/// Brings up the loopback of the network namespace this thread just entered, with `mtu`.
fn loopback_up_with_mtu(mtu: i32) {
    // SAFETY: plain socket and ioctl calls on a zeroed, NUL-terminated ifreq for "lo".
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let mut req: libc::ifreq = std::mem::zeroed();
        for (d, s) in req.ifr_name.iter_mut().zip(b"lo\0") {
            *d = *s as libc::c_char;
        }
        req.ifr_ifru.ifru_mtu = mtu;
        let rc = libc::ioctl(fd, libc::SIOCSIFMTU, &req);
        assert_eq!(rc, 0, "SIOCSIFMTU: {}", std::io::Error::last_os_error());
        let rc = libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req);
        assert_eq!(rc, 0, "SIOCGIFFLAGS: {}", std::io::Error::last_os_error());
        req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        let rc = libc::ioctl(fd, libc::SIOCSIFFLAGS, &req);
        assert_eq!(rc, 0, "SIOCSIFFLAGS: {}", std::io::Error::last_os_error());
        libc::close(fd);
    }
}

#[test]
fn a_udp_reply_longer_than_the_interface_mtu_is_cut_with_tc_not_fragmented() {
    // A network namespace of its own (this thread's, inherited by the server it starts) whose
    // loopback carries 560-byte packets: erratic's large answer (30 A records, about 560
    // bytes of DNS) does not fit. Sent with DF, it fails with EMSGSIZE and goes out again
    // cut to 512 bytes with TC; without DF the kernel would fragment it and the client get
    // all 30. Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN), as `.ci/run` has; skipped
    // without.
    std::thread::spawn(|| {
        // SAFETY: unshare affects only the calling thread, which nothing else uses.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            let e = std::io::Error::last_os_error();
            assert_eq!(e.raw_os_error(), Some(libc::EPERM), "unshare: {e}");
            eprintln!("no permission for a network namespace (not root): skipped");
            return;
        }
        loopback_up_with_mtu(560);
        let s = Server::start(|p| {
            format!(".:{p} {{\n    erratic {{\n        drop 0\n        large\n    }}\n}}\n")
        });
        let name = "a-name-long-enough-for-a-large-reply.example.org.";
        let q = query_full(21, name, A, 1, Some((4096, false)));
        let reply = udp_exchange(s.port, &q, Duration::from_secs(2)).expect("a reply over UDP");
        assert!(reply.len() <= 512, "{} bytes", reply.len());
        let m = Message::from_vec(&reply).expect("reply parses");
        assert_eq!(m.metadata.id, 21);
        assert!(m.metadata.truncation, "TC set");
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert_eq!(m.queries[0].name().to_string(), name);
        assert!(
            !m.answers.is_empty() && m.answers.len() < 30,
            "{} answers",
            m.answers.len()
        );
        let edns = m.edns.as_ref().expect("the OPT is kept");
        assert_eq!(edns.max_payload(), 4096);
        // What fits goes out whole; over TCP the whole answer.
        let small = query_full(22, name, AAAA, 1, Some((4096, false)));
        let m = ask(s.port, &small);
        assert!(!m.metadata.truncation);
        assert_eq!(m.answers.len(), 1);
        let replies = tcp_exchange(s.port, &[q]);
        let m = Message::from_vec(&replies[0]).expect("reply parses");
        assert!(!m.metadata.truncation);
        assert_eq!(m.answers.len(), 30);
    })
    .join()
    .unwrap();
}

#[test]
fn replies_cut_for_the_mtu_and_replies_too_big_even_cut_are_counted() {
    // As above, in a network namespace whose loopback carries 560-byte packets: erratic's
    // large answer goes out cut, and ringdns_udp_replies_cut_total counts it. Then at an MTU
    // of 300 not even the 512-byte cut fits: nothing is sent, and the reply is counted in
    // ringdns_udp_send_errors_total{reason="too_big"}. Needs root; skipped without.
    std::thread::spawn(|| {
        // SAFETY: unshare affects only the calling thread, which nothing else uses.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            let e = std::io::Error::last_os_error();
            assert_eq!(e.raw_os_error(), Some(libc::EPERM), "unshare: {e}");
            eprintln!("no permission for a network namespace (not root): skipped");
            return;
        }
        loopback_up_with_mtu(560);
        let claim = common::free_port();
        let mport = claim.port;
        let s = Server::start(|p| {
            format!(
                ".:{p} {{\n    prometheus 127.0.0.1:{mport}\n    erratic {{\n        drop 0\n        large\n    }}\n}}\n"
            )
        });
        let server = format!("dns://:{}", s.port);
        let cut = |t: &str| {
            common::metrics::value(t, "ringdns_udp_replies_cut_total", &[("server", &server)])
        };
        let too_big = |t: &str| {
            common::metrics::value(
                t,
                "ringdns_udp_send_errors_total",
                &[("server", &server), ("reason", "too_big")],
            )
        };
        let page = common::metrics::scrape(mport);
        assert_eq!((cut(&page), too_big(&page)), (Some(0.0), Some(0.0)), "{page}");

        let name = "a-name-long-enough-for-a-large-reply.example.org.";
        let q = query_full(31, name, A, 1, Some((4096, false)));
        let reply = udp_exchange(s.port, &q, Duration::from_secs(2)).expect("a reply over UDP");
        assert!(reply.len() <= 512, "{} bytes", reply.len());
        let page = common::metrics::scrape_until(mport, |t| cut(t) == Some(1.0));
        assert_eq!((cut(&page), too_big(&page)), (Some(1.0), Some(0.0)), "{page}");

        loopback_up_with_mtu(300);
        let q = query_full(32, name, A, 1, Some((4096, false)));
        assert_eq!(udp_exchange(s.port, &q, Duration::from_millis(500)), None);
        let page = common::metrics::scrape_until(mport, |t| too_big(t) == Some(1.0));
        assert_eq!((cut(&page), too_big(&page)), (Some(1.0), Some(1.0)), "{page}");
        assert!(
            s.stderr().contains("udp send failed") || s.stdout().contains("udp send failed"),
            "the first is logged"
        );
    })
    .join()
    .unwrap();
}
