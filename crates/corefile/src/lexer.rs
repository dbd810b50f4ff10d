//! Splits one file into tokens, exactly like caddy's `caddyfile/lexer.go`.

use std::str::Chars;
use std::sync::Arc;

/// One token with where it came from, so every later error can name `FILE:LINE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// The file the token was read from.
    pub file: Arc<str>,
    /// Line of the token's first character (1-based).
    pub line: usize,
    /// The token text (quotes removed for quoted tokens).
    pub text: String,
}

impl Token {
    /// Number of `\n` inside the text: a quoted token spanning lines moves later tokens down.
    pub fn line_breaks(&self) -> usize {
        self.text.matches('\n').count()
    }
}

/// Lexes a whole file: the tokenizer is separate from the parser so imports can lex
/// other files the same way. Mirrors caddy: a leading BOM is dropped, `\r` is skipped
/// everywhere outside quotes, `#` starts a comment (also in the middle of a token),
/// `"..."` tokens may span lines and only `\"` is an escape.
pub fn tokenize(input: &str, file: &Arc<str>) -> Vec<Token> {
    let body = input.strip_prefix('\u{feff}').unwrap_or(input);
    let mut lexer = Lexer {
        chars: body.chars(),
        line: 1,
        file: Arc::clone(file),
    };
    let mut tokens = Vec::new();
    while let Some(token) = lexer.next_token() {
        tokens.push(token);
    }
    tokens
}

struct Lexer<'a> {
    chars: Chars<'a>,
    line: usize,
    file: Arc<str>,
}

impl Lexer<'_> {
    /// caddy's `lexer.next`, including its quirk that the comment flag lives only for
    /// one call: in `abc#def ghi` the space ends token `abc` and `ghi` is lexed again.
    fn next_token(&mut self) -> Option<Token> {
        let mut val = String::new();
        let mut start_line = self.line;
        let (mut comment, mut quoted, mut escaped) = (false, false, false);
        loop {
            let Some(ch) = self.chars.next() else {
                return (!val.is_empty()).then(|| self.make(start_line, val));
            };
            if quoted {
                if !escaped {
                    if ch == '\\' {
                        escaped = true;
                        continue;
                    }
                    if ch == '"' {
                        return Some(self.make(start_line, val));
                    }
                }
                if ch == '\n' {
                    self.line += 1;
                }
                if escaped && ch != '"' {
                    val.push('\\');
                }
                val.push(ch);
                escaped = false;
                continue;
            }
            if ch.is_whitespace() {
                if ch == '\r' {
                    continue;
                }
                if ch == '\n' {
                    self.line += 1;
                    comment = false;
                }
                if !val.is_empty() {
                    return Some(self.make(start_line, val));
                }
                continue;
            }
            if ch == '#' {
                comment = true;
            }
            if comment {
                continue;
            }
            if val.is_empty() {
                start_line = self.line;
                if ch == '"' {
                    quoted = true;
                    continue;
                }
            }
            val.push(ch);
        }
    }

    fn make(&self, line: usize, text: String) -> Token {
        Token {
            file: Arc::clone(&self.file),
            line,
            text,
        }
    }
}
