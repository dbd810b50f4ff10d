//! One core's two caches (positive and negative), each a map bounded in entries and in
//! bytes, keyed by a hash of the lower-cased name, type, class and DO/CD bits, evicting by
//! second chance (CLOCK, an approximation of least-recently-used). No lock: the core owns
//! it.

use super::entry::Entry;
use hashlink::LinkedHashMap;
use ringdns_plugin::prehashed::Prehashed;
use ringdns_plugin::wire::Name;
use std::hash::Hasher;

/// An entry and whether a hit used it since it last reached the cold end.
struct Held {
    entry: Entry,
    used: bool,
}

/// Insertion order, oldest (the cold end) first.
type Map = LinkedHashMap<u64, Held, Prehashed>;

/// Marked entries at the cold end passed over (moved to the warm end, unmarked) for each
/// one evicted, at most: an insert's work stays bounded however many are marked.
const SECOND_CHANCES: usize = 8;

/// The cache key: a hash of the DO/CD bits, type, class and lower-cased name, keyed by
/// `keys` (random per cache instance), so that names picked to collide and push others out
/// are much harder to find than with an unseeded hash (foldhash does not claim full HashDoS
/// resistance; a collision only ever costs an eviction, never a wrong answer). The name is
/// lower-cased and hashed eight bytes at a time straight from the packet; the byte-wise
/// FNV-1a this replaced was a chain of ~25 dependent multiplies per query.
pub fn key(keys: &KeyState, name: &Name<'_>, qtype: u16, qclass: u16, bits: u8) -> u64 {
    use std::hash::BuildHasher;
    let mut h = keys.build_hasher();
    h.write_u64(
        u64::from(bits)
            | (u64::from(qtype) << 8)
            | (u64::from(qclass) << 24)
            | ((name.wire_len() as u64) << 40),
    );
    name.for_each_lowercase_word(|w| h.write_u64(w));
    h.finish()
}

/// The seeded hasher state of one cache instance's keys.
pub type KeyState = foldhash::fast::RandomState;

/// One bounded store of entries (the plugin keeps two: success and denial).
///
/// A hit only marks its entry (no relinking: moving an entry to the warm end of a linked
/// map touches its neighbours, two more likely cache misses on every hit); eviction takes
/// the oldest entry, passing over marked ones once (second chance). Entries in use stay;
/// the ones evicted are those unused since they reached the cold end.
pub struct Store {
    map: Map,
    bytes: usize,
    max_entries: usize,
    max_bytes: usize,
}

/// What an insert pushed out.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    /// Entries removed to make room.
    pub entries: u64,
}

