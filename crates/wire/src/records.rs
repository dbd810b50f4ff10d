//! A zero-allocation walker over the resource records of a message: where
//! each record, its owner, TTL and RDATA are. Truncation, TTL patching (the
//! cache) and validation all build on it.

use std::fmt;
use std::ops::Range;

use super::be::get_u16;
use super::consts::HEADER_LEN;
use super::header::{Header, Section};
use super::name::{NameError, walk_compressed};

/// Why a message could not be walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Shorter than the 12-byte header.
    TooShort,
    /// A name (question or owner) is malformed.
    Name(NameError),
    /// A question or record runs past the end of the message.
    Truncated,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::TooShort => f.write_str("message shorter than a header"),
            WireError::Name(e) => write!(f, "bad name: {e}"),
            WireError::Truncated => f.write_str("record runs past the end of the message"),
        }
    }
}

impl std::error::Error for WireError {}

impl From<NameError> for WireError {
    fn from(e: NameError) -> Self {
        WireError::Name(e)
    }
}

/// Where one resource record lives inside a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The section the record belongs to.
    pub section: Section,
    /// The whole record (owner through RDATA).
    pub range: Range<usize>,
    /// The owner name's bytes at the record's position (a pointer when
    /// compressed).
    pub owner: Range<usize>,
    /// Length of the owner once decompressed (1 = the root).
    pub owner_wire_len: usize,
    /// Record type.
    pub rtype: u16,
    /// Record class (the UDP payload size for OPT).
    pub class: u16,
    /// Offset of the 4-byte TTL field (the cache rewrites TTLs in place).
    pub ttl_offset: usize,
    /// The RDATA bytes.
    pub rdata: Range<usize>,
}

impl Record {
    /// The TTL as stored in `msg` (for OPT: extended rcode, version, flags).
    #[inline]
    pub fn ttl(&self, msg: &[u8]) -> u32 {
        let o = self.ttl_offset;
        u32::from_be_bytes([msg[o], msg[o + 1], msg[o + 2], msg[o + 3]])
    }
}

/// Parses the record at `off`: owner (compression followed to validate),
/// fixed fields, RDATA bounds. RDATA content is not looked at.
// Always inlined: returned through memory, the Record was copied out in pieces whose loads
// straddled parse_rr's stores (a store-forwarding stall per record in the profile).
#[inline(always)]
pub(crate) fn parse_rr(msg: &[u8], off: usize, section: Section) -> Result<Record, WireError> {
    let owner = walk_compressed(msg, off, msg.len()).map_err(|e| match e {
        NameError::Truncated => WireError::Truncated,
        e => WireError::Name(e),
    })?;
    let f = owner.end;
    if f + 10 > msg.len() {
        return Err(WireError::Truncated);
    }
    let rdlen = get_u16(msg, f + 8) as usize;
    let rd_start = f + 10;
    let end = rd_start + rdlen;
    if end > msg.len() {
        return Err(WireError::Truncated);
    }
    Ok(Record {
        section,
        range: off..end,
        owner: off..f,
        owner_wire_len: owner.wire_len,
        rtype: get_u16(msg, f),
        class: get_u16(msg, f + 2),
        ttl_offset: f + 4,
        rdata: rd_start..end,
    })
}

/// Walks the records of a message in wire order (see [`records`]).
///
/// Yields `Err` once and then stops when a record is malformed, so a
/// caller that only needs validity can `collect::<Result<..>>` or stop at
/// the first error.
#[derive(Clone, Debug)]
pub struct RecordIter<'m> {
    msg: &'m [u8],
    off: usize,
    question_end: usize,
    remaining: [u16; 3],
    section: usize,
    failed: bool,
}

impl<'m> RecordIter<'m> {
    /// Offset of the next record; once the iterator is exhausted without an
    /// error, the end of the last record (bytes after it are not part of
    /// the message as far as the counts go).
    #[inline]
    pub fn offset(&self) -> usize {
        self.off
    }

    /// Offset just past the question section.
    #[inline]
    pub fn question_end(&self) -> usize {
        self.question_end
    }

    /// The message being walked.
    #[inline]
    pub fn message(&self) -> &'m [u8] {
        self.msg
    }
}

