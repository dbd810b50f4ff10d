//! The TSIG record of a message (RFC 8945 §4.2): finding it in a request, the digest input
//! of §4.3 and writing one into a reply. On stack buffers: nothing is allocated.

use crate::mac::{Alg, MAX_MAC};
use ringdns_plugin::wire::rtype::TSIG;
use ringdns_plugin::wire::{Header, HeaderMut, Section, records};

/// A name in lower-case wire form, uncompressed, on the stack.
#[derive(Clone, Copy)]
pub struct WireName {
    buf: [u8; 255],
    len: usize,
}

impl WireName {
    /// The name's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Reads the (possibly compressed) name at `off`, lower-cased; gives it and the offset
    /// after it in the message.
    pub fn read(msg: &[u8], mut off: usize) -> Option<(WireName, usize)> {
        let mut n = WireName {
            buf: [0; 255],
            len: 0,
        };
        let mut end = None;
        for _ in 0..128 {
            let l = *msg.get(off)? as usize;
            if l & 0xC0 == 0xC0 {
                let p = ((l & 0x3F) << 8) | *msg.get(off + 1)? as usize;
                end.get_or_insert(off + 2);
                off = p;
                continue;
            }
            if l > 63 || n.len + l + 1 > 255 {
                return None;
            }
            let label = msg.get(off..off + 1 + l)?;
            for (i, b) in label.iter().enumerate() {
                n.buf[n.len + i] = if i == 0 { *b } else { b.to_ascii_lowercase() };
            }
            n.len += l + 1;
            off += l + 1;
            if l == 0 {
                return Some((n, end.unwrap_or(off)));
            }
        }
        None
    }
}

/// A request's TSIG record.
#[derive(Clone, Copy)]
pub struct Tsig {
    /// Where the record starts: the digest covers the message up to here.
    pub start: usize,
    /// The key name.
    pub key: WireName,
    /// The algorithm name.
    pub alg: WireName,
    /// The algorithm it names, when this server computes it.
    pub algorithm: Option<Alg>,
    /// Time Signed (48 bits).
    pub time: u64,
    /// Fudge.
    pub fudge: u16,
    /// Where the MAC is in the message, and its length.
    pub mac: (usize, usize),
    /// Original ID.
    pub orig_id: u16,
    /// Error.
    pub error: u16,
    /// Other Data's place and length.
    pub other: (usize, usize),
}

/// What a request carries.
// The TSIG's names are kept on the stack (no allocation on the signed path): large, short-lived.
#[allow(clippy::large_enum_variant)]
pub enum Found {
    /// No TSIG.
    None,
    /// One TSIG, the last record.
    Tsig(Tsig),
    /// A TSIG elsewhere, twice, not of class ANY and TTL 0, or malformed: FORMERR (RFC
    /// 8945 §4.2, §5.2).
    Bad,
}

/// Finds the TSIG of `msg`. A message with no additional record other than its OPT costs
/// no walk.
pub fn find(msg: &[u8], has_opt: bool) -> Found {
    let Some(h) = Header::of(msg) else {
        return Found::None;
    };
    let ar = h.arcount();
    if ar == 0 || (ar == 1 && has_opt) {
        return Found::None;
    }
    let Ok(it) = records(msg) else {
        return Found::None;
    };
    let (mut found, mut n, mut last) = (None, 0u32, None);
    let total = u32::from(h.ancount()) + u32::from(h.nscount()) + u32::from(ar);
    for r in it {
        let Ok(r) = r else { return Found::Bad };
        n += 1;
        if r.rtype == TSIG {
            // §4.2: class ANY and TTL 0.
            let ttl = msg.get(r.ttl_offset..r.ttl_offset + 4);
            if found.is_some()
                || r.section != Section::Additional
                || r.class != 255
                || ttl != Some(&[0u8; 4][..])
            {
                return Found::Bad;
            }
            found = Some(r.clone());
        }
        last = Some(r);
    }
    let Some(r) = found else { return Found::None };
    if n != total || last.map(|l| l.range.start) != Some(r.range.start) {
        return Found::Bad;
    }
    parse(msg, r.range.start, r.rdata.clone()).map_or(Found::Bad, Found::Tsig)
}

