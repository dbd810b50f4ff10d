//! Upstream health, shared by all cores through relaxed atomics: consecutive failures (of
//! exchanges and of probes) and whether a probe loop is running. An upstream is down when
//! its failures exceed `max_fails`; one probe loop per upstream, on the core that saw the
//! failure, asks it every `health_check` interval until it answers.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// The health of one upstream, process-wide.
#[derive(Debug, Default)]
pub struct Health {
    fails: AtomicU32,
    probing: AtomicBool,
}

impl Health {
    /// Down ⇔ more than `max_fails` consecutive failures (CoreDNS's rule); never with 0.
    pub fn down(&self, max_fails: u32) -> bool {
        max_fails > 0 && self.fails.load(Ordering::Relaxed) > max_fails
    }

    /// Any reply, even SERVFAIL, proves the upstream alive.
    pub fn success(&self) {
        if self.fails.load(Ordering::Relaxed) != 0 {
            self.fails.store(0, Ordering::Relaxed);
        }
    }

    /// A network error or timeout.
    pub fn failure(&self) {
        let _ = self
            .fails
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |f| f.checked_add(1));
    }

    /// Claims the right to run this upstream's probe loop; false when one already runs.
    pub fn claim_probe(&self) -> bool {
        !self.probing.swap(true, Ordering::AcqRel)
    }

    /// Releases it when the loop ends.
    pub fn release_probe(&self) {
        self.probing.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn down_after_more_than_max_fails() {
        let h = Health::default();
        for _ in 0..2 {
            h.failure();
        }
        assert!(!h.down(2));
        h.failure();
        assert!(h.down(2));
        assert!(!h.down(0), "max_fails 0 never marks down");
        h.success();
        assert!(!h.down(2));
        h.failure();
        assert!(
            !h.down(0) && !h.down(1),
            "counting restarts after a success"
        );
    }

    #[test]
    fn one_probe_at_a_time() {
        let h = Health::default();
        assert!(h.claim_probe());
        assert!(!h.claim_probe());
        h.release_probe();
        assert!(h.claim_probe());
    }
}
