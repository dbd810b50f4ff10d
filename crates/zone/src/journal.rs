//! A zone's history for IXFR (RFC 1995): each version of a zone carries the differences
//! that led to it from the versions before, so that a secondary a few serials behind is
//! sent what changed instead of the whole zone. The history is part of the immutable
//! [`Zone`], made when a reload or a transfer swaps a new version in ([`Zone::following`]),
//! so a transfer reads the data and its history from one snapshot and nothing is locked.
//!
//! A difference is computed record by record (TTL included, as RFC 1995's deletions and
//! additions are whole records). The history is kept while it holds no more records than
//! the zone itself (or [`MIN_BUDGET`], for small zones), and at most [`MAX_DELTAS`] steps:
//! beyond that a full transfer is cheaper than the steps.
//! A serial that does not increase (RFC 1982) breaks the history: it starts again empty.

use crate::walk::StoredRecord;
use crate::zone::Zone;
use foldhash::fast::RandomState;
use std::collections::HashSet;
use std::sync::Arc;

/// The most steps a history keeps.
pub const MAX_DELTAS: usize = 64;

/// The records a history may always hold, however small the zone.
pub const MIN_BUDGET: usize = 1024;

/// One record held by a history (the zone versions it came from are gone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedRecord {
    owner: Box<[u8]>,
    rtype: u16,
    class: u16,
    ttl: u32,
    rdata: Box<[u8]>,
}

impl OwnedRecord {
    fn of(r: &StoredRecord<'_>) -> OwnedRecord {
        OwnedRecord {
            owner: r.owner.into(),
            rtype: r.rtype,
            class: r.class,
            ttl: r.ttl,
            rdata: r.rdata.into(),
        }
    }

    /// The record as a transfer writes it.
    pub fn stored(&self) -> StoredRecord<'_> {
        StoredRecord {
            owner: &self.owner,
            rtype: self.rtype,
            class: self.class,
            ttl: self.ttl,
            rdata: &self.rdata,
        }
    }
}

/// What changed from one serial to the next (one "difference sequence" of RFC 1995 §4).
#[derive(Debug)]
pub struct Delta {
    /// The SOA of the version before.
    pub from: OwnedRecord,
    /// The SOA of the version after.
    pub to: OwnedRecord,
    /// Records of the version before that the one after does not have (SOA aside).
    pub deleted: Vec<OwnedRecord>,
    /// Records of the version after that the one before did not have (SOA aside).
    pub added: Vec<OwnedRecord>,
    from_serial: u32,
}

impl Delta {
    /// The serial this step starts from.
    pub fn from_serial(&self) -> u32 {
        self.from_serial
    }

    /// The records a transfer of this step sends: the old SOA, the deletions, the new
    /// SOA, the additions.
    pub fn records(&self) -> impl Iterator<Item = StoredRecord<'_>> + '_ {
        std::iter::once(self.from.stored())
            .chain(self.deleted.iter().map(OwnedRecord::stored))
            .chain(std::iter::once(self.to.stored()))
            .chain(self.added.iter().map(OwnedRecord::stored))
    }

    fn len(&self) -> usize {
        self.deleted.len() + self.added.len() + 2
    }
}

/// The steps that led to a zone version, oldest first, each shared with the versions that
/// keep it.
pub type History = Vec<Arc<Delta>>;

/// The difference from `old` to `new`, the SOAs aside: one set of `old`'s records, from
/// which every record `new` also has is taken out; what `new` adds is what was not there,
/// and what is left in the set was deleted.
fn diff(old: &Zone, new: &Zone) -> Delta {
    let not_soa =
        |r: &StoredRecord<'_>| r.rtype != ringdns_wire::rtype::SOA || r.owner != old.origin();
    let mut before: HashSet<StoredRecord<'_>, RandomState> =
        HashSet::with_capacity_and_hasher(old.len(), RandomState::default());
    before.extend(old.transfer_records().filter(not_soa));
    let added = new
        .transfer_records()
        .filter(|r| not_soa(r) && !before.remove(r))
        .map(|r| OwnedRecord::of(&r))
        .collect();
    // In the walk's order, so a transfer sends them owner by owner.
    let deleted = old
        .transfer_records()
        .filter(|r| not_soa(r) && before.contains(r))
        .map(|r| OwnedRecord::of(&r))
        .collect();
    Delta {
        from: OwnedRecord::of(&old.soa()),
        to: OwnedRecord::of(&new.soa()),
        deleted,
        added,
        from_serial: old.serial(),
    }
}

