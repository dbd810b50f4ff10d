//! Request metadata, CoreDNS's `plugin/metadata`: `plugin/label` values that plugins publish
//! while they serve a query (forward's `forward/upstream`, file's `zone/wildcard`, …) and
//! others read (log's `{/label}` placeholders). CoreDNS keeps them as lazily evaluated
//! functions in the request's context, there only when the block has the `metadata`
//! plugin; here they are text in a store the `metadata` plugin lends the request
//! ([`Request::metadata`]), so a block without it pays nothing and a publisher's
//! [`Request::set_metadata`] is a no-op there, as CoreDNS's `SetValueFunc` returns false.
//!
//! A [`Collector`] (one per core, in the metadata plugin's instance) serves the rest of the
//! chain a request carrying a store: on the passes that may not wait the core's own store,
//! emptied per query, so that a warm core allocates nothing; on the deferred pass a store of
//! the task's own, in the boxed future of the queries that wait.

use crate::{Handler, Outcome, Request, ServeFuture, Status, next_or_failure, next_or_failure_now};
use std::cell::RefCell;
use std::fmt::{Display, Write as _};
use std::future::Future;
use std::ops::Range;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// CoreDNS's `zone/wildcard`: the wildcard that synthesised an answer, published by the
/// plugins that answer from a zone and kept by cache with the reply it stores.
pub const ZONE_WILDCARD: &str = "zone/wildcard";

/// Whether `label` is a metadata label, `plugin/name`: CoreDNS's `metadata.IsLabel` (a
/// slash with text on both sides).
pub fn is_label(label: &str) -> bool {
    matches!(label.find('/'), Some(p) if p > 0 && p < label.len() - 1)
}

/// The metadata of one request: labels and their values, in one text buffer.
#[derive(Default, Debug)]
pub struct Metadata {
    inner: RefCell<Store>,
}

#[derive(Default, Debug)]
struct Store {
    /// (label, value) ranges into `text`; a label set again is replaced in place.
    entries: Vec<(Range<usize>, Range<usize>)>,
    text: String,
}

impl Metadata {
    /// Sets `label` to `value` (the later of two sets wins, as CoreDNS's map).
    pub fn set(&self, label: &str, value: impl Display) {
        let mut s = self.inner.borrow_mut();
        let start = s.text.len();
        let _ = write!(s.text, "{value}");
        let value = start..s.text.len();
        let found = s
            .entries
            .iter()
            .position(|(l, _)| s.text[l.clone()] == *label);
        match found {
            Some(i) => s.entries[i].1 = value,
            None => {
                let at = s.text.len();
                s.text.push_str(label);
                let label = at..s.text.len();
                s.entries.push((label, value));
            }
        }
    }

    /// `f` of the value of `label`; `None` when no plugin set it.
    pub fn with<R>(&self, label: &str, f: impl FnOnce(&str) -> R) -> Option<R> {
        let s = self.inner.borrow();
        let (_, v) = s
            .entries
            .iter()
            .find(|(l, _)| s.text[l.clone()] == *label)?;
        Some(f(&s.text[v.clone()]))
    }

    /// The value of `label`, copied; for tests and uncommon paths.
    pub fn get(&self, label: &str) -> Option<String> {
        self.with(label, str::to_owned)
    }

    /// The labels set, in the order they were first set.
    pub fn labels(&self) -> Vec<String> {
        let s = self.inner.borrow();
        s.entries
            .iter()
            .map(|(l, _)| s.text[l.clone()].to_owned())
            .collect()
    }

    /// Forgets every label, keeping the buffers for the next query.
    fn clear(&self) {
        let mut s = self.inner.borrow_mut();
        s.entries.clear();
        s.text.clear();
    }
}

/// A core's metadata collector: the store of the passes that may not wait.
#[derive(Default)]
pub struct Collector {
    scratch: Metadata,
    /// Set while a query of this core holds `scratch` (its inline pass).
    busy: std::cell::Cell<bool>,
}

/// Marks the collector's store free again when the pass that held it ends.
struct Hold<'c>(&'c std::cell::Cell<bool>);

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

impl Collector {
    /// The core's store, emptied, while no other query holds it.
    fn take(&self) -> Option<(&Metadata, Hold<'_>)> {
        if self.busy.replace(true) {
            return None;
        }
        self.scratch.clear();
        Some((&self.scratch, Hold(&self.busy)))
    }

