//! The header-only replies written before any plugin runs: the ones
//! miekg/dns sends for a query it rejects (FORMERR, NOTIMP, SERVFAIL) and
//! CoreDNS's BADVERS for an EDNS version it does not speak.

use super::consts::{HEADER_LEN, flags, opcode, rcode};
use super::header::{Header, write_header};
use super::query::{Query, counts_acceptable, parse_question};

/// Writes the reply miekg/CoreDNS sends for a rejected query into `out`
/// (cleared first) and returns true, or returns false when `packet` is too
/// short to answer (nothing is written).
///
/// * `FORMERR` (miekg `SetRcodeFormatError`): ID echoed, QR=1, opcode 0,
///   AA and Z cleared, TC/RD/RA/AD/CD echoed, no records. The question is
///   echoed only when the header passed the accept checks and the question
///   unpacked (miekg keeps `req.Question` when a later section failed).
/// * `NOTIMP`: as FORMERR but the opcode is echoed and no question.
/// * any other rcode (SERVFAIL for [`Reject::ServFail`](super::Reject::ServFail)): miekg `SetRcode`:
///   ID and opcode echoed, RD/CD echoed for QUERY, question echoed if it
///   parses.
///
/// Only the low 4 bits of `rcode` are written; no OPT is added.
pub fn reject_reply(packet: &[u8], rcode: u8, out: &mut Vec<u8>) -> bool {
    let Some(h) = Header::of(packet) else {
        return false;
    };
    out.clear();
    let fl = h.flags();
    let op = h.opcode();
    let low = u16::from(rcode & 0xF);
    let echoed = fl & (flags::TC | flags::RD | flags::RA | flags::AD | flags::CD);
    let accepted_header =
        !h.qr() && (op == opcode::QUERY || op == opcode::NOTIFY) && counts_acceptable(h);
    let (word, question) = match rcode {
        rcode::FORMERR => (
            flags::QR | echoed | low,
            if accepted_header {
                parse_question(packet)
            } else {
                None
            },
        ),
        rcode::NOTIMP => (flags::QR | (fl & flags::OPCODE_MASK) | echoed | low, None),
        _ => {
            let mut w = flags::QR | (fl & flags::OPCODE_MASK) | low;
            if op == opcode::QUERY {
                w |= fl & (flags::RD | flags::CD);
            }
            (
                w,
                if h.qdcount() > 0 {
                    parse_question(packet)
                } else {
                    None
                },
            )
        }
    };
    write_header(out, h.id(), word, [u16::from(question.is_some()), 0, 0, 0]);
    if let Some(q) = question {
        out.extend_from_slice(&packet[HEADER_LEN..q.qname_end]);
        out.extend_from_slice(&q.qtype.to_be_bytes());
        out.extend_from_slice(&q.qclass.to_be_bytes());
    }
    true
}

