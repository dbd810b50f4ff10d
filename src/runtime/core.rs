//! One core's share of the server: its chain instances, its listeners' routers, and the
//! bookkeeping of its deferred queries. Built on the core itself, never shared.

use super::router::Router;
use crate::config::Config;
use crate::plugin::{CoreInfo, Handler};
use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;

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
    /// Whether the inline pass is worth trying (see [`InlineOdds`]).
    pub inline: InlineOdds,
}

/// How many inline passes in a row must defer before the block stops trying them.
const DEFER_STREAK: u32 = 8;

/// While skipping, one query in this many still tries the inline pass, so a block whose
/// queries start being answered inline (a cache that warmed up) goes back to it.
const RETRY_EVERY: u32 = 64;

/// Learns whether a block answers inline. A block whose queries all wait (forward without a
/// cache in front) pays for an inline pass that only defers and then for the task; after
/// [`DEFER_STREAK`] deferrals in a row its queries go straight to the task, which serves
/// them as every deferred query (nothing is carried over from an inline pass).
#[derive(Debug, Default)]
pub struct InlineOdds {
    streak: Cell<u32>,
    skipped: Cell<u32>,
}

impl InlineOdds {
    /// Whether the next query should try the inline pass.
    pub fn try_inline(&self) -> bool {
        if self.streak.get() < DEFER_STREAK {
            return true;
        }
        let n = self.skipped.get().wrapping_add(1);
        self.skipped.set(n);
        n.is_multiple_of(RETRY_EVERY)
    }

    /// Records how an inline pass ended.
    pub fn record(&self, deferred: bool) {
        if deferred {
            self.streak.set(self.streak.get().saturating_add(1));
        } else {
            self.streak.set(0);
        }
    }
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
    /// `proxyproto`: the PROXY headers its loops read; `None` (most listeners) reads none.
    pub proxy: Option<crate::plugin::ProxyProtocol>,
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

/// What the socket loops need of a listener besides serving: how to find it again after a
/// reload, and its TCP limits. Parallel to [`CoreServer::listeners`].
#[derive(Debug, Clone, Copy)]
pub struct ListenerMeta {
    /// Transport and bound address: the same key in two configurations is the same
    /// listener, whose sockets a reload keeps.
    pub key: crate::config::ListenerKey,
    /// TCP timeouts and query cap of its connections.
    pub tcp: crate::plugin::TcpTimeouts,
}

/// Everything a core needs to serve, generic over the chain type so tests can serve with
/// chains of their own.
pub struct CoreServer<H> {
    /// The blocks in Corefile order.
    pub blocks: Vec<CoreBlock<H>>,
    /// The listeners in configuration order.
    pub listeners: Vec<ListenerCtx>,
    /// Their keys and TCP limits, in the same order.
    pub meta: Vec<ListenerMeta>,
    /// Queries being served as tasks (deferred), so shutdown can wait for them. One count
    /// per core, shared by the servers a reload replaced, whose tasks may still run.
    pub inflight: Rc<Cell<usize>>,
    /// Background refreshes plugins asked for, waiting to be started as tasks.
    pub refreshes: RefCell<Vec<Refresh>>,
    /// A task that runs the plugins' end-of-batch work for finished deferred queries is
    /// queued (one per executor turn, not one per query).
    pub flush_queued: Cell<bool>,
    /// Some block has a plugin with end-of-batch work (log); else there is none to run.
    pub has_after_batch: bool,
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
    /// Assembles a core server from its parts (DNS listeners with default TCP limits).
    pub fn new(blocks: Vec<CoreBlock<H>>, listeners: Vec<ListenerCtx>) -> Self {
        let meta = listeners
            .iter()
            .map(|l| ListenerMeta {
                key: (crate::config::Transport::Dns, l.local, None),
                tcp: crate::plugin::TcpTimeouts::default(),
            })
            .collect();
        let has_after_batch = blocks.iter().any(|b| b.chain.has_after_batch());
        CoreServer {
            blocks,
            listeners,
            meta,
            inflight: Rc::new(Cell::new(0)),
            refreshes: RefCell::new(Vec::new()),
            flush_queued: Cell::new(false),
            has_after_batch,
        }
    }

    /// Counts this server's deferred queries with `prev`'s: the server it replaces on the
    /// same core.
    pub fn sharing_inflight_with(mut self, prev: &CoreServer<H>) -> Self {
        self.inflight = prev.inflight.clone();
        self
    }

    /// Runs every plugin's start hook in every block, in Corefile order, on this core's
    /// executor: once, when this server becomes the core's current one (see
    /// [`super::swap::Current`]), so that plugins start their background tasks here and not
    /// on the query path.
    pub fn start(&self) {
        for b in &self.blocks {
            b.chain.start();
        }
    }

    /// Runs every plugin's end-of-batch hook (log flushing) in every block.
    pub fn after_batch(&self) {
        if !self.has_after_batch {
            return;
        }
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
                    inline: InlineOdds::default(),
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
                router: Router::new(&l.routes, |b| config.blocks[b].setup.view.is_some()),
                allow_chaos: l.allow_chaos,
                local: l.addr,
                dropped: crate::metrics::dns::Dropped::new(&l.name, core.index),
                proxy: l.proxy.clone(),
            })
            .collect();
        let mut server = CoreServer::new(blocks, listeners);
        server.meta = config
            .listeners
            .iter()
            .map(|l| ListenerMeta {
                key: l.key(),
                tcp: l.tcp,
            })
            .collect();
        server
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::Route;
    use crate::plugin::{Outcome, Request, Status};
    use crate::wire::MessageWriter;
    use crate::wire::rcode::NOERROR;
    use std::cell::Cell;
    use std::rc::Rc;

    /// A query for example. A IN: the test kit's, shared with the plugins' tests.
    pub use ringdns_testkit::QUERY;

    /// Answers every query at once (NOERROR) and notes, for each, whether another task (one
    /// that sets `other_ran`) has run yet: for checking that a socket loop under a flood
    /// still lets the core's other tasks run.
    #[derive(Default)]
    pub struct Notes {
        /// Set by the test's other task when it runs.
        pub other_ran: Rc<Cell<bool>>,
        /// Queries served while `other_ran` was still unset.
        pub served_before: Rc<Cell<usize>>,
        /// Queries served in all.
        pub served: Rc<Cell<usize>>,
    }

    impl Handler for Notes {
        async fn serve(&self, req: &mut Request<'_>) -> Outcome {
            self.served.set(self.served.get() + 1);
            if !self.other_ran.get() {
                self.served_before.set(self.served_before.get() + 1);
            }
            MessageWriter::reply(&req.query, req.reply, NOERROR).finish();
            Ok(Status::rcode(NOERROR))
        }

        fn is_end(&self) -> bool {
            false
        }

        fn after_batch(&self) {}
    }

    /// A core with one listener (dns://:53) and one block for the root zone served by `chain`.
    pub fn one_block<H: Handler>(chain: H, debug: bool) -> CoreServer<H> {
        let listener = ListenerCtx {
            index: 0,
            name: "dns://:53".into(),
            router: Router::new(
                &[Route {
                    zone: ".".into(),
                    zone_wire: vec![0],
                    block: 0,
                }],
                |_| false,
            ),
            allow_chaos: false,
            local: "127.0.0.1:53".parse().unwrap(),
            dropped: crate::metrics::dns::Dropped::new("dns://:53", 0),
            proxy: None,
        };
        let block = CoreBlock {
            chain,
            debug,
            stacktrace: false,
            empty: false,
            inline: Default::default(),
        };
        CoreServer::new(vec![block], vec![listener])
    }
}
