//! What the rules make of one query (CoreDNS's loop over `rw.Rules`): the query the rest of
//! the chain is served, and the rewrites its reply needs on the way back.
//!
//! A query no rule matches makes no plan and costs no allocation: its name is matched as
//! text on the stack ([`NameText`]). A plan is made, and allocates, only once a rule
//! matches.

use crate::pattern::Pattern;
use crate::rules::{Action, Answer, Edns0, Kind, Mode, Option0, Rule, Variable};
use regex::Regex;
use ringdns_plugin::Request;
use ringdns_plugin::name_text::NameText;
use ringdns_plugin::normalize::is_domain_name;
use ringdns_plugin::wire::{
    Section, edns, expand_name, expand_rdata, name_to_wire, records, rtype,
};
use std::net::IpAddr;

/// The UDP size of an OPT a rule adds to a query that had none (CoreDNS's `SetEdns0(4096)`).
const ADDED_OPT_SIZE: u16 = 4096;

/// A rewrite of names in the reply.
#[derive(Debug, Clone)]
pub enum Strings<'c> {
    /// The name (or a name under it) the query was rewritten to, mapped back to the
    /// query's name before that rewrite (`answer auto`, and every `exact` rule).
    Remap { orig: String, to: String },
    /// Names ending in the first end in the second instead (a suffix rule's `auto`).
    Suffix(&'c str, &'c str),
    /// Names the expression matches become the template, its groups filled in.
    Regex(&'c Regex, &'c str),
}

impl Strings<'_> {
    /// `name` (lower-cased presentation form) rewritten, `None` when this leaves it alone.
    pub fn apply(&self, name: &str) -> Option<String> {
        match self {
            Strings::Remap { orig, to } => {
                if name == orig {
                    return Some(to.clone());
                }
                // A name under `orig`: its labels before `orig` kept.
                let i = name.len().checked_sub(orig.len())?;
                (i > 0 && name.as_bytes()[i - 1] == b'.' && &name[i..] == orig)
                    .then(|| format!("{}{to}", &name[..i]))
            }
            Strings::Suffix(from, to) => name.strip_suffix(from).map(|rest| format!("{rest}{to}")),
            Strings::Regex(re, to) => crate::pattern::substitute(re, name, to),
        }
    }
}

/// One rewrite of the reply, applied in the reverse of the rules' order (CoreDNS's).
#[derive(Debug, Clone)]
pub enum Response<'c> {
    /// Owner names.
    Names(Strings<'c>),
    /// Names in RDATA.
    Values(Strings<'c>),
    /// TTLs clamped into `min..=max`.
    Ttl(u32, u32),
    /// The rcode `old` becomes `new`.
    Rcode(u8, u8),
    /// The reply's option of this code removed (a `revert`ed option the rules added).
    OptDrop(u16),
    /// The reply's option of this code given back the client's data (a `revert`ed change).
    OptRestore(u16, Vec<u8>),
    /// A CNAME target the pattern matches becomes `to`, the rest of the answer looked up.
    Cname(&'c Pattern, &'c str),
}

/// What the rules made of a query that one of them matched.
#[derive(Debug, Default)]
pub struct Plan<'c> {
    /// The query for the rest of the chain, when the rules changed the query (taken by
    /// the edit that serves it).
    pub packet: Option<Vec<u8>>,
    /// The rules changed the query: the reply needs the client's question back.
    pub edited: bool,
    /// The query's type as the rules left it, for a CNAME rule's lookups.
    pub qtype: u16,
    /// The rules added an OPT to a query that had none: the client's reply gets none.
    pub added_opt: bool,
    /// The reply's rewrites, in the rules' order.
    pub responses: Vec<Response<'c>>,
    /// A CNAME rule matched: the reply may need a lookup, so the query waits.
    pub lookup: bool,
}

