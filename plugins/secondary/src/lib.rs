//! secondary: zones transferred in from their primaries (AXFR, RFC 5936), as CoreDNS's
//! secondary plugin, kept current by their SOA timers (RFC 1034 §4.3.5) and by NOTIFY
//! (RFC 1996), and answered as *file* answers (ringdns-zone's `serving`).
//!
//! Each zone has a std thread of its own ([`refresh`]) that does the blocking TCP work and
//! swaps the zone in whole ([`ringdns_plugin::snapshot::Snapshot`]); every core reads it
//! lock-free. A NOTIFY from a primary is answered on the query path and wakes that thread
//! with one `try_send`.

#![forbid(unsafe_code)]

mod client;
mod refresh;
mod reply;
mod schedule;
mod setup;
mod xfr;
mod zone;

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::rcode::NOERROR;
use ringdns_plugin::wire::{MessageWriter, opcode};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Fallthrough, Handler, Outcome, Plugin, Request, Serve, Serves, Status,
};
use ringdns_zone::pick;
use ringdns_zone::registry::Registry;
use ringdns_zone::serving::{self, Local};
use std::sync::Arc;
use zone::SecondaryZone;

/// The block's secondary zones and its fallthrough.
pub struct Config {
    /// Longest origin first, so the first match is the most specific zone.
    zones: Vec<Arc<SecondaryZone>>,
    fall: Fallthrough,
}

/// The per-core instance: the configuration it serves from.
pub struct Secondary {
    config: Arc<Config>,
}

impl Plugin for Secondary {
    const NAME: &'static str = "secondary";
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let parsed = setup::parse(d, &block.zones)?;
        let registry = block.block_shared::<Registry>();
        let mut zones = Vec::with_capacity(parsed.zones.len());
        for spec in parsed.zones {
            let origin = ringdns_plugin::wire::name_to_wire(&spec.name)
                .map_err(|e| d.plugin_err(Self::NAME, e))?
                .into_boxed_slice();
            let z = SecondaryZone::get_or_start(&spec.name, origin, spec.primaries, &registry)
                .map_err(|e| {
                    d.plugin_err(Self::NAME, format!("cannot start the transfer thread: {e}"))
                })?;
            zones.push(z);
        }
        zones.sort_by_key(|z| std::cmp::Reverse(z.inner.origin.len()));
        Ok(Config {
            zones,
            fall: parsed.fall,
        })
    }
}

impl Secondary {
    /// Answers from the zone into the reply, as far as the zone alone can. The zone is
    /// the most specific of ours that holds the name, the parent's for the DS of an apex.
    fn local(&self, req: &mut Request<'_>) -> Local {
        let (qname, qtype) = (req.query.qname(), req.query.qtype());
        let Some(z) = pick::zone_for(&self.config.zones, |z| &z.inner.origin, &qname, qtype) else {
            return Local::NotOurs;
        };
        if req.query.opcode() == opcode::NOTIFY {
            return notify(z, req);
        }
        serving::local(req, &z.inner.data, &self.config.fall)
    }
}

/// A NOTIFY for zone `z`: from a primary, answered (NOERROR, AA, the question echoed,
/// RFC 1996 §4.7) and the zone's thread woken for a serial check; from anyone else,
/// ignored with an error logged (RFC 1996 §3.10), so it gets no reply.
fn notify(z: &SecondaryZone, req: &mut Request<'_>) -> Local {
    let from = req.client.ip();
    if !z.is_primary(from) {
        ringdns_plugin::error!(
            "plugin/secondary: Dropping notify from {from} for {}: not a primary of the zone",
            z.inner.name
        );
        return Local::Status(Status::rcode(NOERROR));
    }
    let mut w = MessageWriter::reply(&req.query, req.reply, NOERROR);
    w.set_aa(true);
    w.finish();
    req.finalize_reply();
    z.wake(from);
    Local::Status(Status::written())
}

impl Serve for Secondary {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Secondary {
            config: Arc::clone(config),
        })
    }

    fn serve<N: Handler>(
        &self,
        req: &mut Request<'_>,
        next: &N,
    ) -> impl std::future::Future<Output = Outcome> {
        let local = self.local(req);
        serving::serve(Self::NAME, local, req, next)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        let local = self.local(req);
        serving::serve_now(Self::NAME, local, req, next)
    }
}

ringdns_plugin::export!(Secondary);
