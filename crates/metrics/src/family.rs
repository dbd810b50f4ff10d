//! What a scrape collects: metric families described once, statically, and the series each
//! core's counters add into them, summed by label values.

use super::Histogram;
use std::collections::BTreeMap;

/// The type of a family, as the exposition names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up; the name ends in `_total`.
    Counter,
    /// Any value (an entry count, `1` for "enabled").
    Gauge,
    /// Bucketed observations with their sum and count.
    Histogram,
    /// A constant `1` whose labels carry the information; the name ends in `_info`.
    Info,
}

/// A metric family: its full name as scraped (with `_total` / `_info`), help text, type
/// and label names. Declared as `static` beside the counters it exports.
#[derive(Debug)]
pub struct Desc {
    /// The name as Prometheus stores it, e.g. `coredns_dns_requests_total`.
    pub name: &'static str,
    /// The `# HELP` line.
    pub help: &'static str,
    /// Counter, gauge, histogram or info.
    pub kind: Kind,
    /// Label names, in the order values are given.
    pub labels: &'static [&'static str],
}

/// One series' value; series with equal labels from several cores add up.
#[derive(Debug, Clone, PartialEq)]
pub enum Sample {
    /// A counter (or an integer gauge).
    Int(u64),
    /// A gauge.
    Float(f64),
    /// A histogram: per-bucket counts (not cumulative; the last is +Inf) and the sum.
    Histogram {
        /// Upper bounds of the finite buckets.
        bounds: &'static [f64],
        /// Counts per bucket, `bounds.len() + 1` of them.
        buckets: Vec<u64>,
        /// Sum of observations.
        sum: f64,
    },
}

impl Sample {
    fn add(&mut self, other: Sample) {
        match (self, other) {
            (Sample::Int(a), Sample::Int(b)) => *a = a.wrapping_add(b),
            (Sample::Float(a), Sample::Float(b)) => *a += b,
            (
                Sample::Histogram { buckets, sum, .. },
                Sample::Histogram {
                    buckets: more,
                    sum: s,
                    ..
                },
            ) => {
                for (a, b) in buckets.iter_mut().zip(more) {
                    *a += b;
                }
                *sum += s;
            }
            // A family has one kind; mixing is a programming error caught by the tests.
            (a, b) => debug_assert!(false, "cannot add {b:?} to {a:?}"),
        }
    }

    /// The number of observations of a histogram (the sum of its buckets), else the value.
    pub fn count(&self) -> f64 {
        match self {
            Sample::Int(v) => *v as f64,
            Sample::Float(v) => *v,
            Sample::Histogram { buckets, .. } => buckets.iter().sum::<u64>() as f64,
        }
    }
}

/// A family with its series, by label values.
#[derive(Debug)]
pub struct Family {
    /// What it is.
    pub desc: &'static Desc,
    /// Label values → value.
    pub series: BTreeMap<Vec<String>, Sample>,
}

/// Everything one scrape found, by family name. Filled by [`super::Export`] and
/// [`super::Source`] implementations; allocation here is fine, it is never on the query path.
#[derive(Debug, Default)]
pub struct Sink {
    families: BTreeMap<&'static str, Family>,
}

impl Sink {
    /// Adds `v` to the series of `desc` with these label values.
    pub fn add(&mut self, desc: &'static Desc, labels: &[&str], v: Sample) {
        debug_assert_eq!(labels.len(), desc.labels.len(), "{}", desc.name);
        let fam = self.families.entry(desc.name).or_insert_with(|| Family {
            desc,
            series: BTreeMap::new(),
        });
        let key: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
        match fam.series.get_mut(&key) {
            Some(s) => s.add(v),
            None => {
                fam.series.insert(key, v);
            }
        }
    }

    /// Adds to a counter series.
    pub fn counter(&mut self, desc: &'static Desc, labels: &[&str], v: u64) {
        self.add(desc, labels, Sample::Int(v));
    }

    /// Adds to a gauge series (per-core gauges such as entry counts add up).
    pub fn gauge(&mut self, desc: &'static Desc, labels: &[&str], v: f64) {
        self.add(desc, labels, Sample::Float(v));
    }

    /// Adds a histogram's observations, unless it has none (a series appears once
    /// something was observed, as with CoreDNS's vectors).
    pub fn histogram(&mut self, desc: &'static Desc, labels: &[&str], h: &Histogram) {
        let buckets = h.bucket_counts();
        if buckets.iter().all(|b| *b == 0) {
            return;
        }
        self.add(
            desc,
            labels,
            Sample::Histogram {
                bounds: h.bounds(),
                buckets,
                sum: h.sum(),
            },
        );
    }

    /// Adds to a counter series only when `v` is not zero: for label values that are not
    /// configuration but what the traffic was (a query type, an rcode).
    pub fn counter_nonzero(&mut self, desc: &'static Desc, labels: &[&str], v: u64) {
        if v != 0 {
            self.counter(desc, labels, v);
        }
    }

    /// The families found, by name.
    pub fn families(&self) -> impl Iterator<Item = &Family> {
        self.families.values()
    }

    /// One series' value, for tests: `labels` in the family's label order.
    pub fn get(&self, name: &str, labels: &[&str]) -> Option<&Sample> {
        let key: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
        self.families.get(name)?.series.get(&key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static C: Desc = Desc {
        name: "t_total",
        help: "test",
        kind: Kind::Counter,
        labels: &["a"],
    };

    #[test]
    fn equal_labels_add_up() {
        let mut s = Sink::default();
        s.counter(&C, &["x"], 2);
        s.counter(&C, &["x"], 3);
        s.counter(&C, &["y"], 1);
        s.counter_nonzero(&C, &["z"], 0);
        assert_eq!(s.get("t_total", &["x"]), Some(&Sample::Int(5)));
        assert_eq!(s.get("t_total", &["y"]), Some(&Sample::Int(1)));
        assert_eq!(s.get("t_total", &["z"]), None);
    }
}
