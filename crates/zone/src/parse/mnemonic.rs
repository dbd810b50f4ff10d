//! Type and class mnemonics of the TYPE and CLASS columns: the common types are
//! matched before domain's table (a linear scan of ~100 names per record).

use domain::base::iana::Rtype;
use ringdns_wire::{class, rtype};

/// The type a token names: a mnemonic (any case) or `TYPEnnn`.
pub(crate) fn rtype_from(tok: &[u8]) -> Option<u16> {
    let fast = match tok.len() {
        1 if tok[0] | 0x20 == b'a' => Some(rtype::A),
        2 if tok.eq_ignore_ascii_case(b"NS") => Some(rtype::NS),
        2 if tok.eq_ignore_ascii_case(b"MX") => Some(rtype::MX),
        3 if tok.eq_ignore_ascii_case(b"TXT") => Some(rtype::TXT),
        3 if tok.eq_ignore_ascii_case(b"SRV") => Some(rtype::SRV),
        3 if tok.eq_ignore_ascii_case(b"PTR") => Some(rtype::PTR),
        3 if tok.eq_ignore_ascii_case(b"SOA") => Some(rtype::SOA),
        4 if tok.eq_ignore_ascii_case(b"AAAA") => Some(rtype::AAAA),
        5 if tok.eq_ignore_ascii_case(b"CNAME") => Some(rtype::CNAME),
        _ => None,
    };
    fast.or_else(|| Rtype::from_bytes(tok).map(Rtype::to_int))
}

/// The class a token names: `IN`, `CS`, `CH`, `HS`, `NONE`, `ANY` (miekg's
/// names) or `CLASSnnn`.
pub(crate) fn class_from(tok: &[u8]) -> Option<u16> {
    const NAMES: [(&[u8], u16); 6] = [
        (b"IN", class::IN),
        (b"CS", 2),
        (b"CH", class::CH),
        (b"HS", class::HS),
        (b"NONE", class::NONE),
        (b"ANY", class::ANY),
    ];
    for (n, c) in NAMES {
        if tok.eq_ignore_ascii_case(n) {
            return Some(c);
        }
    }
    if tok.len() > 5 && tok[..5].eq_ignore_ascii_case(b"CLASS") {
        return super::ttl::decimal(&tok[5..]).and_then(|v| u16::try_from(v).ok());
    }
    None
}

/// The type's name for messages (`A`, `TYPE65280`).
pub(crate) fn rtype_name(t: u16) -> String {
    Rtype::from_int(t).to_string()
}

/// Types that are no data (meta and query types): never in a zone.
pub(crate) fn is_meta(t: u16) -> bool {
    matches!(t, 0 | rtype::OPT | 128..=255)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types() {
        assert_eq!(rtype_from(b"a"), Some(1));
        assert_eq!(rtype_from(b"Aaaa"), Some(28));
        assert_eq!(rtype_from(b"nsec3param"), Some(51));
        assert_eq!(rtype_from(b"TYPE65280"), Some(65280));
        assert_eq!(rtype_from(b"type1"), Some(1));
        assert_eq!(rtype_from(b"TYPE65536"), None);
        assert_eq!(rtype_from(b"FOO"), None);
        assert_eq!(rtype_name(65280), "TYPE65280");
        assert_eq!(rtype_name(1), "A");
    }

    #[test]
    fn classes() {
        assert_eq!(class_from(b"in"), Some(1));
        assert_eq!(class_from(b"CH"), Some(3));
        assert_eq!(class_from(b"CLASS255"), Some(255));
        assert_eq!(class_from(b"CLASS"), None);
        assert_eq!(class_from(b"CLASS70000"), None);
        assert_eq!(class_from(b"A"), None);
    }
}
