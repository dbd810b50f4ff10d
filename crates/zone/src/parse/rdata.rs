//! RDATA from presentation tokens into uncompressed wire form: the commonest types
//! by hand (the bulk of a large zone, at no allocation), SOA by hand (its timers
//! take BIND units, which domain's `Ttl` scanning does not), RFC 3597 `\#` for any
//! type, and everything else through domain's `ZoneRecordData::scan`.

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};

use domain::base::iana::Rtype;
use domain::base::rdata::{ComposeRecordData, ParseRecordData};
use domain::base::scan::Scan;
use domain::dep::octseq::Parser as WireParser;
use domain::rdata::dnssec::RtypeBitmap;
use domain::rdata::{Dnskey, Ds, Rrsig, Tlsa, ZoneRecordData};

use super::lex::Token;
use super::name;
use super::scan::{ScanError, TokScanner, octets, push_charstrs};
use super::ttl;

/// An RDATA error: the message (empty when the token says it all) and the index
/// of the token at fault, if there is one.
#[derive(Debug)]
pub(crate) struct RdataError {
    pub msg: Cow<'static, str>,
    pub tok: Option<usize>,
}

impl RdataError {
    fn at(tok: usize, msg: impl Into<Cow<'static, str>>) -> Self {
        RdataError {
            msg: msg.into(),
            tok: Some(tok),
        }
    }
    fn bare(msg: impl Into<Cow<'static, str>>) -> Self {
        RdataError {
            msg: msg.into(),
            tok: None,
        }
    }
}

/// Type numbers (those not in `ringdns_wire::rtype`).
mod t {
    pub const MD: u16 = 3;
    pub const MF: u16 = 4;
    pub const MB: u16 = 7;
    pub const MG: u16 = 8;
    pub const MR: u16 = 9;
    pub const AFSDB: u16 = 18;
    pub const X25: u16 = 19;
    pub const ISDN: u16 = 20;
    pub const RT: u16 = 21;
    pub const NSAPPTR: u16 = 23;
    pub const SIG: u16 = 24;
    pub const KEY: u16 = 25;
    pub const PX: u16 = 26;
    pub const GPOS: u16 = 27;
    pub const LOC: u16 = 29;
    pub const CERT: u16 = 37;
    pub const RKEY: u16 = 57;
    pub const TALINK: u16 = 58;
    pub const KX: u16 = 36;
    pub const DHCID: u16 = 49;
    pub const SMIMEA: u16 = 53;
    pub const NINFO: u16 = 56;
    pub const CSYNC: u16 = 62;
    pub const SPF: u16 = 99;
    pub const NID: u16 = 104;
    pub const L32: u16 = 105;
    pub const L64: u16 = 106;
    pub const LP: u16 = 107;
    pub const EUI48: u16 = 108;
    pub const EUI64: u16 = 109;
    pub const URI: u16 = 256;
    pub const AVC: u16 = 258;
    pub const RESINFO: u16 = 261;
    pub const TA: u16 = 32768;
    pub const DLV: u16 = 32769;
}

use ringdns_wire::rtype as rt;

/// A cursor over the RDATA tokens for the hand-written types.
struct Cur<'t, 'a> {
    toks: &'t [Token<'a>],
    i: usize,
}

impl<'a> Cur<'_, 'a> {
    fn next(&mut self) -> Result<(usize, Token<'a>), RdataError> {
        let t = self
            .toks
            .get(self.i)
            .copied()
            .ok_or_else(|| RdataError::bare("missing data"))?;
        self.i += 1;
        Ok((self.i - 1, t))
    }

    fn u16(&mut self, out: &mut Vec<u8>) -> Result<(), RdataError> {
        let (i, t) = self.next()?;
        let v = ttl::decimal(t.text)
            .and_then(|v| u16::try_from(v).ok())
            .ok_or_else(|| RdataError::at(i, "expected a number from 0 to 65535"))?;
        out.extend_from_slice(&v.to_be_bytes());
        Ok(())
    }

    fn name(&mut self, origin: &[u8], out: &mut Vec<u8>) -> Result<(), RdataError> {
        let (i, t) = self.next()?;
        name::append(t.text, origin, out).map_err(|e| RdataError::at(i, e))
    }

    fn done(&self) -> Result<(), RdataError> {
        if self.i < self.toks.len() {
            Err(RdataError::at(self.i, "trailing data"))
        } else {
            Ok(())
        }
    }
}

