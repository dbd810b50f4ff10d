//! minimal: positive replies without their authority and additional sections, as CoreDNS's
//! minimal plugin (`plugin/minimal`).
//!
//! The plugin hands every query on; once the rest of the chain has written its reply it
//! looks at it ([`Serve::amend`]): a reply CoreDNS's `response.Typify` calls NOERROR (an
//! answer, or a plain empty NOERROR) loses everything after its answer section, and gets the
//! client's OPT back as every reply does; NXDOMAIN, NODATA, delegations, errors, transfers
//! and the rest go out as they are. The reply is cut in place: nothing is allocated, and
//! nothing is kept in the chain's future.

#![forbid(unsafe_code)]

mod typify;

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::flags::TC;
use ringdns_plugin::wire::rtype::OPT;
use ringdns_plugin::wire::{HeaderMut, Section, records};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, Serves, Status, client_write,
    next_or_failure, next_or_failure_now,
};
use std::future::Future;
use std::sync::Arc;
use std::time::SystemTime;
use typify::{Kind, typify};

/// The directive, for errors.
const NAME: &str = "minimal";

/// The minimal plugin; stateless.
pub struct Minimal;

impl Plugin for Minimal {
    const NAME: &'static str = NAME;
    type Config = ();
    type Place = Serves;

    /// `minimal`, with no arguments.
    fn setup(d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<(), Error> {
        while d.next() {
            if d.next_arg() {
                return Err(d.plugin_arg_err(NAME));
            }
            if d.next_block() {
                return Err(d.plugin_err(NAME, format!("unknown property '{}'", d.val())));
            }
        }
        Ok(())
    }
}

impl Serve for Minimal {
    fn build(_config: &Arc<()>, _core: &CoreInfo) -> Option<Self> {
        Some(Minimal)
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        next_or_failure(NAME, next, req)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        next_or_failure_now(NAME, next, req)
    }

    /// Strips a positive reply the rest of the chain wrote; an rcode the server writes
    /// itself has no reply yet and is left to it.
    fn amend(&self, req: &mut Request<'_>, status: Status) -> Status {
        if client_write(status.rcode)
            && !req.reply.is_empty()
            && typify(req.reply, req.query.qtype(), SystemTime::now) == Kind::NoError
        {
            strip(req);
        }
        status
    }
}

/// Cuts the reply after its answer section and gives it the client's OPT again.
fn strip(req: &mut Request<'_>) {
    let Ok(mut walk) = records(req.reply) else {
        return;
    };
    let mut answers_end = walk.question_end();
    // Records that go: whether any is more than an OPT (which comes back).
    let mut more = false;
    for r in &mut walk {
        let Ok(r) = r else { return };
        match r.section {
            Section::Answer => answers_end = r.range.end,
            _ => more |= r.rtype != OPT,
        }
    }
    if !more {
        // Nothing but the client's OPT after the answer: the reply is what it would become.
        return;
    }
    let reply = &mut *req.reply;
    reply.truncate(answers_end);
    let mut h = HeaderMut::new(reply);
    h.set_count(Section::Authority, 0);
    h.set_count(Section::Additional, 0);
    // Truncation keeps records in order: a cut reply that still had authority or additional
    // records has its whole answer, and without them it fits (CoreDNS strips before it cuts).
    h.set_flag(TC, false);
    req.finalize_reply();
}

ringdns_plugin::export!(Minimal);

#[cfg(test)]
mod tests;
