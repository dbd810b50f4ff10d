//! A small blocking Kubernetes list+watch client for the kubernetes plugin.
//!
//! It is type-agnostic: each watched collection runs on a thread of its own
//! ([`spawn_reflector`]) and hands raw object JSON ([`Event`]) to its caller, who decodes
//! what it needs into its own types. Why not kube/k8s-openapi: they need Rust 1.89 (the
//! workspace is at 1.88) and a tokio/hyper stack ringdns does not otherwise run; the HTTP
//! needed here is GET only, one request per connection.
//!
//! What it does, and where client-go's behaviour was taken from:
//! - configuration from the three sources CoreDNS has ([`ApiConfig`]);
//! - HTTP/1.1 GET with `Connection: close`, Content-Length / chunked / EOF bodies, a 64 KiB
//!   header cap, 10 s connect and 1 s read timeouts (a timeout only checks the stop flag
//!   and the watchdog), TCP keepalive;
//! - list in pages, watch with bookmarks, 410 → relist, backoff with the constants of
//!   client-go's `tools/cache/reflector.go` ([`Tuning::default`]);
//! - CoreDNS's `coredns_kubernetes_rest_client_*` metrics.

#![forbid(unsafe_code)]
// What is not part of the API above is pub(crate) at most.
#![warn(unreachable_pub)]

mod backoff;
mod config;
mod conn;
mod http;
mod incluster;
mod kubeconfig;
mod limiter;
mod metrics;
mod query;
mod reflector;
mod tls;

pub use config::{ApiConfig, TlsFiles};
pub use serde_json::value::RawValue;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Sender;
use std::time::Duration;

/// CoreDNS's `apiserver_qps` / `apiserver_burst` / `apiserver_max_inflight`; `None` or 0
/// keeps client-go's default (5 QPS, burst 10, no inflight limit), as CoreDNS only sets
/// them when > 0.
#[derive(Debug, Default, Clone, Copy)]
pub struct Limits {
    /// Requests per second of the token bucket.
    pub qps: Option<f64>,
    /// Its size.
    pub burst: Option<u32>,
    /// Requests waiting for their response headers at the same time.
    pub max_inflight: Option<u32>,
}

/// Timing constants. The defaults are client-go's (reflector.go) and its transport's;
/// tests shorten them so that a retry does not cost 800 ms.
#[derive(Debug, Clone)]
pub struct Tuning {
    /// First backoff delay (reflector.go `defaultBackoffInit` = 800 ms).
    pub backoff_init: Duration,
    /// Its cap (`defaultBackoffMax` = 30 s); the factor is 2 (`defaultBackoffFactor`).
    pub backoff_cap: Duration,
    /// Quiet time after which the backoff starts again (`defaultBackoffReset` = 2 min).
    pub backoff_reset: Duration,
    /// Each delay grows by up to this fraction of itself (`defaultBackoffJitter` = 1.0).
    pub backoff_jitter: f64,
    /// timeoutSeconds of a watch is random in [this, 2 × this] (`defaultMinWatchTimeout`
    /// = 5 min).
    pub min_watch_timeout: Duration,
    /// A watch with no byte for timeoutSeconds + this is dead (our watchdog, 30 s).
    pub watchdog_slack: Duration,
    /// A watch that ends this soon with no event counts as an error (client-go's
    /// VeryShortWatchError, 1 s), so a server that closes at once is not hammered.
    pub short_watch: Duration,
    /// TCP connect timeout per address (client-go's dialer: 30 s; CoreDNS's plan: 10 s).
    pub connect_timeout: Duration,
    /// The socket read timeout: how often a blocked read checks stop and the watchdog.
    pub read_tick: Duration,
    /// Longest wait for response headers, or between two bytes of a list (60 s).
    pub idle_timeout: Duration,
    /// `limit` of each list page (client-go's pager: 500).
    pub page_limit: u32,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            backoff_init: Duration::from_millis(800),
            backoff_cap: Duration::from_secs(30),
            backoff_reset: Duration::from_secs(120),
            backoff_jitter: 1.0,
            min_watch_timeout: Duration::from_secs(300),
            watchdog_slack: Duration::from_secs(30),
            short_watch: Duration::from_secs(1),
            connect_timeout: Duration::from_secs(10),
            read_tick: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(60),
            page_limit: 500,
        }
    }
}

/// One collection to list and watch.
#[derive(Debug, Clone)]
pub struct Watch {
    /// Passed back with each event, so one receiver can serve several watches.
    pub tag: u8,
    /// The collection: "/api/v1/services", "/apis/discovery.k8s.io/v1/endpointslices",
    /// "/api/v1/namespaces", "/api/v1/pods".
    pub path: &'static str,
    /// `labelSelector`, URL-encoded by the client.
    pub label_selector: Option<String>,
    /// `fieldSelector`, URL-encoded by the client.
    pub field_selector: Option<String>,
}

/// What a reflector tells its caller.
#[derive(Debug)]
pub enum Event {
    /// A complete list (the first one, and every relist after 410 Gone): the caller
    /// replaces what it holds of this kind; the first Replace of a Watch is its sync point.
    Replace(Vec<Box<RawValue>>),
    /// An object was created (or entered the selectors).
    Added(Box<RawValue>),
    /// An object changed.
    Modified(Box<RawValue>),
    /// An object was deleted (its last state).
    Deleted(Box<RawValue>),
}

/// Runs list+watch of `watch` on a thread of its own; events go to `sink` tagged with
/// `watch.tag`. The thread ends within about `read_tick` (1 s) once `stop` is set, and at
/// the next event it would send once the receiver is dropped (std's Sender cannot tell
/// earlier: set `stop` too).
pub fn spawn_reflector(
    config: Arc<ApiConfig>,
    watch: Watch,
    sink: Sender<(u8, Event)>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let name = format!("k8s-{}", watch.path.rsplit('/').next().unwrap_or("watch"));
    std::thread::Builder::new()
        .name(name)
        .spawn(move || reflector::Reflector::new(config, watch, sink, stop).run())
}
