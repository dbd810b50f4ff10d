//! Cache counters per core, exported under CoreDNS's `coredns_cache_*` names (reference
//! §3.2) with its labels: `server`, `type` (success, denial), `zones` (the cache's zones
//! joined by commas) and `view`.

use ringdns_plugin::metrics::{Counter, Desc, Export, Kind, Sink};

/// One core's cache counters for one (server, zones, view); kept in the metrics registry so a
/// rebuilt cache counts on.
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
    /// Positive entries pushed out by the bounds.
    pub evictions_success: Counter,
    /// Negative entries pushed out by the bounds.
    pub evictions_denial: Counter,
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

const TYPED: &[&str] = &["server", "type", "zones", "view"];
const PLAIN: &[&str] = &["server", "zones", "view"];

static ENTRIES: Desc = Desc {
    name: "coredns_cache_entries",
    help: "The number of elements in the cache.",
    kind: Kind::Gauge,
    labels: TYPED,
};
static REQUESTS: Desc = Desc {
    name: "coredns_cache_requests_total",
    help: "The count of cache requests.",
    kind: Kind::Counter,
    labels: PLAIN,
};
static HITS: Desc = Desc {
    name: "coredns_cache_hits_total",
    help: "The count of cache hits.",
    kind: Kind::Counter,
    labels: TYPED,
};
static MISSES: Desc = Desc {
    name: "coredns_cache_misses_total",
    help: "The count of cache misses. Deprecated, derive misses from cache hits/requests counters.",
    kind: Kind::Counter,
    labels: PLAIN,
};
static PREFETCH: Desc = Desc {
    name: "coredns_cache_prefetch_total",
    help: "The number of times the cache has prefetched a cached item.",
    kind: Kind::Counter,
    labels: PLAIN,
};
static DROPS: Desc = Desc {
    name: "coredns_cache_drops_total",
    help: "The number responses that are not cached, because the reply is malformed.",
    kind: Kind::Counter,
    labels: PLAIN,
};
static SERVED_STALE: Desc = Desc {
    name: "coredns_cache_served_stale_total",
    help: "The number of requests served from stale cache entries.",
    kind: Kind::Counter,
    labels: PLAIN,
};
static EVICTIONS: Desc = Desc {
    name: "coredns_cache_evictions_total",
    help: "The count of cache evictions.",
    kind: Kind::Counter,
    labels: TYPED,
};
static BYTES: Desc = Desc {
    name: "ringdns_cache_bytes",
    help: "Bytes held by the cache (the bound of max_bytes).",
    kind: Kind::Gauge,
    labels: TYPED,
};

impl Export for CacheCounters {
    fn export(&self, labels: &[String], _core: usize, out: &mut Sink) {
        let [server, zones, view] = [0, 1, 2].map(|i| labels[i].as_str());
        let plain = [server, zones, view];
        let success = [server, "success", zones, view];
        let denial = [server, "denial", zones, view];
        out.gauge(&ENTRIES, &success, self.entries_success.get() as f64);
        out.gauge(&ENTRIES, &denial, self.entries_denial.get() as f64);
        out.counter(&REQUESTS, &plain, self.requests.get());
        out.counter(&HITS, &success, self.hits_success.get());
        out.counter(&HITS, &denial, self.hits_denial.get());
        out.counter(&MISSES, &plain, self.misses.get());
        out.counter(&PREFETCH, &plain, self.prefetches.get());
        out.counter(&DROPS, &plain, self.drops.get());
        out.counter(&SERVED_STALE, &plain, self.served_stale.get());
        out.counter(&EVICTIONS, &success, self.evictions_success.get());
        out.counter(&EVICTIONS, &denial, self.evictions_denial.get());
        out.gauge(&BYTES, &success, self.bytes_success.get() as f64);
        out.gauge(&BYTES, &denial, self.bytes_denial.get() as f64);
    }
}
