//! loop: CoreDNS's forwarding loop detection (`plugin/loop`). When the configuration
//! starts, a thread sends `HINFO <random>.<random>.<zone>` to the block's own listener
//! (`probe.rs`); the plugin counts the times that query comes through it, and when it
//! has seen it more than twice, the query is going round a loop: it logs CoreDNS's
//! `[FATAL]` line and the process exits with status 1. The first reply to the probe (or
//! 30 s without one) disables the detection, so that a client's HINFO query cannot kill
//! the server later. It runs again with every configuration, after a reload too.
//!
//! On the query path the plugin looks at HINFO queries for names under its zone only while
//! enabled. Those are served on the deferred pass (the inline pass defers them), so that a
//! query is counted once whatever passes it makes.

#![forbid(unsafe_code)]

mod probe;

use ringdns_plugin::corefile::{Dispenser, Error};
use ringdns_plugin::wire::name_to_wire;
use ringdns_plugin::wire::rtype::HINFO;
use ringdns_plugin::{
    BlockSetup, CoreInfo, Handler, Outcome, Plugin, Request, Serve, Serves, Status,
    next_or_failure, next_or_failure_now,
};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// What setup made of the block's `loop`, shared by every core.
pub struct Config {
    inner: Arc<Inner>,
}

/// The detection's state: the probe's name, the count, the switch.
pub(crate) struct Inner {
    /// The zone probed (the block's first), as written in the log line.
    zone: String,
    zone_wire: Vec<u8>,
    /// The probe's name, presentation form (`<n>.<n>.<zone>`).
    qname: String,
    /// The same, lower-case wire form.
    qname_wire: Vec<u8>,
    /// The block's (listener, zone) routes, known after setup: the probe goes to the
    /// zone's first.
    routes: Arc<OnceLock<Vec<(String, String)>>>,
    /// The address probed, for the log line (CoreDNS's `l.addr`).
    addr: Mutex<String>,
    /// Times the probe was seen.
    seen: AtomicU32,
    /// Set once the probe had its reply or gave up.
    off: AtomicBool,
    /// How many cores serve the configuration, and how many have started it: the probe
    /// waits for all, so that no core still serving the configuration before a reload
    /// answers it.
    cores: AtomicUsize,
    starts: AtomicUsize,
}

impl Inner {
    /// Where the probe goes: CoreDNS's `JoinHostPort(ListenHosts[0], Port)`, the listener
    /// of the block's first key, which is the first route of the probed zone. (The block's
    /// first route may be of another key, on a listener an earlier block opened.)
    fn target(&self) -> Option<(String, std::net::SocketAddr)> {
        let routes = self.routes.get()?;
        let (server, _) = routes
            .iter()
            .find(|(_, zone)| *zone == self.zone)
            .or_else(|| routes.first())?;
        probe::target(server)
    }

    fn set_address(&self, addr: String) {
        *self.addr.lock().unwrap_or_else(|e| e.into_inner()) = addr;
    }

    fn reset(&self) {
        self.seen.store(0, Ordering::Relaxed);
    }

    fn disable(&self) {
        self.off.store(true, Ordering::Relaxed);
    }

    /// Whether every core has made the configuration its current one.
    fn all_started(&self) -> bool {
        self.starts.load(Ordering::Acquire) >= self.cores.load(Ordering::Relaxed)
    }
}

/// The plugin's instance on one core.
pub struct Loop {
    inner: Arc<Inner>,
}

impl Plugin for Loop {
    const NAME: &'static str = "loop";
    type Config = Config;
    type Place = Serves;

    /// `loop`, without arguments, once per block (CoreDNS's `plugin.ErrOnce`).
    fn setup(d: &mut Dispenser<'_>, block: &mut BlockSetup) -> Result<Config, Error> {
        let mut seen = false;
        while d.next() {
            ringdns_plugin::once_per_block_of(d, Self::NAME, &mut seen)?;
            if d.next_arg() {
                return Err(d.plugin_arg_err(Self::NAME));
            }
        }
        let zone = block.zones.first().cloned().unwrap_or_else(|| ".".into());
        let zone_wire = name_to_wire(&zone).map_err(|e| d.plugin_err(Self::NAME, e))?;
        let qname = qname(&zone);
        let qname_wire = name_to_wire(&qname).map_err(|e| d.plugin_err(Self::NAME, e))?;
        Ok(Config {
            inner: Arc::new(Inner {
                zone,
                zone_wire,
                qname,
                qname_wire,
                routes: block.routes.clone(),
                addr: Mutex::new(String::new()),
                seen: AtomicU32::new(0),
                off: AtomicBool::new(false),
                cores: AtomicUsize::new(1),
                starts: AtomicUsize::new(0),
            }),
        })
    }
}

