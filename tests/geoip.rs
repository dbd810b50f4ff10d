//! geoip: the real binary with `metadata`, `geoip` and a `log` line printing its labels,
//! queried over UDP and TCP from different 127.0.0.x source addresses, with dig's
//! `+subnet=` and a query the test builds for `edns-subnet`, on City and ASN databases the
//! test writes (ringdns-testkit's mmdb, maxminddb-writer); a missing or corrupt DBFILE is a
//! `FILE:LINE` start error and a bad reload keeps the old database serving.

mod common;

use common::{Server, TempDir, peers, query, run_expect_failure, tcp_from, udp_from};
use ringdns_testkit::mmdb;
use serde_json::json;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(3);

/// The city database: 127.0.0.2 in Cambridge (CoreDNS's fixture record), 127.0.0.3 in
/// Paris without coordinates, 192.0.2.0/24 in Sydney, 2001:db8::/32 in Oslo, ::1 in
/// "Loopback6"; nothing for any other address.
fn city_db() -> Vec<u8> {
    mmdb::write(
        "GeoLite2-City",
        &[
            (
                "127.0.0.2/32",
                json!({
                    "city": {"names": {"en": "Cambridge"}},
                    "continent": {"code": "EU", "names": {"en": "Europe"}},
                    "country": {"iso_code": "GB", "names": {"en": "United Kingdom"}, "is_in_european_union": false},
                    "location": {"latitude": 52.2242, "longitude": 0.1315, "time_zone": "Europe/London"},
                    "postal": {"code": "CB4"},
                    "subdivisions": [{"iso_code": "ENG"}, {"iso_code": "CAM"}]
                }),
            ),
            (
                "127.0.0.3/32",
                json!({
                    "city": {"names": {"en": "Paris"}},
                    "country": {"iso_code": "FR", "is_in_european_union": true},
                    "location": {"time_zone": "Europe/Paris"}
                }),
            ),
            (
                "192.0.2.0/24",
                json!({"city": {"names": {"en": "Sydney"}}, "country": {"iso_code": "AU"}}),
            ),
            (
                "2001:db8::/32",
                json!({"city": {"names": {"en": "Oslo"}}, "country": {"iso_code": "NO"}}),
            ),
            (
                "::1/128",
                json!({"city": {"names": {"en": "Loopback6"}}, "country": {"iso_code": "ZZ"}}),
            ),
        ],
    )
}

/// The ASN database: 127.0.0.2 in AS 64500, 127.0.0.0/8 otherwise "Not routed" (AS 0).
fn asn_db() -> Vec<u8> {
    mmdb::write(
        "GeoLite2-ASN",
        &[
            (
                "127.0.0.0/8",
                json!({"autonomous_system_number": 0, "autonomous_system_organization": "Not routed"}),
            ),
            (
                "127.0.0.2/32",
                json!({"autonomous_system_number": 64500u32, "autonomous_system_organization": "Example Net"}),
            ),
        ],
    )
}

const CITY_LOG: &str = "\"{remote} {proto} city={/geoip/city/name} cc={/geoip/country/code} eu={/geoip/country/is_in_european_union} lat={/geoip/latitude} lon={/geoip/longitude} tz={/geoip/timezone} sub={/geoip/subdivisions/code} asn={/geoip/asn/number}\"";

/// A server with `metadata` (unless `meta` is false), `geoip DB` with `block`, `log
/// FORMAT` and whoami.
fn start(db: &Path, block: &str, meta: bool, format: &str) -> Server {
    let meta = if meta { " metadata\n" } else { "" };
    let db = db.display().to_string();
    Server::start(|p| format!(".:{p} {{\n{meta} geoip {db}{block}\n log . {format}\n whoami\n}}\n"))
}

fn from(a: &str) -> IpAddr {
    a.parse().unwrap()
}