impl Plan<'_> {
    /// Whether the reply is rewritten at all (or only its question restored).
    pub fn rewrites_reply(&self) -> bool {
        self.edited || !self.responses.is_empty()
    }

    /// The rcode the rules make of `rcode` (the last rule first, as CoreDNS).
    pub fn map_rcode(&self, rcode: u8) -> Option<u8> {
        let mut out = rcode;
        for r in self.responses.iter().rev() {
            if let Response::Rcode(old, new) = r
                && *old == out
            {
                out = *new;
            }
        }
        (out != rcode).then_some(out)
    }
}

/// What the rules make of a query.
pub enum Planned<'c> {
    /// No rule matched: the query goes on as it came.
    Untouched,
    /// A rule matched.
    Plan(Box<Plan<'c>>),
    /// A rule made the name invalid (CoreDNS's error to the client).
    Invalid(String),
}

/// The query as the rules change it, built only once one matches.
struct Edited {
    name: Option<String>,
    qtype: Option<u16>,
    qclass: Option<u16>,
    /// The OPT's options, once an `edns0` rule ran.
    options: Option<Vec<(u16, Vec<u8>)>>,
}

/// Runs `rules` over the query of `req`; `text` is the core's buffer for the name's text.
pub fn plan<'c>(rules: &'c [Rule], req: &Request<'_>, text: &mut NameText) -> Planned<'c> {
    let q = &req.query;
    let text = text.set(&q.qname());
    let mut name: Option<String> = None;
    let mut qtype = q.qtype();
    let mut qclass = q.qclass();
    let mut options: Option<Vec<(u16, Vec<u8>)>> = None;
    let mut plan: Option<Box<Plan<'c>>> = None;
    let mut type_changed = false;
    let mut class_changed = false;
    for rule in rules {
        let current = name.as_deref().unwrap_or(text);
        let done = match &rule.kind {
            Kind::Name {
                pattern,
                to,
                auto,
                answers,
            } => match pattern.rewrite(current, to) {
                None => false,
                Some(new) => {
                    let p = plan.get_or_insert_with(Box::default);
                    if *auto {
                        let back = Strings::Remap {
                            orig: new.clone(),
                            to: current.to_string(),
                        };
                        p.responses.push(Response::Names(back.clone()));
                        p.responses.push(Response::Values(back));
                    }
                    for a in answers {
                        match a {
                            Answer::Name(re, t) => {
                                p.responses.push(Response::Names(Strings::Regex(re, t)));
                            }
                            Answer::Value(re, t) => {
                                p.responses.push(Response::Values(Strings::Regex(re, t)));
                            }
                            Answer::Suffix(from, t) => {
                                p.responses.push(Response::Names(Strings::Suffix(from, t)));
                                p.responses.push(Response::Values(Strings::Suffix(from, t)));
                            }
                        }
                    }
                    if !is_domain_name(&new) || name_to_wire(&new).is_err() {
                        return Planned::Invalid(format!("invalid name after rewrite: {new}"));
                    }
                    name = Some(new);
                    true
                }
            },
            Kind::Type { from, to } => {
                let hit = qtype == *from;
                if hit {
                    qtype = *to;
                    type_changed = true;
                    plan.get_or_insert_with(Box::default);
                }
                hit
            }
            Kind::Class { from, to } => {
                let hit = qclass == *from;
                if hit {
                    qclass = *to;
                    class_changed = true;
                    plan.get_or_insert_with(Box::default);
                }
                hit
            }
            Kind::Ttl { pattern, min, max } => {
                let hit = pattern.matches(current);
                if hit {
                    let p = plan.get_or_insert_with(Box::default);
                    p.responses.push(Response::Ttl(*min, *max));
                }
                hit
            }
            Kind::Rcode { pattern, old, new } => {
                let hit = pattern.matches(current);
                if hit {
                    let p = plan.get_or_insert_with(Box::default);
                    p.responses.push(Response::Rcode(*old, *new));
                }
                hit
            }
            Kind::Cname { pattern, to } => {
                let p = plan.get_or_insert_with(Box::default);
                p.responses.push(Response::Cname(pattern, to));
                p.lookup = true;
                true
            }
            Kind::Edns0(e) => {
                let p = plan.get_or_insert_with(Box::default);
                let opts = options.get_or_insert_with(|| {
                    q.opt().map_or_else(Vec::new, |o| {
                        o.iter().map(|(c, d)| (c, d.to_vec())).collect()
                    })
                });
                if q.opt().is_none() {
                    p.added_opt = true;
                }
                let qname_text = name.clone().unwrap_or_else(|| q.qname().to_string());
                edns0(e, opts, req, &qname_text, qtype, &mut p.responses)
            }
        };
        if done && rule.mode == Mode::Stop {
            break;
        }
    }
    let Some(mut p) = plan else {
        return Planned::Untouched;
    };
    p.qtype = qtype;
    if name.is_some() || type_changed || class_changed || options.is_some() {
        let e = Edited {
            name,
            qtype: type_changed.then_some(qtype),
            qclass: class_changed.then_some(qclass),
            options,
        };
        p.packet = Some(edited_packet(req, &e));
        p.edited = true;
    }
    Planned::Plan(p)
}

