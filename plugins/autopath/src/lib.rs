//! autopath: server-side search path completion, as CoreDNS's autopath plugin
//! (`plugin/autopath`).
//!
//! A client whose resolver walks a search path (a Kubernetes pod: `NAME.NS.svc.cluster.local`,
//! `NAME.svc.cluster.local`, `NAME.cluster.local`, `NAME`) asks up to four questions for one
//! name outside the cluster. autopath answers the first of them with the first reply of the
//! walk that is not NXDOMAIN, so the client asks once. A query goes, as CoreDNS's `ServeDNS`
//! decides:
//!
//! - a name outside autopath's zones, no search path (none configured, or the `@PLUGIN`
//!   gives none for this client), or a name not in (or under) the path's first element: to
//!   the next plugin untouched;
//! - the name equal to the first element: SERVFAIL (CoreDNS's `TrimZone` overshoots);
//! - else the name less the first element is the base, and `BASE.ELEMENT` is asked of the
//!   rest of the chain for each element in turn ([`subquery`]). A reply whose rcode the
//!   server would write itself (SERVFAIL…) or that is NXDOMAIN goes on to the next element;
//!   an error ends the walk with it; the first other reply is the answer, with a CNAME from
//!   the asked name to the owner of its first record of another name ([`cname`]), and is
//!   counted ([`metrics`]). When every element fails, the first element's reply is sent as
//!   it came.
//!
//! Each element's query and reply live in per-core scratch buffers ([`Scratch`], kept in a
//! pool: a deferred query holds its own across its waits), so a walk answered without
//! waiting allocates nothing once warm. `serve_now` walks with the rest of the chain's
//! `serve_now` and gives up (`None`, the request untouched) at the first element that cannot
//! be answered at once; the inline `serve` polls each element's future once, in place, and
//! defers at the first element that defers; the deferred pass walks to the end in a boxed
//! future (one allocation for a query that already waits in a task of its own), so that the
//! chain's future, built for every query of every block, does not grow by an element's
//! request (tests/alloc.rs keeps it within 2 KiB).

#![forbid(unsafe_code)]

mod cname;
mod metrics;
mod setup;
mod subquery;

use metrics::Counters;
use ringdns_plugin::autopath::{AutoPather, SearchPath};
use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::rcode::{NXDOMAIN, SERVFAIL};
use ringdns_plugin::wire::reply::full_rcode;
use ringdns_plugin::wire::{Name, Query};
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, PluginError, Request, Serve, ServeFuture,
    Serves, Status, client_write, error, next_or_failure, next_or_failure_now,
};
pub use setup::{Config, PluginSource};
use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, Waker};

/// The directive, for errors and logs.
const NAME: &str = "autopath";

/// How many scratch sets a core keeps for reuse (one per walk in flight).
const KEPT_SCRATCH: usize = 64;

/// The autopath instance on one core.
pub struct AutoPath {
    config: Arc<Config>,
    /// The `@PLUGIN` that gives search paths, when the block has one that registered.
    pather: Option<Arc<dyn AutoPather>>,
    /// Scratch sets not in use.
    pool: RefCell<Vec<Scratch>>,
    counters: Counters,
}

impl Plugin for AutoPath {
    const NAME: &'static str = NAME;
    type Config = Config;
    type Place = Serves;

    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        setup::parse(d, block)
    }
}

impl Serve for AutoPath {
    /// Resolves `@PLUGIN` (its setup ran after autopath's): a plugin the block does not use
    /// leaves autopath with nothing to do, as CoreDNS's `Handler(name)` finding none; one it
    /// uses that gave no search paths is CoreDNS's start-up error, logged here (once per
    /// configuration), and the block serves without autopath. With no search path at all
    /// the slot stays empty: every query would pass.
    fn build(config: &Arc<Config>, core: &CoreInfo) -> Option<Self> {
        let pather = match &config.plugin {
            Some(p) if p.in_block => match p.pathers.get(&p.name) {
                Some(pather) => Some(pather),
                None => {
                    if !p.reported.swap(true, Ordering::Relaxed) {
                        error!(
                            "plugin/{NAME}: {} does not implement the AutoPather interface",
                            p.name
                        );
                    }
                    return None;
                }
            },
            _ => None,
        };
        if pather.is_none() && config.search.is_empty() {
            return None;
        }
        Some(AutoPath {
            config: config.clone(),
            pather,
            pool: RefCell::new(Vec::new()),
            counters: Counters::new(core.index),
        })
    }

