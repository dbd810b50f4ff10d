//! Which names are local, and what each is answered with, as CoreDNS's `Local.ServeDNS`
//! decides: localhost names first (under `.localhost.`, RFC 6761, and the legacy
//! `localhost.<domain>`), then the local zones and their few names.

use ringdns_plugin::wire::Name;
use ringdns_plugin::wire::rtype::{A, AAAA, NS, PTR, SOA};

/// `localhost.`
pub const LOCALHOST: &[u8] = b"\x09localhost\x00";

/// The reverse name of 127.0.0.1, which has a PTR to `localhost.`.
const LOOPBACK_V4: &[u8] = b"\x011\x010\x010\x03127\x07in-addr\x04arpa\x00";

/// The reverse name of ::1 (RFC 6303 section 4.3), its own zone: the apex's records and a
/// PTR to `localhost.`.
pub const LOOPBACK_V6: &[u8] = b"\x011\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x010\x03ip6\x04arpa\x00";

/// The zones local answers for (CoreDNS's four, and ::1's reverse name).
const ZONES: [&[u8]; 5] = [
    LOCALHOST,
    b"\x010\x07in-addr\x04arpa\x00",
    b"\x03127\x07in-addr\x04arpa\x00",
    b"\x03255\x07in-addr\x04arpa\x00",
    LOOPBACK_V6,
];

/// What a local name gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// The loopback address (an A or AAAA record), owned by the question.
    Address,
    /// NOERROR with no answer, an SOA owned by the name at this offset of the question
    /// name (0: the question itself) in the authority section.
    NoData(usize),
    /// NXDOMAIN, with the SOA of the zone at this offset of the question name.
    NxDomain(usize),
    /// The zone's SOA as the answer.
    Soa,
    /// The zone's NS (`localhost.`) as the answer.
    Ns,
    /// A PTR to `localhost.` as the answer.
    Ptr,
}

/// What `qname qtype` gets from local, with whether it is a localhost name other than
/// `localhost.` itself (which CoreDNS counts); `None` for a name that is not local.
/// `prefix` is `localhost_prefix on`: `localhost.<domain>` names are localhost names too.
pub fn reply(qname: &Name<'_>, qtype: u16, prefix: bool) -> Option<(Reply, bool)> {
    let wire = qname.as_wire();
    let is_localhost = wire.eq_ignore_ascii_case(LOCALHOST);
    let under_localhost = !is_localhost && qname.is_subdomain_of(LOCALHOST);
    let first_is_localhost = !is_localhost
        && qname
            .labels()
            .next()
            .is_some_and(|l| l.eq_ignore_ascii_case(b"localhost"));
    if under_localhost || (prefix && first_is_localhost) {
        let r = match qtype {
            A | AAAA => Reply::Address,
            _ => Reply::NoData(0),
        };
        return Some((r, true));
    }
    let zone = ZONES.iter().find(|z| qname.is_subdomain_of(z))?;
    let zone_at = wire.len() - zone.len();
    let r = if zone_at == 0 && zone != &LOOPBACK_V6 {
        match qtype {
            A | AAAA if is_localhost => Reply::Address,
            SOA => Reply::Soa,
            NS => Reply::Ns,
            _ => Reply::NoData(0),
        }
    } else if zone_at == 0 {
        match qtype {
            PTR => Reply::Ptr,
            SOA => Reply::Soa,
            NS => Reply::Ns,
            _ => Reply::NoData(0),
        }
    } else if wire.eq_ignore_ascii_case(LOOPBACK_V4) {
        match qtype {
            PTR => Reply::Ptr,
            _ => Reply::NoData(zone_at),
        }
    } else {
        Reply::NxDomain(zone_at)
    };
    Some((r, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::wire::rtype::{MX, TXT};

    fn of(name: &str, qtype: u16, prefix: bool) -> Option<(Reply, bool)> {
        let wire = ringdns_testkit::wire_name(name);
        reply(&Name::from_wire(&wire).unwrap(), qtype, prefix)
    }

    #[test]
    fn localhost_names_get_the_loopback_and_are_counted() {
        for name in ["a.localhost.", "x.Y.LocalHost.", "localhost.localhost."] {
            assert_eq!(of(name, A, false), Some((Reply::Address, true)), "{name}");
            assert_eq!(of(name, AAAA, true), Some((Reply::Address, true)), "{name}");
            assert_eq!(of(name, MX, true), Some((Reply::NoData(0), true)), "{name}");
        }
        // The legacy prefix, unless it is off.
        assert_eq!(
            of("localhost.example.org.", A, true),
            Some((Reply::Address, true))
        );
        assert_eq!(of("localhost.example.org.", A, false), None);
        assert_eq!(of("localhostx.example.org.", A, true), None);
        assert_eq!(of("www.example.org.", A, true), None);
    }

    #[test]
    fn the_zones_apexes_answer_their_records() {
        assert_eq!(of("localhost.", A, true), Some((Reply::Address, false)));
        assert_eq!(of("LOCALHOST.", AAAA, true), Some((Reply::Address, false)));
        assert_eq!(of("localhost.", SOA, true), Some((Reply::Soa, false)));
        assert_eq!(of("localhost.", NS, true), Some((Reply::Ns, false)));
        assert_eq!(of("localhost.", TXT, true), Some((Reply::NoData(0), false)));
        for apex in ["0.in-addr.arpa.", "127.in-addr.arpa.", "255.in-addr.arpa."] {
            assert_eq!(of(apex, A, true), Some((Reply::NoData(0), false)), "{apex}");
            assert_eq!(of(apex, SOA, true), Some((Reply::Soa, false)), "{apex}");
            assert_eq!(of(apex, NS, true), Some((Reply::Ns, false)), "{apex}");
            assert_eq!(
                of(apex, PTR, true),
                Some((Reply::NoData(0), false)),
                "{apex}"
            );
        }
    }

    #[test]
    fn the_loopbacks_reverse_names_have_a_ptr() {
        assert_eq!(
            of("1.0.0.127.in-addr.arpa.", PTR, true),
            Some((Reply::Ptr, false))
        );
        // NODATA with the zone's SOA: `127.in-addr.arpa.` is 6 bytes into the name.
        assert_eq!(
            of("1.0.0.127.in-addr.arpa.", A, true),
            Some((Reply::NoData(6), false))
        );
        let v6 = format!("{}ip6.arpa.", "1.".to_string() + &"0.".repeat(31));
        assert_eq!(of(&v6, PTR, true), Some((Reply::Ptr, false)));
        assert_eq!(of(&v6, SOA, true), Some((Reply::Soa, false)));
        assert_eq!(of(&v6, AAAA, true), Some((Reply::NoData(0), false)));
        assert_eq!(
            of(&format!("x.{v6}"), PTR, true),
            Some((Reply::NxDomain(2), false))
        );
        // ::2 is not local.
        let other = format!("{}ip6.arpa.", "2.".to_string() + &"0.".repeat(31));
        assert_eq!(of(&other, PTR, true), None);
    }

    #[test]
    fn other_names_of_the_zones_do_not_exist() {
        assert_eq!(
            of("2.0.0.127.in-addr.arpa.", PTR, true),
            Some((Reply::NxDomain(6), false))
        );
        assert_eq!(
            of("1.0.in-addr.arpa.", PTR, true),
            Some((Reply::NxDomain(2), false))
        );
        assert_eq!(of("in-addr.arpa.", PTR, true), None);
    }
}
