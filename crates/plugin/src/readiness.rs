//! Readiness of plugins, as CoreDNS's `ready` plugin polls it: a plugin that needs time
//! before it can answer (CoreDNS's kubernetes waits for its caches) implements [`Readiness`];
//! a configuration gathers the handles of the blocks that enable `ready` into a [`Watch`],
//! which the `/ready` endpoint asks at each request, off the query path.
//!
//! The handles are `Weak`: they die with the configuration that made them, so a watch never
//! keeps a replaced configuration alive and a dead handle is simply skipped.

use std::sync::{Mutex, Weak};

/// A plugin that can tell whether it is ready to serve (CoreDNS's `ready.Readiness`).
/// Called from the HTTP thread, so it must be cheap and must not block.
pub trait Readiness: Send + Sync {
    /// The plugin's name as `/ready` lists it when not ready.
    fn name(&self) -> &'static str;
    /// True when the plugin is ready.
    fn ready(&self) -> bool;
}

/// `ready { monitor … }`: whether a plugin that reported ready is asked again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Monitor {
    /// `until-ready` (default): once ready, a plugin counts as ready for good and is not
    /// asked again.
    #[default]
    UntilReady,
    /// `continuously`: every plugin is asked at every request.
    Continuously,
}

impl Monitor {
    /// Parses the `monitor` argument; `None` for a value CoreDNS does not know.
    pub fn parse(s: &str) -> Option<Monitor> {
        match s {
            "until-ready" => Some(Monitor::UntilReady),
            "continuously" => Some(Monitor::Continuously),
            _ => None,
        }
    }
}

/// The plugins one configuration's `/ready` waits for, and how it asks them.
#[derive(Default)]
pub struct Watch {
    monitor: Monitor,
    /// `None` once a plugin reported ready under `until-ready`. Locked only by the HTTP
    /// threads that answer `/ready`.
    plugins: Mutex<Vec<Option<Weak<dyn Readiness>>>>,
}

impl Watch {
    /// A watch over `plugins`, asked as `monitor` says.
    pub fn new(monitor: Monitor, plugins: Vec<Weak<dyn Readiness>>) -> Self {
        Watch {
            monitor,
            plugins: Mutex::new(plugins.into_iter().map(Some).collect()),
        }
    }

    /// How the plugins are asked.
    pub fn monitor(&self) -> Monitor {
        self.monitor
    }

    /// How many plugin handles the watch holds (for tests and logs).
    pub fn len(&self) -> usize {
        self.plugins.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether the watch holds no handle at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Asks the plugins and returns the names of those not ready, sorted and each once (as
    /// CoreDNS, which keys its list by name); empty when all are ready.
    pub fn not_ready(&self) -> Vec<&'static str> {
        let mut plugins = self.plugins.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        for slot in plugins.iter_mut() {
            let Some(p) = slot.as_ref().and_then(Weak::upgrade) else {
                // Reported ready before (until-ready), or its configuration is gone.
                *slot = None;
                continue;
            };
            if p.ready() {
                if self.monitor == Monitor::UntilReady {
                    *slot = None;
                }
            } else {
                out.push(p.name());
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    struct Flag(&'static str, AtomicBool);

    impl Readiness for Flag {
        fn name(&self) -> &'static str {
            self.0
        }
        fn ready(&self) -> bool {
            self.1.load(Ordering::Relaxed)
        }
    }

    fn flag(name: &'static str) -> Arc<Flag> {
        Arc::new(Flag(name, AtomicBool::new(false)))
    }

    fn weak(f: &Arc<Flag>) -> Weak<dyn Readiness> {
        Arc::downgrade(f) as Weak<dyn Readiness>
    }

    #[test]
    fn names_are_sorted_and_unique() {
        let (z, a1, a2) = (flag("zeta"), flag("alpha"), flag("alpha"));
        let w = Watch::new(Monitor::UntilReady, vec![weak(&z), weak(&a1), weak(&a2)]);
        assert_eq!(w.not_ready(), vec!["alpha", "zeta"]);
        a1.1.store(true, Ordering::Relaxed);
        assert_eq!(
            w.not_ready(),
            vec!["alpha", "zeta"],
            "one alpha still waits"
        );
        a2.1.store(true, Ordering::Relaxed);
        z.1.store(true, Ordering::Relaxed);
        assert!(w.not_ready().is_empty());
    }

    #[test]
    fn until_ready_stops_asking_and_continuously_does_not() {
        for (monitor, after) in [
            (Monitor::UntilReady, vec![]),
            (Monitor::Continuously, vec!["p"]),
        ] {
            let p = flag("p");
            let w = Watch::new(monitor, vec![weak(&p)]);
            assert_eq!(w.not_ready(), vec!["p"]);
            p.1.store(true, Ordering::Relaxed);
            assert!(w.not_ready().is_empty());
            p.1.store(false, Ordering::Relaxed);
            assert_eq!(w.not_ready(), after, "{monitor:?}");
        }
    }

    #[test]
    fn a_dropped_plugin_is_not_waited_for() {
        let p = flag("p");
        let w = Watch::new(Monitor::Continuously, vec![weak(&p)]);
        assert_eq!(w.not_ready(), vec!["p"]);
        drop(p);
        assert!(w.not_ready().is_empty());
        assert_eq!(Monitor::parse("until-ready"), Some(Monitor::UntilReady));
        assert_eq!(Monitor::parse("continuously"), Some(Monitor::Continuously));
        assert_eq!(Monitor::parse("404"), None);
    }
}
