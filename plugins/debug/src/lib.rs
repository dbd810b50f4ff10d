//! debug: stop recovering panics in the block's plugins, so they crash loudly.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::{BlockSetup, ConfigOnly, Plugin};

/// Configuration-only: sets the block's debug flag.
pub struct Debug;

impl Plugin for Debug {
    const NAME: &'static str = "debug";
    type Config = ();
    type Place = ConfigOnly;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<(), Error> {
        while d.next() {
            if d.next_arg() {
                return Err(d.arg_err());
            }
        }
        block.debug = true;
        Ok(())
    }
}

ringdns_plugin::export!(Debug);
