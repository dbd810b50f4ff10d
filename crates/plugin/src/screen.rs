//! Plugins that only look at a query before the rest of the chain: they answer it (any's
//! HINFO, chaos's TXT, local's localhost) or hand it on untouched, and never see what the
//! rest does with it. Their place in the chain is [`Screens`]: a [`ScreenLink`] that asks
//! the plugin first and otherwise is the rest of the chain itself, so it adds no state to
//! the chain's future (a [`Link`](crate::Link) keeps the request and itself across the rest's
//! await, about 32 bytes for every query of every block, whether the block uses it or not).

use crate::{CoreInfo, Handler, Outcome, Place, Plugin, Request, ServeFuture, Status, no_next};
use std::future::{Future, Ready};
use std::sync::Arc;

/// A plugin whose part in serving is one decision before the rest of the chain
/// (`type Place = Screens`).
pub trait Screen: Plugin {
    /// Builds this core's instance from the block's configuration; `None` leaves the slot
    /// empty on this core (queries go straight to the rest of the chain).
    fn build(config: &Arc<Self::Config>, core: &CoreInfo) -> Option<Self>;

    /// Answers the query (its status, with the reply written as a serving plugin writes
    /// it) or gives `None` to hand it on untouched. It is asked on every pass a query makes
    /// (at once, inline, deferred), so a `None` must change and count nothing; an answer
    /// ends the query, so it is given once.
    fn screen(&self, req: &mut Request<'_>) -> Option<Status>;

    /// The plugin's turn when the server asks whether the block takes the query, as
    /// [`crate::Serve::admits`] (view decides here). The default hands on.
    fn admits<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> bool {
        next.admits(req)
    }
}

/// The place of a [`Screen`] plugin: a [`ScreenLink`] holding its per-core instance.
pub enum Screens {}

impl<P: Screen> Place<P> for Screens {
    type Linked<R: Handler> = ScreenLink<P, R>;

    #[inline]
    fn link<R: Handler>(
        config: Option<&Arc<P::Config>>,
        core: &CoreInfo,
        rest: impl FnOnce() -> R,
    ) -> ScreenLink<P, R> {
        let plugin = config.and_then(|c| P::build(c, core));
        ScreenLink {
            plugin,
            rest: rest(),
        }
    }
}

/// A screening plugin's slot and the rest of the chain.
pub struct ScreenLink<P, R> {
    /// This plugin's per-core instance, if the block uses it.
    pub plugin: Option<P>,
    /// Everything after it in plugin.cfg order.
    pub rest: R,
}

impl<P: Screen, R: Handler> ScreenLink<P, R> {
    /// The plugin's answer, or why the query cannot go on (nothing follows: CoreDNS's
    /// `NextOrFailure`); `None` when the rest serves it.
    #[inline(always)]
    fn decide(&self, req: &mut Request<'_>) -> Option<Status> {
        let p = self.plugin.as_ref()?;
        if let Some(status) = p.screen(req) {
            req.note_writer(P::NAME, &status);
            return Some(status);
        }
        self.rest.is_end().then(|| no_next(P::NAME))
    }
}

impl<P: Screen, R: Handler> Handler for ScreenLink<P, R> {
    #[inline]
    fn serve(&self, req: &mut Request<'_>) -> impl Future<Output = Outcome> {
        match self.decide(req) {
            Some(status) => ServeFuture::<_, Ready<Status>>::ready(Ok(status)),
            None => ServeFuture::Next {
                fut: self.rest.serve(req),
            },
        }
    }

    #[inline(always)]
    fn serve_now(&self, req: &mut Request<'_>) -> Option<Status> {
        match self.decide(req) {
            Some(status) => Some(status),
            None => self.rest.serve_now(req),
        }
    }

    fn plugin_names(&self, out: &mut Vec<&'static str>) {
        if self.plugin.is_some() {
            out.push(P::NAME);
        }
        self.rest.plugin_names(out);
    }

    fn is_end(&self) -> bool {
        self.plugin.is_none() && self.rest.is_end()
    }

    fn start(&self) {
        self.rest.start();
    }

    fn admits(&self, req: &mut Request<'_>) -> bool {
        match &self.plugin {
            Some(p) => p.admits(req, &self.rest),
            None => self.rest.admits(req),
        }
    }

    fn after_batch(&self) {
        self.rest.after_batch();
    }

    fn has_after_batch(&self) -> bool {
        self.rest.has_after_batch()
    }
}

#[cfg(test)]
mod tests;
