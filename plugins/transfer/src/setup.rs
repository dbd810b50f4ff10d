//! `transfer [ZONES...] { to ADDRESS...|*; source ADDRESS }`, as CoreDNS's `parseTransfer`
//! reads it.

use crate::Xfr;
use ringdns_plugin::BlockSetup;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::normalize::origins_from_args_or_block;
use std::net::{IpAddr, SocketAddr};

/// Who may transfer: everyone, or one address (its port is where NOTIFY goes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum To {
    /// `*`: anyone may transfer; no NOTIFY.
    Anyone,
    /// An address that may transfer and is notified.
    Addr(SocketAddr),
}

/// Reads every `transfer` line of a block.
pub fn parse(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Vec<Xfr>, Error> {
    let mut xfrs = Vec::new();
    while d.next() {
        let args = d.remaining_args();
        let zones = origins_from_args_or_block("transfer", &args, &block.zones);
        let mut to = Vec::new();
        let mut source = None;
        while d.next_block() {
            match d.val() {
                "to" => {
                    let hosts = d.remaining_args();
                    if hosts.is_empty() {
                        return Err(d.arg_err());
                    }
                    for h in &hosts {
                        to.push(parse_to(h).map_err(|e| d.plugin_err("transfer", e))?);
                    }
                }
                "source" => {
                    let a = d.remaining_args();
                    if a.len() != 1 {
                        return Err(d.arg_err());
                    }
                    if source.is_some() {
                        return Err(d.plugin_err("transfer", "source already specified"));
                    }
                    let ip = a[0].parse::<IpAddr>().map_err(|_| {
                        d.plugin_err("transfer", format!("invalid source address \"{}\"", a[0]))
                    })?;
                    source = Some(ip);
                }
                other => {
                    return Err(d.plugin_err("transfer", format!("unknown property \"{other}\"")));
                }
            }
        }
        if to.is_empty() {
            return Err(d.plugin_err("transfer", "'to' is required"));
        }
        let zones = zones
            .iter()
            .map(|z| ringdns_plugin::wire::name_to_wire(z).map(Vec::into_boxed_slice))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| d.plugin_err("transfer", e))?;
        xfrs.push(Xfr { zones, to, source });
    }
    Ok(xfrs)
}

/// `*`, `IP` or `IP:PORT` (`[IPv6]:PORT`), as CoreDNS's `parse.HostPort` with port 53.
fn parse_to(h: &str) -> Result<To, String> {
    if h == "*" {
        return Ok(To::Anyone);
    }
    if let Ok(a) = h.parse::<SocketAddr>() {
        return Ok(To::Addr(a));
    }
    if let Ok(ip) = h.parse::<IpAddr>() {
        return Ok(To::Addr(SocketAddr::new(ip, 53)));
    }
    Err(format!("must specify an IP address: `{h}'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_takes_an_ip_with_or_without_a_port_or_a_star() {
        assert_eq!(parse_to("*"), Ok(To::Anyone));
        assert_eq!(
            parse_to("192.0.2.1"),
            Ok(To::Addr("192.0.2.1:53".parse().unwrap()))
        );
        assert_eq!(
            parse_to("[2001:db8::1]:5300"),
            Ok(To::Addr("[2001:db8::1]:5300".parse().unwrap()))
        );
        assert_eq!(
            parse_to("2001:db8::1"),
            Ok(To::Addr("[2001:db8::1]:53".parse().unwrap()))
        );
        assert_eq!(
            parse_to("example.org"),
            Err("must specify an IP address: `example.org'".into())
        );
    }
}
