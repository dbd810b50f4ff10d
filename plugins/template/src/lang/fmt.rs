//! Go's `fmt.Sprint`, `fmt.Sprintln` and `fmt.Sprintf` over template values, for the
//! template functions `print`, `println` and `printf`: the verbs `%v %s %d %q %x %X %o %O
//! %b %c %t %%`, the flags `+ - # 0` and space, width and precision (`*` included), and
//! Go's markers for a bad verb, a missing or an extra argument. Argument indexes
//! (`%[1]d`) are not: a constant format with one is refused at setup (`check`), another
//! prints `%!d(BADINDEX)`. The floating-point verbs print `%!f(…)` as Go does for a
//! non-float: no float is ever a template value here.

use super::value::{Data, Value};

/// `fmt.Sprint`: operands printed with `%v`, a space between two when neither is a string.
pub(super) fn sprint(d: &Data<'_>, args: &[Value<'_>], out: &mut String) -> Result<(), String> {
    for (i, a) in args.iter().enumerate() {
        let is_str = |v: &Value<'_>| matches!(v, Value::Str(_));
        if i > 0 && !is_str(a) && !is_str(&args[i - 1]) {
            out.push(' ');
        }
        d.print(a, out)?;
    }
    Ok(())
}

/// `fmt.Sprintln`: a space between operands, a new line at the end.
pub(super) fn sprintln(d: &Data<'_>, args: &[Value<'_>], out: &mut String) -> Result<(), String> {
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        d.print(a, out)?;
    }
    out.push('\n');
    Ok(())
}

#[derive(Default, Clone, Copy)]
struct Spec {
    plus: bool,
    minus: bool,
    sharp: bool,
    zero: bool,
    space: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

/// `fmt.Sprintf`.
pub(super) fn sprintf(
    d: &Data<'_>,
    format: &str,
    args: &[Value<'_>],
    out: &mut String,
) -> Result<(), String> {
    let mut next = 0;
    let mut chars = format.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&(_, f)) = chars.peek() {
            match f {
                '+' => spec.plus = true,
                '-' => spec.minus = true,
                '#' => spec.sharp = true,
                '0' => spec.zero = true,
                ' ' => spec.space = true,
                _ => break,
            }
            chars.next();
        }
        let number = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
                      next: &mut usize,
                      out: &mut String,
                      bad: &str|
         -> Option<usize> {
            if chars.peek().map(|c| c.1) == Some('*') {
                chars.next();
                let v = args.get(*next).cloned();
                *next += 1;
                return match v {
                    Some(Value::Int(i)) if (0..=1_000_000).contains(&i) => Some(i as usize),
                    _ => {
                        out.push_str(bad);
                        None
                    }
                };
            }
            let mut n: Option<usize> = None;
            while let Some(&(_, c)) = chars.peek() {
                let Some(dg) = c.to_digit(10) else { break };
                n = Some(
                    n.unwrap_or(0)
                        .saturating_mul(10)
                        .saturating_add(dg as usize),
                );
                chars.next();
            }
            // Go's `tooLarge`: a width or precision past a million is no number.
            if n.is_some_and(|n| n > 1_000_000) {
                out.push_str(bad);
                return None;
            }
            n
        };
        spec.width = number(&mut chars, &mut next, out, "%!(BADWIDTH)");
        if chars.peek().map(|c| c.1) == Some('.') {
            chars.next();
            spec.prec = Some(number(&mut chars, &mut next, out, "%!(BADPREC)").unwrap_or(0));
        }
        let Some((_, verb)) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        if verb == '[' {
            // Argument indexes are refused at setup when the format is a constant.
            for (_, c) in chars.by_ref() {
                if c == ']' {
                    break;
                }
            }
            let v = chars.next().map_or('?', |c| c.1);
            out.push_str(&format!("%!{v}(BADINDEX)"));
            continue;
        }
        let Some(arg) = args.get(next) else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        next += 1;
        format_one(d, verb, spec, arg, out)?;
    }
    if next < args.len() {
        out.push_str("%!(EXTRA ");
        for (i, a) in args[next..].iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(a.type_name());
            out.push('=');
            d.print(a, out)?;
        }
        out.push(')');
    }
    Ok(())
}

