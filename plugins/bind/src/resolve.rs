//! Address resolution for the `bind` plugin: `bind ADDRESS|IFACE ... { except ADDRESS|IFACE ... }`.
//!
//! Mirrors CoreDNS's `plugin/bind/setup.go` (`listIP`): an argument that names an interface of the
//! host stands for all its addresses at the time of (re)load, otherwise it must be an IP address.
//! Differences, all deliberate: IPv6 link-local addresses of an interface are skipped (a listener
//! on them needs a scope id, which an `IpAddr` cannot carry; CoreDNS 1.8–1.11 skipped them too,
//! newer CoreDNS adds them as `fe80::…%iface`); an explicit `ADDR%zone` is refused with a reason;
//! host names are not resolved; duplicates are dropped instead of failing later with
//! `… it is already defined`; an empty result is an error instead of a block that silently
//! listens nowhere. Errors are CoreDNS's texts without the `plugin/bind: ` prefix it adds.

use std::net::IpAddr;

use ringdns_plugin::quote::go_quote;

/// Resolves `bind` arguments (IP addresses or interface names) to the addresses to listen on,
/// minus the `except` ones, in order and without duplicates.
///
/// Interface names are looked up in the host's interface table on every call, so a reload picks
/// up address changes. `specs` are the arguments of one `bind` directive and `except` those of its
/// `except` line (empty when there is none).
pub fn resolve(specs: &[String], except: &[String]) -> Result<Vec<IpAddr>, String> {
    resolve_with(specs, except, &interface_table())
}

use ringdns_plugin::interfaces::Row as IfRow;

fn interface_table() -> Result<Vec<IfRow>, String> {
    ringdns_plugin::interfaces::rows()
}

fn resolve_with(
    specs: &[String],
    except: &[String],
    table: &Result<Vec<IfRow>, String>,
) -> Result<Vec<IpAddr>, String> {
    if specs.is_empty() {
        return Err("at least one address or interface name is expected".to_string());
    }
    let wanted = list_ip(specs, table)?;
    let excluded = list_ip(except, table)?;
    let mut out: Vec<IpAddr> = Vec::new();
    for ip in wanted {
        if !excluded.contains(&ip) && !out.contains(&ip) {
            out.push(ip);
        }
    }
    if out.is_empty() {
        let names: Vec<String> = specs.iter().map(|s| go_quote(s)).collect();
        return Err(format!(
            "no address left to bind to from {} (all excluded by except, or the interfaces have no usable address)",
            names.join(" ")
        ));
    }
    Ok(out)
}

/// CoreDNS's `listIP`: each argument is an interface name (checked first) or an IP address.
fn list_ip(args: &[String], table: &Result<Vec<IfRow>, String>) -> Result<Vec<IpAddr>, String> {
    let mut all = Vec::new();
    for arg in args {
        if let Ok(rows) = table
            && is_interface(arg, rows)
        {
            let label_prefix = format!("{arg}:");
            all.extend(
                rows.iter()
                    // IPv4 aliases carry their label (`eth0:1`) as name in getifaddrs; Go lists
                    // them under the interface, so do the same.
                    .filter(|r| r.name == *arg || r.name.starts_with(&label_prefix))
                    .filter_map(|r| r.addr)
                    .filter(|ip| !is_ipv6_link_local(ip)),
            );
            continue;
        }
        match arg.parse::<IpAddr>() {
            Ok(ip) => all.push(ip),
            Err(_) => return Err(not_valid(arg, table)),
        }
    }
    Ok(all)
}

/// A real interface name: Linux forbids `:` in them, so a label like `eth0:1` is not one (as in
/// Go's `net.Interfaces`). An interface without any IP address still has its link-layer row.
fn is_interface(arg: &str, rows: &[IfRow]) -> bool {
    !arg.contains(':') && rows.iter().any(|r| r.name == arg)
}

