//! What queries read: the file's entries and the inline ones merged into one immutable
//! table, built off the query path (setup, the reload thread) and read by every core
//! through a `Snapshot`. A lookup hashes the query's name lower-cased straight from the
//! packet and compares it in place: no key is built and nothing is allocated.

use crate::hostsfile::{Addrs, Parsed};
use hashbrown::HashTable;
use ringdns_plugin::wire::Name;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// One owner name (or the name under a wildcard's `*`) and its records' RDATA.
#[derive(Debug)]
struct Entry {
    /// Lower-case wire name.
    name: Box<[u8]>,
    v4: Box<[[u8; 4]]>,
    v6: Box<[[u8; 16]]>,
}

/// The merged data of one `hosts` directive.
#[derive(Debug)]
pub struct Data {
    keys: foldhash::fast::RandomState,
    names: HashTable<Entry>,
    wild: HashTable<Entry>,
    /// Address → PTR targets (lower-case wire names: the RDATA as written).
    ptr: HashMap<IpAddr, Box<[Box<[u8]>]>, foldhash::fast::RandomState>,
    /// CoreDNS's `coredns_hosts_entries` count (`Map.Len` of what is served).
    entries: usize,
}

impl Data {
    /// Merges the file's entries (`None`: no file read, or it is gone) with the inline
    /// ones. An owner name the inline lines give is answered from them alone: the file's
    /// lines for that name are left out, with the PTR records they imply. (A wildcard owner
    /// `*.x` and the name `x` are different owners.) PTR targets list the file's names
    /// before the inline ones, as CoreDNS does.
    pub fn build(file: Option<&Parsed>, inline: &Parsed) -> Data {
        let keys = foldhash::fast::RandomState::default();
        let mut data = Data {
            keys,
            names: HashTable::new(),
            wild: HashTable::new(),
            ptr: HashMap::with_hasher(foldhash::fast::RandomState::default()),
            entries: 0,
        };
        let empty = Parsed::default();
        let file = file.unwrap_or(&empty);

        let names = inline.names.iter().chain(
            file.names
                .iter()
                .filter(|(n, _)| !inline.names.contains_key(*n)),
        );
        for (name, addrs) in names {
            data.entries += addrs.len();
            insert(&data.keys, &mut data.names, name, addrs);
        }
        let wild = inline.wild.iter().chain(
            file.wild
                .iter()
                .filter(|(n, _)| !inline.wild.contains_key(*n)),
        );
        for (name, addrs) in wild {
            data.entries += addrs.len();
            insert(&data.keys, &mut data.wild, name, addrs);
        }

        let mut ptr: HashMap<IpAddr, Vec<Box<[u8]>>> = HashMap::new();
        for (addr, names) in &file.addrs {
            let kept = names
                .iter()
                .filter(|n| !inline.names.contains_key(*n))
                .map(|n| n.clone().into_boxed_slice());
            ptr.entry(*addr).or_default().extend(kept);
        }
        for (addr, names) in &inline.addrs {
            let more = names.iter().map(|n| n.clone().into_boxed_slice());
            ptr.entry(*addr).or_default().extend(more);
        }
        for (addr, names) in ptr {
            if !names.is_empty() {
                data.entries += names.len();
                data.ptr.insert(addr, names.into_boxed_slice());
            }
        }
        data
    }

    /// How many entries are served (CoreDNS's `coredns_hosts_entries`).
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// The IPv4 addresses of `name`: its own, else those of the wildcard one label up.
    pub fn v4(&self, name: &Name<'_>) -> &[[u8; 4]] {
        match self.find(&self.names, name) {
            Some(e) if !e.v4.is_empty() => &e.v4,
            _ => self.wildcard(name).map_or(&[], |e| &e.v4),
        }
    }

    /// The IPv6 addresses of `name`: its own, else those of the wildcard one label up.
    pub fn v6(&self, name: &Name<'_>) -> &[[u8; 16]] {
        match self.find(&self.names, name) {
            Some(e) if !e.v6.is_empty() => &e.v6,
            _ => self.wildcard(name).map_or(&[], |e| &e.v6),
        }
    }

    /// Whether `name` has an address of either family (CoreDNS's `otherRecordsExist`): it
    /// then gets NODATA for the types hosts does not serve.
    pub fn exists(&self, name: &Name<'_>) -> bool {
        !self.v4(name).is_empty() || !self.v6(name).is_empty()
    }

