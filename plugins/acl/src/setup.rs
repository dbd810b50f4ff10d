//! The Corefile side of acl: `acl [ZONES...] { ACTION [type QTYPE...] [net SOURCE...] }`,
//! parsed as CoreDNS's `plugin/acl/setup.go` parses it, with its error texts.

use crate::{Action, Config, Nets, Policy, QTypes, Rule, Zone};
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::normalize::origins_from_args_or_block;
use ringdns_plugin::quote::go_quote;
use ringdns_plugin::reverse::Cidr;
use ringdns_plugin::wire::{name_to_wire, type_name};
use ringdns_plugin::{BlockSetup, Plugin};

/// Parses every `acl` of the block: one rule each, in Corefile order.
pub fn parse(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Config, Error> {
    let mut rules = Vec::new();
    while d.next() {
        let args = d.remaining_args();
        let zones = origins_from_args_or_block(crate::Acl::NAME, &args, &block.zones)
            .into_iter()
            .filter_map(|name| {
                let wire = name_to_wire(&name).ok()?;
                Some(Zone { name, wire })
            })
            .collect();
        let mut policies = Vec::new();
        while d.next_block() {
            policies.push(policy(d)?);
        }
        rules.push(Rule { zones, policies });
    }
    Ok(Config {
        rules,
        view: block.view.as_deref().unwrap_or_default().into(),
    })
}

fn fail(d: &Dispenser<'_>, msg: impl std::fmt::Display) -> Error {
    d.plugin_err(crate::Acl::NAME, msg)
}

/// One `ACTION [type QTYPE...] [net SOURCE...]` line, the cursor on ACTION.
fn policy(d: &mut Dispenser<'_>) -> Result<Policy, Error> {
    let action = match d.val().to_lowercase().as_str() {
        "allow" => Action::Allow,
        "block" => Action::Block,
        "filter" => Action::Filter,
        "drop" => Action::Drop,
        _ => {
            return Err(fail(
                d,
                format_args!(
                    "unexpected token {}; expect 'allow', 'block', 'filter' or 'drop'",
                    go_quote(d.val())
                ),
            ));
        }
    };
    let mut qtypes: Option<QTypes> = None;
    let mut nets: Option<Nets> = None;
    let tokens = d.remaining_args();
    let mut rest = &tokens[..];
    while let Some((first, after)) = rest.split_first() {
        if !is_section(first) {
            return Err(fail(
                d,
                format_args!("unexpected token {}; expect 'type | net'", go_quote(first)),
            ));
        }
        let section = first.to_lowercase();
        let n = after.iter().take_while(|t| !is_section(t)).count();
        let (values, next) = after.split_at(n);
        rest = next;
        if values.is_empty() {
            return Err(fail(
                d,
                format_args!("no token specified in {} section", go_quote(&section)),
            ));
        }
        if section == "type" {
            let q = qtypes.get_or_insert_with(QTypes::default);
            for v in values {
                // `*` (or miekg's `None`, type 0, which is what `*` stands for) matches every
                // type; CoreDNS reads no further token of the section.
                if v == "*" {
                    q.all = true;
                    break;
                }
                match type_from(v) {
                    Some(0) => q.all = true,
                    Some(t) => q.types.push(t),
                    None => {
                        return Err(fail(
                            d,
                            format_args!("unexpected token {}; expect legal QTYPE", go_quote(v)),
                        ));
                    }
                }
            }
        } else {
            let list = nets.get_or_insert(Nets::Some(Vec::new()));
            for v in values {
                if v == "*" {
                    *list = Nets::All;
                    break;
                }
                let v = normalize(v);
                let Some(cidr) = Cidr::parse(&v) else {
                    return Err(fail(
                        d,
                        format_args!("illegal CIDR notation {}", go_quote(&v)),
                    ));
                };
                if let Nets::Some(l) = list {
                    l.push(cidr);
                }
            }
        }
    }
    Ok(Policy {
        action,
        // No `type` section means every type; no `net` section, every address.
        qtypes: qtypes.unwrap_or(QTypes {
            all: true,
            types: Vec::new(),
        }),
        nets: nets.unwrap_or(Nets::All),
    })
}

/// CoreDNS's `isPreservedIdentifier`: the section words, in any case.
fn is_section(token: &str) -> bool {
    token.eq_ignore_ascii_case("type") || token.eq_ignore_ascii_case("net")
}

/// miekg's `StringToType`: the mnemonics as `TypeToString` spells them (case matters).
fn type_from(s: &str) -> Option<u16> {
    (0..=u16::MAX).find(|t| type_name(*t).as_str() == Some(s))
}

/// CoreDNS's `normalize`: a single address is its own network (`/32`, or `/128` for an
/// address with a colon).
pub fn normalize(raw: &str) -> String {
    if raw.contains('/') {
        raw.to_string()
    } else if raw.contains(':') {
        format!("{raw}/128")
    } else {
        format!("{raw}/32")
    }
}
