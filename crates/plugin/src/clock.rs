//! The time plugins measure TTLs and ages against. On a VM a clock read costs about as much
//! as a cache hit's lookup, so the UDP loop reads it once for the batch of queries it serves
//! inline ([`BatchTime`]) and plugins ask [`now`]; outside such a batch (a query that waited
//! in a task, a TCP query) it is read fresh. A batch is served in well under a millisecond,
//! so second-granular TTL arithmetic cannot tell the difference.

use std::cell::Cell;
use std::time::Instant;

thread_local! {
    static BATCH: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// The current time for a plugin: the batch's when one is being served inline on this
/// thread, else the clock's.
#[inline]
pub fn now() -> Instant {
    BATCH.with(Cell::get).unwrap_or_else(Instant::now)
}

/// While it lives, [`now`] on this thread returns the time it was started at. Hold it only
/// across synchronous code: a task polled meanwhile would see a stale time.
pub struct BatchTime {
    /// The batch time this one replaced (a nested guard gives it back when dropped).
    outer: Option<Instant>,
}

impl BatchTime {
    /// Reads the clock once for the queries served until the guard is dropped.
    pub fn start() -> Self {
        BatchTime {
            outer: BATCH.with(|b| b.replace(Some(Instant::now()))),
        }
    }
}

impl Drop for BatchTime {
    fn drop(&mut self) {
        BATCH.with(|b| b.set(self.outer));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_a_batch_time_stands_still_and_runs_again_after() {
        let outside = now();
        let batch = BatchTime::start();
        let first = now();
        assert!(first >= outside);
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert_eq!(now(), first);
        drop(batch);
        assert!(now() > first);
    }
}
