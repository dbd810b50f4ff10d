//! proxyproto: the real binary on loopback, with the test as the load balancer. It writes
//! real PROXY protocol headers (v1 text and v2 binary over TCP, v2 over UDP) from 127.0.0.1
//! before its DNS bytes. whoami answers with the client address it sees (the oracle), acl
//! blocks by that address; each `default` policy for peers outside `allow` decides as
//! CoreDNS's; `udp_session_tracking` gives headerless datagrams the address of their
//! peer's last header-only datagram until its duration passes; malformed headers are
//! dropped (UDP) or close the connection (TCP), and the server goes on; a bad option stops
//! the start with `FILE:LINE - message`.
//!
//! Replies are read with hickory-proto.

mod common;

use common::{Server, free_port, query, run_expect_failure};
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::RData;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv6Addr, SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

const A: u16 = 1;

/// How long a reply that must not come is waited for.
const SILENCE: Duration = Duration::from_millis(700);

/// v2's signature.
const SIG: &[u8] = b"\r\n\r\n\0\r\nQUIT\n";

/// A v2 header: PROXY (or LOCAL) command, the transport (1 stream, 2 datagram), the
/// client's address and the server's, and TLVs.
fn v2(local: bool, transport: u8, from: SocketAddr, to: SocketAddr, tlvs: &[u8]) -> Vec<u8> {
    let mut addrs = Vec::new();
    let family = match (from.ip(), to.ip()) {
        (IpAddr::V4(a), IpAddr::V4(b)) => {
            addrs.extend(a.octets());
            addrs.extend(b.octets());
            0x10
        }
        (IpAddr::V6(a), IpAddr::V6(b)) => {
            addrs.extend(a.octets());
            addrs.extend(b.octets());
            0x20
        }
        _ => panic!("one family"),
    };
    addrs.extend(from.port().to_be_bytes());
    addrs.extend(to.port().to_be_bytes());
    let mut h = SIG.to_vec();
    h.push(if local { 0x20 } else { 0x21 });
    h.push(family | transport);
    h.extend(((addrs.len() + tlvs.len()) as u16).to_be_bytes());
    h.extend(addrs);
    h.extend(tlvs);
    h
}

/// A v2 LOCAL header with no addresses (a load balancer's own health check).
fn v2_local() -> Vec<u8> {
    let mut h = SIG.to_vec();
    h.extend([0x20, 0x00, 0, 0]);
    h
}

fn sa(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn server(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// What a reply says.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Got {
    /// whoami's answer: the client's address and port.
    Who(SocketAddr),
    /// An rcode and no whoami answer.
    Rcode(ResponseCode),
    /// Nothing came (or the connection closed).
    Nothing,
}

fn judge(reply: Option<Vec<u8>>, id: u16) -> Got {
    let Some(reply) = reply else {
        return Got::Nothing;
    };
    let m = Message::from_vec(&reply).expect("the reply parses");
    assert_eq!(m.metadata.id, id, "the query's ID");
    let ip = m.additionals.iter().find_map(|r| match &r.data {
        RData::A(a) => Some(IpAddr::V4(a.0)),
        RData::AAAA(a) => Some(IpAddr::V6(a.0)),
        _ => None,
    });
    let port = m.additionals.iter().find_map(|r| match &r.data {
        RData::SRV(s) => Some(s.port),
        _ => None,
    });
    match (ip, port) {
        (Some(ip), Some(port)) => Got::Who(SocketAddr::new(ip, port)),
        _ => Got::Rcode(m.metadata.response_code),
    }
}

/// One TCP connection from 127.0.0.1: `chunks` written one after the other (a pause
/// between them), then the replies to `ids` read, in order, until one does not come.
fn tcp(port: u16, chunks: &[Vec<u8>], ids: &[u16]) -> (Vec<Got>, TcpStream) {
    let mut s = TcpStream::connect(server(port)).unwrap();
    s.set_read_timeout(Some(SILENCE)).unwrap();
    for (i, c) in chunks.iter().enumerate() {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(30));
        }
        // A connection the server closed may refuse the rest.
        if s.write_all(c).is_err() {
            break;
        }
    }
    let mut got = Vec::new();
    for id in ids {
        let mut len = [0u8; 2];
        let reply = s.read_exact(&mut len).ok().and_then(|_| {
            let mut buf = vec![0u8; usize::from(u16::from_be_bytes(len))];
            s.read_exact(&mut buf).ok().map(|_| buf)
        });
        let g = judge(reply, *id);
        let end = g == Got::Nothing;
        got.push(g);
        if end {
            break;
        }
    }
    (got, s)
}

