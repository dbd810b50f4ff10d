//! Building a reply into a caller-owned buffer without allocating (when the
//! buffer has capacity): header and echoed question first, then records in
//! section order.

use std::fmt;
use std::net::IpAddr;

use super::be::put_u16;
use super::consts::{
    MAX_LABEL_LEN, MAX_MSG_SIZE, MAX_NAME_LEN, MIN_UDP_SIZE, QUESTION_POINTER, class, flags,
    opcode, rtype,
};
use super::header::{HeaderMut, Section, write_header};
use super::name::Name;
use super::query::Query;

/// The owner name of a record being written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner<'n> {
    /// The question name, as a compression pointer to offset 12 (so it
    /// carries the client's exact case).
    Question,
    /// An uncompressed wire name, written as given.
    Wire(&'n [u8]),
    /// One label (its bytes, without the length byte) followed by a pointer
    /// to the question name: whoami's `_udp.<qname>` (`_udp.` for the root).
    LabelThenQuestion(&'n [u8]),
    /// A compression pointer to a name already in the message at this offset (below
    /// 0x4000): a suffix of the question name, such as the zone apex or a delegation
    /// point above the query name, written in two bytes.
    Pointer(u16),
}

/// Why a record could not be added; the message is left as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteError {
    /// A record for an earlier section after one for a later section.
    SectionOrder,
    /// The owner is not a valid name (bad wire, empty or long label, name
    /// over 255 bytes).
    BadOwner,
    /// RDATA longer than 65535 bytes.
    RdataTooLong,
    /// The `push_with` closure removed bytes it had not written.
    RdataShrunk,
    /// The message would exceed 65535 bytes.
    MessageTooLong,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WriteError::SectionOrder => "record pushed into an earlier section",
            WriteError::BadOwner => "invalid owner name",
            WriteError::RdataTooLong => "rdata longer than 65535 bytes",
            WriteError::RdataShrunk => "rdata closure removed bytes it did not write",
            WriteError::MessageTooLong => "message longer than 65535 bytes",
        })
    }
}

impl std::error::Error for WriteError {}

/// Writes a reply into a caller-owned `Vec<u8>`.
///
/// The buffer is cleared and filled with the header (ID, QR=1, opcode,
/// RD/CD echoed for QUERY as miekg's `SetReply` does, rcode) and the
/// question (client's case). Records then go in Answer → Authority →
/// Additional order; counts are kept up to date in the header after every
/// push, so the buffer is a valid message at all times. Call
/// [`MessageWriter::finish`] at the end (it adds the OPT needed by an
/// extended rcode).
#[derive(Debug)]
pub struct MessageWriter<'b> {
    out: &'b mut Vec<u8>,
    section: Section,
    counts: [u16; 3],
    rcode: u8,
    qname_len: usize,
    opt_ttl: Option<usize>,
}

