//! MaxMind DB (`.mmdb`) files for tests, written with the `maxminddb-writer` crate from JSON
//! records: the databases geoip's tests serve, of any database type, IPv4 networks placed
//! where an IPv6 database keeps them (`::a.b.c.d`, as MaxMind's own databases do).

use maxminddb_writer::Database;
use maxminddb_writer::metadata::IpVersion;
use maxminddb_writer::paths::IpAddrWithMask;
use std::net::IpAddr;

/// An IPv6 database of type `database_type` (`GeoLite2-City`, `GeoLite2-ASN`, …) holding
/// each `(CIDR, record)` of `networks` (`81.2.69.142/32`, `2001:db8::/32`), later networks
/// inside earlier ones overriding them.
pub fn write(database_type: &str, networks: &[(&str, serde_json::Value)]) -> Vec<u8> {
    build(IpVersion::V6, database_type, networks)
}

/// [`write`] for an IPv4-only database (`ip_version` 4), where an IPv6 address has no
/// place: its networks are IPv4 ones.
pub fn write_v4(database_type: &str, networks: &[(&str, serde_json::Value)]) -> Vec<u8> {
    build(IpVersion::V4, database_type, networks)
}

fn build(
    version: IpVersion,
    database_type: &str,
    networks: &[(&str, serde_json::Value)],
) -> Vec<u8> {
    let v6 = matches!(version, IpVersion::V6);
    let mut db = Database::default();
    db.metadata.ip_version = version;
    db.metadata.database_type = database_type.to_string();
    db.metadata.binary_format_major_version = 2;
    db.metadata.languages = vec!["en".to_string()];
    for (cidr, record) in networks {
        let (addr, len) = cidr.split_once('/').unwrap_or((cidr, ""));
        let addr: IpAddr = addr.parse().expect("a test's network address");
        let (addr, len) = match addr {
            IpAddr::V4(a) if v6 => (
                IpAddr::V6(a.to_ipv6_compatible()),
                96 + len.parse().unwrap_or(32),
            ),
            IpAddr::V4(a) => (IpAddr::V4(a), len.parse().unwrap_or(32)),
            IpAddr::V6(_) if !v6 => panic!("an IPv6 network in an IPv4 database"),
            IpAddr::V6(a) => (IpAddr::V6(a), len.parse().unwrap_or(128)),
        };
        let data = db.insert_value(record).expect("a test's record serializes");
        db.insert_node(IpAddrWithMask::new(addr, len), data);
    }
    db.write_to(Vec::new()).expect("the database writes")
}
