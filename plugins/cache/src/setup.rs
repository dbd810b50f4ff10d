//! Parsing of the `cache` directive, mirroring CoreDNS's
//! `plugin/cache/setup.go`: the same syntax, defaults, checks and error texts, plus ringdns's
//! `max_bytes`. Every error is a Corefile error at the token it is about, its message prefixed
//! `plugin/cache: ` as CoreDNS prefixes plugin errors.
//!
//! Where CoreDNS silently accepts something meaningless (extra arguments after `success`, a
//! negative capacity or prefetch window), ringdns refuses it with a message saying why; the
//! places are marked "ringdns:" below.

use super::config::{CacheConfig, Capacity, Prefetch, ServeStale, StaleMode};
use ringdns_plugin::BlockSetup;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::duration::{go_atoi, parse_signed as go_duration};
use ringdns_plugin::normalize::{normalize_exact, origins_from_args_or_block};
use ringdns_plugin::quote::go_quote;
use std::time::Duration;

/// CoreDNS `defaultCap`: entries per cache (per core in ringdns).
const DEFAULT_CAPACITY: usize = 10_000;
/// CoreDNS `maxTTL`: longest TTL of the positive cache.
const MAX_TTL: Duration = Duration::from_secs(3600);
/// CoreDNS `minTTL`: shortest TTL of the positive cache.
const MIN_TTL: Duration = Duration::from_secs(5);
/// CoreDNS `maxNTTL`: longest TTL of the negative cache.
const MAX_NTTL: Duration = Duration::from_secs(1800);
/// CoreDNS `minNTTL`: shortest TTL of the negative cache.
const MIN_NTTL: Duration = Duration::from_secs(5);
/// CoreDNS's default SERVFAIL caching time (`failttl`).
const SERVFAIL_TTL: Duration = Duration::from_secs(5);
/// RFC 2308 §7.1: SERVFAIL must not be cached longer than this.
const MAX_SERVFAIL_TTL: Duration = Duration::from_secs(300);
/// `prefetch` DURATION default.
const PREFETCH_WINDOW: Duration = Duration::from_secs(60);
/// `prefetch` PERCENTAGE default.
const PREFETCH_PERCENTAGE: u8 = 10;
/// `serve_stale` DURATION default.
const STALE_DURATION: Duration = Duration::from_secs(3600);
/// Longest `serve_stale` failure recheck (CoreDNS caps it at 5 minutes).
const MAX_RECHECK: Duration = Duration::from_secs(300);
/// ringdns `max_bytes` default: stored replies per core.
const DEFAULT_MAX_BYTES: usize = 32 << 20;
/// ringdns `max_bytes` minimum.
const MIN_MAX_BYTES: usize = 64 << 10;

