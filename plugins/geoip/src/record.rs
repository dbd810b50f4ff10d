//! The records geoip reads, only the fields it publishes, borrowed from the database, and
//! the labels it publishes from them with CoreDNS's names and formats (`city.go`,
//! `asn.go`). A field the record lacks is its zero value (`""`, `false`, `0`), as in
//! geoip2-golang's structs; missing coordinates are the empty string (geoip2-golang v2's
//! `*float64`, which CoreDNS publishes as "").

use ringdns_plugin::metadata::Metadata;
use serde::de::{IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;

/// The most subdivisions a record may list (maxminddb's `MAX_SUBDIVISIONS`; real records
/// have one or two). A record with more does not decode, and publishes nothing.
const MAX_SUBDIVISIONS: usize = 32;

/// Localized names: the English one is what CoreDNS publishes.
#[derive(Deserialize, Default, Debug)]
#[serde(default)]
struct Names<'a> {
    en: &'a str,
}

/// A city, continent or country's names.
#[derive(Deserialize, Default, Debug)]
#[serde(default)]
struct Named<'a> {
    #[serde(borrow)]
    names: Names<'a>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(default)]
struct Continent<'a> {
    code: &'a str,
    #[serde(borrow)]
    names: Names<'a>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(default)]
struct Country<'a> {
    iso_code: &'a str,
    is_in_european_union: bool,
    #[serde(borrow)]
    names: Names<'a>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(default)]
struct Location<'a> {
    latitude: Option<f64>,
    longitude: Option<f64>,
    time_zone: &'a str,
}

#[derive(Deserialize, Default, Debug)]
#[serde(default)]
struct Postal<'a> {
    code: &'a str,
}

#[derive(Deserialize, Default, Debug)]
#[serde(default)]
struct Subdivision<'a> {
    iso_code: &'a str,
}

/// The ISO codes of a record's subdivisions, in order, without allocating.
#[derive(Default, Debug)]
struct Subdivisions<'a> {
    codes: [&'a str; MAX_SUBDIVISIONS],
    len: usize,
}

impl<'de: 'a, 'a> Deserialize<'de> for Subdivisions<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Seq<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Seq<'a> {
            type Value = Subdivisions<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an array of at most {MAX_SUBDIVISIONS} subdivisions")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Subdivisions::default();
                while out.len < MAX_SUBDIVISIONS {
                    match seq.next_element::<Subdivision<'de>>()? {
                        Some(s) => out.codes[out.len] = s.iso_code,
                        None => return Ok(out),
                    }
                    out.len += 1;
                }
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    return Err(serde::de::Error::custom(format_args!(
                        "more than {MAX_SUBDIVISIONS} subdivisions"
                    )));
                }
                Ok(out)
            }
        }
        d.deserialize_seq(Seq(std::marker::PhantomData))
    }
}

/// CoreDNS's `subdivisions/code`: the codes joined with commas, empty ones kept.
impl fmt::Display for Subdivisions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, code) in self.codes[..self.len].iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(code)?;
        }
        Ok(())
    }
}

/// A coordinate as CoreDNS prints it, Go's `strconv.FormatFloat(v, 'f', -1, 64)` (the
/// shortest decimal that reads back the same, never an exponent); empty when missing.
struct Coordinate(Option<f64>);

impl fmt::Display for Coordinate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => Ok(()),
            Some(v) if v == f64::INFINITY => f.write_str("+Inf"),
            Some(v) if v == f64::NEG_INFINITY => f.write_str("-Inf"),
            Some(v) => write!(f, "{v}"),
        }
    }
}

/// A City, Country or Enterprise database's record (geoip2-golang's `City`, what CoreDNS
/// reads of it).
#[derive(Deserialize, Default, Debug)]
#[serde(default)]
pub struct City<'a> {
    #[serde(borrow)]
    city: Named<'a>,
    #[serde(borrow)]
    continent: Continent<'a>,
    #[serde(borrow)]
    country: Country<'a>,
    #[serde(borrow)]
    location: Location<'a>,
    #[serde(borrow)]
    postal: Postal<'a>,
    #[serde(borrow)]
    subdivisions: Subdivisions<'a>,
}

impl City<'_> {
    /// CoreDNS's `setCityMetadata`: every label, in its order.
    pub fn publish(&self, meta: &Metadata) {
        meta.set("geoip/city/name", self.city.names.en);
        meta.set("geoip/country/name", self.country.names.en);
        meta.set("geoip/continent/name", self.continent.names.en);
        meta.set("geoip/country/code", self.country.iso_code);
        meta.set("geoip/subdivisions/code", &self.subdivisions);
        meta.set(
            "geoip/country/is_in_european_union",
            self.country.is_in_european_union,
        );
        meta.set("geoip/continent/code", self.continent.code);
        meta.set("geoip/latitude", Coordinate(self.location.latitude));
        meta.set("geoip/longitude", Coordinate(self.location.longitude));
        meta.set("geoip/timezone", self.location.time_zone);
        meta.set("geoip/postalcode", self.postal.code);
    }
}

/// An ASN or ISP database's record (geoip2-golang's `ASN`).
#[derive(Deserialize, Default, Debug)]
#[serde(default)]
pub struct Asn<'a> {
    autonomous_system_number: u64,
    autonomous_system_organization: &'a str,
}

impl Asn<'_> {
    /// CoreDNS's `setASNMetadata`: the number in base 10 and the organization.
    pub fn publish(&self, meta: &Metadata) {
        meta.set("geoip/asn/number", self.autonomous_system_number);
        meta.set("geoip/asn/org", self.autonomous_system_organization);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_print_as_go_formats_them() {
        for (v, s) in [
            (Some(52.2242), "52.2242"),
            (Some(0.1315), "0.1315"),
            (Some(-33.0), "-33"),
            (Some(0.0), "0"),
            (Some(1e-7), "0.0000001"),
            (Some(1e21), "1000000000000000000000"),
            (Some(f64::INFINITY), "+Inf"),
            (Some(f64::NEG_INFINITY), "-Inf"),
            (Some(f64::NAN), "NaN"),
            (None, ""),
        ] {
            assert_eq!(Coordinate(v).to_string(), s, "{v:?}");
        }
    }

    #[test]
    fn subdivisions_join_with_commas_keeping_empty_codes() {
        let mut s = Subdivisions::default();
        assert_eq!(s.to_string(), "");
        s.codes[0] = "ENG";
        s.len = 1;
        assert_eq!(s.to_string(), "ENG");
        s.codes[2] = "CAM";
        s.len = 3;
        assert_eq!(s.to_string(), "ENG,,CAM");
    }
}
