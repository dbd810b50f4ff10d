//! Finds and parses the PROXY protocol header at the start of a stream's or a datagram's
//! bytes with `ppp`, deciding as go-proxyproto's `Read` does whether there is one at all:
//! a header starts with v1's `PROXY` or v2's 12-byte signature; anything else is the
//! client's own bytes.

use ppp::v2;
use ppp::{PartialResult, v1};
use std::net::SocketAddr;

/// v1's signature.
const V1: &[u8] = b"PROXY";
/// v2's signature.
const V2: &[u8] = v2::PROTOCOL_PREFIX;

/// A header that parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Its length: the client's bytes start after it.
    pub len: usize,
    /// The client's address it carries; `None` for a v2 LOCAL or v1 UNKNOWN header (the
    /// peer speaks for itself: a load balancer's health check) and for addresses that are
    /// not IP (unspecified, UNIX).
    pub source: Option<SocketAddr>,
    /// v2 LOCAL or v1 UNKNOWN.
    pub local: bool,
    /// v2 with the DGRAM transport (UDP): what a datagram's header must say.
    pub datagram: bool,
    /// Version 2 (binary).
    pub v2: bool,
}

/// What the first bytes hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// No PROXY header: the bytes are the client's own.
    Absent,
    /// A stream must read at least this many bytes in all to tell.
    More(usize),
    /// A header.
    Header(Header),
    /// A PROXY signature followed by something that is no valid header.
    Invalid,
}

/// Looks at the start of `bytes`. `whole` says nothing more will come (a datagram): a
/// header cut short is then invalid, and bytes too few for a signature are no header (as
/// go-proxyproto's peek at the end of its input).
pub fn find(bytes: &[u8], whole: bool) -> Found {
    let Some(&first) = bytes.first() else {
        return if whole { Found::Absent } else { Found::More(1) };
    };
    if first != V1[0] && first != V2[0] {
        return Found::Absent;
    }
    let sig = if first == V1[0] { V1 } else { V2 };
    if bytes.len() < sig.len() {
        if whole || !sig.starts_with(bytes) {
            return Found::Absent;
        }
        return Found::More(sig.len());
    }
    if !bytes.starts_with(sig) {
        return Found::Absent;
    }
    if first == V1[0] {
        version1(bytes, whole)
    } else {
        version2(bytes, whole)
    }
}

/// v1's longest header, CRLF included.
const V1_MAX: usize = 107;

fn version1(bytes: &[u8], whole: bool) -> Found {
    // The header is one line: whole once its LF is in (go-proxyproto reads up to it).
    let Some(lf) = bytes.iter().take(V1_MAX).position(|&b| b == b'\n') else {
        return if whole || bytes.len() >= V1_MAX {
            Found::Invalid
        } else {
            Found::More(bytes.len() + 1)
        };
    };
    let line = &bytes[..=lf];
    let Ok(h) = v1::Header::try_from(line) else {
        return Found::Invalid;
    };
    if h.header.len() != line.len() {
        // A CR before the end of the line.
        return Found::Invalid;
    }
    let source = match h.addresses {
        v1::Addresses::Tcp4(a) => Some(SocketAddr::from((a.source_address, a.source_port))),
        v1::Addresses::Tcp6(a) => Some(SocketAddr::from((a.source_address, a.source_port))),
        v1::Addresses::Unknown => None,
    };
    Found::Header(Header {
        len: h.header.len(),
        source,
        local: source.is_none(),
        datagram: false,
        v2: false,
    })
}

