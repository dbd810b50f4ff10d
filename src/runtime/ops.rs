//! The operations endpoints over HTTP (`/health`, `/ready`, `/metrics`), each in its own
//! thread with tiny_http, far from the query path. Their state is a process-wide flag and
//! the metrics registry, which a scrape reads without stopping any core.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What the endpoints report.
#[derive(Debug, Default)]
pub struct OpsState {
    /// Every core serves and no stop has begun: `/ready` says 200.
    pub ready: AtomicBool,
}

/// Opens every endpoint now (so a taken port is a start-up error) and serves each in a
/// thread for the life of the process.
pub fn start(
    health: &[SocketAddr],
    ready: &[SocketAddr],
    metrics: &[SocketAddr],
    state: &Arc<OpsState>,
) -> Result<(), String> {
    let mut servers = Vec::new();
    for (addr, path) in health
        .iter()
        .map(|a| (a, "/health"))
        .chain(ready.iter().map(|a| (a, "/ready")))
        .chain(metrics.iter().map(|a| (a, "/metrics")))
    {
        let server =
            tiny_http::Server::http(addr).map_err(|e| format!("listen tcp {addr}: {e}"))?;
        servers.push((server, path));
    }
    for (server, path) in servers {
        let state = state.clone();
        std::thread::Builder::new()
            .name(format!("ringdns-http{path}"))
            .spawn(move || serve(server, path, &state))
            .map_err(|e| format!("cannot start the {path} endpoint: {e}"))?;
    }
    Ok(())
}

fn serve(server: tiny_http::Server, path: &'static str, state: &OpsState) {
    for req in server.incoming_requests() {
        let url = req.url().split('?').next().unwrap_or("");
        if path == "/metrics" && url == path {
            let _ = req.respond(metrics_page());
            continue;
        }
        let (code, body) = if url != path {
            (404, "404 page not found\n")
        } else if path == "/health" || state.ready.load(Ordering::Acquire) {
            (200, "OK")
        } else {
            (503, "not ready: the server is starting or stopping\n")
        };
        let _ = req.respond(tiny_http::Response::from_string(body).with_status_code(code));
    }
}

/// The `/metrics` page with its content type.
fn metrics_page() -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let body = crate::metrics::expose::render();
    // A Content-Length rather than chunks, whatever the size: the simplest clients can read it.
    let mut resp = tiny_http::Response::from_string(body).with_chunked_threshold(usize::MAX);
    if let Ok(h) = tiny_http::Header::from_bytes(
        &b"Content-Type"[..],
        crate::metrics::expose::CONTENT_TYPE.as_bytes(),
    ) {
        resp.add_header(h);
    }
    resp
}
