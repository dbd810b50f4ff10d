//! `secondary [ZONES...] { transfer from ADDRESS...; fallthrough [ZONES...] }`, as
//! CoreDNS's `secondaryParse` and `parse.TransferIn` read it, with its error messages.
//! Parsing starts nothing: [`crate::Secondary::setup`] starts the zones' threads.

use ringdns_plugin::Fallthrough;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::normalize::normalize_exact;
use std::net::{IpAddr, SocketAddr};

/// The port of a primary given without one.
const DNS_PORT: u16 = 53;

/// One zone as the Corefile gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneSpec {
    /// The origin, normalised (`example.org.`).
    pub name: String,
    /// The primaries, in the order they are tried.
    pub primaries: Vec<SocketAddr>,
}

/// What the `secondary` lines of a block say.
#[derive(Debug, Default)]
pub struct Parsed {
    /// The zones, in Corefile order.
    pub zones: Vec<ZoneSpec>,
    /// Which NXDOMAIN answers go on to the next plugin.
    pub fall: Fallthrough,
}

/// Reads every `secondary` line of a block; `block_zones` are the block's zones, for a
/// line that names none.
pub fn parse(d: &mut Dispenser<'_>, block_zones: &[String]) -> Result<Parsed, Error> {
    let mut out = Parsed::default();
    while d.next() {
        let args = d.remaining_args();
        let origins = if args.is_empty() {
            block_zones.to_vec()
        } else {
            let mut v = Vec::new();
            for a in &args {
                v.extend(normalize_exact(a).map_err(|e| d.plugin_err("secondary", e))?);
            }
            v
        };
        let mut primaries = Vec::new();
        let mut has_transfer = false;
        while d.next_block() {
            match d.val() {
                "transfer" => {
                    primaries.extend(transfer_in(d)?);
                    has_transfer = true;
                }
                "fallthrough" => {
                    let a = d.remaining_args();
                    out.fall = Fallthrough::parse(&a).map_err(|e| d.plugin_err("secondary", e))?;
                }
                "catalog" => {
                    return Err(d.plugin_err(
                        "secondary",
                        "catalog zones (RFC 9432) are not supported by ringdns",
                    ));
                }
                other => return Err(d.err(&format!("unknown property '{other}'"))),
            }
        }
        if !has_transfer {
            return Err(d.err("secondary zones require a transfer from property"));
        }
        for name in origins {
            out.zones.push(ZoneSpec {
                name,
                primaries: primaries.clone(),
            });
        }
    }
    Ok(out)
}

/// `transfer from ADDRESS...` (CoreDNS's `parse.TransferIn`).
fn transfer_in(d: &mut Dispenser<'_>) -> Result<Vec<SocketAddr>, Error> {
    if !d.next_arg() {
        return Err(d.arg_err());
    }
    if d.val() != "from" {
        return Err(d.err(&format!("unknown property {}", d.val())));
    }
    let froms = d.remaining_args();
    if froms.is_empty() {
        return Err(d.arg_err());
    }
    froms
        .iter()
        .map(|f| {
            if f == "*" {
                return Err(d.plugin_err("secondary", "can't use '*' in transfer from"));
            }
            host_port(f).map_err(|e| d.plugin_err("secondary", e))
        })
        .collect()
}

