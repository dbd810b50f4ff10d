//! Setting an EDNS option in a finished reply's OPT record, in place: for plugins that add
//! an option to replies the rest of the chain wrote (nsid's NSID, RFC 5001), as CoreDNS's
//! writers append to `m.IsEdns0().Option`.

use super::be::put_u16;
use super::consts::{MAX_MSG_SIZE, rtype};
use super::header::Section;
use super::records::records;

/// Sets option `code` of the reply's OPT record to `data`: the first option with that code
/// gets the new data where it is, else the option is appended to the OPT's options. False,
/// with the reply unchanged, when the reply does not parse, has no OPT, has a record after
/// its OPT (a TSIG, which the edit would invalidate), or would grow past 65 535 bytes or
/// its OPT's RDATA past 65 535. Allocates nothing when `msg` has room for the new bytes.
pub fn set_option(msg: &mut Vec<u8>, code: u16, data: &[u8]) -> bool {
    let Ok(mut walk) = records(msg) else {
        return false;
    };
    let mut opt = None;
    let mut after = false;
    for r in &mut walk {
        let Ok(r) = r else { return false };
        if opt.is_some() {
            after = true;
        }
        if r.section == Section::Additional && r.rtype == rtype::OPT {
            opt = Some(r.rdata);
            after = false;
        }
    }
    let end = walk.offset();
    let Some(rdata) = opt else { return false };
    if after || data.len() > usize::from(u16::MAX) {
        return false;
    }
    // The option's data, when the OPT has the option already.
    let mut at = rdata.start;
    let mut found = None;
    while at + 4 <= rdata.end {
        let len = usize::from(u16::from_be_bytes([msg[at + 2], msg[at + 3]]));
        if at + 4 + len > rdata.end {
            return false;
        }
        if u16::from_be_bytes([msg[at], msg[at + 1]]) == code {
            found = Some(at);
            break;
        }
        at += 4 + len;
    }
    let (old, grow) = match found {
        Some(o) => {
            let len = usize::from(u16::from_be_bytes([msg[o + 2], msg[o + 3]]));
            (len, data.len() as isize - len as isize)
        }
        None => (0, data.len() as isize + 4),
    };
    let rdlen = (rdata.len() as isize + grow) as usize;
    let total = (end as isize + grow) as usize;
    if rdlen > usize::from(u16::MAX) || total > MAX_MSG_SIZE {
        return false;
    }
    // Bytes after the last record are not part of the message.
    msg.truncate(end);
    match found {
        Some(o) => {
            msg.splice(o + 4..o + 4 + old, data.iter().copied());
            put_u16(msg, o + 2, data.len() as u16);
        }
        None => {
            msg.extend_from_slice(&code.to_be_bytes());
            msg.extend_from_slice(&(data.len() as u16).to_be_bytes());
            msg.extend_from_slice(data);
        }
    }
    put_u16(msg, rdata.start - 2, rdlen as u16);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::{class, edns, rcode};
    use crate::{MessageWriter, Name, Owner, Query, QueryBuilder, finalize};

    /// A reply to `www.example. A` with one answer, the OPT `finalize` appends for a query
    /// with `options` (code, data), and `extra` bytes after the message.
    fn reply(options: &[(u16, &[u8])], extra: &[u8]) -> Vec<u8> {
        let name = Name::from_wire(b"\x03www\x07example\x00").unwrap();
        let mut q = QueryBuilder::new(name, 1).edns(1232, false).build();
        // The query's OPT is its last record: its RDLENGTH is the packet's last two bytes.
        let mut rd = Vec::new();
        for (c, d) in options {
            rd.extend_from_slice(&c.to_be_bytes());
            rd.extend_from_slice(&(d.len() as u16).to_be_bytes());
            rd.extend_from_slice(d);
        }
        let n = q.len();
        q[n - 2..].copy_from_slice(&(rd.len() as u16).to_be_bytes());
        q.extend_from_slice(&rd);
        let query = Query::parse(&q).unwrap();
        let mut out = Vec::new();
        let mut w = MessageWriter::reply(&query, &mut out, rcode::NOERROR);
        w.push(
            Section::Answer,
            Owner::Question,
            1,
            class::IN,
            60,
            &[192, 0, 2, 1],
        )
        .unwrap();
        w.finish();
        finalize(&mut out, &query, 1232);
        out.extend_from_slice(extra);
        out
    }

    /// The reply's OPT options.
    fn options(msg: &[u8]) -> Vec<(u16, Vec<u8>)> {
        let r = records(msg)
            .unwrap()
            .map(Result::unwrap)
            .find(|r| r.rtype == rtype::OPT)
            .unwrap();
        crate::EdnsOptions::new(&msg[r.rdata])
            .map(|(c, d)| (c, d.to_vec()))
            .collect()
    }

    #[test]
    fn an_option_the_reply_has_gets_the_new_data_in_its_place() {
        let mut m = reply(&[(edns::NSID, b""), (edns::COOKIE, &[1; 8])], b"");
        assert!(set_option(&mut m, edns::NSID, b"ns1"));
        assert_eq!(
            options(&m),
            [(edns::NSID, b"ns1".to_vec()), (edns::COOKIE, vec![1; 8])]
        );
        assert!(set_option(&mut m, edns::NSID, b""), "shrinks too");
        assert_eq!(options(&m)[0], (edns::NSID, vec![]));
        assert!(records(&m).unwrap().all(|r| r.is_ok()), "still a message");
    }

    #[test]
    fn an_option_the_reply_lacks_is_appended_and_trailing_bytes_go() {
        let mut m = reply(&[(edns::COOKIE, &[2; 8])], b"junk");
        assert!(set_option(&mut m, edns::NSID, b"host"));
        assert_eq!(
            options(&m),
            [(edns::COOKIE, vec![2; 8]), (edns::NSID, b"host".to_vec())]
        );
        assert_eq!(records(&m).unwrap().count(), 2);
        let mut walk = records(&m).unwrap();
        walk.by_ref().for_each(drop);
        assert_eq!(walk.offset(), m.len(), "nothing after the last record");
    }

    #[test]
    fn a_reply_without_an_opt_or_with_a_record_after_it_is_left_alone() {
        let name = Name::from_wire(b"\x03www\x07example\x00").unwrap();
        let q = QueryBuilder::new(name, 1).build();
        let query = Query::parse(&q).unwrap();
        let mut m = Vec::new();
        MessageWriter::reply(&query, &mut m, rcode::NOERROR).finish();
        let before = m.clone();
        assert!(!set_option(&mut m, edns::NSID, b"x"));
        assert_eq!(m, before);
        // A record after the OPT (a TSIG signs the message as it is).
        let mut m = reply(&[], b"");
        m.extend_from_slice(&[0, 0, 250, 0, 255, 0, 0, 0, 0, 0, 0]);
        let ar = u16::from_be_bytes([m[10], m[11]]) + 1;
        m[10..12].copy_from_slice(&ar.to_be_bytes());
        let before = m.clone();
        assert!(!set_option(&mut m, edns::NSID, b"x"));
        assert_eq!(m, before);
    }

    #[test]
    fn a_reply_that_would_grow_past_the_largest_message_is_left_alone() {
        let mut m = reply(&[], b"");
        let before = m.clone();
        // The option's code and length take 4 bytes beside its data.
        let room = 65_535 - m.len() - 4;
        assert!(!set_option(&mut m, edns::NSID, &vec![0; room + 1]));
        assert_eq!(m, before);
        assert!(set_option(&mut m, edns::NSID, &vec![0; room]));
        assert_eq!(m.len(), 65_535);
    }
}
