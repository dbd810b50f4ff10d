//! UDP sessions of `udp_session_tracking` (Cloudflare Spectrum's PPv2 over UDP): the client
//! address of a peer's last header, applied to that peer's headerless datagrams for a while.
//! One table per listener and core, bounded: the least recently used session goes first,
//! and an expired one is dropped when it is next looked up (CoreDNS's expirable LRU).

use hashlink::LruCache;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Peer (the load balancer's side) → (client, until when).
pub struct Sessions {
    lru: LruCache<SocketAddr, (SocketAddr, Instant)>,
    ttl: Duration,
}

impl Sessions {
    /// An empty table of at most `cap` sessions, each kept `ttl` after its last use.
    pub fn new(ttl: Duration, cap: usize) -> Self {
        Sessions {
            lru: LruCache::new(cap.max(1)),
            ttl,
        }
    }

    /// Takes a reloaded configuration's duration and cap (sessions kept, the oldest cut).
    pub fn configure(&mut self, ttl: Duration, cap: usize) {
        self.ttl = ttl;
        if self.lru.capacity() != cap.max(1) {
            self.lru.set_capacity(cap.max(1));
        }
    }

    /// Notes (or renews) `peer`'s client at `now`.
    pub fn store(&mut self, peer: SocketAddr, client: SocketAddr, now: Instant) {
        self.lru.insert(peer, (client, now + self.ttl));
    }

    /// `peer`'s client if its session is alive at `now`, which renews it.
    pub fn lookup(&mut self, peer: SocketAddr, now: Instant) -> Option<SocketAddr> {
        let ttl = self.ttl;
        let entry = self.lru.get_mut(&peer)?;
        if entry.1 <= now {
            self.lru.remove(&peer);
            return None;
        }
        entry.1 = now + ttl;
        Some(entry.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn a_session_lives_its_ttl_from_its_last_use() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut t = Sessions::new(10 * s, 4);
        t.store(addr(1), addr(101), t0);
        assert_eq!(t.lookup(addr(1), t0 + 9 * s), Some(addr(101)));
        assert_eq!(t.lookup(addr(1), t0 + 18 * s), Some(addr(101)), "renewed");
        assert_eq!(t.lookup(addr(1), t0 + 28 * s), None, "expired");
        assert_eq!(t.lookup(addr(1), t0), None, "and gone");
        assert_eq!(t.lookup(addr(2), t0), None);
    }

    #[test]
    fn the_least_recently_used_session_goes_first() {
        let t0 = Instant::now();
        let mut t = Sessions::new(Duration::from_secs(60), 2);
        t.store(addr(1), addr(101), t0);
        t.store(addr(2), addr(102), t0);
        assert!(t.lookup(addr(1), t0).is_some());
        t.store(addr(3), addr(103), t0);
        assert_eq!(t.lookup(addr(2), t0), None);
        assert_eq!(t.lookup(addr(1), t0), Some(addr(101)));
        assert_eq!(t.lookup(addr(3), t0), Some(addr(103)));
        t.configure(Duration::from_secs(60), 1);
        assert_eq!(t.lookup(addr(1), t0), None, "cut to the newest");
    }
}