/// `<random>.<random>.<zone>`, each random a 62-bit number (CoreDNS's `qname`).
fn qname(zone: &str) -> String {
    let (a, b) = (random_u62(), random_u62());
    if zone == "." {
        format!("{a}.{b}.")
    } else {
        format!("{a}.{b}.{zone}")
    }
}

fn random_bytes<const N: usize>() -> Option<[u8; N]> {
    use ring::rand::SecureRandom;
    let mut b = [0u8; N];
    ring::rand::SystemRandom::new().fill(&mut b).ok()?;
    Some(b)
}

/// A secure random number below 2^62; the time in nanoseconds when there is no random
/// source, as CoreDNS falls back.
fn random_u62() -> u64 {
    match random_bytes::<8>() {
        Some(b) => u64::from_be_bytes(b) >> 2,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64),
    }
}

/// A query ID for the probe (miekg's `dns.Id`).
pub(crate) fn random_u16() -> u16 {
    random_bytes::<2>().map_or(0, u16::from_be_bytes)
}

impl Serve for Loop {
    fn build(config: &Arc<Config>, core: &CoreInfo) -> Option<Self> {
        config.inner.cores.store(core.cores, Ordering::Relaxed);
        Some(Loop {
            inner: config.inner.clone(),
        })
    }

    /// Starts the probe, from the first core to start this configuration (the probe then
    /// waits for the others).
    fn start(&self) {
        if self.inner.starts.fetch_add(1, Ordering::AcqRel) != 0 {
            return;
        }
        let weak = Arc::downgrade(&self.inner);
        let spawned = std::thread::Builder::new()
            .name("ringdns-loop".into())
            .spawn(move || probe::run(weak));
        if let Err(e) = spawned {
            ringdns_plugin::error!("plugin/loop: cannot start the probe: {e}");
            self.inner.disable();
        }
    }

    async fn serve<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Outcome {
        if self.watches(req) {
            if !req.can_wait() {
                return req.defer();
            }
            self.count(req);
        }
        next_or_failure(Self::NAME, next, req).await
    }

    fn serve_now<N: Handler>(&self, req: &mut Request<'_>, next: &N) -> Option<Status> {
        if self.watches(req) {
            return None;
        }
        next_or_failure_now(Self::NAME, next, req)
    }
}

impl Loop {
    /// A HINFO query under the zone while the detection is on.
    fn watches(&self, req: &Request<'_>) -> bool {
        req.query.qtype() == HINFO
            && !self.inner.off.load(Ordering::Relaxed)
            && req.query.qname().is_subdomain_of(&self.inner.zone_wire)
    }

    /// Counts the probe; past two, the loop is reported and the process ends (CoreDNS's
    /// `log.Fatalf`).
    fn count(&self, req: &Request<'_>) {
        let i = &self.inner;
        let seen = if req.query.qname().eq_ignore_ascii_case(&i.qname_wire) {
            i.seen.fetch_add(1, Ordering::Relaxed) + 1
        } else {
            i.seen.load(Ordering::Relaxed)
        };
        if seen > 2 {
            let addr = i.addr.lock().unwrap_or_else(|e| e.into_inner()).clone();
            ringdns_plugin::fatal!(
                "plugin/loop: Loop ({} -> {addr}) detected for zone {}, see https://coredns.io/plugins/loop#troubleshooting. Query: \"HINFO {}\"",
                req.client,
                ringdns_plugin::quote::go_quote(&i.zone),
                i.qname
            );
        }
    }
}

ringdns_plugin::export!(Loop);

#[cfg(test)]
mod tests;