impl<'b> MessageWriter<'b> {
    /// Starts a reply to `query` with `rcode` (values above 15 keep their
    /// upper bits for the OPT record, see [`MessageWriter::finish`]).
    pub fn reply(query: &Query<'_>, out: &'b mut Vec<u8>, rcode: u8) -> MessageWriter<'b> {
        out.clear();
        let op = query.opcode();
        let mut word = flags::QR | (u16::from(op & 0xF) << 11) | u16::from(rcode & 0xF);
        if op == opcode::QUERY {
            word |= query.flags() & (flags::RD | flags::CD);
        }
        write_header(out, query.id(), word, [1, 0, 0, 0]);
        let qname = query.qname_bytes();
        out.extend_from_slice(qname);
        out.extend_from_slice(&query.qtype().to_be_bytes());
        out.extend_from_slice(&query.qclass().to_be_bytes());
        MessageWriter {
            out,
            section: Section::Answer,
            counts: [0; 3],
            rcode,
            qname_len: qname.len(),
            opt_ttl: None,
        }
    }

    /// Sets or clears AA.
    #[inline]
    pub fn set_aa(&mut self, on: bool) {
        HeaderMut::new(self.out).set_flag(flags::AA, on);
    }

    /// Sets or clears RA.
    #[inline]
    pub fn set_ra(&mut self, on: bool) {
        HeaderMut::new(self.out).set_flag(flags::RA, on);
    }

    /// Sets or clears TC.
    #[inline]
    pub fn set_tc(&mut self, on: bool) {
        HeaderMut::new(self.out).set_flag(flags::TC, on);
    }

    /// Sets or clears AD.
    #[inline]
    pub fn set_ad(&mut self, on: bool) {
        HeaderMut::new(self.out).set_flag(flags::AD, on);
    }

    /// Replaces the rcode (low 4 bits in the header, the rest kept for
    /// the OPT written by [`MessageWriter::finish`]).
    #[inline]
    pub fn set_rcode(&mut self, rcode: u8) {
        self.rcode = rcode;
        let b = &mut self.out[3];
        *b = (*b & 0xF0) | (rcode & 0xF);
    }

    /// The full rcode set so far.
    #[inline]
    pub fn rcode(&self) -> u8 {
        self.rcode
    }

    /// Number of records pushed into `section`.
    #[inline]
    pub fn count(&self, section: Section) -> u16 {
        self.counts[section as usize]
    }

    /// Bytes written so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.out.len()
    }

    /// Never true (the header is always there); present for symmetry with
    /// `len`.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// The message as written so far.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        self.out
    }

    fn owner_len(&self, owner: Owner<'_>) -> Result<usize, WriteError> {
        match owner {
            Owner::Question => Ok(2),
            Owner::Pointer(off) => {
                if usize::from(off) < crate::consts::HEADER_LEN || off >= 0x4000 {
                    return Err(WriteError::BadOwner);
                }
                Ok(2)
            }
            Owner::Wire(w) => Name::from_wire(w)
                .map(|n| n.wire_len())
                .map_err(|_| WriteError::BadOwner),
            Owner::LabelThenQuestion(l) => {
                if l.is_empty()
                    || l.len() > MAX_LABEL_LEN
                    || 1 + l.len() + self.qname_len > MAX_NAME_LEN
                {
                    return Err(WriteError::BadOwner);
                }
                Ok(1 + l.len() + 2)
            }
        }
    }

    fn write_owner(&mut self, owner: Owner<'_>) {
        match owner {
            Owner::Question => self.out.extend_from_slice(&QUESTION_POINTER),
            Owner::Pointer(off) => self.out.extend_from_slice(&(0xC000 | off).to_be_bytes()),
            Owner::Wire(w) => self.out.extend_from_slice(w),
            Owner::LabelThenQuestion(l) => {
                self.out.push(l.len() as u8);
                self.out.extend_from_slice(l);
                self.out.extend_from_slice(&QUESTION_POINTER);
            }
        }
    }

    /// Checks order and owner; returns the owner length.
    fn begin(&self, section: Section, owner: Owner<'_>) -> Result<usize, WriteError> {
        if section < self.section {
            return Err(WriteError::SectionOrder);
        }
        self.owner_len(owner)
    }

    /// Writes owner, type, class, TTL; returns the TTL offset.
    fn write_fixed(&mut self, owner: Owner<'_>, rtype: u16, class: u16, ttl: u32) -> usize {
        self.write_owner(owner);
        self.out.extend_from_slice(&rtype.to_be_bytes());
        self.out.extend_from_slice(&class.to_be_bytes());
        let ttl_off = self.out.len();
        self.out.extend_from_slice(&ttl.to_be_bytes());
        ttl_off
    }

    fn commit(&mut self, section: Section, rtype: u16, ttl_off: usize) {
        self.section = section;
        let i = section as usize;
        self.counts[i] += 1;
        HeaderMut::new(self.out).set_count(section, self.counts[i]);
        if rtype == rtype::OPT && section == Section::Additional {
            self.opt_ttl = Some(ttl_off);
        }
    }

    /// Appends a record with ready-made RDATA.
    pub fn push(
        &mut self,
        section: Section,
        owner: Owner<'_>,
        rtype: u16,
        class: u16,
        ttl: u32,
        rdata: &[u8],
    ) -> Result<(), WriteError> {
        let olen = self.begin(section, owner)?;
        if rdata.len() > usize::from(u16::MAX) {
            return Err(WriteError::RdataTooLong);
        }
        if self.out.len() + olen + 10 + rdata.len() > MAX_MSG_SIZE {
            return Err(WriteError::MessageTooLong);
        }
        let ttl_off = self.write_fixed(owner, rtype, class, ttl);
        self.out
            .extend_from_slice(&(rdata.len() as u16).to_be_bytes());
        self.out.extend_from_slice(rdata);
        self.commit(section, rtype, ttl_off);
        Ok(())
    }

    /// Appends the address record of `ip` (class IN): A for IPv4, AAAA for IPv6.
    pub fn push_addr(
        &mut self,
        section: Section,
        owner: Owner<'_>,
        ttl: u32,
        ip: IpAddr,
    ) -> Result<(), WriteError> {
        match ip {
            IpAddr::V4(a) => self.push(section, owner, rtype::A, class::IN, ttl, &a.octets()),
            IpAddr::V6(a) => self.push(section, owner, rtype::AAAA, class::IN, ttl, &a.octets()),
        }
    }

    /// Appends a record whose RDATA is written by `fill` (which must only
    /// append to the vector); RDLENGTH is filled in afterwards. On error the
    /// record is removed again.
    pub fn push_with<F: FnOnce(&mut Vec<u8>)>(
        &mut self,
        section: Section,
        owner: Owner<'_>,
        rtype: u16,
        class: u16,
        ttl: u32,
        fill: F,
    ) -> Result<(), WriteError> {
        self.begin(section, owner)?;
        let start = self.out.len();
        let ttl_off = self.write_fixed(owner, rtype, class, ttl);
        self.out.extend_from_slice(&[0, 0]);
        let rd_start = self.out.len();
        fill(self.out);
        if self.out.len() < rd_start {
            self.out.truncate(start);
            return Err(WriteError::RdataShrunk);
        }
        let rdlen = self.out.len() - rd_start;
        if rdlen > usize::from(u16::MAX) || self.out.len() > MAX_MSG_SIZE {
            self.out.truncate(start);
            return Err(if rdlen > usize::from(u16::MAX) {
                WriteError::RdataTooLong
            } else {
                WriteError::MessageTooLong
            });
        }
        put_u16(self.out, rd_start - 2, rdlen as u16);
        self.commit(section, rtype, ttl_off);
        Ok(())
    }

    /// Appends an OPT record (RFC 6891) to the additional section: root owner, `udp_size`,
    /// version 0, the DO bit as given, and `options` (code, data) in order. For a plugin
    /// whose reply carries EDNS options of its own (an extended DNS error, RFC 8914), as
    /// miekg's `SetEdns0` and an appended option make it; [`finalize`](super::finalize)
    /// then fits the OPT to the client's (its size and DO), keeping the options.
    pub fn push_opt(
        &mut self,
        udp_size: u16,
        do_bit: bool,
        options: &[(u16, &[u8])],
    ) -> Result<(), WriteError> {
        let ttl = if do_bit { 0x8000 } else { 0 };
        let fits = options
            .iter()
            .all(|(_, data)| data.len() <= usize::from(u16::MAX));
        if !fits {
            return Err(WriteError::RdataTooLong);
        }
        self.push_with(
            Section::Additional,
            Owner::Wire(&[0]),
            rtype::OPT,
            udp_size,
            ttl,
            |out| {
                for (code, data) in options {
                    out.extend_from_slice(&code.to_be_bytes());
                    out.extend_from_slice(&(data.len() as u16).to_be_bytes());
                    out.extend_from_slice(data);
                }
            },
        )
    }

    /// Completes the message and returns its length. When the rcode needs
    /// more than 4 bits, its upper bits go into the OPT record: the one
    /// pushed into the additional section, or a new one (root, UDP size
    /// 512, version 0, no flags) that [`finalize`](super::finalize) then
    /// normalises for EDNS clients.
    pub fn finish(self) -> usize {
        let ext = self.rcode >> 4;
        if ext != 0 {
            match self.opt_ttl {
                Some(t) => self.out[t] = ext,
                None => {
                    self.out.push(0);
                    self.out.extend_from_slice(&rtype::OPT.to_be_bytes());
                    self.out
                        .extend_from_slice(&(MIN_UDP_SIZE as u16).to_be_bytes());
                    self.out.extend_from_slice(&[ext, 0, 0, 0, 0, 0]);
                    HeaderMut::new(self.out).set_count(Section::Additional, self.counts[2] + 1);
                }
            }
        }
        self.out.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::rcode;
    use crate::records::records;

    #[test]
    fn push_addr_writes_a_for_ipv4_and_aaaa_for_ipv6() {
        let q = query(flags::RD, b"\x01h\x00", rtype::A);
        let parsed = Query::parse(&q).unwrap();
        let mut out = Vec::new();
        let mut w = MessageWriter::reply(&parsed, &mut out, rcode::NOERROR);
        for ip in ["192.0.2.1", "2001:db8::1"] {
            let ip: IpAddr = ip.parse().unwrap();
            w.push_addr(Section::Answer, Owner::Question, 7, ip)
                .unwrap();
        }
        w.finish();
        let got: Vec<_> = records(&out)
            .unwrap()
            .map(Result::unwrap)
            .map(|r| (r.rtype, r.class, r.ttl(&out), out[r.rdata].to_vec()))
            .collect();
        let v6: IpAddr = "2001:db8::1".parse().unwrap();
        assert_eq!(
            got,
            [
                (rtype::A, class::IN, 7, vec![192, 0, 2, 1]),
                (
                    rtype::AAAA,
                    class::IN,
                    7,
                    match v6 {
                        IpAddr::V6(a) => a.octets().to_vec(),
                        IpAddr::V4(_) => unreachable!(),
                    }
                ),
            ]
        );
        assert_eq!(rtype::of_addr(&"192.0.2.1".parse().unwrap()), rtype::A);
        assert_eq!(rtype::of_addr(&v6), rtype::AAAA);
    }

    #[test]
    fn push_opt_writes_an_opt_with_its_options_that_finalize_keeps() {
        use crate::consts::edns;
        let q = query(flags::RD, b"\x07example\x00", rtype::A);
        let parsed = Query::parse(&q).unwrap();
        let mut out = Vec::new();
        let mut w = MessageWriter::reply(&parsed, &mut out, rcode::NXDOMAIN);
        let mut ede = 21u16.to_be_bytes().to_vec();
        ede.extend_from_slice(b"blocked");
        w.push_opt(4096, true, &[(edns::EDE, &ede)]).unwrap();
        // An OPT is the last thing written: nothing goes after it in the additional section.
        w.finish();
        let opt = records(&out)
            .unwrap()
            .map(Result::unwrap)
            .find(|r| r.rtype == rtype::OPT)
            .expect("an OPT");
        assert_eq!(opt.class, 4096);
        assert_eq!(&out[opt.ttl_offset..opt.ttl_offset + 4], &[0, 0, 0x80, 0]);
        assert_eq!(
            &out[opt.rdata.clone()],
            &[0, 15, 0, 9, 0, 21, b'b', b'l', b'o', b'c', b'k', b'e', b'd']
        );
        // A client without EDNS gets it as written (CoreDNS's SizeAndDo leaves it).
        let before = out.clone();
        crate::finalize(&mut out, &parsed, 512);
        assert_eq!(out, before);
        // An EDNS client's size and DO go into it; the option stays.
        let name = crate::Name::from_wire(b"\x07example\x00").unwrap();
        let edns_q = crate::QueryBuilder::new(name, rtype::A)
            .edns(1232, false)
            .build();
        let edns_q = Query::parse(&edns_q).unwrap();
        let mut out = Vec::new();
        let mut w = MessageWriter::reply(&edns_q, &mut out, rcode::NXDOMAIN);
        w.push_opt(4096, true, &[(edns::EDE, &ede)]).unwrap();
        w.finish();
        crate::finalize(&mut out, &edns_q, edns_q.max_reply_size(false));
        let opts: Vec<_> = records(&out)
            .unwrap()
            .map(Result::unwrap)
            .filter(|r| r.rtype == rtype::OPT)
            .map(|r| (r.class, out[r.ttl_offset + 2], out[r.rdata].to_vec()))
            .collect();
        assert_eq!(opts.len(), 1, "one OPT, not a second one appended");
        assert_eq!((opts[0].0, opts[0].1), (1232, 0));
        let found: Vec<_> = crate::EdnsOptions::new(&opts[0].2)
            .map(|(c, d)| (c, d.to_vec()))
            .collect();
        assert_eq!(found, vec![(edns::EDE, ede.clone())]);
        // An option longer than RDATA can hold is refused, and nothing is written.
        let long = vec![0u8; 70_000];
        let mut out2 = Vec::new();
        let mut w = MessageWriter::reply(&parsed, &mut out2, rcode::NOERROR);
        let len = w.len();
        assert_eq!(
            w.push_opt(512, false, &[(edns::EDE, &long)]),
            Err(WriteError::RdataTooLong)
        );
        assert_eq!(w.len(), len);
    }

    fn query(flag_word: u16, name: &[u8], qtype: u16) -> Vec<u8> {
        let mut p = Vec::new();
        write_header(&mut p, 0x1234, flag_word, [1, 0, 0, 0]);
        p.extend_from_slice(name);
        p.extend_from_slice(&qtype.to_be_bytes());
        p.extend_from_slice(&class::IN.to_be_bytes());
        p
    }

    #[test]
    fn small_reply_byte_for_byte() {
        let p = query(
            flags::RD | flags::CD | flags::AD,
            b"\x03WwW\x02Ex\x00",
            rtype::A,
        );
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::with_capacity(512);
        let mut w = MessageWriter::reply(&q, &mut out, rcode::NOERROR);
        w.set_aa(true);
        w.push(
            Section::Answer,
            Owner::Question,
            rtype::A,
            class::IN,
            300,
            &[192, 0, 2, 1],
        )
        .unwrap();
        w.push(
            Section::Authority,
            Owner::Wire(b"\x02ex\x00"),
            rtype::NS,
            class::IN,
            60,
            b"\x02ns\xC0\x10",
        )
        .unwrap();
        w.push_with(
            Section::Additional,
            Owner::LabelThenQuestion(b"_udp"),
            rtype::SRV,
            class::IN,
            0,
            |rd| {
                rd.extend_from_slice(&[0, 0, 0, 0, 0x13, 0x88, 0]);
            },
        )
        .unwrap();
        let n = w.finish();
        #[rustfmt::skip]
        let want: Vec<u8> = [
            &[0x12, 0x34, 0x85, 0x10, 0, 1, 0, 1, 0, 1, 0, 1][..],
            b"\x03WwW\x02Ex\x00\x00\x01\x00\x01",
            b"\xC0\x0C\x00\x01\x00\x01\x00\x00\x01\x2C\x00\x04\xC0\x00\x02\x01",
            b"\x02ex\x00\x00\x02\x00\x01\x00\x00\x00\x3C\x00\x05\x02ns\xC0\x10",
            b"\x04_udp\xC0\x0C\x00\x21\x00\x01\x00\x00\x00\x00\x00\x07\x00\x00\x00\x00\x13\x88\x00",
        ]
        .concat();
        assert_eq!(out, want);
        assert_eq!(n, want.len());
        assert_eq!(records(&out).unwrap().count(), 3);
    }

    #[test]
    fn notify_does_not_echo_rd() {
        let p = query((4 << 11) | flags::RD, b"\x00", rtype::SOA);
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        MessageWriter::reply(&q, &mut out, rcode::NOERROR).finish();
        assert_eq!(out[2..4], [0xA0, 0x00]);
    }

    #[test]
    fn root_label_then_question() {
        let p = query(0, b"\x00", rtype::A);
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        let mut w = MessageWriter::reply(&q, &mut out, rcode::NOERROR);
        w.push(
            Section::Additional,
            Owner::LabelThenQuestion(b"_udp"),
            rtype::SRV,
            class::IN,
            0,
            &[0; 7],
        )
        .unwrap();
        w.finish();
        assert_eq!(&out[17..24], b"\x04_udp\xC0\x0C");
        assert_eq!(out[12], 0, "pointer target is the root name");
    }

    #[test]
    fn errors_leave_message_intact() {
        let p = query(0, b"\x01a\x00", rtype::A);
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        let mut w = MessageWriter::reply(&q, &mut out, rcode::NOERROR);
        w.push(
            Section::Authority,
            Owner::Question,
            rtype::NS,
            class::IN,
            1,
            b"\xC0\x0C",
        )
        .unwrap();
        let before = w.as_bytes().to_vec();
        assert_eq!(
            w.push(
                Section::Answer,
                Owner::Question,
                rtype::A,
                class::IN,
                1,
                &[1, 2, 3, 4]
            ),
            Err(WriteError::SectionOrder)
        );
        assert_eq!(
            w.push(
                Section::Additional,
                Owner::Wire(b"\x01a"),
                rtype::A,
                class::IN,
                1,
                &[1, 2, 3, 4]
            ),
            Err(WriteError::BadOwner)
        );
        assert_eq!(
            w.push(
                Section::Additional,
                Owner::Wire(b"\xC0\x0C"),
                rtype::A,
                class::IN,
                1,
                &[1, 2, 3, 4]
            ),
            Err(WriteError::BadOwner)
        );
        assert_eq!(
            w.push(
                Section::Additional,
                Owner::LabelThenQuestion(b""),
                rtype::A,
                class::IN,
                1,
                &[]
            ),
            Err(WriteError::BadOwner)
        );
        assert_eq!(
            w.push(
                Section::Additional,
                Owner::LabelThenQuestion(&[b'x'; 64]),
                rtype::A,
                class::IN,
                1,
                &[]
            ),
            Err(WriteError::BadOwner)
        );
        let big = vec![0u8; 70_000];
        assert_eq!(
            w.push(
                Section::Additional,
                Owner::Question,
                rtype::TXT,
                class::IN,
                1,
                &big
            ),
            Err(WriteError::RdataTooLong)
        );
        assert_eq!(
            w.push_with(
                Section::Additional,
                Owner::Question,
                rtype::TXT,
                class::IN,
                1,
                |v| { v.extend_from_slice(&big) }
            ),
            Err(WriteError::RdataTooLong)
        );
        assert_eq!(
            w.push_with(
                Section::Additional,
                Owner::Question,
                rtype::TXT,
                class::IN,
                1,
                |v| { v.truncate(3) }
            ),
            Err(WriteError::RdataShrunk)
        );
        // the shrunk case cannot restore the closure's damage; start anew
        assert_ne!(w.as_bytes(), &before[..]);
        let mut w = MessageWriter::reply(&q, &mut out, rcode::NOERROR);
        let chunk = vec![0u8; 60_000];
        w.push(
            Section::Answer,
            Owner::Question,
            rtype::TXT,
            class::IN,
            1,
            &chunk,
        )
        .unwrap();
        let len = w.len();
        assert_eq!(
            w.push(
                Section::Answer,
                Owner::Question,
                rtype::TXT,
                class::IN,
                1,
                &chunk[..10_000]
            ),
            Err(WriteError::MessageTooLong)
        );
        assert_eq!(
            w.push_with(
                Section::Answer,
                Owner::Question,
                rtype::TXT,
                class::IN,
                1,
                |v| { v.extend_from_slice(&chunk[..10_000]) }
            ),
            Err(WriteError::MessageTooLong)
        );
        assert_eq!(w.len(), len);
        assert_eq!(w.count(Section::Answer), 1);
    }

    #[test]
    fn extended_rcode_adds_opt() {
        let p = query(0, b"\x01a\x00", rtype::A);
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        let mut w = MessageWriter::reply(&q, &mut out, rcode::NOERROR);
        w.set_rcode(rcode::BADCOOKIE);
        assert_eq!(w.rcode(), 23);
        w.finish();
        assert_eq!(out[3] & 0xF, 23 & 0xF);
        assert_eq!(out[11], 1);
        assert_eq!(&out[out.len() - 11..], &[0, 0, 41, 2, 0, 1, 0, 0, 0, 0, 0]);
        // an OPT pushed by the caller gets the upper bits instead
        let mut w = MessageWriter::reply(&q, &mut out, rcode::BADVERS);
        w.push(
            Section::Additional,
            Owner::Wire(&[0]),
            rtype::OPT,
            1232,
            0,
            &[],
        )
        .unwrap();
        w.finish();
        assert_eq!(out[11], 1);
        assert_eq!(
            &out[out.len() - 11..],
            &[0, 0, 41, 4, 0xd0, 1, 0, 0, 0, 0, 0]
        );
        assert_eq!(out[3] & 0xF, 0);
    }

    #[test]
    fn no_allocation_with_capacity() {
        let p = query(flags::RD, b"\x07example\x03org\x00", rtype::A);
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::with_capacity(4096);
        let ptr = out.as_ptr();
        for _ in 0..3 {
            let mut w = MessageWriter::reply(&q, &mut out, rcode::NOERROR);
            for i in 0..40u8 {
                w.push(
                    Section::Answer,
                    Owner::Question,
                    rtype::A,
                    class::IN,
                    60,
                    &[10, 0, 0, i],
                )
                .unwrap();
            }
            w.finish();
        }
        assert_eq!(out.as_ptr(), ptr);
        assert_eq!(out.capacity(), 4096);
    }
}
