//! What a template sees: CoreDNS's `templateData` (`.Zone`, `.Name`, `.Match`, `.Group`,
//! `.Message`, `.Question`, …) as values borrowed from the query, their fields, how Go
//! prints them and which are true.
//!
//! Values are typed as Go types them, so that they print and compare as in CoreDNS:
//! `.Question.Qtype` is a number, `.Question` prints through `dns.Question.String`, a
//! missing `.Group` key prints `<no value>`.

use std::borrow::Cow;
use std::fmt::Write as _;

/// The data of one rendering: CoreDNS's `templateData` for the query and the regex that
/// matched it.
#[derive(Debug, Clone)]
pub struct Data<'a> {
    /// The template's zone that holds the name (`.Zone`).
    pub zone: &'a str,
    /// The query name, lower-cased presentation form (`.Name`).
    pub name: &'a str,
    /// The regex that matched (`.Regex`).
    pub regex: &'a str,
    /// The whole match and each group, `""` for a group that took no part (`.Match`).
    pub matches: &'a [&'a str],
    /// The name of each group, by index (`None` for the whole match and unnamed ones).
    pub group_names: &'a [Option<&'a str>],
    /// The query's class mnemonic, or the template's for a class ANY query (`.Class`).
    pub class: &'a str,
    /// The query's type mnemonic, or the template's for a type ANY query (`.Type`).
    pub rtype: &'a str,
    /// The client's address (`.Remote`).
    pub remote: &'a str,
    /// The query's header and question (`.Message`, `.Question`).
    pub msg: Msg<'a>,
    /// The request's metadata (`.Meta "label"`); `None` without the metadata plugin.
    pub meta: Option<&'a ringdns_plugin::metadata::Metadata>,
}

/// The query as `.Message` and `.Question` show it.
#[derive(Debug, Clone, Copy)]
pub struct Msg<'a> {
    /// The header's ID.
    pub id: u16,
    /// The header's flag word (QR, opcode, AA, TC, RD, RA, Z, AD, CD, rcode).
    pub flags: u16,
    /// The question name as the client wrote it, presentation form (`.Question.Name`).
    pub qname: &'a str,
    /// The question type.
    pub qtype: u16,
    /// The question class.
    pub qclass: u16,
}

/// A value during execution.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::enum_variant_names)] // NoValue is Go's name for it
pub(super) enum Value<'a> {
    /// Go's invalid value (a missing map entry): prints `<no value>`.
    NoValue,
    /// `nil`
    Nil,
    Str(Cow<'a, str>),
    Bool(bool),
    Int(i64),
    Uint(u64),
    /// `.Match`, `[]string`.
    Strs,
    /// `.Group`, `map[string]string`.
    Groups,
    /// `.Var`, an empty `map[string]any` (ringdns has no `var`).
    Vars,
    /// The data itself (`.` at the top, `$`).
    Data,
    /// `.Message`, `*dns.Msg`.
    Msg,
    /// `.Question` (a `*dns.Question`: `true`) or an element of `.Message.Question` (a
    /// `dns.Question` value).
    Question(bool),
    /// `.Message.Question`, `[]dns.Question`.
    Questions,
}

/// Fields and methods of `*dns.Msg` that a template cannot use here: a setup error, where
/// Go would give them.
pub(super) const UNSUPPORTED_MSG: [&str; 30] = [
    "Answer",
    "Ns",
    "Extra",
    "Compress",
    "MsgHdr",
    "String",
    "Len",
    "Copy",
    "CopyTo",
    "Insert",
    "IsEdns0",
    "IsTsig",
    "Pack",
    "PackBuffer",
    "Remove",
    "RemoveRRset",
    "SetAxfr",
    "SetEdns0",
    "SetIxfr",
    "SetNotify",
    "SetQuestion",
    "SetRcode",
    "SetRcodeFormatError",
    "SetReply",
    "SetTsig",
    "SetUpdate",
    "Truncate",
    "Unpack",
    "NameUsed",
    "Used",
];

impl<'a> Value<'a> {
    /// Go's name of the value's type, for errors.
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Value::NoValue => "invalid",
            Value::Nil => "nil",
            Value::Str(_) => "string",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Uint(_) => "uint64",
            Value::Strs => "[]string",
            Value::Groups => "map[string]string",
            Value::Vars => "map[string]interface {}",
            Value::Data => "*template.templateData",
            Value::Msg => "*dns.Msg",
            Value::Question(true) => "*dns.Question",
            Value::Question(false) => "dns.Question",
            Value::Questions => "[]dns.Question",
        }
    }

    /// Go's `isTrue`.
    pub(super) fn truth(&self, d: &Data<'_>) -> bool {
        match self {
            Value::NoValue | Value::Nil | Value::Vars => false,
            Value::Str(s) => !s.is_empty(),
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Uint(u) => *u != 0,
            Value::Strs => !d.matches.is_empty(),
            Value::Groups => !d.matches.is_empty(),
            Value::Data | Value::Msg | Value::Question(_) | Value::Questions => true,
        }
    }
}

