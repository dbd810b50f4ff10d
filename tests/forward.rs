//! forward against real upstreams on loopback: other ringdns processes started by the test
//! (whoami, erratic) and small servers the test runs itself (a rogue UDP responder, a DoT
//! server with a self-signed certificate).

mod common;

use common::{Server, ask, query, query_full, tcp_exchange, udp_exchange};
use hickory_proto::op::{Message, ResponseCode};
use std::net::UdpSocket;
use std::time::{Duration, Instant};

const A: u16 = 1;
const MX: u16 = 15;

/// An upstream that logs every query (so tests can count what reached it) and answers with
/// whoami.
fn whoami_upstream() -> Server {
    Server::start(|p| {
        format!("{{\n workers 1\n}}\n.:{p} {{\n log . \"Q {{name}} {{proto}}\"\n whoami\n}}\n")
    })
}

/// The names of the queries containing `needle` that reached `up`, in order.
fn logged_names(up: &Server, needle: &str) -> Vec<String> {
    up.stdout()
        .lines()
        .filter(|l| l.starts_with("[INFO] Q ") && l.contains(needle))
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect()
}

/// How many queries for names containing `needle` reached `up`.
fn seen(up: &Server, needle: &str) -> usize {
    logged_names(up, needle).len()
}

/// Distinct query names `up` logged that contain `needle`: a client that asks again after
/// its own timeout is not counted twice.
fn seen_names(up: &Server, needle: &str) -> usize {
    let names: std::collections::HashSet<_> = logged_names(up, needle).into_iter().collect();
    names.len()
}

fn forwarder(body: &str) -> Server {
    let body = body.to_string();
    Server::start(move |p| format!("{{\n workers 1\n}}\n.:{p} {{\n{body}\n}}\n"))
}

fn settle() {
    std::thread::sleep(Duration::from_millis(150));
}

#[test]
fn forwards_over_udp_and_tcp_and_restores_the_client_id() {
    let up = whoami_upstream();
    let f = forwarder(&format!(" forward . 127.0.0.1:{}", up.port));
    let m = ask(f.port, &query(4242, "a.fwd.test.", A));
    assert_eq!(m.metadata.id, 4242);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert_eq!(m.additionals[0].name.to_string(), "a.fwd.test.");
    let r = tcp_exchange(f.port, &[query(4243, "b.fwd.test.", A)]);
    let m = Message::from_vec(&r[0]).unwrap();
    assert_eq!(m.metadata.id, 4243);
    settle();
    assert_eq!(seen(&up, "a.fwd.test. udp"), 1);
    assert_eq!(
        seen(&up, "b.fwd.test. tcp"),
        1,
        "a TCP client is forwarded over TCP"
    );
}

#[test]
fn policies_order_the_upstreams() {
    let (u1, u2) = (whoami_upstream(), whoami_upstream());
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} 127.0.0.1:{} {{\n  policy sequential\n }}",
        u1.port, u2.port
    ));
    for i in 0..10 {
        ask(f.port, &query(i, &format!("s{i}.seq.test."), A));
    }
    settle();
    assert_eq!((seen(&u1, "seq.test."), seen(&u2, "seq.test.")), (10, 0));

    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} 127.0.0.1:{} {{\n  policy round_robin\n }}",
        u1.port, u2.port
    ));
    for i in 0..10 {
        ask(f.port, &query(i, &format!("r{i}.rr.test."), A));
    }
    settle();
    assert_eq!((seen(&u1, "rr.test."), seen(&u2, "rr.test.")), (5, 5));

    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} 127.0.0.1:{}",
        u1.port, u2.port
    ));
    for i in 0..40 {
        ask(f.port, &query(i, &format!("x{i}.random.test."), A));
    }
    settle();
    let (a, b) = (seen(&u1, "random.test."), seen(&u2, "random.test."));
    assert_eq!(a + b, 40);
    assert!(a >= 5 && b >= 5, "random spreads: {a} / {b}");
}

