//! Numbers of the TTL column, `$TTL` and SOA timers, with BIND's units as miekg
//! reads them (`1h30m`, `2W`, a bare number is seconds).

/// A TTL with optional units (`s`, `m`, `h`, `d`, `w`, any case, combinable as in
/// `1d2h`; digits after the last unit are seconds). Unlike miekg, a TTL must
/// start with a digit, so that a unit alone (`h`) is no TTL of 0.
pub(crate) fn parse(tok: &[u8]) -> Option<u32> {
    if !tok.first()?.is_ascii_digit() {
        return None;
    }
    let mut total: u64 = 0;
    let mut cur: u64 = 0;
    for &c in tok {
        let unit = match c {
            b'0'..=b'9' => {
                cur = cur.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
                if cur > u64::from(u32::MAX) {
                    return None;
                }
                continue;
            }
            b's' | b'S' => 1,
            b'm' | b'M' => 60,
            b'h' | b'H' => 3600,
            b'd' | b'D' => 86400,
            b'w' | b'W' => 604_800,
            _ => return None,
        };
        total = total.checked_add(cur * unit)?;
        cur = 0;
        if total > u64::from(u32::MAX) {
            return None;
        }
    }
    u32::try_from(total + cur).ok()
}

/// A plain decimal number (no sign, no units), up to `u64`.
pub(crate) fn decimal(tok: &[u8]) -> Option<u64> {
    if tok.is_empty() || tok.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in tok {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        let p = |s: &str| parse(s.as_bytes());
        assert_eq!(p("0"), Some(0));
        assert_eq!(p("3600"), Some(3600));
        assert_eq!(p("1h"), Some(3600));
        assert_eq!(p("1H"), Some(3600));
        assert_eq!(p("30m"), Some(1800));
        assert_eq!(p("90s"), Some(90));
        assert_eq!(p("1d2h"), Some(93600));
        assert_eq!(p("1w"), Some(604_800));
        assert_eq!(p("1W1D1H1M1S"), Some(604_800 + 86400 + 3600 + 61));
        assert_eq!(p("1h30"), Some(3630));
        assert_eq!(p("4294967295"), Some(u32::MAX));
        assert_eq!(p("4294967296"), None);
        assert_eq!(p("7102w"), None);
        assert_eq!(p("1x"), None);
        assert_eq!(p("h"), None);
        assert_eq!(p(""), None);
        assert_eq!(p("-1"), None);
    }

    #[test]
    fn decimals() {
        assert_eq!(decimal(b"65535"), Some(65535));
        assert_eq!(decimal(b"+1"), None);
        assert_eq!(decimal(b""), None);
        assert_eq!(decimal(b"1a"), None);
    }
}
