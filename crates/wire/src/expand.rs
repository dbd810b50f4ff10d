//! Copying names and RDATA out of a received message in uncompressed form: what a zone
//! transfer's records and a looked-up answer need before they can be stored or written
//! into another message (a compression pointer means nothing outside its own message).

use super::consts::rtype;
use super::name::{NameError, walk_compressed};
use super::records::{Record, WireError};

/// Appends the name at `start` of `msg` to `out`, uncompressed; returns the offset just
/// past the name's bytes at `start`.
pub fn expand_name(
    msg: &[u8],
    start: usize,
    limit: usize,
    out: &mut Vec<u8>,
) -> Result<usize, NameError> {
    let walked = walk_compressed(msg, start, limit)?;
    let mut pos = start;
    loop {
        let c = msg[pos];
        if c & 0xC0 == 0xC0 {
            pos = (((c & 0x3F) as usize) << 8) | msg[pos + 1] as usize;
            continue;
        }
        out.push(c);
        if c == 0 {
            return Ok(walked.end);
        }
        out.extend_from_slice(&msg[pos + 1..pos + 1 + c as usize]);
        pos += 1 + c as usize;
    }
}

/// The layout of an RDATA that may hold compressed names (RFC 3597 §4: the types of RFC
/// 1035, plus those that implementations are known to compress): fixed bytes and names
/// in order. Other types are copied as they are.
fn layout(t: u16) -> &'static [Part] {
    use Part::{Fixed, Name};
    match t {
        rtype::NS | rtype::CNAME | rtype::PTR | rtype::DNAME | 3 | 4 | 7 | 8 | 9 => &[Name],
        rtype::SOA => &[Name, Name, Fixed(20)],
        rtype::MX | 18 /* AFSDB */ | 21 /* RT */ => &[Fixed(2), Name],
        14 /* MINFO */ | 17 /* RP */ => &[Name, Name],
        rtype::SRV => &[Fixed(6), Name],
        26 /* PX */ => &[Fixed(2), Name, Name],
        _ => &[],
    }
}

#[derive(Clone, Copy)]
enum Part {
    Fixed(usize),
    Name,
}

/// Appends a record's RDATA to `out` with its names uncompressed.
pub fn expand_rdata(msg: &[u8], r: &Record, out: &mut Vec<u8>) -> Result<(), WireError> {
    let parts = layout(r.rtype);
    let (start, end) = (r.rdata.start, r.rdata.end);
    if parts.is_empty() {
        out.extend_from_slice(&msg[start..end]);
        return Ok(());
    }
    let mut pos = start;
    for p in parts {
        match *p {
            Part::Fixed(n) => {
                if pos + n > end {
                    return Err(WireError::Truncated);
                }
                out.extend_from_slice(&msg[pos..pos + n]);
                pos += n;
            }
            Part::Name => pos = expand_name(msg, pos, end, out)?,
        }
    }
    if pos != end {
        // Bytes the layout does not know (an extended form): keep them.
        out.extend_from_slice(&msg[pos..end]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Section, name_to_wire, records};

    /// A reply with a CNAME whose target and owner are compressed against the question.
    fn reply() -> Vec<u8> {
        let mut m = vec![0, 1, 0x81, 0, 0, 1, 0, 2, 0, 0, 0, 0];
        m.extend(name_to_wire("www.example.org").unwrap());
        m.extend([0, 5, 0, 1]);
        // www.example.org CNAME web.<example.org>
        m.extend([
            0xC0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 6, 3, b'w', b'e', b'b', 0xC0, 16,
        ]);
        // web.example.org (pointer to the CNAME's target) MX 10 <example.org>
        m.extend([0xC0, 45, 0, 15, 0, 1, 0, 0, 0, 60, 0, 4, 0, 10, 0xC0, 16]);
        m
    }

    #[test]
    fn names_and_rdata_come_out_whole() {
        let m = reply();
        let recs: Vec<Record> = records(&m).unwrap().map(Result::unwrap).collect();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].section, Section::Answer);
        let mut owner = Vec::new();
        expand_name(&m, recs[1].owner.start, m.len(), &mut owner).unwrap();
        assert_eq!(owner, name_to_wire("web.example.org").unwrap());
        let mut rd = Vec::new();
        expand_rdata(&m, &recs[0], &mut rd).unwrap();
        assert_eq!(rd, name_to_wire("web.example.org").unwrap());
        rd.clear();
        expand_rdata(&m, &recs[1], &mut rd).unwrap();
        let mut want = vec![0, 10];
        want.extend(name_to_wire("example.org").unwrap());
        assert_eq!(rd, want);
    }

    #[test]
    fn a_name_running_out_of_its_rdata_is_an_error() {
        let mut m = reply();
        // Cut the CNAME's RDLENGTH to 3: the name no longer fits.
        m[44] = 3;
        let r = Record {
            rdata: 45..48,
            ..records(&reply()).unwrap().next().unwrap().unwrap()
        };
        assert!(expand_rdata(&m, &r, &mut Vec::new()).is_err());
    }
}
