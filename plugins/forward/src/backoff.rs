//! Holding back new TCP/TLS connections to an upstream that closes (or resets) them before
//! answering on them, an overloaded or misconfigured peer: redialling at once made about
//! four dials per query and thousands of sockets in flight. Closes of our own (after a
//! timeout) do not count, nor do dials that fail (they cost no socket and fail fast).
//! After such a close no connection is opened for a while, doubling from
//! [`FIRST`] up to [`LONGEST`] while it goes on; one answered query ends it.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// The first pause after a connection was closed unanswered.
pub const FIRST: Duration = Duration::from_millis(200);

/// The longest pause.
pub const LONGEST: Duration = Duration::from_secs(5);

/// One pool's dial pause, per core (no sharing, no locks).
#[derive(Debug, Default)]
pub struct DialBackoff {
    /// No dial before this.
    until: Cell<Option<Instant>>,
    /// The pause the last close started.
    step: Cell<Duration>,
}

impl DialBackoff {
    /// Whether a dial must wait at `now`; the end of the pause if so.
    pub fn holds(&self, now: Instant) -> Option<Instant> {
        self.until.get().filter(|u| now < *u)
    }

    /// A connection was closed before any reply came on it. Closes seen while a pause is
    /// running (the other queries of the same connection) do not lengthen it; the first one
    /// after it ends, doubles it.
    pub fn closed_unanswered(&self, now: Instant) {
        if self.holds(now).is_some() {
            return;
        }
        let step = if self.until.get().is_none() {
            FIRST
        } else {
            (self.step.get() * 2).min(LONGEST)
        };
        self.step.set(step);
        self.until.set(Some(now + step));
    }

    /// A reply came: the upstream serves connections again.
    pub fn answered(&self) {
        self.until.set(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_doubles_while_closes_go_on_and_ends_with_an_answer() {
        let b = DialBackoff::default();
        let t0 = Instant::now();
        assert_eq!(b.holds(t0), None);
        b.closed_unanswered(t0);
        assert_eq!(b.holds(t0), Some(t0 + FIRST));
        // Other queries failing on the same close do not lengthen it.
        b.closed_unanswered(t0 + Duration::from_millis(10));
        assert_eq!(b.holds(t0), Some(t0 + FIRST));
        let mut at = t0 + FIRST;
        let mut step = FIRST;
        for _ in 0..10 {
            assert_eq!(b.holds(at), None, "a dial is allowed once the pause ends");
            b.closed_unanswered(at);
            step = (step * 2).min(LONGEST);
            assert_eq!(b.holds(at), Some(at + step));
            at += step;
        }
        assert_eq!(step, LONGEST);
        b.answered();
        assert_eq!(b.holds(at - Duration::from_millis(1)), None);
        b.closed_unanswered(at);
        assert_eq!(b.holds(at), Some(at + FIRST), "a new episode starts short");
    }
}
