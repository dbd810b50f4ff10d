//! The process-wide registry of per-core counters.
//!
//! Plugins and the runtime ask it for their counters when an instance is built on a core
//! ([`cell`]), keyed by the counter type, the label values and the core. The same key always
//! gives the same counters back, so an instance rebuilt by a reload (same block, same core)
//! carries on counting where the old one was instead of starting from zero; and since the
//! key includes the core, every writer of a cell still runs on that one core's thread.
//!
//! The Mutex is taken only when an instance is built and when `/metrics` is scraped: the
//! query path holds `Arc`s to plain per-core counters and never sees it.
//!
//! Families that are not per-core counters (reload's, for instance) come from a [`Source`]
//! registered with [`add_source`].

use super::Sink;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, Weak};

/// Per-core counters that know how to add themselves to a scrape.
pub trait Export: Send + Sync + 'static {
    /// Adds this core's values to `out`; `labels` are the values the cell was created with.
    fn export(&self, labels: &[String], core: usize, out: &mut Sink);
}

/// Anything else that contributes families at scrape time: process-wide state that is not
/// counted per core (the hook for reload's `coredns_reload_*` families).
pub trait Source: Send + Sync + 'static {
    /// Adds this source's series to `out`.
    fn collect(&self, out: &mut Sink);
}

struct Cell {
    labels: Vec<String>,
    core: usize,
    any: Arc<dyn Any + Send + Sync>,
    export: Arc<dyn Export>,
}

#[derive(Default)]
struct Registry {
    cells: HashMap<(TypeId, Vec<String>, usize), Cell>,
    /// Named sources; the same name replaces the previous one.
    sources: Vec<(String, Arc<dyn Source>)>,
    /// Sources that live as long as something else holds them (a configuration).
    weak: Vec<Weak<dyn Source>>,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(Mutex::default);

fn lock() -> MutexGuard<'static, Registry> {
    // A panic while holding it cannot leave the maps half-updated in a harmful way.
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// This core's `T` for these label values: the existing one if an instance with the same
/// key was built before (counting goes on across reloads), else a new `T::default()`.
pub fn cell<T: Export + Default>(labels: &[&str], core: usize) -> Arc<T> {
    cell_with(labels, core, T::default)
}

/// Like [`cell`], making a new one with `make`.
pub fn cell_with<T: Export>(labels: &[&str], core: usize, make: impl FnOnce() -> T) -> Arc<T> {
    let key = (
        TypeId::of::<T>(),
        labels.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        core,
    );
    let mut r = lock();
    if let Some(c) = r.cells.get(&key)
        && let Ok(t) = c.any.clone().downcast::<T>()
    {
        return t;
    }
    let t = Arc::new(make());
    r.cells.insert(
        key.clone(),
        Cell {
            labels: key.1,
            core,
            any: t.clone(),
            export: t.clone(),
        },
    );
    t
}

/// Registers (or replaces) the source called `name`; it is collected at every scrape for
/// the life of the process, or until [`remove_source`].
pub fn add_source(name: &str, source: Arc<dyn Source>) {
    let mut r = lock();
    r.sources.retain(|(n, _)| n != name);
    r.sources.push((name.to_string(), source));
}

/// Removes the source called `name`.
pub fn remove_source(name: &str) {
    lock().sources.retain(|(n, _)| n != name);
}

/// Registers a source collected for as long as someone else keeps it alive (a
/// configuration's state: when a reload drops the old configuration, its series go).
pub fn add_weak_source(source: Weak<dyn Source>) {
    lock().weak.push(source);
}

/// Sums everything registered into a new [`Sink`]. Only the list of cells is copied under
/// the lock; the counters are read after it is released.
pub fn collect() -> Sink {
    let (cells, sources) = {
        let mut r = lock();
        r.weak.retain(|w| w.strong_count() > 0);
        let cells: Vec<(Vec<String>, usize, Arc<dyn Export>)> = r
            .cells
            .values()
            .map(|c| (c.labels.clone(), c.core, c.export.clone()))
            .collect();
        let mut sources: Vec<Arc<dyn Source>> = r.sources.iter().map(|(_, s)| s.clone()).collect();
        sources.extend(r.weak.iter().filter_map(Weak::upgrade));
        (cells, sources)
    };
    let mut out = Sink::default();
    for (labels, core, e) in cells {
        e.export(&labels, core, &mut out);
    }
    for s in sources {
        s.collect(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Counter, Desc, Kind, Sample};

    static HITS: Desc = Desc {
        name: "test_registry_hits_total",
        help: "test",
        kind: Kind::Counter,
        labels: &["zone", "core"],
    };

    #[derive(Default)]
    struct Hits(Counter);

    impl Export for Hits {
        fn export(&self, labels: &[String], core: usize, out: &mut Sink) {
            out.counter(&HITS, &[&labels[0], &core.to_string()], self.0.get());
        }
    }

    /// A plugin instance as a reload rebuilds it: it takes its counters at build time.
    struct Instance {
        hits: Arc<Hits>,
    }

    impl Instance {
        fn build(zone: &str, core: usize) -> Self {
            Instance {
                hits: cell(&[zone], core),
            }
        }
    }

    #[test]
    fn a_rebuilt_instance_counts_on_from_where_the_old_one_was() {
        let old = Instance::build("survives.test.", 0);
        old.hits.0.add(5);
        drop(old);
        let new = Instance::build("survives.test.", 0);
        new.hits.0.add(2);
        let other_core = Instance::build("survives.test.", 1);
        other_core.hits.0.inc();
        let s = collect();
        assert_eq!(
            s.get("test_registry_hits_total", &["survives.test.", "0"]),
            Some(&Sample::Int(7))
        );
        assert_eq!(
            s.get("test_registry_hits_total", &["survives.test.", "1"]),
            Some(&Sample::Int(1)),
            "each core has its own cell"
        );
        // Other label values are other counters.
        let fresh = Instance::build("other.test.", 0);
        assert_eq!(fresh.hits.0.get(), 0);
    }

    static INFO: Desc = Desc {
        name: "test_registry_version_info",
        help: "test",
        kind: Kind::Info,
        labels: &["value"],
    };

    struct Version(&'static str);

    impl Source for Version {
        fn collect(&self, out: &mut Sink) {
            out.gauge(&INFO, &[self.0], 1.0);
        }
    }

    #[test]
    fn named_sources_replace_and_weak_sources_die_with_their_owner() {
        add_source("test-version", Arc::new(Version("a")));
        add_source("test-version", Arc::new(Version("b")));
        let s = collect();
        assert!(s.get("test_registry_version_info", &["a"]).is_none());
        assert!(s.get("test_registry_version_info", &["b"]).is_some());
        remove_source("test-version");

        let owned: Arc<dyn Source> = Arc::new(Version("weak"));
        add_weak_source(Arc::downgrade(&owned));
        assert!(
            collect()
                .get("test_registry_version_info", &["weak"])
                .is_some()
        );
        drop(owned);
        assert!(
            collect()
                .get("test_registry_version_info", &["weak"])
                .is_none()
        );
    }
}
