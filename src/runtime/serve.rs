//! Serving one query, from the raw packet to the reply bytes: the acceptance rules, routing,
//! the chain, CoreDNS's return-code rule and the last touches (OPT, truncation).
//!
//! The socket loops call [`serve_inline`] first, over the borrowed packet, allocating and
//! spawning nothing: the chain is asked to answer at once (`Handler::serve_now`, a cache hit
//! or whoami, with no future built), else its future is polled once, in place. Only when a
//! plugin needs to wait (it returns `Request::defer`) is the query served again by
//! [`serve_deferred`] in a task.

use super::core::{CoreServer, ListenerCtx, Refresh};
use crate::plugin::{Handler, Proto, Request, client_write};
use crate::wire::class::IN as CLASS_IN;
use crate::wire::rcode::{FORMERR, REFUSED, SERVFAIL};
use crate::wire::{self, MessageWriter, Query};
use futures_lite::FutureExt;
use std::any::Any;
use std::future::Future;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// What to do with the reply buffer after serving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Send it.
    Send,
    /// Send nothing (dropped query, or a plugin that answered nothing).
    Drop,
    /// A plugin must wait: serve the query again with [`serve_deferred`]. Nothing is carried
    /// over: the deferred pass starts again from the packet (a plugin that defers decides
    /// nothing before it does).
    Defer,
}

/// Where the query goes after the checks that come before any chain.
enum Routed<'a> {
    Done(Verdict),
    Chain {
        query: Query<'a>,
        block: usize,
        zone: &'a str,
    },
}

fn max_size(q: &Query<'_>, proto: Proto) -> usize {
    q.max_reply_size(proto == Proto::Tcp)
}

/// A header-level reply (FORMERR, NOTIMP) to a packet that did not parse as a query.
fn reject(packet: &[u8], rcode: u8, reply: &mut Vec<u8>) -> Verdict {
    if wire::reject_reply(packet, rcode, reply) {
        Verdict::Send
    } else {
        Verdict::Drop
    }
}

/// A reply with just an rcode (and the client's OPT), written by the server.
fn error_reply(q: &Query<'_>, rcode: u8, proto: Proto, reply: &mut Vec<u8>) -> Verdict {
    MessageWriter::reply(q, reply, rcode).finish();
    wire::finalize(reply, q, max_size(q, proto));
    Verdict::Send
}

// Inlined: returned through memory, its Query was read back right after being written
// piecewise (a store-forwarding stall on every query in the profile).
#[inline(always)]
fn route<'a, H: Handler>(
    core: &CoreServer<H>,
    l: &'a ListenerCtx,
    packet: &'a [u8],
    cut: bool,
    (proto, client): (Proto, SocketAddr),
    reply: &mut Vec<u8>,
) -> Routed<'a> {
    if cut {
        return Routed::Done(reject(packet, FORMERR, reply));
    }
    let query = match Query::parse(packet) {
        Ok(q) => q,
        Err(r) => {
            return Routed::Done(match r.rcode() {
                Some(rc) => reject(packet, rc, reply),
                None => Verdict::Drop,
            });
        }
    };
    if query.bad_edns_version() {
        wire::badvers_reply(&query, reply);
        return Routed::Done(Verdict::Send);
    }
    if query.qclass() != CLASS_IN && !l.allow_chaos {
        return Routed::Done(refused(l, &query, proto, client, reply));
    }
    // A block with a view takes the query if its chain admits it (CoreDNS's filter
    // functions); asked over a request of its own, with nothing written.
    let admits = |bi: usize, zone: &str| {
        let mut scratch = Vec::new();
        let mut req = Request::new(
            query,
            client,
            l.local,
            proto,
            zone,
            &l.name,
            &mut scratch,
            false,
        );
        core.blocks[bi].chain.admits(&mut req)
    };
    let Some((block, zone)) = l.router.route(query.qname_bytes(), query.qtype(), admits) else {
        return Routed::Done(refused(l, &query, proto, client, reply));
    };
    Routed::Chain { query, block, zone }
}

