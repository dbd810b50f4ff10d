//! What a plugin returns, and the CoreDNS rule that decides who writes the reply.

use crate::wire::rcode::{FORMERR, NOTIMP, REFUSED, SERVFAIL};
use std::borrow::Cow;
use std::fmt;

/// The rcode value a plugin returns when it cannot answer without waiting and the query was
/// served inline (see [`crate::Request::defer`]); never sent on the wire.
const DEFERRED: u8 = u8::MAX;

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

    /// The inline pass must be abandoned and the query served again as a task that may wait.
    pub const fn deferred() -> Self {
        Status {
            rcode: DEFERRED,
            error: None,
        }
    }

    /// True when a plugin deferred; outer plugins return such a status untouched and do no
    /// accounting, because the query will come through the chain again.
    pub const fn is_deferred(&self) -> bool {
        self.rcode == DEFERRED
    }
}

/// CoreDNS's `ClientWrite`: false for SERVFAIL, REFUSED, FORMERR and NOTIMP, which mean
/// "nothing written yet, the server writes it"; true for every other rcode.
pub const fn client_write(rcode: u8) -> bool {
    !matches!(rcode, SERVFAIL | REFUSED | FORMERR | NOTIMP) && rcode != DEFERRED
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
        assert!(!client_write(Status::deferred().rcode));
    }

    #[test]
    fn errors_read_like_coredns() {
        let e = PluginError::new("forward", "no next plugin found");
        assert_eq!(e.to_string(), "plugin/forward: no next plugin found");
    }
}
