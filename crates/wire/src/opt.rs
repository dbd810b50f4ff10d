//! The EDNS(0) OPT record (RFC 6891) as the parser finds it: its fixed
//! fields, an iterator over its options, and the option checks that make
//! miekg/dns reject a message.

use super::be::get_u16;
use super::consts::edns;

/// The EDNS(0) OPT record of a query, borrowed from the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opt<'a> {
    /// Advertised UDP payload size (the OPT's class), as sent (may be < 512).
    pub udp_size: u16,
    /// Upper 8 bits of the extended rcode (TTL byte 0).
    pub ext_rcode: u8,
    /// EDNS version (TTL byte 1); anything but 0 gets BADVERS.
    pub version: u8,
    /// The DO (DNSSEC OK) bit.
    pub do_bit: bool,
    /// The whole 16-bit flags field (DO and the Z bits).
    pub flags: u16,
    /// The raw option bytes (RDATA), already validated.
    pub options: &'a [u8],
}

impl<'a> Opt<'a> {
    /// Iterates `(code, data)` over the options.
    #[inline]
    pub fn iter(&self) -> EdnsOptions<'a> {
        EdnsOptions { rest: self.options }
    }

    /// The data of the first option with `code`, if any (e.g. NSID, COOKIE).
    pub fn option(&self, code: u16) -> Option<&'a [u8]> {
        self.iter().find(|(c, _)| *c == code).map(|(_, d)| d)
    }

    /// No OPT: the values a query without one carries in its [`crate::Query`].
    pub(super) const NONE: Opt<'static> = Opt {
        udp_size: 0,
        ext_rcode: 0,
        version: 0,
        do_bit: false,
        flags: 0,
        options: &[],
    };

    /// The OPT record whose TTL field starts at `ttl`, in a message already validated
    /// (its class before, RDLENGTH and RDATA after).
    #[inline]
    pub(super) fn at(msg: &'a [u8], ttl: usize) -> Opt<'a> {
        let fl = get_u16(msg, ttl + 2);
        let rdata = ttl + 6;
        Opt {
            udp_size: get_u16(msg, ttl - 2),
            ext_rcode: msg[ttl],
            version: msg[ttl + 1],
            do_bit: fl & 0x8000 != 0,
            flags: fl,
            options: &msg[rdata..rdata + usize::from(get_u16(msg, ttl + 4))],
        }
    }
}

/// Iterator over the `(code, data)` pairs of EDNS option bytes; stops at
/// the first malformed option.
#[derive(Clone, Debug)]
pub struct EdnsOptions<'a> {
    rest: &'a [u8],
}

impl<'a> EdnsOptions<'a> {
    /// Iterates raw option bytes (e.g. a reply's OPT RDATA).
    #[inline]
    pub fn new(options: &'a [u8]) -> Self {
        EdnsOptions { rest: options }
    }
}

impl<'a> Iterator for EdnsOptions<'a> {
    type Item = (u16, &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<(u16, &'a [u8])> {
        if self.rest.len() < 4 {
            return None;
        }
        let code = get_u16(self.rest, 0);
        let len = get_u16(self.rest, 2) as usize;
        let data = self.rest.get(4..4 + len)?;
        self.rest = &self.rest[4 + len..];
        Some((code, data))
    }
}

/// EDNS(0) option checks that make miekg's OPT unpack fail (and so FORMERR).
pub(super) fn options_valid(opts: &[u8]) -> bool {
    let mut o = 0;
    while o < opts.len() {
        if o + 4 > opts.len() {
            return false;
        }
        let code = get_u16(opts, o);
        let len = get_u16(opts, o + 2) as usize;
        o += 4;
        if o + len > opts.len() {
            return false;
        }
        let d = &opts[o..o + len];
        let ok = match code {
            edns::LLQ => d.len() >= 18,
            edns::UL => d.len() == 4 || d.len() == 8,
            edns::SUBNET => subnet_valid(d),
            edns::EXPIRE => d.is_empty() || d.len() >= 4,
            edns::TCP_KEEPALIVE => d.is_empty() || d.len() == 2,
            edns::EDE => d.len() >= 2,
            _ => true,
        };
        if !ok {
            return false;
        }
        o += len;
    }
    true
}

/// miekg's `EDNS0_SUBNET.unpack` checks.
fn subnet_valid(d: &[u8]) -> bool {
    if d.len() < 4 {
        return false;
    }
    let (family, mask, scope) = (get_u16(d, 0), d[2], d[3]);
    match family {
        0 => mask == 0,
        1 => mask <= 32 && scope <= 32,
        2 => mask <= 128 && scope <= 128,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_iterate_until_the_first_malformed_one() {
        // NSID (empty), COOKIE (2 bytes), then PADDING claiming 9 bytes of 1.
        let bytes = [0, 3, 0, 0, 0, 10, 0, 2, 1, 2, 0, 12, 0, 9, 0];
        let got: Vec<_> = EdnsOptions::new(&bytes).collect();
        assert_eq!(got, [(edns::NSID, &[][..]), (edns::COOKIE, &[1, 2][..])]);
        assert!(!options_valid(&bytes));
        assert!(options_valid(&bytes[..10]));
    }

    #[test]
    fn the_first_option_with_a_code_is_the_one() {
        let options = [0, 10, 0, 1, 7, 0, 10, 0, 1, 8];
        let opt = Opt {
            udp_size: 1232,
            ext_rcode: 0,
            version: 0,
            do_bit: false,
            flags: 0,
            options: &options,
        };
        assert_eq!(opt.option(edns::COOKIE), Some(&[7][..]));
        assert_eq!(opt.option(edns::NSID), None);
        assert_eq!(opt.iter().count(), 2);
    }
}
