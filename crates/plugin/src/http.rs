//! HTTP endpoints that plugins register in setup (health's `/health`, ready's `/ready`,
//! prometheus's `/metrics`, a third party's own), served by the server off the query path:
//! one listener and thread per address, whatever plugins share it.
//!
//! A plugin calls [`BlockSetup::http_endpoint`](crate::BlockSetup::http_endpoint) with an
//! address, a path and a handler. The server serves each (address, path) of a
//! configuration once: blocks that register the same one from the same plugin share the
//! first registration, and two plugins that register the same one are a configuration
//! error. Across reloads an address the new configuration keeps keeps its listener (its
//! paths get the new handlers), one it drops closes, one it adds opens, and a reload that
//! fails (a port that cannot be bound included) leaves the running set as it was.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::Arc;

/// One request, as a handler sees it.
#[derive(Debug, Clone, Copy)]
pub struct HttpRequest<'a> {
    /// The URL's path, e.g. `/health`.
    pub path: &'a str,
    /// The URL's query, after the `?`; empty when there is none.
    pub query: &'a str,
    /// Whether the server serves: every core has started and no stop has begun. ready
    /// answers 503 when it does not (start-up, lameduck).
    pub serving: bool,
}

/// A handler's answer.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    /// The HTTP status code.
    pub status: u16,
    /// The body, sent with a `Content-Length` (the simplest probes read nothing else).
    pub body: Cow<'static, [u8]>,
    /// The `Content-Type` header, when there is one to send.
    pub content_type: Option<&'static str>,
}

/// The type of a [`HttpResponse::text`] answer.
pub const TEXT_PLAIN: &str = "text/plain; charset=UTF-8";

impl HttpResponse {
    /// A text answer (`text/plain; charset=UTF-8`): `text(200, "OK")`, or a body made per
    /// request.
    pub fn text(status: u16, body: impl Into<Cow<'static, str>>) -> Self {
        let body = match body.into() {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        };
        HttpResponse {
            status,
            body,
            content_type: Some(TEXT_PLAIN),
        }
    }

    /// An answer of bytes with no `Content-Type` (add one with
    /// [`HttpResponse::with_content_type`]), for bodies that are not text.
    pub fn bytes(status: u16, body: impl Into<Cow<'static, [u8]>>) -> Self {
        HttpResponse {
            status,
            body: body.into(),
            content_type: None,
        }
    }

    /// The same answer with another `Content-Type` (`/metrics`'s Prometheus text type).
    pub fn with_content_type(mut self, content_type: &'static str) -> Self {
        self.content_type = Some(content_type);
        self
    }
}

/// What answers the requests of one path. Called on the address's HTTP thread, never on a
/// core, so it may allocate and lock; it should not block for long, since the address's
/// other paths wait meanwhile.
pub type HttpHandler = Arc<dyn Fn(&HttpRequest<'_>) -> HttpResponse + Send + Sync>;

/// A path on an address, as a plugin's setup registered it.
#[derive(Clone)]
pub struct HttpEndpoint {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The URL path it answers (without a query), e.g. `/ready`.
    pub path: String,
    /// What answers it.
    pub handler: HttpHandler,
    /// The plugin that registered it, filled in by the server's setup of each plugin, so
    /// that a clash between two plugins names both.
    pub plugin: &'static str,
}

impl std::fmt::Debug for HttpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEndpoint")
            .field("addr", &self.addr)
            .field("path", &self.path)
            .field("plugin", &self.plugin)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_answers_borrow_static_bodies_and_own_made_ones() {
        let r = HttpResponse::text(200, "OK");
        assert!(matches!(r.body, Cow::Borrowed(b"OK")));
        assert_eq!(r.content_type, Some(TEXT_PLAIN));
        let r = HttpResponse::bytes(200, &b"\x00"[..]);
        assert_eq!(r.content_type, None);
        let r = HttpResponse::text(503, "a,b".to_string()).with_content_type("text/plain");
        assert_eq!((r.status, &*r.body), (503, &b"a,b"[..]));
        assert_eq!(r.content_type, Some("text/plain"));
    }
}