#[test]
fn a_stopped_upstream_is_skipped_and_used_again_when_it_returns() {
    let u1 = whoami_upstream();
    let u2 = whoami_upstream();
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} 127.0.0.1:{} {{\n  policy sequential\n  health_check 100ms\n }}",
        u1.port, u2.port
    ));
    ask(f.port, &query(1, "before.test.", A));
    settle();
    assert_eq!(seen(&u1, "before.test."), 1);
    // Stop u1 but keep its port: its replacement starts on the same port later.
    let port1 = u1.port;
    drop(u1);
    for i in 0..20u16 {
        let m = ask(f.port, &query(100 + i, &format!("during{i}.test."), A));
        assert_eq!(
            m.metadata.response_code,
            ResponseCode::NoError,
            "answered by u2"
        );
    }
    settle();
    // Every one reached u2. (Under the full suite the kernel may suppress the ICMP that tells
    // the forwarder u1's port is closed (other tests send thousands of queries to dead
    // ports, and ICMP errors are rate limited): the first query then waits out read_timeout
    // (2 s), as long as the test client waits before asking again, and u2 may log it twice.)
    assert_eq!(seen_names(&u2, "during"), 20);
    // Bring an upstream back on u1's port.
    let back = common::start_on_port(
        port1,
        "{\n workers 1\n}\n.:PORT {\n log . \"Q {name} {proto}\"\n whoami\n}\n",
    );
    let t0 = Instant::now();
    let mut returned = false;
    while t0.elapsed() < Duration::from_secs(5) && !returned {
        ask(f.port, &query(7, "after.test.", A));
        settle();
        returned = seen(&back, "after.test.") > 0;
    }
    assert!(
        returned,
        "the upstream is used again once a probe sees it answer"
    );
}

/// A UDP upstream that never answers: it records the question name of every query it
/// gets (`.` for the forwarder's health probes) until the returned flag is set.
fn black_hole() -> (
    u16,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<Vec<String>>,
) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    sock.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop = done.clone();
    let h = std::thread::spawn(move || {
        let mut names = Vec::new();
        let mut buf = [0u8; 512];
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            if let Ok((n, _)) = sock.recv_from(&mut buf)
                && let Ok(m) = Message::from_vec(&buf[..n])
                && let Some(q) = m.queries.first()
            {
                names.push(q.name().to_string());
            }
        }
        names
    });
    (port, done, h)
}

#[test]
fn an_upstream_known_down_gets_no_queries_and_costs_no_timeout() {
    // u1 swallows queries: a query tried there waits out read_timeout (1 s) before u2
    // answers, and starts u1's probes. Once more than max_fails probes failed in a row
    // (each waits 1 s, as CoreDNS's), u1 is down: queries go straight to u2, none waits,
    // none reaches u1; only the probes do.
    let (hole, done, h) = black_hole();
    let u2 = whoami_upstream();
    let hp = common::free_port();
    let f = forwarder(&format!(
        " prometheus 127.0.0.1:{}\n forward . 127.0.0.1:{hole} 127.0.0.1:{} {{\n  policy sequential\n  read_timeout 1s\n  max_fails 1\n  health_check 100ms\n }}",
        hp.port, u2.port
    ));
    let t0 = Instant::now();
    let m = ask(f.port, &query(10, "warm.test.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(
        t0.elapsed() >= Duration::from_millis(900),
        "u1 was tried first"
    );
    let to = format!("127.0.0.1:{hole}");
    let probe_failures = || {
        common::metrics::value(
            &common::metrics::scrape(hp.port),
            "coredns_forward_healthcheck_failures_total",
            &[("to", &to)],
        )
        .unwrap_or(0.0)
    };
    while probe_failures() < 2.0 {
        assert!(
            t0.elapsed() < Duration::from_secs(15),
            "u1's probes did not fail twice"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for i in 0..20u16 {
        let t0 = Instant::now();
        let m = ask(f.port, &query(100 + i, &format!("after{i}.test."), A));
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert!(
            t0.elapsed() < Duration::from_millis(500),
            "query {i} waited {:?}: the down upstream was tried",
            t0.elapsed()
        );
    }
    settle();
    assert_eq!(seen_names(&u2, "after"), 20);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let names = h.join().unwrap();
    let after = names.iter().filter(|n| n.starts_with("after")).count();
    assert_eq!(after, 0, "queries reached the down upstream: {names:?}");
    assert!(
        names.iter().filter(|n| *n == ".").count() >= 2,
        "the down upstream is probed: {names:?}"
    );
}

#[test]
fn a_slow_upstream_times_out_after_read_timeout_and_the_next_answers() {
    let slow = Server::start(|p| {
        format!("{{\n workers 1\n}}\n.:{p} {{\n erratic {{\n  delay 1 2s\n }}\n}}\n")
    });
    let fast = whoami_upstream();
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} 127.0.0.1:{} {{\n  policy sequential\n  read_timeout 500ms\n  max_fails 0\n }}",
        slow.port, fast.port
    ));
    let t0 = Instant::now();
    let m = ask(f.port, &query(1, "slow.test.", A));
    let took = t0.elapsed();
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_millis(1900),
        "{took:?}"
    );
    settle();
    assert_eq!(seen(&fast, "slow.test."), 1);

    let only_slow = forwarder(&format!(
        " forward . 127.0.0.1:{} {{\n  read_timeout 200ms\n  max_connect_attempts 2\n }}",
        slow.port
    ));
    let t0 = Instant::now();
    let m = ask(only_slow.port, &query(2, "slow2.test.", A));
    assert_eq!(m.metadata.response_code, ResponseCode::ServFail);
    assert!(
        t0.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t0.elapsed()
    );
}

