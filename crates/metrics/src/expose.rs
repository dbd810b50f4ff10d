//! The `/metrics` page: everything the registry holds, summed over the cores, plus the
//! process-wide families, in the Prometheus text format (0.0.4) written by the
//! `prometheus-client` crate through its [`Collector`] trait.

use super::{Desc, Kind, Sample, Sink};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use std::sync::atomic::{AtomicU64, Ordering};

/// The `Content-Type` of the page.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

static PANICS: AtomicU64 = AtomicU64::new(0);

/// Counts a panic recovered by the server (`coredns_panics_total`). Rare, so a shared
/// atomic is fine here.
pub fn count_panic() {
    PANICS.fetch_add(1, Ordering::Relaxed);
}

static PANICS_DESC: Desc = Desc {
    name: "coredns_panics_total",
    help: "A metrics that counts the number of panics.",
    kind: Kind::Counter,
    labels: &[],
};

/// The process-wide families: panics and `process_*`. Build information is the server's,
/// which adds it as a [`crate::Source`].
fn process(out: &mut Sink) {
    super::process::collect(out);
    out.counter(&PANICS_DESC, &[], PANICS.load(Ordering::Relaxed));
}

/// What one scrape collected, handed to the encoder.
#[derive(Debug)]
struct Scrape(Sink);

/// The name without the suffix the encoder appends for the type.
fn base_name(d: &Desc) -> &'static str {
    match d.kind {
        Kind::Counter => d.name.strip_suffix("_total").unwrap_or(d.name),
        Kind::Info => d.name.strip_suffix("_info").unwrap_or(d.name),
        Kind::Gauge | Kind::Histogram => d.name,
    }
}

impl Collector for Scrape {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for fam in self.0.families() {
            if fam.series.is_empty() {
                continue;
            }
            let d = fam.desc;
            let ty = match d.kind {
                Kind::Counter => MetricType::Counter,
                Kind::Gauge => MetricType::Gauge,
                Kind::Histogram => MetricType::Histogram,
                Kind::Info => MetricType::Info,
            };
            let mut metric = encoder.encode_descriptor(base_name(d), d.help, None, ty)?;
            for (values, sample) in &fam.series {
                let labels: Vec<(&str, &str)> = d
                    .labels
                    .iter()
                    .copied()
                    .zip(values.iter().map(String::as_str))
                    .collect();
                let mut m = metric.encode_family(&labels)?;
                match (d.kind, sample) {
                    (Kind::Info, _) => {
                        let none: [(&str, &str); 0] = [];
                        m.encode_info(&none)?
                    }
                    (Kind::Counter, Sample::Int(v)) => {
                        m.encode_counter::<NoLabelSet, _, u64>(v, None)?
                    }
                    (Kind::Counter, Sample::Float(v)) => {
                        m.encode_counter::<NoLabelSet, _, f64>(v, None)?
                    }
                    (_, Sample::Int(v)) => m.encode_gauge(v)?,
                    // Whole values print as Go prints them (`2`, not `2.0`).
                    (_, Sample::Float(v)) if v.fract() == 0.0 && v.abs() < 9e15 => {
                        m.encode_gauge(&(*v as i64))?
                    }
                    (_, Sample::Float(v)) => m.encode_gauge(v)?,
                    (
                        _,
                        Sample::Histogram {
                            bounds,
                            buckets,
                            sum,
                        },
                    ) => {
                        let finite: Vec<(f64, u64)> = bounds
                            .iter()
                            .copied()
                            .zip(buckets.iter().copied())
                            .collect();
                        // The count is the sum of the buckets read, so +Inf agrees with it
                        // even if a core observed something between two reads.
                        let count = buckets.iter().sum();
                        m.encode_histogram::<NoLabelSet>(*sum, count, &finite, None)?
                    }
                }
            }
        }
        Ok(())
    }
}

/// Everything as one scrape sees it (the registry, its sources, the process families).
pub fn collect() -> Sink {
    let mut sink = super::registry::collect();
    process(&mut sink);
    sink
}

/// The text of `/metrics`.
pub fn render() -> String {
    let mut registry = prometheus_client::registry::Registry::default();
    registry.register_collector(Box::new(Scrape(collect())));
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &registry);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DURATION_BUCKETS, Histogram};

    static REQS: Desc = Desc {
        name: "test_expose_requests_total",
        help: "Counter of things.",
        kind: Kind::Counter,
        labels: &["server", "zone"],
    };
    static DUR: Desc = Desc {
        name: "test_expose_duration_seconds",
        help: "Histogram of things.",
        kind: Kind::Histogram,
        labels: &["server"],
    };
    static ENTRIES: Desc = Desc {
        name: "test_expose_entries",
        help: "Gauge of things.",
        kind: Kind::Gauge,
        labels: &[],
    };

    fn text(sink: Sink) -> String {
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(Scrape(sink)));
        let mut out = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut out, &registry).unwrap();
        out
    }

    #[test]
    fn families_are_written_in_the_text_format_with_their_full_names() {
        let mut s = Sink::default();
        s.counter(&REQS, &["dns://:53", "."], 3);
        s.counter(&REQS, &["dns://:53", "."], 4);
        let h = Histogram::new(DURATION_BUCKETS);
        h.observe(std::time::Duration::from_micros(300));
        h.observe(std::time::Duration::from_secs(20));
        s.histogram(&DUR, &["dns://:53"], &h);
        s.gauge(&ENTRIES, &[], 2.0);
        let t = text(s);
        assert!(
            t.contains("# TYPE test_expose_requests_total counter\n"),
            "{t}"
        );
        assert!(
            t.contains("test_expose_requests_total{server=\"dns://:53\",zone=\".\"} 7\n"),
            "{t}"
        );
        assert!(
            t.contains(
                "test_expose_duration_seconds_bucket{server=\"dns://:53\",le=\"0.00025\"} 0\n"
            ),
            "{t}"
        );
        assert!(
            t.contains(
                "test_expose_duration_seconds_bucket{server=\"dns://:53\",le=\"0.0005\"} 1\n"
            ),
            "{t}"
        );
        assert!(
            t.contains("test_expose_duration_seconds_bucket{server=\"dns://:53\",le=\"+Inf\"} 2\n"),
            "{t}"
        );
        assert!(
            t.contains("test_expose_duration_seconds_count{server=\"dns://:53\"} 2\n"),
            "{t}"
        );
        assert!(t.contains("test_expose_entries 2\n"), "{t}");
    }

    #[test]
    fn the_page_has_the_panic_counter() {
        let t = render();
        assert!(t.contains("coredns_panics_total "), "{t}");
    }
}