/// CoreDNS's `edns0*Rule.Rewrite` over the query's options: whether the rule counts as
/// done (for `stop`), and the reply's rewrites a `revert` asks for.
fn edns0<'c>(
    e: &Edns0,
    opts: &mut Vec<(u16, Vec<u8>)>,
    req: &Request<'_>,
    qname: &str,
    qtype: u16,
    responses: &mut Vec<Response<'c>>,
) -> bool {
    let code = match &e.option {
        Option0::Local { code, .. } | Option0::Variable { code, .. } => *code,
        Option0::Nsid => edns::NSID,
        Option0::Subnet { .. } => edns::SUBNET,
    };
    if e.action == Action::Unset {
        opts.retain(|(c, _)| *c != code);
        return true;
    }
    let data = match &e.option {
        Option0::Local { data, .. } => data.clone(),
        Option0::Nsid => Vec::new(),
        Option0::Variable { var, .. } => match variable(var, req, qname, qtype) {
            Some(d) => d,
            None => return false,
        },
        Option0::Subnet { v4, v6 } => subnet(req.client.ip(), *v4, *v6),
    };
    match opts.iter_mut().find(|(c, _)| *c == code) {
        Some((_, old)) => {
            if !matches!(e.action, Action::Set | Action::Replace) {
                return false;
            }
            if e.revert {
                responses.push(Response::OptRestore(code, old.clone()));
            }
            *old = data;
            true
        }
        None => {
            if !matches!(e.action, Action::Set | Action::Append) {
                return false;
            }
            opts.push((code, data));
            if e.revert {
                responses.push(Response::OptDrop(code));
            }
            true
        }
    }
}

/// The data of a `{...}` variable, `None` when there is none (a metadata label unset or
/// empty: CoreDNS then leaves the rule undone).
fn variable(var: &Variable, req: &Request<'_>, qname: &str, qtype: u16) -> Option<Vec<u8>> {
    let ip = |a: IpAddr| match a {
        IpAddr::V4(v) => v.octets().to_vec(),
        IpAddr::V6(v) => v.octets().to_vec(),
    };
    Some(match var {
        Variable::Qname => qname.as_bytes().to_vec(),
        Variable::Qtype => qtype.to_be_bytes().to_vec(),
        Variable::ClientIp => ip(req.client.ip()),
        Variable::ClientPort => req.client.port().to_be_bytes().to_vec(),
        Variable::Protocol => req.proto.as_str().as_bytes().to_vec(),
        Variable::ServerIp => ip(req.local.ip()),
        Variable::ServerPort => req.local.port().to_be_bytes().to_vec(),
        Variable::Label(l) => req
            .metadata()?
            .with(l, |v| v.as_bytes().to_vec())
            .filter(|v| !v.is_empty())?,
    })
}

