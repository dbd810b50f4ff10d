//! health: an HTTP `/health` endpoint that answers 200 `OK` while the process runs, and the
//! lameduck time a stop waits while still serving. Process-wide; the endpoint itself runs in
//! the runtime, off the query path.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::{BlockSetup, ConfigOnly, Plugin, duration, http_addr_arg};
use std::time::Duration;

/// Configuration-only: records the address and lameduck in the block setup.
pub struct Health;

/// CoreDNS's default address, `:8080`.
const DEFAULT: &str = ":8080";

impl Plugin for Health {
    const NAME: &'static str = "health";
    type Config = ();
    type Place = ConfigOnly;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<(), Error> {
        let mut seen = false;
        while d.next() {
            ringdns_plugin::once_per_block(d, &mut seen)?;
            let addr = http_addr_arg(d, Self::NAME, DEFAULT)?;
            let mut lameduck = Duration::ZERO;
            while d.next_block() {
                match d.val() {
                    "lameduck" => {
                        let a = d.remaining_args();
                        let [v] = a.as_slice() else {
                            return Err(d.arg_err());
                        };
                        lameduck = duration::parse(v).map_err(|e| {
                            d.err(&format!(
                                "plugin/health: unable to parse lameduck duration value: '{v}': {e}"
                            ))
                        })?;
                    }
                    other => {
                        return Err(d.plugin_err("health", format!("unknown property '{other}'")));
                    }
                }
            }
            block.health = Some((addr, lameduck));
        }
        Ok(())
    }
}

ringdns_plugin::export!(Health);
