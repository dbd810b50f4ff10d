//! The per-query context every plugin receives.

mod edited;

pub use edited::Carried;

use crate::wire::Query;
use crate::{Deferred, Outcome, Status};
use std::cell::Cell;
use std::net::SocketAddr;
use std::time::Instant;

/// The transport a query came over; decides the reply size limit and what logs show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// A datagram: replies are limited to the client's advertised size (512 without EDNS).
    Udp,
    /// A TCP stream: replies may be up to 65 535 bytes.
    Tcp,
}

impl Proto {
    /// `udp` or `tcp`, as CoreDNS's `{proto}` and metrics labels spell it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Proto::Udp => "udp",
            Proto::Tcp => "tcp",
        }
    }
}

/// One query on its way through a block's chain. Borrows the packet and the reply buffer of
/// the socket loop, so serving allocates nothing. It carries the query's times too
/// ([`Request::received`], [`Request::now`]), so that every plugin reads the same clock
/// reading and none reads a clock of its own on the inline path.
pub struct Request<'a> {
    /// The parsed query (borrowed from the packet, original case kept).
    pub query: Query<'a>,
    /// The client's address and port.
    pub client: SocketAddr,
    /// The address the query arrived on (the listener's bound address).
    pub local: SocketAddr,
    /// UDP or TCP.
    pub proto: Proto,
    /// The server block zone that matched (lower-case FQDN), for logs and metrics.
    pub zone: &'a str,
    /// The listener as CoreDNS names it (`dns://:53`), for logs and metrics.
    pub server: &'a str,
    /// Where a plugin writes its reply (see `wire::MessageWriter`); empty until one does.
    pub reply: &'a mut Vec<u8>,
    can_wait: bool,
    finalized: bool,
    refresh: bool,
    refresh_requested: bool,
    writer: Option<&'static str>,
    /// When the server took the query in; `None` until the server notes it or a plugin
    /// first asks (a `Cell`, so that the first ask can fill it through `&self`).
    received: Cell<Option<Instant>>,
    /// The time of a pass after the first (a deferred query's task): `None` on the first
    /// pass, whose time is `received`; on a later pass, read when a plugin first asks (or
    /// noted by the server), so a task whose plugins never ask reads no clock.
    pass: Option<Cell<Option<Instant>>>,
    /// The way back into the server for lookups ([`Request::lookup`]); deferred passes only.
    lookup: Option<&'a (dyn crate::lookup::Lookup + 'a)>,
    /// The connection, for replies of many messages ([`Request::stream`]); deferred TCP
    /// passes only.
    stream: Option<&'a (dyn crate::stream::ReplyStream + 'a)>,
    /// The request's metadata, lent by the `metadata` plugin ([`Request::metadata`]);
    /// `None` in a block without it.
    meta: Option<&'a crate::metadata::Metadata>,
}