fn is_ipv6_link_local(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(_) => false,
        IpAddr::V6(a) => {
            let s0 = a.segments()[0];
            // fe80::/10 unicast, ff02::/16-style link-local multicast (Go's IsLinkLocal*)
            (s0 & 0xffc0) == 0xfe80 || (s0 & 0xff0f) == 0xff02
        }
    }
}

fn not_valid(arg: &str, table: &Result<Vec<IfRow>, String>) -> String {
    let base = format!(
        "not a valid IP address or interface name: {}",
        go_quote(arg)
    );
    if let Some((addr, _zone)) = arg.split_once('%')
        && addr.parse::<std::net::Ipv6Addr>().is_ok()
    {
        return format!("{base} (IPv6 zone identifiers are not supported)");
    }
    match table {
        Err(e) => {
            format!("{base} (failed to get interfaces list, cannot bind by interface name: {e})")
        }
        Ok(_) => base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn ips(v: &[&str]) -> Vec<IpAddr> {
        v.iter().map(|x| x.parse().unwrap()).collect()
    }

    fn row(name: &str, addr: Option<&str>) -> IfRow {
        IfRow {
            name: name.to_string(),
            addr: addr.map(|a| a.parse().unwrap()),
        }
    }

    /// A host with lo, eth0 (with an IPv4 alias label and an IPv6 link-local) and an
    /// address-less dummy0, in getifaddrs order (link rows first, then IPv4, then IPv6).
    fn table() -> Result<Vec<IfRow>, String> {
        Ok(vec![
            row("lo", None),
            row("eth0", None),
            row("dummy0", None),
            row("lo", Some("127.0.0.1")),
            row("eth0", Some("192.0.2.2")),
            row("eth0:1", Some("192.0.2.3")),
            row("lo", Some("::1")),
            row("eth0", Some("fd00::2")),
            row("eth0", Some("fe80::fc:ff:fe00:1")),
        ])
    }

    fn ok(specs: &[&str], except: &[&str]) -> Vec<IpAddr> {
        resolve_with(&s(specs), &s(except), &table()).unwrap()
    }

    fn fail(specs: &[&str], except: &[&str]) -> String {
        resolve_with(&s(specs), &s(except), &table()).unwrap_err()
    }

    #[test]
    fn ip_arguments_in_order() {
        assert_eq!(ok(&["1.2.3.4"], &[]), ips(&["1.2.3.4"]));
        assert_eq!(ok(&["1.2.3.4", "::5"], &[]), ips(&["1.2.3.4", "::5"]));
        assert_eq!(
            ok(&["::1", "1.2.3.4", "::5", "127.9.9.0"], &[]),
            ips(&["::1", "1.2.3.4", "::5", "127.9.9.0"])
        );
        // a link-local address without zone is taken as given, as CoreDNS does
        assert_eq!(ok(&["fe80::1"], &[]), ips(&["fe80::1"]));
    }

    #[test]
    fn invalid_arguments() {
        assert_eq!(
            fail(&["1.2.3.invalid"], &[]),
            r#"not a valid IP address or interface name: "1.2.3.invalid""#
        );
        assert_eq!(
            fail(&["::1", "1.2.3.4", "noone"], &[]),
            r#"not a valid IP address or interface name: "noone""#
        );
        assert_eq!(
            fail(&["010.0.0.1"], &[]),
            r#"not a valid IP address or interface name: "010.0.0.1""#
        );
        // labels are not interfaces
        assert_eq!(
            fail(&["eth0:1"], &[]),
            r#"not a valid IP address or interface name: "eth0:1""#
        );
        assert_eq!(
            fail(&["lo"], &["nope"]),
            r#"not a valid IP address or interface name: "nope""#
        );
    }

    #[test]
    fn zone_identifiers_refused() {
        assert_eq!(
            fail(&["fe80::1%eth0"], &[]),
            r#"not a valid IP address or interface name: "fe80::1%eth0" (IPv6 zone identifiers are not supported)"#
        );
    }

    #[test]
    fn no_arguments() {
        assert_eq!(
            fail(&[], &[]),
            "at least one address or interface name is expected"
        );
    }

    #[test]
    fn interfaces_expand_to_their_addresses() {
        assert_eq!(
            ok(&["1.2.3.4", "lo"], &[]),
            ips(&["1.2.3.4", "127.0.0.1", "::1"])
        );
        // alias label included, IPv6 link-local skipped
        assert_eq!(
            ok(&["eth0"], &[]),
            ips(&["192.0.2.2", "192.0.2.3", "fd00::2"])
        );
    }

    #[test]
    fn except_removes_ips_and_interfaces() {
        assert_eq!(ok(&["lo"], &["127.0.0.1"]), ips(&["::1"]));
        assert_eq!(
            ok(&["lo", "eth0"], &["lo"]),
            ips(&["192.0.2.2", "192.0.2.3", "fd00::2"])
        );
        // compared as addresses, not as text
        assert_eq!(ok(&["lo"], &["0:0::1"]), ips(&["127.0.0.1"]));
        // excluding something not bound is fine
        assert_eq!(ok(&["lo"], &["10.9.9.9"]), ips(&["127.0.0.1", "::1"]));
    }

    #[test]
    fn duplicates_dropped_in_order() {
        assert_eq!(
            ok(&["127.0.0.1", "lo", "lo"], &[]),
            ips(&["127.0.0.1", "::1"])
        );
        assert_eq!(ok(&["::1", "0::1"], &[]), ips(&["::1"]));
    }

    #[test]
    fn empty_result_is_an_error() {
        assert_eq!(
            fail(&["lo"], &["lo"]),
            r#"no address left to bind to from "lo" (all excluded by except, or the interfaces have no usable address)"#
        );
        // an existing interface without addresses is not "not a valid … name"
        assert_eq!(
            fail(&["dummy0"], &[]),
            r#"no address left to bind to from "dummy0" (all excluded by except, or the interfaces have no usable address)"#
        );
    }

    #[test]
    fn interface_table_failure() {
        let broken: Result<Vec<IfRow>, String> = Err("EPERM: Operation not permitted".into());
        assert_eq!(
            resolve_with(&s(&["127.0.0.1"]), &[], &broken),
            Ok(ips(&["127.0.0.1"]))
        );
        assert_eq!(
            resolve_with(&s(&["lo"]), &[], &broken).unwrap_err(),
            r#"not a valid IP address or interface name: "lo" (failed to get interfaces list, cannot bind by interface name: EPERM: Operation not permitted)"#
        );
    }

    #[test]
    fn real_loopback_interface() {
        let got = resolve(&s(&["lo"]), &[]).unwrap();
        assert_eq!(got[0], "127.0.0.1".parse::<IpAddr>().unwrap());
        assert!(got.iter().all(|ip| ip.is_loopback()), "{got:?}");
        let v6: Vec<&IpAddr> = got.iter().filter(|ip| ip.is_ipv6()).collect();
        assert!(v6.len() <= 1, "{got:?}");
        assert_eq!(
            resolve(&s(&["lo"]), &s(&["lo"])).unwrap_err(),
            r#"no address left to bind to from "lo" (all excluded by except, or the interfaces have no usable address)"#
        );
        let rest = resolve(&s(&["lo"]), &s(&["127.0.0.1"]));
        if v6.is_empty() {
            assert!(rest.is_err(), "{rest:?}");
        } else {
            assert_eq!(rest.unwrap(), v6.into_iter().copied().collect::<Vec<_>>());
        }
    }

    #[test]
    fn real_unknown_interface() {
        assert_eq!(
            resolve(&s(&["no-such-if0"]), &[]).unwrap_err(),
            r#"not a valid IP address or interface name: "no-such-if0""#
        );
    }
}