fn format_one(
    d: &Data<'_>,
    verb: char,
    spec: Spec,
    arg: &Value<'_>,
    out: &mut String,
) -> Result<(), String> {
    let int = match arg {
        Value::Int(i) => Some(i128::from(*i)),
        Value::Uint(u) => Some(i128::from(*u)),
        _ => None,
    };
    match (verb, arg) {
        ('v', Value::Int(_) | Value::Uint(_)) | ('d', _) if int.is_some() => {
            pad_number(out, spec, int.unwrap_or(0), 10, false, "")
        }
        ('b', _) if int.is_some() => pad_number(out, spec, int.unwrap_or(0), 2, false, "0b"),
        ('o', _) if int.is_some() => pad_number(out, spec, int.unwrap_or(0), 8, false, "0"),
        ('O', _) if int.is_some() => {
            let spec = Spec {
                sharp: true,
                ..spec
            };
            pad_number(out, spec, int.unwrap_or(0), 8, false, "0o")
        }
        ('x', _) if int.is_some() => pad_number(out, spec, int.unwrap_or(0), 16, false, "0x"),
        ('X', _) if int.is_some() => pad_number(out, spec, int.unwrap_or(0), 16, true, "0X"),
        ('c', _) if int.is_some() => {
            let c = u32::try_from(int.unwrap_or(0))
                .ok()
                .and_then(char::from_u32);
            pad(out, spec, &c.unwrap_or('\u{FFFD}').to_string());
        }
        ('q', _) if int.is_some() => {
            let c = u32::try_from(int.unwrap_or(0))
                .ok()
                .and_then(char::from_u32);
            pad(out, spec, &quote_rune(c.unwrap_or('\u{FFFD}')));
        }
        ('s' | 'v', Value::Str(s)) => {
            let s = match spec.prec {
                Some(p) => s.chars().take(p).collect::<String>(),
                None => s.to_string(),
            };
            pad(out, spec, &s);
        }
        ('q', Value::Str(s)) => {
            let q = if spec.sharp
                && !s.contains('`')
                && s.chars().all(|c| c != '\n' && !c.is_control())
            {
                format!("`{s}`")
            } else {
                quote(s)
            };
            pad(out, spec, &q);
        }
        ('x' | 'X', Value::Str(s)) => {
            let mut h = String::new();
            let bytes = match spec.prec {
                Some(p) => &s.as_bytes()[..p.min(s.len())],
                None => s.as_bytes(),
            };
            for (i, b) in bytes.iter().enumerate() {
                if spec.space && i > 0 {
                    h.push(' ');
                }
                if spec.sharp && (spec.space || i == 0) {
                    h.push_str(if verb == 'x' { "0x" } else { "0X" });
                }
                if verb == 'x' {
                    h.push_str(&format!("{b:02x}"));
                } else {
                    h.push_str(&format!("{b:02X}"));
                }
            }
            pad(out, spec, &h);
        }
        ('t' | 'v', Value::Bool(b)) => pad(out, spec, if *b { "true" } else { "false" }),
        ('v', _) | ('s', Value::Question(true)) => {
            let mut s = String::new();
            d.print(arg, &mut s)?;
            pad(out, spec, &s);
        }
        _ => {
            out.push_str(&format!("%!{verb}("));
            if matches!(arg, Value::Nil) {
                out.push_str("<nil>");
            } else {
                out.push_str(arg.type_name());
                out.push('=');
                d.print(arg, out)?;
            }
            out.push(')');
        }
    }
    Ok(())
}

/// Pads `s` to the width, on the left unless `-` (with zeros under `0`, as Go pads
/// strings too).
fn pad(out: &mut String, spec: Spec, s: &str) {
    let len = s.chars().count();
    let fill = spec.width.unwrap_or(0).saturating_sub(len);
    if spec.minus {
        out.push_str(s);
        out.extend(std::iter::repeat_n(' ', fill));
    } else {
        let c = if spec.zero { '0' } else { ' ' };
        out.extend(std::iter::repeat_n(c, fill));
        out.push_str(s);
    }
}

/// An integer as Go's `fmtInteger` writes it: sign, `#` prefix, precision as a minimum of
/// digits, width (zero padding after the sign unless a precision or `-` is given).
fn pad_number(out: &mut String, spec: Spec, v: i128, radix: u32, upper: bool, prefix: &str) {
    let neg = v < 0;
    let mag = v.unsigned_abs();
    let mut digits = match radix {
        2 => format!("{mag:b}"),
        8 => format!("{mag:o}"),
        16 if upper => format!("{mag:X}"),
        16 => format!("{mag:x}"),
        _ => format!("{mag}"),
    };
    if let Some(p) = spec.prec {
        if p == 0 && mag == 0 {
            digits.clear();
        }
        if digits.len() < p {
            digits.insert_str(0, &"0".repeat(p - digits.len()));
        }
    }
    let mut head = String::new();
    if neg {
        head.push('-');
    } else if spec.plus {
        head.push('+');
    } else if spec.space {
        head.push(' ');
    }
    if spec.sharp && !(radix == 8 && prefix == "0" && digits.starts_with('0')) && radix != 10 {
        head.push_str(prefix);
    }
    let len = head.len() + digits.len();
    let fill = spec.width.unwrap_or(0).saturating_sub(len);
    if spec.minus {
        out.push_str(&head);
        out.push_str(&digits);
        out.extend(std::iter::repeat_n(' ', fill));
    } else if spec.zero && spec.prec.is_none() {
        out.push_str(&head);
        out.extend(std::iter::repeat_n('0', fill));
        out.push_str(&digits);
    } else {
        out.extend(std::iter::repeat_n(' ', fill));
        out.push_str(&head);
        out.push_str(&digits);
    }
}

