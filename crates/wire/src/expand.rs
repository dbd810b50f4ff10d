//! Copying names and RDATA out of a received message in uncompressed form: what a zone
//! transfer's records and a looked-up answer need before they can be stored or written
//! into another message (a compression pointer means nothing outside its own message).

use super::consts::rtype;
use super::name::{NameError, name_spans};
use super::records::{Record, WireError};

/// Appends the name at `start` of `msg` to `out`, uncompressed; returns the offset just
/// past the name's bytes at `start`.
pub fn expand_name(
    msg: &[u8],
    start: usize,
    limit: usize,
    out: &mut Vec<u8>,
) -> Result<usize, NameError> {
    // The labels (and the root byte) as they are read; the pointers are not copied.
    name_spans(msg, start, limit, |s| {
        if msg[s.start] & 0xC0 != 0xC0 {
            out.extend_from_slice(&msg[s]);
        }
    })
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
    copy_rdata(msg, r, out, |out, pos, end| expand_name(msg, pos, end, out))
}

/// Appends a record's RDATA to `out`, each name in it written by `name(out, pos, end)`,
/// which reads the (possibly compressed) name at `pos` of `msg`, within `end`, and returns
/// the offset just past it; the bytes around the names are copied. For a writer that puts
/// the names of a received record into another message its own way (loadbalance compresses
/// them again, where [`rdata_names_compressible`] allows). On an error `out` may hold part
/// of the RDATA.
pub fn copy_rdata(
    msg: &[u8],
    r: &Record,
    out: &mut Vec<u8>,
    mut name: impl FnMut(&mut Vec<u8>, usize, usize) -> Result<usize, NameError>,
) -> Result<(), WireError> {
    // The bytes between the names (and after the last, an extended form's) are copied.
    let mut copied = r.rdata.start;
    rdata_names(r, |pos, end| {
        out.extend_from_slice(&msg[copied..pos]);
        copied = name(out, pos, end)?;
        Ok(copied)
    })?;
    out.extend_from_slice(&msg[copied..r.rdata.end]);
    Ok(())
}

/// Calls `name(pos, end)` for each name in the RDATA of record `r` (of its message), in order, as the RDATA's
/// layout places them (none for the types without names); `name` reads the name at `pos`
/// (within `end`, the RDATA's end) and returns the offset just past it.
pub fn rdata_names(
    r: &Record,
    mut name: impl FnMut(usize, usize) -> Result<usize, NameError>,
) -> Result<(), WireError> {
    let end = r.rdata.end;
    let mut pos = r.rdata.start;
    for p in layout(r.rtype) {
        match *p {
            Part::Fixed(n) => {
                if pos + n > end {
                    return Err(WireError::Truncated);
                }
                pos += n;
            }
            Part::Name => pos = name(pos, end)?,
        }
    }
    Ok(())
}

/// Whether the names in the RDATA of type `t` may be written compressed: RFC 3597 §4 allows
/// it for the well-known types of RFC 1035 only (NS, MD, MF, CNAME, SOA, MB, MG, MR, PTR,
/// MINFO, MX); the names of any other type go out whole.
pub fn rdata_names_compressible(t: u16) -> bool {
    matches!(
        t,
        rtype::NS | 3 | 4 | rtype::CNAME | rtype::SOA | 7 | 8 | 9 | rtype::PTR | 14 | rtype::MX
    )
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
    fn copy_rdata_hands_each_name_to_the_writer() {
        let m = reply();
        let recs: Vec<Record> = records(&m).unwrap().map(Result::unwrap).collect();
        // The MX: its preference copied, its name written by the closure.
        let mut out = Vec::new();
        let mut seen = Vec::new();
        copy_rdata(&m, &recs[1], &mut out, |out, pos, end| {
            let mut n = Vec::new();
            let next = expand_name(&m, pos, end, &mut n)?;
            seen.push(n);
            out.push(0xAA);
            Ok(next)
        })
        .unwrap();
        assert_eq!(out, [0, 10, 0xAA]);
        assert_eq!(seen, [name_to_wire("example.org").unwrap()]);
        assert!(rdata_names_compressible(rtype::MX));
        assert!(rdata_names_compressible(rtype::SOA));
        assert!(!rdata_names_compressible(rtype::SRV));
        assert!(!rdata_names_compressible(rtype::DNAME));
        assert!(!rdata_names_compressible(rtype::A));
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
