//! The hosts format as CoreDNS's `plugin/hosts/hostsfile.go` reads it (a modified copy of
//! Go's `net/hosts.go`): one `ADDRESS NAME [NAME...]` entry a line, `#` to the end of the
//! line a comment, fields separated by white space. A line with fewer than two fields or
//! whose first field is not an address is skipped; an IPv6 zone (`fe80::1%lo0`) is cut off
//! and the address kept; an IPv4-mapped IPv6 address (`::ffff:10.0.0.2`) is IPv4. Names are
//! lower-cased and fully qualified; names outside the plugin's zones are dropped; a name whose
//! leftmost label is `*` is a wildcard (one more label, never the parent itself, no PTR).
//!
//! The file and the Corefile's inline lines are parsed alike, into a [`Parsed`] each;
//! `data.rs` merges the two into what queries read.

use ringdns_plugin::wire::{Name, name_to_wire};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The addresses of one owner name, in the order the text gives them, each once.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Addrs {
    /// IPv4 addresses (A records).
    pub v4: Vec<Ipv4Addr>,
    /// IPv6 addresses (AAAA records).
    pub v6: Vec<Ipv6Addr>,
}

impl Addrs {
    /// Adds `addr` unless it is there already; true when it was added.
    fn add(&mut self, addr: IpAddr) -> bool {
        match addr {
            IpAddr::V4(a) if !self.v4.contains(&a) => self.v4.push(a),
            IpAddr::V6(a) if !self.v6.contains(&a) => self.v6.push(a),
            _ => return false,
        }
        true
    }

    /// How many addresses.
    pub fn len(&self) -> usize {
        self.v4.len() + self.v6.len()
    }
}

/// What one hosts text says. Names are lower-case wire names.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// Owner name → its addresses (CoreDNS's `name4` and `name6`).
    pub names: HashMap<Vec<u8>, Addrs>,
    /// Wildcard owners, keyed by the name under the `*` label (`*.example.com` is stored
    /// as `example.com.`): CoreDNS's `wildName4` and `wildName6`.
    pub wild: HashMap<Vec<u8>, Addrs>,
    /// Address → the names that have it, in the order the text gives them (CoreDNS's
    /// `addr`, empty with `no_reverse`). IPv4-mapped addresses are IPv4.
    pub addrs: HashMap<IpAddr, Vec<Vec<u8>>>,
}

#[cfg(test)]
impl Parsed {
    /// CoreDNS's `Map.Len`: every address of every name (wildcards included) and every
    /// name of every address.
    pub fn len(&self) -> usize {
        self.names.values().map(Addrs::len).sum::<usize>()
            + self.wild.values().map(Addrs::len).sum::<usize>()
            + self.addrs.values().map(Vec::len).sum::<usize>()
    }
}

/// Parses hosts text. `zones` (lower-case wire names) are the plugin's: other names are
/// dropped. `reverse` keeps the address → names map (false with `no_reverse`).
pub fn parse(text: &[u8], zones: &[Vec<u8>], reverse: bool) -> Parsed {
    let mut out = Parsed::default();
    // Go's bufio.ScanLines: lines end at '\n', a '\r' before it is dropped.
    for line in text.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = match line.iter().position(|&b| b == b'#') {
            Some(i) => &line[..i],
            None => line,
        };
        let mut fields = Fields::new(line);
        let (Some(addr), Some(first)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Some(addr) = parse_ip(addr) else {
            continue;
        };
        for field in std::iter::once(first).chain(fields) {
            let Some(name) = normalize(field) else {
                continue;
            };
            let Ok(n) = Name::from_wire(&name) else {
                continue;
            };
            if !zones.iter().any(|z| n.is_subdomain_of(z)) {
                continue;
            }
            if let Some(parent) = name.strip_prefix(b"\x01*") {
                out.wild.entry(parent.to_vec()).or_default().add(addr);
                continue;
            }
            let added = out.names.entry(name.clone()).or_default().add(addr);
            // A repeated (name, address) pair is one record, and one PTR.
            if reverse && added {
                out.addrs.entry(addr).or_default().push(name);
            }
        }
    }
    out
}

