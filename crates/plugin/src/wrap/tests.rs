//! A wrapper built on [`Wrap`] in front of answers that come on each of the server's
//! passes, served as the server serves a query: its `after` runs once per query.

use super::*;
use crate::Deferred;
use crate::corefile::{Dispenser, Error};
use crate::wire::rcode::NOERROR;
use crate::wire::{MessageWriter, Query};
use crate::{BlockSetup, CoreInfo, End, Link, Proto, Serve, Serves};
use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// `example. A IN`.
const QUERY: &[u8] = &[
    0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 7, b'e', b'x', b'a', b'm', b'p', b'l', b'e', 0,
    0, 1, 0, 1,
];

/// Counts its `before`s and `after`s (a real wrapper's `before` counts nothing); wraps no
/// query when `skip`.
#[derive(Default)]
struct Counter {
    skip: bool,
    befores: Cell<usize>,
    afters: Cell<usize>,
}

impl Plugin for Counter {
    const NAME: &'static str = "counter";
    type Config = bool;
    type Place = Serves;

    fn setup(_d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<bool, Error> {
        Ok(false)
    }
}

impl Serve for Counter {
    fn build(skip: &Arc<bool>, _core: &CoreInfo) -> Option<Self> {
        Some(Counter {
            skip: **skip,
            ..Counter::default()
        })
    }

    fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
        serve(self, req, next)
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        serve_now(self, req, next)
    }
}

impl Wrap for Counter {
    /// Which `before` this was (the `after` gets the one of the pass that served).
    type Before = usize;

    fn before(&self, _req: &Request<'_>) -> Option<usize> {
        self.befores.set(self.befores.get() + 1);
        (!self.skip).then(|| self.befores.get())
    }

    fn after(&self, req: &mut Request<'_>, before: usize, status: Status) -> Status {
        assert_eq!(before, self.befores.get(), "the serving pass's before");
        assert!(!req.reply.is_empty(), "after the rest wrote its reply");
        self.afters.set(self.afters.get() + 1);
        status
    }
}

/// The rest of the chain: answers on the first pass it is allowed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answers {
    /// In `serve_now`.
    AtOnce,
    /// In `serve`, on the inline pass.
    Inline,
    /// In `serve`, once it may wait: the inline pass defers.
    WhenItMayWait,
}

impl Plugin for Answers {
    const NAME: &'static str = "answers";
    type Config = Answers;
    type Place = Serves;

    fn setup(_d: &mut Dispenser<'_>, _block: &mut BlockSetup) -> Result<Answers, Error> {
        Ok(Answers::AtOnce)
    }
}

impl Serve for Answers {
    fn build(config: &Arc<Answers>, _core: &CoreInfo) -> Option<Self> {
        Some(**config)
    }

    async fn serve<N: Handler>(&self, req: &mut Request<'_>, _next: &N) -> Outcome {
        if *self == Answers::WhenItMayWait && !req.can_wait() {
            return req.defer();
        }
        Ok(answer(req))
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, _next: &N) -> Option<Status> {
        (*self == Answers::AtOnce).then(|| answer(req))
    }
}

fn answer(req: &mut Request<'_>) -> Status {
    MessageWriter::reply(&req.query, req.reply, NOERROR).finish();
    Status::written()
}

type Chain = Link<Counter, Link<Answers, End>>;

fn chain(skip: bool, answers: Answers) -> Chain {
    let core = CoreInfo {
        index: 0,
        cpu: 0,
        cores: 1,
    };
    Link {
        plugin: Counter::build(&Arc::new(skip), &core),
        rest: Link {
            plugin: Answers::build(&Arc::new(answers), &core),
            rest: End,
        },
    }
}

fn request(reply: &mut Vec<u8>, can_wait: bool) -> Request<'_> {
    let at = "127.0.0.1:53".parse().unwrap();
    let q = Query::parse(QUERY).unwrap();
    Request::new(q, at, at, Proto::Udp, ".", "dns://:53", reply, can_wait)
}

fn poll_once(fut: impl Future<Output = Outcome>) -> Poll<Outcome> {
    pin!(fut).poll(&mut Context::from_waker(Waker::noop()))
}

/// Serves one query as the server does: at once, else inline (one poll), else deferred
/// (a new request that may wait).
fn served(chain: &Chain) -> Status {
    let mut reply = Vec::new();
    let mut req = request(&mut reply, false);
    if let Some(status) = chain.serve_now(&mut req) {
        return status;
    }
    if let Poll::Ready(Ok(status)) = poll_once(chain.serve(&mut req)) {
        return status;
    }
    let mut reply = Vec::new();
    let mut req = request(&mut reply, true);
    match poll_once(chain.serve(&mut req)) {
        Poll::Ready(Ok(status)) => status,
        other => panic!("the deferred pass gave {other:?}"),
    }
}

fn counts(chain: &Chain) -> (usize, usize) {
    let c = chain.plugin.as_ref().unwrap();
    (c.befores.get(), c.afters.get())
}

#[test]
fn after_runs_once_per_query_whichever_pass_serves_it() {
    for (answers, passes) in [
        (Answers::AtOnce, 1),
        (Answers::Inline, 2),
        (Answers::WhenItMayWait, 3),
    ] {
        let c = chain(false, answers);
        for n in 1..=3 {
            assert_eq!(served(&c), Status::written(), "{answers:?}");
            assert_eq!(
                counts(&c),
                (n * passes, n),
                "{answers:?}: (befores, afters)"
            );
        }
    }
}

#[test]
fn a_query_before_declines_is_handed_on_untouched() {
    for answers in [Answers::AtOnce, Answers::Inline, Answers::WhenItMayWait] {
        let c = chain(true, answers);
        assert_eq!(served(&c), Status::written(), "{answers:?}");
        assert_eq!(counts(&c).1, 0, "{answers:?}: no after");
    }
}

#[test]
fn a_deferral_comes_back_as_it_went_in() {
    let c = chain(false, Answers::WhenItMayWait);
    let mut reply = Vec::new();
    let mut req = request(&mut reply, false);
    assert!(c.serve_now(&mut req).is_none());
    assert_eq!(poll_once(c.serve(&mut req)), Poll::Ready(Err(Deferred(()))));
    assert_eq!(counts(&c), (2, 0));
}
