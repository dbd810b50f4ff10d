//! Names as the store keeps them: lower-case uncompressed wire form, ordered by RFC 4034
//! §6.1's canonical order (labels compared right to left), which NSEC chains follow and
//! closest-encloser proofs search.

use std::cmp::Ordering;

/// The most labels a wire name can have (255 bytes of one-byte labels plus the root).
const MAX_LABELS: usize = 128;

/// The start offsets of a name's labels, left to right (the root label not included).
fn label_starts(name: &[u8], out: &mut [u8; MAX_LABELS]) -> usize {
    let mut n = 0;
    let mut pos = 0;
    while pos < name.len() && name[pos] != 0 && n < MAX_LABELS {
        out[n] = pos as u8;
        n += 1;
        pos += name[pos] as usize + 1;
    }
    n
}

/// Canonical order of two lower-case wire names: the rightmost labels compared first,
/// each as an octet string (a label that is a prefix of another sorts first), a name
/// sorting before every name below it.
pub fn cmp(a: &[u8], b: &[u8]) -> Ordering {
    let (mut la, mut lb) = ([0u8; MAX_LABELS], [0u8; MAX_LABELS]);
    let (na, nb) = (label_starts(a, &mut la), label_starts(b, &mut lb));
    for i in 1..=na.min(nb) {
        let (sa, sb) = (la[na - i] as usize, lb[nb - i] as usize);
        let x = &a[sa + 1..sa + 1 + a[sa] as usize];
        let y = &b[sb + 1..sb + 1 + b[sb] as usize];
        match x.cmp(y) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    na.cmp(&nb)
}

/// A byte string whose plain byte order is the canonical order of the name: the labels
/// right to left, each ended by 0x00, with label bytes 0x00 and 0x01 escaped as 0x01 0x01
/// and 0x01 0x02 (a prefix-free, order-keeping code, so the terminator sorts first).
/// For sorting many names with one cheap comparison each.
pub fn sort_key(name: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut starts = [0u8; MAX_LABELS];
    let n = label_starts(name, &mut starts);
    for &s in starts[..n].iter().rev() {
        let s = s as usize;
        for &c in &name[s + 1..s + 1 + name[s] as usize] {
            match c {
                0 => out.extend_from_slice(&[1, 1]),
                1 => out.extend_from_slice(&[1, 2]),
                c => out.push(c),
            }
        }
        out.push(0);
    }
}

/// The number of labels of a wire name, the root not counted.
pub fn label_count(name: &[u8]) -> usize {
    let mut n = 0;
    let mut pos = 0;
    while pos < name.len() && name[pos] != 0 {
        n += 1;
        pos += name[pos] as usize + 1;
    }
    n
}

/// The name without its first label (the root's parent is the root).
pub fn parent(name: &[u8]) -> &[u8] {
    if name.len() <= 1 {
        return name;
    }
    &name[name[0] as usize + 1..]
}

/// Whether `name` is `zone` or below it; both lower-case wire names.
pub fn is_at_or_below(name: &[u8], zone: &[u8]) -> bool {
    if zone.len() > name.len() {
        return false;
    }
    let off = name.len() - zone.len();
    let mut pos = 0;
    while pos < off {
        pos += name[pos] as usize + 1;
    }
    pos == off && &name[off..] == zone
}

/// Whether the first label of `name` is `*`.
pub fn is_wildcard(name: &[u8]) -> bool {
    name.len() >= 2 && name[0] == 1 && name[1] == b'*'
}

/// Lower-cases a wire name into `buf`, returning the used part.
pub fn lower_into<'b>(name: &[u8], buf: &'b mut [u8; 255]) -> &'b [u8] {
    let n = name.len().min(255);
    for (d, s) in buf[..n].iter_mut().zip(name) {
        *d = s.to_ascii_lowercase();
    }
    &buf[..n]
}

/// The lower-cased copy of a wire name.
pub fn lower(name: &[u8]) -> Box<[u8]> {
    name.iter().map(u8::to_ascii_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_wire::name_to_wire;

    fn w(s: &str) -> Vec<u8> {
        name_to_wire(s).unwrap()
    }

    /// RFC 4034 §6.1's example, in its order.
    const RFC_ORDER: &[&str] = &[
        "example.",
        "a.example.",
        "yljkjljk.a.example.",
        "Z.a.example.",
        "zABC.a.EXAMPLE.",
        "z.example.",
        "\\001.z.example.",
        "*.z.example.",
        "\\200.z.example.",
    ];

    #[test]
    fn the_rfc_example_sorts_in_its_order_by_both_means() {
        let names: Vec<Box<[u8]>> = RFC_ORDER.iter().map(|s| lower(&w(s))).collect();
        for pair in names.windows(2) {
            assert_eq!(cmp(&pair[0], &pair[1]), Ordering::Less, "{pair:?}");
            assert_eq!(cmp(&pair[1], &pair[0]), Ordering::Greater);
            let (mut ka, mut kb) = (Vec::new(), Vec::new());
            sort_key(&pair[0], &mut ka);
            sort_key(&pair[1], &mut kb);
            assert!(ka < kb, "{pair:?}");
        }
        assert_eq!(cmp(&names[3], &names[3]), Ordering::Equal);
    }

    #[test]
    fn zero_and_one_bytes_in_labels_keep_their_order_in_keys() {
        let a = [1u8, 0, 0];
        let b = [1u8, 1, 0];
        let c = [2u8, 0, 5, 0];
        let d = [1u8, 2, 0];
        let (mut ka, mut kb, mut kc, mut kd) = (vec![], vec![], vec![], vec![]);
        sort_key(&a, &mut ka);
        sort_key(&b, &mut kb);
        sort_key(&c, &mut kc);
        sort_key(&d, &mut kd);
        // \000 < \000\005 < \001 < \002, as cmp says.
        assert!(ka < kc && kc < kb && kb < kd);
        assert_eq!(cmp(&a, &c), Ordering::Less);
        assert_eq!(cmp(&c, &b), Ordering::Less);
    }

    #[test]
    fn helpers() {
        let n = w("a.b.example.");
        assert_eq!(label_count(&n), 3);
        assert_eq!(label_count(&[0]), 0);
        assert_eq!(parent(&n), &w("b.example.")[..]);
        assert_eq!(parent(&[0]), &[0][..]);
        assert!(is_at_or_below(&n, &w("example.")));
        assert!(is_at_or_below(&n, &[0]));
        assert!(!is_at_or_below(&w("aexample."), &w("example.")));
        assert!(!is_at_or_below(&w("example."), &n));
        assert!(is_wildcard(&w("*.x.")));
        assert!(!is_wildcard(&w("x*.x.")));
        let mut buf = [0; 255];
        assert_eq!(lower_into(&w("A.Example."), &mut buf), &w("a.example.")[..]);
    }
}
