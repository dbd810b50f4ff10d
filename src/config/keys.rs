//! Server-block keys: `[SCHEME://]ZONE[:PORT]`.
//!
//! Mirrors CoreDNS's `core/dnsserver/register.go` (`InspectServerBlocks`,
//! `validateZonesAndListeningAddresses`), `core/dnsserver/address.go` (`zoneOverlap`),
//! `plugin/normalize.go` (`SplitHostPort`), `plugin/pkg/parse/transport.go` and the parts of
//! miekg/dns they rely on (`IsDomainName`, `Fqdn`). Error texts are CoreDNS's, without the
//! `FILE:LINE` the caller adds.

use crate::plugin::quote::go_quote;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::net::IpAddr;

use crate::plugin::normalize::{fqdn, split_host_port};

/// The port plain `dns://` keys use when neither the key nor `-dns.port` gives one.
pub const DEFAULT_DNS_PORT: u16 = 53;

/// The transports a key can name; each becomes a different kind of listener.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transport {
    /// Plain DNS over UDP and TCP (`dns://`, also the default without a scheme).
    Dns,
    /// DNS over TLS, RFC 7858 (`tls://`).
    Tls,
    /// DNS over QUIC, RFC 9250 (`quic://`).
    Quic,
    /// DNS over gRPC (`grpc://`).
    Grpc,
    /// DNS over HTTPS on HTTP/2, RFC 8484 (`https://`).
    Https,
    /// DNS over HTTPS on HTTP/3 (`https3://`).
    Https3,
}

impl Transport {
    /// Every transport, in declaration order; for callers that list or match schemes.
    pub const ALL: [Transport; 6] = [
        Transport::Dns,
        Transport::Tls,
        Transport::Quic,
        Transport::Grpc,
        Transport::Https,
        Transport::Https3,
    ];

    /// The key scheme without `://` (`"dns"`, `"tls"`, …), as CoreDNS prints it in messages.
    pub fn scheme(&self) -> &'static str {
        match self {
            Transport::Dns => "dns",
            Transport::Tls => "tls",
            Transport::Quic => "quic",
            Transport::Grpc => "grpc",
            Transport::Https => "https",
            Transport::Https3 => "https3",
        }
    }

    /// The port a key of this transport gets when it names none: 53 for dns (which `parse_key`
    /// replaces by the `-dns.port` value), 853 for tls and quic, 443 for grpc, https and https3.
    pub fn default_port(&self) -> u16 {
        match self {
            Transport::Dns => DEFAULT_DNS_PORT,
            Transport::Tls | Transport::Quic => 853,
            Transport::Grpc | Transport::Https | Transport::Https3 => 443,
        }
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.scheme())
    }
}

/// One zone a block serves, after normalisation: what the listener set-up and the query router
/// key on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ZoneAddr {
    /// The listener kind.
    pub transport: Transport,
    /// Lower-case FQDN presentation, e.g. `"example.org."` or `"."`.
    pub zone: String,
    /// The port to listen on.
    pub port: u16,
    /// Whether the key itself named the port (an explicit port is not overridden by `-dns.port`).
    pub port_explicit: bool,
}

impl fmt::Display for ZoneAddr {
    /// CoreDNS's `zoneAddr.String()`: `dns://example.org.:53`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}:{}", self.transport, self.zone, self.port)
    }
}