/// A DNS message framed for TCP.
fn framed(msg: &[u8]) -> Vec<u8> {
    let mut f = (msg.len() as u16).to_be_bytes().to_vec();
    f.extend_from_slice(msg);
    f
}

/// `header` then `name`'s query over TCP, in one write: what came back.
fn tcp_one(port: u16, header: &[u8], name: &str) -> Got {
    let mut bytes = header.to_vec();
    bytes.extend(framed(&query(77, name, A)));
    tcp(port, &[bytes], &[77]).0.remove(0)
}

/// One datagram from `from` (a socket bound to 127.0.0.1): the reply to `id`, if any.
fn udp_on(from: &UdpSocket, port: u16, datagram: &[u8], id: u16) -> Got {
    from.set_read_timeout(Some(SILENCE)).unwrap();
    from.send_to(datagram, server(port)).unwrap();
    let mut buf = vec![0u8; 65535];
    let reply = from.recv_from(&mut buf).ok().map(|(n, at)| {
        assert_eq!(
            at,
            server(port),
            "the reply comes from the server's address"
        );
        buf[..n].to_vec()
    });
    judge(reply, id)
}

fn lb() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").unwrap()
}

/// `header` then `name`'s query in one datagram from a new socket.
fn udp_one(port: u16, header: &[u8], name: &str) -> Got {
    let mut d = header.to_vec();
    d.extend(query(78, name, A));
    udp_on(&lb(), port, &d, 78)
}

/// The server of most tests: on one listener a whoami block (with log's `{remote}`), a
/// block whose acl blocks 192.0.2.0/24, and one whose rewrite `cname` rule serves every
/// query on the deferred pass; `proxyproto` in the first applies to all (per listener, as
/// CoreDNS).
fn main_server() -> Server {
    Server::start(|p| {
        format!(
            "who.test:{p} {{\n proxyproto\n log . \"remote={{remote}}:{{port}}\"\n whoami\n}}\n\
             acl.test:{p} {{\n acl {{\n  block net 192.0.2.0/24\n }}\n whoami\n}}\n\
             later.test:{p} {{\n rewrite cname exact a.later.test. b.later.test.\n whoami\n}}\n"
        )
    })
}

#[test]
fn log_and_the_deferred_pass_see_the_client_too() {
    let s = main_server();
    let p = s.port;
    let v1 = format!("PROXY TCP4 192.0.2.80 127.0.0.1 40080 {p}\r\n").into_bytes();
    assert_eq!(
        tcp_one(p, &v1, "who.test."),
        Got::Who(sa("192.0.2.80:40080"))
    );
    let h = v2(false, 2, sa("192.0.2.81:5381"), server(p), &[]);
    assert_eq!(udp_one(p, &h, "who.test."), Got::Who(sa("192.0.2.81:5381")));
    let t0 = Instant::now();
    while !(s.stdout().contains("remote=192.0.2.80:40080")
        && s.stdout().contains("remote=192.0.2.81:5381"))
    {
        assert!(t0.elapsed() < Duration::from_secs(5), "{}", s.stdout());
        std::thread::sleep(Duration::from_millis(20));
    }
    // Queries served where they may wait (UDP's worker pool, TCP's task).
    let h = v2(false, 2, sa("192.0.2.82:5382"), server(p), &[]);
    assert_eq!(
        udp_one(p, &h, "later.test."),
        Got::Who(sa("192.0.2.82:5382"))
    );
    let h = v2(false, 1, sa("192.0.2.83:40083"), server(p), &[]);
    assert_eq!(
        tcp_one(p, &h, "later.test."),
        Got::Who(sa("192.0.2.83:40083"))
    );
}

