//! The token cursor plugin setup code walks, with caddy's `Dispenser` semantics.

use std::sync::Arc;

use super::error::Error;
use super::lexer::Token;

/// Token cursor over one directive's tokens (or any token slice). It exists so plugin
/// setup code reads its configuration the way CoreDNS plugins do (`c.Next`, `c.NextArg`,
/// `c.RemainingArgs`, `c.NextBlock`) and reports errors with CoreDNS's exact texts.
pub struct Dispenser<'a> {
    tokens: &'a [Token],
    /// Index of the current token; -1 before the first `next`.
    cursor: isize,
    /// Open `{ }` blocks entered through [`Dispenser::next_block`].
    nesting: usize,
}

impl<'a> Dispenser<'a> {
    /// A cursor placed before the first token.
    pub fn new(tokens: &'a [Token]) -> Self {
        Dispenser {
            tokens,
            cursor: -1,
            nesting: 0,
        }
    }

    /// caddy `Next`: advances to the next token on any line; false (cursor unchanged) at
    /// the end.
    // The name mirrors caddy's `Next`; it is a cursor step, not an `Iterator`.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> bool {
        if self.cursor + 1 < self.len() {
            self.cursor += 1;
            true
        } else {
            false
        }
    }

    /// caddy `NextArg`: advances only if the next token starts on the line where the
    /// current one ends, in the same file, and is not `{` (that opens a block instead).
    pub fn next_arg(&mut self) -> bool {
        if !self.next_on_same_line() {
            return false;
        }
        if self.val() == "{" {
            self.cursor -= 1;
            return false;
        }
        true
    }

    /// caddy `NextLine`: advances only if the next token is on a later line (or in
    /// another file).
    pub fn next_line(&mut self) -> bool {
        if self.cursor < 0 {
            return self.next();
        }
        let same_line = match (self.current_index(), self.peek()) {
            (Some(i), Some(next)) => {
                let cur = &self.tokens[i];
                cur.file == next.file && cur.line + cur.line_breaks() >= next.line
            }
            _ => true,
        };
        !same_line && self.next()
    }

    /// caddy `NextBlock` with a nesting counter, for `while d.next_block() { ... }`.
    ///
    /// Outside a block it enters the `{` that follows on the current line and returns
    /// true on each token inside; it returns false at the block's `}` (cursor left there),
    /// at the end of input, or when no block opens here (`{ }` counts as no block).
    /// Inside a block, a nested `{` comes back as an ordinary token; calling `next_block`
    /// while on that `{` enters the nested block (its `}` then returns false and the outer
    /// loop can go on), to any depth.
    pub fn next_block(&mut self) -> bool {
        if self.nesting > 0 {
            if self.val() == "{" {
                return self.enter_block();
            }
            if !self.next() {
                return false;
            }
            if self.val() == "}" {
                self.nesting -= 1;
                return false;
            }
            return true;
        }
        if !self.next_on_same_line() {
            return false;
        }
        if self.val() != "{" {
            self.cursor -= 1;
            return false;
        }
        self.enter_block()
    }

    /// Number of blocks currently entered through [`Dispenser::next_block`].
    pub fn nesting(&self) -> usize {
        self.nesting
    }

    /// Text of the current token ("" before the first `next`).
    pub fn val(&self) -> &str {
        self.token().map_or("", |t| t.text.as_str())
    }

    /// The current token, if any.
    pub fn token(&self) -> Option<&Token> {
        self.current_index().map(|i| &self.tokens[i])
    }

    /// Line of the current token (0 when there is none).
    pub fn line(&self) -> usize {
        self.token().map_or(0, |t| t.line)
    }

    /// File of the current token (the first token's file before the first `next`).
    pub fn file(&self) -> &str {
        match self.token().or(self.tokens.first()) {
            Some(t) => &t.file,
            None => "",
        }
    }

    /// caddy `RemainingArgs`: all further arguments on this line; stops before `{`.
    pub fn remaining_args(&mut self) -> Vec<String> {
        let mut args = Vec::new();
        while self.next_arg() {
            args.push(self.val().to_string());
        }
        args
    }

    /// caddy `ArgErr`: `Error during parsing: Wrong argument count or unexpected line
    /// ending after 'VAL'` (or `Unexpected token '{', expecting argument` on a `{`).
    pub fn arg_err(&self) -> Error {
        if self.val() == "{" {
            return self.err("Unexpected token '{', expecting argument");
        }
        self.err(&format!(
            "Wrong argument count or unexpected line ending after '{}'",
            self.val()
        ))
    }

    /// caddy `Err`: `Error during parsing: MSG` at the current token.
    pub fn err(&self, msg: &str) -> Error {
        Error::parsing(self.file_arc(), self.line(), msg)
    }

    /// A plugin's error as CoreDNS's `plugin.Error` words it: `Error during parsing:
    /// plugin/NAME: MSG` at the current token.
    pub fn plugin_err(&self, plugin: &str, msg: impl std::fmt::Display) -> Error {
        self.err(&format!("plugin/{plugin}: {msg}"))
    }

    /// [`Dispenser::arg_err`] wrapped as a plugin's error (`plugin/NAME: Wrong argument
    /// count …`), as CoreDNS's setups return `plugin.Error(name, c.ArgErr())`.
    pub fn plugin_arg_err(&self, plugin: &str) -> Error {
        let mut e = self.arg_err();
        e.message = e.message.replacen(
            "Error during parsing: ",
            &format!("Error during parsing: plugin/{plugin}: "),
            1,
        );
        e
    }

    /// caddy `SyntaxErr`: `Syntax error: Unexpected token 'VAL', expecting 'EXPECTED'`.
    pub fn syntax_err(&self, expected: &str) -> Error {
        Error::syntax(self.file_arc(), self.line(), self.val(), expected)
    }

    /// caddy `EOFErr`: `Error during parsing: Unexpected EOF`.
    pub fn eof_err(&self) -> Error {
        self.err("Unexpected EOF")
    }

    fn len(&self) -> isize {
        isize::try_from(self.tokens.len()).unwrap_or(isize::MAX)
    }

    fn current_index(&self) -> Option<usize> {
        usize::try_from(self.cursor)
            .ok()
            .filter(|&i| i < self.tokens.len())
    }

    fn peek(&self) -> Option<&Token> {
        usize::try_from(self.cursor + 1)
            .ok()
            .and_then(|i| self.tokens.get(i))
    }

    fn file_arc(&self) -> Arc<str> {
        match self.token().or(self.tokens.first()) {
            Some(t) => Arc::clone(&t.file),
            None => Arc::from(""),
        }
    }

    /// caddy v1 `NextArg` (a `{` counts): next token on the same line of the same file.
    fn next_on_same_line(&mut self) -> bool {
        if self.cursor < 0 {
            return self.next();
        }
        let same_line = match (self.current_index(), self.peek()) {
            (Some(i), Some(next)) => {
                let cur = &self.tokens[i];
                cur.file == next.file && cur.line + cur.line_breaks() == next.line
            }
            _ => false,
        };
        same_line && self.next()
    }

    /// With the cursor on `{`: step inside. False when the block is empty (cursor on its
    /// `}`) or the input ends.
    fn enter_block(&mut self) -> bool {
        if !self.next() || self.val() == "}" {
            return false;
        }
        self.nesting += 1;
        true
    }
}