    /// The PTR targets of `addr` (lower-case wire names).
    pub fn ptr(&self, addr: IpAddr) -> &[Box<[u8]>] {
        self.ptr.get(&addr).map_or(&[], |n| n)
    }

    fn find<'s>(&'s self, table: &'s HashTable<Entry>, name: &Name<'_>) -> Option<&'s Entry> {
        if table.is_empty() {
            return None;
        }
        table.find(hash(&self.keys, name), |e| name.eq_lowercase(&e.name))
    }

    /// The entry of the wildcard that covers `name` (CoreDNS's `replaceWithAsteriskLabel`):
    /// `*.` and the name less its first label. A name of one label (and the root) has none,
    /// so a `*` alone matches nothing, as in CoreDNS.
    fn wildcard(&self, name: &Name<'_>) -> Option<&Entry> {
        if self.wild.is_empty() {
            return None;
        }
        let parent = name.suffixes().nth(1)?;
        if parent == [0] {
            return None;
        }
        let parent = Name::from_wire(parent).ok()?;
        self.find(&self.wild, &parent)
    }
}

fn insert(
    keys: &foldhash::fast::RandomState,
    table: &mut HashTable<Entry>,
    name: &[u8],
    a: &Addrs,
) {
    let Ok(n) = Name::from_wire(name) else {
        return;
    };
    let h = hash(keys, &n);
    let entry = Entry {
        name: name.into(),
        v4: a.v4.iter().map(Ipv4Addr::octets).collect(),
        v6: a.v6.iter().map(Ipv6Addr::octets).collect(),
    };
    table.insert_unique(h, entry, |e| {
        hash(
            keys,
            &Name::from_wire(&e.name).expect("stored names are valid"),
        )
    });
}

/// The hash of a name, lower-cased as it is read (eight bytes at a time, as the cache
/// keys its entries).
fn hash(keys: &foldhash::fast::RandomState, name: &Name<'_>) -> u64 {
    let mut h = keys.build_hasher();
    h.write_usize(name.wire_len());
    name.for_each_lowercase_word(|w| h.write_u64(w));
    h.finish()
}

