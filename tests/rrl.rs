//! rrl: the real binary on loopback, flooded from one address (127.0.0.2) while another
//! (127.0.0.3) asks at a low rate. The flood gets its allowance, then truncated slips and
//! silence; the other client gets every answer in full; TCP is never response-limited;
//! report-only answers everything and counts; the metrics show the counts. Every flood is
//! bounded in count and time and stays on loopback.

mod common;

use common::metrics::{scrape_until, value};
use common::{Server, free_port, query};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

/// Queries of the flood: enough to be far over any allowance here, few enough to fit the
/// socket buffers.
const FLOOD: usize = 300;

/// One worker, so the allowances are exact (with N workers each core allows 1/N).
fn corefile(port: u16, metrics: u16, options: &str) -> String {
    format!(
        "{{\n workers 1\n}}\n.:{port} {{\n prometheus 127.0.0.1:{metrics}\n rrl . {{\n  ipv4-prefix-length 32\n  {options}\n }}\n erratic {{\n  drop 0\n }}\n}}\n"
    )
}

/// What came back for a burst of queries.
#[derive(Debug, Default)]
struct Tally {
    full: usize,
    slipped: usize,
}

impl Tally {
    fn replies(&self) -> usize {
        self.full + self.slipped
    }
}

/// A UDP socket bound to `from` on loopback.
fn socket(from: [u8; 4]) -> UdpSocket {
    let s = UdpSocket::bind(SocketAddr::from((from, 0))).expect("bind a loopback address");
    s.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    s
}

/// Sends `n` identical A queries from `from` in bursts of 50 (so that the replies fit the
/// client's receive buffer), reading what comes back after each burst until 100 ms pass
/// without a reply.
fn flood(port: u16, from: [u8; 4], n: usize) -> Tally {
    let s = socket(from);
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let to = SocketAddr::from(([127, 0, 0, 1], port));
    let mut t = Tally::default();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(20);
    for burst in (0..n).collect::<Vec<_>>().chunks(50) {
        for &i in burst {
            s.send_to(&query(i as u16, "flood.example.org.", 1), to)
                .unwrap();
        }
        while let Ok(len) = s.recv(&mut buf) {
            let r = &buf[..len];
            let counts = [r[6], r[7], r[8], r[9], r[10], r[11]];
            if r[2] & 0x02 != 0 {
                assert_eq!(counts, [0; 6], "a slip carries no records");
                t.slipped += 1;
            } else {
                assert_eq!(&counts[..2], &[0, 1], "a full answer has erratic's A");
                t.full += 1;
            }
            assert!(Instant::now() < deadline, "the flood is bounded in time");
        }
    }
    t
}

/// Asks `n` times from `from`, `gap` apart, and counts the full answers.
fn trickle(port: u16, from: [u8; 4], n: usize, gap: Duration) -> usize {
    let s = socket(from);
    let to = SocketAddr::from(([127, 0, 0, 1], port));
    let mut buf = [0u8; 4096];
    let mut full = 0;
    for i in 0..n {
        s.send_to(&query(0x4000 + i as u16, "flood.example.org.", 1), to)
            .unwrap();
        if let Ok(len) = s.recv(&mut buf)
            && buf[2] & 0x02 == 0
            && len > 12
            && buf[7] == 1
        {
            full += 1;
        }
        std::thread::sleep(gap);
    }
    full
}

/// One query over TCP from `from` (TCP replies are never response-limited): its ANCOUNT.
fn tcp_answers(port: u16, from: [u8; 4]) -> u16 {
    use std::io::{Read, Write};
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.bind(&SocketAddr::from((from, 0)).into()).unwrap();
    sock.connect(&SocketAddr::from(([127, 0, 0, 1], port)).into())
        .unwrap();
    let mut s: TcpStream = sock.into();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let q = query(0x7777, "flood.example.org.", 1);
    let mut out = (q.len() as u16).to_be_bytes().to_vec();
    out.extend_from_slice(&q);
    s.write_all(&out).unwrap();
    let mut len = [0u8; 2];
    s.read_exact(&mut len).unwrap();
    let mut r = vec![0u8; u16::from_be_bytes(len) as usize];
    s.read_exact(&mut r).unwrap();
    u16::from_be_bytes([r[6], r[7]])
}

fn exceeded(page: &str, family: &str, ip: &str) -> f64 {
    value(page, family, &[("client_ip", ip)]).unwrap_or(0.0)
}

