//! Data that every core reads on the query path and a background thread replaces: zones,
//! hosts files, API snapshots. A [`Snapshot`] is read without a lock or an allocation
//! (arc-swap's load) and replaced whole, so a query sees either the old data or the new,
//! never a mix. [`poll_while`] runs the thread that looks for changes, for as long as the
//! configuration that started it lives.

use arc_swap::ArcSwap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// The current version of some read-only data, shared by every core.
#[derive(Debug)]
pub struct Snapshot<T> {
    current: ArcSwap<T>,
}

/// A read of a [`Snapshot`]: derefs to the data; hold it only for one query.
pub type Guard<T> = arc_swap::Guard<Arc<T>>;

impl<T> Snapshot<T> {
    /// A snapshot holding `data`.
    pub fn new(data: T) -> Self {
        Snapshot {
            current: ArcSwap::from_pointee(data),
        }
    }

    /// The current data, for one query (lock-free, no allocation).
    #[inline]
    pub fn load(&self) -> Guard<T> {
        self.current.load()
    }

    /// The current data as an `Arc`, for keeping beyond one query (a transfer's walk).
    pub fn load_full(&self) -> Arc<T> {
        self.current.load_full()
    }

    /// Replaces the data: queries that started before keep their read, later ones see
    /// the new data.
    pub fn store(&self, data: T) {
        self.current.store(Arc::new(data));
    }

    /// Replaces the data with a shared one.
    pub fn store_arc(&self, data: Arc<T>) {
        self.current.store(data);
    }
}

/// Runs `check` on a thread of its own (named `name`) every `interval`, for as long as
/// `owner` lives: the thread holds only a `Weak`, so dropping the configuration that made
/// the owner (a reload, the server stopping) ends it within a `interval`'s step of 100 ms.
/// What a zone's serial check or a hosts file's re-read runs on, off every core.
pub fn poll_while<T: Send + Sync + 'static>(
    name: &str,
    interval: Duration,
    owner: &Arc<T>,
    check: impl Fn(&T) + Send + 'static,
) -> std::io::Result<()> {
    let weak: Weak<T> = Arc::downgrade(owner);
    // A thread name may hold no NUL (std panics on one); names come from the Corefile.
    let name: String = name
        .chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .collect();
    std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            let step = Duration::from_millis(100).min(interval);
            let mut due = Instant::now() + interval;
            loop {
                std::thread::sleep(step);
                if weak.strong_count() == 0 {
                    return;
                }
                if Instant::now() < due {
                    continue;
                }
                match weak.upgrade() {
                    Some(owner) => check(&owner),
                    None => return,
                }
                due = Instant::now() + interval;
            }
        })
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_store_is_seen_by_the_next_load_and_not_by_a_held_one() {
        let s = Snapshot::new(1);
        let held = s.load();
        s.store(2);
        assert_eq!(**held, 1);
        assert_eq!(**s.load(), 2);
        assert_eq!(*s.load_full(), 2);
    }

    #[test]
    fn a_name_with_a_nul_byte_starts_a_poller() {
        // The fuzzer's find: a zone name from the Corefile with a NUL in it.
        let owner = Arc::new(());
        poll_while(
            "file-reload-r\0}dom",
            Duration::from_secs(60),
            &owner,
            |_| {},
        )
        .unwrap();
    }

    #[test]
    fn the_poller_runs_while_its_owner_lives_and_stops_after() {
        let owner = Arc::new(AtomicUsize::new(0));
        poll_while("poll-test", Duration::from_millis(20), &owner, |n| {
            n.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while owner.load(Ordering::Relaxed) < 2 {
            assert!(Instant::now() < deadline, "the poller never ran twice");
            std::thread::sleep(Duration::from_millis(10));
        }
        let weak = Arc::downgrade(&owner);
        drop(owner);
        // The thread holds a strong reference only during a check: the data goes soon.
        while weak.strong_count() != 0 {
            assert!(Instant::now() < deadline, "the poller kept its owner alive");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
