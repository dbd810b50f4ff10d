//! Parsing of the `rrl` directive, mirroring coredns/rrl's `setup.go`: the same options,
//! defaults, checks and error texts, each error a Corefile error at its token prefixed
//! `plugin/rrl: `. Where coredns/rrl accepts something it cannot mean (a second `rrl` in a
//! block, silently ignored; an infinite or NaN rate), ringdns refuses it; those places are
//! marked "ringdns:".

use ringdns_plugin::BlockSetup;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::duration::go_atoi;
use ringdns_plugin::normalize::origins_from_args_or_block;
use ringdns_plugin::quote::go_quote;

/// What `rrl [ZONES...] { ... }` configures, as the operator wrote it (rates per second for
/// the whole server; each core's share is worked out when it builds its instance).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The zones rate limited (lower-case FQDNs); the block's when none are given.
    pub zones: Vec<String>,
    /// `window`, in seconds (default 15).
    pub window: f64,
    /// `ipv4-prefix-length` (default 24).
    pub ipv4_prefix_length: u8,
    /// `ipv6-prefix-length` (default 56).
    pub ipv6_prefix_length: u8,
    /// `responses-per-second` (default 0: not limited).
    pub responses: f64,
    /// `nodata-per-second` (default: responses-per-second).
    pub nodata: f64,
    /// `nxdomains-per-second` (default: responses-per-second).
    pub nxdomains: f64,
    /// `referrals-per-second` (default: responses-per-second).
    pub referrals: f64,
    /// `errors-per-second` (default: responses-per-second).
    pub errors: f64,
    /// `requests-per-second` (default 0: not limited).
    pub requests: f64,
    /// `slip-ratio` (0 to 10, default 0: never slip).
    pub slip_ratio: u32,
    /// `max-table-size` (default 100000).
    pub max_table_size: usize,
    /// `report-only`.
    pub report_only: bool,
}

impl Config {
    /// coredns/rrl's `defaultRRL`, for `zones`.
    fn defaults(zones: Vec<String>) -> Self {
        Config {
            zones,
            window: 15.0,
            ipv4_prefix_length: 24,
            ipv6_prefix_length: 56,
            responses: 0.0,
            nodata: 0.0,
            nxdomains: 0.0,
            referrals: 0.0,
            errors: 0.0,
            requests: 0.0,
            slip_ratio: 0,
            max_table_size: 100_000,
            report_only: false,
        }
    }
}

/// `plugin/rrl: MSG` at the current token.
fn fail(d: &Dispenser<'_>, msg: impl std::fmt::Display) -> Error {
    d.plugin_err("rrl", msg)
}

/// Go's `strconv.ParseFloat` for the values coredns/rrl reads with it, with its error
/// text; ringdns: infinities and NaN are refused (coredns/rrl would turn them into
/// undefined integer conversions).
fn go_parse_float(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!(
            "strconv.ParseFloat: parsing {}: not a finite number",
            go_quote(s)
        )),
        Err(_) => Err(format!(
            "strconv.ParseFloat: parsing {}: invalid syntax",
            go_quote(s)
        )),
    }
}

/// The one argument of an option, or the argument-count error.
fn one_arg(d: &mut Dispenser<'_>) -> Result<String, Error> {
    let mut args = d.remaining_args();
    if args.len() != 1 {
        return Err(d.plugin_arg_err("rrl"));
    }
    Ok(args.remove(0))
}

/// coredns/rrl's `getIntervalArg`, keeping the allowance itself (per second).
fn allowance(d: &mut Dispenser<'_>) -> Result<f64, Error> {
    let a = one_arg(d)?;
    let rps = go_parse_float(&a).map_err(|e| fail(d, format_args!("{a} invalid value. {e}")))?;
    if rps < 0.0 {
        return Err(fail(d, format_args!("{a} cannot be negative")));
    }
    Ok(rps)
}

/// A prefix length between 1 and `max`.
fn prefix_length(d: &mut Dispenser<'_>, max: i64) -> Result<u8, Error> {
    let a = one_arg(d)?;
    let i = go_atoi(&a).map_err(|e| fail(d, format_args!("{a} invalid value. {e}")))?;
    if i <= 0 || i > max {
        return Err(fail(d, format_args!("{a} must be between 1 and {max}")));
    }
    Ok(i as u8)
}