/// Go's `strconv.Quote`.
pub(super) fn quote(s: &str) -> String {
    let mut q = String::from("\"");
    for c in s.chars() {
        escape(c, '"', &mut q);
    }
    q.push('"');
    q
}

fn quote_rune(c: char) -> String {
    let mut q = String::from("'");
    escape(c, '\'', &mut q);
    q.push('\'');
    q
}

fn escape(c: char, quote: char, q: &mut String) {
    match c {
        '\x07' => q.push_str("\\a"),
        '\x08' => q.push_str("\\b"),
        '\x0c' => q.push_str("\\f"),
        '\n' => q.push_str("\\n"),
        '\r' => q.push_str("\\r"),
        '\t' => q.push_str("\\t"),
        '\x0b' => q.push_str("\\v"),
        '\\' => q.push_str("\\\\"),
        c if c == quote => {
            q.push('\\');
            q.push(c);
        }
        c if (c as u32) < 0x20 || c as u32 == 0x7f => q.push_str(&format!("\\x{:02x}", c as u32)),
        c if c.is_control() => {
            if (c as u32) < 0x10000 {
                q.push_str(&format!("\\u{:04x}", c as u32));
            } else {
                q.push_str(&format!("\\U{:08x}", c as u32));
            }
        }
        c => q.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::super::value::Msg;
    use super::*;
    use std::borrow::Cow;

    fn data() -> Data<'static> {
        Data {
            zone: "example.",
            name: "a.example.",
            regex: ".*",
            matches: &["a.example."],
            group_names: &[None],
            class: "IN",
            rtype: "A",
            remote: "127.0.0.1",
            msg: Msg {
                id: 1,
                flags: 0x0100,
                qname: "A.example.",
                qtype: 1,
                qclass: 1,
            },
            meta: None,
        }
    }

    fn f(format: &str, args: &[Value<'_>]) -> String {
        let mut out = String::new();
        sprintf(&data(), format, args, &mut out).unwrap();
        out
    }

    fn s(v: &str) -> Value<'_> {
        Value::Str(Cow::Borrowed(v))
    }

    #[test]
    fn verbs_as_go_prints_them() {
        use Value::{Bool, Int, Uint};
        assert_eq!(f("%s-%d", &[s("ip"), Int(7)]), "ip-7");
        assert_eq!(
            f(
                "%03d|%-4d|%+d|% d|%.3d",
                &[Int(7), Int(7), Int(7), Int(7), Int(7)]
            ),
            "007|7   |+7| 7|007"
        );
        assert_eq!(
            f(
                "%x %X %#x %o %#o %O %b %#b",
                &[
                    Uint(255),
                    Uint(255),
                    Int(255),
                    Int(8),
                    Int(8),
                    Int(8),
                    Int(5),
                    Int(5)
                ]
            ),
            "ff FF 0xff 10 010 0o10 101 0b101"
        );
        assert_eq!(
            f(
                "%5s|%-5s|%.2s|%q|%x",
                &[s("ab"), s("ab"), s("abc"), s("a\"b\n"), s("AB")]
            ),
            "   ab|ab   |ab|\"a\\\"b\\n\"|4142"
        );
        assert_eq!(f("%c%c %q", &[Int(104), Int(105), Int(97)]), "hi 'a'");
        assert_eq!(
            f("%t %v %v", &[Bool(true), Bool(false), Int(-3)]),
            "true false -3"
        );
        assert_eq!(f("%*d|%-*d", &[Int(4), Int(1), Int(3), Int(2)]), "   1|2  ");
        assert_eq!(f("100%%", &[]), "100%");
        assert_eq!(
            f("%v %v", &[Value::Strs, Value::Question(true)]),
            "[a.example.] ;A.example.\tIN\t A"
        );
    }

    #[test]
    fn go_markers_for_bad_calls() {
        assert_eq!(f("%d", &[s("x")]), "%!d(string=x)");
        assert_eq!(f("%s", &[Value::Int(5)]), "%!s(int=5)");
        assert_eq!(f("%d %d", &[Value::Int(5)]), "5 %!d(MISSING)");
        assert_eq!(
            f("%d", &[Value::Int(5), s("x"), Value::Int(6)]),
            "5%!(EXTRA string=x, int=6)"
        );
        assert_eq!(f("%", &[]), "%!(NOVERB)");
        assert_eq!(f("%[1]d", &[Value::Int(1)]), "%!d(BADINDEX)%!(EXTRA int=1)");
        assert_eq!(f("%s", &[Value::Nil]), "%!s(<nil>)");
    }

    #[test]
    fn print_and_println() {
        let mut out = String::new();
        sprint(
            &data(),
            &[s("a"), Value::Int(1), Value::Int(2), s("b")],
            &mut out,
        )
        .unwrap();
        assert_eq!(out, "a1 2b");
        out.clear();
        sprintln(&data(), &[s("a"), Value::Int(1)], &mut out).unwrap();
        assert_eq!(out, "a 1\n");
        assert!(sprint(&data(), &[Value::Msg], &mut out).is_err());
    }
}
