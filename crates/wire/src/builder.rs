//! Building a query to send: forward's health probes ask one, and tests
//! ask many. Not on the query path: [`QueryBuilder::build`] allocates,
//! [`QueryBuilder::write`] reuses a caller's buffer.

use super::consts::{HEADER_LEN, class, flags, rtype};
use super::header::write_header;
use super::name::Name;

/// Length of an OPT record with no options: root owner, type, class, TTL,
/// RDLENGTH.
const OPT_LEN: usize = 11;

/// A query with one question and, optionally, an EDNS(0) OPT record, as a
/// stub resolver sends it (miekg/dns `SetQuestion` + `SetEdns0`).
///
/// ```
/// use ringdns_wire::{Name, Query, QueryBuilder, rtype};
///
/// let name = Name::from_wire(b"\x07example\x03org\x00").unwrap();
/// let packet = QueryBuilder::new(name, rtype::NS).id(7).edns(1232, true).build();
/// let q = Query::parse(&packet).unwrap();
/// assert_eq!((q.id(), q.qtype(), q.do_bit()), (7, rtype::NS, true));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct QueryBuilder<'a> {
    qname: Name<'a>,
    qtype: u16,
    qclass: u16,
    id: u16,
    rd: bool,
    edns: Option<(u16, bool)>,
}

impl<'a> QueryBuilder<'a> {
    /// A query for `qname` (written in its own case) and `qtype`, class IN,
    /// ID 0, RD set (as miekg's `SetQuestion` and dig do), no EDNS.
    #[inline]
    pub fn new(qname: Name<'a>, qtype: u16) -> Self {
        QueryBuilder {
            qname,
            qtype,
            qclass: class::IN,
            id: 0,
            rd: true,
            edns: None,
        }
    }

    /// The message ID, which the reply must echo.
    #[inline]
    pub fn id(self, id: u16) -> Self {
        QueryBuilder { id, ..self }
    }

    /// The question's class (CH for `version.bind`, say).
    #[inline]
    pub fn class(self, qclass: u16) -> Self {
        QueryBuilder { qclass, ..self }
    }

    /// Recursion Desired: cleared for a question a server must answer
    /// from what it has (a health probe with `recursion_desired` off).
    #[inline]
    pub fn rd(self, on: bool) -> Self {
        QueryBuilder { rd: on, ..self }
    }

    /// Adds an OPT record advertising `udp_size` bytes, version 0, the DO
    /// bit as given and no options.
    #[inline]
    pub fn edns(self, udp_size: u16, do_bit: bool) -> Self {
        QueryBuilder {
            edns: Some((udp_size, do_bit)),
            ..self
        }
    }

    /// Writes the query into `out`, cleared first (allocating only when
    /// `out` has too little capacity).
    pub fn write(&self, out: &mut Vec<u8>) {
        out.clear();
        out.reserve(self.wire_len());
        let word = if self.rd { flags::RD } else { 0 };
        let arcount = u16::from(self.edns.is_some());
        write_header(out, self.id, word, [1, 0, 0, arcount]);
        out.extend_from_slice(self.qname.as_wire());
        out.extend_from_slice(&self.qtype.to_be_bytes());
        out.extend_from_slice(&self.qclass.to_be_bytes());
        if let Some((size, do_bit)) = self.edns {
            out.push(0);
            out.extend_from_slice(&rtype::OPT.to_be_bytes());
            out.extend_from_slice(&size.to_be_bytes());
            let opt_flags = if do_bit { 0x8000u16 } else { 0 };
            out.extend_from_slice(&[0, 0]); // extended rcode, version
            out.extend_from_slice(&opt_flags.to_be_bytes());
            out.extend_from_slice(&[0, 0]); // no options
        }
    }

    /// The query in a new buffer of its exact size.
    pub fn build(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.wire_len());
        self.write(&mut out);
        out
    }

    /// The query's length in bytes.
    fn wire_len(&self) -> usize {
        let opt = if self.edns.is_some() { OPT_LEN } else { 0 };
        HEADER_LEN + self.qname.wire_len() + 4 + opt
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Header, Query};

    fn name() -> Name<'static> {
        Name::from_wire(b"\x03WwW\x07example\x03org\x00").unwrap()
    }

    #[test]
    fn a_plain_query_is_what_a_stub_sends() {
        let p = QueryBuilder::new(name(), rtype::A).id(0xBEEF).build();
        #[rustfmt::skip]
        let want: Vec<u8> = [
            &[0xBE, 0xEF, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0][..],
            b"\x03WwW\x07example\x03org\x00",
            &[0, 1, 0, 1],
        ].concat();
        assert_eq!(p, want);
        assert_eq!(p.capacity(), p.len(), "sized exactly");
        let q = Query::parse(&p).unwrap();
        assert_eq!(
            (q.id(), q.qtype(), q.qclass()),
            (0xBEEF, rtype::A, class::IN)
        );
        assert!(q.rd() && q.opt().is_none());
        assert_eq!(q.qname().to_string(), "WwW.example.org.");
    }

    #[test]
    fn every_setting_reaches_the_wire() {
        let p = QueryBuilder::new(name(), rtype::TXT)
            .id(3)
            .class(class::CH)
            .rd(false)
            .edns(1232, true)
            .build();
        let q = Query::parse(&p).unwrap();
        assert_eq!(Header::new(&p).flags(), 0, "RD cleared, nothing else set");
        assert_eq!((q.id(), q.qtype(), q.qclass()), (3, rtype::TXT, class::CH));
        let o = q.opt().unwrap();
        assert_eq!((o.udp_size, o.do_bit, o.version), (1232, true, 0));
        assert_eq!((o.flags, o.ext_rcode, o.options), (0x8000, 0, &[][..]));
        assert_eq!(Header::new(&p).arcount(), 1);
        assert_eq!(p.len(), p.capacity());

        let p = QueryBuilder::new(name(), rtype::A).edns(512, false).build();
        let o = Query::parse(&p).unwrap().opt().unwrap();
        assert_eq!((o.udp_size, o.do_bit, o.flags), (512, false, 0));
    }

    #[test]
    fn write_reuses_the_callers_buffer() {
        let mut out = Vec::with_capacity(512);
        out.extend_from_slice(b"left over");
        let before = out.as_ptr();
        let b = QueryBuilder::new(name(), rtype::NS).id(9);
        b.write(&mut out);
        assert_eq!(out, b.build());
        assert_eq!(out.as_ptr(), before, "no new allocation");
    }
}
