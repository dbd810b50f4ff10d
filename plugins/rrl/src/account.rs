//! The credit arithmetic of one account, as coredns/rrl's `debit` (itself BIND 9's
//! rate-limit): time is the credit. An account remembers the instant from which its next
//! response is allowed; each response moves it on by the category's interval (a second
//! divided by the allowance), idle time moves "now" away from it. The balance, `now -
//! allow_time - interval` in nanoseconds, is capped at one second of credit (the allowance
//! as a burst) and floored at minus the window (the debt a flood can pile up).

/// Nanoseconds in a second, coredns/rrl's `second`.
pub const SECOND: i64 = 1_000_000_000;

/// One category's account (coredns/rrl's `ResponseAccount`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Account {
    /// The next response is allowed when the clock reaches this (nanoseconds on the core's
    /// clock).
    pub allow_time: i64,
    /// At 1, the next dropped response slips through (TC=1) instead; 0 never slips.
    pub slip_countdown: u32,
}

/// What one debit came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Debit {
    /// The balance after the debit, in nanoseconds; negative means over the limit.
    pub balance: i64,
    /// The response is sent truncated (TC=1, sections empty) instead of dropped.
    pub slip: bool,
}

impl Debit {
    /// Over the limit: coredns/rrl drops (or slips) when the balance is negative.
    pub const fn exceeded(&self) -> bool {
        self.balance < 0
    }
}

/// The fixed parameters of a debit: the category's interval (nanoseconds between allowed
/// responses, never 0 here: 0 means "not limited" and is decided before), the window
/// (nanoseconds, the deepest debt) and the slip ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// `second / per-second allowance` (per core: see the README).
    pub interval: i64,
    /// `window` in nanoseconds.
    pub window: i64,
    /// `slip-ratio`.
    pub slip_ratio: u32,
}

impl Account {
    /// A new account for the first response of a category, which is always allowed
    /// (coredns/rrl's `add`: the balance starts one second of credit less one interval).
    pub const fn new(now: i64, rate: &Rate) -> Self {
        Account {
            allow_time: now - SECOND + rate.interval,
            slip_countdown: rate.slip_ratio,
        }
    }

    /// Debits one response at `now` (coredns/rrl's `update`).
    ///
    /// One deliberate difference: coredns/rrl caps a full balance at `second - interval`,
    /// which is negative when the allowance is under one per second (an interval over a
    /// second), so after idling such an account drops its next response. Here the cap is
    /// never below zero; for allowances of one per second and more it is the same number.
    pub fn debit(&mut self, now: i64, rate: &Rate) -> Debit {
        let mut balance = now - self.allow_time - rate.interval;
        if balance >= SECOND {
            balance = (SECOND - rate.interval).max(0);
        } else if balance < -rate.window {
            balance = -rate.window;
        }
        self.allow_time = now - balance;
        if balance > 0 || self.slip_countdown == 0 {
            return Debit {
                balance,
                slip: false,
            };
        }
        if self.slip_countdown == 1 {
            self.slip_countdown = rate.slip_ratio;
            return Debit {
                balance,
                slip: true,
            };
        }
        self.slip_countdown -= 1;
        Debit {
            balance,
            slip: false,
        }
    }

    /// Whether the table may drop this account to make room (coredns/rrl's eviction test):
    /// it has been idle long enough that its debt, however deep, is paid.
    pub const fn evictable(&self, now: i64, window: i64) -> bool {
        now - self.allow_time >= window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(per_second: i64, window_s: i64, slip_ratio: u32) -> Rate {
        Rate {
            interval: SECOND / per_second,
            window: window_s * SECOND,
            slip_ratio,
        }
    }

    /// Sends `n` responses at `now` and counts those allowed.
    fn allowed(a: &mut Account, now: i64, r: &Rate, n: usize) -> usize {
        (0..n).filter(|_| !a.debit(now, r).exceeded()).count()
    }

    #[test]
    fn a_burst_gets_one_second_of_allowance_then_is_dropped() {
        let r = rate(10, 15, 0);
        let now = 100 * SECOND;
        let mut a = Account::new(now, &r);
        // The first response created the account (allowed); the balance is 1 s - 100 ms,
        // nine more fit, down to exactly 0 (not negative: still sent).
        assert_eq!(allowed(&mut a, now, &r, 9), 9);
        let d = a.debit(now, &r);
        assert!(d.exceeded(), "{d:?}");
        assert_eq!(d.balance, -r.interval);
    }

    #[test]
    fn credit_comes_back_at_the_rate_per_second() {
        let r = rate(10, 15, 0);
        let mut now = 100 * SECOND;
        let mut a = Account::new(now, &r);
        allowed(&mut a, now, &r, 9);
        assert!(a.debit(now, &r).exceeded());
        // Balance -100 ms: 200 ms later one more response is allowed, the next is not.
        now += 200 * 1_000_000;
        assert!(!a.debit(now, &r).exceeded());
        assert!(a.debit(now, &r).exceeded());
    }

    #[test]
    fn credit_is_capped_at_one_second() {
        let r = rate(10, 15, 0);
        let mut now = 100 * SECOND;
        let mut a = Account::new(now, &r);
        // An hour idle earns no more than one second's allowance.
        now += 3600 * SECOND;
        assert_eq!(allowed(&mut a, now, &r, 100), 10);
    }

    #[test]
    fn debt_is_floored_at_the_window() {
        let r = rate(10, 2, 0);
        let mut now = 100 * SECOND;
        let mut a = Account::new(now, &r);
        // A long flood: every response debits, down to -window and no further.
        for _ in 0..10_000 {
            a.debit(now, &r);
        }
        let d = a.debit(now, &r);
        assert_eq!(d.balance, -r.window);
        // The debt is paid after the window (2 s) plus one interval of credit.
        now += 2 * SECOND;
        assert!(a.debit(now, &r).exceeded(), "-window + 2 s - 100 ms < 0");
        now += 2 * SECOND;
        assert!(!a.debit(now, &r).exceeded());
        // Evictable once idle for the window.
        assert!(!a.evictable(now, r.window));
        assert!(a.evictable(now + 3 * SECOND, r.window));
    }

    #[test]
    fn every_nth_dropped_response_slips() {
        for (ratio, expect) in [(0u32, 0usize), (1, 12), (2, 6), (3, 4)] {
            let r = rate(1, 15, ratio);
            let now = 100 * SECOND;
            let mut a = Account::new(now, &r);
            // Balance 0 after creation; the countdown only runs on balances ≤ 0, so the
            // first debit (balance -1 s) is already dropped.
            let slips = (0..12)
                .map(|_| a.debit(now, &r))
                .inspect(|d| assert!(d.exceeded()))
                .filter(|d| d.slip)
                .count();
            assert_eq!(slips, expect, "slip-ratio {ratio}");
        }
    }

    #[test]
    fn under_one_per_second_an_idle_account_allows_a_response() {
        // 0.5 per second: interval 2 s. coredns/rrl would cap at -1 s and drop.
        let r = Rate {
            interval: 2 * SECOND,
            window: 15 * SECOND,
            slip_ratio: 0,
        };
        let mut now = 100 * SECOND;
        let mut a = Account::new(now, &r);
        assert!(a.debit(now, &r).exceeded());
        now += 3600 * SECOND;
        assert!(!a.debit(now, &r).exceeded());
        assert!(a.debit(now + SECOND, &r).exceeded());
    }
}
