//! Go's duration syntax (`time.ParseDuration`, `Duration.String`), which Corefiles use for
//! every timeout and interval (`5s`, `1m30s`, `250ms`) and CoreDNS's messages print.

use super::quote::go_quote;
use std::time::Duration;

/// Parses `300ms`, `1.5h`, `2h45m`, `10us` or `0` like Go's `time.ParseDuration`; negative
/// durations are refused since no Corefile option takes one.
pub fn parse(s: &str) -> Result<Duration, String> {
    let bad = || format!("time: invalid duration \"{s}\"");
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() || s.starts_with('-') {
        return Err(bad());
    }
    let s2 = s.strip_prefix('+').unwrap_or(s);
    let mut rest = s2;
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("time: missing unit in duration \"{s}\""))?;
        if num_len == 0 {
            return Err(bad());
        }
        let value: f64 = rest[..num_len].parse().map_err(|_| bad())?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let nanos_per = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "" => return Err(format!("time: missing unit in duration \"{s}\"")),
            u => return Err(format!("time: unknown unit \"{u}\" in duration \"{s}\"")),
        };
        total += value * nanos_per;
        rest = &rest[unit_len..];
    }
    if !total.is_finite() || total > u64::MAX as f64 {
        return Err(bad());
    }
    Ok(Duration::from_nanos(total.round() as u64))
}

/// Formats like Go's `Duration.String`: `5m0s`, `1h0m0s`, `1.5s`, `250ms`, `0s`.
pub fn format(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_string();
    }
    if nanos < 1_000_000_000 {
        let (v, unit) = if nanos < 1_000 {
            (nanos as f64, "ns")
        } else if nanos < 1_000_000 {
            (nanos as f64 / 1e3, "µs")
        } else {
            (nanos as f64 / 1e6, "ms")
        };
        return format!("{}{unit}", trim(v));
    }
    let secs_total = nanos / 1_000_000_000;
    let frac = nanos % 1_000_000_000;
    let h = secs_total / 3600;
    let m = (secs_total % 3600) / 60;
    let s = secs_total % 60;
    let secs = if frac == 0 {
        format!("{s}s")
    } else {
        let f = format!("{:09}", frac);
        format!("{s}.{}s", f.trim_end_matches('0'))
    };
    if h > 0 {
        format!("{h}h{m}m{secs}")
    } else if m > 0 {
        format!("{m}m{secs}")
    } else {
        secs
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.9}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Go's `time.ParseDuration`, sign included: `(negative, magnitude)`; `-0s` is not negative.
pub fn parse_signed(s: &str) -> Result<(bool, Duration), String> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let invalid = || format!("time: invalid duration {}", go_quote(s));
    if body.starts_with(['+', '-']) || body.is_empty() {
        return Err(invalid());
    }
    let d = parse(body).map_err(|e| {
        // Messages quote the text parsed; show what was written, sign included.
        e.replace(&format!("\"{body}\""), &go_quote(s))
    })?;
    Ok((neg && !d.is_zero(), d))
}

/// Go's `strconv.Atoi` with its error texts.
pub fn go_atoi(s: &str) -> Result<i64, String> {
    let err = |kind: &str| format!("strconv.Atoi: parsing {}: {kind}", go_quote(s));
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err("invalid syntax"));
    }
    s.parse::<i64>().map_err(|_| err("value out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        assert_eq!(parse("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse("1.5h").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse("10us").unwrap(), Duration::from_micros(10));
        assert_eq!(parse("0").unwrap(), Duration::ZERO);
        assert_eq!(
            parse("5").unwrap_err(),
            "time: missing unit in duration \"5\""
        );
        assert_eq!(
            parse("5x").unwrap_err(),
            "time: unknown unit \"x\" in duration \"5x\""
        );
        assert_eq!(parse("-1s").unwrap_err(), "time: invalid duration \"-1s\"");
        assert_eq!(parse("").unwrap_err(), "time: invalid duration \"\"");
        assert_eq!(parse("s").unwrap_err(), "time: invalid duration \"s\"");
    }

    #[test]
    fn formats_like_go() {
        assert_eq!(format(Duration::from_secs(300)), "5m0s");
        assert_eq!(format(Duration::from_secs(3600)), "1h0m0s");
        assert_eq!(format(Duration::from_secs(30)), "30s");
        assert_eq!(format(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format(Duration::from_millis(250)), "250ms");
        assert_eq!(format(Duration::ZERO), "0s");
    }
}