/// Encodes the RDATA of type `rtype` written as `toks` into `out` (cleared first);
/// relative names complete with `origin`.
pub(crate) fn encode(
    rtype: u16,
    toks: &[Token<'_>],
    origin: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), RdataError> {
    out.clear();
    if toks.is_empty() {
        return Err(RdataError::bare("missing data"));
    }
    if !toks[0].quoted && toks[0].text == b"\\#" {
        return rfc3597(rtype, &toks[1..], out).map_err(|mut e| {
            e.tok = e.tok.map(|i| i + 1);
            e
        });
    }
    let mut c = Cur { toks, i: 0 };
    match rtype {
        rt::A => {
            let (i, tk) = c.next()?;
            let a: Ipv4Addr = std::str::from_utf8(tk.text)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| RdataError::at(i, ""))?;
            out.extend_from_slice(&a.octets());
        }
        rt::AAAA => {
            let (i, tk) = c.next()?;
            let a: Ipv6Addr = std::str::from_utf8(tk.text)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| RdataError::at(i, ""))?;
            out.extend_from_slice(&a.octets());
        }
        rt::NS
        | rt::CNAME
        | rt::PTR
        | rt::DNAME
        | t::MD
        | t::MF
        | t::MB
        | t::MG
        | t::MR
        | t::NSAPPTR => c.name(origin, out)?,
        rt::MX | t::AFSDB | t::RT | t::KX | t::LP => {
            c.u16(out)?;
            c.name(origin, out)?;
        }
        t::TALINK => {
            c.name(origin, out)?;
            c.name(origin, out)?;
        }
        t::LOC => loc(&mut c, out)?,
        t::CERT => {
            let (i, tk) = c.next()?;
            let ty = cert_type(tk.text).ok_or_else(|| RdataError::at(i, "bad CERT type"))?;
            out.extend_from_slice(&ty.to_be_bytes());
            c.u16(out)?;
            let (i, tk) = c.next()?;
            let alg = algorithm(tk.text).ok_or_else(|| RdataError::at(i, "bad CERT algorithm"))?;
            out.push(alg);
            let mut s = TokScanner::new(&toks[c.i..], origin);
            let v = domain::base::scan::Scanner::convert_entry(
                &mut s,
                domain::utils::base64::SymbolConverter::new(),
            )
            .map_err(|e| RdataError::at(c.i + s.idx.saturating_sub(1), e.0))?;
            out.extend_from_slice(&v);
            c.i += s.idx;
        }
        t::PX => {
            c.u16(out)?;
            c.name(origin, out)?;
            c.name(origin, out)?;
        }
        rt::SRV => {
            c.u16(out)?;
            c.u16(out)?;
            c.u16(out)?;
            c.name(origin, out)?;
        }
        rt::TXT | t::SPF | t::AVC | t::RESINFO | t::NINFO => {
            while c.i < toks.len() {
                let (i, tk) = c.next()?;
                push_charstrs(tk.text, out).map_err(|e| RdataError::at(i, e.0))?;
            }
            if out.len() > 65535 {
                return Err(RdataError::bare("RDATA longer than 65535 octets"));
            }
        }
        rt::SOA => {
            c.name(origin, out)?;
            c.name(origin, out)?;
            let (i, tk) = c.next()?;
            let serial = ttl::decimal(tk.text)
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| RdataError::at(i, "bad serial"))?;
            out.extend_from_slice(&serial.to_be_bytes());
            for what in ["refresh", "retry", "expire", "minimum"] {
                let (i, tk) = c.next()?;
                let v =
                    ttl::parse(tk.text).ok_or_else(|| RdataError::at(i, format!("bad {what}")))?;
                out.extend_from_slice(&v.to_be_bytes());
            }
        }
        t::X25 => one_charstr(&mut c, out)?,
        t::ISDN => {
            one_charstr(&mut c, out)?;
            if c.i < toks.len() {
                one_charstr(&mut c, out)?;
            }
        }
        t::GPOS => {
            for _ in 0..3 {
                if let Some(tk) = toks.get(c.i)
                    && std::str::from_utf8(tk.text)
                        .ok()
                        .and_then(|s| s.parse::<f64>().ok())
                        .is_none()
                {
                    return Err(RdataError::at(c.i, "expected a decimal number"));
                }
                one_charstr(&mut c, out)?;
            }
        }
        t::URI => {
            c.u16(out)?;
            c.u16(out)?;
            let (i, tk) = c.next()?;
            octets(tk.text, |b| out.push(b)).map_err(|e| RdataError::at(i, e.0))?;
        }
        t::L32 => {
            c.u16(out)?;
            let (i, tk) = c.next()?;
            let a: Ipv4Addr = std::str::from_utf8(tk.text)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| RdataError::at(i, "expected an IPv4 address"))?;
            out.extend_from_slice(&a.octets());
        }
        t::L64 | t::NID => {
            c.u16(out)?;
            let (i, tk) = c.next()?;
            node_id(tk.text, out).ok_or_else(|| {
                RdataError::at(i, "expected a 64-bit locator (xxxx:xxxx:xxxx:xxxx)")
            })?;
        }
        t::EUI48 | t::EUI64 => {
            let n = if rtype == t::EUI48 { 6 } else { 8 };
            let (i, tk) = c.next()?;
            eui(tk.text, n, out)
                .ok_or_else(|| RdataError::at(i, "expected hexadecimal pairs separated by -"))?;
        }
        _ => {
            let mut s = TokScanner::new(toks, origin);
            let r = scan_with_domain(rtype, &mut s, out);
            let at = s.idx.saturating_sub(1);
            let ran_out = s.ran_out;
            r.map_err(|e| {
                if ran_out {
                    RdataError::bare(e.0)
                } else {
                    RdataError::at(at, e.0)
                }
            })?;
            c.i = s.idx;
        }
    }
    c.done()
}

