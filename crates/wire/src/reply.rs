//! What a client asks of a reply it received: is it the answer to my query,
//! did the server reject the query, what is its full rcode. Forwarding and
//! caching ask the same questions of an upstream's or a plugin's reply;
//! the answers live here once, on the wire bytes, without allocating.
//!
//! `question` is always a query's question entry as sent (name, type,
//! class: [`Query::question_bytes`](super::Query::question_bytes)).

use super::consts::{QUESTION_OFFSET, rtype};
use super::header::{Header, Section};
use super::records::records;

/// True when `reply` has exactly one question and it is `question`: the
/// name without regard to ASCII case (a server may answer in its own case,
/// or echo a 0x20-randomised one), type and class exactly.
#[inline]
pub fn repeats_question(reply: &[u8], question: &[u8]) -> bool {
    let n = question.len();
    let Some(h) = Header::of(reply) else {
        return false;
    };
    let at = QUESTION_OFFSET;
    n >= 4
        && h.qdcount() == 1
        && reply.len() >= at + n
        && reply[at..at + n - 4].eq_ignore_ascii_case(&question[..n - 4])
        && reply[at + n - 4..at + n] == question[n - 4..]
}

/// The rcode of a response that carries no question and an error rcode:
/// a server's answer to a query it could not parse or will not take
/// (FORMERR, NOTIMP, REFUSED, …), which has no question to match. `None`
/// for anything else, including a message shorter than a header.
#[inline]
pub fn rejection(reply: &[u8]) -> Option<u8> {
    let h = Header::of(reply)?;
    (h.qr() && h.qdcount() == 0 && h.rcode() != 0).then_some(h.rcode())
}

/// True when `reply` answers the query sent with ID `id` and `question`:
/// a response (QR), the same ID, and the question repeated
/// ([`repeats_question`]). Anything else is stale, spoofed or for another
/// query, and a client keeps waiting.
#[inline]
pub fn answers(reply: &[u8], id: u16, question: &[u8]) -> bool {
    Header::of(reply).is_some_and(|h| h.qr() && h.id() == id) && repeats_question(reply, question)
}

/// True when `reply` settles the query sent with ID `id` and `question`:
/// it [`answers`] it, or it has that ID and is a [`rejection`].
#[inline]
pub fn answers_or_rejects(reply: &[u8], id: u16, question: &[u8]) -> bool {
    answers(reply, id, question)
        || (Header::of(reply).is_some_and(|h| h.id() == id) && rejection(reply).is_some())
}

