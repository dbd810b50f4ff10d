//! Groups tokens into server blocks and directives, mirroring caddy's
//! `caddyfile/parse.go` (addresses, directives, snippets, import, env substitution).

use std::collections::HashMap;
use std::sync::Arc;

use super::env::replace_env_vars;
use super::error::Error;
use super::lexer::{Token, tokenize};
use super::model::{Corefile, Directive, DirectiveList, ServerBlock};
use super::options::ParseOptions;
use super::origin::{OriginKind, child};
use super::paths;
use super::stream::Stream;

/// Message for a key-less block anywhere but at the very start (ringdns extension).
const KEYLESS_BLOCK: &str = "Block without keys: a '{ }' block without server addresses \
(the global options block) is only allowed as the very first thing in the file";

/// Parses `input` read from `file`; see [`super::parse`].
pub fn parse_tokens(
    file: &str,
    input: &str,
    known: &dyn Fn(&str) -> bool,
    options: &ParseOptions<'_>,
) -> Result<Corefile, Error> {
    let main_file: Arc<str> = Arc::from(file);
    let root = paths::abs(file).unwrap_or_else(|_| file.to_string());
    let ctx = child(&None, OriginKind::File(Arc::from(root)));
    let mut parser = Parser {
        stream: Stream::new(tokenize(input, &main_file), ctx),
        main_file,
        known,
        options,
        snippets: HashMap::new(),
        snippet_expansions: 0,
        file_imports: 0,
        eof: false,
    };
    parser.parse_all()
}

/// Parser state: the token stream plus what caddy's `parser` struct keeps.
pub(super) struct Parser<'a> {
    /// Tokens being parsed (imports are spliced in).
    pub(super) stream: Stream,
    /// Name of the main file, for errors with no current token.
    pub(super) main_file: Arc<str>,
    /// Whether a directive name is in plugin.cfg.
    pub(super) known: &'a dyn Fn(&str) -> bool,
    /// Caps and environment.
    pub(super) options: &'a ParseOptions<'a>,
    /// Snippet bodies by name, unexpanded.
    pub(super) snippets: HashMap<String, Vec<Token>>,
    /// Snippet imports expanded so far.
    pub(super) snippet_expansions: usize,
    /// File imports executed so far.
    pub(super) file_imports: usize,
    /// Set when the key list ran into the end of input (caddy's `p.eof`).
    pub(super) eof: bool,
}