#[test]
fn tcp_v1_and_v2_headers_give_plugins_the_client_address() {
    let s = main_server();
    let p = s.port;
    let v1 = format!("PROXY TCP4 192.0.2.7 127.0.0.1 40001 {p}\r\n").into_bytes();
    assert_eq!(
        tcp_one(p, &v1, "who.test."),
        Got::Who(sa("192.0.2.7:40001"))
    );
    let v1_6 = format!("PROXY TCP6 2001:db8::7 ::1 40002 {p}\r\n").into_bytes();
    assert_eq!(
        tcp_one(p, &v1_6, "who.test."),
        Got::Who(sa("[2001:db8::7]:40002"))
    );
    // v2 with a TLV (NOOP), over IPv4 and IPv6.
    let h = v2(
        false,
        1,
        sa("198.51.100.3:40003"),
        server(p),
        &[0x04, 0, 2, 0, 0],
    );
    assert_eq!(
        tcp_one(p, &h, "who.test."),
        Got::Who(sa("198.51.100.3:40003"))
    );
    let to = SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), p);
    let h = v2(false, 1, sa("[2001:db8::8]:40004"), to, &[]);
    assert_eq!(
        tcp_one(p, &h, "who.test."),
        Got::Who(sa("[2001:db8::8]:40004"))
    );

    // The header cut over several writes, then pipelined queries: every query on the
    // connection is the client's.
    let v1 = format!("PROXY TCP4 192.0.2.9 127.0.0.1 40005 {p}\r\n").into_bytes();
    let mut rest = v1[20..].to_vec();
    rest.extend(framed(&query(1, "who.test.", A)));
    rest.extend(framed(&query(2, "who.test.", A)));
    let (got, _) = tcp(p, &[v1[..6].to_vec(), v1[6..20].to_vec(), rest], &[1, 2]);
    assert_eq!(got, vec![Got::Who(sa("192.0.2.9:40005")); 2]);
    let h = v2(false, 1, sa("192.0.2.10:40006"), server(p), &[]);
    let mut rest = h[13..].to_vec();
    rest.extend(framed(&query(3, "who.test.", A)));
    let (got, _) = tcp(p, &[h[..5].to_vec(), h[5..13].to_vec(), rest], &[3]);
    assert_eq!(got, vec![Got::Who(sa("192.0.2.10:40006"))]);

    // No header: the peer itself.
    assert!(tcp_one(p, b"", "who.test.").is_who_from_loopback());
}

impl Got {
    fn is_who_from_loopback(&self) -> bool {
        matches!(self, Got::Who(a) if a.ip() == IpAddr::from([127, 0, 0, 1]))
    }
}

#[test]
fn a_udp_v2_header_gives_plugins_the_client_and_the_reply_goes_to_the_balancer() {
    let s = main_server();
    let p = s.port;
    let h = v2(false, 2, sa("192.0.2.20:5300"), server(p), &[]);
    assert_eq!(udp_one(p, &h, "who.test."), Got::Who(sa("192.0.2.20:5300")));
    let to = SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), p);
    let h = v2(false, 2, sa("[2001:db8::20]:5301"), to, &[0x04, 0, 1, 9]);
    assert_eq!(
        udp_one(p, &h, "who.test."),
        Got::Who(sa("[2001:db8::20]:5301"))
    );
    // No header: the peer.
    assert!(udp_one(p, b"", "who.test.").is_who_from_loopback());
}

