//! Talking to a primary over TCP, with blocking std sockets on the zone's own thread (never
//! on a core): the serial check (an SOA query, over TCP as CoreDNS does it, so that a
//! spoofed UDP reply cannot fake a serial) and the AXFR itself. Every connect, read and
//! write has a deadline, so a primary that goes silent costs a bounded wait.

use crate::reply::{self, ReplyError, Soa};
use crate::xfr::Axfr;
use ringdns_plugin::wire::{Name, QueryBuilder, rtype};
use ringdns_zone::Record;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How long a connect, and each read or write, may take (miekg/dns's defaults, which
/// CoreDNS's transfers use).
pub const TIMEOUT: Duration = Duration::from_secs(2);

/// How long a whole transfer may take: a primary that streams without end must not keep
/// the zone's thread forever (CoreDNS has no such bound).
pub const TRANSFER_LIMIT: Duration = Duration::from_secs(3600);

/// Why an exchange with a primary failed.
#[derive(Debug)]
pub enum ClientError {
    /// No connection to this primary (refused, unreachable, timed out).
    Connect(SocketAddr, io::Error),
    /// The connection to this primary broke or went silent.
    Io(SocketAddr, io::Error),
    /// The primary's reply was not acceptable.
    Reply(ReplyError),
    /// The transfer took longer than [`TRANSFER_LIMIT`].
    TooLong,
    /// The records transferred make no zone (why, from the zone store).
    Zone(String),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Connect(a, e) => write!(f, "dial tcp {a}: {e}"),
            ClientError::Io(a, e) => write!(f, "read tcp {a}: {e}"),
            ClientError::Reply(e) => e.fmt(f),
            ClientError::TooLong => write!(
                f,
                "the transfer took longer than {}",
                ringdns_plugin::duration::format(TRANSFER_LIMIT)
            ),
            ClientError::Zone(e) => f.write_str(e),
        }
    }
}

impl From<ReplyError> for ClientError {
    fn from(e: ReplyError) -> Self {
        ClientError::Reply(e)
    }
}

/// A query for `origin` (lower-case wire form) of type `qtype`, RD clear, a random ID.
fn query(origin: &[u8], qtype: u16) -> Vec<u8> {
    let name = Name::from_wire(origin).expect("origins are valid names");
    QueryBuilder::new(name, qtype)
        .id(fastrand::u16(..))
        .rd(false)
        .build()
}

/// Connects to `addr` and sends `msg` in one TCP frame.
fn send(addr: SocketAddr, msg: &[u8]) -> Result<TcpStream, ClientError> {
    let io = |e| ClientError::Io(addr, e);
    let mut s =
        TcpStream::connect_timeout(&addr, TIMEOUT).map_err(|e| ClientError::Connect(addr, e))?;
    s.set_read_timeout(Some(TIMEOUT)).map_err(io)?;
    s.set_write_timeout(Some(TIMEOUT)).map_err(io)?;
    let _ = s.set_nodelay(true);
    let mut frame = Vec::with_capacity(2 + msg.len());
    frame.extend((msg.len() as u16).to_be_bytes());
    frame.extend(msg);
    s.write_all(&frame).map_err(io)?;
    Ok(s)
}

/// Reads the next TCP frame into `buf`; `false` at a clean end of the stream (the peer
/// closed between messages).
fn read_frame(s: &mut TcpStream, buf: &mut Vec<u8>, addr: SocketAddr) -> Result<bool, ClientError> {
    let io = |e| ClientError::Io(addr, e);
    let mut len = [0u8; 2];
    if s.read(&mut len[..1]).map_err(io)? == 0 {
        return Ok(false);
    }
    s.read_exact(&mut len[1..]).map_err(io)?;
    buf.resize(u16::from_be_bytes(len) as usize, 0);
    s.read_exact(buf).map_err(io)?;
    Ok(true)
}

/// The SOA the primary at `addr` holds for `origin` (lower-case wire form).
pub fn soa(addr: SocketAddr, origin: &[u8]) -> Result<Soa, ClientError> {
    let q = query(origin, rtype::SOA);
    let mut s = send(addr, &q)?;
    let mut buf = Vec::new();
    if !read_frame(&mut s, &mut buf, addr)? {
        return Err(ClientError::Io(addr, io::ErrorKind::UnexpectedEof.into()));
    }
    let id = u16::from_be_bytes([q[0], q[1]]);
    Ok(reply::soa_of(&buf, id, &q[12..], origin)?)
}