impl Iterator for RecordIter<'_> {
    type Item = Result<Record, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        while self.section < 3 && self.remaining[self.section] == 0 {
            self.section += 1;
        }
        if self.section == 3 {
            return None;
        }
        let section = Section::ALL[self.section];
        match parse_rr(self.msg, self.off, section) {
            Ok(r) => {
                self.off = r.range.end;
                self.remaining[self.section] -= 1;
                Some(Ok(r))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// Starts walking the records of `msg`: checks the header, skips the
/// question section (QDCOUNT entries, names may be compressed) and returns
/// an iterator over the answer, authority and additional records as the
/// header counts them.
pub fn records(msg: &[u8]) -> Result<RecordIter<'_>, WireError> {
    let Some(h) = Header::of(msg) else {
        return Err(WireError::TooShort);
    };
    let mut off = HEADER_LEN;
    for _ in 0..h.qdcount() {
        let n = walk_compressed(msg, off, msg.len())?;
        off = n.end + 4;
        if off > msg.len() {
            return Err(WireError::Truncated);
        }
    }
    Ok(RecordIter {
        msg,
        off,
        question_end: off,
        remaining: [
            h.count(Section::Answer),
            h.count(Section::Authority),
            h.count(Section::Additional),
        ],
        section: 0,
        failed: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg_with(records: &[(&[u8], u16, u32, &[u8])], counts: [u16; 3]) -> Vec<u8> {
        let mut m = vec![0, 1, 0x81, 0x80, 0, 1];
        for c in counts {
            m.extend_from_slice(&c.to_be_bytes());
        }
        m.extend_from_slice(b"\x01a\x00\x00\x01\x00\x01");
        for (owner, t, ttl, rd) in records {
            m.extend_from_slice(owner);
            m.extend_from_slice(&t.to_be_bytes());
            m.extend_from_slice(&1u16.to_be_bytes());
            m.extend_from_slice(&ttl.to_be_bytes());
            m.extend_from_slice(&(rd.len() as u16).to_be_bytes());
            m.extend_from_slice(rd);
        }
        m
    }

    #[test]
    fn walks_sections_and_fields() {
        let m = msg_with(
            &[
                (b"\xC0\x0C", 1, 300, &[1, 2, 3, 4]),
                (b"\x01b\x00", 2, 60, b"\xC0\x0C"),
                (b"\x00", 41, 0, b""),
            ],
            [1, 1, 1],
        );
        let it = records(&m).unwrap();
        assert_eq!(it.question_end(), 12 + 7);
        let recs: Vec<Record> = it.map(Result::unwrap).collect();
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[0].section, Section::Answer);
        assert_eq!(recs[0].rtype, 1);
        assert_eq!(recs[0].ttl(&m), 300);
        assert_eq!(&m[recs[0].rdata.clone()], &[1, 2, 3, 4]);
        assert_eq!(recs[0].owner, 19..21);
        assert_eq!(recs[0].owner_wire_len, 3);
        assert_eq!(recs[1].section, Section::Authority);
        assert_eq!(recs[1].ttl(&m), 60);
        assert_eq!(recs[2].section, Section::Additional);
        assert_eq!(recs[2].rtype, 41);
        assert_eq!(recs[2].range.end, m.len());
    }

    #[test]
    fn errors_stop_the_walk() {
        let mut m = msg_with(&[(b"\xC0\x0C", 1, 300, &[1, 2, 3, 4])], [2, 0, 0]);
        let mut it = records(&m).unwrap();
        assert!(it.next().unwrap().is_ok());
        assert_eq!(it.next().unwrap().unwrap_err(), WireError::Truncated);
        assert!(it.next().is_none());
        // rdata past the end
        m.truncate(m.len() - 1);
        let mut it = records(&m).unwrap();
        assert_eq!(it.next().unwrap().unwrap_err(), WireError::Truncated);
        // forward pointer in owner
        let f = msg_with(&[(b"\xC0\x20", 1, 1, b"")], [1, 0, 0]);
        let mut it = records(&f).unwrap();
        assert_eq!(
            it.next().unwrap().unwrap_err(),
            WireError::Name(NameError::BadPointer)
        );
        assert_eq!(records(&[0u8; 5]).unwrap_err(), WireError::TooShort);
        let mut q = vec![0u8; 12];
        q[5] = 1;
        q.extend_from_slice(b"\x01a\x00\x00");
        assert_eq!(records(&q).unwrap_err(), WireError::Truncated);
    }
}
