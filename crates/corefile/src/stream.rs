//! The parser's token stream: caddy's token slice + cursor, reshaped so that splicing
//! imported tokens costs only the size of the import (caddy copies the whole slice).

use std::sync::Arc;

use super::lexer::Token;
use super::origin::Origin;

/// A token in the stream together with its import chain.
#[derive(Clone, Debug)]
pub struct Tok {
    /// The token itself.
    pub token: Token,
    /// Its import chain.
    pub ctx: Option<Arc<Origin>>,
}

/// Forward-only cursor over tokens with one step of look-back, which is all the caddy
/// parser uses (`Next`, `cursor--` once, compare with the previous token).
pub struct Stream {
    /// Tokens still to come, last element first.
    future: Vec<Tok>,
    /// The current token; `None` before the start or past the end.
    cur: Option<Tok>,
    /// The token before the current one, when known.
    prev: Option<Tok>,
}

impl Stream {
    /// A stream over `tokens`, all from the same origin.
    pub fn new(tokens: Vec<Token>, ctx: Option<Arc<Origin>>) -> Self {
        let future = tokens
            .into_iter()
            .rev()
            .map(|token| Tok {
                token,
                ctx: ctx.clone(),
            })
            .collect();
        Stream {
            future,
            cur: None,
            prev: None,
        }
    }

    /// caddy `Next`: advance to the next token; false (cursor unchanged) at the end.
    pub fn next(&mut self) -> bool {
        match self.future.pop() {
            Some(tok) => {
                self.prev = self.cur.replace(tok);
                true
            }
            None => false,
        }
    }

    /// caddy `cursor--`: step back one token. Only ever followed by [`Stream::next`].
    pub fn unread(&mut self) {
        if let Some(cur) = self.cur.take() {
            self.future.push(cur);
        }
        self.cur = self.prev.take();
    }

    /// caddy v1 `NextArg` as the parser uses it: advance if the next token starts on the
    /// line where the current one ends, in the same file (a `{` counts).
    pub fn next_arg(&mut self) -> bool {
        let same_line = match (&self.cur, self.future.last()) {
            (Some(cur), Some(next)) => {
                cur.token.file == next.token.file
                    && cur.token.line + cur.token.line_breaks() == next.token.line
            }
            _ => false,
        };
        same_line && self.next()
    }

    /// caddy `isNewLine`: is the current token on a later line (or another file) than the
    /// previous one? True when there is no previous token.
    pub fn is_new_line(&self) -> bool {
        match (&self.prev, &self.cur) {
            (Some(prev), Some(cur)) => {
                prev.token.file != cur.token.file
                    || prev.token.line + prev.token.line_breaks() < cur.token.line
            }
            (None, _) => true,
            (Some(_), None) => false,
        }
    }

    /// Text of the current token, "" when there is none.
    pub fn val(&self) -> &str {
        self.cur.as_ref().map_or("", |t| t.token.text.as_str())
    }

    /// The current token with its chain.
    pub fn current(&self) -> Option<&Tok> {
        self.cur.as_ref()
    }

    /// The token before the current one.
    pub fn previous(&self) -> Option<&Tok> {
        self.prev.as_ref()
    }

    /// Rewrites the current token's text (caddy substitutes env vars in place).
    pub fn set_val(&mut self, text: String) {
        if let Some(cur) = self.cur.as_mut() {
            cur.token.text = text;
        }
    }

    /// Replaces the `import ARG` just read by `imported`, leaving the cursor on `before`
    /// (the token before `import`), so the next [`Stream::next`] lands on the first
    /// imported token, as caddy's `doImport` followed by `cursor--` does.
    pub fn splice(&mut self, before: Option<Tok>, imported: Vec<Tok>) {
        self.future.extend(imported.into_iter().rev());
        self.cur = before;
        self.prev = None;
    }

    /// Moves the cursor past the end (caddy's cursor == len after an import at the end).
    pub fn clear_current(&mut self) {
        self.prev = self.cur.take();
    }
}
