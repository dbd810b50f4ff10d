//! The HTTP endpoints the plugins registered (`/health`, `/ready`, `/metrics`, …), far from
//! the query path: one tiny_http server and thread per address, each serving the paths
//! the configuration puts on that address with the handlers their plugins gave. This module
//! knows no plugin and no path; a plugin adds an endpoint with `BlockSetup::http_endpoint`.
//!
//! Reloads change them in two steps, so that no reload ever closes a port it keeps
//! (CoreDNS can fail a reload with `bind: address already in use` for its health and
//! prometheus ports, coredns/coredns#1604): [`HttpServers::stage`] opens
//! the addresses the new configuration adds (a port that cannot be bound fails the reload
//! with nothing changed), then [`HttpServers::commit`] starts them, hands each kept address its new
//! paths and handlers, and closes the addresses no longer wanted. An address kept across a
//! reload is never closed, whatever moved on it; a reload that fails leaves every address
//! with the handlers of the running configuration.

use crate::plugin::{HttpEndpoint, HttpHandler, HttpRequest, HttpResponse};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// What the server tells every handler about itself.
#[derive(Default)]
pub struct HttpState {
    /// Every core serves and no stop has begun ([`HttpRequest::serving`]: ready says 200
    /// only then). A reload leaves it alone.
    pub serving: AtomicBool,
}

/// The paths served on one address, each with its handler.
type Routes = Vec<(String, HttpHandler)>;

/// The endpoints a configuration asks for, grouped by address: (address, its routes).
pub type Wanted = Vec<(SocketAddr, Arc<Routes>)>;

/// Groups a configuration's endpoints by address, in the order they first appear.
pub fn wanted(endpoints: &[HttpEndpoint]) -> Wanted {
    let mut out: Vec<(SocketAddr, Routes)> = Vec::new();
    for e in endpoints {
        let route = (e.path.clone(), e.handler.clone());
        match out.iter_mut().find(|(a, _)| *a == e.addr) {
            Some((_, routes)) => routes.push(route),
            None => out.push((e.addr, vec![route])),
        }
    }
    out.into_iter().map(|(a, r)| (a, Arc::new(r))).collect()
}

/// One open address.
struct Open {
    addr: SocketAddr,
    /// What it serves now; read by its thread at each request, swapped by a commit.
    routes: Arc<Mutex<Arc<Routes>>>,
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
pub struct HttpServers {
    state: Arc<HttpState>,
    open: Vec<Open>,
}

/// Addresses opened for a configuration not yet committed; dropping it closes them.
pub struct Staged {
    wanted: Wanted,
    fresh: Vec<Open>,
}

impl HttpServers {
    /// No endpoint open yet.
    pub fn new(state: Arc<HttpState>) -> Self {
        HttpServers {
            state,
            open: Vec::new(),
        }
    }

    /// Opens every address in `wanted` that is not open yet. On error the ones this call
    /// opened are closed again and nothing else changed.
    pub fn stage(&self, wanted: Wanted) -> Result<Staged, String> {
        let mut fresh = Vec::new();
        for (addr, routes) in &wanted {
            if self.open.iter().any(|o| o.addr == *addr) {
                continue;
            }
            let server =
                tiny_http::Server::http(addr).map_err(|e| format!("listen tcp {addr}: {e}"))?;
            fresh.push(Open {
                addr: *addr,
                routes: Arc::new(Mutex::new(routes.clone())),
                server: Arc::new(server),
                thread: None,
            });
        }
        Ok(Staged { wanted, fresh })
    }

