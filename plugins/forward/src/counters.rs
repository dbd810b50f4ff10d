//! Forward's per-core counters, kept in the metrics registry (so a rebuilt instance counts
//! on) and summed at scrape time under CoreDNS's `coredns_proxy_*` and `coredns_forward_*`
//! names (`plugin/forward/metrics.go`), plus the families CoreDNS 1.10 and older exported per upstream.

use ringdns_plugin::metrics::dns::{RCODE_SLOTS, rcode_label};
use ringdns_plugin::metrics::{Counter, DURATION_BUCKETS, Desc, Export, Histogram, Kind, Sink};

/// Transport index for per-protocol counters: udp, tcp, tcp-tls (CoreDNS's `proto` label).
pub const PROTOS: [&str; 3] = ["udp", "tcp", "tcp-tls"];

/// Counters of one upstream (registry label: its `to`) on one core.
#[derive(Debug)]
pub struct UpstreamCounters {
    /// Replies by rcode (index = rcode, 0..=23).
    pub rcodes: [Counter; 24],
    /// Exchange durations by the reply's rcode (`coredns_proxy_request_duration_seconds`).
    pub duration: [Histogram; RCODE_SLOTS],
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
            duration: std::array::from_fn(|_| Histogram::new(DURATION_BUCKETS)),
            healthcheck_failures: Counter::new(),
            conn_cache_hits: Default::default(),
            conn_cache_misses: Default::default(),
            mismatched: Counter::new(),
            errors: Counter::new(),
        }
    }
}

/// Counters of one forward line (registry label: its FROM zone) on one core.
#[derive(Debug, Default)]
pub struct RuleCounters {
    /// Queries forwarded (reached an upstream or failed trying).
    pub requests: Counter,
    /// Queries refused by `max_concurrent` (`coredns_forward_max_concurrent_rejects_total`).
    pub max_concurrent_rejects: Counter,
    /// Times every upstream was down (`coredns_forward_healthcheck_broken_total`).
    pub healthcheck_broken: Counter,
}

static PROXY_DURATION: Desc = Desc {
    name: "coredns_proxy_request_duration_seconds",
    help: "Histogram of the time each request took.",
    kind: Kind::Histogram,
    labels: &["proxy_name", "to", "rcode"],
};
static PROXY_HC_FAILURES: Desc = Desc {
    name: "coredns_proxy_healthcheck_failures_total",
    help: "Count of failed health checks per upstream.",
    kind: Kind::Counter,
    labels: &["proxy_name", "to"],
};
static CONN_HITS: Desc = Desc {
    name: "coredns_proxy_conn_cache_hits_total",
    help: "Counter of connection cache hits per upstream and protocol.",
    kind: Kind::Counter,
    labels: &["proxy_name", "to", "proto"],
};
static CONN_MISSES: Desc = Desc {
    name: "coredns_proxy_conn_cache_misses_total",
    help: "Counter of connection cache misses per upstream and protocol.",
    kind: Kind::Counter,
    labels: &["proxy_name", "to", "proto"],
};
static LEGACY_REQUESTS: Desc = Desc {
    name: "coredns_forward_requests_total",
    help: "Counter of requests made per upstream.",
    kind: Kind::Counter,
    labels: &["to"],
};
static LEGACY_RESPONSES: Desc = Desc {
    name: "coredns_forward_responses_total",
    help: "Counter of responses received per upstream.",
    kind: Kind::Counter,
    labels: &["to", "rcode"],
};
static LEGACY_DURATION: Desc = Desc {
    name: "coredns_forward_request_duration_seconds",
    help: "Histogram of the time each request took.",
    kind: Kind::Histogram,
    labels: &["to", "rcode"],
};
static LEGACY_HC_FAILURES: Desc = Desc {
    name: "coredns_forward_healthcheck_failures_total",
    help: "Counter of the number of failed healthchecks.",
    kind: Kind::Counter,
    labels: &["to"],
};
static MISMATCHED: Desc = Desc {
    name: "ringdns_forward_mismatched_replies_total",
    help: "Replies dropped because their ID, source or question did not match a query.",
    kind: Kind::Counter,
    labels: &["to"],
};
static ERRORS: Desc = Desc {
    name: "ringdns_forward_exchange_errors_total",
    help: "Exchanges with an upstream that failed (timeout, network error).",
    kind: Kind::Counter,
    labels: &["to"],
};

impl Export for UpstreamCounters {
    fn export(&self, labels: &[String], _core: usize, out: &mut Sink) {
        let to = labels[0].as_str();
        let mut requests = self.errors.get();
        for (rc, c) in self.rcodes.iter().enumerate() {
            let v = c.get();
            requests += v;
            if v != 0 {
                out.counter(&LEGACY_RESPONSES, &[to, &rcode_label(rc)], v);
            }
        }
        for (rc, h) in self.duration.iter().enumerate() {
            if h.count() != 0 {
                let rcode = rcode_label(rc);
                out.histogram(&PROXY_DURATION, &["forward", to, &rcode], h);
                out.histogram(&LEGACY_DURATION, &[to, &rcode], h);
            }
        }
        out.counter(&LEGACY_REQUESTS, &[to], requests);
        let failures = self.healthcheck_failures.get();
        out.counter(&PROXY_HC_FAILURES, &["forward", to], failures);
        out.counter(&LEGACY_HC_FAILURES, &[to], failures);
        for (i, proto) in PROTOS.iter().enumerate() {
            out.counter_nonzero(
                &CONN_HITS,
                &["forward", to, proto],
                self.conn_cache_hits[i].get(),
            );
            out.counter_nonzero(
                &CONN_MISSES,
                &["forward", to, proto],
                self.conn_cache_misses[i].get(),
            );
        }
        out.counter(&MISMATCHED, &[to], self.mismatched.get());
        out.counter(&ERRORS, &[to], self.errors.get());
    }
}

static BROKEN: Desc = Desc {
    name: "coredns_forward_healthcheck_broken_total",
    help: "Counter of the number of complete failures of the healthchecks.",
    kind: Kind::Counter,
    labels: &[],
};
static REJECTS: Desc = Desc {
    name: "coredns_forward_max_concurrent_rejects_total",
    help: "Counter of the number of queries rejected because the concurrent queries were at maximum.",
    kind: Kind::Counter,
    labels: &[],
};
static QUERIES: Desc = Desc {
    name: "ringdns_forward_queries_total",
    help: "Queries a forward line took on (each may try several upstreams), by its FROM zone.",
    kind: Kind::Counter,
    labels: &["from"],
};

impl Export for RuleCounters {
    fn export(&self, labels: &[String], _core: usize, out: &mut Sink) {
        out.counter(&BROKEN, &[], self.healthcheck_broken.get());
        out.counter(&REJECTS, &[], self.max_concurrent_rejects.get());
        out.counter(&QUERIES, &[&labels[0]], self.requests.get());
    }
}
