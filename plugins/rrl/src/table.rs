//! One core's accounts, bounded by `max-table-size`: a hash map from a token's key (see
//! [`Token::key`](super::token::Token::key)) to its account, stored in the map (one probe
//! per query, no pointer to follow, 24 bytes an entry), and a ring of the keys in insertion
//! order, oldest first. When the table is full, a new category may take the place of an old
//! account that is idle for the window (coredns/rrl's eviction rule); when none of the
//! oldest few is, the new category is not tracked and its response goes out unlimited, as
//! coredns/rrl's "stops rate limiting new responses". No lock: the core owns it. Both grow
//! as categories come, up to the bound (amortised allocation); once the table is full,
//! replacing an account allocates nothing.

use super::account::{Account, Debit, Rate};
use ringdns_plugin::prehashed::Prehashed;
use std::collections::{HashMap, VecDeque};

/// Accounts at the front of the ring (oldest first) looked at for an evictable one, at
/// most, per new category in a full table: an insert's work stays bounded. An account still
/// in use goes to the back, so the next look starts with older ones.
const EVICTION_TRIES: usize = 8;

/// Room reserved at the start; beyond it the map and the ring grow on demand.
const INITIAL: usize = 4096;

type Keys = Prehashed;

/// One core's bounded table of accounts.
pub struct Table {
    map: HashMap<u64, Account, Keys>,
    /// Every key of `map`, in insertion order (an account passed over by eviction counts
    /// as inserted again).
    order: VecDeque<u64>,
    max: usize,
}

/// What [`Table::debit`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The category's account was debited.
    Debited(Debit),
    /// A new account was made: its first response is allowed.
    Added,
    /// The table is full of accounts in use: not tracked, allowed.
    Full,
}

impl Outcome {
    /// The debit, when over the limit.
    pub fn exceeded(&self) -> Option<Debit> {
        match self {
            Outcome::Debited(d) if d.exceeded() => Some(*d),
            _ => None,
        }
    }
}

impl Table {
    /// An empty table of at most `max` accounts.
    pub fn new(max: usize) -> Self {
        let n = max.min(INITIAL);
        Table {
            map: HashMap::with_capacity_and_hasher(n, Keys::default()),
            order: VecDeque::with_capacity(n),
            max,
        }
    }

    /// The accounts held now (tests).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// What debiting `token` at `now` would come to, changing nothing (the request check
    /// before the chain, which must leave no trace when the query is served again).
    pub fn peek(&self, token: u64, now: i64, rate: &Rate) -> Outcome {
        match self.map.get(&token) {
            Some(a) => Outcome::Debited(a.clone().debit(now, rate)),
            // New (or not to be tracked, which the real debit finds out): never over.
            None => Outcome::Added,
        }
    }

    /// Looks `token` up and does nothing with it: the account's memory is on its way into
    /// the CPU's cache by the time [`Table::debit`] needs it.
    #[inline]
    pub fn touch(&self, token: u64) {
        std::hint::black_box(self.map.get(&token));
    }

    /// Debits `token`'s account at `now`, making it if it is new (coredns/rrl's
    /// `UpdateAdd`).
    #[inline]
    pub fn debit(&mut self, token: u64, now: i64, rate: &Rate) -> Outcome {
        if let Some(a) = self.map.get_mut(&token) {
            return Outcome::Debited(a.debit(now, rate));
        }
        self.add(token, now, rate)
    }

    /// A new category: its account, if there is or can be made room.
    #[cold]
    fn add(&mut self, token: u64, now: i64, rate: &Rate) -> Outcome {
        if self.map.len() >= self.max && !self.evict(now, rate.window) {
            return Outcome::Full;
        }
        self.map.insert(token, Account::new(now, rate));
        self.order.push_back(token);
        Outcome::Added
    }

    /// Frees one place: the first evictable account among the oldest few, moving the ones
    /// still in use to the back. False when none of them could go.
    fn evict(&mut self, now: i64, window: i64) -> bool {
        for _ in 0..EVICTION_TRIES.min(self.order.len()) {
            let Some(token) = self.order.pop_front() else {
                return false;
            };
            match self.map.get(&token) {
                Some(a) if a.evictable(now, window) => {
                    self.map.remove(&token);
                    return true;
                }
                Some(_) => self.order.push_back(token),
                // Never: every token of the ring is in the map.
                None => {}
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::super::account::SECOND;
    use super::super::token::{Kind, Prefix, Token};
    use super::*;

    fn token(last: u8) -> u64 {
        Token {
            prefix: Prefix::of([192, 0, 2, last].into(), 32, 56),
            kind: Kind::Response,
            qtype: 1,
            name: 42,
        }
        .key(&foldhash::fast::FixedState::with_seed(1))
    }

    const RATE: Rate = Rate {
        interval: SECOND / 10,
        window: 15 * SECOND,
        slip_ratio: 0,
    };

    #[test]
    fn a_full_table_evicts_only_idle_accounts() {
        let mut t = Table::new(3);
        let now = 1000 * SECOND;
        for i in 0..3 {
            assert_eq!(t.debit(token(i), now, &RATE), Outcome::Added);
        }
        // Full, all in use: the new category is not tracked (and not limited).
        assert_eq!(t.debit(token(9), now, &RATE), Outcome::Full);
        assert_eq!(t.len(), 3);
        // Keep 0 in use; 1 and 2 go idle past the window.
        let later = now + 20 * SECOND;
        assert!(matches!(
            t.debit(token(0), later, &RATE),
            Outcome::Debited(_)
        ));
        assert_eq!(t.debit(token(9), later, &RATE), Outcome::Added);
        assert_eq!(t.len(), 3);
        // 0 (still in use, at the front by insertion) was passed over: 1 went.
        assert!(matches!(
            t.peek(token(0), later, &RATE),
            Outcome::Debited(_)
        ));
        assert_eq!(t.peek(token(1), later, &RATE), Outcome::Added);
        assert!(matches!(
            t.peek(token(2), later, &RATE),
            Outcome::Debited(_)
        ));
    }

    #[test]
    fn max_table_size_zero_tracks_nothing() {
        let mut t = Table::new(0);
        for _ in 0..100 {
            assert_eq!(t.debit(token(1), SECOND, &RATE), Outcome::Full);
        }
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn peek_changes_nothing() {
        let mut t = Table::new(10);
        let now = 1000 * SECOND;
        assert_eq!(t.peek(token(1), now, &RATE), Outcome::Added);
        assert_eq!(t.len(), 0);
        t.debit(token(1), now, &RATE);
        for _ in 0..9 {
            t.debit(token(1), now, &RATE);
        }
        let p = t.peek(token(1), now, &RATE);
        assert!(p.exceeded().is_some());
        assert_eq!(
            p,
            t.peek(token(1), now, &RATE),
            "peeking twice, same answer"
        );
        assert_eq!(p, t.debit(token(1), now, &RATE));
    }
}