/// REFUSED by the server before any block, counted under the zone `dropped`.
fn refused(
    l: &ListenerCtx,
    q: &Query<'_>,
    proto: Proto,
    client: SocketAddr,
    reply: &mut Vec<u8>,
) -> Verdict {
    let v = error_reply(q, REFUSED, proto, reply);
    l.count_dropped(q, proto, client, REFUSED, reply);
    v
}

/// Queues the background refresh a plugin asked for (never from a refresh itself).
fn queue_refresh<H>(core: &CoreServer<H>, li: usize, req: &Request<'_>) {
    if req.refresh_requested() && !req.is_refresh() {
        core.refreshes.borrow_mut().push(Refresh {
            listener: li,
            packet: req.query.packet().to_vec(),
            client: req.client,
            proto: req.proto,
        });
    }
}

/// Applies CoreDNS's return rule to the rcode the chain returned.
fn finish(req: &mut Request<'_>, rcode: u8) -> Verdict {
    if !client_write(rcode) {
        MessageWriter::reply(&req.query, req.reply, rcode).finish();
        req.finalize_reply();
        return Verdict::Send;
    }
    if req.reply.is_empty() {
        // CoreDNS: an rcode that says "written" with nothing written sends nothing.
        return Verdict::Drop;
    }
    if !req.is_finalized() {
        req.finalize_reply();
    }
    Verdict::Send
}

thread_local! {
    /// The backtrace of the last panic on this thread, captured by the hook that
    /// [`install_panic_hook`] sets, for blocks with `errors { stacktrace }`.
    static LAST_BACKTRACE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Keeps the default panic message and also captures the backtrace, so the recovery can log
/// it for blocks that ask for it.
pub fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let bt = std::backtrace::Backtrace::force_capture().to_string();
        LAST_BACKTRACE.with(|b| *b.borrow_mut() = Some(bt));
        default(info);
    }));
}

/// Logs a recovered panic as CoreDNS does, and counts it (`coredns_panics_total`).
fn log_panic(server: &str, payload: &(dyn Any + Send), stacktrace: bool) {
    crate::metrics::expose::count_panic();
    let msg = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("unknown panic");
    let bt = LAST_BACKTRACE.with(|b| b.borrow_mut().take());
    match bt.filter(|_| stacktrace) {
        Some(bt) => crate::error!("Recovered from panic in server: {server:?} {msg}\n{bt}"),
        None => crate::error!("Recovered from panic in server: {server:?} {msg}"),
    }
}

/// Serves one query in place. `cut` says the datagram was longer than the buffer. The
/// request's time is read when a plugin first asks for it (a TCP message's time, read only
/// if a plugin needs it); a UDP batch's queries use [`serve_batched`].
pub fn serve_inline<H: Handler>(
    core: &CoreServer<H>,
    l: &ListenerCtx,
    packet: &[u8],
    cut: bool,
    client: SocketAddr,
    proto: Proto,
    reply: &mut Vec<u8>,
) -> Verdict {
    serve_in_place(core, l, packet, cut, (client, proto, None), reply)
}

/// [`serve_inline`] for a datagram of a UDP batch received at `batch_time`: the clock is
/// read once per batch, and every plugin sees that time (`Request::received`, `now`).
pub fn serve_batched<H: Handler>(
    core: &CoreServer<H>,
    l: &ListenerCtx,
    packet: &[u8],
    cut: bool,
    client: SocketAddr,
    batch_time: Instant,
    reply: &mut Vec<u8>,
) -> Verdict {
    serve_in_place(
        core,
        l,
        packet,
        cut,
        (client, Proto::Udp, Some(batch_time)),
        reply,
    )
}

