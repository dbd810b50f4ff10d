//! What CoreDNS's ScrubWriter does to every reply (`request.SizeAndDo` then
//! `Scrub`/miekg `Truncate`), done in place on the wire bytes.

use super::be::put_u16;
use super::consts::{MAX_MSG_SIZE, MIN_UDP_SIZE, edns, flags, rtype};
use super::header::{Header, HeaderMut, Section};
use super::opt::Opt;
use super::query::Query;
use super::records::records;

/// Position of the OPT record inside a reply.
#[derive(Clone, Copy, Debug)]
struct OptPos {
    start: usize,
    owner_end: usize,
    end: usize,
}

/// What `finalize` needs to know about a reply before touching it.
#[derive(Clone, Copy, Debug)]
struct Scan {
    /// End of the last counted record.
    end: usize,
    /// The last OPT of the additional section (miekg's `IsEdns0`).
    opt: Option<OptPos>,
    /// A TSIG record in the additional section: miekg does not truncate.
    has_tsig: bool,
}

fn scan(msg: &[u8]) -> Option<Scan> {
    let mut it = records(msg).ok()?;
    let mut opt = None;
    let mut has_tsig = false;
    for r in &mut it {
        let r = r.ok()?;
        if r.section == Section::Additional {
            if r.rtype == rtype::OPT {
                opt = Some(OptPos {
                    start: r.range.start,
                    owner_end: r.owner.end,
                    end: r.range.end,
                });
            } else if r.rtype == rtype::TSIG {
                has_tsig = true;
            }
        }
    }
    Some(Scan {
        end: it.offset(),
        opt,
        has_tsig,
    })
}

/// Applies CoreDNS's `SizeAndDo` + `Scrub` to a finished reply, in place.
///
/// * Query without OPT: the reply's additional section is left alone (an
///   OPT it carries stays).
/// * Query with OPT: the reply's OPT (the last one in the additional
///   section) is normalised in place — root owner, UDP size = the client's
///   advertised size, extended rcode kept (the reply's rcode >> 4),
///   version 0, DO copied from the query, other flags cleared, its options
///   kept. Without one, an OPT is appended with the query's options
///   filtered to NSID, EXPIRE, COOKIE, TCP-KEEPALIVE and PADDING (repacked
///   like miekg: EXPIRE cut to 4 bytes, a zero TCP-KEEPALIVE timeout
///   dropped).
/// * Truncation (`max_size` is floored at 512 and capped at 65535; pass
///   [`Query::max_reply_size`]): when the reply is longer, whole records
///   are kept in wire order (answer, authority, additional) while they fit
///   in `max_size` minus the OPT's length, the first one that does not fit
///   and all after it are dropped, counts are fixed, the OPT is kept (moved
///   right after the kept records) and TC is set. Replies carrying TSIG are
///   not truncated (as miekg).
///
/// A reply that fits is left byte-identical apart from the OPT handling;
/// no compression is attempted. Bytes after the last counted record are
/// dropped whenever the reply is modified or longer than `max_size` (they
/// alone may be what makes it longer). A reply that does not parse
/// (not produced by [`MessageWriter`](super::MessageWriter)) is left alone.
/// Never allocates when `reply` has room for the OPT.
pub fn finalize(reply: &mut Vec<u8>, query: &Query<'_>, max_size: usize) {
    let limit = max_size.clamp(MIN_UDP_SIZE, MAX_MSG_SIZE);
    if query.opt().is_none() && reply.len() <= limit {
        // Nothing to add and nothing to cut: the reply stays as it is (the walk below would
        // only find that out).
        return;
    }
    let Some(s) = scan(reply) else { return };
    let opt = match query.opt() {
        None => {
            if s.has_tsig {
                return;
            }
            // Bytes after the last counted record (an upstream's reply may carry them) go
            // first: they alone can make a reply whose records fit longer than the limit.
            reply.truncate(s.end);
            if s.end <= limit {
                return;
            }
            s.opt
        }
        Some(q) => {
            reply.truncate(s.end);
            let o = match s.opt {
                Some(o) => normalise_opt(reply, o, &q),
                None => match append_opt(reply, &q) {
                    Some(o) => o,
                    None => return,
                },
            };
            if reply.len() <= limit || s.has_tsig {
                return;
            }
            Some(o)
        }
    };
    truncate(reply, limit, opt);
}