#[test]
fn acl_decides_on_the_proxied_address() {
    let s = main_server();
    let p = s.port;
    let blocked = v2(false, 2, sa("192.0.2.30:5300"), server(p), &[]);
    let other = v2(false, 2, sa("198.51.100.30:5300"), server(p), &[]);
    assert_eq!(
        udp_one(p, &blocked, "acl.test."),
        Got::Rcode(ResponseCode::Refused)
    );
    assert_eq!(
        udp_one(p, &other, "acl.test."),
        Got::Who(sa("198.51.100.30:5300"))
    );
    let blocked = format!("PROXY TCP4 192.0.2.31 127.0.0.1 40010 {p}\r\n").into_bytes();
    assert_eq!(
        tcp_one(p, &blocked, "acl.test."),
        Got::Rcode(ResponseCode::Refused)
    );
    let blocked = v2(false, 1, sa("192.0.2.32:40011"), server(p), &[]);
    assert_eq!(
        tcp_one(p, &blocked, "acl.test."),
        Got::Rcode(ResponseCode::Refused)
    );
    // 127.0.0.1 itself is not blocked.
    assert!(udp_one(p, b"", "acl.test.").is_who_from_loopback());
    assert!(tcp_one(p, b"", "acl.test.").is_who_from_loopback());
}

#[test]
fn local_and_unknown_headers_leave_the_peer_s_address() {
    let s = main_server();
    let p = s.port;
    assert!(tcp_one(p, &v2_local(), "who.test.").is_who_from_loopback());
    let h = v2(true, 1, sa("192.0.2.40:1"), server(p), &[]);
    assert!(tcp_one(p, &h, "who.test.").is_who_from_loopback());
    assert!(tcp_one(p, b"PROXY UNKNOWN\r\n", "who.test.").is_who_from_loopback());
    let u = b"PROXY UNKNOWN ffff::1 ::1 1 2\r\n";
    assert!(tcp_one(p, u, "who.test.").is_who_from_loopback());
    assert!(udp_one(p, &v2_local(), "who.test.").is_who_from_loopback());
    let h = v2(true, 2, sa("192.0.2.41:1"), server(p), &[]);
    assert!(udp_one(p, &h, "who.test.").is_who_from_loopback());
}

#[test]
fn malformed_headers_close_the_connection_or_drop_the_datagram() {
    let s = main_server();
    let p = s.port;
    let t0 = Instant::now();
    for bad in [
        b"PROXY TCP4 192.0.2.1 nonsense\r\n".to_vec(),
        b"PROXY TCP4 192.0.2.1 127.0.0.1 99999 53\r\n".to_vec(),
        b"PROXY TCP5 192.0.2.1 127.0.0.1 1 53\r\n".to_vec(),
        [b"PROXY TCP4 ".as_slice(), &[b'1'; 120]].concat(),
        {
            let mut h = v2(false, 1, sa("192.0.2.1:1"), server(p), &[]);
            h[12] = 0x31; // version 3
            h
        },
        {
            let mut h = v2(false, 1, sa("192.0.2.1:1"), server(p), &[]);
            h[13] = 0x41; // no such family
            h
        },
        {
            let mut h = v2(false, 1, sa("192.0.2.1:1"), server(p), &[]);
            h[15] = 4; // shorter than IPv4's addresses
            h
        },
    ] {
        let mut bytes = bad.clone();
        bytes.extend(framed(&query(5, "who.test.", A)));
        let (got, mut conn) = tcp(p, &[bytes], &[5]);
        assert_eq!(
            got,
            vec![Got::Nothing],
            "{:?}",
            String::from_utf8_lossy(&bad)
        );
        // Closed by the server, not left waiting.
        conn.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        assert!(
            matches!(conn.read(&mut [0u8; 16]), Ok(0) | Err(_)),
            "closed after {:?}",
            String::from_utf8_lossy(&bad)
        );
    }
    assert!(t0.elapsed() < Duration::from_secs(20));

    for bad in [
        // v1 is not read over UDP, a TCP header is not for UDP, a cut one is invalid.
        format!("PROXY TCP4 192.0.2.1 127.0.0.1 1 {p}\r\n").into_bytes(),
        v2(false, 1, sa("192.0.2.1:1"), server(p), &[]),
        v2(false, 2, sa("192.0.2.1:1"), server(p), &[])[..20].to_vec(),
        {
            let mut h = v2(false, 2, sa("192.0.2.1:1"), server(p), &[]);
            h[12] = 0x22; // no such command
            h
        },
    ] {
        let got = if bad.len() > 20 {
            udp_one(p, &bad, "who.test.")
        } else {
            udp_on(&lb(), p, &bad, 78)
        };
        assert_eq!(got, Got::Nothing, "{bad:?}");
    }
    // The server goes on, and said why it dropped them.
    assert!(udp_one(p, b"", "who.test.").is_who_from_loopback());
    let h = v2(false, 2, sa("192.0.2.50:1"), server(p), &[]);
    assert_eq!(udp_one(p, &h, "who.test."), Got::Who(sa("192.0.2.50:1")));
    assert!(
        s.stdout()
            .contains("[WARNING] dropping invalid Proxy Protocol packet from 127.0.0.1:"),
        "{}",
        s.stdout()
    );
}

