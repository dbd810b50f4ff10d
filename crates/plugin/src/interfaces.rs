//! The machine's interfaces and their addresses (`getifaddrs(3)`), for the plugins that name
//! or use them: bind (`bind eth0`) and kubernetes (the server's own addresses for the NS
//! records, CoreDNS's `boundIPs`).

use std::net::{IpAddr, Ipv4Addr};

/// One row of `getifaddrs(3)`: an interface (or, for IPv4, an address label such as
/// `eth0:1`) with an IP address, or with none for the link-layer row every interface has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The interface name (or IPv4 label).
    pub name: String,
    /// Its IPv4 or IPv6 address, when the row has one.
    pub addr: Option<IpAddr>,
}

/// Every row, in the kernel's order.
pub fn rows() -> Result<Vec<Row>, String> {
    let rows = nix::ifaddrs::getifaddrs().map_err(|e| e.to_string())?;
    Ok(rows
        .map(|row| Row {
            addr: row.address.as_ref().and_then(|sa| {
                if let Some(v4) = sa.as_sockaddr_in() {
                    Some(IpAddr::V4(Ipv4Addr::from(v4.ip())))
                } else {
                    sa.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip()))
                }
            }),
            name: row.interface_name,
        })
        .collect())
}
