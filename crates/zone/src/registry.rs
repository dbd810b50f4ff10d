//! The zones a server block serves from data (file, auto, secondary), for the block's other
//! plugins that need them: transfer walks them for AXFR/IXFR and sends NOTIFY when one
//! changes. One per block (`BlockSetup::block_shared`); filled in setup, read on the
//! uncommon paths (a transfer, a change), never on a plain query.

use crate::zone::Zone;
use ringdns_plugin::snapshot::Snapshot;
use std::sync::{Arc, Mutex};

/// A zone as its loading plugin shares it: `None` until first loaded (or, for a secondary,
/// transferred; again `None` once expired).
pub type SharedZone = Snapshot<Option<Zone>>;

/// Called with a zone's origin (lower-case wire form) when its data changed.
pub type ChangeHook = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// One registered zone.
#[derive(Clone)]
pub struct Entry {
    /// The origin, lower-case wire form.
    pub origin: Box<[u8]>,
    /// The origin as text, for logs.
    pub name: String,
    /// The data.
    pub data: Arc<SharedZone>,
}

#[derive(Default)]
struct Inner {
    zones: Vec<Entry>,
    hooks: Vec<ChangeHook>,
}

/// A block's zones and who wants to hear of their changes.
#[derive(Default)]
pub struct Registry {
    inner: Mutex<Inner>,
}

impl Registry {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a zone (the loading plugin's setup). Kept longest origin first, as
    /// [`crate::pick::zone_for`] wants them.
    pub fn add(&self, entry: Entry) {
        let mut inner = self.inner();
        let at = inner
            .zones
            .partition_point(|z| z.origin.len() >= entry.origin.len());
        inner.zones.insert(at, entry);
    }

    /// Removes one zone's entry (auto, when its file goes or moves), found by its data:
    /// another plugin's zone of the same origin stays.
    pub fn remove(&self, data: &Arc<SharedZone>) {
        self.inner().zones.retain(|z| !Arc::ptr_eq(&z.data, data));
    }

    /// Whether a plugin listens for changes (transfer): if none does, a zone's history
    /// for IXFR is not worth keeping.
    pub fn has_listeners(&self) -> bool {
        !self.inner().hooks.is_empty()
    }

    /// The registered zone that answers `name` (wire form) of type `qtype`: the most
    /// specific that holds it, the parent's for the DS of an apex ([`crate::pick`]).
    pub fn find(&self, name: &[u8], qtype: u16) -> Option<Entry> {
        let name = ringdns_wire::Name::from_wire(name).ok()?;
        let inner = self.inner();
        crate::pick::zone_for(&inner.zones, |z| &z.origin, &name, qtype).cloned()
    }

    /// The zone with exactly this origin.
    pub fn get(&self, origin: &[u8]) -> Option<Entry> {
        self.inner()
            .zones
            .iter()
            .find(|z| *z.origin == *origin)
            .cloned()
    }

    /// Every registered zone.
    pub fn all(&self) -> Vec<Entry> {
        self.inner().zones.clone()
    }

    /// Asks to be told of changes (transfer's NOTIFY).
    pub fn on_change(&self, hook: ChangeHook) {
        self.inner().hooks.push(hook);
    }

    /// Tells the hooks that the zone `origin` changed (the loading plugin, after a swap).
    pub fn changed(&self, origin: &[u8]) {
        let hooks = self.inner().hooks.clone();
        for h in hooks {
            h(origin);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ringdns_wire::rtype::{A, DS};
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn entry(name: &str) -> Entry {
        Entry {
            origin: ringdns_wire::name_to_wire(name).unwrap().into_boxed_slice(),
            name: name.into(),
            data: Arc::new(Snapshot::new(None)),
        }
    }

    #[test]
    fn the_most_specific_zone_holds_a_name_and_hooks_hear_of_changes() {
        let r = Registry::default();
        r.add(entry("example.org."));
        r.add(entry("sub.example.org."));
        r.add(entry("org."));
        let n = ringdns_wire::name_to_wire("a.sub.example.org.").unwrap();
        assert_eq!(r.find(&n, A).unwrap().name, "sub.example.org.");
        let n = ringdns_wire::name_to_wire("sub.example.org.").unwrap();
        assert_eq!(r.find(&n, A).unwrap().name, "sub.example.org.");
        assert_eq!(
            r.find(&n, DS).unwrap().name,
            "example.org.",
            "the parent's DS"
        );
        let n = ringdns_wire::name_to_wire("a.example.com.").unwrap();
        assert!(r.find(&n, A).is_none());
        let heard = Arc::new(AtomicUsize::new(0));
        let h = heard.clone();
        r.on_change(Arc::new(move |_| {
            h.fetch_add(1, Ordering::Relaxed);
        }));
        r.changed(b"\0");
        assert_eq!(heard.load(Ordering::Relaxed), 1);
        let twin = entry("example.org.");
        r.add(twin.clone());
        let sub = r
            .get(&ringdns_wire::name_to_wire("sub.example.org.").unwrap())
            .unwrap();
        r.remove(&sub.data);
        r.remove(&twin.data);
        assert_eq!(r.all().len(), 2, "the first example.org. stays");
        assert!(r.has_listeners());
    }
}
