//! Domain names from presentation format into wire form, completed with the
//! current `$ORIGIN`: written here rather than through domain's `Name` so that an
//! owner name costs no allocation beyond the record's own.

/// Why a name was refused (the caller adds which name).
pub(crate) type NameError = &'static str;

/// Writes the wire form of the name written as `text` (escapes undone, case kept)
/// into `out`, after clearing it. A relative name is completed with `origin` (an
/// absolute wire name); `@` is the origin itself.
pub(crate) fn to_wire(text: &[u8], origin: &[u8], out: &mut Vec<u8>) -> Result<(), NameError> {
    out.clear();
    append(text, origin, out)
}

/// [`to_wire`] appending to what `out` holds already (RDATA being built); on an
/// error `out` is left with a partial name.
pub(crate) fn append(text: &[u8], origin: &[u8], out: &mut Vec<u8>) -> Result<(), NameError> {
    let base = out.len();
    if text.is_empty() {
        return Err("empty name");
    }
    if text == b"@" {
        out.extend_from_slice(origin);
        return Ok(());
    }
    if text == b"." {
        out.push(0);
        return Ok(());
    }
    let mut i = 0;
    let mut len_at = base;
    out.push(0);
    let mut absolute = false;
    while i < text.len() {
        let c = text[i];
        match c {
            b'.' => {
                let label = out.len() - len_at - 1;
                if label == 0 {
                    return Err("empty label");
                }
                if i + 1 == text.len() {
                    absolute = true;
                    i += 1;
                    continue;
                }
                len_at = out.len();
                out.push(0);
                i += 1;
                continue;
            }
            b'\\' => {
                let (b, n) = unescape(&text[i..])?;
                out.push(b);
                i += n;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
        let label = out.len() - len_at - 1;
        if label > 63 {
            return Err("label longer than 63 octets");
        }
        out[len_at] = label as u8;
    }
    if absolute {
        out.push(0);
    } else {
        out.extend_from_slice(origin);
    }
    if out.len() - base > 255 {
        return Err("name longer than 255 octets");
    }
    Ok(())
}

/// Undoes one escape at the start of `s` (which starts with a backslash): `\DDD`
/// is the octet DDD, `\X` is X. Returns the octet and how many bytes were read.
pub(crate) fn unescape(s: &[u8]) -> Result<(u8, usize), NameError> {
    match s.get(1) {
        None => Err("escape at the end of a token"),
        Some(d) if d.is_ascii_digit() => {
            let digits = s.get(1..4).ok_or("bad \\DDD escape")?;
            if !digits.iter().all(u8::is_ascii_digit) {
                return Err("bad \\DDD escape");
            }
            let v = digits
                .iter()
                .fold(0u32, |a, d| a * 10 + u32::from(d - b'0'));
            u8::try_from(v)
                .map(|b| (b, 4))
                .map_err(|_| "bad \\DDD escape")
        }
        Some(&b) => Ok((b, 2)),
    }
}

/// The presentation form of a wire name, for messages.
pub(crate) fn display(wire: &[u8]) -> String {
    match ringdns_wire::Name::from_wire(wire) {
        Ok(n) => n.to_string(),
        Err(_) => String::from_utf8_lossy(wire).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORG: &[u8] = b"\x07example\x03org\x00";

    fn w(s: &str) -> Result<Vec<u8>, NameError> {
        let mut v = Vec::new();
        to_wire(s.as_bytes(), ORG, &mut v).map(|()| v)
    }

    #[test]
    fn relative_absolute_at_root() {
        assert_eq!(w("www").unwrap(), b"\x03www\x07example\x03org\x00");
        assert_eq!(w("a.B").unwrap(), b"\x01a\x01B\x07example\x03org\x00");
        assert_eq!(
            w("Www.Example.COM.").unwrap(),
            b"\x03Www\x07Example\x03COM\x00"
        );
        assert_eq!(w("@").unwrap(), ORG);
        assert_eq!(w(".").unwrap(), b"\x00");
    }

    #[test]
    fn escapes() {
        assert_eq!(w("a\\.b.").unwrap(), b"\x03a.b\x00");
        assert_eq!(w("\\065bc.").unwrap(), b"\x03Abc\x00");
        assert_eq!(w("a\\\\.").unwrap(), b"\x02a\\\x00");
        assert_eq!(w("\\000.").unwrap(), b"\x01\x00\x00");
        assert!(w("\\256.").is_err());
        assert!(w("\\06.").is_err());
        assert!(w("a\\").is_err());
    }

    #[test]
    fn bad_names() {
        assert_eq!(w("a..b"), Err("empty label"));
        assert_eq!(w(".a"), Err("empty label"));
        assert_eq!(w(".."), Err("empty label"));
        assert!(w(&"a".repeat(64)).is_err());
        assert!(w(&"a".repeat(63)).is_ok());
        let long = vec!["abcdefghi"; 26].join(".") + ".";
        assert_eq!(w(&long), Err("name longer than 255 octets"));
    }

    #[test]
    fn display_escapes() {
        assert_eq!(display(b"\x03a.b\x03org\x00"), "a\\.b.org.");
    }
}