/// A UDP upstream run by the test: for each query it first sends a reply with a wrong ID,
/// then one for another question, then the right one.
fn rogue_upstream() -> (u16, std::thread::JoinHandle<usize>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let h = std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        let mut served = 0;
        while let Ok((n, peer)) = sock.recv_from(&mut buf) {
            let q = &buf[..n];
            let mut wrong_id = q.to_vec();
            wrong_id[0] ^= 0xff;
            wrong_id[2] |= 0x80;
            let _ = sock.send_to(&wrong_id, peer);
            let mut other = q.to_vec();
            other[2] |= 0x80;
            other[13] ^= 0x01; // changes a letter of the name: another question
            let _ = sock.send_to(&other, peer);
            let mut good = q.to_vec();
            good[2] |= 0x80;
            good[3] = (good[3] & 0xf0) | 3; // NXDOMAIN, to recognise it
            let _ = sock.send_to(&good, peer);
            // The readiness probe of the test harness comes here too; count only ours.
            if q.windows(5).any(|w| w == b"rogue") {
                served += 1;
                if served == 3 {
                    break;
                }
            }
        }
        served
    });
    (port, h)
}

#[test]
fn replies_with_the_wrong_id_or_question_are_ignored() {
    let (port, h) = rogue_upstream();
    let f = forwarder(&format!(" forward . 127.0.0.1:{port}"));
    for i in 0..3 {
        let m = ask(f.port, &query(60 + i, "rogue.test.", A));
        assert_eq!(m.metadata.id, 60 + i);
        assert_eq!(
            m.metadata.response_code,
            ResponseCode::NXDomain,
            "only the matching reply is relayed"
        );
        assert_eq!(m.queries[0].name().to_string(), "rogue.test.");
    }
    assert_eq!(h.join().unwrap(), 3);
}

#[test]
fn truncated_replies_reach_udp_clients_who_then_get_everything_over_tcp() {
    let up = Server::start(|p| format!(".:{p} {{\n erratic {{\n  drop 0\n  large\n }}\n}}\n"));
    let f = forwarder(&format!(" forward . 127.0.0.1:{}", up.port));
    let r = udp_exchange(
        f.port,
        &query(1, "a-longer-name.big.test.", A),
        Duration::from_secs(2),
    )
    .unwrap();
    let m = Message::from_vec(&r).unwrap();
    assert!(m.metadata.truncation);
    assert!(r.len() <= 512);
    let r = tcp_exchange(f.port, &[query(2, "a-longer-name.big.test.", A)]);
    let m = Message::from_vec(&r[0]).unwrap();
    assert!(!m.metadata.truncation);
    assert_eq!(m.answers.len(), 30);
    // prefer_udp: a truncated UDP reply is asked again over TCP, so a TCP client gets all.
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} {{\n  prefer_udp\n }}",
        up.port
    ));
    let r = tcp_exchange(f.port, &[query(3, "a-longer-name.big.test.", A)]);
    assert_eq!(Message::from_vec(&r[0]).unwrap().answers.len(), 30);
    // With EDNS the client takes the whole answer over UDP.
    let m = ask(
        f.port,
        &query_full(4, "a-longer-name.big.test.", A, 1, Some((4096, false))),
    );
    assert_eq!(m.answers.len(), 30);
}

