//! Cache counters per core, for the metrics plugin (CoreDNS's `coredns_cache_*`).

use crate::metrics::Counter;

/// One core's cache counters.
#[derive(Debug, Default)]
pub struct CacheCounters {
    /// Queries the cache looked up (`coredns_cache_requests_total`).
    pub requests: Counter,
    /// Answered from the positive cache.
    pub hits_success: Counter,
    /// Answered from the negative cache (denials and SERVFAIL).
    pub hits_denial: Counter,
    /// Not found (or expired): asked the next plugin.
    pub misses: Counter,
    /// Entries pushed out by the bounds.
    pub evictions: Counter,
    /// Background refreshes started before expiry.
    pub prefetches: Counter,
    /// Answers served stale.
    pub served_stale: Counter,
    /// Replies not stored because their question did not match the query's.
    pub drops: Counter,
    /// Entries in the positive cache now.
    pub entries_success: Counter,
    /// Entries in the negative cache now.
    pub entries_denial: Counter,
    /// Bytes held by the positive cache now.
    pub bytes_success: Counter,
    /// Bytes held by the negative cache now.
    pub bytes_denial: Counter,
}
