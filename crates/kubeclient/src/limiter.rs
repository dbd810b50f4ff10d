//! `apiserver_qps` / `apiserver_burst` / `apiserver_max_inflight`: the client-side token
//! bucket (client-go's flowcontrol, which waits as golang.org/x/time/rate does: a request
//! takes a token even when none is left and waits for it) and CoreDNS's inflight semaphore,
//! shared by every reflector of one [`crate::ApiConfig`].

use crate::Limits;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// client-go's `rest.DefaultQPS`, used when `apiserver_qps` is unset or 0 (CoreDNS only
/// overrides the config when the value is > 0).
const DEFAULT_QPS: f64 = 5.0;
/// client-go's `rest.DefaultBurst`, for `apiserver_burst` unset or 0.
const DEFAULT_BURST: u32 = 10;

struct Bucket {
    tokens: f64,
    last: Instant,
}

/// The limits of one API configuration.
pub(crate) struct Limiter {
    qps: f64,
    burst: f64,
    bucket: Mutex<Bucket>,
    max_inflight: u32,
    inflight: Mutex<u32>,
    freed: Condvar,
}

impl Limiter {
    /// The limits `l` asks for, client-go's defaults where it asks for none.
    pub(crate) fn new(l: Limits) -> Self {
        let qps = l.qps.filter(|q| *q > 0.0).unwrap_or(DEFAULT_QPS);
        let burst = l.burst.filter(|b| *b > 0).unwrap_or(DEFAULT_BURST) as f64;
        Limiter {
            qps,
            burst,
            bucket: Mutex::new(Bucket {
                tokens: burst,
                last: Instant::now(),
            }),
            max_inflight: l.max_inflight.unwrap_or(0),
            inflight: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// Takes a token and says how long to wait for it (zero when one was there).
    pub(crate) fn reserve(&self) -> Duration {
        let mut b = self.bucket.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let refill = now.duration_since(b.last).as_secs_f64() * self.qps;
        b.tokens = (b.tokens + refill).min(self.burst);
        b.last = now;
        b.tokens -= 1.0;
        if b.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-b.tokens / self.qps)
        }
    }

    /// Waits for an inflight slot (none without `max_inflight`), checking `stop` every
    /// 100 ms; `None` when stopped.
    pub(crate) fn enter(&self, stop: &dyn Fn() -> bool) -> Option<Slot<'_>> {
        if self.max_inflight == 0 {
            return Some(Slot(None));
        }
        let mut n = self.inflight.lock().unwrap_or_else(|e| e.into_inner());
        while *n >= self.max_inflight {
            if stop() {
                return None;
            }
            n = self
                .freed
                .wait_timeout(n, Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        *n += 1;
        Some(Slot(Some(self)))
    }
}

/// An inflight slot, given back on drop.
pub(crate) struct Slot<'a>(Option<&'a Limiter>);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if let Some(l) = self.0 {
            *l.inflight.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
            l.freed.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_rate() {
        let l = Limiter::new(Limits {
            qps: Some(10.0),
            burst: Some(3),
            max_inflight: None,
        });
        for _ in 0..3 {
            assert_eq!(l.reserve(), Duration::ZERO);
        }
        let w = l.reserve();
        assert!(
            w > Duration::from_millis(80) && w <= Duration::from_millis(100),
            "{w:?}"
        );
        let w = l.reserve();
        assert!(
            w > Duration::from_millis(180) && w <= Duration::from_millis(200),
            "{w:?}"
        );
    }

    #[test]
    fn defaults_are_client_gos() {
        let l = Limiter::new(Limits::default());
        assert_eq!((l.qps, l.burst, l.max_inflight), (5.0, 10.0, 0));
        let l = Limiter::new(Limits {
            qps: Some(0.0),
            burst: Some(0),
            max_inflight: Some(0),
        });
        assert_eq!((l.qps, l.burst, l.max_inflight), (5.0, 10.0, 0));
    }

    #[test]
    fn inflight_slots() {
        let l = Limiter::new(Limits {
            max_inflight: Some(1),
            ..Limits::default()
        });
        let a = l.enter(&|| false).unwrap();
        let t0 = Instant::now();
        assert!(
            l.enter(&|| t0.elapsed() > Duration::from_millis(150))
                .is_none()
        );
        drop(a);
        assert!(l.enter(&|| true).is_some());
    }
}
