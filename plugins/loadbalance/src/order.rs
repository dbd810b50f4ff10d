//! The orders CoreDNS's policies give a section's records (`loadbalance.go`,
//! `weighted.go`, `prefer.go`), computed as a permutation of the section's indices so that
//! the wire rewrite can move the records: no record is copied here, nothing is allocated
//! once the scratch vectors have grown to the section's size.

use ringdns_plugin::reverse::Cidr;
use ringdns_plugin::wire::rtype::{A, AAAA, CNAME, MX};
use std::net::IpAddr;
use std::ops::Range;

/// What a policy needs of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    /// The record's type.
    pub rtype: u16,
    /// Its address, for A and AAAA.
    pub ip: Option<IpAddr>,
    /// Its weight (the weighted policy only; 1 otherwise).
    pub weight: u8,
}

/// CoreDNS's four groups of a section: CNAMEs, addresses (A and AAAA), MX, the rest.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    Cname,
    Address,
    Mx,
    Rest,
}

fn group(t: u16) -> Group {
    match t {
        CNAME => Group::Cname,
        A | AAAA => Group::Address,
        MX => Group::Mx,
        _ => Group::Rest,
    }
}

/// Appends to `out` the indices (into `from`, of `items`) of the records in group `g`.
fn push_group(out: &mut Vec<usize>, from: &[usize], items: &[Item], g: Group) {
    out.extend(from.iter().copied().filter(|&i| group(items[i].rtype) == g));
}

/// The policies' groups in their order (`roundRobin`, `weightedRoundRobin`).
const POLICY_GROUPS: [Group; 4] = [Group::Cname, Group::Rest, Group::Address, Group::Mx];

/// `reorderRecords`' groups in their order (`prefer`).
const PREFER_GROUPS: [Group; 4] = [Group::Cname, Group::Address, Group::Mx, Group::Rest];

/// CoreDNS's regrouping, shared by the policies and `prefer`: `order` becomes the records
/// of `groups[0]`, then of `groups[1]`… (each group in the order it had in `order`);
/// returns where in `order` each group lies. `scratch` is working room.
fn regroup(
    items: &[Item],
    order: &mut Vec<usize>,
    scratch: &mut Vec<usize>,
    groups: [Group; 4],
) -> [Range<usize>; 4] {
    scratch.clear();
    scratch.extend_from_slice(order);
    order.clear();
    groups.map(|g| {
        let start = order.len();
        push_group(order, scratch, items, g);
        start..order.len()
    })
}

/// `roundRobin`: a section of A records only, or AAAA only, is shuffled whole; any other
/// is regrouped cname, rest, addresses (shuffled), MX (shuffled). `order` gets the new
/// order; `scratch` is working room.
pub fn round_robin(
    items: &[Item],
    order: &mut Vec<usize>,
    scratch: &mut Vec<usize>,
    rng: &mut fastrand::Rng,
) {
    order.clear();
    order.extend(0..items.len());
    if items.len() <= 1 {
        return;
    }
    let t = items[0].rtype;
    if (t == A || t == AAAA) && items.iter().all(|i| i.rtype == t) {
        shuffle(order, rng);
        return;
    }
    let [.., addresses, mx] = regroup(items, order, scratch, POLICY_GROUPS);
    shuffle(&mut order[addresses], rng);
    shuffle(&mut order[mx], rng);
}

/// `roundRobinShuffle`, CoreDNS's loop: two records swap half the time; more are walked,
/// each position swapped with one at or after it.
fn shuffle(records: &mut [usize], rng: &mut fastrand::Rng) {
    match records.len() {
        0 | 1 => {}
        2 => {
            if rng.u16(..).is_multiple_of(2) {
                records.swap(0, 1);
            }
        }
        l => {
            for j in 0..l {
                let p = j + usize::from(rng.u16(..)) % (l - j);
                records.swap(j, p);
            }
        }
    }
}

/// `weightedRoundRobin`: regrouped cname, rest, addresses, MX, with one address drawn by
/// weight moved to the front of the addresses (swapped with the first). A section without
/// addresses keeps its order.
pub fn weighted(
    items: &[Item],
    order: &mut Vec<usize>,
    scratch: &mut Vec<usize>,
    rng: &mut fastrand::Rng,
) {
    order.clear();
    order.extend(0..items.len());
    if !items.iter().any(|i| group(i.rtype) == Group::Address) {
        return;
    }
    let [.., addresses, _] = regroup(items, order, scratch, POLICY_GROUPS);
    let addresses = &mut order[addresses];
    let top = top_index(items, addresses, rng);
    addresses.swap(0, top);
}

/// `topAddressIndex`: the addresses in order of weight, heaviest first (equal weights in
/// their order), a draw `v` in `[0, sum)`, and the first whose running sum passes `v`.
fn top_index(items: &[Item], addresses: &[usize], rng: &mut fastrand::Rng) -> usize {
    let sum: u32 = addresses.iter().map(|&i| u32::from(items[i].weight)).sum();
    let v = rng.u32(..sum.max(1));
    let mut psum = 0u32;
    let mut above = u16::MAX; // weights strictly below this are still to walk
    loop {
        let Some(w) = addresses
            .iter()
            .map(|&i| u16::from(items[i].weight))
            .filter(|&w| w < above)
            .max()
        else {
            return 0;
        };
        for (k, &i) in addresses.iter().enumerate() {
            if u16::from(items[i].weight) == w {
                psum += u32::from(w);
                if v < psum {
                    return k;
                }
            }
        }
        above = w;
    }
}

