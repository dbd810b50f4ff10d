//! Picks the server block for a query on one listener: the longest configured zone that is a
//! suffix of the query name, `.` as the fallback, the highest match for DS (CoreDNS's
//! `core/dnsserver/server.go`, `ServeDNS`).

use crate::config::Route;
use crate::wire::rtype::DS;
use std::collections::HashMap;

/// Above this many zones a hash map beats comparing suffixes one by one.
const LINEAR_MAX: usize = 16;

/// The zones of one listener, ready to match query names without allocating.
pub struct Router {
    /// (lower-case wire zone, block, zone name) for every zone except the root.
    zones: Vec<(Box<[u8]>, usize, Box<str>)>,
    /// Index into `zones` by wire zone, when there are many.
    map: Option<HashMap<Box<[u8]>, usize>>,
    /// The block serving `.`, and its name.
    root: Option<usize>,
}

impl Router {
    /// Builds the router of a listener from its routes.
    pub fn new(routes: &[Route]) -> Self {
        let mut zones = Vec::new();
        let mut root = None;
        for r in routes {
            if r.zone_wire == [0] {
                root.get_or_insert(r.block);
            } else {
                zones.push((
                    r.zone_wire.clone().into_boxed_slice(),
                    r.block,
                    r.zone.clone().into_boxed_str(),
                ));
            }
        }
        let map = (zones.len() > LINEAR_MAX).then(|| {
            zones
                .iter()
                .enumerate()
                .map(|(i, z)| (z.0.clone(), i))
                .collect()
        });
        Router { zones, map, root }
    }

    fn find(&self, suffix: &[u8]) -> Option<usize> {
        match &self.map {
            Some(m) => m.get(suffix).copied(),
            None => self.zones.iter().position(|z| &*z.0 == suffix),
        }
    }

    /// The block and zone for a query name in wire form (any case) and type; `None` means
    /// REFUSED.
    pub fn route<'r>(&'r self, qname: &[u8], qtype: u16) -> Option<(usize, &'r str)> {
        if self.zones.is_empty() {
            // Only `.` (the usual front end): no name to lower-case and compare.
            return self.root.map(|b| (b, "."));
        }
        let mut lower = [0u8; 256];
        let len = qname.len().min(lower.len());
        for (d, s) in lower[..len].iter_mut().zip(qname) {
            *d = s.to_ascii_lowercase();
        }
        let name = &lower[..len];
        let mut found = None;
        let mut off = 0;
        while off < name.len() && name[off] != 0 {
            if let Some(i) = self.find(&name[off..]) {
                found = Some(i);
                if qtype != DS {
                    break;
                }
            }
            off += 1 + name[off] as usize;
        }
        match found {
            Some(i) => Some((self.zones[i].1, &self.zones[i].2)),
            None => self.root.map(|b| (b, ".")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::name_to_wire;
    use crate::wire::rtype::A;

    fn router(zones: &[(&str, usize)]) -> Router {
        let routes: Vec<Route> = zones
            .iter()
            .map(|(z, b)| Route {
                zone: z.to_string(),
                zone_wire: name_to_wire(z).unwrap(),
                block: *b,
            })
            .collect();
        Router::new(&routes)
    }

    fn q(r: &Router, name: &str, qtype: u16) -> Option<(usize, String)> {
        r.route(&ringdns_testkit::wire_name(name), qtype)
            .map(|(b, z)| (b, z.to_string()))
    }

    #[test]
    fn longest_suffix_wins_case_insensitively() {
        let r = router(&[(".", 0), ("example.org.", 1), ("sub.example.org.", 2)]);
        assert_eq!(
            q(&r, "a.sub.EXAMPLE.org.", A),
            Some((2, "sub.example.org.".into()))
        );
        assert_eq!(q(&r, "a.Example.org.", A), Some((1, "example.org.".into())));
        assert_eq!(q(&r, "example.net.", A), Some((0, ".".into())));
        assert_eq!(q(&r, ".", A), Some((0, ".".into())));
    }

    #[test]
    fn only_the_root_takes_every_name() {
        let r = router(&[(".", 3)]);
        for (name, t) in [("a.B.example.", A), (".", A), ("example.org.", DS)] {
            assert_eq!(q(&r, name, t), Some((3, ".".into())), "{name}");
        }
    }

    #[test]
    fn nothing_matches_without_root() {
        let r = router(&[("example.org.", 1)]);
        assert_eq!(q(&r, "example.net.", A), None);
        assert_eq!(q(&r, "org.", A), None);
    }

    #[test]
    fn ds_goes_to_the_highest_zone() {
        let r = router(&[("example.org.", 1), ("sub.example.org.", 2)]);
        assert_eq!(
            q(&r, "sub.example.org.", DS),
            Some((1, "example.org.".into()))
        );
        assert_eq!(
            q(&r, "sub.example.org.", A),
            Some((2, "sub.example.org.".into()))
        );
    }

    #[test]
    fn many_zones_use_the_map() {
        let names: Vec<String> = (0..100).map(|i| format!("z{i}.example.")).collect();
        let zones: Vec<(&str, usize)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let r = router(&zones);
        assert!(r.map.is_some());
        assert_eq!(
            q(&r, "www.Z42.example.", A),
            Some((42, "z42.example.".into()))
        );
        assert_eq!(q(&r, "www.z420.example.", A), None);
    }
}