pub use ringdns_plugin::reverse::reverse_addr;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hostsfile::parse;

    /// A query name in wire form, in the case given (as a client may send it).
    fn q(s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        for l in s.trim_end_matches('.').split('.').filter(|l| !l.is_empty()) {
            out.push(l.len() as u8);
            out.extend_from_slice(l.as_bytes());
        }
        out.push(0);
        out
    }

    fn v4s(d: &Data, name: &str) -> Vec<String> {
        let w = q(name);
        d.v4(&Name::from_wire(&w).unwrap())
            .iter()
            .map(|o| Ipv4Addr::from(*o).to_string())
            .collect()
    }

    fn v6s(d: &Data, name: &str) -> Vec<String> {
        let w = q(name);
        d.v6(&Name::from_wire(&w).unwrap())
            .iter()
            .map(|o| Ipv6Addr::from(*o).to_string())
            .collect()
    }

    fn ptrs(d: &Data, addr: &str) -> Vec<String> {
        d.ptr(addr.parse().unwrap())
            .iter()
            .map(|n| Name::from_wire(n).unwrap().to_string())
            .collect()
    }

    fn exists(d: &Data, name: &str) -> bool {
        let w = q(name);
        d.exists(&Name::from_wire(&w).unwrap())
    }

    fn data(file: Option<&str>, inline: &str) -> Data {
        let root = vec![vec![0]];
        let file = file.map(|f| parse(f.as_bytes(), &root, true));
        Data::build(file.as_ref(), &parse(inline.as_bytes(), &root, true))
    }

    #[test]
    fn lookups_ignore_the_query_case() {
        let d = data(Some("10.0.0.1 example.org\n::1 example.org\n"), "");
        assert_eq!(v4s(&d, "ExAmPlE.OrG."), ["10.0.0.1"]);
        assert_eq!(v6s(&d, "EXAMPLE.ORG."), ["::1"]);
        assert!(v4s(&d, "www.example.org.").is_empty());
        assert!(exists(&d, "Example.Org."));
        assert!(!exists(&d, "example.net."));
    }

    /// CoreDNS's wildcard_test.go `TestLookupWildcardHost`.
    #[test]
    fn wildcards_match_one_label_and_lose_to_names() {
        let d = data(
            Some(
                "127.0.0.53 *.example.org\n127.0.1.52 *.intern.example.org\n127.0.0.54 foo.example.org\n\
                 192.168.33.10 *.example.com\n192.168.33.11 a.example.com\n192.168.33.12 b.example.com\n",
            ),
            "",
        );
        assert_eq!(v4s(&d, "foo.example.org."), ["127.0.0.54"]);
        assert_eq!(v4s(&d, "bar.example.org."), ["127.0.0.53"]);
        assert_eq!(v4s(&d, "BAR.Intern.example.org."), ["127.0.1.52"]);
        assert_eq!(v4s(&d, "a.example.com."), ["192.168.33.11"]);
        assert_eq!(v4s(&d, "c.example.com."), ["192.168.33.10"]);
        assert!(v4s(&d, "example.com.").is_empty());
        assert!(v4s(&d, "deep.foo.example.org.").is_empty());
        assert!(!exists(&d, "example.com."));
        assert!(exists(&d, "anything.example.com."));
        // The wildcard owner itself, asked literally, is covered by its own wildcard.
        assert_eq!(v4s(&d, "*.example.com."), ["192.168.33.10"]);
    }

    #[test]
    fn a_wildcard_fills_in_the_family_a_name_lacks() {
        // As CoreDNS: the exact name's map and the wildcard's are per family.
        let d = data(Some("::1 foo.example.org\n10.0.0.9 *.example.org\n"), "");
        assert_eq!(v4s(&d, "foo.example.org."), ["10.0.0.9"]);
        assert_eq!(v6s(&d, "foo.example.org."), ["::1"]);
    }

    #[test]
    fn a_star_alone_matches_nothing() {
        let d = data(Some("10.0.0.1 *\n"), "");
        assert!(v4s(&d, "foo.").is_empty());
        assert!(v4s(&d, ".").is_empty());
        assert!(v4s(&d, "foo.bar.").is_empty());
        assert_eq!(d.entries(), 1);
    }

    #[test]
    fn inline_names_win_over_the_file() {
        let d = data(
            Some("10.0.0.1 both only-file\n::1 both\n10.0.0.5 *.w.test\n10.0.0.7 shared\n"),
            "10.9.9.9 both\n10.9.9.5 *.w.test\n10.0.0.7 also\n",
        );
        // The inline line decides every record of `both`: the file's AAAA goes too.
        assert_eq!(v4s(&d, "both."), ["10.9.9.9"]);
        assert!(v6s(&d, "both.").is_empty());
        assert_eq!(v4s(&d, "only-file."), ["10.0.0.1"]);
        assert_eq!(v4s(&d, "x.w.test."), ["10.9.9.5"]);
        // The file's reverse entries for `both` are gone; the others are merged, file first.
        assert_eq!(ptrs(&d, "10.0.0.1"), ["only-file."]);
        assert!(ptrs(&d, "::1").is_empty());
        assert_eq!(ptrs(&d, "10.9.9.9"), ["both."]);
        assert_eq!(ptrs(&d, "10.0.0.7"), ["shared.", "also."]);
        // Served: only-file 1, both 1, shared 1, also 1, wildcard 1; PTR: 10.0.0.1 1,
        // 10.9.9.9 1, 10.0.0.7 2.
        assert_eq!(d.entries(), 9);
    }

    #[test]
    fn no_file_serves_the_inline_lines() {
        let d = data(None, "10.0.0.1 a\n");
        assert_eq!(v4s(&d, "a."), ["10.0.0.1"]);
        assert_eq!(ptrs(&d, "10.0.0.1"), ["a."]);
        assert_eq!(d.entries(), 2);
        let d = data(None, "");
        assert!(!exists(&d, "a."));
        assert_eq!(d.entries(), 0);
    }

    #[test]
    fn many_names_with_one_address() {
        let text: String = (0..5000).map(|i| format!("0.0.0.0 ad{i}.test\n")).collect();
        let d = data(Some(&text), "");
        assert_eq!(v4s(&d, "AD4999.test."), ["0.0.0.0"]);
        assert_eq!(ptrs(&d, "0.0.0.0").len(), 5000);
        assert_eq!(d.entries(), 10_000);
    }
}