/// A field as a lower-case wire name (CoreDNS's `plugin.Name(f).Normalize()`: lower case,
/// the final dot added). `None` for what no query can ask: not UTF-8, an empty label, a
/// label over 63 bytes, a name over 255.
fn normalize(field: &[u8]) -> Option<Vec<u8>> {
    name_to_wire(std::str::from_utf8(field).ok()?).ok()
}

/// CoreDNS's `parseIP`: the IPv6 zone (from `%`) cut off, then Go's `net.ParseIP`
/// (dotted-quad IPv4 without leading zeros, or IPv6); an IPv4-mapped IPv6 address is the
/// IPv4 address, as Go's `To4` makes it.
pub fn parse_ip(field: &[u8]) -> Option<IpAddr> {
    let field = match field.iter().position(|&b| b == b'%') {
        Some(i) => &field[..i],
        None => field,
    };
    let s = std::str::from_utf8(field).ok()?;
    if let Ok(a) = s.parse::<Ipv4Addr>() {
        return Some(IpAddr::V4(a));
    }
    let a = s.parse::<Ipv6Addr>().ok()?;
    Some(match a.to_ipv4_mapped() {
        Some(v4) => IpAddr::V4(v4),
        None => IpAddr::V6(a),
    })
}

/// Go's `bytes.Fields`: runs of white space separate fields. A line that is UTF-8 is split
/// on Unicode white space, as Go does; one that is not, on ASCII white space.
enum Fields<'a> {
    Text(std::str::SplitWhitespace<'a>),
    Bytes(std::slice::Split<'a, u8, fn(&u8) -> bool>),
}

impl<'a> Fields<'a> {
    fn new(line: &'a [u8]) -> Self {
        match std::str::from_utf8(line) {
            Ok(s) => Fields::Text(s.split_whitespace()),
            Err(_) => Fields::Bytes(line.split(u8::is_ascii_whitespace as fn(&u8) -> bool)),
        }
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        match self {
            Fields::Text(s) => s.next().map(str::as_bytes),
            Fields::Bytes(s) => s.find(|f| !f.is_empty()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(s: &str) -> Vec<u8> {
        name_to_wire(s).unwrap()
    }

    fn root() -> Vec<Vec<u8>> {
        vec![vec![0]]
    }

    fn v4(p: &Parsed, name: &str) -> Vec<String> {
        p.names
            .get(&wire(name))
            .map(|a| a.v4.iter().map(|a| a.to_string()).collect())
            .unwrap_or_default()
    }

    fn v6(p: &Parsed, name: &str) -> Vec<String> {
        p.names
            .get(&wire(name))
            .map(|a| a.v6.iter().map(|a| a.to_string()).collect())
            .unwrap_or_default()
    }

    fn ptr(p: &Parsed, addr: &str) -> Vec<String> {
        let a: IpAddr = addr.parse().unwrap();
        p.addrs
            .get(&a)
            .map(|names| {
                names
                    .iter()
                    .map(|n| Name::from_wire(n).unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// CoreDNS's hostsfile_test.go `hosts`.
    const HOSTS: &str = "255.255.255.255\tbroadcasthost
\t127.0.0.2\todin
\t127.0.0.3\todin  # inline comment
\t::2             odin
\t127.1.1.1\tthor
\t# aliases
\t127.1.1.2\tullr ullrhost
\tfe80::1%lo0\tlocalhost
\t# Bogus entries that must be ignored.
\t123.123.123\tloki
\t321.321.321.321";

    #[test]
    fn coredns_hosts_example() {
        let p = parse(HOSTS.as_bytes(), &root(), true);
        assert_eq!(v4(&p, "odin."), ["127.0.0.2", "127.0.0.3"]);
        assert_eq!(v6(&p, "odin."), ["::2"]);
        assert_eq!(v4(&p, "thor."), ["127.1.1.1"]);
        assert_eq!(v4(&p, "ullr."), ["127.1.1.2"]);
        assert_eq!(v4(&p, "ullrhost."), ["127.1.1.2"]);
        // The zone is cut off, the address kept.
        assert_eq!(v6(&p, "localhost."), ["fe80::1"]);
        assert!(v4(&p, "localhost.").is_empty());
        assert!(!p.names.contains_key(&wire("loki.")));
        assert_eq!(ptr(&p, "255.255.255.255"), ["broadcasthost."]);
        assert_eq!(ptr(&p, "127.0.0.2"), ["odin."]);
        assert_eq!(ptr(&p, "::2"), ["odin."]);
        assert_eq!(ptr(&p, "127.1.1.2"), ["ullr.", "ullrhost."]);
        assert_eq!(ptr(&p, "fe80::1"), ["localhost."]);
        // CoreDNS's Len: 8 addresses of names, 8 names of addresses.
        assert_eq!(p.len(), 16);
    }

    #[test]
    fn ipv4_and_ipv6_files_with_comments_and_aliases() {
        let ipv4 = "# See https://tools.ietf.org/html/rfc1123.
#

# internet address and host name
127.0.0.1\tlocalhost\t# inline comment separated by tab
127.0.0.2\tlocalhost       # inline comment separated by space

# internet address, host name and aliases
127.0.0.3\tlocalhost\tlocalhost.localdomain";
        let p = parse(ipv4.as_bytes(), &root(), true);
        assert_eq!(
            v4(&p, "localhost."),
            ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
        );
        assert_eq!(v4(&p, "localhost.localdomain."), ["127.0.0.3"]);
        assert_eq!(
            ptr(&p, "127.0.0.3"),
            ["localhost.", "localhost.localdomain."]
        );

        let ipv6 = "::1\t\t\t\t\t\tlocalhost\t# inline comment separated by tab
fe80:0000:0000:0000:0000:0000:0000:0001\t\tlocalhost       # inline comment separated by space
fe80:0000:0000:0000:0000:0000:0000:0002%lo0\tlocalhost
fe80::3%lo0\t\t\t\t\tlocalhost\tlocalhost.localdomain";
        let p = parse(ipv6.as_bytes(), &root(), true);
        assert_eq!(
            v6(&p, "localhost."),
            ["::1", "fe80::1", "fe80::2", "fe80::3"]
        );
        assert_eq!(v6(&p, "localhost.localdomain."), ["fe80::3"]);
        assert_eq!(ptr(&p, "fe80::2"), ["localhost."]);
    }

    #[test]
    fn names_are_lower_case_fqdns() {
        let p = parse(
            b"127.0.0.1\tPreserveMe\tPreserveMe.local.\n::1 PreserveMe",
            &root(),
            true,
        );
        assert_eq!(v4(&p, "preserveme."), ["127.0.0.1"]);
        assert_eq!(v4(&p, "preserveme.local."), ["127.0.0.1"]);
        assert_eq!(v6(&p, "preserveme."), ["::1"]);
        assert_eq!(ptr(&p, "127.0.0.1"), ["preserveme.", "preserveme.local."]);
    }

    #[test]
    fn ipv4_mapped_addresses_are_ipv4() {
        let p = parse(b"::FFFF:10.0.0.2 example.com", &root(), true);
        assert_eq!(v4(&p, "example.com."), ["10.0.0.2"]);
        assert!(v6(&p, "example.com.").is_empty());
        assert_eq!(ptr(&p, "10.0.0.2"), ["example.com."]);
    }

    #[test]
    fn addresses_as_go_parses_them() {
        for (text, want) in [
            ("10.0.0.1", Some("10.0.0.1")),
            ("::1", Some("::1")),
            ("fe80::1%eth0", Some("fe80::1")),
            ("10.0.0.1%x", Some("10.0.0.1")),
            ("::ffff:1.2.3.4", Some("1.2.3.4")),
            ("::1.2.3.4", Some("::102:304")),
            ("010.0.0.1", None),
            ("1.2.3", None),
            ("1.2.3.256", None),
            ("example", None),
            ("", None),
            ("%lo0", None),
        ] {
            assert_eq!(
                parse_ip(text.as_bytes()).map(|a| a.to_string()).as_deref(),
                want,
                "{text}"
            );
        }
    }

    #[test]
    fn short_and_bogus_lines_are_skipped() {
        let text = "10.0.0.1\n\n   \n# 10.0.0.2 commented\nnot-an-ip name\n10.0.0.3 a#b c\n";
        let p = parse(text.as_bytes(), &root(), true);
        // "a#b c": the comment starts inside the field.
        assert_eq!(v4(&p, "a."), ["10.0.0.3"]);
        assert!(v4(&p, "c.").is_empty());
        assert_eq!(p.names.len(), 1);
    }

    #[test]
    fn crlf_and_unicode_white_space_separate() {
        let text = "10.0.0.1 a\r\n10.0.0.2\u{a0}b\u{3000}c\r\n";
        let p = parse(text.as_bytes(), &root(), true);
        assert_eq!(v4(&p, "a."), ["10.0.0.1"]);
        assert_eq!(v4(&p, "b."), ["10.0.0.2"]);
        assert_eq!(v4(&p, "c."), ["10.0.0.2"]);
    }

    #[test]
    fn a_line_that_is_not_utf8_still_gives_its_utf8_names() {
        let p = parse(b"10.0.0.1 ok bad\xff\n10.0.0.2 next\n", &root(), true);
        assert_eq!(v4(&p, "ok."), ["10.0.0.1"]);
        assert_eq!(v4(&p, "next."), ["10.0.0.2"]);
        assert_eq!(p.names.len(), 2);
    }

    #[test]
    fn names_no_query_can_ask_are_dropped() {
        let long = "a".repeat(64);
        let text = format!("10.0.0.1 a..b {long} ok\n");
        let p = parse(text.as_bytes(), &root(), true);
        assert_eq!(p.names.len(), 1);
        assert_eq!(ptr(&p, "10.0.0.1"), ["ok."]);
    }

    #[test]
    fn only_names_in_the_zones_are_kept() {
        let zones = vec![wire("example.org."), wire("10.in-addr.arpa.")];
        let p = parse(
            b"10.0.0.1 example.org www.EXAMPLE.org example.net org\n",
            &zones,
            true,
        );
        assert_eq!(v4(&p, "example.org."), ["10.0.0.1"]);
        assert_eq!(v4(&p, "www.example.org."), ["10.0.0.1"]);
        assert!(v4(&p, "example.net.").is_empty());
        assert!(v4(&p, "org.").is_empty());
        assert_eq!(ptr(&p, "10.0.0.1"), ["example.org.", "www.example.org."]);
    }

    #[test]
    fn no_reverse_keeps_no_addresses() {
        let p = parse(b"10.0.0.1 a b\n::1 a\n", &root(), false);
        assert_eq!(v4(&p, "a."), ["10.0.0.1"]);
        assert!(p.addrs.is_empty());
    }

    #[test]
    fn repeated_pairs_are_one_record() {
        let p = parse(b"10.0.0.1 a a\n10.0.0.1 A.\n10.0.0.2 a\n", &root(), true);
        assert_eq!(v4(&p, "a."), ["10.0.0.1", "10.0.0.2"]);
        assert_eq!(ptr(&p, "10.0.0.1"), ["a."]);
    }

    #[test]
    fn wildcards_are_kept_apart_without_ptr() {
        let p = parse(
            b"192.168.1.10 *.example.com\n192.168.1.11 a.example.com\n::1 *.Example.com\n1.2.3.4 *\n5.6.7.8 a.*.example.com\n",
            &root(),
            true,
        );
        let w = p.wild.get(&wire("example.com.")).unwrap();
        assert_eq!(w.v4, ["192.168.1.10".parse::<Ipv4Addr>().unwrap()]);
        assert_eq!(w.v6, ["::1".parse::<Ipv6Addr>().unwrap()]);
        // `*` alone: a wildcard under the root, kept (and counted) as CoreDNS keeps it,
        // though no name matches it (data.rs).
        assert!(p.wild.contains_key(&wire(".")));
        assert!(ptr(&p, "192.168.1.10").is_empty());
        assert!(ptr(&p, "1.2.3.4").is_empty());
        assert_eq!(v4(&p, "a.example.com."), ["192.168.1.11"]);
        // A `*` that is not the leftmost label is an ordinary name.
        assert_eq!(v4(&p, "a.*.example.com."), ["5.6.7.8"]);
    }

    #[test]
    fn wildcards_outside_the_zones_are_dropped() {
        let zones = vec![wire("example.org.")];
        let p = parse(b"10.0.0.1 *.example.com *.example.org\n", &zones, true);
        assert_eq!(p.wild.len(), 1);
        assert!(p.wild.contains_key(&wire("example.org.")));
    }
}
