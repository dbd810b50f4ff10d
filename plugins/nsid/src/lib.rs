//! nsid: the server's identifier in the EDNS0 NSID option (RFC 5001) of the replies to
//! queries that ask for it with an NSID option, as CoreDNS's nsid plugin (`plugin/nsid`).
//!
//! CoreDNS wraps the response writer for such queries; here the plugin hands every query
//! on and, once the rest of the chain has given its reply (a cache hit answered at once
//! too), sets the option in that reply's OPT record ([`Serve::amend`]): in place, so
//! nothing is allocated, and with nothing kept in the chain's future.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::edns::NSID;
use ringdns_plugin::wire::{fit, set_option};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, Serves, Status, client_write,
    next_or_failure, next_or_failure_now, once_per_block_of,
};
use std::future::Future;
use std::sync::Arc;

/// The directive, for errors.
const NAME: &str = "nsid";

/// What setup parsed: the identifier's bytes, the option's data.
#[derive(Debug)]
pub struct Config {
    data: Vec<u8>,
}

/// The plugin's instance on one core.
pub struct Nsid {
    config: Arc<Config>,
}

impl Plugin for Nsid {
    const NAME: &'static str = NAME;
    type Config = Config;
    type Place = Serves;

    /// `nsid [DATA...]`, once per block: the arguments joined by spaces, else the host's
    /// name.
    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<Config, Error> {
        let mut data = ringdns_plugin::hostname::hostname();
        let mut seen = false;
        while d.next() {
            once_per_block_of(d, NAME, &mut seen)?;
            let args = d.remaining_args();
            if !args.is_empty() {
                data = args.join(" ");
            }
            if d.next_block() {
                return Err(d.plugin_err(NAME, format!("unknown property '{}'", d.val())));
            }
        }
        Ok(Config {
            data: data.into_bytes(),
        })
    }
}

impl Serve for Nsid {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Nsid {
            config: config.clone(),
        })
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        next_or_failure(NAME, next, req)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        next_or_failure_now(NAME, next, req)
    }

    /// The identifier set in the reply's OPT, when the query carried an NSID option (its
    /// payload, which RFC 5001 says a server ignores, is not looked at) and the reply is one
    /// the rest of the chain wrote: an rcode the server writes itself gets no NSID, as in
    /// CoreDNS, where that reply bypasses the plugin's writer.
    fn amend(&self, req: &mut Request<'_>, status: Status) -> Status {
        if !client_write(status.rcode)
            || req.reply.is_empty()
            || req.query.edns_option(NSID).is_none()
        {
            return status;
        }
        // The reply gets the client's OPT (the query has one) before the option goes in.
        if !req.is_finalized() {
            req.finalize_reply();
        }
        if set_option(req.reply, NSID, &self.config.data) {
            // The longer reply may no longer fit the client's size: cut as the server cuts.
            let max = req.max_reply_size();
            fit(req.reply, max);
        }
        status
    }
}

ringdns_plugin::export!(Nsid);

#[cfg(test)]
mod tests;
