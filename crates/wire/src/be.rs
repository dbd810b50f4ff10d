//! Big-endian integers at byte offsets: how every fixed field of a DNS
//! message (header words, record type, class, TTL, RDATA lengths, option
//! codes) is read and written, in one place instead of a copy per module.
//!
//! Each function indexes the slice, so an offset out of range panics like
//! any slice index; callers check the length first (or know it).

/// Reads the big-endian `u16` at `off`.
#[inline]
pub fn get_u16(b: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([b[off], b[off + 1]])
}

/// Writes `v` as a big-endian `u16` at `off`.
#[inline]
pub fn put_u16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_be_bytes());
}

/// Reads the big-endian `u32` at `off` (a TTL, SOA timers).
#[inline]
pub fn get_u32(b: &[u8], off: usize) -> u32 {
    u32::from_be_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

/// Writes `v` as a big-endian `u32` at `off` (a TTL patched in place).
#[inline]
pub fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_order_at_an_offset() {
        let mut b = [0u8; 7];
        put_u16(&mut b, 1, 0x1234);
        put_u32(&mut b, 3, 0xA1B2_C3D4);
        assert_eq!(b, [0, 0x12, 0x34, 0xA1, 0xB2, 0xC3, 0xD4]);
        assert_eq!(get_u16(&b, 1), 0x1234);
        assert_eq!(get_u16(&b, 2), 0x34A1);
        assert_eq!(get_u32(&b, 3), 0xA1B2_C3D4);
        assert_eq!(get_u32(&b, 2), 0x34A1_B2C3);
    }

    #[test]
    #[should_panic]
    fn out_of_range_panics_like_an_index() {
        let _ = get_u32(&[0u8; 5], 2);
    }
}
