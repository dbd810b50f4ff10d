//! Parsing of the `template` directives of a block, as CoreDNS's `plugin/template/setup.go`
//! parses them: the same syntax, defaults, checks and error texts, each error at the
//! token it is about and prefixed `plugin/template: `.
//!
//! ```text
//! template CLASS TYPE [ZONE...] {
//!     match REGEX...
//!     answer RR...
//!     additional RR...
//!     authority RR...
//!     rcode CODE
//!     ederror EXTENDED_ERROR_CODE [EXTRA_REASON]
//!     fallthrough [FALLTHROUGH-ZONE...]
//! }
//! ```
//!
//! Every `template` of a block is one more template of the block's one handler, tried in
//! order (CoreDNS's `Handler.Templates`). `var` and `expr` (expressions in the expr
//! language) are refused: ringdns does not implement that language.

use crate::lang::Template;
use regex::Regex;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::normalize::origins_from_args_or_block;
use ringdns_plugin::wire::{name_to_wire, type_name};
use ringdns_plugin::{BlockSetup, Fallthrough};

/// CoreDNS's limit on a regex's length, against a pattern that would take long to
/// compile.
pub const MAX_REGEX_LEN: usize = 10000;

/// The reply section a templated record goes to, in the order CoreDNS renders them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// `answer`
    Answer,
    /// `additional`
    Additional,
    /// `authority`
    Authority,
}

impl Part {
    /// The option's name: the template's name and the metrics' `section` label.
    pub fn name(self) -> &'static str {
        match self {
            Part::Answer => "answer",
            Part::Additional => "additional",
            Part::Authority => "authority",
        }
    }
}

/// One record template.
#[derive(Debug)]
pub struct Rr {
    /// Its section.
    pub part: Part,
    /// The template.
    pub template: Template,
    /// The template as Go prints its tree: the metrics' `template` label.
    pub label: String,
}

/// One `template` directive.
#[derive(Debug)]
pub struct Tmpl {
    /// The zones, normalised, with their wire forms.
    pub zones: Vec<(String, Vec<u8>)>,
    /// The class (255: ANY).
    pub qclass: u16,
    /// The type (255: ANY).
    pub qtype: u16,
    /// The regexes, tried in order (`.*` when none is given).
    pub regex: Vec<Regex>,
    /// The record templates in the order CoreDNS renders them: answer, additional,
    /// authority, each in the order written.
    pub rrs: Vec<Rr>,
    /// The reply's rcode.
    pub rcode: u8,
    /// `ederror`: the extended DNS error's code and text.
    pub ede: Option<(u16, String)>,
    /// `fallthrough`.
    pub fall: Fallthrough,
}

/// A block's templates: CoreDNS's one `Handler` with its zones and templates.
#[derive(Debug)]
pub struct Config {
    /// Every template's zones, in wire form: a name under none goes straight on.
    pub zones: Vec<Vec<u8>>,
    /// The templates, in Corefile order.
    pub templates: Vec<Tmpl>,
    /// The block's `view` name (empty without one), the `view` label of the counters.
    pub view: String,
}

fn fail(d: &Dispenser<'_>, msg: impl std::fmt::Display) -> Error {
    d.plugin_err("template", msg)
}

/// miekg's `StringToClass`.
pub fn class_from(s: &str) -> Option<u16> {
    ringdns_plugin::wire::class_from_str(s)
}

/// miekg's `ClassToString` (`""` for a class it has no name for).
pub fn class_str(c: u16) -> &'static str {
    match c {
        1 => "IN",
        2 => "CS",
        3 => "CH",
        4 => "HS",
        254 => "NONE",
        255 => "ANY",
        _ => "",
    }
}

/// miekg's `TypeToString` (`""` for a type it has no name for).
pub fn type_str(t: u16) -> &'static str {
    type_name(t).as_str().unwrap_or("")
}

/// miekg's `StringToType`.
fn type_from(s: &str) -> Option<u16> {
    ringdns_plugin::wire::type_from_str(s)
}

/// miekg's `StringToRcode`.
fn rcode_from(s: &str) -> Option<u8> {
    ringdns_plugin::wire::rcode_from_str(s).and_then(|r| u8::try_from(r).ok())
}