fn expect_line(s: &Server, line: &str) {
    assert!(s.wait_stdout(line, WAIT), "{line:?} not in\n{}", s.stdout());
}

#[test]
fn log_prints_the_labels_of_each_source_address_over_udp_and_tcp() {
    let dir = TempDir::new();
    let db = dir.0.join("city.mmdb");
    std::fs::write(&db, city_db()).unwrap();
    let s = start(&db, "", true, CITY_LOG);
    for (client, labels) in [
        (
            "127.0.0.2",
            "city=Cambridge cc=GB eu=false lat=52.2242 lon=0.1315 tz=Europe/London sub=ENG,CAM asn=-",
        ),
        // No coordinates: empty, not 0 (CoreDNS since geoip2-golang v2).
        (
            "127.0.0.3",
            "city=Paris cc=FR eu=true lat= lon= tz=Europe/Paris sub= asn=-",
        ),
        // No record: every city label empty.
        ("127.0.0.4", "city= cc= eu=false lat= lon= tz= sub= asn=-"),
    ] {
        let q = query(0x4749, "example.org.", 1);
        assert!(
            udp_from(from(client), s.port, &q, WAIT).is_some(),
            "{client}"
        );
        assert!(
            tcp_from(from(client), s.port, &q, WAIT).is_some(),
            "{client}"
        );
        for proto in ["udp", "tcp"] {
            expect_line(&s, &format!("{client} {proto} {labels}"));
        }
    }
    // An IPv6 client.
    let q = query(0x4750, "example.org.", 1);
    assert!(udp_from(from("::1"), s.port, &q, WAIT).is_some());
    expect_line(&s, "[::1] udp city=Loopback6 cc=ZZ");
}

#[test]
fn without_metadata_nothing_is_published() {
    let dir = TempDir::new();
    let db = dir.0.join("city.mmdb");
    std::fs::write(&db, city_db()).unwrap();
    let s = start(&db, "", false, CITY_LOG);
    let q = query(0x474a, "example.org.", 1);
    assert!(udp_from(from("127.0.0.2"), s.port, &q, WAIT).is_some());
    expect_line(
        &s,
        "127.0.0.2 udp city=- cc=- eu=- lat=- lon=- tz=- sub=- asn=-",
    );
}

/// dig at the server with `args`; its output (dig's own timeouts bound it).
fn dig(dig: &Path, port: u16, args: &[&str]) -> String {
    let out = Command::new(dig)
        .args(["@127.0.0.1", "-p", &port.to_string(), "example.org", "A"])
        .args(["+time=2", "+tries=1"])
        .args(args)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("status: NOERROR"), "{text}");
    text
}

/// A query for `example.org. A` with an EDNS Client Subnet option: `family`, `prefix` and
/// the address bytes.
fn subnet_query(id: u16, family: u16, prefix: u8, addr: &[u8]) -> Vec<u8> {
    let mut q = query(id, "example.org.", 1);
    q[11] = 1; // ARCOUNT
    let mut option = family.to_be_bytes().to_vec();
    option.extend_from_slice(&[prefix, 0]);
    option.extend_from_slice(addr);
    // OPT: root owner, type 41, UDP size 1232, TTL 0, RDLENGTH, then the option.
    q.extend_from_slice(&[0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0]);
    q.extend_from_slice(&(option.len() as u16 + 4).to_be_bytes());
    q.extend_from_slice(&8u16.to_be_bytes());
    q.extend_from_slice(&(option.len() as u16).to_be_bytes());
    q.extend_from_slice(&option);
    q
}

