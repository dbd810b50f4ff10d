//! The parse tree of a template and the parser that builds it from tokens, after Go's
//! `text/template/parse`: text, actions, `if`/`else if`/`else`, `with`/`else with`,
//! `range` (with `else`) and their `end`; pipelines of commands joined by `|`; variables
//! (`$x := …`, `$x = …`, `$`), fields, function calls, parenthesized pipelines, string,
//! integer and boolean constants, `nil`.
//!
//! Refused here, with the offset of the construct: what Go's parser refuses (an undefined
//! function or variable, `nil` as a command, a constant after a `|`, …), and what Go
//! accepts but this implementation does not (`define`, `template`, `block`, `break`,
//! `continue`, floating-point and character constants, the functions `html`, `js`,
//! `urlquery` and `call`). Nothing unknown is passed over.
//!
//! `Display` prints a tree as Go's `Node.String` does (CoreDNS labels its failure metrics
//! with the template printed so, and execution errors quote the command at fault so).

use super::Error;
use super::lex::{Kind, Tok};
use std::fmt;

/// A node of a template's list.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node {
    Text(String),
    Action(Pipe),
    If(Branch),
    With(Branch),
    Range(Branch),
}

/// `if`, `with` or `range`: the pipeline, the list, and the list after `else`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Branch {
    pub pipe: Pipe,
    pub list: Vec<Node>,
    pub else_list: Option<Vec<Node>>,
}

/// A pipeline: optional variable declarations (or an assignment), and commands.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Pipe {
    pub pos: usize,
    pub decl: Vec<String>,
    pub assign: bool,
    pub cmds: Vec<Cmd>,
}

/// A command: its words (a function and its arguments, or one value).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Cmd {
    pub pos: usize,
    pub args: Vec<Arg>,
}

/// One word of a command, with its offset.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Arg {
    pub pos: usize,
    pub term: Term,
}

/// What a word is.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Term {
    /// `.`
    Dot,
    /// `.A.B`: a field chain on dot.
    Field(Vec<String>),
    /// `$x.A.B` (`$` is the name `""`).
    Var(String, Vec<String>),
    /// A function's name.
    Func(String),
    /// A string: its value and its text.
    Str(String, String),
    /// An integer: its value and its text.
    Int(i128, String),
    /// `true` or `false`.
    Bool(bool),
    /// `nil`
    Nil,
    /// `(pipeline)` or `(pipeline).A.B`.
    Pipe(Box<Pipe>, Vec<String>),
}

/// The functions a template may call: Go's predefined ones that ringdns has, and
/// CoreDNS's `parseInt`.
pub(super) const FUNCS: [&str; 16] = [
    "and", "or", "not", "eq", "ne", "lt", "le", "gt", "ge", "len", "index", "slice", "print",
    "printf", "println", "parseInt",
];

/// Go's predefined functions that ringdns does not implement: a setup error, not a
/// function left out.
const UNSUPPORTED_FUNCS: [&str; 4] = ["html", "js", "urlquery", "call"];

/// Parses `toks` into a list of nodes.
pub(super) fn parse(toks: &[Tok]) -> Result<Vec<Node>, Error> {
    let mut p = Parser {
        toks,
        i: 0,
        vars: vec![String::new()],
        depth: 0,
    };
    let (list, end) = p.list()?;
    match end {
        None => Ok(list),
        Some((pos, word)) => Err(Error::at(pos, format!("unexpected {{{{{word}}}}}"))),
    }
}

struct Parser<'t> {
    toks: &'t [Tok],
    i: usize,
    /// The variables in scope (`$` first).
    vars: Vec<String>,
    /// How many controls and parentheses enclose the parser now.
    depth: usize,
}

/// How deeply controls and parentheses may nest. Go allows 10 000 on its growing stacks;
/// checking, running and printing a tree recurse over it on fixed thread stacks, so this
/// bound keeps a Corefile from overflowing them (no real template comes near it).
const MAX_DEPTH: usize = 100;