/// Parses every `template` of the block.
pub fn parse(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Config, Error> {
    let mut config = Config {
        zones: Vec::new(),
        templates: Vec::new(),
        view: block.view.clone().unwrap_or_default(),
    };
    while d.next() {
        let t = stanza(d, block)?;
        config.zones.extend(t.zones.iter().map(|(_, w)| w.clone()));
        config.templates.push(t);
    }
    Ok(config)
}

/// One `template CLASS TYPE [ZONE...] { ... }`, the cursor on `template`.
fn stanza(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Tmpl, Error> {
    if !d.next_arg() {
        return Err(d.plugin_arg_err("template"));
    }
    let qclass = class_from(d.val())
        .ok_or_else(|| fail(d, format_args!("invalid query class {}", d.val())))?;
    if !d.next_arg() {
        return Err(d.plugin_arg_err("template"));
    }
    // CoreDNS's message says "class" for the type too.
    let qtype =
        type_from(d.val()).ok_or_else(|| fail(d, format_args!("invalid RR class {}", d.val())))?;
    let args = d.remaining_args();
    let mut zones = Vec::new();
    for z in origins_from_args_or_block("template", &args, &block.zones) {
        match name_to_wire(&z) {
            Ok(w) => zones.push((z, w)),
            Err(e) => ringdns_plugin::warning!("plugin/template: ignoring zone '{z}': {e}"),
        }
    }
    let mut t = Tmpl {
        zones,
        qclass,
        qtype,
        regex: Vec::new(),
        rrs: Vec::new(),
        rcode: 0,
        ede: None,
        fall: Fallthrough::default(),
    };
    let mut parts: [Vec<Rr>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    while d.next_block() {
        let key = d.val().to_string();
        match key.as_str() {
            "match" => {
                let args = d.remaining_args();
                if args.is_empty() {
                    return Err(d.plugin_arg_err("template"));
                }
                for r in args {
                    if r.len() > MAX_REGEX_LEN {
                        return Err(fail(
                            d,
                            format_args!("regex pattern too long: {} > {MAX_REGEX_LEN}", r.len()),
                        ));
                    }
                    let re = Regex::new(&r).map_err(|e| {
                        fail(
                            d,
                            format_args!("could not parse regex: {r}, {}", one_line(&e)),
                        )
                    })?;
                    t.regex.push(re);
                }
            }
            "answer" | "additional" | "authority" => {
                let part = match key.as_str() {
                    "answer" => Part::Answer,
                    "additional" => Part::Additional,
                    _ => Part::Authority,
                };
                let args = d.remaining_args();
                if args.is_empty() {
                    return Err(d.plugin_arg_err("template"));
                }
                for text in args {
                    let template = Template::parse(part.name(), &text).map_err(|e| {
                        fail(
                            d,
                            format_args!("could not compile template: {}, {e}", d.val()),
                        )
                    })?;
                    parts[part as usize].push(Rr {
                        part,
                        label: template.label(),
                        template,
                    });
                }
            }
            "var" | "expr" => {
                return Err(fail(
                    d,
                    format_args!(
                        "'{key}' is not supported: ringdns does not implement the expr language"
                    ),
                ));
            }
            "rcode" => {
                if !d.next_arg() {
                    return Err(d.plugin_arg_err("template"));
                }
                t.rcode = rcode_from(d.val())
                    .ok_or_else(|| fail(d, format_args!("unknown rcode {}", d.val())))?;
            }
            "ederror" => {
                let args = d.remaining_args();
                if args.is_empty() || args.len() > 2 {
                    return Err(d.plugin_arg_err("template"));
                }
                let code = parse_u16(&args[0]).map_err(|e| {
                    fail(
                        d,
                        format_args!("error parsing extended DNS error code {}, {e}", d.val()),
                    )
                })?;
                t.ede = Some((code, args.get(1).cloned().unwrap_or_default()));
            }
            "fallthrough" => {
                let args = d.remaining_args();
                t.fall = Fallthrough::parse(&args).map_err(|e| fail(d, e))?;
            }
            // CoreDNS still reads and ignores its old `upstream` option.
            "upstream" => {
                d.remaining_args();
            }
            _ => return Err(d.plugin_arg_err("template")),
        }
    }
    if t.regex.is_empty() {
        t.regex.push(Regex::new(".*").expect("a valid regex"));
    }
    let [answer, additional, authority] = parts;
    t.rrs = answer
        .into_iter()
        .chain(additional)
        .chain(authority)
        .collect();
    Ok(t)
}

/// The regex crate's error on one line (it draws the pattern over several).
fn one_line(e: &regex::Error) -> String {
    e.to_string()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Go's `strconv.ParseUint(s, 10, 16)`, with its error text.
fn parse_u16(s: &str) -> Result<u16, String> {
    let quoted = format!("{s:?}");
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.ParseUint: parsing {quoted}: invalid syntax"
        ));
    }
    s.parse::<u16>()
        .map_err(|_| format!("strconv.ParseUint: parsing {quoted}: value out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::wire::Name;

    /// Runs the setup on `text` inside a block keyed `key` (CoreDNS's tests use
    /// `domain.com.:8053` and `dynamic.domain.com.:8053`).
    fn config_in(zones: &[&str], text: &str) -> Result<Config, String> {
        let body = format!(". {{\n{text}\n}}\n");
        let cf = ringdns_plugin::corefile::parse("Corefile", &body, &|n| n == "template")
            .map_err(|e| e.to_string())?;
        let block = BlockSetup {
            zones: zones.iter().map(|z| z.to_string()).collect(),
            ..BlockSetup::default()
        };
        let toks = match cf.blocks[0]
            .directives
            .iter()
            .find(|d| d.name == "template")
        {
            Some(d) => d.tokens.clone(),
            None => Vec::new(),
        };
        parse(&mut Dispenser::new(&toks), &block).map_err(|e| e.to_string())
    }

    fn config(text: &str) -> Result<Config, String> {
        config_in(&["domain.com.", "dynamic.domain.com."], text)
    }

    fn err(text: &str) -> String {
        config(text).expect_err(text)
    }

    /// setup_test.go's TestSetupParse, case by case.
    #[test]
    fn coredns_setup_cases() {
        let bad = [
            "template",
            "template X",
            "template ANY",
            "template ANY X",
            "template ANY ANY .* {\n notavailable\n}",
            "template ANY ANY {\n answer\n}",
            "template ANY ANY {\n additional\n}",
            "template ANY ANY {\n rcode\n}",
            "template ANY ANY {\n rcode UNDEFINED\n}",
            "template ANY ANY {\n answer \"{{\"\n}",
            "template ANY ANY {\n additional \"{{\"\n}",
            "template ANY ANY {\n authority \"{{\"\n}",
            "template ANY ANY {\n answer \"{{ notAFunction }}\"\n}",
            "template ANY ANY invalid {\n rcode NXDOMAIN\n ederror invalid \"Blocked\"\n}",
            "template ANY ANY invalid {\n rcode NXDOMAIN\n ederror too many arguments\n}",
        ];
        for text in bad {
            assert!(config(text).is_err(), "{text}");
        }
        let good = [
            "template ANY ANY {\n answer \"{{ parseInt }}\"\n additional \"{{ parseInt }}\"\n authority \"{{ parseInt }}\"\n}",
            "template ANY ANY (?P<x>",
            "template ANY ANY {\n\n}",
            "template ANY A example.com {\n match ip-(?P<a>[0-9]*)-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]com\n answer \"{{ .Name }} A {{ .Group.a }}.{{ .Group.b }}.{{ .Group.c }}.{{ .Grup.d }}.\"\n fallthrough\n}",
            "template ANY AAAA example.com {\n match ip-(?P<a>[0-9]*)-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]com\n authority \"example.com 60 IN SOA ns.example.com hostmaster.example.com (1 60 60 60 60)\"\n fallthrough\n}",
            "template IN ANY example.com {\n match \"[.](example[.]com[.]dc1[.]example[.]com[.])$\"\n rcode NXDOMAIN\n authority \"{{ index .Match 1 }} 60 IN SOA ns.{{ index .Match 1 }} hostmaster.example.com (1 60 60 60 60)\"\n fallthrough example.com\n}",
            "template IN A example {\n match ^ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$\n answer \"{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}\"\n}\ntemplate IN MX example. {\n match ^ip-10-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$\n answer \"{{ .Name }} 60 IN MX 10 {{ .Name }}\"\n additional \"{{ .Name }} 60 IN A 10.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}\"\n}",
            "template IN A example {\n match ^ip0a(?P<b>[a-f0-9]{2})(?P<c>[a-f0-9]{2})(?P<d>[a-f0-9]{2})[.]example[.]$\n answer \"{{ .Name }} 3600 IN A 10.{{ parseInt .Group.b 16 8 }}.{{ parseInt .Group.c 16 8 }}.{{ parseInt .Group.d 16 8 }}\"\n}",
            "template ANY ANY invalid {\n rcode NXDOMAIN\n authority \"invalid. 60 {{ .Class }} SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)\"\n ederror 21 \"Blocked according to RFC2606\"\n}",
        ];
        for text in good {
            if let Err(e) = config(text) {
                panic!("{text}: {e}");
            }
        }
    }

    #[test]
    fn coredns_messages() {
        let p = "Corefile:2 - Error during parsing: plugin/template: ";
        assert_eq!(err("template X"), format!("{p}invalid query class X"));
        assert_eq!(err("template in A"), format!("{p}invalid query class in"));
        assert_eq!(err("template ANY X"), format!("{p}invalid RR class X"));
        assert_eq!(
            err("template"),
            format!("{p}Wrong argument count or unexpected line ending after 'template'")
        );
        let p3 = "Corefile:3 - Error during parsing: plugin/template: ";
        assert_eq!(
            err("template ANY ANY {\n rcode UNDEFINED\n}"),
            format!("{p3}unknown rcode UNDEFINED")
        );
        assert_eq!(
            err("template ANY ANY {\n answer \"{{\"\n}"),
            format!("{p3}could not compile template: {{{{, template: answer:1:2: unclosed action")
        );
        assert_eq!(
            err("template ANY ANY {\n additional \"{{ notAFunction }}\"\n}"),
            format!(
                "{p3}could not compile template: {{{{ notAFunction }}}}, template: additional:1:3: function \"notAFunction\" not defined"
            )
        );
        assert_eq!(
            err("template ANY ANY {\n ederror invalid \"Blocked\"\n}"),
            format!(
                "{p3}error parsing extended DNS error code Blocked, strconv.ParseUint: parsing \"invalid\": invalid syntax"
            )
        );
        assert_eq!(
            err("template ANY ANY {\n ederror 65536\n}"),
            format!(
                "{p3}error parsing extended DNS error code 65536, strconv.ParseUint: parsing \"65536\": value out of range"
            )
        );
        assert_eq!(
            err("template ANY ANY {\n notavailable\n}"),
            format!("{p3}Wrong argument count or unexpected line ending after 'notavailable'")
        );
        assert!(
            err("template ANY ANY {\n match (?P<x>\n}")
                .starts_with(&format!("{p3}could not parse regex: (?P<x>, "))
        );
        let long = "a".repeat(MAX_REGEX_LEN + 1);
        assert_eq!(
            err(&format!("template ANY A example.com {{\n match {long}\n}}")),
            format!("{p3}regex pattern too long: 10001 > 10000")
        );
    }

    #[test]
    fn var_and_expr_are_refused() {
        let p3 = "Corefile:3 - Error during parsing: plugin/template: ";
        assert_eq!(
            err("template ANY ANY example. {\n var a 1\n}"),
            format!("{p3}'var' is not supported: ringdns does not implement the expr language")
        );
        assert_eq!(
            err("template ANY ANY example. {\n expr name() == 'a.example.'\n}"),
            format!("{p3}'expr' is not supported: ringdns does not implement the expr language")
        );
    }

    #[test]
    fn defaults_and_values() {
        let c = config("template IN A").unwrap();
        let t = &c.templates[0];
        assert_eq!((t.qclass, t.qtype, t.rcode), (1, 1, 0));
        let zones: Vec<&str> = t.zones.iter().map(|(z, _)| z.as_str()).collect();
        assert_eq!(
            zones,
            ["domain.com.", "dynamic.domain.com."],
            "the block's zones"
        );
        assert_eq!(t.regex.len(), 1);
        assert_eq!(t.regex[0].as_str(), ".*");
        assert!(t.fall.is_off() && t.ede.is_none() && t.rrs.is_empty());
        let c = config(
            "template CH TXT Example.ORG {\n match ^a b$\n authority \"x\"\n answer \"{{ .Name }}\" y\n additional z\n rcode BADCOOKIE\n ederror 21\n fallthrough a.example.org\n upstream 8.8.8.8\n}\ntemplate ANY ANY",
        )
        .unwrap();
        assert_eq!(c.templates.len(), 2);
        let t = &c.templates[0];
        assert_eq!((t.qclass, t.qtype, t.rcode), (3, 16, 23));
        assert_eq!(t.zones[0].0, "example.org.");
        assert_eq!(
            t.regex.iter().map(Regex::as_str).collect::<Vec<_>>(),
            ["^a", "b$"]
        );
        let parts: Vec<(Part, &str)> = t.rrs.iter().map(|r| (r.part, r.label.as_str())).collect();
        assert_eq!(
            parts,
            [
                (Part::Answer, "{{.Name}}"),
                (Part::Answer, "y"),
                (Part::Additional, "z"),
                (Part::Authority, "x")
            ]
        );
        assert_eq!(t.ede, Some((21, String::new())));
        let w = name_to_wire("b.a.example.org.").unwrap();
        assert!(t.fall.through(&Name::from_wire(&w).unwrap()));
        assert_eq!(c.templates[1].qclass, 255);
        assert_eq!(c.zones.len(), 3, "every template's zones");
    }
}