fn one_charstr(c: &mut Cur<'_, '_>, out: &mut Vec<u8>) -> Result<(), RdataError> {
    let (i, tk) = c.next()?;
    let at = out.len();
    out.push(0);
    octets(tk.text, |b| out.push(b)).map_err(|e| RdataError::at(i, e.0))?;
    let n = out.len() - at - 1;
    if n > 255 {
        return Err(RdataError::at(i, "character string longer than 255 octets"));
    }
    out[at] = n as u8;
    Ok(())
}

/// CERT's type: a mnemonic of RFC 4398 or a number (miekg's StringToCertType).
fn cert_type(s: &[u8]) -> Option<u16> {
    const NAMES: [(&[u8], u16); 10] = [
        (b"PKIX", 1),
        (b"SPKI", 2),
        (b"PGP", 3),
        (b"IPKIX", 4),
        (b"ISPKI", 5),
        (b"IPGP", 6),
        (b"ACPKIX", 7),
        (b"IACPKIX", 8),
        (b"URI", 253),
        (b"OID", 254),
    ];
    NAMES
        .iter()
        .find(|(n, _)| *n == s)
        .map(|&(_, v)| v)
        .or_else(|| ttl::decimal(s).and_then(|v| u16::try_from(v).ok()))
}

/// A DNSSEC algorithm: miekg's mnemonic (StringToAlgorithm) or a number.
fn algorithm(s: &[u8]) -> Option<u8> {
    const NAMES: [(&[u8], u8); 15] = [
        (b"RSAMD5", 1),
        (b"DH", 2),
        (b"DSA", 3),
        (b"RSASHA1", 5),
        (b"DSA-NSEC3-SHA1", 6),
        (b"RSASHA1-NSEC3-SHA1", 7),
        (b"RSASHA256", 8),
        (b"RSASHA512", 10),
        (b"ECC-GOST", 12),
        (b"ECDSAP256SHA256", 13),
        (b"ECDSAP384SHA384", 14),
        (b"ED25519", 15),
        (b"ED448", 16),
        (b"INDIRECT", 252),
        (b"PRIVATEDNS", 253),
    ];
    NAMES
        .iter()
        .find(|(n, _)| *n == s)
        .map(|&(_, v)| v)
        .or_else(|| if s == b"PRIVATEOID" { Some(254) } else { None })
        .or_else(|| ttl::decimal(s).and_then(|v| u8::try_from(v).ok()))
}

