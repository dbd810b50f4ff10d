//! The query of one search path element: the client's query with its question name
//! replaced (CoreDNS's `r.Copy()` with `Question[0].Name` set), written into a core's
//! reusable buffer. The header is the client's (ID, flags); the records after the question
//! (the OPT, whatever else a query may carry) are copied with their names uncompressed,
//! since the new question's length moves every offset a pointer could aim at.

use ringdns_plugin::wire::{Header, HeaderMut, Query, Section, expand_name, expand_rdata, records};

/// Writes into `out` the query `q` with question name `base` (whole wire labels, no root)
/// followed by `suffix` (a wire name), with `q`'s type and class. `owner` and `rdata` are
/// scratch buffers. False when the new name would be longer than 255 bytes.
pub fn write(
    q: &Query<'_>,
    base: &[u8],
    suffix: &[u8],
    out: &mut Vec<u8>,
    owner: &mut Vec<u8>,
    rdata: &mut Vec<u8>,
) -> bool {
    if base.len() + suffix.len() > 255 {
        return false;
    }
    let packet = q.packet();
    out.clear();
    out.extend_from_slice(&packet[..12]);
    out.extend_from_slice(base);
    out.extend_from_slice(suffix);
    out.extend_from_slice(&q.qtype().to_be_bytes());
    out.extend_from_slice(&q.qclass().to_be_bytes());
    let mut counts = [0u16; 3];
    if let Ok(it) = records(packet) {
        for r in it {
            let Ok(r) = r else { break };
            owner.clear();
            rdata.clear();
            if expand_name(packet, r.owner.start, packet.len(), owner).is_err()
                || expand_rdata(packet, &r, rdata).is_err()
            {
                break;
            }
            out.extend_from_slice(owner);
            // Type, class and TTL, as they were.
            out.extend_from_slice(&packet[r.owner.end..r.owner.end + 8]);
            out.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
            out.extend_from_slice(rdata);
            counts[r.section as usize] += 1;
        }
    }
    let mut h = HeaderMut::new(out);
    for (s, n) in [Section::Answer, Section::Authority, Section::Additional]
        .into_iter()
        .zip(counts)
    {
        h.set_count(s, n);
    }
    debug_assert_eq!(Header::new(out).qdcount(), 1);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_testkit::wire_name;

    /// `Foo.Example.ORG. A IN` with an OPT (DO, 1232) and an NSID option.
    fn query() -> Vec<u8> {
        let mut p = vec![0xab, 0xcd, 0x01, 0x20, 0, 1, 0, 0, 0, 0, 0, 1];
        p.extend(wire_name("Foo.Example.ORG."));
        p.extend([0, 1, 0, 1]);
        p.extend([0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 4, 0, 3, 0, 0]);
        p
    }

    #[test]
    fn the_name_changes_and_everything_else_is_kept() {
        let p = query();
        let q = Query::parse(&p).unwrap();
        let (mut out, mut o, mut r) = (Vec::new(), Vec::new(), Vec::new());
        let base = &wire_name("Foo.")[..4];
        assert!(write(
            &q,
            base,
            &wire_name("svc.cluster.local."),
            &mut out,
            &mut o,
            &mut r
        ));
        let sub = Query::parse(&out).unwrap();
        assert_eq!(sub.id(), 0xabcd);
        assert_eq!(sub.flags(), q.flags());
        assert_eq!(sub.qname_bytes(), wire_name("Foo.svc.cluster.local."));
        assert_eq!((sub.qtype(), sub.qclass()), (1, 1));
        assert!(sub.do_bit());
        assert_eq!(sub.udp_reply_size(), 1232);
        assert_eq!(sub.edns_option(3), Some(&[][..]));
        // The root as the suffix: the base alone.
        assert!(write(&q, base, &[0], &mut out, &mut o, &mut r));
        assert_eq!(Query::parse(&out).unwrap().qname_bytes(), wire_name("Foo."));
    }

    #[test]
    fn a_record_pointing_into_the_old_question_keeps_its_name() {
        // A NOTIFY-like query whose answer's owner is a pointer to the question name.
        let mut p = vec![0, 7, 0x20, 0, 0, 1, 0, 1, 0, 0, 0, 0];
        p.extend(wire_name("a.example.org."));
        p.extend([0, 6, 0, 1]);
        p.extend([0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 0, 0, 1]);
        let q = Query::parse(&p).unwrap();
        let (mut out, mut o, mut r) = (Vec::new(), Vec::new(), Vec::new());
        assert!(write(
            &q,
            &wire_name("a.")[..2],
            &wire_name("svc.test."),
            &mut out,
            &mut o,
            &mut r
        ));
        let rs: Vec<_> = records(&out).unwrap().map(Result::unwrap).collect();
        assert_eq!(rs.len(), 1);
        assert_eq!(&out[rs[0].owner.clone()], &wire_name("a.example.org.")[..]);
        assert_eq!(&out[rs[0].rdata.clone()], &[10, 0, 0, 1]);
        assert_eq!(Header::new(&out).ancount(), 1);
    }

    #[test]
    fn a_name_over_255_bytes_is_not_written() {
        let p = query();
        let q = Query::parse(&p).unwrap();
        let long = wire_name(&format!(
            "{}.{}.{}.{}.",
            "a".repeat(63),
            "b".repeat(63),
            "c".repeat(63),
            "d".repeat(60)
        ));
        assert_eq!(long.len(), 254);
        let (mut out, mut o, mut r) = (Vec::new(), Vec::new(), Vec::new());
        assert!(!write(
            &q,
            &wire_name("Foo.")[..4],
            &long,
            &mut out,
            &mut o,
            &mut r
        ));
        assert!(write(&q, &[], &long, &mut out, &mut o, &mut r));
        assert_eq!(Query::parse(&out).unwrap().qname_bytes(), long);
    }
}