    /// [`crate::Serve::serve_now`] with the rest served a request that carries metadata
    /// (`collect` false: as it came, without). `None` when the rest cannot answer at once.
    pub fn serve_now<N: Handler>(
        &self,
        name: &'static str,
        req: &mut Request<'_>,
        next: &N,
        collect: bool,
    ) -> Option<Status> {
        if !collect || req.metadata().is_some() {
            return next_or_failure_now(name, next, req);
        }
        // Busy (a query of this core in the middle of its pass): through the future.
        let (meta, _hold) = self.take()?;
        let mut sub = req.with_metadata(meta);
        let status = next_or_failure_now(name, next, &mut sub);
        let carried = sub.carry();
        let status = status?;
        req.adopt(carried);
        Some(status)
    }

    /// [`crate::Serve::serve`] with the rest served a request that carries metadata
    /// (`collect` false: the rest's future itself). The inline pass uses the core's store;
    /// the deferred pass a store of its own in a boxed future.
    pub fn serve<N: Handler>(
        &self,
        name: &'static str,
        req: &mut Request<'_>,
        next: &N,
        collect: bool,
    ) -> impl Future<Output = Outcome> {
        if !collect || req.metadata().is_some() {
            return ServeFuture::Next {
                fut: next_or_failure(name, next, req),
            };
        }
        if !req.can_wait() {
            return ServeFuture::ready(self.inline(name, req, next));
        }
        ServeFuture::Own {
            fut: Box::pin(async move {
                let meta = Metadata::default();
                let mut sub = req.with_metadata(&meta);
                let outcome = next_or_failure(name, next, &mut sub).await;
                let carried = sub.carry();
                req.adopt(carried);
                outcome.unwrap_or_else(|_| Status::deferred_on_wait(name))
            }),
        }
    }

    /// [`crate::Serve::admits`] with the rest asked over a request that carries metadata
    /// (`collect` false: as it came), so that a view's expression reads what the block's
    /// plugins publish before it is chosen. The core's store when it is free (it is, but
    /// for a choice made inside another query's pass), else one of its own.
    pub fn admits<N: Handler>(&self, req: &mut Request<'_>, next: &N, collect: bool) -> bool {
        if !collect || req.metadata().is_some() {
            return next.admits(req);
        }
        match self.take() {
            Some((meta, _hold)) => next.admits(&mut req.with_metadata(meta)),
            None => next.admits(&mut req.with_metadata(&Metadata::default())),
        }
    }

    /// The inline pass: the rest's future polled once with the core's store.
    fn inline<N: Handler>(&self, name: &'static str, req: &mut Request<'_>, next: &N) -> Outcome {
        let Some((meta, _hold)) = self.take() else {
            return req.defer();
        };
        let mut sub = req.with_metadata(meta);
        let polled = pin!(next_or_failure(name, next, &mut sub))
            .poll(&mut Context::from_waker(Waker::noop()));
        let carried = sub.carry();
        match polled {
            Poll::Ready(Ok(status)) => {
                req.adopt(carried);
                Ok(status)
            }
            // A deferral: again where it may wait, from the top, with nothing written.
            _ => {
                req.clear_reply();
                req.defer()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_a_slash_with_text_on_both_sides() {
        assert!(is_label("geoip/city/name") && is_label("a/b"));
        assert!(!is_label("/b") && !is_label("a/") && !is_label("ab") && !is_label("/"));
    }

    #[test]
    fn a_label_set_again_takes_the_later_value() {
        let m = Metadata::default();
        assert_eq!(m.get("forward/upstream"), None);
        m.set("forward/upstream", "127.0.0.1:53");
        m.set("zone/wildcard", "*.example.org.");
        m.set("forward/upstream", format_args!("{}:{}", "::1", 53));
        assert_eq!(m.get("forward/upstream").as_deref(), Some("::1:53"));
        assert_eq!(m.get("zone/wildcard").as_deref(), Some("*.example.org."));
        assert_eq!(m.labels(), ["forward/upstream", "zone/wildcard"]);
        m.clear();
        assert_eq!(m.get("zone/wildcard"), None);
        assert!(m.labels().is_empty());
    }
}
