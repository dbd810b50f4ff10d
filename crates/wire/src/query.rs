//! Zero-allocation parsing of an incoming query with the acceptance rules of
//! miekg/dns (`DefaultMsgAcceptFunc` + `Msg.unpack`) as CoreDNS runs them,
//! and the header-only replies miekg sends when it rejects a query.

use super::be::get_u16;
use super::consts::{HEADER_LEN, MAX_MSG_SIZE, MIN_UDP_SIZE, opcode, rcode, rtype};
use super::header::{Header, Section};
use super::name::{Name, walk_compressed, walk_uncompressed};
use super::opt::{Opt, options_valid};
use super::records::{Record, parse_rr};

/// What to do with a datagram that is not an acceptable query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reject {
    /// Send nothing: shorter than a header, or a response (QR=1).
    Drop,
    /// Answer FORMERR with [`reject_reply`](super::reject_reply): bad counts or a body that does
    /// not unpack.
    FormErr,
    /// Answer NOTIMP with [`reject_reply`](super::reject_reply): opcode other than QUERY/NOTIFY.
    NotImp,
    /// Answer SERVFAIL with [`reject_reply`](super::reject_reply): a bare 12-byte header with
    /// QDCOUNT=1. miekg unpacks it as a message without a question and
    /// CoreDNS's `ServeDNS` answers that with SERVFAIL.
    ServFail,
}

impl Reject {
    /// The rcode to pass to [`reject_reply`](super::reject_reply), `None` for [`Reject::Drop`].
    #[inline]
    pub fn rcode(self) -> Option<u8> {
        match self {
            Reject::Drop => None,
            Reject::FormErr => Some(rcode::FORMERR),
            Reject::NotImp => Some(rcode::NOTIMP),
            Reject::ServFail => Some(rcode::SERVFAIL),
        }
    }
}

/// A parsed query: a borrowed view of the datagram plus the offsets the
/// server needs. `Copy`, no allocation.
#[derive(Clone, Copy, Debug)]
// Small and without holes (16 + 8 × 2 bytes; the OPT's options read from the packet when
// asked): a Query is moved several times per query, and the copies of the former layout
// (with an `Option<Opt>` and padding inside) went in overlapping pieces whose loads
// straddled the stores of the copy before, stalling store forwarding at each move (perf).
pub struct Query<'a> {
    packet: &'a [u8],
    /// The question ends within 12 + 255 + 4 bytes: u16 holds its offsets.
    qname_end: u16,
    question_end: u16,
    qtype: u16,
    qclass: u16,
    /// Where the OPT record's TTL field starts (0: no OPT); [`Query::opt`] reads its
    /// options there.
    opt_ttl: u16,
    /// The OPT's UDP size, flags, extended rcode and version (zero without one).
    udp_size: u16,
    opt_flags: u16,
    ext_rcode: u8,
    version: u8,
}

/// Offsets of a parsed question.
#[derive(Clone, Copy, Debug)]
pub(super) struct QuestionPos {
    pub(super) qname_end: usize,
    pub(super) question_end: usize,
    pub(super) qtype: u16,
    pub(super) qclass: u16,
}

/// miekg's `DefaultMsgAcceptFunc` count rules.
#[inline]
pub(super) fn counts_acceptable(h: Header<'_>) -> bool {
    h.qdcount() == 1 && h.ancount() <= 1 && h.nscount() <= 1 && h.arcount() <= 2
}

/// Parses the question at offset 12. The name must be uncompressed. Like
/// miekg's `unpackQuestion`, a question that ends right after the name or
/// after the type is accepted with the missing fields as 0.
#[inline]
pub(super) fn parse_question(p: &[u8]) -> Option<QuestionPos> {
    let n = walk_uncompressed(p, HEADER_LEN, p.len()).ok()?;
    let mut off = n.end;
    let (mut qtype, mut qclass) = (0, 0);
    if off < p.len() {
        if off + 2 > p.len() {
            return None;
        }
        qtype = get_u16(p, off);
        off += 2;
        if off < p.len() {
            if off + 2 > p.len() {
                return None;
            }
            qclass = get_u16(p, off);
            off += 2;
        }
    }
    Some(QuestionPos {
        qname_end: n.end,
        question_end: off,
        qtype,
        qclass,
    })
}

