//! The shutdown hook: what a plugin does when the server stops, after `/ready` went to 503
//! and before the DNS listeners close, while every core still serves (CoreDNS's
//! `OnShutdown`). health's lameduck is one: it keeps the server answering for a while so
//! that load balancers drain it.
//!
//! Hooks run on the main thread, one after the other, in Corefile block order and
//! plugin.cfg order within a block. A hook may wait; [`Stopping::serve_for`] is the wait
//! that a second SIGINT (or a core that ended) cuts short.

use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a wait looks whether it was cut short (the old lameduck loop's period).
const POLL: Duration = Duration::from_millis(20);

/// The stop under way, as the shutdown hooks see it.
pub struct Stopping<'a> {
    graceful: bool,
    began: Instant,
    cut: &'a dyn Fn() -> bool,
    was_cut: Cell<bool>,
}

impl<'a> Stopping<'a> {
    /// A stop that began now; `graceful` for SIGTERM (SIGINT stops at once), `cut` says
    /// whether the waits must end now (a SIGINT came, a core ended).
    pub fn new(graceful: bool, cut: &'a dyn Fn() -> bool) -> Self {
        Stopping {
            graceful,
            began: Instant::now(),
            cut,
            was_cut: Cell::new(false),
        }
    }

    /// True for a graceful stop (SIGTERM), for which lameduck applies; false for SIGINT or
    /// a stop the server itself began (a core that ended).
    pub fn graceful(&self) -> bool {
        self.graceful
    }

    /// Keeps the server serving until `d` after the stop began, not after this call: the
    /// waits of several hooks overlap, so the longest counts, not their sum. Returns false
    /// when the wait was cut short, and from then on every later wait returns at once.
    pub fn serve_for(&self, d: Duration) -> bool {
        let until = self.began + d;
        loop {
            if self.was_cut.get() || (self.cut)() {
                self.was_cut.set(true);
                return false;
            }
            let now = Instant::now();
            if now >= until {
                return true;
            }
            std::thread::sleep((until - now).min(POLL));
        }
    }
}

/// A plugin's shutdown hook, registered in setup with
/// [`BlockSetup::on_shutdown`](crate::BlockSetup::on_shutdown). Shared, because the
/// configuration that holds it is.
#[derive(Clone)]
pub struct ShutdownHook(Arc<dyn Fn(&Stopping<'_>) + Send + Sync>);

impl ShutdownHook {
    /// Wraps the function the hook runs.
    pub fn new(f: impl Fn(&Stopping<'_>) + Send + Sync + 'static) -> Self {
        ShutdownHook(Arc::new(f))
    }

    /// Runs the hook (the server calls it once per stop).
    pub fn run(&self, stopping: &Stopping<'_>) {
        (self.0)(stopping)
    }
}

impl std::fmt::Debug for ShutdownHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ShutdownHook")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_overlap_from_the_start_of_the_stop() {
        let never = || false;
        let s = Stopping::new(true, &never);
        assert!(s.graceful());
        let t0 = Instant::now();
        assert!(s.serve_for(Duration::from_millis(150)));
        let first = t0.elapsed();
        assert!(first >= Duration::from_millis(150), "{first:?}");
        // Already past: a shorter wait of a later hook adds nothing.
        let t1 = Instant::now();
        assert!(s.serve_for(Duration::from_millis(100)));
        assert!(
            t1.elapsed() < Duration::from_millis(20),
            "{:?}",
            t1.elapsed()
        );
    }

    #[test]
    fn a_cut_ends_this_wait_and_every_later_one() {
        let calls = Cell::new(0);
        let cut = || {
            calls.set(calls.get() + 1);
            calls.get() > 2
        };
        let s = Stopping::new(false, &cut);
        assert!(!s.graceful());
        let t0 = Instant::now();
        assert!(!s.serve_for(Duration::from_secs(10)));
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        let asked = calls.get();
        assert!(!s.serve_for(Duration::from_secs(10)));
        assert_eq!(calls.get(), asked, "a cut stop is not asked again");
    }
}
