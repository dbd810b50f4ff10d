//! The rules of a `rewrite` block, as CoreDNS's `newRule` reads them from a line's
//! arguments: `[continue|stop] FIELD ...`.

use crate::pattern::{Pattern, regex_rule};
use regex::Regex;
use ringdns_plugin::wire::{class_from_str, rcode_from_str, type_from_str};

/// What happens after a rule that matched: the next rule is tried, or none is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The rules after it are not tried (the default).
    Stop,
    /// The next rule is tried, on the query as this one left it.
    Continue,
}

/// One rule: its mode and what it does.
#[derive(Debug)]
pub struct Rule {
    /// Whether the rules after a match are tried.
    pub mode: Mode,
    /// What it matches and changes.
    pub kind: Kind,
}

/// What a rule matches and changes.
#[derive(Debug)]
pub enum Kind {
    /// The query name; `auto` maps the reply's names back (always for `exact`), `answers`
    /// are the explicit reply rewrites.
    Name {
        pattern: Pattern,
        to: String,
        auto: bool,
        answers: Vec<Answer>,
    },
    /// The query type.
    Type { from: u16, to: u16 },
    /// The query class.
    Class { from: u16, to: u16 },
    /// The reply's TTLs, clamped into `min..=max`, for a name that matches.
    Ttl {
        pattern: Pattern,
        min: u32,
        max: u32,
    },
    /// The reply's rcode, `old` made `new`, for a name that matches.
    Rcode { pattern: Pattern, old: u8, new: u8 },
    /// The reply's CNAME target matching `pattern` made `to`, and what follows it looked up.
    Cname { pattern: Pattern, to: String },
    /// An EDNS0 option of the query.
    Edns0(Edns0),
}

/// A rewrite of the reply's names that a name rule carries.
#[derive(Debug)]
pub enum Answer {
    /// Owner names matching the expression, rewritten with the template.
    Name(Regex, String),
    /// Names in the RDATA (CNAME, DNAME, NS, PTR, MX, SRV, NAPTR, SOA's MNAME) matching the
    /// expression, rewritten with the template.
    Value(Regex, String),
    /// A suffix rule's `answer auto`: owner names and values ending in the first, ending
    /// in the second instead.
    Suffix(String, String),
}

/// What an `edns0` rule does to its option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Changes an option that is there, or adds one.
    Set,
    /// Adds the option when none is there.
    Append,
    /// Changes an option that is there.
    Replace,
    /// Removes the option.
    Unset,
}

/// An `edns0` rule.
#[derive(Debug)]
pub struct Edns0 {
    /// What it does.
    pub action: Action,
    /// Which option, and its data.
    pub option: Option0,
    /// The reply goes back without the option (or with the client's value).
    pub revert: bool,
}

/// The option an `edns0` rule is about.
#[derive(Debug)]
pub enum Option0 {
    /// An option of this code with fixed data.
    Local { code: u16, data: Vec<u8> },
    /// An option of this code with data taken from the query.
    Variable { code: u16, var: Variable },
    /// NSID (RFC 5001), with empty data.
    Nsid,
    /// EDNS Client Subnet (RFC 7871) from the client's address, cut to these prefixes.
    Subnet { v4: u8, v6: u8 },
}

/// The `{...}` variables of an `edns0 local` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Variable {
    /// `{qname}`: the query name as the client spelt it.
    Qname,
    /// `{qtype}`: two bytes.
    Qtype,
    /// `{client_ip}`: 4 or 16 bytes.
    ClientIp,
    /// `{client_port}`: two bytes.
    ClientPort,
    /// `{protocol}`: `udp` or `tcp`.
    Protocol,
    /// `{server_ip}`: 4 or 16 bytes.
    ServerIp,
    /// `{server_port}`: two bytes.
    ServerPort,
    /// `{plugin/label}`: a metadata value (nothing set: the rule does nothing).
    Label(String),
}

