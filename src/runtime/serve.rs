//! Serving one query, from the raw packet to the reply bytes: the acceptance rules, routing,
//! the chain, CoreDNS's return-code rule and the last touches (OPT, truncation).
//!
//! The socket loops call [`serve_inline`] first: the chain is polled once, in place, over
//! the borrowed packet; nothing is allocated or spawned. Only when a plugin needs to wait
//! (it returns `Request::defer`) is the query served again by [`serve_deferred`] as a task.

use super::core::{CoreServer, ListenerCtx};
use crate::plugin::{Handler, Proto, Request, Status, client_write};
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

/// What to do with the reply buffer after serving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Send it.
    Send,
    /// Send nothing (dropped query, or a plugin that answered nothing).
    Drop,
    /// A plugin must wait: serve the query again with [`serve_deferred`], handing it the
    /// note the deferring plugin left.
    Defer(Option<u64>),
}

/// Where the query goes after the checks that come before any chain.
enum Route<'a> {
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

fn route<'a, H>(
    core: &'a CoreServer<H>,
    l: &'a ListenerCtx,
    packet: &'a [u8],
    cut: bool,
    proto: Proto,
    reply: &mut Vec<u8>,
) -> Route<'a> {
    if cut {
        return Route::Done(reject(packet, FORMERR, reply));
    }
    let query = match Query::parse(packet) {
        Ok(q) => q,
        Err(r) => {
            return Route::Done(match r.rcode() {
                Some(rc) => reject(packet, rc, reply),
                None => Verdict::Drop,
            });
        }
    };
    if query.bad_edns_version() {
        wire::badvers_reply(&query, reply);
        return Route::Done(Verdict::Send);
    }
    if query.qclass() != CLASS_IN && !l.allow_chaos {
        return Route::Done(error_reply(&query, REFUSED, proto, reply));
    }
    let Some((block, zone)) = l.router.route(query.qname_bytes(), query.qtype()) else {
        return Route::Done(error_reply(&query, REFUSED, proto, reply));
    };
    let _ = core;
    Route::Chain { query, block, zone }
}

/// Applies CoreDNS's return rule to what the chain returned.
fn finish(req: &mut Request<'_>, status: Status) -> Verdict {
    if !client_write(status.rcode) {
        MessageWriter::reply(&req.query, req.reply, status.rcode).finish();
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

/// Logs a recovered panic as CoreDNS does.
fn log_panic(server: &str, payload: &(dyn Any + Send), stacktrace: bool) {
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

/// Serves one query in place. `cut` says the datagram was longer than the buffer.
pub fn serve_inline<H: Handler>(
    core: &CoreServer<H>,
    l: &ListenerCtx,
    packet: &[u8],
    cut: bool,
    client: SocketAddr,
    proto: Proto,
    reply: &mut Vec<u8>,
) -> Verdict {
    reply.clear();
    let (query, bi, zone) = match route(core, l, packet, cut, proto, reply) {
        Route::Done(v) => return v,
        Route::Chain { query, block, zone } => (query, block, zone),
    };
    let block = &core.blocks[bi];
    if block.empty {
        return error_reply(&query, REFUSED, proto, reply);
    }
    let mut req = Request::new(query, client, l.local, proto, zone, &l.name, reply, false);
    let polled = {
        let mut fut = pin!(block.chain.serve(&mut req));
        let mut cx = Context::from_waker(Waker::noop());
        if block.debug {
            Ok(fut.as_mut().poll(&mut cx))
        } else {
            std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(&mut cx)))
        }
    };
    match polled {
        Ok(Poll::Ready(status)) if !status.is_deferred() => finish(&mut req, status),
        // Deferred, or a plugin that awaited without checking `can_wait`: serve it again
        // where waiting is allowed.
        Ok(_) => {
            req.reply.clear();
            Verdict::Defer(req.deferred_note())
        }
        Err(payload) => {
            log_panic(&l.name, payload.as_ref(), block.stacktrace);
            error_reply(&req.query, SERVFAIL, proto, req.reply)
        }
    }
}

/// Serves a deferred query as a task: plugins may wait for I/O and timers.
#[allow(clippy::too_many_arguments)]
pub async fn serve_deferred<H: Handler>(
    core: &CoreServer<H>,
    l: &ListenerCtx,
    packet: &[u8],
    client: SocketAddr,
    proto: Proto,
    note: Option<u64>,
    reply: &mut Vec<u8>,
) -> Verdict {
    reply.clear();
    let (query, bi, zone) = match route(core, l, packet, false, proto, reply) {
        Route::Done(v) => return v,
        Route::Chain { query, block, zone } => (query, block, zone),
    };
    let block = &core.blocks[bi];
    let mut req = Request::new(query, client, l.local, proto, zone, &l.name, reply, true);
    req.set_deferred_note(note);
    let status = if block.debug {
        Ok(block.chain.serve(&mut req).await)
    } else {
        AssertUnwindSafe(block.chain.serve(&mut req))
            .catch_unwind()
            .await
    };
    match status {
        Ok(s) if s.is_deferred() => {
            crate::error!(
                "a plugin deferred a query that was already deferred; answering SERVFAIL"
            );
            error_reply(&req.query, SERVFAIL, proto, req.reply)
        }
        Ok(s) => finish(&mut req, s),
        Err(payload) => {
            log_panic(&l.name, payload.as_ref(), block.stacktrace);
            error_reply(&req.query, SERVFAIL, proto, req.reply)
        }
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
    core.inflight.set(core.inflight.get() + 1);
    glommio::spawn_local(async move {
        let c = core.clone();
        task(core).await;
        c.inflight.set(c.inflight.get() - 1);
        c.after_batch();
    })
    .detach();
}
