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
/// allowed).
pub fn parse_rfc3339(s: &str) -> Option<SystemTime> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> { s.get(r)?.parse().ok() };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut i = 19;
    let mut nanos: u64 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let frac = &s[start..i];
        let digits = &frac[..frac.len().min(9)];
        nanos = digits.parse::<u64>().ok()? * 10u64.pow(9 - digits.len() as u32);
    }
    let offset = match b.get(i)? {
        b'Z' | b'z' => 0,
        b'+' | b'-' => {
            let sign = if b[i] == b'-' { -1 } else { 1 };
            let oh = num(i + 1..i + 3)?;
            let om = num(i + 4..i + 6)?;
            sign * (oh * 3600 + om * 60)
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y2, m2) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * m2 + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset;
    let secs = u64::try_from(secs).ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::new(secs, nanos as u32))
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