#[test]
fn force_tcp_and_prefer_udp_choose_the_upstream_transport() {
    let up = whoami_upstream();
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} {{\n  force_tcp\n }}",
        up.port
    ));
    ask(f.port, &query(1, "ft.test.", A));
    let f2 = forwarder(&format!(
        " forward . 127.0.0.1:{} {{\n  prefer_udp\n }}",
        up.port
    ));
    tcp_exchange(f2.port, &[query(2, "pu.test.", A)]);
    settle();
    assert_eq!(seen(&up, "ft.test. tcp"), 1);
    assert_eq!(seen(&up, "pu.test. udp"), 1);
}

#[test]
fn except_next_and_failover() {
    let up = whoami_upstream();
    // erratic answers MX with SERVFAIL.
    let bad = Server::start(|p| {
        format!(
            "{{\n workers 1\n}}\n.:{p} {{\n log . \"Q {{name}} {{proto}}\"\n erratic {{\n  drop 0\n }}\n}}\n"
        )
    });
    // except: the name goes to the next plugin (whoami here), not upstream.
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} {{\n  except local.test\n }}\n whoami",
        up.port
    ));
    assert_eq!(
        ask(f.port, &query(1, "x.local.test.", A))
            .metadata
            .response_code,
        ResponseCode::NoError
    );
    ask(f.port, &query(2, "remote.test.", A));
    settle();
    assert_eq!(seen(&up, "local.test."), 0);
    assert_eq!(seen(&up, "remote.test."), 1);

    // next SERVFAIL: the second forward line gets the query.
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} {{\n  next SERVFAIL\n }}\n forward . 127.0.0.1:{}",
        bad.port, up.port
    ));
    assert_eq!(
        ask(f.port, &query(3, "next.test.", MX))
            .metadata
            .response_code,
        ResponseCode::NoError
    );
    settle();
    assert_eq!((seen(&bad, "next.test."), seen(&up, "next.test.")), (1, 1));

    // failover SERVFAIL: the next upstream of the same line.
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} 127.0.0.1:{} {{\n  policy sequential\n  failover SERVFAIL\n }}",
        bad.port, up.port
    ));
    assert_eq!(
        ask(f.port, &query(4, "fo.test.", MX))
            .metadata
            .response_code,
        ResponseCode::NoError
    );
    // Without failover the SERVFAIL is relayed.
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} 127.0.0.1:{} {{\n  policy sequential\n }}",
        bad.port, up.port
    ));
    assert_eq!(
        ask(f.port, &query(5, "nofo.test.", MX))
            .metadata
            .response_code,
        ResponseCode::ServFail
    );
}

