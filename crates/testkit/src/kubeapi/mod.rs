//! A fake Kubernetes API server on loopback, for the kubernetes client's and plugin's
//! tests: rustls (or plain HTTP) on a std `TcpListener`, one thread per connection.
//!
//! It serves the four collections the kubernetes plugin watches
//! (`/api/v1/services`, `/apis/discovery.k8s.io/v1/endpointslices`, `/api/v1/namespaces`,
//! `/api/v1/pods`) plus `/api`, `/apis` and `/version`: lists with `limit`/`continue`,
//! label and field selectors and the list's resourceVersion; `watch=true` as a chunked
//! stream of newline-terminated events replayed from `resourceVersion`, then ADDED /
//! MODIFIED / DELETED as the test changes objects, BOOKMARKs when asked, and ERROR 410
//! for a compacted resourceVersion. Bearer tokens (rotatable, 401 Status otherwise),
//! client certificates, and knobs that break the stream in the ways a real one breaks.
//!
//! **Conformance to a real kube-apiserver is assumed from the API documentation and from
//! how CoreDNS's client (client-go) behaves, not proven**: no real API server can run in
//! this environment. Where this server simplifies: one resourceVersion counter for all
//! collections (as etcd has), a continue token that expires only by [`FakeApi::compact`]
//! (not by time), pages over the current objects rather than a snapshot at the first
//! page's resourceVersion, `resourceVersion` on a list accepted and ignored.

pub mod objects;
mod pki;
mod selector;

pub use pki::Pki;
pub use selector::Selector;

use base64::Engine as _;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection, StreamOwned};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The token a server started with [`FakeApiOptions::default`] accepts.
pub const DEFAULT_TOKEN: &str = "fake-token";

/// The collections served: path, kind, list kind, apiVersion.
const COLLECTIONS: [(&str, &str, &str, &str); 4] = [
    ("/api/v1/services", "Service", "ServiceList", "v1"),
    (
        "/apis/discovery.k8s.io/v1/endpointslices",
        "EndpointSlice",
        "EndpointSliceList",
        "discovery.k8s.io/v1",
    ),
    ("/api/v1/namespaces", "Namespace", "NamespaceList", "v1"),
    ("/api/v1/pods", "Pod", "PodList", "v1"),
];

fn collection_of_kind(kind: &str) -> Option<&'static str> {
    COLLECTIONS.iter().find(|c| c.1 == kind).map(|c| c.0)
}

/// How the server is started.
#[derive(Debug, Clone)]
pub struct FakeApiOptions {
    /// https (true, the default) or plain http (what `kubectl proxy` serves).
    pub tls: bool,
    /// Require a client certificate signed by the server's CA (https only).
    pub client_auth: bool,
    /// The bearer token required; `None` accepts requests without one.
    pub token: Option<String>,
}

impl Default for FakeApiOptions {
    fn default() -> Self {
        FakeApiOptions {
            tls: true,
            client_auth: false,
            token: Some(DEFAULT_TOKEN.to_string()),
        }
    }
}

/// One request the server saw, in order.
#[derive(Debug, Clone)]
pub struct ApiRequest {
    /// The path, without the query.
    pub path: String,
    /// The query parameters, decoded.
    pub query: Vec<(String, String)>,
    /// The status answered.
    pub status: u16,
    /// The Authorization header, if any.
    pub authorization: Option<String>,
    /// The User-Agent header, if any.
    pub user_agent: Option<String>,
    /// The Accept header, if any.
    pub accept: Option<String>,
}

impl ApiRequest {
    /// The first value of query parameter `k`.
    pub fn param(&self, k: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    }

    /// Whether this was a watch.
    pub fn is_watch(&self) -> bool {
        matches!(self.param("watch"), Some("true" | "1"))
    }
}

/// One change, kept for watch replay until compacted.
#[derive(Clone)]
struct Change {
    rv: u64,
    path: &'static str,
    kind: &'static str,
    old: Option<Value>,
    obj: Value,
}

