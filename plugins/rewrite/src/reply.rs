//! The reply the client gets back once a rule matched (CoreDNS's `ResponseReverter`): the
//! client's own question, and the reply's names, values, TTLs, rcode and options as the
//! rules' response rewrites make them, written anew (a name's length may change, so the
//! reply's compression pointers would not hold).

use crate::plan::{Plan, Response, Strings, options_rdata};
use ringdns_plugin::lookup::append_answers;
use ringdns_plugin::name_text::NameText;
use ringdns_plugin::wire::{
    EdnsOptions, Header, MessageWriter, Name, Owner, Query, Record, Section, WireError, copy_rdata,
    expand_name, expand_rdata, name_to_wire, records, rtype,
};

/// A CNAME rule's rewrite of the answer: the CNAME at `index` of the answer section points
/// to `target` now, and `looked_up` (the server's reply for it) gives the rest.
pub struct CnameFollow {
    /// The position of the rewritten CNAME among the answer records.
    pub index: usize,
    /// Its new target, uncompressed wire form.
    pub target: Vec<u8>,
    /// The reply for the target, `None` when the lookup failed.
    pub looked_up: Option<Vec<u8>>,
}

/// The first CNAME of `reply`'s answer whose target a CNAME rule of `plan` rewrites: its
/// position and new target.
pub fn cname_to_follow(reply: &[u8], plan: &Plan<'_>) -> Option<(usize, Vec<u8>)> {
    let rules: Vec<_> = plan
        .responses
        .iter()
        .filter_map(|r| match r {
            Response::Cname(p, to) => Some((*p, *to)),
            _ => None,
        })
        .collect();
    if rules.is_empty() {
        return None;
    }
    let it = records(reply).ok()?;
    for (index, r) in it.enumerate() {
        let r = r.ok()?;
        if r.section != Section::Answer {
            break;
        }
        if r.rtype == rtype::CNAME {
            let mut target = Vec::new();
            expand_name(reply, r.rdata.start, r.rdata.end, &mut target).ok()?;
            let text = NameText::of(&Name::from_wire(&target).ok()?);
            for (pattern, to) in &rules {
                if let Some(new) = pattern.rewrite(text.as_str(), to) {
                    return name_to_wire(&new).ok().map(|w| (index, w));
                }
            }
        }
    }
    None
}

/// Writes into `out` the client's reply made of `reply` (what the rest of the chain wrote
/// for the query `plan` sent on). False, `out` unusable, when `reply` does not parse.
pub fn rewrite(
    reply: &[u8],
    client: &Query<'_>,
    plan: &Plan<'_>,
    cname: Option<&CnameFollow>,
    out: &mut Vec<u8>,
) -> bool {
    written(reply, client, plan, cname, out).is_ok()
}

fn written(
    reply: &[u8],
    client: &Query<'_>,
    plan: &Plan<'_>,
    cname: Option<&CnameFollow>,
    out: &mut Vec<u8>,
) -> Result<(), WireError> {
    let h = Header::new(reply);
    let it = records(reply)?;
    let mut all: Vec<Record> = Vec::new();
    for r in it {
        all.push(r?);
    }
    let opt = all
        .iter()
        .rev()
        .find(|r| r.section == Section::Additional && r.rtype == rtype::OPT);
    let ext = opt.map_or(0, |o| (o.ttl(reply) >> 24) as u8);
    let rcode = (ext << 4) | (h.flags() & 0xF) as u8;
    let rcode = plan.map_rcode(rcode).unwrap_or(rcode);
    let mut flags = h.flags() & !0xF;
    let mut w = MessageWriter::reply(client, out, rcode);
    let qname = client.qname_bytes();
    let mut answer_index = 0;
    let mut appended = false;
    let (mut owner, mut rdata) = (Vec::with_capacity(256), Vec::with_capacity(512));
    for r in &all {
        if r.section != Section::Answer
            && !appended
            && let Some(c) = cname
        {
            appended = true;
            if let Some(up) = &c.looked_up {
                append_answers(up, &mut w);
                if Header::new(up).flags() & ringdns_plugin::wire::flags::TC != 0 {
                    flags |= ringdns_plugin::wire::flags::TC;
                } else {
                    flags &= !ringdns_plugin::wire::flags::TC;
                }
            }
        }
        if r.section == Section::Additional && r.rtype == rtype::OPT {
            if plan.added_opt && client.opt().is_none() {
                // RFC 6891 §7: no OPT in a reply to a query without one.
                continue;
            }
            let mut options: Vec<(u16, Vec<u8>)> = EdnsOptions::new(&reply[r.rdata.clone()])
                .map(|(c, d)| (c, d.to_vec()))
                .collect();
            for resp in plan.responses.iter().rev() {
                match resp {
                    Response::OptDrop(code) => options.retain(|(c, _)| c != code),
                    Response::OptRestore(code, data) => {
                        if let Some(o) = options.iter_mut().find(|(c, _)| c == code) {
                            o.1 = data.clone();
                        }
                    }
                    _ => {}
                }
            }
            rdata.clear();
            options_rdata(&mut rdata, &options);
            let _ = w.push(
                Section::Additional,
                Owner::Wire(&[0]),
                rtype::OPT,
                r.class,
                (r.ttl(reply) & 0x00FF_FFFF) | (u32::from(rcode >> 4) << 24),
                &rdata,
            );
            continue;
        }
        if r.section == Section::Answer
            && let Some(c) = cname
        {
            let i = answer_index;
            answer_index += 1;
            if i > c.index || r.rtype != rtype::CNAME {
                continue;
            }
            if i == c.index {
                owner.clear();
                expand_name(reply, r.owner.start, reply.len(), &mut owner)?;
                let o = owner_of(&owner, qname);
                let _ = w.push(
                    Section::Answer,
                    o,
                    rtype::CNAME,
                    r.class,
                    r.ttl(reply),
                    &c.target,
                );
                continue;
            }
        }
        owner.clear();
        expand_name(reply, r.owner.start, reply.len(), &mut owner)?;
        if let Some(new) = names(plan, &owner, true) {
            owner = new;
        }
        let mut ttl = r.ttl(reply);
        for resp in plan.responses.iter().rev() {
            if let Response::Ttl(min, max) = resp {
                ttl = ttl.clamp(*min, *max);
            }
        }
        rdata.clear();
        values(reply, r, plan, &mut rdata)?;
        let _ = w.push(
            r.section,
            owner_of(&owner, qname),
            r.rtype,
            r.class,
            ttl,
            &rdata,
        );
    }
    if !appended
        && let Some(c) = cname
        && let Some(up) = &c.looked_up
    {
        // The answer was the whole reply: the looked-up records go after it, but before
        // what the writer would refuse (nothing follows here).
        append_answers(up, &mut w);
    }
    w.finish();
    let word = (flags & !0xF) | u16::from(rcode & 0xF);
    out[2..4].copy_from_slice(&word.to_be_bytes());
    Ok(())
}

