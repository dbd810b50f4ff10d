//! Parsing of the `loadbalance` directive, as CoreDNS's `plugin/loadbalance/setup.go`
//! parses it: the same syntax, defaults and error texts, each prefixed `plugin/loadbalance: `
//! as CoreDNS's `plugin.Error` prefixes it.
//!
//! ```text
//! loadbalance [round_robin | weighted WEIGHTFILE [{ reload DURATION }]] [{ prefer CIDR... }]
//! ```
//!
//! As in CoreDNS, `weighted`'s block takes `reload` only, so `prefer` goes with
//! `round_robin` (or no policy); a later `loadbalance` in the block replaces the policy and
//! adds its subnets to the earlier ones.

use ringdns_plugin::BlockSetup;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::duration;
use ringdns_plugin::reverse::Cidr;
use std::path::PathBuf;
use std::time::Duration;

/// CoreDNS's default period between two reads of the weight file.
pub const DEFAULT_RELOAD: Duration = Duration::from_secs(30);

/// The policy of a `loadbalance` directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySpec {
    /// `round_robin` (the default): shuffle addresses and MX.
    RoundRobin,
    /// `weighted FILE`: draw the first address by the file's weights, re-read every
    /// `reload` (zero: never).
    Weighted {
        /// The weight file, resolved against `root`.
        path: PathBuf,
        /// `reload DURATION`.
        reload: Duration,
    },
}

/// What the block's `loadbalance` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The policy.
    pub policy: PolicySpec,
    /// `prefer CIDR...`, in order.
    pub prefer: Vec<Cidr>,
}

fn fail(d: &Dispenser<'_>, msg: impl std::fmt::Display) -> Error {
    d.plugin_err("loadbalance", msg)
}

