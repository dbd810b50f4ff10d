//! CoreDNS's `fallthrough [ZONES...]` (reference §2.5), shared by authoritative plugins.

use crate::wire::{Name, name_to_wire};

/// Which names a plugin passes on to the next plugin instead of answering negatively.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fallthrough {
    /// Zones in lower-case wire form; empty means no fallthrough, the root means every name.
    zones: Vec<Vec<u8>>,
}

impl Fallthrough {
    /// Parses the arguments of a `fallthrough` line: none means every name.
    pub fn parse(args: &[String]) -> Result<Self, String> {
        if args.is_empty() {
            return Ok(Fallthrough {
                zones: vec![vec![0]],
            });
        }
        let zones = args
            .iter()
            .map(|a| name_to_wire(a).map_err(|e| format!("invalid fallthrough zone '{a}': {e}")))
            .collect::<Result<_, _>>()?;
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
