//! How a reload reaches the socket loops of one core without a lock per query: the core's
//! [`Current`] holds the newest [`CoreServer`] and a version number; each loop keeps a
//! [`View`] (its own `Rc` of a server and its listener's index there) and compares the
//! version once per batch (UDP) or per query (TCP), a plain `Cell` read. When it moved, the
//! loop takes the new server and finds its listener again by [`ListenerKey`]. Queries
//! already handed to tasks keep the `Rc` of the server they started on and finish there.
//! The main thread sends each core a [`Swap`] to start this.
//!
//! Making a server current is also when its plugins start ([`Current::new`] at start-up,
//! [`Current::replace`] after a reload): each runs its chains' start hooks once.

use super::core::CoreServer;
use super::sockets::ListenerSockets;
use crate::config::{Config, ListenerKey};
use crate::plugin::Handler;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

/// A new configuration for one core, with the sockets of the listeners it adds (opened by
/// the main thread, so that a port that cannot be bound failed the reload before any core
/// saw it).
pub struct Swap {
    /// The configuration to serve, already validated.
    pub config: Arc<Config>,
    /// This core's sockets of the added listeners.
    pub added: Vec<(ListenerKey, ListenerSockets)>,
}

/// The server a core serves now; one per core, shared by its loops.
pub struct Current<H> {
    server: RefCell<Rc<CoreServer<H>>>,
    version: Cell<u64>,
}

impl<H: Handler> Current<H> {
    /// Starts with the first configuration's server, whose plugins' start hooks run here
    /// (on the core's executor, before any loop exists).
    pub fn new(server: CoreServer<H>) -> Self {
        server.start();
        Current {
            server: RefCell::new(Rc::new(server)),
            version: Cell::new(0),
        }
    }

    /// Makes `server` the one loops pick up at their next batch, after running its plugins'
    /// start hooks: a reload's new chain starts before it serves a query. The replaced
    /// server's tasks end with it (its instances are dropped once no query holds it).
    pub fn replace(&self, server: CoreServer<H>) {
        server.start();
        *self.server.borrow_mut() = Rc::new(server);
        self.version.set(self.version.get() + 1);
    }
}

impl<H> Current<H> {
    /// Bumped by every [`Current::replace`].
    pub fn version(&self) -> u64 {
        self.version.get()
    }

    /// The newest server.
    pub fn get(&self) -> Rc<CoreServer<H>> {
        self.server.borrow().clone()
    }
}

/// One loop's view of its core's server: the server it serves with and its listener there.
pub struct View<H> {
    current: Rc<Current<H>>,
    key: ListenerKey,
    version: u64,
    /// The server this loop serves its next batch with.
    pub core: Rc<CoreServer<H>>,
    /// The listener's index in `core.listeners`.
    pub li: usize,
}

impl<H> Clone for View<H> {
    fn clone(&self) -> Self {
        View {
            current: self.current.clone(),
            key: self.key,
            version: self.version,
            core: self.core.clone(),
            li: self.li,
        }
    }
}

impl<H> View<H> {
    /// The view of listener `key`; `None` when the current server has no such listener.
    pub fn new(current: Rc<Current<H>>, key: ListenerKey) -> Option<Self> {
        let core = current.get();
        let li = find(&core, key)?;
        Some(View {
            version: current.version(),
            current,
            key,
            core,
            li,
        })
    }

    /// Takes the newest server if there is one. When it no longer has this listener (the
    /// reload removed it: the loop's stop signal follows), the view stays on the old one.
    #[inline]
    pub fn refresh(&mut self) {
        if self.current.version() == self.version {
            return;
        }
        self.version = self.current.version();
        let core = self.current.get();
        if let Some(li) = find(&core, self.key) {
            self.core = core;
            self.li = li;
        }
    }
}

fn find<H>(core: &CoreServer<H>, key: ListenerKey) -> Option<usize> {
    core.meta.iter().position(|m| m.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::{Outcome, Request, Status};

    /// A chain that counts its start hooks.
    #[derive(Default)]
    struct Starts(Rc<Cell<usize>>);

    impl Handler for Starts {
        async fn serve(&self, _req: &mut Request<'_>) -> Outcome {
            Ok(Status::rcode(crate::wire::rcode::SERVFAIL))
        }
        fn is_end(&self) -> bool {
            false
        }
        fn after_batch(&self) {}
        fn start(&self) {
            self.0.set(self.0.get() + 1);
        }
    }

    #[test]
    fn the_first_server_and_each_replacement_start_once_when_they_become_current() {
        let (first, second) = (Starts::default(), Starts::default());
        let (a, b) = (first.0.clone(), second.0.clone());
        let built = super::super::core::tests::one_block(first, false);
        assert_eq!(a.get(), 0, "building starts nothing");
        let current = Current::new(built);
        assert_eq!(a.get(), 1, "the first server starts as it becomes current");
        let _ = current.get();
        current.replace(super::super::core::tests::one_block(second, false));
        assert_eq!(
            (a.get(), b.get()),
            (1, 1),
            "a reload starts the new chain only"
        );
        assert_eq!(current.version(), 1);
    }
}
