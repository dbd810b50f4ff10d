//! Parsing of the `forward` directive, mirroring CoreDNS's
//! `plugin/forward/setup.go`, `plugin/pkg/parse/host.go` and `plugin/pkg/tls`: the same
//! syntax, defaults, checks and error texts. Every error is a Corefile error at the token it
//! is about, its message prefixed `plugin/forward: ` as CoreDNS prefixes plugin errors.
//!
//! Where ringdns cannot do what CoreDNS does yet (DNS over HTTPS upstreams, upstreams given by
//! hostname), the Corefile is refused with a message saying so, rather than half-working.

use super::config::{ForwardConfig, HealthCheck, Policy, TlsSettings, Upstream, UpstreamProto};
use super::tlsfiles;
use ringdns_plugin::BlockSetup;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::duration;
use ringdns_plugin::duration::{go_atoi, parse_signed as go_duration};
use ringdns_plugin::normalize::{fqdn, is_domain_name};
use ringdns_plugin::normalize::{normalize_exact, split_scheme};
use ringdns_plugin::quote::go_quote;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

/// CoreDNS's cap on upstreams per `forward` line (after de-duplication).
pub const MAX_UPSTREAMS: usize = 15;

/// Default port of plain DNS upstreams.
const DNS_PORT: u16 = 53;
/// Default port of DNS-over-TLS upstreams.
const TLS_PORT: u16 = 853;

/// `expire` default (CoreDNS `defaultExpire`).
const DEFAULT_EXPIRE: Duration = Duration::from_secs(10);
/// `read_timeout` default (CoreDNS's fixed read timeout).
const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(2);
/// `health_check` default interval (CoreDNS `hcInterval`).
const DEFAULT_HC_INTERVAL: Duration = Duration::from_millis(500);
/// `max_fails` default.
const DEFAULT_MAX_FAILS: u32 = 2;