#[test]
fn edns_subnet_from_dig_and_from_a_built_query_is_looked_up() {
    const TEST: &str = "edns_subnet_from_dig_and_from_a_built_query_is_looked_up";
    let dir = TempDir::new();
    let db = dir.0.join("city.mmdb");
    std::fs::write(&db, city_db()).unwrap();
    let format = "\"{remote} {proto} city={/geoip/city/name} cc={/geoip/country/code}\"";
    let s = start(&db, " {\n  edns-subnet\n }", true, format);
    let plain = start(&db, "", true, format);
    if let Some(dig_path) = peers::tool("dig", "bind9-dnsutils", TEST) {
        for tcp in [false, true] {
            let proto = if tcp { "tcp" } else { "udp" };
            let mut args = vec!["+subnet=192.0.2.77/24"];
            if tcp {
                args.push("+tcp");
            }
            dig(&dig_path, s.port, &args);
            expect_line(&s, &format!("127.0.0.1 {proto} city=Sydney cc=AU"));
            // Without edns-subnet the option is not read: 127.0.0.1 has no record.
            dig(&dig_path, plain.port, &args);
            expect_line(&plain, &format!("127.0.0.1 {proto} city= cc="));
        }
        dig(&dig_path, s.port, &["+subnet=2001:db8:1::/48"]);
        expect_line(&s, "127.0.0.1 udp city=Oslo cc=NO");
    }
    // Built by the test: a /32 for 127.0.0.2 sent from 127.0.0.5, and an IPv6 /56.
    let q = subnet_query(0x474b, 1, 32, &[127, 0, 0, 2]);
    assert!(udp_from(from("127.0.0.5"), s.port, &q, WAIT).is_some());
    expect_line(&s, "127.0.0.5 udp city=Cambridge cc=GB");
    let q = subnet_query(0x474c, 2, 56, &[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0x42]);
    assert!(tcp_from(from("127.0.0.6"), s.port, &q, WAIT).is_some());
    expect_line(&s, "127.0.0.6 tcp city=Oslo cc=NO");
    // No option: the client's own address.
    let q = query(0x474d, "example.org.", 1);
    assert!(udp_from(from("127.0.0.3"), s.port, &q, WAIT).is_some());
    expect_line(&s, "127.0.0.3 udp city=Paris cc=FR");
}

#[test]
fn an_asn_database_publishes_the_asn_labels_only() {
    let dir = TempDir::new();
    let db = dir.0.join("asn.mmdb");
    std::fs::write(&db, asn_db()).unwrap();
    let format = "\"{remote} as={/geoip/asn/number} org={/geoip/asn/org} city={/geoip/city/name}\"";
    let s = start(&db, "", true, format);
    for (client, labels) in [
        ("127.0.0.2", "as=64500 org=Example Net city=-"),
        ("127.0.0.9", "as=0 org=Not routed city=-"),
    ] {
        let q = query(0x474e, "example.org.", 1);
        assert!(udp_from(from(client), s.port, &q, WAIT).is_some());
        expect_line(&s, &format!("{client} {labels}"));
    }
}

#[test]
fn a_missing_or_corrupt_database_is_a_start_error_at_its_line() {
    let dir = TempDir::new();
    let missing = dir.0.join("missing.mmdb");
    let corrupt = dir.write("corrupt.mmdb", "not a MaxMind DB at all");
    let unknown = dir.0.join("unknown.mmdb");
    std::fs::write(
        &unknown,
        mmdb::write("UnknownDbType", &[("127.0.0.0/8", json!({}))]),
    )
    .unwrap();
    for (db, why) in [
        (
            &missing,
            format!(
                "failed to open database file: open {}: no such file or directory",
                missing.display()
            ),
        ),
        (
            &corrupt,
            "failed to open database file: invalid database".to_string(),
        ),
        (
            &unknown,
            "geoip2: reader does not support the \"UnknownDbType\" database type".to_string(),
        ),
    ] {
        let text = format!(".:0 {{\n metadata\n geoip {}\n whoami\n}}\n", db.display());
        let (code, err) = run_expect_failure(&text);
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains(":3 - Error during parsing: plugin/geoip: ") && err.contains(&why),
            "{text}: {err}"
        );
    }
}