/// Parses one server-block key `[SCHEME://]ZONE[:PORT]` into the zones it names.
///
/// `dns_port` is the default for `dns://` keys without a port (the `-dns.port` flag). A key whose
/// zone is a CIDR (`10.0.0.0/15`) expands to one `ZoneAddr` per reverse zone; all share the key's
/// transport and port. Errors are CoreDNS's messages as plain strings (the caller adds FILE:LINE).
pub fn parse_key(key: &str, dns_port: u16) -> Result<Vec<ZoneAddr>, String> {
    let (transport, rest) = split_transport(key)?;
    let (hosts, port) = split_host_port(rest)?;
    // CoreDNS checks every host again in FQDN form: a name can pass unqualified and fail qualified
    // (e.g. one ending in a non-ASCII character, see `is_fqdn`, or one of exactly 255 bytes).
    for host in &hosts {
        split_host_port(&fqdn(host))?;
    }
    let (port, port_explicit) = match port {
        None if transport == Transport::Dns => (dns_port, false),
        None => (transport.default_port(), false),
        // CoreDNS only finds out when it resolves the listen address; Go's text for that.
        Some(p) => (
            u16::try_from(p).map_err(|_| format!("address {p}: invalid port"))?,
            true,
        ),
    };
    Ok(hosts
        .iter()
        .map(|host| ZoneAddr {
            transport,
            zone: fqdn(host).to_ascii_lowercase(),
            port,
            port_explicit,
        })
        .collect())
}

/// Splits a key's `SCHEME://` prefix off (CoreDNS's `parse.Transport`); no scheme means dns.
///
/// CoreDNS accepts `unix://` here but then starts no server for it, and takes an unknown
/// `foo://` prefix as part of the zone name; both are rejected instead.
pub fn split_transport(key: &str) -> Result<(Transport, &str), String> {
    for t in Transport::ALL {
        if let Some(rest) = key
            .strip_prefix(t.scheme())
            .and_then(|r| r.strip_prefix("://"))
        {
            return Ok((t, rest));
        }
    }
    if key.starts_with("unix://") {
        return Err(format!(
            "unix:// transport is not supported: {}",
            go_quote(key)
        ));
    }
    if let Some((scheme, _)) = key.split_once("://") {
        return Err(format!(
            "unknown transport {} (want dns, tls, quic, grpc, https or https3): {}",
            go_quote(scheme),
            go_quote(key)
        ));
    }
    Ok((Transport::Dns, key))
}

/// One (transport, zone, port, bind address) listener slot; `None` is the wildcard.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Slot {
    transport: Transport,
    zone: String,
    port: u16,
    addr: Option<IpAddr>,
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}:{}", self.transport, self.zone, self.port)?;
        if let Some(a) = self.addr {
            write!(f, " on {a}")?;
        }
        Ok(())
    }
}

/// Enforces CoreDNS's rule that no two blocks serve the same zone on the same listener.
///
/// `keys` are all zones of all blocks in Corefile order, each with the block's bind addresses
/// (empty = wildcard). The same (transport, zone, port, address) twice is
/// `cannot serve dns://example.org.:53 - it is already defined` (with ` on ADDRESS` when bound);
/// a bound and an unbound definition of the same transport/zone/port conflict with
/// `cannot serve … - zone overlap listener capacity with …`, because the wildcard listener would
/// race the bound one for the same packets.
pub fn check_duplicates(keys: &[(ZoneAddr, Vec<IpAddr>)]) -> Result<(), String> {
    check_zones(keys.iter().map(|(za, addrs)| (za, addrs.as_slice(), false)))
}

