//! The functions a template calls (Go's predefined ones that ringdns has, and CoreDNS's
//! `parseInt`), on evaluated arguments. `and` and `or` evaluate their arguments lazily and
//! live in the executor. Errors read as Go's, without the `error calling NAME: ` the
//! executor puts before a function's own error.

use super::fmt::{sprint, sprintf, sprintln};
use super::value::{Data, Value};
use std::borrow::Cow;
use std::cmp::Ordering;

/// Why a call failed: its arguments did not fit (Go's own message), or the function
/// returned an error (`error calling NAME: …`).
pub(super) enum CallError {
    Args(String),
    Func(String),
}

/// Calls `name` with `args`.
pub(super) fn call<'a>(
    d: &Data<'a>,
    name: &str,
    args: Vec<Value<'a>>,
) -> Result<Value<'a>, CallError> {
    let want = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(CallError::Args(format!(
                "wrong number of args for {name}: want {n} got {}",
                args.len()
            )))
        }
    };
    let func = CallError::Func;
    match name {
        "not" => {
            want(1)?;
            Ok(Value::Bool(!args[0].truth(d)))
        }
        "len" => {
            want(1)?;
            let n = match &args[0] {
                Value::Str(s) => s.len(),
                Value::Strs => d.matches.len(),
                Value::Groups => d.group_entries().len(),
                Value::Vars => 0,
                Value::Questions => 1,
                v => return Err(func(format!("len of type {}", v.type_name()))),
            };
            Ok(Value::Int(n as i64))
        }
        "index" => {
            if args.is_empty() {
                return Err(CallError::Args(
                    "wrong number of args for index: want at least 1 got 0".into(),
                ));
            }
            let mut v = args[0].clone();
            for i in &args[1..] {
                v = index(d, &v, i).map_err(func)?;
            }
            Ok(v)
        }
        "slice" => {
            if args.is_empty() {
                return Err(CallError::Args(
                    "wrong number of args for slice: want at least 1 got 0".into(),
                ));
            }
            slice(d, &args[0], &args[1..]).map_err(func)
        }
        "print" | "println" | "printf" => {
            let mut out = String::new();
            match name {
                "print" => sprint(d, &args, &mut out),
                "println" => sprintln(d, &args, &mut out),
                _ => {
                    let Some(Value::Str(f)) = args.first() else {
                        return Err(match args.first() {
                            None => CallError::Args(
                                "wrong number of args for printf: want at least 1 got 0".into(),
                            ),
                            Some(v) => CallError::Args(format!(
                                "wrong type for value; expected string; got {}",
                                v.type_name()
                            )),
                        });
                    };
                    sprintf(d, f, &args[1..], &mut out)
                }
            }
            .map_err(func)?;
            Ok(Value::Str(Cow::Owned(out)))
        }
        "eq" | "ne" => {
            if args.len() < 2 {
                return Err(func("missing argument for comparison".into()));
            }
            let mut eq = false;
            for b in &args[1..] {
                if compare(&args[0], b).map_err(func)? == Ordering::Equal {
                    eq = true;
                    if name == "eq" {
                        break;
                    }
                }
            }
            if name == "ne" {
                want(2)?;
                return Ok(Value::Bool(!eq));
            }
            Ok(Value::Bool(eq))
        }
        "lt" | "le" | "gt" | "ge" => {
            want(2)?;
            if matches!(args[0], Value::Bool(_)) || matches!(args[1], Value::Bool(_)) {
                return Err(func("invalid type for comparison".into()));
            }
            let o = compare(&args[0], &args[1]).map_err(func)?;
            Ok(Value::Bool(match name {
                "lt" => o == Ordering::Less,
                "le" => o != Ordering::Greater,
                "gt" => o == Ordering::Greater,
                _ => o != Ordering::Less,
            }))
        }
        "parseInt" => {
            want(3)?;
            let Value::Str(s) = &args[0] else {
                return Err(expected("string", &args[0]));
            };
            let (Value::Int(base), Value::Int(bits)) = (&args[1], &args[2]) else {
                let bad = if matches!(args[1], Value::Int(_)) {
                    &args[2]
                } else {
                    &args[1]
                };
                return Err(expected("int", bad));
            };
            parse_uint(s, *base, *bits).map(Value::Uint).map_err(func)
        }
        _ => Err(CallError::Args(format!("function \"{name}\" not defined"))),
    }
}

