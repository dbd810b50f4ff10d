//! Which of a plugin's zones answers a query: the most specific one that holds the name,
//! except that a DS query for a zone's apex is answered by the parent zone when the plugin
//! holds it too (RFC 4035 §3.1.4.1: the DS RRset lives on the parent side of the cut). The
//! server's router does the same across blocks; this is the same rule inside one `file`
//! block, `auto` directory or `secondary` block, shared so that all three keep it.

use ringdns_wire::{Name, rtype};

/// The zone of `zones` (longest origin first, as every zone-serving plugin keeps them)
/// that answers `qname`/`qtype`; `origin` gives a zone's origin in wire form. `None`: no
/// zone holds the name. Allocation-free and stops at the first holder for every type
/// but DS.
pub fn zone_for<'z, Z>(
    zones: &'z [Z],
    origin: impl Fn(&Z) -> &[u8],
    qname: &Name<'_>,
    qtype: u16,
) -> Option<&'z Z> {
    let mut holders = zones.iter().filter(|z| qname.is_subdomain_of(origin(z)));
    let first = holders.next()?;
    if qtype != rtype::DS || origin(first).len() != qname.wire_len() {
        return Some(first);
    }
    // The DS of an apex: the most specific zone strictly above it, when there is one.
    holders
        .find(|z| origin(z).len() < qname.wire_len())
        .or(Some(first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_wire::name_to_wire;

    const ZONES: [&str; 4] = [
        "a.sub.example.org.",
        "sub.example.org.",
        "example.org.",
        ".",
    ];

    fn pick(zones: &[Vec<u8>], qname: &str, qtype: u16) -> Option<String> {
        let wire = name_to_wire(qname).unwrap();
        let name = Name::from_wire(&wire).unwrap();
        let z = zone_for(zones, |z| z, &name, qtype)?;
        Some(Name::from_wire(z).unwrap().to_string())
    }

    #[test]
    fn ds_at_an_apex_goes_to_the_parent_and_everything_else_to_the_most_specific() {
        let zones: Vec<Vec<u8>> = ZONES.iter().map(|z| name_to_wire(z).unwrap()).collect();
        let p = |q, t| pick(&zones, q, t).unwrap();
        assert_eq!(p("www.sub.example.org.", rtype::A), "sub.example.org.");
        assert_eq!(p("sub.example.org.", rtype::A), "sub.example.org.");
        assert_eq!(p("Sub.Example.org.", rtype::DS), "example.org.");
        assert_eq!(p("a.sub.example.org.", rtype::DS), "sub.example.org.");
        // Below an apex the name's own zone holds its DS (or its absence).
        assert_eq!(p("www.sub.example.org.", rtype::DS), "sub.example.org.");
        assert_eq!(p("org.", rtype::DS), ".");
        // The root has no parent: its own zone answers.
        assert_eq!(p(".", rtype::DS), ".");
        // Without the parent the child's apex answers its own DS query (NODATA).
        let child = vec![name_to_wire("sub.example.org.").unwrap()];
        assert_eq!(
            pick(&child, "sub.example.org.", rtype::DS).unwrap(),
            "sub.example.org."
        );
        assert_eq!(pick(&child, "example.org.", rtype::DS), None);
    }
}