/// Writes CoreDNS's BADVERS reply (`edns.Version`) into `out`: the header
/// of miekg `SetReply` (ID, QR, opcode, RD/CD for QUERY), the question
/// echoed, header rcode 0 and one OPT with extended rcode 1 (BADVERS = 16),
/// version 0, no flags, no options and UDP size 0 (CoreDNS builds a fresh
/// OPT and never sets its size). CoreDNS writes it without the ScrubWriter,
/// so do not pass it through [`finalize`](super::finalize()).
pub fn badvers_reply(query: &Query<'_>, out: &mut Vec<u8>) {
    out.clear();
    let op = query.opcode();
    let mut word = flags::QR | (u16::from(op & 0xF) << 11);
    if op == opcode::QUERY {
        word |= query.flags() & (flags::RD | flags::CD);
    }
    write_header(out, query.id(), word, [1, 0, 0, 1]);
    out.extend_from_slice(query.qname_bytes());
    out.extend_from_slice(&query.qtype().to_be_bytes());
    out.extend_from_slice(&query.qclass().to_be_bytes());
    out.extend_from_slice(&[0, 0, 41, 0, 0, 1, 0, 0, 0, 0, 0]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Reject;

    /// Builds a query: header with `flags` and counts, question `name`
    /// type/class, then `rest` appended verbatim.
    fn build(flag_word: u16, counts: [u16; 4], question: &[u8], rest: &[u8]) -> Vec<u8> {
        let mut p = Vec::new();
        write_header(&mut p, 0xBEEF, flag_word, counts);
        p.extend_from_slice(question);
        p.extend_from_slice(rest);
        p
    }

    const Q: &[u8] = b"\x03WwW\x07example\x03org\x00\x00\x01\x00\x01";

    #[test]
    fn formerr_reply_like_miekg() {
        let mut out = Vec::new();
        // bad counts: header only, opcode forced to 0, TC/RD/RA/AD/CD echoed,
        // AA and Z cleared
        let fl = (4 << 11)
            | flags::AA
            | flags::TC
            | flags::RD
            | flags::RA
            | flags::Z
            | flags::AD
            | flags::CD;
        let p = build(fl, [2, 0, 0, 0], Q, &[]);
        assert_eq!(Query::parse(&p).unwrap_err(), Reject::FormErr);
        assert!(reject_reply(&p, rcode::FORMERR, &mut out));
        let want_flags = flags::QR | flags::TC | flags::RD | flags::RA | flags::AD | flags::CD | 1;
        assert_eq!(
            out[..4],
            [0xBE, 0xEF, (want_flags >> 8) as u8, want_flags as u8]
        );
        assert_eq!(out[4..], [0; 8]);
        // body failure after a good question: the question is echoed
        let p = build(flags::RD, [1, 1, 0, 0], Q, &[0xC0]);
        assert_eq!(Query::parse(&p).unwrap_err(), Reject::FormErr);
        assert!(reject_reply(&p, rcode::FORMERR, &mut out));
        assert_eq!(out[..12], [0xBE, 0xEF, 0x81, 0x01, 0, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&out[12..], Q);
        // bad question: no question
        let p = build(0, [1, 0, 0, 0], b"\xC0\x0C\x00\x01\x00\x01", &[]);
        assert!(reject_reply(&p, rcode::FORMERR, &mut out));
        assert_eq!(out.len(), 12);
        assert_eq!(out[5], 0);
        // too short
        assert!(!reject_reply(&[1, 2, 3], rcode::FORMERR, &mut out));
    }

    #[test]
    fn notimp_reply_like_miekg() {
        let mut out = Vec::new();
        let p = build((5 << 11) | flags::RD | flags::AA, [1, 0, 0, 0], Q, &[]);
        assert_eq!(Query::parse(&p).unwrap_err(), Reject::NotImp);
        assert!(reject_reply(&p, rcode::NOTIMP, &mut out));
        let want = flags::QR | (5 << 11) | flags::RD | 4;
        assert_eq!(
            out,
            [&[0xBE, 0xEF][..], &want.to_be_bytes(), &[0; 8]].concat()
        );
    }

    #[test]
    fn badvers_reply_like_coredns() {
        // ID 7, RD, `Example.org. A IN`, an OPT for 2048 bytes with version 1 and DO.
        let mut p = Vec::new();
        write_header(&mut p, 7, flags::RD, [1, 0, 0, 1]);
        p.extend_from_slice(b"\x07Example\x03org\x00\x00\x01\x00\x01");
        p.extend_from_slice(&[0, 0, 41, 0x08, 0x00, 0, 1, 0x80, 0, 0, 0]);
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        badvers_reply(&q, &mut out);
        #[rustfmt::skip]
        let want: Vec<u8> = [
            &[0, 7, 0x81, 0x00, 0, 1, 0, 0, 0, 0, 0, 1][..],
            b"\x07Example\x03org\x00\x00\x01\x00\x01",
            &[0, 0, 41, 0, 0, 1, 0, 0, 0, 0, 0],
        ].concat();
        assert_eq!(out, want);
    }
}