#[derive(Default)]
struct State {
    rv: u64,
    objects: HashMap<&'static str, BTreeMap<(String, String), Value>>,
    log: Vec<Change>,
    /// Changes at or below this resourceVersion are gone: watching from before it is 410.
    floor: u64,
    /// Bumped by each compaction: a continue token of an older epoch is 410.
    epoch: u64,
    token: Option<String>,
    fail: Vec<u16>,
    split: Option<usize>,
    coalesce: bool,
    frozen: bool,
    compact_on_page: Option<u32>,
    pages: u32,
    close_gen: u64,
    drop_gen: u64,
    bookmark_every: Option<Duration>,
    expire_gen: u64,
    bookmark_gen: u64,
    watchers: HashMap<String, usize>,
    requests: Vec<ApiRequest>,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    stop: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running fake API server; stopped when dropped.
pub struct FakeApi {
    shared: Arc<Shared>,
    addr: SocketAddr,
    pki: Pki,
    opts: FakeApiOptions,
    acceptor: Option<JoinHandle<()>>,
}

impl FakeApi {
    /// An https server with a token, on 127.0.0.1.
    pub fn start() -> FakeApi {
        FakeApi::with(FakeApiOptions::default())
    }

    /// A server as `opts` says, on 127.0.0.1 (port chosen by the kernel).
    pub fn with(opts: FakeApiOptions) -> FakeApi {
        let pki = Pki::generate();
        let tls = opts
            .tls
            .then(|| Arc::new(server_config(&pki, opts.client_auth)));
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                token: opts.token.clone(),
                ..State::default()
            }),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let s = shared.clone();
        let acceptor = std::thread::Builder::new()
            .name("fake-kubeapi".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if s.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let Ok(conn) = conn else { continue };
                    let (s, tls) = (s.clone(), tls.clone());
                    let _ = std::thread::Builder::new()
                        .name("fake-kubeapi-conn".into())
                        .spawn(move || {
                            let _ = serve_conn(conn, &s, tls);
                        });
                }
            })
            .expect("spawn acceptor");
        FakeApi {
            shared,
            addr,
            pki,
            opts,
            acceptor: Some(acceptor),
        }
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://127.0.0.1:PORT` (or http://).
    pub fn url(&self) -> String {
        let scheme = if self.opts.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// The CA certificate (PEM) clients must trust.
    pub fn ca_pem(&self) -> &str {
        &self.pki.ca_pem
    }

    /// The certificates of this server.
    pub fn pki(&self) -> &Pki {
        &self.pki
    }

    /// Writes ca.crt, client.crt and client.key into `dir`; their paths (cert, key, ca),
    /// for CoreDNS's `tls CERT KEY CACERT`.
    pub fn client_cert_files(&self, dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
        let (c, k, ca) = (
            dir.join("client.crt"),
            dir.join("client.key"),
            dir.join("ca.crt"),
        );
        std::fs::write(&c, &self.pki.client_cert_pem).expect("write client.crt");
        std::fs::write(&k, &self.pki.client_key_pem).expect("write client.key");
        std::fs::write(&ca, &self.pki.ca_pem).expect("write ca.crt");
        (c, k, ca)
    }

    /// Writes a kubeconfig for this server in `dir` and returns its path. Its
    /// current-context `fake` is this server (CA by the relative path `ca.crt`, the token,
    /// and with client-cert mode the client certificate as -data fields); a second context
    /// `unreachable` points at 127.0.0.1:1, so a test can tell which context was used.
    pub fn kubeconfig(&self, dir: &Path) -> PathBuf {
        use std::fmt::Write as _;
        std::fs::write(dir.join("ca.crt"), &self.pki.ca_pem).expect("write ca.crt");
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let mut user = String::new();
        if let Some(t) = &self.shared.lock().token {
            let _ = writeln!(user, "    token: {t}");
        }
        if self.opts.client_auth {
            let _ = writeln!(
                user,
                "    client-certificate-data: {}",
                b64(&self.pki.client_cert_pem)
            );
            let _ = writeln!(
                user,
                "    client-key-data: {}",
                b64(&self.pki.client_key_pem)
            );
        }
        if user.is_empty() {
            user.push_str("    {}\n");
        }
        let ca = if self.opts.tls {
            "    certificate-authority: ca.crt\n"
        } else {
            ""
        };
        let text = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: fake\nclusters:\n- name: fake\n  cluster:\n    server: {url}\n{ca}- name: unreachable\n  cluster:\n    server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n- name: unreachable\n  context:\n    cluster: unreachable\n    user: fake\nusers:\n- name: fake\n  user:\n{user}",
            url = self.url()
        );
        let p = dir.join("kubeconfig");
        std::fs::write(&p, text).expect("write kubeconfig");
        p
    }

    /// Writes a service-account directory (token, ca.crt, namespace `kube-system`) in
    /// `dir` and returns it; point `RINGDNS_K8S_SERVICEACCOUNT_DIR` there and set the env of
    /// [`FakeApi::incluster_env`].
    pub fn incluster_dir(&self, dir: &Path) -> PathBuf {
        let token = self.shared.lock().token.clone().unwrap_or_default();
        std::fs::write(dir.join("token"), token).expect("write token");
        std::fs::write(dir.join("ca.crt"), &self.pki.ca_pem).expect("write ca.crt");
        std::fs::write(dir.join("namespace"), "kube-system").expect("write namespace");
        dir.to_path_buf()
    }

    /// `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` for this server.
    pub fn incluster_env(&self) -> [(&'static str, String); 2] {
        [
            ("KUBERNETES_SERVICE_HOST", self.addr.ip().to_string()),
            ("KUBERNETES_SERVICE_PORT", self.addr.port().to_string()),
        ]
    }

    fn change(&self, f: impl FnOnce(&mut State)) {
        let mut s = self.shared.lock();
        f(&mut s);
        drop(s);
        self.shared.changed.notify_all();
    }

    /// Stores `obj` (its collection from `kind`), as a create or an update of the same
    /// namespace/name; returns the resourceVersion given.
    pub fn apply(&self, obj: Value) -> u64 {
        let kind = obj["kind"].as_str().unwrap_or("").to_string();
        let path =
            collection_of_kind(&kind).unwrap_or_else(|| panic!("no collection for kind {kind:?}"));
        let key = key_of(&obj);
        let mut rv = 0;
        self.change(|s| {
            s.rv += 1;
            rv = s.rv;
            let mut obj = obj;
            let old = s.objects.get(path).and_then(|m| m.get(&key)).cloned();
            let meta = &mut obj["metadata"];
            meta["resourceVersion"] = json!(rv.to_string());
            match &old {
                Some(o) => {
                    meta["uid"] = o["metadata"]["uid"].clone();
                    meta["creationTimestamp"] = o["metadata"]["creationTimestamp"].clone();
                }
                None => {
                    meta["uid"] = json!(format!("00000000-0000-4000-8000-{rv:012}"));
                    meta["creationTimestamp"] = json!("2026-01-01T00:00:00Z");
                }
            }
            s.objects.entry(path).or_default().insert(key, obj.clone());
            let kind = if old.is_some() { "MODIFIED" } else { "ADDED" };
            s.log.push(Change {
                rv,
                path,
                kind,
                old,
                obj,
            });
        });
        rv
    }

    /// Deletes `kind` `ns/name` (ns "" for Namespaces); false if it was not there.
    pub fn delete(&self, kind: &str, ns: &str, name: &str) -> bool {
        let path =
            collection_of_kind(kind).unwrap_or_else(|| panic!("no collection for kind {kind:?}"));
        let mut found = false;
        self.change(|s| {
            let Some(mut obj) = s
                .objects
                .get_mut(path)
                .and_then(|m| m.remove(&(ns.to_string(), name.to_string())))
            else {
                return;
            };
            found = true;
            s.rv += 1;
            let rv = s.rv;
            obj["metadata"]["resourceVersion"] = json!(rv.to_string());
            s.log.push(Change {
                rv,
                path,
                kind: "DELETED",
                old: None,
                obj,
            });
        });
        found
    }

    /// The current resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.lock().rv
    }

    /// Replaces the accepted token (rotation); requests with the old one get 401.
    pub fn set_token(&self, token: Option<&str>) {
        self.change(|s| s.token = token.map(str::to_string));
    }

    /// Watch streams write each chunk in pieces of at most `n` bytes, each its own HTTP
    /// chunk (so events straddle chunks); `None` for one chunk per event.
    pub fn split_chunks(&self, n: Option<usize>) {
        self.change(|s| s.split = n.map(|n| n.max(1)));
    }

    /// Watch streams put every pending event into one chunk.
    pub fn coalesce(&self, on: bool) {
        self.change(|s| s.coalesce = on);
    }

    /// Watch streams stop delivering events (a lagging watch cache) until unfrozen; a
    /// compaction still ends them with ERROR 410.
    pub fn freeze_watches(&self, on: bool) {
        self.change(|s| s.frozen = on);
    }

    /// Forgets the change history: a watch from an older resourceVersion, or a continue
    /// token issued before, gets 410 Gone.
    pub fn compact(&self) {
        self.change(compact);
    }

    /// Compacts right after serving the `n`-th list page (counting from now), so the
    /// continue token of that page is expired when the client uses it.
    pub fn compact_on_page(&self, n: u32) {
        self.change(|s| {
            s.pages = 0;
            s.compact_on_page = Some(n);
        });
    }

    /// Ends every open watch with an ERROR 410 event ("too old resource version").
    pub fn expire_watches(&self) {
        self.change(|s| s.expire_gen += 1);
    }

    /// Ends every open watch cleanly (the terminating chunk), as at timeoutSeconds.
    pub fn close_watches(&self) {
        self.change(|s| s.close_gen += 1);
    }

    /// Cuts every open watch's TCP connection without the terminating chunk (the client
    /// sees the body end early, an error).
    pub fn drop_watches(&self) {
        self.change(|s| s.drop_gen += 1);
    }

    /// Watches that allowed bookmarks also get one every `every` (`None`: only on
    /// [`FakeApi::bookmark`]).
    pub fn bookmark_every(&self, every: Option<Duration>) {
        self.change(|s| s.bookmark_every = every);
    }

    /// Sends a BOOKMARK with the current resourceVersion on every watch that allowed them.
    pub fn bookmark(&self) {
        self.change(|s| s.bookmark_gen += 1);
    }

    /// The next `n` requests to a collection get HTTP `code` with a Status body (429 with
    /// `Retry-After: 1`).
    pub fn fail_next(&self, n: usize, code: u16) {
        self.change(|s| s.fail.extend(std::iter::repeat_n(code, n)));
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<ApiRequest> {
        self.shared.lock().requests.clone()
    }

    /// Waits until exactly `n` watches of `path` are open; false after `timeout`.
    pub fn wait_watchers(&self, path: &str, n: usize, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        let mut s = self.shared.lock();
        loop {
            if s.watchers.get(path).copied().unwrap_or(0) == n {
                return true;
            }
            let now = Instant::now();
            if now >= end {
                return false;
            }
            s = self
                .shared
                .changed
                .wait_timeout(s, (end - now).min(Duration::from_millis(50)))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.changed.notify_all();
        // Wake the acceptor.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
    }
}

fn compact(s: &mut State) {
    s.floor = s.rv;
    s.epoch += 1;
    s.log.clear();
}

fn key_of(obj: &Value) -> (String, String) {
    let m = &obj["metadata"];
    (
        m["namespace"].as_str().unwrap_or("").to_string(),
        m["name"].as_str().unwrap_or("").to_string(),
    )
}

fn server_config(pki: &Pki, client_auth: bool) -> ServerConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(pki.server_cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .expect("server cert");
    let key = PrivateKeyDer::from_pem_slice(pki.server_key_pem.as_bytes()).expect("server key");
    let b = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("protocol versions");
    let b = if client_auth {
        let mut roots = RootCertStore::empty();
        for c in CertificateDer::pem_slice_iter(pki.ca_pem.as_bytes()) {
            roots.add(c.expect("ca")).expect("add ca");
        }
        let v = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .expect("client verifier");
        b.with_client_cert_verifier(v)
    } else {
        b.with_no_client_auth()
    };
    b.with_single_cert(chain, key).expect("server cert and key")
}

/// A plain or TLS connection.
enum Conn {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ServerConnection, TcpStream>>),
}

