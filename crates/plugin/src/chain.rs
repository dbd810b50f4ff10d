//! The links the generated chain is made of: one concrete nested type per plugin.cfg, so the
//! compiler sees the whole chain and nothing is `dyn`.

use crate::wire::rcode::SERVFAIL;
use crate::{Outcome, Request, Serve, Status};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Anything a query can be handed to: a link of the chain or its end.
pub trait Handler {
    /// Serves the query from this point of the chain on: its [`Status`], or a deferral.
    fn serve(&self, req: &mut Request<'_>) -> impl Future<Output = Outcome>;
    /// Serves the query from this point on without building the chain's future, when every
    /// plugin on the way can answer at once (a cache hit, whoami); `None`, with the request
    /// untouched, when one cannot: the caller then uses [`Handler::serve`]. It cannot
    /// defer (waiting is what `None` is for).
    fn serve_now(&self, _req: &mut Request<'_>) -> Option<Status> {
        None
    }
    /// True when no plugin follows (every remaining slot is empty), so the caller can fail
    /// with its own name as CoreDNS's `NextOrFailure` does.
    fn is_end(&self) -> bool;
    /// Runs the start hook ([`Serve::start`]) of every plugin present from here on,
    /// outermost first: once per chain, when the runtime makes it a core's current one. The
    /// default, for handlers that are not chains of plugins, does nothing.
    fn start(&self) {}
    /// Propagates the end-of-batch hook to every plugin present.
    fn after_batch(&self);
    /// True when a plugin present from here on has end-of-batch work. The default is true
    /// (a handler that does not say is asked); the chain's links compute it.
    fn has_after_batch(&self) -> bool {
        true
    }
    /// True when no plugin at all is present from here on.
    fn is_empty(&self) -> bool {
        self.is_end()
    }
    /// Appends the names of the plugins present from here on, outermost first (CoreDNS's
    /// handlers, for `coredns_plugin_enabled`).
    fn plugin_names(&self, _out: &mut Vec<&'static str>) {}
    /// Whether the block takes the query, asked before the server picks among the blocks of
    /// one zone and port (CoreDNS's filter functions, the *view* plugin's expressions); each
    /// plugin present has its [`Serve::admits`] turn, outermost first. The server asks only
    /// blocks that registered a view ([`crate::BlockSetup::view`]). The default, for handlers
    /// that are not chains, takes every query.
    fn admits(&self, _req: &mut Request<'_>) -> bool {
        true
    }
}

/// One plugin slot and the rest of the chain. The slot is empty when the block does not use
/// the plugin (or the plugin only configures the block).
pub struct Link<P, R> {
    /// This plugin's per-core instance, if the block uses it.
    pub plugin: Option<P>,
    /// Everything after it in plugin.cfg order.
    pub rest: R,
}

pin_project_lite::pin_project! {
    /// The future of one link: its plugin's, or straight the rest of the chain's when the slot
    /// is empty. Not an `async fn`: an empty slot then adds no state machine of its own, only
    /// a branch per poll (most slots of a chain are empty, and every query passes them).
    #[project = LinkFutureProj]
    pub enum LinkFuture<A, B> {
        /// The plugin in this slot serves (and may call the rest).
        Plugin { #[pin] fut: A },
        /// The slot is empty: the rest of the chain serves.
        Rest { #[pin] fut: B },
    }
}

impl<A: Future<Output = Outcome>, B: Future<Output = Outcome>> Future for LinkFuture<A, B> {
    type Output = Outcome;

    // Always: with a hint only, each link stayed a call of its own, so every poll of a
    // query's future went down the whole chain one call per slot (empty ones included).
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        match self.project() {
            LinkFutureProj::Plugin { fut } => fut.poll(cx),
            LinkFutureProj::Rest { fut } => fut.poll(cx),
        }
    }
}

impl<P: Serve, R: Handler> Link<P, R> {
    /// What follows the plugin's serving, on the pass that served: its [`Serve::amend`],
    /// then the note of who wrote the reply.
    #[inline(always)]
    fn served(&self, req: &mut Request<'_>, status: Status) -> Status {
        let Some(p) = &self.plugin else {
            return status;
        };
        let status = p.amend(req, status);
        req.note_writer(P::NAME, &status);
        status
    }
}

impl<P: Serve, R: Handler> Handler for Link<P, R> {
    #[inline]
    fn serve(&self, req: &mut Request<'_>) -> impl Future<Output = Outcome> {
        match &self.plugin {
            // The block captures `self` and `req` only, and finds the plugin through `self`
            // on each side of the await: a reference of its own would be kept beside them in
            // every link's future, 8 bytes for every serving plugin of the chain type.
            Some(_) => LinkFuture::Plugin {
                fut: async move {
                    let Some(p) = &self.plugin else {
                        return Ok(Status::rcode(SERVFAIL));
                    };
                    let status = p.serve(&mut *req, &self.rest).await?;
                    Ok(self.served(req, status))
                },
            },
            None => LinkFuture::Rest {
                fut: self.rest.serve(req),
            },
        }
    }

    #[inline(always)]
    fn serve_now(&self, req: &mut Request<'_>) -> Option<Status> {
        match &self.plugin {
            Some(p) => {
                let status = p.serve_now(req, &self.rest)?;
                Some(self.served(req, status))
            }
            None => self.rest.serve_now(req),
        }
    }

    fn plugin_names(&self, out: &mut Vec<&'static str>) {
        if self.plugin.is_some() {
            out.push(P::NAME);
        }
        self.rest.plugin_names(out);
    }

    fn admits(&self, req: &mut Request<'_>) -> bool {
        match &self.plugin {
            Some(p) => p.admits(req, &self.rest),
            None => self.rest.admits(req),
        }
    }

    fn is_end(&self) -> bool {
        self.plugin.is_none() && self.rest.is_end()
    }

    fn start(&self) {
        if let Some(p) = &self.plugin {
            p.start();
        }
        self.rest.start();
    }

    fn after_batch(&self) {
        if let Some(p) = &self.plugin {
            p.after_batch();
        }
        self.rest.after_batch();
    }

    fn has_after_batch(&self) -> bool {
        (P::AFTER_BATCH && self.plugin.is_some()) || self.rest.has_after_batch()
    }
}

/// The end of every chain: reaching it means nobody answered, which is SERVFAIL.
pub struct End;

impl Handler for End {
    async fn serve(&self, _req: &mut Request<'_>) -> Outcome {
        Ok(Status::rcode(SERVFAIL))
    }

    fn serve_now(&self, _req: &mut Request<'_>) -> Option<Status> {
        Some(Status::rcode(SERVFAIL))
    }

    fn has_after_batch(&self) -> bool {
        false
    }

    fn is_end(&self) -> bool {
        true
    }

    fn after_batch(&self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corefile::{Dispenser, Error};
    use crate::{BlockSetup, CoreInfo, Plugin, Serves};
    use std::cell::RefCell;
    use std::sync::Arc;

    thread_local! {
        static STARTED: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
    }

    /// A plugin whose start hook notes its name.
    struct Notes<const N: usize>;

    impl<const N: usize> Plugin for Notes<N> {
        const NAME: &'static str = ["first", "second", "third"][N];
        type Config = ();
        type Place = Serves;
        fn setup(_d: &mut Dispenser<'_>, _b: &mut BlockSetup) -> Result<(), Error> {
            Ok(())
        }
    }

    impl<const N: usize> Serve for Notes<N> {
        fn build(_c: &Arc<()>, _core: &CoreInfo) -> Option<Self> {
            Some(Notes)
        }
        fn start(&self) {
            STARTED.with(|s| s.borrow_mut().push(Self::NAME));
        }
    }

    #[test]
    fn start_runs_once_for_each_plugin_present_outermost_first() {
        let chain = Link {
            plugin: Some(Notes::<0>),
            rest: Link {
                plugin: None::<Notes<1>>,
                rest: Link {
                    plugin: Some(Notes::<2>),
                    rest: End,
                },
            },
        };
        chain.start();
        assert_eq!(STARTED.with(|s| s.take()), vec!["first", "third"]);
        End.start();
        assert!(STARTED.with(|s| s.take()).is_empty());
    }

    /// Sets AA in the reply the rest wrote, counting its amends.
    #[derive(Default)]
    struct Stamp {
        amends: std::cell::Cell<usize>,
    }

    impl Plugin for Stamp {
        const NAME: &'static str = "stamp";
        type Config = ();
        type Place = Serves;
        fn setup(_d: &mut Dispenser<'_>, _b: &mut BlockSetup) -> Result<(), Error> {
            Ok(())
        }
    }

    impl Serve for Stamp {
        fn build(_c: &Arc<()>, _core: &CoreInfo) -> Option<Self> {
            Some(Stamp::default())
        }
        fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
            next.serve_now(req)
        }
        fn amend(&self, req: &mut Request<'_>, status: Status) -> Status {
            self.amends.set(self.amends.get() + 1);
            crate::wire::HeaderMut::new(req.reply).set_flag(crate::wire::flags::AA, true);
            status
        }
    }

    /// Writes an empty NOERROR reply: at once when `AT_ONCE`, else once it may wait.
    struct Writes<const AT_ONCE: bool>;

    impl<const AT_ONCE: bool> Plugin for Writes<AT_ONCE> {
        const NAME: &'static str = "writes";
        type Config = ();
        type Place = Serves;
        fn setup(_d: &mut Dispenser<'_>, _b: &mut BlockSetup) -> Result<(), Error> {
            Ok(())
        }
    }

    impl<const AT_ONCE: bool> Serve for Writes<AT_ONCE> {
        fn build(_c: &Arc<()>, _core: &CoreInfo) -> Option<Self> {
            Some(Writes)
        }
        async fn serve<N: Handler>(&self, req: &mut Request<'_>, _next: &N) -> Outcome {
            if !req.can_wait() {
                return req.defer();
            }
            Ok(self.write(req))
        }
        fn serve_now<N: Handler>(&self, req: &mut Request<'_>, _next: &N) -> Option<Status> {
            AT_ONCE.then(|| self.write(req))
        }
    }

    impl<const AT_ONCE: bool> Writes<AT_ONCE> {
        fn write(&self, req: &mut Request<'_>) -> Status {
            crate::wire::MessageWriter::reply(&req.query, req.reply, 0).finish();
            Status::written()
        }
    }

    /// `example. A IN`.
    const QUERY: &[u8] = &[
        0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 7, b'e', b'x', b'a', b'm', b'p', b'l',
        b'e', 0, 0, 1, 0, 1,
    ];

    fn poll_once(fut: impl Future<Output = Outcome>) -> Poll<Outcome> {
        std::pin::pin!(fut).poll(&mut Context::from_waker(std::task::Waker::noop()))
    }

    /// Serves one query as the server does (at once, else inline, else deferred): the
    /// reply's AA bit.
    fn stamped<H: Handler>(chain: &H) -> bool {
        let at = "127.0.0.1:53".parse().unwrap();
        let q = crate::wire::Query::parse(QUERY).unwrap();
        let mut reply = Vec::new();
        let mut req = Request::new(
            q,
            at,
            at,
            crate::Proto::Udp,
            ".",
            "dns://:53",
            &mut reply,
            false,
        );
        let status = match chain.serve_now(&mut req) {
            Some(s) => s,
            None => {
                assert!(matches!(
                    poll_once(chain.serve(&mut req)),
                    Poll::Ready(Err(_))
                ));
                assert!(req.reply.is_empty(), "no reply to amend on the inline pass");
                let mut req = Request::new(
                    q,
                    at,
                    at,
                    crate::Proto::Udp,
                    ".",
                    "dns://:53",
                    &mut reply,
                    true,
                );
                let Poll::Ready(Ok(s)) = poll_once(chain.serve(&mut req)) else {
                    panic!("the deferred pass serves");
                };
                assert_eq!(req.writer(), Some("writes"), "the inner plugin wrote");
                s
            }
        };
        assert_eq!(status, Status::written());
        crate::wire::Header::of(&reply).unwrap().aa()
    }

    #[test]
    fn amend_edits_the_reply_once_per_query_on_the_pass_that_served_it() {
        let at_once = Link {
            plugin: Some(Stamp::default()),
            rest: Link {
                plugin: Some(Writes::<true>),
                rest: End,
            },
        };
        let later = Link {
            plugin: Some(Stamp::default()),
            rest: Link {
                plugin: Some(Writes::<false>),
                rest: End,
            },
        };
        for n in 1..=2 {
            assert!(stamped(&at_once), "AA set on the answer given at once");
            assert!(stamped(&later), "AA set on the deferred answer");
            assert_eq!(at_once.plugin.as_ref().unwrap().amends.get(), n);
            assert_eq!(
                later.plugin.as_ref().unwrap().amends.get(),
                n,
                "not after the deferral"
            );
        }
    }
}