fn expected(ty: &str, got: &Value<'_>) -> CallError {
    CallError::Args(format!(
        "wrong type for value; expected {ty}; got {}",
        got.type_name()
    ))
}

/// An integer argument of `index` or `slice`.
fn int_arg(v: &Value<'_>) -> Result<i128, String> {
    match v {
        Value::Int(i) => Ok(i128::from(*i)),
        Value::Uint(u) => Ok(i128::from(*u)),
        Value::Nil => Err("cannot index slice/array with nil".into()),
        v => Err(format!(
            "cannot index slice/array with type {}",
            v.type_name()
        )),
    }
}

fn index<'a>(d: &Data<'a>, v: &Value<'a>, i: &Value<'a>) -> Result<Value<'a>, String> {
    let at = |len: usize| -> Result<usize, String> {
        let x = int_arg(i)?;
        if x < 0 || x >= len as i128 {
            return Err(format!("index out of range: {x}"));
        }
        Ok(x as usize)
    };
    match v {
        Value::Strs => Ok(Value::Str(Cow::Borrowed(d.matches[at(d.matches.len())?]))),
        Value::Questions => {
            at(1)?;
            Ok(Value::Question(false))
        }
        Value::Str(s) => Ok(Value::Int(i64::from(s.as_bytes()[at(s.len())?]))),
        Value::Groups | Value::Vars => {
            let Value::Str(key) = i else {
                return Err(format!(
                    "value has type {}; should be string",
                    i.type_name()
                ));
            };
            if matches!(v, Value::Vars) {
                return Ok(Value::NoValue);
            }
            // A missing key gives the element type's zero value, as Go's index does.
            Ok(Value::Str(Cow::Borrowed(d.group(key).unwrap_or(""))))
        }
        Value::Nil | Value::NoValue => Err("index of untyped nil".into()),
        v => Err(format!("can't index item of type {}", v.type_name())),
    }
}

fn slice<'a>(d: &Data<'a>, v: &Value<'a>, idx: &[Value<'a>]) -> Result<Value<'a>, String> {
    let len = match v {
        Value::Str(s) => s.len(),
        v => return Err(format!("can't slice item of type {}", v.type_name())),
    };
    if idx.len() > 2 {
        return Err(format!("too many slice indexes: {}", idx.len()));
    }
    let mut bounds = [0, len];
    for (n, i) in idx.iter().enumerate() {
        let x = int_arg(i)?;
        if x < 0 || x > len as i128 {
            return Err(format!("index out of range: {x}"));
        }
        bounds[n] = x as usize;
    }
    if bounds[0] > bounds[1] {
        return Err(format!(
            "invalid slice index: {} > {}",
            bounds[0], bounds[1]
        ));
    }
    let _ = d;
    let Value::Str(s) = v else {
        unreachable!("checked above")
    };
    let part = s
        .get(bounds[0]..bounds[1])
        .ok_or("slice of a string inside a character is not supported by ringdns")?;
    Ok(Value::Str(Cow::Owned(part.to_string())))
}

/// Go's basic comparison: booleans, integers (of any kind, by value) and strings, each
/// only with its own kind.
fn compare(a: &Value<'_>, b: &Value<'_>) -> Result<Ordering, String> {
    let int = |v: &Value<'_>| match v {
        Value::Int(i) => Some(i128::from(*i)),
        Value::Uint(u) => Some(i128::from(*u)),
        _ => None,
    };
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Ok(x.as_ref().cmp(y.as_ref())),
        (Value::Bool(x), Value::Bool(y)) => Ok(x.cmp(y)),
        _ => match (int(a), int(b)) {
            (Some(x), Some(y)) => Ok(x.cmp(&y)),
            _ if !basic(a) || !basic(b) => Err(format!(
                "non-comparable type {}: {}",
                if basic(a) {
                    b.type_name()
                } else {
                    a.type_name()
                },
                "invalid type for comparison"
            )),
            _ => Err("incompatible types for comparison".into()),
        },
    }
}