/// An EDNS Client Subnet option (RFC 7871 §6) for `ip` cut to its family's prefix: the
/// address bytes the prefix covers, the rest zeroed, scope 0.
pub fn subnet(ip: IpAddr, v4: u8, v6: u8) -> Vec<u8> {
    let (family, prefix, bytes): (u16, u8, Vec<u8>) = match ip {
        IpAddr::V4(a) => (1, v4, a.octets().to_vec()),
        IpAddr::V6(a) => match a.to_ipv4_mapped() {
            Some(m) => (1, v4, m.octets().to_vec()),
            None => (2, v6, a.octets().to_vec()),
        },
    };
    let mut out = Vec::with_capacity(4 + bytes.len());
    out.extend_from_slice(&family.to_be_bytes());
    out.push(prefix);
    out.push(0);
    let keep = usize::from(prefix).div_ceil(8);
    for (i, b) in bytes.iter().take(keep).enumerate() {
        let bits = usize::from(prefix).saturating_sub(i * 8).min(8);
        let mask = if bits == 8 { 0xFF } else { !(0xFFu8 >> bits) };
        out.push(b & mask);
    }
    out
}

/// The query the rest of the chain is served: the client's header, the question as the
/// rules left it, the client's other records with their names uncompressed (the question's
/// length may have changed), and the OPT with the rules' options.
fn edited_packet(req: &Request<'_>, e: &Edited) -> Vec<u8> {
    let q = &req.query;
    let packet = q.packet();
    let mut out = Vec::with_capacity(packet.len() + 64);
    out.extend_from_slice(&packet[..12]);
    match &e.name {
        Some(n) => out.extend_from_slice(&name_to_wire(n).unwrap_or_else(|_| vec![0])),
        None => out.extend_from_slice(q.qname_bytes()),
    }
    out.extend_from_slice(&e.qtype.unwrap_or(q.qtype()).to_be_bytes());
    out.extend_from_slice(&e.qclass.unwrap_or(q.qclass()).to_be_bytes());
    let mut counts = [0u16; 3];
    let mut opt_seen = false;
    if let Ok(it) = records(packet) {
        for r in it.flatten() {
            if r.section == Section::Additional && r.rtype == rtype::OPT {
                opt_seen = true;
                match &e.options {
                    Some(opts) => push_opt(&mut out, r.class, r.ttl(packet), opts),
                    None => {
                        out.push(0);
                        out.extend_from_slice(&packet[r.owner.end..r.range.end]);
                    }
                }
                counts[2] += 1;
                continue;
            }
            let mut owner = Vec::new();
            let mut rdata = Vec::new();
            if expand_name(packet, r.owner.start, packet.len(), &mut owner).is_err()
                || expand_rdata(packet, &r, &mut rdata).is_err()
            {
                continue;
            }
            out.extend_from_slice(&owner);
            out.extend_from_slice(&packet[r.owner.end..r.owner.end + 8]);
            out.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
            out.extend_from_slice(&rdata);
            counts[r.section as usize] += 1;
        }
    }
    if !opt_seen && let Some(opts) = &e.options {
        push_opt(&mut out, ADDED_OPT_SIZE, 0, opts);
        counts[2] += 1;
    }
    out[4..6].copy_from_slice(&1u16.to_be_bytes());
    out[6..8].copy_from_slice(&counts[0].to_be_bytes());
    out[8..10].copy_from_slice(&counts[1].to_be_bytes());
    out[10..12].copy_from_slice(&counts[2].to_be_bytes());
    out
}

/// Appends an OPT record with `options`.
pub fn push_opt(out: &mut Vec<u8>, udp_size: u16, ttl: u32, options: &[(u16, Vec<u8>)]) {
    out.push(0);
    out.extend_from_slice(&rtype::OPT.to_be_bytes());
    out.extend_from_slice(&udp_size.to_be_bytes());
    out.extend_from_slice(&ttl.to_be_bytes());
    let len: usize = options.iter().map(|(_, d)| 4 + d.len()).sum();
    out.extend_from_slice(&(len.min(usize::from(u16::MAX)) as u16).to_be_bytes());
    options_rdata(out, options);
}

/// Appends an OPT's RDATA: each option's code, length and data.
pub fn options_rdata(out: &mut Vec<u8>, options: &[(u16, Vec<u8>)]) {
    for (code, data) in options {
        out.extend_from_slice(&code.to_be_bytes());
        out.extend_from_slice(&(data.len() as u16).to_be_bytes());
        out.extend_from_slice(data);
    }
}