    // Not an `async fn`: the chain's future would hold an element's request beside the rest
    // of the chain's future for every query of every block. The inline pass walks polling
    // each element's future once, in place; only the deferred pass keeps a walk across
    // waits, boxed (that query already waits in a task of its own).
    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        if !self.in_zones(req) {
            return ServeFuture::Next {
                fut: next_or_failure(NAME, next, req),
            };
        }
        let mut lease = self.lease();
        let walk = match self.plan(req, lease.scratch()) {
            Ok(walk) => walk,
            Err(Some(status)) => return ServeFuture::ready(Ok(status)),
            Err(None) => {
                drop(lease);
                return ServeFuture::Next {
                    fut: next_or_failure(NAME, next, req),
                };
            }
        };
        if !req.can_wait() {
            let outcome = self.walk_at_once(req, walk, lease.scratch(), |sub| {
                let fut = pin!(next_or_failure(NAME, next, sub));
                match fut.poll(&mut Context::from_waker(Waker::noop())) {
                    Poll::Ready(Ok(status)) => Some(status),
                    // A deferral (or a plugin that pends where it should defer).
                    _ => None,
                }
            });
            return ServeFuture::ready(outcome.map_or_else(|| req.defer(), Ok));
        }
        ServeFuture::Own {
            fut: Box::pin(self.walk_waiting(req, next, walk, lease)),
        }
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        if !self.in_zones(req) {
            return next_or_failure_now(NAME, next, req);
        }
        let mut lease = self.lease();
        let walk = match self.plan(req, lease.scratch()) {
            Ok(walk) => walk,
            Err(Some(status)) => return Some(status),
            Err(None) => {
                drop(lease);
                return next_or_failure_now(NAME, next, req);
            }
        };
        // `None` at an element that cannot be answered now: the request is left as it came.
        self.walk_at_once(req, walk, lease.scratch(), |sub| {
            next_or_failure_now(NAME, next, sub)
        })
    }
}

/// A core's reusable buffers for one walk.
#[derive(Default)]
struct Scratch {
    /// The search path the `@PLUGIN` gives for this query.
    path: SearchPath,
    bufs: Bufs,
}

/// The buffers of a walk other than its search path.
#[derive(Default)]
struct Bufs {
    /// The element's query.
    query: Vec<u8>,
    /// The reply to it.
    reply: Vec<u8>,
    /// The first element's reply, sent when no element answers.
    first: Vec<u8>,
    /// A name being copied uncompressed.
    owner: Vec<u8>,
    /// An RDATA being copied uncompressed.
    rdata: Vec<u8>,
}

/// A scratch set taken from the pool, handed back when dropped (also when a pass is
/// abandoned).
struct Lease<'p>(Option<Scratch>, &'p RefCell<Vec<Scratch>>);

impl Lease<'_> {
    /// The scratch set (there until the lease is dropped).
    fn scratch(&mut self) -> &mut Scratch {
        self.0.get_or_insert_with(Scratch::default)
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            let mut pool = self.1.borrow_mut();
            if pool.len() < KEPT_SCRATCH {
                pool.push(s);
            }
        }
    }
}

/// Where a walk is.
struct Walk {
    /// The base's length: the asked name's labels before the first element.
    base: usize,
    /// The first element's status, and whether it was one.
    first: Option<u8>,
    /// An element's plugin asked for a background refresh (the cache's prefetch): the
    /// client's query is refreshed, which walks again.
    refresh: bool,
}

