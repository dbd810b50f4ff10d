//! A zone's records in the order a full transfer sends them (RFC 5936 §2.2): the apex SOA
//! first, then every other record, owner by owner in canonical order with the NSEC3 owners
//! last, signatures included. The transfer plugin ends the stream with the SOA again.

use crate::zone::{Node, Zone};
use ringdns_wire::rtype;

/// One stored record, borrowed from the zone. Owner names are lower-case (the store keeps
/// them so); RDATA is byte for byte as loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StoredRecord<'z> {
    /// The owner, lower-case uncompressed wire form.
    pub owner: &'z [u8],
    /// The record type.
    pub rtype: u16,
    /// The record class (the zone's).
    pub class: u16,
    /// The TTL as loaded.
    pub ttl: u32,
    /// The RDATA, uncompressed wire form.
    pub rdata: &'z [u8],
}

impl Zone {
    /// The apex SOA record, which opens and closes a transfer and answers an up-to-date IXFR.
    pub fn soa(&self) -> StoredRecord<'_> {
        let apex = &self.nodes[0];
        let set = self
            .find_set(apex, rtype::SOA)
            .expect("a built zone has an SOA at its apex");
        let rr = self.first_rr(set);
        StoredRecord {
            owner: self.name_of(apex),
            rtype: rtype::SOA,
            class: self.class,
            ttl: rr.ttl,
            rdata: rr.rdata,
        }
    }

    /// Every record, the apex SOA first (and only there), for AXFR and IXFR's full answer.
    pub fn transfer_records(&self) -> impl Iterator<Item = StoredRecord<'_>> + '_ {
        let nsec3 = self.nsec3.iter().flat_map(|n| n.nodes.iter());
        std::iter::once(self.soa()).chain(
            self.nodes
                .iter()
                .enumerate()
                .chain(nsec3.map(|n| (usize::MAX, n)))
                .flat_map(move |(i, n)| self.node_records(i == 0, n)),
        )
    }

    /// The records of one owner; at the apex, without the SOA already sent.
    fn node_records<'z>(
        &'z self,
        apex: bool,
        n: &'z Node,
    ) -> impl Iterator<Item = StoredRecord<'z>> + 'z {
        let owner = self.name_of(n);
        self.sets_of(n)
            .iter()
            .filter(move |s| !(apex && s.rtype == rtype::SOA))
            .flat_map(move |s| {
                self.rrs(s).map(move |rr| StoredRecord {
                    owner,
                    rtype: s.rtype,
                    class: self.class,
                    ttl: rr.ttl,
                    rdata: rr.rdata,
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::parse_str;
    use ringdns_wire::rtype;

    #[test]
    fn a_transfer_holds_every_record_once_with_the_soa_first() {
        let text = "$ORIGIN example.org.\n$TTL 300\n\
            @ IN SOA ns1 admin 7 3600 600 86400 60\n\
            @ IN NS ns1\n\
            ns1 IN A 192.0.2.1\n\
            www IN A 192.0.2.2\n\
            www IN A 192.0.2.3\n\
            a.b.c IN TXT \"deep\"\n\
            sub IN NS ns.sub\n\
            ns.sub IN A 192.0.2.9\n";
        let origin = ringdns_wire::name_to_wire("example.org.").unwrap();
        let records = parse_str(text, &origin, std::path::Path::new("db.example.org"))
            .unwrap()
            .records;
        let n = records.len();
        let zone = crate::Zone::build(&origin, records.clone()).unwrap();
        let walked: Vec<_> = zone.transfer_records().collect();
        assert_eq!(walked.len(), n, "every record once, glue included");
        assert_eq!(walked[0].rtype, rtype::SOA);
        assert_eq!(walked.iter().filter(|r| r.rtype == rtype::SOA).count(), 1);
        for r in &records {
            assert!(
                walked.iter().any(|w| *w.owner == *r.owner
                    && w.rtype == r.rtype
                    && w.ttl == r.ttl
                    && *w.rdata == *r.rdata),
                "{r:?} is walked"
            );
        }
        assert_eq!(zone.soa().rdata, walked[0].rdata);
    }
}