/// Cuts a finished reply to `limit` bytes the way [`finalize`] truncates (whole records
/// dropped from the end, the OPT kept, TC set), for a reply the network path cannot carry
/// whole although the client's size allowed it. False when the reply does not parse, is
/// signed (TSIG: cutting it would leave an unsigned reply), or its question and OPT alone
/// are longer than `limit`.
pub fn fit(reply: &mut Vec<u8>, limit: usize) -> bool {
    if reply.len() <= limit {
        return true;
    }
    let Some(s) = scan(reply).filter(|s| !s.has_tsig) else {
        return false;
    };
    reply.truncate(s.end);
    truncate(reply, limit, s.opt);
    reply.len() <= limit
}

/// Rewrites the reply's OPT fixed fields for an EDNS client. The owner is
/// made a literal root when the OPT is the last record (nothing follows
/// that could point into shifted bytes); elsewhere it is left as it is.
fn normalise_opt(reply: &mut Vec<u8>, o: OptPos, q: &Opt<'_>) -> OptPos {
    let f = o.owner_end; // type at f, class f+2, ttl f+4..f+8
    put_u16(reply, f + 2, q.udp_size);
    // f+4: extended rcode, kept.
    reply[f + 5] = 0;
    reply[f + 6] = if q.do_bit { 0x80 } else { 0 };
    reply[f + 7] = 0;
    if o.owner_end - o.start != 1 && o.end == reply.len() {
        reply[o.start] = 0;
        reply.copy_within(o.owner_end..o.end, o.start + 1);
        let end = o.start + 1 + (o.end - o.owner_end);
        reply.truncate(end);
        return OptPos {
            start: o.start,
            owner_end: o.start + 1,
            end,
        };
    }
    o
}

/// Appends the request's OPT (CoreDNS reuses it) with version 0, flags
/// cleared except DO, and the supported options.
fn append_opt(reply: &mut Vec<u8>, q: &Opt<'_>) -> Option<OptPos> {
    let ar = Header::new(reply).arcount();
    if ar == u16::MAX {
        return None;
    }
    let start = reply.len();
    reply.extend_from_slice(&[0, 0, 41]);
    reply.extend_from_slice(&q.udp_size.to_be_bytes());
    reply.extend_from_slice(&[0, 0, if q.do_bit { 0x80 } else { 0 }, 0, 0, 0]);
    let rd_start = reply.len();
    for (code, data) in q.iter() {
        if !edns::SUPPORTED.contains(&code) {
            continue;
        }
        let data = match code {
            edns::EXPIRE if data.len() > 4 => &data[..4],
            edns::TCP_KEEPALIVE if data == [0, 0] => &[][..],
            _ => data,
        };
        reply.extend_from_slice(&code.to_be_bytes());
        reply.extend_from_slice(&(data.len() as u16).to_be_bytes());
        reply.extend_from_slice(data);
    }
    // The kept options are a subset of the query's OPT RDATA: fits in u16.
    let rdlen = (reply.len() - rd_start) as u16;
    put_u16(reply, rd_start - 2, rdlen);
    HeaderMut::new(reply).set_count(Section::Additional, ar + 1);
    Some(OptPos {
        start,
        owner_end: start + 1,
        end: reply.len(),
    })
}