fn version2(bytes: &[u8], whole: bool) -> Found {
    let parsed = v2::Header::try_from(bytes);
    if parsed.is_incomplete() {
        if whole {
            return Found::Invalid;
        }
        // The fixed part tells the whole length.
        let want = match bytes.get(14..16) {
            Some(&[a, b]) => 16 + usize::from(u16::from_be_bytes([a, b])),
            _ => 16,
        };
        return Found::More(want.max(bytes.len() + 1));
    }
    let Ok(h) = parsed else {
        return Found::Invalid;
    };
    let local = h.command == v2::Command::Local;
    let source = match (local, h.addresses) {
        (false, v2::Addresses::IPv4(a)) => {
            Some(SocketAddr::from((a.source_address, a.source_port)))
        }
        (false, v2::Addresses::IPv6(a)) => {
            Some(SocketAddr::from((a.source_address, a.source_port)))
        }
        _ => None,
    };
    Found::Header(Header {
        len: h.len(),
        source,
        local,
        datagram: h.protocol == v2::Protocol::Datagram,
        v2: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A v2 header: command (0 LOCAL, 1 PROXY), family/transport byte, addresses, TLVs.
    fn v2_header(command: u8, fam: u8, addrs: &[u8], tlvs: &[u8]) -> Vec<u8> {
        let mut h = V2.to_vec();
        h.push(0x20 | command);
        h.push(fam);
        h.extend(((addrs.len() + tlvs.len()) as u16).to_be_bytes());
        h.extend(addrs);
        h.extend(tlvs);
        h
    }

    const V4: [u8; 12] = [192, 0, 2, 7, 127, 0, 0, 1, 0x30, 0x39, 0, 53];

    #[test]
    fn v1_tcp4_tcp6_and_unknown() {
        let b = b"PROXY TCP4 192.0.2.7 127.0.0.1 12345 53\r\n\x00\x1d";
        let Found::Header(h) = find(b, false) else {
            panic!()
        };
        assert_eq!(h.len, b.len() - 2);
        assert_eq!(h.source, Some("192.0.2.7:12345".parse().unwrap()));
        assert!(!h.local && !h.v2);
        let b = b"PROXY TCP6 2001:db8::7 ::1 4000 53\r\n";
        let Found::Header(h) = find(b, false) else {
            panic!()
        };
        assert_eq!(h.source, Some("[2001:db8::7]:4000".parse().unwrap()));
        let Found::Header(h) = find(b"PROXY UNKNOWN ffff::1 ::1 1 2\r\n", false) else {
            panic!()
        };
        assert!(h.local);
        assert_eq!(h.source, None);
    }

    #[test]
    fn a_stream_reads_on_until_the_header_is_whole() {
        let full = b"PROXY TCP4 192.0.2.7 127.0.0.1 12345 53\r\n";
        for cut in 1..full.len() {
            assert!(
                matches!(find(&full[..cut], false), Found::More(n) if n > cut),
                "at {cut}"
            );
        }
        let h = v2_header(1, 0x11, &V4, &[]);
        for cut in 1..h.len() {
            assert!(
                matches!(find(&h[..cut], false), Found::More(n) if n > cut && n <= h.len()),
                "v2 at {cut}"
            );
        }
        assert!(matches!(find(&h, false), Found::Header(_)));
    }

    #[test]
    fn v2_proxy_local_and_tlvs() {
        let tlv = [0x04, 0, 3, 1, 2, 3]; // a NOOP TLV
        let mut b = v2_header(1, 0x12, &V4, &tlv);
        let len = b.len();
        b.extend(b"dns");
        let Found::Header(h) = find(&b, true) else {
            panic!()
        };
        assert_eq!(h.len, len);
        assert_eq!(h.source, Some("192.0.2.7:12345".parse().unwrap()));
        assert!(h.datagram && h.v2 && !h.local);
        let Found::Header(h) = find(&v2_header(0, 0x00, &[], &[]), true) else {
            panic!()
        };
        assert!(h.local);
        assert_eq!((h.source, h.len), (None, 16));
        // IPv6 over TCP.
        let mut a6 = [0u8; 36];
        a6[..16].copy_from_slice(
            &"2001:db8::9"
                .parse::<std::net::Ipv6Addr>()
                .unwrap()
                .octets(),
        );
        a6[32..34].copy_from_slice(&7u16.to_be_bytes());
        let Found::Header(h) = find(&v2_header(1, 0x21, &a6, &[]), false) else {
            panic!()
        };
        assert_eq!(h.source, Some("[2001:db8::9]:7".parse().unwrap()));
        assert!(!h.datagram);
    }

    #[test]
    fn anything_else_is_no_header_or_an_invalid_one() {
        // DNS: a length prefix, or a query ID.
        assert_eq!(find(&[0, 29, 0x12, 0x34], false), Found::Absent);
        assert_eq!(find(b"PROXX", false), Found::Absent);
        assert_eq!(
            find(b"PRO", true),
            Found::Absent,
            "too short for a signature"
        );
        assert_eq!(find(b"", true), Found::Absent);
        assert_eq!(find(b"PROXY TCP4 nonsense\r\n", false), Found::Invalid);
        assert_eq!(
            find(b"PROXY TCP4 192.0.2.7 127.0.0.1 99999 53\r\n", false),
            Found::Invalid
        );
        let mut too_long = b"PROXY TCP4 ".to_vec();
        too_long.resize(200, b'1');
        assert_eq!(find(&too_long, false), Found::Invalid);
        // Version 3, command 2, a bad family, addresses longer than the length.
        for (ver_cmd, fam, addrs) in [
            (0x31, 0x11, &V4[..]),
            (0x22, 0x11, &V4),
            (0x21, 0x41, &V4),
            (0x21, 0x11, &V4[..4]),
        ] {
            let mut h = v2_header(0, fam, addrs, &[]);
            h[12] = ver_cmd;
            assert_eq!(find(&h, true), Found::Invalid, "{ver_cmd:#x} {fam:#x}");
        }
        // A datagram whose header is cut short.
        let h = v2_header(1, 0x12, &V4, &[]);
        assert_eq!(find(&h[..20], true), Found::Invalid);
    }
}
