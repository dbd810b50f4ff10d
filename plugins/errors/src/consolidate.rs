//! `consolidate DURATION REGEXP [LEVEL] [show_first]`: errors matching REGEXP are counted
//! and reported once per DURATION instead of one line each. Counters are process-wide
//! atomics; the core that counts the first error of a period starts its timer.

use super::Config;
use regex::Regex;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::duration;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// The longest regular expression accepted, as CoreDNS.
const MAX_REGEXP: usize = 10_000;

/// The level the summary line is logged at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Error,
    Warning,
    Info,
    Debug,
}

/// One consolidation rule and its counter.
pub struct Pattern {
    period: Duration,
    re: Regex,
    level: Level,
    show_first: bool,
    debug_on: bool,
    count: AtomicU32,
}

impl Pattern {
    /// Whether an error text falls under this rule.
    pub fn matches(&self, text: &str) -> bool {
        self.re.is_match(text)
    }

    /// Logs and resets the count of the period that just ended.
    pub fn report(&self) {
        let n = self.count.swap(0, Ordering::AcqRel);
        if n == 0 {
            return;
        }
        let msg = format!(
            "plugin/errors: {n} errors like '{}' occurred in last {}",
            self.re.as_str(),
            duration::format(self.period)
        );
        match self.level {
            Level::Error => ringdns_plugin::error!("{msg}"),
            Level::Warning => ringdns_plugin::warning!("{msg}"),
            Level::Info => ringdns_plugin::info!("{msg}"),
            Level::Debug if self.debug_on => {
                ringdns_plugin::logging::line("DEBUG", format_args!("{msg}"))
            }
            Level::Debug => {}
        }
    }
}

/// Counts one error under pattern `i`; true when it must not be logged on its own line.
pub fn count(config: &Arc<Config>, i: usize) -> bool {
    let p = &config.patterns[i];
    let first = p.count.fetch_add(1, Ordering::AcqRel) == 0;
    if first {
        let cfg = config.clone();
        let period = p.period;
        ringdns_plugin::glommio::spawn_local(async move {
            ringdns_plugin::glommio::timer::sleep(period).await;
            cfg.patterns[i].report();
        })
        .detach();
        return !p.show_first;
    }
    true
}

/// Parses the rest of a `consolidate` line.
pub fn parse(d: &mut Dispenser<'_>, debug_on: bool) -> Result<Pattern, Error> {
    let args = d.remaining_args();
    if args.len() < 2 || args.len() > 4 {
        return Err(d.arg_err());
    }
    let period = duration::parse(&args[0]).map_err(|e| d.err(&e))?;
    if period.is_zero() {
        return Err(d.err("consolidate duration must be positive"));
    }
    if args[1].len() > MAX_REGEXP {
        return Err(d.err(&format!("regexp longer than {MAX_REGEXP} characters")));
    }
    let re = Regex::new(&args[1]).map_err(|e| d.err(&e.to_string()))?;
    let mut level = Level::Error;
    let mut show_first = false;
    for (k, a) in args[2..].iter().enumerate() {
        match a.as_str() {
            "show_first" => show_first = true,
            "warning" if k == 0 => level = Level::Warning,
            "error" if k == 0 => level = Level::Error,
            "info" if k == 0 => level = Level::Info,
            "debug" if k == 0 => level = Level::Debug,
            other => {
                return Err(d.err(&format!(
                    "unknown log level argument in consolidate: {other}"
                )));
            }
        }
    }
    Ok(Pattern {
        period,
        re,
        level,
        show_first,
        debug_on,
        count: AtomicU32::new(0),
    })
}
