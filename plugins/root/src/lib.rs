//! root: the base directory for relative paths of the block's other plugins.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::{BlockSetup, ConfigOnly, Plugin};

/// Configuration-only: records the directory in the block setup.
pub struct Root;

impl Plugin for Root {
    const NAME: &'static str = "root";
    type Config = ();
    type Place = ConfigOnly;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<(), Error> {
        let mut seen = false;
        while d.next() {
            ringdns_plugin::once_per_block(d, &mut seen)?;
            if !d.next_arg() {
                return Err(d.arg_err());
            }
            let path = d.val().to_string();
            if d.next_arg() {
                return Err(d.arg_err());
            }
            match std::fs::metadata(&path) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    ringdns_plugin::warning!("plugin/root: Root path does not exist: {path}");
                }
                Err(e) => {
                    return Err(d.err(&format!("unable to access root path '{path}': {e}")));
                }
            }
            block.root = path.into();
        }
        Ok(())
    }
}

ringdns_plugin::export!(Root);