#[test]
fn max_concurrent_refuses_the_excess() {
    let slow = Server::start(|p| {
        format!("{{\n workers 1\n}}\n.:{p} {{\n erratic {{\n  delay 1 700ms\n }}\n}}\n")
    });
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} {{\n  max_concurrent 2\n }}",
        slow.port
    ));
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    for i in 0..6u16 {
        sock.send_to(&query(i, &format!("c{i}.test."), A), ("127.0.0.1", f.port))
            .unwrap();
    }
    let mut refused = 0;
    let mut ok = 0;
    let mut buf = [0u8; 512];
    for _ in 0..6 {
        let (n, _) = sock.recv_from(&mut buf).unwrap();
        match Message::from_vec(&buf[..n]).unwrap().metadata.response_code {
            ResponseCode::Refused => refused += 1,
            ResponseCode::NoError => ok += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((ok, refused), (2, 4));
}

/// Open file descriptors of a process.
fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

#[test]
fn no_fd_leak_with_a_dead_upstream() {
    // Nothing listens on this port: every exchange fails.
    let dead = common::free_port();
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} {{\n  read_timeout 100ms\n }}",
        dead.port
    ));
    let before = fds(f.pid());
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = [0u8; 512];
    let mut answered = 0;
    // 10 000 queries, at most 100 outstanding.
    let total = 10_000u32;
    let mut sent = 0u32;
    let t0 = Instant::now();
    while answered < total && t0.elapsed() < Duration::from_secs(120) {
        while sent < total && sent - answered < 100 {
            sock.send_to(
                &query(sent as u16, &format!("d{sent}.dead.test."), A),
                ("127.0.0.1", f.port),
            )
            .unwrap();
            sent += 1;
        }
        match sock.recv_from(&mut buf) {
            Ok((n, _)) => {
                assert_eq!(buf[3] & 0x0f, 2, "SERVFAIL");
                let _ = n;
                answered += 1;
            }
            Err(_) => break,
        }
    }
    assert_eq!(answered, total, "every query answered");
    std::thread::sleep(Duration::from_millis(300));
    let after = fds(f.pid());
    assert!(after <= before + 4, "fds before {before}, after {after}");
}

/// A DNS-over-TLS upstream run by the test with a self-signed certificate for `dot.test`:
/// answers every query with NXDOMAIN (to recognise it). Returns its port, the CA file and
/// how many queries it answered once it stops (after `max` queries or 10 s idle).
fn dot_upstream(
    dir: &common::TempDir,
    max: usize,
) -> (u16, std::path::PathBuf, std::thread::JoinHandle<usize>) {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    use std::io::{Read, Write};
    let ck = rcgen::generate_simple_self_signed(vec!["dot.test".to_string()]).unwrap();
    let ca = dir.write("ca.pem", &ck.cert.pem());
    let chain = vec![CertificateDer::from(ck.cert.der().to_vec())];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.signing_key.serialize_der()));
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let config = std::sync::Arc::new(config);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let mut answered = 0;
        listener.set_nonblocking(false).unwrap();
        while answered < max {
            let Ok((tcp, _)) = listener.accept() else {
                break;
            };
            tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let conn = rustls::ServerConnection::new(config.clone()).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, tcp);
            loop {
                let mut len = [0u8; 2];
                if tls.read_exact(&mut len).is_err() {
                    break;
                }
                let mut q = vec![0u8; u16::from_be_bytes(len) as usize];
                if tls.read_exact(&mut q).is_err() {
                    break;
                }
                q[2] |= 0x80;
                q[3] = (q[3] & 0xf0) | 3;
                let mut out = (q.len() as u16).to_be_bytes().to_vec();
                out.extend_from_slice(&q);
                if tls.write_all(&out).is_err() || tls.flush().is_err() {
                    break;
                }
                // Count only the test's own queries (not a readiness probe).
                if q.windows(3).any(|w| w == b"dot") {
                    answered += 1;
                }
                if answered >= max {
                    break;
                }
            }
        }
        answered
    });
    (port, ca, h)
}

#[test]
fn forwards_over_tls_to_an_upstream_with_a_self_signed_certificate() {
    let dir = common::TempDir::new();
    let (port, ca, h) = dot_upstream(&dir, 3);
    let f = forwarder(&format!(
        " forward . tls://127.0.0.1:{port} {{\n  tls {}\n  tls_servername dot.test\n }}",
        ca.display()
    ));
    for i in 0..3u16 {
        let m = ask(f.port, &query(70 + i, "dot.example.", A));
        assert_eq!(m.metadata.id, 70 + i);
        assert_eq!(
            m.metadata.response_code,
            ResponseCode::NXDomain,
            "answered by the DoT upstream"
        );
    }
    assert_eq!(h.join().unwrap(), 3);
}

