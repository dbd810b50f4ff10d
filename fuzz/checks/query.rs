//! `query`: a datagram through `Query::parse`, then what the server does with it — the
//! reject reply, the BADVERS reply, or a reply built with `MessageWriter` and cut to the
//! client's size by `finalize` (and `fit`) — with the promises of `crates/wire` asserted.
//!
//! Input: three shape bytes (how many records of which kinds the reply gets, UDP or TCP,
//! how many bytes follow its last record, as an upstream's reply may carry), then the
//! datagram.

use ringdns::wire::{
    EdnsOptions, MIN_UDP_SIZE, MessageWriter, Owner, Query, Section, badvers_reply, class,
    finalize, fit, flags, records, reject_reply, rtype,
};

/// What the reply holds, decoded from the two shape bytes.
struct Shape {
    answers: u8,
    tcp: bool,
    plugin_opt: bool,
    txt_len: usize,
    authority: u8,
    tsig: bool,
    extended_rcode: bool,
    trailing: usize,
}

impl Shape {
    fn new(a: u8, b: u8, c: u8) -> Shape {
        Shape {
            answers: a & 0x3f,
            tcp: a & 0x40 != 0,
            plugin_opt: a & 0x80 != 0,
            txt_len: usize::from(b & 0x0f) * 20,
            authority: (b >> 4) & 0x03,
            tsig: b & 0x40 != 0,
            extended_rcode: b & 0x80 != 0,
            trailing: usize::from(c) * 2,
        }
    }
}

/// Runs one input; panics when a promise of the wire module is broken.
pub fn check(data: &[u8]) {
    let (shape, packet) = match data {
        [a, b, c, rest @ ..] => (Shape::new(*a, *b, *c), rest),
        _ => (Shape::new(0, 0, 0), data),
    };
    // Option bytes as a reply's OPT may hold them: the walk stops at the first bad one.
    let _ = EdnsOptions::new(packet).count();
    match Query::parse(packet) {
        Ok(q) => parsed(&q, &shape),
        Err(reject) => rejected(packet, reject.rcode()),
    }
}

fn get_u16(b: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([b[off], b[off + 1]])
}

/// A record as [`walk`] gives it: section, type, bytes and the length of its owner there.
type Rec = (Section, u16, Vec<u8>, usize);

/// Every record of `msg`, which must walk cleanly to its last byte.
fn walk(msg: &[u8]) -> Vec<Rec> {
    let (recs, end) = walk_to(msg);
    assert_eq!(end, msg.len(), "bytes after the last counted record");
    recs
}

/// Every record of `msg`, which must walk cleanly, and where the last one ends.
fn walk_to(msg: &[u8]) -> (Vec<Rec>, usize) {
    let it = records(msg).expect("reply walks");
    let mut out = Vec::new();
    let mut end = it.question_end();
    for r in it {
        let r = r.expect("record walks");
        end = r.range.end;
        out.push((
            r.section,
            r.rtype,
            msg[r.range.clone()].to_vec(),
            r.owner.len(),
        ));
    }
    (out, end)
}

fn rejected(packet: &[u8], rcode: Option<u8>) {
    let Some(rcode) = rcode else { return };
    let mut out = Vec::new();
    let written = reject_reply(packet, rcode, &mut out);
    assert_eq!(written, packet.len() >= 12);
    if !written {
        return;
    }
    assert_eq!(out[0..2], packet[0..2], "ID echoed");
    assert_ne!(get_u16(&out, 2) & flags::QR, 0, "QR set");
    assert_eq!(out[3] & 0x0f, rcode & 0x0f);
    assert!(get_u16(&out, 4) <= 1);
    assert_eq!(out[6..12], [0; 6], "no records");
    walk(&out);
}

fn parsed(q: &Query<'_>, shape: &Shape) {
    let _ = q.qname().to_string();
    let mut lower = [0u8; 255];
    assert_eq!(q.qname().lowercase_wire(&mut lower), {
        let mut w = q.qname_bytes().to_vec();
        w.make_ascii_lowercase();
        w
    });
    if let Some(o) = q.opt() {
        let _ = o.iter().count();
    }
    if q.bad_edns_version() {
        let mut out = Vec::new();
        badvers_reply(q, &mut out);
        assert_eq!(out[0..2], q.id().to_be_bytes());
        assert_eq!(walk(&out).len(), 1);
    }
    let mut out = Vec::new();
    build_reply(q, shape, &mut out);
    let before = walk(&out);
    out.resize(out.len() + shape.trailing, 0xee);
    let built = out.clone();
    out.reserve(out.len() + q.packet().len() + 64);
    let buffer = (out.as_ptr(), out.capacity());
    let max = q.max_reply_size(shape.tcp);
    finalize(&mut out, q, max);
    assert_eq!((out.as_ptr(), out.capacity()), buffer, "finalize allocated");
    finalized(q, shape, max, &before, &out);
    if out != built {
        walk(&out);
    }

    let mut again = out.clone();
    finalize(&mut again, q, max);
    assert_eq!(again, out, "finalize is idempotent");

    let mut cut = out.clone();
    if fit(&mut cut, MIN_UDP_SIZE) {
        assert!(
            cut.len() <= MIN_UDP_SIZE,
            "fit said yes to {} bytes",
            cut.len()
        );
        if cut == out {
            walk_to(&cut);
        } else {
            walk(&cut);
        }
    } else {
        assert!(cut.len() > MIN_UDP_SIZE);
    }
}