/// miekg `Truncate` on wire bytes (see [`finalize`]).
fn truncate(reply: &mut Vec<u8>, limit: usize, opt: Option<OptPos>) {
    let opt_len = opt.map_or(0, |o| o.end - o.start);
    let budget = limit.saturating_sub(opt_len);
    let Ok(mut it) = records(reply) else { return };
    let mut total = it.question_end();
    let mut cut = total;
    let mut kept = [0u16; 3];
    let mut dropped = false;
    for r in &mut it {
        let Ok(r) = r else { return };
        if opt.is_some_and(|o| o.start == r.range.start) {
            continue;
        }
        let len = r.range.len();
        if total + len > budget {
            dropped = true;
            break;
        }
        total += len;
        cut = r.range.end;
        kept[r.section as usize] += 1;
    }
    if !dropped {
        return;
    }
    let new_len = match opt {
        Some(o) if o.start >= cut => {
            // Move the OPT down to the cut with a literal root owner (a
            // pointer owner could aim into the dropped bytes).
            reply[cut] = 0;
            reply.copy_within(o.owner_end..o.end, cut + 1);
            cut + 1 + (o.end - o.owner_end)
        }
        _ => cut,
    };
    reply.truncate(new_len);
    let mut h = HeaderMut::new(reply);
    h.set_count(Section::Answer, kept[0]);
    h.set_count(Section::Authority, kept[1]);
    h.set_count(Section::Additional, kept[2] + u16::from(opt.is_some()));
    h.set_flag(flags::TC, true);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::be::get_u16;
    use crate::consts::{class, rcode};
    use crate::header::write_header;
    use crate::writer::{MessageWriter, Owner};

    fn opt_rr(udp: u16, ext: u8, ver: u8, fl: u16, opts: &[u8]) -> Vec<u8> {
        let mut v = vec![0, 0, 41];
        v.extend_from_slice(&udp.to_be_bytes());
        v.extend_from_slice(&[ext, ver]);
        v.extend_from_slice(&fl.to_be_bytes());
        v.extend_from_slice(&(opts.len() as u16).to_be_bytes());
        v.extend_from_slice(opts);
        v
    }

    fn query(opt: Option<Vec<u8>>) -> Vec<u8> {
        let mut p = Vec::new();
        write_header(&mut p, 7, flags::RD, [1, 0, 0, u16::from(opt.is_some())]);
        p.extend_from_slice(b"\x07Example\x03org\x00\x00\x01\x00\x01");
        if let Some(o) = opt {
            p.extend_from_slice(&o);
        }
        p
    }

    fn reply_with_a(q: &Query<'_>, out: &mut Vec<u8>, n: u8) {
        let mut w = MessageWriter::reply(q, out, rcode::NOERROR);
        for i in 0..n {
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

    fn opt_of(msg: &[u8]) -> Option<(u16, [u8; 4], Vec<u8>)> {
        let mut found = None;
        for r in records(msg).unwrap() {
            let r = r.unwrap();
            if r.rtype == rtype::OPT {
                assert_eq!(r.owner.len(), 1);
                assert_eq!(msg[r.owner.start], 0);
                let t = r.ttl_offset;
                found = Some((
                    r.class,
                    [msg[t], msg[t + 1], msg[t + 2], msg[t + 3]],
                    msg[r.rdata.clone()].to_vec(),
                ));
            }
        }
        found
    }

    #[test]
    fn no_edns_no_opt_added() {
        let p = query(None);
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        reply_with_a(&q, &mut out, 2);
        let before = out.clone();
        finalize(&mut out, &q, q.udp_reply_size());
        assert_eq!(out, before);
    }

    #[test]
    fn no_edns_reply_opt_kept() {
        let p = query(None);
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        let mut w = MessageWriter::reply(&q, &mut out, rcode::NOERROR);
        w.push(
            Section::Additional,
            Owner::Wire(&[0]),
            rtype::OPT,
            4096,
            0x0100_8000,
            &[0, 3, 0, 1, b'x'],
        )
        .unwrap();
        w.finish();
        let before = out.clone();
        finalize(&mut out, &q, 512);
        assert_eq!(out, before);
    }

    #[test]
    fn opt_added_with_filtered_options() {
        // COOKIE, ECS (not echoed), NSID, EXPIRE with 6 bytes, keepalive 0,
        // padding, a local option (not echoed)
        let opts: Vec<u8> = [
            &[0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8][..],
            &[0, 8, 0, 7, 0, 1, 24, 0, 192, 0, 2],
            &[0, 3, 0, 0],
            &[0, 9, 0, 6, 0, 0, 0, 9, 0xEE, 0xEE],
            &[0, 11, 0, 2, 0, 0],
            &[0, 12, 0, 2, 0, 0],
            &[0xfd, 0xe9, 0, 1, 7],
        ]
        .concat();
        let p = query(Some(opt_rr(1232, 0, 0, 0x8000 | 0x4000 | 0x0001, &opts)));
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        reply_with_a(&q, &mut out, 1);
        let len_before = out.len();
        finalize(&mut out, &q, q.udp_reply_size());
        let (udp, ttl, rd) = opt_of(&out).unwrap();
        assert_eq!(udp, 1232);
        assert_eq!(ttl, [0, 0, 0x80, 0], "DO copied, other flags cleared");
        let want: Vec<u8> = [
            &[0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8][..],
            &[0, 3, 0, 0],
            &[0, 9, 0, 4, 0, 0, 0, 9],
            &[0, 11, 0, 0],
            &[0, 12, 0, 2, 0, 0],
        ]
        .concat();
        assert_eq!(rd, want);
        assert_eq!(get_u16(&out, 10), 1);
        assert_eq!(out.len(), len_before + 11 + want.len());
        // idempotent
        let again = out.clone();
        finalize(&mut out, &q, q.udp_reply_size());
        assert_eq!(out, again);
    }

    #[test]
    fn reply_opt_normalised_and_options_kept() {
        let p = query(Some(opt_rr(4000, 0, 0, 0, &[0, 3, 0, 0])));
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        let mut w = MessageWriter::reply(&q, &mut out, rcode::NOERROR);
        // an NSID answer as the nsid plugin would add it, odd flags set
        w.push(
            Section::Additional,
            Owner::Wire(&[0]),
            rtype::OPT,
            512,
            0x0007_FFFF,
            &[0, 3, 0, 2, b'h', b'i'],
        )
        .unwrap();
        w.finish();
        finalize(&mut out, &q, q.udp_reply_size());
        let (udp, ttl, rd) = opt_of(&out).unwrap();
        assert_eq!(udp, 4000);
        assert_eq!(ttl, [0, 0, 0, 0]);
        assert_eq!(rd, vec![0, 3, 0, 2, b'h', b'i']);
        assert_eq!(get_u16(&out, 10), 1);
    }

    #[test]
    fn reply_opt_with_pointer_owner_becomes_root() {
        let p = query(Some(opt_rr(1400, 0, 0, 0x8000, &[])));
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        reply_with_a(&q, &mut out, 1);
        // OPT whose owner points at the question's root byte (offset 24)
        assert_eq!(out[24], 0);
        out.extend_from_slice(&[0xC0, 24]);
        out.extend_from_slice(&opt_rr(512, 0, 0, 0, &[0, 10, 0, 8, 9, 9, 9, 9, 9, 9, 9, 9])[1..]);
        out[11] = 1;
        finalize(&mut out, &q, q.udp_reply_size());
        let (udp, ttl, rd) = opt_of(&out).unwrap();
        assert_eq!((udp, ttl), (1400, [0, 0, 0x80, 0]));
        assert_eq!(rd, vec![0, 10, 0, 8, 9, 9, 9, 9, 9, 9, 9, 9]);
    }

    #[test]
    fn badvers_via_writer_and_finalize() {
        let p = query(Some(opt_rr(
            2048,
            0,
            1,
            0x8000,
            &[0, 10, 0, 8, 1, 1, 1, 1, 1, 1, 1, 1],
        )));
        let q = Query::parse(&p).unwrap();
        assert!(q.bad_edns_version());
        let mut out = Vec::new();
        MessageWriter::reply(&q, &mut out, rcode::BADVERS).finish();
        finalize(&mut out, &q, q.udp_reply_size());
        assert_eq!(out[3] & 0xF, 0);
        let (udp, ttl, rd) = opt_of(&out).unwrap();
        assert_eq!((udp, ttl), (2048, [1, 0, 0x80, 0]));
        assert!(rd.is_empty());
    }

    #[test]
    fn truncates_to_512_without_edns() {
        let p = query(None);
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::with_capacity(4096);
        reply_with_a(&q, &mut out, 40);
        assert!(out.len() > 512);
        finalize(&mut out, &q, q.udp_reply_size());
        assert!(out.len() <= 512);
        assert_ne!(get_u16(&out, 2) & flags::TC, 0);
        let n = get_u16(&out, 6) as usize;
        // header 12 + question 17 + n * 16 <= 512
        assert_eq!(n, (512 - 29) / 16);
        assert_eq!(out.len(), 29 + n * 16);
        assert_eq!(records(&out).unwrap().count(), n);
    }

    #[test]
    fn edns_4096_untouched_but_opt() {
        let p = query(Some(opt_rr(4096, 0, 0, 0, &[])));
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        reply_with_a(&q, &mut out, 40);
        let before = out.clone();
        finalize(&mut out, &q, q.udp_reply_size());
        // only ARCOUNT changes, and the OPT is appended
        assert_eq!(out[..10], before[..10]);
        assert_eq!(get_u16(&out, 10), 1);
        assert_eq!(out[12..before.len()], before[12..]);
        assert_eq!(out.len(), before.len() + 11);
        assert_eq!(get_u16(&out, 2) & flags::TC, 0);
        assert_eq!(get_u16(&out, 6), 40);
    }

    #[test]
    fn truncation_keeps_opt_and_sections_in_order() {
        let p = query(Some(opt_rr(
            600,
            0,
            0,
            0x8000,
            &[0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8],
        )));
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        let mut w = MessageWriter::reply(&q, &mut out, rcode::NOERROR);
        for i in 0..20u8 {
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
        for i in 0..10u8 {
            w.push(
                Section::Authority,
                Owner::Question,
                rtype::NS,
                class::IN,
                60,
                &[1, b'a' + i, 0xC0, 0x0C],
            )
            .unwrap();
        }
        for i in 0..10u8 {
            w.push(
                Section::Additional,
                Owner::Question,
                rtype::A,
                class::IN,
                60,
                &[10, 1, 0, i],
            )
            .unwrap();
        }
        w.finish();
        finalize(&mut out, &q, q.udp_reply_size());
        assert!(out.len() <= 600, "{}", out.len());
        assert_ne!(get_u16(&out, 2) & flags::TC, 0);
        assert_eq!(get_u16(&out, 6), 20);
        let ns = get_u16(&out, 8);
        let ar = get_u16(&out, 10);
        // budget = 600 - 23 (OPT with cookie) = 577; 29 + 20*16 = 349;
        // ten 16-byte NS -> 509; additional A (16 each): 4 fit -> 573, the
        // 5th would need 589
        assert_eq!(ns, 10);
        assert_eq!(ar, 4 + 1);
        let (udp, ttl, rd) = opt_of(&out).unwrap();
        assert_eq!((udp, ttl), (600, [0, 0, 0x80, 0]));
        assert_eq!(rd, vec![0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(records(&out).unwrap().count(), 20 + 10 + 5);
    }

    #[test]
    fn opt_in_the_middle_is_moved_when_cut() {
        let p = query(None);
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        let mut w = MessageWriter::reply(&q, &mut out, rcode::NOERROR);
        for i in 0..30u8 {
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
        w.push(
            Section::Additional,
            Owner::Wire(&[0]),
            rtype::OPT,
            1232,
            0,
            &[],
        )
        .unwrap();
        w.push(
            Section::Additional,
            Owner::Question,
            rtype::A,
            class::IN,
            60,
            &[1, 1, 1, 1],
        )
        .unwrap();
        w.finish();
        finalize(&mut out, &q, 512);
        assert!(out.len() <= 512);
        // budget 512 - 11 (OPT) = 501: 29 + 29 * 16 = 493
        assert_eq!(get_u16(&out, 6), 29);
        assert_eq!(get_u16(&out, 10), 1);
        assert_eq!(out.len(), 493 + 11);
        assert!(opt_of(&out).is_some());
        assert_eq!(
            records(&out).unwrap().last().unwrap().unwrap().range.end,
            out.len()
        );
    }

    #[test]
    fn trailing_bytes_past_the_limit_are_dropped() {
        let p = query(None);
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        reply_with_a(&q, &mut out, 2);
        let records_end = out.len();
        out.resize(600, 0);
        finalize(&mut out, &q, q.udp_reply_size());
        assert_eq!(out.len(), records_end, "only the counted records are left");
        assert_eq!(get_u16(&out, 2) & flags::TC, 0, "nothing was cut");
    }

    #[test]
    fn tcp_limit_and_tsig() {
        let p = query(None);
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::new();
        reply_with_a(&q, &mut out, 40);
        let before = out.clone();
        finalize(&mut out, &q, q.max_reply_size(true));
        assert_eq!(out, before);
        // a TSIG in the additional section disables truncation
        out.extend_from_slice(b"\x00\x00\xfa\x00\xff\x00\x00\x00\x00\x00\x00");
        out[11] = 1;
        let before = out.clone();
        finalize(&mut out, &q, 512);
        assert_eq!(out, before);
    }

    #[test]
    fn malformed_reply_left_alone() {
        let p = query(Some(opt_rr(512, 0, 0, 0, &[])));
        let q = Query::parse(&p).unwrap();
        let mut junk = vec![0, 1, 0x81, 0, 0, 1, 0, 5, 0, 0, 0, 0, 1, 2, 3];
        let before = junk.clone();
        finalize(&mut junk, &q, 512);
        assert_eq!(junk, before);
    }

    #[test]
    fn no_allocation_with_capacity() {
        let p = query(Some(opt_rr(
            512,
            0,
            0,
            0x8000,
            &[0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8],
        )));
        let q = Query::parse(&p).unwrap();
        let mut out = Vec::with_capacity(2048);
        let ptr = out.as_ptr();
        reply_with_a(&q, &mut out, 40);
        finalize(&mut out, &q, q.udp_reply_size());
        assert!(out.len() <= 512);
        assert_eq!(out.as_ptr(), ptr);
        assert_eq!(out.capacity(), 2048);
    }
}
