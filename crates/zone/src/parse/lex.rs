//! Splits master-file text into entries of tokens, borrowing every token from the
//! source: a million-record zone must not cost a String per token.

/// One token as written: escapes are left in (`\.`, `\065`, `\"`) for whoever reads
/// the token to decode, since only the reader knows whether it is a name, a
/// character string or a number.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Token<'a> {
    /// The token's bytes, without the quotes of a quoted token.
    pub text: &'a [u8],
    /// Written between double quotes (so never a directive, owner or type).
    pub quoted: bool,
    /// Preceded by white space (or a parenthesis): SVCB glues `key="value"` back
    /// together when there is none.
    pub space: bool,
}

/// What [`Lexer::next_entry`] found.
pub(crate) struct EntryHead {
    /// The line the entry starts on: errors are reported there.
    pub line: u32,
    /// The entry's line started with a blank: the owner is the previous one.
    pub blank: bool,
}

/// A lexing error: the line of the entry's start and the message.
pub(crate) type LexError = (u32, &'static str);

/// Bytes that end an unquoted token.
const fn stop_table() -> [bool; 256] {
    let mut t = [false; 256];
    t[b' ' as usize] = true;
    t[b'\t' as usize] = true;
    t[b'\r' as usize] = true;
    t[b'\n' as usize] = true;
    t[b';' as usize] = true;
    t[b'(' as usize] = true;
    t[b')' as usize] = true;
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
}
static STOP: [bool; 256] = stop_table();

/// A cursor over one source text (a file, or one line a `$GENERATE` expanded).
pub(crate) struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    line: u32,
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a [u8]) -> Self {
        // A UTF-8 byte-order mark is no part of the first owner name.
        let pos = if src.starts_with(b"\xEF\xBB\xBF") {
            3
        } else {
            0
        };
        Lexer { src, pos, line: 1 }
    }

    /// Reads the next entry that has tokens into `out` (cleared first); `None` at
    /// the end of the text. Lines with nothing but blanks and comments are skipped.
    pub fn next_entry(&mut self, out: &mut Vec<Token<'a>>) -> Result<Option<EntryHead>, LexError> {
        let src = self.src;
        loop {
            out.clear();
            if self.pos >= src.len() {
                return Ok(None);
            }
            let start_line = self.line;
            let blank = matches!(src[self.pos], b' ' | b'\t');
            let mut depth = 0u32;
            let mut space = true;
            loop {
                let Some(&b) = src.get(self.pos) else {
                    if depth > 0 {
                        return Err((start_line, "unbalanced parenthesis"));
                    }
                    break;
                };
                match b {
                    b' ' | b'\t' | b'\r' => {
                        self.pos += 1;
                        space = true;
                    }
                    b'\n' => {
                        self.pos += 1;
                        self.line += 1;
                        space = true;
                        if depth == 0 {
                            break;
                        }
                    }
                    b';' => {
                        // To the end of the line; the newline itself is handled above.
                        match src[self.pos..].iter().position(|&c| c == b'\n') {
                            Some(n) => self.pos += n,
                            None => self.pos = src.len(),
                        }
                    }
                    b'(' => {
                        depth += 1;
                        self.pos += 1;
                        space = true;
                    }
                    b')' => {
                        if depth == 0 {
                            return Err((start_line, "unbalanced parenthesis"));
                        }
                        depth -= 1;
                        self.pos += 1;
                        space = true;
                    }
                    b'"' => {
                        let begin = self.pos + 1;
                        let mut i = begin;
                        loop {
                            match src.get(i) {
                                None => return Err((start_line, "unterminated quoted string")),
                                Some(b'"') => break,
                                Some(b'\\') => {
                                    if src.get(i + 1) == Some(&b'\n') {
                                        self.line += 1;
                                    }
                                    i += 2;
                                }
                                Some(b'\n') => {
                                    self.line += 1;
                                    i += 1;
                                }
                                Some(_) => i += 1,
                            }
                        }
                        out.push(Token {
                            text: &src[begin..i],
                            quoted: true,
                            space,
                        });
                        self.pos = i + 1;
                        space = false;
                    }
                    _ => {
                        let begin = self.pos;
                        let mut i = begin;
                        while let Some(&c) = src.get(i) {
                            if !STOP[c as usize] {
                                i += 1;
                            } else if c == b'\\' {
                                if src.get(i + 1) == Some(&b'\n') {
                                    self.line += 1;
                                }
                                i = (i + 2).min(src.len());
                            } else {
                                break;
                            }
                        }
                        out.push(Token {
                            text: &src[begin..i],
                            quoted: false,
                            space,
                        });
                        self.pos = i;
                        space = false;
                    }
                }
            }
            if !out.is_empty() {
                return Ok(Some(EntryHead {
                    line: start_line,
                    blank,
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(src: &str) -> Result<Vec<(u32, bool, Vec<String>)>, LexError> {
        let mut lx = Lexer::new(src.as_bytes());
        let mut toks = Vec::new();
        let mut res = Vec::new();
        while let Some(h) = lx.next_entry(&mut toks)? {
            let t = toks
                .iter()
                .map(|t| {
                    let s = String::from_utf8_lossy(t.text).into_owned();
                    match (t.quoted, t.space) {
                        (true, true) => format!("\"{s}\""),
                        (true, false) => format!("+\"{s}\""),
                        (false, true) => s,
                        (false, false) => format!("+{s}"),
                    }
                })
                .collect();
            res.push((h.line, h.blank, t));
        }
        Ok(res)
    }

    #[test]
    fn lines_parens_comments_quotes() {
        let e = entries(
            "a A 1.2.3.4 ; c\n\n  ; only a comment\n\tTXT \"x y\" \"a\\\"b\"z\n\
             b SOA n r ( 1 ; serial\n 2 3\n 4 5 )\nc\\ d TXT a\\;b\n",
        )
        .unwrap();
        assert_eq!(e.len(), 4);
        assert_eq!(
            e[0],
            (1, false, vec!["a".into(), "A".into(), "1.2.3.4".into()])
        );
        assert_eq!(
            e[1],
            (
                4,
                true,
                vec![
                    "TXT".into(),
                    "\"x y\"".into(),
                    "\"a\\\"b\"".into(),
                    "+z".into()
                ]
            )
        );
        assert_eq!(e[2].0, 5);
        assert_eq!(e[2].2.len(), 9);
        assert_eq!(
            e[3],
            (8, false, vec!["c\\ d".into(), "TXT".into(), "a\\;b".into()])
        );
    }

    #[test]
    fn errors_carry_the_entry_line() {
        assert_eq!(
            entries("a A 1\nb SOA ( 1\n2\n").unwrap_err(),
            (2, "unbalanced parenthesis")
        );
        assert_eq!(
            entries("a A 1\nb A 1 )\n").unwrap_err(),
            (2, "unbalanced parenthesis")
        );
        assert_eq!(
            entries("\n\na TXT \"abc\n").unwrap_err(),
            (3, "unterminated quoted string")
        );
    }

    #[test]
    fn quoted_strings_span_lines_and_crlf_is_blank() {
        let e = entries("a TXT \"x\ny\"\r\nb A 1\r\n").unwrap();
        assert_eq!(e[0].0, 1);
        assert_eq!(e[1].0, 3);
        assert_eq!(e[1].2, vec!["b".to_string(), "A".into(), "1".into()]);
    }
}