/// CoreDNS's `plugin.Name(s).Normalize()`: lower case, with the final dot.
fn normalize(s: &str) -> String {
    let mut n = s.to_ascii_lowercase();
    if !n.ends_with('.') {
        n.push('.');
    }
    n
}

/// CoreDNS's `newRule`: the rule of one `rewrite` line (or block, its tokens in order).
pub fn parse(args: &[String]) -> Result<Rule, String> {
    let Some(first) = args.first() else {
        return Err("no rule type specified for rewrite".into());
    };
    let arg0 = first.to_ascii_lowercase();
    let (mode, rest) = match arg0.as_str() {
        "continue" | "stop" => {
            if args.len() < 2 {
                return Err(format!("{arg0} rule must begin with a rule type"));
            }
            let mode = if arg0 == "continue" {
                Mode::Continue
            } else {
                Mode::Stop
            };
            (mode, &args[1..])
        }
        _ => (Mode::Stop, args),
    };
    let field = rest[0].to_ascii_lowercase();
    let a = &rest[1..];
    let kind = match field.as_str() {
        "answer" => return Err("response rewrites must begin with a name rule".into()),
        "name" => name_rule(a)?,
        "class" | "type" => {
            if a.len() != 2 {
                return Err(format!("{field} rules must have exactly two arguments"));
            }
            let (f, t) = (a[0].to_ascii_uppercase(), a[1].to_ascii_uppercase());
            let (from_str, what): (fn(&str) -> Option<u16>, _) = if field == "class" {
                (class_from_str, "class")
            } else {
                (type_from_str, "type")
            };
            let from = from_str(&f).ok_or_else(|| format!("invalid {what} {f:?}"))?;
            let to = from_str(&t).ok_or_else(|| format!("invalid {what} {t:?}"))?;
            if field == "class" {
                Kind::Class { from, to }
            } else {
                Kind::Type { from, to }
            }
        }
        "edns0" => Kind::Edns0(edns0_rule(a)?),
        "ttl" => ttl_rule(a)?,
        "cname" => cname_rule(a)?,
        "rcode" => rcode_rule(a)?,
        _ => return Err(format!("invalid rule type {first:?}")),
    };
    Ok(Rule { mode, kind })
}

/// A name pattern of match type `kind` over `from` (normalised unless a regex), or the
/// error of a rule of field `what` with an unknown match type.
fn pattern(kind: &str, from: &str, what: &str) -> Result<Pattern, String> {
    let kind = kind.to_ascii_lowercase();
    let from = if kind == "regex" {
        from.to_string()
    } else {
        normalize(from)
    };
    Pattern::new(&kind, &from)?.ok_or_else(|| {
        format!(
            "{what} rule supports only exact, prefix, suffix, substring, and regex name matching"
        )
    })
}

/// `name [TYPE] FROM TO [answer ...]`.
fn name_rule(a: &[String]) -> Result<Kind, String> {
    if a.len() < 2 {
        return Err("too few arguments for a name rule".into());
    }
    let (kind, from, to) = if a.len() == 2 {
        ("exact".to_string(), &a[0], &a[1])
    } else {
        (a[0].to_ascii_lowercase(), &a[1], &a[2])
    };
    let (mut auto, answers) = if a.len() > 3 {
        answer_rules(&kind, &a[3..])?
    } else {
        (false, Vec::new())
    };
    let (pattern, to) = match kind.as_str() {
        "regex" => (Pattern::Regex(regex_rule(from, to)?), normalize(to)),
        "exact" | "prefix" | "suffix" | "substring" => {
            // Normalised as CoreDNS's `plugin.Name.Normalize` (lower case, final dot).
            let (f, t) = (normalize(from), normalize(to));
            (Pattern::new(&kind, &f)?.expect("a known kind"), t)
        }
        _ => {
            return Err(format!(
                "name rule supports only exact, prefix, suffix, substring, and regex name matching, received: {kind}"
            ));
        }
    };
    let mut answers = answers;
    if let (Pattern::Suffix(suffix), true) = (&pattern, auto) {
        // A suffix maps back by suffix: the reply's names ending in TO end in FROM again.
        answers.insert(0, Answer::Suffix(to.clone(), suffix.clone()));
        auto = false;
    }
    if matches!(pattern, Pattern::Exact(_)) {
        auto = true;
    }
    Ok(Kind::Name {
        pattern,
        to,
        auto,
        answers,
    })
}

