//! Search paths from another plugin, for `autopath @PLUGIN` (CoreDNS's
//! `autopath.AutoPather`): the kubernetes plugin knows a client pod's namespace, so it knows
//! the search path the pod's resolver walks. The plugin that knows registers an
//! [`AutoPather`] in the block's [`AutoPathers`] (`BlockSetup::block_shared`) at setup;
//! autopath, set up before it (plugin.cfg order), looks it up when it builds its per-core
//! instance. The call is one virtual call per query autopath looks at, and the path is
//! written into the core's reusable [`SearchPath`], so it allocates nothing once warm.

use crate::registry::Registry;
use crate::wire::Name;
use std::net::IpAddr;

/// A search path: lower-case wire names, in order, the last one the root (`""`, CoreDNS's
/// sentinel: the name as asked). Kept by a core and refilled query after query.
#[derive(Debug, Default, Clone)]
pub struct SearchPath {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl SearchPath {
    /// Empties the path, keeping its memory.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Appends a name, the concatenation of `parts` (wire labels without the root, or
    /// whole wire names whose root ends the name), lower-cased. A name over 255 bytes is
    /// left out.
    pub fn push(&mut self, parts: &[&[u8]]) {
        let start = self.bytes.len();
        for p in parts {
            self.bytes.extend(p.iter().map(u8::to_ascii_lowercase));
        }
        if Name::from_wire(&self.bytes[start..]).is_err() {
            self.bytes.push(0);
        }
        if self.bytes.len() - start > 255 || Name::from_wire(&self.bytes[start..]).is_err() {
            self.bytes.truncate(start);
            return;
        }
        self.ends.push(self.bytes.len());
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none (no autopath for this query).
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `i`th name (wire).
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Some(&self.bytes[start..end])
    }

    /// The names in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

/// A plugin that gives the search path of a client (CoreDNS's `AutoPather`).
pub trait AutoPather: Send + Sync {
    /// Fills `out` (cleared first) with the search path of `client` for a query of `qname`,
    /// ending with the root; leaves it empty when there is none (not a zone of the plugin,
    /// not a known client): autopath then passes the query on untouched.
    fn search_path(&self, client: IpAddr, qname: &Name<'_>, out: &mut SearchPath);
}

/// The block's plugins that give search paths, by directive name.
pub type AutoPathers = Registry<dyn AutoPather>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_path_holds_joined_lower_case_names_and_the_root() {
        let mut p = SearchPath::default();
        p.push(&[b"\x07default\x03svc", b"\x07CLUSTER\x05local\x00"]);
        p.push(&[b"\x03svc", b"\x07cluster\x05local\x00"]);
        p.push(&[b"\x00"]);
        p.push(&[]);
        assert_eq!(p.len(), 4);
        assert_eq!(
            p.get(0).unwrap(),
            b"\x07default\x03svc\x07cluster\x05local\x00"
        );
        assert_eq!(p.get(1).unwrap(), b"\x03svc\x07cluster\x05local\x00");
        assert_eq!(p.get(2).unwrap(), b"\x00");
        assert_eq!(p.get(3).unwrap(), b"\x00");
        assert_eq!(p.iter().count(), 4);
        let cap = p.bytes.capacity();
        p.clear();
        assert!(p.is_empty());
        assert_eq!(p.bytes.capacity(), cap);
    }

    #[test]
    fn registered_pathers_are_found_by_name() {
        struct Fixed;
        impl AutoPather for Fixed {
            fn search_path(&self, _: IpAddr, _: &Name<'_>, out: &mut SearchPath) {
                out.clear();
                out.push(&[b"\x00"]);
            }
        }
        let a = AutoPathers::default();
        assert!(a.get("kubernetes").is_none());
        a.register("kubernetes", Arc::new(Fixed));
        let mut p = SearchPath::default();
        a.get("kubernetes").unwrap().search_path(
            "10.0.0.1".parse().unwrap(),
            &Name::from_wire(b"\x00").unwrap(),
            &mut p,
        );
        assert_eq!(p.len(), 1);
    }
}