/// Parses the block's `rrl` directive.
pub fn parse(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Config, Error> {
    let (mut out, mut seen) = (None, false);
    while d.next() {
        ringdns_plugin::once_per_block_of(d, "rrl", &mut seen)?;
        out = Some(parse_stanza(d, block)?);
    }
    Ok(out.unwrap_or_else(|| Config::defaults(block.zones.clone())))
}

/// One `rrl [ZONES...] { ... }`, the cursor on `rrl`.
fn parse_stanza(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Config, Error> {
    let args = d.remaining_args();
    let zones = origins_from_args_or_block("rrl", &args, &block.zones);
    let mut c = Config::defaults(zones);
    let (mut nodata, mut nxdomains, mut referrals, mut errors) = (None, None, None, None);
    while d.next_block() {
        match d.val() {
            "window" => {
                let a = one_arg(d)?;
                let w = go_parse_float(&a)
                    .map_err(|e| fail(d, format_args!("{a} invalid value. {e}")))?;
                if w <= 0.0 {
                    return Err(fail(d, "window must be greater than zero"));
                }
                c.window = w;
            }
            "ipv4-prefix-length" => c.ipv4_prefix_length = prefix_length(d, 32)?,
            "ipv6-prefix-length" => c.ipv6_prefix_length = prefix_length(d, 128)?,
            "responses-per-second" => c.responses = allowance(d)?,
            "nodata-per-second" => nodata = Some(allowance(d)?),
            "nxdomains-per-second" => nxdomains = Some(allowance(d)?),
            "referrals-per-second" => referrals = Some(allowance(d)?),
            "errors-per-second" => errors = Some(allowance(d)?),
            "slip-ratio" => {
                let a = one_arg(d)?;
                let i = go_atoi(&a)
                    .map_err(|e| fail(d, format_args!("slip-ratio '{a}' invalid value. {e}")))?;
                if !(0..=10).contains(&i) {
                    return Err(fail(
                        d,
                        format_args!("slip-ratio '{a}' must be between 0 and 10"),
                    ));
                }
                c.slip_ratio = i as u32;
            }
            "requests-per-second" => c.requests = allowance(d)?,
            "max-table-size" => {
                let a = one_arg(d)?;
                let i = go_atoi(&a).map_err(|e| fail(d, format_args!("{a} invalid value. {e}")))?;
                if i < 0 {
                    return Err(fail(d, format_args!("{a} cannot be negative")));
                }
                c.max_table_size = i as usize;
            }
            "report-only" => {
                if !d.remaining_args().is_empty() {
                    return Err(d.plugin_arg_err("rrl"));
                }
                c.report_only = true;
            }
            other => return Err(fail(d, format_args!("unknown property '{other}'"))),
        }
    }
    // Allowances not given default to responses-per-second.
    c.nodata = nodata.unwrap_or(c.responses);
    c.nxdomains = nxdomains.unwrap_or(c.responses);
    c.referrals = referrals.unwrap_or(c.responses);
    c.errors = errors.unwrap_or(c.responses);
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<Config, String> {
        let cf = ringdns_plugin::corefile::parse("Corefile", text, &|n| n == "rrl")
            .map_err(|e| e.to_string())?;
        let dir = &cf.blocks[0].directives[0];
        let block = BlockSetup {
            zones: vec!["example.org.".into()],
            ..BlockSetup::default()
        };
        let mut d = Dispenser::new(&dir.tokens);
        parse(&mut d, &block).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_are_coredns_rrls() {
        let c = parse_text("example.org {\n rrl\n}").unwrap();
        assert_eq!(c, Config::defaults(vec!["example.org.".into()]));
        assert_eq!(c.window, 15.0);
        assert_eq!((c.ipv4_prefix_length, c.ipv6_prefix_length), (24, 56));
        assert_eq!(c.max_table_size, 100_000);
    }

    #[test]
    fn every_option_is_read() {
        let c = parse_text(
            "example.org {\n rrl example.net Example.COM {\n window 2.5\n ipv4-prefix-length 32\n ipv6-prefix-length 64\n responses-per-second 10\n nodata-per-second 5\n nxdomains-per-second 4\n referrals-per-second 3\n errors-per-second 2\n slip-ratio 2\n requests-per-second 100\n max-table-size 50\n report-only\n }\n}",
        )
        .unwrap();
        assert_eq!(c.zones, ["example.net.", "example.com."]);
        assert_eq!(c.window, 2.5);
        assert_eq!((c.ipv4_prefix_length, c.ipv6_prefix_length), (32, 64));
        assert_eq!(
            (c.responses, c.nodata, c.nxdomains, c.referrals, c.errors),
            (10.0, 5.0, 4.0, 3.0, 2.0)
        );
        assert_eq!((c.slip_ratio, c.requests), (2, 100.0));
        assert_eq!(c.max_table_size, 50);
        assert!(c.report_only);
    }

    #[test]
    fn unset_allowances_follow_responses_per_second() {
        let c = parse_text(". {\n rrl {\n nxdomains-per-second 0\n responses-per-second 7\n }\n}")
            .unwrap();
        assert_eq!((c.nodata, c.referrals, c.errors), (7.0, 7.0, 7.0));
        assert_eq!(c.nxdomains, 0.0, "set explicitly, even before");
    }

    #[test]
    fn bad_options_say_where_and_why() {
        let cases = [
            (
                "window 0",
                "Corefile:3 - Error during parsing: plugin/rrl: window must be greater than zero",
            ),
            (
                "window x",
                "plugin/rrl: x invalid value. strconv.ParseFloat: parsing \"x\": invalid syntax",
            ),
            (
                "window",
                "plugin/rrl: Wrong argument count or unexpected line ending after 'window'",
            ),
            ("window 1 2", "Wrong argument count"),
            (
                "ipv4-prefix-length 33",
                "plugin/rrl: 33 must be between 1 and 32",
            ),
            (
                "ipv4-prefix-length 0",
                "plugin/rrl: 0 must be between 1 and 32",
            ),
            (
                "ipv6-prefix-length 129",
                "plugin/rrl: 129 must be between 1 and 128",
            ),
            (
                "ipv6-prefix-length z",
                "plugin/rrl: z invalid value. strconv.Atoi: parsing \"z\": invalid syntax",
            ),
            (
                "responses-per-second -1",
                "plugin/rrl: -1 cannot be negative",
            ),
            ("errors-per-second inf", "not a finite number"),
            (
                "slip-ratio 11",
                "plugin/rrl: slip-ratio '11' must be between 0 and 10",
            ),
            ("slip-ratio -1", "must be between 0 and 10"),
            ("max-table-size -5", "plugin/rrl: -5 cannot be negative"),
            ("report-only yes", "Wrong argument count"),
            ("burst 5", "plugin/rrl: unknown property 'burst'"),
        ];
        for (line, want) in cases {
            let e = parse_text(&format!(". {{\n rrl {{\n {line}\n }}\n}}")).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
            assert!(e.starts_with("Corefile:3 - "), "{line}: {e}");
        }
        let twice = parse_text(". {\n rrl\n rrl\n}").unwrap_err();
        assert!(twice.contains("only be used once"), "{twice}");
    }
}
