//! What an account is kept for (coredns/rrl's token): the client's prefix, and for a
//! response its type, the query type and a name, as BIND 9 groups responses. Built from the
//! query and the reply bytes the rest of the chain wrote, without allocating.

use ringdns_plugin::wire::rcode::{NOERROR, NXDOMAIN};
use ringdns_plugin::wire::rtype::NS;
use ringdns_plugin::wire::{Header, MAX_NAME_LEN, Name, records};
use std::hash::{BuildHasher, Hasher};
use std::net::IpAddr;

/// The response types BIND and coredns/rrl give separate allowances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A reply with answers.
    Response = 0,
    /// NOERROR without answers (and not a referral).
    Nodata = 1,
    /// NXDOMAIN.
    Nxdomain = 2,
    /// NOERROR without answers whose authority section starts with an NS record.
    Referral = 3,
    /// Any other rcode.
    Error = 4,
    /// Not a response: the request account (`requests-per-second`).
    Request = 5,
}

/// A client address cut to its prefix (`ipv4-prefix-length`, `ipv6-prefix-length`). An
/// IPv4-mapped IPv6 client is an IPv4 client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Prefix {
    /// The masked address bits (IPv4 in the low 32 bits).
    bits: u128,
    /// True for IPv6.
    v6: bool,
}

impl Prefix {
    /// Masks `ip` to `v4_len` or `v6_len` leading bits (1..=32, 1..=128).
    pub fn of(ip: IpAddr, v4_len: u8, v6_len: u8) -> Self {
        match ip.to_canonical() {
            IpAddr::V4(a) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(v4_len)).unwrap_or(0);
                Prefix {
                    bits: u128::from(u32::from(a) & mask),
                    v6: false,
                }
            }
            IpAddr::V6(a) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(v6_len)).unwrap_or(0);
                Prefix {
                    bits: u128::from(a) & mask,
                    v6: true,
                }
            }
        }
    }

    /// The prefix as an address (its host bits zero), as coredns/rrl's tokens show it
    /// (tests).
    #[cfg(test)]
    pub fn addr(&self) -> IpAddr {
        if self.v6 {
            IpAddr::from(self.bits.to_be_bytes())
        } else {
            IpAddr::from((self.bits as u32).to_be_bytes())
        }
    }
}

/// The category of one account (the table keeps it as [`Token::key`]). For the request
/// account only the prefix counts; for responses the query type counts for answers and
/// referrals, the name for all but errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// The client's prefix.
    pub prefix: Prefix,
    /// Which allowance.
    pub kind: Kind,
    /// The query type, or 0 where BIND treats all types alike.
    pub qtype: u16,
    /// A hash of the lower-cased name (see [`name_hash`]), 0 for no name.
    pub name: u64,
}

impl Token {
    /// The table's key for this category: a seeded hash of all of it (four words). Two
    /// categories whose keys collide (a chance of 2^-64 per pair) share one account, which
    /// only makes their limit common; the table keeps 24-byte entries instead of 64.
    #[inline]
    pub fn key<S: BuildHasher>(&self, keys: &S) -> u64 {
        let p = self.prefix.bits;
        let mut h = keys.build_hasher();
        h.write_u64((p >> 64) as u64);
        h.write_u64(p as u64);
        h.write_u64(
            u64::from(self.prefix.v6) | ((self.kind as u64) << 8) | (u64::from(self.qtype) << 16),
        );
        h.write_u64(self.name);
        h.finish()
    }

    /// The request account of a client prefix.
    pub const fn request(prefix: Prefix) -> Self {
        Token {
            prefix,
            kind: Kind::Request,
            qtype: 0,
            name: 0,
        }
    }
}

/// How a reply is classified and which name it is accounted under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Class<'m> {
    /// The response type.
    pub kind: Kind,
    /// For NXDOMAIN and referrals, the owner of the first authority record (the zone that
    /// denies or delegates) as it sits in the reply, maybe compressed; `None` when there
    /// is none (then every such reply counts under no name, as coredns/rrl's empty name).
    pub authority: Option<AuthorityOwner<'m>>,
}

