//! State that the setups of one configuration share across its server blocks, as CoreDNS's
//! plugins keep package-level state for what is process-wide (ready's one monitor mode,
//! health's lameduck): a plugin asks its block for the value of a type of its own and gets
//! the same one in every block of that configuration.
//!
//! Each load of the Corefile (start-up, every reload) starts with an empty one, so nothing
//! carries from one configuration to the next, and the state of a reload that fails is
//! dropped with it. Used in setup and by what setup hands on (HTTP handlers, shutdown
//! hooks), never on the query path.

use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex};

/// A shared value, under the id of its type.
type Entry = (TypeId, Arc<dyn Any + Send + Sync>);

/// One configuration's shared values: at most one per type, made by the first setup that
/// asks for it. Cloning gives another handle to the same values.
#[derive(Clone, Default)]
pub struct ConfigShared(Arc<Mutex<Vec<Entry>>>);

impl ConfigShared {
    /// The configuration's value of type `T`, made with `T::default()` the first time.
    pub fn get<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let id = TypeId::of::<T>();
        if let Some(v) = all.iter().find(|(t, _)| *t == id).map(|(_, v)| v.clone()) {
            // Stored under T's own TypeId, so it is a T.
            if let Ok(v) = v.downcast::<T>() {
                return v;
            }
        }
        let v = Arc::new(T::default());
        all.push((id, v.clone()));
        v
    }
}

impl std::fmt::Debug for ConfigShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map(|v| v.len()).unwrap_or(0);
        write!(f, "ConfigShared({n} values)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[derive(Default)]
    struct Count(AtomicU32);

    #[derive(Default)]
    struct Other(AtomicU32);

    #[test]
    fn one_value_per_type_for_every_handle_of_a_configuration() {
        let a = ConfigShared::default();
        let b = a.clone();
        a.get::<Count>().0.fetch_add(1, Ordering::Relaxed);
        b.get::<Count>().0.fetch_add(1, Ordering::Relaxed);
        assert_eq!(a.get::<Count>().0.load(Ordering::Relaxed), 2);
        assert_eq!(b.get::<Other>().0.load(Ordering::Relaxed), 0);
        // The next configuration starts over.
        let next = ConfigShared::default();
        assert_eq!(next.get::<Count>().0.load(Ordering::Relaxed), 0);
    }
}