/// The owner to write: the question (its pointer keeps the client's spelling) when the
/// name is the client's query name, else the name itself.
fn owner_of<'n>(owner: &'n [u8], qname: &[u8]) -> Owner<'n> {
    if owner.eq_ignore_ascii_case(qname) {
        Owner::Question
    } else {
        Owner::Wire(owner)
    }
}

/// `wire` as the name (`owner`) or value rewrites of `plan` make it, `None` when they leave
/// it as it is.
fn names(plan: &Plan<'_>, wire: &[u8], owner: bool) -> Option<Vec<u8>> {
    let mut rules = plan
        .responses
        .iter()
        .rev()
        .filter_map(|r| match (r, owner) {
            (Response::Names(s), true) | (Response::Values(s), false) => Some(s),
            _ => None,
        });
    let first: &Strings<'_> = rules.next()?;
    let text = NameText::of(&Name::from_wire(wire).ok()?);
    let mut name = first.apply(text.as_str());
    for s in rules {
        let current = name.as_deref().unwrap_or(text.as_str());
        if let Some(n) = s.apply(current) {
            name = Some(n);
        }
    }
    name.and_then(|n| name_to_wire(&n).ok())
}

/// The types whose value names the `answer value` rules rewrite (CoreDNS's
/// `getRecordValueForRewrite`): one name each, SOA's MNAME only.
fn has_value(t: u16) -> bool {
    matches!(
        t,
        rtype::SRV | rtype::MX | rtype::CNAME | rtype::NS | rtype::DNAME | rtype::SOA | rtype::PTR
    )
}

/// NAPTR (RFC 3403): its replacement is its value.
const NAPTR: u16 = 35;

/// Appends the RDATA of `r` to `out`, names uncompressed, its value name rewritten.
fn values(reply: &[u8], r: &Record, plan: &Plan<'_>, out: &mut Vec<u8>) -> Result<(), WireError> {
    let rewrites = plan
        .responses
        .iter()
        .any(|x| matches!(x, Response::Values(_)));
    if rewrites && r.rtype == NAPTR {
        return naptr(reply, r, plan, out);
    }
    if !rewrites || !has_value(r.rtype) {
        return expand_rdata(reply, r, out);
    }
    let mut first = true;
    copy_rdata(reply, r, out, |out, pos, end| {
        let mut name = Vec::new();
        let next = expand_name(reply, pos, end, &mut name)?;
        if std::mem::take(&mut first)
            && let Some(new) = names(plan, &name, false)
        {
            name = new;
        }
        out.extend_from_slice(&name);
        Ok(next)
    })
}

/// A NAPTR's RDATA with its replacement rewritten: order, preference, three strings, name.
fn naptr(reply: &[u8], r: &Record, plan: &Plan<'_>, out: &mut Vec<u8>) -> Result<(), WireError> {
    let d = &reply[r.rdata.clone()];
    let mut at = 4;
    for _ in 0..3 {
        let len = usize::from(*d.get(at).ok_or(WireError::Truncated)?);
        at += 1 + len;
    }
    if at > d.len() {
        return Err(WireError::Truncated);
    }
    out.extend_from_slice(&d[..at]);
    let name = &d[at..];
    match names(plan, name, false) {
        Some(new) => out.extend_from_slice(&new),
        None => out.extend_from_slice(name),
    }
    Ok(())
}
