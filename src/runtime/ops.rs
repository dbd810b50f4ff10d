//! The operations endpoints over HTTP (`/health`, `/ready`, `/metrics`), far from the query
//! path (a scrape reads the metrics registry without stopping any core): one
//! tiny_http server and thread per address, each serving the set of paths the Corefile puts
//! on that address.
//!
//! Reloads change them in two steps, so that no reload ever closes a port it keeps
//! (CoreDNS can fail a reload with `bind: address already in use` for its health and
//! prometheus ports, coredns/coredns#1604): [`Ops::stage`] opens
//! the addresses the new configuration adds (a port that cannot be bound fails the reload
//! with nothing changed), then [`Ops::commit`] starts them, hands each kept address its new
//! set of paths, and closes the addresses no longer wanted. An address kept across a reload
//! is never closed, whatever moved on it.
//!
//! `/ready` also asks the plugins of the running configuration that report readiness (its
//! [`Watch`]); the watch changes with the endpoints, at [`Ops::commit`], so a reload that
//! fails never touches it.
//!
//! A new endpoint (e.g. `/metrics`) is one more [`Endpoint`] variant with its path and a
//! branch in [`respond`].

use crate::plugin::readiness::Watch;
use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// What the endpoints report.
#[derive(Default)]
pub struct OpsState {
    /// Every core serves and no stop has begun: `/ready` may say 200. A reload leaves it
    /// alone.
    pub ready: AtomicBool,
    /// The running configuration's plugins that `/ready` waits for. Locked by the HTTP
    /// threads and by [`Ops::commit`], never by a core.
    readiness: Mutex<Arc<Watch>>,
}

impl OpsState {
    /// The names of the plugins not ready (sorted, each once); empty when all are.
    fn not_ready(&self) -> Vec<&'static str> {
        let watch = self
            .readiness
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        watch.not_ready()
    }
}

/// One HTTP path served off the query path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `/health`: 200 while the process runs.
    Health,
    /// `/ready`: 200 while serving, 503 during start-up and stop (lameduck).
    Ready,
    /// `/metrics`: the Prometheus text page (`prometheus`).
    Metrics,
}

impl Endpoint {
    const ALL: [Endpoint; 3] = [Endpoint::Health, Endpoint::Ready, Endpoint::Metrics];

    fn bit(self) -> u8 {
        1 << (self as u8)
    }

    /// The URL path.
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Health => "/health",
            Endpoint::Ready => "/ready",
            Endpoint::Metrics => "/metrics",
        }
    }
}

/// The endpoints a configuration asks for, grouped by address: (address, set of paths as
/// [`Endpoint`] bits).
pub type Wanted = Vec<(SocketAddr, u8)>;

/// Groups the configured addresses of each endpoint by address.
pub fn wanted(list: &[(Endpoint, &[SocketAddr])]) -> Wanted {
    let mut out: Wanted = Vec::new();
    for (e, addrs) in list {
        for a in *addrs {
            match out.iter_mut().find(|(x, _)| x == a) {
                Some((_, bits)) => *bits |= e.bit(),
                None => out.push((*a, e.bit())),
            }
        }
    }
    out
}

