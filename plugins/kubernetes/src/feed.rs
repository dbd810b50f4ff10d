//! From the API to the table: one reflector thread per watched kind (ringdns-kubeclient:
//! list, then watch, relist after 410 Gone, backoff) sends the objects to one builder thread,
//! which applies them to its [`Store`] and publishes a new [`ClusterData`] when a burst of
//! events is over (the channel idle for 10 ms, or 100 ms after the first change), so a
//! rollout of many endpoints costs a few builds, and an update is served well within a
//! second. The threads end when the configuration that started them is dropped.

use crate::data::ClusterData;
use crate::external::Views;
use crate::metrics;
use crate::setup::{Options, PodMode, Source};
use crate::store::{Change, Kind, Store};
use ringdns_kubeclient::{ApiConfig, Event, Limits, TlsFiles, Watch, spawn_reflector};
use ringdns_plugin::snapshot::Snapshot;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// A publish waits for the events to pause this long...
const IDLE: Duration = Duration::from_millis(10);
/// ...but no longer than this after the first change.
const MAX_DELAY: Duration = Duration::from_millis(100);

/// The running feed of one `kubernetes` directive.
pub struct Feed {
    stop: Arc<AtomicBool>,
    synced: Arc<(Mutex<bool>, Condvar)>,
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The label selector a kind is listed with.
fn watches(o: &Options) -> Vec<(Kind, Watch)> {
    let mut w = vec![
        (
            Kind::Services,
            Watch {
                tag: Kind::Services as u8,
                path: "/api/v1/services",
                label_selector: o.labels.clone(),
                field_selector: None,
            },
        ),
        (
            Kind::Namespaces,
            Watch {
                tag: Kind::Namespaces as u8,
                path: "/api/v1/namespaces",
                label_selector: o.namespace_labels.clone(),
                field_selector: None,
            },
        ),
    ];
    if !o.noendpoints {
        w.push((
            Kind::Slices,
            Watch {
                tag: Kind::Slices as u8,
                path: "/apis/discovery.k8s.io/v1/endpointslices",
                label_selector: o.labels.clone(),
                field_selector: None,
            },
        ));
    }
    if o.pods == PodMode::Verified {
        w.push((
            Kind::Pods,
            Watch {
                tag: Kind::Pods as u8,
                path: "/api/v1/pods",
                label_selector: o.labels.clone(),
                // CoreDNS's pod informer: pods that can still have an address.
                field_selector: Some(
                    "status.phase!=Succeeded,status.phase!=Failed,status.phase!=Unknown".into(),
                ),
            },
        ));
    }
    w
}

/// The API configuration the options name (CoreDNS's `getClientConfig`).
fn api_config(o: &Options) -> Result<ApiConfig, String> {
    let config = match &o.source {
        Source::Kubeconfig { path, context } => {
            ApiConfig::from_kubeconfig(path, context.as_deref())?
        }
        Source::Endpoint { url, tls } => {
            let files = tls
                .as_ref()
                .map(|[cert, key, ca]| TlsFiles { cert, key, ca });
            ApiConfig::from_endpoint(url, files)?
        }
        Source::InCluster => ApiConfig::in_cluster()?,
    };
    Ok(config.with_limits(Limits {
        qps: (o.qps > 0.0).then_some(f64::from(o.qps)),
        burst: (o.burst > 0).then_some(o.burst),
        max_inflight: (o.max_inflight > 0).then_some(o.max_inflight),
    }))
}

impl Feed {
    /// Starts the reflectors and the builder, which publishes into `data`.
    pub fn start(
        o: &Options,
        data: &Arc<Snapshot<ClusterData>>,
        local: Vec<IpAddr>,
    ) -> Result<Feed, String> {
        if o.tls_alone {
            ringdns_plugin::warning!(
                "plugin/kubernetes: tls is used only with endpoint; the in-cluster configuration is used"
            );
        }
        metrics::register();
        let config = Arc::new(api_config(o)?);
        let stop = Arc::new(AtomicBool::new(false));
        let synced = Arc::new((Mutex::new(false), Condvar::new()));
        let (tx, rx) = mpsc::channel();
        let watches = watches(o);
        let kinds: Vec<Kind> = watches.iter().map(|(k, _)| *k).collect();
        for (_, w) in watches {
            spawn_reflector(config.clone(), w, tx.clone(), stop.clone())
                .map_err(|e| format!("cannot start a watch thread: {e}"))?;
        }
        drop(tx);
        let builder = Builder {
            store: Store::default(),
            options: o.clone(),
            local,
            kinds,
            data: data.clone(),
            serial: 0,
            external: None,
            synced: synced.clone(),
            stop: stop.clone(),
        };
        std::thread::Builder::new()
            .name("ringdns-k8s-build".into())
            .spawn(move || builder.run(rx))
            .map_err(|e| format!("cannot start the builder thread: {e}"))?;
        Ok(Feed { stop, synced })
    }

