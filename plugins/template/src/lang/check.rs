//! The setup-time check of a parse tree against the data it will see: every value's Go
//! type is known before any query (the data is CoreDNS's `templateData`, the functions'
//! results are typed), so what this implementation cannot do with a value is refused at
//! setup, at its offset, instead of failing every query: the fields and methods of
//! `*dns.Msg` that are not here (`.Message.Answer`, `.Message.String`, …) and printing
//! `.Message` or the data itself.
//!
//! What Go itself accepts at parse time and refuses only when executing (an unknown field
//! such as `.Grup`, a wrong argument count) stays an execution error, as in CoreDNS.

use super::Error;
use super::parse::{Arg, Branch, Cmd, Node, Pipe, Term};
use super::value::UNSUPPORTED_MSG;

/// A value's type as far as the check follows it; `Any` where it does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Any,
    Data,
    Msg,
    QuestionPtr,
    QuestionVal,
    Questions,
    Str,
    Strs,
    Groups,
    Bool,
    Int,
    Uint,
}

/// Checks a parsed template.
pub(super) fn check(list: &[Node]) -> Result<(), Error> {
    let mut c = Checker {
        vars: vec![(String::new(), Ty::Data)],
    };
    c.list(Ty::Data, list)
}

struct Checker {
    vars: Vec<(String, Ty)>,
}

impl Checker {
    fn list(&mut self, dot: Ty, list: &[Node]) -> Result<(), Error> {
        for n in list {
            match n {
                Node::Text(_) => {}
                Node::Action(p) => {
                    let t = self.pipe(dot, p)?;
                    if p.decl.is_empty() {
                        printable(t, p.pos, &p.to_string())?;
                    }
                }
                Node::If(b) => self.branch(dot, b, None)?,
                Node::With(b) => self.branch(dot, b, Some(false))?,
                Node::Range(b) => self.branch(dot, b, Some(true))?,
            }
        }
        Ok(())
    }

    /// `dot_from`: `None` for `if` (dot stays), `Some(false)` for `with` (the value),
    /// `Some(true)` for `range` (an element).
    fn branch(&mut self, dot: Ty, b: &Branch, dot_from: Option<bool>) -> Result<(), Error> {
        let mark = self.vars.len();
        let t = if dot_from == Some(true) {
            let t = self.cmds(dot, &b.pipe)?;
            let (key, elem) = match t {
                Ty::Strs => (Ty::Int, Ty::Str),
                Ty::Groups => (Ty::Str, Ty::Str),
                Ty::Questions => (Ty::Int, Ty::QuestionVal),
                Ty::Int => (Ty::Int, Ty::Int),
                Ty::Uint => (Ty::Uint, Ty::Uint),
                _ => (Ty::Any, Ty::Any),
            };
            match b.pipe.decl.as_slice() {
                [v] => self.vars.push((v.clone(), elem)),
                [i, v] => {
                    self.vars.push((i.clone(), key));
                    self.vars.push((v.clone(), elem));
                }
                _ => {}
            }
            elem
        } else {
            self.pipe(dot, &b.pipe)?
        };
        let inner = if dot_from.is_some() { t } else { dot };
        self.list(inner, &b.list)?;
        if let Some(e) = &b.else_list {
            self.list(dot, e)?;
        }
        self.vars.truncate(mark);
        Ok(())
    }

    fn pipe(&mut self, dot: Ty, p: &Pipe) -> Result<Ty, Error> {
        let t = self.cmds(dot, p)?;
        if let Some(v) = p.decl.first() {
            if p.assign {
                if let Some(slot) = self.vars.iter_mut().rev().find(|(n, _)| n == v)
                    && slot.1 != t
                {
                    slot.1 = Ty::Any;
                }
            } else {
                self.vars.push((v.clone(), t));
            }
        }
        Ok(t)
    }

    fn cmds(&mut self, dot: Ty, p: &Pipe) -> Result<Ty, Error> {
        let mut last = None;
        for c in &p.cmds {
            last = Some(self.cmd(dot, c, last)?);
        }
        Ok(last.unwrap_or(Ty::Any))
    }