/// One open address.
struct Open {
    addr: SocketAddr,
    /// Which endpoints it serves now; read by its thread at each request.
    paths: Arc<AtomicU8>,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl Open {
    /// Stops serving and closes the port (tiny_http closes it when the server drops).
    fn close(mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The open endpoints of the process.
pub struct Ops {
    state: Arc<OpsState>,
    open: Vec<Open>,
}

/// Addresses opened for a configuration not yet committed; dropping it closes them.
pub struct Staged {
    wanted: Wanted,
    fresh: Vec<Open>,
    readiness: Arc<Watch>,
}

impl Ops {
    /// No endpoint open yet.
    pub fn new(state: Arc<OpsState>) -> Self {
        Ops {
            state,
            open: Vec::new(),
        }
    }

    /// Opens every address in `wanted` that is not open yet, for a configuration whose
    /// `/ready` waits for `readiness`. On error the ones this call opened are closed again
    /// and nothing else changed.
    pub fn stage(&self, wanted: Wanted, readiness: Arc<Watch>) -> Result<Staged, String> {
        let mut fresh = Vec::new();
        for &(addr, bits) in &wanted {
            if self.open.iter().any(|o| o.addr == addr) {
                continue;
            }
            let server =
                tiny_http::Server::http(addr).map_err(|e| format!("listen tcp {addr}: {e}"))?;
            fresh.push(Open {
                addr,
                paths: Arc::new(AtomicU8::new(bits)),
                server: Arc::new(server),
                thread: None,
            });
        }
        Ok(Staged {
            wanted,
            fresh,
            readiness,
        })
    }

    /// Serves exactly the staged set: new addresses start, kept ones get their new paths,
    /// the others close; `/ready` waits for the staged configuration's plugins from now on.
    pub fn commit(&mut self, staged: Staged) {
        let Staged {
            wanted,
            fresh,
            readiness,
        } = staged;
        *self
            .state
            .readiness
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = readiness;
        for mut o in fresh {
            let (server, paths, state) = (o.server.clone(), o.paths.clone(), self.state.clone());
            match std::thread::Builder::new()
                .name(format!("ringdns-http-{}", o.addr))
                .spawn(move || serve(&server, &paths, &state))
            {
                Ok(t) => o.thread = Some(t),
                Err(e) => crate::error!("cannot serve HTTP on {}: {e}", o.addr),
            }
            self.open.push(o);
        }
        let mut kept = Vec::with_capacity(self.open.len());
        for o in std::mem::take(&mut self.open) {
            match wanted.iter().find(|(a, _)| *a == o.addr) {
                Some((_, bits)) => {
                    o.paths.store(*bits, Ordering::Release);
                    kept.push(o);
                }
                None => o.close(),
            }
        }
        self.open = kept;
    }

    /// The addresses open now (for tests and logs).
    pub fn addresses(&self) -> Vec<SocketAddr> {
        self.open.iter().map(|o| o.addr).collect()
    }
}

fn serve(server: &tiny_http::Server, paths: &AtomicU8, state: &OpsState) {
    for req in server.incoming_requests() {
        let url = req.url().split('?').next().unwrap_or("");
        let (code, body, content_type) = respond(url, paths.load(Ordering::Acquire), state);
        // A Content-Length rather than chunks, whatever the size: the simplest clients (and
        // health probes) can read it.
        let mut resp = tiny_http::Response::from_string(body)
            .with_status_code(code)
            .with_chunked_threshold(usize::MAX);
        if let Some(ct) = content_type
            && let Ok(h) = tiny_http::Header::from_bytes(&b"Content-Type"[..], ct.as_bytes())
        {
            resp.add_header(h);
        }
        let _ = req.respond(resp);
    }
}

/// The status, body and content type for `url` on an address serving the endpoints in
/// `bits` (a body made at each request, such as a metrics scrape, is an owned `Cow`).
fn respond(
    url: &str,
    bits: u8,
    state: &OpsState,
) -> (u16, Cow<'static, str>, Option<&'static str>) {
    let hit = Endpoint::ALL
        .into_iter()
        .find(|e| bits & e.bit() != 0 && e.path() == url);
    match hit {
        None => (404, Cow::Borrowed("404 page not found\n"), None),
        Some(Endpoint::Health) => (200, Cow::Borrowed("OK"), None),
        Some(Endpoint::Ready) if state.ready.load(Ordering::Acquire) => {
            let waiting = state.not_ready();
            if waiting.is_empty() {
                (200, Cow::Borrowed("OK"), None)
            } else {
                // As CoreDNS: the names, comma-separated, and a log line per refusal.
                let names = waiting.join(",");
                crate::info!("plugin/ready: Plugins not ready: {names:?}");
                (503, Cow::Owned(names), None)
            }
        }
        Some(Endpoint::Ready) => (
            503,
            Cow::Borrowed("not ready: the server is starting or stopping\n"),
            None,
        ),
        Some(Endpoint::Metrics) => (
            200,
            Cow::Owned(crate::metrics::expose::render()),
            Some(crate::metrics::expose::CONTENT_TYPE),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free() -> SocketAddr {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    }

    fn get(addr: SocketAddr, path: &str) -> Option<u16> {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(addr).ok()?;
        s.set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .ok()?;
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .ok()?;
        let mut t = String::new();
        s.read_to_string(&mut t).ok()?;
        t.split_whitespace().nth(1)?.parse().ok()
    }

    #[test]
    fn paths_move_between_kept_addresses_and_removed_ones_close() {
        let state = Arc::new(OpsState::default());
        state.ready.store(true, Ordering::Release);
        let (a, b, c) = (free(), free(), free());
        let mut ops = Ops::new(state);
        let s = ops
            .stage(
                wanted(&[(Endpoint::Health, &[a]), (Endpoint::Ready, &[b])]),
                Arc::default(),
            )
            .unwrap();
        ops.commit(s);
        assert_eq!(get(a, "/health"), Some(200));
        assert_eq!(get(a, "/ready"), Some(404));
        assert_eq!(get(b, "/ready"), Some(200));
        // Swap them and add a third: no port closes, none is opened twice.
        let s = ops
            .stage(
                wanted(&[(Endpoint::Health, &[b, c]), (Endpoint::Ready, &[a])]),
                Arc::default(),
            )
            .unwrap();
        ops.commit(s);
        assert_eq!(get(a, "/ready"), Some(200));
        assert_eq!(get(b, "/health"), Some(200));
        assert_eq!(get(b, "/ready"), Some(404));
        assert_eq!(get(c, "/health"), Some(200));
        // A taken port fails the stage and changes nothing.
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let t = taken.local_addr().unwrap();
        assert!(
            ops.stage(wanted(&[(Endpoint::Health, &[t])]), Arc::default())
                .is_err()
        );
        assert_eq!(get(a, "/ready"), Some(200));
        // Dropping c closes it.
        let s = ops
            .stage(
                wanted(&[(Endpoint::Health, &[b]), (Endpoint::Ready, &[a])]),
                Arc::default(),
            )
            .unwrap();
        ops.commit(s);
        assert_eq!(ops.addresses(), vec![a, b]);
        // Both endpoints on one address.
        let s = ops
            .stage(
                wanted(&[(Endpoint::Health, &[a]), (Endpoint::Ready, &[a])]),
                Arc::default(),
            )
            .unwrap();
        ops.commit(s);
        assert_eq!(get(a, "/health"), Some(200));
        assert_eq!(get(a, "/ready"), Some(200));
        assert_eq!(ops.addresses(), vec![a]);
        let t0 = std::time::Instant::now();
        while std::net::TcpStream::connect(c).is_ok() || std::net::TcpStream::connect(b).is_ok() {
            assert!(t0.elapsed().as_secs() < 5, "{c} or {b} still open");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
