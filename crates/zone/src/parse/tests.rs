//! The parser's behaviour, entry by entry; RDATA checked against hickory-proto's
//! encoding where hickory reads the type, by hand elsewhere.

use super::*;

use std::str::FromStr;
use std::sync::atomic::{AtomicU32, Ordering};

use hickory_proto::rr::{RData, RecordType};
use hickory_proto::serialize::binary::{BinEncodable, BinEncoder, NameEncoding};

const ORG: &[u8] = b"\x07example\x03org\x00";
const FILE: &str = "db.example.org";

fn zone(text: &str) -> Parsed {
    match parse_str(text, ORG, Path::new(FILE)) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

fn err(text: &str) -> String {
    parse_str(text, ORG, Path::new(FILE))
        .expect_err("should fail")
        .to_string()
}

/// Wire form of an absolute name, case kept.
fn w(name: &str) -> Vec<u8> {
    let mut v = Vec::new();
    name::to_wire(name.as_bytes(), &[0], &mut v).unwrap();
    v
}

/// hickory's uncompressed RDATA for the same presentation text (absolute names).
fn hickory(rtype: &str, text: &str) -> Vec<u8> {
    let rt = RecordType::from_str(rtype).unwrap();
    let rdata =
        RData::try_from_str(rt, text).unwrap_or_else(|e| panic!("hickory {rtype} {text}: {e}"));
    let mut buf = Vec::new();
    let mut enc = BinEncoder::new(&mut buf);
    enc.set_name_encoding(NameEncoding::Uncompressed);
    rdata.emit(&mut enc).unwrap();
    buf
}

/// Our RDATA for `TYPE text`.
fn ours(rtype: &str, text: &str) -> Vec<u8> {
    let r = parse_rr(&format!("x.example.org. 60 IN {rtype} {text}"), ORG, 0)
        .unwrap_or_else(|e| panic!("{rtype} {text}: {e}"));
    r.rdata.into_vec()
}

fn same_as_hickory(rtype: &str, text: &str) {
    assert_eq!(ours(rtype, text), hickory(rtype, text), "{rtype} {text}");
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A fresh directory under the temp dir for one test's files.
fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "ringdns-zone-parse-{}-{}-{tag}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

struct Cleanup(PathBuf);
impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---- RDATA, type by type ----

#[test]
fn rdata_matches_hickory() {
    same_as_hickory("A", "192.0.2.1");
    same_as_hickory("AAAA", "2001:db8::1");
    same_as_hickory("AAAA", "::ffff:192.0.2.1");
    same_as_hickory("NS", "ns1.example.org.");
    same_as_hickory("CNAME", "www.example.net.");
    same_as_hickory("PTR", "host.example.org.");
    same_as_hickory("MX", "10 mail.example.org.");
    same_as_hickory("TXT", "\"v=spf1 -all\"");
    same_as_hickory("TXT", "\"a b\" c \"d\\\"e\"");
    same_as_hickory("TXT", "\"\"");
    same_as_hickory("SRV", "0 5 5060 sip.example.org.");
    same_as_hickory(
        "SOA",
        "ns.example.org. hostmaster.example.org. 2024010101 7200 3600 1209600 300",
    );
    same_as_hickory("HINFO", "\"PC\" \"Linux\"");
    same_as_hickory(
        "NAPTR",
        "100 10 \"S\" \"SIP+D2U\" \"\" _sip._udp.example.org.",
    );
    same_as_hickory(
        "NAPTR",
        "100 50 \"u\" \"E2U+sip\" \"!^.*$!sip:info@example.org!\" .",
    );
    same_as_hickory("CAA", "0 issue \"letsencrypt.org\"");
    same_as_hickory("CAA", "128 iodef \"mailto:security@example.org\"");
    same_as_hickory(
        "TLSA",
        "3 1 1 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF",
    );
    same_as_hickory("SSHFP", "1 1 dd465c09cfa51fb45020cc83316fff21b9ec74ac");
    same_as_hickory("SVCB", "1 . alpn=h2,h3 port=8443");
    same_as_hickory("HTTPS", "1 . alpn=\"h2,h3\" ipv4hint=192.0.2.1,192.0.2.2");
    same_as_hickory("HTTPS", "0 svc.example.org.");
    same_as_hickory("OPENPGPKEY", "AQIDBAUGBwgJ");
    same_as_hickory("CSYNC", "66 3 A NS AAAA");
}

#[test]
fn rdata_by_hand() {
    let mut soa = w("ns.example.org.");
    soa.extend(w("h.example.org."));
    soa.extend(1u32.to_be_bytes());
    for v in [7200u32, 3600, 1_209_600, 300] {
        soa.extend(v.to_be_bytes());
    }
    assert_eq!(
        ours("SOA", "ns h 1 2h 1h 2w 5m"),
        soa,
        "SOA timers take units"
    );
    assert_eq!(ours("SOA", "ns h ( 1 2H 1H\n 2W 5M )"), soa);
    assert_eq!(
        ours("DNAME", "Target.example.net."),
        w("Target.example.net.")
    );
    assert_eq!(
        ours("DS", "60485 5 1 2BB183AF5F22588179A53B0A98631FAD1A292118"),
        hex("ec45 05 01 2bb183af5f22588179a53b0a98631fad1a292118")
    );
    assert_eq!(ours("CDS", "0 0 0 00"), hex("0000 00 00 00"));
    assert_eq!(
        ours("DNSKEY", "257 3 13 AQID BAUG"),
        hex("0101 03 0d 010203040506")
    );
    assert_eq!(ours("CDNSKEY", "0 3 0 AA=="), hex("0000 03 00 00"));
    let mut rrsig = hex("0001 0d 02 00000e10 65a1b2c3 65a00000 1234");
    rrsig.extend(w("example.org."));
    rrsig.extend(hex("010203"));
    assert_eq!(
        ours(
            "RRSIG",
            "A 13 2 3600 1705095875 1704984576 4660 example.org. AQID"
        ),
        rrsig
    );
    assert_eq!(
        ours(
            "RRSIG",
            "A 13 2 3600 20240112214435 20240111144936 4660 @ AQID"
        ),
        rrsig,
        "RRSIG times as YYYYMMDDHHmmSS"
    );
    let mut nsec = w("b.example.org.");
    nsec.extend(hex("0006 40 01 00 00 00 03"));
    assert_eq!(ours("NSEC", "b A MX RRSIG NSEC"), nsec);
    assert_eq!(
        ours(
            "NSEC3",
            "1 1 12 AABBCCDD 2T7B4G4VSA5SMI47K61MV5BV1A22BOJR A RRSIG"
        ),
        hex(
            "01 01 000c 04 aabbccdd 14 174eb2409fe28bcb4887a1836f957f0a8425e27b 0006 40 00 00 00 00 02"
        )
    );
    assert_eq!(ours("NSEC3PARAM", "1 0 0 -"), hex("01 00 0000 00"));
    assert_eq!(
        ours(
            "ZONEMD",
            "2018031900 1 1 FEBE3D4CE2EC2FFA4BA99D46CD69D6D29711E55217057BEE7EB1A7B641A47BA7FED2DD5B97AE499FAFA4F22C6BD647DE"
        ),
        hex(
            "7848b91c 01 01 febe3d4ce2ec2ffa4ba99d46cd69d6d29711e55217057bee7eb1a7b641a47ba7fed2dd5b97ae499fafa4f22c6bd647de"
        )
    );
    assert_eq!(
        ours("SPF", "\"v=spf1 -all\""),
        ours("TXT", "\"v=spf1 -all\"")
    );
    let mut uri = hex("000a 0001");
    uri.extend(b"ftp://ftp1.example.com/public");
    assert_eq!(ours("URI", "10 1 \"ftp://ftp1.example.com/public\""), uri);
    let mut afsdb = hex("0001");
    afsdb.extend(w("afs.example.org."));
    assert_eq!(ours("AFSDB", "1 afs"), afsdb);
    assert_eq!(ours("EUI48", "00-00-5e-00-53-2a"), hex("00005e00532a"));
    assert_eq!(
        ours("EUI64", "00-00-5e-ef-10-00-00-2a"),
        hex("00005eef1000002a")
    );
    assert_eq!(ours("L32", "10 10.1.2.0"), hex("000a 0a010200"));
    assert_eq!(
        ours("NID", "10 0014:4fff:ff20:ee64"),
        hex("000a 00144fffff20ee64")
    );
    assert_eq!(ours("SMIMEA", "3 1 1 AABB"), ours("TLSA", "3 1 1 AABB"));
    assert_eq!(ours("TA", "1 5 1 AABB"), ours("DS", "1 5 1 AABB"));
    assert_eq!(
        ours("DHCID", "AAIBY2/AuCccgoJbsaxcQc9TUapptP69lOjxfNuVAA2kjEA="),
        hex("000201636fc0b8271c82825bb1ac5c41cf5351aa69b4febd94e8f17cdb95000da48c40")
    );
}

#[test]
fn txt_strings() {
    // Unquoted words are strings of their own; escapes are undone; raw UTF-8 kept.
    assert_eq!(ours("TXT", "a b"), b"\x01a\x01b");
    assert_eq!(ours("TXT", "\"a\\\"b\\;\\065\""), b"\x05a\"b;A");
    assert_eq!(ours("TXT", "\"a;b\" ; comment"), b"\x03a;b");
    assert_eq!(ours("TXT", "\"\u{e9}\""), b"\x02\xc3\xa9");
    assert_eq!(ours("TXT", "\"a\"\"b\""), b"\x01a\x01b");
    // A string over 255 octets is split, as miekg does.
    let long = "x".repeat(300);
    let r = ours("TXT", &format!("\"{long}\""));
    assert_eq!(r.len(), 302);
    assert_eq!(r[0], 255);
    assert_eq!(r[256], 45);
    // Across lines in parentheses.
    assert_eq!(ours("TXT", "( \"a\"\n \"b\" )"), b"\x01a\x01b");
}

#[test]
fn rfc3597() {
    let r = parse_rr("x.example.org. 60 IN TYPE65280 \\# 4 0a000001", ORG, 0).unwrap();
    assert_eq!((r.rtype, &*r.rdata), (65280, &[10u8, 0, 0, 1][..]));
    // A known type in RFC 3597 form is the same record.
    assert_eq!(ours("A", "\\# 4 0A000001"), ours("A", "10.0.0.1"));
    assert_eq!(ours("TYPE1", "\\# 4 0a00 0001"), ours("A", "10.0.0.1"));
    assert_eq!(
        ours("MX", "\\# 3 000a 00"),
        hex("000a00"),
        "hex split over tokens"
    );
    assert_eq!(ours("TYPE65534", "\\# 0"), b"");
    let r = parse_rr("x.example.org. CLASS5 60 TYPE1 \\# 4 01020304", ORG, 0).unwrap();
    assert_eq!((r.class, r.rtype, r.ttl), (5, 1, 60));
    let e = |s: &str| parse_rr(&format!("x.example.org. 60 IN {s}"), ORG, 0).unwrap_err();
    assert_eq!(
        e("TYPE65280 \\# 3 0a00"),
        "bad TYPE65280 record: \\# length 3 but 2 octets of data"
    );
    assert_eq!(
        e("TYPE65280 \\# 2 0a0"),
        "bad TYPE65280 record: odd number of hex digits in \\# data"
    );
    assert_eq!(
        e("TYPE65280 \\# 1 zz"),
        "bad TYPE65280 record \"zz\": bad hex in \\# data"
    );
    assert_eq!(
        e("TYPE65280 \\# x"),
        "bad TYPE65280 record \"x\": bad \\# length"
    );
    assert_eq!(
        e("TYPE65280 \\#"),
        "bad TYPE65280 record: \\# needs a length"
    );
    assert_eq!(
        e("A \\# 3 010203"),
        "bad A record: \\# data is no valid A RDATA"
    );
    assert_eq!(
        e("CNAME \\# 2 c00c"),
        "bad CNAME record: \\# data is no valid CNAME RDATA",
        "no compression pointer in stored RDATA"
    );
    assert_eq!(
        e("APL 1:192.168.32.0/21"),
        "bad APL record \"1:192.168.32.0/21\": RR type APL has no presentation format here; write it as \\# (RFC 3597)"
    );
    assert_eq!(
        ours(
            "LOC",
            "\\# 16 00 12 16 13 89 17 2d d0 70 be 15 f0 00 98 8d 20"
        ),
        hex("00121613 89172dd0 70be15f0 00988d20")
    );
}

#[test]
fn rdata_errors() {
    let e = |s: &str| parse_rr(&format!("x.example.org. 60 IN {s}"), ORG, 0).unwrap_err();
    assert_eq!(e("A 1.2.3"), "bad A record \"1.2.3\"");
    assert_eq!(e("A 1.2.3.4 5"), "bad A record \"5\": trailing data");
    assert_eq!(e("A"), "bad A record: missing data");
    assert_eq!(e("AAAA 1.2.3.4"), "bad AAAA record \"1.2.3.4\"");
    assert_eq!(
        e("MX x mail"),
        "bad MX record \"x\": expected a number from 0 to 65535"
    );
    assert_eq!(e("MX 10"), "bad MX record: missing data");
    assert_eq!(e("CNAME a..b"), "bad CNAME record \"a..b\": empty label");
    assert_eq!(
        e("SOA a b 1 2 3 4 5x"),
        "bad SOA record \"5x\": bad minimum"
    );
    assert_eq!(e("SOA a b x 2 3 4 5"), "bad SOA record \"x\": bad serial");
    assert_eq!(
        e("DS 1 5 1 XYZ"),
        "bad DS record \"XYZ\": expected hex digits"
    );
    assert_eq!(e("HINFO a"), "bad HINFO record: missing data");
    assert!(e("SSHFP 1 1 zz").starts_with("bad SSHFP record \"zz\""));
    assert_eq!(
        e("HINFO \"{}\" b".replace("{}", &"a".repeat(256)).as_str())
            .split(':')
            .nth(1)
            .unwrap()
            .trim(),
        "character string longer than 255 octets"
    );
}

// ---- Names ----

#[test]
fn names_relative_absolute_escaped() {
    let p = zone(
        "@ 60 IN NS ns\n\
         www 60 IN CNAME @\n\
         Mixed.Case 60 IN MX 10 Mail.Example.NET.\n\
         a\\.b 60 IN A 192.0.2.1\n\
         \\065bc.example.org. 60 IN A 192.0.2.2\n\
         sub.example.org. 60 IN NS ns.sub\n",
    );
    let owners: Vec<&[u8]> = p.records.iter().map(|r| &*r.owner).collect();
    assert_eq!(owners[0], ORG);
    assert_eq!(owners[1], w("www.example.org."));
    assert_eq!(owners[2], w("Mixed.Case.example.org."), "case as written");
    assert_eq!(owners[3], b"\x03a.b\x07example\x03org\x00");
    assert_eq!(owners[4], w("Abc.example.org."));
    assert_eq!(&*p.records[0].rdata, w("ns.example.org."));
    assert_eq!(&*p.records[1].rdata, ORG);
    assert_eq!(&p.records[2].rdata[2..], w("Mail.Example.NET."));
    assert_eq!(&*p.records[5].rdata, w("ns.sub.example.org."));
}

#[test]
fn owner_inheritance() {
    let p = zone(
        "a 60 IN A 192.0.2.1\n\
         \x20 60 IN AAAA ::1\n\
         \t60 IN TXT ( \"x\"\n\
         \"y\" )\n\
         \x20 ; only a comment\n\
         \n\
         \x20 60 MX 1 mx\n\
         b 60 SOA ns h (\n\
         1 2 3 4 5 )\n\
         \x20 60 A 192.0.2.9\n",
    );
    let o: Vec<Vec<u8>> = p.records.iter().map(|r| r.owner.to_vec()).collect();
    let a = w("a.example.org.");
    let b = w("b.example.org.");
    assert_eq!(o, [a.clone(), a.clone(), a.clone(), a, b.clone(), b]);
    let lines: Vec<u32> = p.pos.iter().map(|p| p.line).collect();
    assert_eq!(lines, [1, 2, 3, 7, 8, 10]);
    assert_eq!(
        err(" 60 IN A 192.0.2.1\n"),
        "db.example.org:1 - no owner name: the first record has a blank owner"
    );
}

#[test]
fn origin_directive() {
    let p = zone(
        "$ORIGIN sub.example.org.\n\
         www 60 A 192.0.2.1\n\
         $ORIGIN deeper\n\
         @ 60 A 192.0.2.2\n\
         \x20 60 A 192.0.2.3\n\
         $origin example.org.\n\
         x 60 A 192.0.2.4\n",
    );
    assert_eq!(&*p.records[0].owner, w("www.sub.example.org."));
    assert_eq!(&*p.records[1].owner, w("deeper.sub.example.org."));
    assert_eq!(&*p.records[2].owner, w("deeper.sub.example.org."));
    assert_eq!(&*p.records[3].owner, w("x.example.org."));
    assert_eq!(err("$ORIGIN\n"), "db.example.org:1 - $ORIGIN needs a name");
    assert_eq!(
        err("\n$ORIGIN a. b.\n"),
        "db.example.org:2 - garbage after $ORIGIN: \"b.\""
    );
    assert_eq!(
        err("$ORIGIN a..b.\n"),
        "db.example.org:1 - bad $ORIGIN name \"a..b.\": empty label"
    );
}

// ---- TTL and class ----

#[test]
fn ttl_and_class_columns() {
    let p = zone(
        "a 1h IN A 192.0.2.1\n\
         a IN 30m A 192.0.2.2\n\
         a 1d2h A 192.0.2.3\n\
         a CH A 192.0.2.4\n\
         a 90S CLASS3 A 192.0.2.5\n\
         a in a 192.0.2.6\n\
         a 1W TYPE1 192.0.2.7\n",
    );
    let tc: Vec<(u32, u16)> = p.records.iter().map(|r| (r.ttl, r.class)).collect();
    assert_eq!(
        tc,
        [
            (3600, 1),
            (1800, 1),
            (93600, 1),
            (93600, 3),
            (90, 3),
            (90, 1),
            (604_800, 1)
        ]
    );
    assert_eq!(
        err("a 1x IN A 192.0.2.1\n"),
        "db.example.org:1 - bad TTL \"1x\""
    );
    assert_eq!(
        err("a 1 2 A 192.0.2.1\n"),
        "db.example.org:1 - unknown RR type \"2\""
    );
    assert_eq!(
        err("a IN CH A 192.0.2.1\n"),
        "db.example.org:1 - unknown RR type \"CH\""
    );
    assert_eq!(
        err("a 60 IN FOO 1\n"),
        "db.example.org:1 - unknown RR type \"FOO\""
    );
    assert_eq!(err("a 60 IN\n"), "db.example.org:1 - missing RR type");
    assert_eq!(
        err("a 60 CLASSX A 1.2.3.4\n"),
        "db.example.org:1 - unknown class \"CLASSX\""
    );
    assert_eq!(
        err("a 60 IN AXFR x\n"),
        "db.example.org:1 - RR type AXFR cannot be in a zone"
    );
    assert_eq!(
        err("a 60 IN TYPE65536 x\n"),
        "db.example.org:1 - unknown RR type \"TYPE65536\""
    );
}

#[test]
fn default_ttl_as_miekg() {
    // No TTL at all: 3600; then the last explicit TTL.
    let p = zone("a A 192.0.2.1\nb 300 A 192.0.2.2\nc A 192.0.2.3\n");
    let t: Vec<u32> = p.records.iter().map(|r| r.ttl).collect();
    assert_eq!(t, [3600, 300, 300]);
    // $TTL holds against explicit TTLs until the next $TTL; the SOA minimum plays no part.
    let p = zone(
        "$TTL 1h\n\
         @ SOA ns h 1 2 3 4 5\n\
         a 300 A 192.0.2.1\n\
         b A 192.0.2.2\n\
         $TTL 90\n\
         c A 192.0.2.3\n",
    );
    let t: Vec<u32> = p.records.iter().map(|r| r.ttl).collect();
    assert_eq!(t, [3600, 300, 3600, 90]);
    assert_eq!(err("$TTL\n"), "db.example.org:1 - $TTL needs a TTL");
    assert_eq!(err("$TTL 1y\n"), "db.example.org:1 - bad TTL \"1y\"");
    assert_eq!(
        err("$TTL 1 2\n"),
        "db.example.org:1 - garbage after $TTL: \"2\""
    );
}

// ---- Lexical errors ----

#[test]
fn lexical_errors_name_the_entry_line() {
    assert_eq!(
        err("a 60 A 192.0.2.1\nb 60 SOA ns h ( 1 2 3\n4 5\n"),
        "db.example.org:2 - unbalanced parenthesis"
    );
    assert_eq!(
        err("a 60 A 192.0.2.1 )\n"),
        "db.example.org:1 - unbalanced parenthesis"
    );
    assert_eq!(
        err("a 60 A 192.0.2.1\n\nb 60 TXT \"abc\n"),
        "db.example.org:3 - unterminated quoted string"
    );
    assert_eq!(
        err("a 60 A 1.2.3\n"),
        "db.example.org:1 - bad A record \"1.2.3\""
    );
    assert_eq!(
        err("a 60 SOA ns h (\n 1 2 3 4 x )\n"),
        "db.example.org:1 - bad SOA record \"x\": bad minimum"
    );
    assert_eq!(
        err("$FOO bar\n"),
        "db.example.org:1 - unknown directive \"$FOO\""
    );
    assert_eq!(
        err("\"a\" 60 A 192.0.2.1\n"),
        "db.example.org:1 - bad owner name \"a\""
    );
    assert_eq!(
        err("a..b 60 A 192.0.2.1\n"),
        "db.example.org:1 - bad owner name \"a..b\": empty label"
    );
}

#[test]
fn out_of_zone() {
    assert_eq!(
        err("www.example.com. 60 A 192.0.2.1\n"),
        "db.example.org:1 - out of zone data \"www.example.com.\""
    );
    assert_eq!(
        err("$ORIGIN org.\nx 60 A 192.0.2.1\n"),
        "db.example.org:2 - out of zone data \"x.org.\""
    );
    assert_eq!(
        err("xexample.org. 60 A 192.0.2.1\n"),
        "db.example.org:1 - out of zone data \"xexample.org.\""
    );
    // Case-insensitive, at or below the origin.
    let p = zone("EXAMPLE.ORG. 60 A 192.0.2.1\nA.b.Example.Org. 60 A 192.0.2.2\n");
    assert_eq!(p.records.len(), 2);
    // The root zone holds anything.
    assert!(parse_str("a.b. 60 A 192.0.2.1\n", &[0], Path::new("root")).is_ok());
}

#[test]
fn io_error_of_the_zone_file() {
    let d = temp_dir("missing");
    let _c = Cleanup(d.clone());
    let f = d.join("nope");
    let e = parse_file(&f, ORG).unwrap_err();
    assert_eq!(e.line, 1);
    assert_eq!(e.file, f);
    assert!(
        e.to_string()
            .starts_with(&format!("{}:1 - cannot read the zone file: ", f.display())),
        "{e}"
    );
}

// ---- $INCLUDE ----

#[test]
fn include_with_origin_and_relative_paths() {
    let d = temp_dir("include");
    let _c = Cleanup(d.clone());
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::write(
        d.join("db"),
        "$TTL 300\n\
         @ SOA ns h 1 2 3 4 5\n\
         $INCLUDE sub/hosts hosts\n\
         after A 192.0.2.9\n\
         \x20 AAAA ::9\n\
         $INCLUDE \"sub/plain\"\n",
    )
    .unwrap();
    // Relative to the including file's directory (sub/), not to the top file's.
    std::fs::write(
        d.join("sub/hosts"),
        "a A 192.0.2.1\n$TTL 60\n$ORIGIN elsewhere.example.org.\nb A 192.0.2.2\n$INCLUDE more\n",
    )
    .unwrap();
    std::fs::write(d.join("sub/more"), "\n\nc A 192.0.2.3\n").unwrap();
    std::fs::write(d.join("sub/plain"), "p 1 TXT x\n").unwrap();
    let p = parse_file(&d.join("db"), ORG).unwrap();
    let got: Vec<(Vec<u8>, u32)> = p
        .records
        .iter()
        .map(|r| (r.owner.to_vec(), r.ttl))
        .collect();
    assert_eq!(
        got,
        [
            (ORG.to_vec(), 300),
            (w("a.hosts.example.org."), 300),
            (w("b.elsewhere.example.org."), 60),
            (w("c.elsewhere.example.org."), 60),
            // Neither the included $ORIGIN nor its $TTL leak back; the last owner is
            // the includer's own.
            (w("after.example.org."), 300),
            (w("after.example.org."), 300),
            (w("p.example.org."), 1),
        ]
    );
    assert_eq!(
        p.files,
        [
            d.join("db"),
            d.join("sub/hosts"),
            d.join("sub/more"),
            d.join("sub/plain")
        ]
    );
    assert_eq!(p.locate(0), format!("{}:2", d.join("db").display()));
    assert_eq!(p.locate(1), format!("{}:1", d.join("sub/hosts").display()));
    assert_eq!(p.locate(3), format!("{}:3", d.join("sub/more").display()));
    assert_eq!(p.locate(5), format!("{}:5", d.join("db").display()));
    assert_eq!(p.pos[6], Pos { file: 3, line: 1 });
}

#[test]
fn include_errors() {
    let d = temp_dir("include-errors");
    let _c = Cleanup(d.clone());
    std::fs::write(d.join("db"), "\n$INCLUDE x\n").unwrap();
    assert_eq!(
        parse_file(&d.join("db"), ORG).unwrap_err().to_string(),
        format!(
            "{}:2 - $INCLUDE: no such file \"x\"",
            d.join("db").display()
        )
    );
    // An error inside an included file names that file and line.
    std::fs::write(d.join("db"), "$INCLUDE bad\n").unwrap();
    std::fs::write(d.join("bad"), "a 60 A 192.0.2.1\nb 60 A 1.2.3\n").unwrap();
    assert_eq!(
        parse_file(&d.join("db"), ORG).unwrap_err().to_string(),
        format!("{}:2 - bad A record \"1.2.3\"", d.join("bad").display())
    );
    // A loop through two files.
    std::fs::write(d.join("db"), "$INCLUDE one\n").unwrap();
    std::fs::write(d.join("one"), "a 60 A 192.0.2.1\n$INCLUDE db\n").unwrap();
    assert_eq!(
        parse_file(&d.join("db"), ORG).unwrap_err().to_string(),
        format!(
            "{}:2 - $INCLUDE loop: \"db\" is already being read",
            d.join("one").display()
        )
    );
    // Depth: eight nested files are one too many (miekg's limit of 7).
    for i in 0..9 {
        std::fs::write(d.join(format!("n{i}")), format!("$INCLUDE n{}\n", i + 1)).unwrap();
    }
    std::fs::write(d.join("n9"), "a 60 A 192.0.2.1\n").unwrap();
    let e = parse_file(&d.join("n0"), ORG).unwrap_err();
    assert_eq!(e.message, "too deeply nested $INCLUDE");
    assert_eq!(e.file, d.join("n7"));
    std::fs::write(d.join("n2"), "a 60 A 192.0.2.1\n").unwrap();
    assert_eq!(parse_file(&d.join("n0"), ORG).unwrap().records.len(), 1);
    assert_eq!(
        err("$INCLUDE\n"),
        "db.example.org:1 - $INCLUDE needs a file name"
    );
    assert_eq!(
        err("$INCLUDE a b. c\n"),
        "db.example.org:1 - garbage after $INCLUDE: \"c\""
    );
    // parse_str resolves against its file's directory.
    std::fs::write(d.join("inc"), "i 60 A 192.0.2.1\n").unwrap();
    let p = parse_str("$INCLUDE inc\n", ORG, &d.join("virtual")).unwrap();
    assert_eq!(&*p.records[0].owner, w("i.example.org."));
}

// ---- $GENERATE ----

#[test]
fn generate_forms() {
    let p = zone("$GENERATE 1-3 host-$ A 192.0.2.$\n");
    let got: Vec<(Vec<u8>, Vec<u8>, u32)> = p
        .records
        .iter()
        .map(|r| (r.owner.to_vec(), r.rdata.to_vec(), r.ttl))
        .collect();
    assert_eq!(
        got,
        [
            (w("host-1.example.org."), vec![192, 0, 2, 1], 3600),
            (w("host-2.example.org."), vec![192, 0, 2, 2], 3600),
            (w("host-3.example.org."), vec![192, 0, 2, 3], 3600),
        ]
    );
    assert!(p.pos.iter().all(|p| p.line == 1));
}

#[test]
fn generate_details() {
    let root = |t: &str| parse_str(t, &[0], Path::new(FILE));
    let p = root(
        "$ORIGIN 2.0.192.in-addr.arpa.\n$GENERATE 0-8/4 $ 300 IN PTR host${10,3,x}.example.org.\n",
    )
    .unwrap();
    let got: Vec<(Vec<u8>, Vec<u8>, u32)> = p
        .records
        .iter()
        .map(|r| (r.owner.to_vec(), r.rdata.to_vec(), r.ttl))
        .collect();
    assert_eq!(
        got,
        [
            (w("0.2.0.192.in-addr.arpa."), w("host00a.example.org."), 300),
            (w("4.2.0.192.in-addr.arpa."), w("host00e.example.org."), 300),
            (w("8.2.0.192.in-addr.arpa."), w("host012.example.org."), 300),
        ]
    );
    // Class before TTL, `\$` and `$$` literal, quoted RDATA kept.
    let p = zone("$GENERATE 7-7 t$ IN 60 TXT \"cost \\$$ and $$\" x${0,2}\n");
    assert_eq!(&*p.records[0].owner, w("t7.example.org."));
    assert_eq!(p.records[0].ttl, 60);
    assert_eq!(&*p.records[0].rdata, b"\x0dcost $7 and $\x03x07");
    // Default TTL is miekg's 3600 whatever $TTL says; the file's last owner and TTL
    // are untouched.
    let p = zone(
        "$TTL 300\na A 192.0.2.1\n$GENERATE 1-2 g$ 10 A 192.0.2.$\n  AAAA ::1\nb A 192.0.2.2\n$GENERATE 1-1 h$ A 192.0.2.1\n",
    );
    let got: Vec<(Vec<u8>, u32)> = p
        .records
        .iter()
        .map(|r| (r.owner.to_vec(), r.ttl))
        .collect();
    assert_eq!(
        got,
        [
            (w("a.example.org."), 300),
            (w("g1.example.org."), 10),
            (w("g2.example.org."), 10),
            (w("a.example.org."), 300),
            (w("b.example.org."), 300),
            (w("h1.example.org."), 3600),
        ]
    );
    // Spanning lines in parentheses, with a comment.
    let p = zone("$GENERATE 1-2 m$ MX ( 10 ; pref\n mail$ )\n");
    let mut mx = vec![0, 10];
    mx.extend(w("mail2.example.org."));
    assert_eq!(&*p.records[1].rdata, mx);
}

#[test]
fn generate_errors() {
    assert_eq!(
        err("$GENERATE 1-x a$ A 192.0.2.$\n"),
        "db.example.org:1 - bad stop in $GENERATE range: \"1-x\""
    );
    assert_eq!(
        err("$GENERATE 5-1 a$ A 192.0.2.$\n"),
        "db.example.org:1 - bad range in $GENERATE range: \"5-1\""
    );
    assert_eq!(
        err("$GENERATE 1-2/0 a$ A 192.0.2.$\n"),
        "db.example.org:1 - bad step in $GENERATE range: \"1-2/0\""
    );
    assert_eq!(
        err("$GENERATE 1-2\n"),
        "db.example.org:1 - $GENERATE needs a range, an owner, a type and RDATA"
    );
    assert_eq!(
        err("$GENERATE\n"),
        "db.example.org:1 - $GENERATE needs a range, an owner, a type and RDATA"
    );
    assert_eq!(
        err("\n$GENERATE 1-2 a${0,0,q} A 192.0.2.1\n"),
        "db.example.org:2 - bad base in $GENERATE"
    );
    assert_eq!(
        err("$GENERATE 0-1 a${-1} A 192.0.2.1\n"),
        "db.example.org:1 - bad offset in $GENERATE"
    );
    assert_eq!(
        err("$GENERATE 250-260 a$ A 192.0.2.$\n"),
        "db.example.org:1 - $GENERATE: bad A record \"192.0.2.256\""
    );
    assert_eq!(
        err("$GENERATE 1-2 $GENERATE 1-2 a A 192.0.2.1\n"),
        "db.example.org:1 - $GENERATE: bad TTL \"1-2\"",
        "the template's $ is expanded: no nested directive",
    );
    assert_eq!(
        err("$GENERATE 1-2 \\$x A 192.0.2.1\n"),
        "db.example.org:1 - $GENERATE: no owner name in \"$x A 192.0.2.1\""
    );
}

// ---- parse_rr ----

#[test]
fn parse_rr_forms() {
    let r = parse_rr("www 60 IN A 10.0.0.1", ORG, 5).unwrap();
    assert_eq!(
        r,
        Record {
            owner: w("www.example.org.").into(),
            rtype: 1,
            class: 1,
            ttl: 60,
            rdata: vec![10, 0, 0, 1].into(),
        }
    );
    let r = parse_rr("www.example.com. IN CNAME target", ORG, 5).unwrap();
    assert_eq!(
        (r.ttl, &*r.owner),
        (5, &w("www.example.com.")[..]),
        "default TTL, no zone bound"
    );
    assert_eq!(&*r.rdata, w("target.example.org."));
    let r = parse_rr("@ MX 10 @\n", ORG, 7).unwrap();
    assert_eq!(&*r.owner, ORG);
    assert_eq!(parse_rr("", ORG, 5).unwrap_err(), "no record");
    assert_eq!(parse_rr("; nothing\n", ORG, 5).unwrap_err(), "no record");
    assert_eq!(
        parse_rr("a A 10.0.0.1\nb A 10.0.0.2", ORG, 5).unwrap_err(),
        "more than one record"
    );
    assert_eq!(
        parse_rr("$INCLUDE /etc/passwd", ORG, 5).unwrap_err(),
        "$INCLUDE is not allowed here"
    );
    assert_eq!(
        parse_rr("$GENERATE 1-2 a$ A 10.0.0.$", ORG, 5).unwrap_err(),
        "$GENERATE is not allowed here"
    );
    assert_eq!(
        parse_rr("a 60 IN A 10.0.0", ORG, 5).unwrap_err(),
        "bad A record \"10.0.0\""
    );
    assert!(
        parse_rr("a A 10.0.0.1", b"\x07example", 5).is_err(),
        "the origin must be absolute"
    );
    let r = parse_rr("$TTL 9\na A 10.0.0.1", ORG, 5).unwrap();
    assert_eq!(r.ttl, 9);
}

#[test]
fn parse_error_display_and_locate() {
    let e = ParseError {
        file: PathBuf::from("db.example.org"),
        line: 12,
        message: "bad A record \"1.2.3\"".into(),
    };
    assert_eq!(e.to_string(), "db.example.org:12 - bad A record \"1.2.3\"");
    let p = zone("\n\na 60 A 192.0.2.1\n");
    assert_eq!(p.locate(0), "db.example.org:3");
}

#[test]
fn bom_and_crlf() {
    let p = zone("\u{feff}a 60 A 192.0.2.1\r\nb 60 TXT \"x\"\r\n");
    assert_eq!(&*p.records[0].owner, w("a.example.org."));
    assert_eq!(&*p.records[1].rdata, b"\x01x");
}

#[test]
fn more_types_by_hand() {
    let two = |a: &str, b: &str| {
        let mut v = w(a);
        v.extend(w(b));
        v
    };
    assert_eq!(
        ours("RP", "admin.example.org. txt"),
        two("admin.example.org.", "txt.example.org.")
    );
    assert_eq!(
        ours("MINFO", "a b"),
        two("a.example.org.", "b.example.org.")
    );
    let mut px = hex("000a");
    px.extend(two("map822.example.org.", "mapx400.example.org."));
    assert_eq!(ours("PX", "10 map822 mapx400"), px);
    let mut kx = hex("0005");
    kx.extend(w("kx.example.org."));
    assert_eq!(ours("KX", "5 kx"), kx);
    assert_eq!(ours("NSAPPTR", "foo."), w("foo."));
    assert_eq!(ours("X25", "311061700956"), b"\x0c311061700956");
    assert_eq!(
        ours("ISDN", "150862028003217 004"),
        b"\x0f150862028003217\x03004"
    );
    assert_eq!(
        ours("GPOS", "-32.6882 116.8652 10.0"),
        b"\x08-32.6882\x08116.8652\x0410.0"
    );
    assert_eq!(
        ours("IPSECKEY", "10 1 2 192.0.2.38 AQID"),
        hex("0a 01 02 c0000226 010203")
    );
    assert_eq!(
        ours("KEY", "256 3 13 AQID"),
        ours("DNSKEY", "256 3 13 AQID")
    );
    assert_eq!(
        ours(
            "SIG",
            "A 13 2 3600 20240112214435 20240111144936 4660 @ AQID"
        ),
        ours(
            "RRSIG",
            "A 13 2 3600 20240112214435 20240111144936 4660 @ AQID"
        )
    );
    assert_eq!(
        ours("SVCB", "1 svc mandatory=alpn alpn=h2 no-default-alpn"),
        {
            let mut v = hex("0001");
            v.extend(w("svc.example.org."));
            v.extend(hex("0000 0002 0001  0001 0003 026832  0002 0000"));
            v
        }
    );
    assert_eq!(
        ours("LOC", "42 21 54 N 71 06 18 W -24m 30m"),
        hex("00 33 16 13 89172dd0 70be15f0 00988d20"),
        "RFC 1876's example"
    );
    assert_eq!(
        ours(
            "LOC",
            "52 22 23.000 N 4 53 32.000 E -2.00m 0.00m 10000m 10m"
        ),
        hex("00 00 16 13 8b3cf018 810cbce0 009895b8")
    );
    assert_eq!(
        ours("LOC", "0 N 0 E 0"),
        hex("00 12 16 13 80000000 80000000 00989680")
    );
    assert!(parse_rr("x.example.org. LOC 90 30 N 0 E 0", ORG, 0).is_err());
    assert!(parse_rr("x.example.org. LOC 10 X 0 E 0", ORG, 0).is_err());
    assert_eq!(ours("CERT", "PGP 0 0 AQID"), hex("0003 0000 00 010203"));
    assert_eq!(
        ours("CERT", "1 12 RSASHA256 AQ ID"),
        hex("0001 000c 08 010203")
    );
    assert_eq!(ours("TALINK", "a. b"), two("a.", "b.example.org."));
    assert_eq!(ours("RKEY", "0 3 5 AQID"), ours("DNSKEY", "0 3 5 AQID"));
    assert!(parse_rr("x.example.org. GPOS a b c", ORG, 0).is_err());
    let e = parse_rr("x.example.org. 60 IN WKS 192.0.2.1 6 25", ORG, 0).unwrap_err();
    assert!(e.contains("write it as \\#"), "{e}");
}

#[test]
fn numeric_and_keyword_owners() {
    // The first token of a line is the owner, whatever it looks like.
    let p = parse_str(
        "$ORIGIN 2.0.192.in-addr.arpa.\n1 PTR host1.example.org.\n  3600 PTR alias.example.org.\nIN 60 IN A 192.0.2.1\nA A 192.0.2.2\n",
        &w("2.0.192.in-addr.arpa."),
        Path::new(FILE),
    )
    .unwrap();
    let o: Vec<Vec<u8>> = p.records.iter().map(|r| r.owner.to_vec()).collect();
    assert_eq!(
        o,
        [
            w("1.2.0.192.in-addr.arpa."),
            w("1.2.0.192.in-addr.arpa."),
            w("IN.2.0.192.in-addr.arpa."),
            w("A.2.0.192.in-addr.arpa."),
        ]
    );
    let t: Vec<u32> = p.records.iter().map(|r| r.ttl).collect();
    assert_eq!(t, [3600, 3600, 60, 60]);
}

#[test]
fn wildcards_and_empty_zone() {
    let p = zone("* 60 A 192.0.2.1\n*.sub 60 MX 10 *.example.org.\n");
    assert_eq!(&*p.records[0].owner, w("*.example.org."));
    assert_eq!(&*p.records[1].owner, w("*.sub.example.org."));
    assert_eq!(&p.records[1].rdata[2..], w("*.example.org."));
    let p = zone("; nothing but a comment\n\n");
    assert!(p.records.is_empty() && p.pos.is_empty());
    assert_eq!(p.files, [PathBuf::from(FILE)]);
}