    fn cmd(&mut self, dot: Ty, c: &Cmd, fin: Option<Ty>) -> Result<Ty, Error> {
        let first = &c.args[0];
        if let Term::Func(name) = &first.term {
            let mut args = Vec::new();
            for a in &c.args[1..] {
                args.push(self.arg(dot, a)?);
            }
            args.extend(fin);
            if name == "printf"
                && let Some(Arg {
                    term: Term::Str(f, _),
                    pos,
                }) = c.args.get(1)
                && f.contains("%[")
            {
                return Err(Error::at(
                    *pos,
                    "printf argument indexes (%[n]) are not supported by ringdns",
                ));
            }
            if matches!(name.as_str(), "print" | "printf" | "println") {
                let skip = usize::from(name == "printf");
                for (a, t) in c.args[1..].iter().zip(&args).skip(skip) {
                    printable(*t, a.pos, &a.to_string())?;
                }
            }
            return Ok(result(name, &args));
        }
        for a in &c.args[1..] {
            self.arg(dot, a)?;
        }
        self.arg(dot, first)
    }

    fn arg(&mut self, dot: Ty, a: &Arg) -> Result<Ty, Error> {
        Ok(match &a.term {
            Term::Dot => dot,
            Term::Field(f) => fields(dot, f, a.pos)?,
            Term::Var(v, f) => {
                let base = self
                    .vars
                    .iter()
                    .rev()
                    .find(|(n, _)| n == v)
                    .map_or(Ty::Any, |(_, t)| *t);
                fields(base, f, a.pos)?
            }
            Term::Pipe(p, f) => {
                let base = self.cmds(dot, p)?;
                fields(base, f, a.pos)?
            }
            Term::Func(name) => result(name, &[]),
            Term::Str(..) => Ty::Str,
            Term::Int(..) => Ty::Int,
            Term::Bool(_) => Ty::Bool,
            Term::Nil => Ty::Any,
        })
    }
}

/// The type of `base.F1.F2…`; a field of `*dns.Msg` ringdns does not have is an error.
fn fields(base: Ty, fields: &[String], pos: usize) -> Result<Ty, Error> {
    let mut t = base;
    for f in fields {
        t = match (t, f.as_str()) {
            (Ty::Data, "Zone" | "Name" | "Regex" | "Class" | "Type" | "Remote" | "Meta") => Ty::Str,
            (Ty::Data, "Match") => Ty::Strs,
            (Ty::Data, "Group") => Ty::Groups,
            (Ty::Data, "Message") => Ty::Msg,
            (Ty::Data, "Question") => Ty::QuestionPtr,
            (Ty::Msg, "Id") => Ty::Uint,
            (Ty::Msg, "Opcode" | "Rcode") => Ty::Int,
            (Ty::Msg, "Question") => Ty::Questions,
            (Ty::Msg, n) if UNSUPPORTED_MSG.contains(&n) => {
                return Err(Error::at(
                    pos,
                    format!(".Message.{n} is not supported by ringdns"),
                ));
            }
            (Ty::Msg, _) => Ty::Any,
            (Ty::QuestionPtr | Ty::QuestionVal, "Name" | "String") => Ty::Str,
            (Ty::QuestionPtr | Ty::QuestionVal, "Qtype" | "Qclass") => Ty::Uint,
            (Ty::Groups, _) => Ty::Str,
            _ => Ty::Any,
        };
    }
    Ok(t)
}

/// A function's result type.
fn result(name: &str, args: &[Ty]) -> Ty {
    match name {
        "not" | "eq" | "ne" | "lt" | "le" | "gt" | "ge" => Ty::Bool,
        "len" => Ty::Int,
        "print" | "printf" | "println" => Ty::Str,
        "parseInt" => Ty::Uint,
        "slice" => args.first().copied().unwrap_or(Ty::Any),
        "index" => {
            let mut t = args.first().copied().unwrap_or(Ty::Any);
            for _ in args.iter().skip(1) {
                t = match t {
                    Ty::Strs | Ty::Groups => Ty::Str,
                    Ty::Questions => Ty::QuestionVal,
                    Ty::Str => Ty::Int,
                    _ => Ty::Any,
                };
            }
            t
        }
        // `and`, `or`: whichever argument decides.
        _ => match args {
            [first, rest @ ..] if rest.iter().all(|t| t == first) => *first,
            _ => Ty::Any,
        },
    }
}

/// Printing `.Message` (miekg's dig-like `Msg.String`) or the data (Go's struct dump) is
/// not implemented.
fn printable(t: Ty, pos: usize, node: &str) -> Result<(), Error> {
    match t {
        Ty::Msg => Err(Error::at(
            pos,
            format!("printing {node} (a *dns.Msg) is not supported by ringdns"),
        )),
        Ty::Data => Err(Error::at(
            pos,
            format!("printing {node} (the template's data) is not supported by ringdns"),
        )),
        _ => Ok(()),
    }
}
