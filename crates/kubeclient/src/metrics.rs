//! CoreDNS's rest-client families (`plugin/kubernetes/metrics.go`, fed by client-go's
//! `tools/metrics` hooks), process-wide and labelled by host, as CoreDNS's vectors are:
//!
//! - `coredns_kubernetes_rest_client_request_duration_seconds{verb,host}`: until the
//!   response headers (DefBuckets);
//! - `coredns_kubernetes_rest_client_rate_limiter_duration_seconds{verb,host}`: the wait for
//!   a token of the client-side rate limiter (DefBuckets);
//! - `coredns_kubernetes_rest_client_requests_total{code,method,host}`: `code` is the HTTP
//!   status, or `<error>` when no response came (client-go's text).
//!
//! Requests are rare (a list, then one watch every 5–10 minutes per kind), so one Mutex
//! guards them; it also keeps each histogram single-writer.

use ringdns_plugin::metrics::{DEF_BUCKETS, Desc, Histogram, Kind, Sink, Source, registry};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

static REQUEST_DURATION: Desc = Desc {
    name: "coredns_kubernetes_rest_client_request_duration_seconds",
    help: "Request latency in seconds. Broken down by verb and host.",
    kind: Kind::Histogram,
    labels: &["verb", "host"],
};

static RATE_LIMITER_DURATION: Desc = Desc {
    name: "coredns_kubernetes_rest_client_rate_limiter_duration_seconds",
    help: "Client side rate limiter latency in seconds. Broken down by verb and host.",
    kind: Kind::Histogram,
    labels: &["verb", "host"],
};

static REQUESTS: Desc = Desc {
    name: "coredns_kubernetes_rest_client_requests_total",
    help: "Number of HTTP requests, partitioned by status code, method, and host.",
    kind: Kind::Counter,
    labels: &["code", "method", "host"],
};

#[derive(Default)]
struct State {
    duration: BTreeMap<(String, String), Histogram>,
    limiter: BTreeMap<(String, String), Histogram>,
    results: BTreeMap<(String, String, String), u64>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);
static REGISTER: Once = Once::new();

fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    REGISTER.call_once(|| registry::add_source("kubernetes_rest_client", Arc::new(RestSource)));
    let mut g = STATE.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(State::default))
}

/// Time until the response headers of a request.
pub(crate) fn request_duration(verb: &str, host: &str, d: Duration) {
    with(|s| {
        s.duration
            .entry((verb.to_string(), host.to_string()))
            .or_insert_with(|| Histogram::new(DEF_BUCKETS))
            .observe(d)
    });
}

/// The rate limiter's wait before a request.
pub(crate) fn rate_limiter_duration(verb: &str, host: &str, d: Duration) {
    with(|s| {
        s.limiter
            .entry((verb.to_string(), host.to_string()))
            .or_insert_with(|| Histogram::new(DEF_BUCKETS))
            .observe(d)
    });
}

/// One request's result: `code` is the status or `<error>`.
pub(crate) fn request_result(code: &str, method: &str, host: &str) {
    with(|s| {
        *s.results
            .entry((code.to_string(), method.to_string(), host.to_string()))
            .or_insert(0) += 1
    });
}

struct RestSource;

impl Source for RestSource {
    fn collect(&self, out: &mut Sink) {
        let g = STATE.lock().unwrap_or_else(|e| e.into_inner());
        let Some(s) = g.as_ref() else { return };
        for ((verb, host), h) in &s.duration {
            out.histogram(&REQUEST_DURATION, &[verb, host], h);
        }
        for ((verb, host), h) in &s.limiter {
            out.histogram(&RATE_LIMITER_DURATION, &[verb, host], h);
        }
        for ((code, method, host), n) in &s.results {
            out.counter(&REQUESTS, &[code, method, host], *n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_plugin::metrics::registry;

    #[test]
    fn families_reach_the_scrape() {
        request_duration("GET", "unit.test:1", Duration::from_millis(20));
        rate_limiter_duration("GET", "unit.test:1", Duration::ZERO);
        request_result("<error>", "GET", "unit.test:1");
        request_result("200", "GET", "unit.test:1");
        request_result("200", "GET", "unit.test:1");
        let sink = registry::collect();
        assert!(
            sink.get(
                "coredns_kubernetes_rest_client_requests_total",
                &["200", "GET", "unit.test:1"]
            ) == Some(&ringdns_plugin::metrics::Sample::Int(2))
        );
        assert!(
            sink.get(
                "coredns_kubernetes_rest_client_requests_total",
                &["<error>", "GET", "unit.test:1"]
            )
            .is_some()
        );
        assert!(
            sink.get(
                "coredns_kubernetes_rest_client_request_duration_seconds",
                &["GET", "unit.test:1"]
            )
            .is_some()
        );
        assert!(
            sink.get(
                "coredns_kubernetes_rest_client_rate_limiter_duration_seconds",
                &["GET", "unit.test:1"]
            )
            .is_some()
        );
    }
}
