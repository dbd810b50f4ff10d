//! Reverse zones for networks named in CIDR notation.
//!
//! CoreDNS turns a server-block key (or a plugin zone argument) such as `10.0.0.0/24` into the
//! reverse zone(s) that cover it (`plugin.SplitHostPort`, `plugin/pkg/cidr`). A prefix that does not
//! fall on a label boundary (8 bits for IPv4, 4 bits for IPv6) is split into the subnets of the next
//! longer aligned prefix, one zone each: `10.0.0.0/15` → `0.10.in-addr.arpa.`, `1.10.in-addr.arpa.`.

use crate::wire::Name;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An IP network as Go's `net.ParseCIDR` returns it: the address with its host bits cleared, and
/// the prefix length.
///
/// It exists so that keys and plugin arguments naming a network can be turned into the reverse
/// zones CoreDNS serves for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cidr {
    network: IpAddr,
    prefix_len: u8,
}

impl Cidr {
    /// Builds the network `addr/prefix_len`, clearing host bits; `None` when the prefix is longer
    /// than the address (32 for IPv4, 128 for IPv6).
    pub fn new(addr: IpAddr, prefix_len: u8) -> Option<Cidr> {
        let network = match addr {
            IpAddr::V4(a) if prefix_len <= 32 => {
                IpAddr::V4(Ipv4Addr::from(u32::from(a) & mask_u32(prefix_len)))
            }
            IpAddr::V6(a) if prefix_len <= 128 => {
                IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask_u128(prefix_len)))
            }
            _ => return None,
        };
        Some(Cidr {
            network,
            prefix_len,
        })
    }

    /// Parses `ADDRESS/LENGTH` the way Go's `net.ParseCIDR` does, so the same key texts count as
    /// networks as in CoreDNS: dotted-quad IPv4 without leading zeros or IPv6 (no `%zone`), then
    /// a decimal length (leading zeros allowed) no longer than the address. Host bits are cleared,
    /// as Go does (`10.0.0.1/24` is `10.0.0.0/24`). Anything else is `None`.
    pub fn parse(s: &str) -> Option<Cidr> {
        let (addr, len) = s.split_once('/')?;
        let addr: IpAddr = addr.parse().ok()?;
        if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut n: u32 = 0;
        for b in len.bytes() {
            n = n * 10 + u32::from(b - b'0');
            if n > 128 {
                return None;
            }
        }
        Cidr::new(addr, u8::try_from(n).ok()?)
    }

    /// Whether `ip` is in the network, as Go's `IPNet.Contains` decides it for a network of
    /// `ParseCIDR` (loadbalance's `prefer` matches answers' addresses so): an IPv4-mapped
    /// IPv6 address is its IPv4 address, a network written so too (`::ffff:10.0.0.0/104` is
    /// `10.0.0.0/8`), and an address of the other family is never in the network.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let (network, len) = match self.network {
            IpAddr::V6(a) if self.prefix_len >= 96 => match a.to_ipv4_mapped() {
                Some(v4) => (IpAddr::V4(v4), self.prefix_len - 96),
                None => (self.network, self.prefix_len),
            },
            n => (n, self.prefix_len),
        };
        Cidr::new(ip.to_canonical(), len).is_some_and(|c| c.network == network)
    }

    /// The network address (host bits cleared).
    pub fn network(&self) -> IpAddr {
        self.network
    }

    /// The prefix length in bits.
    pub fn prefix_len(&self) -> u8 {
        self.prefix_len
    }

    /// Bits per reverse-name label: 8 for IPv4 (`in-addr.arpa.`), 4 for IPv6 (`ip6.arpa.`).
    pub fn label_bits(&self) -> u8 {
        match self.network {
            IpAddr::V4(_) => 8,
            IpAddr::V6(_) => 4,
        }
    }

    /// Splits the network into non-overlapping subnets whose prefix is the nearest label-aligned
    /// length at or above this one (CoreDNS's `cidr.Split`); an aligned network is returned alone.
    /// At most 128 subnets for IPv4 and 8 for IPv6.
    pub fn split(&self) -> Vec<Cidr> {
        let step = self.label_bits();
        if self.prefix_len.is_multiple_of(step) {
            return vec![*self];
        }
        let new_len = self.prefix_len.div_ceil(step) * step;
        let count = 1u32 << (new_len - self.prefix_len);
        match self.network {
            IpAddr::V4(a) => {
                let base = u32::from(a);
                let size = 1u32 << (32 - new_len); // new_len <= 32 and > 0 here
                (0..count)
                    .map(|i| Cidr {
                        network: IpAddr::V4(Ipv4Addr::from(base + i * size)),
                        prefix_len: new_len,
                    })
                    .collect()
            }
            IpAddr::V6(a) => {
                let base = u128::from(a);
                let size = 1u128 << (128 - new_len);
                (0..count)
                    .map(|i| Cidr {
                        network: IpAddr::V6(Ipv6Addr::from(base + u128::from(i) * size)),
                        prefix_len: new_len,
                    })
                    .collect()
            }
        }
    }

    /// The reverse zone of this network, lower-case and fully qualified, e.g. `0.0.10.in-addr.arpa.`
    /// for `10.0.0.0/24`. For a prefix that is not label-aligned this is the zone of the enclosing
    /// aligned network (prefix rounded down); use [`reverse_zones`] to get CoreDNS's expansion.
    pub fn reverse_zone(&self) -> String {
        let labels = usize::from(self.prefix_len / self.label_bits());
        let mut out = String::new();
        match self.network {
            IpAddr::V4(a) => {
                for octet in a.octets()[..labels].iter().rev() {
                    out.push_str(&octet.to_string());
                    out.push('.');
                }
                out.push_str("in-addr.arpa.");
            }
            IpAddr::V6(a) => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let nibbles: Vec<u8> = a.octets().iter().flat_map(|b| [b >> 4, b & 0xf]).collect();
                for n in nibbles[..labels].iter().rev() {
                    out.push(char::from(HEX[usize::from(*n)]));
                    out.push('.');
                }
                out.push_str("ip6.arpa.");
            }
        }
        out
    }
}

