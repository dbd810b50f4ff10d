//! Which replies CoreDNS's `response.Typify` calls NOERROR, the only ones minimal strips:
//! read from the reply's wire bytes, in Typify's order.

use ringdns_plugin::wire::opcode::{NOTIFY, UPDATE};
use ringdns_plugin::wire::rcode::NOERROR;
use ringdns_plugin::wire::rtype::{AXFR, IXFR, NS, OPT, RRSIG, SOA};
use ringdns_plugin::wire::{Header, Section, records};
use std::time::SystemTime;

/// What minimal makes of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A positive reply (Typify's NoError): the answer alone is kept.
    NoError,
    /// Anything else (NXDOMAIN, NODATA, a delegation, an error, a transfer, an update or
    /// NOTIFY, a DNSSEC reply with an expired signature): sent as it is.
    Other,
}

/// Typify's verdict on `reply`, the answer to a query of type `qtype`. `now` gives the wall
/// clock, read only for a reply with the DO bit that carries signatures (Typify then calls
/// a reply with an expired RRSIG an error).
pub fn typify(reply: &[u8], qtype: u16, now: impl FnOnce() -> SystemTime) -> Kind {
    let Some(h) = Header::of(reply) else {
        return Kind::Other;
    };
    let op = h.opcode();
    if op == UPDATE || op == NOTIFY || qtype == AXFR || qtype == IXFR {
        return Kind::Other;
    }
    let Ok(walk) = records(reply) else {
        return Kind::Other;
    };
    let (mut answers, mut soa, mut ns) = (0usize, false, 0usize);
    let (mut ext, mut do_bit, mut signed) = (0u8, false, false);
    for r in walk {
        let Ok(r) = r else { return Kind::Other };
        match (r.section, r.rtype) {
            (Section::Answer, _) => answers += 1,
            (Section::Authority, SOA) => soa = true,
            (Section::Authority, NS) => ns += 1,
            (Section::Additional, OPT) => {
                ext = reply[r.ttl_offset];
                do_bit = reply[r.ttl_offset + 2] & 0x80 != 0;
            }
            _ => {}
        }
        signed |= r.rtype == RRSIG;
    }
    if do_bit && signed && expired(reply, now()) {
        return Kind::Other;
    }
    let rcode = (u16::from(ext) << 4) | u16::from(h.rcode());
    let noerror = rcode == u16::from(NOERROR);
    if answers > 0 && noerror {
        return Kind::NoError;
    }
    // Typify goes on: answers with another rcode (NXDOMAIN's is OtherError), NODATA (an SOA),
    // NXDOMAIN, the errors, a delegation (NS records); what is left is a plain NOERROR.
    if answers > 0 || soa || !noerror || ns > 0 {
        return Kind::Other;
    }
    Kind::NoError
}

/// Whether an RRSIG of the reply is outside its validity period at `now` (miekg's
/// `ValidityPeriod`, with its serial arithmetic of 32-bit times).
fn expired(reply: &[u8], now: SystemTime) -> bool {
    let utc = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let Ok(walk) = records(reply) else {
        return false;
    };
    walk.flatten()
        .filter(|r| r.rtype == RRSIG && r.rdata.len() >= 16)
        .any(|r| {
            let at = |o: usize| {
                let b = &reply[r.rdata.start + o..r.rdata.start + o + 4];
                i64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            };
            let (expiration, inception) = (at(8), at(12));
            !valid(inception, expiration, utc)
        })
}

/// miekg's `RRSIG.ValidityPeriod`: both times brought within 68 years of `utc`.
fn valid(inception: i64, expiration: i64, utc: i64) -> bool {
    const YEAR68: i64 = 1 << 31;
    let ti = inception + (inception - utc) / YEAR68 * YEAR68;
    let te = expiration + (expiration - utc) / YEAR68 * YEAR68;
    ti <= utc && utc <= te
}

#[cfg(test)]
mod tests {
    use super::valid;

    #[test]
    fn validity_is_miekgs_period_check() {
        let now = 1_800_000_000;
        assert!(valid(now - 10, now + 10, now));
        assert!(!valid(now + 1, now + 10, now), "not yet");
        assert!(!valid(now - 10, now - 1, now), "expired");
        assert!(valid(now, now, now), "both ends are in");
    }
}
