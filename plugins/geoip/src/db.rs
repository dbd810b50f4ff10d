//! The database: an `.mmdb` file read whole at setup, what it provides (the city or the asn
//! labels) decided by its type as CoreDNS's geoip2 reader decides it, and the lookup that
//! publishes those labels.

use crate::record::{Asn, City};
use maxminddb::{MaxMindDbError, Reader};
use ringdns_plugin::files::read_limited;
use ringdns_plugin::metadata::Metadata;
use ringdns_plugin::quote::go_quote;
use serde::Deserialize;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;

/// The largest database read: MMDB pointers are 32-bit, so no database is larger.
const MAX_FILE: u64 = 4 << 30;

/// The address CoreDNS probes each schema with at setup (its `probingIP`).
const PROBING_IP: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// What geoip2-golang's `City` and `ASN` lookups accept, by the database's type (its
/// `getDBType`): `Some((city, asn))` for a type it knows, `None` for one it does not.
fn schemas(database_type: &str) -> Option<(bool, bool)> {
    Some(match database_type {
        "DBIP-City-Lite"
        | "DBIP-Country-Lite"
        | "DBIP-Country"
        | "DBIP-Location (compat=City)"
        | "GeoLite2-City"
        | "GeoIP-City-Redacted-US"
        | "GeoIP2-City"
        | "GeoIP2-City-Africa"
        | "GeoIP2-City-Asia-Pacific"
        | "GeoIP2-City-Europe"
        | "GeoIP2-City-North-America"
        | "GeoIP2-City-South-America"
        | "GeoIP2-Precision-City"
        | "GeoLite2-Country"
        | "GeoIP2-Country" => (true, false),
        "DBIP-ISP (compat=Enterprise)"
        | "DBIP-Location-ISP (compat=Enterprise)"
        | "GeoIP-Enterprise-Redacted-US"
        | "GeoIP2-Enterprise" => (true, false),
        "DBIP-ASN-Lite (compat=GeoLite2-ASN)" | "GeoLite2-ASN" => (false, true),
        "GeoIP2-ISP" | "GeoIP2-Precision-ISP" => (false, true),
        // Types the reader knows that provide neither.
        "GeoIP2-Anonymous-IP" | "GeoIP2-Connection-Type" | "GeoIP2-Domain" => (false, false),
        _ => return None,
    })
}

/// An opened database and the schemas it provides.
pub struct Database {
    reader: Reader<Vec<u8>>,
    city: bool,
    asn: bool,
}

impl Database {
    /// Reads and checks the database at `path` as CoreDNS's `newGeoIP` does: its type must
    /// be one the reader knows and provide the city or the asn schema, and a lookup of
    /// 127.0.0.1 in each schema it provides must not fail. The error is CoreDNS's text.
    pub fn open(path: &str) -> Result<Database, String> {
        let open_err = |e: String| format!("failed to open database file: {e}");
        let bytes = read_limited(Path::new(path), MAX_FILE).map_err(|e| open_err(e.text))?;
        let reader = Reader::from_source(bytes).map_err(|e| open_err(e.to_string()))?;
        let kind = reader.metadata().database_type.as_str();
        let Some((city, asn)) = schemas(kind) else {
            return Err(open_err(format!(
                "geoip2: reader does not support the {} database type",
                go_quote(kind)
            )));
        };
        let db = Database { reader, city, asn };
        let base = Path::new(path)
            .file_name()
            .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned());
        for (name, provided, probe) in [
            ("city", city, db.lookup::<City<'_>>(PROBING_IP).map(drop)),
            ("asn", asn, db.lookup::<Asn<'_>>(PROBING_IP).map(drop)),
        ] {
            if let (true, Err(e)) = (provided, probe) {
                return Err(format!(
                    "unexpected failure looking up database {} schema {}: {e}",
                    go_quote(&base),
                    go_quote(name)
                ));
            }
        }
        if !city && !asn {
            return Err("database does not provide any supported schema (city, asn)".into());
        }
        Ok(db)
    }

    /// The record of `ip` in one schema: empty (every field its zero value) when the
    /// database has no data for it, as geoip2-golang gives it.
    fn lookup<'a, T: Deserialize<'a> + Default>(&'a self, ip: IpAddr) -> Result<T, MaxMindDbError> {
        Ok(self.reader.lookup(ip)?.decode()?.unwrap_or_default())
    }

    /// Publishes the labels of `ip` in each schema the database provides, into `meta`. A
    /// schema whose lookup fails (an IPv6 address in an IPv4 database, a record that does
    /// not decode) publishes nothing, as CoreDNS (which logs it at debug level only).
    pub fn publish(&self, ip: IpAddr, meta: &Metadata) {
        if self.city
            && let Ok(c) = self.lookup::<City<'_>>(ip)
        {
            c.publish(meta);
        }
        if self.asn
            && let Ok(a) = self.lookup::<Asn<'_>>(ip)
        {
            a.publish(meta);
        }
    }

    /// Which schemas the database provides, `(city, asn)`: for the tests.
    #[cfg(test)]
    pub fn provides(&self) -> (bool, bool) {
        (self.city, self.asn)
    }
}
