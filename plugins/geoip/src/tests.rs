//! CoreDNS's `setup_test.go` and `geoip_test.go`, ported, on databases the tests write
//! (testkit's mmdb): setup's errors and the schemas each database type provides, and the
//! labels published for the client's address and for the EDNS Client Subnet's.

use super::*;
use ringdns_plugin::ScreenLink;
use ringdns_plugin::metadata::Metadata;
use ringdns_plugin::wire::{Name, Query, QueryBuilder};
use ringdns_testkit::{Next, TempDir, mmdb, udp_request};
use serde_json::json;
use std::net::SocketAddr;
use std::path::PathBuf;

/// What the next plugin answers (nothing written): a query that reaches it shows this rcode.
const TO_NEXT: u8 = 3;

/// CoreDNS's fixture record for 81.2.69.142 (testdata/README.md).
fn cambridge() -> serde_json::Value {
    json!({
        "city": {"geoname_id": 2653941, "names": {"en": "Cambridge", "es": "Cambridge"}},
        "continent": {"code": "EU", "geoname_id": 6255148, "names": {"en": "Europe", "es": "Europa"}},
        "country": {
            "iso_code": "GB", "geoname_id": 2635167,
            "names": {"en": "United Kingdom", "es": "Reino Unido"},
            "is_in_european_union": true
        },
        "location": {
            "accuracy_radius": 200, "latitude": 52.2242, "longitude": 0.1315,
            "metro_code": 0, "time_zone": "Europe/London"
        },
        "postal": {"code": "CB4"},
        "registered_country": {"iso_code": "GB", "names": {"en": "United Kingdom"}, "is_in_european_union": false},
        "subdivisions": [
            {"iso_code": "ENG", "geoname_id": 6269131, "names": {"en": "England"}},
            {"iso_code": "CAM", "geoname_id": 2653940, "names": {"en": "Cambridgeshire"}}
        ]
    })
}

/// CoreDNS's ASN fixture: 81.2.69.142 in AS 12345, 10.0.0.0/8 "Not routed" (ASN 0).
fn asn_networks() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        (
            "81.2.69.142/32",
            json!({"autonomous_system_number": 12345, "autonomous_system_organization": "Test ASN Organization"}),
        ),
        (
            "10.0.0.0/8",
            json!({"autonomous_system_number": 0, "autonomous_system_organization": "Not routed"}),
        ),
    ]
}

/// A directory holding CoreDNS's three fixtures and a few more database types.
struct Fixtures {
    dir: TempDir,
}

