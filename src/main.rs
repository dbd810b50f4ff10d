//! The `ringdns` command: CoreDNS's flags (single-dash spellings too), the Corefile lookup
//! order, and the server.

use clap::Parser;
use mimalloc::MiMalloc;
use ringdns::{chain, config, corefile, runtime};
use std::io::Read;
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

/// A CoreDNS-compatible DNS server, thread-per-core.
#[derive(Parser, Debug)]
#[command(name = "ringdns", disable_version_flag = true)]
struct Cli {
    /// Corefile to load (`stdin` reads it from standard input). Default: ./Corefile, else
    /// the built-in `.:53 { whoami log }`.
    #[arg(long = "conf", value_name = "FILE")]
    conf: Option<String>,
    /// Default port for server blocks without one.
    #[arg(
        long = "dns.port",
        short = 'p',
        value_name = "PORT",
        default_value_t = 53
    )]
    dns_port: u16,
    /// List the compiled plugins in chain order and exit.
    #[arg(long = "plugins")]
    plugins: bool,
    /// Print the version and exit.
    #[arg(long = "version")]
    version: bool,
    /// Do not print the start-up banner.
    #[arg(long = "quiet")]
    quiet: bool,
    /// Write the process ID to FILE while running.
    #[arg(long = "pidfile", value_name = "FILE")]
    pidfile: Option<String>,
}

/// CoreDNS spells long flags with one dash (`-conf`); clap wants two. Rewrite the known ones.
fn normalize_args(args: impl Iterator<Item = String>) -> Vec<String> {
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

/// Reads the Corefile text and the name its errors use.
fn corefile_source(cli: &Cli) -> Result<(String, String), String> {
    match cli.conf.as_deref() {
        Some("stdin") => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| format!("failed to read Corefile from stdin: {e}"))?;
            Ok(("stdin".into(), s))
        }
        Some(path) => std::fs::read_to_string(path)
            .map(|s| (path.to_string(), s))
            .map_err(|e| format!("failed to read Corefile {path}: {e}")),
        None => match std::fs::read_to_string("Corefile") {
            Ok(s) => Ok(("Corefile".into(), s)),
            Err(_) => Ok(("default".into(), config::default_corefile(cli.dns_port))),
        },
    }
}

fn load(cli: &Cli) -> Result<config::Config, String> {
    let (name, text) = corefile_source(cli)?;
    let mut cf =
        corefile::parse(&name, &text, &chain::known_directive).map_err(|e| e.to_string())?;
    if cf.blocks.is_empty() {
        let global = std::mem::take(&mut cf.global);
        cf = corefile::parse(
            "default",
            &config::default_corefile(cli.dns_port),
            &chain::known_directive,
        )
        .map_err(|e| e.to_string())?;
        cf.global = global;
    }
    config::load(&cf, cli.dns_port).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(normalize_args(std::env::args()));
    if cli.version {
        println!("ringdns-{}", ringdns::VERSION);
        println!("linux/{}", std::env::consts::ARCH);
        return ExitCode::SUCCESS;
    }
    if cli.plugins {
        println!("Server types:\n  dns\n\nCaddyfile loaders:\n  flag\n  default\n\nOther plugins:");
        for p in chain::PLUGINS {
            println!("  dns.{p}");
        }
        return ExitCode::SUCCESS;
    }
    let config = match load(&cli) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    if let Some(p) = &cli.pidfile {
        if let Err(e) = std::fs::write(p, format!("{}\n", std::process::id())) {
            eprintln!("Could not write pidfile: {e}");
            return ExitCode::from(1);
        }
    }
    let result = runtime::run(config, cli.quiet);
    if let Some(p) = &cli.pidfile {
        let _ = std::fs::remove_file(p);
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::normalize_args;

    #[test]
    fn single_dash_long_flags_are_accepted() {
        let args = [
            "ringdns",
            "-conf",
            "x",
            "-dns.port=5",
            "-p",
            "7",
            "--quiet",
            "-plugins",
        ]
        .map(String::from);
        assert_eq!(
            normalize_args(args.into_iter()),
            [
                "ringdns",
                "--conf",
                "x",
                "--dns.port=5",
                "-p",
                "7",
                "--quiet",
                "--plugins"
            ]
        );
    }
}