    /// Waits until every kind is listed, or `timeout`, logging as CoreDNS does while it
    /// waits (the server starts serving after this, as CoreDNS's OnStartup).
    pub fn wait_for_sync(&self, timeout: Duration) {
        let (lock, cv) = &*self.synced;
        let deadline = Instant::now() + timeout;
        let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut next_log = Instant::now() + Duration::from_millis(500);
        while !*done {
            let now = Instant::now();
            if now >= deadline {
                ringdns_plugin::warning!(
                    "plugin/kubernetes: starting server with unsynced Kubernetes API"
                );
                return;
            }
            if now >= next_log {
                ringdns_plugin::info!(
                    "plugin/kubernetes: waiting for Kubernetes API before starting server"
                );
                next_log += Duration::from_millis(500);
            }
            let wait = deadline.min(next_log) - now;
            done = cv
                .wait_timeout(done, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// The builder thread's state.
struct Builder {
    store: Store,
    options: Options,
    local: Vec<IpAddr>,
    kinds: Vec<Kind>,
    data: Arc<Snapshot<ClusterData>>,
    serial: u32,
    /// What k8s_external could answer from the last table, and that table's serials.
    external: Option<(Views, [u32; 2])>,
    synced: Arc<(Mutex<bool>, Condvar)>,
    stop: Arc<AtomicBool>,
}

impl Builder {
    fn run(mut self, rx: mpsc::Receiver<(u8, Event)>) {
        let mut dirty_since: Option<Instant> = None;
        while !self.stop.load(Ordering::Relaxed) {
            let wait = match dirty_since {
                Some(t) => IDLE.min(MAX_DELAY.saturating_sub(t.elapsed())),
                None => Duration::from_millis(500),
            };
            match rx.recv_timeout(wait) {
                Ok((tag, event)) => {
                    if self.apply(tag, event) && dirty_since.is_none() {
                        dirty_since = Some(Instant::now());
                    }
                    if dirty_since.is_some_and(|t| t.elapsed() >= MAX_DELAY) {
                        self.publish();
                        dirty_since = None;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    if dirty_since.take().is_some() {
                        self.publish();
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    /// Applies one event; whether it changed anything.
    fn apply(&mut self, tag: u8, event: Event) -> bool {
        let Some(kind) = Kind::of_tag(tag) else {
            return false;
        };
        let result = match &event {
            Event::Replace(items) => {
                let texts: Vec<&str> = items.iter().map(|r| r.get()).collect();
                self.store.apply(kind, Change::Replace(&texts))
            }
            Event::Added(o) | Event::Modified(o) => self.store.apply(kind, Change::Upsert(o.get())),
            Event::Deleted(o) => self.store.apply(kind, Change::Delete(o.get())),
        };
        match result {
            Ok(changed) => changed,
            Err(e) => {
                ringdns_plugin::warning!(
                    "plugin/kubernetes: cannot decode a {kind:?} object: {}",
                    e.0
                );
                false
            }
        }
    }

    fn publish(&mut self) {
        let now = SystemTime::now();
        let secs = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as u32);
        if self.store.answers_changed || self.serial == 0 {
            self.serial = secs;
            self.store.answers_changed = false;
        }
        let synced = self.store.synced(&self.kinds);
        let mut table =
            ClusterData::build(&self.store, &self.options, &self.local, self.serial, synced);
        // k8s_external's serial moves only when what it answers changed
        // (CoreDNS's `Modified(ModifiedExternal)`).
        let views = Views::of(&self.store, &self.options, &table.external);
        let (prev, serial) = match &self.external {
            Some((v, s)) => (Some(v), *s),
            None => (None, [0, 0]),
        };
        table.external.serial = views.serials(prev, serial, secs);
        self.external = Some((views, table.external.serial));
        self.data.store(table);
        metrics::programmed(&std::mem::take(&mut self.store.programmed), now);
        if synced {
            let (lock, cv) = &*self.synced;
            let mut s = lock.lock().unwrap_or_else(|e| e.into_inner());
            if !*s {
                *s = true;
                cv.notify_all();
            }
        }
    }
}

/// The server's own addresses as CoreDNS's `boundIPs` finds them: the block's `bind`
/// addresses, else every interface's, loopback excluded. (CoreDNS parses `bind` addresses
/// as CIDRs and so finds none; ringdns takes them as written.)
pub fn local_ips(bind: &[IpAddr]) -> Vec<IpAddr> {
    let all: Vec<IpAddr> = if bind.is_empty() {
        ringdns_plugin::interfaces::rows()
            .map(|rows| rows.into_iter().filter_map(|r| r.addr).collect())
            .unwrap_or_default()
    } else {
        bind.to_vec()
    };
    let mut out = Vec::new();
    for ip in all {
        if !ip.is_loopback() && !ip.is_unspecified() && !out.contains(&ip) {
            out.push(ip);
        }
    }
    out
}