impl Fixtures {
    fn new() -> Fixtures {
        let dir = TempDir::new("geoip");
        let city = [("81.2.69.142/32", cambridge())];
        for (name, kind, nets) in [
            ("city.mmdb", "DBIP-City-Lite", city.to_vec()),
            ("unknown.mmdb", "UnknownDbType", city.to_vec()),
            ("enterprise.mmdb", "GeoIP2-Enterprise", city.to_vec()),
            ("country.mmdb", "GeoLite2-Country", city.to_vec()),
            ("asn.mmdb", "GeoLite2-ASN", asn_networks()),
            ("isp.mmdb", "GeoIP2-ISP", asn_networks()),
            (
                "domain.mmdb",
                "GeoIP2-Domain",
                vec![("81.2.69.0/24", json!({"domain": "example.com"}))],
            ),
            // 127.0.0.1's record is no City: the probe at setup fails.
            (
                "badprobe.mmdb",
                "GeoLite2-City",
                vec![("127.0.0.0/8", json!({"city": "not a map"}))],
            ),
        ] {
            std::fs::write(dir.path().join(name), mmdb::write(kind, &nets)).unwrap();
        }
        std::fs::write(dir.path().join("corrupt.mmdb"), b"not a MaxMind DB").unwrap();
        Fixtures { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `geoip NAME` and `extra` (block lines) in a block `.`.
    fn corefile(&self, name: &str, extra: &str) -> String {
        format!(". {{\n geoip {}{extra}\n}}\n", self.path(name).display())
    }

    fn plugin(&self, name: &str, edns_subnet: bool) -> GeoIp {
        let block = if edns_subnet {
            " {\n  edns-subnet\n }"
        } else {
            ""
        };
        let (_, config) =
            ringdns_testkit::config::<GeoIp>(&self.corefile(name, block)).expect("setup");
        GeoIp::build(
            &Arc::new(config),
            &CoreInfo {
                index: 0,
                cpu: 0,
                cores: 1,
            },
        )
        .expect("an instance")
    }
}

#[test]
fn setup_accepts_city_and_asn_databases_with_and_without_edns_subnet() {
    let f = Fixtures::new();
    for (name, provides) in [
        ("city.mmdb", (true, false)),
        ("country.mmdb", (true, false)),
        ("enterprise.mmdb", (true, false)),
        ("asn.mmdb", (false, true)),
        ("isp.mmdb", (false, true)),
    ] {
        for (block, edns) in [("", false), (" {\n  edns-subnet\n }", true)] {
            let (_, config) = ringdns_testkit::config::<GeoIp>(&f.corefile(name, block))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(config.db.provides(), provides, "{name}");
            assert_eq!(config.edns_subnet, edns, "{name}");
        }
    }
}

#[test]
fn setup_errors_are_coredns_words_at_their_line() {
    let f = Fixtures::new();
    let city = f.path("city.mmdb").display().to_string();
    let missing = f.path("missing.mmdb").display().to_string();
    let cases = [
        (
            ". {\n geoip\n}\n".to_string(),
            "Corefile:2 - Error during parsing: plugin/geoip: Wrong argument count or unexpected line ending after 'geoip'".to_string(),
        ),
        (
            format!(". {{\n geoip {city} {{\n  languages en fr es zh-CN\n }}\n}}\n"),
            "Corefile:3 - Error during parsing: plugin/geoip: unknown property \"languages\"".to_string(),
        ),
        (
            format!(". {{\n geoip {city}\n geoip {city}\n}}\n"),
            "Corefile:3 - Error during parsing: plugin/geoip: configuring multiple databases is not supported".to_string(),
        ),
        (
            ". {\n geoip 1 2 3\n}\n".to_string(),
            "Corefile:2 - Error during parsing: plugin/geoip: Wrong argument count or unexpected line ending after '3'".to_string(),
        ),
        (
            ". {\n geoip { }\n}\n".to_string(),
            "Corefile:2 - Error during parsing: plugin/geoip: Wrong argument count or unexpected line ending after 'geoip'".to_string(),
        ),
        (
            ". {\n geoip /dbpath { city }\n}\n".to_string(),
            "Corefile:2 - Error during parsing: plugin/geoip: unknown property \"city\"".to_string(),
        ),
        (
            format!(". {{\n geoip {missing}\n}}\n"),
            format!("Corefile:2 - Error during parsing: plugin/geoip: failed to open database file: open {missing}: no such file or directory"),
        ),
        (
            f.corefile("unknown.mmdb", ""),
            "Corefile:2 - Error during parsing: plugin/geoip: failed to open database file: geoip2: reader does not support the \"UnknownDbType\" database type".to_string(),
        ),
        (
            f.corefile("domain.mmdb", ""),
            "Corefile:2 - Error during parsing: plugin/geoip: database does not provide any supported schema (city, asn)".to_string(),
        ),
        (
            f.corefile("badprobe.mmdb", ""),
            "Corefile:2 - Error during parsing: plugin/geoip: unexpected failure looking up database \"badprobe.mmdb\" schema \"city\": ".to_string(),
        ),
        (
            f.corefile("corrupt.mmdb", ""),
            "Corefile:2 - Error during parsing: plugin/geoip: failed to open database file: ".to_string(),
        ),
    ];
    for (text, want) in cases {
        let err = ringdns_testkit::config::<GeoIp>(&text)
            .err()
            .unwrap_or_else(|| panic!("no error for {text}"));
        assert!(err.starts_with(&want), "{text}: {err}\nwanted {want}");
    }
}

/// A query for `example.org. A`, with an EDNS Client Subnet option for `subnet` (family,
/// source prefix, address bytes) when given.
fn packet(subnet: Option<(u16, u8, &[u8])>) -> Vec<u8> {
    let w = ringdns_testkit::wire_name("example.org.");
    let b = QueryBuilder::new(Name::from_wire(&w).unwrap(), 1).id(0x6e6f);
    let Some((family, prefix, addr)) = subnet else {
        return b.build();
    };
    let mut p = b.edns(1232, false).build();
    let mut option = family.to_be_bytes().to_vec();
    option.extend_from_slice(&[prefix, 0]);
    option.extend_from_slice(addr);
    let mut opt = 8u16.to_be_bytes().to_vec();
    opt.extend_from_slice(&(option.len() as u16).to_be_bytes());
    opt.extend_from_slice(&option);
    // The OPT's RDLENGTH is the packet's last two bytes.
    let n = p.len();
    p[n - 2..].copy_from_slice(&(opt.len() as u16).to_be_bytes());
    p.extend_from_slice(&opt);
    assert!(Query::parse(&p).is_ok(), "the test's query parses");
    p
}

/// The labels `g` publishes for `packet` from `client`, through `publish`.
fn published(g: &GeoIp, packet: &[u8], client: &str) -> Metadata {
    let client = SocketAddr::new(client.parse().unwrap(), 5300);
    let mut reply = Vec::new();
    let mut req = udp_request(packet, client, &mut reply, false);
    let meta = Metadata::default();
    g.publish(&mut req.with_metadata(&meta));
    meta
}

#[test]
fn the_client_address_and_the_edns_subnet_give_coredns_labels() {
    let f = Fixtures::new();
    let cases = [
        ("city.mmdb", "geoip/city/name", "Cambridge"),
        ("city.mmdb", "geoip/country/code", "GB"),
        ("city.mmdb", "geoip/country/name", "United Kingdom"),
        ("city.mmdb", "geoip/country/is_in_european_union", "true"),
        ("city.mmdb", "geoip/continent/code", "EU"),
        ("city.mmdb", "geoip/continent/name", "Europe"),
        ("city.mmdb", "geoip/latitude", "52.2242"),
        ("city.mmdb", "geoip/longitude", "0.1315"),
        ("city.mmdb", "geoip/timezone", "Europe/London"),
        ("city.mmdb", "geoip/postalcode", "CB4"),
        ("city.mmdb", "geoip/subdivisions/code", "ENG,CAM"),
        ("asn.mmdb", "geoip/asn/number", "12345"),
        ("asn.mmdb", "geoip/asn/org", "Test ASN Organization"),
    ];
    for (db, label, want) in cases {
        // Direct: the client is 81.2.69.142.
        let meta = published(&f.plugin(db, false), &packet(None), "81.2.69.142");
        assert_eq!(
            meta.get(label).as_deref(),
            Some(want),
            "{db} {label} direct"
        );
        // Subnet: the client is 127.0.0.1, the ECS option says 81.2.69.142/32.
        let ecs = packet(Some((1, 32, &[81, 2, 69, 142])));
        let meta = published(&f.plugin(db, true), &ecs, "127.0.0.1");
        assert_eq!(
            meta.get(label).as_deref(),
            Some(want),
            "{db} {label} subnet"
        );
        // Without edns-subnet the option is not read: 127.0.0.1 has no record.
        let meta = published(&f.plugin(db, false), &ecs, "127.0.0.1");
        assert_ne!(
            meta.get(label).as_deref(),
            Some(want),
            "{db} {label} no subnet"
        );
    }
    // ASN 0 ("Not routed"), and an address the database has nothing for: zero values.
    let asn = f.plugin("asn.mmdb", false);
    let meta = published(&asn, &packet(None), "10.0.0.1");
    assert_eq!(meta.get("geoip/asn/number").as_deref(), Some("0"));
    assert_eq!(meta.get("geoip/asn/org").as_deref(), Some("Not routed"));
    let meta = published(&asn, &packet(None), "203.0.113.1");
    assert_eq!(meta.get("geoip/asn/number").as_deref(), Some("0"));
    assert_eq!(meta.get("geoip/asn/org").as_deref(), Some(""));
    assert_eq!(meta.labels(), ["geoip/asn/number", "geoip/asn/org"]);
}

#[test]
fn an_unknown_address_publishes_every_city_label_empty() {
    let f = Fixtures::new();
    let meta = published(&f.plugin("city.mmdb", false), &packet(None), "203.0.113.1");
    let labels = [
        ("geoip/city/name", ""),
        ("geoip/country/name", ""),
        ("geoip/continent/name", ""),
        ("geoip/country/code", ""),
        ("geoip/subdivisions/code", ""),
        ("geoip/country/is_in_european_union", "false"),
        ("geoip/continent/code", ""),
        // geoip2-golang v2: missing coordinates are "", not "0".
        ("geoip/latitude", ""),
        ("geoip/longitude", ""),
        ("geoip/timezone", ""),
        ("geoip/postalcode", ""),
    ];
    assert_eq!(
        meta.labels(),
        labels.map(|(l, _)| l.to_string()),
        "CoreDNS's set, in its order"
    );
    for (label, want) in labels {
        assert_eq!(meta.get(label).as_deref(), Some(want), "{label}");
    }
}

#[test]
fn edns_subnet_families_and_ipv6_clients() {
    let f = Fixtures::new();
    let dir = TempDir::new("geoip-v6");
    let db = dir.path().join("v6.mmdb");
    let nets = [
        ("0.0.0.0/8", json!({"city": {"names": {"en": "Zero"}}})),
        (
            "81.2.69.0/24",
            json!({"city": {"names": {"en": "Slash24"}}}),
        ),
        ("2001:db8:1::/48", json!({"city": {"names": {"en": "Six"}}})),
    ];
    std::fs::write(&db, mmdb::write("GeoIP2-City", &nets)).unwrap();
    let text = format!(". {{\n geoip {} {{\n  edns-subnet\n }}\n}}\n", db.display());
    let (_, config) = ringdns_testkit::config::<GeoIp>(&text).unwrap();
    let g = GeoIp::build(
        &Arc::new(config),
        &CoreInfo {
            index: 0,
            cpu: 0,
            cores: 1,
        },
    )
    .unwrap();
    let city = |p: &[u8], client: &str| published(&g, p, client).get("geoip/city/name");
    // A /24 sends three address bytes; the rest is zero.
    let p24 = packet(Some((1, 24, &[81, 2, 69])));
    assert_eq!(city(&p24, "127.0.0.1").as_deref(), Some("Slash24"));
    // An IPv6 subnet, padded to 16 bytes.
    let p48 = packet(Some((2, 48, &[0x20, 0x01, 0x0d, 0xb8, 0, 1])));
    assert_eq!(city(&p48, "127.0.0.1").as_deref(), Some("Six"));
    // Family 0 (prefix 0, dig's +subnet=0) is 0.0.0.0.
    let p0 = packet(Some((0, 0, &[])));
    assert_eq!(city(&p0, "127.0.0.1").as_deref(), Some("Zero"));
    // An IPv6 client, and an IPv4-mapped one, which is the IPv4 it is.
    assert_eq!(
        city(&packet(None), "2001:db8:1::53").as_deref(),
        Some("Six")
    );
    assert_eq!(
        city(&packet(None), "::ffff:81.2.69.9").as_deref(),
        Some("Slash24")
    );
    // No ECS option: the client's address.
    assert_eq!(
        city(&packet(None), "81.2.69.200").as_deref(),
        Some("Slash24")
    );
    drop(f);
}

#[test]
fn without_metadata_nothing_is_looked_up_and_the_query_goes_on() {
    let f = Fixtures::new();
    let client = SocketAddr::new("81.2.69.142".parse().unwrap(), 5300);
    let p = packet(None);
    for at_once in [true, false] {
        // Without a store: handed on, nothing written.
        let g = f.plugin("city.mmdb", false);
        let (status, reply) = ringdns_testkit::screen_once(g, &p, client, TO_NEXT, at_once);
        assert_eq!(status.rcode, TO_NEXT);
        assert!(reply.is_empty());
        // With one: the labels, and handed on all the same.
        let link = ScreenLink {
            plugin: Some(f.plugin("city.mmdb", false)),
            rest: Next(TO_NEXT),
        };
        let mut reply = Vec::new();
        let mut req = udp_request(&p, client, &mut reply, false);
        let meta = Metadata::default();
        let status = ringdns_testkit::chain_once(&link, &mut req.with_metadata(&meta), at_once);
        assert_eq!(status.rcode, TO_NEXT);
        assert_eq!(meta.get("geoip/city/name").as_deref(), Some("Cambridge"));
        // Nothing after it: CoreDNS's NextOrFailure.
        let end = ScreenLink {
            plugin: Some(f.plugin("city.mmdb", false)),
            rest: ringdns_plugin::End,
        };
        let mut reply = Vec::new();
        let mut req = udp_request(&p, client, &mut reply, false);
        let status = ringdns_testkit::chain_once(&end, &mut req, at_once);
        assert_eq!(status.rcode, ringdns_plugin::wire::rcode::SERVFAIL);
    }
}

#[test]
fn an_ipv6_client_of_an_ipv4_database_publishes_nothing() {
    let dir = TempDir::new("geoip-v4");
    let path = dir.path().join("v4.mmdb");
    let db = mmdb::write_v4("GeoLite2-City", &[("81.2.69.0/24", cambridge())]);
    std::fs::write(&path, db).unwrap();
    let text = format!(". {{\n geoip {}\n}}\n", path.display());
    let (_, config) = ringdns_testkit::config::<GeoIp>(&text).unwrap();
    let g = GeoIp::build(
        &Arc::new(config),
        &CoreInfo {
            index: 0,
            cpu: 0,
            cores: 1,
        },
    )
    .unwrap();
    let meta = published(&g, &packet(None), "81.2.69.1");
    assert_eq!(meta.get("geoip/city/name").as_deref(), Some("Cambridge"));
    let meta = published(&g, &packet(None), "2001:db8::1");
    assert!(meta.labels().is_empty(), "{:?}", meta.labels());
}

/// The README examples' database (`examples/GeoLite2-City.mmdb`): CoreDNS's Cambridge
/// record for 81.2.69.142 and 127.0.0.0/8 (the examples' own queries) as "Loopback", ZZ.
/// `GEOIP_WRITE_EXAMPLE=1 cargo test -p ringdns-plugin-geoip` writes it anew.
#[test]
fn the_readme_example_database_is_the_one_this_test_writes() {
    let loopback = json!({
        "city": {"names": {"en": "Loopback"}},
        "continent": {"code": "AN", "names": {"en": "Antarctica"}},
        "country": {"iso_code": "ZZ", "names": {"en": "Nowhere"}, "is_in_european_union": false},
        "location": {"latitude": -90.0, "longitude": 0.0, "time_zone": "UTC"}
    });
    let want = mmdb::write(
        "GeoLite2-City",
        &[("81.2.69.142/32", cambridge()), ("127.0.0.0/8", loopback)],
    );
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/GeoLite2-City.mmdb");
    if std::env::var_os("GEOIP_WRITE_EXAMPLE").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let got = std::fs::read(&path).expect("the example database");
    assert!(
        got == want,
        "{} is stale: GEOIP_WRITE_EXAMPLE=1 writes it",
        path.display()
    );
    let text = format!(". {{\n geoip {}\n}}\n", path.display());
    let (_, config) = ringdns_testkit::config::<GeoIp>(&text).unwrap();
    assert_eq!(config.db.provides(), (true, false));
}