/// Parses the block's `cache` directive (once per block: a second `cache` line is CoreDNS's
/// "this plugin can only be used once per Server Block" error).
pub fn parse(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<CacheConfig, Error> {
    let (mut out, mut seen) = (None, false);
    while d.next() {
        ringdns_plugin::once_per_block_of(d, "cache", &mut seen)?;
        out = Some(parse_stanza(d, block)?);
    }
    Ok(out.unwrap_or_else(|| defaults(block.zones.clone())))
}

/// CoreDNS's `New()` values, for the given zones.
fn defaults(zones: Vec<String>) -> CacheConfig {
    CacheConfig {
        zones,
        success: Capacity {
            entries: DEFAULT_CAPACITY,
            max_ttl: MAX_TTL,
            min_ttl: MIN_TTL,
        },
        denial: Capacity {
            entries: DEFAULT_CAPACITY,
            max_ttl: MAX_NTTL,
            min_ttl: MIN_NTTL,
        },
        servfail: SERVFAIL_TTL,
        prefetch: None,
        serve_stale: None,
        prefer_positive: false,
        disable_success: Vec::new(),
        disable_denial: Vec::new(),
        keepttl: false,
        max_bytes: DEFAULT_MAX_BYTES,
        view: String::new(),
    }
}

/// `plugin/cache: MSG` at the current token.
fn fail(d: &Dispenser<'_>, msg: impl std::fmt::Display) -> Error {
    d.plugin_err("cache", msg)
}

/// caddy's `ArgErr` at the current token, with the plugin prefix inside the message.
fn arg_err(d: &Dispenser<'_>) -> Error {
    d.plugin_arg_err("cache")
}

/// A Go duration that must not be negative; `negative` is the error when it is.
fn non_negative(
    d: &Dispenser<'_>,
    arg: &str,
    negative: impl std::fmt::Display,
) -> Result<Duration, Error> {
    let (neg, dur) = go_duration(arg).map_err(|m| fail(d, m))?;
    if neg {
        return Err(fail(d, negative));
    }
    Ok(dur)
}

/// One `cache [TTL] [ZONES...] { ... }`, the cursor on `cache`.
fn parse_stanza(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<CacheConfig, Error> {
    let mut c = defaults(Vec::new());
    let mut args = d.remaining_args();
    // A first argument that is a number is the TTL; anything else is a zone.
    if let Some(ttl) = args.first().and_then(|a| go_atoi(a).ok()) {
        if ttl <= 0 {
            return Err(fail(
                d,
                format_args!("cache TTL can not be zero or negative: {ttl}"),
            ));
        }
        c.success.max_ttl = seconds(ttl);
        c.denial.max_ttl = seconds(ttl);
        args.remove(0);
    }
    c.zones = origins_from_args_or_block("cache", &args, &block.zones);
    c.view = block.view.clone().unwrap_or_default();
    if !args.is_empty() && c.zones.is_empty() {
        ringdns_plugin::warning!("plugin/cache: no valid zone given: nothing will be cached");
    }

    // Where `serve_stale_policy` was written (`FILE:LINE`), to warn when it does nothing.
    let mut policy_at: Option<String> = None;
    while d.next_block() {
        let key = d.val().to_string();
        match key.as_str() {
            "success" => parse_capacity(d, &mut c.success)?,
            "denial" => parse_capacity(d, &mut c.denial)?,
            "prefetch" => c.prefetch = parse_prefetch(d)?,
            "serve_stale" => c.serve_stale = Some(parse_serve_stale(d)?),
            "serve_stale_policy" => {
                let args = d.remaining_args();
                let [policy] = args.as_slice() else {
                    return Err(arg_err(d));
                };
                if policy != "prefer_positive" {
                    return Err(fail(
                        d,
                        format_args!(
                            "invalid value for serve_stale_policy: {policy} (expected prefer_positive)"
                        ),
                    ));
                }
                c.prefer_positive = true;
                policy_at = Some(format!("{}:{}", d.file(), d.line()));
            }
            "servfail" => {
                let args = d.remaining_args();
                let [arg] = args.as_slice() else {
                    return Err(arg_err(d));
                };
                let dur = non_negative(d, arg, "invalid negative ttl for servfail")?;
                if dur > MAX_SERVFAIL_TTL {
                    // RFC 2308 prohibits caching SERVFAIL longer than 5 minutes.
                    return Err(fail(
                        d,
                        "caching SERVFAIL responses over 5 minutes is not permitted",
                    ));
                }
                c.servfail = dur;
            }
            "disable" => {
                let args = d.remaining_args();
                let Some((kind, names)) = args.split_first() else {
                    return Err(arg_err(d));
                };
                let zones = if names.is_empty() {
                    // Without zones CoreDNS disables for "."; the cache only handles its own
                    // zones, so its zones are the same set of names.
                    c.zones.clone()
                } else {
                    let mut zones = Vec::new();
                    for n in names {
                        let z = normalize_exact(n)
                            .map_err(|_| fail(d, format_args!("invalid disabled zone: {n}")))?;
                        zones.extend(z);
                    }
                    zones
                };
                match kind.as_str() {
                    "denial" => c.disable_denial = zones,
                    "success" => c.disable_success = zones,
                    _ => {
                        return Err(fail(
                            d,
                            "cache type for disable must be \"success\" or \"denial\"",
                        ));
                    }
                }
            }
            "keepttl" => {
                if d.next_arg() {
                    return Err(arg_err(d));
                }
                c.keepttl = true;
            }
            "max_bytes" => {
                let args = d.remaining_args();
                let [arg] = args.as_slice() else {
                    return Err(arg_err(d));
                };
                let n = parse_size(arg).ok_or_else(|| {
                    fail(
                        d,
                        format_args!("'{arg}' is not a size (bytes, or with K, M or G)"),
                    )
                })?;
                if n < MIN_MAX_BYTES {
                    return Err(fail(d, "max_bytes must be at least 64K"));
                }
                c.max_bytes = n;
            }
            // CoreDNS answers an unknown option with caddy's argument error.
            _ => return Err(arg_err(d)),
        }
    }

    if let Some(at) = policy_at
        && c.serve_stale.is_none()
    {
        // The policy only changes how stale entries are chosen; CoreDNS ignores it without
        // serve_stale. Keep the Corefile valid, but say that it does nothing.
        ringdns_plugin::warning!(
            "plugin/cache: {at}: serve_stale_policy has no effect without serve_stale"
        );
        c.prefer_positive = false;
    }
    Ok(c)
}

/// `success|denial CAPACITY [TTL [MINTTL]]`, the cursor on the option name.
fn parse_capacity(d: &mut Dispenser<'_>, cache: &mut Capacity) -> Result<(), Error> {
    let key = d.val().to_string();
    let args = d.remaining_args();
    // ringdns: CoreDNS ignores arguments after MINTTL; they are refused here.
    if args.is_empty() || args.len() > 3 {
        return Err(arg_err(d));
    }
    let cap = go_atoi(&args[0]).map_err(|m| fail(d, m))?;
    if cap < 0 {
        // ringdns: CoreDNS takes a negative capacity as its minimum size.
        return Err(fail(
            d,
            format_args!("{key} capacity can not be negative: {cap}"),
        ));
    }
    cache.entries = usize::try_from(cap).unwrap_or(usize::MAX);
    if let Some(ttl) = args.get(1) {
        let ttl = go_atoi(ttl).map_err(|m| fail(d, m))?;
        if ttl <= 0 {
            return Err(fail(
                d,
                format_args!("cache TTL can not be zero or negative: {ttl}"),
            ));
        }
        cache.max_ttl = seconds(ttl);
    }
    if let Some(min) = args.get(2) {
        let min = go_atoi(min).map_err(|m| fail(d, m))?;
        if min < 0 {
            return Err(fail(
                d,
                format_args!("cache min TTL can not be negative: {min}"),
            ));
        }
        cache.min_ttl = seconds(min);
    }
    Ok(())
}

/// `prefetch AMOUNT [DURATION [PERCENTAGE%]]`, the cursor on `prefetch`. `prefetch 0` turns
/// prefetching off, as in CoreDNS.
fn parse_prefetch(d: &mut Dispenser<'_>) -> Result<Option<Prefetch>, Error> {
    let args = d.remaining_args();
    if args.is_empty() || args.len() > 3 {
        return Err(arg_err(d));
    }
    let amount = go_atoi(&args[0]).map_err(|m| fail(d, m))?;
    if amount < 0 {
        return Err(fail(
            d,
            format_args!("prefetch amount should be positive: {amount}"),
        ));
    }
    let mut window = PREFETCH_WINDOW;
    if let Some(a) = args.get(1) {
        // ringdns: CoreDNS accepts a negative window, which resets the hit count on
        // every hit.
        window = non_negative(
            d,
            a,
            format_args!("prefetch duration can not be negative: {a}"),
        )?;
    }
    let mut percentage = PREFETCH_PERCENTAGE;
    if let Some(pct) = args.get(2) {
        let Some(&last) = pct.as_bytes().last() else {
            // CoreDNS indexes the last byte of an empty ("") argument and panics.
            return Err(fail(
                d,
                "last character of percentage should be `%`, but the percentage is empty",
            ));
        };
        let Some(digits) = pct.strip_suffix('%') else {
            return Err(fail(
                d,
                format_args!(
                    "last character of percentage should be `%`, but is: {}",
                    go_quote_byte(last)
                ),
            ));
        };
        let num = go_atoi(digits).map_err(|m| fail(d, m))?;
        if !(10..=90).contains(&num) {
            return Err(fail(
                d,
                format_args!("percentage should fall in range [10, 90]: {num}"),
            ));
        }
        percentage = u8::try_from(num).unwrap_or(PREFETCH_PERCENTAGE);
    }
    if amount == 0 {
        return Ok(None);
    }
    Ok(Some(Prefetch {
        amount: u32::try_from(amount).unwrap_or(u32::MAX),
        window,
        percentage,
    }))
}

/// `serve_stale [DURATION] [immediate [RESP_TTL [RECHECK]] | verify [TIMEOUT [RESP_TTL
/// [RECHECK]]]]`, the cursor on `serve_stale`.
fn parse_serve_stale(d: &mut Dispenser<'_>) -> Result<ServeStale, Error> {
    let args = d.remaining_args();
    if args.len() > 5 {
        return Err(arg_err(d));
    }
    let mut s = ServeStale {
        max_stale: STALE_DURATION,
        mode: StaleMode::Immediate,
        verify_timeout: Duration::ZERO,
        response_ttl: 0,
        recheck: Duration::ZERO,
    };
    if let Some(a) = args.first() {
        s.max_stale = non_negative(d, a, "invalid negative duration for serve_stale")?;
    }
    if let Some(m) = args.get(1) {
        let mode = m.to_lowercase();
        s.mode = match mode.as_str() {
            "immediate" => StaleMode::Immediate,
            "verify" => StaleMode::Verify,
            _ => {
                return Err(fail(
                    d,
                    format_args!("invalid value for serve_stale refresh mode: {mode}"),
                ));
            }
        };
    }
    let mut rest = args.get(2..).unwrap_or_default();
    if s.mode == StaleMode::Verify
        && let Some((a, tail)) = rest.split_first()
    {
        s.verify_timeout = non_negative(d, a, "invalid negative verify timeout for serve_stale")?;
        rest = tail;
    }
    if rest.len() > 2 {
        // `immediate` has no verify timeout, so it takes one argument fewer.
        return Err(arg_err(d));
    }
    if let Some(a) = rest.first() {
        let dur = non_negative(d, a, "invalid negative response TTL for serve_stale")?;
        // A TTL is whole seconds; a fraction is dropped.
        s.response_ttl = u32::try_from(dur.as_secs()).map_err(|_| {
            fail(
                d,
                format_args!(
                    "serve_stale response TTL {a} is over the largest TTL ({}s)",
                    u32::MAX
                ),
            )
        })?;
    }
    if let Some(a) = rest.get(1) {
        let dur = non_negative(d, a, "invalid negative failure recheck for serve_stale")?;
        if dur > MAX_RECHECK {
            return Err(fail(
                d,
                "serve_stale failure recheck over 5 minutes is not permitted",
            ));
        }
        s.recheck = dur;
    }
    Ok(s)
}

/// Whole seconds as a duration (callers have checked the sign).
fn seconds(n: i64) -> Duration {
    Duration::from_secs(n.unsigned_abs())
}

/// A size in bytes: plain, or with a `K`, `M` or `G` suffix (either case), as the global
/// block's sizes; `None` when it is not one or overflows.
fn parse_size(s: &str) -> Option<usize> {
    let (digits, mult) = match s.as_bytes().last() {
        Some(b'K' | b'k') => (&s[..s.len() - 1], 1usize << 10),
        Some(b'M' | b'm') => (&s[..s.len() - 1], 1 << 20),
        Some(b'G' | b'g') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<usize>().ok()?.checked_mul(mult)
}

/// Go's `%q` of a single byte (a rune literal such as `'x'`), as CoreDNS prints the last
/// character of a percentage.
fn go_quote_byte(b: u8) -> String {
    match b {
        b'\'' => "'\\''".to_string(),
        b'"' => "'\"'".to_string(),
        _ => {
            let q = go_quote(&char::from(b).to_string());
            format!("'{}'", &q[1..q.len() - 1])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::corefile::tokenize;
    use std::sync::Arc;

    fn run_in(input: &str, block: &BlockSetup) -> Result<CacheConfig, Error> {
        let toks = tokenize(input, &Arc::from("Corefile"));
        let mut d = Dispenser::new(&toks);
        parse(&mut d, block)
    }

    /// A block keyed `example.org` (the zones setup gets after key normalisation).
    fn block() -> BlockSetup {
        BlockSetup {
            zones: vec!["example.org.".to_string()],
            ..BlockSetup::default()
        }
    }

    fn ok(input: &str) -> CacheConfig {
        run_in(input, &block()).unwrap_or_else(|e| panic!("{input}: {e}"))
    }

    /// The full error line, as printed.
    fn err(input: &str) -> String {
        match run_in(input, &block()) {
            Ok(c) => panic!("{input}: expected an error, got {c:?}"),
            Err(e) => e.to_string(),
        }
    }

    /// `cache {\n OPTION\n}`: the option sits on line 2.
    fn opt(option: &str) -> CacheConfig {
        ok(&format!("cache {{\n{option}\n}}"))
    }

    fn opt_err(option: &str) -> String {
        err(&format!("cache {{\n{option}\n}}"))
    }

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn defaults_like_coredns() {
        let c = ok("cache");
        assert_eq!(c.zones, ["example.org."]);
        assert_eq!(
            c.success,
            Capacity {
                entries: 10_000,
                max_ttl: secs(3600),
                min_ttl: secs(5),
            }
        );
        assert_eq!(
            c.denial,
            Capacity {
                entries: 10_000,
                max_ttl: secs(1800),
                min_ttl: secs(5),
            }
        );
        assert_eq!(c.servfail, secs(5));
        assert_eq!(c.prefetch, None);
        assert_eq!(c.serve_stale, None);
        assert!(!c.prefer_positive && !c.keepttl);
        assert!(c.disable_success.is_empty() && c.disable_denial.is_empty());
        assert_eq!(c.max_bytes, 32 << 20);
        // An empty block is no block.
        assert_eq!(ok("cache {\n}"), c);
        // `{}` is one token, so a zone, as in CoreDNS's own test.
        assert_eq!(ok("cache {}").zones, ["{}."]);
    }

    #[test]
    fn zones_default_to_the_block_zones() {
        let b = BlockSetup {
            zones: vec!["a.example.".to_string(), "0.10.in-addr.arpa.".to_string()],
            ..BlockSetup::default()
        };
        let c = run_in("cache 30", &b).unwrap();
        assert_eq!(c.zones, b.zones);
        assert_eq!(
            run_in("cache", &BlockSetup::default()).unwrap().zones,
            Vec::<String>::new()
        );
    }

    #[test]
    fn zones_are_normalised() {
        assert_eq!(ok("cache Example.NL aaa").zones, ["example.nl.", "aaa."]);
        assert_eq!(ok("cache example.nl.").zones, ["example.nl."]);
        assert_eq!(ok("cache dns://Example.nl:1053").zones, ["example.nl."]);
        // CoreDNS's own test: a CIDR gives its reverse zones.
        assert_eq!(
            ok("cache 10.0.0.0/31").zones,
            ["0.0.0.10.in-addr.arpa.", "1.0.0.10.in-addr.arpa."]
        );
        assert_eq!(ok("cache 10.0.0.0/24").zones, ["0.0.10.in-addr.arpa."]);
    }

    #[test]
    fn bad_zones_are_dropped_like_coredns() {
        // CoreDNS's OriginsFromArgsOrServerBlock skips what it cannot normalise.
        assert_eq!(ok("cache a..b example.nl").zones, ["example.nl."]);
        assert_eq!(ok("cache a..b").zones, Vec::<String>::new());
    }

    #[test]
    fn leading_ttl_sets_both_caches() {
        let c = ok("cache 25 example.nl");
        assert_eq!(c.success.max_ttl, secs(25));
        assert_eq!(c.denial.max_ttl, secs(25));
        assert_eq!(c.zones, ["example.nl."]);
        assert_eq!(c.success.min_ttl, secs(5));
        // Go's Atoi: a sign is allowed; a number out of range is not a number, so a zone.
        assert_eq!(ok("cache +30").success.max_ttl, secs(30));
        let big = ok("cache 99999999999999999999");
        assert_eq!(big.zones, ["99999999999999999999."]);
        assert_eq!(big.success.max_ttl, secs(3600));
        // A block's own TTL wins over the leading one for its cache.
        let c = ok("cache 25 example.nl {\n success 10\n denial 10 15\n}");
        assert_eq!(c.success.max_ttl, secs(25));
        assert_eq!(c.denial.max_ttl, secs(15));
    }

    #[test]
    fn leading_ttl_must_be_positive() {
        assert_eq!(
            err("cache 0 example.nl"),
            "Corefile:1 - Error during parsing: plugin/cache: cache TTL can not be zero or \
             negative: 0"
        );
        assert_eq!(
            err("cache -1 example.nl"),
            "Corefile:1 - Error during parsing: plugin/cache: cache TTL can not be zero or \
             negative: -1"
        );
        assert_eq!(
            err("cache -00"),
            "Corefile:1 - Error during parsing: plugin/cache: cache TTL can not be zero or \
             negative: 0"
        );
    }

    #[test]
    fn only_once_per_block() {
        assert_eq!(
            err("cache\ncache"),
            "Corefile:2 - Error during parsing: plugin/cache: this plugin can only be used once \
             per Server Block"
        );
        assert_eq!(
            err("cache {\n success 10\n}\ncache 30"),
            "Corefile:4 - Error during parsing: plugin/cache: this plugin can only be used once \
             per Server Block"
        );
    }

    #[test]
    fn success_and_denial_options() {
        let c = opt("success 10");
        assert_eq!(c.success.entries, 10);
        assert_eq!(c.success.max_ttl, secs(3600));
        assert_eq!(c.denial.entries, 10_000);
        let c = opt("success 10 1800 30");
        assert_eq!(
            c.success,
            Capacity {
                entries: 10,
                max_ttl: secs(1800),
                min_ttl: secs(30),
            }
        );
        let c = opt("success 10\ndenial 10 15 2");
        assert_eq!(
            c.denial,
            Capacity {
                entries: 10,
                max_ttl: secs(15),
                min_ttl: secs(2),
            }
        );
        assert_eq!(opt("denial 0 15 0").denial.min_ttl, Duration::ZERO);
        assert_eq!(opt("denial 0").denial.entries, 0);
        // The last line wins, as in CoreDNS.
        assert_eq!(opt("success 10\nsuccess 20").success.entries, 20);
    }

    #[test]
    fn success_and_denial_errors() {
        assert_eq!(
            opt_err("success"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after 'success'"
        );
        assert_eq!(
            opt_err("denial aaa"),
            "Corefile:2 - Error during parsing: plugin/cache: strconv.Atoi: parsing \"aaa\": \
             invalid syntax"
        );
        assert_eq!(
            opt_err("success 10 0"),
            "Corefile:2 - Error during parsing: plugin/cache: cache TTL can not be zero or \
             negative: 0"
        );
        assert_eq!(
            opt_err("denial 10 -5"),
            "Corefile:2 - Error during parsing: plugin/cache: cache TTL can not be zero or \
             negative: -5"
        );
        assert_eq!(
            opt_err("success 10 20 -1"),
            "Corefile:2 - Error during parsing: plugin/cache: cache min TTL can not be \
             negative: -1"
        );
        assert_eq!(
            opt_err("success 10 1m"),
            "Corefile:2 - Error during parsing: plugin/cache: strconv.Atoi: parsing \"1m\": \
             invalid syntax"
        );
        assert_eq!(
            opt_err("success 99999999999999999999"),
            "Corefile:2 - Error during parsing: plugin/cache: strconv.Atoi: parsing \
             \"99999999999999999999\": value out of range"
        );
        // ringdns: refused where CoreDNS silently ignores or misreads.
        assert_eq!(
            opt_err("success 10 20 5 1"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after '1'"
        );
        assert_eq!(
            opt_err("denial -10"),
            "Corefile:2 - Error during parsing: plugin/cache: denial capacity can not be \
             negative: -10"
        );
    }

    #[test]
    fn prefetch_option() {
        assert_eq!(
            opt("prefetch 10").prefetch,
            Some(Prefetch {
                amount: 10,
                window: secs(60),
                percentage: 10,
            })
        );
        assert_eq!(
            opt("prefetch 2 30s 50%").prefetch,
            Some(Prefetch {
                amount: 2,
                window: secs(30),
                percentage: 50,
            })
        );
        assert_eq!(opt("prefetch 1 1m 90%").prefetch.unwrap().percentage, 90);
        assert_eq!(opt("prefetch 1 1m 10%").prefetch.unwrap().percentage, 10);
        // AMOUNT 0 is accepted and prefetches nothing (CoreDNS checks `prefetch > 0`).
        assert_eq!(opt("prefetch 0").prefetch, None);
        assert_eq!(opt("prefetch 0 1m 50%").prefetch, None);
    }

    #[test]
    fn prefetch_errors() {
        let e = |o: &str| opt_err(o);
        assert_eq!(
            e("prefetch"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after 'prefetch'"
        );
        assert_eq!(
            e("prefetch 1 1m 10% x"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after 'x'"
        );
        assert_eq!(
            e("prefetch -1"),
            "Corefile:2 - Error during parsing: plugin/cache: prefetch amount should be \
             positive: -1"
        );
        assert_eq!(
            e("prefetch 0 blurp"),
            "Corefile:2 - Error during parsing: plugin/cache: time: invalid duration \"blurp\""
        );
        assert_eq!(
            e("prefetch 1 10"),
            "Corefile:2 - Error during parsing: plugin/cache: time: missing unit in duration \
             \"10\""
        );
        assert_eq!(
            e("prefetch 1 1m 50"),
            "Corefile:2 - Error during parsing: plugin/cache: last character of percentage \
             should be `%`, but is: '0'"
        );
        assert_eq!(
            e("prefetch 1 1m 5%"),
            "Corefile:2 - Error during parsing: plugin/cache: percentage should fall in range \
             [10, 90]: 5"
        );
        assert_eq!(
            e("prefetch 1 1m 91%"),
            "Corefile:2 - Error during parsing: plugin/cache: percentage should fall in range \
             [10, 90]: 91"
        );
        assert_eq!(
            e("prefetch 1 1m %"),
            "Corefile:2 - Error during parsing: plugin/cache: strconv.Atoi: parsing \"\": \
             invalid syntax"
        );
        assert_eq!(
            e("prefetch 1 1m 5.5%"),
            "Corefile:2 - Error during parsing: plugin/cache: strconv.Atoi: parsing \"5.5\": \
             invalid syntax"
        );
        assert_eq!(
            e("prefetch 1 1m \"\""),
            "Corefile:2 - Error during parsing: plugin/cache: last character of percentage \
             should be `%`, but the percentage is empty"
        );
        assert_eq!(
            e("prefetch 1 -1m"),
            "Corefile:2 - Error during parsing: plugin/cache: prefetch duration can not be \
             negative: -1m"
        );
    }

    #[test]
    fn go_quote_byte_like_go() {
        assert_eq!(go_quote_byte(b'0'), "'0'");
        assert_eq!(go_quote_byte(b'\''), "'\\''");
        assert_eq!(go_quote_byte(b'"'), "'\"'");
        assert_eq!(go_quote_byte(b'\\'), "'\\\\'");
        assert_eq!(go_quote_byte(b'\n'), "'\\n'");
        assert_eq!(go_quote_byte(0x01), "'\\x01'");
        // Go prints the last byte of a multi-byte character as the Latin-1 rune it names.
        assert_eq!(go_quote_byte(0xa9), "'©'");
    }

    fn stale(option: &str) -> ServeStale {
        opt(option)
            .serve_stale
            .unwrap_or_else(|| panic!("{option}: no serve_stale"))
    }

    #[test]
    fn serve_stale_defaults_and_modes() {
        let base = ServeStale {
            max_stale: secs(3600),
            mode: StaleMode::Immediate,
            verify_timeout: Duration::ZERO,
            response_ttl: 0,
            recheck: Duration::ZERO,
        };
        assert_eq!(stale("serve_stale"), base);
        // CoreDNS's own cases.
        assert_eq!(stale("serve_stale 20m").max_stale, secs(1200));
        assert_eq!(stale("serve_stale 1h20m").max_stale, secs(4800));
        assert_eq!(stale("serve_stale 0m").max_stale, Duration::ZERO);
        assert_eq!(stale("serve_stale 0").max_stale, Duration::ZERO);
        assert_eq!(stale("serve_stale 0 verify").mode, StaleMode::Verify);
        assert_eq!(stale("serve_stale 0 immediate").mode, StaleMode::Immediate);
        assert_eq!(stale("serve_stale 0 VERIFY").mode, StaleMode::Verify);
        assert_eq!(
            stale("serve_stale 2h immediate"),
            ServeStale {
                max_stale: secs(7200),
                ..base.clone()
            }
        );
    }

    #[test]
    fn serve_stale_timeout_response_ttl_and_recheck() {
        assert_eq!(
            stale("serve_stale 1h immediate 30s 30s"),
            ServeStale {
                max_stale: secs(3600),
                mode: StaleMode::Immediate,
                verify_timeout: Duration::ZERO,
                response_ttl: 30,
                recheck: secs(30),
            }
        );
        assert_eq!(
            stale("serve_stale 1h verify 100ms 30s 30s"),
            ServeStale {
                max_stale: secs(3600),
                mode: StaleMode::Verify,
                verify_timeout: Duration::from_millis(100),
                response_ttl: 30,
                recheck: secs(30),
            }
        );
        let s = stale("serve_stale 1h verify 100ms");
        assert_eq!(s.verify_timeout, Duration::from_millis(100));
        assert_eq!((s.response_ttl, s.recheck), (0, Duration::ZERO));
        let s = stale("serve_stale 1h verify 0 1m");
        assert_eq!((s.verify_timeout, s.response_ttl), (Duration::ZERO, 60));
        assert_eq!(stale("serve_stale 1h immediate 10s").response_ttl, 10);
        // Whole seconds: a fraction is dropped.
        assert_eq!(stale("serve_stale 1h immediate 1500ms").response_ttl, 1);
        assert_eq!(stale("serve_stale 1h immediate 0s 5m").recheck, secs(300));
        // The last line wins.
        assert_eq!(
            stale("serve_stale 1h verify 1s\nserve_stale 2h").mode,
            StaleMode::Immediate
        );
    }

    #[test]
    fn serve_stale_errors() {
        let e = |o: &str| opt_err(o);
        // CoreDNS's own failing cases.
        assert_eq!(
            e("serve_stale 20"),
            "Corefile:2 - Error during parsing: plugin/cache: time: missing unit in duration \
             \"20\""
        );
        assert_eq!(
            e("serve_stale -20m"),
            "Corefile:2 - Error during parsing: plugin/cache: invalid negative duration for \
             serve_stale"
        );
        assert_eq!(
            e("serve_stale aa"),
            "Corefile:2 - Error during parsing: plugin/cache: time: invalid duration \"aa\""
        );
        assert_eq!(
            e("serve_stale 1m nono"),
            "Corefile:2 - Error during parsing: plugin/cache: invalid value for serve_stale \
             refresh mode: nono"
        );
        assert_eq!(
            e("serve_stale 0 after nono"),
            "Corefile:2 - Error during parsing: plugin/cache: invalid value for serve_stale \
             refresh mode: after"
        );
        assert_eq!(
            e("serve_stale 1m Verified"),
            "Corefile:2 - Error during parsing: plugin/cache: invalid value for serve_stale \
             refresh mode: verified"
        );
        // The mode is positional: DURATION comes first.
        assert_eq!(
            e("serve_stale verify"),
            "Corefile:2 - Error during parsing: plugin/cache: time: invalid duration \"verify\""
        );
        assert_eq!(
            e("serve_stale 1h verify -1s"),
            "Corefile:2 - Error during parsing: plugin/cache: invalid negative verify timeout \
             for serve_stale"
        );
        assert_eq!(
            e("serve_stale 1h immediate -30s"),
            "Corefile:2 - Error during parsing: plugin/cache: invalid negative response TTL for \
             serve_stale"
        );
        assert_eq!(
            e("serve_stale 1h immediate 30"),
            "Corefile:2 - Error during parsing: plugin/cache: time: missing unit in duration \
             \"30\""
        );
        assert_eq!(
            e("serve_stale 1h verify 1s 30s -1s"),
            "Corefile:2 - Error during parsing: plugin/cache: invalid negative failure recheck \
             for serve_stale"
        );
        assert_eq!(
            e("serve_stale 1h immediate 30s 6m"),
            "Corefile:2 - Error during parsing: plugin/cache: serve_stale failure recheck over \
             5 minutes is not permitted"
        );
        assert_eq!(
            e("serve_stale 1h immediate 30s 5m1s"),
            "Corefile:2 - Error during parsing: plugin/cache: serve_stale failure recheck over \
             5 minutes is not permitted"
        );
        assert_eq!(
            e("serve_stale 1h immediate 10000000000s"),
            "Corefile:2 - Error during parsing: plugin/cache: serve_stale response TTL \
             10000000000s is over the largest TTL (4294967295s)"
        );
        // Too many arguments: immediate takes at most 4, verify at most 5.
        assert_eq!(
            e("serve_stale 1h immediate 1s 1s 1s"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after '1s'"
        );
        assert_eq!(
            e("serve_stale 1h verify 1s 1s 1s 1s"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after '1s'"
        );
    }

    #[test]
    fn serve_stale_policy_option() {
        let c = opt("serve_stale 1h immediate\nserve_stale_policy prefer_positive");
        assert!(c.prefer_positive);
        // Either order.
        let c = opt("serve_stale_policy prefer_positive\nserve_stale");
        assert!(c.prefer_positive);
        // Without serve_stale it does nothing (a warning is logged), as in CoreDNS.
        assert!(!opt("serve_stale_policy prefer_positive").prefer_positive);
        assert_eq!(
            opt_err("serve_stale_policy"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after 'serve_stale_policy'"
        );
        assert_eq!(
            opt_err("serve_stale_policy prefer_positive x"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after 'x'"
        );
        assert_eq!(
            opt_err("serve_stale\nserve_stale_policy prefer_negative"),
            "Corefile:3 - Error during parsing: plugin/cache: invalid value for \
             serve_stale_policy: prefer_negative (expected prefer_positive)"
        );
    }

    #[test]
    fn servfail_option() {
        // CoreDNS's own cases.
        assert_eq!(opt("servfail 1s").servfail, secs(1));
        assert_eq!(opt("servfail 5m").servfail, secs(300));
        assert_eq!(opt("servfail 0s").servfail, Duration::ZERO);
        assert_eq!(opt("servfail 0").servfail, Duration::ZERO);
        let e = |o: &str| opt_err(o);
        assert_eq!(
            e("servfail"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after 'servfail'"
        );
        assert_eq!(
            e("servfail 6m"),
            "Corefile:2 - Error during parsing: plugin/cache: caching SERVFAIL responses over 5 \
             minutes is not permitted"
        );
        assert_eq!(
            e("servfail 20"),
            "Corefile:2 - Error during parsing: plugin/cache: time: missing unit in duration \
             \"20\""
        );
        assert_eq!(
            e("servfail -1s"),
            "Corefile:2 - Error during parsing: plugin/cache: invalid negative ttl for servfail"
        );
        assert_eq!(
            e("servfail aa"),
            "Corefile:2 - Error during parsing: plugin/cache: time: invalid duration \"aa\""
        );
        assert_eq!(
            e("servfail 1m invalid"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after 'invalid'"
        );
    }

    #[test]
    fn disable_option() {
        // CoreDNS's own cases.
        let c = opt("disable denial example.com example.org");
        assert_eq!(c.disable_denial, ["example.com.", "example.org."]);
        assert!(c.disable_success.is_empty());
        let c = opt("disable success example.com example.org");
        assert_eq!(c.disable_success, ["example.com.", "example.org."]);
        assert!(c.disable_denial.is_empty());
        let c =
            opt("disable denial example.com example.org\ndisable success example.com example.org");
        assert_eq!(c.disable_denial, ["example.com.", "example.org."]);
        assert_eq!(c.disable_success, ["example.com.", "example.org."]);
        // Without zones: every zone of the cache.
        assert_eq!(opt("disable denial").disable_denial, ["example.org."]);
        assert_eq!(
            ok("cache a.example b.example {\n disable success\n}").disable_success,
            ["a.example.", "b.example."]
        );
        // Normalised like the cache's zones.
        assert_eq!(
            opt("disable success Sub.Example.ORG 10.0.0.0/24").disable_success,
            ["sub.example.org.", "0.0.10.in-addr.arpa."]
        );
        // The last line for a cache wins.
        assert_eq!(
            opt("disable success a.example\ndisable success b.example").disable_success,
            ["b.example."]
        );
    }

    #[test]
    fn disable_errors() {
        assert_eq!(
            opt_err("disable"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after 'disable'"
        );
        assert_eq!(
            opt_err("disable invalid example.com example.org"),
            "Corefile:2 - Error during parsing: plugin/cache: cache type for disable must be \
             \"success\" or \"denial\""
        );
        assert_eq!(
            opt_err("disable Success"),
            "Corefile:2 - Error during parsing: plugin/cache: cache type for disable must be \
             \"success\" or \"denial\""
        );
        assert_eq!(
            opt_err("disable success a..b"),
            "Corefile:2 - Error during parsing: plugin/cache: invalid disabled zone: a..b"
        );
    }

    #[test]
    fn keepttl_option() {
        assert!(opt("keepttl").keepttl);
        assert_eq!(
            opt_err("keepttl 10"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after '10'"
        );
    }

    #[test]
    fn max_bytes_option() {
        assert_eq!(opt("max_bytes 64K").max_bytes, 64 << 10);
        assert_eq!(opt("max_bytes 65536").max_bytes, 65536);
        assert_eq!(opt("max_bytes 128m").max_bytes, 128 << 20);
        assert_eq!(opt("max_bytes 2G").max_bytes, 2 << 30);
        let e = |o: &str| opt_err(o);
        assert_eq!(
            e("max_bytes"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after 'max_bytes'"
        );
        assert_eq!(
            e("max_bytes 1M 2M"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after '2M'"
        );
        assert_eq!(
            e("max_bytes 65535"),
            "Corefile:2 - Error during parsing: plugin/cache: max_bytes must be at least 64K"
        );
        assert_eq!(
            e("max_bytes 0"),
            "Corefile:2 - Error during parsing: plugin/cache: max_bytes must be at least 64K"
        );
        for bad in ["lots", "M", "-1M", "1.5M", "1T", "99999999999999999999G"] {
            assert_eq!(
                e(&format!("max_bytes {bad}")),
                format!(
                    "Corefile:2 - Error during parsing: plugin/cache: '{bad}' is not a size \
                     (bytes, or with K, M or G)"
                )
            );
        }
    }

    #[test]
    fn unknown_option_is_an_argument_error() {
        // CoreDNS's own cases.
        assert_eq!(
            err("cache example.nl {\n    positive 15\n    negative aaa\n}"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after 'positive'"
        );
        assert_eq!(
            err("cache 1 example.nl {\n positive 0\n prefetch -1\n}"),
            "Corefile:2 - Error during parsing: plugin/cache: Wrong argument count or \
             unexpected line ending after 'positive'"
        );
        // A nested block is not an option.
        assert_eq!(
            opt_err("success 10 {\n}"),
            "Corefile:2 - Error during parsing: plugin/cache: Unexpected token '{', expecting \
             argument"
        );
    }

    #[test]
    fn everything_at_once() {
        let c = ok("cache 300 example.nl {\n\
             success 5000 600 10\n\
             denial 2500 60\n\
             prefetch 5 2m 20%\n\
             serve_stale 30m verify 250ms 30s 1m\n\
             serve_stale_policy prefer_positive\n\
             servfail 2s\n\
             disable denial sub.example.nl\n\
             keepttl\n\
             max_bytes 1M\n\
             }");
        assert_eq!(
            c,
            CacheConfig {
                zones: vec!["example.nl.".to_string()],
                success: Capacity {
                    entries: 5000,
                    max_ttl: secs(600),
                    min_ttl: secs(10),
                },
                denial: Capacity {
                    entries: 2500,
                    max_ttl: secs(60),
                    min_ttl: secs(5),
                },
                servfail: secs(2),
                prefetch: Some(Prefetch {
                    amount: 5,
                    window: secs(120),
                    percentage: 20,
                }),
                serve_stale: Some(ServeStale {
                    max_stale: secs(1800),
                    mode: StaleMode::Verify,
                    verify_timeout: Duration::from_millis(250),
                    response_ttl: 30,
                    recheck: secs(60),
                }),
                prefer_positive: true,
                disable_success: Vec::new(),
                disable_denial: vec!["sub.example.nl.".to_string()],
                keepttl: true,
                max_bytes: 1 << 20,
                view: String::new(),
            }
        );
    }

    #[test]
    fn odd_input_does_not_panic() {
        for input in [
            "cache \"\"",
            "cache \"\" {\n}",
            "cache {\n\"\"\n}",
            "cache {\nsuccess \"\"\n}",
            "cache {\nprefetch \"\" \"\" \"\"\n}",
            "cache {\nserve_stale \"\" \"\" \"\" \"\" \"\"\n}",
            "cache {\nservfail \"\"\n}",
            "cache {\ndisable \"\" \"\"\n}",
            "cache {\nmax_bytes \"\"\n}",
            "cache {\nmax_bytes K\n}",
            "cache {\nprefetch 1 1m é\n}",
            "cache {\nserve_stale 1h verify 9999999999999999999h\n}",
            "cache {\n{\n}\n}",
            "cache {",
            "cache {\nsuccess",
            "cache 1 2 3 {\nkeepttl\n",
            "cache :: 1::/64 ::ffff:0:0/96 0::/0",
        ] {
            let _ = run_in(input, &block());
        }
        assert_eq!(
            opt_err("prefetch 1 1m é"),
            "Corefile:2 - Error during parsing: plugin/cache: last character of percentage \
             should be `%`, but is: '©'"
        );
    }
}
