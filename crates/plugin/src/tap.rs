//! The dnstap hook of the plugins that talk to upstreams (CoreDNS's forward finds the
//! `*dnstap.Dnstap` handlers of its block and taps FORWARDER_QUERY / FORWARDER_RESPONSE
//! into them). The dnstap plugin registers a [`Tapper`] in the block's [`Tappers`]
//! (`BlockSetup::block_shared`) at setup; forward, set up after it (plugin.cfg order),
//! keeps the registry and asks it for the core's [`CoreTap`] when it builds its per-core
//! instance. A block without dnstap gives `None`, and forward's query path only tests it.

use crate::registry::Registry;
use crate::{CoreInfo, Request};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Instant;

/// One exchange with an upstream, as a tap records it.
#[derive(Debug, Clone, Copy)]
pub struct Forwarded<'a> {
    /// The upstream's address.
    pub upstream: SocketAddr,
    /// Over TCP (or TLS) rather than UDP.
    pub tcp: bool,
    /// The query as sent (wire form).
    pub query: &'a [u8],
    /// The upstream's reply, when one came.
    pub reply: Option<&'a [u8]>,
    /// When the query was sent.
    pub sent: Instant,
    /// When the reply came (or the exchange ended).
    pub answered: Instant,
}

/// A core's taps of a block: what forward hands its exchanges to. Called on the query path:
/// an implementation encodes into the core's buffers and never waits.
pub trait CoreTap {
    /// Records an exchange with an upstream (FORWARDER_QUERY, and FORWARDER_RESPONSE when
    /// a reply came) made for the client's request `req` (dnstap's `extra` placeholders are
    /// filled in from it and its metadata, as CoreDNS's `TapMessageWithMetadata`).
    fn forwarded(&self, req: &Request<'_>, exchange: &Forwarded<'_>);
}

/// A block's dnstap: gives each core its taps.
pub trait Tapper: Send + Sync {
    /// The taps of the core `core` (the same instance the dnstap plugin's instance on that
    /// core uses); called at build time, on the core.
    fn core(&self, core: &CoreInfo) -> Option<Rc<dyn CoreTap>>;
}

/// A block's tappers, by directive name (`dnstap`).
pub type Tappers = Registry<dyn Tapper>;