/// The reverse zones CoreDNS serves for `cidr`: one per label-aligned subnet, in address order
/// (`192.168.1.0/25` → 128 zones `0.1.168.192.in-addr.arpa.` … `127.1.168.192.in-addr.arpa.`).
pub fn reverse_zones(cidr: &Cidr) -> Vec<String> {
    cidr.split().iter().map(Cidr::reverse_zone).collect()
}

fn mask_u32(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len))
    }
}

fn mask_u128(len: u8) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(len))
    }
}

/// The address a reverse name stands for (CoreDNS's `dnsutil.ExtractAddressFromReverse`):
/// four decimal labels (Go's IPv4 rules: 0–255, no leading zero) under `in-addr.arpa.`, or
/// 32 hex-digit labels under `ip6.arpa.`. An IPv4-mapped IPv6 name stands for the IPv4
/// address, as in CoreDNS, whose address keys are Go's `IP.String`.
pub fn reverse_addr(name: &Name<'_>) -> Option<IpAddr> {
    let mut labels = [&[][..]; 34];
    let mut n = 0;
    for l in name.labels() {
        *labels.get_mut(n)? = l;
        n += 1;
    }
    let arpa = |i: usize, zone: &[u8]| {
        labels[i].eq_ignore_ascii_case(zone) && labels[i + 1].eq_ignore_ascii_case(b"arpa")
    };
    if n == 6 && arpa(4, b"in-addr") {
        let mut o = [0u8; 4];
        for (i, l) in labels[..4].iter().enumerate() {
            o[3 - i] = octet(l)?;
        }
        return Some(IpAddr::V4(Ipv4Addr::from(o)));
    }
    if n == 34 && arpa(32, b"ip6") {
        let mut v: u128 = 0;
        for l in labels[..32].iter().rev() {
            let [d] = l else { return None };
            v = (v << 4) | u128::from(char::from(*d).to_digit(16)?);
        }
        let a = Ipv6Addr::from(v);
        return Some(match a.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(a),
        });
    }
    None
}

