//! ready: an HTTP `/ready` endpoint for load balancers. It answers 200 `OK` while the server
//! serves (503 during start-up and from the moment a stop begins, i.e. lameduck) and every
//! plugin that reports readiness in the blocks that enable `ready` is ready; otherwise 503
//! with the names of the plugins not ready, as CoreDNS. Process-wide; the endpoint runs in
//! the runtime, off the query path.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::readiness::Monitor;
use ringdns_plugin::{BlockSetup, ConfigOnly, Plugin, http_addr_arg};

/// Configuration-only: records the address and the monitor mode in the block setup.
pub struct Ready;

impl Plugin for Ready {
    const NAME: &'static str = "ready";
    type Config = ();
    type Place = ConfigOnly;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<(), Error> {
        let mut seen = false;
        while d.next() {
            ringdns_plugin::once_per_block(d, &mut seen)?;
            let addr = http_addr_arg(d, Self::NAME, ":8181")?;
            let mut monitor = Monitor::default();
            while d.next_block() {
                match d.val() {
                    "monitor" => {
                        let args = d.remaining_args();
                        let [v] = args.as_slice() else {
                            return Err(d.arg_err());
                        };
                        monitor = Monitor::parse(v).ok_or_else(|| {
                            d.plugin_err("ready", format!("monitor type '{v}' not supported"))
                        })?;
                    }
                    other => {
                        return Err(d.plugin_err("ready", format!("unknown property '{other}'")));
                    }
                }
            }
            block.ready = Some((addr, monitor));
        }
        Ok(())
    }
}

ringdns_plugin::export!(Ready);

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn setup(text: &str) -> Result<Option<(SocketAddr, Monitor)>, String> {
        Ok(ringdns_testkit::setup::<Ready>(text)?.ready)
    }

    #[test]
    fn address_and_monitor() {
        let any: SocketAddr = "0.0.0.0:8181".parse().unwrap();
        let local: SocketAddr = "127.0.0.1:1234".parse().unwrap();
        let ok = |t: &str| setup(t).unwrap().unwrap();
        assert_eq!(ok(". {\n ready\n}\n"), (any, Monitor::UntilReady));
        assert_eq!(
            ok(". {\n ready 127.0.0.1:1234\n}\n"),
            (local, Monitor::UntilReady)
        );
        assert_eq!(
            ok(". {\n ready {\n  monitor until-ready\n }\n}\n"),
            (any, Monitor::UntilReady)
        );
        assert_eq!(
            ok(". {\n ready {\n  monitor continuously\n }\n}\n"),
            (any, Monitor::Continuously)
        );
        assert_eq!(
            ok(". {\n ready 127.0.0.1:1234 {\n  monitor continuously\n }\n}\n"),
            (local, Monitor::Continuously)
        );
        // The last `monitor` line of the block wins, as in CoreDNS.
        assert_eq!(
            ok(". {\n ready {\n  monitor continuously\n  monitor until-ready\n }\n}\n"),
            (any, Monitor::UntilReady)
        );
    }

    #[test]
    fn errors() {
        let e = |t: &str| setup(t).unwrap_err();
        assert_eq!(
            e(". {\n ready {\n  monitor 404\n }\n}\n"),
            "Corefile:3 - Error during parsing: plugin/ready: monitor type '404' not supported"
        );
        assert_eq!(
            e(". {\n ready {\n  monitro continuously\n }\n}\n"),
            "Corefile:3 - Error during parsing: plugin/ready: unknown property 'monitro'"
        );
        assert_eq!(
            e(". {\n ready {\n  monitor\n }\n}\n"),
            "Corefile:3 - Error during parsing: Wrong argument count or unexpected line ending after 'monitor'"
        );
        assert_eq!(
            e(". {\n ready {\n  monitor until-ready continuously\n }\n}\n"),
            "Corefile:3 - Error during parsing: Wrong argument count or unexpected line ending after 'continuously'"
        );
        assert_eq!(
            e(". {\n ready 127.0.0.1:1234 b\n}\n"),
            "Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after 'b'"
        );
        assert!(
            e(". {\n ready bla\n}\n").contains("plugin/ready: invalid address 'bla'"),
            "{}",
            e(". {\n ready bla\n}\n")
        );
        assert_eq!(
            e(". {\n ready\n ready\n}\n"),
            "Corefile:3 - Error during parsing: this plugin can only be used once per Server Block"
        );
    }
}
