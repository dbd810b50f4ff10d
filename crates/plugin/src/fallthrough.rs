//! CoreDNS's `fallthrough [ZONES...]` (`plugin/pkg/fall`), shared by authoritative plugins.

use crate::normalize::normalize_exact;
use crate::wire::{Name, name_to_wire};

/// Which names a plugin passes on to the next plugin instead of answering negatively.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fallthrough {
    /// Zones in lower-case wire form; empty means no fallthrough, the root means every name.
    zones: Vec<Vec<u8>>,
}

impl Fallthrough {
    /// Parses the arguments of a `fallthrough` line: none means every name. Each zone is
    /// normalised as CoreDNS's `SetZonesFromArgs` does (`plugin.Host(z).NormalizeExact()`):
    /// lower-case, fully qualified, and a CIDR gives its reverse zones.
    pub fn parse(args: &[String]) -> Result<Self, String> {
        if args.is_empty() {
            return Ok(Fallthrough {
                zones: vec![vec![0]],
            });
        }
        let mut zones = Vec::new();
        for a in args {
            let bad = |e: &dyn std::fmt::Display| format!("invalid fallthrough zone '{a}': {e}");
            for z in normalize_exact(a).map_err(|e| bad(&e))? {
                zones.push(name_to_wire(&z).map_err(|e| bad(&e))?);
            }
        }
        Ok(Fallthrough { zones })
    }

    /// True when a query for `name` should go to the next plugin.
    pub fn through(&self, name: &Name<'_>) -> bool {
        self.zones.iter().any(|z| name.is_subdomain_of(z))
    }

    /// True when no `fallthrough` was configured.
    pub fn is_off(&self) -> bool {
        self.zones.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Name;

    fn name(s: &str) -> Vec<u8> {
        name_to_wire(s).unwrap()
    }

    #[test]
    fn no_zones_means_every_name() {
        let f = Fallthrough::parse(&[]).unwrap();
        assert!(!f.is_off());
        assert!(f.through(&Name::from_wire(&name("a.example.org.")).unwrap()));
    }

    #[test]
    fn zones_limit_it() {
        let f = Fallthrough::parse(&["in-addr.arpa".into(), "Example.ORG.".into()]).unwrap();
        assert!(f.through(&Name::from_wire(&name("1.0.0.10.in-addr.arpa.")).unwrap()));
        assert!(f.through(&Name::from_wire(&name("www.example.org.")).unwrap()));
        assert!(!f.through(&Name::from_wire(&name("www.example.net.")).unwrap()));
    }

    #[test]
    fn a_cidr_stands_for_its_reverse_zones() {
        let f = Fallthrough::parse(&["10.0.0.0/8".into()]).unwrap();
        assert!(f.through(&Name::from_wire(&name("4.3.2.10.in-addr.arpa.")).unwrap()));
        assert!(!f.through(&Name::from_wire(&name("4.3.2.11.in-addr.arpa.")).unwrap()));
    }

    #[test]
    fn default_is_off() {
        let f = Fallthrough::default();
        assert!(f.is_off());
        assert!(!f.through(&Name::from_wire(&name("a.")).unwrap()));
    }

    #[test]
    fn bad_zones_are_errors() {
        assert!(Fallthrough::parse(&["a..b".into()]).is_err());
    }
}
