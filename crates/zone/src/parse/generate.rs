//! `$GENERATE range lhs [ttl] [class] type rhs`, as miekg reads it (generate.go):
//! the rest of the entry is a template whose `$` and `${offset,width,base}` are
//! replaced by each number of the range, and every expansion is read as a record.

use super::lex::Token;

/// `start-stop[/step]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Range {
    pub start: i64,
    pub end: i64,
    pub step: i64,
}

impl Range {
    /// Reads the range token with miekg's checks and messages.
    pub fn parse(tok: &[u8]) -> Result<Range, &'static str> {
        let s = std::str::from_utf8(tok).map_err(|_| "bad start-stop in $GENERATE range")?;
        let (s, step) = match s.split_once('/') {
            Some((r, st)) => {
                let step = st
                    .parse::<i64>()
                    .ok()
                    .filter(|&v| v > 0)
                    .ok_or("bad step in $GENERATE range")?;
                (r, step)
            }
            None => (s, 1),
        };
        let (a, b) = s
            .split_once('-')
            .ok_or("bad start-stop in $GENERATE range")?;
        let start = a
            .parse::<i64>()
            .map_err(|_| "bad start in $GENERATE range")?;
        let end = b
            .parse::<i64>()
            .map_err(|_| "bad stop in $GENERATE range")?;
        if end < 0 || start < 0 || end < start || (end - start) / step > 65535 {
            return Err("bad range in $GENERATE range");
        }
        Ok(Range { start, end, step })
    }

    /// The numbers of the range, in order.
    pub fn values(self) -> impl Iterator<Item = i64> {
        (self.start..=self.end).step_by(self.step as usize)
    }
}

/// Joins the template's tokens back into text: one blank where the source had
/// blanks, quoted tokens in quotes (miekg concatenates the lexer's tokens the same
/// way, comments and parentheses gone).
pub(crate) fn template(toks: &[Token<'_>]) -> Vec<u8> {
    let mut s = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if i > 0 && t.space {
            s.push(b' ');
        }
        if t.quoted {
            s.push(b'"');
            s.extend_from_slice(t.text);
            s.push(b'"');
        } else {
            s.extend_from_slice(t.text);
        }
    }
    s
}

