//! NSEC3 (RFC 5155): the hash of a name, the chain of hashed owners sorted for the
//! matching and covering searches of its proofs.

use crate::build::BuildError;
use crate::canonical;
use crate::zone::{Node, Nsec3, Zone};
use ring::digest::{Context, SHA1_FOR_LEGACY_USE_ONLY};
use ringdns_wire::rtype;

/// The NSEC3 hash of a lower-case wire name: SHA-1 of the name and salt, iterated.
pub fn hash(name: &[u8], salt: &[u8], iterations: u16) -> [u8; 20] {
    let mut ctx = Context::new(&SHA1_FOR_LEGACY_USE_ONLY);
    ctx.update(name);
    ctx.update(salt);
    let mut out = [0u8; 20];
    out.copy_from_slice(ctx.finish().as_ref());
    for _ in 0..iterations {
        let mut ctx = Context::new(&SHA1_FOR_LEGACY_USE_ONLY);
        ctx.update(&out);
        ctx.update(salt);
        out.copy_from_slice(ctx.finish().as_ref());
    }
    out
}

/// Decodes base32hex without padding (RFC 4648 §7, either case): an NSEC3 owner's label.
pub fn base32hex_decode(s: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 5 / 8);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in s {
        let v = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'v' => c - b'a' + 10,
            b'A'..=b'V' => c - b'A' + 10,
            _ => return None,
        };
        acc = (acc << 5) | u32::from(v);
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// The NSEC3 chain of a zone from its NSEC3 owner nodes, with the parameters of the
/// apex's NSEC3PARAM (or, lacking one, of the first NSEC3). `None` for a zone without
/// NSEC3.
pub(crate) fn chain(z: &Zone, nodes: Vec<Node>) -> Result<Option<Nsec3>, BuildError> {
    if nodes.is_empty() {
        return Ok(None);
    }
    let params = z
        .find_set(&z.nodes[0], rtype::NSEC3PARAM)
        .map(|s| z.first_rr(s).rdata)
        .or_else(|| {
            let n = &nodes[0];
            z.sets_of(n)
                .iter()
                .find(|s| s.rtype == rtype::NSEC3)
                .map(|s| z.first_rr(s).rdata)
        });
    let Some(p) = params else {
        return Ok(None);
    };
    // hash alg (1), flags (1), iterations (2), salt length (1), salt.
    if p.len() < 5 || p.len() < 5 + p[4] as usize {
        return Err(BuildError {
            record: None,
            message: "malformed NSEC3PARAM".into(),
        });
    }
    let iterations = u16::from_be_bytes([p[2], p[3]]);
    let salt: Box<[u8]> = p[5..5 + p[4] as usize].into();
    let mut pairs: Vec<([u8; 20], Node)> = Vec::with_capacity(nodes.len());
    for n in nodes {
        let name = z.name_of(&n);
        let label = &name[1..1 + name[0] as usize];
        let Some(h) = base32hex_decode(label).filter(|h| h.len() == 20) else {
            return Err(BuildError {
                record: None,
                message: format!(
                    "NSEC3 owner {} is not a base32hex SHA-1 hash",
                    String::from_utf8_lossy(label)
                ),
            });
        };
        let mut a = [0u8; 20];
        a.copy_from_slice(&h);
        pairs.push((a, n));
    }
    pairs.sort_unstable_by_key(|p| p.0);
    let (hashes, nodes) = pairs.into_iter().unzip();
    Ok(Some(Nsec3 {
        iterations,
        salt,
        hashes,
        nodes,
    }))
}

impl Nsec3 {
    /// The hash of a lower-case name with this chain's parameters.
    pub(crate) fn hash_of(&self, lower: &[u8]) -> [u8; 20] {
        hash(lower, &self.salt, self.iterations)
    }

    /// The NSEC3 whose owner is the hash of `lower`.
    pub(crate) fn matching(&self, lower: &[u8]) -> Option<&Node> {
        let h = self.hash_of(lower);
        self.hashes.binary_search(&h).ok().map(|i| &self.nodes[i])
    }

    /// The NSEC3 that covers the hash of `lower` (the greatest owner hash before it,
    /// wrapping to the last), when no NSEC3 matches.
    pub(crate) fn covering(&self, lower: &[u8]) -> Option<&Node> {
        let h = self.hash_of(lower);
        match self.hashes.binary_search(&h) {
            Ok(_) => None,
            Err(0) => self.nodes.last(),
            Err(i) => Some(&self.nodes[i - 1]),
        }
    }
}

/// The closest encloser of `lower` that has a matching NSEC3 (RFC 5155 §7.2.1's closest
/// provable encloser) and the next closer name below it (a suffix of `lower`).
pub(crate) fn closest_provable<'n>(
    chain: &Nsec3,
    lower: &'n [u8],
    origin_len: usize,
) -> Option<(&'n [u8], &'n [u8])> {
    let mut next = lower;
    let mut cur = canonical::parent(lower);
    loop {
        if chain.matching(cur).is_some() {
            return Some((cur, next));
        }
        if cur.len() <= origin_len {
            return None;
        }
        next = cur;
        cur = canonical::parent(cur);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc5155_appendix_a_hashes() {
        // example. with salt aabbccdd, 12 iterations hashes to 0p9mhaveqvm6t7vbl5lop2u3t2rp3tom.
        let name = ringdns_wire::name_to_wire("example.").unwrap();
        let h = hash(&name, &[0xaa, 0xbb, 0xcc, 0xdd], 12);
        assert_eq!(
            h.to_vec(),
            base32hex_decode(b"0p9mhaveqvm6t7vbl5lop2u3t2rp3tom").unwrap()
        );
        let a = ringdns_wire::name_to_wire("a.example.").unwrap();
        assert_eq!(
            hash(&a, &[0xaa, 0xbb, 0xcc, 0xdd], 12).to_vec(),
            base32hex_decode(b"35mthgpgcu1qg68fab165klnsnk3dpvl").unwrap()
        );
    }

    #[test]
    fn base32hex_rejects_other_letters() {
        assert!(base32hex_decode(b"w0").is_none());
        assert_eq!(base32hex_decode(b"CO").unwrap(), vec![0x66]);
    }
}
