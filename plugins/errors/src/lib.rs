//! errors: logs the errors the rest of the chain returns, optionally consolidating repeated
//! ones into one line per period, as CoreDNS's errors plugin.

#![forbid(unsafe_code)]

mod consolidate;

use consolidate::Pattern;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::type_name;
use ringdns_plugin::wrap::{self, Wrap};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, Serves, Status,
};
use std::future::Future;
use std::sync::Arc;

/// What setup parsed: the consolidation patterns, whose counters are process-wide.
pub struct Config {
    patterns: Vec<Pattern>,
}

impl Drop for Config {
    /// Reports what was counted but not yet reported, as CoreDNS does at shutdown.
    fn drop(&mut self) {
        for p in &self.patterns {
            p.report();
        }
    }
}

/// The per-core instance: shares the configuration's counters.
pub struct Errors {
    config: Arc<Config>,
}

impl Plugin for Errors {
    const NAME: &'static str = "errors";
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let mut patterns = Vec::new();
        let mut seen = false;
        while d.next() {
            ringdns_plugin::once_per_block(d, &mut seen)?;
            let args = d.remaining_args();
            match args.as_slice() {
                [] => {}
                [a] if a == "stdout" => {}
                [a] => return Err(d.err(&format!("invalid log file: {a}"))),
                _ => return Err(d.arg_err()),
            }
            while d.next_block() {
                match d.val() {
                    // `stacktrace` (and its old name): the server's panic recovery logs the
                    // backtrace of a panic in this block.
                    "stacktrace" | "panicRecoveryStacktrace" => {
                        if d.next_arg() {
                            return Err(d.arg_err());
                        }
                        block.stacktrace = true;
                    }
                    "consolidate" => patterns.push(consolidate::parse(d, block.debug)?),
                    other => return Err(d.syntax_err(&format!("Unknown field {other}"))),
                }
            }
        }
        Ok(Config { patterns })
    }
}

impl Serve for Errors {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Errors {
            config: config.clone(),
        })
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        wrap::serve(self, req, next)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        wrap::serve_now(self, req, next)
    }
}

/// Every query is wrapped; the report comes after, once, for the status that carries an
/// error.
impl Wrap for Errors {
    type Before = ();

    fn before(&self, _req: &Request<'_>) -> Option<()> {
        Some(())
    }

    /// Logs the error the rest of the chain returned, unless a pattern consolidates it.
    fn after(&self, req: &mut Request<'_>, (): (), status: Status) -> Status {
        if let Some(err) = &status.error {
            let text = err.to_string();
            if let Some(i) = self.config.patterns.iter().position(|p| p.matches(&text))
                && consolidate::count(&self.config, i)
            {
                return status;
            }
            let mut name = String::new();
            let _ = req.query.qname().write_lowercase(&mut name);
            ringdns_plugin::error!(
                "plugin/errors: {} {} {}: {}",
                status.rcode,
                name,
                type_name(req.query.qtype()),
                text
            );
        }
        status
    }
}

ringdns_plugin::export!(Errors);