/// Parses every `loadbalance` of the block.
pub fn parse(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Options, Error> {
    let mut o = Options {
        policy: PolicySpec::RoundRobin,
        prefer: Vec::new(),
    };
    while d.next() {
        let args = d.remaining_args();
        match args.first().map(String::as_str) {
            None => o.policy = PolicySpec::RoundRobin,
            Some("round_robin") => {
                if args.len() > 1 {
                    return Err(fail(d, "unknown property for round_robin"));
                }
                o.policy = PolicySpec::RoundRobin;
            }
            Some("weighted") => {
                if args.len() < 2 {
                    return Err(fail(d, "missing weight file argument"));
                }
                if args.len() > 2 {
                    return Err(fail(d, "unexpected argument(s)"));
                }
                let path = block.resolve_path(&args[1]);
                let mut reload = DEFAULT_RELOAD;
                while d.next_block() {
                    match d.val() {
                        "reload" => {
                            let t = d.remaining_args();
                            if t.is_empty() {
                                return Err(fail(d, "reload duration value is missing"));
                            }
                            if t.len() > 1 {
                                return Err(fail(d, "unexpected argument"));
                            }
                            // A negative period (Go parses it, and its ticker then panics)
                            // is refused as invalid.
                            reload = match duration::parse_signed(&t[0]) {
                                Ok((false, v)) => v,
                                _ => {
                                    return Err(fail(
                                        d,
                                        format_args!("invalid reload duration '{}'", t[0]),
                                    ));
                                }
                            };
                        }
                        other => {
                            return Err(fail(d, format_args!("unknown property '{other}'")));
                        }
                    }
                }
                // CoreDNS replaces its whole state here, subnets included.
                o = Options {
                    policy: PolicySpec::Weighted { path, reload },
                    prefer: Vec::new(),
                };
            }
            Some(other) => return Err(fail(d, format_args!("unknown policy: {other}"))),
        }
        while d.next_block() {
            match d.val() {
                "prefer" => {
                    for cidr in d.remaining_args() {
                        // Go's `ParseCIDR`, and its error: `invalid CIDR address: TEXT`.
                        let s = Cidr::parse(&cidr).ok_or_else(|| {
                            fail(
                                d,
                                format_args!(
                                    "invalid CIDR {}: invalid CIDR address: {cidr}",
                                    go_q(&cidr)
                                ),
                            )
                        })?;
                        o.prefer.push(s);
                    }
                }
                other => return Err(fail(d, format_args!("unknown property '{other}'"))),
            }
        }
    }
    Ok(o)
}

/// Go's `%q` of a Corefile token.
fn go_q(s: &str) -> String {
    ringdns_plugin::quote::go_quote(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LoadBalance;

    fn parse_text(text: &str) -> Result<Options, String> {
        let (block, config) = ringdns_testkit::config::<LoadBalance>(text)?;
        let _ = block;
        Ok(config.options.clone())
    }

    fn err(text: &str) -> String {
        parse_text(text).unwrap_err()
    }

    #[test]
    fn policies_and_defaults() {
        let o = parse_text(". {\n loadbalance\n}\n").unwrap();
        assert_eq!(o.policy, PolicySpec::RoundRobin);
        assert!(o.prefer.is_empty());
        let o = parse_text(". {\n loadbalance round_robin {\n prefer 10.0.0.0/8 ::/0\n prefer 192.168.0.0/16\n }\n}\n").unwrap();
        assert_eq!(o.prefer.len(), 3);
        let o = parse_text(". {\n loadbalance {\n prefer 10.0.0.0/8\n }\n}\n").unwrap();
        assert_eq!(o.prefer, [Cidr::parse("10.0.0.0/8").unwrap()]);
        // Go's ParseCIDR takes a length with leading zeros, and an IPv4-mapped network.
        let o =
            parse_text(". {\n loadbalance {\n prefer 10.0.0.0/0008 ::ffff:10.0.0.0/104\n }\n}\n")
                .unwrap();
        assert_eq!(
            o.prefer,
            [
                Cidr::parse("10.0.0.0/8").unwrap(),
                Cidr::parse("::ffff:10.0.0.0/104").unwrap()
            ]
        );
        assert!(
            o.prefer
                .iter()
                .all(|c| c.contains("10.1.2.3".parse().unwrap()))
        );
        let o = parse_text(". {\n loadbalance weighted /nonexistent/w {\n reload 10s\n }\n}\n")
            .unwrap();
        assert_eq!(
            o.policy,
            PolicySpec::Weighted {
                path: "/nonexistent/w".into(),
                reload: Duration::from_secs(10)
            }
        );
        let o = parse_text(". {\n loadbalance weighted /nonexistent/w\n}\n").unwrap();
        assert!(
            matches!(o.policy, PolicySpec::Weighted { reload, .. } if reload == DEFAULT_RELOAD)
        );
    }

    #[test]
    fn errors_are_coredns_texts() {
        let cases = [
            (
                "loadbalance round_robin x",
                "plugin/loadbalance: unknown property for round_robin",
            ),
            (
                "loadbalance weighted",
                "plugin/loadbalance: missing weight file argument",
            ),
            (
                "loadbalance weighted a b",
                "plugin/loadbalance: unexpected argument(s)",
            ),
            (
                "loadbalance weighted /nonexistent/w {\n reload\n }",
                "plugin/loadbalance: reload duration value is missing",
            ),
            (
                "loadbalance weighted /nonexistent/w {\n reload 1s 2s\n }",
                "plugin/loadbalance: unexpected argument",
            ),
            (
                "loadbalance weighted /nonexistent/w {\n reload ten\n }",
                "plugin/loadbalance: invalid reload duration 'ten'",
            ),
            (
                "loadbalance weighted /nonexistent/w {\n reload -1s\n }",
                "plugin/loadbalance: invalid reload duration '-1s'",
            ),
            (
                "loadbalance weighted /nonexistent/w {\n prefer 10.0.0.0/8\n }",
                "plugin/loadbalance: unknown property 'prefer'",
            ),
            (
                "loadbalance random",
                "plugin/loadbalance: unknown policy: random",
            ),
            (
                "loadbalance {\n prefer 10.0.0.0/33\n }",
                "plugin/loadbalance: invalid CIDR \"10.0.0.0/33\": invalid CIDR address: 10.0.0.0/33",
            ),
            (
                "loadbalance {\n shuffle\n }",
                "plugin/loadbalance: unknown property 'shuffle'",
            ),
        ];
        for (directive, want) in cases {
            let e = err(&format!(". {{\n {directive}\n}}\n"));
            assert!(e.ends_with(want), "{directive}: {e}");
            assert!(e.contains("Error during parsing"), "{directive}: {e}");
        }
    }
}
