//! SOA serial numbers compared as RFC 1982 asks (secondary's refresh, transfer's IXFR): they wrap around at 2^32, so "newer" is
//! "ahead by less than half the circle", which is how a primary's serial can pass
//! 4294967295 and go on from 0 without its secondaries refusing the change.

/// The largest step RFC 1982 §3.1 allows between two serials (2^31 - 1).
const MAX_INCREMENT: u32 = (1 << 31) - 1;

/// Whether serial `b` is newer than `a` (RFC 1982 §3.2: `a < b`). Two serials exactly
/// 2^31 apart are undefined by the RFC; this says "not newer", so such a pair never
/// triggers a transfer back and forth.
pub fn newer(a: u32, b: u32) -> bool {
    a != b && b.wrapping_sub(a) <= MAX_INCREMENT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serials_wrap_around_as_rfc_1982_says() {
        assert!(newer(1, 2));
        assert!(!newer(2, 1));
        assert!(!newer(7, 7));
        // Across the wrap.
        assert!(newer(u32::MAX, 0));
        assert!(newer(u32::MAX - 5, 10));
        assert!(!newer(10, u32::MAX - 5));
        // The largest step forward is newer, one more is not.
        assert!(newer(0, MAX_INCREMENT));
        assert!(!newer(0, MAX_INCREMENT + 1));
        // Exactly half the circle apart: undefined, so neither is newer.
        assert!(!newer(MAX_INCREMENT + 1, 0));
        assert!(newer(MAX_INCREMENT + 2, 0));
    }
}
