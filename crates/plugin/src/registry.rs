//! What one plugin of a server block offers the others, by the offering plugin's directive
//! name: the kubernetes plugin's search paths for `autopath @kubernetes`
//! ([`AutoPathers`](crate::autopath::AutoPathers)), its external names for k8s_external
//! ([`Externalers`](crate::external::Externalers)). The offering plugin registers in the
//! block's registry (`BlockSetup::block_shared`) at setup; the plugin that uses it, set up
//! before it (plugin.cfg order), looks it up when it builds its per-core instance. The lock
//! is taken at setup and build only, never on the query path.

use std::sync::{Arc, Mutex};

/// A block's offers of one kind (`T`, a trait object), by directive name.
pub struct Registry<T: ?Sized> {
    list: Mutex<Vec<(&'static str, Arc<T>)>>,
}

impl<T: ?Sized> Default for Registry<T> {
    fn default() -> Self {
        Registry {
            list: Mutex::new(Vec::new()),
        }
    }
}

impl<T: ?Sized> Registry<T> {
    /// Registers `plugin`'s offer (a later registration of the same name wins).
    pub fn register(&self, plugin: &'static str, offer: Arc<T>) {
        let mut l = self.list.lock().unwrap_or_else(|e| e.into_inner());
        l.retain(|(n, _)| *n != plugin);
        l.push((plugin, offer));
    }

    /// What `plugin` registered, when it did.
    pub fn get(&self, plugin: &str) -> Option<Arc<T>> {
        let l = self.list.lock().unwrap_or_else(|e| e.into_inner());
        l.iter().find(|(n, _)| *n == plugin).map(|(_, p)| p.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    trait Named: Send + Sync {
        fn name(&self) -> &str;
    }

    struct Fixed(&'static str);

    impl Named for Fixed {
        fn name(&self) -> &str {
            self.0
        }
    }

    #[test]
    fn offers_are_found_by_name_and_a_later_one_wins() {
        let r: Registry<dyn Named> = Registry::default();
        assert!(r.get("kubernetes").is_none());
        r.register("kubernetes", Arc::new(Fixed("first")));
        r.register("other", Arc::new(Fixed("other")));
        r.register("kubernetes", Arc::new(Fixed("second")));
        assert_eq!(
            r.get("kubernetes").map(|p| p.name().to_string()).as_deref(),
            Some("second")
        );
        assert_eq!(
            r.get("other").map(|p| p.name().to_string()).as_deref(),
            Some("other")
        );
        assert!(r.get("nope").is_none());
    }
}
