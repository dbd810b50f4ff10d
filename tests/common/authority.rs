//! A small authoritative server run by a test (UDP and TCP on one loopback port), so cache
//! and forward tests have an upstream whose TTLs, denials and failures they choose, and can
//! count what reached it. Zone `test.`; answers are built by hand in wire form.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One A record: owner (lower-case, with the final dot), TTL, address.
#[derive(Clone)]
pub struct ARecord {
    pub name: String,
    pub ttl: u32,
    pub addr: [u8; 4],
}

/// What the server holds and how it answers.
#[derive(Clone, Default)]
pub struct Zone {
    pub records: Vec<ARecord>,
    /// TTL of the SOA record in denials.
    pub soa_ttl: u32,
    /// SOA MINIMUM field (RFC 2308 negative TTL).
    pub soa_minimum: u32,
    /// Names under `fail.test.` get SERVFAIL.
    pub servfail_under_fail: bool,
}

/// A running authority; stops when dropped.
pub struct Authority {
    pub port: u16,
    /// The claim on `port` (released when the authority stops).
    _claim: super::Port,
    stop: Arc<AtomicBool>,
    /// How many queries per lower-case name reached it.
    pub counts: Arc<Mutex<HashMap<String, usize>>>,
    /// How many of those came over TCP.
    tcp_counts: Arc<Mutex<HashMap<String, usize>>>,
    /// Every query that reached it, as it came (UDP and TCP), for tests of what a plugin in
    /// front changed in the queries it passed on.
    received: Arc<Mutex<Vec<Vec<u8>>>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

fn name_of(q: &[u8]) -> Option<(String, usize)> {
    let mut i = 12;
    let mut out = String::new();
    loop {
        let l = *q.get(i)? as usize;
        if l == 0 {
            i += 1;
            break;
        }
        out.push_str(&String::from_utf8_lossy(q.get(i + 1..i + 1 + l)?).to_ascii_lowercase());
        out.push('.');
        i += 1 + l;
    }
    if out.is_empty() {
        out.push('.');
    }
    Some((out, i))
}

fn soa_rr(zone: &Zone) -> Vec<u8> {
    let mut rr = vec![4, b't', b'e', b's', b't', 0];
    rr.extend_from_slice(&[0, 6, 0, 1]);
    rr.extend_from_slice(&zone.soa_ttl.to_be_bytes());
    let mut rd = vec![
        2, b'n', b's', 4, b't', b'e', b's', b't', 0, 5, b'a', b'd', b'm', b'i', b'n', 4, b't',
        b'e', b's', b't', 0,
    ];
    for v in [1u32, 7200, 3600, 1_209_600, zone.soa_minimum] {
        rd.extend_from_slice(&v.to_be_bytes());
    }
    rr.extend_from_slice(&(rd.len() as u16).to_be_bytes());
    rr.extend_from_slice(&rd);
    rr
}

/// Builds the reply to one query.
pub fn answer(zone: &Zone, q: &[u8]) -> Option<(String, Vec<u8>)> {
    let (name, end) = name_of(q)?;
    let qtype = u16::from_be_bytes([*q.get(end)?, *q.get(end + 1)?]);
    let question_end = end + 4;
    let mut r = q.get(..question_end)?.to_vec();
    r[2] = 0x84 | (q[2] & 0x01); // QR, AA, RD copied
    r[3] = 0;
    r[6..12].copy_from_slice(&[0, 0, 0, 0, 0, 0]);
    if zone.servfail_under_fail && name.ends_with("fail.test.") {
        r[3] = 2;
        return Some((name, r));
    }
    let matching: Vec<&ARecord> = zone.records.iter().filter(|a| a.name == name).collect();
    if matching.is_empty() {
        r[3] = 3; // NXDOMAIN
    }
    if qtype == 1 && !matching.is_empty() {
        r[7] = matching.len() as u8;
        for a in matching {
            r.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1]);
            r.extend_from_slice(&a.ttl.to_be_bytes());
            r.extend_from_slice(&[0, 4]);
            r.extend_from_slice(&a.addr);
        }
    } else {
        r[9] = 1; // NODATA or NXDOMAIN: the SOA in authority
        r.extend_from_slice(&soa_rr(zone));
    }
    Some((name, r))
}

