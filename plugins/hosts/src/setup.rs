//! Parsing of the `hosts` directive, as CoreDNS's `plugin/hosts/setup.go` parses it: the
//! same syntax, defaults, checks and error texts. Every error is a Corefile error at the
//! token it is about, its message prefixed `plugin/hosts: ` as CoreDNS prefixes it.
//!
//! ```text
//! hosts [FILE [ZONES...]] {
//!     [INLINE]
//!     ttl SECONDS
//!     no_reverse
//!     reload DURATION
//!     fallthrough [ZONES...]
//!     fallthrough_unsupported
//! }
//! ```
//!
//! As in CoreDNS, a line of the block that is no option is an inline hosts line, until a
//! `fallthrough` has been seen; after it, such a line is `unknown property`.

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::duration::{go_atoi, parse_signed};
use ringdns_plugin::normalize::normalize_exact;
use ringdns_plugin::quote::go_quote;
use ringdns_plugin::wire::name_to_wire;
use ringdns_plugin::{BlockSetup, Fallthrough};
use std::path::PathBuf;
use std::time::Duration;

/// CoreDNS's default hosts file.
pub const DEFAULT_PATH: &str = "/etc/hosts";
/// CoreDNS's default TTL of the records served.
pub const DEFAULT_TTL: u32 = 3600;
/// CoreDNS's default period between two looks at the file.
pub const DEFAULT_RELOAD: Duration = Duration::from_secs(5);

/// What the directive says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The hosts file, resolved against `root`.
    pub path: PathBuf,
    /// The zones served, lower-case FQDNs (CoreDNS's `Origins`).
    pub zones: Vec<String>,
    /// The same in wire form.
    pub zone_wires: Vec<Vec<u8>>,
    /// `fallthrough [ZONES...]`.
    pub fall: Fallthrough,
    /// `fallthrough_unsupported`.
    pub fall_unsupported: bool,
    /// `ttl SECONDS`.
    pub ttl: u32,
    /// Off with `no_reverse`.
    pub reverse: bool,
    /// `reload DURATION`; zero: the file is read once.
    pub reload: Duration,
    /// The inline lines, each as its tokens joined by one space.
    pub inline: Vec<String>,
}

/// `plugin/hosts: MSG` at the current token.
fn fail(d: &Dispenser<'_>, msg: impl std::fmt::Display) -> Error {
    d.plugin_err("hosts", msg)
}

