//! The lexer of Go's text/template syntax (`text/template/parse/lex.go`): text between
//! actions, and inside `{{ }}` the tokens of pipelines. Trim markers (`{{- ` and ` -}}`)
//! are applied here, to the text beside them; comments (`{{/* */}}`) are dropped.

use super::Error;

/// One token, with the byte offset in the template text where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Tok {
    pub kind: Kind,
    pub pos: usize,
    /// White space came between this token and the one before (inside an action):
    /// `.A.B` is one field chain, `.A .B` two arguments.
    pub spaced: bool,
}

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kind {
    /// Text outside actions, after trimming.
    Text(String),
    /// `{{`
    Open,
    /// `}}`
    Close,
    /// A word: a function name or a keyword.
    Ident(String),
    /// `.Name`: the field name.
    Field(String),
    /// `.` alone.
    Dot,
    /// `$name` (`$` alone: the name is empty).
    Var(String),
    /// A quoted string: its value and its text as written.
    Str(String, String),
    /// A number as written.
    Number(String),
    /// A character constant as written (`'a'`).
    Char(String),
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `|`
    Pipe,
    /// `:=`
    Declare,
    /// `=`
    Assign,
    /// `,`
    Comma,
}

/// The template text as tokens, ending with the last one (there is no EOF token).
pub(super) fn lex(src: &str) -> Result<Vec<Tok>, Error> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut trim_next_text = false;
    while i < b.len() {
        // Text up to the next `{{`.
        let open = src[i..].find("{{").map_or(b.len(), |o| i + o);
        let mut text = &src[i..open];
        if trim_next_text {
            text = text.trim_start_matches(is_space_char);
        }
        let trim_before = open < b.len() && trims_left(b, open);
        if trim_before {
            text = text.trim_end_matches(is_space_char);
        }
        if !text.is_empty() {
            out.push(Tok {
                kind: Kind::Text(text.to_string()),
                pos: i,
                spaced: false,
            });
        }
        if open == b.len() {
            break;
        }
        let mut j = open + 2;
        if trim_before {
            j += 2; // the dash and the space after it
        }
        // A comment: `{{/*` … `*/}}`, with the delimiter right beside it.
        if src[j..].starts_with("/*") {
            let Some(end) = src[j + 2..].find("*/") else {
                return Err(Error::at(open, "unclosed comment"));
            };
            let mut k = j + 2 + end + 2;
            let trim_after = src[k..].starts_with(" -}}")
                || (k < b.len() && is_space(b[k]) && src[k + 1..].starts_with("-}}"));
            if trim_after {
                k += 4;
            } else if src[k..].starts_with("}}") {
                k += 2;
            } else {
                return Err(Error::at(open, "comment ends before closing delimiter"));
            }
            trim_next_text = trim_after;
            i = k;
            continue;
        }
        out.push(Tok {
            kind: Kind::Open,
            pos: open,
            spaced: false,
        });
        let (end, trim_after) = lex_action(src, j, &mut out)?;
        trim_next_text = trim_after;
        i = end;
    }
    Ok(out)
}