/// The zone `origin` (lower-case wire form) transferred from the primary at `addr`: its
/// records, SOA first, and its SOA.
pub fn axfr(addr: SocketAddr, origin: &[u8]) -> Result<(Vec<Record>, Soa), ClientError> {
    let q = query(origin, rtype::AXFR);
    let mut s = send(addr, &q)?;
    let mut xfr = Axfr::new(origin, &q);
    let mut buf = Vec::new();
    let t0 = Instant::now();
    // Ends with the closing SOA, the stream, a read's deadline or the transfer's.
    while read_frame(&mut s, &mut buf, addr)? {
        if xfr.feed(&buf)? {
            break;
        }
        if t0.elapsed() > TRANSFER_LIMIT {
            return Err(ClientError::TooLong);
        }
    }
    Ok(xfr.finish()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::tests::soa_rdata;
    use ringdns_plugin::wire;
    use std::net::TcpListener;

    /// A reply to `q` (the question copied, ID kept) with `answers` (owner pointer to the
    /// question, type, RDATA).
    fn reply_to(q: &[u8], question: bool, answers: &[(u16, &[u8])]) -> Vec<u8> {
        let mut m = q[..2].to_vec();
        m.extend([0x84, 0]);
        m.extend(u16::from(question).to_be_bytes());
        m.extend((answers.len() as u16).to_be_bytes());
        m.extend([0, 0, 0, 0]);
        if question {
            m.extend(&q[12..]);
        }
        for (t, rd) in answers {
            if question {
                m.extend([0xC0, 12]);
            } else {
                m.extend(wire::name_to_wire("example.org.").unwrap());
            }
            m.extend(t.to_be_bytes());
            m.extend([0, 1, 0, 0, 0x0e, 0x10]);
            m.extend((rd.len() as u16).to_be_bytes());
            m.extend(*rd);
        }
        m
    }

    /// A primary on a loopback port that answers one connection with `frames(query)`,
    /// each written as a TCP frame, then closes.
    fn primary(frames: impl FnOnce(&[u8]) -> Vec<Vec<u8>> + Send + 'static) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            s.set_read_timeout(Some(TIMEOUT)).unwrap();
            let mut len = [0u8; 2];
            s.read_exact(&mut len).unwrap();
            let mut q = vec![0u8; u16::from_be_bytes(len) as usize];
            s.read_exact(&mut q).unwrap();
            for f in frames(&q) {
                let mut out = (f.len() as u16).to_be_bytes().to_vec();
                out.extend(f);
                s.write_all(&out).unwrap();
            }
        });
        addr
    }

    fn origin() -> Vec<u8> {
        wire::name_to_wire("example.org.").unwrap()
    }

    #[test]
    fn a_transfer_in_two_frames_and_a_serial_check_over_tcp() {
        let rd = soa_rdata(5);
        let s2 = rd.clone();
        let p = primary(move |q| {
            assert_eq!(q[2] & 0x01, 0, "RD is clear");
            vec![
                reply_to(q, true, &[(6, &s2), (1, &[192, 0, 2, 1])]),
                reply_to(q, false, &[(6, &s2)]),
            ]
        });
        let (records, got) = axfr(p, &origin()).unwrap();
        assert_eq!(got.serial, 5);
        assert_eq!(records.len(), 2);
        let s3 = rd.clone();
        let p = primary(move |q| vec![reply_to(q, true, &[(6, &s3)])]);
        assert_eq!(soa(p, &origin()).unwrap().serial, 5);
    }

    #[test]
    fn a_stream_that_ends_early_or_a_closed_port_fails() {
        let soa = soa_rdata(5);
        let p = primary(move |q| vec![reply_to(q, true, &[(6, &soa)])]);
        let e = axfr(p, &origin()).unwrap_err();
        assert!(
            matches!(e, ClientError::Reply(ReplyError::Incomplete)),
            "{e}"
        );
        // A port nobody listens on (bound, then closed).
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        drop(l);
        assert!(matches!(
            axfr(addr, &origin()),
            Err(ClientError::Connect(..))
        ));
    }
}