impl Zone {
    /// This zone as the version after `previous` (a reload, a transfer): its history is
    /// `previous`'s and the step between the two, trimmed to what is worth keeping; empty
    /// when the serial did not increase.
    pub fn following(mut self, previous: &Zone) -> Zone {
        if !crate::serial::newer(previous.serial(), self.serial()) {
            self.history = History::new();
            return self;
        }
        let step = Arc::new(diff(previous, &self));
        let mut history: History = previous.history.to_vec();
        history.push(step);
        let budget = self.len().max(MIN_BUDGET);
        let mut kept: usize = history.iter().map(|d| d.len()).sum();
        let mut cut = history.len().saturating_sub(MAX_DELTAS);
        kept -= history[..cut].iter().map(|d| d.len()).sum::<usize>();
        for d in &history[cut..] {
            if kept <= budget {
                break;
            }
            kept -= d.len();
            cut += 1;
        }
        history.drain(..cut);
        self.history = history;
        self
    }

    /// The steps from `serial` to this version, for an IXFR from a client that has
    /// `serial`; `None` when the history does not reach back to it.
    pub fn deltas_since(&self, serial: u32) -> Option<&[Arc<Delta>]> {
        let i = self.history.iter().position(|d| d.from_serial == serial)?;
        Some(&self.history[i..])
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::parse_str;
    use crate::zone::Zone;
    use std::path::Path;

    fn zone(serial: u32, body: &str) -> Zone {
        let text = format!(
            "$ORIGIN example.org.\n$TTL 1h\n@ IN SOA ns hm {serial} 2h 30m 2w 5m\n@ IN NS ns\n{body}"
        );
        let origin = ringdns_wire::name_to_wire("example.org.").unwrap();
        let p = parse_str(&text, &origin, Path::new("db")).unwrap();
        Zone::build(&origin, p.records).unwrap()
    }

    fn names(rs: &[super::OwnedRecord]) -> Vec<(String, u32)> {
        rs.iter()
            .map(|r| {
                let s = r.stored();
                (
                    ringdns_wire::Name::from_wire(s.owner).unwrap().to_string(),
                    s.ttl,
                )
            })
            .collect()
    }

    #[test]
    fn a_step_holds_what_was_deleted_and_added_ttl_changes_included() {
        let v1 = zone(1, "a IN A 192.0.2.1\nb IN A 192.0.2.2\nc 60 IN TXT x\n");
        let v2 = zone(
            2,
            "a IN A 192.0.2.1\nb IN A 192.0.2.3\nc 120 IN TXT x\nd IN A 192.0.2.4\n",
        )
        .following(&v1);
        let steps = v2.deltas_since(1).expect("one step");
        assert_eq!(steps.len(), 1);
        let d = &steps[0];
        assert_eq!(
            names(&d.deleted),
            [
                ("b.example.org.".into(), 3600),
                ("c.example.org.".into(), 60)
            ]
        );
        assert_eq!(
            names(&d.added),
            [
                ("b.example.org.".into(), 3600),
                ("c.example.org.".into(), 120),
                ("d.example.org.".into(), 3600)
            ]
        );
        assert_eq!(d.records().count(), 2 + 2 + 3);
        assert!(v2.deltas_since(2).is_none(), "up to date is not a step");
        assert!(v2.deltas_since(7).is_none());
    }

    #[test]
    fn steps_chain_and_a_serial_going_back_starts_again() {
        let body = |n: u32| format!("a IN A 192.0.2.{n}\nb IN A 192.0.2.200\nc IN A 192.0.2.201\n");
        let v1 = zone(1, &body(1));
        let v2 = zone(2, &body(2)).following(&v1);
        let v3 = zone(3, &body(3)).following(&v2);
        assert_eq!(v3.deltas_since(1).map(|s| s.len()), Some(2));
        assert_eq!(v3.deltas_since(2).map(|s| s.len()), Some(1));
        let back = zone(1, &body(9)).following(&v3);
        assert!(back.deltas_since(3).is_none());
        let same = zone(3, &body(4)).following(&v3);
        assert!(
            same.deltas_since(2).is_none(),
            "same serial, new data: no history"
        );
    }

    #[test]
    fn a_history_larger_than_the_zone_is_trimmed_oldest_first() {
        // 300 addresses; each step changes 200 of them: 402 records a step, against a
        // budget of 1024 (the zone's 302 records are fewer).
        let body = |s: u32| {
            (0..300)
                .map(|i| {
                    format!(
                        "h{i} IN A 192.0.{}.{}\n",
                        if i < 200 { s } else { 0 },
                        i % 250
                    )
                })
                .collect::<String>()
        };
        let mut z = zone(1, &body(1));
        for s in 2..=4 {
            z = zone(s, &body(s)).following(&z);
        }
        assert_eq!(z.deltas_since(2).map(|d| d.len()), Some(2));
        assert!(
            z.deltas_since(1).is_none(),
            "three steps (1206 records) exceed 1024"
        );
        // No more than MAX_DELTAS steps, however small.
        let small = |n: u32| format!("a IN A 192.0.2.{}\n", n % 250);
        let mut z = zone(1, &small(1));
        for s in 2..=(super::MAX_DELTAS as u32 + 6) {
            z = zone(s, &small(s)).following(&z);
        }
        assert!(
            z.deltas_since(6)
                .is_some_and(|d| d.len() == super::MAX_DELTAS)
        );
        assert!(z.deltas_since(5).is_none());
    }
}
