//! `coredns_plugin_enabled{server,zone,view,name}`: which plugins a block with *prometheus*
//! runs, for as long as its configuration is in use (a reload drops the old one's series).

use ringdns_plugin::metrics::{Desc, Kind, Sink, Source};
use std::sync::{Arc, OnceLock};

static PLUGIN_ENABLED: Desc = Desc {
    name: "coredns_plugin_enabled",
    help: "A metric that indicates whether a plugin is enabled on per server, zone and view basis.",
    kind: Kind::Gauge,
    labels: &["server", "zone", "view", "name"],
};

/// A block's routes and plugins, read at scrape time.
pub struct Enabled {
    routes: Arc<OnceLock<Vec<(String, String)>>>,
    handlers: Arc<OnceLock<Vec<&'static str>>>,
    /// The block's view, empty without one.
    view: String,
}

impl Enabled {
    /// For the block whose routes and chain plugins these will be.
    pub fn new(
        routes: Arc<OnceLock<Vec<(String, String)>>>,
        handlers: Arc<OnceLock<Vec<&'static str>>>,
        view: String,
    ) -> Self {
        Enabled {
            routes,
            handlers,
            view,
        }
    }
}

impl Source for Enabled {
    fn collect(&self, out: &mut Sink) {
        let (Some(routes), Some(names)) = (self.routes.get(), self.handlers.get()) else {
            return;
        };
        for (server, zone) in routes {
            for name in names {
                out.add(
                    &PLUGIN_ENABLED,
                    &[server, zone, &self.view, name],
                    ringdns_plugin::metrics::Sample::Int(1),
                );
            }
        }
    }
}
