//! CoreDNS's `plugin/pkg/replacer`: `{placeholder}` text filled in per query from the
//! request (`{name}`, `{type}`, `{remote}`, `{>id}` …), what was recorded of the reply
//! (`{rcode}`, `{rsize}`, `{duration}`, `{>rflags}`) and the request's metadata
//! (`{/plugin/label}`). log formats its lines with it, dnstap its `extra` field. A format is
//! parsed once at setup into [`Piece`]s (CoreDNS's `parseFormat`) and rendered per query
//! into the caller's buffer without allocating.

use crate::Request;
use crate::wire::{class_name, flags, rcode_name, type_name};
use std::fmt::Write as _;
use std::net::IpAddr;
use std::time::Duration;

/// What a placeholder with no value becomes (CoreDNS's `replacer.EmptyValue`).
pub const EMPTY: &str = "-";

/// One piece of a parsed format.
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
    /// `{duration}`: time spent in the rest of the chain, in seconds with an `s` (recorded).
    Duration,
    /// `{rcode}`: the reply's rcode name (recorded).
    Rcode,
    /// `{rsize}`: the reply's length in bytes (recorded).
    Rsize,
    /// `{>rflags}`: the reply's header flags, comma separated (recorded).
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

/// What was recorded of the reply, for `{rcode}`, `{rsize}`, `{>rflags}` and `{duration}`
/// (CoreDNS's `dnstest.Recorder`). A caller without one (dnstap) gets `-` for them.
#[derive(Debug, Clone, Copy)]
pub struct Recorded {
    /// The reply's rcode (the one the server will write when no plugin wrote).
    pub rcode: u16,
    /// The reply's length in bytes.
    pub rsize: usize,
    /// The reply's header flags word (0 when the server writes the reply).
    pub flags: u16,
    /// Time spent in the rest of the chain.
    pub duration: Duration,
}

fn label(name: &str) -> Option<Piece> {
    Some(match name {
        "{type}" => Piece::Type,
        "{name}" => Piece::Name,
        "{class}" => Piece::Class,
        "{proto}" => Piece::Proto,
        "{size}" => Piece::Size,
        "{remote}" => Piece::Remote,
        "{port}" => Piece::Port,
        "{local}" => Piece::Local,
        "{>id}" => Piece::Id,
        "{>opcode}" => Piece::Opcode,
        "{>do}" => Piece::Do,
        "{>bufsize}" => Piece::Bufsize,
        "{rcode}" => Piece::Rcode,
        "{rsize}" => Piece::Rsize,
        "{duration}" => Piece::Duration,
        "{>rflags}" => Piece::Rflags,
        _ => return None,
    })
}

fn push_lit(out: &mut Vec<Piece>, text: &str) {
    if text.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(Piece::Lit(l)) => l.push_str(text),
        _ => out.push(Piece::Lit(text.to_owned())),
    }
}

/// Parses a format as CoreDNS's `parseFormat`: each `}` closes the nearest `{` before it
/// (so `{ {name} }` holds `{name}`); a `{…}` that is neither a known label nor a
/// `{/metadata}` label stays literal text, so a typo shows in the output. Adjacent literal
/// text is one piece.
pub fn parse(format: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut s = format;
    while let Some(j) = s.find('}') {
        let Some(i) = s[..j].rfind('{') else {
            push_lit(&mut out, &s[..=j]);
            s = &s[j + 1..];
            continue;
        };
        let val = &s[i..=j];
        let piece = label(val).or_else(|| {
            val.strip_prefix("{/")
                .map(|l| Piece::Metadata(l[..l.len() - 1].to_owned()))
        });
        match piece {
            Some(p) => {
                push_lit(&mut out, &s[..i]);
                out.push(p);
            }
            None => push_lit(&mut out, &s[..=j]),
        }
        s = &s[j + 1..];
    }
    push_lit(&mut out, s);
    out
}

/// Whether `pieces` hold literal text only: the format needs no rendering per query.
pub fn is_literal(pieces: &[Piece]) -> bool {
    pieces.iter().all(|p| matches!(p, Piece::Lit(_)))
}

