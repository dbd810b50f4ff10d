//! The one helper for plugins that wrap the rest of the chain (log, errors, prometheus):
//! the plugin says what it does before and after the rest serves a query ([`Wrap`]), and
//! [`serve`] and [`serve_now`] run that over the server's passes, so that no wrapper has to
//! know them.
//!
//! A query meets the chain in up to three passes: `serve_now` (which may give `None`), the
//! inline poll of `serve` (which may defer), and `serve` again in a task. Whatever a wrapper
//! does after the rest of the chain must happen once per query, on the pass that served it:
//! these functions call [`Wrap::after`] only when the rest returned a [`Status`], never after
//! a `None` or a deferral, which they hand back untouched.
//!
//! ```text
//! impl Serve for MyWrapper {
//!     fn build(config: &Arc<Self::Config>, _core: &CoreInfo) -> Option<Self> { … }
//!
//!     fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> impl Future<Output = Outcome> {
//!         wrap::serve(self, req, next)
//!     }
//!
//!     fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
//!         wrap::serve_now(self, req, next)
//!     }
//! }
//! ```

use crate::{Handler, Outcome, Plugin, Request, Status, next_or_failure, next_or_failure_now};

/// A plugin that does its part around the rest of the chain: a look at the query before,
/// and its accounting (a log line, a counter, an error report) after.
pub trait Wrap: Plugin {
    /// What [`Wrap::before`] hands to [`Wrap::after`] (log: its rule and the start time;
    /// `()` for a wrapper that needs nothing). It lives across the rest of the chain's
    /// await, inside every query's chain future: keep it small.
    type Before;

    /// Looks at the query before the rest of the chain serves it: `Some` to wrap this
    /// query, `None` to hand it on untouched (no [`Wrap::after`]). It runs on every pass
    /// the query makes (again after a `serve_now` that gave `None`, and after an inline
    /// pass that deferred), so it must not count or change anything: what must happen once
    /// belongs in `after`.
    fn before(&self, req: &Request<'_>) -> Option<Self::Before>;

    /// The wrapper's part once the rest of the chain has served the query: exactly once per
    /// query, on the pass that served it, with `status` as the rest returned it and the
    /// reply the inner plugins wrote in `req.reply`. Returns the status the chain goes on
    /// with (usually `status` itself).
    fn after(&self, req: &mut Request<'_>, before: Self::Before, status: Status) -> Status;
}

/// [`crate::Serve::serve`] for a wrapper: [`Wrap::before`], the rest of the chain
/// ([`next_or_failure`]), then [`Wrap::after`] unless the rest deferred (the deferral is
/// returned as it came, and the query comes through again).
pub async fn serve<W: Wrap, N: Handler>(w: &W, req: &mut Request<'_>, next: &N) -> Outcome {
    let Some(before) = w.before(req) else {
        return next_or_failure(W::NAME, next, req).await;
    };
    let status = next_or_failure(W::NAME, next, req).await?;
    Ok(w.after(req, before, status))
}

/// [`crate::Serve::serve_now`] for a wrapper: [`Wrap::before`], the rest of the chain at
/// once ([`next_or_failure_now`]), then [`Wrap::after`] when that answered; `None`, with
/// nothing done, when it did not.
pub fn serve_now<W: Wrap, N: Handler>(w: &W, req: &mut Request<'_>, next: &N) -> Option<Status> {
    let Some(before) = w.before(req) else {
        return next_or_failure_now(W::NAME, next, req);
    };
    let status = next_or_failure_now(W::NAME, next, req)?;
    Some(w.after(req, before, status))
}

#[cfg(test)]
mod tests;
