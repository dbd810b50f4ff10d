//! Picks the server block for a query on one listener: the longest configured zone that is a
//! suffix of the query name, `.` as the fallback, the highest match for DS (CoreDNS's
//! `core/dnsserver/server.go`, `ServeDNS`). A zone served by several blocks (views) gives
//! the query to the first, in Corefile order, that takes it; when none does, the search goes
//! on to shorter zones, as CoreDNS's.

use crate::config::Route;
use crate::wire::rtype::DS;
use std::collections::HashMap;

/// Above this many zones a hash map beats comparing suffixes one by one.
const LINEAR_MAX: usize = 16;

/// The blocks of one zone, in Corefile order: each with whether it chooses its queries
/// (has a view) or takes them all.
type Blocks = Box<[(usize, bool)]>;

/// A zone while its routes are gathered: wire zone, blocks, name.
type Growing = (Box<[u8]>, Vec<(usize, bool)>, Box<str>);

/// The zones of one listener, ready to match query names without allocating.
pub struct Router {
    /// (lower-case wire zone, its blocks, zone name) for every zone except the root.
    zones: Vec<(Box<[u8]>, Blocks, Box<str>)>,
    /// Index into `zones` by wire zone, when there are many.
    map: Option<HashMap<Box<[u8]>, usize>>,
    /// The blocks serving `.`.
    root: Blocks,
}

/// The first of `blocks` that takes the query: one without a view, or one whose view
/// `admits` (asked with the block and the zone).
#[inline(always)]
fn pick(
    blocks: &[(usize, bool)],
    zone: &str,
    admits: &mut impl FnMut(usize, &str) -> bool,
) -> Option<usize> {
    blocks
        .iter()
        .find(|&&(b, chooses)| !chooses || admits(b, zone))
        .map(|&(b, _)| b)
}

impl Router {
    /// Builds the router of a listener from its routes; `chooses(block)` says whether a
    /// block has a view.
    pub fn new(routes: &[Route], chooses: impl Fn(usize) -> bool) -> Self {
        let mut zones: Vec<Growing> = Vec::new();
        let mut root = Vec::new();
        for r in routes {
            let entry = (r.block, chooses(r.block));
            if r.zone_wire == [0] {
                root.push(entry);
            } else if let Some(z) = zones.iter_mut().find(|z| *z.0 == *r.zone_wire) {
                z.1.push(entry);
            } else {
                zones.push((
                    r.zone_wire.clone().into_boxed_slice(),
                    vec![entry],
                    r.zone.clone().into_boxed_str(),
                ));
            }
        }
        let zones: Vec<_> = zones
            .into_iter()
            .map(|(w, b, n)| (w, b.into_boxed_slice(), n))
            .collect();
        let map = (zones.len() > LINEAR_MAX).then(|| {
            zones
                .iter()
                .enumerate()
                .map(|(i, z)| (z.0.clone(), i))
                .collect()
        });
        Router {
            zones,
            map,
            root: root.into_boxed_slice(),
        }
    }

    fn find(&self, suffix: &[u8]) -> Option<usize> {
        match &self.map {
            Some(m) => m.get(suffix).copied(),
            None => self.zones.iter().position(|z| &*z.0 == suffix),
        }
    }

    /// The block and zone for a query name in wire form (any case) and type; `None` means
    /// REFUSED. `admits(block, zone)` is asked of the blocks with a view on the way (never
    /// when the listener has none).
    #[inline(always)]
    pub fn route<'r>(
        &'r self,
        qname: &[u8],
        qtype: u16,
        mut admits: impl FnMut(usize, &str) -> bool,
    ) -> Option<(usize, &'r str)> {
        if self.zones.is_empty() {
            // Only `.` (the usual front end): no name to lower-case and compare.
            return pick(&self.root, ".", &mut admits).map(|b| (b, "."));
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
                let (_, blocks, zone) = &self.zones[i];
                if let Some(b) = pick(blocks, zone, &mut admits) {
                    found = Some((b, &**zone));
                    if qtype != DS {
                        break;
                    }
                }
            }
            off += 1 + name[off] as usize;
        }
        found.or_else(|| pick(&self.root, ".", &mut admits).map(|b| (b, ".")))
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
        Router::new(&routes, |_| false)
    }

    fn q(r: &Router, name: &str, qtype: u16) -> Option<(usize, String)> {
        r.route(&ringdns_testkit::wire_name(name), qtype, |_, _| {
            unreachable!("no block has a view")
        })
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
    fn views_are_asked_in_order_and_a_zone_none_takes_goes_on() {
        // example.org.: block 1 (view), block 2 (view), block 3 (view); `.`: block 4 (view),
        // block 5 (none).
        let routes: Vec<Route> = [
            ("example.org.", 1),
            ("example.org.", 2),
            ("example.org.", 3),
            (".", 4),
            (".", 5),
        ]
        .iter()
        .map(|(z, b)| Route {
            zone: z.to_string(),
            zone_wire: name_to_wire(z).unwrap(),
            block: *b,
        })
        .collect();
        let r = Router::new(&routes, |b| b != 5);
        let name = ringdns_testkit::wire_name("www.example.org.");
        let mut asked = Vec::new();
        let got = r.route(&name, A, |b, z| {
            asked.push((b, z.to_string()));
            b == 2
        });
        assert_eq!(got, Some((2, "example.org.")));
        assert_eq!(
            asked,
            [(1, "example.org.".into()), (2, "example.org.".into())]
        );
        asked.clear();
        let got = r.route(&name, A, |b, z| {
            asked.push((b, z.to_string()));
            false
        });
        assert_eq!(
            got,
            Some((5, ".")),
            "none takes it: `.`, whose last block has no view"
        );
        assert_eq!(asked.len(), 4, "{asked:?}");
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