/// LOC (RFC 1876) exactly as miekg reads it: `d [m [s]] N|S d [m [s]] E|W
/// alt[m] [size[m] [hp[m] [vp[m]]]]`, seconds truncated to milliseconds.
fn loc(c: &mut Cur<'_, '_>, out: &mut Vec<u8>) -> Result<(), RdataError> {
    const EQUATOR: u64 = 1 << 31;
    fn int(t: &[u8], max: u64) -> Option<u64> {
        ttl::decimal(t).filter(|&v| v <= max)
    }
    fn secs(t: &[u8]) -> Option<f64> {
        std::str::from_utf8(t)
            .ok()?
            .parse::<f64>()
            .ok()
            .filter(|v| (0.0..60.0).contains(v))
    }
    // One coordinate: degrees, optional minutes and seconds, then the hemisphere.
    let coord = |c: &mut Cur<'_, '_>, max_deg: u64, pos: u8, neg: u8, what: &'static str| {
        let (i, t) = c.next()?;
        let mut v = int(t.text, max_deg).ok_or_else(|| RdataError::at(i, format!("bad {what}")))?
            * 3_600_000;
        let hemi = |t: &[u8]| match t {
            [b] if b.to_ascii_uppercase() == pos => Some(true),
            [b] if b.to_ascii_uppercase() == neg => Some(false),
            _ => None,
        };
        let (mut i, mut t) = c.next()?;
        if hemi(t.text).is_none() {
            v += int(t.text, 59).ok_or_else(|| RdataError::at(i, format!("bad {what} minutes")))?
                * 60_000;
            (i, t) = c.next()?;
            if hemi(t.text).is_none() {
                let s =
                    secs(t.text).ok_or_else(|| RdataError::at(i, format!("bad {what} seconds")))?;
                v += (1000.0 * s) as u64;
                (i, t) = c.next()?;
            }
        }
        let north =
            hemi(t.text).ok_or_else(|| RdataError::at(i, format!("bad {what} hemisphere")))?;
        if v > max_deg * 3_600_000 {
            return Err(RdataError::at(i, format!("bad {what}")));
        }
        let v = if north {
            EQUATOR + v
        } else {
            EQUATOR.wrapping_sub(v)
        };
        Ok::<u32, RdataError>(v as u32)
    };
    let lat = coord(c, 90, b'N', b'S', "latitude")?;
    let lon = coord(c, 180, b'E', b'W', "longitude")?;
    let (i, t) = c.next()?;
    let alt = t
        .text
        .strip_suffix(b"m")
        .or_else(|| t.text.strip_suffix(b"M"))
        .unwrap_or(t.text);
    let alt: f64 = std::str::from_utf8(alt)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| RdataError::at(i, "bad altitude"))?;
    let alt = (alt * 100.0 + 10_000_000.0 + 0.5) as u32;
    let mut prec = [0x12u8, 0x16, 0x13];
    for (k, what) in ["size", "horizontal precision", "vertical precision"]
        .into_iter()
        .enumerate()
    {
        if c.i >= c.toks.len() {
            break;
        }
        let (i, t) = c.next()?;
        prec[k] = cm(t.text).ok_or_else(|| RdataError::at(i, format!("bad {what}")))?;
    }
    out.push(0);
    out.extend_from_slice(&prec);
    out.extend_from_slice(&lat.to_be_bytes());
    out.extend_from_slice(&lon.to_be_bytes());
    out.extend_from_slice(&alt.to_be_bytes());
    Ok(())
}

