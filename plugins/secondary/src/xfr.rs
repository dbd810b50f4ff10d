//! Reading an AXFR response (RFC 5936 §2.2): one or more messages, each checked as a reply
//! to the query, whose answer sections hold the zone's records from its SOA to the same
//! SOA again. The records come out uncompressed ([`ringdns_zone::Record`]), ready for
//! [`ringdns_zone::Zone::build`]. No I/O here: [`crate::client`] reads the TCP frames and
//! feeds them in, and the tests feed hand-built messages.

use crate::reply::{self, ReplyError, Soa};
use ringdns_plugin::wire::{self, Section, WireError, rtype};
use ringdns_zone::Record;

/// The state of one transfer in, between messages.
pub struct Axfr {
    /// The zone's origin, lower-case wire form.
    origin: Box<[u8]>,
    /// The query's ID and question (as sent), which every message must answer.
    id: u16,
    question: Box<[u8]>,
    /// The zone's class: the query's.
    class: u16,
    /// The records so far, the opening SOA first; the closing SOA is not kept twice.
    records: Vec<Record>,
    /// The opening SOA, once seen.
    soa: Option<Soa>,
    /// The closing SOA came.
    done: bool,
}

impl Axfr {
    /// A transfer of `origin` (lower-case wire form) asked by the query `query` (a whole
    /// AXFR query message, as sent).
    pub fn new(origin: &[u8], query: &[u8]) -> Axfr {
        let h = wire::Header::new(query);
        let question = &query[wire::QUESTION_OFFSET..];
        let n = question.len();
        let class = if n >= 2 {
            u16::from_be_bytes([question[n - 2], question[n - 1]])
        } else {
            1
        };
        Axfr {
            origin: origin.into(),
            id: h.id(),
            question: question.into(),
            class,
            records: Vec::new(),
            soa: None,
            done: false,
        }
    }

    /// Takes the next message of the response. `Ok(true)` once the closing SOA has come
    /// (the transfer is complete: read no further), `Ok(false)` when more must follow.
    pub fn feed(&mut self, msg: &[u8]) -> Result<bool, ReplyError> {
        if self.done {
            return Err(ReplyError::AfterEnd);
        }
        // The first message repeats the question; later ones may leave it out.
        let first = self.soa.is_none();
        reply::check(msg, self.id, &self.question, !first)?;
        let mut owner = Vec::new();
        for r in wire::records(msg)? {
            let r = r?;
            // The authority section is empty and the additional one holds only OPT or
            // TSIG (RFC 5936 §2.2.1): neither is zone data.
            if r.section != Section::Answer {
                continue;
            }
            if self.done {
                return Err(ReplyError::AfterEnd);
            }
            owner.clear();
            wire::expand_name(msg, r.owner.start, msg.len(), &mut owner)
                .map_err(|e| ReplyError::Malformed(WireError::Name(e)))?;
            let mut rdata = Vec::with_capacity(r.rdata.len());
            wire::expand_rdata(msg, &r, &mut rdata)?;
            let apex_soa = r.rtype == rtype::SOA && owner.eq_ignore_ascii_case(&self.origin);
            if r.class != self.class {
                return Err(ReplyError::Class(r.class));
            }
            match self.soa {
                None if !apex_soa => return Err(ReplyError::FirstNotSoa),
                None => {
                    let soa = Soa::from_rdata(&rdata).ok_or(ReplyError::FirstNotSoa)?;
                    self.soa = Some(soa);
                }
                Some(opening) if apex_soa => {
                    let closing = Soa::from_rdata(&rdata).ok_or(ReplyError::FirstNotSoa)?;
                    if closing.serial != opening.serial {
                        return Err(ReplyError::SerialChanged(opening.serial, closing.serial));
                    }
                    self.done = true;
                    continue;
                }
                Some(_) => {}
            }
            self.records.push(Record {
                owner: owner.as_slice().into(),
                rtype: r.rtype,
                class: r.class,
                ttl: r.ttl(msg),
                rdata: rdata.into_boxed_slice(),
            });
        }
        if self.soa.is_none() {
            // A first message with no records at all.
            return Err(ReplyError::FirstNotSoa);
        }
        Ok(self.done)
    }

