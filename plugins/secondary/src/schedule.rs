//! When a loaded secondary zone is checked next, and when it expires (RFC 1034 §4.3.5): a
//! serial check every REFRESH of the zone's SOA, every RETRY once a check failed, and the
//! zone discarded when no check has succeeded for EXPIRE. Pure arithmetic on instants, so
//! the zone's thread ([`crate::refresh`]) only waits and acts, and the tests need no clock.

use crate::reply::Soa;
use std::time::{Duration, Instant};

/// CoreDNS's random delay before a check on the refresh timer (up to 5 s) and on the
/// retry timer (up to 2 s), so that many secondaries of one primary do not ask at once.
const REFRESH_JITTER: Duration = Duration::from_secs(5);
const RETRY_JITTER: Duration = Duration::from_secs(2);

/// What is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// A serial check.
    Check,
    /// The zone has gone EXPIRE without a successful check: it must be discarded.
    Expire,
}

/// The SOA timers in effect, each at least one second (as CoreDNS has them: a timer of 0
/// would spin).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timers {
    /// Between checks.
    pub refresh: Duration,
    /// Between checks after a failure.
    pub retry: Duration,
    /// How long without a successful check the zone is served.
    pub expire: Duration,
}

impl From<&Soa> for Timers {
    fn from(soa: &Soa) -> Self {
        let secs = |v: u32| Duration::from_secs(u64::from(v.max(1)));
        Timers {
            refresh: secs(soa.refresh),
            retry: secs(soa.retry),
            expire: secs(soa.expire),
        }
    }
}

/// A random delay below `max`, and below a quarter of `interval`, so that a short timer
/// (a test's 1 s refresh) stays short.
fn jitter(max: Duration, interval: Duration) -> Duration {
    let cap = max.min(interval / 4).as_millis() as u64;
    if cap == 0 {
        return Duration::ZERO;
    }
    Duration::from_millis(fastrand::u64(..cap))
}

/// The timers of one loaded zone.
#[derive(Clone, Debug)]
pub struct Schedule {
    timers: Timers,
    /// The last successful check (or transfer).
    last_ok: Instant,
    /// A check failed since `last_ok`: the retry timer runs and the zone may expire.
    failing: bool,
    next_check: Instant,
}

impl Schedule {
    /// The schedule of a zone just transferred (or checked) at `now` with `soa`.
    pub fn new(soa: &Soa, now: Instant) -> Schedule {
        let timers = Timers::from(soa);
        Schedule {
            timers,
            last_ok: now,
            failing: false,
            next_check: now + timers.refresh + jitter(REFRESH_JITTER, timers.refresh),
        }
    }

    /// A check succeeded at `now`; `soa` is the zone's SOA now (a new one after a
    /// transfer).
    pub fn ok(&mut self, soa: &Soa, now: Instant) {
        *self = Schedule::new(soa, now);
    }

    /// A check failed at `now`: the next one after RETRY.
    pub fn failed(&mut self, now: Instant) {
        self.failing = true;
        self.next_check = now + self.timers.retry + jitter(RETRY_JITTER, self.timers.retry);
    }

    /// Whether a check failed since the last success.
    pub fn failing(&self) -> bool {
        self.failing
    }

    /// The timers in effect.
    pub fn timers(&self) -> Timers {
        self.timers
    }

    /// When the zone expires, if no check succeeds before: only while checks fail (as
    /// CoreDNS's expire timer counts only then), EXPIRE after the last success.
    fn expires_at(&self) -> Option<Instant> {
        self.failing.then(|| self.last_ok + self.timers.expire)
    }

    /// The next instant something is due.
    pub fn wake_at(&self) -> Instant {
        match self.expires_at() {
            Some(e) => e.min(self.next_check),
            None => self.next_check,
        }
    }

    /// What is due at `now`, expiry first.
    pub fn due(&self, now: Instant) -> Option<Due> {
        if self.expires_at().is_some_and(|e| now >= e) {
            return Some(Due::Expire);
        }
        (now >= self.next_check).then_some(Due::Check)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn soa(refresh: u32, retry: u32, expire: u32) -> Soa {
        Soa {
            serial: 1,
            refresh,
            retry,
            expire,
            minimum: 60,
        }
    }

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn checks_come_every_refresh_and_every_retry_after_a_failure() {
        let t0 = Instant::now();
        let mut s = Schedule::new(&soa(3600, 600, 86400), t0);
        assert_eq!(s.due(t0), None);
        let first = s.wake_at();
        // REFRESH plus up to 5 s of jitter.
        assert!(first >= t0 + 3600 * S && first < t0 + 3605 * S, "{first:?}");
        assert_eq!(s.due(first), Some(Due::Check));
        // Failed: RETRY (plus up to 2 s), and now the zone can expire.
        s.failed(first);
        let retry = s.wake_at();
        assert!(retry >= first + 600 * S && retry < first + 602 * S);
        assert!(s.failing());
        assert_eq!(s.due(retry - S), None);
        // A success puts the refresh timer back.
        s.ok(&soa(7200, 600, 86400), retry);
        assert!(!s.failing());
        assert!(s.wake_at() >= retry + 7200 * S);
        assert_eq!(s.timers().refresh, 7200 * S);
    }

    #[test]
    fn a_zone_expires_only_after_expire_with_checks_failing() {
        let t0 = Instant::now();
        let mut s = Schedule::new(&soa(1, 1, 3), t0);
        // Without a failure, expiry is not due even long after.
        assert_eq!(s.due(t0 + 10 * S), Some(Due::Check));
        // Failing from 1 s on: retries, then expiry at t0 + 3 s.
        s.failed(t0 + S);
        assert!(s.wake_at() <= t0 + 3 * S);
        s.failed(t0 + 2 * S);
        assert_eq!(s.wake_at(), t0 + 3 * S);
        assert_eq!(s.due(t0 + 3 * S), Some(Due::Expire));
        assert_eq!(s.due(t0 + 2 * S + S / 2), None);
    }

    #[test]
    fn timers_of_zero_are_one_second_and_short_timers_get_short_jitter() {
        let t = Timers::from(&soa(0, 0, 0));
        assert_eq!((t.refresh, t.retry, t.expire), (S, S, S));
        for _ in 0..100 {
            assert!(jitter(REFRESH_JITTER, S) < S / 4);
            assert!(jitter(REFRESH_JITTER, 3600 * S) < REFRESH_JITTER);
        }
        assert_eq!(jitter(REFRESH_JITTER, Duration::ZERO), Duration::ZERO);
    }
}
