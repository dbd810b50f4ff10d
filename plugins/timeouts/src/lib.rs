//! timeouts: the TCP read, write and idle timeouts and the query cap per connection of the
//! block's listeners, as CoreDNS's timeouts plugin. Configuration only.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::{BlockSetup, ConfigOnly, Plugin, TcpTimeouts, duration};
use std::time::Duration;

/// Configuration-only: records the limits in the block setup.
pub struct Timeouts;

/// CoreDNS's `durations.NewDurationFromArg`: a bare number is seconds, else Go's syntax.
fn parse_duration(s: &str) -> Result<Duration, String> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<u64>()
            .map(Duration::from_secs)
            .map_err(|e| e.to_string());
    }
    duration::parse(s)
}

impl Plugin for Timeouts {
    const NAME: &'static str = "timeouts";
    type Config = ();
    type Place = ConfigOnly;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<(), Error> {
        let mut t = TcpTimeouts::default();
        while d.next() {
            if d.next_arg() {
                return Err(d.arg_err());
            }
            let mut options = 0;
            while d.next_block() {
                let option = d.val().to_string();
                let args = d.remaining_args();
                if args.len() != 1 {
                    return Err(d.arg_err());
                }
                options += 1;
                if option == "maxtcpqueries" {
                    t.max_queries = match args[0].parse::<i64>() {
                        Ok(-1) => None,
                        Ok(n) if n > 0 => Some(n as u64),
                        _ => {
                            return Err(d.err(&format!(
                                "maxtcpqueries must be a positive number or -1, got '{}'",
                                args[0]
                            )));
                        }
                    };
                    continue;
                }
                let v = parse_duration(&args[0]).map_err(|e| d.err(&e))?;
                if v < Duration::from_secs(1) || v > Duration::from_secs(24 * 3600) {
                    return Err(d.err(&format!(
                        "timeout provided '{}' needs to be between 1 second and 24 hours",
                        duration::format(v)
                    )));
                }
                match option.as_str() {
                    "read" => t.read = v,
                    "write" => t.write = v,
                    "idle" => t.idle = v,
                    other => return Err(d.err(&format!("unknown option: '{other}'"))),
                }
            }
            if options == 0 {
                return Err(d.err("timeouts block with no timeouts specified"));
            }
        }
        block.tcp_timeouts = Some(t);
        Ok(())
    }
}

ringdns_plugin::export!(Timeouts);

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(text: &str) -> Result<Option<TcpTimeouts>, String> {
        Ok(ringdns_testkit::setup::<Timeouts>(text)?.tcp_timeouts)
    }

    #[test]
    fn options_and_defaults() {
        let t = setup(". {\n timeouts {\n  read 30\n  idle 1m\n  maxtcpqueries 50\n }\n}\n")
            .unwrap()
            .unwrap();
        assert_eq!(t.read, Duration::from_secs(30));
        assert_eq!(t.idle, Duration::from_secs(60));
        assert_eq!(t.write, Duration::from_secs(5), "default kept");
        assert_eq!(t.max_queries, Some(50));
        let t = setup(". {\n timeouts {\n  maxtcpqueries -1\n }\n}\n")
            .unwrap()
            .unwrap();
        assert_eq!(t.max_queries, None);
    }

    #[test]
    fn errors() {
        let e = |t: &str| setup(t).unwrap_err();
        assert_eq!(
            e(". {\n timeouts\n}\n"),
            "Corefile:2 - Error during parsing: timeouts block with no timeouts specified"
        );
        assert_eq!(
            e(". {\n timeouts {\n  read 500ms\n }\n}\n"),
            "Corefile:3 - Error during parsing: timeout provided '500ms' needs to be between 1 second and 24 hours"
        );
        assert_eq!(
            e(". {\n timeouts {\n  slow 5s\n }\n}\n"),
            "Corefile:3 - Error during parsing: unknown option: 'slow'"
        );
        assert!(e(". {\n timeouts {\n  read\n }\n}\n").contains("Wrong argument count"));
        assert!(
            e(". {\n timeouts {\n  maxtcpqueries 0\n }\n}\n").contains("positive number or -1")
        );
        assert!(e(". {\n timeouts 5\n}\n").contains("Wrong argument count"));
    }
}