/// An IP address with an optional port (53 when absent), as CoreDNS's `parse.HostPort`
/// reads it: `192.0.2.1`, `192.0.2.1:5300`, `::1`, `[::1]:5300`.
fn host_port(s: &str) -> Result<SocketAddr, String> {
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    let bare = s
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(s);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, DNS_PORT));
    }
    // HOST:PORT with a host that is no address, or an address with a bad port.
    match s.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') || host.starts_with('[') => {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            if host.parse::<IpAddr>().is_err() {
                Err(format!("must specify an IP address: `{host}'"))
            } else {
                Err(format!("invalid port {port:?} in `{s}'"))
            }
        }
        _ => Err(format!("must specify an IP address: `{s}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::corefile::parse as parse_corefile;

    /// Parses the first directive of a one-block Corefile as setup would, the block's
    /// zone being example.org.
    fn run(text: &str) -> Result<Parsed, String> {
        let cf = parse_corefile("Corefile", text, &|n| n == "secondary").unwrap();
        let mut d = Dispenser::new(&cf.blocks[0].directives[0].tokens);
        parse(&mut d, &["example.org.".to_string()]).map_err(|e| e.to_string())
    }

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn zones_come_from_the_line_or_the_block_and_ports_default_to_53() {
        let p = run("example.org {\n secondary {\n  transfer from 127.0.0.1\n }\n}\n").unwrap();
        assert_eq!(
            p.zones,
            [ZoneSpec {
                name: "example.org.".into(),
                primaries: vec![addr("127.0.0.1:53")]
            }]
        );
        assert!(p.fall.is_off());
        let p = run(
            ". {\n secondary EXAMPLE.org example.net {\n  transfer from 127.0.0.1:5300 ::1\n  \
             transfer from [::1]:54\n  fallthrough\n }\n}\n",
        )
        .unwrap();
        assert_eq!(p.zones.len(), 2);
        assert_eq!(p.zones[0].name, "example.org.");
        assert_eq!(p.zones[1].name, "example.net.");
        assert_eq!(
            p.zones[1].primaries,
            [addr("127.0.0.1:5300"), addr("[::1]:53"), addr("[::1]:54")]
        );
        assert!(!p.fall.is_off());
    }

    #[test]
    fn errors_are_coredns_s() {
        let e = run("example.org {\n secondary\n}\n").unwrap_err();
        assert_eq!(
            e,
            "Corefile:2 - Error during parsing: secondary zones require a transfer from property"
        );
        let e = run("example.org {\n secondary {\n  fallthrough\n }\n}\n").unwrap_err();
        assert!(
            e.contains("secondary zones require a transfer from property"),
            "{e}"
        );
        let e = run("example.org {\n secondary {\n  transfer\n }\n}\n").unwrap_err();
        assert_eq!(
            e,
            "Corefile:3 - Error during parsing: Wrong argument count or unexpected line ending after 'transfer'"
        );
        let e = run("example.org {\n secondary {\n  transfer to 127.0.0.1\n }\n}\n").unwrap_err();
        assert_eq!(e, "Corefile:3 - Error during parsing: unknown property to");
        let e = run("example.org {\n secondary {\n  transfer from\n }\n}\n").unwrap_err();
        assert!(e.contains("Wrong argument count"), "{e}");
        let e = run("example.org {\n secondary {\n  transfer from *\n }\n}\n").unwrap_err();
        assert!(
            e.ends_with("plugin/secondary: can't use '*' in transfer from"),
            "{e}"
        );
        let e = run("example.org {\n secondary {\n  transfer from ns1.example.net\n }\n}\n")
            .unwrap_err();
        assert!(
            e.ends_with("plugin/secondary: must specify an IP address: `ns1.example.net'"),
            "{e}"
        );
        let e = run("example.org {\n secondary {\n  transfer from ns1:53\n }\n}\n").unwrap_err();
        assert!(e.ends_with("must specify an IP address: `ns1'"), "{e}");
        let e =
            run("example.org {\n secondary {\n  transfer from 127.0.0.1:x\n }\n}\n").unwrap_err();
        assert!(e.contains("invalid port"), "{e}");
        let e = run("example.org {\n secondary {\n  transfer from 127.0.0.1\n  upstream\n }\n}\n")
            .unwrap_err();
        assert_eq!(
            e,
            "Corefile:4 - Error during parsing: unknown property 'upstream'"
        );
        let e = run("example.org {\n secondary {\n  transfer from 127.0.0.1\n  catalog\n }\n}\n")
            .unwrap_err();
        assert!(
            e.contains("catalog zones (RFC 9432) are not supported"),
            "{e}"
        );
    }
}
