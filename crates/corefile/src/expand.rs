//! Snippet definitions and `import` expansion for the parser (caddy's `begin` snippet
//! branch, `snippetTokens`, `doImport`), with CoreDNS's caps and early cycle errors.

use std::sync::Arc;

use super::error::Error;
use super::import::import_files;
use super::origin::{OriginKind, child, cycle_error};
use super::parser::Parser;
use super::stream::Tok;

impl Parser<'_> {
    /// caddy `begin` for `(name) { ... }`: stores the body tokens unexpanded.
    pub(super) fn define_snippet(&mut self, name: String) -> Result<(), Error> {
        if self.snippets.contains_key(&name) {
            return Err(self.err(&format!(
                "redeclaration of previously declared snippet {name}"
            )));
        }
        if self.stream.val() != "{" {
            return Err(self.syntax_err("{"));
        }
        let mut depth = 1usize;
        let mut tokens = Vec::new();
        while self.stream.next() {
            let val = self.stream.val();
            if val == "}" {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            if val == "{" {
                depth += 1;
            }
            if let Some(cur) = self.stream.current() {
                tokens.push(cur.token.clone());
            }
        }
        if depth != 0 {
            return Err(self.syntax_err("}"));
        }
        // caddy's guard against the trivial self-import `(a) { import a }`.
        for pair in 0..tokens.len().saturating_sub(1) {
            let at_line_start = pair == 0
                || tokens[pair - 1].file != tokens[pair].file
                || tokens[pair - 1].line != tokens[pair].line;
            if tokens[pair].text == "import"
                && at_line_start
                && self.env(&tokens[pair + 1].text) == name
            {
                return Err(self.err(&format!(
                    "maximum snippet import depth ({}) exceeded",
                    self.options.limits.snippet_expansions
                )));
            }
        }
        self.snippets.insert(name, tokens);
        Ok(())
    }

    /// caddy `doImport`, with the cursor on `import`: replaces `import ARG` by the
    /// snippet's or the files' tokens and leaves the cursor on the token before `import`.
    pub(super) fn do_import(&mut self) -> Result<(), Error> {
        let before = self.stream.previous().cloned();
        if !self.stream.next_arg() {
            return Err(self.arg_err());
        }
        let pattern = self.env(self.stream.val());
        if pattern.is_empty() {
            return Err(self.err("Import requires a non-empty filepath"));
        }
        if self.stream.next_arg() {
            return Err(self.err("Import takes only one argument (glob pattern or file)"));
        }
        let Some(arg) = self.stream.current().cloned() else {
            return Err(self.arg_err());
        };
        let imported = if self.snippets.contains_key(&pattern) {
            self.expand_snippet(&arg, pattern)?
        } else {
            self.expand_files(&arg, &pattern)?
        };
        self.stream.splice(before, imported);
        Ok(())
    }

    fn expand_snippet(&mut self, arg: &Tok, name: String) -> Result<Vec<Tok>, Error> {
        let limits = self.options.limits;
        let body = self.snippets.get(&name).cloned().unwrap_or_default();
        let kind = OriginKind::Snippet(name);
        let cycle = cycle_error(
            &arg.ctx,
            &kind,
            limits.snippet_expansions,
            limits.file_imports,
        );
        if let Some(msg) = cycle {
            return Err(self.err(&msg));
        }
        if self.snippet_expansions >= limits.snippet_expansions {
            return Err(self.err(&format!(
                "maximum snippet import depth ({}) exceeded",
                limits.snippet_expansions
            )));
        }
        self.snippet_expansions += 1;
        let ctx = child(&arg.ctx, kind);
        Ok(body
            .into_iter()
            .map(|token| Tok {
                token,
                ctx: ctx.clone(),
            })
            .collect())
    }

    fn expand_files(&mut self, arg: &Tok, pattern: &str) -> Result<Vec<Tok>, Error> {
        let limits = self.options.limits;
        if self.file_imports >= limits.file_imports {
            return Err(self.err(&format!(
                "maximum file import depth ({}) exceeded",
                limits.file_imports
            )));
        }
        self.file_imports += 1;
        let check = |abs: &str| {
            let kind = OriginKind::File(Arc::from(abs));
            match cycle_error(
                &arg.ctx,
                &kind,
                limits.snippet_expansions,
                limits.file_imports,
            ) {
                Some(msg) => Err(msg),
                None => Ok(()),
            }
        };
        let files = import_files(pattern, &arg.token.file, &check).map_err(|m| self.err(&m))?;
        let mut out = Vec::new();
        for file in files {
            let ctx = child(&arg.ctx, OriginKind::File(file.path));
            out.extend(file.tokens.into_iter().map(|token| Tok {
                token,
                ctx: ctx.clone(),
            }));
        }
        Ok(out)
    }
}
