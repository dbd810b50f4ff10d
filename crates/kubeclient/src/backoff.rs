//! client-go's reflector backoff: exponential from `init` (×2, capped), each delay
//! jittered up by `jitter` × itself, and reset to `init` once `reset` has passed since the
//! last delay without another failure.

use crate::Tuning;
use std::time::{Duration, Instant};

/// The retry delays of one reflector.
pub(crate) struct Backoff {
    init: Duration,
    cap: Duration,
    jitter: f64,
    reset: Duration,
    next: Duration,
    last: Option<Instant>,
}

impl Backoff {
    /// Delays as `tuning` says (client-go's by default).
    pub(crate) fn new(t: &Tuning) -> Self {
        Backoff {
            init: t.backoff_init,
            cap: t.backoff_cap,
            jitter: t.backoff_jitter,
            reset: t.backoff_reset,
            next: t.backoff_init,
            last: None,
        }
    }

    /// The delay before the next retry, at `now`.
    pub(crate) fn delay(&mut self, now: Instant) -> Duration {
        if self
            .last
            .is_none_or(|l| now.duration_since(l) >= self.reset)
        {
            self.next = self.init;
        }
        self.last = Some(now);
        let d = self.next;
        self.next = (self.next * 2).min(self.cap);
        d + d.mul_f64(self.jitter * fastrand::f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_caps_jitters_and_resets() {
        let t = Tuning::default();
        let mut b = Backoff::new(&t);
        let mut now = Instant::now();
        let mut base = Duration::from_millis(800);
        for _ in 0..10 {
            let d = b.delay(now);
            assert!(d >= base && d < base * 2, "{d:?} not in [{base:?}, 2×)");
            base = (base * 2).min(Duration::from_secs(30));
            now += Duration::from_secs(1);
        }
        // At the cap: [30 s, 60 s), as reflector.go's comment says.
        let d = b.delay(now);
        assert!(d >= Duration::from_secs(30) && d < Duration::from_secs(60));
        // Two minutes without a failure start again from 800 ms.
        now += Duration::from_secs(121);
        let d = b.delay(now);
        assert!(d >= Duration::from_millis(800) && d < Duration::from_millis(1600));
    }
}