impl Walk {
    /// A walk for `req` along `path`: `Err(None)` when the query is not autopath's (no
    /// path, or a name outside its first element), `Err(Some(SERVFAIL))` when the name is
    /// that element itself (CoreDNS's `TrimZone` error).
    fn start(req: &Request<'_>, path: &SearchPath) -> Result<Walk, Option<Status>> {
        let qname = req.query.qname();
        let first = path.get(0).ok_or(None)?;
        // firstInSearchPath: the element itself or a name under it.
        if !qname.is_subdomain_of(first) {
            return Err(None);
        }
        let base = qname.wire_len() - first.len();
        if base == 0 && first != [0] {
            let zone = Name::from_wire(first)
                .map(|z| z.to_string())
                .unwrap_or_default();
            let msg = format!("trimzone: overshot qname: {qname}for zone {zone}");
            return Err(Some(Status::error(SERVFAIL, PluginError::new(NAME, msg))));
        }
        Ok(Walk {
            base,
            first: None,
            refresh: false,
        })
    }

    /// Writes the query of element `i` of `path` into `query` (`owner` and `rdata` are
    /// scratch) and returns it parsed; `None` skips the element (a name over 255 bytes).
    fn element<'b>(
        &self,
        req: &Request<'_>,
        path: &SearchPath,
        i: usize,
        query: &'b mut Vec<u8>,
        (owner, rdata): (&mut Vec<u8>, &mut Vec<u8>),
    ) -> Option<Query<'b>> {
        let suffix = path.get(i)?;
        let base = &req.query.qname_bytes()[..self.base];
        if !subquery::write(&req.query, base, suffix, query, owner, rdata) {
            return None;
        }
        Query::parse(query).ok()
    }
}

/// The request of one element: the client's, with the element's query and the scratch
/// reply; the same times, the server's lookup, and a background refresh's mark.
fn sub_request<'s, 'a: 's>(req: &Request<'a>, q: Query<'s>, reply: &'s mut Vec<u8>) -> Request<'s> {
    reply.clear();
    let mut sub = Request::new(
        q,
        req.client,
        req.local,
        req.proto,
        req.zone,
        req.server,
        reply,
        req.can_wait(),
    );
    sub.set_received(req.received());
    if req.can_wait() {
        sub.set_now(req.now());
    }
    if let Some(lookup) = req.lookup() {
        sub.set_lookup(lookup);
    }
    if req.is_refresh() {
        sub.set_refresh();
    }
    sub
}

impl AutoPath {
    /// Decides whether `req` is walked: its search path (the `@PLUGIN`'s is written into
    /// `s`) and where the walk starts, or why not (see [`Walk::start`]).
    fn plan(&self, req: &Request<'_>, s: &mut Scratch) -> Result<Walk, Option<Status>> {
        let path = self.search_path(req, &mut s.path);
        Walk::start(req, path)
    }

    /// The search path [`AutoPath::plan`] chose, for the walk.
    fn path<'p>(&'p self, path: &'p SearchPath) -> &'p SearchPath {
        if self.pather.is_some() {
            path
        } else {
            &self.config.search
        }
    }

