//! Executing a parse tree on a [`Data`], as Go's `text/template/exec.go` walks it: dot,
//! variables scoped to their control structure, pipelines passing each command's value
//! as the last argument of the next, `and`/`or` evaluating lazily, and errors naming the
//! command at fault.

use super::funcs::{CallError, call};
use super::parse::{Arg, Branch, Cmd, Node, Pipe, Term};
use super::value::{Data, Value};
use std::borrow::Cow;

/// An execution error: where, the node as Go prints it, and what.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ExecError {
    pub pos: usize,
    pub context: String,
    pub msg: String,
}

/// A range loop's bound, against templates that would run long (Go has none: its ranges
/// are over finite data, as ours are; this only guards the integer form).
const MAX_RANGE: i64 = 100_000;

/// The most a template may write: no record's text comes near it.
pub(super) const MAX_OUTPUT: usize = 65_535;

/// The most nodes one execution may run, against nested ranges a query's name sizes.
const MAX_STEPS: u32 = 1_000_000;

pub(super) struct Exec<'a> {
    pub data: &'a Data<'a>,
    vars: Vec<(&'a str, Value<'a>)>,
    /// Nodes run so far.
    steps: u32,
}

type Res<T> = Result<T, ExecError>;

impl<'a> Exec<'a> {
    pub(super) fn new(data: &'a Data<'a>) -> Self {
        Exec {
            data,
            vars: vec![("", Value::Data)],
            steps: 0,
        }
    }

    /// Runs `list` with dot `dot`, appending to `out`.
    pub(super) fn walk(&mut self, dot: &Value<'a>, list: &'a [Node], out: &mut String) -> Res<()> {
        for n in list {
            self.tick(out)?;
            match n {
                Node::Text(t) => out.push_str(t),
                Node::Action(p) => {
                    let v = self.pipe(dot, p)?;
                    if p.decl.is_empty() {
                        self.data.print(&v, out).map_err(|msg| ExecError {
                            pos: p.pos,
                            context: p.to_string(),
                            msg,
                        })?;
                    }
                }
                Node::If(b) => self.if_with(dot, b, false, out)?,
                Node::With(b) => self.if_with(dot, b, true, out)?,
                Node::Range(b) => self.range(dot, b, out)?,
            }
        }
        Ok(())
    }

    /// Counts one step of the execution, and stops one that ran or wrote too much.
    fn tick(&mut self, out: &str) -> Res<()> {
        self.steps += 1;
        let what = if self.steps > MAX_STEPS {
            format!("ran more than {MAX_STEPS} steps")
        } else if out.len() > MAX_OUTPUT {
            format!("wrote more than {MAX_OUTPUT} bytes")
        } else {
            return Ok(());
        };
        Err(ExecError {
            pos: 0,
            context: String::new(),
            msg: format!("the template {what}"),
        })
    }

    fn if_with(&mut self, dot: &Value<'a>, b: &'a Branch, with: bool, out: &mut String) -> Res<()> {
        let mark = self.vars.len();
        let v = self.pipe(dot, &b.pipe)?;
        let r = if v.truth(self.data) {
            let inner = if with { v } else { dot.clone() };
            self.walk(&inner, &b.list, out)
        } else if let Some(e) = &b.else_list {
            self.walk(dot, e, out)
        } else {
            Ok(())
        };
        self.vars.truncate(mark);
        r
    }

