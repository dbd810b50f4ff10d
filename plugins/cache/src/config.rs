//! What a `cache` block configures (CoreDNS's `plugin/cache/setup.go`). Filled by setup.rs, read by every core.

use std::time::Duration;

/// One of the two caches (`success`, `denial`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capacity {
    /// Most entries kept (CoreDNS's CAPACITY; default 10 000). Per core in ringdns.
    pub entries: usize,
    /// Longest TTL served from this cache (the leading TTL argument, or `success CAP TTL`).
    pub max_ttl: Duration,
    /// Shortest TTL an entry is kept for (`MINTTL`, default 5s).
    pub min_ttl: Duration,
}

/// `serve_stale` modes (RFC 8767).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaleMode {
    /// Serve the stale entry at once and refresh it in the background.
    Immediate,
    /// Refresh first; serve the stale entry only if the refresh fails or takes longer than
    /// the verify timeout (zero = wait for the refresh).
    Verify,
}

/// `serve_stale [DURATION] [immediate|verify [TIMEOUT] [RESP_TTL [RECHECK]]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeStale {
    /// How long past expiry an entry may still be served (default 1h).
    pub max_stale: Duration,
    /// Immediate (default) or verify.
    pub mode: StaleMode,
    /// verify only: how long to wait for the refresh before serving stale (0 = no limit).
    pub verify_timeout: Duration,
    /// TTL put on stale answers (default 0).
    pub response_ttl: u32,
    /// After a failed refresh, wait this long before trying again (default 0, at most 5m).
    pub recheck: Duration,
}

/// `prefetch AMOUNT [DURATION [PERCENTAGE%]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefetch {
    /// Hits needed (without a gap of `window`) before an entry is prefetched.
    pub amount: u32,
    /// The gap that resets the hit count (default 1m).
    pub window: Duration,
    /// Prefetch when at most this percentage of the original TTL is left (10–90, default 10).
    pub percentage: u8,
}

/// Everything the `cache` directive of a block says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheConfig {
    /// Zones cached (lower-case FQDN); default: the block's zones.
    pub zones: Vec<String>,
    /// The positive cache (NOERROR with data, referrals).
    pub success: Capacity,
    /// The negative cache (NXDOMAIN, NODATA).
    pub denial: Capacity,
    /// How long SERVFAIL (and NOTIMP) replies are cached; zero disables (default 5s, max 5m).
    pub servfail: Duration,
    /// `prefetch`, when given.
    pub prefetch: Option<Prefetch>,
    /// `serve_stale`, when given.
    pub serve_stale: Option<ServeStale>,
    /// `serve_stale_policy prefer_positive`.
    pub prefer_positive: bool,
    /// `disable success [ZONES...]`: zones (lower-case FQDN) where positive answers are not cached.
    pub disable_success: Vec<String>,
    /// `disable denial [ZONES...]`: zones where denials are not cached.
    pub disable_denial: Vec<String>,
    /// `keepttl`: answer with the stored TTLs instead of counting down.
    pub keepttl: bool,
    /// ringdns: most bytes of stored replies per core (0 = no limit besides entries).
    pub max_bytes: usize,
    /// The block's `view` name (empty without one), the `view` label of the counters.
    pub view: String,
}