impl Store {
    /// An empty cache of at most `max_entries` entries and `max_bytes` bytes.
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        Store {
            map: LinkedHashMap::with_hasher(Prehashed::default()),
            bytes: 0,
            max_entries: max_entries.max(1),
            max_bytes,
        }
    }

    /// The entry for `key`, marked as used (it is being answered from).
    pub fn get_mut(&mut self, key: u64) -> Option<&mut Entry> {
        let h = self.map.get_mut(&key)?;
        h.used = true;
        Some(&mut h.entry)
    }

    /// The entry for `key` when `answerable` says it is the one to answer from, marked as
    /// used: one probe where `peek` then `get_mut` take two.
    pub fn get_mut_if(
        &mut self,
        key: u64,
        answerable: impl FnOnce(&Entry) -> bool,
    ) -> Option<&mut Entry> {
        let h = self.map.get_mut(&key)?;
        if !answerable(&h.entry) {
            return None;
        }
        h.used = true;
        Some(&mut h.entry)
    }

    /// The entry for `key`, not marked: for deciding what to answer from.
    pub fn peek(&self, key: u64) -> Option<&Entry> {
        self.map.get(&key).map(|h| &h.entry)
    }

    /// The entry for `key` to update, not marked: for bookkeeping that is not an answer
    /// (a refresh's outcome), which should not keep an entry from eviction.
    pub fn peek_mut(&mut self, key: u64) -> Option<&mut Entry> {
        self.map.get_mut(&key).map(|h| &mut h.entry)
    }

    /// Removes an entry.
    pub fn remove(&mut self, key: u64) {
        if let Some(h) = self.map.remove(&key) {
            self.bytes -= h.entry.size();
        }
    }

    /// Removes the oldest entry not marked, passing over (and unmarking) up to
    /// [`SECOND_CHANCES`] marked ones; false when empty.
    fn evict_one(&mut self) -> bool {
        for _ in 0..SECOND_CHANCES {
            let Some((&k, h)) = self.map.front() else {
                return false;
            };
            if !h.used {
                break;
            }
            if let Some(h) = self.map.to_back(&k) {
                h.used = false;
            }
        }
        match self.map.pop_front() {
            Some((_, h)) => {
                self.bytes -= h.entry.size();
                true
            }
            None => false,
        }
    }

    /// Stores an entry, replacing one with the same key, evicting while over a bound.
    /// `expired` says whether the oldest entry is past any use, so that it is reclaimed
    /// first whatever the bounds.
    pub fn insert(&mut self, key: u64, e: Entry, expired: impl Fn(&Entry) -> bool) -> Evicted {
        let mut ev = Evicted::default();
        self.remove(key);
        let size = e.size();
        if self.max_bytes > 0 && size > self.max_bytes {
            // Could never fit: not stored, and nothing evicted for it.
            return ev;
        }
        // Reclaim a dead entry at the cold end on every insert: expired entries do not wait
        // for the bounds to be reached.
        if let Some((&k, old)) = self.map.front()
            && expired(&old.entry)
        {
            self.remove(k);
        }
        while self.map.len() >= self.max_entries
            || (self.max_bytes > 0 && self.bytes + size > self.max_bytes)
        {
            if !self.evict_one() {
                break;
            }
            ev.entries += 1;
        }
        self.bytes += size;
        self.map.insert(
            key,
            Held {
                entry: e,
                used: false,
            },
        );
        ev
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn entry(name: &str) -> Entry {
        Entry::for_test(name.as_bytes(), &[0u8; 40], &[6, 20], Instant::now())
    }

    fn keys(c: &Store) -> Vec<u64> {
        c.map.keys().copied().collect()
    }

    /// A cache of `capacity` entries holding `keys`, stored in that order.
    fn holding(capacity: usize, keys: &[u64]) -> Store {
        let mut c = Store::new(capacity, 0);
        for &k in keys {
            c.insert(k, entry("x"), |_| false);
        }
        c
    }

    #[test]
    fn a_used_entry_gets_a_second_chance_and_an_unused_one_goes() {
        let mut c = holding(2, &[1, 2]);
        assert!(c.get_mut(1).is_some());
        let ev = c.insert(3, entry("c"), |_| false);
        assert_eq!(ev.entries, 1);
        assert_eq!(keys(&c), [1, 3], "2 (unused) evicted, 1 (used) kept");
        // 1 lost its mark when it was passed over: next time it goes.
        c.insert(4, entry("d"), |_| false);
        assert_eq!(keys(&c), [3, 4]);
    }

    #[test]
    fn peeking_does_not_mark() {
        let mut c = holding(2, &[1, 2]);
        assert!(c.peek(1).is_some());
        c.insert(3, entry("c"), |_| false);
        assert_eq!(keys(&c), [2, 3]);
    }

    #[test]
    fn a_conditional_get_marks_only_the_entry_it_hands_out() {
        let mut c = holding(2, &[1, 2]);
        assert!(c.get_mut_if(1, |_| false).is_none());
        c.insert(3, entry("c"), |_| false);
        assert_eq!(keys(&c), [2, 3], "1 declined, so not marked: evicted");
        assert!(c.get_mut_if(2, |_| true).is_some());
        c.insert(4, entry("d"), |_| false);
        assert_eq!(keys(&c), [2, 4], "2 handed out, so marked: kept");
    }

    #[test]
    fn updating_an_entry_does_not_mark_it() {
        let mut c = holding(2, &[1, 2]);
        c.peek_mut(1).unwrap().refreshing = true;
        c.insert(3, entry("c"), |_| false);
        assert_eq!(keys(&c), [2, 3]);
    }

    #[test]
    fn when_all_are_used_one_is_still_evicted_after_a_bounded_pass() {
        let n = SECOND_CHANCES as u64 * 2;
        let mut c = Store::new(n as usize, 0);
        for k in 0..n {
            c.insert(k, entry("x"), |_| false);
            c.get_mut(k);
        }
        let ev = c.insert(n, entry("y"), |_| false);
        assert_eq!(ev.entries, 1);
        assert_eq!(c.len(), n as usize);
        // The first SECOND_CHANCES were passed over; the next in line went.
        assert!(c.peek(SECOND_CHANCES as u64).is_none());
        assert!(c.peek(0).is_some());
    }

    #[test]
    fn the_byte_bound_holds_and_an_entry_that_cannot_fit_evicts_nothing() {
        let size = entry("a").size();
        let mut c = Store::new(100, size * 2);
        for k in 0..5 {
            c.insert(k, entry("a"), |_| false);
            assert!(c.bytes() <= size * 2);
        }
        assert_eq!(keys(&c), [3, 4]);
        let huge = Entry::for_test(b"h", &vec![0u8; size * 3], &[], Instant::now());
        let ev = c.insert(9, huge, |_| false);
        assert_eq!(ev.entries, 0);
        assert_eq!(keys(&c), [3, 4]);
    }

    #[test]
    fn an_expired_entry_at_the_cold_end_is_reclaimed_on_insert() {
        let mut c = holding(100, &[1, 2]);
        // Every entry here counts as expired: only the one at the cold end is reclaimed.
        c.insert(3, entry("newer"), |_| true);
        assert_eq!(keys(&c), [2, 3]);
    }
}
