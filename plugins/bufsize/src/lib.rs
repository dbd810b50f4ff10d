//! bufsize: limits the EDNS0 UDP payload size a query advertises, for the plugins after it
//! (what *forward* sends upstream) and for its reply (cut to that size, and saying it), as
//! CoreDNS's bufsize plugin (`plugin/bufsize`) does to prevent IP fragmentation.
//!
//! A query that advertises more than the limit is served to the rest of the chain as a copy
//! with the limit in its OPT ([`Editor`]); the others go on as they came.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::edit::Editor;
use ringdns_plugin::wire::rtype::OPT;
use ringdns_plugin::wire::{Section, records};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, Serves, Status,
    once_per_block_of,
};
use std::future::Future;
use std::sync::Arc;

/// The directive, for errors.
const NAME: &str = "bufsize";

/// The default limit, DNS Flag Day 2020's (<https://www.dnsflagday.net/2020/>).
const DEFAULT: u16 = 1232;

/// What setup parsed: the largest UDP payload size a query may advertise.
#[derive(Debug)]
pub struct Config {
    size: u16,
}

/// The plugin's instance on one core: the limit and the core's copy of an edited query.
pub struct Bufsize {
    config: Arc<Config>,
    editor: Editor,
}

impl Plugin for Bufsize {
    const NAME: &'static str = NAME;
    type Config = Config;
    type Place = Serves;

    /// `bufsize [SIZE]`, SIZE from 512 to 4096 (RFC 6891), once per block.
    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<Config, Error> {
        let mut size = DEFAULT;
        let mut seen = false;
        while d.next() {
            once_per_block_of(d, NAME, &mut seen)?;
            let args = d.remaining_args();
            size = match args.as_slice() {
                [] => DEFAULT,
                [s] => match s.parse::<i64>() {
                    Ok(n @ 512..=4096) => n as u16,
                    _ => return Err(d.plugin_arg_err(NAME)),
                },
                _ => return Err(d.plugin_arg_err(NAME)),
            };
        }
        Ok(Config { size })
    }
}

impl Serve for Bufsize {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Bufsize {
            config: config.clone(),
            editor: Editor::default(),
        })
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        let edit = self.edit(req);
        self.editor.serve(NAME, req, next, edit)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        let edit = self.edit(req);
        self.editor.serve_now(NAME, req, next, edit)
    }
}

impl Bufsize {
    /// The limit written into the OPT's class field (the UDP payload size) of the copy,
    /// when the query advertises more; `None` when it does not, or has no OPT.
    fn edit(&self, req: &Request<'_>) -> Option<impl FnOnce(&mut Vec<u8>) + use<>> {
        let size = self.config.size;
        // A signed query goes on as it came: its MAC covers the OPT (tsig, further in,
        // verifies it).
        if req.query.opt()?.udp_size <= size || req.query.has_tsig() {
            return None;
        }
        let packet = req.query.packet();
        let opt = records(packet)
            .ok()?
            .flatten()
            .find(|r| r.section == Section::Additional && r.rtype == OPT)?;
        let class = opt.ttl_offset - 2;
        Some(move |p: &mut Vec<u8>| p[class..class + 2].copy_from_slice(&size.to_be_bytes()))
    }
}

ringdns_plugin::export!(Bufsize);

#[cfg(test)]
mod tests;
