//! `auto [ZONES...] { directory DIR [REGEXP ORIGIN_TEMPLATE]; reload DURATION; upstream }`,
//! as CoreDNS's `autoParse` reads it.

use regex::Regex;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::{BlockSetup, duration};
use std::path::PathBuf;
use std::time::Duration;

/// CoreDNS's default scan period.
const DEFAULT_RELOAD: Duration = Duration::from_secs(60);

/// CoreDNS's limit on REGEXP's length.
const MAX_REGEXP_LEN: usize = 10_000;

/// One `auto` line of a block: where its zone files are and which zones it answers for.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The zones it is authoritative for (normalised), the block's when none is named.
    pub origins: Vec<String>,
    /// The directory scanned; `None` when the block names none (nothing is loaded, as in
    /// CoreDNS).
    pub directory: Option<PathBuf>,
    /// Matched against each file's name (not its path), unanchored.
    pub re: Regex,
    /// The origin made from a match: `{1}` in the Corefile, `${1}` for [`Regex`]'s expansion.
    pub template: String,
    /// How often the directory is scanned and the zones' files checked; zero: never.
    pub reload: Duration,
}

/// Reads one `auto` line and its block (the dispenser at the directive).
pub fn parse(d: &mut Dispenser<'_>, block: &BlockSetup) -> Result<Settings, Error> {
    let args = d.remaining_args();
    let origins =
        ringdns_plugin::normalize::origins_from_args_or_block("auto", &args, &block.zones);
    let mut s = Settings {
        origins,
        directory: None,
        re: Regex::new(r"db\.(.*)").expect("the default regexp compiles"),
        template: "${1}".into(),
        reload: DEFAULT_RELOAD,
    };
    while d.next_block() {
        match d.val() {
            "directory" => directory(d, block, &mut s)?,
            "reload" => {
                if !d.next_arg() {
                    return Err(d.plugin_err("auto", "reload duration value is expected"));
                }
                // CoreDNS words a negative duration this way, under file's name.
                let (negative, value) =
                    duration::parse_signed(d.val()).map_err(|e| d.plugin_err("file", e))?;
                if negative {
                    return Err(d.plugin_err("file", "invalid duration"));
                }
                s.reload = value;
                if d.next_arg() {
                    return Err(d.plugin_arg_err("auto"));
                }
            }
            // Accepted and ignored by CoreDNS too: targets outside a zone are always looked
            // up through the server.
            "upstream" => {
                d.remaining_args();
            }
            other => {
                return Err(d.plugin_err("auto", format!("unknown property '{other}'")));
            }
        }
    }
    if s.directory.is_none() {
        ringdns_plugin::warning!("plugin/auto: no directory given: no zone is loaded");
    }
    Ok(s)
}

/// `directory DIR [REGEXP ORIGIN_TEMPLATE]`.
fn directory(d: &mut Dispenser<'_>, block: &BlockSetup, s: &mut Settings) -> Result<(), Error> {
    if !d.next_arg() {
        return Err(d.plugin_arg_err("auto"));
    }
    let dir = block.resolve_path(d.val());
    match std::fs::metadata(&dir) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            ringdns_plugin::warning!("plugin/auto: Directory does not exist: {}", dir.display());
        }
        Err(e) => {
            return Err(d.plugin_err(
                "auto",
                format!("Unable to access root path '{}': {e}", dir.display()),
            ));
        }
    }
    s.directory = Some(dir);
    if d.next_arg() {
        if d.val().len() > MAX_REGEXP_LEN {
            return Err(d.plugin_err("auto", "regexp too large"));
        }
        s.re = Regex::new(d.val()).map_err(|e| d.plugin_err("auto", e))?;
        if s.re.captures_len() < 2 {
            return Err(d.plugin_err("auto", "Need at least one sub expression"));
        }
        if !d.next_arg() {
            return Err(d.plugin_arg_err("auto"));
        }
        s.template = to_expand(d.val());
    }
    if d.next_arg() {
        return Err(d.plugin_arg_err("auto"));
    }
    Ok(())
}

/// CoreDNS's `rewriteToExpand`: every `{` gets a `$` before it, so `{1}` is the first group.
fn to_expand(template: &str) -> String {
    template.replace('{', "${")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Auto;
    use ringdns_testkit::config;

    /// The settings of `text`, `/tmp` in it standing for an empty directory of the test's.
    fn settings(text: &str) -> Result<Vec<Settings>, String> {
        let d = crate::testdir::Dir::new("setup");
        let text = text.replace("/tmp", d.0.to_str().unwrap());
        let mut s = config::<Auto>(&text).map(|(_, c)| c.settings_for_tests())?;
        for st in &mut s {
            if st.directory.as_deref() == Some(d.0.as_path()) {
                st.directory = Some("/tmp".into());
            }
        }
        Ok(s)
    }

    #[test]
    fn defaults_and_options_are_coredns_s() {
        let s = settings("example.org {\n auto {\n directory /tmp\n }\n}\n").unwrap();
        assert_eq!(
            s[0].directory.as_deref(),
            Some(std::path::Path::new("/tmp"))
        );
        assert_eq!(s[0].template, "${1}");
        assert_eq!(s[0].re.as_str(), r"db\.(.*)");
        assert_eq!(s[0].reload, Duration::from_secs(60));
        let s = settings(
            ". {\n auto example.org example.net {\n directory /tmp (.*) bliep\n reload 10s\n }\n}\n",
        )
        .unwrap();
        assert_eq!(s[0].origins, ["example.org.", "example.net."]);
        assert_eq!(
            (s[0].re.as_str(), s[0].template.as_str()),
            ("(.*)", "bliep")
        );
        assert_eq!(s[0].reload, Duration::from_secs(10));
        let s = settings(". {\n auto {\n directory /tmp\n reload 0\n }\n}\n").unwrap();
        assert!(s[0].reload.is_zero());
        assert_eq!(to_expand("{1}.{2}"), "${1}.${2}");
    }

    #[test]
    fn errors_are_coredns_s() {
        for (body, want) in [
            ("directory /tmp\n no_reload", "unknown property 'no_reload'"),
            ("directory /tmp (.*) bliep 10", "Wrong argument count"),
            ("directory /tmp (.*)", "Wrong argument count"),
            ("directory", "Wrong argument count"),
            ("directory /tmp * {1}", "plugin/auto: regex parse error"),
            (
                "directory /tmp db\\.x {1}",
                "Need at least one sub expression",
            ),
            (
                "directory /tmp\n reload -1s",
                "plugin/file: invalid duration",
            ),
            (
                "directory /tmp\n reload",
                "reload duration value is expected",
            ),
            ("directory /tmp\n reload 1x", "unknown unit"),
        ] {
            let text = format!(". {{\n auto {{\n {body}\n }}\n}}\n");
            let e = settings(&text).expect_err(body);
            assert!(e.contains(want), "{body}: {e}");
            assert!(e.starts_with("Corefile:"), "{e}");
        }
        let long = "a".repeat(MAX_REGEXP_LEN + 1);
        let e = settings(&format!(
            ". {{\n auto {{\n directory /tmp {long} {{1}}\n }}\n}}\n"
        ))
        .unwrap_err();
        assert!(e.contains("regexp too large"), "{e}");
    }
}