    fn range(&mut self, dot: &Value<'a>, b: &'a Branch, out: &mut String) -> Res<()> {
        let mark = self.vars.len();
        // The range's pipeline without its declarations: they take each element.
        let v = self.cmds(dot, &b.pipe)?;
        let d = self.data;
        let items: Vec<(Value<'a>, Value<'a>)> = match &v {
            Value::Strs => d
                .matches
                .iter()
                .enumerate()
                .map(|(i, m)| (Value::Int(i as i64), Value::Str(Cow::Borrowed(*m))))
                .collect(),
            Value::Groups => d
                .group_entries()
                .into_iter()
                .map(|(k, m)| (Value::Str(Cow::Owned(k)), Value::Str(Cow::Borrowed(m))))
                .collect(),
            Value::Questions => vec![(Value::Int(0), Value::Question(false))],
            Value::Vars | Value::NoValue | Value::Nil => Vec::new(),
            Value::Int(n) if *n <= MAX_RANGE => {
                (0..*n).map(|i| (Value::Int(i), Value::Int(i))).collect()
            }
            Value::Uint(n) if *n <= MAX_RANGE as u64 => {
                (0..*n).map(|i| (Value::Uint(i), Value::Uint(i))).collect()
            }
            other => {
                return Err(ExecError {
                    pos: b.pipe.pos,
                    context: b.pipe.to_string(),
                    msg: format!("range can't iterate over {}", printed(d, other)),
                });
            }
        };
        let r = if items.is_empty() {
            match &b.else_list {
                Some(e) => self.walk(dot, e, out),
                None => Ok(()),
            }
        } else {
            let mut r = Ok(());
            for (k, elem) in items {
                if let Err(e) = self.tick(out) {
                    r = Err(e);
                    break;
                }
                let inner = self.vars.len();
                match b.pipe.decl.as_slice() {
                    [v] => self.vars.push((v, elem.clone())),
                    [i, v] => {
                        self.vars.push((i, k));
                        self.vars.push((v, elem.clone()));
                    }
                    _ => {}
                }
                r = self.walk(&elem, &b.list, out);
                self.vars.truncate(inner);
                if r.is_err() {
                    break;
                }
            }
            r
        };
        self.vars.truncate(mark);
        r
    }

