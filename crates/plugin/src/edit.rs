//! Handing the rest of the chain an edited copy of the query, for plugins that change the
//! query before the others see it (header's `query` rules, bufsize): CoreDNS's plugins change
//! the `*dns.Msg` in place; here the query is a view of the client's packet, so the plugin
//! edits a copy and the rest of the chain is served a request for it
//! ([`Request::with_query`]), writing the client's reply.
//!
//! On the passes that may not wait (at once, and the inline poll) the copy is made in the
//! core's scratch buffer, which the [`Editor`] keeps: no allocation once warm. On the
//! deferred pass the copy and the rest's future live in a box, paid only by the queries
//! that wait and are edited, so that the chain's future built for every query does not grow
//! by the rest's future twice.

use crate::wire::Query;
use crate::wire::rcode::SERVFAIL;
use crate::{
    Handler, Outcome, PluginError, Request, ServeFuture, Status, next_or_failure,
    next_or_failure_now,
};
use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// A core's editor: the buffer of the passes that may not wait.
#[derive(Default)]
pub struct Editor {
    scratch: RefCell<Vec<u8>>,
}

/// A query whose edited copy does not parse (an edit that broke it): SERVFAIL.
fn broken(name: &'static str) -> Status {
    Status::error(
        SERVFAIL,
        PluginError::new(name, "the edited query does not parse"),
    )
}

impl Editor {
    /// [`crate::Serve::serve_now`] with the query edited by `edit` (applied to a copy of the
    /// client's packet), or as it came when `edit` is `None`. `None` when the rest cannot
    /// answer at once, the request then untouched.
    pub fn serve_now<N: Handler>(
        &self,
        name: &'static str,
        req: &mut Request<'_>,
        next: &N,
        edit: Option<impl FnOnce(&mut Vec<u8>)>,
    ) -> Option<Status> {
        let Some(edit) = edit else {
            return next_or_failure_now(name, next, req);
        };
        // Busy (a query of this core already in the middle of its edited pass): through
        // the future, whose deferred pass has a copy of its own.
        let mut buf = self.scratch.try_borrow_mut().ok()?;
        copy_edited(req, &mut buf, edit);
        let Ok(q) = Query::parse(&buf) else {
            return Some(broken(name));
        };
        let mut sub = req.with_query(q);
        let status = next_or_failure_now(name, next, &mut sub);
        let carried = sub.carry();
        let status = status?;
        req.adopt(carried);
        Some(status)
    }

    /// [`crate::Serve::serve`] with the query edited by `edit`, or as it came when `edit` is
    /// `None` (then it is the rest's future itself). The inline pass polls the rest's future
    /// once, in place, and defers when it does; the deferred pass serves the edited copy in a
    /// boxed future.
    pub fn serve<N: Handler>(
        &self,
        name: &'static str,
        req: &mut Request<'_>,
        next: &N,
        edit: Option<impl FnOnce(&mut Vec<u8>)>,
    ) -> impl Future<Output = Outcome> {
        let Some(edit) = edit else {
            return ServeFuture::Next {
                fut: next_or_failure(name, next, req),
            };
        };
        if !req.can_wait() {
            return ServeFuture::ready(self.inline(name, req, next, edit));
        }
        let mut packet = Vec::with_capacity(req.query.packet().len() + 16);
        copy_edited(req, &mut packet, edit);
        ServeFuture::Own {
            fut: Box::pin(async move {
                let Ok(q) = Query::parse(&packet) else {
                    return broken(name);
                };
                let mut sub = req.with_query(q);
                let outcome = next_or_failure(name, next, &mut sub).await;
                let carried = sub.carry();
                req.adopt(carried);
                outcome.unwrap_or_else(|_| Status::deferred_on_wait(name))
            }),
        }
    }

    /// The inline pass: the rest's future polled once over the edited copy.
    fn inline<N: Handler>(
        &self,
        name: &'static str,
        req: &mut Request<'_>,
        next: &N,
        edit: impl FnOnce(&mut Vec<u8>),
    ) -> Outcome {
        let Ok(mut buf) = self.scratch.try_borrow_mut() else {
            return req.defer();
        };
        copy_edited(req, &mut buf, edit);
        let Ok(q) = Query::parse(&buf) else {
            return Ok(broken(name));
        };
        let mut sub = req.with_query(q);
        let polled = pin!(next_or_failure(name, next, &mut sub))
            .poll(&mut Context::from_waker(Waker::noop()));
        let carried = sub.carry();
        match polled {
            Poll::Ready(Ok(status)) => {
                req.adopt(carried);
                Ok(status)
            }
            // A deferral, or a plugin that pends where it should defer: again where it may
            // wait, from the top, with nothing written.
            _ => {
                req.clear_reply();
                req.defer()
            }
        }
    }
}

/// The client's packet into `buf`, then `edit` applied to it.
fn copy_edited(req: &Request<'_>, buf: &mut Vec<u8>, edit: impl FnOnce(&mut Vec<u8>)) {
    buf.clear();
    buf.extend_from_slice(req.query.packet());
    edit(buf);
}

#[cfg(test)]
mod tests;
