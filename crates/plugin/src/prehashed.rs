//! A hasher for maps whose keys are already seeded hashes (the cache's and rrl's): hashing
//! them again would cost a second hash per lookup for nothing.

use std::hash::{BuildHasherDefault, Hasher};

/// Passes a `u64` key through as its own hash.
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

/// What a map keyed by pre-hashed `u64`s is built with.
pub type Prehashed = BuildHasherDefault<KeyHasher>;