impl<'a> Request<'a> {
    /// A request as the server hands it to a chain. `can_wait` is false on the inline pass.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        query: Query<'a>,
        client: SocketAddr,
        local: SocketAddr,
        proto: Proto,
        zone: &'a str,
        server: &'a str,
        reply: &'a mut Vec<u8>,
        can_wait: bool,
    ) -> Self {
        Request {
            query,
            client,
            local,
            proto,
            zone,
            server,
            reply,
            can_wait,
            finalized: false,
            refresh: false,
            refresh_requested: false,
            writer: None,
            received: Cell::new(None),
            pass: None,
            lookup: None,
            stream: None,
            meta: None,
        }
    }

    /// The request's metadata (CoreDNS's `metadata.ValueFunc` reads it); `None` when the
    /// block has no `metadata` plugin, or the query is outside its zones.
    pub fn metadata(&self) -> Option<&'a crate::metadata::Metadata> {
        self.meta
    }

    /// Publishes `label` (`plugin/name`) with `value` for the plugins that read metadata;
    /// false, and nothing done, where no metadata is collected (CoreDNS's `SetValueFunc`).
    pub fn set_metadata(&self, label: &str, value: impl std::fmt::Display) -> bool {
        match self.meta {
            Some(m) => {
                m.set(label, value);
                true
            }
            None => false,
        }
    }

    /// Whether a plugin may await I/O or timers now. On the inline pass (the socket loop
    /// polls the chain once, in place) it may not: it must return [`Request::defer`].
    pub const fn can_wait(&self) -> bool {
        self.can_wait
    }

    /// Asks the server to serve this query again as a task on this core, where waiting is
    /// allowed: `return req.defer();` from [`crate::Serve::serve`]. Plugins call it before
    /// doing anything that must happen only once. The one way to make a [`Deferred`].
    pub fn defer(&self) -> Outcome {
        debug_assert!(!self.can_wait, "defer() on a pass that may wait");
        Err(Deferred(()))
    }

    /// When the server took the query in: a UDP query's batch time (the socket loop reads
    /// the clock once per batch), a TCP message's (read when a plugin first asks), and on a
    /// deferred pass the time of its first pass; a background refresh's is its task's (read
    /// at the first ask). For what is measured from the query's arrival: log's and
    /// prometheus' durations, forward's deadline. Every plugin gets the same reading, and
    /// the clock is read at most once per request.
    pub fn received(&self) -> Instant {
        if let Some(at) = self.received.get() {
            return at;
        }
        let at = Instant::now();
        self.received.set(Some(at));
        at
    }

    /// The time of this pass, for what is compared with stored times (the cache's TTLs,
    /// rrl's accounts). On the inline passes and a background refresh it is
    /// [`Request::received`] (a UDP query's batch time: no clock read of its own); on a
    /// deferred query's task, read when a plugin of that task first asks (the task's start,
    /// in practice: the cache asks first; [`Request::start_later_pass`]), so that a query
    /// that waited in a queue is not judged by the time it arrived. A plugin that
    /// needs the time after one of its own waits (an upstream's reply) reads the clock.
    pub fn now(&self) -> Instant {
        let Some(pass) = &self.pass else {
            return self.received();
        };
        if let Some(at) = pass.get() {
            return at;
        }
        let at = Instant::now();
        pass.set(Some(at));
        at
    }

    /// Notes when the query was taken in (the server does this: a UDP batch's time, or a
    /// deferred query's first pass), so that [`Request::received`] reads no clock.
    pub fn set_received(&mut self, at: Instant) {
        self.received.set(Some(at));
    }

    /// Notes the time of a pass after the first: [`Request::now`] gives it,
    /// [`Request::received`] does not change.
    pub fn set_now(&mut self, at: Instant) {
        self.pass = Some(Cell::new(Some(at)));
    }

    /// Marks a pass after the first (the server does this when a deferred query's task
    /// starts): [`Request::now`] is then read when a plugin first asks, in that task, instead
    /// of being the time the query came in. Reading it lazily keeps a deferred query whose
    /// plugins never ask (forward alone) from paying a clock read.
    pub fn start_later_pass(&mut self) {
        self.pass = Some(Cell::new(None));
    }

    /// The server, for resolving a name through its blocks as this client would (CoreDNS's
    /// `upstream`): present on deferred passes, so a plugin that needs it defers first.
    pub fn lookup(&self) -> Option<&'a (dyn crate::lookup::Lookup + 'a)> {
        self.lookup
    }

    /// Gives the request the server's lookup (the runtime does this for deferred passes).
    pub fn set_lookup(&mut self, lookup: &'a (dyn crate::lookup::Lookup + 'a)) {
        self.lookup = Some(lookup);
    }

    /// The client's connection, for a reply of many messages (a zone transfer): present on
    /// deferred passes of TCP queries, so a plugin that streams defers first.
    pub fn stream(&self) -> Option<&'a (dyn crate::stream::ReplyStream + 'a)> {
        self.stream
    }

    /// Gives the request its connection (the runtime does this for deferred TCP passes).
    pub fn set_stream(&mut self, stream: &'a (dyn crate::stream::ReplyStream + 'a)) {
        self.stream = Some(stream);
    }

    /// The largest reply this client accepts: 65 535 over TCP; over UDP the advertised EDNS
    /// size floored at 512, or 512 without EDNS.
    pub fn max_reply_size(&self) -> usize {
        self.query.max_reply_size(self.proto == Proto::Tcp)
    }

    /// Applies the server's last touches to the reply now (the client's OPT, truncation to
    /// [`Request::max_reply_size`]), so that outer plugins see the bytes that will be sent.
    /// Plugins call it after writing a reply; the server calls it for replies that were not.
    pub fn finalize_reply(&mut self) {
        let max = self.max_reply_size();
        crate::wire::finalize(self.reply, &self.query, max);
        self.finalized = true;
    }

    /// Empties the reply so another plugin can write one (it will be finalized again).
    pub fn clear_reply(&mut self) {
        self.reply.clear();
        self.finalized = false;
        self.writer = None;
    }

    /// The plugin that wrote the reply (the innermost one that returned with a reply
    /// written), for the `plugin` label of `coredns_dns_responses_total`; `None` while
    /// nothing is written or when the server writes it.
    pub const fn writer(&self) -> Option<&'static str> {
        self.writer
    }

    /// Records who wrote the reply, unless an inner plugin already did: the chain calls it
    /// as each plugin returns.
    pub(crate) fn note_writer(&mut self, name: &'static str, status: &Status) {
        if self.writer.is_none() && !self.reply.is_empty() && crate::client_write(status.rcode) {
            self.writer = Some(name);
        }
    }

    /// Whether [`Request::finalize_reply`] ran since the reply was last written.
    pub const fn is_finalized(&self) -> bool {
        self.finalized
    }

    /// Asks the server to run this query through the block's chain once more in the
    /// background, after the client has its answer, as an internal refresh (see
    /// [`Request::is_refresh`]). The cache uses it to prefetch and to refresh stale entries.
    pub fn request_refresh(&mut self) {
        self.refresh_requested = true;
    }

    /// Whether a plugin asked for a background refresh of this query.
    pub const fn refresh_requested(&self) -> bool {
        self.refresh_requested
    }

    /// True for the server's own background re-query: its reply goes to no client, so plugins
    /// that log or count client queries leave it out, and the cache does not answer it from
    /// itself but stores what comes back.
    pub const fn is_refresh(&self) -> bool {
        self.refresh
    }

    /// Marks a request as a background refresh (the server does this).
    pub fn set_refresh(&mut self) {
        self.refresh = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// `example. A IN`.
    const QUERY: &[u8] = &[
        0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 7, b'e', b'x', b'a', b'm', b'p', b'l',
        b'e', 0, 0, 1, 0, 1,
    ];

    fn request(reply: &mut Vec<u8>, can_wait: bool) -> Request<'_> {
        let q = Query::parse(QUERY).unwrap();
        let at = "127.0.0.1:53".parse().unwrap();
        Request::new(q, at, at, Proto::Tcp, ".", "dns://:53", reply, can_wait)
    }

    #[test]
    fn a_requests_time_is_read_once_and_then_stands_still() {
        let mut reply = Vec::new();
        let req = request(&mut reply, false);
        let first = req.received();
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(req.received(), first, "one reading for every plugin");
        assert_eq!(req.now(), first, "on the inline pass, now is when it came");
    }

    #[test]
    fn the_time_the_server_notes_is_the_requests() {
        let batch = Instant::now() - Duration::from_secs(5);
        let mut reply = Vec::new();
        let mut req = request(&mut reply, false);
        req.set_received(batch);
        assert_eq!((req.received(), req.now()), (batch, batch));
        // A deferred pass: it came with the batch, and is served at its task's time.
        let task = batch + Duration::from_secs(1);
        let mut reply = Vec::new();
        let mut req = request(&mut reply, true);
        req.set_received(batch);
        req.set_now(task);
        assert_eq!((req.received(), req.now()), (batch, task));
    }

    #[test]
    fn a_later_pass_reads_its_time_at_the_first_ask_and_keeps_it() {
        let batch = Instant::now() - Duration::from_secs(5);
        let mut reply = Vec::new();
        let mut req = request(&mut reply, true);
        req.set_received(batch);
        req.start_later_pass();
        let before = Instant::now();
        let first = req.now();
        assert!(first >= before, "read at the ask, not the query's arrival");
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(req.now(), first, "then it stands still for the pass");
        assert_eq!(req.received(), batch);
    }
}