/// CoreDNS's `parseAnswerRules`: `answer auto`, `answer name FROM TO`, `answer value FROM
/// TO`, `answer` optional after the first.
fn answer_rules(name: &str, args: &[String]) -> Result<(bool, Vec<Answer>), String> {
    if args.len() < 2 {
        return Err(format!("invalid arguments for {name} rule"));
    }
    let (mut auto, mut rules, mut name_rules) = (false, Vec::new(), 0);
    let mut last = "";
    let mut i = 0;
    while i < args.len() {
        if last.is_empty() && args[i] != "answer" {
            return Err(format!(
                "exceeded the number of arguments for a non-answer rule argument for {name} rule"
            ));
        }
        if args[i] == "answer" {
            i += 1;
        }
        if i == args.len() {
            return Err(format!("type missing for answer rule for {name} rule"));
        }
        last = &args[i];
        i += 1;
        match last {
            "auto" => auto = true,
            "name" | "value" => {
                if args.len() - i < 2 {
                    return Err(format!(
                        "{last} answer rule for {name} rule: 2 arguments required"
                    ));
                }
                let re = regex_rule(&args[i], &args[i + 1])
                    .map_err(|e| format!("{last} answer rule for {name} rule: {e}"))?;
                let to = normalize(&args[i + 1]);
                if last == "name" {
                    rules.push(Answer::Name(re, to));
                    name_rules += 1;
                } else {
                    rules.push(Answer::Value(re, to));
                }
                i += 2;
            }
            _ => {
                return Err(format!(
                    "invalid type {last:?} for answer rule for {name} rule"
                ));
            }
        }
    }
    if auto && name_rules > 0 {
        return Err(
            "auto name answer rule cannot be combined with explicit name anwer rules".into(),
        );
    }
    Ok((auto, rules))
}

/// `ttl [TYPE] NAME SECONDS|MIN-MAX`.
fn ttl_rule(a: &[String]) -> Result<Kind, String> {
    if a.len() < 2 {
        return Err(format!("too few ({}) arguments for a ttl rule", a.len()));
    }
    if a.len() > 3 {
        return Err("many few arguments for a ttl rule".into());
    }
    let s = &a[a.len() - 1];
    let (min, max) = ttl_range(s).ok_or_else(|| format!("invalid TTL '{s}' for a ttl rule"))?;
    let pattern = if a.len() == 3 {
        name_pattern(&a[0], &a[1], "ttl")?
    } else {
        Pattern::Exact(normalize(&a[0]))
    };
    Ok(Kind::Ttl { pattern, min, max })
}

/// A `ttl` or `rcode` rule's pattern (its regex errors say which rule).
fn name_pattern(kind: &str, from: &str, what: &str) -> Result<Pattern, String> {
    if kind.eq_ignore_ascii_case("regex") {
        if from.len() > crate::pattern::MAX_REGEX_LEN {
            return Err(format!(
                "regex pattern too long in a {what} rule: {} > {}",
                from.len(),
                crate::pattern::MAX_REGEX_LEN
            ));
        }
        return regex::Regex::new(from)
            .map(Pattern::Regex)
            .map_err(|_| format!("invalid regex pattern in a {what} rule: {from}"));
    }
    pattern(kind, from, what)
}

/// CoreDNS's `isValidTTL`: `N`, `MIN-MAX`, `-MAX`, `MIN-` (up to 2^31-1).
fn ttl_range(v: &str) -> Option<(u32, u32)> {
    let num = |s: &str| s.parse::<u32>().ok();
    match v.split('-').collect::<Vec<_>>().as_slice() {
        [n] => num(n).map(|n| (n, n)),
        ["", ""] => None,
        [lo, hi] => {
            let min = if lo.is_empty() { 0 } else { num(lo)? };
            let max = if hi.is_empty() {
                2_147_483_647
            } else {
                num(hi)?
            };
            (min <= max).then_some((min, max))
        }
        _ => None,
    }
}

