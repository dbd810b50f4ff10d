//! bind: listen only on the given addresses or interfaces instead of the wildcard.

#![forbid(unsafe_code)]

mod resolve;

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::{BlockSetup, ConfigOnly, Plugin};

/// Configuration-only: records the addresses in the block setup.
pub struct Bind;

impl Plugin for Bind {
    const NAME: &'static str = "bind";
    type Config = ();
    type Place = ConfigOnly;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<(), Error> {
        let mut all = Vec::new();
        while d.next() {
            let addrs = d.remaining_args();
            if addrs.is_empty() {
                return Err(d.err("at least one address or interface name is expected"));
            }
            let mut except = Vec::new();
            while d.next_block() {
                match d.val() {
                    "except" => {
                        except = d.remaining_args();
                        if except.is_empty() {
                            return Err(d.err(
                                "at least one address or interface must be given to except subdirective",
                            ));
                        }
                    }
                    other => return Err(d.err(&format!("invalid option \"{other}\""))),
                }
            }
            let ips = resolve::resolve(&addrs, &except).map_err(|e| d.err(&e))?;
            for ip in ips {
                if !all.contains(&ip) {
                    all.push(ip);
                }
            }
        }
        block.bind = all;
        block.bind_set = true;
        Ok(())
    }
}

ringdns_plugin::export!(Bind);
