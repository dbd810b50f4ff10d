//! file: authoritative answers from RFC 1035 zone files, as CoreDNS's file plugin, with
//! RFC 1034 §4.3.2 answering (ringdns-zone) and the zone reloaded when its serial changes.
//!
//! Every core reads the same zone ([`Snapshot`]: lock-free, replaced whole by the reload
//! thread), and answers on the inline pass. Only a CNAME chain that leaves the zone
//! defers: its target is looked up through the server, as CoreDNS's `upstream` does.

#![forbid(unsafe_code)]

mod external;
mod reload;
mod setup;

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::rcode::{NOERROR, NXDOMAIN, REFUSED, SERVFAIL};
use ringdns_plugin::wire::{MessageWriter, opcode, rtype};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Fallthrough, Handler, Outcome, Plugin, Request, Serve, Serves, Status,
    next_or_failure, next_or_failure_now,
};
use ringdns_zone::Answered;
use ringdns_zone::registry::{Registry, SharedZone};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One zone served from one file.
pub struct FileZone {
    /// The origin, lower-case wire form.
    origin: Box<[u8]>,
    /// The origin as the Corefile gave it (normalised), for logs.
    name: String,
    path: PathBuf,
    reload: Duration,
    by_mtime: bool,
    /// The file as last read (the reload thread's; never touched on the query path).
    stamp: Mutex<Option<reload::Stamp>>,
    /// The zone; `None` until its file first loads (queries get SERVFAIL meanwhile).
    /// Shared with the block's registry, where transfer finds it.
    data: Arc<SharedZone>,
    /// The block's zones, told when this one changes.
    registry: Arc<Registry>,
}

/// The block's zones and its fallthrough.
pub struct Config {
    /// Longest origin first. Shared with the reload threads, which hold it weakly.
    zones: Arc<Vec<FileZone>>,
    fall: Fallthrough,
}

/// The per-core instance: the configuration it serves from.
pub struct File {
    config: Arc<Config>,
}

impl Plugin for File {
    const NAME: &'static str = "file";
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let config = setup::parse(d, block)?;
        for (i, z) in config.zones.iter().enumerate() {
            if z.reload.is_zero() {
                continue;
            }
            let name = format!("file-reload-{}", z.name.trim_end_matches('.'));
            ringdns_plugin::snapshot::poll_while(&name, z.reload, &config.zones, move |zones| {
                reload::check(&zones[i]);
            })
            .map_err(|e| d.plugin_err("file", format!("cannot start the reload thread: {e}")))?;
        }
        Ok(config)
    }
}

/// What the zone lookup decided, before any I/O.
enum Local {
    /// A reply is written (or an rcode chosen): done.
    Status(Status),
    /// Not in our zones: the next plugin's, or REFUSED when there is none (CoreDNS).
    NotOurs,
    /// NXDOMAIN under `fallthrough`: the next plugin's (SERVFAIL when there is none).
    Next,
    /// The CNAME chain left the zone: the deferred pass looks the target up.
    External,
}

impl File {
    /// The zone that holds `qname` (the most specific of ours).
    fn zone_for(&self, qname: &ringdns_plugin::wire::Name<'_>) -> Option<&FileZone> {
        self.config
            .zones
            .iter()
            .find(|z| qname.is_subdomain_of(&z.origin))
    }

    /// Answers from the zone into the reply, as far as the zone alone can.
    fn local(&self, req: &mut Request<'_>) -> Local {
        let q = req.query;
        let qname = q.qname();
        let Some(fz) = self.zone_for(&qname) else {
            return Local::NotOurs;
        };
        if q.opcode() == opcode::NOTIFY {
            // NOTIFY concerns secondary zones; for a zone from a file CoreDNS drops it.
            ringdns_plugin::info!(
                "plugin/file: Dropping notify from {} for {}",
                req.client.ip(),
                fz.name
            );
            return Local::Status(Status::rcode(NOERROR));
        }
        if matches!(q.qtype(), rtype::AXFR | rtype::IXFR) {
            // Transfers are the transfer plugin's; without it, refused.
            return Local::Status(Status::rcode(REFUSED));
        }
        let guard = fz.data.load();
        let Some(zone) = guard.as_ref() else {
            return Local::Status(Status::rcode(SERVFAIL));
        };
        let mut w = MessageWriter::reply(&q, req.reply, NOERROR);
        let answered = zone.answer(
            q.qname_bytes(),
            q.qtype(),
            q.do_bit(),
            req.proto == ringdns_plugin::Proto::Udp,
            &mut w,
        );
        if let Answered::External { .. } = answered {
            return Local::External;
        }
        if w.rcode() == NXDOMAIN && self.config.fall.through(&qname) {
            req.clear_reply();
            return Local::Next;
        }
        w.finish();
        req.finalize_reply();
        Local::Status(Status::written())
    }
}

impl Serve for File {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(File {
            config: Arc::clone(config),
        })
    }

    async fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Outcome {
        match self.local(req) {
            Local::Status(s) => Ok(s),
            Local::NotOurs if next.is_end() => Ok(Status::rcode(REFUSED)),
            Local::NotOurs | Local::Next => next_or_failure(Self::NAME, next, req).await,
            Local::External => {
                if !req.can_wait() {
                    req.clear_reply();
                    return req.defer();
                }
                Ok(self.external(req).await)
            }
        }
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        match self.local(req) {
            Local::Status(s) => Some(s),
            // CoreDNS: an authoritative plugin with nothing after it refuses what is not
            // its own.
            Local::NotOurs if next.is_end() => Some(Status::rcode(REFUSED)),
            Local::NotOurs | Local::Next => next_or_failure_now(Self::NAME, next, req),
            Local::External => {
                req.clear_reply();
                None
            }
        }
    }
}

ringdns_plugin::export!(File);
