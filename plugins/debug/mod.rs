//! debug: stop recovering panics in the block's plugins, so they crash loudly.

use crate::corefile::{Dispenser, Error};
use crate::plugin::{BlockSetup, Plugin};

/// Configuration-only: sets the block's debug flag.
pub struct Debug;

impl Plugin for Debug {
    const NAME: &'static str = "debug";
    type Config = ();

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