    /// Serves exactly the staged set: new addresses start, kept ones get their new routes,
    /// the others close.
    pub fn commit(&mut self, staged: Staged) {
        let Staged { wanted, fresh } = staged;
        for mut o in fresh {
            let (server, routes, state) = (o.server.clone(), o.routes.clone(), self.state.clone());
            match std::thread::Builder::new()
                .name(format!("ringdns-http-{}", o.addr))
                .spawn(move || serve(&server, &routes, &state))
            {
                Ok(t) => o.thread = Some(t),
                Err(e) => crate::error!("cannot serve HTTP on {}: {e}", o.addr),
            }
            self.open.push(o);
        }
        let mut kept = Vec::with_capacity(self.open.len());
        for o in std::mem::take(&mut self.open) {
            match wanted.iter().find(|(a, _)| *a == o.addr) {
                Some((_, routes)) => {
                    *o.routes.lock().unwrap_or_else(|e| e.into_inner()) = routes.clone();
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

fn serve(server: &tiny_http::Server, routes: &Mutex<Arc<Routes>>, state: &HttpState) {
    for req in server.incoming_requests() {
        let routes = routes.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let resp = respond(req.url(), &routes, state);
        // A Content-Length rather than chunks, whatever the size: the simplest clients (and
        // health probes) can read it.
        let mut out = tiny_http::Response::from_data(resp.body.into_owned())
            .with_status_code(resp.status)
            .with_chunked_threshold(usize::MAX);
        if let Some(ct) = resp.content_type
            && let Ok(h) = tiny_http::Header::from_bytes(&b"Content-Type"[..], ct.as_bytes())
        {
            out.add_header(h);
        }
        let _ = req.respond(out);
    }
}

/// The answer to `url` from the handler of its path, 404 when no route has it, 500 (and a
/// log line) when the handler panics: a plugin's bug must not end the address's thread.
fn respond(url: &str, routes: &Routes, state: &HttpState) -> HttpResponse {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let Some((_, handler)) = routes.iter().find(|(p, _)| p == path) else {
        return HttpResponse::text(404, "404 page not found\n");
    };
    let req = HttpRequest {
        path,
        query,
        serving: state.serving.load(Ordering::Acquire),
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(&req))) {
        Ok(resp) => resp,
        Err(_) => {
            crate::error!("HTTP handler for {path} panicked");
            HttpResponse::text(500, "500 internal server error\n")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free() -> SocketAddr {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    }

    /// The status, head and body of a GET.
    fn get_full(addr: SocketAddr, path: &str) -> Option<(u16, String, String)> {
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
        let code = t.split_whitespace().nth(1)?.parse().ok()?;
        let (head, body) = t.split_once("\r\n\r\n")?;
        Some((code, head.to_string(), body.to_string()))
    }

    fn get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
        get_full(addr, path).map(|(c, _, b)| (c, b))
    }

    fn code(addr: SocketAddr, path: &str) -> Option<u16> {
        get(addr, path).map(|r| r.0)
    }

    /// An endpoint answering 200 with `body`, as a plugin's setup registers one.
    fn ep(path: &'static str, body: &'static str, addrs: &[SocketAddr]) -> Vec<HttpEndpoint> {
        addrs
            .iter()
            .map(|&addr| {
                let mut b = crate::plugin::BlockSetup::default();
                b.http_endpoint(addr, path, move |_| HttpResponse::text(200, body));
                b.http.pop().unwrap()
            })
            .collect()
    }

    fn set(lists: &[Vec<HttpEndpoint>]) -> Wanted {
        wanted(&lists.concat())
    }

    #[test]
    fn paths_move_between_kept_addresses_and_removed_ones_close() {
        let state = Arc::new(HttpState::default());
        state.serving.store(true, Ordering::Release);
        let (a, b, c) = (free(), free(), free());
        let mut ops = HttpServers::new(state);
        let s = ops
            .stage(set(&[ep("/health", "OK", &[a]), ep("/ready", "OK", &[b])]))
            .unwrap();
        ops.commit(s);
        assert_eq!(code(a, "/health"), Some(200));
        assert_eq!(code(a, "/ready"), Some(404));
        assert_eq!(code(b, "/ready"), Some(200));
        // Swap them and add a third: no port closes, none is opened twice.
        let s = ops
            .stage(set(&[
                ep("/health", "OK", &[b, c]),
                ep("/ready", "OK", &[a]),
            ]))
            .unwrap();
        ops.commit(s);
        assert_eq!(code(a, "/ready"), Some(200));
        assert_eq!(code(b, "/health"), Some(200));
        assert_eq!(code(b, "/ready"), Some(404));
        assert_eq!(code(c, "/health"), Some(200));
        // A taken port fails the stage and changes nothing.
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let t = taken.local_addr().unwrap();
        assert!(ops.stage(set(&[ep("/health", "OK", &[t])])).is_err());
        assert_eq!(code(a, "/ready"), Some(200));
        // Dropping c closes it.
        let s = ops
            .stage(set(&[ep("/health", "OK", &[b]), ep("/ready", "OK", &[a])]))
            .unwrap();
        ops.commit(s);
        assert_eq!(ops.addresses(), vec![a, b]);
        // Both endpoints on one address.
        let s = ops
            .stage(set(&[ep("/health", "OK", &[a]), ep("/ready", "OK", &[a])]))
            .unwrap();
        ops.commit(s);
        assert_eq!(code(a, "/health"), Some(200));
        assert_eq!(code(a, "/ready"), Some(200));
        assert_eq!(ops.addresses(), vec![a]);
        let t0 = std::time::Instant::now();
        while std::net::TcpStream::connect(c).is_ok() || std::net::TcpStream::connect(b).is_ok() {
            assert!(t0.elapsed().as_secs() < 5, "{c} or {b} still open");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    #[test]
    fn a_plugins_own_endpoint_gets_its_new_handler_on_a_kept_address_and_moves_with_it() {
        let state = Arc::new(HttpState::default());
        let (a, b) = (free(), free());
        let mut ops = HttpServers::new(state.clone());
        let s = ops.stage(set(&[ep("/hello", "one", &[a])])).unwrap();
        ops.commit(s);
        assert_eq!(get(a, "/hello?x=1"), Some((200, "one".into())));
        let (_, head, _) = get_full(a, "/hello").unwrap();
        assert!(
            head.contains("Content-Type: text/plain; charset=UTF-8"),
            "{head}"
        );
        let (_, head, _) = get_full(a, "/none").unwrap();
        assert!(
            head.contains("Content-Type: text/plain"),
            "404s too: {head}"
        );
        // A reload keeps the address: the same listener answers with the new handler.
        let s = ops.stage(set(&[ep("/hello", "two", &[a])])).unwrap();
        ops.commit(s);
        assert_eq!(get(a, "/hello"), Some((200, "two".into())));
        // A reload that fails after staging leaves the running handler.
        let s = ops.stage(set(&[ep("/hello", "three", &[a, b])])).unwrap();
        drop(s);
        assert_eq!(get(a, "/hello"), Some((200, "two".into())));
        assert_eq!(
            code(b, "/hello"),
            None,
            "a dropped stage closes what it opened"
        );
        // Moved: it opens there and closes here.
        let s = ops.stage(set(&[ep("/hello", "four", &[b])])).unwrap();
        ops.commit(s);
        assert_eq!(get(b, "/hello"), Some((200, "four".into())));
        let t0 = std::time::Instant::now();
        while std::net::TcpStream::connect(a).is_ok() {
            assert!(t0.elapsed().as_secs() < 5, "{a} still open");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // Handlers see whether the server serves, and a panicking one is a 500.
        let mut blk = crate::plugin::BlockSetup::default();
        blk.http_endpoint(b, "/serving", |r| {
            HttpResponse::text(200, if r.serving { "yes" } else { "no" })
        });
        blk.http_endpoint(b, "/boom", |_| panic!("a plugin's bug"));
        let s = ops.stage(wanted(&blk.http)).unwrap();
        ops.commit(s);
        assert_eq!(get(b, "/serving"), Some((200, "no".into())));
        state.serving.store(true, Ordering::Release);
        assert_eq!(get(b, "/serving"), Some((200, "yes".into())));
        assert_eq!(code(b, "/boom"), Some(500));
        assert_eq!(
            get(b, "/serving"),
            Some((200, "yes".into())),
            "still serving"
        );
        assert_eq!(code(b, "/hello"), Some(404));
    }
}