#[test]
fn a_tls_upstream_with_an_unknown_certificate_is_not_trusted() {
    let dir = common::TempDir::new();
    let (port, _ca, _h) = dot_upstream(&dir, 1);
    // No `tls CA`: the system roots do not know the self-signed certificate.
    let f = forwarder(&format!(
        " forward . tls://127.0.0.1:{port} {{\n  tls_servername dot.test\n  max_connect_attempts 1\n }}"
    ));
    assert_eq!(
        ask(f.port, &query(1, "dot.example.", A))
            .metadata
            .response_code,
        ResponseCode::ServFail
    );
}

#[test]
fn a_steady_stream_survives_an_upstream_being_killed_and_restarted() {
    let u1 = whoami_upstream();
    let u2 = whoami_upstream();
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} 127.0.0.1:{} {{\n  health_check 100ms\n  read_timeout 500ms\n }}",
        u1.port, u2.port
    ));
    let port2 = u2.port;
    let mut u2 = Some(u2);
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(6))).unwrap();
    let total: u32 = 20_000;
    let (mut sent, mut answered, mut servfail) = (0u32, 0u32, 0u32);
    let mut got = vec![false; total as usize];
    let mut buf = [0u8; 1024];
    let mut restarted: Option<Server> = None;
    let t0 = Instant::now();
    while answered < total && t0.elapsed() < Duration::from_secs(120) {
        while sent < total && sent - answered < 50 {
            let id = (sent % 65_536) as u16;
            sock.send_to(
                &query(id, &format!("s{sent}.stream.test."), A),
                ("127.0.0.1", f.port),
            )
            .unwrap();
            sent += 1;
        }
        if sent == 5_000
            && let Some(u) = u2.take()
        {
            u.signal("KILL"); // one of two upstreams dies without warning
            drop(u);
        }
        if sent == 12_000 && restarted.is_none() {
            restarted = Some(common::start_on_port(
                port2,
                "{\n workers 1\n}\n.:PORT {\n whoami\n}\n",
            ));
        }
        let (n, _) = sock
            .recv_from(&mut buf)
            .expect("every query gets an answer");
        let m = Message::from_vec(&buf[..n]).unwrap();
        let name = m.queries[0].name().to_string();
        let i: usize = name[1..name.find('.').unwrap()].parse().unwrap();
        assert!(!got[i], "one answer per query");
        got[i] = true;
        match m.metadata.response_code {
            ResponseCode::NoError => {}
            ResponseCode::ServFail => servfail += 1,
            other => panic!("unexpected {other:?}"),
        }
        answered += 1;
    }
    assert_eq!(answered, total, "none lost");
    // u1 stayed up all along: nothing should have failed.
    assert_eq!(servfail, 0, "an upstream was always up");
}

#[test]
fn idle_upstream_connections_close_after_expire() {
    let up = whoami_upstream();
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} {{\n  force_tcp\n  expire 300ms\n }}",
        up.port
    ));
    // Whatever the start-up probe opened has expired and been closed after this.
    std::thread::sleep(Duration::from_millis(1600));
    let before = fds(f.pid());
    ask(f.port, &query(1, "e1.test.", A));
    let during = fds(f.pid());
    assert!(
        during > before,
        "a pooled TCP connection is open: {before} -> {during}"
    );
    // Reused while fresh: a second query opens nothing new.
    ask(f.port, &query(2, "e2.test.", A));
    assert_eq!(fds(f.pid()), during);
    // The janitor runs every second; the connection is idle past `expire` by then.
    std::thread::sleep(Duration::from_millis(1600));
    assert_eq!(fds(f.pid()), before, "closed after expire");
}

#[test]
fn failfast_answers_servfail_at_once_when_every_upstream_is_down() {
    // An upstream that never answers: every attempt and every probe costs a timeout.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{port} {{\n  failfast_all_unhealthy_upstreams\n  max_fails 1\n  health_check 50ms\n  read_timeout 200ms\n  max_connect_attempts 1\n }}"
    ));
    // The first failure starts probes; after two failed probes (more than max_fails 1) the
    // upstream is down, about 1 s later (probe timeout) plus 2 x 50 ms.
    assert_eq!(
        ask(f.port, &query(1, "ff.test.", A)).metadata.response_code,
        ResponseCode::ServFail
    );
    let t0 = Instant::now();
    let mut fast = false;
    while t0.elapsed() < Duration::from_secs(6) && !fast {
        std::thread::sleep(Duration::from_millis(200));
        let t = Instant::now();
        let m = ask(f.port, &query(9, "ff.test.", A));
        assert_eq!(m.metadata.response_code, ResponseCode::ServFail);
        fast = t.elapsed() < Duration::from_millis(100);
    }
    assert!(
        fast,
        "once down, failfast answers without trying the upstream"
    );
    drop(silent);
}

