//! The stop signal as each core sees it: a flag and the wakers of the loops waiting on it.
//! The process-wide flag is an atomic set by the signal thread; each core's watcher task
//! turns it into this local signal, so the query loops never touch shared state.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// A one-shot, core-local "stop now" signal.
#[derive(Default)]
pub struct Stop {
    set: Cell<bool>,
    waiters: RefCell<Vec<Waker>>,
}

impl Stop {
    /// A signal not yet given.
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives the signal and wakes every waiter.
    pub fn trigger(&self) {
        self.set.set(true);
        for w in self.waiters.borrow_mut().drain(..) {
            w.wake();
        }
    }

    /// Whether the signal was given.
    pub fn is_set(&self) -> bool {
        self.set.get()
    }

    /// Completes once the signal is given.
    pub fn wait(&self) -> StopWait<'_> {
        StopWait { stop: self }
    }
}

/// The future returned by [`Stop::wait`].
pub struct StopWait<'a> {
    stop: &'a Stop,
}

impl Future for StopWait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.stop.is_set() {
            return Poll::Ready(());
        }
        let mut w = self.stop.waiters.borrow_mut();
        if !w.iter().any(|x| x.will_wake(cx.waker())) {
            w.push(cx.waker().clone());
        }
        Poll::Pending
    }
}