fn u16_at(m: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*m.get(o)?, *m.get(o + 1)?]))
}

fn parse(msg: &[u8], start: usize, rd: std::ops::Range<usize>) -> Option<Tsig> {
    let (key, _) = WireName::read(msg, start)?;
    let (alg, mut o) = WireName::read(msg, rd.start)?;
    let t = msg.get(o..o + 6)?;
    let time = t.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b));
    let fudge = u16_at(msg, o + 6)?;
    let mac_len = usize::from(u16_at(msg, o + 8)?);
    o += 10;
    let mac = (o, mac_len);
    o += mac_len;
    let orig_id = u16_at(msg, o)?;
    let error = u16_at(msg, o + 2)?;
    let other_len = usize::from(u16_at(msg, o + 4)?);
    let other = (o + 6, other_len);
    if o + 6 + other_len != rd.end {
        return None;
    }
    let algorithm = Alg::from_wire(alg.as_bytes());
    Some(Tsig {
        start,
        key,
        alg,
        algorithm,
        time,
        fudge,
        mac,
        orig_id,
        error,
        other,
    })
}

/// The longest fixed part of the TSIG variables: two names of up to 255 bytes, class, TTL,
/// Time Signed, Fudge, Error and Other Len.
pub const VARS_MAX: usize = 255 + 6 + 255 + 12;

/// The TSIG variables (RFC 8945 §4.3.3) but Other Data (which the digest takes as a part of
/// its own, being up to 65 535 bytes): key name, class ANY, TTL 0, algorithm, Time Signed,
/// Fudge, Error, Other Len; written into `out`, gives their length. `timers_only` gives the
/// TSIG timers of a subsequent message of a transfer instead (§4.3.1: Time Signed, Fudge).
#[allow(clippy::too_many_arguments)]
pub fn variables(
    out: &mut [u8; VARS_MAX],
    key: &[u8],
    alg: &[u8],
    time: u64,
    fudge: u16,
    error: u16,
    other_len: usize,
    timers_only: bool,
) -> usize {
    let mut n = 0;
    let mut put = |b: &[u8]| {
        out[n..n + b.len()].copy_from_slice(b);
        n += b.len();
    };
    if timers_only {
        put(&time.to_be_bytes()[2..]);
        put(&fudge.to_be_bytes());
        return n;
    }
    put(key);
    put(&[0, 255, 0, 0, 0, 0]); // class ANY, TTL 0
    put(alg);
    put(&time.to_be_bytes()[2..]);
    put(&fudge.to_be_bytes());
    put(&error.to_be_bytes());
    put(&(other_len as u16).to_be_bytes());
    n
}

/// What a reply's TSIG says.
pub struct Signing<'a> {
    /// The key name (wire).
    pub key: &'a [u8],
    /// The algorithm.
    pub alg: &'a [u8],
    /// The key and algorithm to sign with; `None` for an unsigned error (MAC size 0).
    pub secret: Option<(Alg, &'a [u8])>,
    /// The prior MAC (RFC 8945 §4.3.1): the request's, or for a transfer's later message
    /// the previous message's.
    pub prior_mac: &'a [u8],
    /// Time Signed.
    pub time: u64,
    /// Fudge.
    pub fudge: u16,
    /// Error.
    pub error: u16,
    /// Other Data (the server's time for BADTIME).
    pub other: &'a [u8],
    /// A transfer's message after the first: the digest takes the TSIG timers only.
    pub subsequent: bool,
}

