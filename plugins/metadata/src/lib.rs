//! metadata: collects the `plugin/label` values that plugins publish while they serve a
//! query, for the plugins that read them (log's `{/label}`), as CoreDNS's `plugin/metadata`.
//!
//! CoreDNS's collector asks every `metadata.Provider` of the block for lazily evaluated
//! functions before the chain runs. Here the plugin lends the rest of the chain a store
//! (`ringdns_plugin::metadata`) for queries in its zones, and each plugin publishes its
//! labels as it serves the query (`Request::set_metadata`); the readers look after the rest
//! returned, as CoreDNS's log does. Outside the zones, and in blocks without `metadata`, no
//! store exists and publishing is a no-op.

#![forbid(unsafe_code)]

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::metadata::Collector;
use ringdns_plugin::normalize::origins_from_args_or_block;
use ringdns_plugin::wire::name_to_wire;
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, Serves, Status,
};
use std::future::Future;
use std::sync::Arc;

/// The directive, for errors.
const NAME: &str = "metadata";

/// What setup parsed: the zones metadata is collected for, in wire form.
#[derive(Debug)]
pub struct Config {
    zones: Vec<Vec<u8>>,
}

/// A core's metadata plugin: its zones and the store of its passes that may not wait.
pub struct Metadata {
    config: Arc<Config>,
    collector: Collector,
}

impl Plugin for Metadata {
    const NAME: &'static str = NAME;
    type Config = Config;
    type Place = Serves;

    /// `metadata [ZONES...]`, once per block (a second is CoreDNS's argument error), no
    /// block; the zones default to the server block's.
    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let mut seen = false;
        let mut zones = Vec::new();
        while d.next() {
            if std::mem::replace(&mut seen, true) {
                return Err(d.plugin_arg_err(NAME));
            }
            let args = d.remaining_args();
            if d.next_block() {
                return Err(d.plugin_arg_err(NAME));
            }
            zones = origins_from_args_or_block(NAME, &args, &block.zones)
                .iter()
                .filter_map(|z| name_to_wire(z).ok())
                .collect();
        }
        Ok(Config { zones })
    }
}

impl Metadata {
    /// Whether the query's name is in the plugin's zones (CoreDNS's `Zones.Matches`).
    fn collects(&self, req: &Request<'_>) -> bool {
        let name = req.query.qname();
        self.config.zones.iter().any(|z| name.is_subdomain_of(z))
    }
}

impl Serve for Metadata {
    fn build(config: &Arc<Config>, _core: &CoreInfo) -> Option<Self> {
        Some(Metadata {
            config: config.clone(),
            collector: Collector::default(),
        })
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        let collect = self.collects(req);
        self.collector.serve(NAME, req, next, collect)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        let collect = self.collects(req);
        self.collector.serve_now(NAME, req, next, collect)
    }

    fn admits<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> bool {
        let collect = self.collects(req);
        self.collector.admits(req, next, collect)
    }
}

ringdns_plugin::export!(Metadata);

#[cfg(test)]
mod tests;