/// Where the first authority record's owner starts in a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthorityOwner<'m> {
    /// The whole reply (the owner may point back into it).
    pub msg: &'m [u8],
    /// The owner's offset.
    pub at: usize,
}

/// coredns/rrl's `responseType` on wire bytes: answers → response; else NXDOMAIN; else
/// NOERROR → referral when the first authority record is NS, else nodata; any other rcode →
/// error. `None` for a reply too short to have a header (never written by the chain).
pub fn classify(reply: &[u8]) -> Option<Class<'_>> {
    let header = Header::of(reply)?;
    let (rcode, ancount, nscount) = (header.rcode(), header.ancount(), header.nscount());
    if ancount > 0 {
        return Some(Class {
            kind: Kind::Response,
            authority: None,
        });
    }
    if rcode != NXDOMAIN && rcode != NOERROR {
        return Some(Class {
            kind: Kind::Error,
            authority: None,
        });
    }
    // No answers: the first record after the question is the first authority record.
    let first = (nscount > 0)
        .then(|| records(reply).ok()?.next()?.ok())
        .flatten();
    let authority = first.as_ref().map(|r| AuthorityOwner {
        msg: reply,
        at: r.owner.start,
    });
    let kind = if rcode == NXDOMAIN {
        Kind::Nxdomain
    } else if first.is_some_and(|r| r.rtype == NS) {
        Kind::Referral
    } else {
        Kind::Nodata
    };
    Some(Class { kind, authority })
}

/// Hashes a lower-cased wire name, eight bytes at a time; the same name in any case gives
/// the same hash. BIND keys its accounts on a hash of the name too.
pub fn name_hash<S: BuildHasher>(keys: &S, name: &Name<'_>) -> u64 {
    let mut h = keys.build_hasher();
    h.write_u64(name.wire_len() as u64);
    name.for_each_lowercase_word(|w| h.write_u64(w));
    // 0 stands for "no name".
    h.finish().max(1)
}