/// The inline passes: `from` is the client, the transport, and the time the server noted
/// for the query, if any.
#[inline]
fn serve_in_place<H: Handler>(
    core: &CoreServer<H>,
    l: &ListenerCtx,
    packet: &[u8],
    cut: bool,
    (client, proto, received): (SocketAddr, Proto, Option<Instant>),
    reply: &mut Vec<u8>,
) -> Verdict {
    reply.clear();
    let (query, bi, zone) = match route(core, l, packet, cut, (proto, client), reply) {
        Routed::Done(v) => return v,
        Routed::Chain { query, block, zone } => (query, block, zone),
    };
    let block = &core.blocks[bi];
    if block.empty {
        return refused(l, &query, proto, client, reply);
    }
    if !block.inline.try_inline() {
        return Verdict::Defer;
    }
    let mut req = Request::new(query, client, l.local, proto, zone, &l.name, reply, false);
    if let Some(at) = received {
        req.set_received(at);
    }
    // First without a future: a chain that answers at once (a cache hit) is done here. Its
    // status is written in place rather than returned through `catch_unwind`'s result,
    // whose copy stalled store forwarding on every hit (perf).
    let mut now = None;
    let polled = match guarded(block.debug, || now = block.chain.serve_now(&mut req)) {
        Ok(()) => match now {
            Some(status) => {
                block.inline.record(false);
                queue_refresh(core, l.index, &req);
                return finish(&mut req, status.rcode);
            }
            None => {
                let mut fut = pin!(block.chain.serve(&mut req));
                let mut cx = Context::from_waker(Waker::noop());
                guarded(block.debug, || fut.as_mut().poll(&mut cx))
            }
        },
        Err(payload) => Err(payload),
    };
    let deferred = matches!(polled, Ok(Poll::Pending | Poll::Ready(Err(_))));
    block.inline.record(deferred);
    match polled {
        Ok(Poll::Ready(Ok(status))) => {
            queue_refresh(core, l.index, &req);
            finish(&mut req, status.rcode)
        }
        // Deferred, or a plugin that awaited without checking `can_wait`: serve it again
        // where waiting is allowed.
        Ok(_) => {
            req.reply.clear();
            Verdict::Defer
        }
        Err(payload) => {
            log_panic(&l.name, payload.as_ref(), block.stacktrace);
            let v = error_reply(&req.query, SERVFAIL, proto, req.reply);
            l.count_dropped(&req.query, proto, client, SERVFAIL, req.reply);
            v
        }
    }
}

/// Runs `f`, recovering a panic unless the block has `debug`.
fn guarded<R>(debug: bool, f: impl FnOnce() -> R) -> std::thread::Result<R> {
    if debug {
        Ok(f())
    } else {
        std::panic::catch_unwind(AssertUnwindSafe(f))
    }
}

/// Serves a deferred query as a task: plugins may wait for I/O and timers. `received` is
/// when its first pass took it in (`Request::received`); the pass's time (`Request::now`)
/// is read in the task when a plugin first asks, so a chain that never asks (forward
/// alone) reads no clock for it. `from` is the client, its transport and, over TCP, its
/// connection, for plugins that answer with many messages (`Request::stream`).
pub async fn serve_deferred<H: Handler>(
    core: &CoreServer<H>,
    l: &ListenerCtx,
    packet: &[u8],
    from: (SocketAddr, Proto, Option<&dyn crate::plugin::ReplyStream>),
    received: Instant,
    reply: &mut Vec<u8>,
) -> Verdict {
    serve_at_depth(core, l, packet, from, received, reply, 0).await
}

/// The server's side of `Request::lookup` for one deferred pass: a lookup runs the query
/// through the same listener's blocks, as a query from the same client, one level deeper.
struct ServerLookup<'c, H> {
    core: &'c CoreServer<H>,
    l: &'c ListenerCtx,
    client: SocketAddr,
    proto: Proto,
    depth: u8,
}

impl<H: Handler> crate::plugin::Lookup for ServerLookup<'_, H> {
    fn lookup<'a>(&'a self, query: &'a [u8]) -> crate::plugin::LookupFuture<'a> {
        Box::pin(async move {
            if self.depth >= crate::plugin::lookup::MAX_DEPTH {
                return None;
            }
            let mut reply = Vec::with_capacity(512);
            let v = serve_at_depth(
                self.core,
                self.l,
                query,
                (self.client, self.proto, None),
                Instant::now(),
                &mut reply,
                self.depth + 1,
            )
            .await;
            (v == Verdict::Send).then_some(reply)
        })
    }
}