/// Appends `pieces` rendered for `req` (and `recorded`, when the caller has a reply) to
/// `out`.
pub fn render(pieces: &[Piece], req: &Request<'_>, recorded: Option<&Recorded>, out: &mut String) {
    for p in pieces {
        let _ = match (p, recorded) {
            (Piece::Lit(s), _) => {
                out.push_str(s);
                Ok(())
            }
            (Piece::Type, _) => write!(out, "{}", type_name(req.query.qtype())),
            (Piece::Name, _) => req.query.qname().write_lowercase(out),
            (Piece::Class, _) => write!(out, "{}", class_name(req.query.qclass())),
            (Piece::Proto, _) => {
                out.push_str(req.proto.as_str());
                Ok(())
            }
            (Piece::Remote, _) => write_ip(out, req.client.ip()),
            (Piece::Local, _) => write_ip(out, req.local.ip()),
            (Piece::Port, _) => write!(out, "{}", req.client.port()),
            (Piece::Size, _) => write!(out, "{}", req.query.packet().len()),
            (Piece::Bufsize, _) => write!(out, "{}", req.max_reply_size()),
            (Piece::Do, _) => write!(out, "{}", req.query.opt().is_some_and(|o| o.do_bit)),
            (Piece::Id, _) => write!(out, "{}", req.query.id()),
            (Piece::Opcode, _) => write!(out, "{}", req.query.opcode()),
            (Piece::Duration, Some(r)) => write!(out, "{}s", r.duration.as_secs_f64()),
            (Piece::Rcode, Some(r)) => write!(out, "{}", rcode_name(r.rcode)),
            (Piece::Rsize, Some(r)) => write!(out, "{}", r.rsize),
            (Piece::Rflags, Some(r)) => write_flags(out, r.flags),
            (Piece::Duration | Piece::Rcode | Piece::Rsize | Piece::Rflags, None) => {
                out.push_str(EMPTY);
                Ok(())
            }
            (Piece::Metadata(label), _) => {
                let value = req
                    .metadata()
                    .and_then(|m| m.with(label, |v| out.push_str(v)));
                if value.is_none() {
                    out.push_str(EMPTY);
                }
                Ok(())
            }
        };
    }
}

fn write_ip(out: &mut String, ip: IpAddr) -> std::fmt::Result {
    match ip {
        IpAddr::V4(v4) => write!(out, "{v4}"),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => write!(out, "{v4}"),
            None => write!(out, "[{v6}]"),
        },
    }
}

/// CoreDNS's `appendFlags`: qr,aa,tc,rd,ra,z,ad,cd in that order.
fn write_flags(out: &mut String, word: u16) -> std::fmt::Result {
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
        if word & bit != 0 {
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
    use crate::Proto;
    use crate::metadata::Metadata;

    #[test]
    fn each_close_brace_takes_the_nearest_open_one_as_coredns() {
        assert_eq!(
            parse("{ {name} }"),
            vec![
                Piece::Lit("{ ".into()),
                Piece::Name,
                Piece::Lit(" }".into())
            ]
        );
        assert_eq!(
            parse("A } {type}"),
            vec![Piece::Lit("A } ".into()), Piece::Type]
        );
        assert_eq!(
            parse("a {bogus} {name} {"),
            vec![
                Piece::Lit("a {bogus} ".into()),
                Piece::Name,
                Piece::Lit(" {".into())
            ]
        );
        assert_eq!(
            parse("{/forward/upstream}{/}"),
            vec![
                Piece::Metadata("forward/upstream".into()),
                Piece::Metadata(String::new())
            ]
        );
        assert!(is_literal(&parse("just {text} here")));
        assert!(!is_literal(&parse("{>id}")));
        assert!(parse("").is_empty());
    }

    #[test]
    fn flags_in_coredns_order() {
        let mut s = String::new();
        write_flags(&mut s, flags::QR | flags::RD | flags::RA | flags::AA).unwrap();
        assert_eq!(s, "qr,aa,rd,ra");
    }

    #[test]
    fn request_labels_metadata_and_unrecorded_reply_labels() {
        // ID 0x1234, RD, one question: example.ORG. IN A.
        let mut packet = vec![0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
        packet.extend_from_slice(b"\x07example\x03ORG\x00\x00\x01\x00\x01");
        let q = crate::wire::Query::parse(&packet).unwrap();
        let client = "[2001:db8::1]:5300".parse().unwrap();
        let local = "127.0.0.1:53".parse().unwrap();
        let mut reply = Vec::new();
        let mut req = Request::new(
            q,
            client,
            local,
            Proto::Udp,
            ".",
            "dns://:53",
            &mut reply,
            false,
        );
        let p = parse(
            "{name} {type} {class} {proto} {remote} {port} {local} {size} {>id} {>opcode} {>do} {rcode} {rsize} {duration} {>rflags} {/forward/upstream}",
        );
        let mut s = String::new();
        render(&p, &req, None, &mut s);
        assert_eq!(
            s,
            "example.org. A IN udp [2001:db8::1] 5300 127.0.0.1 29 4660 0 false - - - - -"
        );
        let meta = Metadata::default();
        let sub = req.with_metadata(&meta);
        sub.set_metadata("forward/upstream", "127.0.0.1:5301");
        let rec = Recorded {
            rcode: 3,
            rsize: 40,
            flags: flags::QR | flags::RD,
            duration: Duration::from_millis(1500),
        };
        s.clear();
        render(
            &parse("{rcode} {rsize} {duration} {>rflags} {/forward/upstream}"),
            &sub,
            Some(&rec),
            &mut s,
        );
        assert_eq!(s, "NXDOMAIN 40 1.5s qr,rd 127.0.0.1:5301");
    }
}