/// Expands `tpl` for the number `cur` into `out` (cleared first). `\$` is a
/// literal `$` and `\\` a backslash, as in miekg; any other escape is kept for the
/// record's own reading (miekg drops the escaped character instead, which would
/// make `\.` in a name unusable). `$$` is a literal `$`.
pub(crate) fn expand(
    tpl: &[u8],
    cur: i64,
    range: Range,
    out: &mut Vec<u8>,
) -> Result<(), &'static str> {
    use std::io::Write;
    out.clear();
    let mut i = 0;
    while i < tpl.len() {
        match tpl[i] {
            b'\\' => match tpl.get(i + 1) {
                Some(b'$') => {
                    out.push(b'$');
                    i += 2;
                }
                Some(b'\\') => {
                    out.push(b'\\');
                    i += 2;
                }
                Some(&c) => {
                    out.push(b'\\');
                    out.push(c);
                    i += 2;
                }
                None => {
                    out.push(b'\\');
                    i += 1;
                }
            },
            b'$' => {
                if tpl.get(i + 1) == Some(&b'$') {
                    out.push(b'$');
                    i += 2;
                    continue;
                }
                if tpl.get(i + 1) != Some(&b'{') {
                    write!(out, "{cur}").expect("Vec write");
                    i += 1;
                    continue;
                }
                let body_start = i + 2;
                let close = tpl[body_start..]
                    .iter()
                    .position(|&c| c == b'}')
                    .ok_or("bad modifier in $GENERATE")?;
                let body = std::str::from_utf8(&tpl[body_start..body_start + close])
                    .map_err(|_| "bad modifier in $GENERATE")?;
                let (offset, width, base) = modifier(body)?;
                if range.start + offset < 0 || range.end + offset > (1 << 31) - 1 {
                    return Err("bad offset in $GENERATE");
                }
                let v = cur + offset;
                let w = usize::from(width);
                match base {
                    'o' => write!(out, "{v:0w$o}"),
                    'x' => write!(out, "{v:0w$x}"),
                    'X' => write!(out, "{v:0w$X}"),
                    _ => write!(out, "{v:0w$}"),
                }
                .expect("Vec write");
                i = body_start + close + 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(())
}

/// `offset[,width[,base]]` (miekg's modToPrintf).
fn modifier(s: &str) -> Result<(i64, u8, char), &'static str> {
    let mut parts = s.split(',');
    let off = parts.next().unwrap_or("");
    let width = parts.next().unwrap_or("0");
    let base = parts.next().unwrap_or("d");
    if parts.next().is_some() {
        return Err("bad modifier in $GENERATE");
    }
    let base = match base {
        "o" | "d" | "x" | "X" => base.chars().next().unwrap_or('d'),
        _ => return Err("bad base in $GENERATE"),
    };
    let off = off.parse::<i64>().map_err(|_| "bad offset in $GENERATE")?;
    let width = width.parse::<u8>().map_err(|_| "bad width in $GENERATE")?;
    Ok((off, width, base))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(tpl: &str, cur: i64, r: &str) -> Result<String, &'static str> {
        let range = Range::parse(r.as_bytes())?;
        let mut out = Vec::new();
        expand(tpl.as_bytes(), cur, range, &mut out)?;
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn ranges() {
        assert_eq!(
            Range::parse(b"1-10").unwrap(),
            Range {
                start: 1,
                end: 10,
                step: 1
            }
        );
        assert_eq!(
            Range::parse(b"0-10/2")
                .unwrap()
                .values()
                .collect::<Vec<_>>(),
            [0, 2, 4, 6, 8, 10]
        );
        assert_eq!(Range::parse(b"5-5").unwrap().values().count(), 1);
        assert_eq!(Range::parse(b"1-10/0"), Err("bad step in $GENERATE range"));
        assert_eq!(Range::parse(b"1-10/"), Err("bad step in $GENERATE range"));
        assert_eq!(
            Range::parse(b"10"),
            Err("bad start-stop in $GENERATE range")
        );
        assert_eq!(Range::parse(b"x-10"), Err("bad start in $GENERATE range"));
        assert_eq!(Range::parse(b"1-y"), Err("bad stop in $GENERATE range"));
        assert_eq!(Range::parse(b"10-1"), Err("bad range in $GENERATE range"));
        assert_eq!(
            Range::parse(b"0-65536"),
            Err("bad range in $GENERATE range")
        );
        assert!(Range::parse(b"0-65535").is_ok());
        assert!(Range::parse(b"0-131070/2").is_ok());
        assert!(Range::parse(b"0-131072/2").is_err());
    }

    #[test]
    fn modifiers() {
        assert_eq!(ex("host-$", 7, "1-10").unwrap(), "host-7");
        assert_eq!(
            ex("$.1.168.192.in-addr.arpa.", 3, "1-10").unwrap(),
            "3.1.168.192.in-addr.arpa."
        );
        assert_eq!(ex("a${10}", 7, "1-10").unwrap(), "a17");
        assert_eq!(ex("a${0,3}", 7, "1-10").unwrap(), "a007");
        assert_eq!(ex("a${0,4,x}", 255, "1-300").unwrap(), "a00ff");
        assert_eq!(ex("a${0,0,X}", 255, "1-300").unwrap(), "aFF");
        assert_eq!(ex("a${1,0,o}", 7, "1-10").unwrap(), "a10");
        assert_eq!(ex("a${-1}", 7, "1-10").unwrap(), "a6");
        assert_eq!(ex("a\\$b$$c", 7, "1-10").unwrap(), "a$b$c");
        assert_eq!(ex("a\\\\$", 7, "1-10").unwrap(), "a\\7");
        assert_eq!(ex("a\\.b$", 7, "1-10").unwrap(), "a\\.b7");
        assert_eq!(ex("a${-2}", 1, "1-10"), Err("bad offset in $GENERATE"));
        assert_eq!(ex("a${0,0,z}", 1, "1-10"), Err("bad base in $GENERATE"));
        assert_eq!(ex("a${0,x}", 1, "1-10"), Err("bad width in $GENERATE"));
        assert_eq!(
            ex("a${0,1,d,1}", 1, "1-10"),
            Err("bad modifier in $GENERATE")
        );
        assert_eq!(ex("a${0", 1, "1-10"), Err("bad modifier in $GENERATE"));
        assert_eq!(ex("a${y}", 1, "1-10"), Err("bad offset in $GENERATE"));
    }
}