fn basic(v: &Value<'_>) -> bool {
    matches!(
        v,
        Value::Str(_) | Value::Bool(_) | Value::Int(_) | Value::Uint(_)
    )
}

/// Go's `strconv.ParseUint(s, base, bitSize)`, with its error texts.
pub(super) fn parse_uint(s: &str, base: i64, bits: i64) -> Result<u64, String> {
    let fail = |what: &str| {
        format!(
            "strconv.ParseUint: parsing {}: {what}",
            super::fmt::quote(s)
        )
    };
    if s.is_empty() {
        return Err(fail("invalid syntax"));
    }
    let base0 = base == 0;
    let (mut base, mut digits) = (base, s);
    if base0 {
        base = 10;
        let b = s.as_bytes();
        if b[0] == b'0' {
            match b.get(1).map(u8::to_ascii_lowercase) {
                Some(b'b') if s.len() >= 3 => (base, digits) = (2, &s[2..]),
                Some(b'o') if s.len() >= 3 => (base, digits) = (8, &s[2..]),
                Some(b'x') if s.len() >= 3 => (base, digits) = (16, &s[2..]),
                _ => (base, digits) = (8, &s[1..]),
            }
        }
    } else if !(2..=36).contains(&base) {
        return Err(fail(&format!("invalid base {base}")));
    }
    let bits = if bits == 0 { 64 } else { bits };
    if !(0..=64).contains(&bits) {
        return Err(fail(&format!("invalid bit size {bits}")));
    }
    let max: u128 = (1u128 << bits) - 1;
    let mut n: u128 = 0;
    let mut underscores = false;
    for c in digits.bytes() {
        if c == b'_' && base0 {
            underscores = true;
            continue;
        }
        let d = match c.to_ascii_lowercase() {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'z' => c - b'a' + 10,
            _ => return Err(fail("invalid syntax")),
        };
        if i64::from(d) >= base {
            return Err(fail("invalid syntax"));
        }
        n = n * base as u128 + u128::from(d);
        if n > max {
            // Go goes on to report a syntax error first only for bad digits; out of range
            // it is.
            return Err(fail("value out of range"));
        }
    }
    if underscores && !underscore_ok(s) {
        return Err(fail("invalid syntax"));
    }
    Ok(n as u64)
}

/// Go's `underscoreOK`: `_` only between digits, or right after a base prefix.
fn underscore_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        hex = b[1].eq_ignore_ascii_case(&b'x');
        i = 2;
        saw = b'0';
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_uint_as_strconv() {
        assert_eq!(parse_uint("5f", 16, 8), Ok(95));
        assert_eq!(parse_uint("0x1_0", 0, 64), Ok(16));
        assert_eq!(parse_uint("017", 0, 64), Ok(15));
        assert_eq!(parse_uint("255", 10, 8), Ok(255));
        let e = |s, b, n| parse_uint(s, b, n).unwrap_err();
        assert_eq!(
            e("gg", 16, 8),
            "strconv.ParseUint: parsing \"gg\": invalid syntax"
        );
        assert_eq!(
            e("256", 10, 8),
            "strconv.ParseUint: parsing \"256\": value out of range"
        );
        assert_eq!(
            e("1", 99, 8),
            "strconv.ParseUint: parsing \"1\": invalid base 99"
        );
        assert_eq!(
            e("1", 10, 65),
            "strconv.ParseUint: parsing \"1\": invalid bit size 65"
        );
        assert_eq!(
            e("", 10, 8),
            "strconv.ParseUint: parsing \"\": invalid syntax"
        );
        assert_eq!(
            e("1_0", 10, 8),
            "strconv.ParseUint: parsing \"1_0\": invalid syntax"
        );
        assert_eq!(
            e("-1", 10, 8),
            "strconv.ParseUint: parsing \"-1\": invalid syntax"
        );
    }
}
