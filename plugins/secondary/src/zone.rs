//! One secondary zone: its data, shared with every core and with the block's registry
//! (where *transfer* finds it), and the thread that keeps it current. The configuration
//! holds a [`SecondaryZone`]; its thread holds only the zone's [`Inner`] and the receiving
//! end of the wake-up channel, so dropping the last configuration that serves the zone
//! disconnects the channel and ends the thread.
//!
//! A reload keeps a zone that stays (same origin, same primaries): the new configuration
//! gets the same [`SecondaryZone`], data and thread, so it goes on serving what it had
//! instead of answering SERVFAIL until a new transfer.

use crate::refresh;
use ringdns_plugin::snapshot::Snapshot;
use ringdns_zone::registry::{Entry, Registry, SharedZone};
use std::net::{IpAddr, SocketAddr};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::{Arc, Mutex, Weak};

/// What the zone's thread and the configuration share.
pub struct Inner {
    /// The origin, lower-case wire form.
    pub origin: Box<[u8]>,
    /// The origin as text (normalised), for logs.
    pub name: String,
    /// The primaries, in the order they are tried.
    pub primaries: Vec<SocketAddr>,
    /// The zone; `None` until transferred and again once expired.
    pub data: Arc<SharedZone>,
    /// The registries of the blocks that serve the zone, told of every swap.
    registries: Mutex<Vec<Weak<Registry>>>,
}

impl Inner {
    /// Swaps in `zone` (`None`: expired), with the step from the version it replaces kept
    /// for IXFR, and tells the registries.
    pub fn store(&self, zone: Option<ringdns_zone::Zone>) {
        let live: Vec<Arc<Registry>> = {
            let mut regs = self.registries.lock().unwrap_or_else(|p| p.into_inner());
            regs.retain(|r| r.strong_count() > 0);
            regs.iter().filter_map(Weak::upgrade).collect()
        };
        // The history for IXFR, when a block's transfer is there to send it.
        let zone = match (zone, self.data.load().as_ref()) {
            (Some(new), Some(old)) if live.iter().any(|r| r.has_listeners()) => {
                Some(new.following(old))
            }
            (zone, _) => zone,
        };
        self.data.store(zone);
        // The transfer's records and the old version are freed on this thread.
        ringdns_plugin::memory::give_back();
        for r in live {
            r.changed(&self.origin);
        }
    }
}

/// A secondary zone as a configuration holds it.
pub struct SecondaryZone {
    /// The shared part.
    pub inner: Arc<Inner>,
    /// Wakes the thread for a serial check, with the NOTIFY's source (for its log line).
    /// Bounded to one: NOTIFYs that come while one waits are the same check.
    wake: SyncSender<IpAddr>,
}

/// The zones alive in the process, for a reload to find the ones it keeps.
static LIVE: Mutex<Vec<Weak<SecondaryZone>>> = Mutex::new(Vec::new());

impl SecondaryZone {
    /// The zone `name` (normalised; `origin` its lower-case wire form) from `primaries`,
    /// registered in `registry`: the running one when a configuration already serves it
    /// from the same primaries, else a new one, whose thread starts transferring it.
    pub fn get_or_start(
        name: &str,
        origin: Box<[u8]>,
        primaries: Vec<SocketAddr>,
        registry: &Arc<Registry>,
    ) -> std::io::Result<Arc<SecondaryZone>> {
        let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        live.retain(|z| z.strong_count() > 0);
        let found = live
            .iter()
            .filter_map(Weak::upgrade)
            .find(|z| z.inner.origin == origin && z.inner.primaries == primaries);
        let zone = match found {
            Some(z) => z,
            None => {
                let inner = Arc::new(Inner {
                    origin,
                    name: name.to_string(),
                    primaries,
                    data: Arc::new(Snapshot::new(None)),
                    registries: Mutex::new(Vec::new()),
                });
                let wake = refresh::start(inner.clone())?;
                let z = Arc::new(SecondaryZone { inner, wake });
                live.push(Arc::downgrade(&z));
                z
            }
        };
        drop(live);
        registry.add(Entry {
            origin: zone.inner.origin.clone(),
            name: zone.inner.name.clone(),
            data: zone.inner.data.clone(),
        });
        zone.inner
            .registries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::downgrade(registry));
        Ok(zone)
    }

    /// Whether `ip` is one of the zone's primaries: the only hosts whose NOTIFY is taken
    /// (RFC 1996 §3.10).
    pub fn is_primary(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.inner
            .primaries
            .iter()
            .any(|p| p.ip().to_canonical() == ip)
    }

    /// Asks the thread for a serial check now (a NOTIFY from `from`). Never blocks and
    /// never allocates: one `try_send` on a channel of one; a full channel is a check
    /// already asked for.
    pub fn wake(&self, from: IpAddr) {
        match self.wake.try_send(from) {
            Ok(()) | Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {}
        }
    }
}