    /// The zone's records (its SOA first) and its SOA, once the transfer is complete.
    pub fn finish(self) -> Result<(Vec<Record>, Soa), ReplyError> {
        match (self.done, self.soa) {
            (true, Some(soa)) => Ok((self.records, soa)),
            _ => Err(ReplyError::Incomplete),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::tests::soa_rdata;
    use ringdns_plugin::wire::QueryBuilder;

    const ID: u16 = 0x4242;

    fn origin() -> Vec<u8> {
        wire::name_to_wire("example.org.").unwrap()
    }

    fn axfr_query() -> Vec<u8> {
        let o = origin();
        QueryBuilder::new(wire::Name::from_wire(&o).unwrap(), rtype::AXFR)
            .id(ID)
            .rd(false)
            .build()
    }

    /// One record: owner (wire, may be a pointer), type, TTL, RDATA.
    type Rr<'a> = (&'a [u8], u16, u32, &'a [u8]);

    /// A response message to [`axfr_query`]: `rcode`, the question when `question`, and
    /// `answers` (owners and RDATA written as given, so pointers may be used: the question
    /// name is at offset 12).
    fn message(rcode: u8, question: bool, answers: &[Rr<'_>]) -> Vec<u8> {
        let q = axfr_query();
        let mut m = Vec::new();
        m.extend(ID.to_be_bytes());
        m.extend([0x84, rcode]); // QR, AA
        m.extend(u16::from(question).to_be_bytes());
        m.extend((answers.len() as u16).to_be_bytes());
        m.extend([0, 0, 0, 0]);
        if question {
            m.extend(&q[12..]);
        }
        for (owner, t, ttl, rd) in answers {
            m.extend(*owner);
            m.extend(t.to_be_bytes());
            m.extend(1u16.to_be_bytes());
            m.extend(ttl.to_be_bytes());
            m.extend((rd.len() as u16).to_be_bytes());
            m.extend(*rd);
        }
        m
    }

    /// `www` under the question's name, compressed.
    const WWW: &[u8] = &[3, b'w', b'w', b'w', 0xC0, 12];
    /// A pointer to the question's name.
    const APEX: &[u8] = &[0xC0, 12];

    #[test]
    fn a_transfer_over_several_messages_gives_the_zone_uncompressed() {
        let soa = soa_rdata(7);
        let mut axfr = Axfr::new(&origin(), &axfr_query());
        // The first message: SOA and an NS whose target is compressed.
        let ns_target = [2, b'n', b's', 0xC0, 12];
        let m1 = message(
            0,
            true,
            &[(APEX, 6, 3600, &soa), (APEX, 2, 3600, &ns_target)],
        );
        assert_eq!(axfr.feed(&m1), Ok(false));
        // The second, without a question: an A record and the closing SOA.
        let m2 = message(
            0,
            false,
            &[
                (b"\x03www\x07example\x03org\x00", 1, 60, &[192, 0, 2, 1]),
                (b"\x07EXAMPLE\x03ORG\x00", 6, 3600, &soa),
            ],
        );
        assert_eq!(axfr.feed(&m2), Ok(true));
        let (records, got) = axfr.finish().unwrap();
        assert_eq!(got.serial, 7);
        assert_eq!(got.refresh, 3600);
        assert_eq!(records.len(), 3, "the closing SOA is not kept twice");
        assert_eq!(records[0].rtype, rtype::SOA);
        assert_eq!(&*records[0].owner, origin().as_slice());
        assert_eq!(
            &*records[1].rdata,
            wire::name_to_wire("ns.example.org.").unwrap().as_slice()
        );
        assert_eq!(records[2].ttl, 60);
        assert_eq!(&*records[2].rdata, &[192, 0, 2, 1]);
        // And they make a zone.
        let zone = ringdns_zone::Zone::build(&origin(), records).unwrap();
        assert_eq!(zone.serial(), 7);
    }

    #[test]
    fn a_single_message_transfer_with_a_compressed_owner() {
        let soa = soa_rdata(1);
        let mut axfr = Axfr::new(&origin(), &axfr_query());
        let m = message(
            0,
            true,
            &[
                (APEX, 6, 3600, &soa),
                (WWW, 1, 60, &[192, 0, 2, 1]),
                (APEX, 6, 3600, &soa),
            ],
        );
        assert_eq!(axfr.feed(&m), Ok(true));
        let (records, _) = axfr.finish().unwrap();
        assert_eq!(
            &*records[1].owner,
            wire::name_to_wire("www.example.org.").unwrap().as_slice()
        );
        // Anything after the end is refused.
        let mut axfr = Axfr::new(&origin(), &axfr_query());
        let m = message(
            0,
            true,
            &[
                (APEX, 6, 3600, &soa),
                (APEX, 6, 3600, &soa),
                (WWW, 1, 60, &[192, 0, 2, 1]),
            ],
        );
        assert_eq!(axfr.feed(&m), Err(ReplyError::AfterEnd));
    }

    #[test]
    fn a_transfer_without_its_closing_soa_is_incomplete() {
        let soa = soa_rdata(1);
        let mut axfr = Axfr::new(&origin(), &axfr_query());
        let m = message(
            0,
            true,
            &[(APEX, 6, 3600, &soa), (WWW, 1, 60, &[192, 0, 2, 1])],
        );
        assert_eq!(axfr.feed(&m), Ok(false));
        assert_eq!(axfr.finish().unwrap_err(), ReplyError::Incomplete);
    }

    #[test]
    fn a_refusal_or_a_stranger_is_no_transfer() {
        let soa = soa_rdata(1);
        let good = [(APEX, 6, 3600, soa.as_slice()), (APEX, 6, 3600, &soa)];
        // REFUSED, NOTAUTH.
        for rc in [5, 9] {
            let mut axfr = Axfr::new(&origin(), &axfr_query());
            assert_eq!(
                axfr.feed(&message(rc, true, &good)),
                Err(ReplyError::Rcode(rc))
            );
        }
        // Another ID.
        let mut m = message(0, true, &good);
        m[1] ^= 1;
        assert_eq!(
            Axfr::new(&origin(), &axfr_query()).feed(&m),
            Err(ReplyError::NotOurs)
        );
        // No QR.
        let mut m = message(0, true, &good);
        m[2] &= 0x7f;
        assert_eq!(
            Axfr::new(&origin(), &axfr_query()).feed(&m),
            Err(ReplyError::NotOurs)
        );
        // The first message without its question, or with another one.
        assert_eq!(
            Axfr::new(&origin(), &axfr_query()).feed(&message(0, false, &good)),
            Err(ReplyError::Question)
        );
        let mut m = message(0, true, &good);
        m[13] = b'X'; // the question's first label: xxample.org.
        assert_eq!(
            Axfr::new(&origin(), &axfr_query()).feed(&m),
            Err(ReplyError::Question)
        );
        // TC.
        let mut m = message(0, true, &good);
        m[2] |= 0x02;
        assert_eq!(
            Axfr::new(&origin(), &axfr_query()).feed(&m),
            Err(ReplyError::Truncated)
        );
    }

    #[test]
    fn the_records_must_start_with_the_soa_and_end_with_the_same_serial() {
        let mut axfr = Axfr::new(&origin(), &axfr_query());
        let m = message(0, true, &[(WWW, 1, 60, &[192, 0, 2, 1])]);
        assert_eq!(axfr.feed(&m), Err(ReplyError::FirstNotSoa));
        // No records at all.
        let mut axfr = Axfr::new(&origin(), &axfr_query());
        assert_eq!(
            axfr.feed(&message(0, true, &[])),
            Err(ReplyError::FirstNotSoa)
        );
        // The zone changed underway.
        let mut axfr = Axfr::new(&origin(), &axfr_query());
        let m = message(
            0,
            true,
            &[
                (APEX, 6, 3600, &soa_rdata(1)),
                (APEX, 6, 3600, &soa_rdata(2)),
            ],
        );
        assert_eq!(axfr.feed(&m), Err(ReplyError::SerialChanged(1, 2)));
        // A name that runs out of its RDATA.
        let mut axfr = Axfr::new(&origin(), &axfr_query());
        let m = message(
            0,
            true,
            &[
                (APEX, 6, 3600, &soa_rdata(1)),
                (APEX, 2, 3600, &[2, b'n', b's']),
            ],
        );
        assert!(matches!(axfr.feed(&m), Err(ReplyError::Malformed(_))));
    }

    #[test]
    fn the_serial_check_reads_the_soa_of_the_zone() {
        let q = QueryBuilder::new(wire::Name::from_wire(&origin()).unwrap(), rtype::SOA)
            .id(ID)
            .build();
        let soa = soa_rdata(99);
        let mut m = message(0, false, &[(b"\x07example\x03org\x00", 6, 3600, &soa)]);
        // Put the SOA question in.
        m[5] = 1;
        m.splice(12..12, q[12..].iter().copied());
        let got = reply::soa_of(&m, ID, &q[12..], &origin()).unwrap();
        assert_eq!(got.serial, 99);
        // The same reply to an AXFR question does not answer the SOA query.
        assert_eq!(
            reply::soa_of(&m, ID, &axfr_query()[12..], &origin()),
            Err(ReplyError::Question)
        );
        // An SOA of another zone is not the zone's.
        let mut other = message(0, false, &[(b"\x07example\x03net\x00", 6, 3600, &soa)]);
        other[5] = 1;
        other.splice(12..12, q[12..].iter().copied());
        assert_eq!(
            reply::soa_of(&other, ID, &q[12..], &origin()),
            Err(ReplyError::NoSoa)
        );
    }
}
