//! reload: re-read the Corefile every INTERVAL (± jitter) and reload the server when its
//! parsed configuration changed. Process-wide; the watching and the swap run in the runtime,
//! off the query path. This plugin only parses the directive and records its settings.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::{BlockSetup, ConfigOnly, Plugin, ReloadSettings};
use std::time::Duration;

/// Configuration-only: records the interval and jitter in the block setup.
pub struct Reload;

/// CoreDNS's defaults and lower bounds (plugin/reload/setup.go).
const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);
const DEFAULT_JITTER: Duration = Duration::from_secs(15);
const MIN_INTERVAL: Duration = Duration::from_secs(2);
const MIN_JITTER: Duration = Duration::from_secs(1);

/// A Go duration argument; negative values parse (as in Go) and then fail the minimum.
fn duration_arg(d: &Dispenser<'_>, text: &str) -> Result<Option<Duration>, Error> {
    let (negative, value) =
        ringdns_plugin::duration::parse_signed(text).map_err(|e| d.plugin_err("reload", e))?;
    Ok((!negative).then_some(value))
}

impl Plugin for Reload {
    const NAME: &'static str = "reload";
    type Config = ();
    type Place = ConfigOnly;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<(), Error> {
        let mut seen = false;
        while d.next() {
            ringdns_plugin::once_per_block(d, &mut seen)?;
            let args = d.remaining_args();
            if args.len() > 2 {
                return Err(d.arg_err());
            }
            let interval = match args.first() {
                Some(a) => duration_arg(d, a)?,
                None => Some(DEFAULT_INTERVAL),
            };
            let interval = interval.filter(|i| *i >= MIN_INTERVAL).ok_or_else(|| {
                d.err("plugin/reload: interval value must be greater or equal to 2s")
            })?;
            let jitter = match args.get(1) {
                Some(a) => duration_arg(d, a)?,
                None => Some(DEFAULT_JITTER),
            };
            let jitter = jitter.filter(|j| *j >= MIN_JITTER).ok_or_else(|| {
                d.err("plugin/reload: jitter value must be greater or equal to 1s")
            })?;
            if d.next_block() {
                return Err(d.plugin_err("reload", format!("unknown property '{}'", d.val())));
            }
            block.reload = Some(ReloadSettings {
                interval,
                jitter: jitter.min(interval / 2),
            });
        }
        Ok(())
    }
}

ringdns_plugin::export!(Reload);

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(text: &str) -> Result<Option<ReloadSettings>, String> {
        Ok(ringdns_testkit::setup::<Reload>(text)?.reload)
    }

    fn settings(interval: u64, jitter_ms: u64) -> Option<ReloadSettings> {
        Some(ReloadSettings {
            interval: Duration::from_secs(interval),
            jitter: Duration::from_millis(jitter_ms),
        })
    }

    #[test]
    fn defaults_and_arguments() {
        assert_eq!(setup(". {\n reload\n}\n").unwrap(), settings(30, 15_000));
        // The jitter is capped at half the interval, as in CoreDNS.
        assert_eq!(setup(". {\n reload 10s\n}\n").unwrap(), settings(10, 5_000));
        assert_eq!(
            setup(". {\n reload 2s 1s\n}\n").unwrap(),
            settings(2, 1_000)
        );
        assert_eq!(
            setup(". {\n reload 1m 3s\n}\n").unwrap(),
            settings(60, 3_000)
        );
        assert_eq!(
            setup(". {\n reload 3s 2s\n}\n").unwrap(),
            settings(3, 1_500)
        );
    }

    #[test]
    fn errors_are_coredns_s() {
        let e = |t: &str| setup(t).unwrap_err();
        assert_eq!(
            e(". {\n reload 1s\n}\n"),
            "Corefile:2 - Error during parsing: plugin/reload: interval value must be greater or equal to 2s"
        );
        assert_eq!(
            e(". {\n reload -5s\n}\n"),
            "Corefile:2 - Error during parsing: plugin/reload: interval value must be greater or equal to 2s"
        );
        assert_eq!(
            e(". {\n reload 5s 500ms\n}\n"),
            "Corefile:2 - Error during parsing: plugin/reload: jitter value must be greater or equal to 1s"
        );
        assert_eq!(
            e(". {\n reload soon\n}\n"),
            "Corefile:2 - Error during parsing: plugin/reload: time: invalid duration \"soon\""
        );
        assert_eq!(
            e(". {\n reload 5s 2s 1s\n}\n"),
            "Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after '1s'"
        );
        assert_eq!(
            e(". {\n reload\n reload 5s\n}\n"),
            "Corefile:3 - Error during parsing: this plugin can only be used once per Server Block"
        );
    }
}