/// `reorderRecords` with `prefer`, on the order a policy gave: cname, the addresses sorted
/// by the first subnet they are in (those in none last, each group in its order), MX, the
/// rest.
pub fn prefer(items: &[Item], order: &mut Vec<usize>, scratch: &mut Vec<usize>, subnets: &[Cidr]) {
    let [_, addresses, ..] = regroup(items, order, scratch, PREFER_GROUPS);
    let rank = |i: usize| {
        items[i]
            .ip
            .and_then(|ip| subnets.iter().position(|s| s.contains(ip)))
            .unwrap_or(subnets.len())
    };
    // A stable insertion sort by rank: sections are short, and it allocates nothing.
    let addresses = &mut order[addresses];
    for k in 1..addresses.len() {
        let mut j = k;
        while j > 0 && rank(addresses[j - 1]) > rank(addresses[j]) {
            addresses.swap(j - 1, j);
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::wire::rtype::{NS, TXT};

    fn item(rtype: u16, ip: &str, weight: u8) -> Item {
        Item {
            rtype,
            ip: ip.parse().ok(),
            weight,
        }
    }

    fn types(items: &[Item], order: &[usize]) -> Vec<u16> {
        order.iter().map(|&i| items[i].rtype).collect()
    }

    /// A policy's signature.
    type PolicyFn = fn(&[Item], &mut Vec<usize>, &mut Vec<usize>, &mut fastrand::Rng);

    /// The orders `policy` gives `items` in `n` runs with a generator seeded `seed`.
    fn orders(policy: PolicyFn, items: &[Item], seed: u64, n: usize) -> Vec<Vec<usize>> {
        let (mut order, mut s) = (Vec::new(), Vec::new());
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..n)
            .map(|_| {
                policy(items, &mut order, &mut s, &mut rng);
                order.clone()
            })
            .collect()
    }

    #[test]
    fn addresses_only_are_shuffled_and_keep_their_set() {
        let items: Vec<Item> = (0..4).map(|k| item(A, &format!("10.0.0.{k}"), 1)).collect();
        let mut firsts = std::collections::HashSet::new();
        for order in orders(round_robin, &items, 7, 100) {
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(sorted, [0, 1, 2, 3]);
            firsts.insert(order[0]);
        }
        assert!(firsts.len() > 1, "the first record changes");
    }

    #[test]
    fn a_mixed_section_is_regrouped_cname_rest_address_mx() {
        let items = [
            item(MX, "", 1),
            item(A, "10.0.0.1", 1),
            item(TXT, "", 1),
            item(AAAA, "::1", 1),
            item(CNAME, "", 1),
            item(NS, "", 1),
        ];
        for order in orders(round_robin, &items, 1, 20) {
            let t = types(&items, &order);
            assert_eq!(t[..3], [CNAME, TXT, NS]);
            assert!(matches!(t[3..5], [A, AAAA] | [AAAA, A]));
            assert_eq!(t[5], MX);
        }
    }

    #[test]
    fn weighted_draws_the_top_address_by_weight() {
        let items = [
            item(CNAME, "", 1),
            item(A, "10.0.0.1", 3),
            item(A, "10.0.0.2", 1),
            item(A, "10.0.0.3", 0),
        ];
        let mut counts = [0u32; 4];
        for order in orders(weighted, &items, 3, 4000) {
            assert_eq!(order[0], 0, "the CNAME stays first");
            counts[order[1]] += 1;
        }
        // 3 : 1, and a weight of 0 (which no file gives) is never drawn.
        assert_eq!(counts[3], 0);
        assert!((2600..3400).contains(&counts[1]), "{counts:?}");
        assert!((600..1400).contains(&counts[2]), "{counts:?}");
        // Without addresses, nothing moves.
        let none = [item(MX, "", 1), item(CNAME, "", 1)];
        assert_eq!(orders(weighted, &none, 3, 1), [[0, 1]]);
    }

    #[test]
    fn prefer_puts_subnets_first_in_their_order() {
        let items = [
            item(A, "192.168.1.5", 1),
            item(MX, "", 1),
            item(A, "8.8.8.8", 1),
            item(A, "10.9.20.1", 1),
            item(TXT, "", 1),
            item(A, "10.9.20.2", 1),
            item(CNAME, "", 1),
        ];
        let subnets = [
            Cidr::parse("10.9.20.0/24").unwrap(),
            Cidr::parse("192.168.1.0/24").unwrap(),
        ];
        let (mut order, mut s) = (vec![0, 1, 2, 3, 4, 5, 6], Vec::new());
        prefer(&items, &mut order, &mut s, &subnets);
        assert_eq!(order, [6, 3, 5, 0, 2, 1, 4]);
    }
}