/// `rcode [TYPE] NAME FROM TO`.
fn rcode_rule(a: &[String]) -> Result<Kind, String> {
    if a.len() < 3 {
        return Err(format!("too few ({}) arguments for a rcode rule", a.len()));
    }
    if a.len() > 4 {
        return Err("many few arguments for a rcode rule".into());
    }
    let (o, n) = (&a[a.len() - 2], &a[a.len() - 1]);
    let old = rcode(o).ok_or_else(|| format!("invalid matching RCODE '{o}' for a rcode rule"))?;
    let new =
        rcode(n).ok_or_else(|| format!("invalid replacement RCODE '{n}' for a rcode rule"))?;
    let pattern = if a.len() == 4 {
        name_pattern(&a[0], &a[1], "rcode")?
    } else {
        Pattern::Exact(normalize(&a[0]))
    };
    Ok(Kind::Rcode { pattern, old, new })
}

/// CoreDNS's `isValidRCode`: a number up to 23, or a mnemonic.
fn rcode(v: &str) -> Option<u8> {
    match v.parse::<u32>() {
        Ok(n) if n <= 23 => Some(n as u8),
        _ => rcode_from_str(&v.to_ascii_uppercase()).and_then(|r| u8::try_from(r).ok()),
    }
}

/// `cname [TYPE] FROM TO`.
fn cname_rule(a: &[String]) -> Result<Kind, String> {
    let (kind, from, to) = match a {
        [k, f, t] => (
            k.to_ascii_lowercase(),
            f.to_ascii_lowercase(),
            t.to_ascii_lowercase(),
        ),
        [f, t] => (
            "exact".into(),
            f.to_ascii_lowercase(),
            t.to_ascii_lowercase(),
        ),
        _ => return Err(format!("too few ({}) arguments for a cname rule", a.len())),
    };
    let (from, to) = if kind == "exact" {
        (normalize(&from), normalize(&to))
    } else {
        (from, to)
    };
    let pattern = match kind.as_str() {
        "regex" => {
            if from.len() > crate::pattern::MAX_REGEX_LEN {
                return Err(format!(
                    "regex pattern too long in a cname rule: {} > {}",
                    from.len(),
                    crate::pattern::MAX_REGEX_LEN
                ));
            }
            Pattern::Regex(
                Regex::new(&from)
                    .map_err(|e| format!("invalid cname rewrite regex pattern: {e}"))?,
            )
        }
        _ => Pattern::new(&kind, &from)?
            .ok_or_else(|| format!("unknown cname rewrite type: {kind}"))?,
    };
    Ok(Kind::Cname { pattern, to })
}

