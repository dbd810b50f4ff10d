//! prometheus (CoreDNS's `metrics` package): counts every query its block serves under
//! CoreDNS's `coredns_dns_*` names and registers `/metrics`, which renders every family of
//! the process (`plugin/metrics`).
//!
//! Counting is per core into counters the registry handed out at build time, one set per
//! (server, zone) of the block, with every query-dependent label an array index: no lock,
//! no allocation per query. The endpoint's handler runs on the server's HTTP thread for its
//! address, off the query path: a scrape stops no core.

#![forbid(unsafe_code)]

mod enabled;

use enabled::Enabled;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::metrics::dns::{DnsCounters, Observation, Responses, family_index};
use ringdns_plugin::metrics::{expose, registry};
use ringdns_plugin::wire::Header;
use ringdns_plugin::wrap::{self, Wrap};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, HttpResponse, Outcome, Plugin, Proto, Request, Serve, Serves,
    Status, client_write, http_listen_addr,
};
use std::future::Future;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// CoreDNS's default address.
const DEFAULT: &str = "localhost:9153";

/// What setup found, shared by every core.
pub struct Config {
    /// The block's (server, zone) pairs, filled once listeners are grouped.
    routes: Arc<OnceLock<Vec<(String, String)>>>,
    /// The plugins that may write a reply in this block.
    directives: Vec<&'static str>,
    /// The block's view (`view NAME`), the `view` label; empty without one.
    view: String,
    /// `coredns_plugin_enabled` for this block, scraped while the configuration lives.
    _enabled: Arc<Enabled>,
}

/// One (server, zone) of the block on one core.
struct Slot {
    server: String,
    zone: String,
    dns: Arc<DnsCounters>,
    /// Replies per rcode by the plugin that wrote them; the first is the server ("").
    writers: Box<[(&'static str, Arc<Responses>)]>,
}

/// The per-core instance.
pub struct Metrics {
    slots: Box<[Slot]>,
}

/// `localhost` as CoreDNS (Go) listens on it: the IPv4 loopback when there is one.
fn listen_addr(text: &str) -> Result<SocketAddr, String> {
    if let Some(port) = text.strip_prefix("localhost:") {
        let v4 = ("localhost", port.parse::<u16>().map_err(|e| e.to_string())?)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.find(SocketAddr::is_ipv4));
        if let Some(a) = v4 {
            return Ok(a);
        }
    }
    http_listen_addr(text)
}

impl Plugin for Metrics {
    const NAME: &'static str = "prometheus";
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let mut seen = false;
        while d.next() {
            ringdns_plugin::once_per_block(d, &mut seen)?;
            let args = d.remaining_args();
            let text = match args.as_slice() {
                [] => DEFAULT,
                [a] => a.as_str(),
                _ => return Err(d.arg_err()),
            };
            let addr = listen_addr(text).map_err(|e| d.plugin_err("prometheus", e))?;
            while d.next_block() {
                match d.val() {
                    // Go runtime metrics have no counterpart here; accepted so CoreDNS
                    // Corefiles start.
                    "runtime_metrics" => {
                        if !d.remaining_args().is_empty() {
                            return Err(d.arg_err());
                        }
                    }
                    "tls" => {
                        return Err(d.err("plugin/prometheus: tls is not supported yet"));
                    }
                    other => {
                        return Err(
                            d.plugin_err("prometheus", format!("unknown property '{other}'"))
                        );
                    }
                }
            }
            block.http_endpoint(addr, "/metrics", |_| {
                HttpResponse::text(200, expose::render()).with_content_type(expose::CONTENT_TYPE)
            });
        }
        let enabled = Arc::new(Enabled::new(
            block.routes.clone(),
            block.handlers.clone(),
            block.view.clone().unwrap_or_default(),
        ));
        let weak: std::sync::Weak<dyn ringdns_plugin::metrics::Source> =
            Arc::downgrade(&enabled) as _;
        registry::add_weak_source(weak);
        Ok(Config {
            routes: block.routes.clone(),
            directives: block.directives.clone(),
            view: block.view.clone().unwrap_or_default(),
            _enabled: enabled,
        })
    }
}

impl Serve for Metrics {
    fn build(config: &Arc<Config>, core: &CoreInfo) -> Option<Self> {
        let routes = config.routes.get().map(Vec::as_slice).unwrap_or(&[]);
        let view = config.view.as_str();
        let slots = routes
            .iter()
            .map(|(server, zone)| {
                let writers = std::iter::once("")
                    .chain(config.directives.iter().copied())
                    .map(|w| {
                        (
                            w,
                            registry::cell::<Responses>(&[server, zone, view, w], core.index),
                        )
                    })
                    .collect();
                Slot {
                    server: server.clone(),
                    zone: zone.clone(),
                    dns: registry::cell(&[server, zone, view], core.index),
                    writers,
                }
            })
            .collect();
        Some(Metrics { slots })
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        wrap::serve(self, req, next)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        wrap::serve_now(self, req, next)
    }
}

/// Every client query is counted once, on the pass that served it.
impl Wrap for Metrics {
    /// When the query came (the request's time: no clock read).
    type Before = Instant;

    /// None for the server's own background queries: no client asked them.
    fn before(&self, req: &Request<'_>) -> Option<Instant> {
        (!req.is_refresh()).then(|| req.received())
    }

    fn after(&self, req: &mut Request<'_>, t0: Instant, status: Status) -> Status {
        self.record(req, &status, t0);
        status
    }
}

impl Metrics {
    /// The slot of the query's (server, zone): a block's chain only sees queries routed to
    /// it, so with one pair there is nothing to compare.
    #[inline]
    fn slot(&self, server: &str, zone: &str) -> Option<&Slot> {
        if self.slots.len() == 1 {
            return self.slots.first();
        }
        self.slots
            .iter()
            .find(|s| s.zone == zone && s.server == server)
    }

    fn record(&self, req: &mut Request<'_>, status: &Status, t0: Instant) {
        let Some(slot) = self.slot(req.server, req.zone) else {
            return;
        };
        let written = client_write(status.rcode) && !req.reply.is_empty();
        let (rcode, size, writer) = if written {
            // The size the client gets: after the OPT and truncation (the server then
            // sees the reply finalized and leaves it).
            if !req.is_finalized() {
                req.finalize_reply();
            }
            (
                Header::of(req.reply).map_or(status.rcode, Header::rcode),
                req.reply.len(),
                req.writer().unwrap_or(""),
            )
        } else {
            // The server writes it after the chain: CoreDNS reports size 0 and no plugin.
            (status.rcode, 0, "")
        };
        slot.dns.record(&Observation {
            proto: match req.proto {
                Proto::Udp => 0,
                Proto::Tcp => 1,
            },
            family: family_index(req.client.ip()),
            qtype: req.query.qtype(),
            do_bit: req.query.do_bit(),
            request_size: req.query.packet().len(),
            response_size: size,
            duration: t0.elapsed(),
        });
        let w = slot
            .writers
            .iter()
            .find(|(n, _)| *n == writer)
            .unwrap_or(&slot.writers[0]);
        w.1.record(rcode);
    }
}

ringdns_plugin::export!(Metrics);