async fn serve_at_depth<H: Handler>(
    core: &CoreServer<H>,
    l: &ListenerCtx,
    packet: &[u8],
    (client, proto, stream): (SocketAddr, Proto, Option<&dyn crate::plugin::ReplyStream>),
    received: Instant,
    reply: &mut Vec<u8>,
    depth: u8,
) -> Verdict {
    reply.clear();
    let (query, bi, zone) = match route(core, l, packet, false, (proto, client), reply) {
        Routed::Done(v) => return v,
        Routed::Chain { query, block, zone } => (query, block, zone),
    };
    let block = &core.blocks[bi];
    let via = ServerLookup {
        core,
        l,
        client,
        proto,
        depth,
    };
    let mut req = Request::new(query, client, l.local, proto, zone, &l.name, reply, true);
    req.set_received(received);
    req.start_later_pass();
    req.set_lookup(&via);
    if let Some(s) = stream {
        req.set_stream(s);
    }
    // Inline in the calling task's state (a reused worker for UDP); tests/alloc.rs keeps the
    // chain's future small, as it is built and moved into place for every deferred query.
    let chain = block.chain.serve(&mut req);
    let status = if block.debug {
        Ok(chain.await)
    } else {
        AssertUnwindSafe(chain).catch_unwind().await
    };
    match status {
        Ok(Err(_deferred)) => {
            crate::error!(
                "a plugin deferred a query that was already deferred; answering SERVFAIL"
            );
            error_reply(&req.query, SERVFAIL, proto, req.reply)
        }
        Ok(Ok(s)) => {
            queue_refresh(core, l.index, &req);
            finish(&mut req, s.rcode)
        }
        Err(payload) => {
            log_panic(&l.name, payload.as_ref(), block.stacktrace);
            error_reply(&req.query, SERVFAIL, proto, req.reply)
        }
    }
}

/// Runs a background refresh through its block's chain; the reply goes nowhere.
async fn serve_refresh<H: Handler>(core: &CoreServer<H>, r: &Refresh) {
    let l = &core.listeners[r.listener];
    let mut reply = Vec::new();
    let (query, bi, zone) = match route(core, l, &r.packet, false, (r.proto, r.client), &mut reply)
    {
        Routed::Done(_) => return,
        Routed::Chain { query, block, zone } => (query, block, zone),
    };
    let block = &core.blocks[bi];
    let mut req = Request::new(
        query, r.client, l.local, r.proto, zone, &l.name, &mut reply, true,
    );
    req.set_refresh();
    if let Err(payload) = AssertUnwindSafe(block.chain.serve(&mut req))
        .catch_unwind()
        .await
    {
        log_panic(&l.name, payload.as_ref(), block.stacktrace);
    }
}

/// Starts the background refreshes queued since the last call, one task each.
pub fn spawn_refreshes<H: Handler + 'static>(core: &std::rc::Rc<CoreServer<H>>) {
    if core.refreshes.borrow().is_empty() {
        return;
    }
    let queued = std::mem::take(&mut *core.refreshes.borrow_mut());
    for r in queued {
        spawn_deferred(core.clone(), move |core| async move {
            serve_refresh(&core, &r).await;
        });
    }
}

/// Runs a deferred query as a task on this core and counts it while it runs, so that a
/// graceful stop can wait for it.
pub fn spawn_deferred<H, F, Fut>(core: std::rc::Rc<CoreServer<H>>, task: F)
where
    H: Handler + 'static,
    F: FnOnce(std::rc::Rc<CoreServer<H>>) -> Fut + 'static,
    Fut: Future<Output = ()> + 'static,
{
    deferred_started(&core);
    glommio::spawn_local(async move {
        let c = core.clone();
        task(core).await;
        deferred_finished(&c);
    })
    .detach();
}

/// Counts a deferred query in the core's queries in flight, which a graceful stop waits
/// for. Each one ends with [`deferred_finished`].
pub(super) fn deferred_started<H>(core: &CoreServer<H>) {
    core.inflight.set(core.inflight.get() + 1);
}