#[test]
fn a_flood_from_one_address_is_cut_while_another_is_answered_in_full() {
    let mp = free_port();
    let m = mp.port;
    let s =
        Server::start(|p| corefile(p, m, "responses-per-second 10\n  window 1\n  slip-ratio 2"));
    let port = s.addr().port();
    // The quiet client asks four times a second, under its allowance, while the flood runs.
    let quiet =
        std::thread::spawn(move || trickle(port, [127, 0, 0, 3], 8, Duration::from_millis(250)));
    let t0 = Instant::now();
    let t = flood(port, [127, 0, 0, 2], FLOOD);
    let took = t0.elapsed();
    let quiet_full = quiet.join().unwrap();
    eprintln!("flood from 127.0.0.2: {t:?} in {took:?}");

    // The allowance: the first second's burst (10) plus 10 a second for as long as the
    // flood and its replies took, with a second of slack for a slow machine.
    let allowed = 10.0 * (took.as_secs_f64() + 2.0);
    assert!(
        (t.full as f64) <= allowed && t.full >= 10,
        "{t:?} in {took:?}: at most {allowed} full answers"
    );
    let over = FLOOD - t.full;
    // slip-ratio 2: every other response over the limit comes back truncated, the rest
    // not at all.
    assert!(
        t.slipped * 2 >= over - 2 && t.slipped * 2 <= over + 2,
        "{t:?}: about half of the {over} over the limit slip"
    );
    assert!(t.replies() < FLOOD, "{t:?}: some are dropped");
    assert_eq!(quiet_full, 8, "127.0.0.3 gets every answer in full");

    // A slipped client falls back to TCP, which answers in full.
    assert_eq!(tcp_answers(port, [127, 0, 0, 2]), 1);

    let page = scrape_until(m, |p| {
        exceeded(p, "coredns_rrl_responses_exceeded_total", "127.0.0.2") >= over as f64 - 5.0
    });
    // Every response over the limit is counted: `over` as the client saw it, less any
    // reply the kernel lost on the way.
    let counted = exceeded(&page, "coredns_rrl_responses_exceeded_total", "127.0.0.2");
    assert!(
        counted <= over as f64 && counted >= over as f64 - 5.0,
        "{counted} counted, {over} over"
    );
    assert_eq!(
        exceeded(&page, "coredns_rrl_responses_exceeded_total", "127.0.0.3"),
        0.0
    );
    drop(s);
}

#[test]
fn report_only_answers_everything_and_counts() {
    let mp = free_port();
    let m = mp.port;
    let s = Server::start(|p| {
        corefile(
            p,
            m,
            "responses-per-second 10\n  requests-per-second 20\n  slip-ratio 1\n  report-only",
        )
    });
    let n = 100;
    let t = flood(s.addr().port(), [127, 0, 0, 2], n);
    assert_eq!((t.full, t.slipped), (n, 0), "every query answered in full");
    let page = scrape_until(m, |p| {
        exceeded(p, "coredns_rrl_requests_exceeded_total", "127.0.0.2") > 0.0
    });
    let responses = exceeded(&page, "coredns_rrl_responses_exceeded_total", "127.0.0.2");
    let requests = exceeded(&page, "coredns_rrl_requests_exceeded_total", "127.0.0.2");
    assert!(responses >= 60.0, "{responses} responses counted over");
    assert!(requests >= 40.0, "{requests} requests counted over");
    drop(s);
}

#[test]
fn requests_over_the_limit_get_nothing() {
    let mp = free_port();
    let m = mp.port;
    let s = Server::start(|p| corefile(p, m, "requests-per-second 5\n  window 1"));
    let t = flood(s.addr().port(), [127, 0, 0, 2], FLOOD);
    assert_eq!(t.slipped, 0, "requests never slip");
    assert!(t.full >= 5 && t.full <= 40, "{t:?}");
    // Another address is another client.
    assert_eq!(
        trickle(
            s.addr().port(),
            [127, 0, 0, 3],
            3,
            Duration::from_millis(300)
        ),
        3
    );
    drop(s);
}

/// With two workers, each core allows half the rate: a client prefix whose queries come
/// from many source ports (spread over both cores by SO_REUSEPORT) gets about the configured
/// burst in all, not twice it.
#[test]
fn two_workers_share_the_allowance() {
    let mp = free_port();
    let m = mp.port;
    let s = Server::start(|p| {
        corefile(p, m, "responses-per-second 10\n  window 5").replace("workers 1", "workers 2")
    });
    let port = s.addr().port();
    let mut full = 0;
    // Eight source ports of 127.0.0.2, 40 queries each: far over the allowance on any core.
    let floods: Vec<_> = (0..8)
        .map(|_| std::thread::spawn(move || flood(port, [127, 0, 0, 2], 40)))
        .collect();
    for f in floods {
        let t = f.join().unwrap();
        assert_eq!(t.slipped, 0);
        full += t.full;
    }
    eprintln!("two workers, 8 ports of 127.0.0.2: {full} full answers");
    // Each core's burst is 5; one core alone would give 5, two 10. Without the split it
    // would be 10 per core, 20 in all.
    assert!(
        (5..=12).contains(&full),
        "{full} full answers for 320 queries"
    );
    drop(s);
}