impl<'a> Data<'a> {
    /// `receiver.name` (no arguments). `Err` is Go's execution error.
    pub(super) fn field(&self, receiver: &Value<'a>, name: &str) -> Result<Value<'a>, String> {
        let s = |v: &'a str| Value::Str(Cow::Borrowed(v));
        let f = self.msg.flags;
        let flag = |bit: u16| Value::Bool(f & bit != 0);
        Ok(match receiver {
            Value::NoValue => Value::NoValue,
            Value::Nil => return Err(format!("nil pointer evaluating interface {{}}.{name}")),
            Value::Data => match name {
                "Zone" => s(self.zone),
                "Name" => s(self.name),
                "Regex" => s(self.regex),
                "Match" => Value::Strs,
                "Group" => Value::Groups,
                "Class" => s(self.class),
                "Type" => s(self.rtype),
                "Message" => Value::Msg,
                "Question" => Value::Question(true),
                "Remote" => s(self.remote),
                "Var" => Value::Vars,
                "Meta" => return Err("wrong number of args for Meta: want 1 got 0".into()),
                _ => return Err(cannot(name, receiver)),
            },
            Value::Msg => match name {
                "Id" => Value::Uint(u64::from(self.msg.id)),
                "Response" => flag(0x8000),
                "Opcode" => Value::Int(i64::from((f >> 11) & 0xF)),
                "Authoritative" => flag(0x0400),
                "Truncated" => flag(0x0200),
                "RecursionDesired" => flag(0x0100),
                "RecursionAvailable" => flag(0x0080),
                "Zero" => flag(0x0040),
                "AuthenticatedData" => flag(0x0020),
                "CheckingDisabled" => flag(0x0010),
                "Rcode" => Value::Int(i64::from(f & 0xF)),
                "Question" => Value::Questions,
                n if UNSUPPORTED_MSG.contains(&n) => {
                    return Err(format!(".Message.{n} is not supported by ringdns"));
                }
                _ => return Err(cannot(name, receiver)),
            },
            Value::Question(ptr) => match name {
                "Name" => s(self.msg.qname),
                "Qtype" => Value::Uint(u64::from(self.msg.qtype)),
                "Qclass" => Value::Uint(u64::from(self.msg.qclass)),
                "String" if *ptr => Value::Str(Cow::Owned(self.question_string())),
                _ => return Err(cannot(name, receiver)),
            },
            Value::Groups => self.group(name).map_or(Value::NoValue, s),
            Value::Vars => Value::NoValue,
            _ => return Err(cannot(name, receiver)),
        })
    }

    /// `.Group.KEY`: the group of that name, or of that index (`"0"`, `"1"`, …).
    pub(super) fn group(&self, key: &str) -> Option<&'a str> {
        if let Some(i) = self.group_names.iter().position(|n| *n == Some(key)) {
            return self.matches.get(i).copied();
        }
        let i: usize = key.parse().ok()?;
        // Only the canonical spelling is a key (`strconv.Itoa`).
        if i.to_string() != key {
            return None;
        }
        self.matches.get(i).copied()
    }

    /// `.Group`'s entries in Go's printing order (sorted keys).
    pub(super) fn group_entries(&self) -> Vec<(String, &'a str)> {
        let mut out: Vec<(String, &'a str)> = Vec::new();
        for (i, m) in self.matches.iter().enumerate() {
            out.push((i.to_string(), m));
        }
        for (i, n) in self.group_names.iter().enumerate() {
            if let (Some(n), Some(m)) = (n, self.matches.get(i)) {
                match out.iter_mut().find(|(k, _)| k == n) {
                    Some(e) => e.1 = m,
                    None => out.push((n.to_string(), m)),
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// miekg's `Question.String`: `;NAME\tCLASS\t TYPE`.
    pub(super) fn question_string(&self) -> String {
        let m = &self.msg;
        let class = ringdns_plugin::wire::class_name(m.qclass);
        let rtype = ringdns_plugin::wire::type_name(m.qtype);
        format!(";{}\t{class}\t {rtype}", m.qname)
    }

    /// Go's `fmt.Print` of a value (`%v`), into `out`; `Err` for what ringdns cannot print.
    pub(super) fn print(&self, v: &Value<'_>, out: &mut String) -> Result<(), String> {
        match v {
            Value::NoValue => out.push_str("<no value>"),
            Value::Nil => out.push_str("<nil>"),
            Value::Str(s) => out.push_str(s),
            Value::Bool(b) => {
                let _ = write!(out, "{b}");
            }
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u}");
            }
            Value::Strs => {
                out.push('[');
                for (i, m) in self.matches.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(m);
                }
                out.push(']');
            }
            Value::Groups => {
                out.push_str("map[");
                for (i, (k, m)) in self.group_entries().iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    let _ = write!(out, "{k}:{m}");
                }
                out.push(']');
            }
            Value::Vars => out.push_str("map[]"),
            Value::Question(true) => out.push_str(&self.question_string()),
            Value::Question(false) => self.question_value(out),
            Value::Questions => {
                out.push('[');
                self.question_value(out);
                out.push(']');
            }
            Value::Data => {
                return Err("printing the template's data (.) is not supported by ringdns".into());
            }
            Value::Msg => return Err("printing .Message is not supported by ringdns".into()),
        }
        Ok(())
    }

    /// A `dns.Question` value as Go's `%v` prints a struct: `{NAME QTYPE QCLASS}`.
    fn question_value(&self, out: &mut String) {
        let m = &self.msg;
        let _ = write!(out, "{{{} {} {}}}", m.qname, m.qtype, m.qclass);
    }
}

/// Go's `can't evaluate field NAME in type TYPE`.
fn cannot(name: &str, receiver: &Value<'_>) -> String {
    format!(
        "can't evaluate field {name} in type {}",
        receiver.type_name()
    )
}