/// The bookkeeping after a deferred query: no longer in flight, its plugins' end-of-batch
/// work and the background refreshes it asked for scheduled.
pub(super) fn deferred_finished<H: Handler + 'static>(core: &std::rc::Rc<CoreServer<H>>) {
    core.inflight.set(core.inflight.get() - 1);
    flush_soon(core);
    spawn_refreshes(core);
}

/// Runs the plugins' end-of-batch work (log's buffered lines) once for all the deferred
/// queries that finish in one executor turn: with `log` in front of `forward`, one write per
/// burst of upstream replies instead of one per query.
fn flush_soon<H: Handler + 'static>(core: &std::rc::Rc<CoreServer<H>>) {
    if !core.has_after_batch || core.flush_queued.replace(true) {
        return;
    }
    let c = core.clone();
    glommio::spawn_local(async move {
        // The other tasks ready now (more finished queries) run first.
        futures_lite::future::yield_now().await;
        c.flush_queued.set(false);
        c.after_batch();
    })
    .detach();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::{Outcome, Status};
    use crate::wire::rcode::{NOERROR, NXDOMAIN};
    use std::cell::{Cell, RefCell};
    use std::time::Duration;

    /// A chain end that behaves as told, to drive the server's rules.
    enum Test {
        Panics,
        Returns(u8),
        /// Defers on the inline pass, counting those passes in the cell.
        WritesWhenItMayWait(Cell<usize>),
        /// Defers on the inline pass; notes each pass's `(can_wait, received, now)`.
        NotesTimes(RefCell<Vec<(bool, Instant, Instant)>>),
    }

    impl Handler for Test {
        async fn serve(&self, req: &mut Request<'_>) -> Outcome {
            match self {
                Test::Panics => panic!("boom"),
                Test::Returns(rc) => Ok(Status::rcode(*rc)),
                Test::WritesWhenItMayWait(tried) => {
                    if !req.can_wait() {
                        tried.set(tried.get() + 1);
                        return req.defer();
                    }
                    MessageWriter::reply(&req.query, req.reply, NOERROR).finish();
                    Ok(Status::rcode(NOERROR))
                }
                Test::NotesTimes(seen) => {
                    let times = (req.can_wait(), req.received(), req.now());
                    seen.borrow_mut().push(times);
                    if !req.can_wait() {
                        return req.defer();
                    }
                    MessageWriter::reply(&req.query, req.reply, NOERROR).finish();
                    Ok(Status::rcode(NOERROR))
                }
            }
        }

        fn is_end(&self) -> bool {
            false
        }

        fn after_batch(&self) {}
    }

    fn core(h: Test, debug: bool) -> CoreServer<Test> {
        crate::runtime::core::tests::one_block(h, debug)
    }

    const QUERY: &[u8] = crate::runtime::core::tests::QUERY;

    fn inline(c: &CoreServer<Test>, reply: &mut Vec<u8>) -> Verdict {
        let client = "127.0.0.1:5000".parse().unwrap();
        serve_inline(c, &c.listeners[0], QUERY, false, client, Proto::Udp, reply)
    }

    #[test]
    fn a_panic_becomes_servfail_and_serving_goes_on() {
        let c = core(Test::Panics, false);
        let mut reply = Vec::new();
        assert_eq!(inline(&c, &mut reply), Verdict::Send);
        assert_eq!(reply[3] & 0x0f, SERVFAIL);
        assert_eq!(&reply[..2], &[0x12, 0x34]);
        assert_eq!(inline(&c, &mut reply), Verdict::Send);
    }

    #[test]
    fn with_debug_a_panic_is_not_recovered() {
        let c = core(Test::Panics, true);
        let mut reply = Vec::new();
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| inline(&c, &mut reply)));
        assert!(r.is_err());
    }

    #[test]
    fn the_server_writes_the_four_error_rcodes_and_nothing_else() {
        for rc in [SERVFAIL, REFUSED, FORMERR, wire::rcode::NOTIMP] {
            let c = core(Test::Returns(rc), false);
            let mut reply = Vec::new();
            assert_eq!(inline(&c, &mut reply), Verdict::Send);
            assert_eq!(reply[3] & 0x0f, rc);
        }
        // NXDOMAIN claims a reply was written; none was, so nothing is sent (CoreDNS).
        let c = core(Test::Returns(NXDOMAIN), false);
        let mut reply = Vec::new();
        assert_eq!(inline(&c, &mut reply), Verdict::Drop);
    }

    #[test]
    fn rcode_255_is_an_rcode_not_a_deferral() {
        // It was the "deferred" sentinel. Now it says "written", as any rcode but the four
        // errors: with nothing written, nothing is sent, on either pass.
        let c = core(Test::Returns(u8::MAX), false);
        let mut reply = Vec::new();
        assert_eq!(inline(&c, &mut reply), Verdict::Drop);
        let client = "127.0.0.1:5000".parse().unwrap();
        let v = futures_lite::future::block_on(serve_deferred(
            &c,
            &c.listeners[0],
            QUERY,
            (client, Proto::Udp, None),
            Instant::now(),
            &mut reply,
        ));
        assert_eq!(v, Verdict::Drop, "not a second deferral (SERVFAIL)");
    }

    #[test]
    fn a_plugin_that_must_wait_is_served_again() {
        let c = core(Test::WritesWhenItMayWait(Cell::new(0)), false);
        let mut reply = Vec::new();
        let v = inline(&c, &mut reply);
        assert_eq!(v, Verdict::Defer);
        assert!(reply.is_empty());
        let client = "127.0.0.1:5000".parse().unwrap();
        let v = futures_lite::future::block_on(serve_deferred(
            &c,
            &c.listeners[0],
            QUERY,
            (client, Proto::Udp, None),
            Instant::now(),
            &mut reply,
        ));
        assert_eq!(v, Verdict::Send);
        assert_eq!(reply[3] & 0x0f, NOERROR);
    }

    #[test]
    fn a_request_carries_its_batchs_time_and_a_deferred_pass_also_its_tasks() {
        let c = core(Test::NotesTimes(RefCell::default()), false);
        let Test::NotesTimes(seen) = &c.blocks[0].chain else {
            unreachable!()
        };
        let l = &c.listeners[0];
        let client = "127.0.0.1:5000".parse().unwrap();
        // A batch received a while ago: its queries are served at its time, not the clock's.
        let batch = Instant::now() - Duration::from_secs(5);
        let mut reply = Vec::new();
        let v = serve_batched(&c, l, QUERY, false, client, batch, &mut reply);
        assert_eq!(v, Verdict::Defer);
        let task = Instant::now();
        let v = futures_lite::future::block_on(serve_deferred(
            &c,
            l,
            QUERY,
            (client, Proto::Udp, None),
            batch,
            &mut reply,
        ));
        assert_eq!(v, Verdict::Send);
        let seen = seen.borrow();
        assert_eq!(seen[0], (false, batch, batch), "inline: the batch's time");
        let (can_wait, received, now) = seen[1];
        assert_eq!(
            (can_wait, received),
            (true, batch),
            "deferred: it came then"
        );
        assert!(now >= task, "and is served at its task's time");
    }

    #[test]
    fn a_block_whose_queries_all_wait_stops_trying_them_inline() {
        let c = core(Test::WritesWhenItMayWait(Cell::new(0)), false);
        let Test::WritesWhenItMayWait(tried) = &c.blocks[0].chain else {
            unreachable!()
        };
        let mut reply = Vec::new();
        // The first queries try the inline pass...
        for _ in 0..8 {
            assert_eq!(inline(&c, &mut reply), Verdict::Defer);
        }
        assert_eq!(tried.get(), 8);
        // ...then they go straight to the task, without reaching the chain, except one in
        // 64 that tries again.
        let skipped = (0..64)
            .filter(|_| {
                let before = tried.get();
                inline(&c, &mut reply) == Verdict::Defer && tried.get() == before
            })
            .count();
        assert_eq!(skipped, 63);
    }

    #[test]
    fn an_answer_inline_brings_the_inline_pass_back() {
        let odds = crate::runtime::core::InlineOdds::default();
        for _ in 0..8 {
            assert!(odds.try_inline());
            odds.record(true);
        }
        assert!(!odds.try_inline());
        odds.record(false);
        assert!(odds.try_inline());
    }
}
