//! Where a plugin sits in the chain, decided by its type: a plugin that serves is a
//! [`Link`] around the rest of the chain, one that only configures its block is no link at
//! all. The server's generated chain is the nesting of every plugin.cfg line's
//! `<P::Place as Place<P>>::Linked<…>`, which the compiler normalizes to exactly the links
//! that can serve: no `dyn`, no empty slots for configuration-only plugins, and nothing read
//! from a plugin's source text.

use crate::{CoreInfo, Handler, Link, Plugin, Serve};
use std::sync::Arc;

/// A plugin's place in a chain whose rest is `R`.
pub trait Place<P: Plugin> {
    /// The chain from this plugin on: `Link<P, R>` or `R` itself.
    type Linked<R: Handler>: Handler;

    /// This core's part of the chain from this plugin on, given the block's configuration
    /// of the plugin (`None` when the block does not use it) and the builder of the rest,
    /// called after this plugin's instance is built (outermost first, as plugin.cfg reads).
    fn link<R: Handler>(
        config: Option<&Arc<P::Config>>,
        core: &CoreInfo,
        rest: impl FnOnce() -> R,
    ) -> Self::Linked<R>;
}

/// The place of a plugin that serves queries: a [`Link`] holding its per-core instance
/// (empty on a block or core without one).
pub enum Serves {}

impl<P: Serve> Place<P> for Serves {
    type Linked<R: Handler> = Link<P, R>;

    #[inline]
    fn link<R: Handler>(
        config: Option<&Arc<P::Config>>,
        core: &CoreInfo,
        rest: impl FnOnce() -> R,
    ) -> Link<P, R> {
        let plugin = config.and_then(|c| P::build(c, core));
        Link {
            plugin,
            rest: rest(),
        }
    }
}

/// The place of a plugin that only configures its block (root, bind, timeouts, …): none.
/// The chain goes straight from the plugin before it to the one after.
pub enum ConfigOnly {}

impl<P: Plugin> Place<P> for ConfigOnly {
    type Linked<R: Handler> = R;

    #[inline]
    fn link<R: Handler>(
        _config: Option<&Arc<P::Config>>,
        _core: &CoreInfo,
        rest: impl FnOnce() -> R,
    ) -> R {
        rest()
    }
}

/// Whether two names are the same, at compile time: the generated chain asserts with it
/// that each plugin's [`Plugin::NAME`] is the directive its plugin.cfg line gives.
pub const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::same_name;

    #[test]
    fn names_compare_byte_for_byte() {
        assert!(same_name("prometheus", "prometheus"));
        assert!(!same_name("prometheus", "metrics"));
        assert!(!same_name("log", "lo"));
        assert!(!same_name("Log", "log"));
        assert!(same_name("", ""));
    }
}
