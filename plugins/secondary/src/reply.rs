//! What a secondary asks of a primary's reply before it believes it: that it answers the
//! query it sent (ID, QR, opcode, question), that the primary did not refuse it (rcode),
//! and, for the serial check, what SOA it holds. The AXFR stream ([`crate::xfr`]) checks
//! each of its messages the same way.

use ringdns_plugin::wire::{self, Header, Section, WireError, opcode, rcode, rtype};
use std::fmt;

/// Why a reply from a primary was not taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplyError {
    /// The message does not walk (a bad name, a record past the end).
    Malformed(WireError),
    /// Not a response to our query: another ID, no QR, another opcode.
    NotOurs,
    /// Truncated (TC): a reply over TCP never should be.
    Truncated,
    /// The primary answered with this rcode.
    Rcode(u8),
    /// The question is missing where it must be, or is another one.
    Question,
    /// The serial check's reply holds no SOA of the zone.
    NoSoa,
    /// The transfer does not begin with the zone's SOA.
    FirstNotSoa,
    /// A record that is not the zone's class.
    Class(u16),
    /// The closing SOA's serial is not the opening one's: the zone changed underway.
    SerialChanged(u32, u32),
    /// Records after the closing SOA.
    AfterEnd,
    /// The stream ended before the closing SOA.
    Incomplete,
}

impl fmt::Display for ReplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplyError::Malformed(e) => write!(f, "malformed message: {e}"),
            ReplyError::NotOurs => f.write_str("a message that does not answer the query"),
            ReplyError::Truncated => f.write_str("a truncated message"),
            ReplyError::Rcode(r) => write!(f, "bad rcode: {}", wire::rcode_name(u16::from(*r))),
            ReplyError::Question => f.write_str("the reply's question is not the query's"),
            ReplyError::NoSoa => f.write_str("no SOA of the zone in the answer"),
            ReplyError::FirstNotSoa => f.write_str("the first record is not the zone's SOA"),
            ReplyError::Class(c) => {
                write!(f, "a record of class {} in the zone", wire::class_name(*c))
            }
            ReplyError::SerialChanged(a, b) => {
                write!(f, "the transfer began with serial {a} and ended with {b}")
            }
            ReplyError::AfterEnd => f.write_str("records after the closing SOA"),
            ReplyError::Incomplete => f.write_str("the transfer ended before the closing SOA"),
        }
    }
}

impl std::error::Error for ReplyError {}

impl From<WireError> for ReplyError {
    fn from(e: WireError) -> Self {
        ReplyError::Malformed(e)
    }
}

/// The serial and timers of a zone's SOA (RFC 1035 §3.3.13), which drive a secondary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Soa {
    /// The zone's version.
    pub serial: u32,
    /// Seconds between serial checks.
    pub refresh: u32,
    /// Seconds between checks after one failed.
    pub retry: u32,
    /// Seconds without a successful check after which the zone is no longer served.
    pub expire: u32,
    /// The negative-caching TTL (RFC 2308).
    pub minimum: u32,
}

impl Soa {
    /// The SOA in an uncompressed RDATA (two names, then the five numbers); `None` when it
    /// is not one.
    pub fn from_rdata(rdata: &[u8]) -> Option<Soa> {
        let mut pos = 0;
        for _ in 0..2 {
            loop {
                let len = *rdata.get(pos)? as usize;
                if len & 0xC0 != 0 {
                    return None;
                }
                pos += 1 + len;
                if len == 0 {
                    break;
                }
            }
        }
        let n = rdata.get(pos..)?;
        if n.len() != 20 {
            return None;
        }
        let at = |i: usize| u32::from_be_bytes([n[i], n[i + 1], n[i + 2], n[i + 3]]);
        Some(Soa {
            serial: at(0),
            refresh: at(4),
            retry: at(8),
            expire: at(12),
            minimum: at(16),
        })
    }
}

/// Checks that `msg` is a response to the query with ID `id` and question `question` (as
/// sent: name, type, class): QR, opcode QUERY, not truncated, rcode NOERROR, and the
/// question repeated, or absent when `question_optional` (later messages of a transfer,
/// RFC 5936 §2.2.1).
pub fn check(
    msg: &[u8],
    id: u16,
    question: &[u8],
    question_optional: bool,
) -> Result<(), ReplyError> {
    let h = Header::of(msg).ok_or(ReplyError::Malformed(WireError::TooShort))?;
    if h.id() != id || !h.qr() || h.opcode() != opcode::QUERY {
        return Err(ReplyError::NotOurs);
    }
    if h.rcode() != rcode::NOERROR {
        return Err(ReplyError::Rcode(h.rcode()));
    }
    if h.tc() {
        return Err(ReplyError::Truncated);
    }
    let absent_ok = question_optional && h.qdcount() == 0;
    if !absent_ok && !wire::reply::repeats_question(msg, question) {
        return Err(ReplyError::Question);
    }
    Ok(())
}

/// The SOA of the zone `origin` (lower-case wire form) in the answer to the serial check
/// sent with ID `id` and question `question`.
pub fn soa_of(msg: &[u8], id: u16, question: &[u8], origin: &[u8]) -> Result<Soa, ReplyError> {
    check(msg, id, question, false)?;
    let mut owner = Vec::with_capacity(origin.len());
    let mut rdata = Vec::new();
    for r in wire::records(msg)? {
        let r = r?;
        if r.section != Section::Answer || r.rtype != rtype::SOA {
            continue;
        }
        owner.clear();
        wire::expand_name(msg, r.owner.start, msg.len(), &mut owner)
            .map_err(|e| ReplyError::Malformed(WireError::Name(e)))?;
        if !owner.eq_ignore_ascii_case(origin) {
            continue;
        }
        rdata.clear();
        wire::expand_rdata(msg, &r, &mut rdata)?;
        return Soa::from_rdata(&rdata).ok_or(ReplyError::NoSoa);
    }
    Err(ReplyError::NoSoa)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The RDATA of an SOA `ns.example.org. hm.example.org. SERIAL 3600 600 86400 300`.
    pub fn soa_rdata(serial: u32) -> Vec<u8> {
        let mut rd = wire::name_to_wire("ns.example.org.").unwrap();
        rd.extend(wire::name_to_wire("hm.example.org.").unwrap());
        for v in [serial, 3600, 600, 86400, 300] {
            rd.extend(v.to_be_bytes());
        }
        rd
    }

    #[test]
    fn an_soa_is_read_from_its_rdata() {
        let soa = Soa::from_rdata(&soa_rdata(42)).unwrap();
        assert_eq!(
            soa,
            Soa {
                serial: 42,
                refresh: 3600,
                retry: 600,
                expire: 86400,
                minimum: 300
            }
        );
        let mut short = soa_rdata(1);
        short.pop();
        assert_eq!(Soa::from_rdata(&short), None);
        assert_eq!(Soa::from_rdata(&[0xC0, 12]), None);
        assert_eq!(Soa::from_rdata(&[]), None);
    }
}
