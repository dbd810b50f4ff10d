//! The log line format: CoreDNS's `{placeholder}` syntax compiled once at setup into pieces,
//! rendered per query into the core's buffer without allocating.

use ringdns_plugin::Request;
use ringdns_plugin::wire::{class_name, flags, rcode_name, type_name};
use std::fmt::Write as _;
use std::time::Duration;

/// CoreDNS's Common Log Format, the default.
pub const COMMON: &str = "{remote}:{port} - {>id} \"{type} {class} {name} {proto} {size} {>do} {>bufsize}\" {rcode} {>rflags} {rsize} {duration}";

/// CoreDNS's combined format: common plus the opcode.
pub const COMBINED: &str = "{remote}:{port} - {>id} \"{type} {class} {name} {proto} {size} {>do} {>bufsize}\" {rcode} {>rflags} {rsize} {duration} \"{>opcode}\"";

/// One piece of a compiled format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text copied as is.
    Lit(String),
    /// `{type}`: the query type.
    Type,
    /// `{name}`: the query name, lower-cased.
    Name,
    /// `{class}`: the query class.
    Class,
    /// `{proto}`: udp or tcp.
    Proto,
    /// `{remote}`: the client's IP (IPv6 in brackets).
    Remote,
    /// `{local}`: the server's IP the query arrived on (IPv6 in brackets).
    Local,
    /// `{port}`: the client's port.
    Port,
    /// `{size}`: the query's length in bytes.
    Size,
    /// `{duration}`: time spent in the rest of the chain, in seconds with an `s`.
    Duration,
    /// `{rcode}`: the reply's rcode name.
    Rcode,
    /// `{rsize}`: the reply's length in bytes.
    Rsize,
    /// `{>rflags}`: the reply's header flags, comma separated.
    Rflags,
    /// `{>bufsize}`: the client's reply size limit.
    Bufsize,
    /// `{>do}`: the DO bit of the query.
    Do,
    /// `{>id}`: the query ID.
    Id,
    /// `{>opcode}`: the query opcode, as a number.
    Opcode,
    /// `{/label}`: the value the request's metadata holds for `label` (`-` when the block
    /// has no metadata plugin or no plugin published the label, as CoreDNS's replacer).
    Metadata(String),
}

/// Compiles a format; `{common}` and `{combined}` expand to CoreDNS's formats, unknown
/// `{…}` placeholders are kept as literal text so a typo shows in the output.
pub fn compile(format: &str) -> Vec<Piece> {
    let format = match format {
        "{common}" => COMMON,
        "{combined}" => COMBINED,
        f => f,
    };
    let mut out: Vec<Piece> = Vec::new();
    let mut lit = String::new();
    let mut rest = format;
    while let Some(open) = rest.find('{') {
        lit.push_str(&rest[..open]);
        let after = &rest[open..];
        let Some(close) = after.find('}') else {
            lit.push_str(after);
            rest = "";
            break;
        };
        let label = &after[1..close];
        let piece = match label {
            "type" => Some(Piece::Type),
            "name" => Some(Piece::Name),
            "class" => Some(Piece::Class),
            "proto" => Some(Piece::Proto),
            "remote" => Some(Piece::Remote),
            "local" => Some(Piece::Local),
            "port" => Some(Piece::Port),
            "size" => Some(Piece::Size),
            "duration" => Some(Piece::Duration),
            "rcode" => Some(Piece::Rcode),
            "rsize" => Some(Piece::Rsize),
            ">rflags" => Some(Piece::Rflags),
            ">bufsize" => Some(Piece::Bufsize),
            ">do" => Some(Piece::Do),
            ">id" => Some(Piece::Id),
            ">opcode" => Some(Piece::Opcode),
            l if l.starts_with('/') => Some(Piece::Metadata(l[1..].to_owned())),
            _ => None,
        };
        match piece {
            Some(p) => {
                if !lit.is_empty() {
                    out.push(Piece::Lit(std::mem::take(&mut lit)));
                }
                out.push(p);
            }
            None => lit.push_str(&after[..=close]),
        }
        rest = &after[close + 1..];
    }
    lit.push_str(rest);
    if !lit.is_empty() {
        out.push(Piece::Lit(lit));
    }
    out
}

/// What the log line says of the reply; taken after the rest of the chain returned.
pub struct Outcome {
    /// The reply's rcode (the one the server will write when no plugin wrote).
    pub rcode: u16,
    /// The reply's length in bytes.
    pub rsize: usize,
    /// The reply's header flags word (0 when the server writes the reply).
    pub flags: u16,
    /// Time spent in the rest of the chain.
    pub duration: Duration,
}

