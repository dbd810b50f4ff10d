//! `coredns_kubernetes_dns_programming_duration_seconds{service_kind}` (CoreDNS's
//! `plugin/kubernetes/object/metrics.go`): for each EndpointSlice change that carries the
//! `endpoints.kubernetes.io/last-change-trigger-time` annotation, how long from that time
//! until the change was in the table queries read (observed when the builder publishes it,
//! which is closer to "programmed" than CoreDNS's informer callback). `service_kind` is
//! `cluster_ip` or `headless_with_selector`. The client's request metrics are
//! ringdns-kubeclient's.

use ringdns_plugin::metrics::{Desc, Histogram, Kind, Sink, Source, registry};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::{Duration, SystemTime};

static PROGRAMMING: Desc = Desc {
    name: "coredns_kubernetes_dns_programming_duration_seconds",
    help: "Histogram of the time (in seconds) it took to program a dns instance.",
    kind: Kind::Histogram,
    labels: &["service_kind"],
};

/// CoreDNS's buckets: `prometheus.ExponentialBuckets(0.001, 2, 20)`.
static BUCKETS: [f64; 20] = {
    let mut b = [0.0; 20];
    let mut i = 0;
    let mut v = 0.001;
    while i < 20 {
        b[i] = v;
        v *= 2.0;
        i += 1;
    }
    b
};

const KINDS: [&str; 2] = ["cluster_ip", "headless_with_selector"];

/// One histogram per service kind, process-wide as CoreDNS's; written by the builder
/// threads one at a time (two live during a reload).
static HISTOGRAMS: OnceLock<[Histogram; 2]> = OnceLock::new();
static WRITER: Mutex<()> = Mutex::new(());
static REGISTER: Once = Once::new();

fn histograms() -> &'static [Histogram; 2] {
    HISTOGRAMS.get_or_init(|| [Histogram::new(&BUCKETS), Histogram::new(&BUCKETS)])
}

/// Makes the family part of the scrape.
pub fn register() {
    REGISTER.call_once(|| registry::add_source("kubernetes", Arc::new(KubernetesSource)));
}

/// Observes the slices published now: each trigger time (RFC 3339) with its kind.
pub fn programmed(changes: &[(String, &'static str)], now: SystemTime) {
    if changes.is_empty() {
        return;
    }
    let _one = WRITER.lock().unwrap_or_else(|e| e.into_inner());
    for (at, kind) in changes {
        let Some(t) = parse_rfc3339(at) else { continue };
        let d = now.duration_since(t).unwrap_or(Duration::ZERO);
        let i = KINDS.iter().position(|k| k == kind).unwrap_or(0);
        histograms()[i].observe(d);
    }
}

struct KubernetesSource;

impl Source for KubernetesSource {
    fn collect(&self, out: &mut Sink) {
        for (i, h) in histograms().iter().enumerate() {
            out.histogram(&PROGRAMMING, &[KINDS[i]], h);
        }
    }
}

/// An RFC 3339 time as the API writes it (`2026-12-03T14:00:00Z`, fractions and offsets
/// allowed), read by jiff (already in the tree through domain).
pub fn parse_rfc3339(s: &str) -> Option<SystemTime> {
    let t: jiff::Timestamp = s.parse().ok()?;
    Some(SystemTime::from(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times_parse() {
        let t = parse_rfc3339("2026-12-03T14:00:00Z").unwrap();
        assert_eq!(
            t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs(),
            1_796_306_400
        );
        let f = parse_rfc3339("2026-12-03T14:00:00.5+01:00").unwrap();
        assert_eq!(
            f.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_millis(),
            1_796_302_800_500
        );
        assert!(parse_rfc3339("yesterday").is_none());
        assert_eq!(BUCKETS[0], 0.001);
        assert!((BUCKETS[19] - 524.288).abs() < 1e-9);
    }
}
