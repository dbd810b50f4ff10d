//! any: answers ANY queries with one synthesised HINFO record, as RFC 8482 section 4.2 says
//! and as CoreDNS's any plugin (`plugin/any`) does, so that ANY cannot be used to pull every
//! record of a name (or to amplify an attack). Every other query goes to the next plugin
//! untouched.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::class::IN;
use ringdns_plugin::wire::rcode::{NOERROR, SERVFAIL};
use ringdns_plugin::wire::rtype::{ANY, HINFO};
use ringdns_plugin::wire::{MessageWriter, Owner, Section};
use ringdns_plugin::{BlockSetup, CoreInfo, Plugin, Request, Screen, Screens, Status};
use std::sync::Arc;

/// The HINFO's TTL: CoreDNS's (RFC 8482 leaves it to the implementer).
const TTL: u32 = 8482;

/// The HINFO RDATA RFC 8482 section 4.2 asks for: CPU "RFC8482", OS the empty string (two
/// character-strings, each a length byte and its bytes).
const RDATA: &[u8] = b"\x07RFC8482\x00";

/// The any plugin; stateless.
pub struct Any;

impl Plugin for Any {
    const NAME: &'static str = "any";
    type Config = ();
    type Place = Screens;

    /// `any`, with no arguments and no block: CoreDNS's two errors.
    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<(), Error> {
        while d.next() {
            if d.next_arg() {
                return Err(d.plugin_arg_err(Self::NAME));
            }
            if d.next_block() {
                return Err(d.plugin_err(Self::NAME, format!("unknown property '{}'", d.val())));
            }
        }
        Ok(())
    }
}

impl Screen for Any {
    fn build(_config: &Arc<()>, _core: &CoreInfo) -> Option<Self> {
        Some(Any)
    }

    fn screen(&self, req: &mut Request<'_>) -> Option<Status> {
        (req.query.qtype() == ANY).then(|| answer(req))
    }
}

/// The reply to an ANY query: NOERROR, the HINFO owned by the question name (the client's
/// case) in class IN, as CoreDNS writes it.
fn answer(req: &mut Request<'_>) -> Status {
    let mut w = MessageWriter::reply(&req.query, req.reply, NOERROR);
    let pushed = w.push(Section::Answer, Owner::Question, HINFO, IN, TTL, RDATA);
    w.finish();
    if pushed.is_err() {
        req.reply.clear();
        return Status::rcode(SERVFAIL);
    }
    req.finalize_reply();
    Status::written()
}

ringdns_plugin::export!(Any);

#[cfg(test)]
mod tests;
