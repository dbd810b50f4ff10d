//! `coredns_build_info{version, revision, goversion}`: which build is running, for the
//! dashboards' version panels. The version is the package's, the revision and the compiler
//! are what build.rs recorded.

use ringdns_metrics::{Desc, Kind, Sample, Sink, Source};

static BUILD_INFO: Desc = Desc {
    name: "coredns_build_info",
    help: "A metric with a constant '1' value labeled by version, revision, and goversion from which CoreDNS was built.",
    kind: Kind::Info,
    labels: &["version", "revision", "goversion"],
};

/// The family's source, added to the registry once at startup.
pub struct BuildInfo;

impl Source for BuildInfo {
    fn collect(&self, out: &mut Sink) {
        out.add(
            &BUILD_INFO,
            &[
                crate::VERSION,
                option_env!("RINGDNS_REVISION").unwrap_or(""),
                option_env!("RINGDNS_RUSTC").unwrap_or(""),
            ],
            Sample::Int(1),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_build_info() {
        ringdns_metrics::registry::add_source("build_info", std::sync::Arc::new(BuildInfo));
        let t = ringdns_metrics::expose::render();
        assert!(t.contains("# TYPE coredns_build_info gauge\n"), "{t}");
        let version = format!("coredns_build_info{{version=\"{}\",", crate::VERSION);
        assert!(t.contains(&version), "{t}");
    }
}
