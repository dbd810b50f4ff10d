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
    /// Waiting futures' wakers by slot; a slot is freed when its future is dropped, so
    /// short-lived waiters (TCP connections) leave nothing behind.
    waiters: RefCell<Vec<Option<Waker>>>,
    free: RefCell<Vec<usize>>,
}

impl Stop {
    /// A signal not yet given.
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives the signal and wakes every waiter.
    pub fn trigger(&self) {
        self.set.set(true);
        let wakers: Vec<Waker> = self
            .waiters
            .borrow_mut()
            .iter_mut()
            .filter_map(Option::take)
            .collect();
        for w in wakers {
            w.wake();
        }
    }

    /// Whether the signal was given.
    pub fn is_set(&self) -> bool {
        self.set.get()
    }

    /// Completes once the signal is given.
    pub fn wait(&self) -> StopWait<'_> {
        StopWait {
            stop: self,
            slot: None,
        }
    }

    /// Number of registered waiters (for tests).
    pub fn waiting(&self) -> usize {
        self.waiters.borrow().iter().filter(|w| w.is_some()).count()
    }
}

/// The future returned by [`Stop::wait`].
pub struct StopWait<'a> {
    stop: &'a Stop,
    slot: Option<usize>,
}

impl Future for StopWait<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.stop.is_set() {
            return Poll::Ready(());
        }
        let stop = self.stop;
        let slot = match self.slot {
            Some(s) => s,
            None => {
                let mut waiters = stop.waiters.borrow_mut();
                let s = stop.free.borrow_mut().pop().unwrap_or_else(|| {
                    waiters.push(None);
                    waiters.len() - 1
                });
                self.slot = Some(s);
                s
            }
        };
        let mut waiters = stop.waiters.borrow_mut();
        match &waiters[slot] {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => waiters[slot] = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl Drop for StopWait<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.slot {
            self.stop.waiters.borrow_mut()[s] = None;
            self.stop.free.borrow_mut().push(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_waiters_leave_nothing_behind() {
        let stop = Stop::new();
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        for _ in 0..1000 {
            let mut w = Box::pin(stop.wait());
            assert!(w.as_mut().poll(&mut cx).is_pending());
        }
        assert_eq!(stop.waiting(), 0);
        assert!(stop.waiters.borrow().len() <= 1, "slots are reused");
        let mut w = Box::pin(stop.wait());
        assert!(w.as_mut().poll(&mut cx).is_pending());
        assert_eq!(stop.waiting(), 1);
        stop.trigger();
        assert!(w.as_mut().poll(&mut cx).is_ready());
    }
}
