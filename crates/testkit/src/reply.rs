//! A reply as a plugin's tests compare it: its rcode, AA and TC, and each section as sorted
//! `NAME TTL TYPE DATA` lines, names expanded (an SOA's serial shown as `S`: it is a time).
//! What the kubernetes and k8s_external tests check whole answers with.

use ringdns_plugin::wire::rcode::NOERROR;
use ringdns_plugin::wire::rtype::{A, AAAA, CNAME, NS, OPT, PTR, SOA, SRV, TXT};
use ringdns_plugin::wire::{
    Header, Name, QueryBuilder, Section, expand_name, expand_rdata, records, type_name,
};
use std::net::{Ipv4Addr, Ipv6Addr};

/// What a reply says, sections as sorted presentation lines.
#[derive(Debug, PartialEq)]
pub struct Reply {
    /// The rcode.
    pub rcode: u8,
    /// AA.
    pub aa: bool,
    /// TC.
    pub tc: bool,
    /// The answer section.
    pub answer: Vec<String>,
    /// The authority section.
    pub ns: Vec<String>,
    /// The additional section, without the OPT record.
    pub extra: Vec<String>,
}

impl Reply {
    /// No reply written, only `rcode` for the server to write (REFUSED for a transfer).
    pub fn rcode_only(rcode: u8) -> Reply {
        Reply {
            rcode,
            aa: false,
            tc: false,
            answer: vec![],
            ns: vec![],
            extra: vec![],
        }
    }

    /// Reads `msg`, a whole reply; panics on one that does not parse.
    pub fn read(msg: &[u8]) -> Reply {
        let h = Header::new(msg);
        let mut g = Reply {
            rcode: h.rcode(),
            aa: h.flags() & 0x0400 != 0,
            tc: h.flags() & 0x0200 != 0,
            ..Reply::rcode_only(0)
        };
        for r in records(msg).expect("the reply's records") {
            let r = r.expect("a record");
            if r.rtype == OPT {
                continue;
            }
            let mut rd = Vec::new();
            expand_rdata(msg, &r, &mut rd).expect("the RDATA expands");
            let line = format!(
                "{} {} {} {}",
                name_at(msg, r.owner.start),
                r.ttl(msg),
                type_name(r.rtype),
                rdata_text(r.rtype, &rd)
            );
            match r.section {
                Section::Answer => g.answer.push(line),
                Section::Authority => g.ns.push(line),
                _ => g.extra.push(line),
            }
        }
        g.answer.sort();
        g.ns.sort();
        g.extra.sort();
        g
    }
}

/// One expected answer: the question, the rcode, and each section's lines (in any order);
/// AA must be set.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// The query name (case kept).
    pub qname: &'static str,
    /// The query type.
    pub qtype: u16,
    /// The rcode.
    pub rcode: u8,
    /// The answer section.
    pub answer: &'static [&'static str],
    /// The authority section.
    pub ns: &'static [&'static str],
    /// The additional section.
    pub extra: &'static [&'static str],
}

