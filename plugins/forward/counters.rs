//! Forward's per-core counters, for the metrics plugin to sum at scrape time (CoreDNS's
//! `coredns_proxy_*` and `coredns_forward_*` families).

use crate::metrics::{Counter, DURATION_BUCKETS, Histogram};

/// Transport index for per-protocol counters: udp, tcp, tcp-tls (CoreDNS's `proto` label).
pub const PROTOS: [&str; 3] = ["udp", "tcp", "tcp-tls"];

/// Counters of one upstream on one core.
#[derive(Debug)]
pub struct UpstreamCounters {
    /// Replies by rcode (index = rcode, 0..=23).
    pub rcodes: [Counter; 24],
    /// Exchange durations (`coredns_proxy_request_duration_seconds`).
    pub duration: Histogram,
    /// Failed health probes run on this core.
    pub healthcheck_failures: Counter,
    /// Pooled connection reused, per protocol.
    pub conn_cache_hits: [Counter; 3],
    /// New connection dialled, per protocol.
    pub conn_cache_misses: [Counter; 3],
    /// Replies dropped because ID, source or question did not match.
    pub mismatched: Counter,
    /// Exchanges that failed (timeout, network error).
    pub errors: Counter,
}

impl Default for UpstreamCounters {
    fn default() -> Self {
        UpstreamCounters {
            rcodes: Default::default(),
            duration: Histogram::new(DURATION_BUCKETS),
            healthcheck_failures: Counter::new(),
            conn_cache_hits: Default::default(),
            conn_cache_misses: Default::default(),
            mismatched: Counter::new(),
            errors: Counter::new(),
        }
    }
}

/// Counters of one forward line on one core.
#[derive(Debug, Default)]
pub struct RuleCounters {
    /// Queries forwarded (reached an upstream or failed trying).
    pub requests: Counter,
    /// Queries refused by `max_concurrent` (`coredns_forward_max_concurrent_rejects_total`).
    pub max_concurrent_rejects: Counter,
    /// Times every upstream was down (`coredns_forward_healthcheck_broken_total`).
    pub healthcheck_broken: Counter,
}