/// RDATA checks for the types that can legitimately appear in a query
/// (NOTIFY's SOA, IXFR's SOA, address and name records), mirroring where
/// miekg's unpack would fail. Other types are only bounds-checked.
fn rdata_valid(msg: &[u8], r: &Record) -> bool {
    let (start, end) = (r.rdata.start, r.rdata.end);
    if start == end {
        return true; // miekg: no RDATA to unpack
    }
    let name_at = |o: usize| walk_compressed(msg, o, end).ok().map(|w| w.end);
    match r.rtype {
        rtype::A => end - start == 4,
        rtype::AAAA => end - start == 16,
        // NS, MD, MF, CNAME, MB, MG, MR, PTR, DNAME: one name.
        2..=5 | 7..=9 | rtype::PTR | rtype::DNAME => name_at(start) == Some(end),
        rtype::SOA => {
            let Some(mut o) = name_at(start) else {
                return false;
            };
            if o == end {
                return true;
            }
            match name_at(o) {
                Some(e) => o = e,
                None => return false,
            }
            for _ in 0..5 {
                if o == end {
                    return true;
                }
                if o + 4 > end {
                    return false;
                }
                o += 4;
            }
            o == end
        }
        rtype::OPT => options_valid(&msg[start..end]),
        _ => true,
    }
}

impl<'a> Query<'a> {
    /// Parses and accepts a query datagram the way miekg/dns + CoreDNS do.
    ///
    /// * shorter than 12 bytes, or QR=1 → [`Reject::Drop`]
    /// * opcode not QUERY/NOTIFY → [`Reject::NotImp`]
    /// * QDCOUNT≠1, ANCOUNT>1, NSCOUNT>1, ARCOUNT>2 → [`Reject::FormErr`]
    /// * a bare header (QDCOUNT=1, no body) → [`Reject::ServFail`]
    /// * body that does not unpack → [`Reject::FormErr`]: bad or compressed
    ///   question name, label/name too long, bad pointers (loops, forward,
    ///   into the header), record past the end, malformed OPT options, an
    ///   OPT outside the additional section, with a non-root owner, or more
    ///   than one OPT.
    ///
    /// Like miekg, counts larger than the records present are tolerated
    /// when the message ends exactly on a record boundary, and bytes after
    /// the last counted record are ignored.
    // Inlined (into `runtime::serve::route`): returned through memory, the result was
    // written field by field and read back with wide loads, two store-forwarding stalls per
    // query (about 1 % of a cache hit's CPU in a profile).
    #[inline(always)]
    pub fn parse(packet: &'a [u8]) -> Result<Query<'a>, Reject> {
        let Some(h) = Header::of(packet) else {
            return Err(Reject::Drop);
        };
        if h.qr() {
            return Err(Reject::Drop);
        }
        let op = h.opcode();
        if op != opcode::QUERY && op != opcode::NOTIFY {
            return Err(Reject::NotImp);
        }
        if !counts_acceptable(h) {
            return Err(Reject::FormErr);
        }
        if packet.len() == HEADER_LEN {
            return Err(Reject::ServFail);
        }
        let q = parse_question(packet).ok_or(Reject::FormErr)?;
        let mut off = q.question_end;
        let mut opt_ttl = 0;
        let mut opt = Opt::NONE;
        for section in Section::ALL {
            for _ in 0..h.count(section) {
                if off == packet.len() {
                    break; // miekg: "l is a lie"
                }
                let r = parse_rr(packet, off, section).map_err(|_| Reject::FormErr)?;
                if !rdata_valid(packet, &r) {
                    return Err(Reject::FormErr);
                }
                if r.rtype == rtype::OPT {
                    if section != Section::Additional || opt_ttl != 0 || r.owner_wire_len != 1 {
                        return Err(Reject::FormErr);
                    }
                    // Under 64 KiB: the message's length is a u16 over TCP, a UDP payload's too.
                    opt_ttl = u16::try_from(r.ttl_offset).map_err(|_| Reject::FormErr)?;
                    opt = Opt::at(packet, r.ttl_offset);
                }
                off = r.range.end;
            }
        }
        Ok(Query {
            packet,
            qname_end: q.qname_end as u16,
            question_end: q.question_end as u16,
            qtype: q.qtype,
            qclass: q.qclass,
            opt_ttl,
            udp_size: opt.udp_size,
            opt_flags: opt.flags,
            ext_rcode: opt.ext_rcode,
            version: opt.version,
        })
    }

    /// The raw datagram.
    #[inline]
    pub fn packet(&self) -> &'a [u8] {
        self.packet
    }