    /// Walks with `ask`, which serves an element's request through the rest of the chain
    /// without waiting, or gives `None` when it cannot (then so does the walk, the
    /// request untouched).
    fn walk_at_once(
        &self,
        req: &mut Request<'_>,
        mut walk: Walk,
        s: &mut Scratch,
        mut ask: impl FnMut(&mut Request<'_>) -> Option<Status>,
    ) -> Option<Status> {
        let path = self.path(&s.path);
        let b = &mut s.bufs;
        for i in 0..path.len() {
            let scratch = (&mut b.owner, &mut b.rdata);
            let Some(q) = walk.element(req, path, i, &mut b.query, scratch) else {
                continue;
            };
            let mut sub = sub_request(req, q, &mut b.reply);
            let status = ask(&mut sub)?;
            walk.refresh |= sub.refresh_requested();
            if let Some(done) = self.judge(req, &mut walk, i, status, b) {
                return Some(done);
            }
        }
        Some(self.end(req, &walk, b))
    }

    /// The walk of a pass that may wait: each element's query served through the rest of
    /// the chain in turn, awaited.
    async fn walk_waiting<N: Handler>(
        &self,
        req: &mut Request<'_>,
        next: &N,
        mut walk: Walk,
        mut lease: Lease<'_>,
    ) -> Status {
        let s = lease.scratch();
        let path = self.path(&s.path);
        let b = &mut s.bufs;
        for i in 0..path.len() {
            let scratch = (&mut b.owner, &mut b.rdata);
            let Some(q) = walk.element(req, path, i, &mut b.query, scratch) else {
                continue;
            };
            let mut sub = sub_request(req, q, &mut b.reply);
            let status = match next_or_failure(NAME, next, &mut sub).await {
                Ok(status) => status,
                // Not on a pass that may wait: a plugin broke the contract.
                Err(_) => return Status::deferred_on_wait(NAME),
            };
            walk.refresh |= sub.refresh_requested();
            if let Some(done) = self.judge(req, &mut walk, i, status, b) {
                return done;
            }
        }
        self.end(req, &walk, b)
    }

    /// Whether the query's name is in one of autopath's zones.
    fn in_zones(&self, req: &Request<'_>) -> bool {
        let qname = req.query.qname();
        self.config.zones.iter().any(|z| qname.is_subdomain_of(z))
    }

    /// A scratch set for a walk: a kept one, or a new one while the pool is cold.
    fn lease(&self) -> Lease<'_> {
        let s = self.pool.borrow_mut().pop().unwrap_or_default();
        Lease(Some(s), &self.pool)
    }

    /// The query's search path: the `@PLUGIN`'s for this client (written into `buf`), else
    /// the resolv.conf's.
    fn search_path<'p>(&'p self, req: &Request<'_>, buf: &'p mut SearchPath) -> &'p SearchPath {
        match &self.pather {
            Some(p) => {
                buf.clear();
                p.search_path(req.client.ip(), &req.query.qname(), buf);
                buf
            }
            None => &self.config.search,
        }
    }

    /// What element `i`'s `status` (its reply in `bufs.reply`) makes of the walk: the
    /// status to return when it ends here, `None` to go on.
    fn judge(
        &self,
        req: &mut Request<'_>,
        walk: &mut Walk,
        i: usize,
        status: Status,
        bufs: &mut Bufs,
    ) -> Option<Status> {
        if status.error.is_some() {
            // CoreDNS returns at once, writing nothing.
            return Some(self.with_refresh(req, walk, status));
        }
        if i == 0 {
            bufs.first.clear();
            bufs.first.extend_from_slice(&bufs.reply);
            walk.first = Some(status.rcode);
        }
        // A reply that is NXDOMAIN, or that the server would write itself, goes on to the
        // next element; so does a claim to have written with nothing written.
        if !client_write(status.rcode)
            || bufs.reply.is_empty()
            || full_rcode(&bufs.reply) == Some(u16::from(NXDOMAIN))
        {
            return None;
        }
        let Bufs {
            reply,
            owner,
            rdata,
            ..
        } = bufs;
        let q = req.query;
        if let Err(e) = cname::write(&q, reply, req.reply, owner, rdata) {
            req.clear_reply();
            let msg = format!("cannot write the reply: {e}");
            return Some(Status::error(SERVFAIL, PluginError::new(NAME, msg)));
        }
        req.finalize_reply();
        self.counters.success(req.server);
        Some(self.with_refresh(req, walk, status))
    }

    /// No element answered: the first one's reply as it came, or its rcode for the server.
    fn end(&self, req: &mut Request<'_>, walk: &Walk, bufs: &Bufs) -> Status {
        let rcode = walk.first.unwrap_or(SERVFAIL);
        if client_write(rcode) {
            req.clear_reply();
            req.reply.extend_from_slice(&bufs.first);
            req.finalize_reply();
        }
        self.with_refresh(req, walk, Status::rcode(rcode))
    }

    /// `status`, after passing an element's refresh request on to the client's query.
    fn with_refresh(&self, req: &mut Request<'_>, walk: &Walk, status: Status) -> Status {
        if walk.refresh {
            req.request_refresh();
        }
        status
    }
}

ringdns_plugin::export!(AutoPath);

#[cfg(test)]
mod tests;