/// [`check_duplicates`] with CoreDNS's exception for blocks with a view (`filtered`): such
/// a block may share its zone and port with others, so it is checked for the overlap of a
/// bound and an unbound listener but not registered (CoreDNS's
/// `validateZonesAndListeningAddresses`).
pub fn check_zones<'k>(
    keys: impl IntoIterator<Item = (&'k ZoneAddr, &'k [IpAddr], bool)>,
) -> Result<(), String> {
    let mut registered: HashSet<Slot> = HashSet::new();
    // Per unbound slot, the last slot registered under it (CoreDNS's `unboundOverlap`).
    let mut by_unbound: HashMap<Slot, Slot> = HashMap::new();
    for (za, addrs, filtered) in keys {
        let hosts: Vec<Option<IpAddr>> = if addrs.is_empty() {
            vec![None]
        } else {
            addrs.iter().copied().map(Some).collect()
        };
        for addr in hosts {
            let slot = Slot {
                transport: za.transport,
                zone: za.zone.clone(),
                port: za.port,
                addr,
            };
            if !filtered && registered.contains(&slot) {
                return Err(format!("cannot serve {slot} - it is already defined"));
            }
            let unbound = Slot {
                addr: None,
                ..slot.clone()
            };
            if let Some(already) = by_unbound.get(&unbound) {
                if slot.addr.is_none() {
                    return Err(format!(
                        "cannot serve {slot} - zone overlap listener capacity with {already}"
                    ));
                }
                if registered.contains(&unbound) {
                    return Err(format!(
                        "cannot serve {slot} - zone overlap listener capacity with {unbound}"
                    ));
                }
            }
            if !filtered {
                registered.insert(slot.clone());
                by_unbound.insert(unbound, slot);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::normalize::*;

    fn one(key: &str) -> ZoneAddr {
        let mut v = parse_key(key, 53).unwrap_or_else(|e| panic!("{key}: {e}"));
        assert_eq!(v.len(), 1, "{key}");
        v.remove(0)
    }

    fn err(key: &str) -> String {
        parse_key(key, 53).expect_err(key)
    }

    fn zones(key: &str) -> Vec<String> {
        parse_key(key, 53)
            .unwrap_or_else(|e| panic!("{key}: {e}"))
            .into_iter()
            .map(|z| z.zone)
            .collect()
    }

    #[test]
    fn transports_and_default_ports() {
        let want = [
            (Transport::Dns, "dns", 53),
            (Transport::Tls, "tls", 853),
            (Transport::Quic, "quic", 853),
            (Transport::Grpc, "grpc", 443),
            (Transport::Https, "https", 443),
            (Transport::Https3, "https3", 443),
        ];
        for (t, scheme, port) in want {
            assert_eq!(t.scheme(), scheme);
            assert_eq!(t.default_port(), port);
            let z = one(&format!("{scheme}://example.org"));
            assert_eq!(z.transport, t);
            assert_eq!(z.port, port);
            assert!(!z.port_explicit);
            assert_eq!(z.zone, "example.org.");
        }
    }

    #[test]
    fn plain_key_defaults_to_dns_and_dns_port_flag() {
        assert_eq!(
            one("example.org"),
            ZoneAddr {
                transport: Transport::Dns,
                zone: "example.org.".into(),
                port: 53,
                port_explicit: false,
            }
        );
        let z = parse_key("example.org", 1053).unwrap();
        assert_eq!(z[0].port, 1053);
        let z = parse_key("dns://example.org", 1053).unwrap();
        assert_eq!(z[0].port, 1053);
        // -dns.port applies to dns:// only
        let z = parse_key("tls://example.org", 1053).unwrap();
        assert_eq!(z[0].port, 853);
    }

    #[test]
    fn explicit_port_wins_over_flag() {
        let z = parse_key("example.org:53", 1053).unwrap();
        assert_eq!((z[0].port, z[0].port_explicit), (53, true));
        let z = one("https3://example.org:8443");
        assert_eq!(
            (z.transport, z.port, z.port_explicit),
            (Transport::Https3, 8443, true)
        );
        let z = one("dns://.:5300");
        assert_eq!((z.zone.as_str(), z.port), (".", 5300));
    }

    #[test]
    fn port_text_parsed_like_go_atoi() {
        assert_eq!(one("example.org:+53").port, 53);
        assert_eq!(one("example.org:053").port, 53);
        assert_eq!(one("example.org:0").port, 0);
        assert_eq!(one("example.org:65535").port, 65535);
        // not an integer: the colon belongs to the zone text
        assert_eq!(one("example.org:ab").zone, "example.org:ab.");
        // out of int64 range: Atoi fails, so CoreDNS takes it as part of the zone
        assert_eq!(
            one("example.org:99999999999999999999").zone,
            "example.org:99999999999999999999."
        );
    }

    #[test]
    fn port_range() {
        assert_eq!(err("example.org:65536"), "address 65536: invalid port");
        assert_eq!(err("example.org:-1"), "address -1: invalid port");
        assert_eq!(
            err("tls://example.org:0070000"),
            "address 70000: invalid port"
        );
    }

    #[test]
    fn trailing_colon() {
        assert_eq!(
            err("example.org:"),
            r#"expecting data after last colon: "example.org:""#
        );
        assert_eq!(
            err("tls://example.org:"),
            r#"expecting data after last colon: "example.org:""#
        );
        assert_eq!(err(":"), r#"expecting data after last colon: ":""#);
    }

    #[test]
    fn unsupported_and_unknown_schemes() {
        assert_eq!(
            err("unix://example.org"),
            r#"unix:// transport is not supported: "unix://example.org""#
        );
        assert_eq!(
            err("foo://example.org"),
            r#"unknown transport "foo" (want dns, tls, quic, grpc, https or https3): "foo://example.org""#
        );
        assert_eq!(
            err("DNS://example.org"),
            r#"unknown transport "DNS" (want dns, tls, quic, grpc, https or https3): "DNS://example.org""#
        );
    }

    #[test]
    fn normalisation() {
        assert_eq!(one(".").zone, ".");
        assert_eq!(one("EXAMPLE.ORG").zone, "example.org.");
        assert_eq!(one("Example.Org.").zone, "example.org.");
        assert_eq!(one("tls://EXAMPLE.org:853").zone, "example.org.");
        // escapes stay as written
        assert_eq!(one(r"a\.b.example").zone, r"a\.b.example.");
        assert_eq!(one(r"a\.").zone, r"a\..");
    }

    #[test]
    fn zone_length() {
        let long = "a".repeat(256);
        assert_eq!(err(&long), "specified zone is too long: 256 > 255");
        assert_eq!(
            err(&format!("{long}:53")),
            "specified zone is too long: 256 > 255"
        );
        // 255 bytes passes the first check, but its FQDN form is 256 bytes
        let l63 = "a".repeat(63);
        let name255 = [l63.as_str(); 4].join(".");
        assert_eq!(name255.len(), 255);
        assert_eq!(err(&name255), "specified zone is too long: 256 > 255");
        let name253 = format!("{}.{}.{}.{}", l63, l63, l63, "a".repeat(61));
        assert_eq!(one(&name253).zone.len(), 254);
    }

    #[test]
    fn domain_name_syntax() {
        let l64 = "a".repeat(64);
        assert_eq!(
            err(&format!("{l64}.org")),
            format!("zone is not a valid domain name: {l64}.org")
        );
        assert_eq!(err("a..b"), "zone is not a valid domain name: a..b");
        assert_eq!(
            err("example.org.."),
            "zone is not a valid domain name: example.org.."
        );
        assert_eq!(err(""), "zone is not a valid domain name: ");
        assert_eq!(err("dns://"), "zone is not a valid domain name: ");
        assert_eq!(err(":53"), "zone is not a valid domain name: ");
        // passes unqualified, fails in FQDN form (miekg/dns IsFqdn on multi-byte UTF-8)
        assert_eq!(err("ȶ"), "zone is not a valid domain name: ȶ.");
        // CoreDNS is liberal about bytes
        assert_eq!(one("my_zone.local").zone, "my_zone.local.");
    }

    #[test]
    fn is_domain_name_rules() {
        assert!(is_domain_name("."));
        assert!(is_domain_name("example.org"));
        assert!(is_domain_name("example.org."));
        assert!(is_domain_name(&format!("{}.org", "a".repeat(63))));
        assert!(!is_domain_name(&format!("{}.org", "a".repeat(64))));
        // \DDD counts as one octet
        assert!(is_domain_name(&format!("{}\\065.org", "a".repeat(62))));
        assert!(!is_domain_name(""));
        assert!(!is_domain_name(".."));
        assert!(is_fqdn("a."));
        assert!(!is_fqdn(r"a\."));
        assert!(is_fqdn(r"a\\."));
        assert!(!is_fqdn("ȶ."));
        assert_eq!(fqdn("a"), "a.");
        assert_eq!(fqdn("."), ".");
    }

    #[test]
    fn reverse_cidr_keys() {
        assert_eq!(zones("10.0.0.0/24"), ["0.0.10.in-addr.arpa."]);
        assert_eq!(
            zones("10.0.0.0/15"),
            ["0.10.in-addr.arpa.", "1.10.in-addr.arpa."]
        );
        let z = zones("192.168.1.0/25");
        assert_eq!(z.len(), 128);
        assert_eq!(z[0], "0.1.168.192.in-addr.arpa.");
        assert_eq!(z[127], "127.1.168.192.in-addr.arpa.");
        assert_eq!(zones("2001:db8::/32"), ["8.b.d.0.1.0.0.2.ip6.arpa."]);
        assert_eq!(zones("2001:db8::/30").len(), 4);
        assert_eq!(zones("0.0.0.0/0"), ["in-addr.arpa."]);
    }

    #[test]
    fn reverse_keys_keep_transport_and_port() {
        let v = parse_key("tls://10.0.0.0/15:1853", 53).unwrap();
        assert_eq!(v.len(), 2);
        for z in &v {
            assert_eq!(
                (z.transport, z.port, z.port_explicit),
                (Transport::Tls, 1853, true)
            );
        }
        let v = parse_key("2001:db8::/32:5353", 53).unwrap();
        assert_eq!(v[0].zone, "8.b.d.0.1.0.0.2.ip6.arpa.");
        assert_eq!(v[0].port, 5353);
        let v = parse_key("10.0.0.0/8", 1053).unwrap();
        assert_eq!((v[0].zone.as_str(), v[0].port), ("10.in-addr.arpa.", 1053));
    }

    #[test]
    fn host_bits_are_masked() {
        assert_eq!(zones("10.0.0.1/24"), ["0.0.10.in-addr.arpa."]);
        assert_eq!(
            zones("10.1.2.3/15"),
            ["0.10.in-addr.arpa.", "1.10.in-addr.arpa."]
        );
    }

    #[test]
    fn trailing_dot_or_bad_prefix_disables_conversion() {
        assert_eq!(zones("10.0.0.0/24."), ["10.0.0.0/24."]);
        assert_eq!(zones("10.0.0.0/33"), ["10.0.0.0/33."]);
        assert_eq!(zones("10.0.0.0"), ["10.0.0.0."]);
    }

    #[test]
    fn invalid_cidr() {
        assert_eq!(err("::/0"), "invalid CIDR ::/0");
        assert_eq!(err("::1/128"), "invalid CIDR ::1/128");
        assert_eq!(err("0::/16"), "invalid CIDR 0::/16");
        assert_eq!(err("0db8::/16:53"), "invalid CIDR 0db8::/16");
        assert_eq!(
            err("::ffff:10.0.0.0/104"),
            "invalid CIDR ::ffff:10.0.0.0/104"
        );
        assert_eq!(err("tls://::/0"), "invalid CIDR ::/0");
    }

    #[test]
    fn display() {
        assert_eq!(one("example.org").to_string(), "dns://example.org.:53");
        assert_eq!(one("grpc://.").to_string(), "grpc://.:443");
    }

    #[test]
    fn go_quote_matches_go() {
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(go_quote("\t\n\u{1}\u{7f}"), r#""\t\n\x01\x7f""#);
        assert_eq!(go_quote("é\u{a0}\u{200b}"), r#""é\u00a0\u200b""#);
    }

    fn za(key: &str) -> ZoneAddr {
        one(key)
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn duplicates_unbound() {
        let keys = [(za("example.org"), vec![]), (za("example.org:53"), vec![])];
        assert_eq!(
            check_duplicates(&keys).unwrap_err(),
            "cannot serve dns://example.org.:53 - it is already defined"
        );
        let keys = [(za("EXAMPLE.ORG"), vec![]), (za("example.org."), vec![])];
        assert_eq!(
            check_duplicates(&keys).unwrap_err(),
            "cannot serve dns://example.org.:53 - it is already defined"
        );
        let keys = [(za("."), vec![]), (za("tls://.:53"), vec![])];
        assert_eq!(check_duplicates(&keys), Ok(()));
        let keys = [
            (za("."), vec![]),
            (za(".:54"), vec![]),
            (za("example.org"), vec![]),
        ];
        assert_eq!(check_duplicates(&keys), Ok(()));
    }

    #[test]
    fn duplicates_from_reverse_expansion() {
        let mut keys: Vec<(ZoneAddr, Vec<IpAddr>)> = parse_key("10.0.0.0/15", 53)
            .unwrap()
            .into_iter()
            .map(|z| (z, vec![]))
            .collect();
        keys.push((za("1.10.in-addr.arpa"), vec![]));
        assert_eq!(
            check_duplicates(&keys).unwrap_err(),
            "cannot serve dns://1.10.in-addr.arpa.:53 - it is already defined"
        );
    }

    #[test]
    fn duplicates_bound() {
        let keys = [
            (za("example.org"), vec![ip("127.0.0.1")]),
            (za("example.org"), vec![ip("127.0.0.2"), ip("127.0.0.1")]),
        ];
        assert_eq!(
            check_duplicates(&keys).unwrap_err(),
            "cannot serve dns://example.org.:53 on 127.0.0.1 - it is already defined"
        );
        let keys = [
            (za("example.org"), vec![ip("127.0.0.1")]),
            (za("example.org"), vec![ip("::1")]),
        ];
        assert_eq!(check_duplicates(&keys), Ok(()));
        let keys = [
            (za("example.org"), vec![ip("::1")]),
            (za("example.org"), vec![ip("::1")]),
        ];
        assert_eq!(
            check_duplicates(&keys).unwrap_err(),
            "cannot serve dns://example.org.:53 on ::1 - it is already defined"
        );
    }

    #[test]
    fn overlap_bound_then_unbound() {
        let keys = [
            (za("example.org"), vec![ip("127.0.0.1")]),
            (za("example.org"), vec![]),
        ];
        assert_eq!(
            check_duplicates(&keys).unwrap_err(),
            "cannot serve dns://example.org.:53 - zone overlap listener capacity with dns://example.org.:53 on 127.0.0.1"
        );
        // the message names the last bound definition
        let keys = [
            (za("example.org"), vec![ip("127.0.0.1"), ip("127.0.0.2")]),
            (za("example.org"), vec![]),
        ];
        assert_eq!(
            check_duplicates(&keys).unwrap_err(),
            "cannot serve dns://example.org.:53 - zone overlap listener capacity with dns://example.org.:53 on 127.0.0.2"
        );
    }

    #[test]
    fn overlap_unbound_then_bound() {
        let keys = [
            (za("example.org"), vec![]),
            (za("example.org"), vec![ip("127.0.0.1")]),
        ];
        assert_eq!(
            check_duplicates(&keys).unwrap_err(),
            "cannot serve dns://example.org.:53 on 127.0.0.1 - zone overlap listener capacity with dns://example.org.:53"
        );
    }

    #[test]
    fn no_overlap_across_zone_port_or_transport() {
        let keys = [
            (za("a.example"), vec![ip("127.0.0.1")]),
            (za("b.example"), vec![]),
            (za("a.example:54"), vec![]),
            (za("tls://a.example:53"), vec![]),
        ];
        assert_eq!(check_duplicates(&keys), Ok(()));
    }
}
