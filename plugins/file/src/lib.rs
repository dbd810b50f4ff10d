//! file: authoritative answers from RFC 1035 zone files, as CoreDNS's file plugin, with
//! RFC 1034 §4.3.2 answering (ringdns-zone) and the zone reloaded when its serial changes.
//!
//! Every core reads the same zone ([`ringdns_plugin::snapshot::Snapshot`]: lock-free,
//! replaced whole by the reload thread), and answers on the inline pass. Only a CNAME chain that leaves the zone
//! defers: its target is looked up through the server, as CoreDNS's `upstream` does.

#![forbid(unsafe_code)]

mod setup;

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::opcode;
use ringdns_plugin::{
    BlockSetup, CoreInfo, Fallthrough, Handler, Outcome, Plugin, Request, Serve, Serves, Status,
};
use ringdns_zone::pick;
use ringdns_zone::serving::{self, Local};
use ringdns_zone::watch::ZoneFile;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// One zone served from one file, and how often the file is looked at.
pub struct FileZone {
    file: ZoneFile,
    reload: Duration,
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
            let name = format!("file-reload-{}", z.file.name.trim_end_matches('.'));
            ringdns_plugin::snapshot::poll_while(&name, z.reload, &config.zones, move |zones| {
                zones[i].file.check(Self::NAME);
            })
            .map_err(|e| d.plugin_err("file", format!("cannot start the reload thread: {e}")))?;
        }
        Ok(config)
    }
}

impl File {
    /// Answers from the zone into the reply, as far as the zone alone can. The zone is
    /// the most specific of ours that holds the name, the parent's for the DS of an apex.
    fn local(&self, req: &mut Request<'_>) -> Local {
        let (qname, qtype) = (req.query.qname(), req.query.qtype());
        let Some(fz) = pick::zone_for(&self.config.zones, |z| &z.file.origin, &qname, qtype) else {
            return Local::NotOurs;
        };
        if req.query.opcode() == opcode::NOTIFY {
            // NOTIFY concerns secondary zones; for a zone from a file CoreDNS drops it.
            return serving::drop_notify(Self::NAME, req, &fz.file.name);
        }
        serving::local(req, &fz.file.data, &self.config.fall)
    }
}

impl Serve for File {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(File {
            config: Arc::clone(config),
        })
    }

    // Not an `async fn`: serving's future is the whole of it (see `ServeFuture`).
    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        let local = self.local(req);
        serving::serve(Self::NAME, local, req, next)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        let local = self.local(req);
        serving::serve_now(Self::NAME, local, req, next)
    }
}

ringdns_plugin::export!(File);