/// Copies the (maybe compressed) owner at `o.at` into `buf` uncompressed; `None` when it
/// does not decode (the record walk validated it, so only a bug gets here).
pub fn expand<'b>(o: &AuthorityOwner<'_>, buf: &'b mut [u8; MAX_NAME_LEN]) -> Option<Name<'b>> {
    let (msg, mut at, mut len, mut hops) = (o.msg, o.at, 0usize, 0);
    loop {
        let l = *msg.get(at)? as usize;
        match l {
            0 => {
                *buf.get_mut(len)? = 0;
                len += 1;
                break;
            }
            1..=63 => {
                let label = msg.get(at..at + 1 + l)?;
                buf.get_mut(len..len + 1 + l)?.copy_from_slice(label);
                len += 1 + l;
                at += 1 + l;
            }
            _ if l & 0xc0 == 0xc0 => {
                hops += 1;
                if hops > 64 {
                    return None;
                }
                at = ((l & 0x3f) << 8) | *msg.get(at + 1)? as usize;
            }
            _ => return None,
        }
    }
    Name::from_wire(&buf[..len]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_mask_v4_and_v6() {
        let p = |s: &str, a, b| Prefix::of(s.parse().unwrap(), a, b).addr().to_string();
        assert_eq!(p("192.0.2.77", 24, 56), "192.0.2.0");
        assert_eq!(p("192.0.2.77", 32, 56), "192.0.2.77");
        assert_eq!(p("192.0.2.77", 1, 56), "128.0.0.0");
        assert_eq!(p("2001:db8:aa:bbcc::1", 24, 56), "2001:db8:aa:bb00::");
        assert_eq!(p("2001:db8:aa:bbcc::1", 24, 128), "2001:db8:aa:bbcc::1");
        assert_eq!(p("2001:db8::1", 24, 1), "::");
        // A mapped IPv4 client is masked as IPv4.
        assert_eq!(p("::ffff:192.0.2.77", 24, 56), "192.0.2.0");
        assert_eq!(
            Prefix::of("127.0.0.2".parse().unwrap(), 24, 56),
            Prefix::of("127.0.0.3".parse().unwrap(), 24, 56)
        );
        assert_ne!(
            Prefix::of("127.0.0.2".parse().unwrap(), 32, 56),
            Prefix::of("127.0.0.3".parse().unwrap(), 32, 56)
        );
        // 0.0.0.0/24 and ::/56 are not the same prefix.
        assert_ne!(
            Prefix::of("0.0.0.1".parse().unwrap(), 24, 56),
            Prefix::of("::1".parse().unwrap(), 24, 56)
        );
    }

    /// A reply: header with rcode and counts, question `a.example.`, then records.
    fn reply(rcode: u8, counts: [u16; 3], records: &[(&[u8], u16)]) -> Vec<u8> {
        let mut m = vec![0x12, 0x34, 0x81, 0x80 | rcode, 0, 1];
        for c in counts {
            m.extend_from_slice(&c.to_be_bytes());
        }
        m.extend_from_slice(b"\x01a\x07example\x00\x00\x01\x00\x01");
        for (owner, t) in records {
            m.extend_from_slice(owner);
            m.extend_from_slice(&t.to_be_bytes());
            m.extend_from_slice(&[0, 1, 0, 0, 0, 60, 0, 0]);
        }
        m
    }

    #[test]
    fn replies_are_classified_as_coredns_rrl_does() {
        let kind = |m: &[u8]| classify(m).unwrap().kind;
        // Answers, whatever the rcode.
        assert_eq!(
            kind(&reply(0, [1, 0, 0], &[(b"\xc0\x0c", 1)])),
            Kind::Response
        );
        assert_eq!(
            kind(&reply(3, [1, 0, 0], &[(b"\xc0\x0c", 5)])),
            Kind::Response
        );
        assert_eq!(kind(&reply(3, [0, 0, 0], &[])), Kind::Nxdomain);
        assert_eq!(kind(&reply(0, [0, 0, 0], &[])), Kind::Nodata);
        // NOERROR, SOA in authority: nodata; NS first: referral.
        assert_eq!(
            kind(&reply(0, [0, 1, 0], &[(b"\xc0\x0e", 6)])),
            Kind::Nodata
        );
        assert_eq!(
            kind(&reply(0, [0, 1, 0], &[(b"\xc0\x0e", 2)])),
            Kind::Referral
        );
        for rc in [1, 2, 4, 5, 9] {
            assert_eq!(kind(&reply(rc, [0, 0, 0], &[])), Kind::Error, "{rc}");
        }
        assert!(classify(&[0; 11]).is_none());
    }

    #[test]
    fn the_authority_owner_is_expanded_and_hashed_without_case() {
        let keys = foldhash::fast::FixedState::with_seed(7);
        // NXDOMAIN with the SOA of `example.` (a pointer to offset 14) in authority.
        let m = reply(3, [0, 1, 0], &[(b"\xc0\x0e", 6)]);
        let c = classify(&m).unwrap();
        let mut buf = [0u8; MAX_NAME_LEN];
        let owner = expand(&c.authority.unwrap(), &mut buf).unwrap();
        assert_eq!(owner.as_wire(), b"\x07example\x00");
        let h = name_hash(&keys, &owner);
        let upper = Name::from_wire(b"\x07EXAMPLE\x00").unwrap();
        assert_eq!(h, name_hash(&keys, &upper));
        let other = Name::from_wire(b"\x07example\x03org\x00").unwrap();
        assert_ne!(h, name_hash(&keys, &other));
        // No authority: no name.
        let bare = reply(3, [0, 0, 0], &[]);
        assert!(classify(&bare).unwrap().authority.is_none());
        // A pointer loop does not hang.
        let mut looped = reply(3, [0, 1, 0], &[(b"\xc0\x1d", 6)]);
        looped[29] = 0xc0;
        looped[30] = 0x1d;
        let o = AuthorityOwner {
            msg: &looped,
            at: 29,
        };
        assert!(expand(&o, &mut buf).is_none());
    }
}