#[test]
fn peers_outside_allow_get_each_default_policy() {
    let ports: Vec<_> = (0..4).map(|_| free_port()).collect();
    let policies = ["ignore", "use", "reject", "skip"];
    let blocks: String = ports
        .iter()
        .zip(policies)
        .map(|(port, policy)| {
            format!(
                ".:{} {{\n proxyproto {{\n  allow 10.0.0.0/8 192.168.0.0/16\n  default {policy}\n }}\n whoami\n}}\n",
                port.port
            )
        })
        .collect();
    // And `allow` alone: `ignore` for the others.
    let s = Server::start(|p| {
        format!("{blocks}.:{p} {{\n proxyproto {{\n  allow 10.0.0.0/8\n }}\n whoami\n}}\n")
    });
    let client = sa("203.0.113.5:6000");
    let udp_h = |port| v2(false, 2, client, server(port), &[]);
    let tcp_h = |port| v2(false, 1, client, server(port), &[]);
    let v1 = |port| format!("PROXY TCP4 203.0.113.5 127.0.0.1 6000 {port}\r\n").into_bytes();

    for p in [ports[0].port, s.port] {
        // ignore: the header is read and stripped, the peer is the client.
        assert!(udp_one(p, &udp_h(p), ".").is_who_from_loopback(), "{p}");
        assert!(tcp_one(p, &tcp_h(p), ".").is_who_from_loopback());
        assert!(tcp_one(p, &v1(p), ".").is_who_from_loopback());
        assert!(udp_one(p, b"", ".").is_who_from_loopback());
    }
    // use: as from an allowed network.
    let p = ports[1].port;
    assert_eq!(udp_one(p, &udp_h(p), "."), Got::Who(client));
    assert_eq!(tcp_one(p, &tcp_h(p), "."), Got::Who(client));
    assert_eq!(tcp_one(p, &v1(p), "."), Got::Who(client));
    // reject: a header drops the datagram and closes the connection; none is fine.
    let p = ports[2].port;
    assert_eq!(udp_one(p, &udp_h(p), "."), Got::Nothing);
    assert_eq!(tcp_one(p, &tcp_h(p), "."), Got::Nothing);
    assert_eq!(tcp_one(p, &v1(p), "."), Got::Nothing);
    assert!(udp_one(p, b"", ".").is_who_from_loopback());
    assert!(tcp_one(p, b"", ".").is_who_from_loopback());
    // skip: no header is looked for: the header's bytes are taken for DNS, which they are
    // not (v1's "PR" is a length of 20 562 that never comes).
    let p = ports[3].port;
    let mut d = udp_h(p);
    d.extend(query(78, ".", A));
    let sig_id = u16::from_be_bytes([SIG[0], SIG[1]]);
    let got = udp_on(&lb(), p, &d, sig_id);
    assert!(
        matches!(got, Got::Rcode(_)),
        "the signature read as a query's header: {got:?}"
    );
    assert_eq!(tcp_one(p, &v1(p), "."), Got::Nothing);
    assert!(udp_one(p, b"", ".").is_who_from_loopback());
    assert!(tcp_one(p, b"", ".").is_who_from_loopback());
}