/// A reply as plugins write them: answers (A and TXT), NS in authority, glue, optionally
/// a plugin's own OPT (as nsid adds one), a TSIG, an extended rcode.
fn build_reply(q: &Query<'_>, shape: &Shape, out: &mut Vec<u8>) {
    let rcode = if shape.extended_rcode { 23 } else { 0 };
    let mut w = MessageWriter::reply(q, out, rcode);
    let txt = vec![b'x'; shape.txt_len];
    for i in 0..shape.answers {
        let r = if i % 2 == 0 {
            w.push(
                Section::Answer,
                Owner::Question,
                rtype::A,
                class::IN,
                60,
                &[10, 0, 0, i],
            )
        } else {
            w.push(
                Section::Answer,
                Owner::Question,
                rtype::TXT,
                class::IN,
                u32::from(i),
                &txt,
            )
        };
        r.expect("answer fits");
    }
    for i in 0..shape.authority {
        w.push(
            Section::Authority,
            Owner::Question,
            rtype::NS,
            class::IN,
            300,
            &[2, b'n', b'0' + i, 0xC0, 0x0C],
        )
        .expect("authority fits");
    }
    for i in 0..shape.answers / 4 {
        w.push(
            Section::Additional,
            Owner::Wire(b"\x02ns\x00"),
            rtype::A,
            class::IN,
            60,
            &[10, 1, 0, i],
        )
        .expect("glue fits");
    }
    if shape.plugin_opt {
        w.push(
            Section::Additional,
            Owner::Wire(&[0]),
            rtype::OPT,
            4096,
            0x0007_ffff,
            &[0, 3, 0, 2, b'h', b'i'],
        )
        .expect("opt fits");
    }
    if shape.tsig {
        w.push(
            Section::Additional,
            Owner::Wire(b"\x03key\x00"),
            rtype::TSIG,
            class::ANY,
            0,
            &[0, 0, 0, 0, 0, 0],
        )
        .expect("tsig fits");
    }
    w.finish();
}

/// What `finalize` promises about `out`, made from a reply whose records were `before`.
fn finalized(q: &Query<'_>, shape: &Shape, max: usize, before: &[Rec], out: &[u8]) {
    let (after, _) = walk_to(out);
    assert_eq!(out[0..2], q.id().to_be_bytes(), "ID is the query's");
    assert_ne!(get_u16(out, 2) & flags::QR, 0, "QR set");
    let qname = q.qname_bytes();
    assert_eq!(&out[12..12 + qname.len()], qname, "question echoed");

    let is_opt = |r: &&Rec| r.1 == rtype::OPT;
    let kept: Vec<_> = after.iter().filter(|r| !is_opt(r)).collect();
    let all: Vec<_> = before.iter().filter(|r| !is_opt(r)).collect();
    assert!(kept.len() <= all.len());
    assert_eq!(kept[..], all[..kept.len()], "whole records kept, in order");
    let opts: Vec<_> = after.iter().filter(is_opt).collect();
    for o in &opts {
        assert_eq!(o.0, Section::Additional, "OPT in the additional section");
    }
    let tc = get_u16(out, 2) & flags::TC != 0;
    if kept.len() < all.len() {
        assert!(tc, "records dropped without TC");
        assert!(!shape.tsig, "a signed reply was cut");
    } else {
        assert!(!tc, "TC without a cut");
    }
    let limit = max.clamp(MIN_UDP_SIZE, 65535);
    if !shape.tsig {
        // Only a question and OPT longer than the limit (a query padded far beyond its own
        // advertised size) leave it over, and then nothing else is kept.
        assert!(
            out.len() <= limit || kept.is_empty(),
            "{} bytes for a limit of {limit}",
            out.len()
        );
    }
    let before_opts = before.iter().filter(is_opt).count();
    match q.opt() {
        None => assert_eq!(opts.len(), before_opts, "OPT added or lost without EDNS"),
        Some(qo) => {
            assert_eq!(opts.len(), 1, "one OPT for an EDNS query");
            let o = &opts[0].2;
            let f = opts[0].3;
            assert_eq!(o[..f], [0], "root owner");
            assert_eq!(get_u16(o, f), rtype::OPT);
            assert_eq!(get_u16(o, f + 2), qo.udp_size, "the client's UDP size");
            assert_eq!(o[f + 5], 0, "version 0");
            let want = if qo.do_bit { 0x8000 } else { 0 };
            assert_eq!(get_u16(o, f + 6), want, "DO copied, other flags cleared");
            if shape.extended_rcode {
                assert_eq!(o[f + 4], 1, "extended rcode kept");
            }
        }
    }
}