/// Whether the `{{` at `at` is `{{- ` (a trim marker needs white space after the dash).
fn trims_left(b: &[u8], at: usize) -> bool {
    b.get(at + 2) == Some(&b'-') && b.get(at + 3).is_some_and(|c| is_space(*c))
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_space_char(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_alnum(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphanumeric()
}

/// The tokens of one action from `i` (just after `{{` and its trim marker) to its `}}`:
/// returns the offset after the closing delimiter and whether it trims the text after it.
fn lex_action(src: &str, mut i: usize, out: &mut Vec<Tok>) -> Result<(usize, bool), Error> {
    let b = src.as_bytes();
    let mut spaced = false;
    let mut parens = 0usize;
    loop {
        if i >= b.len() {
            return Err(Error::at(i, "unclosed action"));
        }
        let c = b[i];
        // The closing delimiter, with or without its trim marker.
        if is_space(c) && src[i + 1..].starts_with("-}}") {
            if parens > 0 {
                return Err(Error::at(i, "unclosed left paren"));
            }
            out.push(Tok {
                kind: Kind::Close,
                pos: i + 1,
                spaced: true,
            });
            return Ok((i + 4, true));
        }
        if src[i..].starts_with("}}") {
            if parens > 0 {
                return Err(Error::at(i, "unclosed left paren"));
            }
            out.push(Tok {
                kind: Kind::Close,
                pos: i,
                spaced,
            });
            return Ok((i + 2, false));
        }
        if is_space(c) {
            // Go allows new lines inside actions since 1.16.
            spaced = true;
            i += 1;
            continue;
        }
        let start = i;
        let kind = match c {
            b'(' => {
                parens += 1;
                i += 1;
                Kind::LParen
            }
            b')' => {
                if parens == 0 {
                    return Err(Error::at(i, "unexpected right paren"));
                }
                parens -= 1;
                i += 1;
                Kind::RParen
            }
            b'|' => {
                i += 1;
                Kind::Pipe
            }
            b',' => {
                i += 1;
                Kind::Comma
            }
            b':' => {
                if b.get(i + 1) != Some(&b'=') {
                    return Err(Error::at(i, "expected :="));
                }
                i += 2;
                Kind::Declare
            }
            b'=' => {
                i += 1;
                Kind::Assign
            }
            b'"' => {
                let (value, end) = interpreted(src, i)?;
                i = end;
                Kind::Str(value, src[start..end].to_string())
            }
            b'`' => {
                let Some(end) = src[i + 1..].find('`') else {
                    return Err(Error::at(i, "unterminated raw quoted string"));
                };
                i += end + 2;
                Kind::Str(src[start + 1..i - 1].to_string(), src[start..i].to_string())
            }
            b'\'' => {
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    if i < b.len() && b[i] == b'\n' {
                        return Err(Error::at(start, "unterminated character constant"));
                    }
                    i += 1;
                }
                if i >= b.len() {
                    return Err(Error::at(start, "unterminated character constant"));
                }
                i += 1;
                Kind::Char(src[start..i].to_string())
            }
            b'$' => {
                i += 1;
                while i < b.len() && is_alnum(b[i]) {
                    i += 1;
                }
                Kind::Var(src[start + 1..i].to_string())
            }
            b'.' if b.get(i + 1).is_some_and(|c| c.is_ascii_digit()) => {
                i = number_end(b, i);
                Kind::Number(src[start..i].to_string())
            }
            b'.' => {
                i += 1;
                while i < b.len() && is_alnum(b[i]) {
                    i += 1;
                }
                if i == start + 1 {
                    Kind::Dot
                } else {
                    Kind::Field(src[start + 1..i].to_string())
                }
            }
            b'0'..=b'9' | b'+' | b'-' => {
                i = number_end(b, i);
                if i == start + 1 && !c.is_ascii_digit() {
                    return Err(Error::at(start, format!("bad character {:?}", c as char)));
                }
                Kind::Number(src[start..i].to_string())
            }
            c if c == b'_' || c.is_ascii_alphabetic() => {
                while i < b.len() && is_alnum(b[i]) {
                    i += 1;
                }
                Kind::Ident(src[start..i].to_string())
            }
            _ => {
                let ch = src[i..].chars().next().unwrap_or('?');
                return Err(Error::at(i, format!("bad character {ch:?}")));
            }
        };
        out.push(Tok {
            kind,
            pos: start,
            spaced,
        });
        spaced = false;
    }
}

/// The end of a number's text (Go's `lexNumber` scans this loosely; the parser judges it).
fn number_end(b: &[u8], mut i: usize) -> usize {
    if matches!(b[i], b'+' | b'-') {
        i += 1;
    }
    while i < b.len() {
        let c = b[i];
        let exp_sign = matches!(c, b'+' | b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
        if is_alnum(c) || c == b'.' || exp_sign {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// A Go interpreted string literal at `start` (on its `"`): its value and the offset after
/// it.
fn interpreted(src: &str, start: usize) -> Result<(String, usize), Error> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = start + 1;
    let bad = |at: usize| Error::at(at, "invalid syntax in quoted string");
    loop {
        let Some(&c) = b.get(i) else {
            return Err(Error::at(start, "unterminated quoted string"));
        };
        match c {
            b'"' => {
                let s = String::from_utf8(out).map_err(|_| bad(start))?;
                return Ok((s, i + 1));
            }
            b'\n' => return Err(Error::at(start, "unterminated quoted string")),
            b'\\' => {
                let Some(&e) = b.get(i + 1) else {
                    return Err(Error::at(start, "unterminated quoted string"));
                };
                i += 2;
                match e {
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'v' => out.push(11),
                    b'\\' => out.push(b'\\'),
                    b'"' => out.push(b'"'),
                    b'0'..=b'7' => {
                        let digits = src.get(i - 1..i + 2).ok_or_else(|| bad(i))?;
                        let v = u32::from_str_radix(digits, 8).map_err(|_| bad(i))?;
                        let v = u8::try_from(v).map_err(|_| bad(i))?;
                        out.push(v);
                        i += 2;
                    }
                    b'x' | b'u' | b'U' => {
                        let n = match e {
                            b'x' => 2,
                            b'u' => 4,
                            _ => 8,
                        };
                        let digits = src.get(i..i + n).ok_or_else(|| bad(i))?;
                        let v = u32::from_str_radix(digits, 16).map_err(|_| bad(i))?;
                        i += n;
                        if e == b'x' {
                            out.push(v as u8);
                        } else {
                            let ch = char::from_u32(v).ok_or_else(|| bad(i))?;
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                    }
                    _ => return Err(bad(i - 2)),
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Kind> {
        lex(src).unwrap().into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn text_actions_and_tokens() {
        use Kind::*;
        assert_eq!(
            kinds("a {{ .Name }} b {{ index .Match 1 }}"),
            [
                Text("a ".into()),
                Open,
                Field("Name".into()),
                Close,
                Text(" b ".into()),
                Open,
                Ident("index".into()),
                Field("Match".into()),
                Number("1".into()),
                Close,
            ]
        );
        assert_eq!(
            kinds(r#"{{$x := (printf "%d\t" 7) | len}}"#),
            [
                Open,
                Var("x".into()),
                Declare,
                LParen,
                Ident("printf".into()),
                Str("%d\t".into(), r#""%d\t""#.into()),
                Number("7".into()),
                RParen,
                Pipe,
                Ident("len".into()),
                Close,
            ]
        );
    }

    #[test]
    fn trim_markers_and_comments() {
        assert_eq!(
            kinds("a  {{- .A -}}  b"),
            [
                Kind::Text("a".into()),
                Kind::Open,
                Kind::Field("A".into()),
                Kind::Close,
                Kind::Text("b".into()),
            ]
        );
        assert_eq!(
            kinds("a {{/* no */}} b"),
            [Kind::Text("a ".into()), Kind::Text(" b".into())]
        );
        assert_eq!(
            kinds("a {{- /* no */ -}} b"),
            [Kind::Text("a".into()), Kind::Text("b".into())]
        );
        // `{{-3}}` is the number -3, not a trim marker.
        assert_eq!(kinds("{{-3}}")[1], Kind::Number("-3".into()));
    }

    #[test]
    fn chains_know_their_spacing() {
        let t = lex("{{ .Group.a .B }}").unwrap();
        assert_eq!(t[1].kind, Kind::Field("Group".into()));
        assert!(t[1].spaced);
        assert!(!t[2].spaced, ".a follows .Group directly");
        assert!(t[3].spaced);
    }

    #[test]
    fn errors_carry_the_offset() {
        assert_eq!(lex("ab{{").unwrap_err(), Error::at(4, "unclosed action"));
        assert_eq!(
            lex(r#"{{ "abc }}"#).unwrap_err(),
            Error::at(3, "unterminated quoted string")
        );
        assert_eq!(
            lex("{{ a # }}").unwrap_err(),
            Error::at(5, "bad character '#'")
        );
        assert_eq!(
            lex("{{ ) }}").unwrap_err(),
            Error::at(3, "unexpected right paren")
        );
        assert_eq!(
            lex("{{ ( }}").unwrap_err(),
            Error::at(5, "unclosed left paren")
        );
        assert_eq!(
            lex("{{/* x }}").unwrap_err(),
            Error::at(0, "unclosed comment")
        );
        assert_eq!(
            lex(r#"{{ "\q" }}"#).unwrap_err(),
            Error::at(4, "invalid syntax in quoted string")
        );
    }

    #[test]
    fn go_escapes() {
        assert_eq!(
            kinds(r#"{{ "\x41\u00e9\101\"\\" }}"#)[1],
            Kind::Str(
                "Aé A\"\\".replace(' ', ""),
                r#""\x41\u00e9\101\"\\""#.into()
            )
        );
        assert_eq!(
            kinds("{{ `a\\n` }}")[1],
            Kind::Str("a\\n".into(), "`a\\n`".into())
        );
    }
}
