//! The address of a query's EDNS Client Subnet option (RFC 7871 §6), as miekg/dns unpacks
//! it: the address bytes sent, zero-padded to the family's length.

use ringdns_plugin::wire::{Query, edns};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The address of the query's first Client Subnet option, `None` without one. Family 0 (a
/// source prefix of 0, as `dig +subnet=0` sends) is 0.0.0.0, as miekg/dns makes it. The
/// parser has checked the option already (a bad family or prefix is FORMERR before any
/// plugin runs); what is left unreadable here gives `None`.
pub fn address(query: &Query<'_>) -> Option<IpAddr> {
    let data = query.edns_option(edns::SUBNET)?;
    let (head, bytes) = data.split_at_checked(4)?;
    match u16::from_be_bytes([head[0], head[1]]) {
        0 => Some(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
        1 => Some(IpAddr::V4(Ipv4Addr::from(padded::<4>(bytes)))),
        2 => Some(IpAddr::V6(Ipv6Addr::from(padded::<16>(bytes)))),
        _ => None,
    }
}

/// The first `N` bytes of `bytes`, zeros after those it has (miekg's `copy` into a
/// zeroed address).
fn padded<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    let n = bytes.len().min(N);
    out[..n].copy_from_slice(&bytes[..n]);
    out
}
