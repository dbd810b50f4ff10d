//! The `ringdns` command: CoreDNS's flags (single-dash spellings too), the Corefile lookup
//! order, and the server.

use clap::Parser;
use mimalloc::MiMalloc;
use ringdns::cli::{Cli, normalize_args};
use ringdns::{chain, config, runtime};
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

fn main() -> ExitCode {
    runtime::memory::install();
    let cli = Cli::parse_from(normalize_args(std::env::args()));
    if cli.version {
        // As CoreDNS: `CoreDNS-1.11.1` then `linux/amd64, go1.20.7, ae2bbc2`.
        println!("ringdns-{}", ringdns::VERSION);
        let rustc = option_env!("RINGDNS_RUSTC").unwrap_or("rustc");
        let revision = option_env!("RINGDNS_REVISION").unwrap_or("unknown");
        println!("linux/{}, {rustc}, {revision}", std::env::consts::ARCH);
        return ExitCode::SUCCESS;
    }
    if cli.plugins {
        println!("Server types:\n  dns\n\nCaddyfile loaders:\n  flag\n  default\n\nOther plugins:");
        for p in chain::PLUGINS {
            println!("  dns.{p}");
        }
        return ExitCode::SUCCESS;
    }
    let loaded = config::Source::from_flag(cli.conf.as_deref(), cli.dns_port).and_then(|src| {
        let parsed = src.parse()?;
        let config = src.load(&parsed)?;
        Ok((src, parsed.digest, config))
    });
    let (source, digest, config) = match loaded {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    // The zones are loaded: what their parse freed goes back to the system.
    ringdns_plugin::memory::give_back();
    if let Some(p) = &cli.pidfile
        && let Err(e) = std::fs::write(p, format!("{}\n", std::process::id()))
    {
        eprintln!("Could not write pidfile: {e}");
        return ExitCode::from(1);
    }
    let result = runtime::run(config, digest, source, cli.quiet);
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
