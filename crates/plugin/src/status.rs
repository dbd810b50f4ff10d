//! What a plugin returns, and the CoreDNS rule that decides who writes the reply.
//!
//! Serving comes to an [`Outcome`]: `Ok(Status)` when the query was served (an rcode and,
//! on failure, an error), or `Err(Deferred)` when a plugin must wait and the pass that may
//! not wait is abandoned. Deferral is its own type, not an rcode value: every rcode a
//! plugin returns means what CoreDNS says it means, and a wrapping plugin passes a
//! deferral on with `?`, without looking at it.

use crate::wire::rcode::{FORMERR, NOTIMP, REFUSED, SERVFAIL};
use std::borrow::Cow;
use std::fmt;

/// What serving a query from some point of the chain came to: served, with its [`Status`],
/// or [`Deferred`] (to be served again where waiting is allowed).
///
/// A `Result`, so that `?` hands a deferral straight back to the caller: a plugin that
/// wraps the rest of the chain writes `next_or_failure(NAME, next, req).await?` and does its
/// "after" only for a query that was served. `Deferred` is empty, so an `Outcome` is as
/// large as a `Status` (the niche of its error holds the case) and telling the two apart is
/// one compare, as the rcode sentinel it replaces was.
pub type Outcome = Result<Status, Deferred>;

/// The inline pass of a query must be abandoned: a plugin has to wait (an upstream, a
/// timer), and the server serves the query again, from the top of the chain, in a task
/// where [`crate::Request::can_wait`] is true.
///
/// Made only by [`crate::Request::defer`] (the field is private), so a deferral always
/// comes from a pass that may not wait. Not an error: an outer plugin returns it untouched
/// and does no accounting, because the query comes through it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deferred(pub(crate) ());

/// What serving a query came to: the rcode (CoreDNS's int) and an optional error for the
/// `errors` plugin to log (CoreDNS's error value; the server itself never inspects it).
#[derive(Debug, PartialEq, Eq)]
pub struct Status {
    /// The reply's rcode when [`client_write`] is true (the plugin wrote it), otherwise the
    /// rcode the server must write.
    pub rcode: u8,
    /// Why the query failed, when it did.
    pub error: Option<PluginError>,
}

impl Status {
    /// A plugin wrote a reply with this rcode, or asks the server to write one.
    pub const fn rcode(rcode: u8) -> Self {
        Status { rcode, error: None }
    }

    /// A plugin wrote the reply (whatever its rcode): the server sends it as it is. CoreDNS
    /// plugins return 0 for this.
    pub const fn written() -> Self {
        Status {
            rcode: crate::wire::rcode::NOERROR,
            error: None,
        }
    }

    /// A failure with its cause.
    pub fn error(rcode: u8, error: PluginError) -> Self {
        Status {
            rcode,
            error: Some(error),
        }
    }

    /// SERVFAIL in `plugin`'s name for a deferral on a pass that may wait: the rest of the
    /// chain broke the contract (only the inline pass defers), and a plugin awaiting it on
    /// the deferred pass has no later pass to hand it to.
    pub fn deferred_on_wait(plugin: &'static str) -> Self {
        let msg = "a plugin deferred on a pass that may wait";
        Status::error(crate::wire::rcode::SERVFAIL, PluginError::new(plugin, msg))
    }
}

/// CoreDNS's `ClientWrite`: false for SERVFAIL, REFUSED, FORMERR and NOTIMP, which mean
/// "nothing written yet, the server writes it"; true for every other rcode.
pub const fn client_write(rcode: u8) -> bool {
    !matches!(rcode, SERVFAIL | REFUSED | FORMERR | NOTIMP)
}

/// An error a plugin reports, shown as `plugin/NAME: message` like CoreDNS's `plugin.Error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginError {
    /// The plugin that failed.
    pub plugin: &'static str,
    /// What went wrong. A fixed text (`&'static str`) is kept borrowed, so a plugin that
    /// fails the same way on every query of a flood (rrl's "response rate exceeded the
    /// limit") reports it without allocating; a formatted one is owned.
    pub message: Cow<'static, str>,
}

impl PluginError {
    /// An error of `plugin` with its message.
    pub fn new(plugin: &'static str, message: impl Into<Cow<'static, str>>) -> Self {
        PluginError {
            plugin,
            message: message.into(),
        }
    }
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "plugin/{}: {}", self.plugin, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::rcode::{NOERROR, NXDOMAIN};

    #[test]
    fn the_four_error_rcodes_are_written_by_the_server() {
        for rc in [SERVFAIL, REFUSED, FORMERR, NOTIMP] {
            assert!(!client_write(rc), "{rc}");
        }
        for rc in [NOERROR, NXDOMAIN, 6, 16] {
            assert!(client_write(rc), "{rc}");
        }
    }

    #[test]
    fn rcode_255_is_an_rcode_like_any_other() {
        // It was the "deferred" sentinel: now no rcode is reserved, and 255 means "written".
        assert!(client_write(u8::MAX));
        let served: Outcome = Ok(Status::rcode(u8::MAX));
        assert_eq!(served.map(|s| s.rcode), Ok(u8::MAX));
    }

    #[test]
    fn an_outcome_costs_no_more_than_a_status() {
        assert_eq!(
            std::mem::size_of::<Outcome>(),
            std::mem::size_of::<Status>()
        );
    }

    #[test]
    fn errors_read_like_coredns() {
        let e = PluginError::new("forward", "no next plugin found");
        assert_eq!(e.to_string(), "plugin/forward: no next plugin found");
    }
}