/// A LOC size or precision (`<m>[.<cm>][m]`) as RFC 1876's mantissa/exponent
/// octet, truncated as miekg's stringToCm does.
fn cm(t: &[u8]) -> Option<u8> {
    let t = t
        .strip_suffix(b"m")
        .or_else(|| t.strip_suffix(b"M"))
        .unwrap_or(t);
    let t = std::str::from_utf8(t).ok()?;
    let (m, c) = match t.split_once('.') {
        Some((m, c)) => (m, Some(c)),
        None => (t, None),
    };
    let mut cmeters = 0u64;
    if let Some(c) = c {
        if c.is_empty() || c.len() > 2 || !c.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        cmeters = c.parse().ok()?;
        if c.len() == 1 {
            cmeters *= 10;
        }
    }
    let mut meters = 0u64;
    if c.is_none() || !m.is_empty() {
        meters = ttl::decimal(m.as_bytes())?;
        if meters > 90_000_000 || (meters == 90_000_000 && cmeters != 0) {
            return None;
        }
    }
    let (mut e, mut val) = if meters > 0 {
        (2u8, meters)
    } else {
        (0u8, cmeters)
    };
    while val >= 10 {
        e += 1;
        val /= 10;
    }
    Some((val as u8) << 4 | e)
}

/// `xxxx:xxxx:xxxx:xxxx` (L64, NID), as miekg reads it.
fn node_id(s: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let groups: Vec<&[u8]> = s.split(|&b| b == b':').collect();
    if groups.len() != 4 || groups.iter().any(|g| g.len() != 4) {
        return None;
    }
    for g in groups {
        let v = u16::from_str_radix(std::str::from_utf8(g).ok()?, 16).ok()?;
        out.extend_from_slice(&v.to_be_bytes());
    }
    Some(())
}

/// `xx-xx-xx-xx-xx-xx` (EUI48) or eight pairs (EUI64).
fn eui(s: &[u8], n: usize, out: &mut Vec<u8>) -> Option<()> {
    let pairs: Vec<&[u8]> = s.split(|&b| b == b'-').collect();
    if pairs.len() != n || pairs.iter().any(|p| p.len() != 2) {
        return None;
    }
    for p in pairs {
        out.push(u8::from_str_radix(std::str::from_utf8(p).ok()?, 16).ok()?);
    }
    Some(())
}