/// Parses every `forward` line of a block (each `d.next()` is one line), in order.
pub fn parse(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Vec<ForwardConfig>, Error> {
    let mut out = Vec::new();
    while d.next() {
        out.push(parse_stanza(d, block)?);
    }
    Ok(out)
}

/// `plugin/forward: MSG` at the current token.
fn fail(d: &Dispenser<'_>, msg: impl std::fmt::Display) -> Error {
    d.plugin_err("forward", msg)
}

/// caddy's `ArgErr` at the current token, with the plugin prefix inside the message.
fn arg_err(d: &Dispenser<'_>) -> Error {
    d.plugin_arg_err("forward")
}

/// Remembers a token so a check made later (after the block) can still point at it.
#[derive(Clone)]
struct Place(Error);

impl Place {
    fn here(d: &Dispenser<'_>) -> Place {
        Place(d.err(""))
    }

    fn fail(&self, msg: impl std::fmt::Display) -> Error {
        Error::parsing(
            self.0.file.clone(),
            self.0.line,
            &format!("plugin/forward: {msg}"),
        )
    }
}

/// One TO entry after parsing, before de-duplication and server-name resolution.
struct Target {
    addr: SocketAddr,
    proto: UpstreamProto,
    /// `%name` of a `tls://` TO (empty names count as none, as in CoreDNS).
    name: Option<String>,
    /// CoreDNS's address text (`to` metrics label).
    label: String,
}

impl Target {
    /// How CoreDNS names the upstream in its TLS server-name conflict error.
    fn shown(&self) -> String {
        match self.proto {
            UpstreamProto::Tls => format!("tls://{}", self.label),
            UpstreamProto::Dns => self.label.clone(),
        }
    }
}

/// What the block said, before the checks that need all of it.
struct Options {
    tls_servername: Option<(String, Place)>,
    max_age: Option<Place>,
    max_connect_attempts: Option<u32>,
}

/// One `forward FROM TO... { ... }` line, the cursor on `forward`.
fn parse_stanza(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<ForwardConfig, Error> {
    if !d.next_arg() {
        return Err(arg_err(d));
    }
    let from_text = d.val().to_string();
    let zones = normalize_exact(&from_text)
        .map_err(|_| fail(d, format_args!("unable to normalize '{from_text}'")))?;
    let Some(from) = zones.first().cloned() else {
        return Err(fail(d, format_args!("unable to normalize '{from_text}'")));
    };
    if zones.len() > 1 {
        ringdns_plugin::warning!(
            "plugin/forward: Unsupported CIDR notation: '{from_text}' expands to multiple zones. \
             Using only '{from}'."
        );
    }

    let mut targets = Vec::new();
    let mut any_to = false;
    while d.next_arg() {
        any_to = true;
        let raw = d.val().to_string();
        targets.extend(parse_to(&raw, block).map_err(|m| fail(d, m))?);
    }
    if !any_to {
        return Err(arg_err(d));
    }
    if targets.is_empty() {
        return Err(fail(d, "no nameservers found"));
    }
    // For the tls_servername conflict check, which CoreDNS makes on every TO written.
    let first_named_tls = targets
        .iter()
        .find(|t| t.proto == UpstreamProto::Tls && t.name.is_some())
        .map(|t| (t.name.clone().unwrap_or_default(), t.shown()));
    // Same address, port and transport: the first one written is kept.
    let mut unique: Vec<Target> = Vec::with_capacity(targets.len());
    for t in targets {
        if !unique
            .iter()
            .any(|u| u.addr == t.addr && u.proto == t.proto)
        {
            unique.push(t);
        }
    }
    if unique.len() > MAX_UPSTREAMS {
        return Err(fail(
            d,
            format_args!("more than {MAX_UPSTREAMS} TOs configured: {}", unique.len()),
        ));
    }

    let mut c = ForwardConfig {
        from,
        except: Vec::new(),
        upstreams: Vec::new(),
        force_tcp: false,
        prefer_udp: false,
        expire: DEFAULT_EXPIRE,
        max_age: Duration::ZERO,
        max_idle_conns: 0,
        read_timeout: DEFAULT_READ_TIMEOUT,
        max_fails: DEFAULT_MAX_FAILS,
        max_connect_attempts: 0,
        health_check: HealthCheck {
            interval: DEFAULT_HC_INTERVAL,
            recursion_desired: true,
            domain: ".".to_string(),
        },
        policy: Policy::Random,
        tls: TlsSettings::default(),
        tls_servername: None,
        max_concurrent: 0,
        next: Vec::new(),
        next_on_nodata: false,
        failover: Vec::new(),
        failfast_all_unhealthy: false,
        source_address: None,
    };
    let mut opts = Options {
        tls_servername: None,
        max_age: None,
        max_connect_attempts: None,
    };
    while d.next_block() {
        parse_option(d, block, &mut c, &mut opts)?;
    }

    // force_tcp has precedence over prefer_udp everywhere in CoreDNS (transport choice, the
    // TCP retry after a truncated reply, health checks): with both, prefer_udp does nothing,
    // so it is not kept and the runtime cannot get the precedence wrong.
    if c.force_tcp {
        c.prefer_udp = false;
    }
    if let Some(place) = &opts.max_age
        && !c.max_age.is_zero()
        && c.max_age < c.expire
    {
        return Err(place.fail(format_args!(
            "max_age ({}) must not be less than expire ({})",
            duration::format(c.max_age),
            duration::format(c.expire)
        )));
    }
    if let Some((name, place)) = &opts.tls_servername {
        if let Some((proxy_name, shown)) = &first_named_tls {
            return Err(place.fail(format_args!(
                "both forward ('{name}') and proxy level ('{proxy_name}') TLS servernames are \
                 set for upstream proxy '{shown}'"
            )));
        }
        c.tls_servername = Some(name.clone());
    }

    let upstreams: Vec<Upstream> = unique
        .into_iter()
        .map(|t| Upstream {
            tls_name: match t.proto {
                UpstreamProto::Tls => t.name.or_else(|| c.tls_servername.clone()),
                UpstreamProto::Dns => None,
            },
            addr: t.addr,
            proto: t.proto,
            label: t.label,
        })
        .collect();
    // CoreDNS's default cap: two passes over the upstream list; an explicit 0 lifts the cap.
    c.max_connect_attempts = opts
        .max_connect_attempts
        .unwrap_or_else(|| u32::try_from(2 * upstreams.len()).unwrap_or(u32::MAX));
    c.upstreams = upstreams;
    Ok(c)
}

/// One option line of the block, the cursor on its name.
fn parse_option(
    d: &mut Dispenser<'_>,
    block: &BlockSetup,
    c: &mut ForwardConfig,
    opts: &mut Options,
) -> Result<(), Error> {
    let key = d.val().to_string();
    match key.as_str() {
        "except" => {
            let names = d.remaining_args();
            if names.is_empty() {
                return Err(arg_err(d));
            }
            for n in names {
                match normalize_exact(&n) {
                    Ok(zones) => c.except.extend(zones),
                    // CoreDNS drops a name it cannot normalise without a word; say it.
                    Err(e) => {
                        ringdns_plugin::warning!("plugin/forward: except: ignoring '{n}': {e}")
                    }
                }
            }
        }
        "max_fails" => c.max_fails = parse_uint32_arg(d)?,
        "max_connect_attempts" => opts.max_connect_attempts = Some(parse_uint32_arg(d)?),
        "health_check" => {
            let (neg, dur) = duration_arg(d)?;
            if neg {
                return Err(fail(
                    d,
                    format_args!("health_check can't be negative: -{}", dur.as_nanos()),
                ));
            }
            c.health_check.interval = dur;
            c.health_check.domain = ".".to_string();
            while d.next_arg() {
                match d.val() {
                    "no_rec" => c.health_check.recursion_desired = false,
                    "domain" => {
                        if !d.next_arg() {
                            return Err(arg_err(d));
                        }
                        let name = d.val().to_string();
                        if !is_domain_name(&name) {
                            return Err(fail(
                                d,
                                format_args!("health_check: invalid domain name {name}"),
                            ));
                        }
                        c.health_check.domain = fqdn(&name).to_lowercase();
                    }
                    other => {
                        return Err(fail(
                            d,
                            format_args!("health_check: unknown option {other}"),
                        ));
                    }
                }
            }
        }
        "force_tcp" => {
            no_args(d)?;
            c.force_tcp = true;
        }
        "prefer_udp" => {
            no_args(d)?;
            c.prefer_udp = true;
        }
        "tls" => {
            let args = d.remaining_args();
            if args.len() > 3 {
                return Err(arg_err(d));
            }
            let paths: Vec<PathBuf> = args.iter().map(|a| block.resolve_path(a)).collect();
            c.tls = match paths.as_slice() {
                [] => TlsSettings::default(),
                [ca] => {
                    tlsfiles::check_ca(ca).map_err(|m| fail(d, m))?;
                    TlsSettings {
                        ca: Some(ca.clone()),
                        ..TlsSettings::default()
                    }
                }
                [cert, key, rest @ ..] => {
                    tlsfiles::check_key_pair(cert, key).map_err(|m| fail(d, m))?;
                    if let Some(ca) = rest.first() {
                        tlsfiles::check_ca(ca).map_err(|m| fail(d, m))?;
                    }
                    TlsSettings {
                        cert: Some(cert.clone()),
                        key: Some(key.clone()),
                        ca: rest.first().cloned(),
                    }
                }
            };
        }
        "tls_servername" => {
            if !d.next_arg() {
                return Err(arg_err(d));
            }
            opts.tls_servername = Some((d.val().to_string(), Place::here(d)));
        }
        "expire" => {
            let (neg, dur) = duration_arg(d)?;
            if neg {
                return Err(fail(
                    d,
                    format_args!("expire can't be negative: -{}", duration::format(dur)),
                ));
            }
            c.expire = dur;
        }
        "max_age" => {
            let (neg, dur) = duration_arg(d)?;
            if neg {
                return Err(fail(
                    d,
                    format_args!("max_age can't be negative: -{}", duration::format(dur)),
                ));
            }
            c.max_age = dur;
            opts.max_age = Some(Place::here(d));
        }
        "read_timeout" => {
            let (neg, dur) = duration_arg(d)?;
            if neg || dur.is_zero() {
                let sign = if neg { "-" } else { "" };
                return Err(fail(
                    d,
                    format_args!(
                        "read_timeout must be greater than zero: {sign}{}",
                        duration::format(dur)
                    ),
                ));
            }
            c.read_timeout = dur;
        }
        "max_idle_conns" => {
            let n = atoi_arg(d)?;
            if n < 0 {
                return Err(fail(
                    d,
                    format_args!("max_idle_conns can't be negative: {n}"),
                ));
            }
            c.max_idle_conns = usize::try_from(n).unwrap_or(usize::MAX);
        }
        "policy" => {
            if !d.next_arg() {
                return Err(arg_err(d));
            }
            c.policy = match d.val() {
                "random" => Policy::Random,
                "round_robin" => Policy::RoundRobin,
                "sequential" => Policy::Sequential,
                other => return Err(fail(d, format_args!("unknown policy '{other}'"))),
            };
        }
        "max_concurrent" => {
            let n = atoi_arg(d)?;
            if n < 0 {
                return Err(fail(
                    d,
                    format_args!("max_concurrent can't be negative: {n}"),
                ));
            }
            c.max_concurrent = n.unsigned_abs();
        }
        "next" => {
            let args = d.remaining_args();
            if args.is_empty() {
                return Err(arg_err(d));
            }
            for a in args {
                let rc = rcode_from_name(&a)
                    .ok_or_else(|| fail(d, format_args!("{a} is not a valid rcode")))?;
                c.next.push(rc);
            }
        }
        "failover" => {
            let args = d.remaining_args();
            if args.is_empty() {
                return Err(arg_err(d));
            }
            for a in args {
                let rc = rcode_from_name(&a)
                    .ok_or_else(|| fail(d, format_args!("{a} is not a valid rcode")))?;
                if rc == 0 {
                    return Err(fail(d, "NoError cannot be used in failover"));
                }
                c.failover.push(rc);
            }
        }
        "next_on_nodata" => {
            no_args(d)?;
            c.next_on_nodata = true;
        }
        "failfast_all_unhealthy_upstreams" => {
            no_args(d)?;
            c.failfast_all_unhealthy = true;
        }
        "source_address" => {
            if !d.next_arg() {
                return Err(arg_err(d));
            }
            let ip = parse_ip(d.val()).ok_or_else(|| {
                fail(
                    d,
                    format_args!("source_address: not an IP address: {}", go_quote(d.val())),
                )
            })?;
            c.source_address = Some(ip);
        }
        "doh_method" => {
            return Err(fail(
                d,
                "doh_method: DNS over HTTPS upstreams are not supported yet by ringdns, so \
                 there is no DoH request method to set",
            ));
        }
        "resolver" => {
            return Err(fail(
                d,
                "resolver: upstreams given by hostname are not supported yet by ringdns, so \
                 there is nothing to resolve; write the upstreams' IP addresses",
            ));
        }
        other => return Err(fail(d, format_args!("unknown property '{other}'"))),
    }
    Ok(())
}

/// Options without arguments (`force_tcp`, …): any argument is caddy's argument error.
fn no_args(d: &mut Dispenser<'_>) -> Result<(), Error> {
    if d.next_arg() {
        return Err(arg_err(d));
    }
    Ok(())
}

/// The option's one duration argument, Go syntax, negative allowed (the caller decides).
fn duration_arg(d: &mut Dispenser<'_>) -> Result<(bool, Duration), Error> {
    if !d.next_arg() {
        return Err(arg_err(d));
    }
    go_duration(d.val()).map_err(|m| fail(d, m))
}

/// The option's one unsigned 32-bit argument (Go `strconv.ParseUint(s, 10, 32)`).
fn parse_uint32_arg(d: &mut Dispenser<'_>) -> Result<u32, Error> {
    if !d.next_arg() {
        return Err(arg_err(d));
    }
    go_parse_uint32(d.val()).map_err(|m| fail(d, m))
}

/// The option's one integer argument (Go `strconv.Atoi`).
fn atoi_arg(d: &mut Dispenser<'_>) -> Result<i64, Error> {
    if !d.next_arg() {
        return Err(arg_err(d));
    }
    go_atoi(d.val()).map_err(|m| fail(d, m))
}

/// Go's `strconv.ParseUint(s, 10, 32)` with its error texts (no sign allowed).
fn go_parse_uint32(s: &str) -> Result<u32, String> {
    let err = |kind: &str| format!("strconv.ParseUint: parsing {}: {kind}", go_quote(s));
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err("invalid syntax"));
    }
    s.parse::<u32>().map_err(|_| err("value out of range"))
}

