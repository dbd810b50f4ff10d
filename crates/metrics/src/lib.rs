//! Per-core counters: written by exactly one core without a lock or an atomic
//! read-modify-write, read by anyone (a metrics scrape) with relaxed loads and summed.
//!
//! Around them: a process-wide [`registry`] that hands each core its counters at build time
//! (the same ones again after a reload), the [`Sink`] a scrape sums them into, and the
//! Prometheus text [`expose`]d on `/metrics`.
//!
//! Families that are not per-core counters plug in as a [`Source`]: reload, for instance,
//! keeps its failure count and the running configuration's hash in a struct of its own,
//! implements [`Source::collect`] for `coredns_reload_failed_total` and
//! `coredns_reload_version_info{hash, value}`, and calls
//! [`registry::add_source`]`("reload", …)` once; every scrape then includes them.

#![forbid(unsafe_code)]

pub mod dns;
pub mod expose;
mod family;
pub mod registry;

pub use family::{Desc, Kind, Sample, Sink};
pub use registry::{Export, Source};

pub mod process;

use std::sync::atomic::{AtomicU64, Ordering};

/// A counter with a single writer (the core that owns it) and any number of readers.
/// Incrementing is a plain load and store, so it costs no locked instruction.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    /// A counter at zero.
    pub const fn new() -> Self {
        Counter(AtomicU64::new(0))
    }

    /// Adds `n`. Only the owning core may call this.
    #[inline]
    pub fn add(&self, n: u64) {
        self.0.store(
            self.0.load(Ordering::Relaxed).wrapping_add(n),
            Ordering::Relaxed,
        );
    }

    /// Adds one. Only the owning core may call this.
    #[inline]
    pub fn inc(&self) {
        self.add(1);
    }

    /// Sets the value, for gauges such as a cache's entry count. Only the owning core may
    /// call this.
    #[inline]
    pub fn set(&self, v: u64) {
        self.0.store(v, Ordering::Relaxed);
    }

    /// The current value, from any thread.
    #[inline]
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// A histogram with fixed bucket bounds, single writer: of durations (seconds, summed in
/// nanoseconds) or of sizes (bytes).
#[derive(Debug)]
pub struct Histogram {
    /// Upper bounds of the buckets (cumulative counts are computed at scrape).
    bounds: &'static [f64],
    /// Observations per bucket (not cumulative); the last one is +Inf.
    buckets: Box<[Counter]>,
    /// Sum of observations, in units of `unit`.
    sum_ns: Counter,
    /// Number of observations.
    count: Counter,
    /// What one unit of the sum is worth in the exported value (1e-9 for durations).
    unit: f64,
}

/// CoreDNS's duration buckets: 0.25 ms doubling up to about 8 s.
pub const DURATION_BUCKETS: &[f64] = &[
    0.00025, 0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024,
    2.048, 4.096, 8.192,
];

/// Prometheus's default buckets, seconds (client_golang's `prometheus.DefBuckets`): the
/// families CoreDNS takes from client-go keep them (the Kubernetes rest-client latencies).
pub const DEF_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// CoreDNS's size buckets (bytes), for request and response sizes.
pub const SIZE_BUCKETS: &[f64] = &[
    0.0, 100.0, 200.0, 300.0, 400.0, 511.0, 1023.0, 2047.0, 4095.0, 8291.0, 16e3, 32e3, 48e3, 64e3,
];

impl Histogram {
    /// A histogram of durations with the given bucket bounds (seconds).
    pub fn new(bounds: &'static [f64]) -> Self {
        Self::with_unit(bounds, 1e-9)
    }

    /// A histogram of sizes (bytes) with the given bucket bounds.
    pub fn sizes(bounds: &'static [f64]) -> Self {
        Self::with_unit(bounds, 1.0)
    }

    fn with_unit(bounds: &'static [f64], unit: f64) -> Self {
        Histogram {
            bounds,
            buckets: (0..=bounds.len()).map(|_| Counter::new()).collect(),
            sum_ns: Counter::new(),
            count: Counter::new(),
            unit,
        }
    }

    /// Records one duration. Only the owning core may call this.
    #[inline]
    pub fn observe(&self, d: std::time::Duration) {
        self.record(d.as_secs_f64(), d.as_nanos() as u64);
    }

    /// Records one size. Only the owning core may call this.
    #[inline]
    pub fn observe_value(&self, v: u64) {
        self.record(v as f64, v);
    }

    #[inline]
    fn record(&self, value: f64, units: u64) {
        let i = self
            .bounds
            .iter()
            .position(|b| value <= *b)
            .unwrap_or(self.bounds.len());
        self.buckets[i].inc();
        self.sum_ns.add(units);
        self.count.inc();
    }

    /// The bucket bounds.
    pub fn bounds(&self) -> &'static [f64] {
        self.bounds
    }

    /// Per-bucket (not cumulative) counts, the last being +Inf.
    pub fn bucket_counts(&self) -> Vec<u64> {
        self.buckets.iter().map(Counter::get).collect()
    }

    /// Sum of observations, in seconds or bytes.
    pub fn sum(&self) -> f64 {
        self.sum_ns.get() as f64 * self.unit
    }

    /// Number of observations.
    pub fn count(&self) -> u64 {
        self.count.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn counters_add_up() {
        let c = Counter::new();
        c.inc();
        c.add(41);
        assert_eq!(c.get(), 42);
    }

    #[test]
    fn histogram_buckets() {
        let h = Histogram::new(DURATION_BUCKETS);
        h.observe(Duration::from_micros(100));
        h.observe(Duration::from_millis(3));
        h.observe(Duration::from_secs(60));
        let b = h.bucket_counts();
        assert_eq!(b[0], 1);
        assert_eq!(b[4], 1);
        assert_eq!(b[DURATION_BUCKETS.len()], 1);
        assert_eq!(h.count(), 3);
        assert!((h.sum() - 60.0031).abs() < 1e-6);
    }

    #[test]
    fn size_histogram_sums_bytes() {
        let h = Histogram::sizes(SIZE_BUCKETS);
        h.observe_value(0);
        h.observe_value(512);
        h.observe_value(70_000);
        let b = h.bucket_counts();
        assert_eq!(b[0], 1, "0 falls in the le=0 bucket");
        assert_eq!(b[6], 1, "512 in le=1023");
        assert_eq!(b[SIZE_BUCKETS.len()], 1, "+Inf");
        assert_eq!(h.sum(), 70_512.0);
    }
}
