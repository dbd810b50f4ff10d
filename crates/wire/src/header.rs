//! The 12-byte header and the section layout shared by the parser, the
//! writer, the record walker and `finalize`.

use super::consts::{HEADER_LEN, flags};

/// One of the three record sections of a message, in wire order.
///
/// The order (`Answer < Authority < Additional`) is what the writer enforces
/// and what truncation walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    /// The answer section (ANCOUNT).
    Answer = 0,
    /// The authority section (NSCOUNT).
    Authority = 1,
    /// The additional section (ARCOUNT); where the OPT record lives.
    Additional = 2,
}

impl Section {
    /// All sections in wire order, for loops.
    pub const ALL: [Section; 3] = [Section::Answer, Section::Authority, Section::Additional];

    /// Byte offset of this section's count in the header.
    #[inline]
    pub(crate) fn count_offset(self) -> usize {
        6 + 2 * self as usize
    }
}

/// Reads a big-endian `u16` at `off` (caller guarantees bounds).
#[inline]
pub(crate) fn get_u16(b: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([b[off], b[off + 1]])
}

/// Writes a big-endian `u16` at `off` (caller guarantees bounds).
#[inline]
pub(crate) fn put_u16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_be_bytes());
}

/// Reads the count of `section` from a message with a full header.
#[inline]
pub(crate) fn count(msg: &[u8], section: Section) -> u16 {
    get_u16(msg, section.count_offset())
}

/// Writes the count of `section` into a message with a full header.
#[inline]
pub(crate) fn set_count(msg: &mut [u8], section: Section, v: u16) {
    put_u16(msg, section.count_offset(), v)
}

/// Sets or clears `bit` (one of [`flags`]) in a message with a full header.
#[inline]
pub(crate) fn set_flag(msg: &mut [u8], bit: u16, on: bool) {
    let mut f = get_u16(msg, 2);
    if on {
        f |= bit;
    } else {
        f &= !bit;
    }
    put_u16(msg, 2, f);
}

/// Writes a 12-byte header at the end of `out`.
#[inline]
pub(crate) fn write_header(out: &mut Vec<u8>, id: u16, flag_word: u16, counts: [u16; 4]) {
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&flag_word.to_be_bytes());
    for c in counts {
        out.extend_from_slice(&c.to_be_bytes());
    }
}

/// The low 4 bits of the rcode from a message header, or `None` when the
/// message is shorter than a header. Useful for metrics on a finished reply.
pub fn header_rcode(msg: &[u8]) -> Option<u8> {
    if msg.len() < HEADER_LEN {
        return None;
    }
    Some((get_u16(msg, 2) & flags::RCODE_MASK) as u8)
}
