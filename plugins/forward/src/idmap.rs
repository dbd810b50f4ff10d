//! Maps of waiting queries by DNS message ID. The IDs are random already, so the map needs
//! no keyed hash against flooding: one multiplication spreads them over the table (std's
//! SipHash costs more than the rest of a lookup).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map keyed by message ID.
pub type IdMap<V> = HashMap<u16, V, BuildHasherDefault<IdHasher>>;

/// Fibonacci hashing of a 16-bit ID: the high bits, which the table's control bytes use,
/// vary with every bit of the ID.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u16(&mut self, id: u16) {
        self.0 = u64::from(id).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_spread_over_the_high_bits() {
        use std::hash::BuildHasher;
        let b = BuildHasherDefault::<IdHasher>::default();
        let tops: std::collections::HashSet<u64> =
            (0u16..256).map(|id| b.hash_one(id) >> 57).collect();
        assert!(
            tops.len() > 64,
            "only {} distinct control values",
            tops.len()
        );
        let mut m: IdMap<u32> = IdMap::default();
        for id in 0..1000u16 {
            m.insert(id, u32::from(id));
        }
        assert!((0..1000u16).all(|id| m[&id] == u32::from(id)));
    }
}