/// An rcode named as miekg/dns `StringToRcode` names it (case-insensitive, as CoreDNS
/// upper-cases the text first). Numbers are not rcode names, as in CoreDNS.
pub fn rcode_from_name(s: &str) -> Option<u8> {
    let rc = match s.to_ascii_uppercase().as_str() {
        "NOERROR" => 0,
        "FORMERR" => 1,
        "SERVFAIL" => 2,
        "NXDOMAIN" => 3,
        "NOTIMP" | "NOTIMPL" => 4,
        "REFUSED" => 5,
        "YXDOMAIN" => 6,
        "YXRRSET" => 7,
        "NXRRSET" => 8,
        "NOTAUTH" => 9,
        "NOTZONE" => 10,
        "DSOTYPENI" => 11,
        "BADSIG" => 16,
        "BADKEY" => 17,
        "BADTIME" => 18,
        "BADMODE" => 19,
        "BADNAME" => 20,
        "BADALG" => 21,
        "BADTRUNC" => 22,
        "BADCOOKIE" => 23,
        _ => return None,
    };
    Some(rc)
}

/// Parses an IP address the way Go's `net.ParseIP` accepts one (no zone, no brackets).
fn parse_ip(s: &str) -> Option<IpAddr> {
    s.parse().ok()
}

/// A port as written after `:`: decimal, 1–65535.
fn parse_port(s: &str) -> Option<u16> {
    if s.is_empty() || s.len() > 5 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<u16>().ok().filter(|&p| p != 0)
}

/// CoreDNS's `splitZone`: takes the `%NAME` (TLS server name, or an IPv6 zone) out of an
/// address, keeping a port written after it: `1.1.1.1%name:853` → (`1.1.1.1:853`, `name`),
/// `[::1%name]:853` → (`[::1]:853`, `name`).
fn split_zone(host: &str) -> (String, String) {
    let Some(p) = host.rfind('%') else {
        return (host.to_string(), String::new());
    };
    let mut new_host = host[..p].to_string();
    if new_host.starts_with('[') {
        new_host.push(']');
    }
    let mut zone = host[p + 1..].to_string();
    if let Some(c) = zone.rfind(':') {
        new_host.push_str(&zone[c..]);
        zone.truncate(c);
        if let Some(z) = zone.strip_suffix(']') {
            zone = z.to_string();
        }
    }
    (new_host, zone)
}

/// An address TO without its scheme: `IP`, `IP%name`, `IPv4[%name]:port`, `IPv4:port%name`,
/// `[IPv6[%name]]:port`, `[IPv6[%name]]`, bare `IPv6[%name]`. `None` when it is not an IP address at all (then
/// it may be a file); `Some(Err)` for an IP address with a bad port or name.
fn parse_address(
    rest: &str,
    default_port: u16,
) -> Option<Result<(IpAddr, u16, String, String), String>> {
    let (ip_text, port_text, name) = if !rest.starts_with('[')
        && rest[..rest.rfind('%').unwrap_or(rest.len())]
            .bytes()
            .filter(|&b| b == b':')
            .count()
            >= 2
    {
        // Bare IPv6 (Go's SplitHostPort fails on it): everything after `%` is the name.
        let (ip, name) = rest.rsplit_once('%').unwrap_or((rest, ""));
        parse_ip(ip)?;
        if name.contains(':') {
            return Some(Err(format!(
                "invalid upstream address {}: write [IPv6%NAME]:PORT to give an IPv6 upstream \
                 both a server name and a port",
                go_quote(rest)
            )));
        }
        (ip.to_string(), None, name.to_string())
    } else {
        let (clean, name) = split_zone(rest);
        if let Some(inner) = clean.strip_prefix('[') {
            match inner.split_once("]:") {
                Some((ip, port)) => (ip.to_string(), Some(port.to_string()), name),
                // `[IPv6]` / `[IPv6%name]` without a port (CoreDNS refuses these).
                None => {
                    let ip = inner.strip_suffix(']')?;
                    let name = name.strip_suffix(']').unwrap_or(&name).to_string();
                    (ip.to_string(), None, name)
                }
            }
        } else if let Some((ip, port)) = clean.split_once(':') {
            (ip.to_string(), Some(port.to_string()), name)
        } else {
            (clean, None, name)
        }
    };
    let ip = parse_ip(&ip_text)?;
    let port = match &port_text {
        None => default_port,
        Some(p) => match parse_port(p) {
            Some(p) => p,
            None => {
                return Some(Err(format!(
                    "invalid port {} in upstream address {}",
                    go_quote(p),
                    go_quote(rest)
                )));
            }
        },
    };
    let port_text = port_text.unwrap_or_else(|| port.to_string());
    let label = if ip_text.contains(':') {
        format!("[{ip_text}]:{port_text}")
    } else {
        format!("{ip_text}:{port_text}")
    };
    Some(Ok((ip, port, label, name)))
}