/// A decimal octet as Go's IPv4 parser takes it: 1 to 3 digits, no leading zero, ≤ 255.
fn octet(l: &[u8]) -> Option<u8> {
    if l.is_empty() || l.len() > 3 || (l.len() > 1 && l[0] == b'0') {
        return None;
    }
    if !l.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = l.iter().fold(0u16, |v, d| v * 10 + u16::from(d - b'0'));
    u8::try_from(v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones(s: &str) -> Vec<String> {
        reverse_zones(&Cidr::parse(s).expect("valid CIDR"))
    }

    #[test]
    fn parse_follows_go_parse_cidr() {
        let c = Cidr::parse("10.0.0.1/24").unwrap();
        assert_eq!(c.network(), "10.0.0.0".parse::<IpAddr>().unwrap());
        assert_eq!(c.prefix_len(), 24);
        assert_eq!(Cidr::parse("10.0.0.0/024").unwrap().prefix_len(), 24);
        for bad in [
            "10.0.0.0",
            "10.0.0.0/",
            "10.0.0.0/33",
            "10.0.0.0/+8",
            "10.0.0.0/8 ",
            "010.0.0.0/8",
            "10.0.0/8",
            "::/129",
            "fe80::%eth0/64",
            "10.0.0.0/24.",
            "example.org",
        ] {
            assert_eq!(Cidr::parse(bad), None, "{bad}");
        }
        assert!(Cidr::parse("::/0").is_some());
        assert!(Cidr::parse("2001:DB8::/32").is_some());
    }

    #[test]
    fn contains_follows_go_ipnet_contains() {
        let has = |net: &str, ip: &str| Cidr::parse(net).unwrap().contains(ip.parse().unwrap());
        assert!(has("10.9.20.7/24", "10.9.20.200"));
        assert!(!has("10.9.20.0/24", "10.9.21.1"));
        assert!(has("10.9.20.0/24", "::ffff:10.9.20.1"));
        assert!(has("2001:db8::/32", "2001:db8:1::1"));
        assert!(!has("2001:db8::/32", "10.9.20.1"));
        assert!(!has("::/0", "10.9.20.1"));
        assert!(!has("::/0", "::ffff:10.9.20.1"));
        assert!(has("::/0", "2001:db8::1"));
        assert!(has("0.0.0.0/0", "1.2.3.4"));
        assert!(!has("0.0.0.0/0", "2001:db8::1"));
        assert!(has("10.0.0.1/32", "10.0.0.1"));
        assert!(!has("10.0.0.1/32", "10.0.0.2"));
        // A network written IPv4-mapped is the IPv4 network.
        assert!(has("::ffff:10.0.0.0/104", "10.200.0.1"));
        assert!(!has("::ffff:10.0.0.0/104", "11.0.0.1"));
        assert!(has("::ffff:0.0.0.0/96", "192.0.2.1"));
        assert!(!has("::ffff:0.0.0.0/96", "2001:db8::1"));
    }

    #[test]
    fn aligned_ipv4() {
        assert_eq!(zones("10.0.0.0/24"), ["0.0.10.in-addr.arpa."]);
        assert_eq!(zones("10.0.0.0/8"), ["10.in-addr.arpa."]);
        assert_eq!(zones("1.2.3.4/32"), ["4.3.2.1.in-addr.arpa."]);
        assert_eq!(zones("0.0.0.0/0"), ["in-addr.arpa."]);
    }

    #[test]
    fn unaligned_ipv4_splits() {
        assert_eq!(
            zones("10.0.0.0/15"),
            ["0.10.in-addr.arpa.", "1.10.in-addr.arpa."]
        );
        let z = zones("192.168.1.0/25");
        assert_eq!(z.len(), 128);
        assert_eq!(z[0], "0.1.168.192.in-addr.arpa.");
        assert_eq!(z[127], "127.1.168.192.in-addr.arpa.");
        let z = zones("192.168.1.128/25");
        assert_eq!(z[0], "128.1.168.192.in-addr.arpa.");
        assert_eq!(z[127], "255.1.168.192.in-addr.arpa.");
        assert_eq!(zones("128.0.0.0/1").len(), 128);
        assert_eq!(zones("128.0.0.0/1")[127], "255.in-addr.arpa.");
        assert_eq!(zones("10.0.0.0/23").len(), 2);
    }

    #[test]
    fn ipv6() {
        assert_eq!(zones("2001:db8::/32"), ["8.b.d.0.1.0.0.2.ip6.arpa."]);
        assert_eq!(zones("2001:DB8::/32"), ["8.b.d.0.1.0.0.2.ip6.arpa."]);
        assert_eq!(
            zones("2001:db8::/30"),
            [
                "8.b.d.0.1.0.0.2.ip6.arpa.",
                "9.b.d.0.1.0.0.2.ip6.arpa.",
                "a.b.d.0.1.0.0.2.ip6.arpa.",
                "b.b.d.0.1.0.0.2.ip6.arpa.",
            ]
        );
        assert_eq!(zones("2001:db8::/33").len(), 8);
        assert_eq!(zones("::/0"), ["ip6.arpa."]);
        assert_eq!(zones("8000::/1").len(), 8);
        assert_eq!(zones("ffff::/1")[7], "f.ip6.arpa.");
        assert_eq!(
            zones("2001:db8::1/128")[0],
            "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa."
        );
    }

    #[test]
    fn reverse_zone_of_unaligned_rounds_down() {
        let c = Cidr::parse("10.1.0.0/15").unwrap();
        assert_eq!(c.reverse_zone(), "10.in-addr.arpa.");
    }

    fn rev(s: &str) -> Option<String> {
        let w = crate::wire::name_to_wire(s).unwrap();
        reverse_addr(&Name::from_wire(&w).unwrap()).map(|a| a.to_string())
    }

    #[test]
    fn reverse_names_as_coredns_reads_them() {
        assert_eq!(rev("1.0.0.10.in-addr.arpa.").as_deref(), Some("10.0.0.1"));
        assert_eq!(
            rev("54.119.58.176.IN-ADDR.ARPA.").as_deref(),
            Some("176.58.119.54")
        );
        assert_eq!(
            rev("b.a.9.8.7.6.5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.")
                .as_deref(),
            Some("2001:db8::567:89ab")
        );
        assert_eq!(
            rev("B.A.9.8.7.6.5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.B.D.0.1.0.0.2.IP6.ARPA.")
                .as_deref(),
            Some("2001:db8::567:89ab")
        );
        // ::ffff:10.0.0.2 is 10.0.0.2.
        assert_eq!(
            rev("2.0.0.0.0.0.a.0.f.f.f.f.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa.")
                .as_deref(),
            Some("10.0.0.2")
        );
        for bad in [
            "in-addr.arpa.",
            "0.10.in-addr.arpa.",
            "1.0.0.0.10.in-addr.arpa.",
            "01.0.0.10.in-addr.arpa.",
            "256.0.0.10.in-addr.arpa.",
            "a.0.0.10.in-addr.arpa.",
            "1.0.0.10.in-addr.arpa.example.",
            "example.org.",
            ".",
            "0.0.ip6.arpa.",
            "g.a.9.8.7.6.5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.",
            "ba.9.8.7.6.5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.",
            "x.b.a.9.8.7.6.5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.",
        ] {
            assert_eq!(rev(bad), None, "{bad}");
        }
    }

    #[test]
    fn octets_follow_go() {
        assert_eq!(octet(b"0"), Some(0));
        assert_eq!(octet(b"255"), Some(255));
        assert_eq!(octet(b"256"), None);
        assert_eq!(octet(b"00"), None);
        assert_eq!(octet(b"1000"), None);
        assert_eq!(octet(b""), None);
        assert_eq!(octet(b"+1"), None);
    }
}