    /// The query's header, for the fields the methods below do not name.
    #[inline]
    pub fn header(&self) -> Header<'a> {
        Header::new(self.packet)
    }

    /// Message ID.
    #[inline]
    pub fn id(&self) -> u16 {
        self.header().id()
    }

    /// The raw 16-bit flags word (see [`flags`](super::flags)).
    #[inline]
    pub fn flags(&self) -> u16 {
        self.header().flags()
    }

    /// Opcode (QUERY or NOTIFY after a successful parse).
    #[inline]
    pub fn opcode(&self) -> u8 {
        self.header().opcode()
    }

    /// Recursion Desired.
    #[inline]
    pub fn rd(&self) -> bool {
        self.header().rd()
    }

    /// Checking Disabled.
    #[inline]
    pub fn cd(&self) -> bool {
        self.header().cd()
    }

    /// Authentic Data bit as sent by the client.
    #[inline]
    pub fn ad(&self) -> bool {
        self.header().ad()
    }

    /// The question name in wire form, client's case.
    #[inline]
    pub fn qname_bytes(&self) -> &'a [u8] {
        &self.packet[HEADER_LEN..usize::from(self.qname_end)]
    }

    /// The question name as a [`Name`].
    #[inline]
    pub fn qname(&self) -> Name<'a> {
        Name::from_wire_unchecked(self.qname_bytes())
    }

    /// Question type (0 when the client omitted it, as miekg tolerates).
    #[inline]
    pub fn qtype(&self) -> u16 {
        self.qtype
    }

    /// Question class (0 when the client omitted it, as miekg tolerates).
    #[inline]
    pub fn qclass(&self) -> u16 {
        self.qclass
    }

    /// The whole question entry verbatim (name, type, class): what replies
    /// echo. Shorter than name+4 only in the tolerated truncated case.
    #[inline]
    pub fn question_bytes(&self) -> &'a [u8] {
        &self.packet[HEADER_LEN..usize::from(self.question_end)]
    }

    /// The OPT record, if the query has one.
    #[inline]
    pub fn opt(&self) -> Option<Opt<'a>> {
        if self.opt_ttl == 0 {
            return None;
        }
        let rdata = usize::from(self.opt_ttl) + 6;
        let len = usize::from(super::be::get_u16(self.packet, rdata - 2));
        Some(Opt {
            udp_size: self.udp_size,
            ext_rcode: self.ext_rcode,
            version: self.version,
            do_bit: self.opt_flags & 0x8000 != 0,
            flags: self.opt_flags,
            options: &self.packet[rdata..rdata + len],
        })
    }

    /// The DO bit (false without EDNS).
    #[inline]
    pub fn do_bit(&self) -> bool {
        self.opt_flags & 0x8000 != 0
    }

    /// The data of EDNS option `code` in the query, if present.
    #[inline]
    pub fn edns_option(&self, code: u16) -> Option<&'a [u8]> {
        self.opt().and_then(|o| o.option(code))
    }

    /// CoreDNS `Size()` for UDP: the advertised size floored at 512; 512
    /// without EDNS.
    #[inline]
    pub fn udp_reply_size(&self) -> usize {
        if self.opt_ttl == 0 {
            MIN_UDP_SIZE
        } else {
            usize::from(self.udp_size).max(MIN_UDP_SIZE)
        }
    }

    /// CoreDNS `Size()`: 65535 over TCP, [`Query::udp_reply_size`] over UDP.
    #[inline]
    pub fn max_reply_size(&self, tcp: bool) -> usize {
        if tcp {
            MAX_MSG_SIZE
        } else {
            self.udp_reply_size()
        }
    }

    /// Whether the query is signed: its last record is a TSIG (RFC 8945 §5.1 puts it last
    /// in the additional section). For plugins that edit queries or replies and must leave
    /// signed messages alone, or the MAC breaks. A query without additional records
    /// answers from its header.
    pub fn has_tsig(&self) -> bool {
        if Header::new(self.packet).arcount() == 0 {
            return false;
        }
        super::records::records(self.packet)
            .map(|it| it.flatten().last().is_some_and(|r| r.rtype == rtype::TSIG))
            .unwrap_or(false)
    }

    /// True when CoreDNS answers BADVERS (EDNS version other than 0).
    #[inline]
    pub fn bad_edns_version(&self) -> bool {
        self.version != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::{class, edns, flags};
    use crate::header::write_header;
    use crate::reject_reply;

    /// Builds a query: header with `flags` and counts, question `name`
    /// type/class, then `rest` appended verbatim.
    fn build(flag_word: u16, counts: [u16; 4], question: &[u8], rest: &[u8]) -> Vec<u8> {
        let mut p = Vec::new();
        write_header(&mut p, 0xBEEF, flag_word, counts);
        p.extend_from_slice(question);
        p.extend_from_slice(rest);
        p
    }

    #[test]
    fn a_query_is_four_whole_words() {
        // See the layout note on `Query`: holes made its every move stall.
        assert_eq!(std::mem::size_of::<Query<'_>>(), 32);
    }

    const Q: &[u8] = b"\x03WwW\x07example\x03org\x00\x00\x01\x00\x01";

    fn opt_rr(udp: u16, ext: u8, ver: u8, fl: u16, opts: &[u8]) -> Vec<u8> {
        let mut v = vec![0, 0, 41];
        v.extend_from_slice(&udp.to_be_bytes());
        v.extend_from_slice(&[ext, ver]);
        v.extend_from_slice(&fl.to_be_bytes());
        v.extend_from_slice(&(opts.len() as u16).to_be_bytes());
        v.extend_from_slice(opts);
        v
    }

    fn std_query() -> Vec<u8> {
        build(flags::RD, [1, 0, 0, 0], Q, &[])
    }

    #[test]
    fn accepts_plain_query() {
        let p = std_query();
        let q = Query::parse(&p).unwrap();
        assert_eq!(q.id(), 0xBEEF);
        assert!(q.rd());
        assert!(!q.cd());
        assert_eq!(q.opcode(), opcode::QUERY);
        assert_eq!(q.qtype(), rtype::A);
        assert_eq!(q.qclass(), class::IN);
        assert_eq!(q.qname_bytes(), b"\x03WwW\x07example\x03org\x00");
        assert_eq!(q.qname().to_string(), "WwW.example.org.");
        assert_eq!(q.question_bytes(), Q);
        assert!(q.opt().is_none());
        assert_eq!(q.udp_reply_size(), 512);
        assert_eq!(q.max_reply_size(true), 65535);
        assert_eq!(q.packet(), &p[..]);
    }

    #[test]
    fn drop_rules() {
        assert_eq!(Query::parse(&[]).unwrap_err(), Reject::Drop);
        assert_eq!(Query::parse(&[0; 11]).unwrap_err(), Reject::Drop);
        let p = build(flags::QR, [1, 0, 0, 0], Q, &[]);
        assert_eq!(Query::parse(&p).unwrap_err(), Reject::Drop);
        // QR wins over a bad opcode and bad counts.
        let p = build(flags::QR | (5 << 11), [9, 9, 9, 9], Q, &[]);
        assert_eq!(Query::parse(&p).unwrap_err(), Reject::Drop);
        assert_eq!(Reject::Drop.rcode(), None);
    }

    #[test]
    fn opcode_rules() {
        for op in 0u16..16 {
            let p = build(op << 11, [1, 0, 0, 0], Q, &[]);
            let r = Query::parse(&p);
            if op == 0 || op == 4 {
                assert!(r.is_ok(), "opcode {op}");
            } else {
                assert_eq!(r.unwrap_err(), Reject::NotImp, "opcode {op}");
            }
        }
        // NotImp is decided before the counts.
        let p = build(5 << 11, [0, 5, 5, 5], Q, &[]);
        assert_eq!(Query::parse(&p).unwrap_err(), Reject::NotImp);
        assert_eq!(Reject::NotImp.rcode(), Some(rcode::NOTIMP));
    }

    #[test]
    fn count_rules() {
        for (counts, ok) in [
            ([0, 0, 0, 0], false),
            ([2, 0, 0, 0], false),
            ([1, 2, 0, 0], false),
            ([1, 0, 2, 0], false),
            ([1, 0, 0, 3], false),
            ([1, 1, 1, 2], true),
        ] {
            let p = build(0, counts, Q, &[]);
            let r = Query::parse(&p);
            if ok {
                // counts above the records present, message ends on a
                // boundary: miekg tolerates it
                assert!(r.is_ok(), "{counts:?}");
            } else {
                assert_eq!(r.unwrap_err(), Reject::FormErr, "{counts:?}");
            }
        }
    }

    #[test]
    fn bare_header_is_servfail() {
        let p = build(flags::RD, [1, 0, 0, 0], &[], &[]);
        assert_eq!(Query::parse(&p).unwrap_err(), Reject::ServFail);
        let mut out = Vec::new();
        assert!(reject_reply(&p, rcode::SERVFAIL, &mut out));
        assert_eq!(out, vec![0xBE, 0xEF, 0x81, 0x02, 0, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn truncated_question_tolerated_like_miekg() {
        let name = b"\x01a\x00";
        let p = build(0, [1, 0, 0, 0], name, &[]);
        let q = Query::parse(&p).unwrap();
        assert_eq!((q.qtype(), q.qclass()), (0, 0));
        let p = build(0, [1, 0, 0, 0], name, &[0, 28]);
        let q = Query::parse(&p).unwrap();
        assert_eq!((q.qtype(), q.qclass()), (28, 0));
        // one stray byte is an error
        let p = build(0, [1, 0, 0, 0], name, &[0]);
        assert_eq!(Query::parse(&p).unwrap_err(), Reject::FormErr);
        let p = build(0, [1, 0, 0, 0], name, &[0, 1, 0]);
        assert_eq!(Query::parse(&p).unwrap_err(), Reject::FormErr);
    }

    #[test]
    fn bad_question_names() {
        let cases: &[&[u8]] = &[
            b"\x03ab",                      // label past end
            b"\x41abc\x00\x00\x01\x00\x01", // label type 01
            b"\x81abc\x00\x00\x01\x00\x01", // label type 10
            b"\xC0\x0C\x00\x01\x00\x01",    // pointer in the question
            b"\xC0\x04\x00\x01\x00\x01",    // pointer into the header
            b"\x01a",                       // no root
        ];
        for c in cases {
            let p = build(0, [1, 0, 0, 0], c, &[]);
            assert_eq!(Query::parse(&p).unwrap_err(), Reject::FormErr, "{c:?}");
        }
        // 255 octets is the limit
        let mut long = Vec::new();
        for _ in 0..3 {
            long.push(63);
            long.extend_from_slice(&[b'a'; 63]);
        }
        long.push(61);
        long.extend_from_slice(&[b'b'; 61]);
        long.push(0);
        assert_eq!(long.len(), 255);
        let mut q = long.clone();
        q.extend_from_slice(&[0, 1, 0, 1]);
        assert!(Query::parse(&build(0, [1, 0, 0, 0], &q, &[])).is_ok());
        let mut too_long = long[..long.len() - 1].to_vec();
        too_long.extend_from_slice(&[1, b'c', 0, 0, 1, 0, 1]);
        assert_eq!(
            Query::parse(&build(0, [1, 0, 0, 0], &too_long, &[])).unwrap_err(),
            Reject::FormErr
        );
    }

    #[test]
    fn edns_parsed() {
        let opts = [0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 3, 0, 0];
        let p = build(0, [1, 0, 0, 1], Q, &opt_rr(4096, 0, 0, 0x8000, &opts));
        let q = Query::parse(&p).unwrap();
        let o = q.opt().unwrap();
        assert_eq!(o.udp_size, 4096);
        assert!(o.do_bit);
        assert!(q.do_bit());
        assert_eq!(o.version, 0);
        assert_eq!(o.options, &opts);
        assert_eq!(
            q.edns_option(edns::COOKIE),
            Some(&[1, 2, 3, 4, 5, 6, 7, 8][..])
        );
        assert_eq!(q.edns_option(edns::NSID), Some(&[][..]));
        assert_eq!(q.edns_option(edns::PADDING), None);
        assert_eq!(o.iter().count(), 2);
        assert_eq!(q.udp_reply_size(), 4096);
        assert!(!q.bad_edns_version());
        // small advertised size floors at 512
        let p = build(0, [1, 0, 0, 1], Q, &opt_rr(100, 0, 1, 0, &[]));
        let q = Query::parse(&p).unwrap();
        assert_eq!(q.opt().unwrap().udp_size, 100);
        assert_eq!(q.udp_reply_size(), 512);
        assert!(q.bad_edns_version());
    }

    #[test]
    fn bad_opt_is_formerr() {
        let bad: Vec<Vec<u8>> = vec![
            // two OPTs
            [opt_rr(512, 0, 0, 0, &[]), opt_rr(512, 0, 0, 0, &[])].concat(),
            // OPT with a non-root owner
            {
                let mut v = b"\x01x".to_vec();
                v.extend_from_slice(&opt_rr(512, 0, 0, 0, &[]));
                v
            },
            // option header cut
            opt_rr(512, 0, 0, 0, &[0, 10, 0]),
            // option data past rdata
            opt_rr(512, 0, 0, 0, &[0, 10, 0, 9, 1, 2]),
            // bad ECS family / mask
            opt_rr(512, 0, 0, 0, &[0, 8, 0, 4, 0, 3, 24, 0]),
            opt_rr(512, 0, 0, 0, &[0, 8, 0, 4, 0, 1, 33, 0]),
            opt_rr(512, 0, 0, 0, &[0, 8, 0, 2, 0, 1]),
            opt_rr(512, 0, 0, 0, &[0, 8, 0, 4, 0, 0, 8, 0]),
            // keepalive with 1 byte, expire with 2, EDE with 1, UL with 5
            opt_rr(512, 0, 0, 0, &[0, 11, 0, 1, 0]),
            opt_rr(512, 0, 0, 0, &[0, 9, 0, 2, 0, 0]),
            opt_rr(512, 0, 0, 0, &[0, 15, 0, 1, 0]),
            opt_rr(512, 0, 0, 0, &[0, 2, 0, 5, 0, 0, 0, 0, 0]),
            // rdlength past the end
            {
                let mut v = opt_rr(512, 0, 0, 0, &[]);
                let n = v.len();
                v[n - 1] = 4;
                v
            },
        ];
        for (i, rest) in bad.iter().enumerate() {
            let p = build(0, [1, 0, 0, 2], Q, rest);
            assert_eq!(Query::parse(&p).unwrap_err(), Reject::FormErr, "case {i}");
        }
        // OPT in the answer / authority section
        let p = build(0, [1, 1, 0, 0], Q, &opt_rr(512, 0, 0, 0, &[]));
        assert_eq!(Query::parse(&p).unwrap_err(), Reject::FormErr);
        let p = build(0, [1, 0, 1, 0], Q, &opt_rr(512, 0, 0, 0, &[]));
        assert_eq!(Query::parse(&p).unwrap_err(), Reject::FormErr);
        // good ones: ECS family 0 / 1 / 2, keepalive empty and 2, expire 0/4
        for opts in [
            &[0, 8, 0, 4, 0, 0, 0, 0][..],
            &[0, 8, 0, 7, 0, 1, 24, 0, 10, 0, 0],
            &[0, 8, 0, 4, 0, 2, 0, 0],
            &[0, 11, 0, 0],
            &[0, 11, 0, 2, 0, 100],
            &[0, 9, 0, 0],
            &[0, 9, 0, 4, 0, 0, 0, 1],
            &[0xfd, 0xe9, 0, 1, 9],
        ] {
            let p = build(0, [1, 0, 0, 1], Q, &opt_rr(512, 0, 0, 0, opts));
            assert!(Query::parse(&p).is_ok(), "{opts:?}");
        }
        // an OPT owner that is a pointer to a root label is still the root
        let mut rest = vec![0xC0, 0x1C];
        rest.extend_from_slice(&opt_rr(512, 0, 0, 0, &[])[1..]);
        let p = build(0, [1, 0, 0, 1], Q, &rest);
        assert_eq!(p[0x1C], 0, "points at the question's root byte");
        assert!(Query::parse(&p).is_ok());
    }

    #[test]
    fn records_in_query_body() {
        // NOTIFY with a SOA in the answer (compressed owner), OPT + TSIG-ish
        // record in additional.
        let mut rest = vec![0xC0, 0x0C, 0, 6, 0, 1, 0, 0, 0, 60];
        let soa_rd = [
            &b"\x02ns\xC0\x10\x00"[..],
            &[0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5],
        ]
        .concat();
        rest.extend_from_slice(&(soa_rd.len() as u16).to_be_bytes());
        rest.extend_from_slice(&soa_rd);
        rest.extend_from_slice(&opt_rr(1232, 0, 0, 0, &[]));
        rest.extend_from_slice(b"\x03key\x00\x00\xfa\x00\xff\x00\x00\x00\x00\x00\x02\xAA\xBB");
        let p = build(4 << 11, [1, 1, 0, 2], Q, &rest);
        let q = Query::parse(&p).unwrap();
        assert_eq!(q.opcode(), opcode::NOTIFY);
        assert_eq!(q.opt().unwrap().udp_size, 1232);

        // record past the end
        let p = build(0, [1, 1, 0, 0], Q, &rest[..rest.len() - 50]);
        assert_eq!(Query::parse(&p).unwrap_err(), Reject::FormErr);
        // pointer loop / forward pointer in a record owner
        for owner in [&[0xC0u8, 0x1C][..], &[0xC0, 0x30]] {
            let mut r = owner.to_vec();
            r.extend_from_slice(&[0, 1, 0, 1, 0, 0, 0, 0, 0, 0]);
            let p = build(0, [1, 1, 0, 0], Q, &r);
            let res = Query::parse(&p);
            if owner[1] == 0x1C {
                assert!(res.is_ok(), "backward pointer to root byte");
            } else {
                assert_eq!(res.unwrap_err(), Reject::FormErr);
            }
        }
        let mut r = vec![0xC0, 0x21]; // the record starts at 0x21: points at itself
        r.extend_from_slice(&[0, 1, 0, 1, 0, 0, 0, 0, 0, 0]);
        let p = build(0, [1, 1, 0, 0], Q, &r);
        assert_eq!(p[0x21], 0xC0);
        assert_eq!(Query::parse(&p).unwrap_err(), Reject::FormErr);
        // A record with a 3-byte address
        let mut r = vec![0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0, 0, 0, 3, 1, 2, 3];
        let p = build(0, [1, 1, 0, 0], Q, &r);
        assert_eq!(Query::parse(&p).unwrap_err(), Reject::FormErr);
        r[11] = 4;
        r.push(4);
        assert!(Query::parse(&build(0, [1, 1, 0, 0], Q, &r)).is_ok());
        // trailing garbage after the counted records is ignored
        let p = build(0, [1, 0, 0, 0], Q, &[1, 2, 3]);
        assert!(Query::parse(&p).is_ok());
    }
}