    /// A pipeline's value, its declaration or assignment done.
    fn pipe(&mut self, dot: &Value<'a>, p: &'a Pipe) -> Res<Value<'a>> {
        let v = self.cmds(dot, p)?;
        if let Some(name) = p.decl.first() {
            if p.assign {
                if let Some(slot) = self.vars.iter_mut().rev().find(|(n, _)| n == name) {
                    slot.1 = v.clone();
                }
            } else {
                self.vars.push((name, v.clone()));
            }
        }
        Ok(v)
    }

    /// The commands of a pipeline, each one's value the last argument of the next.
    fn cmds(&mut self, dot: &Value<'a>, p: &'a Pipe) -> Res<Value<'a>> {
        let mut last: Option<Value<'a>> = None;
        for c in &p.cmds {
            last = Some(self.cmd(dot, c, last)?);
        }
        Ok(last.unwrap_or(Value::NoValue))
    }

    fn cmd(&mut self, dot: &Value<'a>, c: &'a Cmd, fin: Option<Value<'a>>) -> Res<Value<'a>> {
        let first = &c.args[0];
        let rest = &c.args[1..];
        let err = |pos: usize, context: String, msg: String| ExecError { pos, context, msg };
        match &first.term {
            Term::Func(name) => self.func(dot, c, first, name, rest, fin),
            Term::Field(fields) => self.chain(dot.clone(), fields, first, rest, fin),
            Term::Var(v, fields) => {
                let base = self.var(v);
                self.chain(base, fields, first, rest, fin)
            }
            Term::Pipe(p, fields) => {
                let base = self.cmds(dot, p)?;
                self.chain(base, fields, first, rest, fin)
            }
            _ => {
                if !rest.is_empty() || fin.is_some() {
                    return Err(err(
                        first.pos,
                        first.to_string(),
                        format!("can't give argument to non-function {first}"),
                    ));
                }
                self.arg(dot, first)
            }
        }
    }

    fn var(&self, name: &str) -> Value<'a> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map_or(Value::NoValue, |(_, v)| v.clone())
    }

    /// `base.F1.F2…`, the last field given `rest` and `fin` as arguments (only the method
    /// `.Meta` takes one).
    fn chain(
        &mut self,
        base: Value<'a>,
        fields: &'a [String],
        at: &'a Arg,
        rest: &'a [Arg],
        fin: Option<Value<'a>>,
    ) -> Res<Value<'a>> {
        let err = |msg: String| ExecError {
            pos: at.pos,
            context: at.to_string(),
            msg,
        };
        let has_args = !rest.is_empty() || fin.is_some();
        let mut v = base;
        for (i, f) in fields.iter().enumerate() {
            let last = i + 1 == fields.len();
            if last && f == "Meta" && matches!(v, Value::Data) {
                let mut args = Vec::new();
                for a in rest {
                    args.push(self.arg(&Value::Data, a)?);
                }
                args.extend(fin.clone());
                return match args.as_slice() {
                    // CoreDNS's `Meta`: the label's value, "" when unset or without
                    // the metadata plugin.
                    [Value::Str(label)] => Ok(Value::Str(Cow::Owned(
                        self.data
                            .meta
                            .and_then(|m| m.get(label))
                            .unwrap_or_default(),
                    ))),
                    [v] => Err(err(format!(
                        "wrong type for value; expected string; got {}",
                        v.type_name()
                    ))),
                    _ => Err(err(format!(
                        "wrong number of args for Meta: want 1 got {}",
                        args.len()
                    ))),
                };
            }
            v = self.data.field(&v, f).map_err(err)?;
        }
        if has_args {
            return Err(err(format!("can't give argument to non-function {at}")));
        }
        Ok(v)
    }

    /// A function argument's value (Go's `evalArg`): an invalid value passes as `nil`.
    fn arg(&mut self, dot: &Value<'a>, a: &'a Arg) -> Res<Value<'a>> {
        let v = match &a.term {
            Term::Dot => dot.clone(),
            Term::Field(f) => self.chain(dot.clone(), f, a, &[], None)?,
            Term::Var(v, f) => {
                let base = self.var(v);
                self.chain(base, f, a, &[], None)?
            }
            Term::Pipe(p, f) => {
                let base = self.cmds(dot, p)?;
                self.chain(base, f, a, &[], None)?
            }
            Term::Func(name) => {
                let cmd = Cmd {
                    pos: a.pos,
                    args: Vec::new(),
                };
                // A function named as an argument is called without arguments.
                return self.func(dot, &cmd, a, name, &[], None);
            }
            Term::Str(s, _) => Value::Str(Cow::Borrowed(s.as_str())),
            Term::Int(i, _) => match i64::try_from(*i) {
                Ok(i) => Value::Int(i),
                Err(_) => Value::Uint(*i as u64),
            },
            Term::Bool(b) => Value::Bool(*b),
            Term::Nil => Value::Nil,
        };
        Ok(if v == Value::NoValue { Value::Nil } else { v })
    }

    /// Calls function `name` (the word `ident` of command `c`) with `rest` and `fin`.
    fn func(
        &mut self,
        dot: &Value<'a>,
        c: &Cmd,
        ident: &Arg,
        name: &str,
        rest: &'a [Arg],
        fin: Option<Value<'a>>,
    ) -> Res<Value<'a>> {
        // `and` and `or` stop at the first argument that decides.
        if name == "and" || name == "or" {
            let n = rest.len() + usize::from(fin.is_some());
            if n == 0 {
                return Err(ExecError {
                    pos: ident.pos,
                    context: ident.to_string(),
                    msg: format!("wrong number of args for {name}: want at least 1 got 0"),
                });
            }
            let mut v = Value::NoValue;
            for a in rest {
                v = self.arg(dot, a)?;
                if v.truth(self.data) == (name == "or") {
                    return Ok(v);
                }
            }
            if let Some(f) = fin {
                v = f;
            }
            return Ok(v);
        }
        let mut args = Vec::with_capacity(rest.len() + 1);
        for a in rest {
            args.push(self.arg(dot, a)?);
        }
        args.extend(fin);
        call(self.data, name, args).map_err(|e| match e {
            CallError::Args(msg) => ExecError {
                pos: ident.pos,
                context: ident.to_string(),
                msg,
            },
            CallError::Func(msg) => ExecError {
                pos: c.pos,
                context: c.to_string(),
                msg: format!("error calling {name}: {msg}"),
            },
        })
    }
}

/// A value as an error message shows it.
fn printed(d: &Data<'_>, v: &Value<'_>) -> String {
    let mut s = String::new();
    if d.print(v, &mut s).is_err() {
        s = v.type_name().to_string();
    }
    s
}
