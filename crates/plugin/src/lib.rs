//! The ringdns plugin API: what every plugin implements, what it receives per query, the
//! CoreDNS return-code rule the server applies to what the chain returns, the helpers of
//! CoreDNS's `plugin/pkg` kind, and the crates a plugin builds on.
//!
//! A plugin depends on this crate alone (plus its own dependencies): the wire format, the
//! Corefile dispenser, the metrics registry, glommio and the log macros are re-exported
//! here, so every plugin of a build sees the same version of each. This crate knows no
//! plugin; only the chain the server generates from plugin.cfg names them.
//!
//! A plugin is two traits: [`Plugin`] (its directive, its setup, where it sits in the
//! chain) for every plugin, and [`Serve`] (its per-core instance and how it serves a query)
//! for those that take part in serving. The crate root names its plugin type with
//! [`export!`]. The guide for plugin authors is docs/plugins.md.

#![forbid(unsafe_code)]

pub mod autopath;
mod chain;
pub mod duration;
pub mod edit;
pub mod external;
mod fallthrough;
pub mod files;
pub mod hostname;
pub mod http;
pub mod interfaces;
pub mod logging;
pub mod lookup;
pub mod memory;
pub mod metadata;
pub mod name_text;
pub mod normalize;
mod place;
pub mod prehashed;
pub mod proxy_protocol;
pub mod quote;
pub mod readiness;
pub mod registry;
pub mod replacer;
mod request;
pub mod resolvconf;
pub mod reverse;
mod screen;
mod serve_future;
mod setup;
pub mod shared;
pub mod shutdown;
pub mod snapshot;
pub mod spare;
mod status;
pub mod stream;
pub mod tap;
#[cfg(feature = "tls")]
pub mod tls;
pub mod wrap;

pub use chain::{End, Handler, Link};
pub use fallthrough::Fallthrough;
pub use http::{HttpEndpoint, HttpHandler, HttpRequest, HttpResponse};
pub use lookup::{Lookup, LookupFuture};
pub use place::{ConfigOnly, Place, Serves, same_name};
pub use proxy_protocol::{ProxyPolicy, ProxyProtocol};
pub use readiness::Readiness;
pub use request::{Carried, Proto, Request};
pub use screen::{Screen, ScreenLink, Screens};
pub use serve_future::ServeFuture;
pub use setup::{
    BlockSetup, CoreInfo, ReloadSettings, TcpTimeouts, http_addr_arg, http_listen_addr,
};
pub use shared::ConfigShared;
pub use shutdown::{ShutdownHook, Stopping};
pub use status::{Deferred, Outcome, PluginError, Status, client_write};
pub use stream::{ReplyStream, SendFuture};

/// The thread-per-core executor every plugin's tasks and sockets run on.
pub use glommio;
/// The Corefile: [`corefile::Dispenser`] for setup, [`corefile::Error`] for its messages.
pub use ringdns_corefile as corefile;
/// Per-core counters and the registry a plugin registers its metric families with.
pub use ringdns_metrics as metrics;
/// The DNS wire format: views of queries, the reply writer, finalization.
pub use ringdns_wire as wire;

use crate::corefile::{Dispenser, Error};
use std::future::Future;
use std::sync::Arc;

/// Names a crate's plugin type for the chain the server generates from plugin.cfg, which
/// refers to it as `<crate>::RingdnsPlugin`: the crate root calls `export!(MyPlugin);`.
#[macro_export]
macro_rules! export {
    ($plugin:ty) => {
        /// The plugin this crate provides, as the server's generated chain names it.
        #[doc(hidden)]
        pub type RingdnsPlugin = $plugin;
    };
}

/// A plugin as the server sees it: a directive parsed once per server block, and a place
/// in the chain in plugin.cfg order. Plugins that only configure the block (root, bind,
/// debug, timeouts, reload, ready, health) implement this trait alone and are
/// [`ConfigOnly`]; those that serve queries also implement [`Serve`] and are [`Serves`].
pub trait Plugin: Sized + 'static {
    /// The directive name, as in plugin.cfg; used in errors and logs (`plugin/NAME: …`).
    /// The generated chain checks at compile time that it is the name plugin.cfg gives.
    const NAME: &'static str;

    /// What setup parsed; built once on the main thread and shared read-only by every core.
    type Config: Send + Sync + 'static;

    /// Where this plugin sits in a chain: [`Serves`] (a link with its per-core instance),
    /// [`Screens`] (a plugin that only answers or hands on before the rest, at no cost to
    /// the chain's future) or [`ConfigOnly`] (no link at all, so it costs nothing on the
    /// query path). Decided by the type, so the chain can neither drop a serving plugin nor
    /// carry an empty one.
    type Place: Place<Self>;

    /// Parses every occurrence of this plugin's directive in one block (`d.next()` steps
    /// from one occurrence to the next) and records block-wide settings in `block`.
    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Self::Config, Error>;

    /// The handle `/ready` polls when this plugin reports readiness (CoreDNS's plugins that
    /// implement `Ready() bool`); called once per block after setup, on the configuration
    /// every core shares. `None` (the default) for plugins that are always ready.
    fn readiness(_config: &Arc<Self::Config>) -> Option<std::sync::Weak<dyn Readiness>> {
        None
    }
}