/// `edns0 local|nsid|subnet set|append|replace|unset ... [revert]`.
fn edns0_rule(a: &[String]) -> Result<Edns0, String> {
    if a.len() < 2 {
        return Err("too few arguments for an EDNS0 rule".into());
    }
    let ty = a[0].to_ascii_lowercase();
    let action = match a[1].to_ascii_lowercase().as_str() {
        "set" => Action::Set,
        "append" => Action::Append,
        "replace" => Action::Replace,
        "unset" => Action::Unset,
        other => return Err(format!("invalid action: {other:?}")),
    };
    if action == Action::Unset {
        let option = match (ty.as_str(), a.len()) {
            ("local", 3) => Option0::Local {
                code: code(&a[2])?,
                data: Vec::new(),
            },
            ("local", _) => return Err("local unset action requires exactly two arguments".into()),
            ("nsid", 2) => Option0::Nsid,
            ("nsid", _) => return Err("nsid unset action requires exactly one argument".into()),
            ("subnet", 2) => Option0::Subnet { v4: 0, v6: 0 },
            ("subnet", _) => {
                return Err("subnet unset action requires exactly one argument".into());
            }
            _ => return Err(format!("invalid rule type {ty:?}")),
        };
        return Ok(Edns0 {
            action,
            option,
            revert: false,
        });
    }
    let revert = a.last().is_some_and(|l| l == "revert");
    let a = if revert { &a[..a.len() - 1] } else { a };
    let option = match ty.as_str() {
        "local" => {
            if a.len() != 4 {
                return Err("EDNS0 local rules require three or four args".into());
            }
            let code = code(&a[2])?;
            let data = &a[3];
            if data.starts_with('{') && data.ends_with('}') {
                Option0::Variable {
                    code,
                    var: variable(data)?,
                }
            } else if let Some(hex) = data.strip_prefix("0x") {
                Option0::Local {
                    code,
                    data: decode_hex(hex)?,
                }
            } else {
                Option0::Local {
                    code,
                    data: data.as_bytes().to_vec(),
                }
            }
        }
        "nsid" => {
            if a.len() != 2 {
                return Err("EDNS0 NSID rules can accept no more than one arg".into());
            }
            Option0::Nsid
        }
        "subnet" => {
            if a.len() != 4 {
                return Err("EDNS0 subnet rules require three or four args".into());
            }
            let v4 = mask_len(&a[2], 32, "IPv4")?;
            let v6 = mask_len(&a[3], 128, "IPv6")?;
            Option0::Subnet { v4, v6 }
        }
        _ => return Err(format!("invalid rule type {ty:?}")),
    };
    Ok(Edns0 {
        action,
        option,
        revert,
    })
}

/// Go's `strconv.ParseUint(s, 0, N)`: decimal, `0x` hex, `0o`/leading-0 octal, `0b` binary.
fn parse_uint(s: &str, bits: u32) -> Result<u64, String> {
    let err = || format!("strconv.ParseUint: parsing {s:?}: invalid syntax");
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        (b, 2)
    } else if let Some(o) = s.strip_prefix("0o").or_else(|| s.strip_prefix("0O")) {
        (o, 8)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    let digits = digits.replace('_', "");
    let v = u64::from_str_radix(&digits, radix).map_err(|_| err())?;
    if bits < 64 && v >> bits != 0 {
        return Err(format!(
            "strconv.ParseUint: parsing {s:?}: value out of range"
        ));
    }
    Ok(v)
}

/// An option code (16 bits).
fn code(s: &str) -> Result<u16, String> {
    parse_uint(s, 16).map(|v| v as u16)
}

/// A subnet rule's prefix length, at most `max`.
fn mask_len(s: &str, max: u64, family: &str) -> Result<u8, String> {
    let v = parse_uint(s, 16)?;
    if v > max {
        return Err(format!("invalid {family} bit mask length {v}"));
    }
    Ok(v as u8)
}

/// Go's `hex.DecodeString`.
fn decode_hex(s: &str) -> Result<Vec<u8>, String> {
    if s.len() % 2 == 1 {
        return Err("encoding/hex: odd length hex string".into());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&s[i..i + 2], 16)
                .map_err(|_| format!("encoding/hex: invalid byte: {:?}", &s[i..i + 1]))
        })
        .collect()
}

/// CoreDNS's `isValidVariable`.
fn variable(v: &str) -> Result<Variable, String> {
    Ok(match v {
        "{qname}" => Variable::Qname,
        "{qtype}" => Variable::Qtype,
        "{client_ip}" => Variable::ClientIp,
        "{client_port}" => Variable::ClientPort,
        "{protocol}" => Variable::Protocol,
        "{server_ip}" => Variable::ServerIp,
        "{server_port}" => Variable::ServerPort,
        _ => {
            let label = &v[1..v.len() - 1];
            if !ringdns_plugin::metadata::is_label(label) {
                return Err(format!("unsupported variable name {v:?}"));
            }
            Variable::Label(label.to_string())
        }
    })
}

#[cfg(test)]
mod tests;