fn corefile(port: u16, db: &Path) -> String {
    format!(
        ".:{port} {{\n metadata\n geoip {}\n log . \"{{remote}} n={{name}} city={{/geoip/city/name}}\"\n whoami\n}}\n",
        db.display()
    )
}

#[test]
fn a_bad_reload_keeps_the_old_database_serving() {
    let dir = TempDir::new();
    let good: PathBuf = dir.0.join("city.mmdb");
    std::fs::write(&good, city_db()).unwrap();
    let corrupt = dir.write("corrupt.mmdb", "garbage");
    let s = Server::start(|p| corefile(p, &good));
    let ask = |n: u16, name: &str| {
        let q = query(n, name, 1);
        assert!(udp_from(from("127.0.0.2"), s.port, &q, WAIT).is_some());
    };
    ask(1, "one.example.");
    expect_line(&s, "127.0.0.2 n=one.example. city=Cambridge");
    for (i, bad) in [corrupt, dir.0.join("missing.mmdb")].iter().enumerate() {
        assert!(!s.reload(&corefile(s.port, bad)), "{}", s.stdout());
        assert!(
            s.stdout()
                .lines()
                .any(|l| l.starts_with("[ERROR] SIGUSR1: ")
                    && l.contains("plugin/geoip: failed to open database file")),
            "{}",
            s.stdout()
        );
        let name = format!("bad{i}.example.");
        ask(2 + i as u16, &name);
        expect_line(&s, &format!("127.0.0.2 n={name} city=Cambridge"));
    }
    // A good new database applies.
    let other = dir.0.join("other.mmdb");
    std::fs::write(
        &other,
        mmdb::write(
            "GeoIP2-City",
            &[(
                "127.0.0.0/8",
                json!({"city": {"names": {"en": "Reloaded"}}}),
            )],
        ),
    )
    .unwrap();
    assert!(s.reload(&corefile(s.port, &other)), "{}", s.stdout());
    ask(9, "after.example.");
    expect_line(&s, "127.0.0.2 n=after.example. city=Reloaded");
}

/// The geoip README's GSLB example: a view on `metadata('geoip/city/name')`. The labels are
/// published before the block is chosen (geoip's turn in `admits`), so clients in Cambridge
/// get the first block's answer over UDP and TCP, every other client the catch-all's.
#[test]
fn a_view_chooses_its_block_by_the_geoip_city() {
    let dir = TempDir::new();
    let db = dir.0.join("city.mmdb");
    std::fs::write(&db, city_db()).unwrap();
    let db = db.display().to_string();
    let s = Server::start(|p| {
        format!(
            "example.org:{p} {{
    view exampleshire {{
        expr metadata('geoip/city/name') == 'Cambridge'
    }}
    geoip {db}
    metadata
    hosts {{
        10.0.0.1 www.example.org
    }}
}}
example.org:{p} {{
    hosts {{
        10.0.0.2 www.example.org
    }}
}}
"
        )
    });
    let answer = |reply: Option<Vec<u8>>| {
        let m = hickory_proto::op::Message::from_vec(&reply.expect("a reply")).unwrap();
        m.answers
            .iter()
            .filter_map(|r| match &r.data {
                hickory_proto::rr::RData::A(a) => Some(a.0.to_string()),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let q = query(5, "www.example.org.", 1);
    assert_eq!(
        answer(udp_from(from("127.0.0.2"), s.port, &q, WAIT)),
        ["10.0.0.1"]
    );
    assert_eq!(
        answer(tcp_from(from("127.0.0.2"), s.port, &q, WAIT)),
        ["10.0.0.1"]
    );
    assert_eq!(
        answer(udp_from(from("127.0.0.3"), s.port, &q, WAIT)),
        ["10.0.0.2"]
    );
    assert_eq!(
        answer(udp_from(from("127.0.0.9"), s.port, &q, WAIT)),
        ["10.0.0.2"]
    );
}