/// The reply's full rcode: the header's 4 bits, plus the extended rcode of
/// the OPT record in the additional section shifted above them (BADVERS,
/// BADCOOKIE, …), as miekg/dns `Msg.Rcode` reads it. A reply without
/// additional records costs no walk; one whose records do not walk counts
/// as having no OPT. `None` when `reply` is shorter than a header.
pub fn full_rcode(reply: &[u8]) -> Option<u16> {
    let h = Header::of(reply)?;
    let low = u16::from(h.rcode());
    if h.arcount() == 0 {
        return Some(low);
    }
    let ext = records(reply)
        .ok()
        .and_then(|rs| {
            rs.flatten()
                .find(|r| r.section == Section::Additional && r.rtype == rtype::OPT)
                .map(|r| reply[r.ttl_offset])
        })
        .unwrap_or(0);
    Some((u16::from(ext) << 4) | low)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::{flags, rcode};
    use crate::header::write_header;

    /// `Example.org. A IN`, as a query sends it.
    const QUESTION: &[u8] = b"\x07Example\x03org\x00\x00\x01\x00\x01";

    fn msg(id: u16, flag_word: u16, counts: [u16; 4], body: &[&[u8]]) -> Vec<u8> {
        let mut m = Vec::new();
        write_header(&mut m, id, flag_word, counts);
        for b in body {
            m.extend_from_slice(b);
        }
        m
    }

    fn reply(question: &[u8]) -> Vec<u8> {
        msg(7, flags::QR | flags::RD, [1, 0, 0, 0], &[question])
    }

    #[test]
    fn the_question_is_matched_ignoring_only_the_case_of_the_name() {
        assert!(repeats_question(&reply(QUESTION), QUESTION));
        let upper = b"\x07EXAMPLE\x03ORG\x00\x00\x01\x00\x01";
        assert!(repeats_question(&reply(upper), QUESTION));
        let other_type = b"\x07Example\x03org\x00\x00\x1c\x00\x01";
        assert!(!repeats_question(&reply(other_type), QUESTION));
        let other_class = b"\x07Example\x03org\x00\x00\x01\x00\x03";
        assert!(!repeats_question(&reply(other_class), QUESTION));
        let other_name = b"\x07Example\x03net\x00\x00\x01\x00\x01";
        assert!(!repeats_question(&reply(other_name), QUESTION));
    }

    #[test]
    fn one_question_exactly_and_all_of_it() {
        let two = msg(7, flags::QR, [2, 0, 0, 0], &[QUESTION, QUESTION]);
        assert!(!repeats_question(&two, QUESTION));
        let none = msg(7, flags::QR, [0, 0, 0, 0], &[QUESTION]);
        assert!(!repeats_question(&none, QUESTION));
        let r = reply(QUESTION);
        assert!(!repeats_question(&r[..r.len() - 1], QUESTION), "cut short");
        assert!(!repeats_question(&r[..11], QUESTION), "no header");
        assert!(!repeats_question(&r, &QUESTION[..3]), "no type and class");
    }

    #[test]
    fn a_rejection_is_a_response_without_question_and_with_an_error() {
        let formerr = msg(7, flags::QR | u16::from(rcode::FORMERR), [0; 4], &[]);
        assert_eq!(rejection(&formerr), Some(rcode::FORMERR));
        let refused = msg(7, flags::QR | u16::from(rcode::REFUSED), [0; 4], &[]);
        assert_eq!(rejection(&refused), Some(rcode::REFUSED));
        let noerror = msg(7, flags::QR, [0; 4], &[]);
        assert_eq!(rejection(&noerror), None, "no error");
        let query = msg(7, u16::from(rcode::FORMERR), [0; 4], &[]);
        assert_eq!(rejection(&query), None, "not a response");
        let with_question = msg(7, flags::QR | 2, [1, 0, 0, 0], &[QUESTION]);
        assert_eq!(rejection(&with_question), None, "has a question");
        assert_eq!(rejection(&formerr[..11]), None, "no header");
    }

    #[test]
    fn an_answer_has_qr_the_id_and_the_question() {
        let r = reply(QUESTION);
        assert!(answers(&r, 7, QUESTION));
        assert!(!answers(&r, 8, QUESTION), "another ID");
        let query = msg(7, flags::RD, [1, 0, 0, 0], &[QUESTION]);
        assert!(
            !answers(&query, 7, QUESTION),
            "QR clear: our own query echoed"
        );
        let other = b"\x07Example\x03org\x00\x00\x1c\x00\x01";
        assert!(!answers(&reply(other), 7, QUESTION));
    }

    #[test]
    fn a_rejection_with_the_id_settles_the_query_too() {
        let formerr = msg(7, flags::QR | 1, [0; 4], &[]);
        assert!(!answers(&formerr, 7, QUESTION));
        assert!(answers_or_rejects(&formerr, 7, QUESTION));
        assert!(!answers_or_rejects(&formerr, 9, QUESTION), "another ID");
        assert!(answers_or_rejects(&reply(QUESTION), 7, QUESTION));
        let other = b"\x07Example\x03net\x00\x00\x01\x00\x01";
        assert!(!answers_or_rejects(&reply(other), 7, QUESTION));
        let noerror = msg(7, flags::QR, [0; 4], &[]);
        assert!(!answers_or_rejects(&noerror, 7, QUESTION));
    }

    #[test]
    fn the_full_rcode_adds_the_opt_s_upper_bits() {
        // OPT with extended rcode 1: BADVERS (16) over a header rcode 0.
        let opt = |ext: u8| [0, 0, 41, 4, 0xD0, ext, 0, 0, 0, 0, 0];
        let badvers = msg(7, flags::QR, [1, 0, 0, 1], &[QUESTION, &opt(1)]);
        assert_eq!(full_rcode(&badvers), Some(u16::from(rcode::BADVERS)));
        // BADCOOKIE (23) = 1 << 4 | 7.
        let badcookie = msg(7, flags::QR | 7, [1, 0, 0, 1], &[QUESTION, &opt(1)]);
        assert_eq!(full_rcode(&badcookie), Some(u16::from(rcode::BADCOOKIE)));
        let plain = msg(7, flags::QR | 3, [1, 0, 0, 1], &[QUESTION, &opt(0)]);
        assert_eq!(full_rcode(&plain), Some(3));
        let no_opt = msg(7, flags::QR | 2, [1, 0, 0, 0], &[QUESTION]);
        assert_eq!(full_rcode(&no_opt), Some(2));
        assert_eq!(full_rcode(&no_opt[..11]), None);
    }

    #[test]
    fn only_the_additional_section_s_opt_counts() {
        // The same OPT bytes counted as an answer record, and an A record as the
        // additional one: not EDNS.
        let opt = [0, 0, 41, 4, 0xD0, 1, 0, 0, 0, 0, 0];
        let a = b"\xC0\x0C\x00\x01\x00\x01\x00\x00\x00\x3C\x00\x04\xC0\x00\x02\x01";
        let misplaced = msg(7, flags::QR, [1, 1, 0, 1], &[QUESTION, &opt, a]);
        assert_eq!(full_rcode(&misplaced), Some(0));
        // An ARCOUNT the records do not have: the walk fails, no OPT.
        let lying = msg(7, flags::QR | 5, [1, 0, 0, 1], &[QUESTION, &opt[..5]]);
        assert_eq!(full_rcode(&lying), Some(5));
    }
}
