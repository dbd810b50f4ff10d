use super::*;
use ringdns_testkit::config;
use synth::embed;

fn parsed(text: &str) -> Result<Config, String> {
    config::<Dns64>(text).map(|(_, c)| c)
}

#[test]
fn setup_reads_the_prefix_and_options_as_coredns() {
    let c = parsed(". {\n dns64\n}\n").unwrap();
    assert_eq!((c.prefix.to_string(), c.len), ("64:ff9b::".into(), 96));
    assert!(!c.translate_all && !c.allow_ipv4);
    let c = parsed(". {\n dns64 64:1337::/96\n}\n").unwrap();
    assert_eq!(c.prefix.to_string(), "64:1337::");
    let c =
        parsed(". {\n dns64 {\n  prefix 2001:db8:1::1/48\n  translate_all\n  allow_ipv4\n }\n}\n")
            .unwrap();
    assert_eq!((c.prefix.to_string(), c.len), ("2001:db8:1::".into(), 48));
    assert!(c.translate_all && c.allow_ipv4);
    let p = "Corefile:2 - Error during parsing: plugin/dns64: ";
    for (line, why) in [
        (
            "dns64 64:ff9b::/100",
            "invalid prefix length \"64:ff9b::/100\"",
        ),
        (
            "dns64 64:ff9b::/28",
            "invalid prefix length \"64:ff90::/28\"",
        ),
        (
            "dns64 64:ff9b::/95",
            "invalid prefix length \"64:ff9b::/95\"",
        ),
        (
            "dns64 10.0.0.0/24",
            "invalid netmask 32 IPv6 address: \"10.0.0.0/24\"",
        ),
        ("dns64 nonsense", "invalid CIDR address: nonsense"),
        ("dns64 {\n  bogus\n }", "unknown property 'bogus'"),
    ] {
        let e = parsed(&format!(". {{\n {line}\n}}\n")).unwrap_err();
        let line_no = if line.contains('\n') { 3 } else { 2 };
        let want = format!(
            "{}{why}",
            p.replace("Corefile:2", &format!("Corefile:{line_no}"))
        );
        assert_eq!(e, want, "{line}");
    }
    assert!(
        parsed(". {\n dns64 a b\n}\n")
            .unwrap_err()
            .contains("Wrong argument count")
    );
}

#[test]
fn addresses_are_embedded_as_rfc_6052_shows() {
    // RFC 6052 §2.4's table: 192.0.2.33 under each prefix length.
    let v4 = [192, 0, 2, 33];
    for (prefix, len, want) in [
        ("2001:db8::", 32, "2001:db8:c000:221::"),
        ("2001:db8:100::", 40, "2001:db8:1c0:2:21::"),
        ("2001:db8:122::", 48, "2001:db8:122:c000:2:2100::"),
        ("2001:db8:122:300::", 56, "2001:db8:122:3c0:0:221::"),
        ("2001:db8:122:344::", 64, "2001:db8:122:344:c0:2:2100:0"),
        ("2001:db8:122:344::", 96, "2001:db8:122:344::c000:221"),
        ("64:ff9b::", 96, "64:ff9b::c000:221"),
    ] {
        let got = embed(prefix.parse().unwrap(), len, v4);
        assert_eq!(got, want.parse::<Ipv6Addr>().unwrap(), "/{len}");
    }
}