/// The query side of a plugin that serves ([`Plugin::Place`] = [`Serves`]): its per-core
/// instance and the three ways a query reaches it (see [`Outcome`] and docs/plugins.md).
pub trait Serve: Plugin {
    /// Builds this core's instance from the block's configuration; `None` leaves the slot
    /// empty on this core (the query then passes straight to the rest of the chain).
    fn build(config: &Arc<Self::Config>, core: &CoreInfo) -> Option<Self>;

    /// Answers the query (returning an rcode for which [`client_write`] is true) or hands it
    /// to `next`. On a pass that may not wait ([`Request::can_wait`] false) a plugin that
    /// must wait returns [`Request::defer`]; a deferral from `next` is passed on with `?`.
    /// See [`Outcome`] for the return rule. The default hands every query on.
    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        next.serve(req)
    }

    /// Answers the query at once, without a future, when it can; `None` sends it through
    /// [`Serve::serve`] instead, so it must leave the request as it was and count nothing
    /// (housekeeping that `serve` would do anyway, such as dropping an expired cache entry,
    /// is fine). It cannot defer (it returns a [`Status`], not an [`Outcome`]): a query that
    /// must wait gets `None`. For the hot answers (a
    /// cache hit) this skips building and polling the chain's future. A plugin that wraps
    /// the rest of the chain (log, errors, metrics) calls [`next_or_failure_now`] and does
    /// its part only when that gave `Some`.
    /// The default is `None`: always through `serve`.
    fn serve_now<N: Handler>(&self, _req: &mut Request<'_>, _next: &N) -> Option<Status> {
        None
    }

    /// Amends the reply the query got from [`Serve::serve`] or [`Serve::serve_now`] (the
    /// rest of the chain's, usually: nsid's option, minimal's sections), and returns the
    /// status the chain goes on with. The chain calls it once per query, on the pass that
    /// served it (never after a deferral or a `None`), before outer plugins see the reply.
    /// Unlike a [`wrap::Wrap`] it keeps nothing across the rest's await, so a plugin that
    /// only edits replies (and keeps the default `serve`, or hands on with
    /// [`next_or_failure`]) adds no state of its own to the chain's future. The default
    /// returns `status` as it came.
    #[inline(always)]
    fn amend(&self, _req: &mut Request<'_>, status: Status) -> Status {
        status
    }

    /// Called once on this core's executor when a chain holding this instance becomes the
    /// core's current one: at start-up and after each reload, before the chain serves a
    /// query. The place to spawn the instance's background tasks (forward's connection
    /// janitor), which `build` cannot do because it may run before the executor runs tasks,
    /// and which the query path should not check for. A task should hold the instance's
    /// state weakly and end once it is gone: a reload drops the old instance. The default
    /// does nothing.
    fn start(&self) {}

    /// Called by the socket loop after each batch of queries, e.g. to flush buffered log
    /// lines with one write instead of one per query. Only for plugins that set
    /// [`Serve::AFTER_BATCH`].
    fn after_batch(&self) {}

    /// This plugin's turn when the server asks whether the block takes a query
    /// ([`Handler::admits`]), before any block serves it: a plugin that publishes metadata
    /// others filter on (geoip) publishes it here and hands on, the metadata plugin lends
    /// the rest a store, and a filter (view) asks the rest first, so that it sees what every
    /// plugin of the block published, then decides. It must not answer or count. The
    /// default hands on.
    fn admits<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> bool {
        next.admits(req)
    }

    /// Set by plugins whose [`Serve::after_batch`] does something, so that a core whose
    /// chains have none never schedules the end-of-batch work of its deferred queries.
    const AFTER_BATCH: bool = false;
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
/// the chain: SERVFAIL with `plugin/NAME: no next plugin found`. Not an `async fn`: its
/// future is the next plugin's, with no state of its own (see [`ServeFuture`]).
pub fn next_or_failure<N: Handler>(
    name: &'static str,
    next: &N,
    req: &mut Request<'_>,
) -> ServeFuture<impl Future<Output = Outcome>, std::future::Ready<Status>> {
    if next.is_end() {
        return ServeFuture::ready(Ok(no_next(name)));
    }
    ServeFuture::Next {
        fut: next.serve(req),
    }
}

/// [`next_or_failure`] for [`Serve::serve_now`]: `None` when the rest of the chain cannot
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

/// What [`next_or_failure`] gives when nothing follows `name`.
pub(crate) fn no_next(name: &'static str) -> Status {
    Status::error(
        crate::wire::rcode::SERVFAIL,
        PluginError::new(name, "no next plugin found"),
    )
}
