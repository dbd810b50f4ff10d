//! One core's share of the server: its chain instances, its listeners' routers, and the
//! bookkeeping of its deferred queries. Built on the core itself, never shared.

use super::router::Router;
use crate::config::Config;
use crate::plugin::{CoreInfo, Handler};
use std::cell::{Cell, RefCell};
use std::net::SocketAddr;

/// A server block on one core.
pub struct CoreBlock<H> {
    /// The block's chain (plugin slots filled for the directives it uses).
    pub chain: H,
    /// `debug` in the block: panics are not recovered.
    pub debug: bool,
    /// `errors { stacktrace }`: a recovered panic is logged with its backtrace.
    pub stacktrace: bool,
    /// No plugin answers in this block: every query gets REFUSED.
    pub empty: bool,
}

/// A listener as the core serves it.
pub struct ListenerCtx {
    /// Its index in the core's listeners.
    pub index: usize,
    /// CoreDNS's name for it, for logs and metrics.
    pub name: String,
    /// Zone → block.
    pub router: Router,
    /// CH-class queries are allowed.
    pub allow_chaos: bool,
    /// The bound address, for `{local}`.
    pub local: SocketAddr,
    /// This core's counters of the queries the server answers before any block.
    pub dropped: crate::metrics::dns::Dropped,
}

impl ListenerCtx {
    /// Counts a query the server answered itself with `rcode` (zone `dropped`, as CoreDNS's
    /// `errorAndMetricsFunc`).
    pub fn count_dropped(
        &self,
        q: &crate::wire::Query<'_>,
        proto: crate::plugin::Proto,
        client: SocketAddr,
        rcode: u8,
        reply: &[u8],
    ) {
        use crate::metrics::dns::{Observation, family_index};
        self.dropped.record(
            &Observation {
                proto: usize::from(proto == crate::plugin::Proto::Tcp),
                family: family_index(client.ip()),
                qtype: q.qtype(),
                do_bit: q.do_bit(),
                request_size: q.packet().len(),
                response_size: reply.len(),
                duration: std::time::Duration::ZERO,
            },
            rcode,
        );
    }
}

/// Everything a core needs to serve, generic over the chain type so tests can serve with
/// chains of their own.
pub struct CoreServer<H> {
    /// The blocks in Corefile order.
    pub blocks: Vec<CoreBlock<H>>,
    /// The listeners in configuration order.
    pub listeners: Vec<ListenerCtx>,
    /// Queries being served as tasks (deferred), so shutdown can wait for them.
    pub inflight: Cell<usize>,
    /// Background refreshes plugins asked for, waiting to be started as tasks.
    pub refreshes: RefCell<Vec<Refresh>>,
}

/// A query to run through its block's chain again in the background (cache prefetch, stale
/// refresh), with no client waiting for the reply.
pub struct Refresh {
    /// The listener it came in on.
    pub listener: usize,
    /// The query as the client sent it.
    pub packet: Vec<u8>,
    /// The client it came from (for plugins that look at it).
    pub client: SocketAddr,
    /// Its transport.
    pub proto: crate::plugin::Proto,
}

impl<H: Handler> CoreServer<H> {
    /// Assembles a core server from its parts.
    pub fn new(blocks: Vec<CoreBlock<H>>, listeners: Vec<ListenerCtx>) -> Self {
        CoreServer {
            blocks,
            listeners,
            inflight: Cell::new(0),
            refreshes: RefCell::new(Vec::new()),
        }
    }

    /// Runs every plugin's end-of-batch hook (log flushing) in every block.
    pub fn after_batch(&self) {
        for b in &self.blocks {
            b.chain.after_batch();
        }
    }
}

impl CoreServer<crate::chain::Chain> {
    /// Builds this core's chains and routers from the configuration.
    pub fn build(config: &Config, core: &CoreInfo) -> Self {
        let blocks = config
            .blocks
            .iter()
            .map(|b| {
                let chain = crate::chain::build_chain(&b.plugins, core);
                let empty = chain.is_empty();
                b.setup.handlers.get_or_init(|| {
                    let mut names = Vec::new();
                    chain.plugin_names(&mut names);
                    names
                });
                CoreBlock {
                    chain,
                    debug: b.setup.debug,
                    stacktrace: b.setup.stacktrace,
                    empty,
                }
            })
            .collect();
        let listeners = config
            .listeners
            .iter()
            .enumerate()
            .map(|(index, l)| ListenerCtx {
                index,
                name: l.name.clone(),
                router: Router::new(&l.routes),
                allow_chaos: l.allow_chaos,
                local: l.addr,
                dropped: crate::metrics::dns::Dropped::new(&l.name, core.index),
            })
            .collect();
        CoreServer::new(blocks, listeners)
    }
}