/// How a list ended: at the end of input, or at `{{else …` / `{{end}}` (the word, and the
/// parser just after it).
type ListEnd = Option<(usize, &'static str)>;

impl<'t> Parser<'t> {
    fn peek(&self) -> Option<&'t Tok> {
        self.toks.get(self.i)
    }

    fn peek_at(&self, n: usize) -> Option<&'t Tok> {
        self.toks.get(self.i + n)
    }

    fn next(&mut self) -> Option<&'t Tok> {
        let t = self.toks.get(self.i);
        self.i += 1;
        t
    }

    /// The offset of the end of input, for errors there.
    fn end_pos(&self) -> usize {
        self.toks.last().map_or(0, |t| t.pos + 1)
    }

    /// Nodes up to the end of input or an `else`/`end` action (which is consumed, up to
    /// and including its word).
    fn list(&mut self) -> Result<(Vec<Node>, ListEnd), Error> {
        let mut out = Vec::new();
        while let Some(t) = self.next() {
            match &t.kind {
                Kind::Text(s) => out.push(Node::Text(s.clone())),
                Kind::Open => {
                    if let Some(Tok {
                        kind: Kind::Ident(w),
                        pos,
                        ..
                    }) = self.peek()
                    {
                        match w.as_str() {
                            "end" => {
                                self.i += 1;
                                return Ok((out, Some((*pos, "end"))));
                            }
                            "else" => {
                                self.i += 1;
                                return Ok((out, Some((*pos, "else"))));
                            }
                            _ => {}
                        }
                    }
                    out.push(self.action()?);
                }
                _ => return Err(Error::at(t.pos, "unexpected token")),
            }
        }
        Ok((out, None))
    }

    /// Expects `}}`.
    fn close(&mut self, context: &str) -> Result<(), Error> {
        match self.next() {
            Some(Tok {
                kind: Kind::Close, ..
            }) => Ok(()),
            Some(t) => Err(Error::at(t.pos, format!("unexpected token in {context}"))),
            None => Err(Error::at(self.end_pos(), "unclosed action")),
        }
    }

    /// One action, just after its `{{`.
    fn action(&mut self) -> Result<Node, Error> {
        if let Some(Tok {
            kind: Kind::Ident(w),
            pos,
            ..
        }) = self.peek()
        {
            let pos = *pos;
            match w.as_str() {
                "if" | "with" | "range" => {
                    self.i += 1;
                    let word = if w == "if" {
                        "if"
                    } else if w == "with" {
                        "with"
                    } else {
                        "range"
                    };
                    return self.control(word, pos);
                }
                "define" | "template" | "block" | "break" | "continue" => {
                    return Err(Error::at(
                        pos,
                        format!("{{{{{w}}}}} is not supported by ringdns"),
                    ));
                }
                _ => {}
            }
        }
        let pipe = self.pipeline("command", false)?;
        self.close("command")?;
        Ok(Node::Action(pipe))
    }

    /// `if`, `with` or `range` after its word: the pipeline, the list, `else` (with an
    /// `else if`/`else with` as a nested node, as Go parses it) and `end`.
    fn control(&mut self, word: &'static str, pos: usize) -> Result<Node, Error> {
        self.nested(pos, |p| p.control_body(word, pos))
    }

    /// Runs `f` one level deeper, refusing to go past [`MAX_DEPTH`].
    fn nested<T>(
        &mut self,
        pos: usize,
        f: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<T, Error> {
        if self.depth >= MAX_DEPTH {
            return Err(Error::at(pos, "max expression depth exceeded"));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// [`Parser::control`]'s work.
    fn control_body(&mut self, word: &'static str, pos: usize) -> Result<Node, Error> {
        let mark = self.vars.len();
        let pipe = self.pipeline(word, word == "range")?;
        self.close(word)?;
        let (list, end) = self.list()?;
        let else_list = match end {
            None => return Err(Error::at(pos, format!("unexpected EOF in {word}"))),
            Some((_, "end")) => {
                self.close("end")?;
                None
            }
            Some((epos, _)) => {
                // `{{else if …}}` / `{{else with …}}`: a nested control that ends with ours.
                if let Some(Tok {
                    kind: Kind::Ident(w),
                    pos: wpos,
                    ..
                }) = self.peek()
                    && (word != "range" && w == word)
                {
                    let wpos = *wpos;
                    self.i += 1;
                    let nested = self.control(word, wpos)?;
                    Some(vec![nested])
                } else {
                    self.close("else")?;
                    let (else_list, end) = self.list()?;
                    match end {
                        Some((_, "end")) => self.close("end")?,
                        Some((p, w)) => {
                            return Err(Error::at(p, format!("unexpected {{{{{w}}}}}")));
                        }
                        None => {
                            return Err(Error::at(epos, format!("unexpected EOF in {word}")));
                        }
                    }
                    Some(else_list)
                }
            }
        };
        self.vars.truncate(mark);
        let b = Branch {
            pipe,
            list,
            else_list,
        };
        Ok(match word {
            "if" => Node::If(b),
            "with" => Node::With(b),
            _ => Node::Range(b),
        })
    }

    /// A pipeline up to (not including) `}}` or `)`.
    fn pipeline(&mut self, context: &str, range: bool) -> Result<Pipe, Error> {
        let pos = self.peek().map_or(self.end_pos(), |t| t.pos);
        let mut decl = Vec::new();
        let mut assign = false;
        // Declarations: `$x :=`, `$x =`, and in range `$i, $x :=`.
        if let Some(Tok {
            kind: Kind::Var(_), ..
        }) = self.peek()
        {
            let mut j = 0;
            let mut names = Vec::new();
            while let (
                Some(Tok {
                    kind: Kind::Var(v), ..
                }),
                Some(next),
            ) = (self.peek_at(j), self.peek_at(j + 1))
            {
                match next.kind {
                    Kind::Declare | Kind::Assign => {
                        names.push(v.clone());
                        assign = next.kind == Kind::Assign;
                        decl = names;
                        self.i += j + 2;
                        break;
                    }
                    Kind::Comma if range && names.is_empty() => {
                        names.push(v.clone());
                        j += 2;
                    }
                    Kind::Comma => {
                        return Err(Error::at(
                            next.pos,
                            format!("too many declarations in {context}"),
                        ));
                    }
                    _ => break,
                }
            }
            if decl.len() > 2 {
                return Err(Error::at(
                    pos,
                    format!("too many declarations in {context}"),
                ));
            }
            for v in &decl {
                if assign {
                    if !self.vars.contains(v) {
                        return Err(Error::at(pos, format!("undefined variable \"${v}\"")));
                    }
                } else {
                    self.vars.push(v.clone());
                }
            }
        }
        let mut cmds = Vec::new();
        loop {
            match self.peek() {
                None => return Err(Error::at(self.end_pos(), "unclosed action")),
                Some(Tok {
                    kind: Kind::Close | Kind::RParen,
                    pos: end,
                    ..
                }) => {
                    if cmds.is_empty() {
                        return Err(Error::at(*end, format!("missing value for {context}")));
                    }
                    break;
                }
                Some(_) => {
                    if !cmds.is_empty() {
                        // After a command comes `|` (checked in `command`).
                    }
                    let c = self.command()?;
                    cmds.push(c);
                    if let Some(Tok {
                        kind: Kind::Pipe,
                        pos,
                        ..
                    }) = self.peek()
                    {
                        let p = *pos;
                        self.i += 1;
                        if matches!(
                            self.peek().map(|t| &t.kind),
                            Some(Kind::Close | Kind::RParen) | None
                        ) {
                            return Err(Error::at(p, "missing command after |"));
                        }
                    }
                }
            }
        }
        let pipe = Pipe {
            pos,
            decl,
            assign,
            cmds,
        };
        check_pipeline(&pipe, context)?;
        Ok(pipe)
    }

    /// One command: words up to `|`, `}}` or `)`.
    fn command(&mut self) -> Result<Cmd, Error> {
        let pos = self.peek().map_or(self.end_pos(), |t| t.pos);
        let mut args = Vec::new();
        loop {
            match self.peek().map(|t| &t.kind) {
                None => return Err(Error::at(self.end_pos(), "unclosed action")),
                Some(Kind::Close | Kind::RParen | Kind::Pipe) => break,
                Some(_) => {
                    if let Some(t) = self.peek()
                        && !args.is_empty()
                        && !t.spaced
                        && !matches!(t.kind, Kind::LParen)
                    {
                        return Err(Error::at(t.pos, "missing space between arguments"));
                    }
                    args.push(self.operand()?);
                }
            }
        }
        if args.is_empty() {
            return Err(Error::at(pos, "empty command"));
        }
        Ok(Cmd { pos, args })
    }

    /// A term and the field chain right after it.
    fn operand(&mut self) -> Result<Arg, Error> {
        let t = self
            .next()
            .ok_or_else(|| Error::at(self.end_pos(), "unclosed action"))?;
        let pos = t.pos;
        let term = match &t.kind {
            Kind::Dot => Term::Dot,
            Kind::Field(f) => Term::Field(vec![f.clone()]),
            Kind::Var(v) => {
                if !self.vars.contains(v) {
                    return Err(Error::at(pos, format!("undefined variable \"${v}\"")));
                }
                Term::Var(v.clone(), Vec::new())
            }
            Kind::Str(v, raw) => Term::Str(v.clone(), raw.clone()),
            Kind::Number(n) => Term::Int(number(n, pos)?, n.clone()),
            Kind::Char(_) => {
                return Err(Error::at(
                    pos,
                    "character constants are not supported by ringdns",
                ));
            }
            Kind::LParen => {
                let p = self.nested(pos, |p| p.pipeline("parenthesized pipeline", false))?;
                match self.next() {
                    Some(Tok {
                        kind: Kind::RParen, ..
                    }) => {}
                    _ => return Err(Error::at(pos, "unclosed left paren")),
                }
                Term::Pipe(Box::new(p), Vec::new())
            }
            Kind::Ident(w) => match w.as_str() {
                "true" => Term::Bool(true),
                "false" => Term::Bool(false),
                "nil" => Term::Nil,
                "if" | "else" | "end" | "range" | "with" | "define" | "template" | "block"
                | "break" | "continue" => {
                    return Err(Error::at(pos, format!("unexpected <{w}> in command")));
                }
                f if UNSUPPORTED_FUNCS.contains(&f) => {
                    return Err(Error::at(
                        pos,
                        format!("function \"{f}\" is not supported by ringdns"),
                    ));
                }
                f if FUNCS.contains(&f) => Term::Func(f.to_string()),
                f => return Err(Error::at(pos, format!("function \"{f}\" not defined"))),
            },
            _ => return Err(Error::at(pos, "unexpected token in operand")),
        };
        // A chain: fields written right after the term.
        let mut fields = Vec::new();
        while let Some(Tok {
            kind: Kind::Field(f),
            spaced: false,
            ..
        }) = self.peek()
        {
            fields.push(f.clone());
            self.i += 1;
        }
        let term = match term {
            Term::Field(mut f) => {
                f.extend(fields);
                Term::Field(f)
            }
            Term::Var(v, _) => Term::Var(v, fields),
            Term::Pipe(p, _) => Term::Pipe(p, fields),
            other if fields.is_empty() => other,
            Term::Dot => return Err(Error::at(pos, "unexpected . after term \".\"")),
            other => {
                return Err(Error::at(
                    pos,
                    format!(
                        "unexpected . after term {:?}",
                        Arg { pos, term: other }.to_string()
                    ),
                ));
            }
        };
        Ok(Arg { pos, term })
    }
}

/// Go's `checkPipeline`: `nil` is no command, and only the first command may be a
/// constant.
fn check_pipeline(p: &Pipe, context: &str) -> Result<(), Error> {
    if let Some(first) = p.cmds.first()
        && let Some(Arg {
            term: Term::Nil,
            pos,
        }) = first.args.first()
    {
        let _ = context;
        return Err(Error::at(*pos, "nil is not a command"));
    }
    for (i, c) in p.cmds.iter().enumerate().skip(1) {
        if let Some(a) = c.args.first()
            && matches!(
                a.term,
                Term::Bool(_) | Term::Dot | Term::Nil | Term::Int(..) | Term::Str(..)
            )
        {
            return Err(Error::at(
                a.pos,
                format!("non executable command in pipeline stage {}", i + 1),
            ));
        }
    }
    Ok(())
}

/// An integer constant as Go reads one (decimal, `0x`, `0o`, `0b`, a leading `0` for
/// octal, `_` between digits, a sign); floating-point and imaginary ones are refused.
fn number(text: &str, pos: usize) -> Result<i128, Error> {
    let bad = || Error::at(pos, format!("bad number syntax: \"{text}\""));
    let (neg, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1
        && lower.starts_with('0')
        && lower.bytes().all(|c| c.is_ascii_digit() || c == b'_')
    {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    let float = (radix == 10 && (digits.contains('.') || digits.contains('e')))
        || (radix == 16 && (digits.contains('.') || digits.contains('p')))
        || digits.ends_with('i');
    if float {
        return Err(Error::at(
            pos,
            format!(
                "floating-point and complex constants are not supported by ringdns: \"{text}\""
            ),
        ));
    }
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return Err(bad());
    }
    let clean: String = digits.chars().filter(|c| *c != '_').collect();
    let v = u64::from_str_radix(&clean, radix).map_err(|_| bad())?;
    Ok(if neg { -i128::from(v) } else { i128::from(v) })
}

fn write_fields(f: &mut fmt::Formatter<'_>, fields: &[String]) -> fmt::Result {
    for x in fields {
        write!(f, ".{x}")?;
    }
    Ok(())
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.term {
            Term::Dot => f.write_str("."),
            Term::Field(x) => write_fields(f, x),
            Term::Var(v, x) => {
                write!(f, "${v}")?;
                write_fields(f, x)
            }
            Term::Func(n) => f.write_str(n),
            Term::Str(_, raw) | Term::Int(_, raw) => f.write_str(raw),
            Term::Bool(b) => write!(f, "{b}"),
            Term::Nil => f.write_str("nil"),
            Term::Pipe(p, x) => {
                write!(f, "({p})")?;
                write_fields(f, x)
            }
        }
    }
}

impl fmt::Display for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{a}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Pipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.decl.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "${v}")?;
        }
        if !self.decl.is_empty() {
            f.write_str(if self.assign { " = " } else { " := " })?;
        }
        for (i, c) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