#[test]
fn udp_session_tracking_gives_headerless_datagrams_the_last_header_s_client() {
    let s = Server::start(|p| {
        format!(".:{p} {{\n proxyproto {{\n  udp_session_tracking 1500ms 100\n }}\n whoami\n}}\n")
    });
    let p = s.port;
    let spectrum = lb();
    let client = sa("192.0.2.60:7000");
    // The header alone: a session, no reply.
    let h = v2(false, 2, client, server(p), &[]);
    assert_eq!(udp_on(&spectrum, p, &h, 0), Got::Nothing);
    let q = query(61, ".", A);
    assert_eq!(udp_on(&spectrum, p, &q, 61), Got::Who(client));
    assert_eq!(udp_on(&spectrum, p, &q, 61), Got::Who(client), "renewed");
    // Another peer has no session.
    assert!(udp_on(&lb(), p, &q, 61).is_who_from_loopback());
    // A header with a query renews the session with its client.
    let other = sa("198.51.100.61:7001");
    let mut d = v2(false, 2, other, server(p), &[]);
    d.extend(&q);
    assert_eq!(udp_on(&spectrum, p, &d, 61), Got::Who(other));
    assert_eq!(udp_on(&spectrum, p, &q, 61), Got::Who(other));
    // Past the duration with no datagram, the session is gone.
    std::thread::sleep(Duration::from_millis(2000));
    let got = udp_on(&spectrum, p, &q, 61);
    assert!(got.is_who_from_loopback(), "{got:?}");
    // Over TCP there are no sessions: a connection carries its own header.
    let mut stream = TcpStream::connect(server(p)).unwrap();
    stream.set_read_timeout(Some(SILENCE)).unwrap();
    stream.write_all(&framed(&q)).unwrap();
    let mut len = [0u8; 2];
    stream.read_exact(&mut len).unwrap();
    let mut buf = vec![0u8; usize::from(u16::from_be_bytes(len))];
    stream.read_exact(&mut buf).unwrap();
    assert!(judge(Some(buf), 61).is_who_from_loopback());
}

#[test]
fn without_session_tracking_a_header_only_datagram_is_forgotten() {
    let s = main_server();
    let p = s.port;
    let spectrum = lb();
    let h = v2(false, 2, sa("192.0.2.70:7000"), server(p), &[]);
    assert_eq!(udp_on(&spectrum, p, &h, 0), Got::Nothing);
    let q = query(71, "who.test.", A);
    assert!(udp_on(&spectrum, p, &q, 71).is_who_from_loopback());
}

#[test]
fn a_bad_option_stops_the_start_at_its_line() {
    for (text, line, want) in [
        (
            ".:1053 {\n proxyproto {\n  bogus\n }\n}\n",
            3,
            "unknown option 'bogus'",
        ),
        (
            ".:1053 {\n whoami\n proxyproto {\n  allow 10.0.0.0/8 nonsense\n }\n}\n",
            4,
            "plugin/proxyproto: nonsense: invalid CIDR address: nonsense",
        ),
        (
            ".:1053 {\n proxyproto {\n  default maybe\n }\n}\n",
            3,
            "plugin/proxyproto: Wrong argument count or unexpected line ending after 'maybe'",
        ),
        (
            ".:1053 {\n proxyproto {\n  udp_session_tracking 28s 0\n }\n}\n",
            3,
            "plugin/proxyproto: udp_session_tracking: invalid max sessions \"0\": must be a positive integer",
        ),
    ] {
        let (code, err) = run_expect_failure(text);
        assert_eq!(code, 1, "exit status for:\n{text}\nstderr: {err}");
        let want = format!("Corefile:{line} - Error during parsing: {want}");
        assert!(err.contains(&want), "for:\n{text}\nwant {want:?} in: {err}");
    }
}
