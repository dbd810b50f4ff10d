//! Zone names as CoreDNS's `plugin/normalize.go` handles them, for server-block keys and for
//! plugins' own zone arguments (forward's FROM, log's names, fallthrough zones): the
//! `ZONE[:PORT]` split, the domain-name check, FQDN, and reverse CIDR expansion.

use super::quote::go_quote;
use super::reverse::{self, Cidr};

/// Splits `ZONE[:PORT]` (no scheme) into the zone(s) and the port, as CoreDNS's
/// `plugin.SplitHostPort`: plugins use the same rule for their zone arguments.
///
/// The port is the text after the last `:` when it parses as a (signed, 64-bit) integer, so IPv6
/// CIDRs keep their colons; it is returned unchecked. The zone must be at most 255 bytes and pass
/// [`is_domain_name`]. A zone that parses as a CIDR becomes its reverse zones (fully qualified);
/// other zones are returned as written (not lower-cased, not qualified).
pub fn split_host_port(s: &str) -> Result<(Vec<String>, Option<i64>), String> {
    let mut host = s;
    let mut port = None;
    if let Some(colon) = s.rfind(':') {
        if colon == s.len() - 1 {
            return Err(format!("expecting data after last colon: {}", go_quote(s)));
        }
        if let Ok(p) = s[colon + 1..].parse::<i64>() {
            port = Some(p);
            host = &s[..colon];
        }
    }
    if host.len() > 255 {
        return Err(format!("specified zone is too long: {} > 255", host.len()));
    }
    if !is_domain_name(host) {
        return Err(format!("zone is not a valid domain name: {host}"));
    }
    let Some(cidr) = Cidr::parse(host) else {
        return Ok((vec![host.to_string()], port));
    };
    // CoreDNS refuses IPv6 CIDRs written with a leading `::` or `0`; this also catches every
    // IPv4-mapped form, which would otherwise produce in-addr.arpa names from an IPv6 prefix.
    if host.starts_with(':') || (host.starts_with('0') && host.contains(':')) {
        return Err(format!("invalid CIDR {host}"));
    }
    Ok((reverse::reverse_zones(&cidr), port))
}

/// Checks a presentation-format name the way miekg/dns `IsDomainName` does (CoreDNS's zone
/// check): non-empty, no empty label inside (`a..b`), labels under 64 octets and at most 255
/// octets on the wire, with `\X` and `\DDD` escapes counted as one octet. Any other byte is
/// allowed, as in CoreDNS.
pub fn is_domain_name(s: &str) -> bool {
    const LENMSG: usize = 256;
    if s.is_empty() {
        return false;
    }
    let s = fqdn(s);
    let b = s.as_bytes();
    let (mut off, mut begin, mut was_dot) = (0usize, 0usize, false);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                if off + 1 > LENMSG {
                    return false;
                }
                if i + 3 < b.len()
                    && b[i + 1].is_ascii_digit()
                    && b[i + 2].is_ascii_digit()
                    && b[i + 3].is_ascii_digit()
                {
                    i += 3;
                    begin += 3;
                } else {
                    i += 1;
                    begin += 1;
                }
                was_dot = false;
            }
            b'.' => {
                if was_dot {
                    return false;
                }
                was_dot = true;
                let label_len = i.saturating_sub(begin);
                if label_len >= 64 {
                    return false;
                }
                off += 1 + label_len;
                if off > LENMSG {
                    return false;
                }
                begin = i + 1;
            }
            _ => was_dot = false,
        }
        i += 1;
    }
    true
}

/// Whether `s` ends in an unescaped dot, exactly as miekg/dns `IsFqdn` decides it.
///
/// That function counts bytes back from the start of the last non-backslash *character*, so a
/// name whose last character before the dot is multi-byte UTF-8 (`ȶ.`) counts as not qualified;
/// CoreDNS then rejects it as `ȶ..`. Kept so the same keys fail.
pub fn is_fqdn(s: &str) -> bool {
    let Some(s2) = s.strip_suffix('.') else {
        return false;
    };
    let last = s2
        .char_indices()
        .rev()
        .find(|&(_, c)| c != '\\')
        .map_or(-1, |(i, _)| i as isize);
    (s2.len() as isize - last) % 2 != 0
}

/// Appends the final dot unless [`is_fqdn`] says it is there (miekg/dns `Fqdn`).
pub fn fqdn(s: &str) -> String {
    if is_fqdn(s) {
        s.to_string()
    } else {
        format!("{s}.")
    }
}

/// The schemes CoreDNS's `parse.Transport` recognises, longest first where one is a prefix
/// of another (`https3` before `https`).
const SCHEMES: [&str; 7] = ["tls", "dns", "quic", "grpc", "https3", "https", "unix"];

/// Splits a recognised `SCHEME://` off (CoreDNS `parse.Transport`); `None` means plain DNS.
pub fn split_scheme(s: &str) -> (Option<&'static str>, &str) {
    for scheme in SCHEMES {
        if let Some(rest) = s.strip_prefix(scheme).and_then(|r| r.strip_prefix("://")) {
            return (Some(scheme), rest);
        }
    }
    (None, s)
}

/// CoreDNS's `plugin.Host(s).NormalizeExact()`: any scheme and port dropped, the zone(s)
/// lower-case and fully qualified; a CIDR gives its reverse zones.
pub fn normalize_exact(s: &str) -> Result<Vec<String>, String> {
    let (_, rest) = split_scheme(s);
    let (zones, _port) = split_host_port(rest)?;
    Ok(zones.iter().map(|z| fqdn(z).to_lowercase()).collect())
}

/// CoreDNS's `plugin.OriginsFromArgsOrServerBlock`: the block's zones when no argument
/// names one, else each argument normalised ([`normalize_exact`]). CoreDNS drops an argument
/// it cannot normalise without a word; this logs `plugin/PLUGIN: ignoring zone 'ARG': why`.
pub fn origins_from_args_or_block(plugin: &str, args: &[String], block: &[String]) -> Vec<String> {
    if args.is_empty() {
        return block.to_vec();
    }
    let mut zones = Vec::new();
    for a in args {
        match normalize_exact(a) {
            Ok(z) => zones.extend(z),
            Err(e) => crate::warning!("plugin/{plugin}: ignoring zone '{a}': {e}"),
        }
    }
    zones
}
