//! The TSIG algorithms (RFC 8945 §6): HMAC over one of five hashes, through RustCrypto's
//! `hmac`, so every algorithm takes the same code path and nothing is allocated.

use hmac::digest::KeyInit;
use hmac::{Hmac, Mac};

/// The longest MAC (hmac-sha512).
pub const MAX_MAC: usize = 64;

/// A TSIG algorithm this server computes (hmac-md5 is refused, as CoreDNS refuses it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alg {
    /// hmac-sha1
    Sha1,
    /// hmac-sha224
    Sha224,
    /// hmac-sha256 (the default)
    Sha256,
    /// hmac-sha384
    Sha384,
    /// hmac-sha512
    Sha512,
}

impl Alg {
    /// Every algorithm, for lookups by name.
    pub const ALL: [Alg; 5] = [
        Alg::Sha1,
        Alg::Sha224,
        Alg::Sha256,
        Alg::Sha384,
        Alg::Sha512,
    ];

    /// The algorithm's name as BIND and dig spell it (`hmac-sha256`).
    pub const fn name(self) -> &'static str {
        match self {
            Alg::Sha1 => "hmac-sha1",
            Alg::Sha224 => "hmac-sha224",
            Alg::Sha256 => "hmac-sha256",
            Alg::Sha384 => "hmac-sha384",
            Alg::Sha512 => "hmac-sha512",
        }
    }

    /// The algorithm's name in wire form (lower case, as compared).
    pub const fn wire(self) -> &'static [u8] {
        match self {
            Alg::Sha1 => b"\x09hmac-sha1\x00",
            Alg::Sha224 => b"\x0bhmac-sha224\x00",
            Alg::Sha256 => b"\x0bhmac-sha256\x00",
            Alg::Sha384 => b"\x0bhmac-sha384\x00",
            Alg::Sha512 => b"\x0bhmac-sha512\x00",
        }
    }

    /// The full MAC length in bytes.
    pub const fn len(self) -> usize {
        match self {
            Alg::Sha1 => 20,
            Alg::Sha224 => 28,
            Alg::Sha256 => 32,
            Alg::Sha384 => 48,
            Alg::Sha512 => 64,
        }
    }

    /// The algorithm a Corefile or key file names (`hmac-sha256`, with or without the final
    /// dot, any case).
    pub fn from_name(s: &str) -> Option<Alg> {
        let s = s.strip_suffix('.').unwrap_or(s);
        Alg::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(s))
    }

    /// The algorithm a request names (a lower-cased wire name).
    pub fn from_wire(w: &[u8]) -> Option<Alg> {
        Alg::ALL.into_iter().find(|a| a.wire() == w)
    }

    /// The MAC of `parts` (concatenated) under `key`, into `out`; gives its length.
    pub fn sign(self, key: &[u8], parts: &[&[u8]], out: &mut [u8; MAX_MAC]) -> usize {
        fn run<M: Mac + KeyInit>(key: &[u8], parts: &[&[u8]], out: &mut [u8]) -> usize {
            let mut m = <M as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
            for p in parts {
                m.update(p);
            }
            let tag = m.finalize().into_bytes();
            out[..tag.len()].copy_from_slice(&tag);
            tag.len()
        }
        match self {
            Alg::Sha1 => run::<Hmac<sha1::Sha1>>(key, parts, out),
            Alg::Sha224 => run::<Hmac<sha2::Sha224>>(key, parts, out),
            Alg::Sha256 => run::<Hmac<sha2::Sha256>>(key, parts, out),
            Alg::Sha384 => run::<Hmac<sha2::Sha384>>(key, parts, out),
            Alg::Sha512 => run::<Hmac<sha2::Sha512>>(key, parts, out),
        }
    }

    /// Whether `mac` (the full MAC or its first bytes, RFC 8945 §5.2.2.1) is the MAC of
    /// `parts` under `key`, compared in constant time (`hmac`'s `verify_truncated_left`).
    pub fn verify(self, key: &[u8], parts: &[&[u8]], mac: &[u8]) -> bool {
        fn run<M: Mac + KeyInit>(key: &[u8], parts: &[&[u8]], mac: &[u8]) -> bool {
            let mut m = <M as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
            for p in parts {
                m.update(p);
            }
            m.verify_truncated_left(mac).is_ok()
        }
        match self {
            Alg::Sha1 => run::<Hmac<sha1::Sha1>>(key, parts, mac),
            Alg::Sha224 => run::<Hmac<sha2::Sha224>>(key, parts, mac),
            Alg::Sha256 => run::<Hmac<sha2::Sha256>>(key, parts, mac),
            Alg::Sha384 => run::<Hmac<sha2::Sha384>>(key, parts, mac),
            Alg::Sha512 => run::<Hmac<sha2::Sha512>>(key, parts, mac),
        }
    }

    /// RFC 8945 §5.2.2.1: a MAC size the receiver accepts (the full length, or a truncation
    /// to at least the larger of 10 bytes and half the full length).
    pub const fn size_ok(self, size: usize) -> bool {
        let min = if self.len() / 2 > 10 {
            self.len() / 2
        } else {
            10
        };
        size <= self.len() && size >= min
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// RFC 4231 test case 2 (key "Jefe") and RFC 2202 test case 2 for sha1.
    #[test]
    fn known_vectors() {
        let data: &[&[u8]] = &[b"what do ya want ", b"for nothing?"];
        let mut out = [0; MAX_MAC];
        let want = [
            (Alg::Sha1, "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
            (
                Alg::Sha224,
                "a30e01098bc6dbbf45690f3a7e9e6d0f8bbea2a39e6148008fd05e44",
            ),
            (
                Alg::Sha256,
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            ),
            (
                Alg::Sha384,
                "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649",
            ),
            (
                Alg::Sha512,
                "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737",
            ),
        ];
        for (alg, mac) in want {
            let n = alg.sign(b"Jefe", data, &mut out);
            assert_eq!(n, alg.len());
            assert_eq!(hex(&out[..n]), mac, "{}", alg.name());
            assert!(alg.verify(b"Jefe", data, &out[..n]));
            assert!(
                alg.verify(b"Jefe", data, &out[..alg.len() / 2 + 1]),
                "truncated"
            );
            let mut bad = out;
            bad[0] ^= 1;
            assert!(!alg.verify(b"Jefe", data, &bad[..n]));
            assert!(!alg.verify(b"Jeff", data, &out[..n]));
        }
    }

    #[test]
    fn names_and_truncation_limits() {
        assert_eq!(Alg::from_name("HMAC-SHA256."), Some(Alg::Sha256));
        assert_eq!(Alg::from_name("hmac-md5.sig-alg.reg.int"), None);
        assert_eq!(Alg::from_wire(b"\x09hmac-sha1\x00"), Some(Alg::Sha1));
        assert!(Alg::Sha1.size_ok(10) && !Alg::Sha1.size_ok(9) && !Alg::Sha1.size_ok(21));
        assert!(Alg::Sha256.size_ok(16) && !Alg::Sha256.size_ok(15));
        assert!(Alg::Sha512.size_ok(32) && !Alg::Sha512.size_ok(31) && Alg::Sha512.size_ok(64));
    }
}
