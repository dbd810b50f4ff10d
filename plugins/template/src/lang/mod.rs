//! The subset of Go's `text/template` that CoreDNS's template plugin users write, over
//! CoreDNS's template data.
//!
//! No maintained crate fits (see the README's "Differences from CoreDNS"), so this is a
//! compact implementation of its own: [`Template::parse`] lexes (`lex`), parses (`parse`)
//! and checks (`check`) a template once at setup, where everything it refuses is an error
//! with its line and column; [`Template::execute`] renders it for one query (`exec`, with
//! the functions in `funcs` and Go's formatting in `fmt`) over a [`Data`] (`value`).
//!
//! Supported: text, `{{ }}` actions with `{{-`/`-}}` trimming and `{{/* */}}` comments;
//! pipelines with `|`, parentheses, variables (`$x := …`, `$x = …`, `$`); fields of the
//! data (`.Name`, `.Group.a`, `.Message.Question`, …) and the method `.Meta`; string,
//! integer and boolean constants; `if`/`else if`/`else`, `with`/`else with`, `range` (with
//! `else` and `$i, $v :=`); the functions `and or not eq ne lt le gt ge len index slice
//! print printf println` and CoreDNS's `parseInt`.
//!
//! Refused at setup: `define`, `template`, `block`, `break`, `continue`, floating-point,
//! complex and character constants, the functions `html js urlquery call`, the fields and
//! methods of `*dns.Msg` other than its header flags, `Id`, `Opcode`, `Rcode` and
//! `Question`, and printing `.Message` or the whole data.

mod check;
mod exec;
mod fmt;
mod funcs;
mod lex;
mod parse;
mod value;

#[allow(unused_imports)] // the plugin builds them
pub use value::{Data, Msg};

/// A parse or check error at a byte offset of the template text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Error {
    pos: usize,
    msg: String,
}

impl Error {
    fn at(pos: usize, msg: impl Into<String>) -> Self {
        Error {
            pos,
            msg: msg.into(),
        }
    }
}

/// A template, parsed and checked.
#[derive(Debug, Clone)]
pub struct Template {
    name: String,
    src: String,
    tree: Vec<parse::Node>,
}

/// Go's `NAME:LINE:COL` for an offset of `src` (the column counted from 0, as Go's
/// `ErrorContext` counts it).
fn location(name: &str, src: &str, pos: usize) -> String {
    let pos = pos.min(src.len());
    let before = &src.as_bytes()[..pos];
    let line = 1 + before.iter().filter(|b| **b == b'\n').count();
    let col = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(pos, |nl| pos - nl - 1);
    format!("{name}:{line}:{col}")
}

impl Template {
    /// Parses and checks `src` as the template `name` (CoreDNS names them after their
    /// section: `answer`, `additional`, `authority`). The error reads `template:
    /// NAME:LINE:COL: what`.
    pub fn parse(name: &str, src: &str) -> Result<Template, String> {
        let fail = |e: Error| format!("template: {}: {}", location(name, src, e.pos), e.msg);
        let toks = lex::lex(src).map_err(fail)?;
        let tree = parse::parse(&toks).map_err(fail)?;
        check::check(&tree).map_err(fail)?;
        Ok(Template {
            name: name.to_string(),
            src: src.to_string(),
            tree,
        })
    }

    /// The template as Go's `Tree.Root.String()` prints it: CoreDNS's `template` label.
    pub fn label(&self) -> String {
        parse::List(&self.tree).to_string()
    }

    /// Renders the template for `data` into `out` (appended). The error reads as Go's:
    /// `template: NAME:LINE:COL: executing "NAME" at <NODE>: what`.
    pub fn execute(&self, data: &Data<'_>, out: &mut String) -> Result<(), String> {
        let mut e = exec::Exec::new(data);
        e.walk(&value::Value::Data, &self.tree, out)
            .and_then(|()| {
                // The last action's output too (one `printf` writes up to a million bytes).
                if out.len() > exec::MAX_OUTPUT {
                    Err(exec::ExecError {
                        pos: 0,
                        context: String::new(),
                        msg: format!("the template wrote more than {} bytes", exec::MAX_OUTPUT),
                    })
                } else {
                    Ok(())
                }
            })
            .map_err(|e| {
                format!(
                    "template: {}: executing \"{}\" at <{}>: {}",
                    location(&self.name, &self.src, e.pos),
                    self.name,
                    e.context,
                    e.msg
                )
            })
    }
}

#[cfg(test)]
mod tests;
