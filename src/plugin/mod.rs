//! The plugin contract: what every plugin implements, what it receives per query, and the
//! CoreDNS return-code rule the server applies to what the chain returns.
//!
//! This module knows no plugin; only the chain generated from plugin.cfg names them.

mod chain;
pub mod clock;
pub mod duration;
mod fallthrough;
pub mod normalize;
pub mod prehashed;
pub mod quote;
pub mod readiness;
mod request;
pub mod reverse;
mod setup;
pub mod spare;
mod status;

pub use chain::{End, Handler, Link};
pub use fallthrough::Fallthrough;
pub use readiness::Readiness;
pub use request::{Proto, Request};
pub use setup::{
    BlockSetup, CoreInfo, ReloadSettings, TcpTimeouts, http_addr_arg, http_listen_addr,
};
pub use status::{PluginError, Status, client_write};

use crate::corefile::{Dispenser, Error};
use std::future::Future;
use std::sync::Arc;

/// A plugin as the generated chain sees it: parsed once per server block, instantiated once
/// per core, then asked to serve each query that reaches its place in plugin.cfg order.
pub trait Plugin: Sized + 'static {
    /// The directive name, as in plugin.cfg; used in errors and logs (`plugin/NAME: …`).
    const NAME: &'static str;

    /// What setup parsed; built once on the main thread and shared read-only by every core.
    type Config: Send + Sync + 'static;

    /// Parses every occurrence of this plugin's directive in one block (`d.next()` steps
    /// from one occurrence to the next) and records block-wide settings in `block`.
    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Self::Config, Error>;

    /// Builds this core's instance; `None` for directives that only configure the block
    /// (bind, root, debug), which then cost nothing on the query path. The default is `None`:
    /// such a plugin implements only `setup`.
    fn build(_config: &Arc<Self::Config>, _core: &CoreInfo) -> Option<Self> {
        None
    }

    /// Answers the query (returning an rcode for which [`client_write`] is true) or hands it
    /// to `next`. See [`Status`] for the return rule and the deferral protocol. The default
    /// hands every query on (never called for a plugin whose `build` gives `None`).
    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Status> {
        next.serve(req)
    }

    /// Answers the query at once, without a future, when it can; `None` sends it through
    /// [`Plugin::serve`] instead, so it must leave the request as it was and count nothing
    /// (housekeeping that `serve` would do anyway, such as dropping an expired cache entry,
    /// is fine). It never defers: a query that must wait gets `None`. For the hot answers (a
    /// cache hit) this skips building and polling the chain's future. A plugin that wraps
    /// the rest of the chain (log, errors, metrics) calls [`next_or_failure_now`] and does
    /// its part only when that gave `Some`.
    /// The default is `None`: always through `serve`.
    fn serve_now<N: Handler>(&self, _req: &mut Request<'_>, _next: &N) -> Option<Status> {
        None
    }

    /// Called by the socket loop after each batch of queries, e.g. to flush buffered log
    /// lines with one write instead of one per query. Only for plugins that set
    /// [`Plugin::AFTER_BATCH`].
    fn after_batch(&self) {}

    /// Set by plugins whose [`Plugin::after_batch`] does something, so that a core whose
    /// chains have none never schedules the end-of-batch work of its deferred queries.
    const AFTER_BATCH: bool = false;

    /// The handle `/ready` polls when this plugin reports readiness (CoreDNS's plugins that
    /// implement `Ready() bool`); called once per block after setup, on the configuration
    /// every core shares. `None` (the default) for plugins that are always ready.
    fn readiness(_config: &Arc<Self::Config>) -> Option<std::sync::Weak<dyn Readiness>> {
        None
    }
}

/// CoreDNS's `plugin.ErrOnce` for setups that take one directive per block: call it on
/// every occurrence with the same `seen` flag.
pub fn once_per_block(d: &Dispenser<'_>, seen: &mut bool) -> Result<(), Error> {
    if std::mem::replace(seen, true) {
        return Err(d.err("this plugin can only be used once per Server Block"));
    }
    Ok(())
}

/// [`once_per_block`] for setups whose errors CoreDNS wraps in `plugin.Error(name, …)`:
/// the message reads `plugin/NAME: this plugin can only be used once per Server Block`.
pub fn once_per_block_of(d: &Dispenser<'_>, name: &str, seen: &mut bool) -> Result<(), Error> {
    if std::mem::replace(seen, true) {
        return Err(d.plugin_err(name, "this plugin can only be used once per Server Block"));
    }
    Ok(())
}

/// Calls `next`, or fails as CoreDNS's `NextOrFailure` does when nothing follows `name` in
/// the chain: SERVFAIL with `plugin/NAME: no next plugin found`.
pub async fn next_or_failure<N: Handler>(
    name: &'static str,
    next: &N,
    req: &mut Request<'_>,
) -> Status {
    if next.is_end() {
        return no_next(name);
    }
    next.serve(req).await
}

/// [`next_or_failure`] for [`Plugin::serve_now`]: `None` when the rest of the chain cannot
/// answer at once.
pub fn next_or_failure_now<N: Handler>(
    name: &'static str,
    next: &N,
    req: &mut Request<'_>,
) -> Option<Status> {
    if next.is_end() {
        return Some(no_next(name));
    }
    next.serve_now(req)
}

fn no_next(name: &'static str) -> Status {
    Status::error(
        crate::wire::rcode::SERVFAIL,
        PluginError::new(name, "no next plugin found"),
    )
}

/// Runs plugin `P`'s setup on the first directive of a one-block Corefile `text`, for the
/// plugins' own tests of what setup leaves in the block (or its `FILE:LINE - message`).
#[cfg(test)]
pub(crate) fn setup_for_test<P: Plugin>(text: &str) -> Result<BlockSetup, String> {
    let cf =
        crate::corefile::parse("Corefile", text, &|n| n == P::NAME).map_err(|e| e.to_string())?;
    let dir = &cf.blocks[0].directives[0];
    let mut block = BlockSetup::default();
    let mut d = crate::corefile::Dispenser::new(&dir.tokens);
    P::setup(&mut d, &mut block).map_err(|e| e.to_string())?;
    Ok(block)
}