impl Parser<'_> {
    fn parse_all(&mut self) -> Result<Corefile, Error> {
        let mut out = Corefile::default();
        let mut first = true;
        while self.stream.next() {
            if first && self.stream.val() == "{" {
                first = false;
                out.global = self.global_block()?;
                continue;
            }
            first = false;
            if let Some(block) = self.parse_one()? {
                out.blocks.push(block);
            }
        }
        Ok(out)
    }

    /// The ringdns global block: `{` directives `}` with no keys, directives unchecked.
    fn global_block(&mut self) -> Result<Vec<Directive>, Error> {
        let mut dirs = DirectiveList::default();
        self.directives(&mut dirs, false)?;
        if self.stream.val() != "}" {
            return Err(self.syntax_err("}"));
        }
        Ok(dirs.into_vec())
    }

    /// caddy `parseOne`/`begin`: keys, then a snippet definition or a block body.
    fn parse_one(&mut self) -> Result<Option<ServerBlock>, Error> {
        let mut keys = Vec::new();
        self.addresses(&mut keys)?;
        if self.eof {
            // Only a key list up to the end of input.
            return Ok((!keys.is_empty()).then(|| ServerBlock {
                keys,
                directives: Vec::new(),
            }));
        }
        if let Some(name) = snippet_name(&keys) {
            self.define_snippet(name)?;
            return Ok(None);
        }
        if keys.is_empty() {
            return Err(self.err(KEYLESS_BLOCK));
        }
        let mut dirs = DirectiveList::default();
        self.block_contents(&mut dirs)?;
        Ok(Some(ServerBlock {
            keys,
            directives: dirs.into_vec(),
        }))
    }

    /// caddy `addresses`: keys up to `{` or the end of the line (a trailing comma
    /// continues the list on the next line); `import` at a line start splices first.
    fn addresses(&mut self, keys: &mut Vec<Token>) -> Result<(), Error> {
        let mut expecting_another = false;
        loop {
            let mut tkn = self.env(self.stream.val());
            if tkn == "import" && self.stream.is_new_line() {
                self.do_import()?;
                if !self.stream.next() {
                    self.stream.clear_current();
                }
                continue;
            }
            if tkn == "{" {
                if expecting_another {
                    return Err(self.err(&format!(
                        "Expected another address but had '{tkn}' - check for extra comma"
                    )));
                }
                break;
            }
            if !tkn.is_empty() {
                expecting_another = tkn.ends_with(',');
                if expecting_another {
                    tkn.pop();
                }
                if let Some(cur) = self.stream.current() {
                    keys.push(Token {
                        file: Arc::clone(&cur.token.file),
                        line: cur.token.line,
                        text: tkn,
                    });
                }
            }
            let has_next = self.stream.next();
            if expecting_another && !has_next {
                return Err(self.eof_err());
            }
            if !has_next {
                self.eof = true;
                break;
            }
            if !expecting_another && self.stream.is_new_line() {
                break;
            }
        }
        Ok(())
    }

    /// caddy `blockContents`: with `{` the body runs to its `}`; without, to the end.
    fn block_contents(&mut self, dirs: &mut DirectiveList) -> Result<(), Error> {
        let opened = self.stream.val() == "{";
        if !opened {
            self.stream.unread();
        }
        self.directives(dirs, true)?;
        if opened && self.stream.val() != "}" {
            return Err(self.syntax_err("}"));
        }
        Ok(())
    }

    /// caddy `directives`: one directive per line until `}` or the end.
    fn directives(&mut self, dirs: &mut DirectiveList, validate: bool) -> Result<(), Error> {
        while self.stream.next() {
            match self.stream.val() {
                "}" => break,
                "import" => self.do_import()?,
                _ => self.directive(dirs, validate)?,
            }
        }
        Ok(())
    }

    /// caddy `directive`: the name, its arguments and any `{ }` blocks (nested to any
    /// depth, a `{` may start the next line); env references are substituted.
    fn directive(&mut self, dirs: &mut DirectiveList, validate: bool) -> Result<(), Error> {
        let name = self.env(self.stream.val());
        if validate && !(self.known)(&name) {
            return Err(self.err(&format!("Unknown directive '{name}'")));
        }
        if let Some(cur) = self.stream.current() {
            let mut token = cur.token.clone();
            token.text.clone_from(&name);
            dirs.push(&name, token);
        }
        let mut nesting = 0usize;
        while self.stream.next() {
            let val = self.stream.val();
            if val == "{" {
                nesting += 1;
            } else if nesting == 0 && self.stream.is_new_line() {
                self.stream.unread();
                break;
            } else if val == "}" && nesting > 0 {
                nesting -= 1;
            } else if val == "}" {
                return Err(self.err("Unexpected '}' because no matching opening brace"));
            } else if val == "import" && self.stream.is_new_line() {
                self.do_import()?;
                continue;
            }
            let replaced = self.env(self.stream.val());
            self.stream.set_val(replaced);
            if let Some(cur) = self.stream.current() {
                dirs.push(&name, cur.token.clone());
            }
        }
        if nesting > 0 {
            return Err(self.eof_err());
        }
        Ok(())
    }

    pub(super) fn env(&self, text: &str) -> String {
        replace_env_vars(text, self.options.env)
    }

    fn location(&self) -> (Arc<str>, usize) {
        match self.stream.current() {
            Some(tok) => (Arc::clone(&tok.token.file), tok.token.line),
            None => (Arc::clone(&self.main_file), 0),
        }
    }

    pub(super) fn err(&self, msg: &str) -> Error {
        let (file, line) = self.location();
        Error::parsing(file, line, msg)
    }

    pub(super) fn syntax_err(&self, expected: &str) -> Error {
        let (file, line) = self.location();
        Error::syntax(file, line, self.stream.val(), expected)
    }

    pub(super) fn eof_err(&self) -> Error {
        self.err("Unexpected EOF")
    }

    pub(super) fn arg_err(&self) -> Error {
        if self.stream.val() == "{" {
            return self.err("Unexpected token '{', expecting argument");
        }
        self.err(&format!(
            "Wrong argument count or unexpected line ending after '{}'",
            self.stream.val()
        ))
    }
}

/// caddy `isSnippet`: a block whose only key is `(name)`.
fn snippet_name(keys: &[Token]) -> Option<String> {
    match keys {
        [only] => only
            .text
            .strip_prefix('(')
            .and_then(|rest| rest.strip_suffix(')'))
            .map(str::to_string),
        _ => None,
    }
}
