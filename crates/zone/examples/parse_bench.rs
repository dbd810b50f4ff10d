//! Times the zone-file parser on a generated zone, since a large zone's load time
//! is what a reload costs: `cargo run --release -p ringdns-zone --example
//! parse_bench [RECORDS]` (default 1,000,000: a mix of A, AAAA, CNAME, MX, TXT, NS
//! and SRV under example.org).

use std::fmt::Write as _;
use std::time::Instant;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("RECORDS must be a number"))
        .unwrap_or(1_000_000);
    let mut z = String::with_capacity(n * 48);
    z.push_str("$TTL 3600\n@ IN SOA ns1 hostmaster ( 2024010101 7200 3600 1209600 300 )\n");
    z.push_str("@ IN NS ns1\n@ IN NS ns2.example.net.\n");
    let mut i = 0;
    while i < n {
        let h = i / 8;
        let w = &mut z;
        match i % 8 {
            0 => writeln!(
                w,
                "host{h} IN A 10.{}.{}.{}",
                h >> 16 & 255,
                h >> 8 & 255,
                h & 255
            ),
            1 => writeln!(w, "\tIN AAAA 2001:db8::{:x}:{:x}", h >> 16, h & 0xffff),
            2 => writeln!(w, "www{h} 300 IN CNAME host{h}"),
            3 => writeln!(w, "host{h} IN MX 10 mail{}.example.org.", h % 100),
            4 => writeln!(
                w,
                "host{h} IN TXT \"v=spf1 ip4:10.0.0.{} -all\" \"id {h}\"",
                h % 256
            ),
            5 => writeln!(w, "sub{h} IN NS ns{}.sub{h}", h % 4),
            6 => writeln!(
                w,
                "_sip._udp.host{h} 60 IN SRV 10 60 5060 sip{}.example.org.",
                h % 10
            ),
            _ => writeln!(w, "alias{h}.example.org. IN CNAME www{h}.example.org."),
        }
        .expect("String write");
        i += 1;
    }
    let path =
        std::env::temp_dir().join(format!("ringdns-parse-bench-{}.zone", std::process::id()));
    std::fs::write(&path, &z).expect("write the zone");
    drop(z);
    let origin = b"\x07example\x03org\x00";
    let mut best = f64::MAX;
    let mut records = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let parsed = ringdns_zone::parse::parse_file(&path, origin).expect("parse");
        let secs = t.elapsed().as_secs_f64();
        best = best.min(secs);
        records = parsed.records.len();
        drop(parsed);
    }
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_file(&path);
    println!(
        "{records} records, {:.1} MB: best of 3 {:.3} s ({:.0} ns/record)",
        bytes as f64 / 1e6,
        best,
        best * 1e9 / records as f64
    );
}