#[test]
fn chaos_class_queries_are_forwarded_not_refused() {
    // The test's own authority answers any class (NXDOMAIN outside test.).
    let auth = common::authority::Authority::start(common::authority::Zone::default());
    let f = forwarder(&format!(" forward . 127.0.0.1:{}", auth.port));
    let m = ask(f.port, &common::query_full(1, "version.bind.", 16, 3, None));
    assert_eq!(
        m.metadata.response_code,
        ResponseCode::NXDomain,
        "forwarded and answered upstream"
    );
    assert_eq!(auth.count("version.bind."), 1);
    // Without chaos or forward in the block, the server refuses the CH class itself.
    let plain = Server::start(|p| format!(".:{p} {{\n whoami\n}}\n"));
    let m = ask(
        plain.port,
        &common::query_full(2, "version.bind.", 16, 3, None),
    );
    assert_eq!(m.metadata.response_code, ResponseCode::Refused);
}

#[test]
fn max_idle_conns_closes_the_surplus_idle_connections() {
    // More than 32 queries in flight (the pipeline cap per connection) need several upstream
    // connections; once they are answered the connections idle. The upstream holds each
    // query 2 s (the forwarder waits up to 4), so the connections are counted while they are
    // busy: idle, the janitor could already have closed one.
    let slow = Server::start(|p| {
        format!("{{\n workers 1\n}}\n.:{p} {{\n erratic {{\n  delay 1 2s\n }}\n}}\n")
    });
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} {{\n  force_tcp\n  max_idle_conns 1\n  expire 1h\n  read_timeout 4s\n }}",
        slow.port
    ));
    std::thread::sleep(Duration::from_millis(1600));
    let before = fds(f.pid());
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    for i in 0..40u16 {
        sock.send_to(&query(i, &format!("m{i}.test."), A), ("127.0.0.1", f.port))
            .unwrap();
    }
    let t0 = Instant::now();
    let mut busy = fds(f.pid());
    while busy < before + 2 && t0.elapsed() < Duration::from_millis(1500) {
        std::thread::sleep(Duration::from_millis(20));
        busy = fds(f.pid());
    }
    assert!(
        busy >= before + 2,
        "more than one connection was needed: {before} -> {busy}"
    );
    let mut buf = [0u8; 512];
    for _ in 0..40 {
        let (n, _) = sock.recv_from(&mut buf).unwrap();
        // Answered by the upstream, not a timeout's SERVFAIL (read_timeout is above its delay).
        assert_eq!(common::rcode(&buf[..n]), 0);
    }
    // The janitor (every second) closes the idle surplus down to one.
    std::thread::sleep(Duration::from_millis(1600));
    assert_eq!(fds(f.pid()), before + 1, "one idle connection kept");
}