/// A NOERROR answer of `answer` alone (set `extra` with `Case { extra, ..ok(…) }`).
pub const fn ok(qname: &'static str, qtype: u16, answer: &'static [&'static str]) -> Case {
    Case {
        qname,
        qtype,
        rcode: NOERROR,
        answer,
        ns: &[],
        extra: &[],
    }
}

/// A negative answer (NXDOMAIN, NODATA…): `rcode`, no answer, the authority lines `ns`.
pub const fn neg(qname: &'static str, qtype: u16, rcode: u8, ns: &'static [&'static str]) -> Case {
    Case {
        qname,
        qtype,
        rcode,
        answer: &[],
        ns,
        extra: &[],
    }
}

impl Case {
    /// Checks that `got`, the reply to this case's question, is what the case expects.
    #[track_caller]
    pub fn check(&self, got: &Reply) {
        let want = |l: &[&str]| {
            let mut v: Vec<String> = l.iter().map(|s| s.to_string()).collect();
            v.sort();
            v
        };
        let (q, t) = (self.qname, type_name(self.qtype));
        assert_eq!(got.rcode, self.rcode, "{q} {t}: {got:?}");
        assert!(got.aa, "{q} {t}: AA");
        assert_eq!(got.answer, want(self.answer), "{q} {t} answer");
        assert_eq!(got.ns, want(self.ns), "{q} {t} authority");
        assert_eq!(got.extra, want(self.extra), "{q} {t} additional");
    }
}

/// A query for `name` (case kept) and `qtype`: ID 0x4242, RD set, EDNS with a 4096-byte
/// payload.
pub fn query(name: &str, qtype: u16) -> Vec<u8> {
    let w = crate::wire_name(name);
    QueryBuilder::new(Name::from_wire(&w).expect("a test name"), qtype)
        .id(0x4242)
        .rd(true)
        .edns(4096, false)
        .build()
}

/// The name at `at` in `msg`, expanded.
fn name_at(msg: &[u8], at: usize) -> String {
    let mut out = Vec::new();
    expand_name(msg, at, msg.len(), &mut out).expect("the name expands");
    Name::from_wire(&out).expect("a name").to_string()
}

/// The length of the (uncompressed) name at the start of `b`.
fn name_len(b: &[u8]) -> usize {
    let mut i = 0;
    while b[i] != 0 {
        i += 1 + b[i] as usize;
    }
    i + 1
}

/// The RDATA (names expanded) in presentation form, for the types the tests meet.
fn rdata_text(rtype: u16, rd: &[u8]) -> String {
    let name = |at: usize| {
        let n = name_len(&rd[at..]);
        Name::from_wire(&rd[at..at + n])
            .expect("a name in the RDATA")
            .to_string()
    };
    let u16_at = |at: usize| u16::from_be_bytes([rd[at], rd[at + 1]]);
    let u32_at = |at: usize| u32::from_be_bytes([rd[at], rd[at + 1], rd[at + 2], rd[at + 3]]);
    match rtype {
        A => Ipv4Addr::from(<[u8; 4]>::try_from(rd).expect("4 bytes")).to_string(),
        AAAA => Ipv6Addr::from(<[u8; 16]>::try_from(rd).expect("16 bytes")).to_string(),
        CNAME | PTR | NS => name(0),
        SRV => format!("{} {} {} {}", u16_at(0), u16_at(2), u16_at(4), name(6)),
        TXT => String::from_utf8_lossy(&rd[1..]).into_owned(),
        SOA => {
            let ml = name_len(rd);
            let rl = name_len(&rd[ml..]);
            let at = ml + rl;
            format!(
                "{} {} S {} {} {} {}",
                name(0),
                name(ml),
                u32_at(at + 4),
                u32_at(at + 8),
                u32_at(at + 12),
                u32_at(at + 16)
            )
        }
        _ => format!("{rd:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::wire::class::IN;
    use ringdns_plugin::wire::{MessageWriter, Owner, Query};

    #[test]
    fn a_reply_reads_as_sorted_lines() {
        let q = query("Www.Example.", A);
        let q = Query::parse(&q).unwrap();
        let mut out = Vec::new();
        let mut w = MessageWriter::reply(&q, &mut out, 3);
        w.set_aa(true);
        w.push(Section::Answer, Owner::Question, A, IN, 5, &[192, 0, 2, 2])
            .unwrap();
        w.push(Section::Answer, Owner::Question, A, IN, 5, &[192, 0, 2, 1])
            .unwrap();
        let soa = b"\x02ns\x00\x02hm\x00\x00\x00\x00\x07\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00\x04";
        w.push(
            Section::Authority,
            Owner::Wire(b"\x07example\x00"),
            SOA,
            IN,
            9,
            soa,
        )
        .unwrap();
        w.push(Section::Additional, Owner::Question, TXT, IN, 1, b"\x02hi")
            .unwrap();
        w.finish();
        let r = Reply::read(&out);
        assert_eq!((r.rcode, r.aa, r.tc), (3, true, false));
        assert_eq!(
            r.answer,
            ["Www.Example. 5 A 192.0.2.1", "Www.Example. 5 A 192.0.2.2"]
        );
        assert_eq!(r.ns, ["example. 9 SOA ns. hm. S 1 2 3 4"]);
        assert_eq!(r.extra, ["Www.Example. 1 TXT hi"]);
        assert_eq!(Reply::rcode_only(5).answer.len(), 0);
        // A case in any order of its lines; another rcode, or another line, fails.
        let case = Case {
            extra: &["Www.Example. 1 TXT hi"],
            ..neg("Www.Example.", A, 3, &["example. 9 SOA ns. hm. S 1 2 3 4"])
        };
        let case = Case {
            answer: &["Www.Example. 5 A 192.0.2.2", "Www.Example. 5 A 192.0.2.1"],
            ..case
        };
        case.check(&r);
        let fails = |c: Case| std::panic::catch_unwind(|| c.check(&r)).is_err();
        assert!(fails(Case { rcode: 0, ..case }));
        assert!(fails(Case { extra: &[], ..case }));
        assert!(fails(ok("Www.Example.", A, case.answer)));
    }
}
