//! The command line: CoreDNS's flags (single-dash spellings too), and the manual page and
//! shell completions generated from the same definition, so they cannot drift from it.

use clap::{CommandFactory, Parser};
use std::io;
use std::path::Path;

/// A CoreDNS-compatible DNS server, thread-per-core.
#[derive(Parser, Debug)]
#[command(name = "ringdns", disable_version_flag = true)]
pub struct Cli {
    /// Corefile to load (`stdin` reads it from standard input). Default: ./Corefile, else
    /// the built-in `.:53 { whoami log }`.
    #[arg(long = "conf", value_name = "FILE")]
    pub conf: Option<String>,
    /// Default port for server blocks without one.
    #[arg(
        long = "dns.port",
        short = 'p',
        value_name = "PORT",
        default_value_t = 53
    )]
    pub dns_port: u16,
    /// List the compiled plugins in chain order and exit.
    #[arg(long = "plugins")]
    pub plugins: bool,
    /// Print the version and exit.
    #[arg(long = "version")]
    pub version: bool,
    /// Do not print the start-up banner.
    #[arg(long = "quiet")]
    pub quiet: bool,
    /// Write the process ID to FILE while running.
    #[arg(long = "pidfile", value_name = "FILE")]
    pub pidfile: Option<String>,
}

/// CoreDNS spells long flags with one dash (`-conf`); clap wants two. Rewrite the known ones.
pub fn normalize_args(args: impl Iterator<Item = String>) -> Vec<String> {
    const LONG: [&str; 6] = ["conf", "dns.port", "plugins", "version", "quiet", "pidfile"];
    args.enumerate()
        .map(|(i, a)| {
            if i > 0 && a.starts_with('-') && !a.starts_with("--") {
                let name = a[1..].split('=').next().unwrap_or("");
                if LONG.contains(&name) {
                    return format!("-{a}");
                }
            }
            a
        })
        .collect()
}

/// Writes the manual page (`ringdns.1`) and the completions for bash (`ringdns.bash`), zsh
/// (`_ringdns`) and fish (`ringdns.fish`) into `dir`, for `make install` (examples/gen-docs).
pub fn write_docs(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let cmd = Cli::command().version(crate::VERSION);
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut page)?;
    std::fs::write(dir.join("ringdns.1"), page)?;
    for shell in [
        clap_complete::Shell::Bash,
        clap_complete::Shell::Zsh,
        clap_complete::Shell::Fish,
    ] {
        clap_complete::generate_to(shell, &mut cmd.clone(), "ringdns", dir)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_dash_long_flags_are_read_as_coredns_spells_them() {
        let args = ["ringdns", "-conf", "x", "-dns.port=54", "-p", "5", "-quiet"];
        let n = normalize_args(args.iter().map(|a| a.to_string()));
        assert_eq!(
            n,
            [
                "ringdns",
                "--conf",
                "x",
                "--dns.port=54",
                "-p",
                "5",
                "--quiet"
            ]
        );
    }

    #[test]
    fn the_manual_page_and_completions_name_every_flag() {
        let dir = std::env::temp_dir().join(format!("ringdns-docs-{}", std::process::id()));
        write_docs(&dir).unwrap();
        let page = std::fs::read_to_string(dir.join("ringdns.1")).unwrap();
        assert!(
            page.starts_with(".ie"),
            "roff: {}",
            &page[..40.min(page.len())]
        );
        let bash = std::fs::read_to_string(dir.join("ringdns.bash")).unwrap();
        let zsh = std::fs::read_to_string(dir.join("_ringdns")).unwrap();
        let fish = std::fs::read_to_string(dir.join("ringdns.fish")).unwrap();
        for flag in ["conf", "dns.port", "plugins", "version", "quiet", "pidfile"] {
            // roff escapes each dash: `\-\-conf`.
            assert!(page.contains(&format!("\\-\\-{flag}")), "man: {flag}");
            assert!(bash.contains(&format!("--{flag}")), "bash: {flag}");
            assert!(zsh.contains(&format!("--{flag}")), "zsh: {flag}");
            assert!(fish.contains(&format!("-l {flag}")), "fish: {flag}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