impl Conn {
    fn tcp(&self) -> &TcpStream {
        match self {
            Conn::Plain(t) => t,
            Conn::Tls(s) => &s.sock,
        }
    }

    fn close(&mut self) {
        if let Conn::Tls(s) = self {
            s.conn.send_close_notify();
            let _ = s.flush();
        }
        let _ = self.tcp().shutdown(std::net::Shutdown::Write);
    }

    /// Whether the client has gone (EOF or data we never expect after the request).
    fn client_gone(&self) -> bool {
        let mut b = [0u8; 1];
        match self.tcp().peek(&mut b) {
            Ok(_) => true,
            Err(e) => !matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
        }
    }
}

impl Read for Conn {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(t) => t.read(b),
            Conn::Tls(s) => s.read(b),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Plain(t) => t.write(b),
            Conn::Tls(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Plain(t) => t.flush(),
            Conn::Tls(s) => s.flush(),
        }
    }
}

fn pct_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16)
                {
                    Ok(v) => {
                        out.push(v);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn status_json(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

fn reason(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        410 => "Expired",
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "Unknown",
    }
}

fn status_text(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        410 => "Gone",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

fn respond(c: &mut Conn, code: u16, body: &Value, extra: &str) -> io::Result<()> {
    let body = serde_json::to_vec(body).expect("json");
    let head = format!(
        "HTTP/1.1 {code} {}\r\nAudit-Id: fake\r\nCache-Control: no-cache, private\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
        status_text(code),
        body.len()
    );
    c.write_all(head.as_bytes())?;
    c.write_all(&body)?;
    c.flush()?;
    c.close();
    Ok(())
}

fn serve_conn(tcp: TcpStream, shared: &Shared, tls: Option<Arc<ServerConfig>>) -> io::Result<()> {
    tcp.set_read_timeout(Some(Duration::from_secs(5)))?;
    tcp.set_nodelay(true)?;
    let mut conn = match tls {
        Some(cfg) => {
            let sc = ServerConnection::new(cfg).map_err(io::Error::other)?;
            Conn::Tls(Box::new(StreamOwned::new(sc, tcp)))
        }
        None => Conn::Plain(tcp),
    };
    // The request head (one request per connection: the client sends Connection: close).
    let mut buf = Vec::new();
    let end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        if buf.len() > 64 * 1024 {
            return respond(
                &mut conn,
                431,
                &status_json(431, "BadRequest", "request header too large"),
                "",
            );
        }
        let mut b = [0u8; 4096];
        let n = conn.read(&mut b)?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&b[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or("/"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let header = |k: &str| headers.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let (path, qs) = target.split_once('?').unwrap_or((target, ""));
    let query: Vec<(String, String)> = qs
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (pct_decode(k), pct_decode(v))
        })
        .collect();
    let mut req = ApiRequest {
        path: path.to_string(),
        query,
        status: 200,
        authorization: header("authorization"),
        user_agent: header("user-agent"),
        accept: header("accept"),
    };
    let collection = COLLECTIONS.iter().find(|c| c.0 == path).copied();
    // Decide under the lock what to answer; write outside it.
    let outcome: Result<Answer, (u16, String, String)> = {
        let mut s = shared.lock();
        let r = decide(&mut s, method, &req, collection);
        req.status = match &r {
            Ok(_) => 200,
            Err((c, _, _)) => *c,
        };
        s.requests.push(req.clone());
        if let Ok(Answer::Watch(w)) = &r {
            *s.watchers.entry(w.path.to_string()).or_default() += 1;
        }
        r
    };
    shared.changed.notify_all();
    match outcome {
        Err((code, reason, msg)) => {
            let extra = if code == 429 {
                "Retry-After: 1\r\n"
            } else {
                ""
            };
            respond(&mut conn, code, &status_json(code, &reason, &msg), extra)
        }
        Ok(Answer::Json(v)) => respond(&mut conn, 200, &v, ""),
        Ok(Answer::Watch(w)) => watch(conn, shared, w),
    }
}

enum Answer {
    Json(Value),
    Watch(WatchReq),
}

struct WatchReq {
    path: &'static str,
    kind: &'static str,
    api_version: &'static str,
    from: u64,
    initial: Vec<Value>,
    labels: Selector,
    fields: Selector,
    bookmarks: bool,
    timeout: Duration,
    /// The knobs' generations when the request came, so a knob used after the request
    /// was logged applies to it.
    gens: (u64, u64, u64, u64),
}

fn decide(
    s: &mut State,
    method: &str,
    req: &ApiRequest,
    collection: Option<(&'static str, &'static str, &'static str, &'static str)>,
) -> Result<Answer, (u16, String, String)> {
    let err = |code: u16, msg: &str| (code, reason(code).to_string(), msg.to_string());
    if let Some(want) = &s.token
        && req.authorization.as_deref() != Some(format!("Bearer {want}").as_str())
    {
        return Err(err(401, "Unauthorized"));
    }
    if method != "GET" {
        return Err(err(405, &format!("method {method} not allowed")));
    }
    match req.path.as_str() {
        "/version" => {
            return Ok(Answer::Json(
                json!({"major": "1", "minor": "32", "gitVersion": "v1.32.0-fake",
                "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
                "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.23.0", "compiler": "gc", "platform": "linux/amd64"}),
            ));
        }
        "/api" => {
            return Ok(Answer::Json(
                json!({"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]}),
            ));
        }
        "/apis" => {
            return Ok(Answer::Json(
                json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [{
                "name": "discovery.k8s.io",
                "versions": [{"groupVersion": "discovery.k8s.io/v1", "version": "v1"}],
                "preferredVersion": {"groupVersion": "discovery.k8s.io/v1", "version": "v1"}}]}),
            ));
        }
        _ => {}
    }
    let Some((path, kind, list_kind, api_version)) = collection else {
        return Err(err(404, "the server could not find the requested resource"));
    };
    if !s.fail.is_empty() {
        let code = s.fail.remove(0);
        return Err(err(code, &format!("injected failure {code}")));
    }
    let labels =
        Selector::labels(req.param("labelSelector").unwrap_or("")).map_err(|e| err(400, &e))?;
    let fields =
        Selector::fields(req.param("fieldSelector").unwrap_or("")).map_err(|e| err(400, &e))?;
    let matching = |s: &State| -> Vec<Value> {
        s.objects
            .get(path)
            .map(|m| {
                m.values()
                    .filter(|o| labels.matches(o) && fields.matches(o))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    if req.is_watch() {
        let rv_param = req.param("resourceVersion").unwrap_or("");
        let (from, initial) = if rv_param.is_empty() || rv_param == "0" {
            // "Any": the current state as ADDED events, then changes.
            (s.rv, matching(s))
        } else {
            let from: u64 = rv_param
                .parse()
                .map_err(|_| err(400, &format!("invalid resourceVersion {rv_param:?}")))?;
            (from, Vec::new())
        };
        let timeout = req
            .param("timeoutSeconds")
            .and_then(|t| t.parse().ok())
            .unwrap_or(1800);
        return Ok(Answer::Watch(WatchReq {
            path,
            kind,
            api_version,
            from,
            initial,
            labels,
            fields,
            bookmarks: req.param("allowWatchBookmarks") == Some("true"),
            timeout: Duration::from_secs(timeout),
            gens: (s.close_gen, s.expire_gen, s.bookmark_gen, s.drop_gen),
        }));
    }
    // A list page.
    let limit: usize = req
        .param("limit")
        .and_then(|l| l.parse().ok())
        .filter(|l| *l > 0)
        .unwrap_or(usize::MAX);
    let after: Option<(String, String)> = match req.param("continue").filter(|c| !c.is_empty()) {
        None => None,
        Some(tok) => {
            let mut parts = tok.splitn(3, '|');
            let epoch: Option<u64> = parts.next().and_then(|e| e.parse().ok());
            let (ns, name) = (parts.next(), parts.next());
            match (epoch, ns, name) {
                (Some(e), Some(ns), Some(name)) if e == s.epoch => {
                    Some((ns.to_string(), name.to_string()))
                }
                (Some(_), Some(_), Some(_)) => {
                    return Err(err(
                        410,
                        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
                    ));
                }
                _ => return Err(err(400, "invalid continue token")),
            }
        }
    };
    let all: Vec<((String, String), Value)> = s
        .objects
        .get(path)
        .map(|m| {
            m.iter()
                .filter(|(k, o)| {
                    after.as_ref().is_none_or(|a| *k > a) && labels.matches(o) && fields.matches(o)
                })
                .map(|(k, o)| (k.clone(), o.clone()))
                .collect()
        })
        .unwrap_or_default();
    let more = all.len() > limit;
    let page: Vec<_> = all.iter().take(limit).collect();
    let mut meta = json!({"resourceVersion": s.rv.to_string()});
    if more {
        let (ns, name) = &page.last().expect("a page before more").0;
        meta["continue"] = json!(format!("{}|{ns}|{name}", s.epoch));
        meta["remainingItemCount"] = json!(all.len() - limit);
    }
    // List items carry neither kind nor apiVersion, as the API server sends them.
    let items: Vec<Value> = page
        .iter()
        .map(|(_, o)| {
            let mut o = o.clone();
            if let Some(m) = o.as_object_mut() {
                m.remove("kind");
                m.remove("apiVersion");
            }
            o
        })
        .collect();
    let body =
        json!({"kind": list_kind, "apiVersion": api_version, "metadata": meta, "items": items});
    s.pages += 1;
    if s.compact_on_page == Some(s.pages) {
        s.compact_on_page = None;
        compact(s);
    }
    Ok(Answer::Json(body))
}

/// Writes one HTTP chunk (or several of at most `split` bytes).
fn write_chunks(c: &mut Conn, data: &[u8], split: Option<usize>) -> io::Result<()> {
    for piece in data.chunks(split.unwrap_or(data.len()).max(1)) {
        c.write_all(format!("{:x}\r\n", piece.len()).as_bytes())?;
        c.write_all(piece)?;
        c.write_all(b"\r\n")?;
        c.flush()?;
    }
    Ok(())
}

fn event_line(kind: &str, obj: &Value) -> Vec<u8> {
    let mut l = serde_json::to_vec(&json!({"type": kind, "object": obj})).expect("json");
    l.push(b'\n');
    l
}

fn watch(mut conn: Conn, shared: &Shared, w: WatchReq) -> io::Result<()> {
    let _ = conn.tcp().set_read_timeout(Some(Duration::from_millis(10)));
    let r = conn
        .write_all(
            b"HTTP/1.1 200 OK\r\nAudit-Id: fake\r\nCache-Control: no-cache, private\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        )
        .and_then(|_| conn.flush());
    let (close_gen, expire_gen, mut bookmark_gen, drop_gen) = w.gens;
    let r = r.and_then(|_| {
        watch_loop(
            &mut conn,
            shared,
            &w,
            (close_gen, expire_gen, drop_gen),
            &mut bookmark_gen,
        )
    });
    {
        let mut s = shared.lock();
        if let Some(n) = s.watchers.get_mut(w.path) {
            *n -= 1;
        }
    }
    shared.changed.notify_all();
    match r {
        Ok(true) => {
            let _ = conn.write_all(b"0\r\n\r\n").and_then(|_| conn.flush());
            conn.close();
        }
        // Dropped: no terminating chunk, no close_notify.
        Ok(false) => {
            let _ = conn.tcp().shutdown(std::net::Shutdown::Both);
        }
        Err(_) => conn.close(),
    }
    r.map(|_| ())
}

/// Streams events until the watch ends: Ok(true) cleanly, Ok(false) when dropped.
fn watch_loop(
    conn: &mut Conn,
    shared: &Shared,
    w: &WatchReq,
    (close_gen, expire_gen, drop_gen): (u64, u64, u64),
    bookmark_gen: &mut u64,
) -> io::Result<bool> {
    let started = Instant::now();
    let mut last_bookmark = Instant::now();
    let mut cursor = w.from;
    let mut pending: Vec<Vec<u8>> = w.initial.iter().map(|o| event_line("ADDED", o)).collect();
    let wanted = |o: &Value| w.labels.matches(o) && w.fields.matches(o);
    loop {
        let (split, coalesce) = {
            let mut s = shared.lock();
            loop {
                if s.drop_gen != drop_gen {
                    return Ok(false);
                }
                if shared.stop.load(Ordering::Relaxed) || s.close_gen != close_gen {
                    return Ok(true);
                }
                if s.expire_gen != expire_gen || cursor < s.floor {
                    let msg = format!("too old resource version: {cursor} ({})", s.rv);
                    let line = event_line("ERROR", &status_json(410, "Expired", &msg));
                    let split = s.split;
                    drop(s);
                    write_chunks(conn, &line, split)?;
                    return Ok(true);
                }
                if !s.frozen {
                    for c in s.log.iter().filter(|c| c.rv > cursor && c.path == w.path) {
                        let now = wanted(&c.obj);
                        let before = c.old.as_ref().is_some_and(wanted);
                        let kind = match (c.kind, c.old.is_some(), before, now) {
                            ("MODIFIED", _, true, true) => Some("MODIFIED"),
                            ("MODIFIED", _, false, true) => Some("ADDED"),
                            ("MODIFIED", _, true, false) => Some("DELETED"),
                            ("ADDED", _, _, true) => Some("ADDED"),
                            ("DELETED", _, _, true) => Some("DELETED"),
                            _ => None,
                        };
                        if let Some(k) = kind {
                            pending.push(event_line(k, &c.obj));
                        }
                    }
                    cursor = s.rv.max(cursor);
                }
                let due = s
                    .bookmark_every
                    .is_some_and(|e| last_bookmark.elapsed() >= e);
                if s.bookmark_gen != *bookmark_gen || due {
                    *bookmark_gen = s.bookmark_gen;
                    last_bookmark = Instant::now();
                    if w.bookmarks && !s.frozen {
                        let obj = json!({"kind": w.kind, "apiVersion": w.api_version,
                                         "metadata": {"resourceVersion": cursor.to_string()}});
                        pending.push(event_line("BOOKMARK", &obj));
                    }
                }
                if !pending.is_empty() {
                    break (s.split, s.coalesce);
                }
                if started.elapsed() >= w.timeout {
                    return Ok(true);
                }
                drop(s);
                if conn.client_gone() {
                    return Err(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        "client gone",
                    ));
                }
                s = shared
                    .changed
                    .wait_timeout(shared.lock(), Duration::from_millis(100))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        };
        if coalesce {
            let all: Vec<u8> = pending.concat();
            write_chunks(conn, &all, split)?;
        } else {
            for l in &pending {
                write_chunks(conn, l, split)?;
            }
        }
        pending.clear();
    }
}

#[cfg(test)]
mod tests;