/// Types domain reads, and those whose RDATA has the format of one it reads.
fn scan_with_domain(
    rtype: u16,
    s: &mut TokScanner<'_, '_>,
    out: &mut Vec<u8>,
) -> Result<(), ScanError> {
    let composed = match rtype {
        t::SMIMEA => Tlsa::scan(s)?.compose_rdata(out),
        t::TA | t::DLV => Ds::scan(s)?.compose_rdata(out),
        t::KEY | t::RKEY => Dnskey::scan(s)?.compose_rdata(out),
        t::SIG => Rrsig::scan(s)?.compose_rdata(out),
        t::DHCID => {
            let v = domain::base::scan::Scanner::convert_entry(
                s,
                domain::utils::base64::SymbolConverter::new(),
            )?;
            out.extend_from_slice(&v);
            Ok(())
        }
        t::CSYNC => {
            let serial = u32::scan(s)?;
            let flags = u16::scan(s)?;
            out.extend_from_slice(&serial.to_be_bytes());
            out.extend_from_slice(&flags.to_be_bytes());
            RtypeBitmap::scan(s)?.compose_rdata_bitmap(out)
        }
        _ => match ZoneRecordData::scan(Rtype::from_int(rtype), s) {
            Ok(d) => d.compose_rdata(out),
            Err(e) if e.0 == "unknown record type with concrete data" => {
                return Err(ScanError(
                    format!(
                        "RR type {} has no presentation format here; write it as \\# (RFC 3597)",
                        Rtype::from_int(rtype)
                    )
                    .into(),
                ));
            }
            Err(e) => return Err(e),
        },
    };
    match composed {
        Ok(()) => {}
        Err(never) => match never {},
    }
    if out.len() > 65535 {
        return Err("RDATA longer than 65535 octets".into());
    }
    Ok(())
}

/// Extension to compose a bare type bitmap (CSYNC carries one after two fields).
trait ComposeBitmap {
    fn compose_rdata_bitmap(&self, out: &mut Vec<u8>) -> Result<(), std::convert::Infallible>;
}

impl ComposeBitmap for RtypeBitmap<Vec<u8>> {
    fn compose_rdata_bitmap(&self, out: &mut Vec<u8>) -> Result<(), std::convert::Infallible> {
        out.extend_from_slice(self.as_slice());
        Ok(())
    }
}

/// `\# len hex…` (RFC 3597 §5); for a type domain knows, the bytes must also be
/// valid RDATA of that type (miekg unpacks them too).
fn rfc3597(rtype: u16, toks: &[Token<'_>], out: &mut Vec<u8>) -> Result<(), RdataError> {
    let first = toks
        .first()
        .ok_or_else(|| RdataError::bare("\\# needs a length"))?;
    let len = ttl::decimal(first.text)
        .and_then(|v| u16::try_from(v).ok())
        .ok_or_else(|| RdataError::at(0, "bad \\# length"))?;
    let mut half: Option<u8> = None;
    for (i, tk) in toks.iter().enumerate().skip(1) {
        for &b in tk.text {
            let v = (b as char)
                .to_digit(16)
                .ok_or_else(|| RdataError::at(i, "bad hex in \\# data"))? as u8;
            match half.take() {
                Some(h) => out.push(h << 4 | v),
                None => half = Some(v),
            }
        }
    }
    if half.is_some() {
        return Err(RdataError::bare("odd number of hex digits in \\# data"));
    }
    if out.len() != usize::from(len) {
        return Err(RdataError::bare(format!(
            "\\# length {} but {} octets of data",
            len,
            out.len()
        )));
    }
    validate_wire(rtype, out).map_err(RdataError::bare)
}

/// Checks RDATA given in `\#` form against the type's wire format, where domain
/// knows the type: it must parse, leave nothing over, and (names being stored
/// uncompressed) compose back to the same bytes.
fn validate_wire(rtype: u16, data: &[u8]) -> Result<(), String> {
    let mut p = WireParser::from_ref(data);
    let parsed = ZoneRecordData::parse_rdata(Rtype::from_int(rtype), &mut p);
    let bad = || format!("\\# data is no valid {} RDATA", Rtype::from_int(rtype));
    match parsed {
        Ok(Some(ZoneRecordData::Unknown(_))) | Ok(None) => Ok(()),
        Ok(Some(d)) => {
            if p.remaining() != 0 {
                return Err(bad());
            }
            let mut again = Vec::with_capacity(data.len());
            match d.compose_rdata(&mut again) {
                Ok(()) => {}
                Err(never) => match never {},
            }
            if again != data { Err(bad()) } else { Ok(()) }
        }
        Err(_) => Err(bad()),
    }
}