/// Whether a TO that is neither an IP address nor a readable file looks like a hostname
/// (letters, digits, `-`, `_` in dot-separated labels, at least one letter), optionally
/// with `:port` and `%name`.
fn looks_like_hostname(rest: &str) -> bool {
    let (clean, _) = split_zone(rest);
    let host = match clean.rsplit_once(':') {
        Some((h, p)) if parse_port(p).is_some() => h,
        Some(_) => return false,
        None => clean.as_str(),
    };
    let host = host.strip_suffix('.').unwrap_or(host);
    !host.is_empty()
        && host.len() <= 253
        && host.bytes().any(|b| b.is_ascii_alphabetic())
        && host.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// Parses one TO: an address, or a resolv.conf-style file giving several.
fn parse_to(raw: &str, block: &BlockSetup) -> Result<Vec<Target>, String> {
    let (scheme, rest) = split_scheme(raw);
    let proto = match scheme {
        None | Some("dns") => UpstreamProto::Dns,
        Some("tls") => UpstreamProto::Tls,
        Some("https") => {
            return Err(format!(
                "DNS over HTTPS upstreams are not supported yet: {}; use DNS over TLS \
                 (tls://IP%SERVERNAME) or plain DNS",
                go_quote(raw)
            ));
        }
        Some(other) => {
            return Err(format!(
                "'{other}' is not supported as a destination protocol in forward: {raw}"
            ));
        }
    };
    let default_port = match proto {
        UpstreamProto::Dns => DNS_PORT,
        UpstreamProto::Tls => TLS_PORT,
    };
    if let Some(parsed) = parse_address(rest, default_port) {
        let (ip, port, label, name) = parsed?;
        return Ok(vec![Target {
            addr: SocketAddr::new(ip, port),
            proto,
            name: (proto == UpstreamProto::Tls && !name.is_empty()).then_some(name),
            label,
        }]);
    }

    let path = block.resolve_path(rest);
    match ringdns_plugin::resolvconf::read(&path) {
        Ok(ringdns_plugin::resolvconf::ResolvConf { servers, .. }) => {
            if proto == UpstreamProto::Tls {
                // CoreDNS would quietly use plain DNS to these servers; refuse instead.
                return Err(format!(
                    "{}: a resolv.conf-style file gives plain DNS upstreams; tls:// cannot be \
                     used with it, list the tls://IP upstreams instead",
                    go_quote(raw)
                ));
            }
            servers
                .iter()
                .map(|ns| {
                    let (ip_text, _zone) = ns.rsplit_once('%').unwrap_or((ns, ""));
                    let ip = parse_ip(ip_text).ok_or_else(|| {
                        format!(
                            "nameserver {} in {} is not an IP address; upstreams given by \
                             hostname are not supported yet by ringdns",
                            go_quote(ns),
                            path.display()
                        )
                    })?;
                    let label = if ip.is_ipv6() {
                        format!("[{ip_text}]:{DNS_PORT}")
                    } else {
                        format!("{ip_text}:{DNS_PORT}")
                    };
                    Ok(Target {
                        addr: SocketAddr::new(ip, DNS_PORT),
                        proto: UpstreamProto::Dns,
                        name: None,
                        label,
                    })
                })
                .collect()
        }
        Err(e) => {
            let base = format!("not an IP address or file: {}", go_quote(rest));
            if e.not_found && looks_like_hostname(rest) {
                Err(format!(
                    "{base}; upstreams given by hostname are not supported yet by ringdns \
                     (CoreDNS resolves them at startup): write the IP address(es) instead, \
                     e.g. tls://9.9.9.9%dns.quad9.net"
                ))
            } else if e.not_found {
                Err(base)
            } else {
                Err(format!("{base} ({})", e.text))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::corefile::tokenize;
    use std::sync::Arc;

    fn run_in(input: &str, block: &BlockSetup) -> Result<Vec<ForwardConfig>, Error> {
        let toks = tokenize(input, &Arc::from("Corefile"));
        let mut d = Dispenser::new(&toks);
        parse(&mut d, block)
    }

    fn run(input: &str) -> Result<Vec<ForwardConfig>, Error> {
        run_in(input, &BlockSetup::default())
    }

    fn one(input: &str) -> ForwardConfig {
        let mut v = run(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(v.len(), 1);
        v.remove(0)
    }

    /// The full error line, as printed.
    fn err(input: &str) -> String {
        match run(input) {
            Ok(c) => panic!("{input}: expected an error, got {c:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn err_in(input: &str, block: &BlockSetup) -> String {
        match run_in(input, block) {
            Ok(c) => panic!("{input}: expected an error, got {c:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn labels(c: &ForwardConfig) -> Vec<&str> {
        c.upstreams.iter().map(|u| u.label.as_str()).collect()
    }

    /// A fresh directory under the system temp dir for file tests.
    fn tempdir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "ringdns-forward-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    const CERT: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const KEY: &str = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";

    #[test]
    fn defaults() {
        let c = one("forward . 127.0.0.1");
        assert_eq!(c.from, ".");
        assert!(c.except.is_empty());
        assert_eq!(
            c.upstreams,
            [Upstream {
                addr: "127.0.0.1:53".parse().unwrap(),
                proto: UpstreamProto::Dns,
                tls_name: None,
                label: "127.0.0.1:53".to_string(),
            }]
        );
        assert!(!c.force_tcp && !c.prefer_udp);
        assert_eq!(c.expire, Duration::from_secs(10));
        assert_eq!(c.max_age, Duration::ZERO);
        assert_eq!(c.max_idle_conns, 0);
        assert_eq!(c.read_timeout, Duration::from_secs(2));
        assert_eq!(c.max_fails, 2);
        assert_eq!(c.max_connect_attempts, 2);
        assert_eq!(
            c.health_check,
            HealthCheck {
                interval: Duration::from_millis(500),
                recursion_desired: true,
                domain: ".".to_string(),
            }
        );
        assert_eq!(c.policy, Policy::Random);
        assert_eq!(c.tls, TlsSettings::default());
        assert_eq!(c.tls_servername, None);
        assert_eq!(c.max_concurrent, 0);
        assert!(c.next.is_empty() && c.failover.is_empty());
        assert!(!c.next_on_nodata && !c.failfast_all_unhealthy);
        assert_eq!(c.source_address, None);
    }

    #[test]
    fn from_is_normalised() {
        assert_eq!(one("forward Example.ORG 1.2.3.4").from, "example.org.");
        assert_eq!(one("forward example.org. 1.2.3.4").from, "example.org.");
        assert_eq!(
            one("forward dns://Example.org 1.2.3.4").from,
            "example.org."
        );
        assert_eq!(one("forward example.org:1053 1.2.3.4").from, "example.org.");
        assert_eq!(
            one("forward 10.0.0.0/24 1.2.3.4").from,
            "0.0.10.in-addr.arpa."
        );
    }

    #[test]
    fn from_cidr_uses_the_first_zone() {
        // CoreDNS's own test: 10.9.3.0/18 expands to 64 zones; the first is used (with a
        // warning on stdout).
        assert_eq!(
            one("forward 10.9.3.0/18 127.0.0.1").from,
            "0.9.10.in-addr.arpa."
        );
    }

    #[test]
    fn from_errors() {
        let long = "x".repeat(64);
        assert_eq!(
            err(&format!("forward {long} 127.0.0.1")),
            format!(
                "Corefile:1 - Error during parsing: plugin/forward: unable to normalize '{long}'"
            )
        );
        assert_eq!(
            err("forward a..b 127.0.0.1"),
            "Corefile:1 - Error during parsing: plugin/forward: unable to normalize 'a..b'"
        );
    }

    #[test]
    fn missing_from_or_to_is_an_argument_error() {
        assert_eq!(
            err("forward"),
            "Corefile:1 - Error during parsing: plugin/forward: Wrong argument count or \
             unexpected line ending after 'forward'"
        );
        assert_eq!(
            err("forward ."),
            "Corefile:1 - Error during parsing: plugin/forward: Wrong argument count or \
             unexpected line ending after '.'"
        );
        assert_eq!(
            err("forward . {\n}"),
            "Corefile:1 - Error during parsing: plugin/forward: Wrong argument count or \
             unexpected line ending after '.'"
        );
        assert_eq!(
            err("forward {\n}"),
            "Corefile:1 - Error during parsing: plugin/forward: Wrong argument count or \
             unexpected line ending after 'forward'"
        );
    }

    #[test]
    fn to_address_forms() {
        let c = one(
            "forward . 127.0.0.1 10.0.0.1:5353 [::1]:53 [2003::1]:1053 ::2 dns://10.0.0.2 \
             dns://10.0.0.3:54 tls://1.1.1.1 tls://1.0.0.1:8853 tls://[2606:4700::1111]",
        );
        // (`[IPv6]` without a port is accepted; CoreDNS refuses it as "not an IP address".)
        assert_eq!(
            labels(&c),
            [
                "127.0.0.1:53",
                "10.0.0.1:5353",
                "[::1]:53",
                "[2003::1]:1053",
                "[::2]:53",
                "10.0.0.2:53",
                "10.0.0.3:54",
                "1.1.1.1:853",
                "1.0.0.1:8853",
                "[2606:4700::1111]:853",
            ]
        );
        let addrs: Vec<String> = c.upstreams.iter().map(|u| u.addr.to_string()).collect();
        assert_eq!(addrs[4], "[::2]:53");
        assert_eq!(addrs[9], "[2606:4700::1111]:853");
        let protos: Vec<UpstreamProto> = c.upstreams.iter().map(|u| u.proto).collect();
        assert_eq!(protos[..7], [UpstreamProto::Dns; 7]);
        assert_eq!(protos[7..], [UpstreamProto::Tls; 3]);
        // Ten upstreams: CoreDNS's default attempt cap is twice that.
        assert_eq!(c.max_connect_attempts, 20);
    }

    #[test]
    fn to_label_keeps_the_address_as_written() {
        // CoreDNS's `to` label is the address text (scheme dropped), not a re-formatted one.
        let c = one("forward . [2003:0::1]:53 2003:0:0::2");
        assert_eq!(labels(&c), ["[2003:0::1]:53", "[2003:0:0::2]:53"]);
        assert_eq!(c.upstreams[0].addr, "[2003::1]:53".parse().unwrap());
    }

    #[test]
    fn to_bad_ports() {
        assert_eq!(
            err("forward . 1.2.3.4:0"),
            "Corefile:1 - Error during parsing: plugin/forward: invalid port \"0\" in upstream \
             address \"1.2.3.4:0\""
        );
        assert!(err("forward . 1.2.3.4:65536").contains("invalid port \"65536\""));
        assert!(err("forward . 1.2.3.4:").contains("invalid port \"\""));
        assert!(err("forward . [::1]:x").contains("invalid port \"x\""));
    }

    #[test]
    fn to_not_an_ip_or_file() {
        assert_eq!(
            err("forward . 1.2.3.256"),
            "Corefile:1 - Error during parsing: plugin/forward: not an IP address or file: \
             \"1.2.3.256\""
        );
        assert!(err("forward . [::1").contains("not an IP address or file: \"[::1\""));
        assert!(err("forward . foo://1.2.3.4").contains("not an IP address or file"));
        assert!(
            err("forward . /nonexistent/resolv.conf")
                .ends_with("not an IP address or file: \"/nonexistent/resolv.conf\"")
        );
    }

    #[test]
    fn to_hostname_is_refused() {
        let e = err("forward . dns.google");
        assert!(
            e.starts_with(
                "Corefile:1 - Error during parsing: plugin/forward: not an IP address or file: \
                 \"dns.google\"; upstreams given by hostname are not supported yet"
            ),
            "{e}"
        );
        // CoreDNS's own negative test: `a27.0.0.1` is "not an IP".
        assert!(err("forward . a27.0.0.1").contains("not an IP address or file: \"a27.0.0.1\""));
        assert!(err("forward . tls://dns.quad9.net%dns.quad9.net:853").contains("by hostname"));
        assert!(err("forward . dns.google:53").contains("by hostname"));
    }

    #[test]
    fn to_https_is_refused() {
        let e = err("forward . https://9.9.9.9");
        assert!(
            e.starts_with(
                "Corefile:1 - Error during parsing: plugin/forward: DNS over HTTPS upstreams \
                 are not supported yet: \"https://9.9.9.9\""
            ),
            "{e}"
        );
    }

    #[test]
    fn to_other_schemes_are_coredns_errors() {
        assert_eq!(
            err("forward . quic://1.2.3.4"),
            "Corefile:1 - Error during parsing: plugin/forward: 'quic' is not supported as a \
             destination protocol in forward: quic://1.2.3.4"
        );
        for s in ["grpc", "https3", "unix"] {
            assert!(
                err(&format!("forward . {s}://1.2.3.4:53")).contains(&format!(
                    "'{s}' is not supported as a destination protocol in forward: {s}://1.2.3.4:53"
                ))
            );
        }
    }

    #[test]
    fn tls_server_name_in_to() {
        let c = one(
            "forward . tls://9.9.9.9%dns.quad9.net tls://1.1.1.1%one.one.one.one:10853 \
             tls://1.0.0.1:853%cloudflare-dns.com tls://[2620:fe::fe%dns.quad9.net]:853 \
             tls://2620:fe::9%dns9.quad9.net tls://8.8.8.8 tls://[2620:fe::10%x.quad9.net]",
        );
        let got: Vec<(&str, Option<&str>)> = c
            .upstreams
            .iter()
            .map(|u| (u.label.as_str(), u.tls_name.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("9.9.9.9:853", Some("dns.quad9.net")),
                ("1.1.1.1:10853", Some("one.one.one.one")),
                ("1.0.0.1:853", Some("cloudflare-dns.com")),
                ("[2620:fe::fe]:853", Some("dns.quad9.net")),
                ("[2620:fe::9]:853", Some("dns9.quad9.net")),
                ("8.8.8.8:853", None),
                ("[2620:fe::10]:853", Some("x.quad9.net")),
            ]
        );
        assert_eq!(c.upstreams[1].addr, "1.1.1.1:10853".parse().unwrap());
        assert!(err("forward . tls://2620:fe::9%name:853").contains("write [IPv6%NAME]:PORT"),);
    }

    #[test]
    fn percent_on_plain_dns_is_dropped() {
        // As CoreDNS: the `%zone` of a plain DNS upstream is removed and not used.
        let c = one("forward . fe80::1%eth0 dns://10.0.0.1%x");
        assert_eq!(labels(&c), ["[fe80::1]:53", "10.0.0.1:53"]);
        assert!(c.upstreams.iter().all(|u| u.tls_name.is_none()));
    }

    #[test]
    fn tls_servername_applies_to_tls_upstreams_only() {
        let c = one("forward . tls://1.1.1.1 127.0.0.1 {\n tls_servername cloudflare-dns.com\n}");
        assert_eq!(c.tls_servername.as_deref(), Some("cloudflare-dns.com"));
        assert_eq!(
            c.upstreams[0].tls_name.as_deref(),
            Some("cloudflare-dns.com")
        );
        assert_eq!(c.upstreams[1].tls_name, None);
        // A `%name` on a plain DNS TO does not conflict.
        let c = one("forward . 10.0.0.1%x {\n tls_servername dns\n}");
        assert_eq!(c.upstreams[0].tls_name, None);
    }

    #[test]
    fn tls_servername_conflicts_with_percent_name() {
        assert_eq!(
            err("forward . tls://9.9.9.9%dns.quad9.net {\n  tls_servername other\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: both forward ('other') and \
             proxy level ('dns.quad9.net') TLS servernames are set for upstream proxy \
             'tls://9.9.9.9:853'"
        );
        // Also when the named TO is a duplicate that is dropped.
        assert!(
            err("forward . tls://9.9.9.9 tls://9.9.9.9%x {\n tls_servername y\n}")
                .contains("both forward ('y') and proxy level ('x')")
        );
        assert!(
            err("forward . tls://9.9.9.9%dns.quad9.net {\n tls_servername\n}")
                .contains("Wrong argument count or unexpected line ending after 'tls_servername'")
        );
    }

    #[test]
    fn duplicates_are_dropped_in_order() {
        let c = one(
            "forward . 10.0.0.1 10.0.0.2 10.0.0.1:53 dns://10.0.0.2 tls://10.0.0.1 \
             tls://10.0.0.1:853%x [::1]:53 ::1",
        );
        assert_eq!(
            labels(&c),
            ["10.0.0.1:53", "10.0.0.2:53", "10.0.0.1:853", "[::1]:53"]
        );
        assert_eq!(c.upstreams[2].tls_name, None);
        assert_eq!(c.max_connect_attempts, 8);
    }

    #[test]
    fn at_most_fifteen_upstreams() {
        let ips: Vec<String> = (1..=15).map(|i| format!("10.0.0.{i}")).collect();
        let c = one(&format!("forward . {} 10.0.0.1", ips.join(" ")));
        assert_eq!(c.upstreams.len(), 15);
        assert_eq!(
            err(&format!("forward . {} 10.0.0.16", ips.join(" "))),
            "Corefile:1 - Error during parsing: plugin/forward: more than 15 TOs configured: 16"
        );
        // Reported on the forward line even when a block follows.
        assert!(
            err(&format!(
                "forward . {} 10.0.0.16 {{\n policy sequential\n}}",
                ips.join(" ")
            ))
            .starts_with("Corefile:1 -")
        );
    }

    #[test]
    fn resolv_conf_file() {
        let dir = tempdir("resolv");
        std::fs::write(
            dir.join("resolv.conf"),
            "nameserver 10.10.255.252\nnameserver 10.10.255.253\nsearch x\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("ipv6.conf"),
            "nameserver 0388:d254:7aec:6892:9f7f:e93b:5806:1b0f%en0\n",
        )
        .unwrap();
        std::fs::write(dir.join("empty.conf"), "# nothing\n").unwrap();
        std::fs::write(dir.join("named.conf"), "nameserver dns.google\n").unwrap();
        let block = BlockSetup {
            root: dir.clone(),
            ..BlockSetup::default()
        };
        let c = &run_in("forward . resolv.conf 10.0.0.1 dns://ipv6.conf", &block).unwrap()[0];
        assert_eq!(
            labels(c),
            [
                "10.10.255.252:53",
                "10.10.255.253:53",
                "10.0.0.1:53",
                "[0388:d254:7aec:6892:9f7f:e93b:5806:1b0f]:53"
            ]
        );
        assert!(c.upstreams.iter().all(|u| u.proto == UpstreamProto::Dns));
        // Absolute paths ignore root.
        let abs = dir.join("resolv.conf");
        let c = one(&format!("forward . {}", abs.display()));
        assert_eq!(c.upstreams.len(), 2);
        // CoreDNS's "no nameservers found" when nothing at all is left.
        assert_eq!(
            err_in("forward . empty.conf", &block),
            "Corefile:1 - Error during parsing: plugin/forward: no nameservers found"
        );
        assert_eq!(
            run_in("forward . empty.conf 10.0.0.9", &block).unwrap()[0]
                .upstreams
                .len(),
            1
        );
        assert!(err_in("forward . named.conf", &block).contains("nameserver \"dns.google\" in "));
        assert!(err_in("forward . tls://resolv.conf", &block).contains("tls:// cannot be used"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn except_names() {
        let c = one(
            "forward . 1.2.3.4 {\n except Example.ORG miek.nl. dns://a.b:53\n except 10.0.0.0/15\n}",
        );
        assert_eq!(
            c.except,
            [
                "example.org.",
                "miek.nl.",
                "a.b.",
                "0.10.in-addr.arpa.",
                "1.10.in-addr.arpa."
            ]
        );
        // CoreDNS drops names it cannot normalise (ringdns warns on stdout).
        assert_eq!(one("forward . 1.2.3.4 {\n except a..b c\n}").except, ["c."]);
        assert_eq!(
            err("forward . 1.2.3.4 {\n except\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: Wrong argument count or \
             unexpected line ending after 'except'"
        );
    }

    #[test]
    fn force_tcp_and_prefer_udp() {
        assert!(one("forward . 1.2.3.4 {\nforce_tcp\n}").force_tcp);
        let c = one("forward . 1.2.3.4 {\nprefer_udp\n}");
        assert!(c.prefer_udp && !c.force_tcp);
        // force_tcp wins: prefer_udp then has no effect, so it is not kept.
        let c = one("forward . 1.2.3.4 {\nforce_tcp\nprefer_udp\n}");
        assert!(c.force_tcp && !c.prefer_udp);
        let c = one("forward . 1.2.3.4 {\nprefer_udp\nforce_tcp\n}");
        assert!(c.force_tcp && !c.prefer_udp);
        assert_eq!(
            err("forward . 1.2.3.4 {\nforce_tcp yes\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: Wrong argument count or \
             unexpected line ending after 'yes'"
        );
        assert!(err("forward . 1.2.3.4 {\nprefer_udp 1\n}").contains("after '1'"));
    }

    #[test]
    fn expire_option() {
        assert_eq!(
            one("forward . 1.2.3.4 {\nexpire 1m30s\n}").expire,
            Duration::from_secs(90)
        );
        assert_eq!(
            one("forward . 1.2.3.4 {\nexpire 0\n}").expire,
            Duration::ZERO
        );
        assert_eq!(
            err("forward . 1.2.3.4 {\nexpire -1s\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: expire can't be negative: -1s"
        );
        assert_eq!(
            err("forward . 1.2.3.4 {\nexpire 5\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: time: missing unit in \
             duration \"5\""
        );
        assert!(err("forward . 1.2.3.4 {\nexpire\n}").contains("after 'expire'"));
    }

    #[test]
    fn max_age_option() {
        let c = one("forward . 1.2.3.4 {\nmax_age 30s\n}");
        assert_eq!(c.max_age, Duration::from_secs(30));
        // Equal to expire is fine; 0 means unlimited whatever expire is.
        assert_eq!(
            one("forward . 1.2.3.4 {\nexpire 5s\nmax_age 5s\n}").max_age,
            Duration::from_secs(5)
        );
        assert_eq!(
            one("forward . 1.2.3.4 {\nexpire 1h\nmax_age 0s\n}").max_age,
            Duration::ZERO
        );
        // Checked after the whole block, whatever the order; reported at max_age.
        assert_eq!(
            err("forward . 1.2.3.4 {\nmax_age 5s\nexpire 10s\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: max_age (5s) must not be less \
             than expire (10s)"
        );
        assert!(err("forward . 1.2.3.4 {\nmax_age 9s\n}").contains("must not be less than"));
        assert!(
            err("forward . 1.2.3.4 {\nmax_age -5s\n}").ends_with("max_age can't be negative: -5s")
        );
    }

    #[test]
    fn max_idle_conns_option() {
        assert_eq!(
            one("forward . 1.2.3.4 {\nmax_idle_conns 20\n}").max_idle_conns,
            20
        );
        assert_eq!(
            err("forward . 1.2.3.4 {\nmax_idle_conns -1\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: max_idle_conns can't be \
             negative: -1"
        );
        assert!(
            err("forward . 1.2.3.4 {\nmax_idle_conns x\n}")
                .ends_with("strconv.Atoi: parsing \"x\": invalid syntax")
        );
    }

    #[test]
    fn read_timeout_option() {
        assert_eq!(
            one("forward . 1.2.3.4 {\nread_timeout 500ms\n}").read_timeout,
            Duration::from_millis(500)
        );
        assert_eq!(
            err("forward . 1.2.3.4 {\nread_timeout 0s\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: read_timeout must be greater \
             than zero: 0s"
        );
        assert!(
            err("forward . 1.2.3.4 {\nread_timeout -1s\n}")
                .ends_with("read_timeout must be greater than zero: -1s")
        );
    }

    #[test]
    fn max_fails_option() {
        assert_eq!(one("forward . 1.2.3.4 {\nmax_fails 3\n}").max_fails, 3);
        assert_eq!(one("forward . 1.2.3.4 {\nmax_fails 0\n}").max_fails, 0);
        assert_eq!(
            err("forward . 1.2.3.4 {\nmax_fails -1\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: strconv.ParseUint: parsing \
             \"-1\": invalid syntax"
        );
        assert!(
            err("forward . 1.2.3.4 {\nmax_fails 4294967296\n}")
                .ends_with("strconv.ParseUint: parsing \"4294967296\": value out of range")
        );
        assert!(err("forward . 1.2.3.4 {\nmax_fails\n}").contains("after 'max_fails'"));
    }

    #[test]
    fn max_connect_attempts_option() {
        // Unset: twice the number of upstreams (CoreDNS's default cap).
        assert_eq!(one("forward . 1.2.3.4 5.6.7.8").max_connect_attempts, 4);
        assert_eq!(
            one("forward . 1.2.3.4 {\nmax_connect_attempts 3\n}").max_connect_attempts,
            3
        );
        // An explicit 0 lifts the cap.
        assert_eq!(
            one("forward . 1.2.3.4 {\nmax_connect_attempts 0\n}").max_connect_attempts,
            0
        );
        assert!(
            err("forward . 1.2.3.4 {\nmax_connect_attempts +1\n}")
                .ends_with("strconv.ParseUint: parsing \"+1\": invalid syntax")
        );
    }

    #[test]
    fn health_check_option() {
        let hc = one("forward . 1.2.3.4 {\nhealth_check 5s\n}").health_check;
        assert_eq!(hc.interval, Duration::from_secs(5));
        assert!(hc.recursion_desired);
        assert_eq!(hc.domain, ".");
        let hc =
            one("forward . 1.2.3.4 {\nhealth_check 0.5s no_rec domain Example.org\n}").health_check;
        assert!(!hc.recursion_desired);
        assert_eq!(hc.domain, "example.org.");
        let hc = one("forward . 1.2.3.4 {\nhealth_check 0.5s domain example.org.\n}").health_check;
        assert_eq!(hc.domain, "example.org.");
        assert_eq!(
            one("forward . 1.2.3.4 {\nhealth_check 1s domain .\n}")
                .health_check
                .domain,
            "."
        );
        assert_eq!(
            err("forward . 1.2.3.4 {\nhealth_check no_rec\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: time: invalid duration \
             \"no_rec\""
        );
        assert!(
            err("forward . 1.2.3.4 {\nhealth_check 0.5s rec\n}")
                .ends_with("health_check: unknown option rec")
        );
        assert!(
            err("forward . 1.2.3.4 {\nhealth_check 0.5s domain\n}")
                .contains("Wrong argument count or unexpected line ending after 'domain'")
        );
        assert!(
            err("forward . 1.2.3.4 {\nhealth_check 0.5s domain example..org\n}")
                .ends_with("health_check: invalid domain name example..org")
        );
        assert!(
            err("forward . 1.2.3.4 {\nhealth_check -1s\n}")
                .ends_with("health_check can't be negative: -1000000000")
        );
    }

    #[test]
    fn policy_option() {
        for (s, p) in [
            ("random", Policy::Random),
            ("round_robin", Policy::RoundRobin),
            ("sequential", Policy::Sequential),
        ] {
            assert_eq!(
                one(&format!("forward . 1.2.3.4 {{\npolicy {s}\n}}")).policy,
                p
            );
        }
        assert_eq!(
            err("forward . 1.2.3.4 {\npolicy first\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: unknown policy 'first'"
        );
        assert!(err("forward . 1.2.3.4 {\npolicy\n}").contains("after 'policy'"));
    }

    #[test]
    fn tls_option_files() {
        let dir = tempdir("tls");
        std::fs::write(dir.join("ca.pem"), CERT).unwrap();
        std::fs::write(dir.join("cert.pem"), CERT).unwrap();
        std::fs::write(dir.join("key.pem"), KEY).unwrap();
        std::fs::write(dir.join("junk.pem"), "not pem").unwrap();
        let block = BlockSetup {
            root: dir.clone(),
            ..BlockSetup::default()
        };
        let parse1 = |s: &str| run_in(s, &block).map(|mut v| v.remove(0));

        let c = parse1("forward . tls://1.1.1.1 {\ntls\n}").unwrap();
        assert_eq!(c.tls, TlsSettings::default());
        let c = parse1("forward . tls://1.1.1.1 {\ntls ca.pem\n}").unwrap();
        assert_eq!(c.tls.ca, Some(dir.join("ca.pem")));
        assert_eq!((c.tls.cert, c.tls.key), (None, None));
        let c = parse1("forward . tls://1.1.1.1 {\ntls cert.pem key.pem\n}").unwrap();
        assert_eq!(c.tls.cert, Some(dir.join("cert.pem")));
        assert_eq!(c.tls.key, Some(dir.join("key.pem")));
        assert_eq!(c.tls.ca, None);
        let ca_abs = dir.join("ca.pem");
        let c = parse1(&format!(
            "forward . tls://1.1.1.1 {{\ntls cert.pem key.pem {}\n}}",
            ca_abs.display()
        ))
        .unwrap();
        assert_eq!(c.tls.ca, Some(ca_abs));

        let d = dir.display();
        assert_eq!(
            err_in("forward . tls://1.1.1.1 {\ntls missing.pem\n}", &block),
            format!(
                "Corefile:2 - Error during parsing: plugin/forward: error reading \
                 {d}/missing.pem: open {d}/missing.pem: no such file or directory"
            )
        );
        assert!(
            err_in("forward . tls://1.1.1.1 {\ntls junk.pem\n}", &block)
                .ends_with(&format!("could not read root certs from {d}/junk.pem"))
        );
        assert!(
            err_in(
                "forward . tls://1.1.1.1 {\ntls missing.pem key.pem\n}",
                &block
            )
            .ends_with(&format!(
                "could not load TLS cert: open {d}/missing.pem: no such file or directory"
            ))
        );
        assert!(
            err_in("forward . tls://1.1.1.1 {\ntls junk.pem key.pem\n}", &block).ends_with(
                "could not load TLS cert: tls: failed to find any PEM data in certificate input"
            )
        );
        assert!(
            err_in("forward . tls://1.1.1.1 {\ntls key.pem cert.pem\n}", &block).ends_with(
                "could not load TLS cert: tls: failed to find certificate PEM data in certificate \
             input, but did find a private key; PEM inputs may have been switched"
            )
        );
        assert!(
            err_in("forward . tls://1.1.1.1 {\ntls cert.pem ca.pem\n}", &block).ends_with(
                "could not load TLS cert: tls: found a certificate rather than a key in the PEM \
             for the private key"
            )
        );
        assert!(
            err_in(
                "forward . tls://1.1.1.1 {\ntls cert.pem junk.pem\n}",
                &block
            )
            .ends_with("tls: failed to find any PEM data in key input")
        );
        assert!(
            err_in(
                "forward . tls://1.1.1.1 {\ntls cert.pem key.pem junk.pem\n}",
                &block
            )
            .ends_with(&format!("could not read root certs from {d}/junk.pem"))
        );
        assert!(
            err_in("forward . tls://1.1.1.1 {\ntls a b c d\n}", &block)
                .contains("Wrong argument count or unexpected line ending after 'd'")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn max_concurrent_option() {
        assert_eq!(
            one("forward . 1.2.3.4 {\nmax_concurrent 1000\n}").max_concurrent,
            1000
        );
        assert_eq!(
            err("forward . 1.2.3.4 {\nmax_concurrent many\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: strconv.Atoi: parsing \
             \"many\": invalid syntax"
        );
        assert!(
            err("forward . 1.2.3.4 {\nmax_concurrent -4\n}")
                .ends_with("max_concurrent can't be negative: -4")
        );
        assert!(
            err("forward . 1.2.3.4 {\nmax_concurrent 99999999999999999999\n}")
                .ends_with("value out of range")
        );
    }

    #[test]
    fn next_option() {
        assert_eq!(one("forward . 1.2.3.4 {\nnext NXDOMAIN\n}").next, [3]);
        assert_eq!(
            one("forward . 1.2.3.4 {\nnext nxdomain SERVFAIL Refused\nnext notimpl\n}").next,
            [3, 2, 5, 4]
        );
        assert_eq!(
            err("forward . 1.2.3.4 {\nnext NXDOMAIN INVALID\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: INVALID is not a valid rcode"
        );
        assert!(err("forward . 1.2.3.4 {\nnext 3\n}").ends_with("3 is not a valid rcode"));
        assert!(err("forward . 1.2.3.4 {\nnext\n}").contains("after 'next'"));
    }

    #[test]
    fn failover_option() {
        assert_eq!(
            one("forward . 1.2.3.4 {\nfailover SERVFAIL REFUSED\n}").failover,
            [2, 5]
        );
        assert_eq!(
            err("forward . 1.2.3.4 {\nfailover SERVFAIL NOERROR\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: NoError cannot be used in \
             failover"
        );
        assert!(
            err("forward . 1.2.3.4 {\nfailover BOGUS\n}").ends_with("BOGUS is not a valid rcode")
        );
        assert!(err("forward . 1.2.3.4 {\nfailover\n}").contains("after 'failover'"));
    }

    #[test]
    fn rcode_names() {
        assert_eq!(rcode_from_name("noerror"), Some(0));
        assert_eq!(rcode_from_name("NOTIMP"), Some(4));
        assert_eq!(rcode_from_name("BADCOOKIE"), Some(23));
        assert_eq!(rcode_from_name("BADVERS"), None);
        assert_eq!(rcode_from_name("2"), None);
    }

    #[test]
    fn flag_options() {
        assert!(one("forward . 1.2.3.4 {\nnext_on_nodata\n}").next_on_nodata);
        assert!(
            one("forward . 1.2.3.4 {\nfailfast_all_unhealthy_upstreams\n}").failfast_all_unhealthy
        );
        assert!(
            err("forward . 1.2.3.4 {\nfailfast_all_unhealthy_upstreams false\n}")
                .contains("Wrong argument count")
        );
        assert!(err("forward . 1.2.3.4 {\nnext_on_nodata x\n}").contains("Wrong argument count"));
    }

    #[test]
    fn source_address_option() {
        assert_eq!(
            one("forward . 1.2.3.4 {\nsource_address 10.0.0.5\n}").source_address,
            Some("10.0.0.5".parse().unwrap())
        );
        assert_eq!(
            one("forward . ::1 {\nsource_address 2001:db8::5\n}").source_address,
            Some("2001:db8::5".parse().unwrap())
        );
        assert_eq!(
            err("forward . 1.2.3.4 {\nsource_address eth0\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: source_address: not an IP \
             address: \"eth0\""
        );
        assert!(err("forward . 1.2.3.4 {\nsource_address\n}").contains("after 'source_address'"));
    }

    #[test]
    fn doh_method_and_resolver_are_refused() {
        assert!(err("forward . 1.2.3.4 {\ndoh_method GET\n}").starts_with(
            "Corefile:2 - Error during parsing: plugin/forward: doh_method: DNS over HTTPS \
             upstreams are not supported yet"
        ));
        assert!(
            err("forward . 1.2.3.4 {\nresolver 10.0.0.1\n}").starts_with(
                "Corefile:2 - Error during parsing: plugin/forward: resolver: upstreams given by \
             hostname are not supported yet"
            )
        );
    }

    #[test]
    fn unknown_property() {
        assert_eq!(
            err("forward . 127.0.0.1 {\n  blaatl\n}"),
            "Corefile:2 - Error during parsing: plugin/forward: unknown property 'blaatl'"
        );
        // An extra argument becomes the next "option", as in CoreDNS.
        assert!(err("forward . 1.2.3.4 {\nmax_fails 3 4\n}").ends_with("unknown property '4'"));
        assert!(err("forward . 1.2.3.4 {\nexpire 1s {\n}\n}").ends_with("unknown property '{'"));
    }

    #[test]
    fn several_lines_in_order() {
        let v = run(
            "forward 1st.example.org 10.0.0.1\nforward 2nd.example.org 10.0.0.2 {\n  \
             policy sequential\n}\nforward 3rd.example.org 10.0.0.3",
        )
        .unwrap();
        let froms: Vec<&str> = v.iter().map(|c| c.from.as_str()).collect();
        assert_eq!(
            froms,
            ["1st.example.org.", "2nd.example.org.", "3rd.example.org."]
        );
        assert_eq!(v[1].policy, Policy::Sequential);
        assert_eq!(v[2].policy, Policy::Random);
        assert_eq!(v[2].upstreams[0].label, "10.0.0.3:53");
        // An error on a later line carries that line.
        assert!(err("forward . ::1\nforward com ::2 {\nbogus\n}").starts_with("Corefile:3 -"));
    }

    #[test]
    fn go_numbers_and_durations() {
        assert_eq!(go_atoi("+5"), Ok(5));
        assert_eq!(go_atoi("-5"), Ok(-5));
        assert!(go_atoi(" 5").is_err());
        assert_eq!(go_parse_uint32("007"), Ok(7));
        assert_eq!(go_duration("-0s"), Ok((false, Duration::ZERO)));
        assert_eq!(go_duration("+0"), Ok((false, Duration::ZERO)));
        assert_eq!(go_duration("-1m"), Ok((true, Duration::from_secs(60))));
        assert_eq!(
            go_duration("-").unwrap_err(),
            "time: invalid duration \"-\""
        );
        assert_eq!(
            go_duration("--1s").unwrap_err(),
            "time: invalid duration \"--1s\""
        );
        assert_eq!(
            go_duration("-5x").unwrap_err(),
            "time: unknown unit \"x\" in duration \"-5x\""
        );
    }

    #[test]
    fn split_zone_like_coredns() {
        let s = |h: &str| split_zone(h);
        assert_eq!(s("1.1.1.1%name:853"), ("1.1.1.1:853".into(), "name".into()));
        assert_eq!(s("[::1%name]:853"), ("[::1]:853".into(), "name".into()));
        assert_eq!(s("1.1.1.1:853%name"), ("1.1.1.1:853".into(), "name".into()));
        assert_eq!(s("1.1.1.1"), ("1.1.1.1".into(), String::new()));
    }

    #[test]
    fn odd_input_does_not_panic() {
        for to in [
            "%",
            "[",
            "]",
            "[]",
            "[]:",
            "[%]:1",
            "::%",
            ":",
            "::",
            "%:",
            "tls://",
            "dns://",
            "tls://%",
            "[::1%]:53",
            "1.2.3.4%",
            "é%é:é",
            "[::1]:53]",
        ] {
            let _ = run(&format!("forward . {to}"));
        }
        // Every short TO over the characters addresses are made of.
        let alphabet = ['[', ']', '%', ':', '.', '1', 'a', '/'];
        let mut words = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = words
                .iter()
                .flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}")))
                .collect();
            for w in &longer {
                let _ = run(&format!("forward {w} tls://{w} {{\nexcept {w}\n}}"));
            }
            words = longer;
        }
        let _ = run("forward \"\" 1.2.3.4");
        let _ = run("forward . 1.2.3.4 {\nhealth_check 99999999999h\n}");
    }
}