/// Go's `ListNode.String`: the nodes one after the other.
pub(super) struct List<'a>(pub &'a [Node]);

impl fmt::Display for List<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for n in self.0 {
            match n {
                Node::Text(t) => f.write_str(t)?,
                Node::Action(p) => write!(f, "{{{{{p}}}}}")?,
                Node::If(b) => branch(f, "if", b)?,
                Node::With(b) => branch(f, "with", b)?,
                Node::Range(b) => branch(f, "range", b)?,
            }
        }
        Ok(())
    }
}

fn branch(f: &mut fmt::Formatter<'_>, word: &str, b: &Branch) -> fmt::Result {
    write!(f, "{{{{{word} {}}}}}{}", b.pipe, List(&b.list))?;
    if let Some(e) = &b.else_list {
        write!(f, "{{{{else}}}}{}", List(e))?;
    }
    f.write_str("{{end}}")
}

#[cfg(test)]
mod tests {
    use super::super::lex::lex;
    use super::*;

    fn tree(src: &str) -> Result<Vec<Node>, Error> {
        parse(&lex(src)?)
    }

    fn printed(src: &str) -> String {
        List(&tree(src).unwrap()).to_string()
    }

    #[test]
    fn prints_as_go_does() {
        assert_eq!(
            printed("{{ .Name }} 60 IN A {{ .Group.a }}.{{ index .Match 1 }}"),
            "{{.Name}} 60 IN A {{.Group.a}}.{{index .Match 1}}"
        );
        assert_eq!(
            printed(r#"{{- $x := printf "%s-%d"  .Name 0x10 | len -}}"#),
            r#"{{$x := printf "%s-%d" .Name 0x10 | len}}"#
        );
        assert_eq!(
            printed("{{if eq .Type `A`}}a{{else if .Name}}n{{else}}x{{end}}"),
            "{{if eq .Type `A`}}a{{else}}{{if .Name}}n{{else}}x{{end}}{{end}}"
        );
        assert_eq!(
            printed(
                "{{range $i, $m := .Match}}{{$i}}={{$m}}{{end}}{{with (.Question).Name}}{{.}}{{end}}"
            ),
            "{{range $i, $m := .Match}}{{$i}}={{$m}}{{end}}{{with (.Question).Name}}{{.}}{{end}}"
        );
    }

    #[test]
    fn refuses_what_go_refuses() {
        let e = |s: &str| tree(s).unwrap_err();
        assert_eq!(
            e("{{ notAFunction }}"),
            Error::at(3, "function \"notAFunction\" not defined")
        );
        assert_eq!(e("{{ $x }}"), Error::at(3, "undefined variable \"$x\""));
        assert_eq!(e("{{ $x = 1 }}"), Error::at(3, "undefined variable \"$x\""));
        assert_eq!(e("{{ nil }}"), Error::at(3, "nil is not a command"));
        assert_eq!(e("{{ }}"), Error::at(3, "missing value for command"));
        assert_eq!(
            e("{{ .A | 3 }}"),
            Error::at(8, "non executable command in pipeline stage 2")
        );
        assert_eq!(e("{{ .A | }}"), Error::at(6, "missing command after |"));
        assert_eq!(e("{{ end }}"), Error::at(3, "unexpected {{end}}"));
        assert_eq!(e("{{ if .A }}x"), Error::at(3, "unexpected EOF in if"));
        assert_eq!(
            e("{{ if .A }}x{{ else }}y{{ else }}z{{ end }}"),
            Error::at(26, "unexpected {{else}}")
        );
        assert_eq!(
            e("{{ $a, $b := .A }}"),
            Error::at(5, "too many declarations in command")
        );
        assert_eq!(e("{{ 1x }}"), Error::at(3, "bad number syntax: \"1x\""));
        // A variable is scoped to its control structure.
        assert_eq!(
            e("{{ if $x := .A }}{{ end }}{{ $x }}"),
            Error::at(29, "undefined variable \"$x\"")
        );
    }

    #[test]
    fn refuses_what_ringdns_does_not_implement() {
        let e = |s: &str| tree(s).unwrap_err();
        assert_eq!(
            e("{{ template \"x\" }}"),
            Error::at(3, "{{template}} is not supported by ringdns")
        );
        assert_eq!(
            e("a{{ define \"x\" }}{{ end }}"),
            Error::at(4, "{{define}} is not supported by ringdns")
        );
        assert_eq!(
            e("{{ range .Match }}{{ break }}{{ end }}"),
            Error::at(21, "{{break}} is not supported by ringdns")
        );
        assert_eq!(
            e("{{ html .Name }}"),
            Error::at(3, "function \"html\" is not supported by ringdns")
        );
        assert_eq!(
            e("{{ call .X }}"),
            Error::at(3, "function \"call\" is not supported by ringdns")
        );
        assert_eq!(
            e("{{ printf \"%v\" 1.5 }}"),
            Error::at(
                15,
                "floating-point and complex constants are not supported by ringdns: \"1.5\""
            )
        );
        assert_eq!(
            e("{{ 'a' }}"),
            Error::at(3, "character constants are not supported by ringdns")
        );
    }

    #[test]
    fn numbers_as_go_reads_them() {
        for (t, v) in [
            ("10", 10),
            ("0x1F", 31),
            ("0o17", 15),
            ("017", 15),
            ("0b101", 5),
            ("1_000", 1000),
            ("-7", -7),
            ("0", 0),
        ] {
            assert_eq!(number(t, 0).unwrap(), v, "{t}");
        }
        for t in ["1__0", "_1", "0x", "09"] {
            assert!(number(t, 0).is_err(), "{t}");
        }
    }
}
