//! One core's two caches (positive and negative), each an LRU map bounded in entries and in
//! bytes, keyed by a hash of the lower-cased name, type, class and DO/CD bits. No lock: the
//! core owns it.

use super::entry::Entry;
use hashlink::LruCache;
use std::hash::{BuildHasherDefault, Hasher};

/// The key is already a hash: the map uses it as is.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type Map = LruCache<u64, Entry, BuildHasherDefault<KeyHasher>>;

/// The cache key: a hash of the DO/CD bits, type, class and lower-cased name, keyed by
/// `keys` (random per cache instance), so that names picked to collide and push others out
/// are much harder to find than with an unseeded hash (foldhash does not claim full HashDoS
/// resistance; a collision only ever costs an eviction, never a wrong answer). foldhash takes the name eight bytes at a time; the byte-wise FNV-1a it
/// replaced was a chain of ~25 dependent multiplies per query (~2 % of a cache hit).
pub fn key(keys: &KeyState, name_lower: &[u8], qtype: u16, qclass: u16, bits: u8) -> u64 {
    use std::hash::BuildHasher;
    let mut h = keys.build_hasher();
    h.write_u64(u64::from(bits) | (u64::from(qtype) << 8) | (u64::from(qclass) << 24));
    h.write(name_lower);
    h.finish()
}

/// The seeded hasher state of one cache instance's keys.
pub type KeyState = foldhash::fast::RandomState;

/// One bounded LRU cache.
pub struct Cache {
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

impl Cache {
    /// An empty cache of at most `max_entries` entries and `max_bytes` bytes.
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        Cache {
            map: LruCache::with_hasher(max_entries.max(1), BuildHasherDefault::default()),
            bytes: 0,
            max_entries: max_entries.max(1),
            max_bytes,
        }
    }

    /// The entry for `key`, marked most recently used.
    pub fn get_mut(&mut self, key: u64) -> Option<&mut Entry> {
        self.map.get_mut(&key)
    }

    /// Removes an entry.
    pub fn remove(&mut self, key: u64) {
        if let Some(e) = self.map.remove(&key) {
            self.bytes -= e.size();
        }
    }

    /// Stores an entry, replacing one with the same key, evicting the least recently used
    /// ones while over a bound. `expired` says whether the oldest entry is past any use, so
    /// that it is reclaimed first whatever the bounds.
    pub fn insert(&mut self, key: u64, e: Entry, expired: impl Fn(&Entry) -> bool) -> Evicted {
        let mut ev = Evicted::default();
        self.remove(key);
        // Reclaim a dead entry at the cold end on every insert: expired entries do not wait
        // for the bounds to be reached.
        if let Some((&k, old)) = self.map.iter().next() {
            if expired(old) {
                self.remove(k);
            }
        }
        let size = e.size();
        while !self.map.is_empty()
            && (self.map.len() >= self.max_entries
                || (self.max_bytes > 0 && self.bytes + size > self.max_bytes))
        {
            if let Some((_, old)) = self.map.remove_lru() {
                self.bytes -= old.size();
                ev.entries += 1;
            }
        }
        if self.max_bytes > 0 && size > self.max_bytes {
            return ev;
        }
        self.bytes += size;
        self.map.insert(key, e);
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
