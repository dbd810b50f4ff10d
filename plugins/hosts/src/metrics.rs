//! CoreDNS's two hosts families (`plugin/hosts/metrics.go`):
//!
//! - `coredns_hosts_entries{hostsfile}`: the entries served, per hosts file;
//! - `coredns_hosts_reload_timestamp_seconds`: the modification time of the last hosts
//!   file read (CoreDNS's gauge is process-wide and unlabelled, set at each read).
//!
//! Neither is counted per core: both are read from the live configurations at scrape time,
//! by one named source. Each `hosts` directive registers its state weakly, so a reload that
//! drops it drops its series; the same file in two blocks (or in the old and the new
//! configuration during a reload) is one series, the one registered last, as CoreDNS's
//! vector keeps the last value set.

use crate::Inner;
use ringdns_plugin::metrics::{Desc, Kind, Sink, Source, registry};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, Weak};
use std::time::SystemTime;

static ENTRIES: Desc = Desc {
    name: "coredns_hosts_entries",
    help: "The combined number of entries in hosts and Corefile.",
    kind: Kind::Gauge,
    labels: &["hostsfile"],
};

static RELOAD_TIMESTAMP: Desc = Desc {
    name: "coredns_hosts_reload_timestamp_seconds",
    help: "The timestamp of the last reload of hosts file.",
    kind: Kind::Gauge,
    labels: &[],
};

/// Every `hosts` directive's state, as set up (oldest first); dead ones are pruned at
/// scrape time. Off the query path: taken by setup and by a scrape.
static LIVE: Mutex<Vec<Weak<Inner>>> = Mutex::new(Vec::new());

/// The last read file's modification time, in seconds since the epoch (`f64` bits).
static LAST_READ: AtomicU64 = AtomicU64::new(0);

static REGISTER: Once = Once::new();

/// Adds a directive's state to the scrape (and forgets the dead ones, so that reloads
/// without scrapes do not pile them up).
pub fn register(inner: &Arc<Inner>) {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    live.retain(|w| w.strong_count() > 0);
    live.push(Arc::downgrade(inner));
    drop(live);
    REGISTER.call_once(|| registry::add_source("hosts", Arc::new(HostsSource)));
}

/// Notes a hosts file read: the reload timestamp is its modification time.
pub fn read_at(mtime: SystemTime) {
    let secs = mtime
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    LAST_READ.store(secs.to_bits(), Ordering::Relaxed);
}

struct HostsSource;

impl Source for HostsSource {
    fn collect(&self, out: &mut Sink) {
        let live: Vec<Arc<Inner>> = {
            let mut l = LIVE.lock().unwrap_or_else(|e| e.into_inner());
            l.retain(|w| w.strong_count() > 0);
            l.iter().filter_map(Weak::upgrade).collect()
        };
        if live.is_empty() {
            return;
        }
        let mut seen = HashSet::new();
        for inner in live.iter().rev() {
            if seen.insert(inner.label.as_str()) {
                let entries = inner.data.load().entries();
                out.gauge(&ENTRIES, &[&inner.label], entries as f64);
            }
        }
        let ts = f64::from_bits(LAST_READ.load(Ordering::Relaxed));
        out.gauge(&RELOAD_TIMESTAMP, &[], ts);
    }
}
