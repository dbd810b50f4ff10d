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
        t::KEY => Dnskey::scan(s)?.compose_rdata(out),
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
