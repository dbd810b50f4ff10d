//! The 12-byte header as typed views ([`Header`] to read, [`HeaderMut`] to
//! patch), so that no caller indexes header bytes or masks flag bits by
//! hand, and the section layout shared by the parser, the writer, the
//! record walker and `finalize`.
//!
//! A view is a reference to the first 12 bytes of a message, checked once
//! when it is made: every accessor after that is a fixed-offset load or
//! store with no bounds check and no copy of the message.

use super::be::{get_u16, put_u16};
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
#[inline]
pub fn header_rcode(msg: &[u8]) -> Option<u8> {
    Header::of(msg).map(Header::rcode)
}

/// Byte offsets of the header's fields (RFC 1035 §4.1.1).
const ID: usize = 0;
const FLAGS: usize = 2;
const QDCOUNT: usize = 4;

/// A read-only view of a message's header: ID, flags, opcode, rcode and the
/// four counts, read in place.
///
/// Made by [`Header::of`] (checked) or [`Header::new`] (for a message known
/// to have a header); [`Query::header`](super::Query::header) gives the
/// header of a parsed query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header<'a> {
    b: &'a [u8; HEADER_LEN],
}

impl<'a> Header<'a> {
    /// The header of `msg`, or `None` when `msg` is shorter than 12 bytes
    /// (a datagram or reply that is not a DNS message).
    #[inline]
    pub fn of(msg: &'a [u8]) -> Option<Header<'a>> {
        msg.first_chunk().map(|b| Header { b })
    }

    /// The header of `msg`, which the caller knows is at least 12 bytes
    /// long (a reply already checked, a query already parsed).
    ///
    /// # Panics
    ///
    /// When `msg` is shorter than a header, like the slice index it
    /// replaces.
    #[inline]
    #[track_caller]
    pub fn new(msg: &'a [u8]) -> Header<'a> {
        match Header::of(msg) {
            Some(h) => h,
            None => too_short(msg.len()),
        }
    }

    /// The message ID, which pairs a reply with its query.
    #[inline]
    pub fn id(self) -> u16 {
        get_u16(self.b, ID)
    }

    /// The whole 16-bit flags word (see [`flags`]), for copying a set of
    /// bits from one message to another in one go.
    #[inline]
    pub fn flags(self) -> u16 {
        get_u16(self.b, FLAGS)
    }

    /// Whether `bit` (one of [`flags`]) is set.
    #[inline]
    pub fn flag(self, bit: u16) -> bool {
        self.flags() & bit != 0
    }

    /// QR: the message is a response.
    #[inline]
    pub fn qr(self) -> bool {
        self.flag(flags::QR)
    }

    /// AA: the answer comes from an authority for the name.
    #[inline]
    pub fn aa(self) -> bool {
        self.flag(flags::AA)
    }

    /// TC: the reply was cut to fit; a client asks again over TCP.
    #[inline]
    pub fn tc(self) -> bool {
        self.flag(flags::TC)
    }

    /// RD: the client asks for recursion.
    #[inline]
    pub fn rd(self) -> bool {
        self.flag(flags::RD)
    }

    /// RA: the server offers recursion.
    #[inline]
    pub fn ra(self) -> bool {
        self.flag(flags::RA)
    }

    /// AD: the data was validated (DNSSEC).
    #[inline]
    pub fn ad(self) -> bool {
        self.flag(flags::AD)
    }

    /// CD: the client validates itself (DNSSEC checking disabled).
    #[inline]
    pub fn cd(self) -> bool {
        self.flag(flags::CD)
    }

    /// The opcode (4 bits; see [`opcode`](super::opcode)).
    #[inline]
    pub fn opcode(self) -> u8 {
        ((self.flags() & flags::OPCODE_MASK) >> 11) as u8
    }

    /// The header's rcode: the low 4 bits only. An extended rcode (16 and
    /// up) also needs the OPT record's upper bits; see
    /// [`reply::full_rcode`](super::reply::full_rcode).
    #[inline]
    pub fn rcode(self) -> u8 {
        (self.flags() & flags::RCODE_MASK) as u8
    }

    /// QDCOUNT: entries in the question section.
    #[inline]
    pub fn qdcount(self) -> u16 {
        get_u16(self.b, QDCOUNT)
    }

    /// ANCOUNT: records in the answer section.
    #[inline]
    pub fn ancount(self) -> u16 {
        self.count(Section::Answer)
    }

    /// NSCOUNT: records in the authority section.
    #[inline]
    pub fn nscount(self) -> u16 {
        self.count(Section::Authority)
    }

    /// ARCOUNT: records in the additional section (an OPT counts).
    #[inline]
    pub fn arcount(self) -> u16 {
        self.count(Section::Additional)
    }

    /// The record count of `section`, for loops over [`Section::ALL`].
    #[inline]
    pub fn count(self, section: Section) -> u16 {
        get_u16(self.b, section.count_offset())
    }
}

/// A view of a message's header that patches it in place: the ID of a
/// forwarded query or a cache hit, flags, rcode and counts.
///
/// Reading goes through [`HeaderMut::get`].
#[derive(Debug, PartialEq, Eq)]
pub struct HeaderMut<'a> {
    b: &'a mut [u8; HEADER_LEN],
}

impl<'a> HeaderMut<'a> {
    /// The header of `msg`, or `None` when `msg` is shorter than 12 bytes.
    #[inline]
    pub fn of(msg: &'a mut [u8]) -> Option<HeaderMut<'a>> {
        msg.first_chunk_mut().map(|b| HeaderMut { b })
    }

    /// The header of `msg`, which the caller knows is at least 12 bytes
    /// long.
    ///
    /// # Panics
    ///
    /// When `msg` is shorter than a header, like the slice index it
    /// replaces.
    #[inline]
    #[track_caller]
    pub fn new(msg: &'a mut [u8]) -> HeaderMut<'a> {
        let len = msg.len();
        match HeaderMut::of(msg) {
            Some(h) => h,
            None => too_short(len),
        }
    }

    /// The same header, read-only.
    #[inline]
    pub fn get(&self) -> Header<'_> {
        Header { b: self.b }
    }

    /// Sets the message ID (a forwarded query's own ID, the client's ID on
    /// its reply).
    #[inline]
    pub fn set_id(&mut self, id: u16) {
        put_u16(self.b, ID, id);
    }

    /// Replaces the whole flags word (opcode and rcode included).
    #[inline]
    pub fn set_flags(&mut self, word: u16) {
        put_u16(self.b, FLAGS, word);
    }

    /// Sets or clears `bit` (one of [`flags`]), leaving the others.
    #[inline]
    pub fn set_flag(&mut self, bit: u16, on: bool) {
        let f = self.get().flags();
        self.set_flags(if on { f | bit } else { f & !bit });
    }

    /// Sets the header's rcode (the low 4 bits of `rcode`; the upper ones
    /// belong in an OPT record).
    #[inline]
    pub fn set_rcode(&mut self, rcode: u8) {
        let f = self.get().flags() & !flags::RCODE_MASK;
        self.set_flags(f | (u16::from(rcode) & flags::RCODE_MASK));
    }

    /// Sets the record count of `section` (after records were dropped or
    /// added).
    #[inline]
    pub fn set_count(&mut self, section: Section, n: u16) {
        put_u16(self.b, section.count_offset(), n);
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn too_short(len: usize) -> ! {
    panic!("a {len}-byte message has no DNS header")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ID 0xBEEF, flags 0x8180 (QR, RD, RA), counts 1, 2, 3, 4, then a body byte.
    const MSG: [u8; 13] = [0xBE, 0xEF, 0x81, 0x80, 0, 1, 0, 2, 0, 3, 0, 4, 0xAA];

    #[test]
    fn fields_are_read_where_rfc_1035_puts_them() {
        let h = Header::new(&MSG);
        assert_eq!(h.id(), 0xBEEF);
        assert_eq!(h.flags(), 0x8180);
        assert_eq!(
            [h.qdcount(), h.ancount(), h.nscount(), h.arcount()],
            [1, 2, 3, 4]
        );
        assert_eq!(Section::ALL.map(|s| h.count(s)), [2, 3, 4]);
        assert_eq!((h.opcode(), h.rcode()), (0, 0));
    }

    #[test]
    fn each_flag_reads_its_own_bit() {
        type Get = fn(Header<'_>) -> bool;
        let all: [(u16, Get); 7] = [
            (flags::QR, |h| h.qr()),
            (flags::AA, |h| h.aa()),
            (flags::TC, |h| h.tc()),
            (flags::RD, |h| h.rd()),
            (flags::RA, |h| h.ra()),
            (flags::AD, |h| h.ad()),
            (flags::CD, |h| h.cd()),
        ];
        for (bit, _) in all {
            let mut m = [0u8; HEADER_LEN];
            m[2..4].copy_from_slice(&bit.to_be_bytes());
            let h = Header::new(&m);
            for (other, get) in all {
                assert_eq!(get(h), other == bit, "{bit:#06x} read as {other:#06x}");
            }
            assert!(h.flag(bit));
            assert_eq!((h.opcode(), h.rcode()), (0, 0), "{bit:#06x}");
        }
    }

    #[test]
    fn opcode_and_rcode_are_their_own_four_bits() {
        let mut m = [0u8; HEADER_LEN];
        // Every bit set but the opcode's 0b1010 and the rcode's 0b0101.
        let word = !flags::OPCODE_MASK & !flags::RCODE_MASK | (10 << 11) | 5;
        m[2..4].copy_from_slice(&word.to_be_bytes());
        let h = Header::new(&m);
        assert_eq!((h.opcode(), h.rcode()), (10, 5));
        assert!(h.qr() && h.aa() && h.tc() && h.rd() && h.ra() && h.ad() && h.cd());
        assert_eq!(header_rcode(&m), Some(5));
    }

    #[test]
    fn a_message_shorter_than_a_header_has_none() {
        assert!(Header::of(&MSG[..11]).is_none());
        assert!(Header::of(&[]).is_none());
        assert_eq!(Header::of(&MSG[..12]).map(Header::id), Some(0xBEEF));
        assert!(HeaderMut::of(&mut [0u8; 11]).is_none());
        assert_eq!(header_rcode(&MSG[..11]), None);
    }

    #[test]
    #[should_panic(expected = "a 11-byte message has no DNS header")]
    fn new_panics_on_a_short_message() {
        let _ = Header::new(&MSG[..11]);
    }

    #[test]
    fn setters_patch_the_message_in_place_and_only_their_field() {
        let mut m = MSG;
        let mut h = HeaderMut::new(&mut m);
        h.set_id(0x1234);
        h.set_flag(flags::TC, true);
        h.set_flag(flags::RA, false);
        h.set_rcode(0x13); // only the low 4 bits go into the header
        h.set_count(Section::Answer, 0x0506);
        h.set_count(Section::Additional, 0);
        assert!(h.get().tc() && !h.get().ra() && h.get().rd());
        assert_eq!(
            m,
            [0x12, 0x34, 0x83, 0x03, 0, 1, 5, 6, 0, 3, 0, 0, 0xAA],
            "QR|TC|RD and rcode 3; QDCOUNT, NSCOUNT and the body untouched"
        );
        let mut h = HeaderMut::new(&mut m);
        h.set_rcode(0);
        h.set_flag(flags::TC, false);
        assert_eq!(h.get().flags(), 0x8100);
        h.set_flags(0xFFFF);
        assert_eq!((h.get().opcode(), h.get().rcode()), (15, 15));
    }
}