/// A UDP socket and a TCP listener on one port of 127.0.0.1, claimed with `free_port` (so
/// that no other test is handed it meanwhile), kept with the claim.
fn bind_pair() -> (UdpSocket, TcpListener, super::Port) {
    for _ in 0..20 {
        // free_port checked the port and let it go: something else may bind it first.
        let claim = super::free_port();
        let bound = UdpSocket::bind(("127.0.0.1", claim.port))
            .and_then(|udp| Ok((udp, TcpListener::bind(("127.0.0.1", claim.port))?)));
        if let Ok((udp, tcp)) = bound {
            return (udp, tcp, claim);
        }
    }
    panic!("no port free for both UDP and TCP");
}

impl Authority {
    /// Starts serving `zone` on a free port.
    pub fn start(zone: Zone) -> Authority {
        let (udp, tcp, claim) = bind_pair();
        let port = claim.port;
        udp.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        tcp.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(Mutex::new(HashMap::new()));
        let tcp_counts = Arc::new(Mutex::new(HashMap::new()));
        let received: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let zone = Arc::new(zone);
        let mut threads = Vec::new();
        {
            let (stop, counts, zone) = (stop.clone(), counts.clone(), zone.clone());
            let received = received.clone();
            threads.push(std::thread::spawn(move || {
                let mut buf = [0u8; 1500];
                while !stop.load(Ordering::Relaxed) {
                    let Ok((n, peer)) = udp.recv_from(&mut buf) else {
                        continue;
                    };
                    received.lock().unwrap().push(buf[..n].to_vec());
                    if let Some((name, r)) = answer(&zone, &buf[..n]) {
                        *counts.lock().unwrap().entry(name).or_insert(0) += 1;
                        let _ = udp.send_to(&r, peer);
                    }
                }
            }));
        }
        {
            let (stop, counts, zone) = (stop.clone(), counts.clone(), zone.clone());
            let tcp_counts = tcp_counts.clone();
            let received = received.clone();
            threads.push(std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let Ok((mut s, _)) = tcp.accept() else {
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    };
                    s.set_nonblocking(false).unwrap();
                    s.set_read_timeout(Some(Duration::from_millis(500)))
                        .unwrap();
                    loop {
                        let mut len = [0u8; 2];
                        if s.read_exact(&mut len).is_err() {
                            break;
                        }
                        let mut q = vec![0u8; u16::from_be_bytes(len) as usize];
                        if s.read_exact(&mut q).is_err() {
                            break;
                        }
                        received.lock().unwrap().push(q.clone());
                        if let Some((name, r)) = answer(&zone, &q) {
                            *tcp_counts.lock().unwrap().entry(name.clone()).or_insert(0) += 1;
                            *counts.lock().unwrap().entry(name).or_insert(0) += 1;
                            let mut out = (r.len() as u16).to_be_bytes().to_vec();
                            out.extend_from_slice(&r);
                            let _ = s.write_all(&out);
                        }
                    }
                }
            }));
        }
        Authority {
            port,
            _claim: claim,
            stop,
            counts,
            tcp_counts,
            received,
            threads,
        }
    }

    /// The queries that reached it so far, in arrival order.
    pub fn received(&self) -> Vec<Vec<u8>> {
        self.received.lock().unwrap().clone()
    }

    /// Queries that reached it for `name` (lower-case, final dot).
    pub fn count(&self, name: &str) -> usize {
        self.counts.lock().unwrap().get(name).copied().unwrap_or(0)
    }

    /// Queries for `name` that came over TCP.
    pub fn count_tcp(&self, name: &str) -> usize {
        self.tcp_counts
            .lock()
            .unwrap()
            .get(name)
            .copied()
            .unwrap_or(0)
    }
}

impl Drop for Authority {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
