//! dnstap: the client's queries and replies (CLIENT_QUERY, CLIENT_RESPONSE), and forward's
//! exchanges with its upstreams (FORWARDER_QUERY, FORWARDER_RESPONSE), as dnstap messages
//! over bidirectional Frame Streams to a reader on a unix socket, TCP or TLS, as CoreDNS's
//! `plugin/dnstap`, or (`dnstap listen`) to every sink that connects to ringdns. Each core
//! encodes into its own bounded buffer and has its own writer (and, for a reader it dials,
//! its own connection); a slow or absent reader costs dropped (and counted) messages, never
//! a delayed query. `extra` is literal text or CoreDNS's replacer format
//! (`ringdns_plugin::replacer`), rendered per message.

#![forbid(unsafe_code)]

mod core;
mod counters;
mod fstrm;
mod listen;
pub mod proto;
mod setup;
mod tls;
mod writer;

pub use counters::Counters;
pub use setup::{Endpoint, Extra, TapConfig};

/// Decodes one data frame's payload (what follows its length) with the dnstap schema:
/// for a sink of a test's own, or a tool, that reads what ringdns writes.
pub fn decode(payload: &[u8]) -> Result<proto::Dnstap, prost::DecodeError> {
    <proto::Dnstap as prost::Message>::decode(payload)
}

use crate::core::CoreTaps;
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::tap::{CoreTap, Tapper, Tappers};
use ringdns_plugin::wire::MessageWriter;
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, Serves, Status, client_write,
    next_or_failure, next_or_failure_now,
};
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a stop waits for the writers to send what is queued and end their streams
/// (STOP, FINISH): CoreDNS's flush and close, bounded.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// Loads of the Corefile that had a dnstap line, numbered from 1.
static LOADS: AtomicU64 = AtomicU64::new(0);
/// The newest of them whose chain a core made current: the writers of older loads end
/// their streams (STOP, FINISH) then, rather than when their chain is finally dropped
/// (which waits for every listener loop of the core to serve a batch with the new one).
static CURRENT: AtomicU64 = AtomicU64::new(0);

/// One load's number, shared by its blocks (`BlockSetup::shared`).
struct Load(u64);

impl Default for Load {
    fn default() -> Self {
        Load(LOADS.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

/// A block's `dnstap` lines and the state their writers share.
#[derive(Default)]
pub struct Shared {
    /// The load this configuration came from.
    pub load: u64,
    /// The lines, in order: every message goes to each.
    pub taps: Vec<TapConfig>,
    /// The server stops: the writers send what is queued, STOP, and end.
    pub stopping: AtomicBool,
    /// Writers running, on all cores (and `listen` lines' listener threads).
    pub writers: AtomicUsize,
}

/// What setup gives every core.
pub struct Config {
    shared: Arc<Shared>,
}

/// The block's dnstap as forward finds it (`ringdns_plugin::tap`).
struct BlockTapper(Arc<Shared>);

impl Tapper for BlockTapper {
    fn core(&self, core: &CoreInfo) -> Option<Rc<dyn CoreTap>> {
        Some(core::for_core(&self.0, core) as Rc<dyn CoreTap>)
    }
}

/// The per-core instance.
pub struct Dnstap {
    taps: Rc<CoreTaps>,
}

impl Plugin for Dnstap {
    const NAME: &'static str = "dnstap";
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let taps = setup::parse(d)?;
        let shared = Arc::new(Shared {
            taps,
            load: block.shared::<Load>().0,
            ..Shared::default()
        });
        block
            .block_shared::<Tappers>()
            .register(Self::NAME, Arc::new(BlockTapper(shared.clone())));
        let stop = shared.clone();
        block.on_shutdown(move |_| {
            stop.stopping.store(true, Ordering::Relaxed);
            let t0 = Instant::now();
            while stop.writers.load(Ordering::Acquire) > 0 && t0.elapsed() < STOP_WAIT {
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Ok(Config { shared })
    }
}

impl Serve for Dnstap {
    fn build(config: &Arc<Config>, core: &CoreInfo) -> Option<Self> {
        Some(Dnstap {
            taps: core::for_core(&config.shared, core),
        })
    }

    /// On the deferred pass, the last one a query takes, CLIENT_QUERY is tapped before the
    /// rest runs, so that it comes before forward's messages, as in CoreDNS. Nothing is kept
    /// across the rest's await: the response is tapped in [`Serve::amend`].
    /// On a pass that may not wait, the CLIENT_QUERY is built in [`Serve::amend`], after
    /// the rest ran: the `extra` placeholders are rendered here, before, as CoreDNS renders
    /// them when it taps the query.
    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        if !req.is_refresh() {
            if req.can_wait() {
                self.taps.client_query(req, false);
            } else if self.taps.formats {
                self.taps.save_query_extra(req);
            }
        }
        next_or_failure(Self::NAME, next, req)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        if self.taps.formats && !req.is_refresh() {
            self.taps.save_query_extra(req);
        }
        next_or_failure_now(Self::NAME, next, req)
    }

    /// Once per query, on the pass that served it: CLIENT_QUERY when that pass was an
    /// inline one (nothing was tapped yet), then CLIENT_RESPONSE. The server's own
    /// refreshes are not client queries.
    fn amend(&self, req: &mut Request<'_>, status: Status) -> Status {
        if req.is_refresh() {
            return status;
        }
        if !req.can_wait() {
            self.taps.client_query(req, true);
        }
        let full = self.taps.shared.taps.iter().any(|t| t.full);
        if full && !client_write(status.rcode) {
            // The reply the server will write, so that `full` shows it.
            MessageWriter::reply(&req.query, req.reply, status.rcode).finish();
            req.finalize_reply();
        }
        self.taps.client_response(req, Instant::now());
        status
    }

    /// Starts the core's writers (one per `dnstap` line).
    fn start(&self) {
        CURRENT.fetch_max(self.taps.shared.load, Ordering::Relaxed);
        writer::start(&self.taps);
    }
}

impl Shared {
    /// Whether the writers should end their streams: the server stops, or a newer
    /// configuration with dnstap became current.
    pub fn ending(&self) -> bool {
        self.stopping.load(Ordering::Relaxed) || self.load < CURRENT.load(Ordering::Relaxed)
    }
}

ringdns_plugin::export!(Dnstap);

#[cfg(test)]
mod tests;
