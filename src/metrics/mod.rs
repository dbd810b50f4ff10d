//! Per-core counters: written by exactly one core without a lock or an atomic
//! read-modify-write, read by anyone (a metrics scrape) with relaxed loads and summed.

pub mod reload;

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

/// A histogram of durations with fixed bucket bounds (seconds), single writer.
#[derive(Debug)]
pub struct Histogram {
    /// Upper bounds of the buckets, in seconds (cumulative counts are computed at scrape).
    bounds: &'static [f64],
    /// Observations per bucket (not cumulative); the last one is +Inf.
    buckets: Box<[Counter]>,
    /// Sum of observations, in nanoseconds.
    sum_ns: Counter,
    /// Number of observations.
    count: Counter,
}

/// CoreDNS's duration buckets: 0.25 ms doubling up to about 8 s.
pub const DURATION_BUCKETS: &[f64] = &[
    0.00025, 0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024,
    2.048, 4.096, 8.192,
];

impl Histogram {
    /// A histogram with the given bucket bounds.
    pub fn new(bounds: &'static [f64]) -> Self {
        Histogram {
            bounds,
            buckets: (0..=bounds.len()).map(|_| Counter::new()).collect(),
            sum_ns: Counter::new(),
            count: Counter::new(),
        }
    }

    /// Records one duration. Only the owning core may call this.
    pub fn observe(&self, d: std::time::Duration) {
        let secs = d.as_secs_f64();
        let i = self
            .bounds
            .iter()
            .position(|b| secs <= *b)
            .unwrap_or(self.bounds.len());
        self.buckets[i].inc();
        self.sum_ns.add(d.as_nanos() as u64);
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

    /// Sum of observations in seconds.
    pub fn sum(&self) -> f64 {
        self.sum_ns.get() as f64 / 1e9
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
}