/// Parses the block's `hosts` directive (once per block: a second one is CoreDNS's
/// `plugin.ErrOnce`).
pub fn parse(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Options, Error> {
    let (mut out, mut seen) = (None, false);
    while d.next() {
        ringdns_plugin::once_per_block_of(d, "hosts", &mut seen)?;
        out = Some(stanza(d, block)?);
    }
    Ok(out.unwrap_or_else(|| defaults(block)))
}

/// CoreDNS's defaults, for the block's zones.
fn defaults(block: &BlockSetup) -> Options {
    Options {
        path: PathBuf::from(DEFAULT_PATH),
        zone_wires: wires(&block.zones),
        zones: block.zones.clone(),
        fall: Fallthrough::default(),
        fall_unsupported: false,
        ttl: DEFAULT_TTL,
        reverse: true,
        reload: DEFAULT_RELOAD,
        inline: Vec::new(),
    }
}

fn wires(zones: &[String]) -> Vec<Vec<u8>> {
    zones.iter().filter_map(|z| name_to_wire(z).ok()).collect()
}

/// Zone arguments as CoreDNS's `plugin.OriginsFromArgsOrServerBlock` takes them: each
/// normalised (lower case, qualified, a CIDR as its reverse zones). CoreDNS drops one it
/// cannot normalise without a word; ringdns says so.
fn zones_of(args: &[String], what: &str) -> Vec<String> {
    let mut zones = Vec::new();
    for a in args {
        match normalize_exact(a) {
            Ok(z) => zones.extend(z.into_iter().filter(|z| name_to_wire(z).is_ok())),
            Err(e) => ringdns_plugin::warning!("plugin/hosts: ignoring {what} '{a}': {e}"),
        }
    }
    zones
}

/// One `hosts [FILE [ZONES...]] { ... }`, the cursor on `hosts`.
fn stanza(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Options, Error> {
    let mut o = defaults(block);
    let args = d.remaining_args();
    if let Some((file, zones)) = args.split_first() {
        o.path = block.resolve_path(file);
        let shown = o.path.display().to_string();
        match std::fs::metadata(&o.path) {
            Ok(m) if m.is_dir() => ringdns_plugin::warning!(
                "plugin/hosts: Hosts file {} is a directory",
                go_quote(&shown)
            ),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                ringdns_plugin::warning!("plugin/hosts: File does not exist: {shown}")
            }
            Err(e) => {
                return Err(fail(
                    d,
                    format_args!("unable to access hosts file '{shown}': stat {shown}: {e}"),
                ));
            }
        }
        if !zones.is_empty() {
            o.zones = zones_of(zones, "zone");
            o.zone_wires = wires(&o.zones);
        }
    }

    while d.next_block() {
        let key = d.val().to_string();
        match key.as_str() {
            "fallthrough" => {
                let args = d.remaining_args();
                o.fall = fallthrough(d, &args)?;
            }
            "fallthrough_unsupported" => {
                if !d.remaining_args().is_empty() {
                    return Err(d.plugin_arg_err("hosts"));
                }
                o.fall_unsupported = true;
            }
            "no_reverse" => o.reverse = false,
            "ttl" => {
                let args = d.remaining_args();
                let Some(arg) = args.first() else {
                    return Err(fail(d, "ttl needs a time in second"));
                };
                let ttl = go_atoi(arg).map_err(|_| fail(d, "ttl needs a number of second"))?;
                if ttl <= 0 || ttl > 65535 {
                    return Err(fail(d, "ttl provided is invalid"));
                }
                o.ttl = ttl as u32;
            }
            "reload" => {
                let args = d.remaining_args();
                let [arg] = args.as_slice() else {
                    return Err(fail(d, "reload needs a duration (zero seconds to disable)"));
                };
                let (negative, reload) = parse_signed(arg)
                    .map_err(|_| fail(d, format_args!("invalid duration for reload '{arg}'")))?;
                if negative {
                    return Err(fail(
                        d,
                        format_args!("invalid negative duration for reload '{arg}'"),
                    ));
                }
                o.reload = reload;
            }
            _ if o.fall.is_off() => {
                let mut line = key;
                for a in d.remaining_args() {
                    line.push(' ');
                    line.push_str(&a);
                }
                o.inline.push(line);
            }
            _ => return Err(fail(d, format_args!("unknown property '{key}'"))),
        }
    }
    if o.fall_unsupported && o.fall.is_off() {
        return Err(fail(d, "fallthrough_unsupported requires fallthrough"));
    }
    Ok(o)
}

/// `fallthrough [ZONES...]` as CoreDNS's `fall.SetZonesFromArgs`: no zones is every name;
/// zones are normalised as the plugin's own (a CIDR gives its reverse zones).
fn fallthrough(d: &Dispenser<'_>, args: &[String]) -> Result<Fallthrough, Error> {
    if args.is_empty() {
        return Fallthrough::parse(&[]).map_err(|e| fail(d, e));
    }
    let zones = zones_of(args, "fallthrough zone");
    if zones.is_empty() {
        // Every zone was dropped: CoreDNS is then left with no fallthrough at all.
        return Ok(Fallthrough::default());
    }
    Fallthrough::parse(&zones).map_err(|e| fail(d, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::wire::Name;

    /// Runs the setup on `hosts` lines inside a `.` block (and `root` when given).
    fn opts(directive: &str) -> Result<Options, String> {
        opts_in(".", directive)
    }

    fn opts_in(key: &str, directive: &str) -> Result<Options, String> {
        let text = format!("{key} {{\n{directive}\n}}\n");
        let cf = ringdns_plugin::corefile::parse("Corefile", &text, &|n| n == "hosts")
            .map_err(|e| e.to_string())?;
        let dir = &cf.blocks[0].directives[0];
        let block = BlockSetup {
            zones: vec![if key == "." {
                ".".to_string()
            } else {
                format!("{key}.")
            }],
            ..BlockSetup::default()
        };
        parse(&mut Dispenser::new(&dir.tokens), &block).map_err(|e| e.to_string())
    }

    fn err(directive: &str) -> String {
        opts(directive).expect_err(directive)
    }

    fn through(o: &Options, name: &str) -> bool {
        let w = name_to_wire(name).unwrap();
        o.fall.through(&Name::from_wire(&w).unwrap())
    }

    #[test]
    fn defaults_are_coredns_ones() {
        let o = opts("hosts").unwrap();
        assert_eq!(o.path, PathBuf::from("/etc/hosts"));
        assert_eq!(o.zones, ["."]);
        assert_eq!(o.zone_wires, [vec![0u8]]);
        assert!(o.fall.is_off());
        assert!(!o.fall_unsupported);
        assert_eq!(o.ttl, 3600);
        assert!(o.reverse);
        assert_eq!(o.reload, Duration::from_secs(5));
        assert!(o.inline.is_empty());
    }

    #[test]
    fn the_block_zones_are_the_default_zones() {
        let o = opts_in("example.org", "hosts").unwrap();
        assert_eq!(o.zones, ["example.org."]);
        let o = opts_in("example.org", "hosts /tmp/h").unwrap();
        assert_eq!(o.zones, ["example.org."]);
    }

    /// CoreDNS's setup_test.go `TestHostsParse`, with the paths it checks.
    #[test]
    fn file_and_zones() {
        let o = opts("hosts /tmp").unwrap();
        assert_eq!(o.path, PathBuf::from("/tmp"));
        let o = opts("hosts /etc/hosts miek.nl.").unwrap();
        assert_eq!(o.zones, ["miek.nl."]);
        let o = opts("hosts /etc/hosts miek.nl. pun.gent.").unwrap();
        assert_eq!(o.zones, ["miek.nl.", "pun.gent."]);
        let o = opts("hosts /etc/hosts miek.nl 10.0.0.9/8 {\n fallthrough\n}").unwrap();
        assert_eq!(o.zones, ["miek.nl.", "10.in-addr.arpa."]);
        assert!(through(&o, "anything."));
        let o = opts("hosts /etc/hosts MIEK.nl").unwrap();
        assert_eq!(o.zones, ["miek.nl."]);
        assert_eq!(o.zone_wires, [name_to_wire("miek.nl.").unwrap()]);
    }

    #[test]
    fn a_relative_file_is_under_root() {
        let text = ". {\n hosts my.hosts\n}\n";
        let cf = ringdns_plugin::corefile::parse("Corefile", text, &|n| n == "hosts").unwrap();
        let block = BlockSetup {
            zones: vec![".".into()],
            root: PathBuf::from("/srv/dns"),
            ..BlockSetup::default()
        };
        let o = parse(
            &mut Dispenser::new(&cf.blocks[0].directives[0].tokens),
            &block,
        )
        .unwrap();
        assert_eq!(o.path, PathBuf::from("/srv/dns/my.hosts"));
        let o = opts("hosts my.hosts").unwrap();
        assert_eq!(o.path, PathBuf::from("my.hosts"));
    }

    #[test]
    fn once_per_block() {
        assert_eq!(
            err("hosts /etc/hosts {\n fallthrough\n}\nhosts /etc/hosts {\n fallthrough\n}"),
            "Corefile:5 - Error during parsing: plugin/hosts: this plugin can only be used once per Server Block"
        );
    }

    #[test]
    fn fallthrough_zones() {
        let o = opts("hosts {\n fallthrough\n}").unwrap();
        assert!(through(&o, "a.example.org."));
        let o = opts("hosts {\n fallthrough in-addr.arpa Example.ORG 10.0.0.0/8\n}").unwrap();
        assert!(through(&o, "1.0.0.10.in-addr.arpa."));
        assert!(through(&o, "www.example.org."));
        assert!(!through(&o, "www.example.net."));
        // A CIDR is its reverse zone, as CoreDNS normalises it.
        let o = opts("hosts {\n fallthrough 10.0.0.0/8\n}").unwrap();
        assert!(through(&o, "1.0.0.10.in-addr.arpa."));
        assert!(!through(&o, "1.0.0.11.in-addr.arpa."));
        // Nothing valid left: no fallthrough, and later lines are inline lines again.
        let o = opts("hosts {\n fallthrough a..b\n 10.0.0.1 x\n}").unwrap();
        assert!(o.fall.is_off());
        assert_eq!(o.inline, ["10.0.0.1 x"]);
    }

    /// CoreDNS's `TestHostsInlineParse`.
    #[test]
    fn inline_lines_come_before_fallthrough() {
        let o = opts(
            "hosts highly_unlikely_to_exist_hosts_file example.org {\n  10.0.0.1 example.org\n  fallthrough\n}",
        )
        .unwrap();
        assert_eq!(o.inline, ["10.0.0.1 example.org"]);
        assert!(through(&o, "x."));
        let o = opts(
            "hosts highly_unlikely_to_exist_hosts_file example.org {\n 10.0.0.1 example.org\n ::1   example.org   www.example.org\n}",
        )
        .unwrap();
        assert_eq!(
            o.inline,
            ["10.0.0.1 example.org", "::1 example.org www.example.org"]
        );
        assert!(o.fall.is_off());
        assert_eq!(
            err(
                "hosts highly_unlikely_to_exist_hosts_file example.org {\n fallthrough\n 10.0.0.1 example.org\n}"
            ),
            "Corefile:4 - Error during parsing: plugin/hosts: unknown property '10.0.0.1'"
        );
        // A misspelt option before fallthrough is an inline line (that parses to nothing),
        // as in CoreDNS.
        let o = opts("hosts {\n tll 60\n}").unwrap();
        assert_eq!(o.inline, ["tll 60"]);
    }

    #[test]
    fn fallthrough_unsupported_needs_fallthrough() {
        assert!(
            opts("hosts {\n fallthrough\n fallthrough_unsupported\n}")
                .unwrap()
                .fall_unsupported
        );
        assert!(
            opts("hosts {\n fallthrough_unsupported\n fallthrough example.org\n}")
                .unwrap()
                .fall_unsupported
        );
        assert_eq!(
            err("hosts {\n fallthrough_unsupported\n}"),
            "Corefile:4 - Error during parsing: plugin/hosts: fallthrough_unsupported requires fallthrough"
        );
        assert_eq!(
            err("hosts {\n fallthrough\n fallthrough_unsupported example.org\n}"),
            "Corefile:4 - Error during parsing: plugin/hosts: Wrong argument count or unexpected line ending after 'example.org'"
        );
    }

    #[test]
    fn no_reverse() {
        assert!(!opts("hosts {\n no_reverse\n}").unwrap().reverse);
    }

    #[test]
    fn ttl() {
        assert_eq!(opts("hosts {\n ttl 60\n}").unwrap().ttl, 60);
        assert_eq!(opts("hosts {\n ttl 65535\n}").unwrap().ttl, 65535);
        assert_eq!(opts("hosts {\n ttl +7\n}").unwrap().ttl, 7);
        assert_eq!(
            err("hosts {\n ttl\n}"),
            "Corefile:3 - Error during parsing: plugin/hosts: ttl needs a time in second"
        );
        for bad in ["1h", "abc", "1.5", "99999999999999999999"] {
            assert_eq!(
                err(&format!("hosts {{\n ttl {bad}\n}}")),
                format!(
                    "Corefile:3 - Error during parsing: plugin/hosts: ttl needs a number of second"
                ),
                "{bad}"
            );
        }
        for bad in ["0", "-1", "65536"] {
            assert_eq!(
                err(&format!("hosts {{\n ttl {bad}\n}}")),
                "Corefile:3 - Error during parsing: plugin/hosts: ttl provided is invalid",
                "{bad}"
            );
        }
    }

    #[test]
    fn reload() {
        assert_eq!(
            opts("hosts {\n reload 1s\n}").unwrap().reload,
            Duration::from_secs(1)
        );
        assert_eq!(
            opts("hosts {\n reload 1.5h\n}").unwrap().reload,
            Duration::from_secs(5400)
        );
        assert_eq!(
            opts("hosts {\n reload 0\n}").unwrap().reload,
            Duration::ZERO
        );
        assert_eq!(
            opts("hosts {\n reload -0s\n}").unwrap().reload,
            Duration::ZERO
        );
        for bad in ["hosts {\n reload\n}", "hosts {\n reload 1s 2s\n}"] {
            assert_eq!(
                err(bad),
                "Corefile:3 - Error during parsing: plugin/hosts: reload needs a duration (zero seconds to disable)"
            );
        }
        assert_eq!(
            err("hosts {\n reload 5\n}"),
            "Corefile:3 - Error during parsing: plugin/hosts: invalid duration for reload '5'"
        );
        assert_eq!(
            err("hosts {\n reload -5s\n}"),
            "Corefile:3 - Error during parsing: plugin/hosts: invalid negative duration for reload '-5s'"
        );
    }

    #[test]
    fn a_missing_file_is_no_error() {
        let o = opts("hosts /nonexistent/ringdns-hosts-test").unwrap();
        assert_eq!(o.path, PathBuf::from("/nonexistent/ringdns-hosts-test"));
    }
}