/// Appends one rendered line (without the `[INFO] ` prefix or newline) to `out`.
pub fn render(pieces: &[Piece], req: &Request<'_>, o: &Outcome, out: &mut String) {
    for p in pieces {
        let _ = match p {
            Piece::Lit(s) => {
                out.push_str(s);
                Ok(())
            }
            Piece::Type => write!(out, "{}", type_name(req.query.qtype())),
            Piece::Name => req.query.qname().write_lowercase(out),
            Piece::Class => write!(out, "{}", class_name(req.query.qclass())),
            Piece::Proto => {
                out.push_str(req.proto.as_str());
                Ok(())
            }
            Piece::Remote => write_ip(out, req.client.ip()),
            Piece::Local => write_ip(out, req.local.ip()),
            Piece::Port => write!(out, "{}", req.client.port()),
            Piece::Size => write!(out, "{}", req.query.packet().len()),
            Piece::Duration => write!(out, "{}s", o.duration.as_secs_f64()),
            Piece::Rcode => write!(out, "{}", rcode_name(o.rcode)),
            Piece::Rsize => write!(out, "{}", o.rsize),
            Piece::Rflags => write_flags(out, o.flags),
            Piece::Bufsize => write!(out, "{}", req.max_reply_size()),
            Piece::Do => write!(out, "{}", req.query.opt().is_some_and(|o| o.do_bit)),
            Piece::Id => write!(out, "{}", req.query.id()),
            Piece::Opcode => write!(out, "{}", req.query.opcode()),
            Piece::Metadata(label) => {
                let value = req
                    .metadata()
                    .and_then(|m| m.with(label, |v| out.push_str(v)));
                if value.is_none() {
                    out.push('-');
                }
                Ok(())
            }
        };
    }
}

fn write_ip(out: &mut String, ip: std::net::IpAddr) -> std::fmt::Result {
    match ip {
        std::net::IpAddr::V4(v4) => write!(out, "{v4}"),
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => write!(out, "{v4}"),
            None => write!(out, "[{v6}]"),
        },
    }
}

/// CoreDNS's `flagsToString`: qr,aa,tc,rd,ra,z,ad,cd in that order.
fn write_flags(out: &mut String, flags: u16) -> std::fmt::Result {
    const NAMES: [(u16, &str); 8] = [
        (flags::QR, "qr"),
        (flags::AA, "aa"),
        (flags::TC, "tc"),
        (flags::RD, "rd"),
        (flags::RA, "ra"),
        (flags::Z, "z"),
        (flags::AD, "ad"),
        (flags::CD, "cd"),
    ];
    let mut first = true;
    for (bit, name) in NAMES {
        if flags & bit != 0 {
            if !first {
                out.push(',');
            }
            out.push_str(name);
            first = false;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_is_the_default_shape() {
        let p = compile("{common}");
        assert_eq!(p, compile(COMMON));
        assert_eq!(p[0], Piece::Remote);
        assert_eq!(p[1], Piece::Lit(":".into()));
    }

    #[test]
    fn unknown_placeholders_stay_literal() {
        assert_eq!(
            compile("a {bogus} {name} {"),
            vec![
                Piece::Lit("a {bogus} ".into()),
                Piece::Name,
                Piece::Lit(" {".into())
            ]
        );
    }

    #[test]
    fn flags_in_coredns_order() {
        let mut s = String::new();
        write_flags(&mut s, flags::QR | flags::RD | flags::RA | flags::AA).unwrap();
        assert_eq!(s, "qr,aa,rd,ra");
    }

    #[test]
    fn metadata_labels_print_their_value_or_a_dash() {
        let p = compile("{/forward/upstream} {/zone/wildcard} {/x/y}");
        assert_eq!(p[0], Piece::Metadata("forward/upstream".into()));
        let packet = [0u8, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1];
        let q = ringdns_plugin::wire::Query::parse(&packet).unwrap();
        let at = "127.0.0.1:53".parse().unwrap();
        let mut reply = Vec::new();
        let mut req = Request::new(
            q,
            at,
            at,
            ringdns_plugin::Proto::Udp,
            ".",
            "dns://:53",
            &mut reply,
            false,
        );
        let o = Outcome {
            rcode: 0,
            rsize: 0,
            flags: 0,
            duration: Duration::ZERO,
        };
        let mut line = String::new();
        render(&p, &req, &o, &mut line);
        assert_eq!(line, "- - -", "no metadata plugin");
        let meta = ringdns_plugin::metadata::Metadata::default();
        let sub = req.with_metadata(&meta);
        sub.set_metadata("forward/upstream", "127.0.0.1:5300");
        sub.set_metadata("x/y", "");
        line.clear();
        render(&p, &sub, &o, &mut line);
        assert_eq!(line, "127.0.0.1:5300 - ", "an empty value prints empty");
    }
}