impl Signing<'_> {
    /// The length the TSIG record will have.
    pub fn record_len(&self) -> usize {
        let mac = self.secret.map_or(0, |(a, _)| a.len());
        self.key.len() + 10 + self.alg.len() + 16 + mac + self.other.len()
    }

    /// The MAC of `reply` (finished, its ID the request's, no TSIG yet) into `mac`; its
    /// length, 0 for an unsigned reply.
    pub fn mac(&self, reply: &[u8], mac: &mut [u8; MAX_MAC]) -> usize {
        let Some((alg, secret)) = self.secret else {
            return 0;
        };
        let mut vars = [0u8; VARS_MAX];
        let vn = variables(
            &mut vars,
            self.key,
            self.alg,
            self.time,
            self.fudge,
            self.error,
            self.other.len(),
            self.subsequent,
        );
        let size = (self.prior_mac.len() as u16).to_be_bytes();
        let other: &[u8] = if self.subsequent { &[] } else { self.other };
        alg.sign(
            secret,
            &[&size, self.prior_mac, reply, &vars[..vn], other],
            mac,
        )
    }

    /// Signs `reply` and appends the TSIG record; gives the MAC (the next message's prior
    /// MAC in a transfer) and its length.
    pub fn append(&self, reply: &mut Vec<u8>) -> ([u8; MAX_MAC], usize) {
        let mut mac = [0u8; MAX_MAC];
        let mac_len = self.mac(reply, &mut mac);
        let id = u16_at(reply, 0).unwrap_or(0);
        let ar = Header::of(reply).map_or(0, |h| h.arcount());
        reply.extend_from_slice(self.key);
        reply.extend_from_slice(&TSIG.to_be_bytes());
        reply.extend_from_slice(&[0, 255, 0, 0, 0, 0]);
        let rdlen = self.alg.len() + 16 + mac_len + self.other.len();
        reply.extend_from_slice(&(rdlen as u16).to_be_bytes());
        reply.extend_from_slice(self.alg);
        reply.extend_from_slice(&self.time.to_be_bytes()[2..]);
        reply.extend_from_slice(&self.fudge.to_be_bytes());
        reply.extend_from_slice(&(mac_len as u16).to_be_bytes());
        reply.extend_from_slice(&mac[..mac_len]);
        reply.extend_from_slice(&id.to_be_bytes());
        reply.extend_from_slice(&self.error.to_be_bytes());
        reply.extend_from_slice(&(self.other.len() as u16).to_be_bytes());
        reply.extend_from_slice(self.other);
        if let Some(mut h) = HeaderMut::of(reply) {
            h.set_count(Section::Additional, ar.saturating_add(1));
        }
        (mac, mac_len)
    }
}

/// The request as the MAC covers it (RFC 8945 §4.3.2): its header with the Original ID and
/// one additional record fewer, into `hdr`; the rest of the covered bytes are
/// `msg[12..t.start]`.
pub fn request_header(msg: &[u8], t: &Tsig) -> [u8; 12] {
    let mut hdr = [0u8; 12];
    hdr.copy_from_slice(&msg[..12]);
    hdr[..2].copy_from_slice(&t.orig_id.to_be_bytes());
    let ar = u16::from_be_bytes([hdr[10], hdr[11]]).saturating_sub(1);
    hdr[10..].copy_from_slice(&ar.to_be_bytes());
    hdr
}

/// Removes the TSIG record that starts at `start` (the last record) from `msg`, as CoreDNS
/// strips it before the rest of the chain sees the query.
pub fn strip(msg: &mut Vec<u8>, start: usize) {
    msg.truncate(start);
    if let Some(mut h) = HeaderMut::of(msg) {
        let ar = h.get().arcount();
        h.set_count(Section::Additional, ar.saturating_sub(1));
    }
}

/// Whether the last record of `reply` is a TSIG (an inner plugin signed it).
pub fn signed(reply: &[u8]) -> bool {
    matches!(find(reply, false), Found::Tsig(_) | Found::Bad)
}