#[test]
fn log_lines_of_forwarded_queries_are_written() {
    // log in front of forward: its lines are written once per burst of finished queries,
    // and every one of them arrives.
    let up = whoami_upstream();
    let f = forwarder(&format!(" log\n forward . 127.0.0.1:{}", up.port));
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    for i in 0..50u16 {
        sock.send_to(
            &query(i, &format!("l{i}.fwd.test."), A),
            ("127.0.0.1", f.port),
        )
        .unwrap();
    }
    let mut buf = [0u8; 512];
    for _ in 0..50 {
        sock.recv_from(&mut buf).expect("an answer to every query");
    }
    let t0 = std::time::Instant::now();
    let lines = |s: &Server| s.stdout().matches(".fwd.test. udp").count();
    while lines(&f) < 50 {
        assert!(t0.elapsed() < Duration::from_secs(5), "{}", f.stdout());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(lines(&f), 50, "{}", f.stdout());
}

/// A TCP upstream that accepts connections and closes each at once, unanswered, for at
/// most `limit`; its thread returns how many it accepted.
fn closing_upstream(limit: Duration) -> (common::Port, std::thread::JoinHandle<usize>) {
    let port = common::free_port();
    let listener = std::net::TcpListener::bind(("127.0.0.1", port.port)).unwrap();
    listener.set_nonblocking(true).unwrap();
    let t = std::thread::spawn(move || {
        let (t0, mut accepted) = (Instant::now(), 0);
        while t0.elapsed() < limit {
            match listener.accept() {
                Ok((s, _)) => {
                    accepted += 1;
                    drop(s);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
        accepted
    });
    (port, t)
}

#[test]
fn an_upstream_that_closes_every_tcp_connection_is_backed_off_not_redialled() {
    let (up, accepted) = closing_upstream(Duration::from_secs(4));
    // max_fails 0: never marked down, so only the back-off keeps forward from dialling.
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{} {{\n  force_tcp\n  max_fails 0\n }}",
        up.port
    ));
    let before = fds(f.pid());
    let (mut answered, mut most_fds) = (0, 0);
    // 100 queries over about a second, each waited for.
    for i in 0..100u16 {
        let r = udp_exchange(
            f.port,
            &query(i, &format!("c{i}.closing.test."), A),
            Duration::from_secs(3),
        );
        if r.is_some_and(|r| r[3] & 0x0f == 2) {
            answered += 1;
        }
        most_fds = most_fds.max(fds(f.pid()));
        std::thread::sleep(Duration::from_millis(10));
    }
    let dials = accepted.join().unwrap();
    assert_eq!(answered, 100, "every query gets SERVFAIL, none is dropped");
    // Redialling at once made about four connections per query (400 here); backed off
    // (200 ms, doubling), a handful.
    assert!(dials <= 15, "{dials} connections for 100 queries");
    assert!(
        most_fds <= before + 4,
        "open fds peaked at {most_fds} (before: {before})"
    );
}

/// A UDP upstream run by the test that rejects every query as a server that cannot parse
/// it does: a bare header, FORMERR, no question (QDCOUNT 0). Each is first answered so
/// under a wrong ID, which must be ignored. Counts the queries it got.
fn rejecting_upstream() -> (u16, std::thread::JoinHandle<usize>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    sock.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let h = std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        let mut got = 0;
        while let Ok((n, peer)) = sock.recv_from(&mut buf) {
            if n < 12 {
                continue;
            }
            got += 1;
            // ID, QR + opcode of the query, FORMERR, every count 0.
            let mut reply = [0u8; 12];
            reply[..2].copy_from_slice(&buf[..2]);
            reply[2] = 0x80 | (buf[2] & 0x78);
            reply[3] = 1;
            let mut wrong = reply;
            wrong[0] ^= 0xff;
            let _ = sock.send_to(&wrong, peer);
            let _ = sock.send_to(&reply, peer);
        }
        got
    });
    (port, h)
}

#[test]
fn an_upstreams_formerr_without_a_question_reaches_the_client_as_formerr() {
    let (port, h) = rejecting_upstream();
    let (up2, h2) = rejecting_upstream();
    let f = forwarder(&format!(
        " forward . 127.0.0.1:{port} 127.0.0.1:{up2} {{\n  policy sequential\n }}"
    ));
    for i in 0..3 {
        let t0 = Instant::now();
        let m = ask(f.port, &query(90 + i, "odd.test.", A));
        assert_eq!(m.metadata.id, 90 + i);
        assert_eq!(
            m.metadata.response_code,
            ResponseCode::FormErr,
            "the upstream's FORMERR, not SERVFAIL"
        );
        assert_eq!(m.queries[0].name().to_string(), "odd.test.");
        assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
    }
    drop(f);
    // Every query was answered by the first upstream; none went on to the second.
    assert!(h.join().unwrap() >= 3);
    assert_eq!(h2.join().unwrap(), 0);
}
