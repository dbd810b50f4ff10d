//! `prefer CIDR...`: the subnets whose addresses go first, as Go's `net.ParseCIDR` reads
//! them and `IPNet.Contains` matches them.

use std::net::IpAddr;

/// One preferred subnet, its address already masked to the prefix (as `ParseCIDR` gives it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subnet {
    net: IpAddr,
    bits: u8,
}

impl Subnet {
    /// Parses `a.b.c.d/n` or `x::y/n`; the error is Go's (`invalid CIDR address: TEXT`).
    pub fn parse(text: &str) -> Result<Subnet, String> {
        let bad = || format!("invalid CIDR address: {text}");
        let (addr, bits) = text.split_once('/').ok_or_else(bad)?;
        let ip: IpAddr = addr.parse().map_err(|_| bad())?;
        let max = if ip.is_ipv4() { 32 } else { 128 };
        if bits.is_empty() || bits.len() > 3 || !bits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let bits: u8 = bits.parse().map_err(|_| bad())?;
        if bits > max {
            return Err(bad());
        }
        Ok(Subnet {
            net: mask(ip, bits),
            bits,
        })
    }

    /// Whether `ip` is in the subnet. As Go: an IPv4-mapped IPv6 address counts as IPv4, and
    /// an address of the other family never matches.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        ip.is_ipv4() == self.net.is_ipv4() && mask(ip, self.bits) == self.net
    }
}

fn mask(ip: IpAddr, bits: u8) -> IpAddr {
    match ip {
        IpAddr::V4(a) => {
            let m = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            IpAddr::V4((u32::from(a) & m).into())
        }
        IpAddr::V6(a) => {
            let m = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            IpAddr::V6((u128::from(a) & m).into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subnets_parse_and_match_as_go_does() {
        let s = Subnet::parse("10.9.20.7/24").unwrap();
        assert!(s.contains("10.9.20.200".parse().unwrap()));
        assert!(!s.contains("10.9.21.1".parse().unwrap()));
        assert!(s.contains("::ffff:10.9.20.1".parse().unwrap()));
        let v6 = Subnet::parse("2001:db8::/32").unwrap();
        assert!(v6.contains("2001:db8:1::1".parse().unwrap()));
        assert!(!v6.contains("10.9.20.1".parse().unwrap()));
        assert!(
            Subnet::parse("0.0.0.0/0")
                .unwrap()
                .contains("1.2.3.4".parse().unwrap())
        );
        for bad in [
            "10.0.0.0/33",
            "10.0.0.0",
            "x/8",
            "10.0.0.0/+8",
            "::/129",
            "10.0.0.0/",
        ] {
            assert_eq!(
                Subnet::parse(bad).unwrap_err(),
                format!("invalid CIDR address: {bad}")
            );
        }
    }
}
